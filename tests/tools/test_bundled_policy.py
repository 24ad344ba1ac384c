"""The bundled walking policy (issue 33): the quadruped_walk recipe's policy ships in the wheel, loads by
name, runs in rollout and export without training, and walks -- measured from the physics."""

import json

import numpy as np
import pytest

from actuator_gym import configs
from actuator_gym.tools.cli import main
from actuator_gym.tools.training import SavedPolicy
from actuator_gym.tools.walk_check import walk_figures


def test_the_bundled_policy_loads_by_name_and_is_the_recipes():
    assert set(configs.bundled_policies()) == {"quadruped_walk"}
    policy = SavedPolicy.load("quadruped_walk")
    exp = configs.load("quadruped_walk")
    assert policy.meta["task"] == exp.task and policy.meta["net_arch"] == list(exp.train["actor_hidden_dims"])


def test_the_bundled_policy_walks_at_the_commanded_speed_without_a_fall():
    """16 envs x 10 s commanded 0.6 m/s straight ahead: no fall, the mean forward speed within 0.1 m/s
    of the command, every foot steps (airborne WALK_AIRBORNE of the time, touching down again and
    again), and a foot in stance slides no more than the recipe measured (mean contact-point speed below 0.1 m/s)."""
    fig = walk_figures("quadruped_walk", vx=0.6, num_envs=16, seconds=10.0, seed=0)
    assert fig["falls"] == 0, fig
    assert abs(fig["vx_mean"] - 0.6) < 0.1, fig
    for foot, air in fig["airborne"].items():
        assert WALK_AIRBORNE[0] < air < WALK_AIRBORNE[1], (foot, fig)
        assert fig["steps"][foot] >= 16 * 10, (foot, fig)  # at least a step a second in every env
        assert fig["slip"][foot] < 0.1, (foot, fig)  # the recipe measured 0.07-0.11 m/s (benchmarks/training.md)


def test_rollout_and_export_take_the_bundled_name(tmp_path):
    assert main(["rollout", "--experiment", "quadruped_walk", "--policy", "quadruped_walk", "--steps", "50",
                 "--out", str(tmp_path)]) == 0
    gait = json.loads((tmp_path / "rollout" / "gait.json").read_text())
    assert gait["falls"] == 0
    assert main(["export", "--policy", "quadruped_walk", "--format", "onnx", "--out", str(tmp_path)]) == 0
    import onnxruntime as ort

    policy = SavedPolicy.load("quadruped_walk")
    obs = np.random.default_rng(0).normal(size=(5, policy.meta["obs_dim"])).astype(np.float32)
    sess = ort.InferenceSession(str(tmp_path / "export" / "policy.onnx"), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(sess.run(None, {"obs": obs})[0], policy(obs), atol=1e-5)


WALK_AIRBORNE = (0.15, 0.7)
