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


def print_table(rows: list[dict[str, Any]]) -> None:
    keys = list(rows[0])
    cells = [[k for k in keys]] + [[(f"{r[k]:.4g}" if isinstance(r[k], float) else str(r[k])) for k in keys] for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(keys))]
    for n, c in enumerate(cells):
        print("  ".join(s.rjust(w) if i else s.ljust(w) for i, (s, w) in enumerate(zip(c, widths))))
        if n == 0:
            print("  ".join("-" * w for w in widths))


def settling_cells(row: dict[str, Any]) -> dict[str, Any]:
    """A step-metrics row as the CSV holds it: ``settled`` yes / no, ``steady_error_rad`` empty unless
    the response settled (``analysis.settled``; a diverged run has not)."""
    ok = row.get("settled") is True
    return {**row, "settled": "yes" if ok else "no", **({} if ok else {"steady_error_rad": ""})}


def print_step_table(rows: list[dict[str, Any]]) -> None:
    from .analysis import SETTLE_BAND, SETTLE_TAIL

    print_table([{k: ("not settled" if k == "steady_error_rad" and v == "" else v) for k, v in r.items()} for r in rows])
    print(f"\nsteady_error_rad: mean |target - q| over the last 0.5 s, only for responses that settled (stayed within "
          f"{SETTLE_BAND:.0%} of the step over the last {SETTLE_TAIL:.0%} of the run); 'not settled': still moving, "
          f"no steady error (the CSV cell is empty)")
