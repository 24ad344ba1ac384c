"""A short PPO run on actuator_gym/Pendulum-v0 with the experiment's engine: wall time and learning curve.

    .venv/bin/python benchmarks/train_pendulum.py [--experiment configs/experiments/pendulum_ppo.yaml] [--out DIR]

Trains with the settings of the experiment file (the same code path as ``actuator-gym train``),
prints the evaluation curve (mean undiscounted return of the deterministic policy over 5 seeded
episodes) and the wall time, and compares the final return against a random and a zero-action
policy measured in the same run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from actuator_gym import configs  # noqa: E402
from actuator_gym.tools.engines import train_policy  # noqa: E402
from actuator_gym.tools.training import evaluate, make_env  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--experiment", default=str(Path(__file__).resolve().parents[1] / "configs/experiments/pendulum_ppo.yaml"))
    p.add_argument("--out", default="actuator_gym_out/bench_train_pendulum")
    args = p.parse_args(argv)
    exp = configs.load(args.experiment)
    env = make_env(exp.task, exp.actuators, **exp.task_kwargs)
    rng = np.random.default_rng(0)
    random_ret = evaluate(lambda o: rng.uniform(env.action_space.low, env.action_space.high).astype(np.float32), env, 5, 1000)
    zero_ret = evaluate(lambda o: np.zeros(env.action_space.shape, np.float32), env, 5, 1000)
    report = train_policy(exp.engine, exp.task, args.out, actuators=exp.actuators, task_kwargs=exp.task_kwargs, seed=exp.seed,
                          settings=exp.train, progress=False)
    print(f"task {exp.task}, engine {exp.engine}, settings {exp.train}")
    print(f"baselines (same 5 eval seeds): random policy {random_ret:.1f}, zero action (hold 0 rad) {zero_ret:.1f}")
    print("timesteps  mean_eval_return")
    for s, r in report["curve"]:
        print(f"{s:9d}  {r:10.2f}")
    print(f"wall time {report['wall_s']:.0f} s (training + evaluations), {report['timesteps'] / report['wall_s']:.0f} steps/s")
    print(f"curve: {args.out}/learning_curve.png, policy: {args.out}/policy.json + policy.pt")


if __name__ == "__main__":
    main()
