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
