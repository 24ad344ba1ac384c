"""MujocoBackend: joint discovery, zero-copy state, efforts on DOFs, mass terms, position servos."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

from actuator_gym.backends import JointInfo, PhysicsBackend
from actuator_gym.backends.mujoco import MujocoBackend, actuated_joints, joint_info, one_dof_joint_names

# a free-floating base (7 qpos / 6 dof) then two hinges and a slide; one motor with a ctrlrange and
# gear that must NOT affect efforts written by the backend. No gravity, no damping: exact dynamics.
XML = """
<mujoco>
  <compiler angle="radian"/>
  <option timestep="0.01" gravity="0 0 0" integrator="Euler"/>
  <worldbody>
    <body name="base">
      <freejoint name="root"/>
      <geom type="sphere" size="0.1" mass="1"/>
    </body>
    <body name="arm" pos="0 0 1">
      <joint name="h1" type="hinge" axis="0 0 1" range="-1 2" limited="true" armature="0.5"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.02" mass="0.0001"/>
      <body name="fore" pos="0.5 0 0">
        <joint name="h2" type="hinge" axis="0 0 1" ref="0.3"/>
        <geom type="sphere" size="0.01" mass="0.0001"/>
      </body>
    </body>
    <body name="cart" pos="0 2 0">
      <joint name="s1" type="slide" axis="1 0 0" armature="2.0"/>
      <geom type="box" size="0.1 0.1 0.1" mass="0.0001"/>
    </body>
  </worldbody>
  <actuator>
    <motor joint="h1" gear="50" ctrlrange="-0.1 0.1" ctrllimited="true"/>
    <motor joint="s1" gear="1"/>
  </actuator>
</mujoco>
"""


@pytest.fixture
def sim():
    model = mujoco.MjModel.from_xml_string(XML)
    return model, mujoco.MjData(model)


def test_joint_info_reads_names_addresses_ranges_and_defaults(sim):
    model, _ = sim
    assert one_dof_joint_names(model) == ["h1", "h2", "s1"]
    info = joint_info(model)
    assert isinstance(info, JointInfo) and len(info) == 3
    assert info.names == ("h1", "h2", "s1")
    assert info.qpos_adr.tolist() == [7, 8, 9] and info.dof_adr.tolist() == [6, 7, 8]
    assert info.kind == ("hinge", "hinge", "slide")
    assert info.range[0].tolist() == [-1.0, 2.0]
    assert np.isinf(info.range[1]).all() and np.isinf(info.range[2]).all()
    assert info.default_pos.tolist() == pytest.approx([0.0, 0.3, 0.0])  # h2 has ref=0.3
    sub = joint_info(model, ["s1", "h1"])
    assert sub.names == ("s1", "h1") and sub.dof_adr.tolist() == [8, 6]


def test_joint_info_rejects_unknown_and_multi_dof_joints(sim):
    model, _ = sim
    with pytest.raises(ValueError, match="'nope' is not a joint"):
        joint_info(model, ["h1", "nope"])
    with pytest.raises(ValueError, match="'root' is a .*FREE.* no single DOF"):
        joint_info(model, ["root"])


def test_actuated_joints_in_actuator_order(sim):
    model, _ = sim
    assert actuated_joints(model) == [(0, "h1"), (1, "s1")]


def test_state_views_are_zero_copy_when_contiguous(sim):
    model, data = sim
    be = MujocoBackend(model, data)
    assert isinstance(be, PhysicsBackend) and be.num_envs == 1 and be.physics_dt == 0.01
    data.qpos[7:10] = [0.1, 0.2, 0.3]
    data.qvel[6:9] = [1.0, 2.0, 3.0]
    q, qd = be.joint_pos(), be.joint_vel()
    assert q.shape == (1, 3) and qd.shape == (1, 3)
    assert np.shares_memory(q, data.qpos) and np.shares_memory(qd, data.qvel)
    assert q.tolist() == [[0.1, 0.2, 0.3]] and qd.tolist() == [[1.0, 2.0, 3.0]]
    data.qpos[8] = -4.0  # live view
    assert be.joint_pos()[0, 1] == -4.0


def test_non_contiguous_order_reads_and_writes_the_right_dofs(sim):
    model, data = sim
    be = MujocoBackend(model, data, ["s1", "h1"])
    data.qpos[7:10] = [0.1, 0.2, 0.3]
    data.qvel[6:9] = [1.0, 2.0, 3.0]
    assert be.joint_pos().tolist() == [[0.3, 0.1]] and be.joint_vel().tolist() == [[3.0, 1.0]]
    data.qfrc_applied[:] = 7.0
    be.set_joint_effort(np.array([[-5.0, 4.0]]))
    assert data.qfrc_applied.tolist() == [7.0] * 6 + [4.0, 7.0, -5.0]


def test_efforts_are_generalized_forces_that_bypass_ctrlrange_and_gear(sim):
    model, data = sim
    be = MujocoBackend(model, data, ["h1", "s1"])
    mujoco.mj_forward(model, data)
    be.set_joint_effort(np.array([[30.0, 8.0]]))  # 30 N·m >> gear * ctrlrange = 5 N·m
    inv_mass, bias = be.mass_matrix_terms([0, 1])
    assert inv_mass.shape == (1, 2, 2) and bias.shape == (1, 2) and bias.tolist() == [[0.0, 0.0]]
    assert 1.0 / inv_mass[0, 0, 0] == pytest.approx(0.5, rel=1e-3)  # armature dominates the arm
    assert 1.0 / inv_mass[0, 1, 1] == pytest.approx(2.0 + 0.0001)  # armature + cart mass
    assert inv_mass[0, 0, 1] == 0.0
    t0 = data.time
    be.step()
    assert data.time == pytest.approx(t0 + 0.01)
    # Euler from rest without gravity: qd = M^-1 tau dt, the full 30 N·m and 8 N reached the DOFs
    assert be.joint_vel()[0, 0] == pytest.approx(30.0 * inv_mass[0, 0, 0] * 0.01, rel=1e-9)
    assert be.joint_vel()[0, 1] == pytest.approx(8.0 / 2.0001 * 0.01, rel=1e-9)
    assert data.actuator_force.tolist() == [0.0, 0.0]  # nothing went through the motors


def test_torch_efforts_are_accepted(sim):
    import torch
    model, data = sim
    be = MujocoBackend(model, data, ["h1"])
    be.set_joint_effort(torch.tensor([[1.5]], dtype=torch.float32))
    assert data.qfrc_applied[6] == 1.5
