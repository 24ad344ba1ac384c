"""Mirror symmetry (actuator_gym.envs.symmetry): the spec's algebra, and the quadruped's reflection
checked through the physics -- the mirrored state stepped with the mirrored actions gives the
mirrored observations and the same rewards."""

import numpy as np
import pytest
import torch

from actuator_gym.tasks.quadruped import JOINT_NAMES, QuadrupedTask, go1_dc_motor_cfg
from actuator_gym.envs.symmetry import MirrorSpec, joint_mirror, task_mirror


def test_spec_applies_index_and_sign_and_is_an_involution():
    spec = MirrorSpec(obs_index=(2, 1, 0), obs_sign=(-1, 1, -1), action_index=(0,), action_sign=(-1,))
    x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=np.float32)
    y = spec.mirror_obs(x)
    np.testing.assert_array_equal(y, [[-3.0, 2.0, -1.0], [-6.0, 5.0, -4.0]])
    assert y.dtype == np.float32
    np.testing.assert_array_equal(spec.mirror_obs(y), x)
    t = torch.tensor(x)
    assert torch.equal(spec.mirror_obs(t), torch.tensor(y))
    assert torch.equal(spec.mirror_actions(torch.tensor([[2.5]])), torch.tensor([[-2.5]]))


@pytest.mark.parametrize("kw, match", [
    (dict(obs_index=(0, 0), obs_sign=(1, 1)), "permutation"),
    (dict(obs_index=(1, 2, 0), obs_sign=(1, 1, 1)), "involution"),
    (dict(obs_index=(1, 0), obs_sign=(1, -1)), "involution"),
    (dict(obs_index=(0, 1), obs_sign=(1, 2)), r"\+1 or -1"),
    (dict(obs_index=(0, 1), obs_sign=(1,)), "obs_sign has 1"),
])
def test_spec_refuses_what_is_not_a_reflection(kw, match):
    with pytest.raises(ValueError, match=match):
        MirrorSpec(action_index=(0,), action_sign=(1,), **kw)


def test_spec_refuses_a_wrong_width():
    spec = MirrorSpec(obs_index=(1, 0), obs_sign=(1, 1), action_index=(0,), action_sign=(1,))
    with pytest.raises(ValueError, match="obs has 3 entries"):
        spec.mirror_obs(np.zeros((4, 3)))


def test_joint_mirror_swaps_legs_and_negates_abduction():
    idx, sign = joint_mirror(JOINT_NAMES, (("FL_", "FR_"), ("RL_", "RR_")), ("_hip_joint",))
    assert [JOINT_NAMES[i] for i in idx[:6]] == ["FR_hip_joint", "FR_thigh_joint", "FR_calf_joint", "FL_hip_joint", "FL_thigh_joint", "FL_calf_joint"]
    assert sign[:3] == [-1.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="FR_calf_joint"):
        joint_mirror(["FL_calf_joint", "FL_hip_joint"], (("FL_", "FR_"),), ())


def _mirror_state(qpos, qvel, spec_joint_idx, spec_joint_sign):
    """The quadruped's state reflected through the trunk's xz plane (free joint + 12 hinges)."""
    q, v = qpos.copy(), qvel.copy()
    q[1] = -qpos[1]  # base y
    q[4], q[6] = -qpos[4], -qpos[6]  # quaternion (w, x, y, z) -> (w, -x, y, -z)
    v[1] = -qvel[1]  # world linear velocity y
    v[3], v[5] = -qvel[3], -qvel[5]  # body angular velocity: a pseudovector
    q[7:] = qpos[7:][spec_joint_idx] * spec_joint_sign
    v[6:] = qvel[6:][spec_joint_idx] * spec_joint_sign
    return q, v


class _MirroredPair(QuadrupedTask):
    """Two envs: env 1 starts as the mirror image of env 0 (state and command)."""

    def sample_reset(self, env_ids, rng):
        state = super().sample_reset(env_ids, rng)
        if list(env_ids) == [0, 1]:
            idx, sign = joint_mirror(JOINT_NAMES, (("FL_", "FR_"), ("RL_", "RR_")), ("_hip_joint",))
            state["qpos"][1], state["qvel"][1] = _mirror_state(state["qpos"][0], state["qvel"][0], idx, np.asarray(sign))
            self.commands[1] = self.commands[0] * np.array([1.0, -1.0, -1.0])
        return state


def test_quadruped_mirrored_rollout_mirrors_observations_and_keeps_rewards():
    # fixed 1-substep delay (the same in both envs), no command resampling, a command with every part
    task = _MirroredPair(2, actuators={"legs": go1_dc_motor_cfg(min_delay=1, max_delay=1)}, command_resample_s=0.0,
                         standing_command_prob=0.0)
    spec = task_mirror(task)
    obs, _ = task.reset(seed=3)
    np.testing.assert_allclose(obs[1], spec.mirror_obs(obs[0]), atol=1e-6)
    assert np.abs(obs[0, 46]) > 0.01 and np.abs(obs[0, 47]) > 0.01  # a lateral and a yaw command
    rng = np.random.default_rng(0)
    worst_obs = worst_rew = 0.0
    for _ in range(50):  # 1 s: a few steps of a stumbling gait, the feet making and breaking contact
        a = rng.uniform(-0.5, 0.5, 12)
        obs, rew, term, trunc, _ = task.step(np.stack([a, spec.mirror_actions(a)]))
        assert not term.any()
        worst_obs = max(worst_obs, np.abs(obs[1] - spec.mirror_obs(obs[0])).max())
        worst_rew = max(worst_rew, abs(rew[1] - rew[0]))
    task.close()
    # the model, the contacts and every term are symmetric: float32 observations agree to round-off
    assert worst_obs < 1e-6 and worst_rew < 1e-9, (worst_obs, worst_rew)


def test_quadruped_declares_no_mirror_for_a_user_model():
    from actuator_gym.tasks.quadruped import quadruped_mjcf

    task = QuadrupedTask(1, mjcf=quadruped_mjcf())
    with pytest.raises(ValueError, match="declares no mirror symmetry"):
        task_mirror(task)
    task.close()
