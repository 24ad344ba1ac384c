"""The backend contract, written down as ``typing.Protocol`` classes.

Two kinds of backend above the common one, each a superset of the one before:

* :class:`JointBackend` -- what the actuator runtime needs from any engine: the joints, their
  state, the effort and one substep. Every backend is one; ``ActuatorWrapper`` needs no more (its
  :class:`~actuator_gym.backends.mujoco.MujocoBackend` is one ``MjData`` that Gymnasium's MuJoCo
  env steps, ``num_envs == 1``).
* :class:`BatchedBackend` -- ``num_envs`` worlds owned by the backend, used by the task layer
  (``envs/task.py`` and the bundled tasks): resets of chosen worlds, MuJoCo-layout state,
  derived and per-world model fields, ``MjData`` copies, rendering
  (:class:`~actuator_gym.backends.mujoco_batch.MujocoBatchBackend` and both Warp backends).
* :class:`DeviceBackend` -- a batched backend whose state lives on a Warp device, used by the
  device substep loop: torch views of the joint state and effort on the device and CUDA-graph
  capture (:class:`~actuator_gym.backends.mujoco_warp.MujocoWarpBackend`,
  :class:`~actuator_gym.backends.newton.NewtonBackend`).

Conventions for every member: arrays are batch-first, ``(num_envs, ...)``; joint arrays are
``(num_envs, num_joints)`` in :attr:`JointBackend.joints` order; units are SI (rad or m, rad/s or
m/s, N·m or N). MuJoCo's layout and conventions hold for ``qpos`` / ``qvel`` / ``xfrc_applied`` /
``field`` / ``model_field`` / ``data`` whatever the engine (Newton converts). Arrays a method
returns are valid until the next ``step`` / ``reset_envs`` / ``set_const`` unless said otherwise;
"view" means writes go to the engine (on CUDA: a host mirror, see the Warp backends), "copy" means
they do not.

The protocols are ``runtime_checkable``: ``isinstance(backend, BatchedBackend)`` checks that every
member exists (not the signatures). On Python < 3.12 that check reads each member (``hasattr``),
which on the Warp backends binds the host views of ``qpos`` / ``qvel`` / ``xfrc_applied`` (on CUDA,
``xfrc_applied`` is then pushed before every step); Python >= 3.12 looks members up statically.
``tests/backends/test_backend_contract.py`` checks every backend against its protocols.
:class:`~actuator_gym.backends.base.PhysicsBackend` is the abstract base the backends share.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, Sequence, runtime_checkable

import numpy as np
import torch

from .base import JointInfo

if TYPE_CHECKING:
    import mujoco

__all__ = ["JointBackend", "BatchedBackend", "DeviceBackend"]


@runtime_checkable
class JointBackend(Protocol):
    """The joints of ``num_envs`` worlds of one model, their state, the effort on them, one substep.

    The substep loop every caller runs::

        q, qd = backend.joint_pos(), backend.joint_vel()
        effort = collection.compute(joint_pos=q, joint_vel=qd, dt=backend.physics_dt)
        backend.set_joint_effort(effort)
        backend.step()
    """

    num_envs: int
    """Number of worlds (1 for the wrapper's :class:`~actuator_gym.backends.mujoco.MujocoBackend`)."""
    physics_dt: float
    """The substep one :meth:`step` advances [s] (the model's ``opt.timestep``)."""
    device: torch.device
    """Where the engine's state lives (``cpu`` for the MuJoCo backends and Warp's CPU device)."""
    joints: JointInfo
    """The actuatable 1-DOF (hinge / slide) joints: names, ``qpos`` / DOF addresses, ranges
    [rad or m], default pose, kind; static for the backend's lifetime."""

    @property
    def joint_names(self) -> tuple[str, ...]:
        """``joints.names``: the column order of every ``(num_envs, num_joints)`` array."""
        ...

    def joint_pos(self) -> Any:
        """Joint positions [rad or m], ``(num_envs, num_joints)`` numpy array (float64 on the MuJoCo
        backends, float32 on the Warp ones), the state before the next :meth:`step`. A live view on
        :class:`~actuator_gym.backends.mujoco.MujocoBackend` when the joints' addresses are contiguous, else a copy; copy it
        to keep it across a step."""
        ...

    def joint_vel(self) -> Any:
        """Joint velocities [rad/s or m/s], ``(num_envs, num_joints)``; as :meth:`joint_pos`."""
        ...

    def set_joint_effort(self, effort: Any) -> None:
        """Apply ``effort`` [N·m or N], ``(num_envs, num_joints)`` numpy array or torch tensor, as
        the generalized force on each joint's DOF (MuJoCo's ``qfrc_applied``, Newton's
        ``control.joint_f``) for every following substep until set again; other DOFs are untouched.
        It bypasses the model's actuators (``ctrlrange``, ``gear``): the actuator model is the limit.
        Copied into the engine (the caller may reuse its array)."""
        ...

    def step(self) -> None:
        """Advance every world by one substep of :attr:`physics_dt` with the effort last set."""
        ...

    def mass_matrix_terms(self, joint_ids: Sequence[int]) -> tuple[Any, Any]:
        """``(inverse_mass (num_envs, J, J) [1/(kg·m²) or 1/kg], bias_force (num_envs, J) [N·m or N])``
        of the listed joints (indices into :attr:`joints`) at the **current** state, for the
        implicit effort mode: the block of ``M^-1`` (armature included; coupling through other DOFs
        kept) and ``qfrc_bias`` (Coriolis, centrifugal, gravity). Fresh float64 arrays.
        ``NotImplementedError`` where the backend has no such terms (the Warp backends);
        ``ValueError`` for ids outside ``[0, num_joints)``."""
        ...

    def diverged(self) -> Any:
        """``(num_envs,)`` bool numpy array: the worlds whose simulation diverged since the last call
        (the MuJoCo backends: MuJoCo's bad ``qpos`` / ``qvel`` / ``qacc`` warnings, after which it reset
        the world, cleared by the call; the Warp ones: a non-finite ``qpos`` / ``qvel``). The task ends
        those envs' episodes (``info["physics_diverged"]``)."""
        ...


@runtime_checkable
class BatchedBackend(JointBackend, Protocol):
    """``num_envs`` worlds of one model owned by the backend, as the task layer drives them.

    State in MuJoCo's layout whatever the engine; worlds are independent: resetting, randomizing or
    pushing one world never changes another.
    """

    model: mujoco.MjModel
    """The ``MjModel`` the worlds are built from: sizes (``nq``, ``nv``, ``nbody``), names and the
    nominal values of per-world fields. Not the per-world values (see :meth:`model_field`)."""

    @property
    def qpos(self) -> np.ndarray:
        """``(num_envs, nq)`` generalized positions [m, rad; quaternions ``wxyz``], MuJoCo layout;
        current after every :meth:`step` / :meth:`reset_envs`. A view on the MuJoCo backends and
        MuJoCo-Warp's CPU device; a host mirror on CUDA; a read-only mirror on Newton for models
        with free or ball joints. Write state through :meth:`reset_envs`."""
        ...

    @property
    def qvel(self) -> np.ndarray:
        """``(num_envs, nv)`` generalized velocities in MuJoCo's convention (free joints: body-origin
        linear velocity in the world frame [m/s], angular velocity in the body frame [rad/s]); as
        :attr:`qpos`."""
        ...

    @property
    def xfrc_applied(self) -> np.ndarray:
        """``(num_envs, nbody, 6)`` writable body wrenches (force [N], torque [N·m], world frame, at
        the body's centre of mass; row 0 the world body), applied during every following substep
        until changed; zeroed for the worlds :meth:`reset_envs` resets."""
        ...

    def step(self, nstep: int = 1, derived: bool = True) -> None:
        """Advance every world by ``nstep`` substeps with the effort last set. ``derived=True``: the
        arrays from :meth:`field` describe the new state afterwards; ``derived=False`` may leave
        them describing the state before the last substep (cheaper; tasks pass it for all but the
        last substep of a control step). ``qpos`` / ``qvel`` / joint state are always current."""
        ...

    def reset_envs(self, env_ids: Any = None, qpos: Any = None, qvel: Any = None, act: Any = None,
                   time: Any = None) -> None:
        """Reset the worlds ``env_ids`` (None: all; a sequence, array, tensor of ids or a boolean
        mask ``(num_envs,)``; ``ValueError`` for ids outside ``[0, num_envs)``) to the model's
        defaults (``qpos0``, zero velocity, effort and ``xfrc_applied``), then set ``qpos (n, nq)``,
        ``qvel (n, nv)`` (MuJoCo layout), ``act (n, na)`` and ``time (n,)`` where given and the
        engine has them (Newton ignores ``act`` / ``time``); ``ValueError`` on wrong shapes.
        Per-world model fields of those worlds are written to the engine first. Derived fields
        describe the new state afterwards. Other worlds are untouched."""
        ...

    def field(self, name: str) -> np.ndarray:
        """A live ``(num_envs, ...)`` array of the ``MjData`` field ``name`` (``xpos``, ``xquat``,
        ``xmat``, ``sensordata``, ``qfrc_applied``, ...), refreshed in place after every
        :meth:`step` / :meth:`reset_envs` (keep it; read-only for derived fields). The first call
        for a derived field computes it. Backends that cannot provide a field raise ``ValueError``
        naming those they can (Newton: ``xpos`` / ``xquat`` / ``xmat`` / ``xipos`` / ``qpos`` /
        ``qvel`` / ``xfrc_applied``)."""
        ...

    def model_field(self, name: str) -> np.ndarray:
        """Writable per-world values ``(num_envs, ...)`` of the ``MjModel`` field ``name``
        (``body_mass`` [kg], ``dof_damping``, ``geom_friction``, ...; keep the array). Row ``w`` is
        world ``w``'s value; writes reach the engine for the worlds passed to :meth:`set_const` or
        :meth:`reset_envs` (immediately on the batched MuJoCo backend). ``ValueError`` for fields
        the engine cannot vary per world."""
        ...

    def set_const(self, env_ids: Any = None) -> None:
        """Write the per-world model fields of ``env_ids`` (None: all) to the engine and recompute
        the constants derived from them (MuJoCo's ``mj_setConst``: masses, inertias, armature);
        other worlds keep their values."""
        ...

    def data(self, world_id: int = 0, data: mujoco.MjData | None = None, forward: bool = True) -> mujoco.MjData:
        """World ``world_id``'s state as an ``MjData`` **copy** (into ``data`` when given; writes do
        not reach the backend), its derived fields recomputed by ``mj_forward`` with the world's
        model fields when ``forward``. A world outside ``[0, num_envs)`` raises ``ValueError``
        (``IndexError`` on ``MujocoBatchBackend``, from ``mujoco.batch``)."""
        ...

    def render(self, world_id: int = 0, width: int = 480, height: int = 480, camera: int | str = -1) -> np.ndarray:
        """An ``(height, width, 3)`` uint8 image of world ``world_id`` drawn by MuJoCo (``camera``:
        id or name, -1 the free camera). Needs an OpenGL backend (``MUJOCO_GL=egl`` / ``osmesa``;
        ``RuntimeError`` naming the problem otherwise); ``ValueError`` for a world out of range."""
        ...

    def close(self) -> None:
        """Release rendering resources (and captured graphs); idempotent."""
        ...


@runtime_checkable
class DeviceBackend(BatchedBackend, Protocol):
    """A batched backend on a Warp device (Warp's CPU device or CUDA), as the device substep loop
    drives it: joint state and effort as torch tensors on :attr:`device`, the physics substep
    captured in a CUDA graph on CUDA. Host-side members (:class:`BatchedBackend`) are zero-copy
    views on the CPU device and host mirrors on CUDA."""

    wp_device: str
    """Warp's name of the device (``"cpu"``, ``"cuda:0"``)."""

    @property
    def graph_captured(self) -> bool:
        """Whether the physics substep is captured in a CUDA graph (replayed by :meth:`step`);
        never on the CPU device."""
        ...

    def step(self, nstep: int = 1, derived: bool = True, graph: bool = True) -> None:
        """As :meth:`BatchedBackend.step`; ``graph=True`` captures the substep into a CUDA graph on
        CUDA (the second substep; the first loads the kernels) and replays it afterwards;
        ``graph=False`` runs eagerly."""
        ...

    def torch_field(self, name: str) -> torch.Tensor:
        """A torch view ``(num_envs, ...)`` on :attr:`device` sharing memory with the engine array
        ``name`` (engine names: ``mjw.Data`` fields for MuJoCo-Warp; ``joint_q`` / ``joint_qd`` /
        ``joint_f`` for Newton)."""
        ...

    def torch_joint_pos(self) -> torch.Tensor:
        """Joint positions [rad or m], ``(num_envs, num_joints)`` float32 on :attr:`device`
        (a gather: a fresh tensor, no host copy)."""
        ...

    def torch_joint_vel(self) -> torch.Tensor:
        """Joint velocities [rad/s or m/s], ``(num_envs, num_joints)`` float32 on :attr:`device`
        (a fresh tensor)."""
        ...

    def torch_set_joint_effort(self, effort: torch.Tensor) -> None:
        """:meth:`set_joint_effort` for a ``(num_envs, num_joints)`` tensor on :attr:`device`: written
        into the engine's applied-force array on the device (cast to float32; no host copy)."""
        ...

    def push_model_fields(self) -> None:
        """Write every world's per-world model fields to the engine (CUDA: host -> device)."""
        ...
