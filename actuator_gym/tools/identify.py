"""Identify a motor from its logs: ``actuator-gym identify`` (docs/identify.md).

    report = identify(["logs/"], mjcf="bench.xml", joint="motor", model="all", out="out/")
    # out/identify/actuator.yaml: a `kind: actuators` preset for the joint (configs.load, actuators=<path>)
    # out/identify/report.json: per model class, each parameter with its 95 % interval, fit and held-out errors
    # out/identify/<unit>_<class>.png, torque_speed.png: measured against simulated, the torque-speed points

Each model class (:data:`MODEL_CLASSES`) fits its actuator parameters plus the joint's Coulomb
friction, viscous damping and armature (:data:`~actuator_gym.tools.motor_bench.JOINT_FIELDS`), with
MuJoCo's own system-identification optimizer (``mujoco.sysid.optimize``: box-bounded nonlinear least
squares, ``mujoco.minimize`` underneath, ``mujoco.sysid.calculate_intervals`` for the 95 % intervals),
over rollouts of our own runtime on the bench (:class:`~actuator_gym.tools.motor_bench.Bench`). The
command delay is a whole number of physics substeps: every delay in ``0..max_delay`` gets a short fit,
the best one the full fit. ``model="all"`` fits every class and picks the one with the lowest
held-out error (leave one log out). Several units (logs grouped per unit) are fitted one by one; the
preset's nominal values are the units' medians and its ``randomization`` covers every unit's values
and intervals (``operation: scale``), its delay range every unit's delay.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import re
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .._safe_io import clear_outputs, output_dir, write_atomic
from .motor_bench import JOINT_FIELDS, Bench
from . import analysis, plots
from .motor_logs import MotorLog, load_motor_log, motor_logs_by_unit
from .options import OneLineParser

__all__ = ["identify", "MODEL_CLASSES", "ParamBound", "MAX_DELAY_LIMIT", "main", "build_parser"]

MAX_DELAY_LIMIT = 50
"""Largest ``max_delay`` accepted [physics substeps]."""
OUTPUTS = ("actuator.yaml", "report.json", "torque_speed.png")


@dataclass(frozen=True)
class ParamBound:
    """A fitted parameter: its unit and the box it is searched in."""

    unit: str
    low: float
    high: float


_JOINT = {"friction": ParamBound("N·m", 0.0, 100.0), "viscous_friction": ParamBound("N·m·s/rad", 0.0, 100.0),
          "armature": ParamBound("kg·m²", 0.0, 10.0)}
MODEL_CLASSES: dict[str, dict[str, ParamBound]] = {
    "ideal_pd": {"stiffness": ParamBound("N·m/rad", 1e-3, 1e4), "damping": ParamBound("N·m·s/rad", 0.0, 1e3),
                 "actuator_effort_limit": ParamBound("N·m", 1e-3, 1e4), **_JOINT},
    "dc_motor": {"stiffness": ParamBound("N·m/rad", 1e-3, 1e4), "damping": ParamBound("N·m·s/rad", 0.0, 1e3),
                 "saturation_effort": ParamBound("N·m", 1e-3, 1e4), "actuator_effort_limit": ParamBound("N·m", 1e-3, 1e4),
                 "actuator_velocity_limit": ParamBound("rad/s", 1e-2, 1e4), **_JOINT},
}
"""The model classes ``--model`` names, and what each fits (besides the delay) within which bounds."""
_PRESET_MODEL = {"ideal_pd": "IdealPD", "dc_motor": "DCMotor"}


def _cfg(model: str, joint: str, delay: int) -> Any:
    """The class's config on ``joint`` with placeholder values (each world's are set per parameter)."""
    from ..actuators.models import DCMotorCfg, IdealPDActuatorCfg

    common = dict(joint_names_expr=[re.escape(joint)], stiffness=1.0, damping=0.0, actuator_effort_limit=1.0,
                  min_delay=delay, max_delay=delay)
    if model == "dc_motor":
        return DCMotorCfg(**common, saturation_effort=1.0, actuator_velocity_limit=1.0)
    return IdealPDActuatorCfg(**common)


def _smooth(x: np.ndarray, width: int = 15) -> np.ndarray:
    """A centred moving average (the ends averaged over what there is)."""
    kernel = np.ones(width)
    return np.convolve(x, kernel, "same") / np.convolve(np.ones_like(x), kernel, "same")


def _rigid_torque(bench: Bench, lg: MotorLog) -> tuple[np.ndarray, np.ndarray]:
    """The joint torque the bench's rigid body needs for the logged motion (MuJoCo's inverse
    dynamics, the joint's armature, friction and damping at zero), and the smoothed acceleration."""
    import mujoco

    m = bench.model
    saved = (m.dof_armature[bench.dadr], m.dof_frictionloss[bench.dadr], m.dof_damping[bench.dadr])
    m.dof_armature[bench.dadr] = m.dof_frictionloss[bench.dadr] = m.dof_damping[bench.dadr] = 0.0
    d = mujoco.MjData(m)
    acc = np.gradient(_smooth(lg.joint_vel), lg.dt)
    out = np.empty(lg.num_samples)
    try:
        for k in range(lg.num_samples):
            d.qpos[:] = m.qpos0
            d.qvel[:], d.qacc[:] = 0.0, 0.0
            d.qpos[bench.qadr], d.qvel[bench.dadr], d.qacc[bench.dadr] = lg.joint_pos[k], lg.joint_vel[k], acc[k]
            mujoco.mj_inverse(m, d)
            out[k] = d.qfrc_inverse[bench.dadr]
    finally:
        m.dof_armature[bench.dadr], m.dof_frictionloss[bench.dadr], m.dof_damping[bench.dadr] = saved
    return out, acc


def _start(model: str, bench: Bench, logs: Sequence[MotorLog], max_delay: int) -> tuple[dict[str, float], int]:
    """Starting values and delay by linear least squares on the logs (the fit has local minima; these
    put it in the right basin). Where the motor is not saturated its torque is
    ``kp (q*[t - d] - q) - kd qd``; the joint takes it as ``rigid torque + armature qdd + friction
    sign(qd) + viscous qd`` (:func:`_rigid_torque`), or the log's effort says it directly. One
    regression per delay ``d``; the best ``d``'s coefficients start the fit, the effort's peaks (or
    the regression's torque) its limits, the speed where they fall its no-load speed."""
    rows = {d: [] for d in range(max_delay + 1)}
    targets, limit, speed = [], [], []
    for lg in logs:
        rigid, acc = _rigid_torque(bench, lg)
        tau = lg.effort if lg.effort is not None else None
        qd = _smooth(lg.joint_vel, 5)
        sign = np.tanh(qd / 0.05)
        for d in rows:
            err = np.concatenate([np.full(d, lg.target_pos[0]), lg.target_pos[:lg.num_samples - d]]) - lg.joint_pos
            if tau is None:  # rigid = kp err - kd qd - armature acc - friction sign - viscous qd
                rows[d].append(np.column_stack([err, -qd, -acc, -sign]))
            else:  # effort = kp err - kd qd (unsaturated), effort = rigid + armature acc + friction sign + viscous qd
                rows[d].append(np.column_stack([err, -qd]))
        targets.append((rigid, tau, acc, sign, qd))
        limit.append(np.abs(tau if tau is not None else rigid))
        speed.append(np.abs(lg.joint_vel))
    peak = float(np.percentile(np.concatenate(limit), 99.5)) or 1.0
    v99 = float(np.percentile(np.concatenate(speed), 99)) or 1.0
    y = np.concatenate([t[1] if t[1] is not None else t[0] for t in targets])
    qd_all = np.concatenate([t[4] for t in targets])
    best = None
    for d, parts in rows.items():
        A = np.concatenate(parts)
        # pass 1: small tracking errors at low speed (unsaturated whatever the gains); pass 2: the
        # samples pass 1's gains predict inside a rough torque-speed envelope
        keep = (np.abs(A[:, 0]) < np.percentile(np.abs(A[:, 0]), 40)) & (np.abs(qd_all) < np.percentile(np.abs(qd_all), 50))
        for _ in range(2):
            coef, *_ = np.linalg.lstsq(A[keep], y[keep], rcond=None)
            demand = np.abs(A[:, :2] @ coef[:2])
            keep = demand < 0.8 * np.minimum(peak, 1.3 * peak * np.clip(1 - np.abs(qd_all) / (1.5 * v99), 0, 1))
            if keep.sum() < 4 * A.shape[1]:
                break
        res = float(np.mean((A[keep] @ coef - y[keep]) ** 2)) if keep.sum() >= A.shape[1] else math.inf
        if best is None or res < best[0]:
            best = (res, d, coef)
    _, delay, coef = best
    kp, kd = float(coef[0]), float(coef[1])
    if logs[0].effort is not None:  # the joint's own terms from effort - rigid torque
        J = np.concatenate([np.column_stack([t[2], t[3], t[4]]) for t in targets])
        y = np.concatenate([t[1] - t[0] for t in targets])
        arm, fric, visc = np.linalg.lstsq(J, y, rcond=None)[0]
    else:
        arm, fric, visc = float(coef[2]), float(coef[3]), 0.0
    start = dict(stiffness=kp, damping=kd, actuator_effort_limit=peak, saturation_effort=1.3 * peak,
                 actuator_velocity_limit=1.5 * v99, friction=fric, viscous_friction=visc, armature=arm)
    bounds = MODEL_CLASSES[model]
    floor = dict(stiffness=1e-2, damping=1e-3, friction=1e-3 * peak, viscous_friction=1e-4 * peak / v99, armature=1e-5)
    return {k: float(np.clip(max(start[k], floor.get(k, 0.0)), max(b.low, 1e-9), b.high)) for k, b in bounds.items()}, delay


@dataclass
class _Problem:
    """One least-squares problem: a class at one delay over some logs of one unit."""

    bench: Bench
    model: str
    logs: list[MotorLog]
    delay: int
    scale: dict[str, float]  # parameter -> its start value: the optimizer works on value / scale
    weights: dict[str, float]  # signal -> 1 / its spread over the logs
    evaluations: int = 0

    @property
    def names(self) -> list[str]:
        return list(MODEL_CLASSES[self.model])

    def values(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """``{parameter: (k,)}`` physical values of scaled points ``x`` ``(n,)`` or ``(n, k)``."""
        x = np.asarray(x, dtype=np.float64).reshape(len(self.names), -1)
        return {p: x[i] * self.scale[p] for i, p in enumerate(self.names)}

    def simulate(self, x: np.ndarray) -> dict[str, np.ndarray]:
        self.evaluations += 1
        return self.bench.simulate(_cfg(self.model, self.bench.joint, self.delay), self.values(x), self.logs)

    def residual(self, x: np.ndarray) -> np.ndarray:
        """``(m, k)``: the weighted differences, measured minus simulated, of every log's samples
        after the first (position, velocity, and effort where logged), for each column of ``x``."""
        return self.evaluate(x)[1]

    def evaluate(self, x: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """The rollouts of ``x`` (:meth:`simulate`) and their :meth:`residual`, from one rollout."""
        sim = self.simulate(x)
        L = len(self.logs)
        k = sim["joint_pos"].shape[0] // L
        parts = []
        for i, lg in enumerate(self.logs):
            rows = np.arange(k) * L + i
            n = lg.num_samples
            for key, meas in (("joint_pos", lg.joint_pos), ("joint_vel", lg.joint_vel), ("effort", lg.effort)):
                if meas is not None:
                    parts.append(((sim[key][rows, 1:n] - meas[1:]) * self.weights[key]).T)
        return sim, np.concatenate(parts, axis=0)


def _weights(logs: Sequence[MotorLog]) -> dict[str, float]:
    w = {}
    for key in ("joint_pos", "joint_vel", "effort"):
        vals = [getattr(lg, key) for lg in logs if getattr(lg, key) is not None]
        if vals:
            w[key] = 1.0 / max(float(np.std(np.concatenate(vals))), 1e-9)
    return w


def _solve(problem: _Problem, x0: np.ndarray, max_iters: int) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
    """``mujoco.sysid.optimize`` from ``x0`` (scaled); returns the point, its rollouts and its residual."""
    from absl import logging as absl_logging
    from mujoco import sysid

    params = sysid.ParameterDict()
    for i, name in enumerate(problem.names):
        b = MODEL_CLASSES[problem.model][name]
        s = problem.scale[name]
        params.add(sysid.Parameter(name, float(np.clip(x0[i], b.low / s, b.high / s)), b.low / s, b.high / s))

    def residual_fn(x, _params):
        return [problem.residual(x)], None, None

    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):  # the optimizer's iteration log
        warnings.simplefilter("ignore")
        level = absl_logging.get_verbosity()
        absl_logging.set_verbosity(absl_logging.ERROR)  # its "starts at a box bound" notes: the boxes are wide
        try:
            opt, _ = sysid.optimize(params, residual_fn, optimizer="mujoco", verbose=False, max_iters=max_iters)
        finally:
            absl_logging.set_verbosity(level)
    x = opt.as_vector()
    sim, r = problem.evaluate(x)
    return x, sim, r[:, 0]


@dataclass
class ClassFit:
    """One class fitted to one unit's logs."""

    model: str
    delay: int
    values: dict[str, float]
    intervals: dict[str, float]  # 95 % half-widths
    fit_rms: dict[str, float]
    heldout_rms: dict[str, float]
    heldout_score: float  # the mean weighted held-out RMS (what "all" compares)
    delay_scores: dict[int, float]
    predictions: dict[str, Any] = field(default_factory=dict, repr=False)

    def as_dict(self) -> dict[str, Any]:
        return {"delay": self.delay, "parameters": {
            k: {"value": v, "interval_95": [v - self.intervals[k], v + self.intervals[k]],
                "unit": MODEL_CLASSES[self.model][k].unit} for k, v in self.values.items()},
            "fit_rms": self.fit_rms, "heldout_rms": self.heldout_rms, "heldout_score": self.heldout_score,
            "delay_scores": {str(k): v for k, v in self.delay_scores.items()}}


def _rms(sim: dict[str, np.ndarray], logs: Sequence[MotorLog], rows: Sequence[int]) -> dict[str, float]:
    out = {}
    for key in ("joint_pos", "joint_vel", "effort"):
        errs = [sim[key][r, 1:lg.num_samples] - getattr(lg, key)[1:] for r, lg in zip(rows, logs) if getattr(lg, key) is not None]
        if errs:
            e = np.concatenate(errs)
            out[key] = float(np.sqrt(np.mean(e * e)))
    return out


def _jacobian(problem: _Problem, x: np.ndarray, r: np.ndarray) -> np.ndarray:
    """``(m, n)`` forward differences of the residual at ``x`` (one batched rollout, a relative step of
    ``1e-6``; the optimizer's last Jacobian is of its last iterate, not of the final point)."""
    h = 1e-6 * np.maximum(np.abs(x), 1e-3)
    return (problem.residual(x[:, None] + np.diag(h)) - r[:, None]) / h


def _autocorrelation_factor(r: np.ndarray) -> float:
    """How much wider the intervals are than white residuals would make them: ``sqrt((1 + rho) /
    (1 - rho))`` for the residuals' lag-1 autocorrelation ``rho`` (an AR(1) model's variance
    inflation; the few joints between logs and signals are negligible). 1 for white residuals."""
    rho = float(np.dot(r[1:], r[:-1])) / (float(np.dot(r, r)) or 1.0)
    rho = min(max(rho, 0.0), 0.99)
    return math.sqrt((1 + rho) / (1 - rho))


def _scan(bench: Bench, model: str, logs: list[MotorLog], delays: Sequence[int], start: dict, weights: dict,
          x0: np.ndarray, iters: int, progress: Any) -> tuple[dict[int, float], dict[int, np.ndarray]]:
    scores, points = {}, {}
    for d in delays:
        points[d], _, r = _solve(_Problem(bench, model, logs, d, start, weights), x0, max_iters=iters)
        scores[d] = float(np.sqrt(np.mean(r * r)))
        if progress:
            progress(f"{model}: delay {d} substeps, residual {scores[d]:.4g}")
    return scores, points


def fit_class(bench: Bench, model: str, logs: list[MotorLog], max_delay: int, progress: Any = None) -> ClassFit:
    """Fit ``model`` to ``logs`` (one unit) and predict each log from a fit on the others (held out,
    when there are two or more logs).

    The start values and a first delay come from linear regressions (:func:`_start`); the delays
    next to it get a fit each, the best (one more delay beyond it where it is at the edge) the
    full fit. The weights: each signal's spread first, then its
    residual's RMS at the fit (so that every signal's residual has unit variance, as
    ``mujoco.sysid.calculate_intervals`` assumes), a last fit and its 95 % intervals, widened for
    the residuals' autocorrelation (:func:`_autocorrelation_factor`) and, with three logs or more,
    to the jackknife over the held-out fits (Student's t at 95 %) where that is wider: a log's own
    start and excitation move the estimate more than white noise alone says."""
    start, guess = _start(model, bench, logs, max_delay)
    weights = _weights(logs)
    near = [d for d in (guess - 1, guess, guess + 1) if 0 <= d <= max_delay]
    scores, points = _scan(bench, model, logs, near, start, weights, np.ones(len(start)), 20, progress)
    delay = min(scores, key=scores.get)
    if delay != guess and 0 <= 2 * delay - guess <= max_delay:  # the best is at the edge: one more beyond it
        more, extra = _scan(bench, model, logs, [2 * delay - guess], start, weights, points[delay], 10, progress)
        scores.update(more)
        points.update(extra)
        delay = min(scores, key=scores.get)
    x, sim, _ = _solve(_Problem(bench, model, logs, delay, start, weights), points[delay], max_iters=40)
    spread = weights  # the held-out score's weights: the same for every class
    noise = _rms(sim, logs, range(len(logs)))
    weights = {k: 1.0 / max(noise[k], 1e-6 / weights[k]) for k in weights}
    problem = _Problem(bench, model, logs, delay, start, weights)
    x, sim, r = _solve(problem, x, max_iters=10)
    from mujoco import sysid

    _, half = sysid.calculate_intervals([r], _jacobian(problem, x, r))
    half = half * _autocorrelation_factor(r)
    values = {k: float(v[0]) for k, v in problem.values(x).items()}
    intervals = {k: float(h * problem.scale[k]) for k, h in zip(problem.names, half)}
    fit_rms = _rms(sim, logs, range(len(logs)))
    held: dict[str, list] = {}
    preds: dict[str, Any] = {}
    jack = []
    if len(logs) > 1:
        for i, lg in enumerate(logs):
            rest = [g for j, g in enumerate(logs) if j != i]
            xi, _, _ = _solve(_Problem(bench, model, rest, delay, start, weights), x, max_iters=15)
            jack.append(xi)
            one = _Problem(bench, model, [lg], delay, start, weights)
            pred = one.simulate(xi)
            preds[str(lg.path)] = {k: v[0] for k, v in pred.items()}
            for key, v in _rms(pred, [lg], [0]).items():
                held.setdefault(key, []).append(v)
            if progress:
                progress(f"{model}: held out {lg.path.name}")
    if len(jack) >= 3:  # the jackknife over the logs: what differs from log to log, not only the noise
        import scipy.stats

        sd = np.sqrt((len(jack) - 1) / len(jack) * np.sum((np.array(jack) - np.mean(jack, axis=0)) ** 2, axis=0))
        wide = sd * scipy.stats.t.ppf(0.975, len(jack) - 1)
        intervals = {k: max(intervals[k], float(w * problem.scale[k])) for k, w in zip(problem.names, wide)}
    heldout = {k: float(np.sqrt(np.mean(np.square(v)))) for k, v in held.items()}
    score = float(np.mean([heldout[k] * spread[k] for k in heldout])) if heldout else float("nan")
    return ClassFit(model, delay, values, intervals, fit_rms, heldout, score, scores, preds or
                    {str(lg.path): {k: v[i] for k, v in sim.items()} for i, lg in enumerate(logs)})


def _preset(model: str, joint: str, fits: dict[str, ClassFit], source: str) -> str:
    """The ``kind: actuators`` YAML of ``model`` over the units' fits."""
    names = list(MODEL_CLASSES[model])
    nominal = {k: float(np.median([f.values[k] for f in fits.values()])) for k in names}
    delays = [f.delay for f in fits.values()]
    lines = ["kind: actuators", "description: >",
             f"  Identified by actuator-gym identify from {source}: {model} on joint {joint!r}"
             + (f", {len(fits)} units (randomization covers their values and 95 % intervals)." if len(fits) > 1 else "."),
             "groups:", "  motor:", f"    model: {_PRESET_MODEL[model]}",
             f"    joint_names_expr: [{json.dumps(re.escape(joint))}]"]
    lines += [f"    {k}: {nominal[k]:.9g}  # {MODEL_CLASSES[model][k].unit}" for k in names]
    lines += [f"    min_delay: {min(delays)}  # physics substeps", f"    max_delay: {max(delays)}"]
    rand = []
    if len(fits) > 1:
        for k in names:
            if k in JOINT_FIELDS or nominal[k] <= 0:
                continue  # joint properties are model fields: their spread is in report.json
            lo = min(f.values[k] - f.intervals[k] for f in fits.values()) / nominal[k]
            hi = max(f.values[k] + f.intervals[k] for f in fits.values()) / nominal[k]
            if math.isfinite(lo) and math.isfinite(hi) and hi > lo:
                rand.append(f"      {k}: {{dist: uniform, low: {max(lo, 1e-3):.6g}, high: {hi:.6g}, operation: scale}}")
    if rand:
        lines += ["    randomization:"] + rand
    return "\n".join(lines) + "\n"


def _plots(folder: Path, unit: str, fit: ClassFit, logs: list[MotorLog]) -> None:
    """Measured against simulated position and velocity, every log (simulated by the fit that did not
    see it, where there were several)."""
    sim = "simulated (held out)" if len(logs) > 1 else "simulated"
    rows = [(lg.path.name, np.arange(lg.num_samples) * lg.dt,
             {f"{key} [{u}]": {"measured": getattr(lg, key), sim: fit.predictions[str(lg.path)][key]}
              for key, u in (("joint_pos", "rad"), ("joint_vel", "rad/s"))}) for lg in logs]
    plots.comparison_grid(rows, folder / f"{unit}_{fit.model}.png", f"{unit}: {fit.model}, delay {fit.delay} substeps")


def _torque_speed(folder: Path, fits: dict[str, ClassFit], logs: dict[str, list[MotorLog]]) -> None:
    """Every unit's operating points (joint speed, the logged effort, else the simulated one) against
    its identified envelope (the DC motor's through ``ClampingDCMotor``: :func:`~.analysis.dc_envelope`)."""
    qd, tau, lo, hi = [], [], [], []
    span = 1.2 * max(float(np.max(np.abs(lg.joint_vel))) for g in logs.values() for lg in g)
    v = np.linspace(-span, span, 301)
    for unit, fit in fits.items():
        for lg in logs[unit]:
            qd.append(lg.joint_vel)
            tau.append(lg.effort if lg.effort is not None else fit.predictions[str(lg.path)]["effort"][:lg.num_samples])
        p, lim = fit.values, fit.values["actuator_effort_limit"]
        bounds = (analysis.dc_envelope(p["saturation_effort"], p["actuator_velocity_limit"], lim, v) if fit.model == "dc_motor"
                  else (np.full_like(v, -lim), np.full_like(v, lim)))
        lo.append(bounds[0])
        hi.append(bounds[1])
    plots.torque_speed(v, np.stack(lo), np.stack(hi), np.concatenate(qd), np.concatenate(tau), folder / "torque_speed.png",
                       "torque-speed operating points against the identified envelope", when_label="sample")


def identify(logs: Sequence[str | Path], *, mjcf: str | Path, joint: str, model: str = "dc_motor",
             out: str | Path | None = None, unit_of: str | None = None, max_delay: int = 5,
             progress: Any = None) -> dict[str, Any]:
    """Identify the motor driving ``joint`` of the bench ``mjcf`` from ``logs`` (files, or one
    folder per unit); ``model``: a key of :data:`MODEL_CLASSES` or ``"all"``. Returns the report
    (what ``report.json`` holds); with ``out``, writes ``out/identify/`` (module doc). Every input is
    checked before anything is fitted or written (``ValueError`` naming the file, column or option)."""
    if model != "all" and model not in MODEL_CLASSES:
        raise ValueError(f"identify: model must be one of {[*MODEL_CLASSES, 'all']}, got {model!r}")
    if isinstance(max_delay, bool) or not isinstance(max_delay, int) or not 0 <= max_delay <= MAX_DELAY_LIMIT:
        raise ValueError(f"identify: max_delay must be an int in [0, {MAX_DELAY_LIMIT}] (physics substeps), got {max_delay!r}")
    bench = Bench(mjcf, joint)
    groups = motor_logs_by_unit(logs, unit_of)
    unit_logs = {u: [load_motor_log(p, bench.dt, u) for p in paths] for u, paths in groups.items()}
    folder = None if out is None else output_dir(out, "identify")
    classes = list(MODEL_CLASSES) if model == "all" else [model]
    t0 = time.perf_counter()
    fits = {c: {u: fit_class(bench, c, lg, max_delay, progress) for u, lg in unit_logs.items()} for c in classes}
    scores = {c: float(np.mean([f.heldout_score for f in fu.values()])) for c, fu in fits.items()}
    chosen = classes[0] if len(classes) == 1 else min(scores, key=lambda c: (math.isnan(scores[c]), scores[c]))
    report = {
        "bench": str(mjcf) if bench.where != "the bench MJCF" else "(MJCF text)", "joint": joint, "timestep": bench.dt,
        "units": {u: [str(lg.path) for lg in lgs] for u, lgs in unit_logs.items()},
        "chosen": chosen, "heldout_scores": scores, "seconds": round(time.perf_counter() - t0, 1),
        "classes": {c: {u: f.as_dict() for u, f in fu.items()} for c, fu in fits.items()},
    }
    if folder is not None:
        clear_outputs(folder, [*OUTPUTS, *(f"{u}_{c}.png" for u in unit_logs for c in MODEL_CLASSES)])
        for c in classes:
            for u, f in fits[c].items():
                _plots(folder, u, f, unit_logs[u])
        _torque_speed(folder, fits[chosen], unit_logs)
        write_atomic(folder / "actuator.yaml", _preset(chosen, joint, fits[chosen], ", ".join(str(p) for p in logs)))
        write_atomic(folder / "report.json", json.dumps(report, indent=2) + "\n")
    return report


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="actuator-gym identify", description=(
        "Identify a motor's physical model (gains, torque-speed curve, delay, friction, armature) from its logs "
        "(docs/identify.md); writes OUT/identify/actuator.yaml, report.json and plots."))
    p.add_argument("logs", nargs="+", help="CSV/NPZ logs (time, target_pos, joint_pos, joint_vel[, effort]) or one folder per unit")
    p.add_argument("--mjcf", required=True, help="the bench's MJCF (the mechanics the motor drives)")
    p.add_argument("--joint", required=True, help="the bench joint the logs describe")
    p.add_argument("--model", default="dc_motor", choices=[*MODEL_CLASSES, "all"], help="model class (default dc_motor)")
    p.add_argument("--out", required=True, help="output folder (OUT/identify/)")
    p.add_argument("--unit-of", default=None, help="regex on the file names whose first group names the unit")
    p.add_argument("--max-delay", type=int, default=5, help=f"largest command delay searched [physics substeps, <= {MAX_DELAY_LIMIT}]")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    report = identify(args.logs, mjcf=args.mjcf, joint=args.joint, model=args.model, out=args.out,
                      unit_of=args.unit_of, max_delay=args.max_delay, progress=lambda m: print(m, flush=True))
    chosen = report["chosen"]
    for unit, fit in report["classes"][chosen].items():
        print(f"{unit}: {chosen}, delay {fit['delay']} substeps, held-out RMS {fit['heldout_rms']}")
        for k, v in fit["parameters"].items():
            lo, hi = v["interval_95"]
            print(f"  {k:24s} {v['value']:.5g} {v['unit']}  (95 %: {lo:.5g} .. {hi:.5g})")
    print(f"wrote {Path(args.out) / 'identify'} in {report['seconds']} s")
    return 0
