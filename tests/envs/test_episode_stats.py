"""Per-episode actuator statistics (actuator_gym.runtime.episode_stats): hand-computed values, resets, every
autoreset mode, the single env, the wrapper and rotor groups.

The pendulum runs pure feed-forward effort (stiffness = damping = 0, effort limit L): the applied
effort is exactly min(|action * scale|, L), so peak, mean and saturated fraction are known exactly.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import actuator_gym  # noqa: F401  (registers the ids)
from actuator_gym import IdealPDActuatorCfg
from actuator_gym.runtime.episode_stats import ALL_JOINTS, EPISODE_INFO_KEY, EPISODE_STATS, EpisodeStats
from actuator_gym.wrappers import ActuatorWrapper

L = 2.0  # [N·m] effort limit
K = 5  # control steps per episode
SCALE = 2 * L  # action 1 -> 2L (saturated), action 0.25 -> L/2


def _cfg(limit=L, name="pendulum"):
    return {name: IdealPDActuatorCfg(joint_names_expr=["hinge"], stiffness=0.0, damping=0.0, actuator_effort_limit=limit)}


def _pendulum(mode, n=2, **kw):
    kw.setdefault("actuators", _cfg())
    return gym.make_vec("actuator_gym/Pendulum-v0", num_envs=n, autoreset_mode=mode, episode_length_s=K / 60.0,
                        action_mode="effort", action_scale=SCALE, action_offset=0.0, action_bounds=(-1.0, 1.0), **kw)


def _actions(step_in_episode, n=2):
    """env 0: saturated on the first 2 steps of each episode, L/2 after; env 1: always -L/2."""
    a = np.full((n, 1), -0.25, np.float32)
    a[0] = 1.0 if step_in_episode < 2 else 0.25
    return a


def _expected(energy):
    """The record of env 0 / env 1 after one K-step episode (energy: the telemetry's sum)."""
    return [
        {"energy": energy[0], "peak_abs_effort": L, "mean_abs_effort": (2 * L + (K - 2) * L / 2) / K,
         "saturated_fraction": 2 / K},
        {"energy": energy[1], "peak_abs_effort": L / 2, "mean_abs_effort": L / 2, "saturated_fraction": 0.0},
    ]


def _check(record, mask, energy):
    assert set(record) == {"pendulum", "_pendulum", ALL_JOINTS, "_" + ALL_JOINTS}
    for g in ("pendulum", ALL_JOINTS):
        np.testing.assert_array_equal(record["_" + g], mask)
        assert set(k for k in record[g] if not k.startswith("_")) == set(EPISODE_STATS)
        for i, exp in enumerate(_expected(energy)):
            if not mask[i]:
                continue
            for s, v in exp.items():
                assert record[g][s][i] == pytest.approx(v, rel=1e-12, abs=1e-15), (g, s, i)
    assert np.all(energy > 0)


def _run_two_episodes(mode):
    """Two episodes per env; returns the records [(record, mask)] seen at episode ends."""
    env = _pendulum(mode)
    env.reset(seed=0)
    out, energy, k = [], np.zeros(2), 0
    for step in range(2 * K + (1 if mode == AutoresetMode.NEXT_STEP else 0)):
        obs, rew, term, trunc, info = env.step(_actions(k))
        # SAME_STEP: the finished step's info (its telemetry, the record) is final_info
        src = info["final_info"] if mode == AutoresetMode.SAME_STEP and (term | trunc).any() else info
        if src["actuator"]["_energy"].all():  # a stepped step (NEXT_STEP's reset step is not)
            energy += src["actuator"]["energy"][:, 0]
            k += 1
        else:
            assert not info["_" + EPISODE_INFO_KEY].any()
            continue
        if (term | trunc).any():
            assert EPISODE_INFO_KEY in src
            np.testing.assert_array_equal(src["_" + EPISODE_INFO_KEY], term | trunc)
            out.append((src[EPISODE_INFO_KEY], energy.copy()))
            energy[:], k = 0.0, 0
            if mode == AutoresetMode.SAME_STEP:
                assert not info["_" + EPISODE_INFO_KEY].any()  # the main info is the new episode's
            if mode == AutoresetMode.DISABLED:
                env.reset(options={"reset_mask": term | trunc})
        else:
            assert not info["_" + EPISODE_INFO_KEY].any()
    return out


@pytest.mark.parametrize("mode", list(AutoresetMode))
def test_hand_computed_record_every_episode_every_mode(mode):
    records = _run_two_episodes(mode)
    assert len(records) == 2  # a new episode starts from zero: the second record equals the first's values
    for record, energy in records:
        _check(record, np.array([True, True]), energy)


def test_records_identical_across_autoreset_modes():
    ref = _run_two_episodes(AutoresetMode.SAME_STEP)
    for mode in (AutoresetMode.NEXT_STEP, AutoresetMode.DISABLED):
        for (r, e), (r0, e0) in zip(_run_two_episodes(mode), ref):
            np.testing.assert_array_equal(e, e0)
            for s in EPISODE_STATS:
                np.testing.assert_array_equal(r["pendulum"][s], r0["pendulum"][s])


def test_partial_reset_restarts_only_that_env():
    env = _pendulum(AutoresetMode.DISABLED)
    env.reset(seed=0)
    energy = np.zeros(2)
    a = np.array([[0.25], [1.0]], np.float32)  # env 0: L/2; env 1: saturated until its reset
    for _ in range(2):
        energy += env.step(a)[4]["actuator"]["energy"][:, 0]
    env.reset(options={"reset_mask": np.array([False, True])})  # env 1's 2 saturated steps must not count
    energy[1] = 0.0
    a[1] = -0.25
    for k in range(K):
        _, _, term, trunc, info = env.step(a)
        energy += info["actuator"]["energy"][:, 0]
        ended = term | trunc
        assert ended.tolist() == [k == K - 3, k == K - 1]
        if not ended.any():
            assert not info["_" + EPISODE_INFO_KEY].any()
            continue
        i = int(np.flatnonzero(ended)[0])
        rec = info[EPISODE_INFO_KEY]["pendulum"]
        assert rec["_energy"].tolist() == ended.tolist()
        assert rec["energy"][i] == pytest.approx(energy[i], rel=1e-12)
        assert (rec["peak_abs_effort"][i], rec["mean_abs_effort"][i], rec["saturated_fraction"][i]) == (L / 2, L / 2, 0.0)
        env.reset(options={"reset_mask": ended})
        energy[i] = 0.0


def test_episode_that_terminates_and_reports_saturation_per_env():
    """Two envs with different limits in one batch: per-env values, no cross-talk (vectorized)."""
    env = _pendulum(AutoresetMode.SAME_STEP, n=3)
    env.reset(seed=1)
    a = np.array([[1.0], [0.25], [-1.0]], np.float32)
    for _ in range(K):
        _, _, term, trunc, info = env.step(a)
    rec = info["final_info"][EPISODE_INFO_KEY]["pendulum"]
    np.testing.assert_array_equal(rec["peak_abs_effort"], [L, L / 2, L])
    np.testing.assert_array_equal(rec["saturated_fraction"], [1.0, 0.0, 1.0])


def test_single_task_env_reports_floats():
    env = gym.make("actuator_gym/Pendulum-v0", episode_length_s=K / 60.0, actuators=_cfg(), action_mode="effort",
                   action_scale=SCALE, action_offset=0.0, action_bounds=(-1.0, 1.0))
    for episode in range(2):
        env.reset(seed=episode)
        energy = 0.0
        for k in range(K):
            _, _, term, trunc, info = env.step(_actions(k, 1)[0])
            energy += info["actuator"]["energy"][0]
            assert (EPISODE_INFO_KEY in info) == (k == K - 1)
        rec = info[EPISODE_INFO_KEY]
        assert trunc and set(rec) == {"pendulum", ALL_JOINTS}
        exp = _expected([energy, 0.0])[0]
        assert rec["pendulum"] == pytest.approx(exp, rel=1e-12)
        assert all(isinstance(v, float) for v in rec["pendulum"].values())


def test_wrapper_groups_follow_action_order_and_reset():
    """InvertedPendulum with both joints actuated, listed hinge-first (action order != model order)."""
    lc, lp = 3.0, 0.5
    acts = {"pole": IdealPDActuatorCfg(joint_names_expr=["hinge"], stiffness=0.0, damping=0.0, actuator_effort_limit=lp),
            "cart": IdealPDActuatorCfg(joint_names_expr=["slider"], stiffness=0.0, damping=0.0, actuator_effort_limit=lc)}
    env = ActuatorWrapper(gym.make("InvertedPendulum-v5", max_episode_steps=6), acts, action_mode="effort",
                          joints=["hinge", "slider"], action_scale=[2 * lp, 2 * lc], action_offset=0.0)
    assert env.joint_names == ("hinge", "slider")
    for episode in range(2):
        env.reset(seed=episode)
        energy, n, done = np.zeros(2), 0, False
        while not done:
            cart = 1.0 if n < 2 else -0.25  # saturated on the first 2 steps
            _, _, term, trunc, info = env.step(np.array([0.1, cart]))
            energy += info["actuator"]["energy"]
            n += 1
            done = term or trunc
            assert (EPISODE_INFO_KEY in info) == done
        assert n > 2
        rec = info[EPISODE_INFO_KEY]
        assert rec["pole"] == pytest.approx({"energy": energy[0], "peak_abs_effort": 0.2 * lp,
                                             "mean_abs_effort": 0.2 * lp, "saturated_fraction": 0.0}, rel=1e-12)
        cart_mean = (2 * lc + (n - 2) * lc / 2) / n
        assert rec["cart"] == pytest.approx({"energy": energy[1], "peak_abs_effort": lc, "mean_abs_effort": cart_mean,
                                             "saturated_fraction": 2 / n}, rel=1e-12)
        assert rec[ALL_JOINTS] == pytest.approx({"energy": energy.sum(), "peak_abs_effort": lc,
                                                 "mean_abs_effort": (cart_mean + 0.2 * lp) / 2,
                                                 "saturated_fraction": 1 / n}, rel=1e-12)


def test_rotor_groups_record_thrust_statistics():
    env = gym.make_vec("actuator_gym/Quadrotor-v0", num_envs=2, autoreset_mode=AutoresetMode.SAME_STEP,
                       episode_length_s=4 * 0.01)
    task = env.unwrapped
    env.reset(seed=0)
    (group,) = task.rotors
    cols = task.rotors.columns(group)
    a = np.array([[1.0, -1.0, 0.5, 1.0], [0.0, 0.2, -0.3, 1.0]], np.float32)  # full thrust commands saturate
    thrust, energy, sat = [], 0.0, 0.0
    for _ in range(4):
        _, _, term, trunc, info = env.step(a)
        src = info["final_info"] if (term | trunc).any() else info
        tel = src["actuator"]
        thrust.append(np.abs(tel["applied_thrust"][:, cols]))
        energy = energy + tel["rotor_energy"][:, cols].sum(axis=1)
        sat = sat + (tel["applied_thrust"][:, cols] != tel["computed_thrust"][:, cols]).sum(axis=1)
    assert trunc.all() and not term.any()
    rec = info["final_info"][EPISODE_INFO_KEY]
    assert set(k for k in rec if not k.startswith("_")) == {group}  # no joint groups: no all_joints
    r, t = rec[group], np.stack(thrust).astype(np.float64)  # (steps, envs, rotors); thrusts are float32
    np.testing.assert_allclose(r["energy"], energy, rtol=1e-12)
    np.testing.assert_allclose(r["peak_abs_effort"], t.max(axis=(0, 2)), rtol=1e-12)
    np.testing.assert_allclose(r["mean_abs_effort"], t.mean(axis=(0, 2)), rtol=1e-12)
    np.testing.assert_allclose(r["saturated_fraction"], sat / t[0].shape[1] / 4, rtol=1e-12)
    assert np.all(r["energy"] > 0) and np.all(r["peak_abs_effort"] > 0)


def test_reserved_group_name_is_refused():
    with pytest.raises(ValueError, match="'all_joints' is reserved"):
        _pendulum(AutoresetMode.NEXT_STEP, actuators=_cfg(name=ALL_JOINTS))


def test_update_masks_envs_that_did_not_step():
    stats = EpisodeStats(2, {"g": ("joint", [0, 2])})
    tel = {"applied_effort": np.array([[1.0, 9.0, -3.0], [2.0, 9.0, 2.0]]),
           "saturated": np.array([[True, True, False], [True, True, True]]),
           "energy": np.array([[0.5, 9.0, 0.25], [1.0, 9.0, 1.0]])}
    stats.update(tel, np.array([True, False]))
    stats.update(tel)
    rec = stats.record(np.array([True, True]))["g"]
    np.testing.assert_array_equal(rec["energy"], [1.5, 2.0])
    np.testing.assert_array_equal(rec["peak_abs_effort"], [3.0, 2.0])
    np.testing.assert_array_equal(rec["mean_abs_effort"], [2.0, 2.0])
    np.testing.assert_array_equal(rec["saturated_fraction"], [0.5, 1.0])
    stats.reset([0])
    rec = stats.record(np.array([True, True]))["g"]
    np.testing.assert_array_equal(rec["energy"], [0.0, 2.0])
