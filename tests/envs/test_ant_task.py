"""actuator_gym/Ant-v0 against Gymnasium's Ant-v5 (no contact forces) on the same states."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import actuator_gym  # noqa: F401  (registers the ids)
from actuator_gym.tasks.ant import ANT_JOINT_NAMES, ANT_V5_ACTION_ORDER, AntTask, ant_dc_motor_cfg


def _v5():
    # Ant-v5 with the observation and reward this task reproduces
    env = gym.make("Ant-v5", include_cfrc_ext_in_observation=False, contact_cost_weight=0.0).unwrapped
    env.reset(seed=0)
    return env


def _ideal(**kw):
    # no delay, no torque-speed limit: the applied torque is exactly 150 * action, as Ant-v5's motors
    return {"legs": ant_dc_motor_cfg(max_delay=0, actuator_velocity_limit=1e9, saturation_effort=1e12, **kw)}


def test_spaces_order_and_model():
    task = AntTask(num_envs=2, seed=0)
    v5 = _v5()
    assert task.joint_names == ANT_JOINT_NAMES
    assert task.single_observation_space.shape == v5.observation_space.shape == (27,)
    assert task.single_action_space.shape == (8,)
    assert np.all(task.single_action_space.low == -1) and np.all(task.single_action_space.high == 1)
    assert task.dt == pytest.approx(v5.dt) == pytest.approx(0.05)
    assert task.max_episode_steps == 1000
    assert task.model.opt.integrator == v5.model.opt.integrator  # RK4
    # Ant-v5's actuator i drives joint ANT_V5_ACTION_ORDER-permuted: ours[j] = v5[ORDER[j]]
    v5_joints = [v5.model.joint(v5.model.actuator_trnid[i, 0]).name for i in range(v5.model.nu)]
    assert [v5_joints[i] for i in ANT_V5_ACTION_ORDER] == list(ANT_JOINT_NAMES)
    task.close()


def test_obs_reward_termination_match_ant_v5_on_the_same_state():
    task = AntTask(num_envs=2, seed=3, actuators=_ideal(), autoreset_mode=AutoresetMode.DISABLED)
    v5 = _v5()
    obs, _ = task.reset(seed=3)
    be = task.backend
    # env 1 starts too high: unhealthy after the step in both (z > 1.0)
    be.qpos[1, 2] = 1.3
    obs = task._observe_checked()
    rng = np.random.default_rng(0)
    v5_action = rng.uniform(-1, 1, size=(2, 8))
    ours_action = v5_action[:, ANT_V5_ACTION_ORDER]
    qpos0, qvel0 = be.qpos.copy(), be.qvel.copy()
    o2, r2, te2, tr2, info2 = task.step(ours_action)
    for i in range(2):
        v5.set_state(qpos0[i], qvel0[i])
        np.testing.assert_allclose(obs[i], v5._get_obs(), rtol=1e-6, atol=1e-6)  # float32 vs float64
        x_before = v5.data.qpos[0]
        o, r, te, tr, inf = v5.step(v5_action[i])
        # same physics: 150 N·m * action as generalized forces == gear 150 * ctrl
        np.testing.assert_allclose(be.qpos[i], v5.data.qpos, atol=1e-9)
        np.testing.assert_allclose(o2[i], o, rtol=1e-6, atol=1e-5)
        assert bool(te2[i]) == te and not tr2[i]
        assert info2["reward_survive"][i] == pytest.approx(inf["reward_survive"])
        assert info2["reward_ctrl"][i] == pytest.approx(inf["reward_ctrl"], rel=1e-12)
        # forward term: x displacement of the torso over the step / dt, from Ant-v5's own state
        # (Ant-v5 reads xpos after mj_step, one substep behind; see actuator_gym/tasks/ant.py)
        fwd = (v5.data.qpos[0] - x_before) / v5.dt
        assert info2["reward_forward"][i] == pytest.approx(fwd, rel=1e-7, abs=1e-9)
        assert info2["x_velocity"][i] == pytest.approx(fwd, rel=1e-7, abs=1e-9)
        assert r2[i] == pytest.approx(fwd + inf["reward_survive"] + inf["reward_ctrl"], rel=1e-7, abs=1e-9)
    assert te2.tolist() == [False, True]
    assert info2["reward_survive"].tolist() == [1.0, 0.0]
    task.close()


def test_zero_action_keeps_v5_trajectory_and_default_actuators_shape_torque():
    # zero action: identical to Ant-v5 with zero control for several steps, whatever the actuator
    task = AntTask(num_envs=1, seed=1, autoreset_mode=AutoresetMode.DISABLED)
    v5 = _v5()
    task.reset(seed=1)
    v5.set_state(task.backend.qpos[0].copy(), task.backend.qvel[0].copy())
    for _ in range(4):
        o, r, te, tr, info = task.step(np.zeros((1, 8)))
        o5, r5, *_ = v5.step(np.zeros(8))
    np.testing.assert_allclose(o[0], o5, rtol=1e-6, atol=1e-5)
    assert info["reward_ctrl"][0] == 0.0
    # default actuators: a full command is limited by the DC motor's torque-speed line
    # tau_max = min(150, 300 * (1 - qd / 20)) at the velocity measured before each substep, after
    # the 0..1 substep delay; the control cost still uses the action (as Ant-v5), not the torque
    seen = []
    task.add_substep_callback(lambda t, k: seen.append((t.collection.applied_effort.numpy().copy(), t.backend.joint_vel())))
    task.backend.qvel[0, 6:] = 15.0  # hinges spinning at 15 rad/s: above the 10 rad/s corner
    qd_before = task.backend.joint_vel()
    o, r, te, tr, info = task.step(np.ones((1, 8)))
    assert len(seen) == 5
    for k in range(2, 5):  # past the delay: the command is 150 N·m
        qd = seen[k - 1][1]
        expect = np.clip(np.minimum(150.0, 300.0 * (1 - qd / 20.0)), -150.0, None)
        np.testing.assert_allclose(seen[k][0], expect, rtol=1e-5, atol=1e-3)
    assert (seen[2][0] < 149.0).sum() >= 4 and np.all(qd_before > 10.0)  # the sloped part was exercised
    assert info["reward_ctrl"][0] == pytest.approx(-0.5 * 8)
    task.close()


def test_reset_distribution_autoreset_and_registration():
    env = gym.make_vec("actuator_gym/Ant-v0", num_envs=8)
    obs, info = env.reset(seed=5)
    qpos0 = env.model.qpos0
    q = env.backend.qpos
    assert np.all(np.abs(q - qpos0) <= 0.1 + 1e-12)
    assert 0.0 < np.abs(env.backend.qvel).std() < 0.3
    assert obs.shape == (8, 27) and obs.dtype == np.float32
    # seeded: same seed, same state
    obs2, _ = env.reset(seed=5)
    np.testing.assert_array_equal(obs, obs2)
    # an unhealthy env ends and is reset on the next step (NEXT_STEP), others untouched
    env.backend.qpos[2, 2] = 1.5
    _, _, term, _, _ = env.step(np.zeros((8, 8)))
    assert term.tolist() == [i == 2 for i in range(8)]
    before = env.backend.qpos.copy()
    _, rew, term, _, info = env.step(np.zeros((8, 8)))
    assert rew[2] == 0.0 and not term[2] and info["actuator"]["_parameters"][2]
    assert abs(env.backend.qpos[2, 2] - 0.75) <= 0.1 + 1e-12
    env.close()
    single = gym.make("actuator_gym/Ant-v0")
    o, _ = single.reset(seed=0)
    assert o.shape == (27,)
    single.close()


def test_bad_cfg_values_raise():
    with pytest.raises(ValueError, match="healthy_z_range"):
        AntTask(num_envs=1, healthy_z_range=(1.0, 0.2))
    with pytest.raises(ValueError, match="reset_noise_scale"):
        AntTask(num_envs=1, reset_noise_scale=-1.0)
