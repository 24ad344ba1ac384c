"""Copying what an ``MjModel`` holds now into another compilation of the same file (native execution
appends actuators and recompiles: :mod:`.mujoco_native`)."""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

__all__ = ["copy_model_values"]


_STRUCTS = ("opt", "vis", "stat")


def copy_model_values(src: mujoco.MjModel, dst: mujoco.MjModel) -> None:
    """Copy what ``src`` holds now into ``dst``, a compilation of the same file with actuators
    appended: every model array of the same shape whose name does not concern actuators or names
    (physical properties edited at run time, randomized fields, the wrapper's joint properties),
    and the ``opt`` / ``vis`` / ``stat`` structs (integrator, timestep, offscreen size, ...)."""
    for name in dir(src):
        if name.startswith("_") or "actuator" in name or name.startswith("name") or name == "names":
            continue
        a = getattr(src, name, None)
        if not isinstance(a, np.ndarray):
            continue
        b = getattr(dst, name, None)
        if isinstance(b, np.ndarray) and b.shape == a.shape and b.dtype == a.dtype and b.flags.writeable:
            b[...] = a
    for struct in _STRUCTS:
        _copy_struct(getattr(src, struct), getattr(dst, struct))


def _copy_struct(a: Any, b: Any) -> None:
    for f in dir(a):
        if f.startswith("_"):
            continue
        v = getattr(a, f)
        if callable(v):
            continue
        if isinstance(v, np.ndarray):
            getattr(b, f)[...] = v
        elif isinstance(v, (int, float)):
            try:
                setattr(b, f, v)
            except (AttributeError, TypeError):  # read-only fields
                pass
        else:
            _copy_struct(v, getattr(b, f))
