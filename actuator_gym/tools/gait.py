"""Gait figures measured from the physics of a legged rollout.

:func:`gait_figures` is a pure function over recorded arrays (``T`` control steps, ``N`` envs, ``F``
feet); :class:`GaitRecorder` records those arrays from a task that exposes a ``feet``
:class:`~actuator_gym.tasks.quadruped_terms.FootTracker` (the quadruped), one :meth:`~GaitRecorder.record`
call after every ``step``. Used by ``actuator-gym rollout`` and by the transfer benchmark.

Figures (per foot, in the task's foot order, and for the base):

* ``duty_factor``: fraction of the recorded steps the foot is in contact (1: it never lifts; a trot
  is about 0.5-0.6, a walk about 0.75);
* ``slip``: mean planar speed [m/s] of the foot's contact point (the sphere's material point on the
  floor, ``FootTracker.slip_speed``: rolling is not slip) over the steps the foot is on the floor
  from start to end (in contact at this step and the previous one: the touchdown step, whose
  20 ms include the end of the swing, is not stance); 0: no skating;
* ``clearance``: mean over completed swings of the swing's peak foot-centre height minus
  ``foot_radius`` [m] (the lowest point of the foot above the floor; NaN without a swing);
* ``steps``: number of touchdowns per foot (a foot that never steps has 0);
* ``vx_error``: mean ``|v_x - v_x*|`` [m/s] (body frame) over the steps before each env's first fall;
* ``distance``: mean planar distance [m] the base travelled from the first to the last recorded step;
* ``falls``: number of envs that terminated.

Only the steps up to an env's first termination count (the rest belongs to a new episode).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["gait_figures", "GaitRecorder", "format_gait"]


def gait_figures(contact, foot_height, foot_speed, vx, vx_command, base_xy, terminated, foot_radius: float,
                 foot_names=None, foot_slip_speed=None) -> dict[str, Any]:
    """Gait figures (module docstring) from recorded arrays.

    Args:
        contact: ``(T, N, F)`` bool, foot in contact after step ``t``.
        foot_height: ``(T, N, F)`` [m] foot-centre height above the floor.
        foot_speed: ``(T, N, F)`` [m/s] planar foot-centre speed over step ``t``.
        vx, vx_command: ``(T, N)`` [m/s] base forward velocity (body frame) and its command.
        base_xy: ``(T, N, 2)`` [m] base position.
        terminated: ``(T, N)`` bool, the env's episode terminated at step ``t``.
        foot_radius: [m] subtracted from the swing peak (the clearance of the foot's lowest point).
        foot_names: optional names of the ``F`` feet (keys of the per-foot dicts; default ``"0", "1", ...``).
        foot_slip_speed: ``(T, N, F)`` [m/s] planar speed of the feet's contact points over step ``t``
            (``FootTracker.slip_speed``); default ``foot_speed`` (point feet).
    """
    c = np.asarray(contact, dtype=bool)
    h = np.asarray(foot_height, dtype=np.float64)
    spd = np.asarray(foot_speed if foot_slip_speed is None else foot_slip_speed, dtype=np.float64)
    term = np.asarray(terminated, dtype=bool)
    if c.ndim != 3 or h.shape != c.shape or spd.shape != c.shape:
        raise ValueError(f"gait_figures: contact, foot_height and foot_speed (foot_slip_speed) must be (T, N, F) "
                         f"arrays of one shape, got {c.shape}, {h.shape}, {spd.shape}")
    t_len, n, f = c.shape
    if t_len < 1:
        raise ValueError("gait_figures: at least one recorded step is needed")
    names = [str(i) for i in range(f)] if foot_names is None else [str(x) for x in foot_names]
    if len(names) != f:
        raise ValueError(f"gait_figures: foot_names must name the {f} feet, got {names}")
    # valid[t, i]: step t belongs to env i's first episode (up to and including its termination)
    ended_before = np.cumsum(term, axis=0) - term
    valid = ended_before == 0
    vf = valid[..., None] & np.ones(f, dtype=bool)
    stance = c & vf
    duty = stance.sum(axis=(0, 1)) / np.maximum(vf.sum(axis=(0, 1)), 1)
    prev = np.concatenate([np.ones((1, n, f), dtype=bool), c[:-1]], axis=0)  # (the first step: as if in contact)
    held = stance & prev  # on the floor for the whole step
    slip = (spd * held).sum(axis=(0, 1)) / np.maximum(held.sum(axis=(0, 1)), 1)
    # swings: maximal runs of ~contact inside the valid steps that end in a touchdown
    touchdown = c & ~prev & vf
    peaks, counts = np.zeros((n, f)), np.zeros((n, f))
    peak = np.full((n, f), -np.inf)
    swinging = np.zeros((n, f), dtype=bool)
    for t in range(t_len):  # over time only (vectorized over envs and feet)
        air = ~c[t] & vf[t]
        peak = np.where(air, np.maximum(np.where(swinging, peak, -np.inf), h[t]), peak)
        swinging = np.where(air, True, swinging)
        land = touchdown[t] & swinging
        peaks += np.where(land, peak, 0.0)
        counts += land
        swinging = swinging & ~c[t]
    n_swings = counts.sum(axis=0)
    clearance = np.where(n_swings > 0, peaks.sum(axis=0) / np.maximum(n_swings, 1) - foot_radius, np.nan)
    err = np.abs(np.asarray(vx, dtype=np.float64) - np.asarray(vx_command, dtype=np.float64))
    xy = np.asarray(base_xy, dtype=np.float64)
    last = np.where(term.any(axis=0), np.argmax(term, axis=0), t_len - 1)
    dist = np.linalg.norm(xy[last, np.arange(n)] - xy[0], axis=-1)
    return {
        "duty_factor": dict(zip(names, duty.tolist())),
        "slip": dict(zip(names, slip.tolist())),
        "clearance": dict(zip(names, clearance.tolist())),
        "steps": dict(zip(names, touchdown.sum(axis=(0, 1)).astype(int).tolist())),
        "vx_error": float(err[valid].mean()),
        "distance": float(dist.mean()),
        "falls": int(term.any(axis=0).sum()),
        "num_envs": int(n),
        "num_steps": int(t_len),
    }


class GaitRecorder:
    """Records the arrays of :func:`gait_figures` from a legged task, one :meth:`record` per step.

    The task must expose ``feet`` (a ``FootTracker``), ``commands`` ``(N, 3)``, ``backend.qpos`` /
    ``backend.qvel`` with a free base joint first, and ``cfg.geometry.foot_radius`` (the quadruped
    does). Call :meth:`record(task, terminated)` after each ``step`` with the step's ``terminated``
    flags, then :meth:`figures`.
    """

    def __init__(self, foot_names=None):
        self.foot_names = foot_names
        self.rows: dict[str, list[np.ndarray]] = {k: [] for k in
                                                 ("contact", "foot_height", "foot_speed", "foot_slip_speed", "vx",
                                                  "vx_command", "base_xy", "terminated")}
        self.foot_radius = 0.0

    @staticmethod
    def legged_task(env: Any) -> Any:
        """The batched task behind ``env`` (a ``BatchedTask`` or a ``TaskEnv``) if it tracks feet, else None."""
        u = getattr(env, "unwrapped", env)
        task = getattr(u, "task", u)
        return task if hasattr(task, "feet") and hasattr(task, "commands") else None

    def record(self, task: Any, terminated) -> None:
        from .._math import quat_to_rotmat

        be, feet = task.backend, task.feet
        quat, v_world = np.asarray(be.qpos[:, 3:7]), np.asarray(be.qvel[:, 0:3])
        v_body = np.einsum("nji,nj->ni", quat_to_rotmat(quat), v_world)
        self.foot_radius = float(task.cfg.geometry.foot_radius)
        for key, value in (("contact", feet.contact), ("foot_height", feet.height), ("foot_speed", feet.speed),
                           ("foot_slip_speed", feet.slip_speed),
                           ("vx", v_body[:, 0]), ("vx_command", task.commands[:, 0]),
                           ("base_xy", be.qpos[:, 0:2]), ("terminated", terminated)):
            self.rows[key].append(np.array(value))

    def figures(self) -> dict[str, Any]:
        arrays = {k: np.stack(v) for k, v in self.rows.items()}
        return gait_figures(foot_radius=self.foot_radius, foot_names=self.foot_names, **arrays)


def format_gait(fig: dict[str, Any]) -> str:
    """A few readable lines of :func:`gait_figures`' result."""
    feet = list(fig["duty_factor"])
    lines = [f"{'foot':>6} {'duty':>6} {'slip m/s':>9} {'clear m':>8} {'steps':>6}"]
    for k in feet:
        lines.append(f"{k:>6} {fig['duty_factor'][k]:6.2f} {fig['slip'][k]:9.3f} {fig['clearance'][k]:8.3f} "
                     f"{fig['steps'][k]:6d}")
    lines.append(f"|vx err| {fig['vx_error']:.3f} m/s, distance {fig['distance']:.2f} m, falls {fig['falls']}"
                 f"/{fig['num_envs']} over {fig['num_steps']} steps")
    return "\n".join(lines)
