"""``NewtonBackend`` (see :mod:`actuator_gym.backends.newton` for the conventions): construction from
the MJCF, the substep (collision pass, solver step, XPBD's state recovery), MuJoCo-layout state and
body fields, joint-limit and contact gains, per-world model fields, ``data``."""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np
import torch

from ..._math import quat_to_rotmat, rotate
from .._warp import HostArray, import_extra
from ..base import check_num_envs, env_index
from ..mujoco import joint_info
from ..warp_common import WarpBackend
from .contacts import NewtonContactCfg
from .export import NativeActuators
from .fields import VISUAL_FIELDS, ModelFields
from .state import build_converter

__all__ = ["NewtonBackend"]

_SOLVERS = ("featherstone", "xpbd")


def _import_newton():
    return import_extra("newton", "backend='newton' needs newton==1.8.0 (core package, not newton[sim])")


_BODY_FIELDS = ("xpos", "xquat", "xmat", "xipos")


class NewtonBackend(WarpBackend):
    """``num_envs`` Newton worlds of the model in ``mjcf``.

    Args:
        mjcf: the MJCF text (parsed by Newton's importer).
        num_envs: number of worlds.
        device: ``"cpu"``, ``"cuda"`` or ``"cuda:N"``.
        physics_dt: substep [s] (default: the model's ``opt.timestep``).
        solver: ``"featherstone"`` (default; generalized coordinates, semi-implicit Euler; the
            verified one) or ``"xpbd"`` (bodies in maximal coordinates; ``joint_q``/``joint_qd``
            recovered with ``eval_ik`` after each substep; compliant joints, see docs/backends.md).
        graph: capture the physics substep in a CUDA graph on CUDA devices (ignored on CPU).
        contacts: ``True`` (default: :class:`NewtonContactCfg` defaults), a
            :class:`NewtonContactCfg`, or ``False`` / ``None`` (no collision pass: floors do nothing).
    """

    _POS_ARRAY, _VEL_ARRAY, _EFFORT_ARRAY = "joint_q", "joint_qd", "joint_f"

    def __init__(self, mjcf: str, num_envs: int, device: Any = "cpu", physics_dt: float | None = None,
                 solver: str = "featherstone", graph: bool = True, contacts: bool | NewtonContactCfg = True):
        num_envs = check_num_envs("NewtonBackend", num_envs)
        if solver not in _SOLVERS:
            raise ValueError(f"NewtonBackend: solver must be one of {_SOLVERS}, got {solver!r}")
        if contacts is True:
            contacts = NewtonContactCfg()
        elif contacts is False or contacts is None:
            contacts = None
        elif not isinstance(contacts, NewtonContactCfg):
            raise ValueError(f"NewtonBackend: contacts must be a bool or a NewtonContactCfg, got {contacts!r}")
        else:
            contacts.validate()
        self.contact_cfg = contacts
        self._init_warp(device, graph)
        newton = _import_newton()
        self.model = mujoco.MjModel.from_xml_string(mjcf)  # the MuJoCo view: joint names and layout
        if physics_dt is not None:
            self.model.opt.timestep = float(physics_dt)
        self.physics_dt = float(self.model.opt.timestep)
        self.num_envs = num_envs
        self._init_joints(joint_info(self.model))
        m = self.model
        with self.scope():
            art = newton.ModelBuilder()
            art.add_mjcf(mjcf)
            self.converter = build_converter(m, art, newton)
            builder = newton.ModelBuilder()
            builder.replicate(art, self.num_envs)
            self.nmodel = builder.finalize(device=self.wp_device)
            self._physical = ModelFields(self)  # per-world physical model fields (body_mass, ...), their gains
            self.state_0, self.state_1 = self.nmodel.state(), self.nmodel.state()
            self.control = self.nmodel.control()
            self._pipeline = self.contacts = None
            if contacts is not None and self.nmodel.shape_count:
                self._pipeline = newton.CollisionPipeline(self.nmodel)
                self.contacts = self._pipeline.contacts()
            if solver == "featherstone":
                self.solver = newton.solvers.SolverFeatherstone(self.nmodel, angular_damping=0.0)
            else:
                self.solver = newton.solvers.SolverXPBD(self.nmodel)
        self._nb = m.nbody - 1  # Newton bodies per world (MuJoCo's minus the world body)
        self._body_com = np.asarray(self.nmodel.body_com.numpy()[: self._nb], dtype=np.float64)
        self.solver_name = solver
        self._inner = contacts.substeps if self._pipeline is not None else 1
        self._maximal = solver == "xpbd"
        self._newton = newton
        self._nq, self._nv = m.nq, m.nv
        self._qpos0 = np.asarray(m.qpos0, dtype=np.float64)
        self._world_model_copy: mujoco.MjModel | None = None  # holds one world's per-world fields
        self._mirror: dict[str, np.ndarray] = {}  # MuJoCo-layout qpos/qvel (free/ball models)
        self._mirror_fresh = False
        self._fields: dict[str, np.ndarray] = {}  # bound body fields, refreshed after step/reset
        self._xfrc: np.ndarray | None = None  # created on first access of xfrc_applied
        self._visual: dict[str, np.ndarray] = {}  # per-world visual-only model fields (site_pos)
        self.reset_envs(None)

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

    def _hostview(self, name: str) -> np.ndarray:
        """``(num_envs, n)`` host view of Newton's ``joint_q`` / ``joint_qd`` / ``joint_f`` (Newton's layout)."""
        return self._view(name).reshape(self.num_envs, self._nq if name == "joint_q" else self._nv)

    def _mujoco_state(self) -> tuple[np.ndarray, np.ndarray]:
        mq, mv = self._mirror.get("qpos"), self._mirror.get("qvel")
        if mq is None:
            mq = self._mirror["qpos"] = np.zeros((self.num_envs, self._nq))
            mv = self._mirror["qvel"] = np.zeros((self.num_envs, self._nv))
            self._mirror_fresh = False
        if not self._mirror_fresh:
            mq.flags.writeable = mv.flags.writeable = True
            self.converter.to_mujoco(self._hostview("joint_q"), self._hostview("joint_qd"), mq, mv)
            mq.flags.writeable = mv.flags.writeable = False
            self._mirror_fresh = True
        return mq, mv

    @property
    def qpos(self) -> np.ndarray:
        """``(num_envs, nq)`` in MuJoCo's layout and convention: a writable zero-copy view for
        hinge/slide-only models; a read-only float64 mirror (quaternions ``wxyz``) when the model
        has free or ball joints."""
        if self.converter.identity:
            return self._hostview("joint_q")
        return self._mujoco_state()[0]

    @property
    def qvel(self) -> np.ndarray:
        """``(num_envs, nv)`` in MuJoCo's convention (free joints: body-origin linear velocity in
        the world frame, angular velocity in the body frame); see :attr:`qpos`."""
        if self.converter.identity:
            return self._hostview("joint_qd")
        return self._mujoco_state()[1]

    @property
    def xfrc_applied(self) -> np.ndarray:
        """``(num_envs, nbody, 6)`` body wrenches (force [N], torque [N·m], world frame, applied at
        the body's centre of mass; row 0 is MuJoCo's world body and is ignored), writable, held
        until changed and zeroed by ``reset_envs`` for the reset worlds. Written to Newton's
        ``state.body_f`` before every substep once this property has been used."""
        if self._xfrc is None:
            self._xfrc = np.zeros((self.num_envs, self._nb + 1, 6))
        return self._xfrc

    def _substep(self) -> None:
        s0, s1 = self.state_0, self.state_1
        n = self._inner
        for _ in range(n):
            if self._pipeline is not None:
                self._pipeline.collide(s0, self.contacts)
            self.solver.step(s0, s1, self.control, self.contacts, self.physics_dt / n)
            if self._maximal:  # XPBD integrates bodies: recover the generalized state from them
                self._newton.eval_ik(self.nmodel, s1, s1.joint_q, s1.joint_qd)
            s0.assign(s1)  # fixed buffers: views and captured graphs keep pointing at state_0

    def _apply_body_forces(self) -> None:
        """``state.body_f`` = :attr:`xfrc_applied` (zero while it has never been used); outside the
        captured graph, so host-side writes reach every substep. Both states get it, so the
        ``assign`` between inner contact steps keeps it."""
        if self.state_0.body_f is None:
            return
        src = None if self._xfrc is None else torch.from_numpy(self._xfrc[:, 1:])
        for bf in (self.state_0.body_f, self.state_1.body_f):
            if src is None:
                bf.zero_()
            else:
                t = self.wp.to_torch(bf).view(self.num_envs, self._nb, 6)
                t.copy_(src.to(device=self.device, dtype=t.dtype))

    def step(self, nstep: int = 1, derived: bool = True, graph: bool = True) -> None:
        """Advance every world by ``nstep`` substeps (a replayed CUDA graph on CUDA when ``graph``;
        :attr:`xfrc_applied` written before each, outside the graph). ``derived`` is accepted for
        interface parity: bound body fields are always refreshed."""
        with self.scope():
            self._run_substeps(nstep, graph, before=self._apply_body_forces)
        self._state_changed()

    def _state_changed(self) -> None:
        self._mark_stale()
        self._mirror_fresh = False
        if self._fields:
            self._refresh_fields()

    def reset_envs(self, env_ids: Any = None, qpos: Any = None, qvel: Any = None, act: Any = None, time: Any = None) -> None:
        """Reset ``env_ids`` (None = all) to ``qpos0`` / zero velocity, effort and ``xfrc_applied``,
        or the given ``qpos (n, nq)`` / ``qvel (n, nv)`` in MuJoCo's layout and convention
        (converted to Newton's; quaternions normalized), with their per-world model fields written
        to Newton (:meth:`model_field`); other worlds are untouched."""
        ids = env_index(env_ids, self.num_envs)
        ids = np.arange(self.num_envs) if ids is None else ids
        n = len(ids)
        if n == 0:
            return
        q = np.tile(self._qpos0, (n, 1)) if qpos is None else np.array(qpos, dtype=np.float64)
        qd = np.zeros((n, self._nv)) if qvel is None else np.array(qvel, dtype=np.float64)
        if q.shape != (n, self._nq) or qd.shape != (n, self._nv):
            raise ValueError(
                f"NewtonBackend.reset_envs: qpos must have shape {(n, self._nq)} and qvel {(n, self._nv)}, "
                f"got {q.shape} and {qd.shape}"
            )
        self._physical.push(ids)
        q, qd = self.converter.to_newton(q, qd)
        rows = torch.as_tensor(ids, device=self.device)
        self.torch_field("joint_q")[rows] = torch.as_tensor(q, dtype=torch.float32, device=self.device)
        self.torch_field("joint_qd")[rows] = torch.as_tensor(qd, dtype=torch.float32, device=self.device)
        self.torch_field("joint_f")[rows] = 0.0
        if self._xfrc is not None:
            self._xfrc[ids] = 0.0
        with self.scope():
            self._newton.eval_fk(self.nmodel, self.state_0.joint_q, self.state_0.joint_qd, self.state_0)
        self._state_changed()

    # -- body fields -----------------------------------------------------------------------------
    def field(self, name: str) -> np.ndarray:
        """A ``(num_envs, nbody, k)`` array in MuJoCo's body order (row 0: the world body) of
        ``xpos`` (body frame origin [m]), ``xquat`` (``wxyz``), ``xmat`` (row-major, 9) or
        ``xipos`` (centre of mass [m]), all world frame, computed from Newton's ``body_q`` and
        refreshed in place after every ``step`` / ``reset_envs`` (keep the array; read-only).
        ``qpos`` / ``qvel`` / ``xfrc_applied`` return those properties."""
        if name in ("qpos", "qvel", "xfrc_applied"):
            return getattr(self, name)
        if name not in _BODY_FIELDS:
            raise ValueError(
                f"NewtonBackend: MuJoCo data field {name!r} is not available; fields: "
                f"{list(_BODY_FIELDS) + ['qpos', 'qvel', 'xfrc_applied']} (or data() for a full MjData copy)"
            )
        arr = self._fields.get(name)
        if arr is None:
            width = {"xpos": 3, "xquat": 4, "xmat": 9, "xipos": 3}[name]
            arr = self._fields[name] = np.zeros((self.num_envs, self._nb + 1, width))
            if name == "xquat":
                arr[:, 0, 0] = 1.0
            elif name == "xmat":
                arr[:, 0] = np.eye(3).reshape(9)
            arr.flags.writeable = False
            self._refresh_fields()
        return arr

    def _refresh_fields(self) -> None:
        bq = self._view("body_q").reshape(self.num_envs * self._nb, 7).astype(np.float64)
        wxyz = bq[:, [6, 3, 4, 5]]
        wxyz /= np.linalg.norm(wxyz, axis=1, keepdims=True)
        R = quat_to_rotmat(wxyz)
        n, nb = self.num_envs, self._nb
        values = {
            "xpos": lambda: bq[:, :3],
            "xquat": lambda: wxyz,
            "xmat": lambda: R.reshape(-1, 9),
            "xipos": lambda: bq[:, :3] + rotate(R, np.tile(self._body_com, (n, 1))),
        }
        for name, arr in self._fields.items():
            arr.flags.writeable = True
            arr[:, 1:] = values[name]().reshape(n, nb, -1)
            arr.flags.writeable = False

    _VISUAL_FIELDS = VISUAL_FIELDS

    def model_field(self, name: str) -> np.ndarray:
        """Per-world values ``(num_envs, ...)`` of a MuJoCo model field in MuJoCo's layout (float64,
        writable; keep the array). Written to Newton's replicated model arrays for the worlds passed
        to :meth:`set_const` / :meth:`reset_envs` (or all by :meth:`push_model_fields`); other
        worlds keep what Newton had. Fields and their Newton equivalents:

        * ``body_mass`` [kg] -> ``body_mass`` and ``body_inv_mass`` (row 0, the world body, has none);
          the contact gains of the body's shapes follow the new mass (:class:`NewtonContactCfg`);
        * ``body_inertia`` [kg·m²] (principal moments in MuJoCo's inertial frame ``body_iquat``) ->
          ``body_inertia`` / ``body_inv_inertia`` (rotated into the body frame);
        * ``dof_damping`` [N·m·s/rad or N·s/m] -> ``joint_damping`` (Featherstone; not free-joint DOFs);
        * ``dof_armature`` [kg·m² or kg] -> ``joint_armature`` (Featherstone);
        * ``geom_friction`` column 0 (sliding friction [-]) -> ``shape_material_mu`` of the shapes
          named as the geom (Newton averages the two shapes' coefficients, MuJoCo takes the max);
        * ``site_pos`` [m]: visual only (sites take no part in Newton's physics; used by
          :meth:`data` and :meth:`render`).

        When masses, inertias or armatures change, the joint-limit gains are re-derived per world
        from MuJoCo's ``dof_M0`` of that world. Any other field (``dof_frictionloss``: Newton's
        solvers ignore ``joint_friction``; ``dof_damping`` / ``dof_armature`` on XPBD) raises
        ``ValueError`` listing the supported ones; entries with no Newton equivalent must keep
        their compiled values (``ValueError`` when pushed otherwise)."""
        if name not in self._VISUAL_FIELDS:
            return self._physical.get(name)
        arr = self._visual.get(name)
        if arr is None:
            base = np.asarray(getattr(self.model, name), dtype=np.float64)
            arr = self._visual[name] = np.tile(base[None], (self.num_envs,) + (1,) * base.ndim)
        return arr

    def set_const(self, env_ids: Any = None) -> None:
        """Write the per-world model fields of ``env_ids`` (None = all) to Newton's model arrays
        (see :meth:`model_field`); other worlds are untouched."""
        ids = env_index(env_ids, self.num_envs)
        self._physical.push(np.arange(self.num_envs) if ids is None else ids)

    def push_model_fields(self) -> None:
        """Write the per-world model fields of every world to Newton's model arrays."""
        self._physical.push(np.arange(self.num_envs))

    def _world_model(self, world_id: int) -> mujoco.MjModel:
        """The shared ``MjModel``, or a cached copy holding world ``world_id``'s per-world fields."""
        if not self._visual and not self._physical.values:
            return self.model
        mc = self._world_model_copy
        if mc is None:
            import copy

            mc = self._world_model_copy = copy.copy(self.model)
        for name, arr in (*self._visual.items(), *self._physical.values.items()):
            getattr(mc, name)[:] = arr[world_id]
        return mc

    def data(self, world_id: int = 0, data: mujoco.MjData | None = None, forward: bool = True) -> mujoco.MjData:
        """World ``world_id``'s state as a MuJoCo ``MjData`` (a copy in MuJoCo's convention, with
        ``xfrc_applied``; for rendering and inspection)."""
        w = self._world_id(world_id, "data")
        d = data if data is not None else mujoco.MjData(self.model)
        d.qpos[:] = self.qpos[w]
        d.qvel[:] = self.qvel[w]
        if self._xfrc is not None:
            d.xfrc_applied[:] = self._xfrc[w]
        if forward:
            mujoco.mj_forward(self._world_model(w), d)
        return d

    def _drawing_model(self, world_id: int) -> mujoco.MjModel:
        """:meth:`render` draws with the world's per-world fields (``site_pos`` goals, masses)."""
        return self._world_model(world_id)

    # -- native actuators --------------------------------------------------------------------------
    def native_actuators(self, collection) -> "NativeActuators":
        """Export ``collection``'s recipes to ``newton.actuators`` (see :class:`NativeActuators`)."""
        return NativeActuators(self, collection)
