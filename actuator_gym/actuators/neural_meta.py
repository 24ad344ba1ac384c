"""Checks of an actuator network's metadata and layout, shared by the drives of :mod:`.neural`:
values picked from keywords or checkpoint metadata, scales, history indices, short reprs."""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np
import torch

from .limits import NetworkLimits

__all__ = ["SCALE_KEYS", "meta_value", "finite_scale", "history_steps", "as_mapping", "short_repr"]


def meta_value(name: str, value: Any, meta: Mapping[str, Any], default: Any, *aliases: str) -> Any:
    if value is not None:
        return value
    for key in (name, *aliases):
        if key in meta:
            return meta[key]
    return default


SCALE_KEYS = ("pos_scale", "vel_scale", "torque_scale", "effort_scale")


def finite_scale(owner: str, name: str, v: Any, nonzero: bool = False) -> float:
    """``float(v)``; ``ValueError`` naming ``owner`` unless a finite number (and non-zero with ``nonzero``)."""
    if isinstance(v, (bool, str, bytes)):
        raise ValueError(f"{owner}: {name} must be a number, got {v!r}")
    try:
        f = float(v)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{owner}: {name} must be a number, got {v!r}") from None
    if not math.isfinite(f) or (nonzero and f == 0.0):
        allowed = "finite, non-zero numbers" if nonzero else "finite numbers"
        raise ValueError(f"{owner}: {name} must be finite{' and non-zero' if nonzero else ''}, got {f}; allowed: {allowed}")
    return f


def history_steps(owner: str, idx: Any, limits: NetworkLimits) -> list[int]:
    """``input_idx`` as a list of ints in ``[0, limits.max_history_steps)``, at most that many."""
    items = list(idx) if isinstance(idx, (list, tuple, np.ndarray, torch.Tensor)) else None
    hi = limits.max_history_steps

    def step(i: Any) -> bool:
        if isinstance(i, (bool, np.bool_, str, bytes)):
            return False
        try:
            f = float(i)
        except (TypeError, ValueError, RuntimeError, OverflowError):
            return False
        return math.isfinite(f) and f.is_integer() and 0 <= f < hi

    if not (items and len(items) <= hi and all(step(i) for i in items)):
        raise ValueError(
            f"{owner}: input_idx must be a non-empty list of at most {limits.max_history_steps} integers in "
            f"[0, {limits.max_history_steps - 1}] (substeps back; NetworkLimits.max_history_steps), got {short_repr(idx)}"
        )
    return [int(i) for i in items]


def as_mapping(owner: str, name: str, x: Any) -> Mapping:
    if x is None:
        return {}
    if not isinstance(x, Mapping):
        raise ValueError(f"{owner}: {name} must be a mapping, got {type(x).__name__}")
    return x


def short_repr(x: Any, n: int = 80) -> str:
    r = repr(x)
    return r if len(r) <= n else r[:n] + "..."
