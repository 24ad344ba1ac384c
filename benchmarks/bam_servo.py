"""The cost of a BAM servo group on the batched quadruped, against the DC-motor group, side by side.

    python benchmarks/bam_servo.py [--envs 64 256] [--steps 50] [--rounds 9]

Two ``actuator_gym/Quadruped-v0`` vector envs of ``--envs`` worlds each: every leg joint in one
``DCMotorCfg`` group (the task's Go1-class preset, ``go1_dc_motor_cfg()``), or in one
``BAMServoCfg(motor="mx106", model="m6")`` group (BAM's richest friction model, the supply sagging
through 0.5 ohm). Each round runs ``--steps`` control steps of each, the order alternating, with the
same seeded random actions (resets as the episodes end); the table shows the median time per
control step and the median of the per-round ratios BAM / DC motor (the issue's bound: 1.5).
Both groups do their own physics (the BAM group's budgets add MuJoCo friction constraints), so the
ratio is the whole cost of choosing the BAM servo, not only its arithmetic. The machine's load
average is printed first: compare rows of one run only.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import gymnasium as gym
import numpy as np

import actuator_gym  # noqa: F401  (registers the ids)
from actuator_gym import BAMServoCfg
from actuator_gym.tasks.quadruped import go1_dc_motor_cfg


def make(kind: str, n: int):
    cfg = (BAMServoCfg(joint_names_expr=[".*"], motor="mx106", model="m6", vin_drop_resistance=0.5, vin_min=10.0)
           if kind == "bam" else go1_dc_motor_cfg())
    env = gym.make_vec("actuator_gym/Quadruped-v0", num_envs=n, actuators={"legs": cfg})
    env.reset(seed=0)
    return env


def run(env, actions) -> float:
    t = time.perf_counter()
    for a in actions:
        env.step(a)
    return (time.perf_counter() - t) / len(actions)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--envs", type=int, nargs="+", default=[64, 256])
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print("| worlds | DC motor [ms/step] | BAM servo [ms/step] | BAM / DC (median of rounds) |")
    print("| --- | --- | --- | --- |")
    for n in args.envs:
        envs = {k: make(k, n) for k in ("dc", "bam")}
        rng = np.random.default_rng(0)
        shape = envs["dc"].action_space.shape
        times = {k: [] for k in envs}
        for r in range(args.rounds + 1):  # round 0 warms up
            actions = rng.uniform(-1, 1, (args.steps, *shape)).astype(np.float32)
            for k in (("dc", "bam") if r % 2 else ("bam", "dc")):
                t = run(envs[k], actions)
                if r:
                    times[k].append(t)
        ratios = [b / d for b, d in zip(times["bam"], times["dc"])]
        print(f"| {n} | {statistics.median(times['dc']) * 1e3:.2f} | {statistics.median(times['bam']) * 1e3:.2f} | "
              f"{statistics.median(ratios):.2f} |")
        for e in envs.values():
            e.close()


if __name__ == "__main__":
    main()
