"""Time ``Actuator.compute`` for PD + Delay + DC motor against a plain numpy implementation.

    python benchmarks/actuator_step.py [--repeats 2000] [--rounds 7] [--clock wall|cpu]

For each batch size (num_envs, num_joints) both implementations run the same law on the same
inputs, alternately, for several rounds; the table shows medians (us per call) and the ratio
ours / numpy (lower is better). Neural drives are timed too (``neural_step.py``): the MLP and LSTM
actuators on both network engines against onnxruntime's bare network on the same rows, with the
same ``--repeats`` and ``--rounds``. ``--clock cpu`` times this process's CPU time instead of the
elapsed time (on a shared machine other jobs' time slices then do not count).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import actuator_gym as ag  # noqa: E402

KP, KD, SAT, VLIM, ELIM, DMAX = 25.0, 0.5, 33.5, 21.0, 23.7, 2


class NumpyPDDelayDC:
    """The reference: the same law written plainly in numpy (allocating temporaries)."""

    def __init__(self, n, j, lags):
        self.kp = np.full((n, j), KP, np.float32)
        self.kd = np.full((n, j), KD, np.float32)
        self.sat = np.full((n, j), SAT, np.float32)
        self.vlim = np.full((n, j), VLIM, np.float32)
        self.elim = np.full((n, j), ELIM, np.float32)
        self.vc = self.vlim * (1 + self.elim / self.sat)
        self.hist = np.zeros((DMAX + 1, 3, n, j), np.float32)
        self.lag = lags
        self.count = np.zeros((n, 1), np.int64)
        self.w = 0
        self.ii, self.jj = np.arange(n)[:, None], np.arange(j)[None, :]

    def compute(self, q, qd, tq, tqd, tff):
        h = DMAX + 1
        self.hist[self.w, 0], self.hist[self.w, 1], self.hist[self.w, 2] = tq, tqd, tff
        r = (self.w - np.minimum(self.lag, self.count)) % h
        d = self.hist[r, :, self.ii, self.jj]  # (n, j, 3)
        self.w = (self.w + 1) % h
        self.count = np.minimum(self.count + 1, DMAX)
        tau = self.kp * (d[..., 0] - q) + self.kd * (d[..., 1] - qd) + d[..., 2]
        v = np.clip(qd, -self.vc, self.vc)
        hi = np.minimum(self.sat * (1 - v / self.vlim), self.elim)
        lo = np.maximum(self.sat * (-1 - v / self.vlim), -self.elim)
        return np.clip(tau, lo, hi)


def ours(n, j, backend="auto"):
    return ag.Actuator(
        drive=ag.DrivePD(kp=KP, kd=KD),
        delay=ag.Delay(min_delay=0, max_delay=DMAX),
        clamping=[ag.ClampingDCMotor(saturation_effort=SAT, velocity_limit=VLIM, effort_limit=ELIM)],
        num_envs=n,
        num_joints=j,
        seed=0,
        array_backend=backend,
    )


def time_calls(fn, repeats, clock="wall"):
    now = {"wall": time.perf_counter, "cpu": time.process_time}[clock]
    t0 = now()
    for _ in range(repeats):
        fn()
    return (now() - t0) / repeats * 1e6


def bench(n, j, repeats, rounds, rng, clock="wall"):
    q, qd, tq, tqd, tff = (rng.standard_normal((n, j)).astype(np.float32) for _ in range(5))
    qd *= 20
    model = ours(n, j)
    ref = NumpyPDDelayDC(n, j, model.parameter("delay_steps").numpy())
    torch_model = ours(n, j, backend="torch")
    tt = [torch.from_numpy(x) for x in (q, qd, tq, tqd, tff)]
    # same numbers first
    for _ in range(DMAX + 2):
        a = model.compute(joint_pos=q, joint_vel=qd, target_pos=tq, target_vel=tqd, target_effort=tff).numpy()
        b = ref.compute(q, qd, tq, tqd, tff)
    assert np.allclose(a, b, rtol=1e-5, atol=1e-4), "ours and the numpy reference disagree"
    reps = max(20, repeats // max(1, n // 64))
    t_ours, t_np, t_torch = [], [], []
    for _ in range(rounds):
        t_ours.append(time_calls(lambda: model.compute(joint_pos=q, joint_vel=qd, target_pos=tq, target_vel=tqd, target_effort=tff), reps, clock))
        t_np.append(time_calls(lambda: ref.compute(q, qd, tq, tqd, tff), reps, clock))
        t_torch.append(time_calls(lambda: torch_model.compute(joint_pos=tt[0], joint_vel=tt[1], target_pos=tt[2], target_vel=tt[3], target_effort=tt[4]), reps, clock))
    return statistics.median(t_ours), statistics.median(t_np), statistics.median(t_torch)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall", help="wall: elapsed time; cpu: this process's CPU time")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    print(f"torch {torch.__version__}, numpy {np.__version__}, torch threads {torch.get_num_threads()}, clock {args.clock}")
    print("PD + Delay(0..2) + DCMotor, median us per compute call")
    print(f"{'(envs, joints)':>16} {'ours':>9} {'numpy':>9} {'ours/numpy':>11} {'torch path':>11}")
    for n, j in [(1, 12), (64, 12), (4096, 12)]:
        o, r, t = bench(n, j, args.repeats, args.rounds, rng, args.clock)
        print(f"{str((n, j)):>16} {o:9.1f} {r:9.1f} {o / r:11.2f} {t:11.1f}")
    try:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from neural_step import neural_rows  # noqa: E402
    except ImportError:
        return
    print("\nNeural drives (+ DC motor clamp), median us per compute call, on each engine; raw ort: onnxruntime's bare")
    print("network on the same rows (1 thread, prebound buffers); /raw: the whole actuator over it")
    for row in neural_rows(args.repeats, args.rounds, args.clock):
        print(row)


if __name__ == "__main__":
    main()
