"""Result tables written by the command line (``demo``, ``sweep``, ``rollout``, ``transfer``)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, Sequence

from .._safe_io import atomic_path

__all__ = ["write_csv"]


def write_csv(path: Path, rows: Sequence[dict[str, Any]]) -> Path:
    """``rows`` (dicts with the same keys, the first row's order) as a CSV file at ``path``; floats
    written with 6 significant digits, atomically (:func:`~actuator_gym._safe_io.atomic_path`: a link at
    ``path`` is replaced, never written through). Returns ``path``."""
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
    return path
