"""``info["actuator"]`` computed on first access: :class:`StepSnapshot` (one control step's raw
numbers, copied once) and :class:`LazyTelemetry` (the read-only ``dict`` that derives the
:data:`~actuator_gym.runtime.substep.TELEMETRY` values from it when first read).

Why: a wrapped Gymnasium env pays per control step for every telemetry array it hands out, read or
not (docs/wrapper.md, "Telemetry"); with these it pays for one copy of the raw rows, and the
episode statistics read what they need from the snapshot (:meth:`StepSnapshot.efforts`).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

__all__ = ["StepSnapshot", "LazyTelemetry", "stacked_efforts", "power_terms"]


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


class StepSnapshot:
    """The raw numbers of one env's control step, copied once
    (:meth:`~actuator_gym.runtime.substep.StepTelemetry.snapshot`):
    one fresh float64 array ``[computed (J), applied (J), qd (J) | substep power rows (s * J),
    extra keys (J each)]`` that nothing writes afterwards (except, once, a ``derive`` filling the
    commanded row from raw rows kept after the extras), so every value derived from it is the
    value of that step whenever it is derived. :meth:`efforts` gives what the episode statistics
    need, :meth:`values` the whole :data:`~actuator_gym.runtime.substep.TELEMETRY` dict (``info["actuator"]``)."""

    __slots__ = ("buf", "J", "substeps", "physics_dt", "held", "extra", "layout", "_efforts", "_derive")

    def __init__(self, buf: np.ndarray, J: int, substeps: int, physics_dt: float, held: bool, extra: Sequence[str],
                 derive: Callable[[np.ndarray], None] | None = None):
        self.buf, self.J, self.substeps, self.physics_dt, self.held, self.extra = buf, J, substeps, physics_dt, held, extra
        self.layout = (J, substeps, held, physics_dt, len(buf), derive)
        """``(J, substeps, held, physics_dt, width, derive)``: snapshots of one layout stack into one
        array (:func:`stacked_efforts`)."""
        self._efforts: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._derive = derive
        """``derive(bufs)`` fills the commanded row of ``(m, width)`` buffers from raw rows kept after
        the extra keys (native execution's on-demand law,
        :mod:`~actuator_gym.backends.mujoco_native_telemetry`); run once, before the first read."""

    def _head(self) -> None:
        if self._derive is not None:
            self._derive(self.buf[None])  # a function of the rest of the buffer: the step's value whenever run
            self._derive = None

    def efforts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(applied_effort, saturated, energy)`` of the step (computed once)."""
        if self._efforts is None:
            self._head()
            self._keep_efforts(power_terms(self._power_rows(), self.substeps, self.physics_dt, mean=False)[2])
        return self._efforts

    def _keep_efforts(self, energy: np.ndarray) -> None:
        b, J = self.buf, self.J
        self._efforts = (b[J:2 * J], b[:J] != b[J:2 * J], energy)

    def _power_rows(self) -> np.ndarray:
        """``(k, J)``: the substeps' power rows, or the held row ``applied * qd`` (native execution)."""
        b, J, s = self.buf, self.J, self.substeps
        if self.held:
            return (b[J:2 * J] * b[2 * J:3 * J])[None]
        return b[2 * J:(2 + s) * J].reshape(s, J)

    def values(self) -> dict[str, np.ndarray]:
        """The step's :data:`~actuator_gym.runtime.substep.TELEMETRY` (effort keys and the ``extra`` ones)
        as :meth:`~actuator_gym.runtime.substep.StepTelemetry.finish` computes them (the same operations)."""
        self._head()
        b, J, s = self.buf, self.J, self.substeps
        power, mean, energy = power_terms(self._power_rows(), s, self.physics_dt)  # (energy: as efforts())
        if self._efforts is None:
            self._keep_efforts(energy)
        applied, saturated, energy = self._efforts
        # fresh arrays (not views of the snapshot, which the deferred episode statistics still read; a
        # held row is computed fresh from it, substep rows are views of it)
        out = {"computed_effort": b[:J].copy(), "applied_effort": applied.copy(), "saturated": saturated,
               "power": power if self.held else power.copy(), "mean_power": mean, "energy": energy.copy()}
        off = (3 if self.held else 2 + s) * J
        for k, key in enumerate(self.extra):
            out[key] = b[off + k * J:off + (k + 1) * J].copy()
        return out


class LazyTelemetry(dict):
    """``info["actuator"]`` of one control step, computed on first access.

    A read-only ``dict`` (so Gymnasium's vector envs merge it as they merge a dict:
    ``isinstance(value, dict)``) whose values are derived from a :class:`StepSnapshot` (the step's
    raw numbers, copied when the step ran) the first time anything reads it: a key, iteration,
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

    def _ready(self) -> None:
        build = self._build
        if build is not None:
            values = build()  # (an error propagates and leaves the mapping to be computed again)
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


def _materialized(values: dict[str, Any]) -> LazyTelemetry:
    return LazyTelemetry(values=values)


def stacked_efforts(snapshots: Sequence[StepSnapshot]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(applied_effort, saturated, energy)``, each ``(len(snapshots), J)``, of snapshots of one
    layout (:attr:`StepSnapshot.layout`): :meth:`StepSnapshot.efforts` of each, computed for all of
    them in one pass (the episode statistics' deferred accumulation)."""
    J, s, held, dt, width, derive = snapshots[0].layout
    b = np.concatenate([x.buf for x in snapshots]).reshape(len(snapshots), width)  # (faster than np.stack)
    if derive is not None:
        derive(b)  # (the stacked copy; each snapshot derives its own when read)
    c, a = b[:, :J], b[:, J:2 * J]
    rows = (a * b[:, 2 * J:3 * J])[None] if held else b[:, 2 * J:(2 + s) * J].reshape(len(b), s, J).transpose(1, 0, 2)
    return a, c != a, power_terms(rows, s, dt, mean=False)[2]
