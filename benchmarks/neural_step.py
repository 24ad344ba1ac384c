"""Neural actuator models: median µs per ``compute`` call at (1, 12), (64, 12), (4096, 12) on CPU.

    .venv/bin/python benchmarks/neural_step.py --repeats 300 --rounds 5 [--clock wall|cpu]

``ActuatorNetMLPCfg`` (MLP 6-32-32-1 softsign, history ``input_idx=[0, 2, 4]``) and
``ActuatorNetLSTMCfg`` (LSTM hidden 32, linear head), both followed by the DC-motor clamp; the
networks are written as ONNX (our own exporter) into a temporary folder and loaded through the
normal loader. Each model runs on both engines (``onnx_engine="onnxruntime"`` and ``"torch"``),
and onnxruntime's bare network runs on the same rows (one thread, prebound buffers, and plain
``session.run``); everything of one size runs in alternating rounds; the table shows medians, the
per-element cost and the whole actuator's time over the bare network's. ``neural_rows()`` returns
the printed rows (``benchmarks/actuator_step.py`` includes them).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from actuator_gym import ActuatorNetLSTMCfg, ActuatorNetMLPCfg
from actuator_gym.actuators.checkpoints import MLPNet, RecurrentNet, export_onnx

SIZES = [(1, 12), (64, 12), (4096, 12)]
JOINTS = [f"{leg}_{j}" for leg in ("FL", "FR", "RL", "RR") for j in ("hip", "thigh", "calf")]


def _nets(folder: Path) -> tuple[Path, Path]:
    torch.manual_seed(0)
    mlp, lstm = folder / "mlp.onnx", folder / "lstm.onnx"
    export_onnx(MLPNet([6, 32, 32, 1], "softsign"), mlp, "mlp",
                {"input_order": "pos_vel", "input_idx": [0, 2, 4], "pos_scale": 1.0, "vel_scale": 0.1, "torque_scale": 20.0})
    export_onnx(RecurrentNet(nn.LSTM(2, 32), nn.Sequential(nn.Linear(32, 1))), lstm, "lstm", {})
    return mlp, lstm


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
"""``wall``: elapsed time (the default); ``cpu``: this process's CPU time, which the time slices of other
jobs on a shared machine do not inflate (the runs here are single-threaded: torch and onnxruntime on
one thread)."""


def _time(model, n, j, repeats, rng, clock="wall"):
    q, qd, tq = (rng.standard_normal((n, j)).astype(np.float32) for _ in range(3))
    for _ in range(10):
        model.compute(joint_pos=q, joint_vel=qd, target_pos=tq, dt=0.005)
    now = CLOCKS[clock]
    t0 = now()
    for _ in range(repeats):
        model.compute(joint_pos=q, joint_vel=qd, target_pos=tq, dt=0.005)
    return (now() - t0) / repeats * 1e6


def _raw_network(path: Path, kind: str, rows: int):
    """``(bound, plain)``: callables running the bare network on onnxruntime for ``rows`` rows --
    through prebound buffers (``run_with_iobinding``, what the engine does) and through
    ``session.run`` with a feed dict (the everyday call)."""
    from actuator_gym.actuators.checkpoints import load_network
    from actuator_gym.actuators.onnx_engine import OrtRunner, ort_session

    net = load_network(path, kind)
    m = net.module
    session = ort_session(net.onnx_model, str(path), 1)
    state = None if kind == "mlp" else (m.num_states, m.num_layers, m.hidden_size)
    f = 6 if kind == "mlp" else 2
    runner = OrtRunner(session, str(path), m.feed_names, m.fetch_names, rows, f, state)
    x = np.random.default_rng(0).standard_normal((rows, f) if kind == "mlp" else (1, rows, f)).astype(np.float32)
    feeds = {m.feed_names[0]: x, **{n: np.zeros((1, rows, m.hidden_size), np.float32) for n in m.feed_names[1:]}}
    fetches = list(m.fetch_names)
    return runner.run, (lambda: session.run(fetches, feeds))


ENGINES = ("onnxruntime", "torch")


def neural_timings(repeats: int = 300, rounds: int = 5, clock: str = "wall") -> list[dict]:
    """``[{"model", "engine", "num_envs", "num_joints", "median_us", "us_per_element", "raw_us", "raw_run_us"}]``:
    the whole actuator (history, network, DC-motor clamp) on each engine, and onnxruntime's bare
    network on the same rows (``raw_us``: prebound buffers; ``raw_run_us``: ``session.run``), all
    timed in alternating rounds on ``clock`` (:data:`CLOCKS`)."""
    rng = np.random.default_rng(0)
    rows = []
    with tempfile.TemporaryDirectory() as d:
        mlp, lstm = _nets(Path(d))
        files = {"ActuatorNetMLP": (mlp, "mlp", ActuatorNetMLPCfg), "ActuatorNetLSTM": (lstm, "lstm", ActuatorNetLSTMCfg)}
        for n, j in SIZES:
            reps = max(5, repeats if n < 1000 else repeats // 20)
            models, raw = {}, {}
            for name, (path, kind, cls) in files.items():
                for e in ENGINES:
                    cfg = cls(network_file=str(path), saturation_effort=120.0, actuator_effort_limit=80.0,
                              actuator_velocity_limit=7.5, onnx_engine=e)
                    models[name, e] = cfg.build(joint_names=JOINTS[:j], num_envs=n, seed=0)
                    assert models[name, e].drive.engine == e
                raw[name] = _raw_network(path, kind, n * j)
            times: dict = {k: [] for k in [*models, *((k, "raw") for k in raw), *((k, "run") for k in raw)]}
            for _ in range(rounds):
                for k, m in models.items():
                    times[k].append(_time(m, n, j, reps, rng, clock))
                for k, (bound, plain) in raw.items():
                    times[k, "raw"].append(_time_call(bound, reps, clock))
                    times[k, "run"].append(_time_call(plain, reps, clock))
            for (name, e) in models:
                med = statistics.median(times[name, e])
                rows.append({
                    "model": name, "engine": e, "num_envs": n, "num_joints": j, "median_us": med,
                    "us_per_element": med / (n * j), "raw_us": statistics.median(times[name, "raw"]),
                    "raw_run_us": statistics.median(times[name, "run"]),
                })
    return rows


def _time_call(fn, repeats, clock="wall"):
    for _ in range(10):
        fn()
    now = CLOCKS[clock]
    t0 = now()
    for _ in range(repeats):
        fn()
    return (now() - t0) / repeats * 1e6


def neural_rows(repeats: int = 300, rounds: int = 5, clock: str = "wall") -> list[str]:
    """The table as printed lines (header first); ``/raw``: the whole actuator over onnxruntime's bare
    network (prebound buffers) on the same rows."""
    out = [f"{'model':>16} {'engine':>12} {'(envs, joints)':>16} {'median us':>10} {'us/element':>11} "
           f"{'raw ort us':>11} {'session.run us':>15} {'/raw':>6}"]
    for r in neural_timings(repeats, rounds, clock):
        out.append(
            f"{r['model']:>16} {r['engine']:>12} {str((r['num_envs'], r['num_joints'])):>16} {r['median_us']:10.1f} "
            f"{r['us_per_element']:11.4f} {r['raw_us']:11.1f} {r['raw_run_us']:15.1f} {r['median_us'] / r['raw_us']:6.2f}"
        )
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=300)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    p.add_argument("--clock", choices=sorted(CLOCKS), default="wall", help="wall: elapsed time; cpu: this process's CPU time")
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}; median us per compute call (DC-motor clamp included)")
    for line in neural_rows(a.repeats, a.rounds, a.clock):
        print(line)


if __name__ == "__main__":
    main()
