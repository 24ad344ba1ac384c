"""A motor's logs for ``actuator-gym identify``: read, checked, resampled onto the bench's timestep,
grouped per unit (docs/identify.md).

A log is a CSV with a header row, or an NPZ, with the columns

==============  ===========  ====================================================
column          unit         meaning
==============  ===========  ====================================================
``time``        s            sample times, strictly increasing
``target_pos``  rad (m)      the position command sent to the motor
``joint_pos``   rad (m)      the measured joint position
``joint_vel``   rad/s (m/s)  the measured joint velocity
``effort``      N·m (N)      optional: the measured (or current-derived) torque
==============  ===========  ====================================================

Sizes are bounded as for every data file (:mod:`actuator_gym.tools.logs`, docs/security.md).
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from .logs import LogError, read_table

__all__ = ["MotorLog", "LOG_COLUMNS", "load_motor_log", "motor_logs_by_unit", "MIN_SAMPLES"]

LOG_COLUMNS = ("time", "target_pos", "joint_pos", "joint_vel")
"""Required columns; ``effort`` is optional."""
MIN_SAMPLES = 20
"""Fewest samples a log must have once resampled."""


@dataclass(frozen=True)
class MotorLog:
    """One log on the bench's time grid (every array ``(T,)`` float64, sample ``k`` at ``k * dt``)."""

    path: Path
    unit: str
    dt: float
    target_pos: np.ndarray
    joint_pos: np.ndarray
    joint_vel: np.ndarray
    effort: np.ndarray | None

    @property
    def num_samples(self) -> int:
        return len(self.joint_pos)


def load_motor_log(path: str | Path, dt: float, unit: str = "unit") -> MotorLog:
    """The log at ``path`` checked and resampled (linearly) onto a ``dt`` [s] grid starting at its first
    sample, with a warning saying so when its own rate differs. :class:`~actuator_gym.tools.logs.LogError`
    (a ``ValueError``) names the file and the column for a missing column, a non-finite value, a time
    that does not increase, too few samples, or a command that never moves the joint."""
    path = Path(path)
    data = read_table(path, LOG_COLUMNS)
    cols = {c: np.asarray(data[c], dtype=np.float64) for c in (*LOG_COLUMNS, "effort") if c in data}
    for c, v in cols.items():
        if v.ndim != 1:
            raise LogError(f"{path}: column {c!r} has shape {v.shape}; one joint per log: (T,)")
        if len(v) != len(cols["time"]):
            raise LogError(f"{path}: column {c!r} has {len(v)} rows, 'time' has {len(cols['time'])}")
        bad = np.flatnonzero(~np.isfinite(v))
        if bad.size:
            raise LogError(f"{path}: column {c!r} has a non-finite value at row {int(bad[0])}")
    t = cols["time"]
    steps = np.diff(t)
    if t.size < 2 or (steps <= 0).any():
        row = int(np.flatnonzero(steps <= 0)[0]) + 1 if t.size >= 2 else 0
        raise LogError(f"{path}: column 'time' must increase strictly (row {row}); got {t[max(row - 1, 0):row + 1].tolist()}")
    grid = t[0] + dt * np.arange(int(np.floor((t[-1] - t[0]) / dt + 1e-9)) + 1)
    if grid.size < MIN_SAMPLES:
        raise LogError(f"{path}: {grid.size} samples at the bench's timestep {dt} s; need at least {MIN_SAMPLES}")
    own = float(np.median(steps))
    if not np.allclose(steps, dt, rtol=1e-6, atol=1e-9):
        warnings.warn(f"{path}: resampled from {1.0 / own:.6g} Hz (median step {own:.6g} s) onto the bench's "
                      f"timestep {dt} s ({1.0 / dt:.6g} Hz), linearly", stacklevel=2)
    res = {c: np.interp(grid, t, v) for c, v in cols.items() if c != "time"}
    if np.ptp(res["joint_pos"]) < 1e-9:
        raise LogError(f"{path}: column 'joint_pos' never changes: the command never moves the joint "
                       f"('target_pos' spans {np.ptp(res['target_pos']):.3g}); nothing to identify")
    return MotorLog(path, unit, float(dt), res["target_pos"], res["joint_pos"], res["joint_vel"], res.get("effort"))


def motor_logs_by_unit(paths: Sequence[str | Path], unit_of: str | None = None) -> dict[str, list[Path]]:
    """``{unit: [log files]}``: a folder is one unit (its ``*.csv`` / ``*.npz`` files, sorted); files
    are grouped by ``unit_of``, a regex searched in each file name (its first group, else the whole
    match, names the unit), or are all one unit (``"unit"``). ``ValueError`` names a file the
    pattern does not match, a folder without logs, or a path that is neither."""
    if unit_of is not None:
        try:
            pattern = re.compile(unit_of)
        except re.error as exc:
            raise ValueError(f"--unit-of: {unit_of!r} is not a regular expression: {exc}") from None
    units: dict[str, list[Path]] = {}
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            files = sorted(f for f in p.iterdir() if f.suffix in (".csv", ".npz") and f.is_file())
            if not files:
                raise ValueError(f"{p}: a unit folder without .csv or .npz logs")
            units.setdefault(p.name, []).extend(files)
        elif p.is_file():
            name = "unit"
            if unit_of is not None:
                m = pattern.search(p.name)
                if m is None:
                    raise ValueError(f"{p}: --unit-of {unit_of!r} does not match the file name")
                name = m.group(1) if m.groups() else m.group(0)
            units.setdefault(name, []).append(p)
        else:
            raise ValueError(f"{p}: no such log file or unit folder")
    if not units:
        raise ValueError("identify: no logs given")
    return units
