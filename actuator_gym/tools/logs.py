"""Reading logged data files (CSV with a header row, or NPZ) safely, for ``actuator-gym fit`` and
``actuator-gym identify``: every size is bounded before anything is parsed or inflated
(docs/security.md), and every problem is a :class:`LogError` naming the file.

A log holds at most :data:`LOG_MAX_VALUES` numbers in a file of at most :data:`LOG_MAX_BYTES`;
an ``.npz``'s declared sizes are checked from its headers before it is loaded; a CSV line is at
most :data:`LOG_CSV_MAX_LINE` characters.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import numpy as np

from .._safe_io import load_npz, npz_headers, read_size

__all__ = ["LogError", "read_table", "LOG_MAX_BYTES", "LOG_MAX_VALUES", "LOG_CSV_MAX_LINE"]

LOG_MAX_BYTES = 256 * 2**20
"""[bytes]: largest log file, and largest total an ``.npz`` log's arrays may declare (their ``.npy``
headers' ``prod(shape) * itemsize``, and its zip directory's uncompressed sizes), checked before anything
is inflated or parsed."""
LOG_MAX_VALUES = 2**24
"""Most numbers a log may hold (all its arrays' elements, or data rows x columns of a CSV): 128 MiB as
float64. Counted from the ``.npy`` headers before loading, and while a CSV is read."""
LOG_CSV_MAX_LINE = 2**16
"""[characters]: longest line of a CSV log."""


class LogError(ValueError):
    """A log file that cannot be used for fitting (the message names the file and the problem)."""


def _too_many(path: Path, n: int) -> LogError:
    return LogError(f"{path}: the log holds {n} numbers or more; allowed: at most {LOG_MAX_VALUES} (logs.LOG_MAX_VALUES)")


def _read_csv(path: Path) -> dict[str, np.ndarray]:
    """Read line by line (each at most :data:`LOG_CSV_MAX_LINE` characters) into one float64 buffer,
    refused past :data:`LOG_MAX_VALUES` numbers: the memory stays ~8 bytes per number."""
    import array
    import csv

    header: list[str] | None = None
    values = array.array("d")
    try:
        with open(path, newline="", encoding="utf-8") as f:
            for n, line in enumerate(iter(lambda: f.readline(LOG_CSV_MAX_LINE + 1), ""), start=1):
                if len(line) > LOG_CSV_MAX_LINE:
                    raise LogError(f"{path}: line {n} is longer than {LOG_CSV_MAX_LINE} characters; allowed: at most that")
                r = next(csv.reader([line]), [])
                if not any(c.strip() for c in r):  # blank lines carry nothing
                    continue
                if header is None:
                    header = [c.strip() for c in r]
                    if len(set(header)) != len(header):
                        raise LogError(f"{path}: duplicate column names in the header {header}")
                    continue
                if len(r) != len(header):
                    raise LogError(f"{path}: line {n} has {len(r)} field(s), the header has {len(header)}")
                try:
                    row = [float(c) for c in r]
                except ValueError:
                    raise LogError(f"{path}: line {n}: every field must be a number, got {r}") from None
                if len(values) + len(row) > LOG_MAX_VALUES:
                    raise _too_many(path, len(values) + len(row))
                values.extend(row)
    except UnicodeDecodeError:
        raise LogError(f"{path}: not a text CSV file") from None
    except csv.Error as exc:
        raise LogError(f"{path}: malformed CSV: {exc}") from None
    if header is None:
        raise LogError(f"{path}: empty file; expected a header row naming the columns, then data rows")
    if not values:
        raise LogError(f"{path}: header only, no data rows")
    table = np.frombuffer(values, dtype=np.float64).reshape(-1, len(header))
    return {name: table[:, i] for i, name in enumerate(header)}


def _read_npz(path: Path) -> dict[str, np.ndarray]:
    """The arrays, after their ``.npy`` headers were checked (numeric, 1-D or 2-D, at most
    :data:`LOG_MAX_BYTES` declared and :data:`LOG_MAX_VALUES` elements) -- before any is loaded."""
    import zipfile

    if not zipfile.is_zipfile(path):
        raise LogError(f"{path}: not an NPZ archive (a zip of .npy arrays)")
    try:
        heads = npz_headers(path, LOG_MAX_BYTES, "log", kinds="biuf")
    except ValueError as exc:
        raise LogError(str(exc)) from None
    for k, (shape, _) in heads.items():
        if len(shape) not in (1, 2):
            raise LogError(f"{path}: array {k!r} has shape {shape}; columns are (T,) or (T, K)")
    n = sum(math.prod(shape) for shape, _ in heads.values())
    if n > LOG_MAX_VALUES:
        raise _too_many(path, n)
    try:
        return {k: np.asarray(a, dtype=np.float64) for k, a in load_npz(path, LOG_MAX_BYTES, "log", kinds="biuf").items()}
    except ValueError as exc:
        raise LogError(str(exc)) from None


def read_table(path: str | Path, columns: Sequence[str]) -> dict[str, np.ndarray]:
    """``{column name: (T,) or (T, K) float64}`` of a ``.csv`` or ``.npz`` log, checked for its
    size (before parsing) and for the required ``columns`` (a :class:`LogError` naming the file
    and the missing columns)."""
    path = Path(path)
    if path.suffix not in (".npz", ".csv"):
        raise LogError(f"{path}: expected a .csv or .npz log")
    if not path.is_file():
        raise LogError(f"{path}: no such file")
    size = read_size(path, "log")
    if size > LOG_MAX_BYTES:
        raise LogError(f"{path}: the log is {size} bytes; allowed: at most {LOG_MAX_BYTES} (logs.LOG_MAX_BYTES)")
    data = _read_npz(path) if path.suffix == ".npz" else _read_csv(path)
    missing = [c for c in columns if c not in data]
    if missing:
        raise LogError(f"{path}: missing column(s) {missing}; need {list(columns)}")
    return data
