"""One action map: ``ActuatorWrapper`` on Gymnasium's Ant-v5 and the batched ``Ant-v0`` task, given
the same actuators, map actions to targets alike joint by joint (matched by ``joint_names``: the
wrapper follows Ant-v5's actuator order ``hip_4, ankle_4, hip_1, ...``, the task the model's joint
order) in every action mode, normalized and explicit -- scale, offset, action bounds, the targets
written for the same action (position targets clipped into the joint range), the targets held at a
reset -- report the same telemetry keys, and compute the same per-substep efforts from the same
state."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

from actuator_gym import DCMotorCfg, IdealPDActuatorCfg, ImplicitActuatorCfg
from actuator_gym.tasks.ant import AntTask
from actuator_gym.runtime import ActuatorRig
from actuator_gym.wrappers import ActuatorWrapper

MODES = ("position", "velocity", "effort", "position_velocity")
CHANNELS = ("position", "velocity", "effort")
# finite limits: normalized velocity / effort channels reach +-12 rad/s / +-80 N·m
LIMITED = DCMotorCfg(joint_names_expr=[".*"], stiffness=40.0, damping=1.0, saturation_effort=120.0,
                     actuator_effort_limit=80.0, actuator_velocity_limit=12.0)
# no finite limit: the channels' default scales (5 rad/s; the effort: Ant's motor, gear 150 x ctrlrange 1)
UNLIMITED = IdealPDActuatorCfg(joint_names_expr=[".*"], stiffness=40.0, damping=1.0)
# ImplicitActuatorCfg's one meaning, the Stable-PD solve, in both doors
IMPLICIT = ImplicitActuatorCfg(joint_names_expr=[".*"], stiffness=40.0, damping=1.0, joint_effort_limit=60.0)


class AntTask64(AntTask):
    actuator_dtype = torch.float64  # the wrapper's arithmetic, so that targets and efforts compare exactly


def _pair(mode, normalize, cfg, frame_skip=5):
    wrapped = ActuatorWrapper(gym.make("Ant-v5", frame_skip=frame_skip), actuators={"legs": cfg}, action_mode=mode,
                              normalize_actions=normalize)
    task = AntTask64(num_envs=1, actuators={"legs": cfg}, action_mode=mode, normalize_actions=normalize,
                     decimation=frame_skip, clip_actions=False, seed=0)
    return wrapped, task


def _matching(wrapped, task, mode):
    """``(k, names)``: the wrapper's action index of each task action element, and the task's action joints."""
    names = [task.joint_names[i] for i in task.action_joint_ids]
    k = [wrapped.joint_names.index(n) for n in names]
    return np.array(k + [len(k) + i for i in k] if mode == "position_velocity" else k), names


def _targets(env, names):
    """``{channel: (J,) targets}`` of the joints ``names`` (the collection's row 0)."""
    cols = [env.collection.joint_names.index(n) for n in names]
    return {ch: getattr(env.collection.target_command, ch).numpy()[0, cols].copy() for ch in CHANNELS}


def _ranges(names):
    m = gym.make("Ant-v5").unwrapped.model
    return np.array([m.jnt_range[m.joint(n).id] for n in names])


@pytest.mark.parametrize("cfg", [LIMITED, UNLIMITED], ids=["limited", "unlimited"])
@pytest.mark.parametrize("normalize", [True, False], ids=["normalized", "explicit"])
@pytest.mark.parametrize("mode", MODES)
def test_wrapper_and_task_map_actions_alike_joint_by_joint(mode, normalize, cfg):
    wrapped, task = _pair(mode, normalize, cfg)
    k, names = _matching(wrapped, task, mode)
    J, A = len(names), len(k)
    assert task.num_actions == wrapped.action_space.shape[0] == A == 8 * (2 if mode == "position_velocity" else 1)
    np.testing.assert_array_equal(task.action_scale, wrapped.action_scale[k])
    np.testing.assert_array_equal(task.action_offset, wrapped.action_offset[k])
    np.testing.assert_array_equal(task.single_action_space.low, wrapped.action_space.low[k])
    np.testing.assert_array_equal(task.single_action_space.high, wrapped.action_space.high[k])
    _, w_info = wrapped.reset(seed=0)
    _, t_info = task.reset(seed=0)
    np.testing.assert_array_equal(t_info["action_scale"][0], w_info["action_scale"][k])
    rng = _ranges(names)
    rest = np.clip(0.0, rng[:, 0], rng[:, 1])  # Ant's qpos0 = 0 is outside the ankles' ranges: held at their ends
    for env in (wrapped, task):  # at a reset: the position targets hold the default pose, the others 0
        t = _targets(env, names)
        np.testing.assert_array_equal(t["position"], rest)
        assert not t["velocity"].any() and not t["effort"].any()
    # the same action, half of it beyond the action space: the same targets in every channel
    a = np.resize([2.5, -2.5, 0.3, -0.7, 0.9], A)
    w_action = np.empty(A)
    w_action[k] = a
    *_, w_info = wrapped.step(w_action)
    *_, t_info = task.step(a[None])
    w_tgt, t_tgt = _targets(wrapped, names), _targets(task, names)
    for ch in CHANNELS:
        np.testing.assert_array_equal(t_tgt[ch], w_tgt[ch], err_msg=ch)
    # target = offset + scale * action, position targets clipped into the joint range
    mapped = task.action_offset + task.action_scale * a
    written = {"position": ("position",), "velocity": ("velocity",), "effort": ("effort",),
               "position_velocity": ("position", "velocity")}[mode]
    for c, ch in enumerate(written):
        expect = mapped[c * J:(c + 1) * J]
        if ch == "position":
            assert np.any(expect > rng[:, 1]) and np.any(expect < rng[:, 0])  # the clipping is exercised
            expect = np.clip(expect, rng[:, 0], rng[:, 1])
        np.testing.assert_allclose(t_tgt[ch], expect, rtol=1e-12, atol=1e-12)
    # the same telemetry keys (info["actuator"]'s parameters belong to the info's assembly)
    t_keys = {key for key in t_info["actuator"] if not key.startswith("_")} - {"parameters"}
    assert set(w_info["actuator"]) == t_keys
    wrapped.close()
    task.close()


@pytest.mark.parametrize("cfg", [LIMITED, IMPLICIT], ids=["dc_motor", "implicit"])
@pytest.mark.parametrize("normalize", [True, False], ids=["normalized", "explicit"])
@pytest.mark.parametrize("mode", MODES)
def test_wrapper_and_task_compute_the_same_substep_efforts_from_the_same_state(mode, normalize, cfg):
    # one substep per control step: each step's telemetry is the efforts of one substep
    wrapped, task = _pair(mode, normalize, cfg, frame_skip=1)
    k, names = _matching(wrapped, task, mode)
    wrapped.reset(seed=3)
    task.reset(seed=3)
    sim = wrapped.unwrapped
    sim.data.qvel[6:] = np.linspace(-14.0, 14.0, 8)  # hinges fast enough to reach the torque-speed line
    qpos, qvel = sim.data.qpos.copy(), sim.data.qvel.copy()
    task.backend.reset_envs(np.array([0]), qpos=qpos[None], qvel=qvel[None])
    w_cols = [wrapped.joint_names.index(n) for n in names]
    rng = np.random.default_rng(0)
    saturated = 0
    for _ in range(4):
        a = rng.uniform(-1.2, 1.2, len(k))
        w_action = np.empty(len(k))
        w_action[k] = a
        *_, w_info = wrapped.step(w_action)
        *_, t_info = task.step(a[None])
        for key in ("computed_effort", "applied_effort"):  # bit for bit: the same arithmetic and physics
            np.testing.assert_array_equal(t_info["actuator"][key][0], w_info["actuator"][key][w_cols], err_msg=key)
        np.testing.assert_array_equal(task.backend.qpos[0], sim.data.qpos)
        saturated += int(w_info["actuator"]["saturated"].sum())
    assert np.abs(w_info["actuator"]["applied_effort"]).max() > 1.0  # the actuators act
    if mode == "effort" or cfg is IMPLICIT:
        assert saturated > 0  # and the limits are exercised
    wrapped.close()
    task.close()


def test_ant_v0_position_mode_maps_onto_the_joint_ranges_and_normalizes_on_request():
    # gym.make_vec keeps the task's defaults per mode: position targets span each hinge's range
    # (Gymnasium's ant.xml: hips +-30 deg, ankles 30..70 deg or -70..-30 deg), not +-150 rad
    env = gym.make_vec("actuator_gym/Ant-v0", num_envs=2, action_mode="position")
    deg = np.pi / 180.0
    names = [env.joint_names[i] for i in env.action_joint_ids]
    half = np.array([30.0 if n.startswith("hip") else 20.0 for n in names]) * deg
    mid = np.array([0.0 if n.startswith("hip") else (50.0 if n in ("ankle_1", "ankle_4") else -50.0) for n in names]) * deg
    np.testing.assert_allclose(env.action_scale, half, rtol=1e-12)
    np.testing.assert_allclose(env.action_offset, mid, atol=1e-12)
    env.close()
    on = gym.make_vec("actuator_gym/Ant-v0", num_envs=2, normalize_actions=True)  # effort: +-actuator_effort_limit
    np.testing.assert_array_equal(on.action_scale, np.full(8, 150.0))
    on.close()


def test_a_task_whose_terms_read_position_targets_refuses_other_modes_by_name():
    # the quadruped's observation (its last 12 actions), stance (action_offset) and rewards read
    # position targets: another mode is refused at construction, naming the modes it takes
    with pytest.raises(ValueError, match=r"QuadrupedCfg: action_mode must be one of \('position',\), got 'velocity'"):
        gym.make_vec("actuator_gym/Quadruped-v0", num_envs=1, action_mode="velocity")
    with pytest.raises(ValueError, match=r"AntCfg: action_mode must be one of \('position', 'velocity', 'effort', "
                                         r"'position_velocity'\), got 'torque'"):
        gym.make_vec("actuator_gym/Ant-v0", num_envs=1, action_mode="torque")


def test_a_partial_reset_rewrites_the_reset_envs_targets_only():
    task = AntTask64(num_envs=3, action_mode="velocity", seed=0)
    names = [task.joint_names[i] for i in task.action_joint_ids]
    rest = np.clip(0.0, *_ranges(names).T)  # the default pose, clipped into the ranges (the ankles' ends)
    task.step(np.full((3, 8), 0.5))
    before = {ch: getattr(task.collection.target_command, ch).numpy().copy() for ch in CHANNELS}
    np.testing.assert_array_equal(before["velocity"], np.full((3, 8), 0.5 * 20.0))  # +-actuator_velocity_limit
    task.reset(options={"reset_mask": np.array([False, True, False])})
    after = {ch: getattr(task.collection.target_command, ch).numpy() for ch in CHANNELS}
    for ch in CHANNELS:
        np.testing.assert_array_equal(after[ch][[0, 2]], before[ch][[0, 2]], err_msg=ch)  # the others untouched
    np.testing.assert_array_equal(after["position"][1, task.action_joint_ids], rest)
    assert not after["velocity"][1].any() and not after["effort"][1].any()
    task.close()


def test_wrapper_and_task_show_the_parameters_at_reset_and_after_a_change_only():
    # one rule on both doors (ActuatorRig.shown): info["actuator"]["parameters"] at a reset and on the step
    # after set_actuator_parameter changed them; the task keeps the key every call, masked (torchrl stacks infos)
    wrapped, task = _pair("position", True, LIMITED)
    for door in (wrapped, task):  # one rig per door, and its parts are the door's
        assert isinstance(door.rig, ActuatorRig)
        assert (door.action_map, door.engine, door.episode_stats) == (door.rig.action_map, door.rig.engine,
                                                                       door.rig.episode_stats)
    _, names = _matching(wrapped, task, "position")
    legs = [wrapped.collection.joint_names.index(n) for n in names]  # the wrapper's group order -> the task's

    def shown(w_info, t_info):
        w = w_info["actuator"].get("parameters")
        t_mask = bool(t_info["actuator"]["_parameters"][0])
        assert (w is not None) == t_mask
        if w is not None:  # the same values joint by joint
            t = t_info["actuator"]["parameters"]["legs"]["stiffness"][0]
            np.testing.assert_array_equal(w["legs"]["stiffness"][legs], t)
            return t
        return None

    _, w_info = wrapped.reset(seed=0)
    _, t_info = task.reset(seed=0)
    np.testing.assert_array_equal(shown(w_info, t_info), np.full(8, 40.0))
    a = np.zeros(8)
    assert shown(wrapped.step(a)[-1], task.step(a[None])[-1]) is None
    wrapped.set_actuator_parameter("legs", "stiffness", 55.0)
    task.set_actuator_parameter("legs", "stiffness", 55.0)
    np.testing.assert_array_equal(shown(wrapped.step(a)[-1], task.step(a[None])[-1]), np.full(8, 55.0))
    assert shown(wrapped.step(a)[-1], task.step(a[None])[-1]) is None  # shown once
    _, w_info = wrapped.reset(seed=1)
    _, t_info = task.reset(seed=1)
    np.testing.assert_array_equal(shown(w_info, t_info), np.full(8, 55.0))  # the new nominal over resets
    wrapped.close()
    task.close()
