"""``info["actuator"]`` computed on first access: :class:`LazyTelemetry` (the read-only ``dict``
whose values are computed when first read) and :class:`StepSnapshot` (one control step's raw
numbers, copied once, as such a ``dict`` of the :data:`~actuator_gym.runtime.substep.TELEMETRY` values).

Why: a wrapped Gymnasium env pays per control step for every telemetry array it hands out, read or
not (docs/wrapper.md, "Telemetry"); with these it pays for one copy of the raw rows, and the
episode statistics read what they need from the snapshot (:meth:`StepSnapshot.efforts`).
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

__all__ = ["SnapshotLayout", "StepSnapshot", "LazyTelemetry", "stacked_efforts", "power_terms"]


def power_terms(rows: np.ndarray, substeps: int, physics_dt: float, mean: bool = True):
    """``(power, mean_power, energy)`` of a control step from its mechanical power rows [W], the one
    reduction every telemetry path uses (:meth:`~actuator_gym.runtime.substep.StepTelemetry.reduce`,
    :class:`StepSnapshot`, :func:`stacked_efforts`).

    ``rows``: numpy ``(k, ...)``, ``k == substeps`` (one row per substep: the explicit path) or
    ``k == 1`` (one row held over every substep: native execution reads the last substep's). Returns
    ``(...)`` arrays: ``power`` = the last row (a view of ``rows``), ``mean_power`` = the mean over
    the substeps [W] (``None`` unless ``mean``) and ``energy`` = ``sum_substeps |row| * physics_dt``
    [J] (fresh). No substep (``substeps == 0``): zeros."""
    k = len(rows)
    if not substeps:
        zero = np.zeros(rows.shape[1:])
        return zero, (zero.copy() if mean else None), zero.copy()
    power = rows[k - 1]
    if k == 1:  # held over the control step
        energy = np.abs(power)
        energy *= substeps * physics_dt
        return power, (power.copy() if mean else None), energy
    m = None
    if mean:
        m = np.add.reduce(rows, axis=0)
        m *= 1.0 / k
    energy = np.add.reduce(np.abs(rows), axis=0)
    energy *= physics_dt
    return power, m, energy


class SnapshotLayout(NamedTuple):
    """What every :class:`StepSnapshot` of one plan shares (planned once by its producer): snapshots
    of one layout object stack into one array (:func:`stacked_efforts`)."""

    J: int  # joints
    substeps: int  # of the control step
    held: bool  # one power row applied * qd held over every substep (native execution), else one per substep
    physics_dt: float  # the substep [s]
    extra: tuple[str, ...]  # the keys appended after the rows (J values each)
    index: np.ndarray
    """The gather that makes the buffer ``[computed (J), applied (J), qd (J) | substep power rows
    (substeps * J), extra keys (J each), ...]`` out of the raw copy."""
    derive: Callable[[np.ndarray], None] | None = None
    """``derive(bufs)`` fills the commanded row of ``(m, width)`` buffers from raw rows kept after
    the extra keys (native execution's on-demand law,
    :mod:`~actuator_gym.backends.mujoco_native_telemetry`); run once, before the first read."""


class LazyTelemetry(dict):
    """``info["actuator"]`` of one control step, computed on first access.

    A read-only ``dict`` (so Gymnasium's vector envs merge it as they merge a dict:
    ``isinstance(value, dict)``) whose values are computed (``build()``; a :class:`StepSnapshot`:
    from the step's raw numbers, copied when the step ran) the first time anything reads it: a key, iteration,
    ``len``, ``in``, ``dict(...)``, ``==``, ``repr``, pickling or copying. Until then a step costs
    only the copy. The values are those of the step that produced the mapping whenever they are
    read (later steps write other snapshots), with the keys, shapes and dtypes of
    :data:`~actuator_gym.runtime.substep.TELEMETRY`. Writing into it is a ``TypeError``;
    ``dict(info["actuator"])`` is a plain, writable copy. ``LazyTelemetry(values=...)`` wraps values already computed (the eager paths:
    rotor groups, motor telemetry)."""

    __slots__ = ("_build",)

    def __init__(self, build: Callable[[], dict[str, Any]] | None = None, *, values: dict[str, Any] | None = None):
        if values is not None:
            dict.update(self, values)
        self._build = build

    def _compute(self) -> dict[str, Any]:
        """The values (``build()``; a subclass computes its own)."""
        return self._build()

    def _ready(self) -> None:
        if self._build is not None:
            values = self._compute()  # (an error propagates and leaves the mapping to be computed again)
            self._build = None
            dict.update(self, values)

    def __getitem__(self, key):
        if self._build is not None:
            self._ready()
        return dict.__getitem__(self, key)

    def __iter__(self):
        self._ready()
        return dict.__iter__(self)

    def __len__(self) -> int:
        self._ready()
        return dict.__len__(self)

    def __contains__(self, key) -> bool:
        self._ready()
        return dict.__contains__(self, key)

    def __eq__(self, other):
        self._ready()
        if isinstance(other, LazyTelemetry):
            other._ready()
        return dict.__eq__(self, other)

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None  # as dict

    def __repr__(self) -> str:
        self._ready()
        return f"LazyTelemetry({dict.__repr__(self)})"

    def __reduce__(self):  # pickle / copy: the computed values (a materialized LazyTelemetry)
        self._ready()
        return _materialized, (dict(dict.items(self)),)

    def keys(self):
        self._ready()
        return dict.keys(self)

    def values(self):
        self._ready()
        return dict.values(self)

    def items(self):
        self._ready()
        return dict.items(self)

    def get(self, key, default=None):
        self._ready()
        return dict.get(self, key, default)

    def copy(self) -> dict[str, Any]:
        """A plain ``dict`` of the values (shallow, as ``dict.copy``)."""
        self._ready()
        return dict(dict.items(self))

    def __or__(self, other):
        return self.copy() | other

    def __ror__(self, other):
        return dict(other) | self.copy()

    def _read_only(self, *args, **kwargs):
        raise TypeError("info['actuator'] is read-only (a LazyTelemetry: the step's telemetry); "
                        "copy it first: dict(info['actuator'])")

    __setitem__ = __delitem__ = __ior__ = update = pop = popitem = setdefault = clear = _read_only


class StepSnapshot(LazyTelemetry):
    """One env's control step as ``info["actuator"]`` (a :class:`LazyTelemetry`), from its raw
    numbers copied once (:meth:`~actuator_gym.runtime.substep.StepTelemetry.snapshot`): ``raw``, a
    fresh float64 array that nothing writes afterwards, so every value derived from it is the value
    of that step whenever it is derived. The gather into the :attr:`buf` layout (and a ``derive``)
    runs on the first read, for one snapshot or a stack of them (:func:`stacked_efforts`): the step
    pays for the copy only. :meth:`efforts` gives what the episode statistics need,
    :meth:`telemetry` the whole :data:`~actuator_gym.runtime.substep.TELEMETRY` dict (the mapping's
    values, computed on first access)."""

    __slots__ = ("raw", "layout", "_buf", "_efforts")

    def __init__(self, raw: np.ndarray, layout: SnapshotLayout):
        self._build = True  # (to be computed: _compute)
        self.raw, self.layout = raw, layout
        self._buf: np.ndarray | None = None
        self._efforts: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    @property
    def buf(self) -> np.ndarray:
        """``[computed (J), applied (J), qd (J) | substep power rows (s * J), extra keys (J each), ...]``
        (:attr:`SnapshotLayout.index`), gathered and derived on first access."""
        b = self._buf
        if b is None:
            layout = self.layout
            b = self._buf = self.raw.take(layout.index)
            if layout.derive is not None:
                layout.derive(b[None])  # a function of the rest of the buffer: the step's value whenever run
        return b

    def efforts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(applied_effort, saturated, energy)`` of the step (computed once)."""
        if self._efforts is None:
            L = self.layout
            self._keep_efforts(power_terms(self._power_rows(), L.substeps, L.physics_dt, mean=False)[2])
        return self._efforts

    def _keep_efforts(self, energy: np.ndarray) -> None:
        b, J = self.buf, self.layout.J
        self._efforts = (b[J:2 * J], b[:J] != b[J:2 * J], energy)

    def _power_rows(self) -> np.ndarray:
        """``(k, J)``: the substeps' power rows, or the held row ``applied * qd`` (native execution)."""
        b, (J, s, held) = self.buf, self.layout[:3]
        if held:
            return (b[J:2 * J] * b[2 * J:3 * J])[None]
        return b[2 * J:(2 + s) * J].reshape(s, J)

    def telemetry(self) -> dict[str, np.ndarray]:
        """The step's :data:`~actuator_gym.runtime.substep.TELEMETRY` (effort keys and the ``extra`` ones)
        as :meth:`~actuator_gym.runtime.substep.StepTelemetry.finish` computes them (the same operations)."""
        b, (J, s, held, dt, extra) = self.buf, self.layout[:5]
        power, mean, energy = power_terms(self._power_rows(), s, dt)  # (energy: as efforts())
        if self._efforts is None:
            self._keep_efforts(energy)
        applied, saturated, energy = self._efforts
        # fresh arrays (not views of the snapshot, which the deferred episode statistics still read; a
        # held row is computed fresh from it, substep rows are views of it)
        out = {"computed_effort": b[:J].copy(), "applied_effort": applied.copy(), "saturated": saturated,
               "power": power if held else power.copy(), "mean_power": mean, "energy": energy.copy()}
        off = (3 if held else 2 + s) * J
        for k, key in enumerate(extra):
            out[key] = b[off + k * J:off + (k + 1) * J].copy()
        return out

    _compute = telemetry  # the mapping's values


def _materialized(values: dict[str, Any]) -> LazyTelemetry:
    return LazyTelemetry(values=values)


def stacked_efforts(snapshots: Sequence[StepSnapshot]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(applied_effort, saturated, energy)``, each ``(len(snapshots), J)``, of snapshots of one
    layout (:attr:`StepSnapshot.layout`): :meth:`StepSnapshot.efforts` of each, computed for all of
    them in one pass (the episode statistics' deferred accumulation)."""
    J, s, held, dt, _, index, derive = snapshots[0].layout
    raw = np.concatenate([x.raw for x in snapshots])  # (faster than np.stack)
    b = raw.reshape(len(snapshots), -1).take(index, axis=1)
    if derive is not None:
        derive(b)  # (the stacked copy; each snapshot derives its own when read)
    c, a = b[:, :J], b[:, J:2 * J]
    rows = (a * b[:, 2 * J:3 * J])[None] if held else b[:, 2 * J:(2 + s) * J].reshape(len(b), s, J).transpose(1, 0, 2)
    return a, c != a, power_terms(rows, s, dt, mean=False)[2]
