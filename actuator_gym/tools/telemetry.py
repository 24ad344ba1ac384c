"""``rollout``'s telemetry by name: CSV columns and plot legends named after the joints and rotors,
and the torque-speed operating points of each DC-motor group.

Column scheme: ``KEY[NAME]`` -- ``joint_pos[FL_calf_joint]``, ``applied_effort[hinge]``,
``applied_thrust[rotor_0]`` -- with ``KEY`` the ``info["actuator"]`` key and ``NAME`` the joint
(``task.joint_names`` / ``ActuatorWrapper.joint_names``) or rotor (``rotor_names``) that element
belongs to, in the telemetry's order; ``KEY[i]`` (the element's index) where an env names neither.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["names", "column_names", "dc_motor_groups"]

ROTOR_KEYS = ("applied_thrust",)
"""``rollout``'s telemetry keys over the rotors (the others are over the joints)."""


def _holder(env: Any) -> Any:
    """What holds the joint and rotor names and the actuator collection: the batched task behind one
    of our tasks, else the env (an ``ActuatorWrapper`` reached through ``get_wrapper_attr``)."""
    task = getattr(env.unwrapped, "task", None)
    return env if task is None else task


def _attr(holder: Any, name: str) -> Any:
    try:
        return getattr(holder, name) if not hasattr(holder, "get_wrapper_attr") else holder.get_wrapper_attr(name)
    except AttributeError:
        return None


def names(env: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(joint names, rotor names)`` the env's telemetry runs over (empty where it has none)."""
    h = _holder(env)
    rotors = _attr(h, "rotors")
    rotor_names = _attr(h, "rotor_names") or getattr(rotors, "rotor_names", None) or ()
    return tuple(_attr(h, "joint_names") or ()), tuple(rotor_names)


def column_names(key: str, width: int, env_names: tuple[tuple[str, ...], tuple[str, ...]]) -> list[str]:
    """The CSV columns of telemetry ``key`` with ``width`` elements (module doc)."""
    own = env_names[1] if key in ROTOR_KEYS else env_names[0]
    return [f"{key}[{n}]" for n in own] if len(own) == width else [f"{key}[{i}]" for i in range(width)]


def dc_motor_groups(env: Any) -> dict[str, tuple[list[int], np.ndarray]]:
    """``{group: (telemetry indices of its joints, (k, 3) distinct (saturation_effort, velocity_limit,
    effort_limit) of its joints in env 0)}`` for each group clamped by a DC-motor torque-speed curve."""
    from ..actuators.clamps import ClampingDCMotor

    h = _holder(env)
    coll, joints = _attr(h, "collection"), names(env)[0]
    if coll is None:
        return {}
    params = coll.parameters()
    out = {}
    for group, model in coll.items():
        p = params[group]
        keys = ("saturation_effort", "actuator_velocity_limit", "actuator_effort_limit")
        if not any(isinstance(c, ClampingDCMotor) for c in getattr(model, "clamping", ())) or not all(k in p for k in keys):
            continue
        ids = [joints.index(coll.joint_names[i]) for i in coll.joint_ids(group) if coll.joint_names[i] in joints]
        rows = np.stack([np.asarray(p[k])[0] for k in keys], axis=1).astype(np.float64)
        out[group] = (ids, np.unique(rows, axis=0))
    return out
