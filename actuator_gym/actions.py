"""Action interpretation, shared by :class:`~actuator_gym.wrappers.ActuatorWrapper` and the batched
tasks: ``target = offset + scale * action`` per action element, and the action space's bounds.

Bounds of a **position** channel are the joint's range expressed in action units,
``(range - offset) / scale``; an unlimited joint gets ``offset +- UNLIMITED_HALF_SPAN[kind]``
(pi rad for a hinge, 1 m for a slide) around its offset. Velocity and effort channels are
``[-1, 1]`` (the scale says what one action unit is).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ._checks import real_array

__all__ = ["UNLIMITED_HALF_SPAN", "per_element", "position_bounds"]

UNLIMITED_HALF_SPAN = {"hinge": np.pi, "slide": 1.0}
"""Half-width [rad or m] of the position action bounds around the offset for unlimited joints."""


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
