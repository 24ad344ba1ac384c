"""Normalized action spaces: every bundled task and a wrapped Gymnasium env act in Box(-1, 1),
SB3's and Gymnasium's check_env accept them without action-space warnings, and actions -1 / 0 / +1
reach the documented targets (read back from the actuators' target command)."""

from __future__ import annotations

import math
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import actuator_gym  # noqa: F401  (registers the ids)
from actuator_gym import DCMotorCfg, IdealPDActuatorCfg
from actuator_gym.tasks.pendulum import PendulumTask
from actuator_gym.tasks.quadruped import DEFAULT_JOINT_POS, JOINT_NAMES, JOINT_RANGES
from actuator_gym.randomization import Uniform
from actuator_gym.wrappers import ActuatorWrapper

TASKS = ["actuator_gym/Pendulum-v0", "actuator_gym/Quadruped-v0", "actuator_gym/Ant-v0", "actuator_gym/Quadrotor-v0"]
SB3_ACTION_WARNING = "symmetric and normalized Box action space"  # SB3 env_checker's text
STEPS = np.array([-1.0, 0.0, 1.0])


def _sb3_action_warnings(env) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sb3_check_env(env, warn=True, skip_render_check=True)
    return [str(w.message) for w in caught if SB3_ACTION_WARNING in str(w.message) or "action space" in str(w.message).lower()]


def _normalized_box(space, n):
    assert space == gym.spaces.Box(-1.0, 1.0, (n,), np.float32)
    assert np.all(space.low == -1.0) and np.all(space.high == 1.0)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("task_id", TASKS)
def test_bundled_tasks_pass_both_check_envs_without_action_space_warnings(task_id):
    env = gym.make(task_id)
    _normalized_box(env.action_space, env.action_space.shape[0])
    assert _sb3_action_warnings(env) == []
    gym_check_env(env.unwrapped, skip_render_check=True)
    env.close()


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("env_id", ["Hopper-v5", "InvertedPendulum-v5"])
def test_wrapped_env_in_position_mode_passes_both_check_envs(env_id):
    cfg = IdealPDActuatorCfg(stiffness=20.0, damping=1.0, actuator_effort_limit=50.0)
    env = ActuatorWrapper(gym.make(env_id), actuators={"legs": cfg}, action_mode="position")
    _normalized_box(env.action_space, len(env.joint_names))
    assert _sb3_action_warnings(env) == []
    gym_check_env(env, skip_render_check=True)
    env.close()
    # the explicit mapping of before (scale 0.5 around qpos0, which sits on Hopper's limits) is what SB3 warned about
    old = ActuatorWrapper(gym.make("Hopper-v5"), actuators={"legs": cfg}, normalize_actions=False)
    assert old.action_space.high[0] == 0.0 and old.action_space.low[0] == pytest.approx(-2 * 2.61799388)
    assert any(SB3_ACTION_WARNING in w for w in _sb3_action_warnings(old))


def _step_each(task, actions_per_env):
    task.reset(seed=0)
    task.step(actions_per_env)


def test_pendulum_minus_one_zero_one_reach_minus_pi_zero_pi():
    task = gym.make_vec("actuator_gym/Pendulum-v0", num_envs=3)
    _, info = task.reset(seed=0)
    np.testing.assert_allclose(info["action_scale"], np.full((3, 1), math.pi))
    np.testing.assert_allclose(info["action_offset"], np.zeros((3, 1)))
    assert info["_action_scale"].tolist() == [True] * 3 and info["_action_offset"].tolist() == [True] * 3
    _, _, _, _, info = task.step(STEPS[:, None])
    np.testing.assert_allclose(task.collection.target_command.position.numpy()[:, 0], [-math.pi, 0.0, math.pi], rtol=1e-6)
    assert not info["_action_scale"].any()  # in every info (same keys: torchrl), masked to the reset envs: none here
    ranged = PendulumTask(num_envs=3, joint_range=(-1.0, 2.0))  # onto the joint range
    _step_each(ranged, STEPS[:, None])
    np.testing.assert_allclose(ranged.collection.target_command.position.numpy()[:, 0], [-1.0, 0.5, 2.0], rtol=1e-6)
    single = gym.make("actuator_gym/Pendulum-v0")  # the single env's info: (num_actions,) arrays
    _, info = single.reset(seed=0)
    np.testing.assert_allclose((info["action_scale"], info["action_offset"]), ([math.pi], [0.0]))


def test_quadruped_targets_span_one_radian_around_the_stance_within_the_joint_ranges():
    task = gym.make_vec("actuator_gym/Quadruped-v0", num_envs=3)
    _, info = task.reset(seed=0)
    np.testing.assert_allclose(info["action_scale"], np.ones((3, 12)))
    np.testing.assert_allclose(info["action_offset"][0], DEFAULT_JOINT_POS)
    task.step(np.repeat(STEPS[:, None], 12, axis=1))
    tgt = task.collection.target_command.position.numpy()[:, task.action_joint_ids]
    # stance +-1 rad, clipped into each hinge's range (as the wrapper clips): knees -1.5 +- 1 within [-2.7, -0.9]
    lo, hi = (np.array([JOINT_RANGES[n.split("_", 1)[1]][k] for n in JOINT_NAMES]) for k in (0, 1))
    expected = np.clip(np.asarray(DEFAULT_JOINT_POS)[None] + STEPS[:, None], lo, hi)
    np.testing.assert_allclose(tgt, expected, rtol=1e-6, atol=1e-6)
    assert np.allclose(tgt[2, 2::3], -0.9)  # knee targets -0.5 clipped to the range's end


def test_ant_effort_targets_and_quadrotor_thrusts():
    ant = gym.make_vec("actuator_gym/Ant-v0", num_envs=3)
    _step_each(ant, np.repeat(STEPS[:, None], 8, axis=1))
    np.testing.assert_allclose(ant.collection.target_command.effort.numpy()[:, ant.action_joint_ids],
                               np.repeat(150.0 * STEPS[:, None], 8, axis=1), rtol=1e-6)
    quad = gym.make_vec("actuator_gym/Quadrotor-v0", num_envs=3)
    t_min, t_max = quad.cfg.actuators["rotors"].thrust_range
    _, info = quad.reset(seed=0)
    np.testing.assert_allclose(info["action_scale"], np.full((3, 4), (t_max - t_min) / 2))
    np.testing.assert_allclose(info["action_offset"], np.full((3, 4), (t_max + t_min) / 2))
    quad.step(np.repeat(STEPS[:, None], 4, axis=1))
    np.testing.assert_allclose(quad.rotors.target_thrust, np.repeat(np.array([[t_min], [(t_min + t_max) / 2], [t_max]]), 4, 1),
                               rtol=1e-6)


def _wrapped_targets(env, a, channel):
    env.reset(seed=0)
    env.step(np.asarray(a, np.float32))
    cols = [env.backend.joints.names.index(n) for n in env.joint_names]
    return getattr(env.collection.target_command, channel).numpy()[0, cols]


def test_wrapped_hopper_maps_onto_the_joint_ranges():
    env = ActuatorWrapper(gym.make("Hopper-v5"), actuators={"legs": IdealPDActuatorCfg(stiffness=20.0, damping=1.0)})
    m = env.unwrapped.model
    rng = np.array([m.jnt_range[m.joint(n).id] for n in env.joint_names])  # thigh, leg [-150°, 0], foot [-45°, 45°]
    _, info = env.reset(seed=0)
    np.testing.assert_allclose(info["action_scale"], (rng[:, 1] - rng[:, 0]) / 2)
    np.testing.assert_allclose(info["action_offset"], (rng[:, 1] + rng[:, 0]) / 2)
    for a, expected in ((-1.0, rng[:, 0]), (0.0, rng.mean(axis=1)), (1.0, rng[:, 1])):
        np.testing.assert_allclose(_wrapped_targets(env, np.full(3, a), "position"), expected, atol=1e-12)


def test_wrapped_velocity_and_effort_modes_use_the_actuator_limits():
    dc = DCMotorCfg(stiffness=0.0, damping=1.0, saturation_effort=60.0, actuator_velocity_limit=20.0, actuator_effort_limit=40.0)
    vel = ActuatorWrapper(gym.make("Hopper-v5"), actuators={"legs": dc}, action_mode="velocity")
    _normalized_box(vel.action_space, 3)
    np.testing.assert_allclose(_wrapped_targets(vel, [-1.0, 0.0, 1.0], "velocity"), [-20.0, 0.0, 20.0])
    eff = ActuatorWrapper(gym.make("Hopper-v5"), actuators={"legs": dc}, action_mode="effort")
    np.testing.assert_allclose(_wrapped_targets(eff, [-1.0, 0.0, 1.0], "effort"), [-40.0, 0.0, 40.0])
    # no finite effort limit: the un-normalized default scale, the env's gear x ctrlrange (Hopper: 200 x 1)
    free = ActuatorWrapper(gym.make("Hopper-v5"), actuators={"legs": IdealPDActuatorCfg(stiffness=0.0)}, action_mode="effort")
    np.testing.assert_allclose(free.action_scale, [200.0] * 3)
    _normalized_box(free.action_space, 3)
    # the task layer: the same rule (+-the limit); a randomized limit is no single bound, so the
    # default velocity scale (5 rad/s per unit, the wrapper's) stays
    kw = dict(joint_names_expr=["hinge"], stiffness=0.0, damping=1.0, saturation_effort=60.0,
              actuator_velocity_limit=20.0, actuator_effort_limit=40.0)
    fixed = PendulumTask(num_envs=4, action_mode="velocity", actuators={"p": DCMotorCfg(**kw)})
    np.testing.assert_allclose(fixed.action_scale, [20.0])
    rnd = DCMotorCfg(**kw, randomization={"actuator_velocity_limit": Uniform(0.8, 1.2, operation="scale")})
    task = PendulumTask(num_envs=4, action_mode="velocity", actuators={"p": rnd})
    np.testing.assert_allclose(task.action_scale, [5.0])
    _normalized_box(task.single_action_space, 1)


def test_explicit_settings_keep_working_and_conflicts_are_refused():
    cfg = IdealPDActuatorCfg(stiffness=20.0, damping=1.0)
    absolute = ActuatorWrapper(gym.make("InvertedPendulum-v5"), actuators={"a": cfg}, action_scale=1.0, action_offset=0.0)
    np.testing.assert_allclose(_wrapped_targets(absolute, [0.3], "position"), [0.3])  # absolute targets, as before
    with pytest.raises(ValueError, match=r"normalize_actions=True.*\['action_scale'\]"):
        ActuatorWrapper(gym.make("InvertedPendulum-v5"), actuators={"a": cfg}, action_scale=1.0, normalize_actions=True)
    with pytest.raises(TypeError, match="normalize_actions must be True, False or None"):
        ActuatorWrapper(gym.make("InvertedPendulum-v5"), actuators={"a": cfg}, normalize_actions="yes")
    with pytest.raises(ValueError, match=r"PendulumCfg: normalize_actions=True.*\['action_bounds'\]"):
        PendulumTask(num_envs=1, normalize_actions=True, action_bounds=(-2.0, 2.0))
    explicit = PendulumTask(num_envs=2, normalize_actions=False)  # the wrapper's defaults: 0.5 rad around qpos0 = 0
    np.testing.assert_allclose((explicit.action_scale, explicit.action_offset), ([0.5], [0.0]))
    np.testing.assert_allclose(explicit.single_action_space.high, [2 * math.pi], rtol=1e-6)  # unlimited: 0 +- pi rad
    _step_each(explicit, np.array([[-2.0], [1.0]]))
    np.testing.assert_allclose(explicit.collection.target_command.position.numpy()[:, 0], [-1.0, 0.5])
