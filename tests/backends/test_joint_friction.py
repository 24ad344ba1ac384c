"""The joint loads of friction-budget groups (BAM servos) on the two MuJoCo backends
(actuator_gym/backends/mujoco_friction.py): the batch, which cannot bind MuJoCo's constraint rows,
recomputes the joints' dry-friction force from MuJoCo's constraint law and must give the loads one
MjData gives from ``efc_force``, on the quadruped with contacts, joint limits and friction rows."""

import mujoco
import numpy as np
import pytest

from actuator_gym.backends.mujoco import MujocoBackend
from actuator_gym.backends.mujoco_batch import MujocoBatchBackend
from actuator_gym.tasks.quadruped_model import quadruped_mjcf


def test_batch_loads_equal_one_mjdata_loads():
    batch = MujocoBatchBackend(mujoco.MjModel.from_xml_string(quadruped_mjcf()), 2)
    model = mujoco.MjModel.from_xml_string(quadruped_mjcf())
    data = mujoco.MjData(model)
    single = MujocoBackend(model, data)
    qpos = np.tile(model.qpos0, (2, 1))
    qpos[:, 2] += 0.05  # dropped onto its feet: contacts from the first steps on
    batch.reset_envs(None, qpos=qpos)
    data.qpos[:] = qpos[0]
    mujoco.mj_forward(model, data)
    J = len(batch.joints)
    rng = np.random.default_rng(0)
    worst, frictional = 0.0, 0
    for k in range(300):
        loads = batch.joint_loads()
        expected = single.joint_loads()
        worst = max(worst, np.abs(loads[0] - expected[0]).max(), np.abs(loads[1] - expected[0]).max())
        frictional += int((data.efc_type == mujoco.mjtConstraint.mjCNSTR_FRICTION_DOF).sum() > 0)
        fl = np.full((2, J), 0.3 + 0.2 * np.sin(k / 20))
        damping = np.full((2, J), 0.05)
        batch.set_joint_friction(np.arange(J), fl, damping)
        single.set_joint_friction(np.arange(J), fl[:1], damping[:1])
        effort = rng.normal(0.0, 3.0, (1, J))
        batch.set_joint_effort(np.repeat(effort, 2, 0))
        single.set_joint_effort(effort)
        batch.step(1, derived=False)
        single.step()
    assert frictional > 250 and data.ncon > 0  # friction rows and contacts were there
    assert worst < 1e-9, worst
    np.testing.assert_array_equal(batch.qpos[0], data.qpos)  # the same physics: friction written alike


def test_batch_with_noslip_is_refused():
    model = mujoco.MjModel.from_xml_string(quadruped_mjcf())
    model.opt.noslip_iterations = 2
    with pytest.raises(ValueError, match="noslip_iterations=2"):
        MujocoBatchBackend(model, 1).joint_loads()


def test_a_state_without_joint_friction_is_refused_naming_the_groups():
    """A physics state that cannot write per-env joint friction (the Warp backends' device state) refuses
    BAM groups when the engine is built, naming them; other groups build no participant at all."""
    from actuator_gym import ActuatorCollection, BAMServoCfg, IdealPDActuatorCfg
    from actuator_gym._checks import UnsupportedError
    from actuator_gym.runtime.friction import JointFriction

    coll = ActuatorCollection({"servo": BAMServoCfg(joint_names_expr=["a"], motor="xl330", model="m1"),
                               "pd": IdealPDActuatorCfg(joint_names_expr=["b"], stiffness=1.0)}, joint_names=["a", "b"])
    with pytest.raises(UnsupportedError, match=r"groups \['servo'\] are BAM servos.*object cannot"):
        JointFriction.of(coll, object())
    pd_only = ActuatorCollection({"pd": IdealPDActuatorCfg(joint_names_expr=["a"], stiffness=1.0)}, joint_names=["a"])
    assert JointFriction.of(pd_only, object()) is None
