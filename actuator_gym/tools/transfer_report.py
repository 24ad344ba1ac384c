"""Tables and heatmaps of a transfer benchmark (:mod:`actuator_gym.tools.transfer`).

``summarize`` turns the per-policy rows into one row per (training condition, hardware condition):
for every metric the mean over seeds and the half-width of its 95 % confidence interval,
``t(0.975, n - 1) * std / sqrt(n)`` (Student's t, sample standard deviation; 0 for one seed), and
the **change** from the policy's own training condition, paired by seed: each seed's value here
minus the same policy's value on the column ``train:<its condition>``, with the mean and the
confidence interval of those differences (the between-seed spread of a policy's level cancels,
so a degradation shows even where the cells' own intervals overlap).
``write`` puts ``results.csv``, ``summary.csv``, ``summary.md`` and ``heatmaps.png`` into a folder.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .._safe_io import write_atomic
from .tables import write_csv

__all__ = ["summarize", "write", "t_quantile", "train_column", "HEATMAP_METRICS"]

HEATMAP_METRICS = ("tracking_error", "return", "fell", "energy")
"""The metrics drawn as heatmaps (one panel each)."""
_TABLE_METRICS = ("tracking_error", "return", "fell", "energy", "saturated_fraction", "peak_abs_effort")


def t_quantile(p: float, df: int) -> float:
    """Student's t quantile ``t(p, df)`` for ``p`` in (0.5, 1), ``df >= 1``, by bisection on the CDF
    (the density integrated with Simpson's rule on [0, x]); accurate to about 1e-6."""
    if not 0.5 < p < 1 or df < 1:
        raise ValueError(f"t_quantile: p must be in (0.5, 1) and df >= 1, got p={p!r}, df={df!r}")
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)

    def cdf(x: float) -> float:  # P(T <= x) for x >= 0
        u = np.linspace(0.0, x, 4001)
        f = c * (1 + u * u / df) ** (-(df + 1) / 2)
        return 0.5 + (u[1] - u[0]) / 3 * (f[0] + f[-1] + 4 * f[1:-1:2].sum() + 2 * f[2:-1:2].sum())

    lo, hi = 0.0, 1.0
    while cdf(hi) < p:
        lo, hi = hi, 2 * hi
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < p else (lo, mid)
    return (lo + hi) / 2


def train_column(condition: str) -> str:
    """The matrix column of training condition ``condition`` (``"train:<name>"``; condition names hold no ``:``)."""
    return f"train:{condition}"


def _mean_ci(v: np.ndarray, tq: float) -> tuple[float, float]:
    """Mean and CI half-width ``tq * sd / sqrt(n)`` (``tq``: the group's t quantile; 0 for one value)."""
    n = len(v)
    return float(v.mean()), (float(tq * v.std(ddof=1) / math.sqrt(n)) if n > 1 else 0.0)


def summarize(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (train_condition, hardware_condition), in first-seen order: ``seeds`` and, per
    metric, ``<metric>`` (mean over seeds), ``<metric>_ci95`` (half-width), ``<metric>_change`` and
    ``<metric>_change_ci95`` (the paired change from the policy's own training condition, module
    doc; NaN where the rows hold no ``train:<condition>`` value for every seed)."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["train_condition"], r["hardware_condition"]), []).append(r)
    own = {(r["train_condition"], r["seed"]): r for r in rows
           if r["hardware_condition"] == train_column(r["train_condition"])}
    out = []
    for (t, h), rs in groups.items():
        row: dict[str, Any] = {"train_condition": t, "hardware_condition": h, "seeds": len(rs)}
        n = len(rs)
        tq = t_quantile(0.975, n - 1) if n > 1 else 0.0  # (the same n for the values and their changes)
        paired = all((t, r["seed"]) in own for r in rs)
        for m in _TABLE_METRICS:
            v = np.asarray([r[m] for r in rs], dtype=np.float64)
            row[m], row[m + "_ci95"] = _mean_ci(v, tq)
            if paired:
                row[m + "_change"], row[m + "_change_ci95"] = _mean_ci(v - [own[t, r["seed"]][m] for r in rs], tq)
            else:
                row[m + "_change"] = row[m + "_change_ci95"] = float("nan")
        out.append(row)
    return out


def _markdown(summary: Sequence[dict[str, Any]], exp: Any, tracking_label: str) -> str:
    trains = list(dict.fromkeys(r["train_condition"] for r in summary))
    hards = list(dict.fromkeys(r["hardware_condition"] for r in summary))
    cell = {(r["train_condition"], r["hardware_condition"]): r for r in summary}
    lines = [f"# Transfer: {exp.name} ({exp.task}, engine {exp.engine})", "",
             f"{len(exp.seeds)} seed(s) per training condition ({exp.seeds}), {exp.episodes} deterministic episodes per "
             f"evaluation (reset seeds {exp.eval_seed}..{exp.eval_seed + exp.episodes - 1}); cells: mean ± 95 % CI over seeds.", ""]
    titles = {"tracking_error": f"tracking error, {tracking_label}", "return": "return", "fell": "fall fraction",
              "energy": "energy per episode [J]", "saturated_fraction": "saturated fraction (all joints)",
              "peak_abs_effort": "peak |effort| [N·m]"}
    for m in _TABLE_METRICS:
        lines += [f"## {titles[m]}", "", "| train \\ hardware | " + " | ".join(hards) + " |",
                  "|---|" + "---|" * len(hards)]
        for t in trains:
            cells = [f"{cell[t, h][m]:.4g} ± {cell[t, h][m + '_ci95']:.2g}" if (t, h) in cell else "" for h in hards]
            lines.append(f"| {t} | " + " | ".join(cells) + " |")
        lines += ["", f"Change from the policy's own training condition (paired by seed), {titles[m]}:", "",
                  "| train \\ hardware | " + " | ".join(hards) + " |", "|---|" + "---|" * len(hards)]
        for t in trains:
            cells = [f"{cell[t, h][m + '_change']:+.3g} ± {cell[t, h][m + '_change_ci95']:.2g}"
                     if (t, h) in cell and not math.isnan(cell[t, h][m + "_change"]) else "" for h in hards]
            lines.append(f"| {t} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["## conditions", ""]
    for kind, conds in (("train", exp.train_conditions), ("hardware", exp.hardware_conditions)):
        for name, c in conds.items():
            lines.append(f"- {kind} `{name}`: {' '.join(c.description.split()) or '(no description)'}")
    return "\n".join(lines) + "\n"


def _heatmaps(path: Path, summary: Sequence[dict[str, Any]], title: str, tracking_label: str) -> Path:
    from . import plots

    trains = list(dict.fromkeys(r["train_condition"] for r in summary))
    hards = list(dict.fromkeys(r["hardware_condition"] for r in summary))
    cell = {(r["train_condition"], r["hardware_condition"]): r for r in summary}
    labels = {"tracking_error": tracking_label, "return": "return", "fell": "fall fraction", "energy": "energy per episode [J]"}

    def grid(key: str) -> np.ndarray:
        return np.array([[cell[t, h][key] if (t, h) in cell else np.nan for h in hards] for t in trains])

    panels = {labels[m]: (grid(m), grid(m + "_ci95"), m == "return") for m in HEATMAP_METRICS}
    return plots.heatmap_grid(path, trains, hards, panels, title)


def write(out: Path, rows: Sequence[dict[str, Any]], exp: Any, tracking_label: str) -> list[Path]:
    """``results.csv`` (rows), ``summary.csv`` / ``summary.md`` (:func:`summarize`) and ``heatmaps.png`` in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    summary = summarize(rows)
    md = write_atomic(out / "summary.md", _markdown(summary, exp, tracking_label))
    return [write_csv(out / "results.csv", rows), write_csv(out / "summary.csv", summary), md,
            _heatmaps(out / "heatmaps.png", summary, f"{exp.name}: train condition x hardware condition (mean over "
                      f"{len(exp.seeds)} seeds)", tracking_label)]
