"""Named models (Isaac Lab configs) = recipes of parts; parameter resolution and its errors."""

import math
import warnings

import numpy as np
import pytest
import torch

import actuator_gym as ag

JOINTS = ["FL_hip", "FL_knee", "FR_hip", "FR_knee"]


def zeros(n=2, j=4):
    return np.zeros((n, j), np.float32)


def test_named_model_equals_composed_recipe():
    cfg = ag.DCMotorCfg(stiffness={".*_hip": 40.0, ".*_knee": 30.0}, damping=1.0, saturation_effort=50.0,
                        actuator_effort_limit=35.0, actuator_velocity_limit=12.0)
    named = cfg.build(joint_names=JOINTS, num_envs=3, seed=0)
    composed = ag.Actuator(
        drive=ag.DrivePD(kp=[40.0, 30.0, 40.0, 30.0], kd=1.0),
        clamping=[ag.ClampingDCMotor(saturation_effort=50.0, velocity_limit=12.0, effort_limit=35.0)],
        num_envs=3, num_joints=4, seed=0,
    )
    rng = np.random.default_rng(1)
    for _ in range(5):
        q, qd, tq = (rng.standard_normal((3, 4)).astype(np.float32) * s for s in (1, 10, 2))
        a = named.compute(joint_pos=q, joint_vel=qd, target_pos=tq)
        b = composed.compute(joint_pos=q, joint_vel=qd, target_pos=tq)
        assert torch.equal(a, b)
    assert torch.equal(named.parameter("stiffness"), torch.tensor([[40.0, 30.0, 40.0, 30.0]] * 3))
    assert torch.equal(named.parameter("actuator_velocity_limit"), torch.full((3, 4), 12.0))


def test_ideal_pd_hand_computed():
    m = ag.IdealPDActuatorCfg(stiffness=20.0, damping=2.0, actuator_effort_limit=5.0).build(joint_names=["j"], num_envs=1)
    out = m.compute(joint_pos=[[0.1]], joint_vel=[[1.0]], target_pos=[[0.2]], target_vel=[[0.0]], target_effort=[[0.5]])
    # 20*0.1 + 2*(-1) + 0.5 = 0.5 (not clamped)
    assert out.item() == pytest.approx(0.5)
    out = m.compute(joint_pos=[[0.0]], joint_vel=[[0.0]], target_pos=[[1.0]])
    assert out.item() == 5.0 and m.computed_effort.item() == 20.0


def test_delayed_and_remotized_models():
    m = ag.DelayedPDActuatorCfg(stiffness=1.0, min_delay=2, max_delay=2).build(joint_names=["j"], num_envs=1)
    outs = [m.compute(joint_pos=[[0.0]], joint_vel=[[0.0]], target_pos=[[v]]).item() for v in (1.0, 2.0, 3.0, 4.0)]
    assert outs == [1.0, 1.0, 1.0, 2.0]
    lookup = [[-1.0, 1.0, 5.0], [1.0, 1.0, 15.0]]
    r = ag.RemotizedPDActuatorCfg(stiffness=100.0, joint_parameter_lookup=lookup).build(joint_names=["j"], num_envs=3)
    q = np.array([[-2.0], [0.0], [3.0]], np.float32)
    out = r.compute(joint_pos=q, joint_vel=np.zeros((3, 1)), target_pos=q + 1.0)
    np.testing.assert_allclose(out.numpy().ravel(), [5.0, 10.0, 15.0])  # limit interpolated in q, held outside


def test_build_selects_joints_by_expression():
    m = ag.IdealPDActuatorCfg(joint_names_expr=[".*_knee"], stiffness=1.0).build(joint_names=JOINTS)
    assert m.joint_names == ("FL_knee", "FR_knee") and m.num_joints == 2
    with pytest.raises(ValueError, match="matches none"):
        ag.IdealPDActuatorCfg(joint_names_expr=["arm_.*"]).build(joint_names=JOINTS)


def test_dc_motor_requires_fields():
    with pytest.raises(ValueError, match="saturation_effort"):
        ag.DCMotorCfg(actuator_velocity_limit=10.0).build(joint_names=JOINTS)
    with pytest.raises(ValueError, match="actuator_velocity_limit"):
        ag.DCMotorCfg(saturation_effort=10.0).build(joint_names=JOINTS)


def test_parameter_dict_errors_and_defaults():
    with pytest.raises(ValueError, match=r"FL_hip.*'FL_.\*'.*'.\*_hip'|FL_hip.*both keys"):
        ag.IdealPDActuatorCfg(stiffness={"FL_.*": 1.0, ".*_hip": 2.0, "FR_knee": 3.0}).build(joint_names=JOINTS)
    with pytest.raises(ValueError, match="'arm' matches no joint"):
        ag.IdealPDActuatorCfg(stiffness={"arm": 1.0}).build(joint_names=JOINTS)
    m = ag.IdealPDActuatorCfg(stiffness=1.0, actuator_effort_limit={".*_hip": 3.0, ".*_knee": 4.0}).build(joint_names=JOINTS)
    assert m.parameter("actuator_effort_limit").tolist() == [[3.0, 4.0, 3.0, 4.0]]


def test_a_map_that_leaves_joints_uncovered_is_refused_naming_the_field_as_written_and_the_joints():
    """Isaac Lab leaves joints no key matches at 0 (limp, or a limit of 0): refused, the field named as the
    user wrote it (an Isaac Lab alias included), the joints no key matches, and the group."""
    knees = r"\['FL_knee', 'FR_knee'\] of the group matched by no key"
    for field, value, kw in (("stiffness", {".*_hip": 20.0}, {}),
                             ("damping", {".*_hip": 1.0}, {}),
                             ("actuator_effort_limit", {".*_hip": 3.0}, {}),
                             ("effort_limit", {".*_hip": 3.0}, {}),  # Isaac Lab's name, deprecated
                             ("saturation_effort", {".*_hip": 30.0}, {"actuator_velocity_limit": 10.0})):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            cfg = ag.DCMotorCfg(**{"saturation_effort": 30.0, "actuator_velocity_limit": 10.0, **kw, field: value})
        with pytest.raises(ValueError, match=rf"DCMotorCfg \(group 'legs'\): '{field}' = .*keys \['\.\*_hip'\].*{knees}"):
            cfg.build(joint_names=JOINTS, name="legs")
    with pytest.raises(ValueError, match=rf"^DCMotorCfg: 'stiffness' .*{knees}"):  # built alone: no group to name
        ag.DCMotorCfg(stiffness={".*_hip": 20.0}, saturation_effort=30.0, actuator_velocity_limit=10.0).build(joint_names=JOINTS)
    with pytest.raises(ValueError, match=r"parameter 'kp': joints \['FL_knee', 'FR_knee'\] are matched by no key"):
        ag.Actuator(drive=ag.DrivePD(kp={".*_hip": 20.0}), joint_names=JOINTS)  # a part: its own parameter name


@pytest.mark.parametrize(
    "field, value, match",
    [
        ("stiffness", -1.0, r"'kp'.*joint 'FL_hip'.*-1.0.*allowed"),
        ("damping", [0.0, 1.0, float("nan"), 1.0], r"'kd'.*joint 'FR_hip'.*NaN"),
        ("stiffness", [1.0, 2.0], r"'kp'.*shape \(4,\)"),
        ("actuator_effort_limit", "big", r"'max_effort'"),
    ],
)
def test_parameter_value_errors(field, value, match):
    error = TypeError if isinstance(value, str) else ValueError  # a wrong type is a TypeError
    with pytest.raises(error, match=match):
        ag.IdealPDActuatorCfg(**{field: value}).build(joint_names=JOINTS, num_envs=2)


def test_full_tensor_parameter():
    kp = torch.arange(8, dtype=torch.float32).reshape(2, 4)
    m = ag.IdealPDActuatorCfg(stiffness=kp).build(joint_names=JOINTS, num_envs=2)
    out = m.compute(joint_pos=zeros(), joint_vel=zeros(), target_pos=np.ones((2, 4)))
    assert torch.equal(out, kp)


def test_deprecated_aliases():
    with pytest.warns(DeprecationWarning, match="effort_limit"):
        cfg = ag.IdealPDActuatorCfg(effort_limit=7.0)
    assert cfg.actuator_effort_limit == 7.0
    with pytest.raises(ValueError, match="conflicts"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            ag.IdealPDActuatorCfg(effort_limit=7.0, actuator_effort_limit=8.0)


def test_implicit_cfg_is_the_stable_pd_solve():
    """From rest with M^-1 = a, bias 0: qd' = a p / h... the solve p = h (kp (q* - h qd') - kd qd') gives
    the effort kp q* / (1 + h^2 kp a + h kd a) (docs/actuators.md, "Implicit: one meaning")."""
    m = ag.ImplicitActuatorCfg(stiffness=100.0, damping=1.0, joint_effort_limit=4.0).build(joint_names=["j"])
    assert m.is_implicit and m.stable_pd
    a, h = 2.0, 0.01
    kw = dict(joint_pos=[[0.0]], joint_vel=[[0.0]], dt=h, inverse_mass=np.full((1, 1, 1), a))
    assert m.compute(target_pos=[[0.01]], **kw).item() == pytest.approx(100.0 * 0.01 / (1 + h * h * 100.0 * a + h * 1.0 * a), rel=1e-6)
    assert m.compute(target_pos=[[1.0]], **kw).item() == 4.0  # clamped at the solver's limit
    with pytest.raises(ValueError, match="needs dt="):
        m.compute(joint_pos=[[0.0]], joint_vel=[[0.0]], target_pos=[[1.0]])


def test_input_shape_errors_name_the_input():
    m = ag.IdealPDActuatorCfg(stiffness=1.0).build(joint_names=JOINTS, num_envs=2)
    with pytest.raises(ValueError, match=r"joint_vel must have shape \(2, 4\)"):
        m.compute(joint_pos=zeros(), joint_vel=np.zeros((4,)))
    with pytest.raises(ValueError, match="target_pos"):
        m.compute(joint_pos=zeros(), joint_vel=zeros(), target_pos=torch.zeros(2, 3))


def test_check_finite_mode_names_first_bad_input():
    m = ag.IdealPDActuatorCfg(stiffness=1.0).build(joint_names=JOINTS, num_envs=2, check_finite=True)
    bad = zeros()
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match=r"target_pos\[env 1, joint 'FR_hip'\] is nan"):
        m.compute(joint_pos=zeros(), joint_vel=zeros(), target_pos=bad)
    # off by default: no host-side inspection in the hot path
    m2 = ag.IdealPDActuatorCfg(stiffness=1.0).build(joint_names=JOINTS, num_envs=2)
    assert torch.isnan(m2.compute(joint_pos=zeros(), joint_vel=zeros(), target_pos=bad)[1, 2])
    # outputs are checked too (inf * 0 gain of an infinite target)
    m3 = ag.IdealPDActuatorCfg(stiffness=1.0, actuator_effort_limit=math.inf).build(joint_names=JOINTS, num_envs=2, check_finite=True)
    big = np.full((2, 4), 3e38, np.float32)
    with pytest.raises(ValueError, match=r"computed_effort\[env 0, joint 'FL_hip'\] is inf"):
        m3.compute(joint_pos=-big, joint_vel=zeros(), target_pos=big)


def test_returned_effort_is_fresh():
    m = ag.IdealPDActuatorCfg(stiffness=1.0).build(joint_names=["j"])
    a = m.compute(joint_pos=[[0.0]], joint_vel=[[0.0]], target_pos=[[1.0]])
    m.compute(joint_pos=[[0.0]], joint_vel=[[0.0]], target_pos=[[2.0]])
    assert a.item() == 1.0 and m.applied_effort.item() == 2.0


def test_unknown_parameter_name():
    m = ag.IdealPDActuatorCfg(stiffness=1.0).build(joint_names=["j"])
    with pytest.raises(KeyError, match="unknown parameter 'gain'"):
        m.parameter("gain")


def test_any_named_model_takes_a_delay():
    m = ag.DCMotorCfg(stiffness=1.0, saturation_effort=10.0, actuator_velocity_limit=5.0, min_delay=1, max_delay=1).build(joint_names=["j"])
    outs = [m.compute(joint_pos=[[0.0]], joint_vel=[[0.0]], target_pos=[[v]]).item() for v in (1.0, 2.0, 3.0)]
    assert outs == [1.0, 1.0, 2.0]
    assert m.parameter("max_delay").item() == 1 and "delay_steps" in m.parameters()


def test_composed_cfg_puts_any_recipe_into_a_collection():
    cfg = ag.ComposedActuatorCfg(joint_names_expr=["FL_.*"], drive=ag.DrivePID(kp=2.0, ki=10.0), clamping=[ag.ClampingMaxEffort(max_effort=1.5)])
    coll = ag.ActuatorCollection({"pid": cfg, "rest": ag.IdealPDActuatorCfg(joint_names_expr=["FR_.*"], stiffness=1.0)},
                                 joint_names=JOINTS, num_envs=1)
    coll.target_command.set_position_index(value=np.full((1, 4), 0.5), full_data=True)
    out = coll.compute(joint_pos=np.zeros((1, 4)), joint_vel=np.zeros((1, 4)), dt=0.1)
    # PID: 2*0.5 + 10*(0.5*0.1) = 1.5 (at the clamp); PD: 0.5
    np.testing.assert_allclose(out.numpy(), [[1.5, 1.5, 0.5, 0.5]])
    with pytest.raises(ValueError, match="drive must be a Drive"):
        ag.ComposedActuatorCfg(drive=None).build(joint_names=JOINTS)
