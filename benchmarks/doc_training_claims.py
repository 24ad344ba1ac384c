"""The training lengths the docs' RL examples quote, trained and measured (docs/adapters.md, docs/training.md).

    python benchmarks/doc_training_claims.py

Each docs example runs a few iterations so that CI can run it as written; its comment says how long
a run must be to learn the task. This script trains each example's setup for that length and prints
how well the policy then holds the Pendulum's commanded angle: the mean |wrap(q - command)| [rad]
over the last second of 64 fresh episodes (seed 123, deterministic actions), before and after.
"""

from __future__ import annotations

import tempfile
import time
import warnings

import gymnasium as gym
import numpy as np
import torch

import actuator_gym  # noqa: F401  (registers the ids)
from actuator_gym.adapters import rsl_rl, sb3

ID = "actuator_gym/Pendulum-v0"


def angle_error(act) -> float:
    """Mean |angle error| [rad] over the last 60 steps (1 s) of 64 episodes of 300 steps; ``act(obs)``."""
    env = gym.make_vec(ID, num_envs=64)
    obs, _ = env.reset(seed=123)
    errors = []
    for t in range(300):
        obs, *_ = env.step(act(obs))
        if t >= 240:
            errors.append(np.abs(obs[:, 4]))  # obs[4] = wrap(q - command)
    return float(np.mean(errors))


def sb3_case(name, venv, steps, **ppo):
    from stable_baselines3 import PPO

    model = PPO("MlpPolicy", venv, seed=0, **ppo)
    act = lambda obs: model.predict(obs, deterministic=True)[0]  # noqa: E731
    before, t = angle_error(act), time.time()
    model.learn(steps)
    return name, before, angle_error(act), time.time() - t


def rsl_rl_case(iterations):
    from rsl_rl.runners import OnPolicyRunner

    mlp = {"class_name": "rsl_rl.models.MLPModel", "hidden_dims": [64, 64], "activation": "elu"}
    cfg = {"num_steps_per_env": 24, "save_interval": 1000, "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
           "algorithm": {"class_name": "rsl_rl.algorithms.PPO", "num_learning_epochs": 5, "num_mini_batches": 4},
           "actor": {**mlp, "distribution_cfg": {"class_name": "rsl_rl.modules.GaussianDistribution", "init_std": 1.0}},
           "critic": dict(mlp), "logger": "tensorboard"}
    env = rsl_rl(gym.make_vec(ID, num_envs=256), seed=0)
    runner = OnPolicyRunner(env, cfg, log_dir=tempfile.mkdtemp(), device="cpu")
    policy = runner.get_inference_policy(device="cpu")

    def act(obs):
        with torch.no_grad():
            return policy({"policy": torch.as_tensor(obs, dtype=torch.float32)}).numpy()

    before, t = angle_error(act), time.time()
    runner.learn(num_learning_iterations=iterations)
    return f"rsl_rl OnPolicyRunner, 256 envs, {iterations} iterations", before, angle_error(act), time.time() - t


def train_policy_case(steps):
    from actuator_gym.tools.engines import train_policy
    from actuator_gym.tools.training import SavedPolicy

    out = tempfile.mkdtemp()
    settings = {"num_envs": 64, "num_steps_per_env": 16}
    train_policy("rsl_rl", ID, out, seed=0, progress=False, settings={**settings, "total_timesteps": 1024})
    before, t = angle_error(SavedPolicy.load(out)), time.time()  # (after one iteration: the untrained net's scale)
    train_policy("rsl_rl", ID, out, seed=0, progress=False, settings={**settings, "total_timesteps": steps})
    return f"train_policy('rsl_rl'), 64 envs x 16 steps, {steps:_} steps", before, angle_error(SavedPolicy.load(out)), time.time() - t


def main() -> None:
    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import VecMonitor

    rows = [
        sb3_case("SB3 PPO, native batch of 16, n_steps=256, 100_000 steps",
                 VecMonitor(sb3(gym.make_vec(ID, num_envs=16))), 100_000, n_steps=256),
        sb3_case("SB3 PPO, make_vec_env n_envs=4, n_steps=256, 100_000 steps", make_vec_env(ID, n_envs=4, seed=0),
                 100_000, n_steps=256),
        rsl_rl_case(100),
        train_policy_case(500_000),
    ]
    print(f"{'setup':60s} {'|err| before':>12s} {'after':>8s} {'train s':>8s}")
    for name, before, after, seconds in rows:
        print(f"{name:60s} {before:12.3f} {after:8.3f} {seconds:8.0f}")


if __name__ == "__main__":
    main()
