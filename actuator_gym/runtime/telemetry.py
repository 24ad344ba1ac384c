"""One control step's telemetry: :data:`TELEMETRY` (the meaning of every ``info["actuator"]`` key of
the joint groups, defined once) and :class:`StepTelemetry` (the power rows every execution strategy
records, reduced or snapshotted once per control step: :mod:`actuator_gym.runtime.execution`).

The instantaneous keys are those of the **last** substep of the control step, ``energy`` and
``mean_power`` cover **all** its substeps; the wrapper, the single task env and the vector env
report the same keys with the same meaning.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import torch

from .lazy_telemetry import SnapshotLayout, StepSnapshot, power_terms

__all__ = ["TELEMETRY", "StepTelemetry"]

TELEMETRY: dict[str, str] = {
    "computed_effort": "drive output before the clamps [N·m or N], last substep",
    "applied_effort": "effort after the clamps, what the joint received [N·m or N], last substep",
    "saturated": "applied_effort != computed_effort (a clamp acted), last substep",
    "power": "applied_effort * joint_vel [W], last substep (signed: negative = braking); joint_vel is "
             "the velocity the actuator read at that substep",
    "mean_power": "mean of applied_effort * joint_vel over the control step's substeps [W] (signed)",
    "energy": "mechanical work over the control step, sum over substeps of |applied_effort * joint_vel| "
              "* physics_dt [J] (regenerative work counted as spent)",
    "joint_pos": "joint position after the control step [rad or m] (what the observation sees)",
    "joint_vel": "joint velocity after the control step [rad/s or m/s]",
}
"""Every ``info["actuator"]`` key of the joint groups and its meaning, ``(num_envs, num_joints)``
(the single env and the wrapper: ``(num_joints,)``)."""


class _SnapshotPlan:
    """What :meth:`StepTelemetry.snapshot` plans once for its inputs (the arrays and ``cols`` /
    ``extra`` / ``extra_keys`` objects, compared by identity; the substep count by value): the
    ``rows`` to concatenate (None: gathered at every step) and the snapshots' ``layout``."""

    __slots__ = ("cols", "extra", "computed", "applied", "held", "rows", "layout")

    def __init__(self, cols, extra, computed, applied, held, rows, layout: SnapshotLayout):
        self.cols, self.extra, self.computed, self.applied, self.held = cols, extra, computed, applied, held
        self.rows, self.layout = rows, layout


class StepTelemetry:
    """The accounting of one control step over ``(num_envs, num_joints)`` joints.

    ``record(k, applied, qd)`` keeps substep ``k``'s ``applied * qd`` (one multiply into a
    preallocated row, numpy or torch alike); :meth:`finish` reduces the rows once per control
    step into the :data:`TELEMETRY` arrays (``power``, ``mean_power``, ``energy``) and takes the
    last substep's efforts. Rows are float64 wherever the efforts are float32.
    """

    def __init__(self, like: Any, num_substeps: int, physics_dt: float):
        self.physics_dt = float(physics_dt)
        shape = (int(num_substeps), *tuple(like.shape))
        if isinstance(like, torch.Tensor):
            self.rows = torch.zeros(shape, dtype=torch.float64, device=like.device)
        else:
            self.rows = np.zeros(shape)
        self._row = [self.rows[k] for k in range(shape[0])]
        self.substeps = 0
        self.held: tuple[Any, Any] | None = None
        self._snap: _SnapshotPlan | None = None

    def begin(self) -> None:
        self.substeps = 0
        self.held = None

    def record_held(self, applied: np.ndarray, qd: np.ndarray, substeps: int) -> None:
        """Native execution: the last substep's power row ``applied * qd`` stands for all
        ``substeps`` (mean = that row, energy = ``|row| * substeps * physics_dt``). ``applied`` and
        ``qd`` are kept (not copied) and multiplied when the telemetry is read: they must hold the
        last substep's values until then."""
        self.substeps, self.held = substeps, (applied, qd)

    def record(self, k: int, applied: Any, qd: Any) -> None:
        """Substep ``k``'s power row ``applied * qd`` (``qd``: the velocity the actuators read)."""
        row = self._row[k]
        if isinstance(row, torch.Tensor):
            torch.mul(applied, qd, out=row)
        else:
            np.multiply(applied, qd, out=row)
        self.substeps += 1

    def record_power(self, k: int, power: Any) -> None:
        """Substep ``k``'s power row given directly [W] (rotor groups: their power model's output)."""
        self._row[k][...] = power
        self.substeps += 1

    def reduce(self, cols: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(power, mean_power, energy)`` as fresh host arrays for the substeps recorded since
        :meth:`begin`: the last row [W], the mean row [W] and ``sum |row| * physics_dt`` [J]
        (zeros before the first substep); over ``cols = (env, ids)`` only when given."""
        s = self.substeps
        rows = self.rows if s == len(self.rows) else self.rows[:s]
        if isinstance(rows, torch.Tensor):  # reduced on the device: three arrays cross to the host
            if s:
                power, mean, energy = rows[s - 1], rows.mean(dim=0), rows.abs().sum(dim=0) * self.physics_dt
            else:
                power = mean = energy = torch.zeros_like(self.rows[0])
            return tuple(_host(x, cols) for x in (power, mean, energy))
        # numpy: gather the selection first (one take), then reduce the small fresh array
        if self.held and s:  # one row held over the control step (native execution)
            applied, qd = self.held
            r = (applied * qd if cols is None else applied[cols[0]][cols[1]] * qd[cols[0]][cols[1]])[None]
        elif s:
            r = rows.copy() if cols is None else rows[:, cols[0]].take(cols[1], axis=1)
        else:
            r = _host(np.zeros(rows.shape[1:]), cols)[None]
        power, mean, energy = power_terms(r, s, self.physics_dt)
        return (power.copy() if len(r) > 1 else power), mean, energy  # (a view of several rows: copied)

    def snapshot(self, computed: np.ndarray, applied: np.ndarray, cols: tuple[int, Any],
                 extra_keys: tuple[str, ...] = (), extra: Sequence[tuple[np.ndarray, Any]] = ()) -> StepSnapshot:
        """One env's step on numpy, ``cols = (env, joint_ids)`` (ids: an index array or a slice), as
        a :class:`StepSnapshot`: the raw rows (commanded and applied efforts; the held velocity or
        the substeps' power rows) and each ``extra`` ``(array, indices)`` (the consumer's state after
        the step, e.g. ``(data.qpos, qpos addresses)``), copied into one fresh array, nothing
        reduced or gathered yet. The rows and the layout are planned once for the same arrays,
        ``cols``, ``extra`` and ``extra_keys`` objects and substep count (then a step is one
        concatenation)."""
        s = self.substeps
        held = self.held[1] if s and self.held else None
        p = self._snap
        if (p is None or p.cols is not cols or p.extra is not extra or p.computed is not computed
                or p.applied is not applied or p.held is not held or p.layout.substeps != s
                or p.layout.extra is not extra_keys):
            rows, index, J = self._snapshot_plan(computed, applied, cols, extra, s, held)
            layout = SnapshotLayout(J, s, held is not None, self.physics_dt, extra_keys, index)
            p = self._snap = _SnapshotPlan(cols, extra, computed, applied, held, rows, layout)
        rows = p.rows
        if rows is None:  # a row is not a view of a fixed buffer (several envs' substep rows): gathered now
            rows = self._snapshot_rows(computed, applied, cols[0], s, held) + [vec for vec, _ in extra]
        return StepSnapshot(np.concatenate(rows), p.layout)

    def _snapshot_rows(self, computed: np.ndarray, applied: np.ndarray, env: int, s: int, held: Any) -> list:
        rows = [computed[env], applied[env]]
        if held is not None:
            rows.append(held[env])
        elif s:
            rows.append(self.rows[:s, env].reshape(-1))  # (a view for one env, a copy for several)
        return rows

    def _snapshot_plan(self, computed, applied, cols, extra, s: int, held: Any) -> tuple:
        """``(rows or None, index, J)``: the rows to concatenate (None: not all fixed views) and the
        take index that picks the joints ``cols[1]`` of each and the ``extra`` indices."""
        env, ids = cols
        width = computed.shape[-1]
        ids = np.arange(width)[ids]
        rows = self._snapshot_rows(computed, applied, env, s, held)
        k = 3 if held is not None else 2 + s  # rows of collection width
        index = [r * width + ids for r in range(k)]
        off = k * width
        for vec, at in extra:
            index.append(off + np.arange(len(vec))[at])
            off += len(vec)
        # every row is a view of a buffer that stays (the efforts, the held velocity, the caller's
        # arrays), except several envs' substep rows, which reshape copies: those are gathered per step
        fixed = held is not None or not s or np.shares_memory(rows[2], self.rows)
        rows += [vec for vec, _ in extra]
        return rows if fixed else None, np.concatenate(index), len(ids)

    def finish(self, computed: Any, applied: Any, cols: Any = None) -> dict[str, np.ndarray]:
        """The effort keys of :data:`TELEMETRY` as fresh host arrays for the substeps recorded since
        :meth:`begin` (zero before the first substep): ``(num_envs, num_joints)``, or one env's
        joints ``cols = (env, joint_ids)`` (``(len(joint_ids),)`` arrays). The consumer adds ``joint_pos`` /
        ``joint_vel`` from its state after the step."""
        if cols is not None and type(applied) is np.ndarray:  # one env's columns on numpy (the wrapper)
            c, a = computed[cols[0]][cols[1]], applied[cols[0]][cols[1]]  # (a gather: as _host, faster)
        else:
            c, a = _host(computed, cols), _host(applied, cols)
        power, mean, energy = self.reduce(cols)
        return {"computed_effort": c, "applied_effort": a, "saturated": c != a,
                "power": power, "mean_power": mean, "energy": energy}


def _host(x: Any, cols: Any = None) -> np.ndarray:
    """A fresh host numpy copy of ``x`` (numpy or torch), or of its selection ``cols = (env, ids)``."""
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu().numpy()
    return np.array(x) if cols is None else x[cols[0]].take(cols[1])

