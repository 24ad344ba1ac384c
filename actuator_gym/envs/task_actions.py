"""The batched task's action mapping, split from :mod:`actuator_gym.envs.task`.

:func:`task_actions` resolves a task's config (``action_joints``, ``action_mode``,
``normalize_actions``, ``action_scale``, ``action_offset``, ``action_bounds``) into one
:class:`TaskActions`: which joints the actions command and, per action element (the joint actions,
then one per rotor), ``target = offset + scale * action`` and the action space's bounds. The rules
are :mod:`actuator_gym.actions`' (the wrapper's, too); :func:`action_info` is what ``info``
reports of them at reset.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._checks import check_interval
from ..actions import joint_limits, normalized_mapping, per_element, position_bounds, thrust_mapping, use_normalized

__all__ = ["TaskActions", "task_actions", "action_info", "given_action_options"]

_LIMIT_PARAM = {"velocity": "actuator_velocity_limit", "effort": "actuator_effort_limit"}


@dataclass(frozen=True)
class TaskActions:
    """A task's action mapping. ``scale``, ``offset``, ``low``, ``high`` and ``names`` are per action
    element ``(num_actions,)``: the joint actions (joints ``joint_ids``, in the target unit of
    ``cfg.action_mode``), then the rotors' (thrust [N]: ``offset`` and ``scale`` are the middle and
    half-width of the group's ``thrust_range``)."""

    joint_ids: np.ndarray
    scale: np.ndarray
    offset: np.ndarray
    low: np.ndarray
    high: np.ndarray
    names: list[str]
    normalized: bool
    """True: scale and offset come from the joints' limits (:func:`~actuator_gym.actions.normalized_mapping`)."""


def given_action_options(cfg: Any) -> dict[str, bool]:
    """``{option: given}`` of the cfg's explicit action options (what ``normalize_actions=None`` looks at)."""
    return {k: getattr(cfg, k) is not None for k in ("action_scale", "action_offset", "action_bounds")}


def task_actions(task: Any) -> TaskActions:
    """The action mapping of ``task`` (its cfg, backend joints, collection and rotors); every check
    raises before anything changes."""
    cfg = task.cfg
    owner = type(cfg).__name__
    normalized = use_normalized(cfg.normalize_actions, given_action_options(cfg), owner)
    if task.collection is not None:
        ids, scale, offset, low, high = _joint_actions(task, normalized)
    else:
        ids, scale, offset = np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0)
        low = high = np.zeros(0)
    names = [task.joint_names[i] for i in ids]
    if task.rotors is not None:
        r_scale, r_offset = thrust_mapping(task.rotors)
        r = task.rotors.num_rotors
        scale, offset = np.concatenate([scale, r_scale]), np.concatenate([offset, r_offset])
        low, high = np.concatenate([low, -np.ones(r)]), np.concatenate([high, np.ones(r)])
        names += [f"rotor '{n}'" for n in task.rotors.rotor_names]
    return TaskActions(ids, scale, offset, low.astype(np.float32), high.astype(np.float32), names, normalized)


def _joint_actions(task: Any, normalized: bool):
    from ..actuators.params import match_names

    cfg, owner = task.cfg, type(task.cfg).__name__
    ids = match_names(cfg.action_joints, list(task.joint_names), "action_joints")
    if not ids:
        raise ValueError(
            f"{owner}: action_joints {list(np.atleast_1d(cfg.action_joints))} match none of the joints "
            f"{list(task.joint_names)}"
        )
    passive = [task.joint_names[i] for i in ids if task.joint_names[i] in task.collection.passive_joints]
    if passive:
        raise ValueError(f"action_joints: joints {passive} are in no actuator group; add a group or drop them")
    ids = np.asarray(ids, dtype=np.int64)
    k, ji, mode = len(ids), task.backend.joints, cfg.action_mode
    default_pos = ji.default_pos[ids].astype(np.float64)
    if normalized:
        if mode == "position":
            scale, offset = normalized_mapping("position", ranges=ji.range[ids], kinds=[ji.kind[i] for i in ids],
                                               default_pos=default_pos)
        else:  # +-the actuator's limit; where it is infinite or randomized, 1 target unit per action unit
            scale, offset = normalized_mapping(mode, limits=joint_limits(task.collection, ids, _LIMIT_PARAM[mode]),
                                               default_scale=np.ones(k))
        return ids, scale, offset, -np.ones(k), np.ones(k)

    def per_joint(v, what):
        return per_element(v, k, f"{what} (one value per action joint)", owner)

    scale = per_joint(1.0 if cfg.action_scale is None else cfg.action_scale, "action_scale")
    if np.any(scale == 0):
        raise ValueError(f"{owner}: action_scale must be non-zero, got {scale.tolist()}")
    if isinstance(cfg.action_offset, str):
        if cfg.action_offset != "default":
            raise ValueError(f"{owner}: action_offset: the only string allowed is 'default', got {cfg.action_offset!r}")
        offset = default_pos
    else:
        offset = per_joint(0.0 if cfg.action_offset is None else cfg.action_offset, "action_offset")
    if cfg.action_bounds is not None:
        lo, hi = check_interval(cfg.action_bounds, "action_bounds", owner, strict=True, allow_inf=True)
        low, high = np.full(k, lo), np.full(k, hi)
    elif mode == "position":  # the wrapper's rule (actuator_gym.actions)
        low, high = position_bounds(ji.range[ids], [ji.kind[i] for i in ids], scale, offset)
    else:
        low, high = -np.ones(k), np.ones(k)
    return ids, scale, offset, low, high


def action_info(actions: TaskActions, reset: np.ndarray) -> dict[str, Any]:
    """``info["action_scale"]`` / ``info["action_offset"]`` ``(num_envs, num_actions)``: the mapping
    in force, in every info (the same keys every call, as torchrl needs); masks ``_action_scale`` /
    ``_action_offset``: the envs reset in this call."""
    n = len(reset)
    return {"action_scale": np.tile(actions.scale, (n, 1)), "_action_scale": reset.copy(),
            "action_offset": np.tile(actions.offset, (n, 1)), "_action_offset": reset.copy()}
