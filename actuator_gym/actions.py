"""Action interpretation, shared by :class:`~actuator_gym.wrappers.ActuatorWrapper` and the batched
tasks: ``target = offset + scale * action`` per action element, and the action space's bounds.

Two ways to choose ``scale`` and ``offset``:

* **normalized** (:func:`normalized_mapping`): the action space is ``Box(-1, 1)`` and ``[-1, 1]``
  maps onto each element's reachable target interval -- a **position** channel onto the joint's
  range (``offset`` its middle, ``scale`` its half-width; an unlimited joint: ``offset`` its default
  pose, ``scale`` :data:`UNLIMITED_HALF_SPAN`), a **velocity** channel onto
  ``+-actuator_velocity_limit``, an **effort** channel onto ``+-actuator_effort_limit``. Where that
  limit is infinite (or randomized: not one value in every env), the channel keeps its
  un-normalized default scale (the action space stays ``[-1, 1]``).
* **explicit** (the user's ``action_scale`` / ``action_offset``): bounds of a **position** channel
  are then the joint's range expressed in action units, ``(range - offset) / scale``
  (:func:`position_bounds`; an unlimited joint gets ``offset +- UNLIMITED_HALF_SPAN[kind]``);
  velocity and effort channels are ``[-1, 1]``.

:func:`use_normalized` is the rule that picks one (``normalize_actions=None``: normalized unless
the user gave a scale, an offset or bounds).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from ._checks import real_array

__all__ = ["UNLIMITED_HALF_SPAN", "per_element", "position_bounds", "use_normalized", "normalized_mapping",
           "joint_limits", "thrust_mapping"]

UNLIMITED_HALF_SPAN = {"hinge": np.pi, "slide": 1.0}
"""Half-width [rad or m] of the position target interval around the offset for unlimited joints."""


def per_element(value: Any, n: int, what: str, owner: str) -> np.ndarray:
    """``value`` (a number, or ``n`` numbers) as a finite float64 array ``(n,)``; ``TypeError`` for
    non-numbers, ``ValueError`` naming ``owner`` and ``what`` for a wrong length or a non-finite value."""
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{owner}: {what} must be a number or a sequence of {n} numbers, got {value!r}")
    arr = real_array(value, what, owner)
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape != (n,):
        raise ValueError(f"{owner}: {what} must be a number or have shape ({n},), got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{owner}: {what} must be finite, got {arr.tolist()}")
    return arr


def position_bounds(ranges: np.ndarray, kinds: Sequence[str], scale: np.ndarray, offset: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` action bounds ``(J,)`` of position targets ``offset + scale * action`` over
    joints with limits ``ranges`` ``(J, 2)`` [rad or m] (``+-inf`` where unlimited) and ``kinds``
    (``"hinge"`` / ``"slide"``)."""
    lo, hi = np.array(ranges[:, 0], dtype=np.float64), np.array(ranges[:, 1], dtype=np.float64)
    for i, kind in enumerate(kinds):
        if not (np.isfinite(lo[i]) and np.isfinite(hi[i])):
            lo[i], hi[i] = offset[i] - UNLIMITED_HALF_SPAN[kind], offset[i] + UNLIMITED_HALF_SPAN[kind]
    a1, a2 = (lo - offset) / scale, (hi - offset) / scale
    return np.minimum(a1, a2), np.maximum(a1, a2)


def use_normalized(normalize: Any, given: Mapping[str, bool], owner: str) -> bool:
    """Whether the mapping is normalized: ``normalize`` True / False, or None (normalized unless one
    of ``given`` -- ``{option name: given by the user}`` -- is set). True together with a given
    option is a ``ValueError`` naming it."""
    if normalize is not None and not isinstance(normalize, (bool, np.bool_)):
        raise TypeError(f"{owner}: normalize_actions must be True, False or None (auto), got {normalize!r}")
    named = [k for k, v in given.items() if v]
    if normalize is None:
        return not named
    if normalize and named:
        raise ValueError(
            f"{owner}: normalize_actions=True computes the action scale and offset from the joints' limits; "
            f"{named} cannot be given with it (set normalize_actions=False to choose them yourself)"
        )
    return bool(normalize)


def normalized_mapping(
    channel: str,
    *,
    ranges: np.ndarray | None = None,
    kinds: Sequence[str] = (),
    default_pos: np.ndarray | None = None,
    limits: np.ndarray | None = None,
    default_scale: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(scale, offset)`` ``(J,)`` mapping actions in ``[-1, 1]`` onto the reachable targets.

    ``channel="position"``: ``ranges`` ``(J, 2)`` joint limits [rad or m] (``+-inf`` where
    unlimited), ``kinds`` and ``default_pos`` (the offset of unlimited joints); ``scale`` =
    half-width, ``offset`` = middle. ``"velocity"`` / ``"effort"``: ``limits`` ``(J,)`` (the
    actuator's velocity [rad/s or m/s] or effort [N·m or N] limit; ``inf`` or NaN where there is no
    single finite one) and ``default_scale`` ``(J,)`` used there; offset 0.
    """
    if channel == "position":
        lo, hi = np.array(ranges[:, 0], dtype=np.float64), np.array(ranges[:, 1], dtype=np.float64)
        scale, offset = np.empty(len(lo)), np.empty(len(lo))
        for i, kind in enumerate(kinds):
            if np.isfinite(lo[i]) and np.isfinite(hi[i]):
                scale[i], offset[i] = (hi[i] - lo[i]) / 2.0, (hi[i] + lo[i]) / 2.0
            else:
                scale[i], offset[i] = UNLIMITED_HALF_SPAN[kind], float(default_pos[i])
        return scale, offset
    lim = np.asarray(limits, dtype=np.float64)
    ok = np.isfinite(lim) & (lim > 0)
    return np.where(ok, lim, np.asarray(default_scale, dtype=np.float64)), np.zeros(len(lim))


def joint_limits(collection: Any, joint_ids: Sequence[int], name: str) -> np.ndarray:
    """``(J,)`` the value of parameter ``name`` (``"actuator_velocity_limit"`` /
    ``"actuator_effort_limit"``) in force for each joint of ``joint_ids`` (columns of
    ``collection``): NaN where the joint's group has no such parameter or its values differ between
    envs (randomized, per-env), ``inf`` where unlimited."""
    out = np.full(len(joint_ids), np.nan)
    pos = {int(j): k for k, j in enumerate(joint_ids)}
    for g in collection:
        cols = [(pos[j], c) for c, j in enumerate(collection.joint_ids(g)) if j in pos]
        if not cols:
            continue
        try:
            values = collection[g].parameter(name).cpu().numpy()
        except KeyError:  # the group's model has no such parameter: no limit to normalize by
            continue
        for k, c in cols:
            col = values[:, c]
            if np.all(col == col[0]):
                out[k] = col[0]
    return out


def thrust_mapping(rotors: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(scale, offset)`` ``(num_rotors,)`` [N] of rotor actions (:class:`~actuator_gym.rotors.RotorGroups`):
    ``T_cmd = offset + scale * a`` with ``offset`` / ``scale`` the middle / half-width of each group's
    ``thrust_range`` (the affine form of :func:`actuator_gym.rotors.action_to_thrust`)."""
    scale, offset = np.zeros(rotors.num_rotors), np.zeros(rotors.num_rotors)
    for g in rotors:
        t_lo, t_hi = (float(v) for v in rotors.group(g).cfg.thrust_range)
        cols = rotors.columns(g)
        scale[cols], offset[cols] = (t_hi - t_lo) / 2.0, (t_hi + t_lo) / 2.0
    return scale, offset
