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

Command line: ``actuator-gym fit log.csv out/ --model mlp`` (``actuator-gym fit --help`` lists every
option with its unit and default). Bad logs and options are refused with one line naming the file or
the option before any training starts. A log holds at most :data:`LOG_MAX_VALUES` numbers in a file of
at most :data:`LOG_MAX_BYTES` (an ``.npz``'s declared sizes are checked from its headers before it is
loaded). The outputs are written atomically (a link at their names is replaced, never written through).
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

from .._config_transfer import FIT_MAX_LAYERS
from .._safe_io import atomic_path, write_atomic
from ..actuators.checkpoints import MLPNet, RecurrentNet, export_onnx
from .logs import LOG_CSV_MAX_LINE, LOG_MAX_BYTES, LOG_MAX_VALUES, LogError, read_table  # noqa: F401  (the bounds: tools/logs.py)
from .options import OneLineParser

__all__ = ["fit_actuator_net", "generate_synthetic_log", "load_log", "main", "COLUMNS"]

COLUMNS = ("target_pos", "joint_pos", "joint_vel", "torque")


# ---------------------------------------------------------------------------------------------
MAX_HISTORY = 1024
"""Largest MLP history index accepted (``input_idx``) [substeps]."""
MAX_HIDDEN = 4096
"""Largest hidden-layer width accepted."""
MAX_LAYERS = FIT_MAX_LAYERS
"""Most hidden layers accepted (``hidden``; the transfer files' ``fitted_net.fit.hidden`` too)."""


def load_log(path: str | Path) -> list[dict[str, np.ndarray]]:
    """The log as a list of sequences ``{column: (T,) float64}`` (split by ``episode`` and joints).

    Raises :class:`LogError` (a ``ValueError``) naming the file for a missing, empty, header-only,
    ragged, non-numeric or non-finite log.
    """
    path = Path(path)
    data = read_table(path, COLUMNS)
    missing = [c for c in COLUMNS if c not in data]
    if missing:
        raise LogError(f"{path}: missing column(s) {missing}; need {list(COLUMNS)} (+ optional 'episode')")
    cols = [np.atleast_2d(data[c].T).T for c in COLUMNS]  # (T, K)
    T, K = cols[0].shape
    if any(c.shape != (T, K) for c in cols):
        raise LogError(f"{path}: columns {list(COLUMNS)} must have equal shapes, got {[c.shape for c in cols]}")
    if T == 0 or K == 0:
        raise LogError(f"{path}: no samples")
    ep = data.get("episode", np.zeros(T))
    if ep.shape[0] != T:
        raise LogError(f"{path}: 'episode' has {ep.shape[0]} rows, the other columns {T}")
    if not all(np.isfinite(c).all() for c in [*cols, ep]):
        raise LogError(f"{path}: the log contains non-finite values")
    cuts = np.flatnonzero(np.diff(ep.reshape(T, -1)[:, 0]) != 0) + 1
    seqs = []
    for k in range(K):
        for a, b in zip([0, *cuts], [*cuts, T]):
            seqs.append({c: col[a:b, k] for c, col in zip(COLUMNS, cols)})
    return seqs


def _check_options(model_type, input_idx, hidden, activation, epochs, lr, batch_size, holdout, seq_len, seed) -> tuple[int, ...]:
    """Validate the fitting options (names as in :func:`fit_actuator_net`); returns ``hidden``."""
    def integer(name, v, lo, hi=None):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo or (hi is not None and v > hi):
            rng = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
            raise ValueError(f"{name} must be an integer {rng}, got {v!r}")
        return int(v)

    if model_type not in ("mlp", "lstm"):
        raise ValueError(f"model_type must be 'mlp' or 'lstm', got {model_type!r}")
    idx = list(input_idx) if not isinstance(input_idx, (str, bytes)) else [input_idx]
    if not idx:
        raise ValueError("input_idx must list at least one history index [substeps]")
    idx = [integer("input_idx", i, 0, MAX_HISTORY) for i in idx]
    if len(set(idx)) != len(idx):
        raise ValueError(f"input_idx must not repeat an index, got {idx}")
    if hidden is None:
        hidden = (32, 32) if model_type == "mlp" else (32,)
    hidden = tuple(integer("hidden", h, 1, MAX_HIDDEN) for h in (hidden if not isinstance(hidden, (str, bytes)) else [hidden]))
    if not 1 <= len(hidden) <= MAX_LAYERS:
        raise ValueError(f"hidden must list 1 to {MAX_LAYERS} layer widths, got {len(hidden)}")
    if model_type == "lstm" and len(hidden) != 1:
        raise ValueError(f"hidden: the LSTM has one recurrent layer, give one width, got {list(hidden)}")
    try:
        MLPNet([1, 1, 1], str(activation))  # a tiny net: the one place that knows the activations
    except ValueError as exc:
        raise ValueError(f"activation: {exc}") from None
    integer("epochs", epochs, 1)
    integer("batch_size", batch_size, 1)
    integer("seq_len", seq_len, 1)
    integer("seed", seed, 0)
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not (math.isfinite(lr) and lr > 0):
        raise ValueError(f"lr must be a finite number > 0, got {lr!r}")
    if isinstance(holdout, bool) or not isinstance(holdout, (int, float)) or not 0 < holdout < 1:
        raise ValueError(f"holdout must be a fraction in (0, 1), got {holdout!r}")
    return hidden


MIN_TRAIN_SAMPLES = 16
"""Fewest training samples (rows before the held-out tail, over all sequences) a fit accepts."""


def _check_enough_data(path, seqs, model_type: str, window: int, holdout: float) -> None:
    """Refuse a log too short to train (``window``: MLP history or LSTM ``seq_len``) or to score."""
    parts = [_split(s, holdout) for s in seqs]
    n_train = sum(len(a["torque"]) for a, _ in parts)
    n_test = sum(len(b["torque"]) for _, b in parts)
    usable = sum(len(a["torque"]) // window for a, _ in parts) if model_type == "lstm" else n_train
    if n_train < MIN_TRAIN_SAMPLES or n_test < 1 or usable < 1:
        need = f"one sequence of >= seq_len={window} training rows" if model_type == "lstm" else f">= {MIN_TRAIN_SAMPLES} training rows"
        raise LogError(f"{path}: too little data to fit: {n_train} training and {n_test} held-out rows "
                       f"(holdout={holdout:g}); need {need} and >= 1 held out")


def _epochs(epochs: int, progress: bool, desc: str):
    from .progress import track

    return track(range(epochs), epochs, desc, "epoch", progress)


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
    hidden: Sequence[int] | None = None,
    activation: str = "softsign",
    epochs: int = 400,
    lr: float = 3e-3,
    batch_size: int = 4096,
    holdout: float = 0.2,
    seq_len: int = 64,
    seed: int = 0,
    progress: bool = True,
) -> dict:
    """Train, export (ONNX with metadata + TorchScript), and return the held-out report (also written
    as ``report.json``). ``holdout``: the last fraction of every sequence is kept out of training.

    MLP: inputs ``e(t - i) * pos_scale`` and ``qd(t - i) * vel_scale`` for ``i in input_idx``,
    target ``torque / torque_scale`` (scales = 1 / std of the training data); ``hidden`` defaults to
    ``(32, 32)``. LSTM: inputs ``[e, qd]`` (scaled), one hidden layer of ``hidden[0]`` units
    (default 32), truncated back-propagation over ``seq_len`` substeps. ``progress``: a bar over
    the epochs on a terminal, progress lines on a stdout that is not one (:mod:`.progress`).

    Every option and the log are checked before anything is trained or written; a bad one raises
    ``ValueError`` naming it and its allowed range.
    """
    hidden = _check_options(model_type, input_idx, hidden, activation, epochs, lr, batch_size, holdout, seq_len, seed)
    seqs = load_log(data_path)
    _check_enough_data(data_path, seqs, model_type, max(input_idx) + 1 if model_type == "mlp" else seq_len, holdout)
    torch.manual_seed(seed)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
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
        for _ in _epochs(epochs, progress, "fit MLP"):
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
        Xc = torch.tensor(np.stack([c[0] for c in chunks]), dtype=torch.float32).transpose(0, 1)  # (L, B, 2)
        Yc = torch.tensor(np.stack([c[1] for c in chunks]), dtype=torch.float32).T.unsqueeze(-1)  # (L, B, 1)
        for _ in _epochs(epochs, progress, "fit LSTM"):
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
    with atomic_path(onnx_path) as tmp:  # every output whole or not at all; a link at its name replaced
        export_onnx(net, tmp, model_type, meta)
    with warnings.catch_warnings(), atomic_path(ts_path) as tmp:
        warnings.simplefilter("ignore", DeprecationWarning)
        if model_type == "mlp":
            torch.jit.trace(net, torch.zeros(2, in_features)).save(str(tmp))
        else:
            torch.jit.script(_IsaacLSTM(net, pos_scale, vel_scale, torque_scale)).save(str(tmp))
    report.update(onnx=str(onnx_path), torchscript=str(ts_path), metadata=meta)
    write_atomic(out / "report.json", json.dumps(report, indent=1))
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
    from ..actuators import Delay
    from ..actuators.models import DCMotorCfg

    rng = np.random.default_rng(seed)
    cfg = DCMotorCfg(stiffness=stiffness, damping=kd, saturation_effort=saturation_effort, actuator_effort_limit=effort_limit,
                     actuator_velocity_limit=velocity_limit)
    recipe = cfg.recipe()
    recipe.pop("aliases")
    from ..actuators import Actuator

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
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:  # a handle: numpy appends no '.npz'
        np.savez(fh, **logs)
    return path


# ---------------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    ap = OneLineParser(
        prog="actuator-gym fit",
        description="Train an actuator network (MLP or LSTM) from a log of commanded and measured joint "
                    "states and measured torque; export ONNX (with metadata) and TorchScript; report the "
                    "held-out error.",
        epilog="Log columns: target_pos [rad], joint_pos [rad], joint_vel [rad/s], torque [N·m], optional episode "
               "(int; history never crosses a change), one row per physics substep. Example: actuator-gym fit "
               "--synthetic log.npz out/ --epochs 200",
    )
    ap.add_argument("data", help="CSV (header row) or NPZ log; with --synthetic, where the synthetic log is written")
    ap.add_argument("out_dir", help="output folder for actuator_net.onnx, actuator_net.pt and report.json")
    ap.add_argument("--model", choices=["mlp", "lstm"], default="mlp", help="network kind (default: %(default)s)")
    ap.add_argument("--input-idx", type=int, nargs="+", default=[0, 1, 2, 3], metavar="I",
                    help=f"MLP only: history indices [substeps back], each in [0, {MAX_HISTORY}] (default: 0 1 2 3)")
    ap.add_argument("--hidden", type=int, nargs="+", default=None, metavar="W",
                    help=f"hidden layer widths (1 to {MAX_LAYERS}), each in [1, {MAX_HIDDEN}]; the LSTM takes one (default: 32 32 for mlp, 32 for lstm)")
    ap.add_argument("--epochs", type=int, default=400, help="training epochs, >= 1 (default: %(default)s)")
    ap.add_argument("--lr", type=float, default=3e-3, help="Adam learning rate, > 0 (default: %(default)s)")
    ap.add_argument("--batch-size", type=int, default=4096, help="MLP mini-batch size [rows], >= 1 (default: %(default)s)")
    ap.add_argument("--seq-len", type=int, default=64, help="LSTM truncated back-propagation length [substeps], >= 1 (default: %(default)s)")
    ap.add_argument("--holdout", type=float, default=0.2,
                    help="fraction of every sequence's tail kept out of training and scored, in (0, 1) (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the initialisation, shuffling and synthetic log, >= 0 (default: %(default)s)")
    ap.add_argument("--synthetic", action="store_true",
                    help="first write a synthetic log (DC motor + 2-substep delay on a 1-DOF inertia) to DATA")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar (terminal) or progress lines (log)")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    ap = build_parser()
    a = ap.parse_args(argv)
    try:  # every option checked before the synthetic log is written or anything trained
        _check_options(a.model, a.input_idx, a.hidden, "softsign", a.epochs, a.lr, a.batch_size, a.holdout, a.seq_len, a.seed)
    except ValueError as exc:
        name, _, rest = str(exc).partition(" ")
        ap.error(f"--{name.rstrip(':').replace('_', '-')} {rest}")
    if a.synthetic:
        generate_synthetic_log(a.data, seed=a.seed)
    rep = fit_actuator_net(
        a.data, a.out_dir, a.model, input_idx=a.input_idx, hidden=a.hidden, epochs=a.epochs, lr=a.lr,
        batch_size=a.batch_size, holdout=a.holdout, seq_len=a.seq_len, seed=a.seed, progress=not a.no_progress,
    )
    h = rep["heldout"]
    print(f"held-out: RMSE {h['rmse']:.4g} N·m, max error {h['max_abs_error']:.4g} N·m, R^2 {h['r2']:.4f} "
          f"(torque std {h['torque_std']:.4g}, {h['num_samples']} samples); wrote {rep['onnx']}, {rep['torchscript']}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
