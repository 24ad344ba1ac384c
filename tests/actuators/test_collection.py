"""ActuatorCollection: grouping, errors, read-only mapping, commands, telemetry, resets."""

import warnings

import numpy as np
import pytest
import torch

import actuator_gym as ag

JOINTS = ["FL_hip", "FL_knee", "FR_hip", "FR_knee", "tail"]


def coll(n=3, **kw):
    cfgs = {
        "hips": ag.IdealPDActuatorCfg(joint_names_expr=[".*_hip"], stiffness=10.0, actuator_effort_limit=5.0),
        "knees": ag.DCMotorCfg(joint_names_expr=[".*_knee"], stiffness=20.0, saturation_effort=30.0,
                               actuator_effort_limit=25.0, actuator_velocity_limit=10.0),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ag.ActuatorCollection(cfgs, joint_names=JOINTS, num_envs=n, seed=0, **kw)


def test_grouping_and_articulation_order():
    c = coll()
    assert list(c) == ["hips", "knees"] and len(c) == 2
    assert c.joint_ids("hips") == [0, 2] and c.joint_ids("knees") == [1, 3]
    assert c["knees"].joint_names == ("FL_knee", "FR_knee")
    assert c.passive_joints == ("tail",)
    c.target_command.set_position_index(value=np.ones((3, 5)), full_data=True)
    out = c.compute(joint_pos=np.zeros((3, 5)), joint_vel=np.zeros((3, 5)), dt=0.01)
    np.testing.assert_allclose(out.numpy(), [[5.0, 20.0, 5.0, 20.0, 0.0]] * 3)
    np.testing.assert_allclose(c.computed_effort.numpy(), [[10.0, 20.0, 10.0, 20.0, 0.0]] * 3)
    np.testing.assert_allclose(c.output_command.effort.numpy(), out.numpy())
    np.testing.assert_allclose(c.output_command.position.numpy(), [[1.0, 1.0, 1.0, 1.0, 0.0]] * 3)


def test_passive_joint_warning():
    with pytest.warns(UserWarning, match=r"\['tail'\].*passive"):
        ag.ActuatorCollection({"legs": ag.IdealPDActuatorCfg(joint_names_expr=["F.*"])}, joint_names=JOINTS)


def test_overlap_and_no_match_errors():
    with pytest.raises(ValueError, match=r"joint 'FL_hip' is claimed by groups 'a' and 'b'"):
        ag.ActuatorCollection({"a": ag.IdealPDActuatorCfg(joint_names_expr=["FL_.*"]),
                               "b": ag.IdealPDActuatorCfg(joint_names_expr=[".*_hip"])}, joint_names=JOINTS)
    with pytest.raises(ValueError, match=r"group 'arm'.*matches no joint; available joints: \['FL_hip'"):
        ag.ActuatorCollection({"arm": ag.IdealPDActuatorCfg(joint_names_expr=["arm_.*"])}, joint_names=JOINTS)
    with pytest.raises(ValueError, match="invalid regular expression"):
        ag.ActuatorCollection({"x": ag.IdealPDActuatorCfg(joint_names_expr=["(unclosed"])}, joint_names=JOINTS)


def test_read_only_mapping():
    c = coll()
    with pytest.raises(TypeError):
        c["hips"] = c["knees"]
    with pytest.raises(TypeError):
        del c["hips"]
    with pytest.raises(KeyError, match="unknown actuator group 'arms'"):
        c["arms"]


def test_command_setters_index_and_mask():
    c = coll(n=3)
    tc = c.target_command
    tc.set_velocity_index(value=[[1.0, 2.0]], joint_ids=[4, 0], env_ids=[2])
    assert tc.velocity[2, 4] == 1.0 and tc.velocity[2, 0] == 2.0 and tc.velocity.abs().sum() == 3.0
    full = torch.arange(15, dtype=torch.float32).reshape(3, 5)
    tc.set_effort_index(value=full, joint_ids=[1], env_ids=[0, 2], full_data=True)
    assert tc.effort[0, 1] == 1.0 and tc.effort[2, 1] == 11.0 and tc.effort[1, 1] == 0.0
    tc.set_position_mask(value=full, joint_mask=np.array([True, False, False, False, True]), env_mask=np.array([False, True, False]))
    assert tc.position[1, 0] == 5.0 and tc.position[1, 4] == 9.0 and tc.position.abs().sum() == 14.0
    with pytest.raises(ValueError, match="repeated indices"):
        tc.set_position_index(value=np.zeros((3, 2)), joint_ids=[1, 1])
    with pytest.raises(ValueError, match=r"value must have shape \(3, 2\)"):
        tc.set_position_index(value=np.zeros((2, 2)), joint_ids=[0, 1])
    with pytest.raises(ValueError, match=r"env_mask must be a boolean array of shape \(3,\)"):
        tc.set_position_mask(value=full, env_mask=np.array([1, 0, 1]))
    with pytest.raises(TypeError):
        tc.set_position_index(np.zeros((3, 5)))  # keyword-only


def test_compute_input_shape_error():
    c = coll()
    with pytest.raises(ValueError, match=r"joint_pos must have shape \(3, 5\)"):
        c.compute(joint_pos=np.zeros((3, 4)), joint_vel=np.zeros((3, 5)))


def test_reset_isolation_across_groups():
    cfgs = {"all": ag.DelayedPDActuatorCfg(joint_names_expr=[".*"], stiffness=ag.randomization.Uniform(1.0, 2.0),
                                           min_delay=0, max_delay=2)}
    c = ag.ActuatorCollection(cfgs, joint_names=JOINTS, num_envs=4, seed=1)
    before = c.parameters()["all"]
    c.reset(env_ids=[2])
    after = c.parameters()["all"]
    for k in before:
        keep = torch.tensor([True, True, False, True])
        assert torch.equal(before[k][keep], after[k][keep])
    assert not torch.equal(before["stiffness"][2], after["stiffness"][2])


def test_collection_seed_reproducible():
    def make(seed):
        cfgs = {"all": ag.IdealPDActuatorCfg(stiffness=ag.randomization.Uniform(1.0, 2.0))}
        return ag.ActuatorCollection(cfgs, joint_names=JOINTS, num_envs=4, seed=seed)
    a, b = make(3), make(3)
    assert torch.equal(a.parameters()["all"]["stiffness"], b.parameters()["all"]["stiffness"])
    a.seed(11), b.seed(11)
    a.reset(), b.reset()
    assert torch.equal(a.parameters()["all"]["stiffness"], b.parameters()["all"]["stiffness"])
    assert not torch.equal(a.parameters()["all"]["stiffness"], make(4).parameters()["all"]["stiffness"])


# -- implicit (Stable-PD) effort mode through the collection ---------------------------------------
def _implicit_coll(n=2, mode_knees="explicit"):
    # hips (joints 0, 2: non-contiguous) in implicit effort mode, knees (1, 3) explicit unless asked
    cfgs = {
        "hips": ag.IdealPDActuatorCfg(joint_names_expr=[".*_hip"], stiffness=1e4, damping=10.0, effort_mode="implicit"),
        "knees": ag.DCMotorCfg(joint_names_expr=[".*_knee"], stiffness=2e3, damping=5.0, saturation_effort=300.0,
                               actuator_effort_limit=250.0, actuator_velocity_limit=10.0, effort_mode=mode_knees),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ag.ActuatorCollection(cfgs, joint_names=JOINTS, num_envs=n, seed=0, dtype=torch.float64)


def _spd(n, j, seed=0):
    g = torch.Generator().manual_seed(seed)
    L = torch.randn(n, j, j, generator=g, dtype=torch.float64)
    return (L @ L.transpose(1, 2) + 0.5 * torch.eye(j, dtype=torch.float64)).numpy()


def test_needs_mass_matrix_flags_implicit_effort_groups_only():
    assert not coll().needs_mass_matrix and coll().stable_pd_groups == []
    c = _implicit_coll()
    assert c.needs_mass_matrix and c.stable_pd_groups == ["hips"]
    assert c["hips"].effort_mode == "implicit" and c["knees"].effort_mode == "explicit"


def test_implicit_group_gets_the_rows_and_columns_of_its_joints():
    n, h = 2, 0.01
    c = _implicit_coll(n)
    A = _spd(n, 5)
    b = np.random.default_rng(1).normal(size=(n, 5))
    q = np.random.default_rng(2).normal(size=(n, 5)) * 0.1
    qd = np.random.default_rng(3).normal(size=(n, 5))
    tq = np.ones((n, 5))
    c.target_command.set_position_index(value=tq, full_data=True)
    out = c.compute(joint_pos=q, joint_vel=qd, dt=h, inverse_mass=A, bias_force=b).numpy().copy()
    # hips: the closed form of the coupled implicit PD on the (0, 2) block of A and entries of b
    ids = [0, 2]
    Ab, bb = A[:, ids][:, :, ids], b[:, ids]
    v0 = qd[:, ids] - h * np.einsum("nij,nj->ni", Ab, bb)
    f0 = 1e4 * (tq[:, ids] - q[:, ids] - h * v0) + 10.0 * (0.0 - v0)
    Mh = np.eye(2) + h * (h * 1e4 + 10.0) * Ab
    np.testing.assert_allclose(out[:, ids], np.linalg.solve(Mh, f0[..., None])[..., 0], rtol=1e-9)
    # knees (explicit): the DC-motor clamp of PD at the measured state, no mass-matrix effect
    k = [1, 3]
    pd = 2e3 * (1.0 - q[:, k]) - 5.0 * qd[:, k]
    hi = np.minimum(300.0 * (1 - qd[:, k] / 10.0), 250.0)
    lo = np.maximum(300.0 * (-1 - qd[:, k] / 10.0), -250.0)
    np.testing.assert_allclose(out[:, k], np.clip(pd, lo, hi), rtol=1e-12)
    assert (out[:, 4] == 0.0).all()  # passive
    # the same block handed to a standalone model gives the same effort; explicit at these gains is far larger
    solo = ag.IdealPDActuatorCfg(stiffness=1e4, damping=10.0, effort_mode="implicit").build(
        joint_names=["FL_hip", "FR_hip"], num_envs=n, dtype=torch.float64)
    ref = solo.compute(joint_pos=q[:, ids], joint_vel=qd[:, ids], target_pos=tq[:, ids], dt=h, inverse_mass=Ab, bias_force=bb)
    np.testing.assert_allclose(out[:, ids], ref.numpy(), rtol=1e-12)
    assert np.abs(out[:, ids]).max() < 0.5 * np.abs(1e4 * (tq[:, ids] - q[:, ids])).max()


def test_two_implicit_groups_and_torch_mass_terms():
    n, h = 3, 0.005
    c = _implicit_coll(n, mode_knees="implicit")
    A = torch.as_tensor(_spd(n, 5, seed=4))
    c.target_command.set_position_index(value=np.ones((n, 5)), full_data=True)
    z = np.zeros((n, 5))
    out = c.compute(joint_pos=z, joint_vel=z, dt=h, inverse_mass=A).numpy().copy()
    ids = [0, 2]  # hips: the unclamped closed form on their block
    Mh = np.eye(2) + h * (h * 1e4 + 10.0) * A.numpy()[:, ids][:, :, ids]
    np.testing.assert_allclose(out[:, ids], np.linalg.solve(Mh, np.full((n, 2, 1), 1e4))[..., 0], rtol=1e-6)
    # knees: the DC-motor clamp is active at the predicted speed; a standalone model on the
    # (1, 3) block solves the same coupled system
    k = [1, 3]
    solo = c["knees"].cfg.build(joint_names=["FL_knee", "FR_knee"], num_envs=n, dtype=torch.float64)
    ref = solo.compute(joint_pos=z[:, k], joint_vel=z[:, k], target_pos=np.ones((n, 2)), dt=h,
                       inverse_mass=A[:, k][:, :, k])
    np.testing.assert_allclose(out[:, k], ref.numpy(), rtol=1e-9)
    assert np.abs(out[:, k]).max() <= 250.0 + 1e-9 and not np.allclose(out[:, k], 250.0)


def test_implicit_effort_errors_name_group_and_shape():
    c = _implicit_coll(2)
    z = np.zeros((2, 5))
    with pytest.raises(ValueError, match=r"groups \['hips'\] use effort_mode='implicit' and need inverse_mass= \(2, 5, 5\)"):
        c.compute(joint_pos=z, joint_vel=z, dt=0.01)
    with pytest.raises(ValueError, match=r"inverse_mass must have shape \(2, 5, 5\).*got \(2, 2, 2\)"):
        c.compute(joint_pos=z, joint_vel=z, dt=0.01, inverse_mass=np.ones((2, 2, 2)))
    with pytest.raises(ValueError, match=r"bias_force must have shape \(2, 5\).*got \(2, 2\)"):
        c.compute(joint_pos=z, joint_vel=z, dt=0.01, inverse_mass=_spd(2, 5), bias_force=np.ones((2, 2)))
    # explicit-only collections ignore the terms (nothing to slice, nothing computed differently)
    e = coll(n=2)
    e.target_command.set_position_index(value=np.ones((2, 5)), full_data=True)
    a = e.compute(joint_pos=z, joint_vel=z, dt=0.01).clone()
    assert torch.equal(e.compute(joint_pos=z, joint_vel=z, dt=0.01, inverse_mass=np.ones((7, 7))), a)


def test_effort_mode_field_validation():
    with pytest.raises(ValueError, match=r"effort_mode must be one of \['explicit', 'implicit'\], got 'stable'"):
        ag.IdealPDActuatorCfg(effort_mode="stable")
    with pytest.raises(NotImplementedError, match=r"ActuatorNetMLPCfg: effort_mode='implicit' is not supported: a learned"):
        ag.ActuatorNetMLPCfg(network_file="net.onnx", saturation_effort=1.0, actuator_velocity_limit=1.0,
                             effort_mode="implicit").build(joint_names=["a"])
    with pytest.raises(ValueError, match=r"ActuatorNetLSTMCfg: effort_mode='implicit' is not supported"):
        ag.ActuatorNetLSTMCfg(network_file="net.pt", saturation_effort=1.0, actuator_velocity_limit=1.0).build(
            joint_names=["a"], effort_mode="implicit")
    with pytest.raises(ValueError, match=r"ImplicitActuatorCfg: effort_mode='implicit' is not supported: .*solver-side"):
        ag.ImplicitActuatorCfg(stiffness=1.0, effort_mode="implicit").build(joint_names=["a"])
    # every PD-based model builds in either mode; build(effort_mode=) overrides the field
    for cfg in (ag.DCMotorCfg(saturation_effort=1.0, actuator_velocity_limit=1.0), ag.DelayedPDActuatorCfg(max_delay=1),
                ag.RemotizedPDActuatorCfg(joint_parameter_lookup=[[0.0, 1.0, 5.0], [1.0, 1.0, 6.0]])):
        assert cfg.build(joint_names=["a"]).effort_mode == "explicit"
        assert cfg.build(joint_names=["a"], effort_mode="implicit").effort_mode == "implicit"
