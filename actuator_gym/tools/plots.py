"""PNG figures written by the command line (matplotlib, headless ``Agg`` backend)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import numpy as np

from .._safe_io import atomic_path


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path) -> Path:
    """``fig`` written to ``path`` atomically (a link there is replaced, never written through), then closed."""
    import matplotlib.pyplot as plt

    try:
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=Path(path).suffix[1:] or None)
    finally:
        plt.close(fig)
    return path


def step_responses(recs: Sequence, path: Path, title: str, ylim: tuple[float, float] | None = None) -> Path:
    """Joint angle over time for several recordings, with the target. ``ylim`` [deg] clips the
    axis (diverging runs would otherwise flatten every other curve); non-finite samples are skipped."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=110)
    for r in recs:
        with np.errstate(all="ignore"):
            q = np.degrees(np.where(np.isfinite(r.q), r.q, np.nan))
        ax.plot(r.t, q, label=r.label, lw=1.6)
    ax.axhline(math.degrees(recs[0].target), color="k", ls="--", lw=1, label="target")
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.set_xlabel("time since step command [s]")
    ax.set_ylabel("joint angle [deg]")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    return _save(fig, path)


def efforts(recs: Sequence, path: Path, title: str) -> Path:
    """Applied (solid) and computed (dotted) effort over time."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=110)
    for r in recs:
        line, = ax.plot(r.t, r.applied_effort, lw=1.5, label=f"{r.label} (applied)")
        ax.plot(r.t, r.computed_effort, lw=0.8, ls=":", color=line.get_color())
    ax.set_xlabel("time since step command [s]")
    ax.set_ylabel("effort [N·m]  (dotted: computed before clamps)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    ax.set_ylim(-8, 26)
    fig.tight_layout()
    return _save(fig, path)


def torque_speed(v: np.ndarray, lo: np.ndarray, hi: np.ndarray, qd: np.ndarray, tau: np.ndarray, path: Path, title: str,
                 when: np.ndarray | None = None, when_label: str = "substep") -> Path:
    """The DC-motor torque-speed envelope (``lo``, ``hi`` over ``v``; ``(k, len(v))``: ``k`` envelopes,
    e.g. a group's joints with different motors) with the operating points ``(qd, tau)`` visited,
    coloured by ``when`` (default: their order), labelled ``when_label``."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.5, 5), dpi=110)
    for k, (l, h) in enumerate(zip(np.atleast_2d(lo), np.atleast_2d(hi))):
        ax.fill_between(v, l, h, color="tab:blue", alpha=0.15, label=None if k else "admissible effort")
        ax.plot(v, h, color="tab:blue", lw=1.5)
        ax.plot(v, l, color="tab:blue", lw=1.5)
    sc = ax.scatter(qd, tau, c=np.arange(len(qd)) if when is None else when, cmap="viridis", s=6,
                    label="operating points (colour: time)")
    fig.colorbar(sc, ax=ax, label=when_label)
    ax.axhline(0, color="k", lw=0.5)
    ax.axvline(0, color="k", lw=0.5)
    ax.set_xlabel("joint speed [rad/s]")
    ax.set_ylabel("applied effort [N·m]")
    ax.set_title(title)
    ax.legend(fontsize=8, loc="lower left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return _save(fig, path)


def timeseries(t: np.ndarray, series: dict[str, np.ndarray], path: Path, title: str, ylabel: str,
               labels: dict[str, list[str]] | None = None) -> Path:
    """One line per column of each ``(steps, k)`` series, in the legend as ``labels[name][k]`` (default
    ``name[k]``; the legend shows up to 12 lines)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=110)
    for name, y in series.items():
        y = np.asarray(y).reshape(len(t), -1)
        own = (labels or {}).get(name) or ([f"{name}[{k}]" for k in range(y.shape[1])] if y.shape[1] > 1 else [name])
        for k in range(y.shape[1]):
            ax.plot(t, y[:, k], lw=1.0, label=own[k])
    ax.set_xlabel("time [s]")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if sum(np.asarray(y).reshape(len(t), -1).shape[1] for y in series.values()) <= 12:
        ax.legend(fontsize=7, loc="best", ncol=2)
    fig.tight_layout()
    return _save(fig, path)


def learning_curve(steps: Sequence[int], returns: Sequence[float], path: Path, title: str) -> Path:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    ax.plot(steps, returns, marker="o")
    ax.set_xlabel("environment steps")
    ax.set_ylabel("mean evaluation return")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return _save(fig, path)


def heatmap_grid(path: Path, rows: Sequence[str], cols: Sequence[str], panels: dict[str, tuple[np.ndarray, np.ndarray, bool]],
                 title: str) -> Path:
    """One annotated heatmap per panel, two per line: ``panels = {label: (mean (rows, cols), ci (rows, cols),
    higher_is_better)}``; each cell shows ``mean ± ci`` (nan: empty)."""
    plt = _plt()
    ncols = 2 if len(panels) > 1 else 1
    nrows = (len(panels) + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(ncols * (1.5 + 1.3 * len(cols)), nrows * (1.0 + 0.7 * len(rows)) + 0.6),
                             dpi=110, squeeze=False)
    for ax in axes.ravel()[len(panels):]:
        ax.axis("off")
    for ax, (label, (z, ci, higher_better)) in zip(axes.ravel(), panels.items()):
        z = np.asarray(z, dtype=np.float64)
        im = ax.imshow(z, cmap="viridis" if higher_better else "viridis_r", aspect="auto")
        for i in range(len(rows)):
            for j in range(len(cols)):
                if np.isfinite(z[i, j]):
                    bright = im.norm(z[i, j]) > 0.6 if higher_better else im.norm(z[i, j]) < 0.4  # viridis' yellow end
                    ax.text(j, i, f"{z[i, j]:.3g}\n±{ci[i][j]:.2g}", ha="center", va="center", fontsize=7,
                            color="k" if bright else "w")
        ax.set_xticks(range(len(cols)), list(cols), rotation=30, ha="right", fontsize=7)
        ax.set_yticks(range(len(rows)), list(rows), fontsize=7)
        ax.set_title(label, fontsize=9)
        fig.colorbar(im, ax=ax, shrink=0.8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return _save(fig, path)


def comparison_grid(rows: Sequence[tuple[str, np.ndarray, dict[str, dict[str, np.ndarray]]]], path: Path, title: str) -> Path:
    """One row of panels per ``(name, t, {panel: {line label: values over t}})``, e.g. a log's measured
    and simulated position and velocity side by side."""
    plt = _plt()
    ncols = max(len(panels) for _, _, panels in rows)
    fig, axes = plt.subplots(len(rows), ncols, figsize=(5.5 * ncols, 2.4 * len(rows)), squeeze=False)
    for axrow, (name, t, panels) in zip(axes, rows):
        for ax, (panel, lines) in zip(axrow, panels.items()):
            for label, y in lines.items():
                ax.plot(t, y[:len(t)], lw=0.8, label=label)
            ax.set_title(f"{name}: {panel}", fontsize=9)
        axrow[0].legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return _save(fig, path)


def file_part(name: str) -> str:
    """``name`` made safe as part of a file name (letters, digits, ``_``, ``-``; others ``_``)."""
    import re

    return re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64] or "_"


def dc_operating_points(group: str, ids: list[int], motors: np.ndarray, arrays: dict[str, np.ndarray], t: np.ndarray, path: Path) -> Path:
    """A DC-motor group's operating points (joint speed, applied effort; every joint, every step)
    against its torque-speed envelope(s) (``motors``: distinct (saturation_effort, velocity_limit,
    effort_limit) rows)."""
    from . import analysis

    qd, tau = arrays["joint_vel"][:, ids], arrays["applied_effort"][:, ids]
    speeds, limits = np.abs(qd[np.isfinite(qd)]), motors[:, 1][np.isfinite(motors[:, 1])]
    span = max(1.1 * float(speeds.max()) if speeds.size else 0.0, 1.2 * float(limits.max()) if limits.size else 0.0, 1e-3)
    v = np.linspace(-span, span, 301)
    lo, hi = zip(*(analysis.dc_envelope(sat, vel, eff, v) for sat, vel, eff in motors))
    return torque_speed(v, np.stack(lo), np.stack(hi), qd.ravel(), tau.ravel(), path,
                              f"{group}: torque-speed envelope and operating points ({len(ids)} joint(s))",
                              when=np.repeat(t, len(ids)), when_label="time [s]")


def write_video(frames, path: Path, fps: int) -> Path:
    if not frames or frames[0] is None:
        raise ValueError("no frames were rendered (is a GL backend available? set MUJOCO_GL=egl or osmesa)")
    import imageio.v2 as imageio

    with atomic_path(path) as tmp:
        if path.suffix == ".gif":
            imageio.mimsave(tmp, frames, duration=1.0 / fps, loop=0)
        else:
            try:
                imageio.mimsave(tmp, frames, fps=fps)
            except Exception as exc:  # noqa: BLE001 - the ffmpeg plugin is optional
                raise ValueError(f"cannot write {path.name}: {exc}; use --video gif, or pip install imageio-ffmpeg") from None
    return path
