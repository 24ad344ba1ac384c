"""Value rules of the runtime (docs/runtime.md, "Value rules"): every refused input is a one-line
``ValueError`` (bad value) or ``TypeError`` (wrong type) naming the parameter and what is allowed,
raised before any state changes; accepted values never produce NaN."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import actuator_gym as ag
from actuator_gym.actuators.thruster import ThrusterCfg, allocation_matrix
from actuator_gym.randomization import Gaussian, IntUniform, LogUniform, Uniform

J = ["a", "b"]


def refused(error, match, fn, *args, **kwargs):
    """``fn`` raises ``error`` (not a subclass of another builtin family) with a one-line message."""
    with pytest.raises(error, match=match) as info:
        fn(*args, **kwargs)
    msg = str(info.value)
    assert "\n" not in msg, f"message is not one line: {msg!r}"
    assert type(info.value).__module__ in ("builtins", "actuator_gym._checks", "actuator_gym.actuators.params")
    return msg


def act(drive=None, clamping=(), delay=None, **kw):
    kw.setdefault("num_envs", 2)
    return ag.Actuator(drive=drive or ag.DrivePD(kp=1.0), delay=delay, clamping=list(clamping), joint_names=J, seed=0, **kw)


def step(m, q=0.0, qd=0.0, tq=1.0, dt=0.005):
    n, j = m.num_envs, m.num_joints
    return m.compute(joint_pos=np.full((n, j), q), joint_vel=np.full((n, j), qd), target_pos=np.full((n, j), tq), dt=dt)


# ---- infinite / overflowing / NaN parameters -------------------------------------------------
@pytest.mark.parametrize("value", [math.inf, 1e39, float("nan"), -1.0])
@pytest.mark.parametrize("name", ["kp", "kd"])
def test_gains_must_be_finite_and_representable(name, value):
    msg = refused(ValueError, f"'{name}'.*joint 'a'.*allowed: finite values >= 0", act, ag.DrivePD(**{name: value}))
    if value == 1e39:
        assert "float32 cannot represent" in msg


def test_gains_representable_in_float64_are_accepted_there():
    m = act(ag.DrivePD(kp=1e39), dtype=torch.float64)  # float64 holds 1e39: accepted
    assert m.parameter("kp").max().item() == 1e39
    refused(ValueError, "'kp'.*float32 cannot represent", act, ag.DrivePD(kp=1e39))


@pytest.mark.parametrize("value", [math.inf, -math.inf, 1e39])
def test_const_effort_and_ki_must_be_finite(value):
    refused(ValueError, "'const_effort'.*finite values", act, ag.DrivePD(kp=1.0, const_effort=value))
    if value > 0:
        refused(ValueError, "'ki'.*finite values >= 0", act, ag.DrivePID(kp=1.0, ki=value))


@pytest.mark.parametrize("clamp, name", [
    (lambda v: ag.ClampingMaxEffort(max_effort=v), "max_effort"),
    (lambda v: ag.ClampingDCMotor(saturation_effort=5.0, velocity_limit=v), "velocity_limit"),
    (lambda v: ag.ClampingDCMotor(saturation_effort=5.0, velocity_limit=10.0, effort_limit=v), "effort_limit"),
])
def test_limits_may_be_inf_and_overflow_to_no_limit(clamp, name):
    for v in (math.inf, 1e39):  # +inf: no limit; beyond float32's range is no limit too
        m = act(clamping=[clamp(v)])
        assert m.parameter(name).max().item() == math.inf
        out = step(m, qd=3.0, tq=1e3)
        assert torch.isfinite(out).all()
    refused(ValueError, f"'{name}'.*allowed: values", act, clamping=[clamp(float("nan"))])
    refused(ValueError, f"'{name}'.*allowed: values", act, clamping=[clamp(-math.inf)])


def test_integral_max_may_be_inf():
    m = act(ag.DrivePID(kp=1.0, ki=2.0, integral_max=math.inf))
    assert torch.isfinite(step(m)).all()


def test_dc_motor_inf_over_inf_and_overflowing_slope_are_refused():
    # inf / inf gave NaN efforts: an infinite stall torque has no torque-speed line
    refused(ValueError, "'saturation_effort'.*has value inf.*finite values >= 0", act,
            clamping=[ag.ClampingDCMotor(saturation_effort=math.inf, velocity_limit=math.inf)])
    refused(ValueError, "'saturation_effort' / 'velocity_limit'.*slope.*float32", act,
            clamping=[ag.ClampingDCMotor(saturation_effort=1e30, velocity_limit=1e-30)])
    refused(ValueError, "'velocity_limit'.*1e-50.*float32 cannot represent", act,  # rounds to 0 in float32
            clamping=[ag.ClampingDCMotor(saturation_effort=1.0, velocity_limit=1e-50)])
    refused(ValueError, "'saturation_effort' \\+ 'effort_limit'", act,
            clamping=[ag.ClampingDCMotor(saturation_effort=3e38, velocity_limit=1.0, effort_limit=3e38)])
    refused(ValueError, "saturation_effort.*inf", ag.DCMotorCfg(saturation_effort=math.inf, actuator_velocity_limit=[2.0, 1.0]).build, J)


@pytest.mark.parametrize("value", [[math.inf, math.inf], [1.0, math.inf], np.array([math.inf, 2.0]), torch.tensor([2.0, math.inf]),
                                   {"a": 1.0, "b": math.inf}])
def test_a_field_that_refuses_a_scalar_inf_refuses_it_in_every_element(value):
    """The DC motor's no-load speed is required and finite: +inf is refused as a number and in a sequence,
    an array, a tensor or a dict value alike (it passed before, and made the motor a plain torque limit)."""
    cfg = lambda v: ag.DCMotorCfg(stiffness=1.0, saturation_effort=5.0, actuator_velocity_limit=v)  # noqa: E731
    refused(ValueError, "actuator_velocity_limit is required", cfg(math.inf).build, J)
    refused(ValueError, "'actuator_velocity_limit'.*has value inf; allowed: finite values > 0", cfg(value).build, J)
    assert cfg([2.0, 3.0]).build(J).parameter("actuator_velocity_limit").tolist() == [[2.0, 3.0]]


@pytest.mark.parametrize("part, name", [(lambda: ag.DrivePD(kp=None), "kp"), (lambda: ag.DrivePD(kp=1.0, kd=None), "kd"),
                                        (lambda: ag.DrivePID(kp=1.0, ki=None), "ki"),
                                        (lambda: ag.DrivePD(kp=1.0, const_effort=None), "const_effort")])
def test_none_is_refused_where_a_number_is_required(part, name):
    """``DrivePD(kp=None)`` became a gain of 0 (a limp joint); None means "no limit" for limits only."""
    refused(TypeError, rf"parameter '{name}' of DrivePI?D is None; allowed: a number or array of finite values", act, part())
    m = act(clamping=[ag.ClampingMaxEffort(max_effort=None)])  # a limit left None: no limit
    assert torch.isinf(m.parameter("max_effort")).all() and step(m, tq=1e3).tolist() == [[1e3, 1e3]] * 2


@pytest.mark.parametrize("sat, vel, el", [(5.0, math.inf, math.inf), (0.0, math.inf, math.inf), (5.0, 1.0, math.inf), (0.0, 2.0, 3.0)])
def test_dc_motor_accepted_corners_compute_without_nan(sat, vel, el):
    m = act(clamping=[ag.ClampingDCMotor(saturation_effort=sat, velocity_limit=vel, effort_limit=el)])
    for qd in (-1e6, -3.0, 0.0, 2.0, 1e6):
        out = step(m, qd=qd, tq=50.0)
        assert not torch.isnan(out).any()
        assert torch.isfinite(out).all() or (math.isinf(el) and abs(qd) > 1e5)


def test_position_based_tables_must_fit_the_dtype():
    refused(ValueError, "slope between lookup entries.*float32", act,
            clamping=[ag.ClampingPositionBased([0.0, 1e-40], [0.0, 1.0])])
    refused(ValueError, "lookup_positions.*float32", act, clamping=[ag.ClampingPositionBased([0.0, 1e39], [1.0, 1.0])])
    refused(ValueError, "lookup_efforts.*float32", act, clamping=[ag.ClampingPositionBased([0.0, 1.0], [1.0, 1e39])])
    m = act(clamping=[ag.ClampingPositionBased([0.0, 1e-40], [0.0, 1.0])], dtype=torch.float64)  # fits in float64
    assert torch.isfinite(step(m, q=0.5e-40)).all()
    refused(ValueError, "one-dimensional", ag.ClampingPositionBased, [[0.0, 1.0], [2.0, 3.0]], [[1, 1], [1, 1]])
    refused(TypeError, "lookup_positions must hold real numbers", ag.ClampingPositionBased, ["a"], ["b"])
    refused(TypeError, "lookup_positions must be a sequence", ag.ClampingPositionBased, 0.0, 1.0)


def test_yaml_style_inf_is_refused_by_validate():
    # what configs.py runs at load time on a `.inf` / `1.0e+400` value (both parse to inf)
    refused(ValueError, "'kp'.*inf", ag.DrivePD(kp=float("1.0e+400")).validate, "IdealPD")


def test_scaling_an_infinite_limit_by_a_factor_that_can_be_zero_is_refused():
    refused(ValueError, "'max_effort'.*inf \\* 0 is NaN", act,
            clamping=[ag.ClampingMaxEffort(max_effort=Uniform(0.0, 2.0, operation="scale"))])
    m = act(clamping=[ag.ClampingMaxEffort(max_effort=Uniform(0.5, 2.0, operation="scale"))])  # factors > 0: still no limit
    assert m.parameter("max_effort").max().item() == math.inf
    m = act(clamping=[ag.ClampingMaxEffort(max_effort=Uniform(0.0, 2.0, operation="add"))])
    assert m.parameter("max_effort").max().item() == math.inf


def test_distribution_values_must_fit_the_dtype():
    refused(ValueError, "'kp'.*can give values.*float32 cannot represent", act, ag.DrivePD(kp=Uniform(0.0, 1e39)))
    refused(ValueError, "'velocity_limit'.*float32", act,
            clamping=[ag.ClampingDCMotor(saturation_effort=1.0, velocity_limit=LogUniform(1e-50, 1.0))])


# ---- dt --------------------------------------------------------------------------------------
@pytest.mark.parametrize("dt, error", [(-0.01, ValueError), (math.inf, ValueError), (float("nan"), ValueError), (0.0, ValueError),
                                       (3.5e38, ValueError), (1.5, ValueError), (1e-46, ValueError),  # inf / 0 in float32, past MAX_DT
                                       ("0.01", TypeError), (True, TypeError), (1j, TypeError), (np.array([0.01]), TypeError)])
def test_pid_dt_is_checked_and_a_refusal_changes_nothing(dt, error):
    mk = lambda: act(ag.DrivePID(kp=1.0, ki=10.0), delay=ag.Delay(min_delay=1, max_delay=1))  # noqa: E731
    m, twin = mk(), mk()
    step(m), step(twin)
    refused(error, "dt", step, m, dt=dt)
    refused(ValueError, "DrivePID needs dt", step, m, dt=None)
    for _ in range(3):  # the integral and the delay history did not move: identical to the twin
        assert torch.equal(step(m), step(twin))


def test_collection_refuses_a_missing_dt_before_any_group_moves():
    cfgs = {"pd": ag.DelayedPDActuatorCfg(joint_names_expr=["a"], stiffness=1.0, min_delay=1, max_delay=1),
            "pid": ag.ComposedActuatorCfg(joint_names_expr=["b"], drive=ag.DrivePID(kp=1.0, ki=1.0))}
    c, twin = (ag.ActuatorCollection(cfgs, joint_names=J, num_envs=2, seed=0) for _ in range(2))
    for x in (c, twin):
        x.target_command.set_position_index(value=np.ones((2, 2)))
        x.compute(joint_pos=np.zeros((2, 2)), joint_vel=np.zeros((2, 2)), dt=0.01)
    refused(ValueError, r"groups \['pid'\] need dt", c.compute, joint_pos=np.zeros((2, 2)), joint_vel=np.zeros((2, 2)))
    refused(ValueError, "dt must be the substep", c.compute, joint_pos=np.zeros((2, 2)), joint_vel=np.zeros((2, 2)), dt=-1.0)
    for _ in range(2):
        a = c.compute(joint_pos=np.zeros((2, 2)), joint_vel=np.zeros((2, 2)), dt=0.01).clone()
        b = twin.compute(joint_pos=np.zeros((2, 2)), joint_vel=np.zeros((2, 2)), dt=0.01).clone()
        assert torch.equal(a, b)


def test_implicit_mode_checks_its_inputs_before_the_delay_moves():
    mk = lambda: ag.DelayedPDActuatorCfg(stiffness=10.0, damping=1.0, min_delay=1, max_delay=1, effort_mode="implicit").build(J, num_envs=2, seed=0)  # noqa: E731
    m, twin = mk(), mk()
    eye = np.tile(np.eye(2), (2, 1, 1))
    kw = dict(joint_pos=np.zeros((2, 2)), joint_vel=np.zeros((2, 2)), target_pos=np.ones((2, 2)), dt=0.01, inverse_mass=eye)
    m.compute(**kw), twin.compute(**kw)
    refused(ValueError, "inverse_mass must have shape", m.compute, **{**kw, "inverse_mass": np.ones((2, 3, 3))})
    refused(TypeError, "inverse_mass must hold real numbers", m.compute, **{**kw, "inverse_mass": eye.astype(complex)})
    refused(ValueError, "needs dt", m.compute, **{**kw, "dt": None})
    assert torch.equal(m.compute(**kw), twin.compute(**kw))


# ---- named configs ---------------------------------------------------------------------------
@pytest.mark.parametrize("kw, error, match", [
    (dict(min_delay=3, max_delay=0), ValueError, r"min_delay \(3\) must be <= max_delay \(0\)"),
    (dict(max_delay=-1), ValueError, "max_delay must be an integer in"),
    (dict(min_delay=-2, max_delay=1), ValueError, "min_delay"),
    (dict(max_delay=1.5), TypeError, "max_delay must be an integer"),
    (dict(max_delay=True), TypeError, "max_delay.*bool"),
    (dict(max_delay=2**40), ValueError, "max_delay"),
    (dict(max_delay=1, per_joint_delay="yes"), TypeError, "per_joint_delay must be True or False"),
    (dict(randomization="stiffness"), TypeError, "randomization must be a"),
    (dict(randomization={"stiffness": 2.0}), TypeError, r"randomization\['stiffness'\] must be a Distribution"),
    (dict(joint_names_expr=[1]), TypeError, "joint_names_expr"),
    (dict(armature=-1.0), ValueError, "armature must be >= 0"),
    (dict(friction=float("nan")), ValueError, "friction must be >= 0 and finite"),
])
def test_named_config_fields_are_checked_at_construction(kw, error, match):
    for cls in (ag.IdealPDActuatorCfg, ag.DelayedPDActuatorCfg, ag.ImplicitActuatorCfg):
        refused(error, match, cls, **kw)


def test_delay_fields_changed_after_construction_are_checked_at_build():
    cfg = ag.IdealPDActuatorCfg(stiffness=1.0)
    cfg.min_delay, cfg.max_delay = 3, 0  # was dropped silently (no Delay part for max_delay 0)
    refused(ValueError, "min_delay", cfg.build, J)


def test_build_refuses_a_string_of_joint_names():
    refused(TypeError, r"joint_names must be a sequence of joint names, got the string 'FR_hip' \(use \['FR_hip'\]\)",
            ag.IdealPDActuatorCfg().build, "FR_hip")
    refused(TypeError, "must contain strings", ag.IdealPDActuatorCfg().build, [1, 2])
    refused(ValueError, "duplicates", ag.IdealPDActuatorCfg().build, ["a", "a"])
    refused(TypeError, "rotor_names", ThrusterCfg(thruster_names_expr=["r"], thrust_range=(0.1, 1.0), thrust_const_range=(1.0, 1.0),
                                                  tau_inc_range=(0.1, 0.1), tau_dec_range=(0.1, 0.1), torque_to_thrust_ratio=0.0,
                                                  dt=0.01).build, "r", initial_rps=0.5)


def test_unknown_keywords_use_pythons_wording():
    refused(TypeError, "unexpected keyword argument 'foo'", ag.IdealPDActuatorCfg, foo=1)
    refused(TypeError, "unexpected keyword argument 'foo'", ag.IdealPDActuatorCfg().build, J, foo=1)
    refused(TypeError, "unexpected keyword argument 'max_iter'",
            ag.IdealPDActuatorCfg(effort_mode="implicit", implicit_options={"max_iter": 3}).build, J)
    refused(TypeError, "unexpected keyword argument 'kq'", ag.DrivePD, kq=1.0)


# ---- types -----------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["5", True, 1 + 2j, object(), np.array(["a", "b"]), np.array([1 + 1j, 2.0]),
                                   torch.ones(2, 2, dtype=torch.complex64), {"a": "x"}])
def test_parameter_of_the_wrong_type_is_a_type_error(value):
    refused(TypeError, "'kp'", act, ag.DrivePD(kp=value))


@pytest.mark.parametrize("kw, error, match", [
    (dict(num_envs=0), ValueError, "num_envs must be an integer in"),
    (dict(num_envs=2**40), ValueError, "num_envs"),
    (dict(num_envs=1.5), TypeError, "num_envs"),
    (dict(num_envs=True), TypeError, "num_envs"),
    (dict(device="banana"), ValueError, "device must be 'cpu', 'cuda' or 'cuda:N', got 'banana'"),
    (dict(device=5), TypeError, "device"),
    (dict(device="meta"), ValueError, "device"),
    (dict(dtype=torch.int32), ValueError, "dtype must be torch.float32 or torch.float64"),
    (dict(dtype="float32"), TypeError, "dtype"),
    (dict(dtype=torch.float16), ValueError, "dtype"),
    (dict(seed=-3), ValueError, r"seed must be None or an integer in \[0, 2\*\*64\)"),
    (dict(seed=1.5), TypeError, "seed"),
    (dict(seed=2**70), ValueError, "seed"),
    (dict(check_finite="yes"), TypeError, "check_finite must be True or False"),
    (dict(randomization="kp"), TypeError, "randomization"),
    (dict(name=5), TypeError, "name must be a string"),
])
def test_actuator_arguments(kw, error, match):
    kw = {"seed": 0, **kw}
    refused(error, match, ag.Actuator, drive=ag.DrivePD(kp=1.0), num_joints=2, **kw)


def test_cuda_unavailable_is_a_clear_value_error():
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    refused(ValueError, "CUDA is not available", ag.Actuator, drive=ag.DrivePD(), num_joints=1, device="cuda")
    refused(ValueError, "CUDA is not available", ag.IdealPDActuatorCfg().build, J, device="cuda:0")


@pytest.mark.parametrize("value", [np.ones((2, 2), complex), torch.ones((2, 2), dtype=torch.complex64), np.ones((2, 2), bool), "x"])
def test_complex_and_other_non_real_inputs_are_refused_and_change_nothing(value):
    m, twin = act(delay=ag.Delay(min_delay=1, max_delay=1)), act(delay=ag.Delay(min_delay=1, max_delay=1))
    z = np.zeros((2, 2))
    refused(TypeError, "target_pos", m.compute, joint_pos=z, joint_vel=z, target_pos=value)
    c = ag.ActuatorCollection({"g": ag.IdealPDActuatorCfg(stiffness=1.0)}, joint_names=J, num_envs=2, seed=0)
    refused(TypeError, "joint_pos", c.compute, joint_pos=value, joint_vel=z, dt=0.01)
    refused(TypeError, "value", c.target_command.set_position_index, value=value)
    assert torch.equal(c.target_command.position, torch.zeros(2, 2))
    assert torch.equal(step(m), step(twin))


def test_env_ids():
    m = act()
    refused(TypeError, "env_ids must be integers.*float", m.reset, env_ids=[0.5])
    refused(TypeError, "env_ids", m.reset, env_ids="a")
    refused(ValueError, r"env_ids: ids must lie in \[0, 1\]", m.reset, env_ids=[2**70])
    refused(ValueError, "boolean mask needs shape", m.reset, env_ids=[True])
    refused(ValueError, "flat sequence", m.reset, env_ids=[[0], [0, 1]])
    c = ag.ActuatorCollection({"g": ag.IdealPDActuatorCfg(stiffness=1.0)}, joint_names=J, num_envs=2, seed=0)
    refused(TypeError, "joint_ids must be integers", c.target_command.set_position_index, value=np.ones((2, 1)), joint_ids=[0.5])
    refused(ValueError, "repeated", c.target_command.set_position_index, value=np.ones((2, 2)), joint_ids=[0, 0])


def test_unknown_names_are_key_and_value_errors():
    m = act()
    for fn, arg in ((m.parameter, "gain"), (ag.ActuatorCollection({"g": ag.IdealPDActuatorCfg()}, joint_names=J).__getitem__, "x")):
        with pytest.raises(KeyError):
            fn(arg)
        with pytest.raises(ValueError, match="unknown"):
            fn(arg)
    refused(TypeError, "parameter names are strings", m.parameter, 5)


def test_seed_methods():
    m = act()
    for bad, error in ((-1, ValueError), (1.5, TypeError), ("x", TypeError), (None, TypeError)):
        refused(error, "seed must be an integer", m.seed, bad)
    c = ag.ActuatorCollection({"g": ag.IdealPDActuatorCfg()}, joint_names=J)
    refused(ValueError, "seed", c.seed, -3)


# ---- delays, distributions, thruster -----------------------------------------------------------
def test_delay_arguments():
    refused(ValueError, "max_delay", ag.Delay, min_delay=0, max_delay=2**40)
    refused(TypeError, "per_joint must be True or False", ag.Delay, min_delay=0, max_delay=2, per_joint="yes")
    refused(TypeError, "delay_steps must be an integer", ag.Delay, delay_steps=1.5)
    refused(TypeError, "delay_steps must hold real numbers", ag.Delay, delay_steps=["a", "b"], max_delay=2)
    # a float distribution's draws were rounded without a word: refused at construction, and as a randomization
    for kw in (dict(delay_steps=Uniform(0.0, 2.0)), dict(delay_steps=Gaussian(1.0, 0.5), max_delay=3)):
        refused(ValueError, "'delay_steps': (Uniform|Gaussian) draws non-integer values; allowed: an integer distribution",
                ag.Delay, **kw)
    refused(ValueError, "'delay_steps': Uniform draws non-integer", act, delay=ag.Delay(delay_steps=1, max_delay=2),
            randomization={"delay_steps": Uniform(0.0, 2.0)})
    assert act(delay=ag.Delay(delay_steps=IntUniform(0, 2))).parameter("delay_steps").max() <= 2
    refused(ValueError, "history", ag.Actuator, drive=ag.DrivePD(), delay=ag.Delay(min_delay=0, max_delay=2**20),
            num_envs=4096, num_joints=12)


@pytest.mark.parametrize("cls", [Uniform, LogUniform, Gaussian, IntUniform])
def test_distribution_arguments(cls):
    refused(TypeError, "must be a finite number", cls, "a", 1)
    refused(TypeError, "bool", cls, True, 2)
    refused(TypeError, "complex", cls, 1j, 2)
    refused(ValueError, "finite", cls, float("nan"), 1)
    refused(TypeError, "per_joint must be True or False", cls, 1, 2, per_joint="yes")
    refused(TypeError, "nominal", cls, 1, 2, nominal=True)
    refused(ValueError, "operation", cls, 1, 2, operation="mul")


def test_distribution_ranges_must_be_samplable():
    refused(ValueError, "wider than the float range", Uniform, -1e308, 1e308)
    refused(ValueError, "wider than the float range", Gaussian, 0.0, 1e308)
    refused(ValueError, r"2\*\*53", IntUniform, 0, 2**70)
    refused(TypeError, "abstract base", ag.randomization.Distribution().bounds)


def test_thruster_arguments():
    base = dict(thruster_names_expr=["r.*"], thrust_range=(0.1, 6.0), thrust_const_range=(1e-5, 1e-5), tau_inc_range=(0.05, 0.08),
                tau_dec_range=(0.005, 0.005), torque_to_thrust_ratio=0.07, dt=0.005)
    ok = ThrusterCfg(**base)
    build = lambda **kw: ok.build(**{"rotor_names": ["r0", "r1"], "num_envs": 2, "seed": 0, "initial_rps": 500.0, **kw})  # noqa: E731
    refused(ValueError, "thrust_range.*float32", ThrusterCfg(**{**base, "thrust_range": (0.0, 1e39)}).build, rotor_names=["r0"], initial_rps=0.0)
    refused(TypeError, "torque_to_thrust_ratio", ThrusterCfg, **{**base, "torque_to_thrust_ratio": True})
    refused(ValueError, "'tau_inc'.*float32", ThrusterCfg(**{**base, "tau_inc_range": (1e-50, 1e-50), "use_discrete_approximation": False}).build,
            rotor_names=["r0"], initial_rps=500.0)
    refused(ValueError, "device", build, device="banana")
    refused(ValueError, "dtype", build, dtype=torch.int32)
    refused(ValueError, "seed", build, seed=-3)
    refused(TypeError, "check_finite", build, check_finite="x")
    m = build()
    refused(TypeError, "target_thrust must hold real numbers", m.compute, target_thrust=np.ones((2, 2), complex))
    refused(TypeError, "positions", allocation_matrix, "x", [1], 0.1)
    refused(TypeError, "positions must hold real numbers", allocation_matrix, np.ones((1, 3), complex), [1], 0.1)
    refused(ValueError, "device", allocation_matrix, np.ones((1, 3)), [1], 0.1, device="banana")
    refused(ValueError, "dtype", allocation_matrix, np.ones((1, 3)), [1], 0.1, dtype=torch.int32)


def test_abstract_bases_are_type_errors():
    refused(TypeError, "drive must be a Drive", ag.Actuator, drive=ag.Drive(), num_joints=1)
    refused(TypeError, "clamping entries must be Clamping parts", ag.Actuator, drive=ag.DrivePD(), clamping=[ag.Clamping()], num_joints=1)
    refused(TypeError, "base of the named configs", ag.ActuatorBaseCfg().build, J)
    refused(ValueError, "drive must be a Drive part", ag.ComposedActuatorCfg().build, J)
    refused(TypeError, "clamping must be a list", ag.ComposedActuatorCfg(drive=ag.DrivePD(), clamping="x").build, J)


def test_unused_fields_are_still_checked():
    # IdealPD does not use actuator_velocity_limit, RemotizedPD not actuator_effort_limit: a NaN or a
    # string there is refused at build all the same (valid values stay accepted and unused)
    refused(ValueError, "'actuator_velocity_limit'.*NaN", ag.IdealPDActuatorCfg(actuator_velocity_limit=float("nan")).build, J)
    refused(TypeError, "'actuator_velocity_limit'", ag.IdealPDActuatorCfg(actuator_velocity_limit="fast").build, J)
    refused(ValueError, "'actuator_effort_limit'", ag.RemotizedPDActuatorCfg(
        joint_parameter_lookup=[[0, 1, 2]], actuator_effort_limit=-1.0).build, J)
    assert ag.IdealPDActuatorCfg(actuator_velocity_limit=3.0).build(J).num_joints == 2
