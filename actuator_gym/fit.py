"""Train an actuator network from logged data, export it, report its held-out error.

Data: a CSV (header row) or NPZ with these columns, sampled every physics substep ``dt``:

==============  ===============  ================================================
column          unit             meaning
==============  ===============  ================================================
``target_pos``  rad (m)          commanded position q* sent to the actuator
``joint_pos``   rad (m)          measured position q
``joint_vel``   rad/s (m/s)      measured velocity qd
``torque``      N·m (N)          measured actuator torque (the training target)
``episode``     int, optional    sequence id: history never crosses a change
==============  ===============  ================================================

NPZ arrays may also be 2-D ``(T, K)``: K joints logged side by side, each its own sequence.

    report = fit_actuator_net("log.csv", "out/", model_type="mlp", input_idx=(0, 1, 2, 3))
    # out/actuator_net.onnx (metadata for DriveNeuralMLP / ActuatorNetMLPCfg), out/actuator_net.pt
    # (TorchScript), out/report.json: held-out RMSE, max error, R^2 on the last 20 % of each sequence

Command line (the future ``actuator-gym fit``): ``python -m actuator_gym.fit log.csv out/ --model mlp``.
``generate_synthetic_log`` writes a log from a known analytic actuator (``DCMotorCfg`` + delay driving a
1-DOF inertia) for testing the pipeline.
"""

from __future__ import annotations

import argparse
import json
import math
import time
import warnings
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
from torch import nn

from .actuators.checkpoints import MLPNet, RecurrentNet, export_onnx

__all__ = ["fit_actuator_net", "generate_synthetic_log", "load_log", "main", "COLUMNS"]

COLUMNS = ("target_pos", "joint_pos", "joint_vel", "torque")


# ---------------------------------------------------------------------------------------------
def load_log(path: str | Path) -> list[dict[str, np.ndarray]]:
    """The log as a list of sequences ``{column: (T,) float64}`` (split by ``episode`` and joints)."""
    path = Path(path)
    if path.suffix == ".npz":
        with np.load(path, allow_pickle=False) as z:
            data = {k: np.asarray(z[k], dtype=np.float64) for k in z.files}
    elif path.suffix == ".csv":
        arr = np.genfromtxt(path, delimiter=",", names=True)
        data = {k: np.asarray(arr[k], dtype=np.float64) for k in arr.dtype.names}
    else:
        raise ValueError(f"{path}: expected a .csv or .npz log")
    missing = [c for c in COLUMNS if c not in data]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}; need {list(COLUMNS)} (+ optional 'episode')")
    cols = [np.atleast_2d(data[c].T).T for c in COLUMNS]  # (T, K)
    T, K = cols[0].shape
    if any(c.shape != (T, K) for c in cols):
        raise ValueError(f"{path}: columns {list(COLUMNS)} must have equal shapes")
    ep = data.get("episode", np.zeros(T))
    if not all(np.isfinite(c).all() for c in cols):
        raise ValueError(f"{path}: the log contains non-finite values")
    cuts = np.flatnonzero(np.diff(ep.reshape(T, -1)[:, 0]) != 0) + 1
    seqs = []
    for k in range(K):
        for a, b in zip([0, *cuts], [*cuts, T]):
            seqs.append({c: col[a:b, k] for c, col in zip(COLUMNS, cols)})
    return seqs


def _features(seq, input_idx, pos_scale, vel_scale, order="pos_vel"):
    e = seq["target_pos"] - seq["joint_pos"]
    v = seq["joint_vel"]
    H = max(input_idx) + 1
    T = e.shape[0]
    if T < H:
        return np.zeros((0, 2 * len(input_idx))), np.zeros(0)
    ep = np.concatenate([np.zeros(H - 1), e])  # the drive's history starts at zero after a reset
    vp = np.concatenate([np.zeros(H - 1), v])
    cols_e = [ep[H - 1 - i : H - 1 - i + T] * pos_scale for i in input_idx]
    cols_v = [vp[H - 1 - i : H - 1 - i + T] * vel_scale for i in input_idx]
    x = np.stack(cols_e + cols_v if order == "pos_vel" else cols_v + cols_e, axis=1)
    return x, seq["torque"]


def _split(seq, frac):
    n = len(seq["torque"])
    cut = int(round(n * (1 - frac)))
    return {k: v[:cut] for k, v in seq.items()}, {k: v[cut:] for k, v in seq.items()}


def _scores(pred: np.ndarray, y: np.ndarray) -> dict:
    err = pred - y
    ss = float(((y - y.mean()) ** 2).sum())
    return {
        "rmse": float(np.sqrt(np.mean(err**2))),
        "max_abs_error": float(np.abs(err).max()),
        "r2": float(1 - (err**2).sum() / ss) if ss > 0 else float("nan"),
        "torque_std": float(y.std()),
        "num_samples": int(y.size),
    }


# ---------------------------------------------------------------------------------------------
def fit_actuator_net(
    data_path: str | Path,
    out_dir: str | Path,
    model_type: str = "mlp",
    *,
    input_idx: Sequence[int] = (0, 1, 2, 3),
    hidden: Sequence[int] = (32, 32),
    activation: str = "softsign",
    epochs: int = 400,
    lr: float = 3e-3,
    batch_size: int = 4096,
    holdout: float = 0.2,
    seq_len: int = 64,
    seed: int = 0,
) -> dict:
    """Train, export (ONNX with metadata + TorchScript), and return the held-out report (also written
    as ``report.json``). ``holdout``: the last fraction of every sequence is kept out of training.

    MLP: inputs ``e(t - i) * pos_scale`` and ``qd(t - i) * vel_scale`` for ``i in input_idx``,
    target ``torque / torque_scale`` (scales = 1 / std of the training data). LSTM: inputs ``[e, qd]``
    (scaled), one hidden layer of ``hidden[0]`` units, truncated back-propagation over ``seq_len``.
    """
    if model_type not in ("mlp", "lstm"):
        raise ValueError(f"model_type must be 'mlp' or 'lstm', got {model_type!r}")
    if not 0 < holdout < 1:
        raise ValueError(f"holdout must lie in (0, 1), got {holdout}")
    torch.manual_seed(seed)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    seqs = load_log(data_path)
    train, test = zip(*(_split(s, holdout) for s in seqs))
    e_all = np.concatenate([s["target_pos"] - s["joint_pos"] for s in train])
    v_all = np.concatenate([s["joint_vel"] for s in train])
    t_all = np.concatenate([s["torque"] for s in train])
    pos_scale = 1.0 / max(float(e_all.std()), 1e-6)
    vel_scale = 1.0 / max(float(v_all.std()), 1e-6)
    torque_scale = max(float(np.abs(t_all).std()), 1e-6)
    t0 = time.perf_counter()
    if model_type == "mlp":
        idx = [int(i) for i in input_idx]
        xs, ys = zip(*(_features(s, idx, pos_scale, vel_scale) for s in train))
        X = torch.tensor(np.concatenate(xs), dtype=torch.float32)
        Y = torch.tensor(np.concatenate(ys) / torque_scale, dtype=torch.float32).unsqueeze(1)
        net = MLPNet([X.shape[1], *hidden, 1], activation)
        opt = torch.optim.Adam(net.parameters(), lr=lr)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
        g = torch.Generator().manual_seed(seed)
        for _ in range(epochs):
            perm = torch.randperm(X.shape[0], generator=g)
            for k in range(0, X.shape[0], batch_size):
                b = perm[k : k + batch_size]
                loss = nn.functional.mse_loss(net(X[b]), Y[b])
                opt.zero_grad()
                loss.backward()
                opt.step()
            sched.step()
        net.eval()

        def predict(seq):
            x, _ = _features(seq, idx, pos_scale, vel_scale)
            with torch.no_grad():
                return net(torch.tensor(x, dtype=torch.float32)).numpy()[:, 0] * torque_scale

        meta = {"input_order": "pos_vel", "input_idx": idx}
        in_features = X.shape[1]
    else:
        H = int(hidden[0])
        net = RecurrentNet(nn.LSTM(2, H), nn.Sequential(nn.Linear(H, 1)))
        opt = torch.optim.Adam(net.parameters(), lr=lr)
        chunks = []
        for s in train:
            x = np.stack([(s["target_pos"] - s["joint_pos"]) * pos_scale, s["joint_vel"] * vel_scale], 1)
            for a in range(0, len(x) - seq_len + 1, seq_len):
                chunks.append((x[a : a + seq_len], s["torque"][a : a + seq_len] / torque_scale))
        if not chunks:
            raise ValueError(f"{data_path}: sequences shorter than seq_len={seq_len}")
        Xc = torch.tensor(np.stack([c[0] for c in chunks]), dtype=torch.float32).transpose(0, 1)  # (L, B, 2)
        Yc = torch.tensor(np.stack([c[1] for c in chunks]), dtype=torch.float32).T.unsqueeze(-1)  # (L, B, 1)
        for _ in range(epochs):
            y, _ = net.rnn(Xc)
            loss = nn.functional.mse_loss(net.head(y), Yc)
            opt.zero_grad()
            loss.backward()
            opt.step()
        net.eval()

        def predict(seq):
            x = np.stack([(seq["target_pos"] - seq["joint_pos"]) * pos_scale, seq["joint_vel"] * vel_scale], 1)
            with torch.no_grad():
                y, _ = net.rnn(torch.tensor(x, dtype=torch.float32).unsqueeze(1))
                return net.head(y[:, 0]).numpy()[:, 0] * torque_scale

        meta = {"num_layers": 1, "hidden_size": H}
        in_features = 2
    train_s = time.perf_counter() - t0
    # held-out: run each full sequence (history / state from its start), score the held-out tail
    preds, ys = [], []
    for s, te in zip(seqs, test):
        n_test = len(te["torque"])
        if n_test:
            preds.append(predict(s)[-n_test:])
            ys.append(s["torque"][-n_test:])
    report = {"model_type": model_type, "heldout": _scores(np.concatenate(preds), np.concatenate(ys)), "train_seconds": train_s}
    meta.update(pos_scale=pos_scale, vel_scale=vel_scale, torque_scale=torque_scale, effort_scale=torque_scale)
    onnx_path, ts_path = out / "actuator_net.onnx", out / "actuator_net.pt"
    export_onnx(net, onnx_path, model_type, meta)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        if model_type == "mlp":
            torch.jit.trace(net, torch.zeros(2, in_features)).save(str(ts_path))
        else:
            torch.jit.script(_IsaacLSTM(net, pos_scale, vel_scale, torque_scale)).save(str(ts_path))
    report.update(onnx=str(onnx_path), torchscript=str(ts_path), metadata=meta)
    (out / "report.json").write_text(json.dumps(report, indent=1))
    return report


class _IsaacLSTM(nn.Module):
    """Isaac Lab's TorchScript convention for an LSTM net (scales folded in)."""

    def __init__(self, net: RecurrentNet, pos_scale: float, vel_scale: float, torque_scale: float):
        super().__init__()
        self.register_buffer("in_scale", torch.tensor([pos_scale, vel_scale], dtype=torch.float32))
        self.lstm = nn.LSTM(net.rnn.input_size, net.hidden_size, batch_first=True)
        self.lstm.load_state_dict(net.rnn.state_dict())
        self.head = net.head
        self.torque_scale = float(torque_scale)

    def forward(self, x: torch.Tensor, hc: tuple[torch.Tensor, torch.Tensor]):
        y, (h, c) = self.lstm(x * self.in_scale, hc)
        return self.head(y[:, -1]) * self.torque_scale, (h, c)


# ---------------------------------------------------------------------------------------------
def generate_synthetic_log(
    path: str | Path,
    *,
    num_steps: int = 3000,
    num_sequences: int = 8,
    dt: float = 0.005,
    inertia: float = 0.05,
    damping: float = 0.05,
    delay_steps: int = 2,
    stiffness: float = 40.0,
    kd: float = 1.0,
    saturation_effort: float = 30.0,
    effort_limit: float = 20.0,
    velocity_limit: float = 15.0,
    seed: int = 0,
) -> Path:
    """Write an NPZ log (columns as documented above, ``(num_steps, num_sequences)``) from an
    analytic actuator -- ``DCMotorCfg`` behind a ``delay_steps`` command delay -- driving a 1-DOF
    inertia [kg·m²] with viscous damping [N·m·s/rad], under random piecewise-constant targets plus a
    sine sweep. The torque column is the actuator's applied torque."""
    from .actuators import Delay
    from .actuators.models import DCMotorCfg

    rng = np.random.default_rng(seed)
    cfg = DCMotorCfg(
        stiffness=stiffness,
        damping=kd,
        saturation_effort=saturation_effort,
        actuator_effort_limit=effort_limit,
        actuator_velocity_limit=velocity_limit,
    )
    recipe = cfg.recipe()
    recipe.pop("aliases")
    from .actuators import Actuator

    model = Actuator(**{**recipe, "delay": Delay(delay_steps=delay_steps)}, num_envs=num_sequences, num_joints=1, seed=seed)
    model.reset()
    n = num_sequences
    q, qd = np.zeros((n, 1)), np.zeros((n, 1))
    target = np.zeros((n, 1))
    hold = np.zeros(n, dtype=int)
    freq = rng.uniform(0.3, 3.0, (n, 1))
    logs = {c: np.zeros((num_steps, n)) for c in COLUMNS}
    for t in range(num_steps):
        change = hold <= 0
        target[change, 0] = rng.uniform(-1.0, 1.0, change.sum())
        hold[change] = rng.integers(20, 200, change.sum())
        hold -= 1
        tq = target + 0.3 * np.sin(2 * math.pi * freq * t * dt)
        tau = model.compute(joint_pos=q, joint_vel=qd, target_pos=tq, dt=dt).numpy().astype(np.float64)
        logs["target_pos"][t], logs["joint_pos"][t], logs["joint_vel"][t], logs["torque"][t] = tq[:, 0], q[:, 0], qd[:, 0], tau[:, 0]
        qd = qd + dt * (tau - damping * qd) / inertia  # semi-implicit Euler
        q = q + dt * qd
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **logs)
    return path


# ---------------------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="actuator-gym fit", description="Train an actuator network from a log.")
    ap.add_argument("data", help="CSV/NPZ log with columns target_pos, joint_pos, joint_vel, torque [, episode]")
    ap.add_argument("out_dir", help="where actuator_net.onnx, actuator_net.pt and report.json go")
    ap.add_argument("--model", choices=["mlp", "lstm"], default="mlp")
    ap.add_argument("--input-idx", type=int, nargs="+", default=[0, 1, 2, 3], help="MLP history indices [substeps]")
    ap.add_argument("--hidden", type=int, nargs="+", default=[32, 32])
    ap.add_argument("--epochs", type=int, default=400)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--holdout", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--synthetic", action="store_true", help="first write a synthetic log (DC motor + delay) to DATA")
    a = ap.parse_args(argv)
    if a.synthetic:
        generate_synthetic_log(a.data, seed=a.seed)
    rep = fit_actuator_net(
        a.data, a.out_dir, a.model, input_idx=a.input_idx, hidden=a.hidden, epochs=a.epochs, lr=a.lr, holdout=a.holdout, seed=a.seed
    )
    h = rep["heldout"]
    print(f"held-out: RMSE {h['rmse']:.4g} N·m, max error {h['max_abs_error']:.4g} N·m, R^2 {h['r2']:.4f} "
          f"(torque std {h['torque_std']:.4g}, {h['num_samples']} samples); wrote {rep['onnx']}, {rep['torchscript']}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
