"""Neural actuator models: median µs per ``compute`` call at (1, 12), (64, 12), (4096, 12) on CPU.

    .venv/bin/python benchmarks/neural_step.py --repeats 300 --rounds 5

``ActuatorNetMLPCfg`` (MLP 6-32-32-1 softsign, history ``input_idx=[0, 2, 4]``) and
``ActuatorNetLSTMCfg`` (LSTM hidden 32, linear head), both followed by the DC-motor clamp; the
networks are written as ONNX (our own exporter) into a temporary folder and loaded through the
normal loader. For each size both models run in alternating rounds; the table shows medians and
the per-element cost. ``neural_rows()`` returns the printed rows (``benchmarks/actuator_step.py``
includes them).
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


def _time(model, n, j, repeats, rng):
    q, qd, tq = (rng.standard_normal((n, j)).astype(np.float32) for _ in range(3))
    for _ in range(10):
        model.compute(joint_pos=q, joint_vel=qd, target_pos=tq, dt=0.005)
    t0 = time.perf_counter()
    for _ in range(repeats):
        model.compute(joint_pos=q, joint_vel=qd, target_pos=tq, dt=0.005)
    return (time.perf_counter() - t0) / repeats * 1e6


def neural_timings(repeats: int = 300, rounds: int = 5) -> list[dict]:
    """``[{"model", "num_envs", "num_joints", "median_us", "us_per_element"}]``."""
    rng = np.random.default_rng(0)
    rows = []
    with tempfile.TemporaryDirectory() as d:
        mlp, lstm = _nets(Path(d))
        cfgs = {
            "ActuatorNetMLP": ActuatorNetMLPCfg(network_file=str(mlp), saturation_effort=120.0, actuator_effort_limit=80.0, actuator_velocity_limit=7.5),
            "ActuatorNetLSTM": ActuatorNetLSTMCfg(network_file=str(lstm), saturation_effort=120.0, actuator_effort_limit=80.0, actuator_velocity_limit=7.5),
        }
        for n, j in SIZES:
            models = {k: c.build(joint_names=JOINTS[:j], num_envs=n, seed=0) for k, c in cfgs.items()}
            reps = max(5, repeats if n < 1000 else repeats // 20)
            times = {k: [] for k in models}
            for _ in range(rounds):
                for k, m in models.items():
                    times[k].append(_time(m, n, j, reps, rng))
            for k in models:
                med = statistics.median(times[k])
                rows.append({"model": k, "num_envs": n, "num_joints": j, "median_us": med, "us_per_element": med / (n * j)})
    return rows


def neural_rows(repeats: int = 300, rounds: int = 5) -> list[str]:
    """The table as printed lines (header first)."""
    out = [f"{'model':>16} {'(envs, joints)':>16} {'median us':>10} {'us/element':>11}"]
    for r in neural_timings(repeats, rounds):
        out.append(f"{r['model']:>16} {str((r['num_envs'], r['num_joints'])):>16} {r['median_us']:10.1f} {r['us_per_element']:11.4f}")
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=300)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}; median us per compute call (DC-motor clamp included)")
    for line in neural_rows(a.repeats, a.rounds):
        print(line)


if __name__ == "__main__":
    main()
