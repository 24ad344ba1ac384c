"""Per-world physical MuJoCo model fields of a :class:`~actuator_gym.backends.newton.NewtonBackend`
(``body_mass``, ``body_inertia``, ``dof_damping``, ``dof_armature``, ``geom_friction``), written to
Newton's replicated model arrays; see :meth:`NewtonBackend.model_field`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import mujoco
import numpy as np
import torch

if TYPE_CHECKING:
    from .backend import NewtonBackend

__all__ = ["ModelFields", "VISUAL_FIELDS"]

VISUAL_FIELDS = ("site_pos",)
"""Per-world model fields that take no part in Newton's physics (drawn by ``data`` / ``render``)."""


class ModelFields:
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
