"""The wrapper's per-step path (issue 15, the cost of a control step): the lean action check, the
planned target writes, the held native power and the single-env episode statistics give exactly
what the general code gives."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest

from actuator_gym import DCMotorCfg, IdealPDActuatorCfg
from actuator_gym.runtime.episode_stats import EpisodeStats
from actuator_gym.wrappers import ActuatorWrapper

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning")


def _ant(action_mode="position", execution="explicit", **kw):
    cfg = DCMotorCfg(joint_names_expr=[".*"], stiffness=20.0, damping=1.0, saturation_effort=60.0,
                     actuator_velocity_limit=20.0, actuator_effort_limit=40.0, min_delay=0, max_delay=2)
    return ActuatorWrapper(gym.make("Ant-v5"), {"legs": cfg}, action_mode=action_mode, execution=execution, **kw)


def _targets(env):
    """The collection's targets of the driven joints, in action order."""
    tc, cols = env.collection.target_command, env._cols_idx
    return {ch: getattr(tc, name).numpy()[0, cols].copy()
            for ch, name in (("pos", "position"), ("vel", "velocity"), ("eff", "effort"))}


@pytest.mark.parametrize("mode", ["position", "velocity", "effort", "position_velocity"])
def test_targets_are_offset_plus_scale_times_action_on_their_joints(mode):
    # Ant's action order (hip_4, ankle_4, hip_1, ...) differs from its joints' model order, so the
    # planned writes gather the action; normalize_actions=False keeps the position clip reachable
    env = _ant(mode, normalize_actions=False, action_scale=2.0, action_offset=0.1)
    assert env.joint_names[:2] == ("hip_4", "ankle_4")
    model, J = env.unwrapped.model, len(env.joint_names)
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    lo = np.array([model.jnt_range[model.joint(n).id, 0] for n in env.joint_names])
    hi = np.array([model.jnt_range[model.joint(n).id, 1] for n in env.joint_names])
    for dtype in (np.float64, np.float32, np.int64):
        a = (rng.uniform(-1.5, 1.5, env.action_space.shape) * (3 if dtype is np.int64 else 1)).astype(dtype)
        env.step(a)
        t = 0.1 + 2.0 * a.astype(np.float64)
        got = _targets(env)
        channels = {"position": ["pos"], "velocity": ["vel"], "effort": ["eff"], "position_velocity": ["pos", "vel"]}[mode]
        for k, ch in enumerate(channels):
            part = t[k * J:(k + 1) * J]
            want = np.minimum(np.maximum(part, lo), hi) if ch == "pos" else part
            np.testing.assert_array_equal(got[ch], want, err_msg=f"{mode} {ch} {dtype}")
        if "pos" in channels:
            assert (got["pos"] == lo).any() or (got["pos"] == hi).any()  # the clip acted somewhere


def test_lean_action_check_accepts_exactly_what_the_full_check_accepts():
    env = _ant("effort", normalize_actions=False, action_scale=1.0, action_offset=0.0)
    env.reset(seed=0)
    big = np.full(8, 1e308)  # finite, but its sum overflows: the element-wise check decides, silently
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert env._check_action(big) is big
    with np.errstate(over="ignore"):  # (Ant's own control cost squares the action)
        env.step(big)
    np.testing.assert_array_equal(_targets(env)["eff"], big)
    for bad, i in ((np.r_[np.zeros(3), np.nan, np.zeros(4)], 3), (np.r_[np.zeros(7), -np.inf], 7)):
        with pytest.raises(ValueError, match=rf"action\[{i}\] \(eff command of joint '{env.joint_names[i]}'\)"):
            env.step(bad)
        with pytest.raises(ValueError, match=rf"action\[{i}\]"):
            env.step(bad.astype(np.float32))
    with pytest.raises(ValueError, match=r"shape \(8,\)"):
        env.step(np.zeros(9))
    env.step([0.5] * 8)  # a list takes the full path
    np.testing.assert_array_equal(_targets(env)["eff"], 0.5)


@pytest.mark.parametrize("execution", ["explicit", "native"])
def test_step_telemetry_is_fresh_and_native_power_is_the_last_substep(execution):
    env = _ant(execution=execution)
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    prev = None
    for _ in range(5):
        _, _, _, _, info = env.step(rng.uniform(-1, 1, 8).astype(np.float32))
        tel = info["actuator"]
        if execution == "native":  # read back from the engine after the step (gear 1)
            m, d = env.unwrapped.model, env.unwrapped.data
            ids = [m.actuator(f"actuator_gym/legs/{n}").id for n in env.joint_names]  # the native actuators, action order
            np.testing.assert_array_equal(tel["applied_effort"], d.actuator_force[ids])
            np.testing.assert_array_equal(tel["power"], d.actuator_force[ids] * d.actuator_velocity[ids])
            np.testing.assert_array_equal(tel["mean_power"], tel["power"])
            np.testing.assert_array_equal(tel["energy"], np.abs(tel["power"]) * (5 * env.unwrapped.model.opt.timestep))
        if prev is not None:
            snapshot = {k: v.copy() for k, v in prev.items()}
            for k, v in tel.items():
                assert not np.shares_memory(v, prev[k]), k
            tel["power"][:] = np.nan  # a user writing into one step's arrays changes nothing else
            env.step(np.zeros(8, np.float32))
            for k, v in prev.items():
                np.testing.assert_array_equal(v, snapshot[k])
        prev = tel


def _random_telemetry(rng, shape, rotor=False):
    if rotor:
        thrust = rng.uniform(0, 5, shape).astype(np.float32)
        computed = np.where(rng.random(shape) < 0.3, thrust + 1, thrust).astype(np.float32)
        return {"applied_thrust": thrust, "computed_thrust": computed, "rotor_energy": rng.uniform(0, 1, shape)}
    return {"applied_effort": rng.normal(size=shape), "saturated": rng.random(shape) < 0.4,
            "energy": rng.uniform(0, 1, shape)}


@pytest.mark.parametrize("kind", ["joint", "rotor"])
def test_single_env_update_equals_the_vector_update(kind):
    groups = {"a": (kind, [0, 2]), "b": (kind, [1, 3])}
    single, vector, wide = EpisodeStats(1, groups), EpisodeStats(1, groups), EpisodeStats(1, groups)
    rng = np.random.default_rng(2)
    steps = []
    for _ in range(7):
        tel = _random_telemetry(rng, (4,), kind == "rotor")
        steps.append(tel)
        single.update(tel)  # (columns,): the single-env path
        vector.update({k: v[None] for k, v in tel.items()})  # (1, columns): the vector path
        extra = _random_telemetry(rng, (2,), kind == "rotor")  # columns beyond the groups': ignored
        wide.update({k: np.concatenate([v, extra[k]]) for k, v in tel.items()})
    assert single.steps.tolist() == vector.steps.tolist() == wide.steps.tolist() == [7]
    rec, rec_vec, rec_wide = single.env_record(0), vector.env_record(0), wide.env_record(0)
    assert rec == rec_vec == rec_wide
    eff = np.stack([t["applied_effort" if kind == "joint" else "applied_thrust"] for t in steps]).astype(np.float64)
    sat = np.stack([t["saturated"] if kind == "joint" else t["computed_thrust"] != t["applied_thrust"] for t in steps])
    energy = np.stack([t["energy" if kind == "joint" else "rotor_energy"] for t in steps])
    for g, cols in (("a", [0, 2]), ("b", [1, 3])):
        assert rec[g]["peak_abs_effort"] == np.abs(eff[:, cols]).max()
        assert rec[g]["mean_abs_effort"] == pytest.approx(np.abs(eff[:, cols]).mean(), rel=1e-14)
        assert rec[g]["saturated_fraction"] == pytest.approx(sat[:, cols].mean(), rel=1e-14)
        assert rec[g]["energy"] == pytest.approx(energy[:, cols].sum(), rel=1e-14)
    single.reset()
    assert single.steps.tolist() == [0] and single.env_record(0)["a"]["energy"] == 0.0


def test_ideal_pd_in_effort_mode_with_zero_gains_replays_the_plain_env():
    """The lean path changes no number: zero-gain effort mode is the plain env bit for bit."""
    plain = gym.make("Ant-v5")
    env = ActuatorWrapper(gym.make("Ant-v5"), {"all": IdealPDActuatorCfg()}, action_mode="effort")
    np.testing.assert_array_equal(plain.reset(seed=3)[0], env.reset(seed=3)[0])
    rng = np.random.default_rng(3)
    for _ in range(20):
        a = rng.uniform(-1, 1, 8)  # float64: the env's control cost sees the same numbers
        p, w = plain.step(a), env.step(a)
        np.testing.assert_array_equal(p[0], w[0])
        assert p[1:4] == w[1:4]


@pytest.mark.parametrize("mode", ["position", "velocity", "effort"])
def test_native_controls_hold_every_target_channel_across_resets(mode):
    """Native execution copies only the action's channels at a step; the others (e.g. the position
    target in velocity mode: the joint's default, nonzero on Ant's ankles) are written at the first
    command after each reset, whose ``mj_resetData`` zeroed the controls."""
    env = _ant(mode, execution="native")
    model, data = env.unwrapped.model, env.unwrapped.data
    adr = [int(model.actuator_ctrladr[model.actuator(f"actuator_gym/legs/{n}").id]) for n in env.joint_names]
    env.action_space.seed(3)
    for seed in (0, 1):
        env.reset(seed=seed)
        for _ in range(3):
            env.step(env.action_space.sample())
            want = _targets(env)
            got = {ch: data.ctrl[np.asarray(adr) + k] for k, ch in enumerate(("pos", "vel", "eff"))}
            for ch in want:
                np.testing.assert_array_equal(got[ch], want[ch], err_msg=f"{mode} {ch}")
            assert not data.ctrl[:8].any()  # the env's own actuators stay off
    assert np.abs(want["pos"]).max() > 0.1
    env.close()
