"""Actuator experiments on the pendulum: per-substep recordings and step-response metrics.

This is the computation behind ``actuator-gym demo`` and ``actuator-gym sweep``; tests call it
directly and compare the numbers the CLI writes against it.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ..actuators import models as M
from ..tasks.pendulum import HOLDING_TORQUE, PendulumTask

__all__ = [
    "Recording", "record_pendulum", "step_metrics", "settled", "diverged", "divergence_substep", "until_divergence", "SWEEPS", "sweep_cases", "demo_cases", "dc_envelope",
]

DIVERGED_SPEED = 1e4
"""[rad/s]: a recorded joint speed beyond this (or a non-finite state, or an engine reset) marks a
run as diverged; the stiffest stable runs of the ``implicit`` sweep peak near 100 rad/s."""


@dataclass
class Recording:
    """Per-substep trace of one pendulum run (arrays of shape ``(substeps,)``)."""

    label: str
    t: np.ndarray  # [s]
    q: np.ndarray  # [rad]
    qd: np.ndarray  # [rad/s]
    computed_effort: np.ndarray  # [N·m]
    applied_effort: np.ndarray  # [N·m]
    target: float  # [rad]
    physics_dt: float  # [s]
    cfg: Any = None
    reset_substep: int = -1  # first substep after MuJoCo reset the world on an unstable state (-1: none)


def record_pendulum(
    actuators: Mapping[str, Any],
    target: float = math.pi / 2,
    seconds: float = 3.0,
    label: str = "",
    seed: int = 0,
    step_at_s: float = 0.25,
    **pendulum_kwargs: Any,
) -> Recording:
    """From rest, hanging down, command the hinge to stay at 0 rad until ``step_at_s`` [s], then
    to ``target`` [rad]; record every physics substep for ``seconds`` after the step.
    ``pendulum_kwargs`` override ``PendulumCfg`` fields (joint_damping, joint_friction, armature,
    ...). Times in the recording count from the step."""
    kwargs = dict(initial_angle_range=(0.0, 0.0), episode_length_s=seconds + step_at_s + 1.0, **pendulum_kwargs)
    task = PendulumTask(num_envs=1, actuators=dict(actuators), **kwargs)
    rows: list[tuple[float, float, float, float]] = []
    times: list[float] = []

    def on_substep(tk, _i):
        rows.append((
            float(tk.backend.joint_pos()[0, 0]),
            float(tk.backend.joint_vel()[0, 0]),
            float(tk.collection.computed_effort[0, 0]),
            float(tk.collection.applied_effort[0, 0]),
        ))
        times.append(float(tk.backend.time[0]))

    task.reset(seed=seed)
    def action_for(angle: float) -> np.ndarray:  # the task's action mapping, inverted
        return ((angle - task.action_offset) / task.action_scale).astype(np.float32)[None]

    hold = action_for(0.0)
    for _ in range(int(round(step_at_s / task.dt))):
        task.step(hold)
    q0 = float(task.backend.joint_pos()[0, 0])
    task.add_substep_callback(on_substep)
    action = action_for(target)
    for _ in range(int(round(seconds / task.dt))):
        task.step(action)
    task.close()
    arr = np.asarray(rows, dtype=np.float64)
    dt = task.cfg.physics_dt
    t = np.arange(1, len(arr) + 1) * dt
    back = np.flatnonzero(np.diff(times) <= 0) if len(times) > 1 else np.zeros(0, int)  # mj_resetData on instability
    reset = int(back[0]) + 1 if back.size else -1
    rec = Recording(label, t, arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3], float(target), dt, actuators, reset)
    rec.q0 = q0
    return rec


SETTLE_BAND = 0.02
"""Share of the step: a response has settled when, over the last :data:`SETTLE_TAIL` of the window,
it stays within ``SETTLE_BAND * |step|`` of its final value."""
SETTLE_TAIL = 0.2
"""Share of the recorded window (after the step) over which :func:`settled` looks."""


def settled(rec: Recording) -> bool:
    """Whether the response came to rest: over the last :data:`SETTLE_TAIL` of the window every ``q``
    is within ``SETTLE_BAND * |step|`` of the last one (a still oscillating, drifting or diverged
    response has not; one resting away from the target, e.g. stalled, has)."""
    step = abs(rec.target - getattr(rec, "q0", 0.0)) or 1.0
    tail = rec.q[-max(1, int(round(SETTLE_TAIL * len(rec.q)))):]
    with np.errstate(all="ignore"):
        return bool(np.all(np.abs(tail - tail[-1]) <= SETTLE_BAND * step))


def step_metrics(rec: Recording, settle_window_s: float = 0.5) -> dict[str, Any]:
    """Step-response figures of a recording.

    response_time [s]: from the step command to 10 % of the step (latency shows here);
    rise_time [s]: from 10 % to 90 % of the step (nan if 90 % is never reached);
    overshoot [%]: peak beyond the target, as a share of the step; settled: :func:`settled`;
    steady_error [rad]: mean ``|target - q|`` over the last ``settle_window_s`` of a settled
    response (nan when it did not settle); peak_effort [N·m]: max ``|applied|``;
    energy [J]: ``sum |applied * qd| * dt`` (mechanical work done by the motor, both signs counted);
    final_angle [deg].
    """
    q0 = getattr(rec, "q0", 0.0)
    step = rec.target - q0
    frac = (rec.q - q0) / step if step != 0 else np.zeros_like(rec.q)
    i10 = np.argmax(frac >= 0.1) if (frac >= 0.1).any() else None
    i90 = np.argmax(frac >= 0.9) if (frac >= 0.9).any() else None
    rise = float(rec.t[i90] - rec.t[i10]) if (i10 is not None and i90 is not None) else float("nan")
    overshoot = float(max(0.0, (frac.max() - 1.0) * 100.0))
    n_tail = max(1, int(round(settle_window_s / rec.physics_dt)))
    rest = settled(rec)
    steady = float(np.mean(np.abs(rec.target - rec.q[-n_tail:]))) if rest else float("nan")
    return {
        "response_time_s": float(rec.t[i10]) if i10 is not None else float("nan"),
        "rise_time_s": rise,
        "overshoot_pct": overshoot,
        "settled": rest,
        "steady_error_rad": steady,
        "peak_effort_Nm": float(np.max(np.abs(rec.applied_effort))),
        "energy_J": float(np.sum(np.abs(rec.applied_effort * rec.qd)) * rec.physics_dt),
        "final_angle_deg": float(math.degrees(np.mean(rec.q[-n_tail:]))),
    }


def divergence_substep(rec: Recording) -> int:
    """The first substep at which a run is unstable (-1: never): a non-finite state, a joint speed
    above :data:`DIVERGED_SPEED`, or MuJoCo resetting the world (its warning "Nan, Inf or huge value")."""
    with np.errstate(all="ignore"):
        bad = ~np.isfinite(rec.q) | ~np.isfinite(rec.qd) | (np.abs(rec.qd) > DIVERGED_SPEED)
    hits = [int(np.argmax(bad))] if bad.any() else []
    if rec.reset_substep >= 0:
        hits.append(rec.reset_substep)
    return min(hits) if hits else -1


def diverged(rec: Recording) -> bool:
    """Whether a run went unstable (see :func:`divergence_substep`)."""
    return divergence_substep(rec) >= 0


def until_divergence(rec: Recording) -> Recording:
    """The recording cut after its first unstable substep (labelled "diverged"), for plotting;
    a stable recording unchanged."""
    i = divergence_substep(rec)
    if i < 0:
        return rec
    k = i + 1
    out = dataclasses.replace(rec, label=f"{rec.label} (diverged)", t=rec.t[:k], q=rec.q[:k], qd=rec.qd[:k],
                              computed_effort=rec.computed_effort[:k], applied_effort=rec.applied_effort[:k])
    out.q0 = getattr(rec, "q0", 0.0)
    return out


def first_crossing_substep(rec: Recording, threshold: float) -> int:
    """Index of the first substep at which ``q`` reaches ``threshold`` [rad] (-1 if never)."""
    hit = np.nonzero(rec.q >= threshold)[0]
    return int(hit[0]) if hit.size else -1


def dc_envelope(saturation_effort: float, velocity_limit: float, effort_limit: float, v: np.ndarray):
    """The DC-motor torque bounds ``(tau_min, tau_max)`` [N·m] at joint speeds ``v`` [rad/s]
    (the same law as ``ClampingDCMotor``, evaluated through it)."""
    from ..actuators import Actuator, ClampingDCMotor, DrivePD

    v = np.asarray(v, dtype=np.float32).reshape(-1, 1)
    m = Actuator(drive=DrivePD(), clamping=[ClampingDCMotor(saturation_effort, velocity_limit, effort_limit)], num_envs=len(v), num_joints=1)
    hi = m.compute(joint_pos=np.zeros_like(v), joint_vel=v, target_effort=np.full_like(v, 1e9)).numpy().ravel()
    lo = m.compute(joint_pos=np.zeros_like(v), joint_vel=v, target_effort=np.full_like(v, -1e9)).numpy().ravel()
    return lo, hi


# -- the demo's models and the sweeps ----------------------------------------------------------
KP, KD = 20.0, 2.0
DEMO_DC = dict(saturation_effort=4.5, actuator_velocity_limit=3.0, actuator_effort_limit=3.5)


def demo_cases() -> dict[str, dict[str, Any]]:
    """``{label: {group: cfg}}`` -- the models ``actuator-gym demo`` compares on the pendulum."""
    j = ["hinge"]
    return {
        "ideal PD": {"p": M.IdealPDActuatorCfg(joint_names_expr=j, stiffness=KP, damping=KD)},
        "PD, 2 N·m limit": {"p": M.IdealPDActuatorCfg(joint_names_expr=j, stiffness=KP, damping=KD, actuator_effort_limit=2.0)},
        "DC motor": {"p": M.DCMotorCfg(joint_names_expr=j, stiffness=KP, damping=KD, **DEMO_DC)},
        "PD, 24-substep delay": {"p": M.DelayedPDActuatorCfg(joint_names_expr=j, stiffness=KP, damping=KD, min_delay=24, max_delay=24)},
    }


def _pd(**kw):
    return {"p": M.IdealPDActuatorCfg(joint_names_expr=["hinge"], **{"stiffness": KP, "damping": KD, **kw})}


SWEEPS: dict[str, tuple[list[float], str]] = {
    "stiffness": ([5.0, 10.0, 20.0, 40.0, 80.0], "N·m/rad"),
    "damping": ([0.2, 0.5, 1.0, 2.0, 4.0], "N·m·s/rad"),
    "armature": ([0.0, 0.01, 0.05, 0.1, 0.3], "kg·m²"),
    "friction": ([0.0, 0.1, 0.3, 0.6, 1.0], "N·m"),
    "effort_limit": ([1.0, 2.0, 3.0, 4.0, 6.0], "N·m"),
    "velocity_limit": ([0.5, 1.0, 2.0, 4.0, 8.0], "rad/s"),
    "delay": ([0, 6, 12, 24, 48], "substeps"),
    "implicit": ([200.0, 2000.0, 20000.0], "N·m/rad"),
}
"""``actuator-gym sweep PARAM``: the values swept and their unit. ``implicit`` runs each stiffness
(damping ``stiffness / 100`` N·m·s/rad, no effort limit) in explicit and in implicit
(Stable-PD) effort mode at the pendulum's 1/360 s substep: explicit PD diverges at the stiffest
gain (semi-implicit Euler needs ``h kd / I < 2``; here ``h kd / I = 200 / 360 / 0.15 = 3.7``),
implicit stays stable."""

IMPLICIT_KD_RATIO = 0.01
"""[s]: damping / stiffness of the ``implicit`` sweep (a 10 ms PD time constant)."""


def sweep_cases(param: str) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """``[(label, actuators, pendulum_kwargs)]`` for one sweep (target: horizontal)."""
    if param not in SWEEPS:
        raise ValueError(f"unknown sweep parameter {param!r}; choose one of {sorted(SWEEPS)}")
    values, unit = SWEEPS[param]
    out = []
    if param == "implicit":
        for mode in ("explicit", "implicit"):
            for v in values:
                cfg = M.IdealPDActuatorCfg(joint_names_expr=["hinge"], stiffness=v, damping=IMPLICIT_KD_RATIO * v,
                                           actuator_effort_limit=math.inf, effort_mode=mode)
                out.append((f"{mode}, stiffness = {v:g} {unit}", {"p": cfg}, {}))
        return out
    for v in values:
        label = f"{param} = {v:g} {unit}"
        if param in ("stiffness", "damping"):
            out.append((label, _pd(**{param: v}), {}))
        elif param == "armature":
            out.append((label, _pd(), {"armature": v}))
        elif param == "friction":
            out.append((label, _pd(), {"joint_friction": v}))
        elif param == "effort_limit":
            out.append((label, _pd(stiffness=80.0, damping=4.0, actuator_effort_limit=v), {}))
        elif param == "velocity_limit":
            cfg = M.DCMotorCfg(joint_names_expr=["hinge"], stiffness=KP, damping=KD, saturation_effort=20.0,
                               actuator_effort_limit=20.0, actuator_velocity_limit=v)
            out.append((label, {"p": cfg}, {}))
        elif param == "delay":
            out.append((label, {"p": M.DelayedPDActuatorCfg(joint_names_expr=["hinge"], stiffness=KP, damping=KD,
                                                            min_delay=int(v), max_delay=int(v))}, {}))
    return out


def stall_angle(effort_limit: float) -> float:
    """[rad] Where a pendulum with a torque limit below the holding torque stalls: asin(limit / m g L)."""
    return math.asin(min(1.0, effort_limit / HOLDING_TORQUE))
