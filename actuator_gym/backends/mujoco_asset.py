"""The MJCF as the asset of Isaac Lab-style configs: authored values, and joint properties written back.

Two directions, one place, used by both :class:`~actuator_gym.wrappers.ActuatorWrapper` (a
Gymnasium MuJoCo env's model) and :class:`~actuator_gym.envs.BatchedTask` (its model, before the
batched backend is built):

* :class:`MjcfJoints` reads what a config leaves ``None`` (:mod:`actuator_gym.actuators.asset`):
  position-servo gains, force ranges, ``gear x ctrlrange`` of motors.
* :func:`plan_joint_properties` / :func:`apply_joint_properties` write the configs' joint
  properties into the model (validated first, written only when every check passed).

==========================  =====================  ===============================================
config field (Isaac Lab)    MuJoCo                 limits of the mapping
==========================  =====================  ===============================================
``armature`` [kg·m²]        ``dof_armature``       exact
``friction`` [N·m]          ``dof_frictionloss``   static (Coulomb) level; MuJoCo's dry friction is
                                                   a soft constraint (slight creep below the level)
``dynamic_friction`` [N·m]  ``dof_frictionloss``   MuJoCo has one dry level: used when ``friction``
                                                   is None; with both, it must be <= ``friction``
                                                   and the static level is written (a warning)
``viscous_friction``        ``dof_damping``        exact (passive ``-b qd``, implicit in MuJoCo)
[N·m·s/rad]
``joint_velocity_limit``    --                     MuJoCo has no solver velocity limit: accepted,
                                                   not enforced (a warning)
==========================  =====================  ===============================================
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import Any, Sequence

import mujoco
import numpy as np

from .._checks import real_array
from ..actuators.asset import JOINT_PROPERTY_FIELDS
from ..actuators.params import match_names
from .mujoco import one_dof_joint_names

__all__ = ["MjcfJoints", "plan_joint_properties", "apply_joint_properties", "write_joint_properties", "JOINT_PROPERTY_MAP"]

JOINT_PROPERTY_MAP = {"armature": "dof_armature", "viscous_friction": "dof_damping"}
"""Config field -> MjModel per-DOF array, for the one-to-one fields (friction: see the module doc)."""

_AFFINE = int(mujoco.mjtBias.mjBIAS_AFFINE)
_NOBIAS = int(mujoco.mjtBias.mjBIAS_NONE)
_FIXED = int(mujoco.mjtGain.mjGAIN_FIXED)
_TRN_JOINT = int(mujoco.mjtTrn.mjTRN_JOINT)


class MjcfJoints:
    """The per-joint values a MuJoCo model authors (an :class:`~actuator_gym.actuators.asset.AssetJoints`).

    * ``stiffness`` / ``damping``: the joint's position servo (a joint-transmission actuator with
      an affine bias, ``kp = -biasprm[1]``, ``kv = -biasprm[2]``) in joint space, ``gear² kp`` /
      ``gear² kv``; a joint without one has none (``dof_damping`` is passive damping, which is
      ``viscous_friction``, not a drive gain).
    * ``effort_limit`` [N·m]: the smallest of the joint's ``actuatorfrcrange`` and, per actuator
      on it, ``|gear| max|forcerange|`` (force-limited) or, for a motor (no bias, fixed gain) with a
      control range, ``|gear gainprm[0]| max|ctrlrange|``; none where none applies.
    * ``velocity_limit``: MJCF has none.
    """

    name = "the MJCF"

    def __init__(self, model: mujoco.MjModel):
        self.model = model

    def _actuators(self, jid: int) -> list[int]:
        m = self.model
        return [a for a in range(m.nu) if int(m.actuator_trntype[a]) == _TRN_JOINT and int(m.actuator_trnid[a, 0]) == jid]

    def _value(self, quantity: str, jid: int) -> float | None:
        m = self.model
        acts = self._actuators(jid)
        if quantity in ("stiffness", "damping"):
            col = 1 if quantity == "stiffness" else 2
            servos = [a for a in acts if int(m.actuator_biastype[a]) == _AFFINE and m.actuator_biasprm[a, 1] < 0]
            if not servos:
                return None
            return float(sum(-m.actuator_biasprm[a, col] * m.actuator_gear[a, 0] ** 2 for a in servos))
        if quantity == "effort_limit":
            found = []
            if m.jnt_actfrclimited[jid]:
                found.append(float(np.abs(m.jnt_actfrcrange[jid]).max()))
            for a in acts:
                g = abs(float(m.actuator_gear[a, 0]))
                if m.actuator_forcelimited[a]:
                    found.append(g * float(np.abs(m.actuator_forcerange[a]).max()))
                elif (int(m.actuator_biastype[a]) == _NOBIAS and int(m.actuator_gaintype[a]) == _FIXED
                      and m.actuator_ctrllimited[a]):
                    found.append(g * abs(float(m.actuator_gainprm[a, 0])) * float(np.abs(m.actuator_ctrlrange[a]).max()))
            return min(found) if found else None
        if quantity == "velocity_limit":
            return None
        raise ValueError(f"MjcfJoints: unknown quantity {quantity!r}; known: stiffness, damping, effort_limit, velocity_limit")

    def joint_values(self, quantity: str, joint_names: Sequence[str]) -> list[float | None]:
        return [self._value(quantity, mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_JOINT, n)) for n in joint_names]


def _per_joint(value: Any, names: Sequence[str], where: str) -> dict[int, float]:
    """``{column: value}`` of a joint property over the group's joints ``names``: a number, a
    sequence of ``len(names)`` numbers, or a ``{regex: number}`` dict (joints no key matches keep
    the model's value; a key matching none, or a joint matched twice, is a ``ValueError``); values
    finite and >= 0."""
    if isinstance(value, Mapping):
        out: dict[int, float] = {}
        for key, v in value.items():
            cols = match_names([key], names, where)
            if not cols:
                raise ValueError(f"{where}: key {key!r} matches no joint of the group; joints are {list(names)}")
            for c in cols:
                if c in out:
                    raise ValueError(f"{where}: joint '{names[c]}' is matched by two keys (the second is {key!r})")
                out[c] = float(real_array(v, "value", where).reshape(()))
    elif hasattr(value, "sample") or hasattr(value, "dim"):
        raise ValueError(
            f"{where}: must be a number, a sequence of {len(names)} values or a {{regex: value}} dict on MuJoCo models, "
            f"got {type(value).__name__}; randomize it with model_randomization (e.g. field='dof_armature')"
        )
    else:
        arr = real_array(value, "value", where)
        if arr.ndim == 0:
            arr = np.full(len(names), float(arr))
        if arr.shape != (len(names),):
            raise ValueError(f"{where}: expected a number or {len(names)} values (one per joint {list(names)}), got shape {arr.shape}")
        out = {i: float(v) for i, v in enumerate(arr)}
    bad = {names[c]: v for c, v in out.items() if not (math.isfinite(v) and v >= 0)}
    if bad:
        raise ValueError(f"{where}: must be >= 0 and finite, got {bad}")
    return out


def plan_joint_properties(model: mujoco.MjModel, cfgs: Mapping[str, Any], joint_names: Sequence[str],
                          owner: str) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The joint-property writes of every group ``{group: config}`` over the candidate joints
    ``joint_names`` (each group's ``joint_names_expr`` full-matched against them), as
    ``[(MjModel array, dof indices, values)]``; every value checked, nothing written."""
    writes = []
    for g, cfg in cfgs.items():
        cols = match_names(getattr(cfg, "joint_names_expr", []), joint_names, f"{owner}: group '{g}'")
        if not cols:
            continue  # the collection names the group that matches nothing
        names = [joint_names[c] for c in cols]
        dofs = np.asarray([model.jnt_dofadr[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, n)] for n in names])
        given = {f: _per_joint(getattr(cfg, f), names, f"{owner}: group '{g}' {f}")
                 for f in JOINT_PROPERTY_FIELDS if getattr(cfg, f, None) is not None}
        for f, arr in JOINT_PROPERTY_MAP.items():
            if f in given:
                writes.append((getattr(model, arr), dofs[list(given[f])], np.asarray(list(given[f].values()))))
        static, kinetic = given.get("friction", {}), given.get("dynamic_friction", {})
        higher = {names[c]: (static[c], v) for c, v in kinetic.items() if c in static and v > static[c]}
        if higher:
            raise ValueError(f"{owner}: group '{g}': dynamic_friction must be <= friction (static), got {higher} (static, dynamic)")
        if any(c in static and v != static[c] for c, v in kinetic.items()):
            warnings.warn(f"{owner}: group '{g}': MuJoCo has one dry-friction level (dof_frictionloss); the static "
                          "friction is written and dynamic_friction is not modelled", stacklevel=3)
        dry = {**kinetic, **static}
        if dry:
            writes.append((model.dof_frictionloss, dofs[list(dry)], np.asarray(list(dry.values()))))
        if getattr(cfg, "joint_velocity_limit", None) is not None:
            warnings.warn(f"{owner}: group '{g}': joint_velocity_limit is not enforced on MuJoCo (no solver-side "
                          "velocity limit); actuator_velocity_limit acts in the actuator model", stacklevel=3)
    return writes


def apply_joint_properties(writes: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> None:
    """Write the planned joint properties (:func:`plan_joint_properties`) into the model."""
    for arr, dofs, vals in writes:
        arr[dofs] = vals


_FROM_MJCF_TEXT = ("newton",)
"""Backends built from the MJCF text, not from the task's MjModel (they would not see the writes)."""


def write_joint_properties(model: Any, joint_cfgs: Mapping[str, Any], backend: str, owner: str) -> None:
    """A batched task's joint properties: check and write the joint groups' ``armature``, ``friction``,
    ``dynamic_friction``, ``viscous_friction`` into ``model`` before the batched backend is built from
    it, so every world starts from them (nothing is written when a check fails; fields left None keep
    the MJCF's values); ``ValueError`` on a backend that builds its worlds from the MJCF text."""
    writes = plan_joint_properties(model, joint_cfgs, one_dof_joint_names(model), owner)
    if writes and backend in _FROM_MJCF_TEXT:
        groups = [g for g, c in joint_cfgs.items()
                  if any(getattr(c, f, None) is not None for f in JOINT_PROPERTY_FIELDS)]
        raise ValueError(
            f"{owner}: groups {groups} set joint properties ({' / '.join(JOINT_PROPERTY_FIELDS)}), "
            f"which backend={backend!r} does not take from the task's model (it builds its worlds from the MJCF text); "
            "set them in the MJCF, or use backend='mujoco' or 'mujoco_warp'"
        )
    apply_joint_properties(writes)
