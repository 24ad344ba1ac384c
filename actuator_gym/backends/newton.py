"""``NewtonBackend``: ``num_envs`` worlds built from the same MJCF by Newton's importer, stepped by a
core Newton solver (Featherstone by default, or XPBD), efforts applied through ``control.joint_f``.

Install: ``pip install newton==1.8.0`` (the core package; it needs only ``warp-lang``). Do **not**
install ``newton[sim]``: it pins ``mujoco~=3.17`` / ``mujoco-warp~=3.17``, which conflicts with
MuJoCo 4 used by the rest of actuator-gym. The core MJCF importer needs nothing else for our
models (it would need ``mujoco`` only for ``<dcmotor>`` actuator elements, which we do not emit).

Scope (checked on Warp's CPU device): fixed-base models whose joints are all hinges and slides
(the pendulum). Free and ball joints (the quadruped's and quadrotor's floating base) raise
``ValueError``: Newton orders quaternions ``(x, y, z, w)`` and expresses free-joint velocities in
other frames than MuJoCo, and that conversion is not implemented or verified yet.

Physics differ from MuJoCo (another integrator, another contact model); the pendulum is checked
against its own invariants (energy drift, small-angle period) rather than MuJoCo to 1e-6.

Native actuators: :meth:`NewtonBackend.native_actuators` exports an ``ActuatorCollection``'s
recipes (PD, PID, delay, max-effort, DC-motor and position-based clamps, with the per-env values
in force) to ``newton.actuators.Actuator`` objects, so Newton's kernels compute the efforts.
Neural drives and implicit groups are not exported (``ValueError`` naming the group).
"""

from __future__ import annotations

import contextlib
from typing import Any

import mujoco
import numpy as np
import torch

from ._warp import HostArray, import_extra, import_warp, resolve_device
from .base import PhysicsBackend
from .mujoco import joint_info

__all__ = ["NewtonBackend", "NativeActuators"]

_SOLVERS = ("featherstone", "xpbd")


def _import_newton():
    return import_extra("newton", "backend='newton' needs newton==1.8.0 (core package, not newton[sim])")


class NewtonBackend(PhysicsBackend):
    """``num_envs`` Newton worlds of the model in ``mjcf``.

    Args:
        mjcf: the MJCF text (parsed by Newton's importer).
        num_envs: number of worlds.
        device: ``"cpu"``, ``"cuda"`` or ``"cuda:N"``.
        physics_dt: substep [s] (default: the model's ``opt.timestep``).
        solver: ``"featherstone"`` (default; generalized coordinates, semi-implicit Euler) or ``"xpbd"``.
        graph: capture the physics substep in a CUDA graph on CUDA devices (ignored on CPU).
    """

    def __init__(self, mjcf: str, num_envs: int, device: Any = "cpu", physics_dt: float | None = None,
                 solver: str = "featherstone", graph: bool = True):
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"NewtonBackend: num_envs must be an integer >= 1, got {num_envs!r}")
        if solver not in _SOLVERS:
            raise ValueError(f"NewtonBackend: solver must be one of {_SOLVERS}, got {solver!r}")
        self.wp = wp = import_warp()
        newton = _import_newton()
        self.wp_device, self.device = resolve_device(device)
        self.model = mujoco.MjModel.from_xml_string(mjcf)  # the MuJoCo view: joint names and layout
        if physics_dt is not None:
            self.model.opt.timestep = float(physics_dt)
        self.physics_dt = float(self.model.opt.timestep)
        self.num_envs = int(num_envs)
        self.joints = joint_info(self.model)
        m = self.model
        for j in range(m.njnt):
            if int(m.jnt_type[j]) in (int(mujoco.mjtJoint.mjJNT_FREE), int(mujoco.mjtJoint.mjJNT_BALL)):
                name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j)
                raise ValueError(
                    f"NewtonBackend: joint {name!r} is a free/ball joint; the newton backend supports "
                    "fixed-base hinge/slide models only (use backend='mujoco' or 'mujoco_warp')"
                )
        self._cuda = self.device.type == "cuda"
        self._stream = wp.stream_from_torch(torch.cuda.current_stream(self.device)) if self._cuda else None
        with self._scope():
            art = newton.ModelBuilder()
            art.add_mjcf(mjcf)
            labels = [lab.rsplit("/", 1)[-1] for lab in art.joint_label]
            if labels != list(self.joints.names) or art.joint_coord_count != m.nq or art.joint_dof_count != m.nv:
                raise ValueError(
                    f"NewtonBackend: Newton's import has joints {labels}, MuJoCo's {list(self.joints.names)}; "
                    "the layouts must match"
                )
            builder = newton.ModelBuilder()
            builder.replicate(art, self.num_envs)
            self.nmodel = builder.finalize(device=self.wp_device)
            self.state_0, self.state_1 = self.nmodel.state(), self.nmodel.state()
            self.control = self.nmodel.control()
            if solver == "featherstone":
                self.solver = newton.solvers.SolverFeatherstone(self.nmodel, angular_damping=0.0)
            else:
                self.solver = newton.solvers.SolverXPBD(self.nmodel)
        self.solver_name = solver
        self._newton = newton
        self._nq, self._nv = m.nq, m.nv
        self._graph_ok = bool(graph) and self._cuda
        self._graph = None
        self._eager_steps = 0
        self._host: dict[str, HostArray] = {}
        self._qpos0 = np.asarray(m.qpos0, dtype=np.float64)
        self._render_ctx: dict[str, Any] = {}
        self.reset_envs(None)

    def _scope(self):
        stack = contextlib.ExitStack()
        stack.enter_context(self.wp.ScopedDevice(self.wp_device))
        if self._stream is not None:
            stack.enter_context(self.wp.ScopedStream(self._stream))
        return stack

    # -- views -----------------------------------------------------------------------------------
    def _view(self, name: str) -> np.ndarray:
        h = self._host.get(name)
        if h is None:
            owner = self.control if name == "joint_f" else self.state_0
            h = self._host[name] = HostArray(getattr(owner, name))
        return h.pull()

    def torch_field(self, name: str) -> torch.Tensor:
        """``(num_envs, n)`` torch view of ``joint_q`` / ``joint_qd`` / ``joint_f`` (shared memory)."""
        owner = self.control if name == "joint_f" else self.state_0
        n = self._nq if name == "joint_q" else self._nv
        return self.wp.to_torch(getattr(owner, name)).view(self.num_envs, n)

    def torch_joint_pos(self) -> torch.Tensor:
        return self.torch_field("joint_q")[:, self.joints.qpos_adr]

    def torch_joint_vel(self) -> torch.Tensor:
        return self.torch_field("joint_qd")[:, self.joints.dof_adr]

    def torch_set_joint_effort(self, effort: torch.Tensor) -> None:
        self.torch_field("joint_f")[:, self.joints.dof_adr] = effort.to(torch.float32)

    @property
    def qpos(self) -> np.ndarray:
        """``(num_envs, nq)`` in MuJoCo's layout (hinge/slide models: the same as Newton's)."""
        return self._view("joint_q").reshape(self.num_envs, self._nq)

    @property
    def qvel(self) -> np.ndarray:
        return self._view("joint_qd").reshape(self.num_envs, self._nv)

    def joint_pos(self) -> np.ndarray:
        return self.qpos[:, self.joints.qpos_adr]

    def joint_vel(self) -> np.ndarray:
        return self.qvel[:, self.joints.dof_adr]

    def set_joint_effort(self, effort: Any) -> None:
        """Generalized force [N·m or N] on each joint's DOF (``control.joint_f``), held until set again."""
        shape = (self.num_envs, len(self.joints))
        if tuple(getattr(effort, "shape", ())) != shape:
            raise ValueError(f"NewtonBackend.set_joint_effort: effort must have shape {shape}, got {tuple(np.shape(effort))}")
        if self._cuda or (isinstance(effort, torch.Tensor) and effort.device.type != "cpu"):
            self.torch_set_joint_effort(torch.as_tensor(effort, device=self.device))
        else:
            e = effort.detach().numpy() if isinstance(effort, torch.Tensor) else np.asarray(effort)
            self._view("joint_f").reshape(self.num_envs, self._nv)[:, self.joints.dof_adr] = e

    @property
    def graph_captured(self) -> bool:
        return self._graph is not None

    def _substep(self) -> None:
        s0, s1 = self.state_0, self.state_1
        s0.clear_forces()
        self.solver.step(s0, s1, self.control, None, self.physics_dt)
        s0.assign(s1)  # fixed buffers: views and captured graphs keep pointing at state_0

    def step(self, nstep: int = 1, derived: bool = True, graph: bool = True) -> None:
        """Advance every world by ``nstep`` substeps (``derived`` is accepted for interface parity)."""
        wp = self.wp
        with self._scope():
            for _ in range(int(nstep)):
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
        if self._cuda:
            for h in self._host.values():
                h.stale = True

    def reset_envs(self, env_ids: Any = None, qpos: Any = None, qvel: Any = None, act: Any = None, time: Any = None) -> None:
        """Reset ``env_ids`` (None = all) to ``qpos0`` / zero velocity and effort, or the given
        ``qpos (n, nq)`` / ``qvel (n, nv)``; other worlds are untouched."""
        ids = np.arange(self.num_envs) if env_ids is None else np.asarray(env_ids).reshape(-1).astype(np.int64)
        if ids.dtype == np.bool_:
            ids = np.flatnonzero(ids)
        if ids.size and (ids.min() < 0 or ids.max() >= self.num_envs):
            raise ValueError(f"env_ids: ids must lie in [0, {self.num_envs - 1}], got {ids.tolist()}")
        n = len(ids)
        if n == 0:
            return
        q = np.tile(self._qpos0, (n, 1)) if qpos is None else np.array(qpos, dtype=np.float64)
        qd = np.zeros((n, self._nv)) if qvel is None else np.array(qvel, dtype=np.float64)
        if q.shape != (n, self._nq) or qd.shape != (n, self._nv):
            raise ValueError(f"NewtonBackend.reset_envs: qpos must be {(n, self._nq)} and qvel {(n, self._nv)}")
        rows = torch.as_tensor(ids, device=self.device)
        self.torch_field("joint_q")[rows] = torch.as_tensor(q, dtype=torch.float32, device=self.device)
        self.torch_field("joint_qd")[rows] = torch.as_tensor(qd, dtype=torch.float32, device=self.device)
        self.torch_field("joint_f")[rows] = 0.0
        with self._scope():
            self._newton.eval_fk(self.nmodel, self.state_0.joint_q, self.state_0.joint_qd, self.state_0)
        if self._cuda:
            for h in self._host.values():
                h.stale = True

    def model_field(self, name: str) -> np.ndarray:
        raise ValueError(
            f"NewtonBackend: per-world model field {name!r} is not supported (Newton's model fields are "
            "not MuJoCo's); use backend='mujoco' or 'mujoco_warp' for model_randomization"
        )

    def set_const(self, env_ids: Any = None) -> None:
        raise ValueError("NewtonBackend: set_const is not supported (no per-world MuJoCo model fields)")

    def field(self, name: str) -> np.ndarray:
        raise ValueError(f"NewtonBackend: MuJoCo data field {name!r} is not available; use qpos/qvel or data()")

    def data(self, world_id: int = 0, data: mujoco.MjData | None = None, forward: bool = True) -> mujoco.MjData:
        """World ``world_id``'s state as a MuJoCo ``MjData`` (a copy; for rendering and inspection)."""
        d = data if data is not None else mujoco.MjData(self.model)
        d.qpos[:] = self.qpos[int(world_id)]
        d.qvel[:] = self.qvel[int(world_id)]
        if forward:
            mujoco.mj_forward(self.model, d)
        return d

    def render(self, world_id: int = 0, width: int = 480, height: int = 480, camera: int | str = -1) -> np.ndarray:
        ctx = self._render_ctx
        if ctx.get("size") != (width, height):
            try:
                ctx["renderer"] = mujoco.Renderer(self.model, height, width)
            except Exception as exc:
                raise RuntimeError(f"render: no OpenGL backend available (set MUJOCO_GL=egl or osmesa): {exc}") from exc
            ctx["size"], ctx["data"] = (width, height), mujoco.MjData(self.model)
        d = self.data(int(world_id), ctx["data"])
        ctx["renderer"].update_scene(d, camera=camera)
        return ctx["renderer"].render()

    def close(self) -> None:
        r = self._render_ctx.pop("renderer", None)
        if r is not None:
            r.close()
        self._graph = None

    # -- native actuators --------------------------------------------------------------------------
    def native_actuators(self, collection) -> "NativeActuators":
        """Export ``collection``'s recipes to ``newton.actuators`` (see :class:`NativeActuators`)."""
        return NativeActuators(self, collection)


class NativeActuators:
    """An ``ActuatorCollection`` re-expressed as ``newton.actuators.Actuator`` objects (one per group),
    with the per-env parameter values in force at export (re-export after a reset re-draws them).

    ``step(target_pos, target_vel, target_effort)`` zeroes ``control.joint_f``, runs every Newton
    actuator on the backend's current state (Newton accumulates into ``joint_f``) and returns the
    applied efforts ``(num_envs, num_joints)`` as a torch view. Lanes are ``env * nv + dof``.

    Delay semantics differ before a lag's history fills: Newton falls back to the current target,
    ours to the oldest target since the reset; they agree once ``max_delay`` substeps have passed.
    """

    def __init__(self, backend: NewtonBackend, collection):
        from newton import actuators as na

        wp = backend.wp
        if collection.num_envs != backend.num_envs or tuple(collection.joint_names) != tuple(backend.joint_names):
            raise ValueError("NativeActuators: the collection must match the backend's num_envs and joint_names")
        self.backend = backend
        n, nv = backend.num_envs, backend._nv
        self._targets = {k: wp.zeros(n * nv, dtype=wp.float32, device=backend.wp_device) for k in ("q", "qd", "ff")}
        self.actuators, self.states = [], []
        for name, model in collection.items():
            cols = collection.joint_ids(name)
            dofs = np.asarray(backend.joints.dof_adr)[cols]
            lanes = (np.arange(n)[:, None] * nv + dofs[None, :]).reshape(-1).astype(np.uint32)
            idx = wp.array(lanes, dtype=wp.uint32, device=backend.wp_device)

            def arr(part, key):
                v = part.params[key].values.detach().to("cpu", torch.float32).reshape(-1).numpy()
                return wp.array(np.ascontiguousarray(v), dtype=wp.float32, device=backend.wp_device)

            drive, delay, clamps = None, None, []
            if getattr(model, "is_implicit", False):
                raise ValueError(f"NativeActuators: group {name!r} is implicit; only explicit groups are exported")
            for part in model._parts:
                kind = type(part).__name__
                if kind == "DrivePD":
                    drive = na.DrivePD(kp=arr(part, "kp"), kd=arr(part, "kd"), const_effort=arr(part, "const_effort"))
                elif kind == "DrivePID":
                    drive = na.DrivePID(kp=arr(part, "kp"), ki=arr(part, "ki"), kd=arr(part, "kd"),
                                        integral_max=arr(part, "integral_max"), const_effort=arr(part, "const_effort"))
                elif kind == "Delay":
                    steps = part.params["delay_steps"].values.detach().cpu().reshape(-1).numpy().astype(np.int32)
                    if part.max_delay >= 1:
                        delay = na.Delay(delay_steps=wp.array(steps, dtype=wp.int32, device=backend.wp_device),
                                         max_delay=int(part.max_delay))
                elif kind == "ClampingMaxEffort":
                    clamps.append(na.ClampingMaxEffort(max_effort=arr(part, "max_effort")))
                elif kind == "ClampingDCMotor":
                    clamps.append(na.ClampingDCMotor(saturation_effort=arr(part, "saturation_effort"),
                                                     velocity_limit=arr(part, "velocity_limit"),
                                                     max_motor_effort=arr(part, "effort_limit")))
                elif kind == "ClampingPositionBased":
                    clamps.append(na.ClampingPositionBased(lookup_positions=tuple(float(x) for x in part.lookup_positions),
                                                           lookup_efforts=tuple(float(y) for y in part.lookup_efforts)))
                else:
                    raise ValueError(f"NativeActuators: group {name!r} uses {kind}, which has no newton.actuators export")
            if drive is None:
                raise ValueError(f"NativeActuators: group {name!r} has no PD/PID drive")
            act = na.Actuator(indices=idx, drive=drive, delay=delay, clamping=clamps)
            self.actuators.append(act)
            st = act.state()
            self.states.append((st, act.state()) if st is not None else (None, None))
        self._cols = [collection.joint_ids(g) for g in collection]
        self._collection = collection

    def step(self, target_pos: Any = None, target_vel: Any = None, target_effort: Any = None) -> torch.Tensor:
        be, wp = self.backend, self.backend.wp
        n, nv = be.num_envs, be._nv
        dofs = be.joints.dof_adr
        for key, value in (("q", target_pos), ("qd", target_vel), ("ff", target_effort)):
            t = wp.to_torch(self._targets[key]).view(n, nv)
            t.zero_()
            if value is not None:
                t[:, dofs] = torch.as_tensor(value, dtype=torch.float32, device=be.device)
        sim_state = {"joint_q": be.state_0.joint_q, "joint_qd": be.state_0.joint_qd}
        sim_control = {"joint_target_q": self._targets["q"], "joint_target_qd": self._targets["qd"],
                       "joint_act": self._targets["ff"], "joint_f": be.control.joint_f}
        with be._scope():
            be.control.joint_f.zero_()
            for i, act in enumerate(self.actuators):
                cur, nxt = self.states[i]
                act.step(sim_state, sim_control, cur, nxt, dt=be.physics_dt)
                if cur is not None:
                    self.states[i] = (nxt, cur)
        return be.torch_field("joint_f")[:, dofs]
