"""The per-episode actuator statistics reach each RL library's own log, read back from what it wrote:
rsl_rl's TensorBoard events (OnPolicyRunner), SB3's CSV log (ActuatorStatsCallback, and
``actuator-gym train``'s own log) and skrl's TensorBoard events (SequentialTrainer).

A recorder between the native env and the adapter keeps every record the env emitted, so the logged
values are checked against the mean over exactly the episodes each iteration / rollout finished.
"""

from __future__ import annotations

import csv

import gymnasium as gym
import numpy as np
import pytest
from conftest import skrl_ppo_models
import torch
from gymnasium.vector import AutoresetMode, VectorWrapper

import actuator_gym  # noqa: F401  (registers the ids)
from actuator_gym.adapters import ActuatorStatsCallback, rsl_rl, sb3, skrl
from actuator_gym.runtime.episode_stats import EPISODE_INFO_KEY, EPISODE_STATS, episode_record, log_values

EPISODE = 8  # control steps
TAGS = {f"Episode_Actuator/{g}/{s}" for g in ("pendulum", "all_joints") for s in EPISODE_STATS}


class Recorder(VectorWrapper):
    """Keeps, per step, ``{tag: values of the episodes that ended}`` as the env reported them."""

    def __init__(self, env):
        super().__init__(env)
        self.steps: list[dict[str, np.ndarray]] = []

    def step(self, actions):
        out = self.env.step(actions)
        record, mask = episode_record(out[4])
        self.steps.append({} if record is None else log_values(record, mask))
        return out


def _env(mode=AutoresetMode.NEXT_STEP, n=4):
    return Recorder(gym.make_vec("actuator_gym/Pendulum-v0", num_envs=n, autoreset_mode=mode,
                                 episode_length_s=EPISODE / 60.0))


def _means(steps):
    """``{tag: mean over every episode in steps}``."""
    out = {}
    for tag in TAGS:
        vals = [v for s in steps for v in s.get(tag, [])]
        if vals:
            out[tag] = float(np.mean(vals))
    return out


def _events(folder):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(folder))
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def _check_plausible(means):
    for g in ("pendulum", "all_joints"):
        peak, mean = means[f"Episode_Actuator/{g}/peak_abs_effort"], means[f"Episode_Actuator/{g}/mean_abs_effort"]
        assert 0 < mean <= peak <= 5.0  # the pendulum's effort limit [N·m]
        assert 0 <= means[f"Episode_Actuator/{g}/saturated_fraction"] <= 1
        assert means[f"Episode_Actuator/{g}/energy"] > 0


def test_rsl_rl_runner_logs_actuator_statistics(tmp_path):
    from rsl_rl.runners import OnPolicyRunner

    from test_adapters import _rsl_train_cfg

    rec = _env(AutoresetMode.SAME_STEP)
    env = rsl_rl(rec, seed=0)
    # extras["log"] holds one value per finished episode, only in steps where episodes finished
    _, _, dones, extras = env.step(torch.zeros(4, 1))
    assert not dones.any() and not set(extras["log"]) & TAGS
    rec.steps.clear()
    env.reset(seed=0)
    runner = OnPolicyRunner(env, _rsl_train_cfg(), log_dir=str(tmp_path), device="cpu")
    runner.learn(num_learning_iterations=2)
    runner.logger.writer.flush()
    events = _events(tmp_path)
    assert TAGS <= set(events)
    steps = runner.cfg["num_steps_per_env"]
    assert len(rec.steps) == 2 * steps
    for it in range(2):
        expected = _means(rec.steps[it * steps:(it + 1) * steps])
        assert set(expected) == TAGS  # 16 steps of 8-step episodes: every env finished 2
        _check_plausible(expected)
        for tag in TAGS:
            assert events[tag][it][0] == it
            assert events[tag][it][1] == pytest.approx(expected[tag], rel=1e-5)


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_sb3_callback_writes_actuator_statistics(tmp_path, mode):
    from stable_baselines3 import PPO
    from stable_baselines3.common.logger import configure
    from stable_baselines3.common.vec_env import VecMonitor

    rec = _env(mode)
    venv = VecMonitor(sb3(rec))
    # VecMonitor's info["episode"] and ours side by side at an episode end
    venv.reset()
    for _ in range(EPISODE):
        _, _, dones, infos = venv.step(np.zeros((4, 1), np.float32))
    assert dones.all()
    for i, info in enumerate(infos):
        assert set(info["episode"]) == {"r", "l", "t"} and info["episode"]["l"] == EPISODE
        got = {f"Episode_Actuator/{g}/{s}": v for g, st in info[EPISODE_INFO_KEY].items() for s, v in st.items()}
        assert got == {tag: rec.steps[-1][tag][i] for tag in TAGS}
    rec.steps.clear()
    n_steps = 2 * EPISODE
    model = PPO("MlpPolicy", venv, n_steps=n_steps, batch_size=32, n_epochs=1, seed=0, device="cpu",
                policy_kwargs={"net_arch": [16]})
    model.set_logger(configure(str(tmp_path), ["csv"]))
    model.learn(total_timesteps=2 * n_steps * 4, callback=ActuatorStatsCallback())
    rows = list(csv.DictReader(open(tmp_path / "progress.csv")))
    assert len(rows) == 2 and TAGS <= set(rows[0])
    for it, row in enumerate(rows):  # rollout it = steps [it * n_steps, (it + 1) * n_steps)
        expected = _means(rec.steps[it * n_steps:(it + 1) * n_steps])
        _check_plausible(expected)
        for tag in TAGS:
            assert float(row[tag]) == pytest.approx(expected[tag], rel=1e-9)


def test_train_ppo_logs_actuator_statistics(tmp_path):
    from actuator_gym.tools.training import train_ppo

    report = train_ppo("actuator_gym/Pendulum-v0", tmp_path, task_kwargs={"episode_length_s": EPISODE / 60.0},
                       total_timesteps=128, num_envs=4, n_steps=16, batch_size=32, eval_every=10**6,
                       eval_episodes=1, net_arch=(8,), progress=False)
    rows = list(csv.DictReader(open(tmp_path / "logs" / "progress.csv")))
    assert report["log_dir"] == str(tmp_path / "logs") and len(rows) == 2
    for row in rows:
        assert TAGS <= set(row)
        _check_plausible({tag: float(row[tag]) for tag in TAGS})
    events = _events(tmp_path / "logs")  # tensorboard is installed here: TensorBoard gets them too
    assert TAGS <= set(events)


def test_skrl_trainer_tracks_actuator_statistics(tmp_path):
    from skrl.agents.torch.ppo import PPO, PPO_CFG
    from skrl.memories.torch import RandomMemory
    from skrl.trainers.torch import SequentialTrainer

    rec = _env(AutoresetMode.NEXT_STEP)
    env = skrl(rec)
    # the trainer tracks infos["episode"] scalars: one mean per step in which episodes ended
    obs, _ = env.reset()
    for k in range(EPISODE):
        _, _, _, _, info = env.step(torch.zeros(4, 1))
    assert {tag: v.item() for tag, v in info["episode"].items()} == pytest.approx(
        {tag: float(np.mean(v)) for tag, v in rec.steps[-1].items()}, rel=1e-6)
    assert all(v.numel() == 1 for v in info["episode"].values())
    rec.steps.clear()
    cfg = PPO_CFG(rollouts=16, learning_epochs=1, mini_batches=1)
    cfg.experiment.write_interval = 2 * EPISODE
    cfg.experiment.checkpoint_interval = 0
    cfg.experiment.directory = str(tmp_path)
    cfg.experiment.experiment_name = "run"
    models = skrl_ppo_models(env, hidden=None)
    agent = PPO(models=models, memory=RandomMemory(memory_size=16, num_envs=4, device="cpu"),
                observation_space=env.observation_space, action_space=env.action_space, device="cpu", cfg=cfg)
    trainer = SequentialTrainer(env=env, agents=agent, cfg={"timesteps": 4 * EPISODE, "headless": False,
                                                            "disable_progressbar": True,
                                                            "close_environment_at_exit": False})
    trainer.train()
    agent.writer.flush()
    events = _events(tmp_path / "run")
    assert TAGS <= set(events)
    for tag in TAGS:
        assert len(events[tag]) == 2
        for (step, value), k in zip(events[tag], (1, 2)):  # written at timesteps 16, 32: 2 episode ends each
            ends = [np.mean(s[tag]) for s in rec.steps[(k - 1) * 2 * EPISODE:k * 2 * EPISODE] if tag in s]
            assert len(ends) == 2 and value == pytest.approx(float(np.mean(ends)), rel=1e-5)
    _check_plausible({tag: events[tag][-1][1] for tag in TAGS})
    env.close()
