"""``NewtonBackend``: ``num_envs`` worlds built from the same MJCF by Newton's importer, stepped by a
core Newton solver (Featherstone by default, or XPBD), efforts applied through ``control.joint_f``.

Install: ``pip install newton==1.8.0`` (the core package; it needs only ``warp-lang``). Do **not**
install ``newton[sim]``: it pins ``mujoco~=3.17`` / ``mujoco-warp~=3.17``, which conflicts with
MuJoCo 4 used by the rest of actuator-gym. The core MJCF importer needs nothing else for our
models (it would need ``mujoco`` only for ``<dcmotor>`` actuator elements, which we do not emit).

State in MuJoCo's convention. The task layer reads and writes MuJoCo-layout state; Newton's
generalized coordinates differ for free and ball joints (as read from the Newton 1.8 source):

* quaternions: Newton stores ``(x, y, z, w)``, MuJoCo ``(w, x, y, z)``;
* free joint velocity: Newton's ``joint_qd`` is ``(v_com, omega)``, the velocity of the child
  body's **centre of mass** and its angular velocity, both in the joint's parent frame (the world
  for a floating base); MuJoCo's ``qvel`` is ``(v_origin, omega_body)``, the velocity of the body
  frame's **origin** in the world frame and the angular velocity in the **body** frame;
* ball joint velocity: Newton's is the angular velocity in the parent anchor frame, MuJoCo's in
  the child (body) frame.

:attr:`NewtonBackend.qpos` / :attr:`~NewtonBackend.qvel` convert Newton -> MuJoCo
(``v_origin = v_com - omega x (R c)``, ``omega_body = R^T omega``, ``c`` the body-frame centre of
mass); :meth:`~NewtonBackend.reset_envs` converts MuJoCo -> Newton (quaternions normalized on
write). Hinge and slide coordinates are identical in both layouts. For models with free or ball
joints ``qpos``/``qvel`` are read-only float64 mirrors refreshed on access (write state through
``reset_envs``); for hinge/slide-only models they are zero-copy float32 views as before. Supported
floating bases: free joints whose parent is the world, with no joint frame offset (MuJoCo's
``<freejoint>``); anything else raises ``ValueError``.

Bodies: Newton body ``k`` of a world is MuJoCo body ``k + 1`` (checked by name at construction).
:attr:`~NewtonBackend.xfrc_applied` ``(num_envs, nbody, 6)`` (force, torque, world frame, at the
centre of mass: MuJoCo's and Newton's ``body_f`` convention alike) is written to ``state.body_f``
before every substep; :meth:`~NewtonBackend.field` gives live ``xpos`` / ``xquat`` (wxyz) /
``xmat`` / ``xipos`` refreshed after every ``step``/``reset_envs``.

Contacts (on by default): Newton's ``CollisionPipeline`` runs before every solver step and the
solver applies penalty contact forces with per-shape gains scaled by the carrying body's mass and
the step (:class:`NewtonContactCfg`; ``contacts=False`` turns them off). Limited joints get
critically damped limit springs from MuJoCo's ``solreflimit`` (Newton's imported ``limit_ke = 1e4``
diverges on light links at 5 ms). Physics differ from MuJoCo in any case (another integrator and
contact model); see ``docs/backends.md`` for the measured differences.

Per-world model fields: :meth:`NewtonBackend.model_field` gives MuJoCo-layout ``(num_envs, ...)``
arrays of ``body_mass``, ``body_inertia``, ``dof_damping``, ``dof_armature`` (Featherstone) and
``geom_friction`` column 0, written to Newton's replicated model arrays (``body_mass`` /
``body_inv_mass``, ``body_inertia`` / ``body_inv_inertia``, ``joint_damping``, ``joint_armature``,
``shape_material_mu``) for the worlds given to ``set_const`` / ``reset_envs``, so the task layer's
``model_randomization`` works as on the MuJoCo backends for these fields; others raise ``ValueError``.

Native actuators: :meth:`NewtonBackend.native_actuators` exports an ``ActuatorCollection``'s
recipes (PD, PID, delay, max-effort, DC-motor and position-based clamps, with the per-env values
in force) to ``newton.actuators.Actuator`` objects, so Newton's kernels compute the efforts.
Neural drives and implicit groups are not exported (``ValueError`` naming the group).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np
import torch

from .._math import quat_to_rotmat, rotate, rotate_inverse
from ._warp import HostArray, import_extra
from .base import check_num_envs, env_index
from .mujoco import joint_info
from .warp_common import WarpBackend

__all__ = ["NewtonBackend", "NewtonContactCfg", "NativeActuators"]

_SOLVERS = ("featherstone", "xpbd")


@dataclass(frozen=True)
class NewtonContactCfg:
    """Penalty contacts of :class:`NewtonBackend`: Newton's ``CollisionPipeline`` finds the contacts
    (the MJCF's ``contype``/``conaffinity`` filtering as imported by Newton), the solver turns each
    into a spring-damper force with Coulomb-limited viscous friction, integrated explicitly.

    Explicit integration is stable only while a contact's gains stay below its body's mass over
    the step, so the gains are set **per collision shape** from the mass ``m`` [kg] of the body
    that carries it and the contact step ``h = physics_dt / substeps`` [s]:
    ``ke = ke_scale * m / h^2``, ``kd = kd_scale * m / h``, ``kf = kf_scale * m / h``. Static
    shapes (the floor) carry zero gains and the body's shape twice the value (Newton averages the
    two shapes of a pair), so a body-vs-floor contact gets exactly these gains. Example: the
    quadruped's calf+foot body (0.25 kg) at 5 ms gets ``ke = 1e4 N/m``, ``kd = 50 N·s/m``,
    ``kf = 50 N·s/m``."""

    ke_scale: float = 1.0
    """Normal stiffness ``ke = ke_scale * m / h^2`` [N/m] (stability limit: about 4)."""
    kd_scale: float = 1.0
    """Normal damping (while approaching) ``kd = kd_scale * m / h`` [N·s/m] (limit: about 2)."""
    kf_scale: float = 1.0
    """Friction slope ``kf = kf_scale * m / h`` [N·s/m]: tangential force ``kf * v_t`` up to the
    Coulomb limit ``mu * f_n`` (limit: about 2; smaller values let loaded feet creep faster)."""
    mu: float | None = None
    """Coulomb friction coefficient [-]; ``None`` keeps the MJCF geoms' ``friction[0]``."""
    substeps: int = 1
    """Solver steps per physics substep [-], each of ``h = physics_dt / substeps`` [s] with its own
    collision pass (stiffer contacts, more compute)."""

    def validate(self) -> None:
        for name in ("ke_scale", "kd_scale", "kf_scale"):
            v = getattr(self, name)
            if isinstance(v, bool) or not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise ValueError(f"NewtonContactCfg: {name} must be a finite number >= 0, got {v!r}")
        if isinstance(self.substeps, bool) or not isinstance(self.substeps, int) or self.substeps < 1:
            raise ValueError(f"NewtonContactCfg: substeps must be an integer >= 1, got {self.substeps!r}")
        mu = self.mu
        if mu is not None and (isinstance(mu, bool) or not (isinstance(mu, (int, float)) and math.isfinite(mu) and mu >= 0)):
            raise ValueError(f"NewtonContactCfg: mu must be None or a finite number >= 0, got {self.mu!r}")


def _import_newton():
    return import_extra("newton", "backend='newton' needs newton==1.8.0 (core package, not newton[sim])")


class StateConverter:
    """MuJoCo <-> Newton generalized state for one model (see the module docstring for the
    conventions). ``free``: ``(qpos_adr, dof_adr, com)`` per free joint, ``com`` the child body's
    centre of mass in its frame [m]; ``ball``: ``(qpos_adr, dof_adr)`` per ball joint."""

    def __init__(self, free: list[tuple[int, int, np.ndarray]], ball: list[tuple[int, int]]):
        self.free, self.ball = free, ball

    @property
    def identity(self) -> bool:
        return not self.free and not self.ball

    def to_mujoco(self, jq: np.ndarray, jqd: np.ndarray, qpos: np.ndarray, qvel: np.ndarray) -> None:
        """Newton ``joint_q (n, nq)``, ``joint_qd (n, nv)`` -> MuJoCo ``qpos``, ``qvel`` (written in place)."""
        qpos[:] = jq
        qvel[:] = jqd
        for a, d, com in self.free:
            wxyz = jq[:, [a + 6, a + 3, a + 4, a + 5]].astype(np.float64)
            R = quat_to_rotmat(wxyz)
            omega = jqd[:, d + 3:d + 6].astype(np.float64)
            qpos[:, a + 3:a + 7] = wxyz
            qvel[:, d:d + 3] = jqd[:, d:d + 3] - np.cross(omega, rotate(R, np.broadcast_to(com, omega.shape)))
            qvel[:, d + 3:d + 6] = rotate_inverse(R, omega)
        for a, d in self.ball:
            wxyz = jq[:, [a + 3, a, a + 1, a + 2]].astype(np.float64)
            qpos[:, a:a + 4] = wxyz
            qvel[:, d:d + 3] = rotate_inverse(quat_to_rotmat(wxyz), jqd[:, d:d + 3].astype(np.float64))

    def to_newton(self, qpos: np.ndarray, qvel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """MuJoCo ``qpos (n, nq)``, ``qvel (n, nv)`` -> Newton ``(joint_q, joint_qd)`` (fresh float64)."""
        jq, jqd = np.array(qpos, dtype=np.float64), np.array(qvel, dtype=np.float64)
        for a, d, com in self.free:
            wxyz = _unit(qpos[:, a + 3:a + 7], "qpos", a + 3)
            R = quat_to_rotmat(wxyz)
            omega = rotate(R, qvel[:, d + 3:d + 6])
            jq[:, a + 3:a + 6], jq[:, a + 6] = wxyz[:, 1:], wxyz[:, 0]
            jqd[:, d:d + 3] = qvel[:, d:d + 3] + np.cross(omega, rotate(R, np.broadcast_to(com, omega.shape)))
            jqd[:, d + 3:d + 6] = omega
        for a, d in self.ball:
            wxyz = _unit(qpos[:, a:a + 4], "qpos", a)
            jq[:, a:a + 3], jq[:, a + 3] = wxyz[:, 1:], wxyz[:, 0]
            jqd[:, d:d + 3] = rotate(quat_to_rotmat(wxyz), qvel[:, d:d + 3])
        return jq, jqd


def _unit(quat: np.ndarray, name: str, adr: int) -> np.ndarray:
    q = np.asarray(quat, dtype=np.float64)
    norm = np.linalg.norm(q, axis=1, keepdims=True)
    if not np.all(np.isfinite(norm)) or np.any(norm < 1e-9):
        raise ValueError(f"NewtonBackend.reset_envs: {name}[:, {adr}:{adr + 4}] holds a zero or non-finite quaternion")
    return q / norm


_BODY_FIELDS = ("xpos", "xquat", "xmat", "xipos")


def _is_identity(xf, tol: float = 1e-6) -> bool:
    v = np.asarray(xf, dtype=np.float64)  # (px, py, pz, qx, qy, qz, qw)
    return bool(np.all(np.abs(v[:3]) < tol) and (np.all(np.abs(v[3:6]) < tol) and abs(abs(v[6]) - 1) < tol))


def _converter(m: mujoco.MjModel, art, newton) -> StateConverter:
    """Check that Newton's import of one world matches MuJoCo's model (joints, bodies, layout) and
    build the state converter; ``ValueError`` naming what differs or is unsupported."""
    JT = newton.JointType
    names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) or f"joint{j}" for j in range(m.njnt)]
    # Newton adds a FIXED joint (no coordinates) for every body MuJoCo welds to its parent
    moving = [i for i, t in enumerate(art.joint_type) if int(t) != int(JT.FIXED)]
    labels = [art.joint_label[i].rsplit("/", 1)[-1] for i in moving]
    if labels != names or art.joint_coord_count != m.nq or art.joint_dof_count != m.nv:
        raise ValueError(
            f"NewtonBackend: Newton's import has joints {labels} ({art.joint_coord_count} coordinates, "
            f"{art.joint_dof_count} DOFs), MuJoCo's {names} ({m.nq}, {m.nv}); the layouts must match"
        )
    bodies = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b) or "" for b in range(1, m.nbody)]
    blabels = [lab.rsplit("/", 1)[-1] for lab in art.body_label]
    if len(blabels) != len(bodies) or any(b and b != lab for b, lab in zip(bodies, blabels)):  # unnamed: any
        raise ValueError(f"NewtonBackend: Newton's import has bodies {blabels}, MuJoCo's {bodies}; they must match")
    free, ball = [], []
    for jm in range(m.njnt):
        kind, j = int(m.jnt_type[jm]), moving[jm]
        a, d = int(m.jnt_qposadr[jm]), int(m.jnt_dofadr[jm])
        if int(art.joint_q_start[j]) != a or int(art.joint_qd_start[j]) != d:
            raise ValueError(f"NewtonBackend: joint {names[jm]!r} has another address in Newton's layout")
        if kind == int(mujoco.mjtJoint.mjJNT_FREE):
            ok = (int(art.joint_type[j]) == int(JT.FREE) and art.joint_parent[j] == -1
                  and _is_identity(art.joint_X_p[j]) and _is_identity(art.joint_X_c[j]))
            if not ok:
                raise ValueError(
                    f"NewtonBackend: free joint {names[jm]!r} must be a floating base (parent: the world, no "
                    "joint frame offset) for the MuJoCo <-> Newton state conversion"
                )
            free.append((a, d, np.asarray(art.body_com[int(art.joint_child[j])], dtype=np.float64)))
        elif kind == int(mujoco.mjtJoint.mjJNT_BALL):
            xc = np.asarray(art.joint_X_c[j], dtype=np.float64)
            if int(art.joint_type[j]) != int(JT.BALL) or not _is_identity(np.r_[0.0, 0.0, 0.0, xc[3:]]):
                raise ValueError(f"NewtonBackend: ball joint {names[jm]!r} has a rotated child frame in Newton's import")
            ball.append((a, d))
    return StateConverter(free, ball)



class _ModelFields:
    """Per-world physical MuJoCo model fields of a :class:`NewtonBackend` (see
    :meth:`NewtonBackend.model_field`): float64 host arrays in MuJoCo's layout ``(num_envs, ...)``,
    written to Newton's replicated model arrays by :meth:`push` for the worlds given.

    Entries without a Newton equivalent (the world body's row, damping of free-joint DOFs, which
    Featherstone does not apply, torsional/rolling friction, geoms matching no Newton shape by name)
    must keep their compiled values; :meth:`push` raises ``ValueError`` naming the entry otherwise."""

    SUPPORTED = {
        "featherstone": ("body_mass", "body_inertia", "dof_damping", "dof_armature", "geom_friction"),
        "xpbd": ("body_mass", "body_inertia", "geom_friction"),
    }
    _INERTIAL = ("body_mass", "body_inertia", "dof_armature")  # inputs of dof_M0 (joint-limit gains)

    def __init__(self, be: "NewtonBackend"):
        self.be = be
        self.values: dict[str, np.ndarray] = {}
        self._nominal: dict[str, np.ndarray] = {}
        self._fixed: dict[str, tuple[np.ndarray, str]] = {}  # entries that must keep their nominal value, why
        self._scratch: tuple[mujoco.MjModel, mujoco.MjData] | None = None
        self._shape_pairs: tuple[np.ndarray, np.ndarray] | None = None  # (geom ids, local shape ids)

    @property
    def supported(self) -> tuple[str, ...]:
        return self.SUPPORTED[self.be.solver_name]

    def get(self, name: str) -> np.ndarray:
        arr = self.values.get(name)
        if arr is not None:
            return arr
        be, m = self.be, self.be.model
        if name not in self.supported:
            raise ValueError(
                f"NewtonBackend: per-world model field {name!r} has no equivalent in Newton's "
                f"{be.solver_name} solver; supported: {list(self.supported)} (and the visual-only "
                f"{list(NewtonBackend._VISUAL_FIELDS)}); use backend='mujoco' or 'mujoco_warp' for the others"
            )
        if name == "geom_friction" and be.contact_cfg is not None and be.contact_cfg.mu is not None:
            raise ValueError(
                "NewtonBackend: model field 'geom_friction' cannot be randomized while NewtonContactCfg.mu "
                f"({be.contact_cfg.mu}) overrides the geoms' friction; use NewtonContactCfg(mu=None)"
            )
        base = np.array(getattr(m, name), dtype=np.float64)
        fixed = np.zeros(base.shape, dtype=bool)
        if name.startswith("body_"):
            fixed[0] = True
            why = "row 0 is MuJoCo's world body, which Newton does not have"
        elif name == "dof_damping":
            for jm in range(m.njnt):
                if int(m.jnt_type[jm]) == int(mujoco.mjtJoint.mjJNT_FREE):
                    fixed[int(m.jnt_dofadr[jm]):int(m.jnt_dofadr[jm]) + 6] = True
            why = "Featherstone applies no joint damping to free-joint DOFs"
        elif name == "geom_friction":
            g, _ = self._geom_shapes()
            fixed[:, 1:] = True
            fixed[np.setdiff1d(np.arange(m.ngeom), g), 0] = True
            why = ("Newton's penalty contacts use only the sliding friction (column 0), of geoms whose "
                   "name matches a Newton shape")
        else:
            why = ""
        self._nominal[name] = base
        self._fixed[name] = (fixed, why)
        arr = self.values[name] = np.tile(base[None], (be.num_envs,) + (1,) * base.ndim)
        return arr

    def _geom_shapes(self) -> tuple[np.ndarray, np.ndarray]:
        """``(geom ids, per-world shape ids)``: every MuJoCo geom paired with the Newton shapes of a
        world that carry its name (an MJCF geom may become several shapes; unnamed geoms: none)."""
        if self._shape_pairs is None:
            be, m = self.be, self.be.model
            labels = [be.nmodel.shape_label[int(i)].rsplit("/", 1)[-1] for i in be._shape_rows[0]]
            g_ids, s_ids = [], []
            for g in range(m.ngeom):
                name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g)
                for s, lab in enumerate(labels):
                    if name and lab == name:
                        g_ids.append(g)
                        s_ids.append(s)
            self._shape_pairs = (np.asarray(g_ids, dtype=np.int64), np.asarray(s_ids, dtype=np.int64))
        return self._shape_pairs

    def _check(self, name: str, ids: np.ndarray) -> None:
        fixed, why = self._fixed[name]
        if not fixed.any():
            return
        vals = self.values[name][ids]
        bad = (vals != self._nominal[name][None]) & fixed[None]
        if bad.any():
            pos, *idx = (int(i) for i in np.argwhere(bad)[0])
            raise ValueError(
                f"NewtonBackend: model field {name!r} entry {tuple(idx)} of world {int(ids[pos])} was changed "
                f"to {float(vals[(pos, *idx)])!r}, which Newton cannot represent ({why}); keep it at its "
                f"compiled value {float(self._nominal[name][tuple(idx)])!r}"
            )

    def push(self, ids: np.ndarray) -> None:
        """Write the values of worlds ``ids`` to Newton's model arrays and notify the solver."""
        if not self.values or len(ids) == 0:
            return
        be, wp, nm = self.be, self.be.wp, self.be.nmodel
        newton = be._newton
        Flags = newton.ModelFlags
        for name in self.values:
            self._check(name, ids)
        nb, nv = be._nb, be._nv

        def write(arr, rows: np.ndarray, vals: np.ndarray) -> None:
            t = wp.to_torch(arr)
            t[torch.as_tensor(rows.reshape(-1), device=be.device)] = torch.as_tensor(
                vals.reshape(rows.size, *t.shape[1:]), dtype=t.dtype, device=be.device)

        flags = 0
        body_rows = ids[:, None] * nb + np.arange(nb)[None, :]
        dof_rows = ids[:, None] * nv + np.arange(nv)[None, :]
        with be._scope():
            if "body_mass" in self.values:
                mass = self.values["body_mass"][ids, 1:]
                write(nm.body_mass, body_rows, mass)
                write(nm.body_inv_mass, body_rows, np.where(mass > 0, 1.0 / np.where(mass > 0, mass, 1.0), 0.0))
                flags |= Flags.BODY_INERTIAL_PROPERTIES
                if be._pipeline is not None:
                    be._set_contact_gains(ids)
                    flags |= Flags.SHAPE_PROPERTIES
            if "body_inertia" in self.values:
                diag = self.values["body_inertia"][ids, 1:]  # principal moments in the body's inertial frame
                R = np.broadcast_to(be._body_iframe, (len(ids), nb, 3, 3))
                inv = np.where(diag > 0, 1.0 / np.where(diag > 0, diag, 1.0), 0.0)
                write(nm.body_inertia, body_rows, np.einsum("...ij,...j,...kj->...ik", R, diag, R))
                write(nm.body_inv_inertia, body_rows, np.einsum("...ij,...j,...kj->...ik", R, inv, R))
                flags |= Flags.BODY_INERTIAL_PROPERTIES
            if "dof_damping" in self.values:
                write(nm.joint_damping, dof_rows, self.values["dof_damping"][ids])
                flags |= Flags.JOINT_DOF_PROPERTIES | Flags.JOINT_DOF_FORCE_PROPERTIES
            if "dof_armature" in self.values:
                write(nm.joint_armature, dof_rows, self.values["dof_armature"][ids])
                flags |= Flags.JOINT_DOF_PROPERTIES | Flags.JOINT_DOF_INERTIAL_PROPERTIES
            if "geom_friction" in self.values:
                g, s = self._geom_shapes()
                if g.size:
                    write(nm.shape_material_mu, be._shape_rows[ids][:, s], self.values["geom_friction"][ids][:, g, 0])
                    flags |= Flags.SHAPE_PROPERTIES
            if be._limits and any(n in self.values for n in self._INERTIAL):
                be._set_limit_gains(ids, self._dof_M0(ids))
                flags |= Flags.JOINT_DOF_PROPERTIES | Flags.JOINT_DOF_FORCE_PROPERTIES
            if flags:
                be.solver.notify_model_changed(int(flags))

    def _dof_M0(self, ids: np.ndarray) -> np.ndarray:
        """``(len(ids), nv)`` MuJoCo's ``dof_M0`` of each world's masses/inertias/armatures
        (``mj_setConst`` on a scratch model, one world at a time)."""
        if self._scratch is None:
            import copy

            sm = copy.copy(self.be.model)
            self._scratch = (sm, mujoco.MjData(sm))
        sm, sd = self._scratch
        out = np.empty((len(ids), sm.nv))
        for i, w in enumerate(ids):
            for name in self._INERTIAL:
                if name in self.values:
                    getattr(sm, name)[:] = self.values[name][w]
            mujoco.mj_setConst(sm, sd)
            out[i] = sm.dof_M0
        return out


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
        with self._scope():
            art = newton.ModelBuilder()
            art.add_mjcf(mjcf)
            self.converter = _converter(m, art, newton)
            builder = newton.ModelBuilder()
            builder.replicate(art, self.num_envs)
            self.nmodel = builder.finalize(device=self.wp_device)
            self._limits = self._limit_specs(m)
            self._set_limit_gains(np.arange(self.num_envs), np.tile(np.asarray(m.dof_M0, np.float64), (self.num_envs, 1)))
            self.state_0, self.state_1 = self.nmodel.state(), self.nmodel.state()
            self.control = self.nmodel.control()
            self._pipeline = self.contacts = None
            if contacts is not None and self.nmodel.shape_count:
                self._set_contact_materials(contacts)
                self._pipeline = newton.CollisionPipeline(self.nmodel)
                self.contacts = self._pipeline.contacts()
            if solver == "featherstone":
                self.solver = newton.solvers.SolverFeatherstone(self.nmodel, angular_damping=0.0)
            else:
                self.solver = newton.solvers.SolverXPBD(self.nmodel)
        self._nb = m.nbody - 1  # Newton bodies per world (MuJoCo's minus the world body)
        self._body_iframe = quat_to_rotmat(np.asarray(m.body_iquat[1:], dtype=np.float64))  # principal axes
        self._shape_rows = self._world_shapes()
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
        self._physical = _ModelFields(self)  # per-world physical model fields (body_mass, ...)
        self.reset_envs(None)

    def _limit_specs(self, m: mujoco.MjModel) -> list[tuple[int, float]]:
        """``(dof, tc)`` of every limited 1-DOF joint: MuJoCo's ``solreflimit`` time constant,
        clamped to ``>= 2 dt`` as MuJoCo does."""
        out = []
        for jm in range(m.njnt):
            one_dof = int(m.jnt_type[jm]) in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
            if m.jnt_limited[jm] and one_dof:
                out.append((int(m.jnt_dofadr[jm]), max(float(m.jnt_solref[jm, 0]), 2.0 * self.physics_dt)))
        return out

    def _set_limit_gains(self, ids: np.ndarray, M0: np.ndarray) -> None:
        """Joint-limit penalty gains stable at the substep for worlds ``ids``. Newton's importer gives
        every limited joint ``limit_ke = 1e4``, ``limit_kd = 10``: on a light link (the quadruped's
        knee, 0.015 kg·m² with armature) explicit integration at 5 ms diverges as soon as a limit is
        violated. Here each limited 1-DOF joint gets a critically damped spring with MuJoCo's
        ``solreflimit`` time constant ``tc``: ``ke = M0 / tc^2``, ``kd = 2 M0 / tc``, ``M0`` the
        joint-space inertia at ``qpos0`` (``dof_M0 (len(ids), nv)``, armature included; recomputed
        per world when masses, inertias or armatures are randomized)."""
        if not self._limits:
            return
        dofs = np.array([d for d, _ in self._limits])
        tc = np.array([t for _, t in self._limits])
        rows = torch.as_tensor((np.asarray(ids)[:, None] * self.model.nv + dofs[None, :]).reshape(-1), device=self.device)
        m0 = np.asarray(M0, dtype=np.float64)[:, dofs]
        for arr, val in ((self.nmodel.joint_limit_ke, m0 / tc**2), (self.nmodel.joint_limit_kd, 2.0 * m0 / tc)):
            t = self.wp.to_torch(arr)
            t[rows] = torch.as_tensor(val.reshape(-1), dtype=t.dtype, device=self.device)

    def _world_shapes(self) -> np.ndarray:
        """``(num_envs, shapes per world)`` Newton shape ids of each world, in the import's order."""
        nm = self.nmodel
        if not nm.shape_count:
            return np.zeros((self.num_envs, 0), dtype=np.int64)
        sw = nm.shape_world.numpy()
        rows = [np.flatnonzero(sw == w) for w in range(self.num_envs)]
        if len({len(r) for r in rows}) != 1:
            raise ValueError("NewtonBackend: Newton's worlds hold different numbers of shapes")
        return np.stack(rows).astype(np.int64)

    def _contact_gains(self, shapes: np.ndarray) -> dict[str, np.ndarray]:
        """``{ke, kd, kf}`` of Newton shapes ``shapes`` from their carrying body's current mass."""
        cfg, nm = self.contact_cfg, self.nmodel
        body = nm.shape_body.numpy()[shapes]
        mass = np.where(body >= 0, nm.body_mass.numpy()[np.maximum(body, 0)], 0.0)
        h = self.physics_dt / cfg.substeps
        return {"ke": 2 * cfg.ke_scale * mass / h**2, "kd": 2 * cfg.kd_scale * mass / h, "kf": 2 * cfg.kf_scale * mass / h}

    def _set_contact_materials(self, cfg: NewtonContactCfg) -> None:
        """Per-shape contact gains from the carrying body's mass (see :class:`NewtonContactCfg`)."""
        nm = self.nmodel
        for name, value in self._contact_gains(np.arange(nm.shape_count)).items():
            getattr(nm, f"shape_material_{name}").assign(value.astype(np.float32))
        if cfg.mu is not None:
            nm.shape_material_mu.fill_(float(cfg.mu))

    def _set_contact_gains(self, ids: np.ndarray) -> None:
        """Re-derive the contact gains of worlds ``ids``' shapes after their body masses changed."""
        shapes = self._shape_rows[ids].reshape(-1)
        rows = torch.as_tensor(shapes, device=self.device)
        for name, value in self._contact_gains(shapes).items():
            t = self.wp.to_torch(getattr(self.nmodel, f"shape_material_{name}"))
            t[rows] = torch.as_tensor(value, dtype=t.dtype, device=self.device)

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
        with self._scope():
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
        with self._scope():
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

    _VISUAL_FIELDS = ("site_pos",)

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
