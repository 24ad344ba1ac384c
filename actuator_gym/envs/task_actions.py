"""The batched task's action spec: :func:`task_action_spec` resolves a task's config (``action_joints``,
``action_mode``, ``normalize_actions``, ``action_scale``, ``action_offset``, ``action_bounds``) into
the :class:`~actuator_gym.rig.ActionSpec` from which its rig builds the one
:class:`~actuator_gym.actions.ActionMap` (the wrapper's, too); :func:`action_info` is what ``info``
reports of it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..actions import ActionMap, motor_peaks
from ..actuators.params import match_names
from ..rig.rig import ActionSpec

__all__ = ["task_action_spec", "action_info"]


def task_action_spec(task: Any, collection: Any) -> ActionSpec:
    """The action spec of ``task`` (its cfg, backend joints and ``collection``): the joints of
    ``cfg.action_joints`` (actuated, in model order; the rotors follow them in the map); every check
    raises before anything changes."""
    cfg, owner = task.cfg, type(task.cfg).__name__
    ids: list[int] = []
    if collection is not None:
        ids = match_names(cfg.action_joints, list(task.joint_names), "action_joints")
        if not ids:
            raise ValueError(f"{owner}: action_joints {list(np.atleast_1d(cfg.action_joints))} match none of the "
                             f"joints {list(task.joint_names)}")
        passive = [task.joint_names[i] for i in ids if task.joint_names[i] in collection.passive_joints]
        if passive:
            raise ValueError(f"action_joints: joints {passive} are in no actuator group; add a group or drop them")
    # the effort default: the task model's own motors (native execution appends its actuators after them)
    own = task.native.actuators.first_actuator if task.native is not None else None
    peaks = motor_peaks(task.model, [task.joint_names[i] for i in ids], num_actuators=own)
    return ActionSpec(cfg.action_mode, task.backend.joints, ids, peaks=peaks, normalize=cfg.normalize_actions,
                      scale=cfg.action_scale, offset=cfg.action_offset, bounds=cfg.action_bounds)


def action_info(actions: ActionMap, reset: np.ndarray) -> dict[str, Any]:
    """``info["action_scale"]`` / ``info["action_offset"]`` ``(num_envs, num_actions)``: the mapping
    in force, in every info (the same keys every call, as torchrl needs); masks ``_action_scale`` /
    ``_action_offset``: the envs reset in this call."""
    n = len(reset)
    return {"action_scale": np.tile(actions.scale, (n, 1)), "_action_scale": reset.copy(),
            "action_offset": np.tile(actions.offset, (n, 1)), "_action_offset": reset.copy()}
