"""ActuatorWrapper on Gymnasium MuJoCo envs: API checks, physics, telemetry, bad input, protocol."""

from __future__ import annotations

import warnings

import gymnasium as gym
import mujoco
import numpy as np
import torch
import pytest
from gymnasium.utils.env_checker import check_env

from actuator_gym import DCMotorCfg, DelayedPDActuatorCfg, IdealPDActuatorCfg, ImplicitActuatorCfg
from actuator_gym.randomization import Uniform
from actuator_gym.wrappers import ActuatorWrapper, EffortPenalty, SubstepHookEnv

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning")

ENVS = ["InvertedPendulum-v5", "Reacher-v5", "Hopper-v5", "HalfCheetah-v5", "Ant-v5"]
CFGS = {
    "ideal_pd": lambda: IdealPDActuatorCfg(stiffness=20.0, damping=1.0, actuator_effort_limit=50.0),
    "dc_motor": lambda: DCMotorCfg(stiffness=20.0, damping=1.0, saturation_effort=60.0,
                                   actuator_velocity_limit=20.0, actuator_effort_limit=40.0),
    "delayed_pd": lambda: DelayedPDActuatorCfg(stiffness=20.0, damping=1.0, min_delay=0, max_delay=3,
                                               randomization={"stiffness": Uniform(0.8, 1.2, operation="scale")}),
}


def make(env_id="Reacher-v5", cfg=None, **kw):
    env_kw = kw.pop("env_kw", {})
    cfg = cfg if cfg is not None else IdealPDActuatorCfg(stiffness=20.0, damping=8.0)
    return ActuatorWrapper(gym.make(env_id, **env_kw), actuators={"arm": cfg}, **kw)


# ---------------------------------------------------------------------------------------------
# API conformance
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cfg", sorted(CFGS))
@pytest.mark.parametrize("env_id", ENVS)
def test_gymnasium_and_sb3_check_env_pass(env_id, cfg):
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = make(env_id, CFGS[cfg]())
    check_env(env, skip_render_check=True)
    sb3_check_env(env, warn=True)  # warn=True also asserts finite action bounds
    env.close()


@pytest.mark.parametrize("env_id", ["Reacher-v5", "Ant-v5"])
def test_check_env_passes_with_implicit_groups(env_id):
    env = make(env_id, ImplicitActuatorCfg(stiffness=20.0, damping=2.0, actuator_effort_limit=30.0))
    check_env(env, skip_render_check=True)


def test_wrapper_records_constructor_args_and_keeps_familiar_action_dimension():
    env = make("Ant-v5", action_mode="position")
    assert isinstance(env, gym.utils.RecordConstructorArgs)
    assert env._saved_kwargs["action_mode"] == "position" and "actuators" in env._saved_kwargs
    model = env.unwrapped.model
    acts = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, model.actuator_trnid[a, 0]) for a in range(model.nu)]
    assert list(env.joint_names) == acts  # the env's actuator order
    assert env.action_space == gym.spaces.Box(-1.0, 1.0, (8,), np.float32)  # normalized by default
    # an explicit scale: position bounds are the pre-image of the joint ranges (qpos0 + 0.5 * a spans the range)
    explicit = make("Ant-v5", action_mode="position", action_scale=0.5)
    rng = np.array([model.jnt_range[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, n)] for n in acts])
    np.testing.assert_allclose(explicit.action_space.low, rng[:, 0] / 0.5, rtol=1e-6)
    np.testing.assert_allclose(explicit.action_space.high, rng[:, 1] / 0.5, rtol=1e-6)
    assert make("Ant-v5", action_mode="velocity").action_space.shape == (8,)
    pv = make("Ant-v5", action_mode="position_velocity")
    assert pv.action_space.shape == (16,)
    np.testing.assert_array_equal(pv.action_space.low[8:], -1.0)


def test_hook_replaces_the_private_method_and_runs_frame_skip_times():
    env = make("Hopper-v5")  # frame_skip 4
    base = env.unwrapped
    assert "_step_mujoco_simulation" in base.__dict__  # instance-level patch
    calls = []
    compute = env.collection.compute
    env.collection.compute = lambda *a, **kw: (calls.append(1), compute(*a, **kw))[1]
    env.reset(seed=0)
    env.step(env.action_space.sample())
    assert len(calls) == base.frame_skip == 4
    env.step(env.action_space.sample())
    assert len(calls) == 8


def test_a_hook_that_is_not_called_is_detected():
    env = make("Reacher-v5")
    env.reset(seed=0)
    base = env.unwrapped
    # what a Gymnasium release that stopped calling _step_mujoco_simulation would look like
    base._step_mujoco_simulation = lambda ctrl, n: mujoco.mj_step(base.model, base.data, nstep=n)
    with pytest.raises(RuntimeError, match="hook ran 0 times"):
        env.step(np.zeros(2))


def test_close_restores_the_env_method():
    env = make("Reacher-v5")
    env.close()
    assert "_step_mujoco_simulation" not in env.unwrapped.__dict__


# ---------------------------------------------------------------------------------------------
# physics
# ---------------------------------------------------------------------------------------------
REACHER_TARGET = np.array([0.6, -0.9])


def _reach(env, steps=100):
    env.reset(seed=0)
    for _ in range(steps):
        _, _, _, _, info = env.step(REACHER_TARGET)
    return info["actuator"]


def test_pd_reacher_reaches_absolute_position_targets():
    env = make(action_scale=1.0, action_offset=0.0, env_kw=dict(max_episode_steps=500))
    tel = _reach(env)
    np.testing.assert_allclose(tel["joint_pos"], REACHER_TARGET, atol=0.01)
    assert np.abs(tel["joint_vel"]).max() < 0.05


def test_effort_limit_visibly_slows_the_reacher():
    free = _reach(make(action_scale=1.0, action_offset=0.0, env_kw=dict(max_episode_steps=500)), steps=30)
    limited_env = make(cfg=IdealPDActuatorCfg(stiffness=20.0, damping=8.0, actuator_effort_limit=0.5),
                       action_scale=1.0, action_offset=0.0, env_kw=dict(max_episode_steps=500))
    limited = _reach(limited_env, steps=30)
    assert np.all(np.abs(limited["applied_effort"]) <= 0.5 + 1e-12)
    assert limited["saturated"].all() and np.abs(limited["computed_effort"]).min() > 0.5
    err_free = np.abs(free["joint_pos"] - REACHER_TARGET)
    err_lim = np.abs(limited["joint_pos"] - REACHER_TARGET)
    assert np.all(err_lim > 2 * err_free + 0.1)


def test_dc_motor_speed_stays_within_no_load_speed_under_saturating_command():
    env = gym.make("Reacher-v5", max_episode_steps=500)
    env.unwrapped.model.dof_damping[:] = 0.0  # only the motor curve limits the speed
    vlim = 3.0
    env = ActuatorWrapper(env, actuators={"arm": DCMotorCfg(stiffness=0.0, damping=10.0, saturation_effort=10.0,
                                                            actuator_velocity_limit=vlim)},
                          action_mode="velocity", action_scale=100.0)
    env.reset(seed=0)
    speeds = []
    for _ in range(100):
        _, _, _, _, info = env.step(np.array([1.0, 0.0]))  # asks for 100 rad/s on the unlimited joint0
        tel = info["actuator"]
        speeds.append(tel["joint_vel"][0])
        assert tel["computed_effort"][0] > 900.0  # the drive wants far more than the motor gives
    speeds = np.abs(speeds)
    assert speeds.max() <= vlim * 1.005
    assert speeds[-1] > 0.97 * vlim  # and it does get close: the limit is the curve, not a clamp at 0


def _substep_log(env):
    """Record (joint_pos, effort) every substep by spying on the backend."""
    log = []
    orig = env.backend.set_joint_effort

    def spy(effort):
        log.append((env.backend.joint_pos()[0].copy(), np.array(effort)[0].copy()))
        orig(effort)

    env.backend.set_joint_effort = spy
    return log


@pytest.mark.parametrize("k", [1, 3])
def test_delay_of_k_substeps_shifts_the_step_response_by_k_substeps(k):
    logs = []
    for delay in (0, k):
        env = make(cfg=DelayedPDActuatorCfg(stiffness=0.0, damping=0.0, min_delay=delay, max_delay=delay),
                   action_mode="effort", action_scale=1.0, env_kw=dict(max_episode_steps=500))
        env.reset(seed=0)
        base = env.unwrapped
        base.set_state(base.init_qpos, np.zeros(base.model.nv))  # at rest, same start for both
        log = _substep_log(env)
        for _ in range(3):
            env.step(np.zeros(2))
        for _ in range(6):
            env.step(np.array([0.2, -0.1]))  # effort step at substep 6 (frame_skip 2)
        logs.append(log)
    (plain, delayed), s0 = logs, 6
    eff_plain = np.array([e for _, e in plain])
    eff_delayed = np.array([e for _, e in delayed])
    assert np.all(eff_plain[:s0] == 0) and np.all(eff_plain[s0:] == [0.2, -0.1])
    assert np.all(eff_delayed[: s0 + k] == 0) and np.all(eff_delayed[s0 + k :] == [0.2, -0.1])
    q_plain = np.array([q for q, _ in plain])
    q_delayed = np.array([q for q, _ in delayed])
    np.testing.assert_allclose(q_delayed[s0 + k :], q_plain[s0 : len(q_plain) - k], rtol=0, atol=1e-12)
    assert np.abs(q_plain[-1] - q_plain[s0]).max() > 1e-4  # it did move


@pytest.mark.parametrize("env_id", ["HalfCheetah-v5", "Ant-v5"])  # Euler; RK4 with cfrc_ext in the obs
def test_effort_mode_with_zero_gains_reproduces_the_unwrapped_env(env_id):
    plain = gym.make(env_id)
    wrapped = make(env_id, cfg=IdealPDActuatorCfg(stiffness=0.0, damping=0.0), action_mode="effort")
    # default effort scale: gear * ctrlrange, i.e. what the env's own motors apply
    model = plain.unwrapped.model
    np.testing.assert_allclose(wrapped.action_scale, model.actuator_gear[:, 0])
    o1, _ = plain.reset(seed=5)
    o2, _ = wrapped.reset(seed=5)
    np.testing.assert_array_equal(o1, o2)
    rng = np.random.default_rng(0)
    for _ in range(20):
        a = rng.uniform(-1, 1, model.nu)
        o1, r1, *_ = plain.step(a)
        o2, r2, *_ = wrapped.step(a)
        np.testing.assert_allclose(o2, o1, rtol=1e-9, atol=1e-9)
        assert r2 == pytest.approx(r1, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("normalized", [True, False])
def test_position_mode_targets_offset_scale_and_clip(normalized):
    # IdealPD without limit: computed = kp (clip(offset + scale a) - q) - kd qd, from the telemetry
    # (one substep per step: the actuators read the state the previous step left, in telemetry order)
    kp, kd = 20.0, 8.0
    kw = {} if normalized else {"action_scale": 0.5}
    env = make("Ant-v5", cfg=IdealPDActuatorCfg(stiffness=kp, damping=kd), env_kw={"frame_skip": 1}, **kw)
    env.reset(seed=0)
    ji = env.backend.joints
    order = [ji.names.index(n) for n in env.joint_names]
    q0, qd0 = env.backend.joint_pos()[0, order].copy(), env.backend.joint_vel()[0, order].copy()
    a = env.action_space.sample() * 1.5  # some outside the space: clipped to the joint range
    _, _, _, _, info = env.step(a)
    tel = info["actuator"]
    lo, hi = ji.range[order, 0], ji.range[order, 1]
    if normalized:  # [-1, 1] onto each (limited) joint's range
        target = np.clip((lo + hi) / 2 + (hi - lo) / 2 * a, lo, hi)
    else:
        target = np.clip(ji.default_pos[order] + 0.5 * a, lo, hi)
    np.testing.assert_allclose(tel["computed_effort"], kp * (target - q0) - kd * qd0, rtol=1e-12, atol=1e-12)


def test_implicit_group_is_the_stable_pd_solve_and_leaves_the_model_alone():
    """ImplicitActuatorCfg has one meaning (docs/actuators.md, "Implicit"): the Stable-PD solve, here as
    in the tasks; the env's own MuJoCo actuators are not rewritten."""
    plain = gym.make("Reacher-v5").unwrapped.model
    kw = dict(action_scale=1.0, action_offset=0.0, env_kw=dict(max_episode_steps=500))
    env = make(cfg=ImplicitActuatorCfg(stiffness=20.0, damping=8.0, joint_effort_limit=0.5), **kw)
    model = env.unwrapped.model
    for field in ("actuator_gear", "actuator_gainprm", "actuator_biasprm", "actuator_forcerange", "actuator_ctrlrange"):
        np.testing.assert_array_equal(getattr(model, field), getattr(plain, field), err_msg=field)
    assert env.collection.stable_pd_groups == ["arm"] and env.collection["arm"].is_implicit
    same = make(cfg=IdealPDActuatorCfg(stiffness=20.0, damping=8.0, effort_limit=0.5, effort_mode="implicit"), **kw)
    for e in (env, same):
        e.reset(seed=0)
    for _ in range(5):
        tel, ref = (e.step(REACHER_TARGET)[4]["actuator"] for e in (env, same))
        for key in ("computed_effort", "applied_effort", "joint_pos", "joint_vel"):
            np.testing.assert_array_equal(tel[key], ref[key], err_msg=key)
    assert tel["saturated"].all() and np.abs(tel["applied_effort"]).max() == 0.5  # 20 * 0.6 >> 0.5
    stiff = make(cfg=ImplicitActuatorCfg(stiffness=20.0, damping=8.0), **kw)
    tel = _reach(stiff)
    np.testing.assert_allclose(tel["joint_pos"], REACHER_TARGET, atol=0.01)


def test_armature_and_friction_are_written_to_the_model():
    env = make("Ant-v5", cfg=IdealPDActuatorCfg(joint_names_expr=["hip_.*"], armature=0.25, friction=[0.1, 0.2, 0.3, 0.4]))
    model = env.unwrapped.model
    ji = env.backend.joints
    hips = [ji.names.index(f"hip_{i}") for i in range(1, 5)]
    np.testing.assert_array_equal(model.dof_armature[ji.dof_adr[hips]], 0.25)
    np.testing.assert_array_equal(model.dof_frictionloss[ji.dof_adr[hips]], [0.1, 0.2, 0.3, 0.4])
    ankle = ji.dof_adr[ji.names.index("ankle_1")]
    assert model.dof_armature[ankle] == gym.make("Ant-v5").unwrapped.model.dof_armature[ankle]
    with pytest.raises(ValueError, match="armature must be >= 0"):
        make("Ant-v5", cfg=IdealPDActuatorCfg(armature=-1.0))


# ---------------------------------------------------------------------------------------------
# telemetry, reset, seeding
# ---------------------------------------------------------------------------------------------
def test_energy_and_power_match_the_substep_efforts():
    env = make("Hopper-v5", cfg=IdealPDActuatorCfg(stiffness=50.0, damping=2.0))
    env.reset(seed=1)
    samples = []
    orig = env.backend.set_joint_effort

    def spy(effort):
        samples.append((np.array(effort)[0].copy(), env.backend.joint_vel()[0].copy()))
        orig(effort)

    env.backend.set_joint_effort = spy
    _, _, _, _, info = env.step(env.action_space.sample())
    tel = info["actuator"]
    assert len(samples) == 4
    dt = env.unwrapped.model.opt.timestep
    np.testing.assert_allclose(tel["energy"], sum(np.abs(e * v) for e, v in samples) * dt, rtol=1e-12)
    # power: the last substep's effort times the velocity the actuator read then; mean_power: all substeps
    np.testing.assert_allclose(tel["power"], samples[-1][0] * samples[-1][1], rtol=1e-12)
    np.testing.assert_allclose(tel["mean_power"], sum(e * v for e, v in samples) / 4, rtol=1e-12)
    np.testing.assert_array_equal(tel["applied_effort"], samples[-1][0])
    np.testing.assert_array_equal(tel["joint_vel"], env.backend.joint_vel()[0])  # the state after the step
    for key in ("computed_effort", "applied_effort", "joint_pos", "joint_vel", "power", "mean_power", "saturated", "energy"):
        assert tel[key].shape == (3,)


def test_telemetry_arrays_are_fresh_every_step():
    env = make("Ant-v5")
    env.reset(seed=0)
    _, _, _, _, i1 = env.step(env.action_space.sample())
    snapshot = {k: v.copy() for k, v in i1["actuator"].items()}
    _, _, _, _, i2 = env.step(env.action_space.sample())
    for k, v in i1["actuator"].items():
        np.testing.assert_array_equal(v, snapshot[k])
        assert not np.shares_memory(v, i2["actuator"][k])


def test_reset_samples_parameters_from_the_env_seed():
    cfg = DelayedPDActuatorCfg(stiffness=20.0, damping=1.0, min_delay=0, max_delay=5,
                               randomization={"stiffness": Uniform(0.5, 1.5, operation="scale")})
    env = make("Ant-v5", cfg)
    _, info_a = env.reset(seed=3)
    params_a = info_a["actuator"]["parameters"]["arm"]
    assert 0.5 * 20 <= params_a["stiffness"].min() and params_a["stiffness"].max() <= 1.5 * 20
    _, info_b = env.reset(seed=3)
    np.testing.assert_array_equal(info_b["actuator"]["parameters"]["arm"]["stiffness"], params_a["stiffness"])
    np.testing.assert_array_equal(info_b["actuator"]["parameters"]["arm"]["delay_steps"], params_a["delay_steps"])
    draws = [env.reset(seed=s)[1]["actuator"]["parameters"]["arm"]["stiffness"] for s in range(4, 8)]
    assert len({tuple(d) for d in draws}) == 4
    # another instance with the same seed draws the same values
    other = make("Ant-v5", cfg)
    _, info_c = other.reset(seed=3)
    np.testing.assert_array_equal(info_c["actuator"]["parameters"]["arm"]["stiffness"], params_a["stiffness"])


@pytest.mark.parametrize("execution", ["explicit", "native"])
def test_diverged_physics_truncates_the_episode(execution):
    """stiffness=1e30 (finite, accepted) on the cart: MuJoCo flags a huge qacc and resets the data at every
    step; the wrapper ends the episode (truncated) with info["physics_diverged"] True. A healthy twin's
    key is False at every step and at reset."""
    cfg = {"cart": IdealPDActuatorCfg(joint_names_expr=["slider"], stiffness=1e30, damping=1.0)}
    bad = ActuatorWrapper(gym.make("InvertedPendulum-v5"), actuators=cfg, execution=execution)
    ok = make("InvertedPendulum-v5", IdealPDActuatorCfg(stiffness=20.0, damping=1.0), execution=execution)
    assert bad.reset(seed=0)[1]["physics_diverged"] is False and ok.reset(seed=0)[1]["physics_diverged"] is False
    for k in range(3):
        _, _, term, trunc, info = bad.step(np.array([0.5]))
        assert info["physics_diverged"] is True and trunc is True  # (native: terminated too, by the huge state)
        assert "actuator_episode" in info  # the episode's statistics, as at any end
        _, _, term, trunc, info = ok.step(np.array([0.1]))
        assert info["physics_diverged"] is False and not (term or trunc)
        assert ok.unwrapped.data.time == pytest.approx((k + 1) * ok.unwrapped.dt)
    assert bad.reset(seed=1)[1]["physics_diverged"] is False


def test_effort_penalty_subtracts_squared_applied_effort():
    base = make("Hopper-v5", env_kw=dict(ctrl_cost_weight=0.0))
    pen = EffortPenalty(make("Hopper-v5", env_kw=dict(ctrl_cost_weight=0.0)), effort_weight=1e-3, energy_weight=0.1)
    base.reset(seed=0)
    pen.reset(seed=0)
    a = np.array([0.3, -0.2, 0.1])
    _, r0, _, _, i0 = base.step(a)
    _, r1, _, _, i1 = pen.step(a)
    tel = i0["actuator"]
    expected = 1e-3 * np.sum(tel["applied_effort"] ** 2) + 0.1 * np.sum(tel["energy"])
    assert expected > 0
    assert r1 == pytest.approx(r0 - expected, rel=1e-12)
    assert isinstance(r1, float)
    with pytest.raises(ValueError, match="effort_weight"):
        EffortPenalty(base, effort_weight=-1.0)


# ---------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------
def _state(env):
    d = env.unwrapped.data
    return d.qpos.copy(), d.qvel.copy(), d.time, env.collection.target_command.position.clone()


@pytest.mark.parametrize("bad", [np.array([np.nan, 0.0]), np.array([0.0, np.inf]), np.zeros(3), np.zeros((1, 2)),
                                 "left", None, np.array([0.1 + 1j, 0.2]), torch.zeros(2, dtype=torch.complex64),
                                 np.array([True, False])])
def test_bad_actions_raise_and_leave_the_env_untouched(bad):
    env = make(cfg=DelayedPDActuatorCfg(stiffness=20.0, damping=8.0, min_delay=2, max_delay=2))
    twin = make(cfg=DelayedPDActuatorCfg(stiffness=20.0, damping=8.0, min_delay=2, max_delay=2))
    env.reset(seed=0)
    twin.reset(seed=0)
    env.step(np.array([0.1, 0.2]))
    twin.step(np.array([0.1, 0.2]))
    before = _state(env)
    wrong_type = isinstance(bad, (str, type(None), torch.Tensor)) or np.asarray(bad).dtype.kind in "cb"
    with pytest.raises(TypeError if wrong_type else ValueError, match="action"):
        env.step(bad)
    after = _state(env)
    for x, y in zip(before, after):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    # and the next valid step is exactly the twin's (delay history, targets untouched)
    o1, *_ = env.step(np.array([-0.3, 0.4]))
    o2, *_ = twin.step(np.array([-0.3, 0.4]))
    np.testing.assert_array_equal(o1, o2)


def test_nan_message_names_the_joint():
    env = make()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action\[1\] \(pos command of joint 'joint1'\) is nan"):
        env.step(np.array([0.0, np.nan]))


def test_construction_errors_are_clear():
    with pytest.raises(ValueError, match="group 'legs'.*matches no joint"):
        ActuatorWrapper(gym.make("Reacher-v5"), actuators={"legs": IdealPDActuatorCfg(joint_names_expr=["hip_.*"])})
    with pytest.raises(ValueError, match="'root' is a .* no single DOF"):
        ActuatorWrapper(gym.make("Ant-v5"), actuators={"a": IdealPDActuatorCfg()}, joints=["root", "hip_1"])
    with pytest.raises(ValueError, match="'nope' matches no joint"):
        ActuatorWrapper(gym.make("Ant-v5"), actuators={"a": IdealPDActuatorCfg()}, joints=["nope"])
    with pytest.raises(ValueError, match="action_mode"):
        make(action_mode="torque")
    with pytest.raises(ValueError, match="action_scale"):
        make(action_scale=[1.0, 2.0, 3.0])
    with pytest.warns(UserWarning, match="joint_velocity_limit is not enforced on MuJoCo"):
        make(cfg=IdealPDActuatorCfg(joint_velocity_limit=3.0))
    with pytest.raises(TypeError, match="neither a Gymnasium MujocoEnv nor a SubstepHookEnv"):
        ActuatorWrapper(gym.make("CartPole-v1"), actuators={"a": IdealPDActuatorCfg()})


def test_groups_select_joints_by_regex_and_extra_joints_can_be_driven():
    env = ActuatorWrapper(gym.make("InvertedPendulum-v5"), actuators={
        "cart": IdealPDActuatorCfg(joint_names_expr=["slider"], stiffness=100.0, damping=10.0),
        "pole": DCMotorCfg(joint_names_expr=["hinge"], stiffness=5.0, damping=0.5, saturation_effort=2.0,
                           actuator_velocity_limit=10.0),
    }, joints=["slider", "hinge"])
    assert env.joint_names == ("slider", "hinge") and env.action_space.shape == (2,)
    check_env(env, skip_render_check=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        hips = ActuatorWrapper(gym.make("Ant-v5"), actuators={"hips": IdealPDActuatorCfg(joint_names_expr=["hip_.*"])})
    assert any("ankle_1" in str(x.message) and "passive" in str(x.message) for x in w)
    assert hips.action_space.shape == (4,) and all(n.startswith("hip_") for n in hips.joint_names)
    hips.reset(seed=0)
    _, _, _, _, info = hips.step(np.zeros(4))
    assert info["actuator"]["applied_effort"].shape == (4,)
    assert np.all(hips.unwrapped.data.ctrl == 0)  # the env's motors are off; efforts go through qfrc_applied


# ---------------------------------------------------------------------------------------------
# the public protocol (our own tasks)
# ---------------------------------------------------------------------------------------------
class TinyHookEnv(gym.Env):
    """A one-joint MuJoCo task implementing SubstepHookEnv publicly."""

    XML = """<mujoco><compiler angle="radian"/><option timestep="0.005" gravity="0 0 0"/><worldbody><body>
             <joint name="j" type="hinge" axis="0 0 1" range="-1 1" limited="true" armature="0.1"/>
             <geom type="sphere" size="0.05" mass="0.01"/></body></worldbody></mujoco>"""

    def __init__(self):
        self.model = mujoco.MjModel.from_xml_string(self.XML)
        self.data = mujoco.MjData(self.model)
        self.frame_skip = 4
        self._hook = None
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (2,), np.float64)
        self.action_space = gym.spaces.Box(-1.0, 1.0, (0,), np.float32)  # the task itself has no motor

    @property
    def dt(self):
        return self.model.opt.timestep * self.frame_skip

    def set_substep_hook(self, hook):
        self._hook = hook

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        mujoco.mj_resetData(self.model, self.data)
        return np.array([self.data.qpos[0], self.data.qvel[0]]), {}

    def step(self, action):
        for k in range(self.frame_skip):
            if self._hook is not None:
                self._hook(k)
            mujoco.mj_step(self.model, self.data)
        obs = np.array([self.data.qpos[0], self.data.qvel[0]])
        return obs, float(-abs(obs[0] - 0.5)), False, False, {}


def test_protocol_env_is_driven_through_its_public_hook():
    task = TinyHookEnv()
    assert isinstance(task, SubstepHookEnv)
    env = ActuatorWrapper(task, actuators={"j": IdealPDActuatorCfg(stiffness=2.0, damping=0.4)},
                          joints=["j"], action_scale=1.0, action_offset=0.0)
    env.reset(seed=0)
    for _ in range(300):
        obs, reward, *_ = env.step(np.array([0.5]))
    assert obs[0] == pytest.approx(0.5, abs=1e-3) and reward > -1e-3
    assert task._hook is not None
