"""Identification of the worked example (docs/identify.md): 4 logs of 8 s of the example motor at
500 Hz, every class (``model="all"``), timed; prints each parameter against the truth with its 95 %
interval, the delay, the fit and held-out RMS against the noise, and the time.

    .venv/bin/python benchmarks/identify_example.py [--units 1] [--seed 0]
"""

import argparse
import tempfile
import time
from pathlib import Path

from actuator_gym.tools.identify import identify
from actuator_gym.tools.motor_bench import write_example_logs

NOISE = {"joint_pos": 1e-3, "joint_vel": 0.02, "effort": 0.01}

ap = argparse.ArgumentParser()
ap.add_argument("--units", type=int, default=1)
ap.add_argument("--seed", type=int, default=0)
args = ap.parse_args()
root = Path(tempfile.mkdtemp())
truths = write_example_logs(root / "logs", units=args.units, seed=args.seed)
t0 = time.perf_counter()
report = identify(sorted((root / "logs").glob("unit_*")), mjcf=root / "logs" / "bench.xml", joint="hinge",
                  model="all", out=root / "out")
seconds = time.perf_counter() - t0
for cls, units in report["classes"].items():
    for unit, fit in units.items():
        truth = truths[unit]
        print(f"\n{cls} / {unit}: delay {fit['delay']} (truth {truth['delay']}), held-out score {fit['heldout_score']:.4f}")
        for key, sigma in NOISE.items():
            print(f"  {key:10s} fit RMS {fit['fit_rms'][key]:.4g} ({fit['fit_rms'][key] / sigma:.2f} x noise), "
                  f"held-out {fit['heldout_rms'][key]:.4g} ({fit['heldout_rms'][key] / sigma:.2f} x noise)")
        print(f"  {'parameter':24s} {'truth':>9s} {'identified':>11s} {'error %':>8s} {'95 % half %':>11s} inside")
        for name, p in fit["parameters"].items():
            lo, hi = p["interval_95"]
            t = truth[name]
            print(f"  {name:24s} {t:9.5g} {p['value']:11.5g} {100 * (p['value'] - t) / t:8.3f} "
                  f"{100 * (hi - lo) / 2 / t:11.3f} {'yes' if lo <= t <= hi else 'NO'}")
print(f"\nchosen: {report['chosen']}; {args.units} unit(s) x 4 logs of 8 s, both classes: {seconds:.0f} s")
print((root / "out" / "identify" / "actuator.yaml").read_text())
