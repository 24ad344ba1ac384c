"""One conformance suite for every physics backend: the contract of ``actuator_gym.backends.protocols``
checked on MujocoBackend (one MjData), the batched MuJoCo backend, MuJoCo-Warp and Newton (both on
Warp's CPU device), each built once for the module.

The model: a hinge arm and a slide cart with gravity disabled and no damping, so one substep with
an effort ``tau`` is the hand-computed free motion ``qd1 = qd0 + dt * tau / I`` (semi-implicit
Euler: ``q1 = q0 + dt * qd1``), ``I`` the joint-space inertia about each axis (armature included):
the arm's ``I = Iyy + m L^2 + armature``, the cart's ``I = m + armature``; the inverse mass matrix
is ``diag(1 / I)``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import actuator_gym  # noqa: F401  (first: chooses MUJOCO_GL=egl before mujoco is imported)
import mujoco  # noqa: E402

from actuator_gym.backends import (  # noqa: E402
    BatchedBackend,
    DeviceBackend,
    JointBackend,
    make_backend,
)
from actuator_gym.backends.mujoco import MujocoBackend  # noqa: E402
from actuator_gym.backends.mujoco_batch import gl_available  # noqa: E402

XML = """<mujoco model="contract">
  <option timestep="0.01"><flag gravity="disable"/></option>
  <worldbody>
    <light pos="0 -2 3" dir="0 0.5 -1"/>
    <body name="arm" pos="0 0 1">
      <joint name="swing" type="hinge" axis="0 1 0" armature="0.04"/>
      <inertial pos="0 0 -0.5" mass="2" diaginertia="0.01 0.01 0.01"/>
      <geom name="rod" type="capsule" fromto="0 0 0 0 0 -0.5" size="0.03" contype="0" conaffinity="0" mass="0"/>
    </body>
    <body name="cart" pos="1 0 1">
      <joint name="track" type="slide" axis="1 0 0" armature="0.1"/>
      <inertial pos="0 0 0" mass="1.5" diaginertia="0.02 0.02 0.02"/>
      <geom name="box" type="box" size="0.1 0.1 0.1" contype="0" conaffinity="0" mass="0"/>
    </body>
  </worldbody>
</mujoco>"""
DT = 0.01
ARM, CART = 1, 2  # body ids
INERTIA = np.array([0.01 + 2.0 * 0.5**2 + 0.04, 1.5 + 0.1])  # [kg·m², kg] about each joint's axis
N = 3  # worlds of the batched backends
Q0 = np.array([[0.2, 0.05], [-0.1, 0.0], [0.0, -0.3]])  # [rad, m]
QD0 = np.array([[0.3, -0.2], [0.0, 0.1], [-0.5, 0.4]])  # [rad/s, m/s]
TAU = np.array([[1.0, -2.0], [0.5, 0.7], [-1.5, 3.0]])  # [N·m, N]

KINDS = ["MujocoBackend", "MujocoBatchBackend", "MujocoWarpBackend", "NewtonBackend"]
BATCHED = KINDS[1:]
FLOAT32 = {"MujocoWarpBackend", "NewtonBackend"}  # the Warp engines compute in float32
TOL = {"MujocoBackend": 1e-12, "MujocoBatchBackend": 1e-12, "MujocoWarpBackend": 1e-6, "NewtonBackend": 1e-6}


def _build(kind: str):
    model = mujoco.MjModel.from_xml_string(XML)
    if kind == "MujocoBackend":
        return MujocoBackend(model, mujoco.MjData(model))
    name = {"MujocoBatchBackend": "mujoco", "MujocoWarpBackend": "mujoco_warp", "NewtonBackend": "newton"}[kind]
    return make_backend(name, model, N, "cpu", mjcf=XML)  # through the registry, as the task layer does


@pytest.fixture(scope="module")
def built():
    """The backends of this module, each built once on first use (Warp model builds are slowish)."""
    cache: dict[str, object] = {}
    yield cache
    for be in cache.values():
        if hasattr(be, "close"):
            be.close()


def _get(built: dict, kind: str):
    if kind not in built:
        built[kind] = _build(kind)
        assert type(built[kind]).__name__ == kind
    return built[kind]


@pytest.fixture(params=KINDS)
def backend(request, built):
    return _get(built, request.param)


@pytest.fixture(params=BATCHED)
def batched(request, built):
    return _get(built, request.param)


def _set_state(be, q: np.ndarray, qd: np.ndarray) -> None:
    """All worlds to ``q (n, 2)``, ``qd (n, 2)`` with zero effort, through each kind's own path."""
    if isinstance(be, BatchedBackend):
        be.reset_envs(None, qpos=q, qvel=qd)
    else:  # one MjData that the caller (Gymnasium's env) owns
        d = be.data
        mujoco.mj_resetData(be.model, d)
        d.qpos[:], d.qvel[:] = q[0], qd[0]
        mujoco.mj_forward(be.model, d)


def _tol(be) -> float:
    return TOL[type(be).__name__]


def _as_state(be, x: np.ndarray) -> np.ndarray:
    """``x`` rounded as the engine stores it (float32 on the Warp engines)."""
    return x.astype(np.float32).astype(np.float64) if type(be).__name__ in FLOAT32 else x


# -- the protocols --------------------------------------------------------------------------------
def test_backend_is_an_instance_of_its_protocols(backend):
    kind = type(backend).__name__
    assert isinstance(backend, JointBackend)
    assert isinstance(backend, BatchedBackend) == (kind != "MujocoBackend")
    assert isinstance(backend, DeviceBackend) == (kind in FLOAT32)


def test_joints_names_order_and_static_attributes(backend):
    assert backend.joint_names == ("swing", "track")  # model order
    ji = backend.joints
    assert len(ji) == 2 and ji.kind == ("hinge", "slide")
    np.testing.assert_array_equal(ji.qpos_adr, [0, 1])
    np.testing.assert_array_equal(ji.dof_adr, [0, 1])
    np.testing.assert_array_equal(ji.default_pos, [0.0, 0.0])
    assert np.all(np.isinf(ji.range))  # unlimited joints
    assert ji.index(["track", "swing"]) == [1, 0]
    assert backend.physics_dt == pytest.approx(DT)
    assert backend.num_envs == (1 if type(backend).__name__ == "MujocoBackend" else N)
    assert backend.device == torch.device("cpu")


def test_joint_state_shapes_and_dtypes(backend):
    n = backend.num_envs
    _set_state(backend, Q0[:n], QD0[:n])
    q, qd = backend.joint_pos(), backend.joint_vel()
    dtype = np.float32 if type(backend).__name__ in FLOAT32 else np.float64
    assert isinstance(q, np.ndarray) and q.shape == (n, 2) and q.dtype == dtype
    assert isinstance(qd, np.ndarray) and qd.shape == (n, 2) and qd.dtype == dtype
    np.testing.assert_allclose(q, Q0[:n], atol=_tol(backend))
    np.testing.assert_allclose(qd, QD0[:n], atol=_tol(backend))


# -- effort and substep: the hand-computed free motion ----------------------------------------------
def test_effort_then_step_is_the_free_motion_and_the_effort_is_held(backend):
    n = backend.num_envs
    _set_state(backend, Q0[:n], QD0[:n])
    backend.set_joint_effort(TAU[:n].copy())
    backend.step()
    qd1 = _as_state(backend, QD0[:n]) + DT * TAU[:n] / INERTIA
    q1 = _as_state(backend, Q0[:n]) + DT * qd1
    np.testing.assert_allclose(backend.joint_vel(), qd1, rtol=0, atol=_tol(backend))
    np.testing.assert_allclose(backend.joint_pos(), q1, rtol=0, atol=_tol(backend))
    backend.step()  # the effort is held until set again
    np.testing.assert_allclose(backend.joint_vel(), qd1 + DT * TAU[:n] / INERTIA, rtol=0, atol=2 * _tol(backend))


def test_torch_effort_is_accepted(backend):
    n = backend.num_envs
    _set_state(backend, Q0[:n], QD0[:n])
    backend.set_joint_effort(torch.as_tensor(TAU[:n]))
    backend.step()
    np.testing.assert_allclose(backend.joint_vel(), _as_state(backend, QD0[:n]) + DT * TAU[:n] / INERTIA,
                               rtol=0, atol=_tol(backend))


def test_wrong_effort_shape_is_a_value_error(batched):
    with pytest.raises(ValueError, match="shape"):
        batched.set_joint_effort(np.zeros((N, 3)))


# -- mass-matrix terms ---------------------------------------------------------------------------
def test_mass_matrix_terms_are_the_analytic_inverse_inertia(backend):
    n = backend.num_envs
    _set_state(backend, Q0[:n], QD0[:n])
    if type(backend).__name__ in FLOAT32:
        with pytest.raises(NotImplementedError):
            backend.mass_matrix_terms([0, 1])
        return
    backend.set_joint_effort(TAU[:n].copy())
    backend.step()  # terms of the current state, after a step
    A, b = backend.mass_matrix_terms([1, 0])  # in the order asked for
    assert A.shape == (n, 2, 2) and b.shape == (n, 2) and A.dtype == np.float64
    np.testing.assert_allclose(A, np.broadcast_to(np.diag(1.0 / INERTIA[::-1]), (n, 2, 2)), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(b, 0.0, atol=1e-12)  # no gravity; one DOF per body: no Coriolis
    with pytest.raises(ValueError, match="joint_ids"):
        backend.mass_matrix_terms([2])


# -- the batched contract ------------------------------------------------------------------------
def test_state_arrays_shapes(batched):
    assert batched.qpos.shape == (N, 2) and batched.qvel.shape == (N, 2)
    assert batched.xfrc_applied.shape == (N, 3, 6)


def test_reset_envs_restores_only_the_given_worlds(batched):
    batched.reset_envs(None, qpos=Q0, qvel=QD0)
    batched.set_joint_effort(TAU.copy())
    batched.xfrc_applied[:, CART, 0] = 0.5
    batched.step(3)
    before_q, before_qd = batched.qpos.copy(), batched.qvel.copy()
    q_new, qd_new = np.array([[0.7, -0.4]]), np.array([[-1.0, 2.0]])
    batched.reset_envs([1], qpos=q_new, qvel=qd_new)
    keep = [0, 2]
    np.testing.assert_array_equal(batched.qpos[keep], before_q[keep])
    np.testing.assert_array_equal(batched.qvel[keep], before_qd[keep])
    np.testing.assert_array_equal(batched.qpos[1], _as_state(batched, q_new[0]))
    np.testing.assert_array_equal(batched.qvel[1], _as_state(batched, qd_new[0]))
    assert np.all(batched.xfrc_applied[1] == 0.0) and batched.xfrc_applied[0, CART, 0] == 0.5
    # the reset world's effort is zero now; the others keep theirs
    batched.xfrc_applied[:] = 0.0
    batched.step()
    np.testing.assert_allclose(batched.qvel[1], _as_state(batched, qd_new[0]), rtol=0, atol=_tol(batched))
    np.testing.assert_allclose(batched.qvel[keep] - before_qd[keep], DT * TAU[keep] / INERTIA, rtol=0, atol=10 * _tol(batched))
    # a boolean mask, and defaults: qpos0 and zero velocity
    batched.reset_envs(np.array([True, False, False]))
    np.testing.assert_array_equal(batched.qpos[0], [0.0, 0.0])
    np.testing.assert_array_equal(batched.qvel[0], [0.0, 0.0])
    with pytest.raises(ValueError, match="env_ids"):
        batched.reset_envs([N])
    with pytest.raises(ValueError, match="shape"):
        batched.reset_envs([0, 1], qpos=np.zeros((1, 2)))


def test_body_wrench_pushes_the_cart(batched):
    batched.reset_envs(None, qpos=Q0, qvel=QD0)
    batched.set_joint_effort(np.zeros((N, 2)))
    force = np.array([2.0, -1.0, 4.0])  # [N] along x, at the cart's centre of mass
    batched.xfrc_applied[:, CART, 0] = force
    batched.step()
    batched.xfrc_applied[:] = 0.0
    np.testing.assert_allclose(batched.qvel[:, 1], _as_state(batched, QD0[:, 1]) + DT * force / INERTIA[1],
                               rtol=0, atol=_tol(batched))


def test_per_world_model_field_reaches_only_that_world(batched):
    mass = batched.model_field("body_mass")
    assert mass.shape == (N, 3)
    nominal = mass.copy()
    try:
        mass[1, ARM] *= 2.0  # I_arm = 0.01 + 4 * 0.25 + 0.04
        mass[1, CART] *= 2.0  # I_cart = 3 + 0.1
        batched.set_const([1])
        batched.reset_envs(None, qpos=Q0, qvel=np.zeros((N, 2)))
        batched.set_joint_effort(TAU.copy())
        batched.step()
        inertia = np.tile(INERTIA, (N, 1))
        inertia[1] = [0.01 + 4.0 * 0.5**2 + 0.04, 3.0 + 0.1]
        np.testing.assert_allclose(batched.joint_vel(), DT * TAU / inertia, rtol=0, atol=_tol(batched))
    finally:
        mass[:] = nominal
        batched.set_const()


def test_field_is_live_and_describes_the_new_state(batched):
    batched.reset_envs(None, qpos=Q0, qvel=QD0)
    xpos = batched.field("xpos")
    assert xpos.shape == (N, 3, 3)
    np.testing.assert_allclose(xpos[:, CART, 0], 1.0 + Q0[:, 1], atol=_tol(batched))
    batched.set_joint_effort(TAU.copy())
    batched.step(derived=True)
    assert batched.field("xpos") is xpos or np.shares_memory(batched.field("xpos"), xpos)  # refreshed in place
    np.testing.assert_allclose(xpos[:, CART, 0], 1.0 + batched.qpos[:, 1], atol=_tol(batched))


def test_data_is_a_copy_of_one_world(batched):
    batched.reset_envs(None, qpos=Q0, qvel=QD0)
    d = batched.data(2)
    assert isinstance(d, mujoco.MjData)
    np.testing.assert_array_equal(d.qpos, batched.qpos[2])
    np.testing.assert_array_equal(d.qvel, batched.qvel[2])
    np.testing.assert_allclose(d.xpos[CART, 0], 1.0 + Q0[2, 1], atol=_tol(batched))  # forward=True
    d.qpos[:] = 9.0
    assert np.all(batched.qpos[2] != 9.0)


def test_render_draws_one_world(batched):
    if not gl_available():
        pytest.skip("no OpenGL backend (MUJOCO_GL=egl/osmesa)")  # the suite's conftest fails skips
    batched.reset_envs(None, qpos=Q0, qvel=QD0)
    img = batched.render(1, width=32, height=24)
    assert img.shape == (24, 32, 3) and img.dtype == np.uint8 and img.std() > 0
    with pytest.raises(ValueError, match="world_id"):
        batched.render(N)
    batched.close()
    batched.close()  # idempotent; the backend stays usable
    assert batched.render(0, width=16, height=16).shape == (16, 16, 3)


# -- the device contract (Warp backends, here on Warp's CPU device) ---------------------------------
def test_device_views_agree_with_the_host_state(batched):
    if not isinstance(batched, DeviceBackend):
        assert not hasattr(batched, "torch_joint_pos")
        return
    batched.reset_envs(None, qpos=Q0, qvel=QD0)
    q, qd = batched.torch_joint_pos(), batched.torch_joint_vel()
    assert q.shape == (N, 2) and q.dtype == torch.float32 and q.device == batched.device
    np.testing.assert_array_equal(q.numpy(), batched.joint_pos())
    np.testing.assert_array_equal(qd.numpy(), batched.joint_vel())
    batched.torch_set_joint_effort(torch.as_tensor(TAU, dtype=torch.float64))
    batched.step(graph=True)  # never captured on the CPU device
    assert batched.graph_captured is False and batched.wp_device == "cpu"
    np.testing.assert_allclose(batched.joint_vel(), _as_state(batched, QD0) + DT * TAU / INERTIA, rtol=0, atol=_tol(batched))
