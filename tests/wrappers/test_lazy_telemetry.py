"""``info["actuator"]`` computed on first access (``LazyTelemetry``), the deferred episode
statistics (``EpisodeStats.defer``) and the wrapper's action check.

The references are computed the eager way, from the engine right after each step
(``SubstepEngine.telemetry`` over the driven joints in action order, and the backend's state),
which is what ``info["actuator"]`` held before it was computed on demand."""

from __future__ import annotations

import copy
import pickle

import gymnasium as gym
import numpy as np
import pytest

from actuator_gym import DCMotorCfg, DelayedPDActuatorCfg, IdealPDActuatorCfg
from actuator_gym.runtime.episode_stats import ALL_JOINTS, EPISODE_INFO_KEY
from actuator_gym.runtime.lazy_telemetry import LazyTelemetry
from actuator_gym.runtime.substep import TELEMETRY
from actuator_gym.wrappers import ActuatorWrapper


def _dc(expr=".*", **kw):
    return DCMotorCfg(joint_names_expr=[expr], stiffness=60.0, damping=1.5, saturation_effort=150.0,
                      actuator_velocity_limit=15.0, actuator_effort_limit=40.0, **kw)


def _ant(execution, max_episode_steps=1000):
    env = ActuatorWrapper(gym.make("Ant-v5", max_episode_steps=max_episode_steps),
                          actuators={"legs": _dc(min_delay=0, max_delay=2)}, execution=execution)
    env.action_space.seed(7)
    return env


def _reference(env):
    """The step's telemetry the eager way: the engine's arrays over the driven joints in action order."""
    names = list(env.backend.joints.names)
    cols = np.asarray([names.index(n) for n in env.joint_names])
    ref = env.engine.telemetry((0, cols))
    ref["joint_pos"], ref["joint_vel"] = env.backend.joint_pos()[0][cols], env.backend.joint_vel()[0][cols]
    return {k: np.array(v) for k, v in ref.items()}


@pytest.mark.parametrize("execution", ["explicit", "native"])
def test_values_read_after_later_steps_are_those_of_their_own_step(execution):
    env = _ant(execution)
    env.reset(seed=3)
    kept, refs = [], []
    for _ in range(12):
        *_, info = env.step(env.action_space.sample())
        kept.append(info["actuator"])  # not read yet
        refs.append(_reference(env))
    assert any(r["saturated"].any() for r in refs) and any(not r["saturated"].all() for r in refs)
    assert len({r["applied_effort"].tobytes() for r in refs}) == len(refs)  # every step differs
    for tel, ref in zip(kept, refs):  # read only now, 12 steps later for the first
        assert isinstance(tel, LazyTelemetry) and list(tel) == list(TELEMETRY)
        for k in TELEMETRY:
            assert tel[k].dtype == ref[k].dtype and tel[k].shape == ref[k].shape == (8,), k
            np.testing.assert_array_equal(tel[k], ref[k], err_msg=k)
    env.close()


def test_the_mapping_behaves_as_a_read_only_dict_and_survives_pickling_and_copies():
    env = _ant("native")
    env.reset(seed=0)
    *_, info = env.step(env.action_space.sample())
    ref = _reference(env)
    tel = info["actuator"]
    assert isinstance(tel, dict) and len(tel) == len(TELEMETRY) and "energy" in tel and "nope" not in tel
    assert tel.get("nope") is None and set(tel.keys()) == set(TELEMETRY)
    plain = dict(tel)
    assert type(plain) is dict and list(plain) == list(TELEMETRY)
    plain["extra"] = 1.0  # the copy is a writable dict
    for other in (pickle.loads(pickle.dumps(tel)), copy.copy(tel), copy.deepcopy(tel), {**tel}, tel.copy()):
        assert list(other) == list(TELEMETRY)
        for k in TELEMETRY:
            np.testing.assert_array_equal(other[k], ref[k], err_msg=k)
    fresh = pickle.loads(pickle.dumps(env.step(env.action_space.sample())[4]))  # pickled before any read
    np.testing.assert_array_equal(fresh["actuator"]["applied_effort"], _reference(env)["applied_effort"])
    with pytest.raises(TypeError, match="read-only"):
        tel["energy"] = np.zeros(8)
    with pytest.raises(TypeError, match="read-only"):
        tel.update(energy=np.zeros(8))
    with pytest.raises(TypeError, match="read-only"):
        del tel["energy"]
    assert "applied_effort" in repr(tel)
    env.close()


def test_sync_vector_env_merges_the_lazy_infos_as_dicts():
    cfg = IdealPDActuatorCfg(stiffness=200.0, damping=10.0, actuator_effort_limit=5.0)
    vec = gym.vector.SyncVectorEnv([lambda: ActuatorWrapper(gym.make("InvertedPendulum-v5"), actuators={"cart": cfg},
                                                            execution="native")] * 2)
    vec.reset(seed=[1, 2])
    actions = np.array([[0.9], [-0.4]], dtype=np.float32)
    _, _, _, _, infos = vec.step(actions)
    merged = infos["actuator"]
    assert type(merged) is dict and infos["_actuator"].tolist() == [True, True]
    for k in TELEMETRY:
        assert merged[k].shape == (2, 1) and merged["_" + k].all(), k
        for i, env in enumerate(vec.envs):
            np.testing.assert_array_equal(merged[k][i], _reference(env)[k], err_msg=k)
    assert merged["saturated"].dtype == np.bool_ and merged["saturated"].any()
    vec.close()


def _pendulum(cfg):
    return ActuatorWrapper(gym.make("InvertedPendulum-v5"), actuators={"cart": cfg}, execution="native")


def test_async_vector_env_merges_the_infos_pickled_through_its_pipes():
    """The workers pickle each step's info (the mapping computes itself on the way); the merged
    arrays equal the same envs stepped in this process."""
    cfg = IdealPDActuatorCfg(stiffness=200.0, damping=10.0, actuator_effort_limit=5.0)
    vec = gym.vector.AsyncVectorEnv([lambda: _pendulum(cfg)] * 2, context="fork")
    local = [_pendulum(cfg) for _ in range(2)]
    vec.reset(seed=[1, 2])
    for env, seed in zip(local, (1, 2)):
        env.reset(seed=seed)
    actions = np.array([[0.9], [-0.4]], dtype=np.float32)
    _, _, _, _, infos = vec.step(actions)
    for i, env in enumerate(local):
        want = env.step(actions[i])[4]["actuator"]
        for k in TELEMETRY:
            np.testing.assert_array_equal(infos["actuator"][k][i], want[k], err_msg=k)
    assert infos["actuator"]["saturated"].dtype == np.bool_ and infos["_actuator"].all()
    vec.close()


def _expected_record(refs, ids):
    applied = np.array([r["applied_effort"][ids] for r in refs])
    return {"energy": sum(r["energy"][ids].sum() for r in refs), "peak_abs_effort": np.abs(applied).max(),
            "mean_abs_effort": np.abs(applied).mean(),
            "saturated_fraction": np.mean([r["saturated"][ids] for r in refs])}


@pytest.mark.parametrize("execution", ["explicit", "native"])
def test_episode_statistics_are_the_sums_of_the_step_telemetry(execution):
    """300 steps (more than the 256 deferred at once) and a read in between: the record of the
    episode equals the statistics computed by hand from each step's eager telemetry."""
    cfg = {"hips": _dc("hip_.*"),
           "ankles": DelayedPDActuatorCfg(joint_names_expr=["ankle_.*"], stiffness=60.0, damping=1.5,
                                          actuator_effort_limit=40.0, min_delay=0, max_delay=3)}
    env = ActuatorWrapper(gym.make("Ant-v5", max_episode_steps=300), actuators=cfg, execution=execution)
    env.action_space.seed(5)
    env.reset(seed=5)
    hips = [i for i, n in enumerate(env.joint_names) if n.startswith("hip")]
    ankles = [i for i, n in enumerate(env.joint_names) if n.startswith("ankle")]
    refs, info, done = [], {}, False
    while not done:
        _, _, term, trunc, info = env.step(env.action_space.sample())
        refs.append(_reference(env))
        done = term or trunc
        if len(refs) % 2:  # a caller editing its arrays in place changes neither the statistics nor the env
            info["actuator"]["applied_effort"][:] = 0.0
            info["actuator"]["saturated"][:] = False
        if len(refs) == 100:  # a read mid-episode sees every step so far (the step count too)
            assert env.episode_stats.steps.tolist() == [100]
            mid = env.episode_stats.env_record(0)
            assert mid["hips"]["energy"] == pytest.approx(_expected_record(refs, hips)["energy"], rel=1e-12)
    assert len(refs) > 256 and EPISODE_INFO_KEY in info
    assert env.episode_stats.steps.tolist() == [len(refs)]
    record = info[EPISODE_INFO_KEY]
    sat = 0.0
    for group, ids in (("hips", hips), ("ankles", ankles), (ALL_JOINTS, hips + ankles)):
        want = _expected_record(refs, ids)
        for stat, value in want.items():
            assert record[group][stat] == pytest.approx(value, rel=1e-12, abs=1e-15), (group, stat)
        sat = max(sat, want["saturated_fraction"])
    assert 0.0 < sat < 1.0 and record[ALL_JOINTS]["energy"] > 0.0
    env.reset(seed=6)  # a new episode starts from zero
    *_, info = env.step(env.action_space.sample())
    assert env.episode_stats.env_record(0)["hips"]["energy"] == pytest.approx(_reference(env)["energy"][hips].sum(),
                                                                                rel=1e-12)
    env.close()


@pytest.mark.parametrize("action, error, match", [
    (np.zeros(7), ValueError, r"action must have shape \(8,\) for action_mode='position' over joints \['hip_4'"),
    (np.zeros((1, 8)), ValueError, r"must have shape \(8,\).*got shape \(1, 8\)"),
    (np.array([0.0, 0, 0, np.nan, 0, 0, 0, 0]), ValueError, r"action\[3\] \(pos command of joint 'ankle_1'\) is nan"),
    (np.array([0.0, 0, 0, 0, 0, -np.inf, 0, 0], np.float32), ValueError, r"action\[5\] .* is -inf; actions must be finite"),
    (np.array(["a"] * 8), TypeError, "action"),
    ({"a": 1}, TypeError, "action must be a numeric array of shape \\(8,\\), got dict"),
])
def test_the_action_check_names_the_element_and_changes_nothing(action, error, match):
    env = _ant("native")
    env.reset(seed=0)
    before = env.unwrapped.data.qpos.copy()
    targets = env.collection.target_command.position.numpy().copy()
    with pytest.raises(error, match=match):
        env.step(action)
    np.testing.assert_array_equal(env.unwrapped.data.qpos, before)
    np.testing.assert_array_equal(env.collection.target_command.position.numpy(), targets)
    env.close()


@pytest.mark.filterwarnings("ignore:overflow encountered", "ignore:.*reward is an inf")
def test_the_fast_path_accepts_float32_float64_ints_and_huge_finite_actions_alike():
    """The lean check (an ndarray of the right shape) gives the same step as the general one."""
    outs = []
    for action in (np.full(8, 0.5), np.full(8, 0.5, np.float32), [0.5] * 8):
        env = _ant("native")
        env.reset(seed=0)
        outs.append(env.step(action)[0])
        env.close()
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], outs[2])
    env = _ant("native")
    env.reset(seed=0)
    env.step(np.array([1e308, 1e308, 0, 0, 0, 0, 0, 0]))  # the sum overflows; the elements are finite: accepted
    env.step(np.ones(8, dtype=np.int64))
    env.close()


def test_deferred_statistics_follow_a_frame_skip_change_within_the_episode():
    """Snapshots of two layouts (5, then 3 substeps) pending together reduce run by run."""
    cfg = IdealPDActuatorCfg(stiffness=200.0, damping=10.0, actuator_effort_limit=60.0)
    env = ActuatorWrapper(gym.make("InvertedPendulum-v5"), actuators={"cart": cfg})
    env.reset(seed=0)
    refs = []
    for k in range(10):
        if k == 4:
            env.unwrapped.frame_skip = 3
        env.step(np.array([0.9 if k % 3 else -0.05]))
        refs.append(_reference(env))
    assert env.engine.num_substeps == 3
    record = env.episode_stats.env_record(0)["cart"]
    want = _expected_record(refs, [0])
    for stat, value in want.items():
        assert record[stat] == pytest.approx(value, rel=1e-12, abs=1e-15), stat
    assert 0.0 < want["saturated_fraction"] < 1.0
    env.close()


@pytest.mark.parametrize("held", [False, True])
def test_step_snapshots_equal_the_eager_telemetry_for_any_env_and_columns(held):
    """``StepTelemetry.snapshot`` (planned once, then one concatenation and one take per step) gives
    ``finish``'s values for env 1 of 2 and permuted columns, step after step (explicit substep rows
    of several envs are gathered per step; held rows are the native path)."""
    from actuator_gym.runtime.substep import StepTelemetry

    rng = np.random.default_rng(0)
    tel = StepTelemetry(np.zeros((2, 3)), 4, 0.01)
    cols, state = (1, np.array([2, 0])), rng.normal(size=5)
    extra = ((state, np.array([4, 1])),)
    for step in range(3):
        computed, applied, qd = (rng.normal(size=(2, 3)) for _ in range(3))
        applied[1, 0] = computed[1, 0]  # one joint unsaturated, one saturated
        state[:] = rng.normal(size=5)  # the caller's live array changes in place
        tel.begin()
        if held:
            tel.record_held(applied, qd, 4)
        else:
            for k in range(4):
                tel.record(k, applied * (k + 1), qd)
        values = tel.snapshot(computed, applied, cols, ("state",), extra).telemetry()
        want = tel.finish(computed, applied, cols)
        want["state"] = state[[4, 1]]
        assert list(values) == list(want)
        for k in want:
            np.testing.assert_array_equal(values[k], want[k], err_msg=f"step {step}: {k}")
        assert values["saturated"].tolist() == [True, False]


def test_native_steps_derive_their_commanded_torque_on_demand_and_long_lags_compute_it_at_the_step():
    """Every group native: a step whose lags all fall within the control step leaves the law's
    arithmetic to the snapshot (the commanded torque derived when read, alone or for 256 stacked
    steps); a lag reaching past it (U{0..8} substeps, frame_skip 5) makes the step compute it. Both
    give the eager values, saturated steps included."""
    cfg = _dc(min_delay=0, max_delay=8)
    env = ActuatorWrapper(gym.make("Ant-v5", max_episode_steps=60), actuators={"legs": cfg}, execution="native")
    assert env.engine.defer_native_telemetry
    env.action_space.seed(11)
    ways, saturated = set(), 0
    for seed in range(8):
        env.reset(seed=seed)
        lag = int(env.groups["legs"].parameters()["delay_steps"].max())
        done = False
        while not done:
            _, _, term, trunc, info = env.step(env.action_space.sample())
            deferred = env.engine.strategy.deferred > 0
            assert deferred == (lag < 5), (seed, lag)
            ways.add(deferred)
            ref = _reference(env)  # (reads the deferred step the eager way)
            for k in TELEMETRY:
                np.testing.assert_array_equal(info["actuator"][k], ref[k], err_msg=f"seed {seed}: {k}")
            saturated += int(ref["saturated"].any())
            done = term or trunc
    assert ways == {True, False} and saturated > 0
    env.close()
