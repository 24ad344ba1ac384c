"""``WarpBackend``: the plumbing the two Warp backends (MuJoCo-Warp, Newton) share.

Both keep ``num_envs`` worlds in Warp arrays on one device and differ only in the engine behind
them. What is common lives here, once:

* device and stream: :meth:`WarpBackend._init_warp` resolves ``device`` (``"cpu"``, ``"cuda"``,
  ``"cuda:N"``), keeps torch's current CUDA stream as a Warp stream, and :meth:`~WarpBackend.scope`
  enters both for every engine call;
* the substep loop with CUDA-graph capture (:meth:`~WarpBackend._run_substeps`): eager while
  ``graph`` is off or on the CPU device; on CUDA the first substep runs eagerly (it loads the
  kernels), the second captures the engine's substep (:meth:`~WarpBackend._substep`) into a Warp
  graph that later substeps replay; :attr:`~WarpBackend.graph_captured` says whether one exists;
* the joint state: ``joint_pos`` / ``joint_vel`` / ``set_joint_effort`` on the host arrays and
  ``torch_joint_pos`` / ``torch_joint_vel`` / ``torch_set_joint_effort`` on the device, over the
  engine's position / velocity / generalized-force arrays named by the subclass
  (:attr:`~WarpBackend._POS_ARRAY`, :attr:`~WarpBackend._VEL_ARRAY`, :attr:`~WarpBackend._EFFORT_ARRAY`);
* host mirrors marked stale after engine calls on CUDA (:meth:`~WarpBackend._mark_stale`);
* drawing a world with MuJoCo from :meth:`data` (:meth:`~WarpBackend.render`) and :meth:`~WarpBackend.close`.

Importing this module imports neither Warp nor an engine (:func:`~actuator_gym.backends._warp.import_warp`
runs in :meth:`~WarpBackend._init_warp`).
"""

from __future__ import annotations

import abc
import contextlib
from typing import Any, Callable, ClassVar

import mujoco
import numpy as np
import torch

from ._warp import HostArray, import_warp, resolve_device
from .base import JointInfo, PhysicsBackend
from .mujoco import OffscreenRenderer

__all__ = ["WarpBackend"]


class WarpBackend(PhysicsBackend):
    """Base of :class:`~actuator_gym.backends.mujoco_warp.MujocoWarpBackend` and
    :class:`~actuator_gym.backends.newton.NewtonBackend` (see the module docstring).

    A subclass names its engine's arrays in :attr:`_POS_ARRAY` / :attr:`_VEL_ARRAY` /
    :attr:`_EFFORT_ARRAY`, calls :meth:`_init_warp` and :meth:`_init_joints` in its constructor,
    and implements :meth:`_hostview`, :meth:`torch_field`, :meth:`_substep` and :meth:`data`.

    Attributes set by :meth:`_init_warp`: ``wp`` (the ``warp`` module), ``wp_device`` (Warp's
    device name), ``device`` (the torch device), ``model`` is the subclass's ``MjModel``.
    """

    _POS_ARRAY: ClassVar[str]
    """Engine array of generalized positions, ``(num_envs, nq)`` through :meth:`_hostview`."""
    _VEL_ARRAY: ClassVar[str]
    """Engine array of generalized velocities, ``(num_envs, nv)``."""
    _EFFORT_ARRAY: ClassVar[str]
    """Engine array of applied generalized forces, ``(num_envs, nv)``, held until written again."""

    wp: Any
    wp_device: str
    model: mujoco.MjModel

    # -- construction ------------------------------------------------------------------------------
    def _init_warp(self, device: Any, graph: bool) -> None:
        """Import Warp, resolve ``device``, keep torch's current CUDA stream (CUDA only) and reset
        the graph and host-mirror state; ``graph``: capture the substep on CUDA."""
        self.wp = wp = import_warp()
        self.wp_device, self.device = resolve_device(device)
        self._cuda = self.device.type == "cuda"
        self._stream = wp.stream_from_torch(torch.cuda.current_stream(self.device)) if self._cuda else None
        self._graph_ok = bool(graph) and self._cuda
        self._graph = None
        self._eager_steps = 0
        self._host: dict[str, HostArray] = {}
        self._renderer: OffscreenRenderer | None = None

    def _init_joints(self, joints: JointInfo) -> None:
        """Set :attr:`joints` and the index arrays of the joints' coordinates and DOFs (numpy for
        the host views, torch on :attr:`device` for the device views)."""
        self.joints = joints
        self._qadr_np = np.asarray(joints.qpos_adr, dtype=np.int64)
        self._dadr_np = np.asarray(joints.dof_adr, dtype=np.int64)
        self._qadr = torch.as_tensor(self._qadr_np, device=self.device)
        self._dadr = torch.as_tensor(self._dadr_np, device=self.device)

    def scope(self) -> contextlib.ExitStack:
        """A context entering the backend's Warp device (and, on CUDA, torch's stream)."""
        stack = contextlib.ExitStack()
        stack.enter_context(self.wp.ScopedDevice(self.wp_device))
        if self._stream is not None:
            stack.enter_context(self.wp.ScopedStream(self._stream))
        return stack

    # -- engine hooks --------------------------------------------------------------------------------
    @abc.abstractmethod
    def _hostview(self, name: str) -> np.ndarray:
        """``(num_envs, n)`` host array of engine array ``name``: a zero-copy view on the CPU
        device (writes reach the engine), a host mirror pulled when stale on CUDA."""

    @abc.abstractmethod
    def torch_field(self, name: str) -> torch.Tensor:
        """``(num_envs, ...)`` torch view of engine array ``name`` on :attr:`device` (shared memory)."""

    @abc.abstractmethod
    def _substep(self) -> None:
        """One physics substep of every world, made of Warp launches only (it may be captured)."""

    @abc.abstractmethod
    def data(self, world_id: int = 0, data: mujoco.MjData | None = None, forward: bool = True) -> mujoco.MjData:
        """World ``world_id``'s state as a MuJoCo ``MjData`` (a copy)."""

    def _drawing_model(self, world_id: int) -> mujoco.MjModel:
        """The ``MjModel`` :meth:`render` draws world ``world_id`` with (default: the shared one)."""
        return self.model

    # -- substeps ------------------------------------------------------------------------------------
    @property
    def graph_captured(self) -> bool:
        """Whether the physics substep has been captured in a CUDA graph (never on the CPU device)."""
        return self._graph is not None

    def _run_substeps(self, nstep: int, graph: bool, before: Callable[[], None] | None = None) -> None:
        """``nstep`` substeps (inside :meth:`scope`): replay the captured graph when there is one and
        ``graph``; else capture it on CUDA once one eager substep has run; else run eagerly.
        ``before`` runs outside the graph before every substep (host-side writes)."""
        wp = self.wp
        for _ in range(int(nstep)):
            if before is not None:
                before()
            if self._graph is not None and graph:
                wp.capture_launch(self._graph)
            elif graph and self._graph_ok and self._eager_steps >= 1:
                with wp.ScopedCapture(device=self.wp_device, stream=self._stream) as cap:
                    self._substep()
                self._graph = cap.graph
                wp.capture_launch(self._graph)
            else:
                self._substep()
                self._eager_steps += 1

    def _mark_stale(self) -> None:
        """After an engine call: the CUDA host mirrors must be pulled again on next access."""
        if self._cuda:
            for h in self._host.values():
                h.stale = True

    # -- joint state (host) --------------------------------------------------------------------------
    def joint_pos(self) -> np.ndarray:
        """Joint positions [rad or m], ``(num_envs, num_joints)`` float32 (a host copy)."""
        return self._hostview(self._POS_ARRAY)[:, self._qadr_np]

    def joint_vel(self) -> np.ndarray:
        """Joint velocities [rad/s or m/s], ``(num_envs, num_joints)`` float32 (a host copy)."""
        return self._hostview(self._VEL_ARRAY)[:, self._dadr_np]

    def set_joint_effort(self, effort: Any) -> None:
        """Generalized force [N·m or N] ``(num_envs, num_joints)`` on each joint's DOF (the engine's
        applied-force array), held until set again. A numpy array or CPU tensor is written through
        the host view on the CPU device; on CUDA (or for a CUDA tensor) it is written on the device."""
        shape = (self.num_envs, len(self.joints))
        if tuple(getattr(effort, "shape", ())) != shape:
            raise ValueError(
                f"{type(self).__name__}.set_joint_effort: effort must have shape {shape} (num_envs, num_joints), "
                f"got {tuple(np.shape(effort))}"
            )
        if self._cuda or (isinstance(effort, torch.Tensor) and effort.device.type != "cpu"):
            self.torch_set_joint_effort(torch.as_tensor(effort, device=self.device))
        else:
            e = effort.detach().numpy() if isinstance(effort, torch.Tensor) else np.asarray(effort)
            self._hostview(self._EFFORT_ARRAY)[:, self._dadr_np] = e

    # -- joint state (device) ------------------------------------------------------------------------
    def torch_joint_pos(self) -> torch.Tensor:
        """Joint positions ``(num_envs, num_joints)`` float32 on :attr:`device` (a gather, no host copy)."""
        return self.torch_field(self._POS_ARRAY).index_select(1, self._qadr)

    def torch_joint_vel(self) -> torch.Tensor:
        """Joint velocities ``(num_envs, num_joints)`` float32 on :attr:`device` (a gather, no host copy)."""
        return self.torch_field(self._VEL_ARRAY).index_select(1, self._dadr)

    def torch_set_joint_effort(self, effort: torch.Tensor) -> None:
        """Write ``(num_envs, num_joints)`` efforts [N·m or N] into the engine's applied-force array
        on :attr:`device` (no host copy)."""
        self.torch_field(self._EFFORT_ARRAY)[:, self._dadr] = effort.to(torch.float32)

    # -- rendering -----------------------------------------------------------------------------------
    def render(self, world_id: int = 0, width: int = 480, height: int = 480, camera: int | str = -1) -> np.ndarray:
        """An ``(height, width, 3)`` uint8 image of world ``world_id``, drawn by MuJoCo on the CPU
        from :meth:`data` (needs an OpenGL backend; ``RuntimeError`` naming the problem otherwise)."""
        w = self._world_id(world_id, "render")
        if self._renderer is None:
            self._renderer = OffscreenRenderer(self.model)
        model = self._drawing_model(w)
        d = self.data(w, self._renderer.scratch)
        return self._renderer.draw(d, width, height, camera, model)

    def close(self) -> None:
        """Release the renderer and the captured graph (the backend stays usable)."""
        if self._renderer is not None:
            self._renderer.close()
        self._renderer = None
        self._graph = None
