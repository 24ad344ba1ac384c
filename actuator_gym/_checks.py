"""Validation of user-facing values, written once for the whole runtime.

Every public constructor and method of the runtime (parts, ``Actuator``, ``ActuatorCollection``,
``Thruster``, distributions, ``ActuatorWrapper``, the tasks) checks its arguments with these
helpers, so one kind of mistake gets one kind of message: one line naming the owner, the argument
and what is allowed. Wrong types raise ``TypeError``; bad values (NaN, out of range, wrong shape,
unknown names) raise ``ValueError``. Nothing here mutates anything: callers validate everything
first, then write state.

The helpers run at construction and at parameter-set time; the per-step checks (actions, states)
are one dtype test plus the finiteness test the boundary already does.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

__all__ = [
    "MAX_NUM_ENVS",
    "MAX_BATCH_ELEMENTS",
    "SEED_LIMIT",
    "MAX_DT",
    "UnknownNameError",
    "UnsupportedError",
    "is_int",
    "is_real",
    "type_name",
    "check_real",
    "check_int",
    "check_bool",
    "check_interval",
    "check_str",
    "check_seed",
    "check_num_envs",
    "check_batch",
    "check_device",
    "check_dtype",
    "check_names",
    "check_dt",
    "real_array",
    "env_index",
]

MAX_NUM_ENVS = 2**24
"""Largest ``num_envs`` accepted anywhere (16,777,216)."""
MAX_BATCH_ELEMENTS = 2**25
"""Largest ``num_envs * num_joints`` (or ``num_rotors``) of one model: every state buffer has this
many elements, and a typo such as ``num_envs=2**40`` should be an error, not an allocation."""
SEED_LIMIT = 2**64
"""Seeds are integers in ``[0, SEED_LIMIT)`` (the range of torch's generators)."""
MAX_DT = 1.0
"""Largest physics substep ``dt`` [s] accepted (:func:`check_dt`): a substep is milliseconds; a
``dt`` of ``3.5e38`` would be +inf in float32 and turn a PID integral into NaN."""

_FLOAT_DTYPES = (torch.float32, torch.float64)
_DEVICE_TYPES = ("cpu", "cuda")


class UnknownNameError(KeyError, ValueError):
    """An unknown name (a parameter, an actuator group): a ``KeyError``, since name lookups behave
    like a mapping's, and a ``ValueError``, since every refused input of the runtime is one of
    ``ValueError`` / ``TypeError``."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class UnsupportedError(NotImplementedError, ValueError):
    """A combination the runtime does not implement (e.g. a learned drive in the Stable-PD effort
    mode): a ``ValueError``, as every refused input of the runtime, and a ``NotImplementedError``,
    as Newton raises for the same case (ported code catches either)."""


SENSOR_MAX_STD = 1e6
"""Largest sensor ``noise_std`` / ``bias_std`` (the columns' units; ``ObservationSensor`` and a transfer
file's ``sensor:``): far past any sensor's, and the corrupted observations stay finite in float32."""

def _who(owner: str, name: str) -> str:
    return f"{owner}: {name}" if owner else name


def type_name(value: Any) -> str:
    return type(value).__name__


def is_int(value: Any) -> bool:
    """An integer (Python or numpy), not a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def is_real(value: Any) -> bool:
    """A real number (Python or numpy int/float), not a bool."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def _describe(low: float, high: float, low_open: bool, high_open: bool, allow_inf: bool, kind: str) -> str:
    fmt = (lambda v: f"{v:g}") if kind == "number" else (lambda v: str(int(v)))
    if kind == "int":
        head = "an integer"
        if low > -math.inf and high < math.inf:
            return f"{head} in [{fmt(low)}, {fmt(high)}]"
    else:
        head = "a number" if allow_inf else "a finite number"
    parts = []
    if low > -math.inf:
        parts.append(f"{'>' if low_open else '>='} {fmt(low)}")
    if high < math.inf:
        parts.append(f"{'<' if high_open else '<='} {fmt(high)}")
    text = f"{head} {' and '.join(parts)}" if parts else head
    if allow_inf:
        text += " (+inf allowed)"
    return text


def check_real(
    value: Any,
    name: str,
    owner: str = "",
    *,
    low: float = -math.inf,
    high: float = math.inf,
    low_open: bool = False,
    high_open: bool = False,
    allow_inf: bool = False,
) -> float:
    """``value`` as a float: a real number (not a bool), not NaN, finite unless ``allow_inf``
    (+inf only), inside ``[low, high]`` (open ends with ``low_open`` / ``high_open``)."""
    what = _describe(low, high, low_open, high_open, allow_inf, "number")
    if not is_real(value):
        raise TypeError(f"{_who(owner, name)} must be {what}, got {type_name(value)} {value!r}")
    try:
        v = float(value)
    except OverflowError:
        raise ValueError(f"{_who(owner, name)} must be {what}, got an integer of {len(str(value))} digits (beyond the float range)") from None
    bad = math.isnan(v) or (math.isinf(v) and not (allow_inf and v > 0))
    bad = bad or (v < low or (low_open and v == low)) or (v > high or (high_open and v == high))
    if bad:
        raise ValueError(f"{_who(owner, name)} must be {what}, got {v}")
    return v


def check_int(value: Any, name: str, owner: str = "", *, low: int | None = None, high: int | None = None) -> int:
    """``value`` as an int: an integer (not a bool, not a float) inside ``[low, high]``."""
    what = _describe(-math.inf if low is None else low, math.inf if high is None else high, False, False, False, "int")
    if not is_int(value):
        raise TypeError(f"{_who(owner, name)} must be {what}, got {type_name(value)} {value!r}")
    v = int(value)
    if (low is not None and v < low) or (high is not None and v > high):
        raise ValueError(f"{_who(owner, name)} must be {what}, got {v}")
    return v


def check_bool(value: Any, name: str, owner: str = "") -> bool:
    """``value`` as a bool: ``True`` or ``False`` (numpy bools too), nothing truthy."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{_who(owner, name)} must be True or False, got {type_name(value)} {value!r}")
    return bool(value)


def check_str(value: Any, name: str, owner: str = "") -> str:
    if not isinstance(value, str):
        raise TypeError(f"{_who(owner, name)} must be a string, got {type_name(value)} {value!r}")
    return value


def check_patterns(value: Any, name: str, owner: str = "", hint: str = "") -> list[str]:
    """A non-empty list of regular-expression strings (one string: a list of it); ``TypeError`` for
    another type, ``ValueError`` for an empty list, each naming ``name`` (and ``hint``, e.g. what None means)."""
    value = [value] if isinstance(value, str) else value
    if not isinstance(value, (list, tuple)) or not all(isinstance(p, str) for p in value):
        raise TypeError(f"{_who(owner, name)} must be a non-empty list of regex strings{hint}, got {value!r}")
    if not value:
        raise ValueError(f"{_who(owner, name)} must be a non-empty list of regex strings{hint}, got {value!r}")
    return list(value)


def check_interval(
    value: Any,
    name: str,
    owner: str = "",
    *,
    strict: bool = False,
    low: float = -math.inf,
    high: float = math.inf,
    allow_inf: bool = False,
) -> tuple[float, float]:
    """A ``(low, high)`` pair of real numbers with ``low <= high`` (``<`` with ``strict``), both
    finite unless ``allow_inf`` (then +-inf allowed), both inside ``[low, high]``."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != 2:
        raise TypeError(f"{_who(owner, name)} must be a (low, high) pair of numbers, got {value!r}")
    lo_v, hi_v = value[0], value[1]
    out = []
    for label, v in (("low", lo_v), ("high", hi_v)):
        if not is_real(v):
            raise TypeError(f"{_who(owner, name)} must be a (low, high) pair of numbers, got {value!r} ({label} is {type_name(v)})")
        try:
            f = float(v)
        except OverflowError:
            f = math.copysign(math.inf, v)
        if math.isnan(f) or (math.isinf(f) and not allow_inf) or f < low or f > high:
            rng = "finite" if not allow_inf else "non-NaN"
            if low > -math.inf or high < math.inf:
                rng += f" and in [{low:g}, {high:g}]"
            raise ValueError(f"{_who(owner, name)} must be a (low, high) pair of {rng} numbers, got {tuple(value)!r}")
        out.append(f)
    if out[1] < out[0] or (strict and out[1] == out[0]):
        op = ">" if strict else ">="
        raise ValueError(f"{_who(owner, name)} must have high {op} low, got {tuple(out)!r}")
    return out[0], out[1]


def check_seed(seed: Any, owner: str = "", name: str = "seed", *, allow_none: bool = True) -> int | None:
    """None (with ``allow_none``), or an integer in ``[0, 2**64)`` (not a bool, not a float)."""
    what = "None or an integer in [0, 2**64)" if allow_none else "an integer in [0, 2**64)"
    if seed is None and allow_none:
        return None
    if not is_int(seed):
        raise TypeError(f"{_who(owner, name)} must be {what}, got {type_name(seed)} {seed!r}")
    if not 0 <= int(seed) < SEED_LIMIT:
        raise ValueError(f"{_who(owner, name)} must be {what}, got {int(seed)}")
    return int(seed)


def check_num_envs(num_envs: Any, owner: str = "", name: str = "num_envs") -> int:
    """An integer in ``[1, MAX_NUM_ENVS]``."""
    if not is_int(num_envs):
        raise TypeError(f"{_who(owner, name)} must be an integer >= 1, got {type_name(num_envs)} {num_envs!r}")
    n = int(num_envs)
    if not 1 <= n <= MAX_NUM_ENVS:
        raise ValueError(f"{_who(owner, name)} must be an integer in [1, {MAX_NUM_ENVS}] (2**24), got {n}")
    return n


def check_batch(num_envs: int, width: int, owner: str, what: str = "num_joints") -> None:
    """``num_envs * width <= MAX_BATCH_ELEMENTS``."""
    if num_envs * width > MAX_BATCH_ELEMENTS:
        raise ValueError(
            f"{owner}: num_envs * {what} = {num_envs} * {width} exceeds the largest supported batch of "
            f"{MAX_BATCH_ELEMENTS} (2**25) elements"
        )


def check_device(device: Any, owner: str = "", name: str = "device", *, available: bool = True) -> torch.device:
    """A ``torch.device`` (or its string) of type ``cpu`` or ``cuda``; with ``available`` CUDA
    must be available and the index must exist."""
    if not isinstance(device, (str, torch.device)):
        raise TypeError(f"{_who(owner, name)} must be a torch.device or a string such as 'cpu' or 'cuda:0', got {type_name(device)} {device!r}")
    try:
        dev = torch.device(device)
    except (RuntimeError, ValueError, TypeError):
        raise ValueError(f"{_who(owner, name)} must be 'cpu', 'cuda' or 'cuda:N', got {device!r}") from None
    if dev.type not in _DEVICE_TYPES:
        raise ValueError(f"{_who(owner, name)} must be 'cpu', 'cuda' or 'cuda:N', got {device!r}")
    if dev.type == "cuda" and available:
        if not torch.cuda.is_available():
            raise ValueError(f"{_who(owner, name)}={device!r} but CUDA is not available here (torch.cuda.is_available() is False)")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(f"{_who(owner, name)}={device!r} but only {torch.cuda.device_count()} CUDA device(s) exist")
    return dev


def check_dtype(dtype: Any, owner: str = "", name: str = "dtype") -> torch.dtype:
    """``torch.float32`` or ``torch.float64``."""
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"{_who(owner, name)} must be torch.float32 or torch.float64, got {type_name(dtype)} {dtype!r}")
    if dtype not in _FLOAT_DTYPES:
        raise ValueError(f"{_who(owner, name)} must be torch.float32 or torch.float64, got {dtype}")
    return dtype


def check_names(names: Any, owner: str, name: str = "joint_names", *, what: str = "joint names",
                allow_empty: bool = False, unique: bool = True) -> tuple[str, ...]:
    """A sequence of name strings (a single string is refused: it would be read as its characters)."""
    if isinstance(names, (str, bytes)):
        raise TypeError(f"{_who(owner, name)} must be a sequence of {what}, got the string {names!r} (use [{names!r}])")
    if isinstance(names, (dict, set)) or not hasattr(names, "__iter__"):
        raise TypeError(f"{_who(owner, name)} must be a sequence of {what}, got {type_name(names)} {names!r}")
    out = tuple(names)
    for n in out:
        if not isinstance(n, str):
            raise TypeError(f"{_who(owner, name)} must contain strings, got {type_name(n)} {n!r} in {list(out)!r}")
    if not out and not allow_empty:
        raise ValueError(f"{_who(owner, name)} must not be empty")
    if unique and len(set(out)) != len(out):
        dup = sorted({n for n in out if out.count(n) > 1})
        raise ValueError(f"{_who(owner, name)} has duplicates {dup}")
    return tuple(str(n) for n in out)


def check_dt(dt: Any, owner: str, what: str = "dt") -> float:
    """A physics substep [s]: a real number in ``(0, MAX_DT]`` that stays positive in float32 (a 0-d
    array or tensor is accepted)."""
    allowed = f"a number > 0 and <= {MAX_DT:g} (MAX_DT), positive in float32"
    if isinstance(dt, (np.ndarray, torch.Tensor)) and dt.ndim == 0:
        dt = dt.item()  # a bool or complex item is refused below
    if not is_real(dt):
        raise TypeError(f"{owner}: {what} must be the substep in s ({allowed}), got {type_name(dt)} {dt!r}")
    try:
        v = float(dt)
    except OverflowError:
        v = math.inf
    if not (0.0 < v <= MAX_DT) or np.float32(v) == 0.0:
        raise ValueError(f"{owner}: {what} must be the substep in s ({allowed}), got {v}")
    return v


def real_array(value: Any, name: str, owner: str = "", dtype: Any = np.float64) -> np.ndarray:
    """``value`` (a number, nested sequence, numpy array or tensor) as a numpy array of ``dtype``.

    Refused with ``TypeError``: complex values (the imaginary part would be dropped), booleans,
    strings, objects that are not numbers. Ragged sequences are a ``ValueError``. No shape or
    finiteness check (callers check those, naming the expected shape)."""
    if isinstance(value, torch.Tensor):
        if value.is_complex() or value.dtype == torch.bool:
            raise TypeError(f"{_who(owner, name)} must hold real numbers, got a {value.dtype} tensor")
        return value.detach().cpu().numpy().astype(dtype, copy=False)
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{_who(owner, name)} must be a real number or an array of them, got {type_name(value)} {value!r}")
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError):
        raise ValueError(f"{_who(owner, name)} must be a (nested) sequence of numbers of regular shape, got {value!r}") from None
    kind = arr.dtype.kind
    if kind in "fiu":
        return arr.astype(dtype, copy=False)
    if kind == "c":
        raise TypeError(f"{_who(owner, name)} must hold real numbers, got complex values (dtype {arr.dtype})")
    if kind == "b":
        raise TypeError(f"{_who(owner, name)} must hold real numbers, got booleans")
    if kind == "O":
        flat = arr.reshape(-1)
        if all(is_real(x) for x in flat):
            try:
                return arr.astype(dtype)
            except OverflowError:
                raise ValueError(f"{_who(owner, name)} holds an integer beyond the float range") from None
        bad = next((x for x in flat if not is_real(x)), None)
        raise TypeError(f"{_who(owner, name)} must hold real numbers, got {type_name(bad)} {bad!r}")
    raise TypeError(f"{_who(owner, name)} must hold real numbers, got dtype {arr.dtype}")


def env_index(ids: Any, size: int, what: str = "env_ids", *, allow_mask: bool = True, unique: bool = False) -> np.ndarray:
    """Validated indices into ``range(size)`` as a 1-D int64 numpy array.

    Accepted: an integer, a sequence / array / tensor of integers, a ``slice`` and, with
    ``allow_mask``, a boolean mask of shape ``(size,)``. Floats, strings and other types are a
    ``TypeError``; ids outside ``[0, size)`` (and repeats, with ``unique``) a ``ValueError``."""
    if isinstance(ids, slice):
        return np.arange(size, dtype=np.int64)[ids]
    if isinstance(ids, (str, bytes, dict, set, float)) or ids is None or isinstance(ids, (bool, np.bool_)):
        raise TypeError(f"{what} must be an integer or a sequence of integers, got {type_name(ids)} {ids!r}")
    if isinstance(ids, torch.Tensor):
        arr = ids.detach().cpu().numpy()
    else:
        try:
            arr = np.asarray(ids)
        except (ValueError, TypeError):
            raise ValueError(f"{what} must be a flat sequence of integers, got {ids!r}") from None
    kind = arr.dtype.kind
    if kind == "b":
        if not allow_mask:
            raise TypeError(f"{what}: boolean masks are not accepted here; give integer ids")
        if arr.shape != (size,):
            raise ValueError(f"{what}: a boolean mask needs shape ({size},), got {arr.shape}")
        return np.flatnonzero(arr).astype(np.int64)
    if kind == "O" and all(is_int(x) for x in arr.reshape(-1)):
        big = [int(x) for x in arr.reshape(-1) if not 0 <= int(x) < size]
        if big:
            raise ValueError(f"{what}: ids must lie in [0, {size - 1}], got {big[:8]}")
        arr = arr.astype(np.int64)
        kind = "i"
    if kind not in "iu":
        raise TypeError(f"{what} must be integers, got dtype {arr.dtype}" + (" (expected integer ids)" if kind == "f" else ""))
    out = arr.reshape(-1).astype(np.int64)
    if out.size and (out.min() < 0 or out.max() >= size):
        raise ValueError(f"{what}: ids must lie in [0, {size - 1}], got {out.tolist()[:16]}")
    if unique and np.unique(out).size != out.size:
        raise ValueError(f"{what}: repeated indices {out.tolist()}")
    return out
