"""Full reset of a batched task: ``task.reset()`` of every env, and the actuator groups' part alone.

    .venv/bin/python benchmarks/reset_seeding.py --num-envs 4096 --repeats 20 --rounds 5

Quadruped-v0 with randomized actuators (Uniform stiffness and damping per env and joint, the default
0..2 substep delay) and one model-field randomization (trunk mass): what a reset draws per env.
Prints the median over rounds of the mean CPU time of this process per call [ms] (process time, not
wall time: less sensitive to other jobs on a shared machine; the task runs MuJoCo with nthread=1).
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

import actuator_gym  # noqa: F401  (before mujoco)
from actuator_gym.tasks.quadruped import QuadrupedTask, go1_dc_motor_cfg
from actuator_gym.envs.task_cfg import ModelFieldRandomization
from actuator_gym.randomization import Uniform


def build(num_envs: int) -> QuadrupedTask:
    legs = go1_dc_motor_cfg(randomization={"stiffness": Uniform(0.8, 1.2, operation="scale", per_joint=True),
                                           "damping": Uniform(0.8, 1.2, operation="scale", per_joint=True)})
    rand = [ModelFieldRandomization(field="body_mass", distribution=Uniform(0.9, 1.1, operation="scale"), index="trunk")]
    return QuadrupedTask(num_envs=num_envs, actuators={"legs": legs}, model_randomization=rand, seed=0,
                         nthread=1)


def timed(fn, repeats: int, rounds: int) -> float:
    out = []
    for _ in range(rounds):
        t0 = time.process_time()
        for _ in range(repeats):
            fn()
        out.append((time.process_time() - t0) / repeats * 1e3)
    return statistics.median(out)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--num-envs", type=int, default=4096)
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--rounds", type=int, default=5)
    a = p.parse_args()
    torch.set_num_threads(1)
    task = build(a.num_envs)
    task.reset(seed=1)
    full = timed(lambda: task.reset(), a.repeats, a.rounds)
    seeded = timed(lambda: task.reset(seed=3), a.repeats, a.rounds)
    groups = timed(lambda: task.actuators.reset(), a.repeats, a.rounds)
    print(f"num_envs={a.num_envs}: reset() {full:.2f} ms, reset(seed=3) {seeded:.2f} ms, "
          f"task.actuators.reset() {groups:.2f} ms")


if __name__ == "__main__":
    main()
