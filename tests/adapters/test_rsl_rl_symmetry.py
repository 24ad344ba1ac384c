"""rsl_rl's symmetry extension with the task's mirror (actuator_gym.adapters.rsl_rl_mirror): the
augmentation function's contract, rsl_rl's own ``OnPolicyRunner`` naming it by string as its
documentation does, and the rsl_rl engine's ``symmetry`` setting."""

import contextlib
import copy
import io

import gymnasium as gym
import numpy as np
import pytest
import torch
from tensordict import TensorDict

import actuator_gym  # noqa: F401
from actuator_gym import configs
from actuator_gym.adapters import rsl_rl, rsl_rl_mirror
from actuator_gym.envs.symmetry import task_mirror
from actuator_gym.tools.train_rsl_rl import runner_config, train_rsl_rl

QUAD = "actuator_gym/Quadruped-v0"


@pytest.fixture(scope="module")
def quad_env():
    env = rsl_rl(gym.make_vec(QUAD, num_envs=4), seed=0)
    yield env
    env.close()


def test_mirror_appends_the_mirrored_rows_after_the_originals(quad_env):
    spec = task_mirror(quad_env)
    obs = quad_env.get_observations()
    actions = torch.randn(4, 12)
    obs2, act2 = rsl_rl_mirror(quad_env, obs, actions)
    assert obs2.batch_size == torch.Size([8]) and act2.shape == (8, 12)
    assert torch.equal(obs2["policy"][:4], obs["policy"]) and torch.equal(act2[:4], actions)
    np.testing.assert_array_equal(obs2["policy"][4:].numpy(), spec.mirror_obs(obs["policy"].numpy()))
    # left and right legs exchanged, abduction negated: FL_hip_joint of the mirror is -FR_hip_joint
    assert torch.equal(act2[4:, 0], -actions[:, 3]) and torch.equal(act2[4:, 4], actions[:, 1])
    only_actions = rsl_rl_mirror(quad_env, None, actions)
    assert only_actions[0] is None and torch.equal(only_actions[1], act2)
    bad = TensorDict({"policy": obs["policy"][:, :40]}, batch_size=[4])
    with pytest.raises(ValueError, match=r"observation groups \['policy'\] are not 48 wide"):
        rsl_rl_mirror(quad_env, bad, None)


def test_a_task_without_a_mirror_is_refused():
    env = rsl_rl(gym.make_vec("actuator_gym/Pendulum-v0", num_envs=2), seed=0)
    with pytest.raises(ValueError, match="PendulumTask declares no mirror symmetry"):
        rsl_rl_mirror(env, env.get_observations(), None)
    env.close()


def test_rsl_rl_runner_names_the_function_by_string(quad_env):
    """rsl_rl's own way: ``symmetry_cfg`` with ``data_augmentation_func`` as a ``module:function`` string;
    one update on twice the samples, its symmetry loss reported (and, with the mirror loss on, > 0)."""
    from rsl_rl.runners import OnPolicyRunner

    settings = configs.train_settings("rsl_rl", {"num_envs": 4, "num_steps_per_env": 8, "num_mini_batches": 2,
                                                 "num_learning_epochs": 1, "actor_hidden_dims": [16],
                                                 "critic_hidden_dims": [16]})
    cfg = runner_config(settings)
    cfg["algorithm"]["symmetry_cfg"] = {"use_data_augmentation": True, "use_mirror_loss": True, "mirror_loss_coeff": 0.5,
                                        "data_augmentation_func": "actuator_gym.adapters:rsl_rl_mirror"}
    torch.manual_seed(0)
    with contextlib.redirect_stdout(io.StringIO()):
        runner = OnPolicyRunner(quad_env, copy.deepcopy(cfg), log_dir=None, device="cpu")
    runner.logger.git_status_repos = []
    sizes = []
    loss = runner.alg.symmetry.compute_loss

    def recorded_loss(actor, batch, n):
        sizes.append((batch.observations.batch_size[0], n))
        return loss(actor, batch, n)

    runner.alg.symmetry.compute_loss = recorded_loss
    with contextlib.redirect_stdout(io.StringIO()):
        runner.learn(num_learning_iterations=1)
    assert sizes == [(32, 16), (32, 16)]  # 2 mini-batches of 16 rows (8 steps x 4 envs / 2), each + 16 mirrored


def test_engine_symmetry_setting_becomes_rsl_rls_symmetry_cfg():
    for mode, augment, loss in (("augment", True, False), ("mirror_loss", False, True), ("both", True, True)):
        cfg = runner_config(configs.train_settings("rsl_rl", {"symmetry": mode, "mirror_loss_coeff": 0.25}))
        assert cfg["algorithm"]["symmetry_cfg"] == {"use_data_augmentation": augment, "use_mirror_loss": loss,
                                                    "mirror_loss_coeff": 0.25,
                                                    "data_augmentation_func": "actuator_gym.adapters:rsl_rl_mirror"}
    assert "symmetry_cfg" not in runner_config(configs.train_settings("rsl_rl", {}))["algorithm"]


def test_engine_trains_the_quadruped_with_augmentation(tmp_path):
    settings = {"num_envs": 8, "num_steps_per_env": 4, "total_timesteps": 64, "eval_every": 64, "eval_episodes": 1,
                "actor_hidden_dims": [16], "critic_hidden_dims": [16], "symmetry": "both", "torch_threads": 1}
    report = train_rsl_rl(QUAD, tmp_path / "run", task_kwargs={"episode_length_s": 0.2}, settings=settings, progress=False)
    assert report["iterations"] == 2 and report["settings"]["symmetry"] == "both"
    assert (tmp_path / "run" / "policy.pt").exists()
