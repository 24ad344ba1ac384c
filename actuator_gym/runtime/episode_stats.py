"""Per-episode actuator statistics: one record per finished episode, per actuator group.

:class:`EpisodeStats` accumulates the per-control-step telemetry (:data:`~actuator_gym.runtime.substep.TELEMETRY`,
:data:`~actuator_gym.runtime.rotors.ROTOR_TELEMETRY`) of every env over its episode, vectorized over envs
(one numpy pass per group and control step; no loop over envs), and hands out the finished
episodes' statistics. Every consumer uses it the same way: the batched task
(:class:`~actuator_gym.envs.task.BatchedTask`, hence :class:`~actuator_gym.envs.task_env.TaskEnv`) and
:class:`~actuator_gym.wrappers.ActuatorWrapper` put the record into the ``info`` of the step that
ends an episode, under :data:`EPISODE_INFO_KEY` (``info["actuator_episode"]``); the adapters read
that one record and turn it into each library's log entries (:func:`log_values`, tags
``"Episode_Actuator/<group>/<stat>"``).

The statistics (:data:`EPISODE_STATS`), over the control steps of the episode and the group's
columns (joints, or rotors: "effort" is then the thrust [N]):

* ``energy`` [J]: the sum of the steps' ``energy`` (all substeps) over the group's joints.
* ``peak_abs_effort`` [N·m or N]: max of ``|applied_effort|`` over steps and joints.
* ``mean_abs_effort`` [N·m or N]: mean of ``|applied_effort|`` over steps and joints.
* ``saturated_fraction`` [0, 1]: the fraction of (control step, joint) samples whose ``saturated``
  flag is set (a clamp acted; rotors: ``applied_thrust != computed_thrust``).

``applied_effort`` and ``saturated`` are the per-step telemetry's values, i.e. those of the last
substep of each control step (the substeps in between are not sampled); ``energy`` covers every
substep. Group :data:`ALL_JOINTS` is every joint group's joints together (a task with joint groups).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .lazy_telemetry import StepSnapshot, stacked_efforts

__all__ = ["EpisodeStats", "EPISODE_STATS", "EPISODE_INFO_KEY", "ALL_JOINTS", "LOG_PREFIX", "log_values",
           "episode_record", "with_episode_scalars"]

EPISODE_INFO_KEY = "actuator_episode"
"""The ``info`` key of the episode record (vector envs: ``{group: {stat: (num_envs,)}}`` with Gymnasium's
``_key`` masks, set for the envs whose episode ended in this step; single envs: ``{group: {stat: float}}``)."""

ALL_JOINTS = "all_joints"
"""The record's group of every joint group's joints together (a joint group may not use this name)."""

LOG_PREFIX = "Episode_Actuator"
"""First part of the log tags ``"Episode_Actuator/<group>/<stat>"`` (rsl_rl, SB3, skrl)."""

EPISODE_STATS: dict[str, str] = {
    "energy": "mechanical work over the episode [J]: sum over its control steps and the group's joints of the "
              "telemetry's energy (every substep, |applied_effort * joint_vel| * physics_dt)",
    "peak_abs_effort": "max over the episode's control steps and the group's joints of |applied_effort| "
                       "[N·m or N; rotors: applied thrust, N] (last substep of each control step)",
    "mean_abs_effort": "mean over the episode's control steps and the group's joints of |applied_effort| "
                       "[N·m or N; rotors: applied thrust, N] (last substep of each control step)",
    "saturated_fraction": "fraction of the episode's (control step, joint) samples with saturated set "
                          "(a clamp acted at the step's last substep; rotors: applied_thrust != computed_thrust), "
                          "in [0, 1]",
}
"""Every statistic of a group's record and its meaning."""

# the telemetry keys each kind of group reads: (effort, saturation, energy)
_JOINT, _ROTOR = ("applied_effort", "saturated", "energy"), ("applied_thrust", None, "rotor_energy")
_F64 = np.dtype(np.float64)
_DEFERRED_STEPS = 256
"""Snapshots a single env's statistics hold before reducing them (:meth:`EpisodeStats.defer`)."""


def _columns(ids: Any) -> slice | np.ndarray:
    """A slice when ``ids`` are consecutive (a view, no copy), else an index array."""
    ids = np.asarray(ids, dtype=np.intp).reshape(-1)
    if ids.size and np.array_equal(ids, np.arange(ids[0], ids[0] + ids.size)):
        return slice(int(ids[0]), int(ids[0]) + ids.size)
    return ids


def _accumulate(rows: tuple, effort: np.ndarray, saturated: np.ndarray, energy: np.ndarray) -> None:
    """A single env's step into its 1-D accumulator rows ``(energy, |effort| sum, |effort| max,
    saturated count)``, in place."""
    acc_energy, abs_sum, peak, n_sat = rows
    a = np.abs(effort) if effort.dtype is _F64 else np.abs(effort, dtype=np.float64)  # thrusts: float32
    np.add(acc_energy, energy, out=acc_energy)
    np.add(abs_sum, a, out=abs_sum)
    np.maximum(peak, a, out=peak)
    np.add(n_sat, saturated, out=n_sat)


class EpisodeStats:
    """Accumulates :data:`EPISODE_STATS` for ``num_envs`` envs and the given groups.

    Args:
        num_envs: number of envs (1 for a single env).
        groups: ``{group: (kind, columns)}``: ``kind`` ``"joint"`` (reads ``applied_effort``,
            ``saturated``, ``energy``) or ``"rotor"`` (``applied_thrust``, ``computed_thrust``,
            ``rotor_energy``); ``columns`` the group's column indices in those telemetry arrays.

    :meth:`reset` zeroes envs (a new episode), :meth:`update` adds a control step's telemetry for the
    envs that stepped, :meth:`record` returns the statistics so far. Build one with :meth:`of`.

    Cost: :meth:`update` accumulates per telemetry column (energy, ``|effort|`` sum and max,
    saturated count: one abs and four in-place numpy operations per kind of group, whatever the number of
    groups); the per-group reduction runs only in :meth:`record`, at episode ends.
    """

    def __init__(self, num_envs: int, groups: Mapping[str, tuple[str, Any]]):
        self.num_envs = int(num_envs)
        self._groups: list[tuple[str, str, slice | np.ndarray]] = []
        width: dict[str, int] = {}
        for name, (kind, cols) in groups.items():
            if kind not in ("joint", "rotor"):
                raise ValueError(f"EpisodeStats: group {name!r} kind must be 'joint' or 'rotor', got {kind!r}")
            ids = np.asarray(cols, dtype=np.intp).reshape(-1)
            if not ids.size:  # a group without a column in the telemetry has nothing to report
                continue
            if ids.min() < 0:
                raise ValueError(f"EpisodeStats: group {name!r} has negative columns {ids.tolist()}")
            self._groups.append((name, kind, _columns(ids)))
            width[kind] = max(width.get(kind, 0), int(ids.max()) + 1)
        self.groups: tuple[str, ...] = tuple(g for g, _, _ in self._groups)
        """The groups of the record, in order."""
        # per kind: the telemetry keys and (energy, |effort| sum, |effort| max, saturated count) per column
        self._acc = {kind: (_JOINT if kind == "joint" else _ROTOR, w, np.zeros((4, self.num_envs, w)))
                     for kind, w in width.items()}
        # the same rows as separate arrays (and 1-D for a single env): in-place ufuncs without broadcasting
        self._rows = [(keys, w, tuple(acc), tuple(r[0] for r in acc) if self.num_envs == 1 else None)
                      for keys, w, acc in self._acc.values()]
        # a single env's rows, 1-D: the lean path of :meth:`update`
        self._single = ([(keys, (w,), rows1) for keys, w, _, rows1 in self._rows] if self.num_envs == 1 else None)
        self._steps = np.zeros(self.num_envs, dtype=np.int64)  # (deferred steps counted when reduced)
        self._pending: list[StepSnapshot] = []  # deferred single-env steps (:meth:`defer`)
        # the telemetry width a deferred snapshot must have: a single env with joint groups only
        single = self._single
        self._deferrable = (single[0][1][0] if single is not None and len(single) == 1 and single[0][0] == _JOINT
                            else -1)

    @classmethod
    def of(cls, num_envs: int, joints: Any = None, rotors: Any = None, joint_columns: Any = None) -> "EpisodeStats":
        """The statistics of a model's groups: ``joints`` an :class:`~actuator_gym.ActuatorCollection`
        (its groups, then :data:`ALL_JOINTS`), ``rotors`` :class:`~actuator_gym.runtime.rotors.RotorGroups`.

        ``joint_columns[j]`` is the collection's joint index of telemetry column ``j`` (the wrapper
        reports a subset of the collection's joints, in action order); None: the telemetry's columns
        are the collection's joints (the batched task)."""
        groups: dict[str, tuple[str, Any]] = {}
        if joints is not None:
            if ALL_JOINTS in joints:
                raise ValueError(f"actuator group name {ALL_JOINTS!r} is reserved for the episode statistics of all "
                                 "joint groups together; rename the group")
            where = None if joint_columns is None else np.asarray(joint_columns, dtype=np.intp)
            every: list[int] = []
            for g in joints:
                ids = joints.joint_ids(g)
                cols = ids if where is None else np.flatnonzero(np.isin(where, ids)).tolist()
                groups[g] = ("joint", cols)
                every += list(cols)
            groups[ALL_JOINTS] = ("joint", sorted(every))
        if rotors is not None:
            for g in rotors:
                c = rotors.columns(g)
                groups[g] = ("rotor", np.arange(c.start, c.stop))
        return cls(num_envs, groups)

    @property
    def steps(self) -> np.ndarray:
        """Control steps accumulated since each env's reset, ``(num_envs,)`` (deferred steps included)."""
        if self._pending:
            self._flush()
        return self._steps

    def reset(self, env_ids: Any = None) -> None:
        """Start a new episode for ``env_ids`` (None: every env): their statistics restart from zero."""
        ids = slice(None) if env_ids is None else np.asarray(env_ids, dtype=np.intp)
        if self._pending:  # deferred steps of the single env: its episode restarts, they are dropped
            self._pending = []
        for _, _, acc in self._acc.values():
            acc[:, ids] = 0.0
        self._steps[ids] = 0

    def update(self, telemetry: Mapping[str, np.ndarray], stepped: np.ndarray | None = None) -> None:
        """Add one control step's telemetry (``(num_envs, columns)`` arrays, or ``(columns,)`` for a
        single env) for the envs in ``stepped`` ((num_envs,) bool; None: every env)."""
        if self._pending:
            self._flush()
        single = self._single
        if stepped is None and single is not None:  # one env, every step (the wrapper): no masks
            for keys, shape, _ in single:
                if telemetry[keys[0]].shape != shape:
                    break  # (1, columns) rows, or more columns than the groups read: the general path
            else:
                self._steps[0] += 1
                for (eff, sat, en), _, rows1 in single:
                    effort = telemetry[eff]
                    _accumulate(rows1, effort, telemetry[sat] if sat else telemetry["computed_thrust"] != effort,
                                telemetry[en])
                return
        add, maximum = np.add, np.maximum
        where = True if stepped is None else np.asarray(stepped, dtype=bool)[:, None]
        self._steps += 1 if stepped is None else stepped
        for (eff, sat, en), w, rows, rows1 in self._rows:
            effort = telemetry[eff][..., :w]
            energy, abs_sum, peak, n_sat = rows1 if rows1 is not None and effort.ndim == 1 else rows
            a = np.abs(effort, dtype=np.float64)  # rotor thrusts are float32
            saturated = telemetry[sat][..., :w] if sat else telemetry["computed_thrust"][..., :w] != effort
            add(energy, telemetry[en][..., :w], out=energy, where=where)
            add(abs_sum, a, out=abs_sum, where=where)
            maximum(peak, a, out=peak, where=where)
            add(n_sat, saturated, out=n_sat, where=where)

    def defer(self, snapshot: StepSnapshot) -> None:
        """One control step of a single env's joint groups as its raw
        :class:`~actuator_gym.runtime.lazy_telemetry.StepSnapshot` (the wrapper's hot path, where
        ``info["actuator"]`` is computed on first access only): kept, and reduced with the others
        kept in one vectorized pass (:func:`~actuator_gym.runtime.lazy_telemetry.stacked_efforts`) when
        256 are pending or anything reads the statistics (a reset drops them). The record is
        what :meth:`update` with each step's telemetry gives (sums in another order: equal to
        round-off)."""
        if snapshot.layout.J != self._deferrable:
            self.update(dict(zip(_JOINT, snapshot.efforts())))
            return
        pending = self._pending  # (counted into steps when reduced: _flush)
        pending.append(snapshot)
        if len(pending) >= _DEFERRED_STEPS:
            self._flush()

    def _flush(self) -> None:
        """Reduce the deferred snapshots (runs of one layout at a time) into the accumulators."""
        pending, rows = self._pending, self._single[0][2]
        self._pending = []
        self._steps[0] += len(pending)
        while pending:
            layout = pending[0].layout
            n = len(pending)
            if any(x.layout is not layout for x in pending):  # (rare: frame_skip changed within the batch)
                n = next(i for i, x in enumerate(pending) if x.layout is not layout)
            run, pending = pending[:n], pending[n:]
            applied, saturated, energy = stacked_efforts(run)
            a = np.abs(applied)
            acc_energy, abs_sum, peak, n_sat = rows
            acc_energy += np.add.reduce(energy, axis=0)
            abs_sum += np.add.reduce(a, axis=0)
            np.maximum(peak, np.maximum.reduce(a, axis=0), out=peak)
            n_sat += np.add.reduce(saturated, axis=0)

    def _values(self, ids: Any) -> dict[str, dict[str, np.ndarray]]:
        if self._pending:
            self._flush()
        steps = np.maximum(self._steps[ids], 1)
        out = {}
        for g, kind, cols in self._groups:
            acc = self._acc[kind][2][:, ids][..., cols]  # (4, envs, group columns)
            n = steps * acc.shape[-1]  # samples per env: steps x columns
            out[g] = {"energy": acc[0].sum(axis=-1), "peak_abs_effort": acc[2].max(axis=-1),
                      "mean_abs_effort": acc[1].sum(axis=-1) / n, "saturated_fraction": acc[3].sum(axis=-1) / n}
        return out

    def record(self, mask: np.ndarray) -> dict[str, Any]:
        """The statistics in Gymnasium's vector-info format: ``{group: {stat: (num_envs,) float64,
        "_stat": mask}, "_group": mask}``, set where ``mask`` ((num_envs,) bool) is (zero elsewhere)."""
        mask = np.asarray(mask, dtype=bool)
        ended = np.flatnonzero(mask)
        values = self._values(ended) if len(ended) else {}  # only the ended envs' statistics are computed
        out: dict[str, Any] = {}
        for g, _, _ in self._groups:
            gd: dict[str, Any] = {}
            for s in EPISODE_STATS:
                v = np.zeros(len(mask))
                if g in values:
                    v[ended] = values[g][s]
                gd[s], gd["_" + s] = v, mask.copy()
            out[g], out["_" + g] = gd, mask.copy()
        return out

    def env_record(self, i: int = 0) -> dict[str, dict[str, float]]:
        """Env ``i``'s statistics as ``{group: {stat: float}}`` (the single-env ``info`` format)."""
        return {g: {s: float(v[0]) for s, v in stats.items()} for g, stats in self._values([i]).items()}


def episode_record(info: Mapping[str, Any]) -> tuple[Mapping[str, Any] | None, np.ndarray | None]:
    """The finished episodes' record of a vector ``info`` and its env mask: from ``info["final_info"]``
    (SAME_STEP: the finished step's info) or else ``info`` itself (NEXT_STEP, DISABLED); ``(None, None)``
    when no episode ended in this step."""
    for src in (info.get("final_info"), info):
        if isinstance(src, Mapping) and isinstance(src.get(EPISODE_INFO_KEY), Mapping):
            rec = src[EPISODE_INFO_KEY]
            mask = src.get("_" + EPISODE_INFO_KEY)
            return rec, (None if mask is None else np.asarray(mask, dtype=bool).reshape(-1))
    return None, None


def log_values(record: Mapping[str, Any], mask: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """``{"Episode_Actuator/<group>/<stat>": (ended envs,) float64}`` from a vector record (the envs of
    ``mask`` and of the record's own masks; None: all), or ``{tag: (1,)}`` from a single-env record."""
    out: dict[str, np.ndarray] = {}
    for g, stats in record.items():
        if g.startswith("_") or not isinstance(stats, Mapping):
            continue
        for s, v in stats.items():
            if s.startswith("_"):
                continue
            v = np.asarray(v, dtype=np.float64).reshape(-1)
            keep = np.ones(v.shape, bool) if mask is None else mask.copy()
            for m in (record.get("_" + g), stats.get("_" + s)):
                if m is not None:
                    keep &= np.asarray(m, dtype=bool).reshape(-1)
            if keep.any():
                out[f"{LOG_PREFIX}/{g}/{s}"] = v[keep]
    return out


def with_episode_scalars(info: dict[str, Any]) -> dict[str, Any]:
    """``info`` with, in a step where episodes ended, ``info["episode"][tag]`` = the mean over those
    episodes of each :func:`log_values` tag as a one-element torch tensor: what skrl's trainers track
    (``environment_info="episode"``: every one-element tensor there goes to ``track_data`` and
    TensorBoard). Other steps: ``info`` unchanged."""
    record, ended = episode_record(info)
    values = log_values(record, ended) if record is not None else {}
    if not values:
        return info
    import torch

    info = dict(info)
    episode = dict(info.get("episode") or {})
    episode.update({tag: torch.tensor(float(v.mean())) for tag, v in values.items()})
    info["episode"] = episode
    return info
