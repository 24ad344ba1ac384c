"""Per-world physical MuJoCo model fields of a :class:`~actuator_gym.backends.newton.NewtonBackend`
(``body_mass``, ``body_inertia``, ``dof_damping``, ``dof_armature``, ``geom_friction``), written to
Newton's replicated model arrays; see :meth:`NewtonBackend.model_field`. The joint-limit and contact
gains derived from the masses live here too (set at construction, re-derived when the masses change)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import mujoco
import numpy as np
import torch

from ..._math import quat_to_rotmat

if TYPE_CHECKING:
    from .backend import NewtonBackend
    from .contacts import NewtonContactCfg

__all__ = ["ModelFields", "VISUAL_FIELDS"]

VISUAL_FIELDS = ("site_pos",)
"""Per-world model fields that take no part in Newton's physics (drawn by ``data`` / ``render``)."""


class ModelFields:
    """Per-world physical MuJoCo model fields of a :class:`NewtonBackend` (see
    :meth:`NewtonBackend.model_field`): float64 host arrays in MuJoCo's layout ``(num_envs, ...)``,
    written to Newton's replicated model arrays by :meth:`push` for the worlds given.

    Entries without a Newton equivalent (the world body's row, damping of free-joint DOFs, which
    Featherstone does not apply, torsional/rolling friction, geoms matching no Newton shape by name)
    must keep their compiled values; :meth:`push` raises ``ValueError`` naming the entry otherwise.

    Built inside the backend's :meth:`~NewtonBackend.scope` once ``be.nmodel`` exists: it sets the
    joint-limit gains and (with ``be.contact_cfg`` and shapes) the contact gains of every world."""

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
        m = be.model
        self.limits = self._limit_specs(m)
        """``(dof, tc)`` of every limited 1-DOF joint (:meth:`set_limit_gains`)."""
        self.shape_rows = self._world_shapes()
        """``(num_envs, shapes per world)`` Newton shape ids of each world, in the import's order."""
        self._body_iframe = quat_to_rotmat(np.asarray(m.body_iquat[1:], dtype=np.float64))  # principal axes
        self.set_limit_gains(np.arange(be.num_envs), np.tile(np.asarray(m.dof_M0, np.float64), (be.num_envs, 1)))
        if be.contact_cfg is not None and be.nmodel.shape_count:
            self._set_contact_materials(be.contact_cfg)

    def _limit_specs(self, m: mujoco.MjModel) -> list[tuple[int, float]]:
        """``(dof, tc)`` of every limited 1-DOF joint: MuJoCo's ``solreflimit`` time constant,
        clamped to ``>= 2 dt`` as MuJoCo does."""
        out = []
        for jm in range(m.njnt):
            one_dof = int(m.jnt_type[jm]) in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
            if m.jnt_limited[jm] and one_dof:
                out.append((int(m.jnt_dofadr[jm]), max(float(m.jnt_solref[jm, 0]), 2.0 * self.be.physics_dt)))
        return out

    def set_limit_gains(self, ids: np.ndarray, M0: np.ndarray) -> None:
        """Joint-limit penalty gains stable at the substep for worlds ``ids``. Newton's importer gives
        every limited joint ``limit_ke = 1e4``, ``limit_kd = 10``: on a light link (the quadruped's
        knee, 0.015 kg·m² with armature) explicit integration at 5 ms diverges as soon as a limit is
        violated. Here each limited 1-DOF joint gets a critically damped spring with MuJoCo's
        ``solreflimit`` time constant ``tc``: ``ke = M0 / tc^2``, ``kd = 2 M0 / tc``, ``M0`` the
        joint-space inertia at ``qpos0`` (``dof_M0 (len(ids), nv)``, armature included; recomputed
        per world when masses, inertias or armatures are randomized)."""
        if not self.limits:
            return
        dofs = np.array([d for d, _ in self.limits])
        tc = np.array([t for _, t in self.limits])
        be = self.be
        rows = torch.as_tensor((np.asarray(ids)[:, None] * be.model.nv + dofs[None, :]).reshape(-1), device=be.device)
        m0 = np.asarray(M0, dtype=np.float64)[:, dofs]
        for arr, val in ((be.nmodel.joint_limit_ke, m0 / tc**2), (be.nmodel.joint_limit_kd, 2.0 * m0 / tc)):
            t = be.wp.to_torch(arr)
            t[rows] = torch.as_tensor(val.reshape(-1), dtype=t.dtype, device=be.device)

    def _world_shapes(self) -> np.ndarray:
        nm, n = self.be.nmodel, self.be.num_envs
        if not nm.shape_count:
            return np.zeros((n, 0), dtype=np.int64)
        sw = nm.shape_world.numpy()
        rows = [np.flatnonzero(sw == w) for w in range(n)]
        if len({len(r) for r in rows}) != 1:
            raise ValueError("NewtonBackend: Newton's worlds hold different numbers of shapes")
        return np.stack(rows).astype(np.int64)

    def _contact_gains(self, shapes: np.ndarray) -> dict[str, np.ndarray]:
        """``{ke, kd, kf}`` of Newton shapes ``shapes`` from their carrying body's current mass."""
        cfg, nm = self.be.contact_cfg, self.be.nmodel
        body = nm.shape_body.numpy()[shapes]
        mass = np.where(body >= 0, nm.body_mass.numpy()[np.maximum(body, 0)], 0.0)
        h = self.be.physics_dt / cfg.substeps
        return {"ke": 2 * cfg.ke_scale * mass / h**2, "kd": 2 * cfg.kd_scale * mass / h, "kf": 2 * cfg.kf_scale * mass / h}

    def _set_contact_materials(self, cfg: "NewtonContactCfg") -> None:
        """Per-shape contact gains from the carrying body's mass (see :class:`NewtonContactCfg`)."""
        nm = self.be.nmodel
        for name, value in self._contact_gains(np.arange(nm.shape_count)).items():
            getattr(nm, f"shape_material_{name}").assign(value.astype(np.float32))
        if cfg.mu is not None:
            nm.shape_material_mu.fill_(float(cfg.mu))

    def _set_contact_gains(self, ids: np.ndarray) -> None:
        """Re-derive the contact gains of worlds ``ids``' shapes after their body masses changed."""
        be = self.be
        shapes = self.shape_rows[ids].reshape(-1)
        rows = torch.as_tensor(shapes, device=be.device)
        for name, value in self._contact_gains(shapes).items():
            t = be.wp.to_torch(getattr(be.nmodel, f"shape_material_{name}"))
            t[rows] = torch.as_tensor(value, dtype=t.dtype, device=be.device)

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
                f"{list(VISUAL_FIELDS)}); use backend='mujoco' or 'mujoco_warp' for the others"
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
            labels = [be.nmodel.shape_label[int(i)].rsplit("/", 1)[-1] for i in self.shape_rows[0]]
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
        from newton import ModelFlags as Flags

        be, wp, nm = self.be, self.be.wp, self.be.nmodel
        for name in self.values:
            self._check(name, ids)
        nb, nv = be.model.nbody - 1, be.model.nv  # Newton has no world body

        def write(arr, rows: np.ndarray, vals: np.ndarray) -> None:
            t = wp.to_torch(arr)
            t[torch.as_tensor(rows.reshape(-1), device=be.device)] = torch.as_tensor(
                vals.reshape(rows.size, *t.shape[1:]), dtype=t.dtype, device=be.device)

        flags = 0
        body_rows = ids[:, None] * nb + np.arange(nb)[None, :]
        dof_rows = ids[:, None] * nv + np.arange(nv)[None, :]
        with be.scope():
            if "body_mass" in self.values:
                mass = self.values["body_mass"][ids, 1:]
                write(nm.body_mass, body_rows, mass)
                write(nm.body_inv_mass, body_rows, np.where(mass > 0, 1.0 / np.where(mass > 0, mass, 1.0), 0.0))
                flags |= Flags.BODY_INERTIAL_PROPERTIES
                if be.contacts is not None:
                    self._set_contact_gains(ids)
                    flags |= Flags.SHAPE_PROPERTIES
            if "body_inertia" in self.values:
                diag = self.values["body_inertia"][ids, 1:]  # principal moments in the body's inertial frame
                R = np.broadcast_to(self._body_iframe, (len(ids), nb, 3, 3))
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
                    write(nm.shape_material_mu, self.shape_rows[ids][:, s], self.values["geom_friction"][ids][:, g, 0])
                    flags |= Flags.SHAPE_PROPERTIES
            if self.limits and any(n in self.values for n in self._INERTIAL):
                self.set_limit_gains(ids, self._dof_M0(ids))
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
