"""The native groups' telemetry law, once for both ways of reading it.

MuJoCo reports the force its actuators applied (``actuator_force``); the telemetry also needs the
**commanded** torque, the drive's output before any limit (``computed_effort``; ``saturated`` =
computed != applied). :class:`~actuator_gym.backends.mujoco_native.NativeActuators` gets it from the
controls the engine read and the law in force:

    tau* = kp (u_pos - length) + kd (u_vel - velocity) + u_ff + const [+ ki x_I]

and reports it only where a limit acted (the force sits on the force range's bound, or a motor's
voltage ``R f + v`` reached ``+-Vmax``); elsewhere the engine's force is the commanded torque.

Two ways run this law, with the same operations in the same order (so the same numbers):

* **at the step** (:meth:`~actuator_gym.backends.mujoco_native.NativeActuators.telemetry`): into the
  ``(num_envs, num_joints)`` effort buffers of the collection (the batched tasks, a mix, the eager
  telemetry);
* **on demand** (:class:`RawSnapshots`): one env's raw rows (force, velocity, length, the three
  controls, the law's parameters) are copied in one gather into a
  :class:`~actuator_gym.runtime.lazy_telemetry.StepSnapshot` whose commanded-torque row is derived the first
  time anything reads it (:func:`derive_commanded`), for one snapshot or for a stack of them in one
  pass. The wrapper's hot path then runs no telemetry arithmetic at a control step.

The on-demand way applies where the controls the engine read at the last substep are the step's
own (no lag reaches back past the control step), and no PID integrator or motor physics is in play
(their state would have to be copied too); elsewhere the step computes it.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Sequence

import numpy as np

from ..runtime.lazy_telemetry import SnapshotLayout, StepSnapshot

__all__ = ["LAW_ROWS", "RAW_ROWS", "RawSnapshots", "drive_torque", "limit_acted", "screen_limits", "derive_commanded"]

LAW_ROWS = ("kp", "kd", "bias", "ki", "limit", "resistance", "vmax", "vscreen")
"""The rows of the law's parameters per world, ``(num_envs, len(LAW_ROWS), num_joints)``: gains,
the constant effort, the integral gain, the force limit [N·m or N], the motor's ``R = Vmax /
stall`` [rad/s per N·m] (0 without a motor), ``Vmax`` [rad/s] (inf without), and the voltage
screen ``Vmax (1 - 1e-9)``."""

RAW_ROWS = ("length", "u_pos", "u_vel", "u_ff", "kp", "kd", "bias", "limit", "resistance", "vmax", "vscreen")
"""The rows a raw snapshot carries after its head (commanded, applied = force, velocity) and extras."""


def screen_limits(force, vel, lim, r, vscreen, any_motor: bool, e=None, acted=None):
    """Where a limit can have acted: ``|force| >= lim`` (the force range clamps to its bound
    exactly) or, with a motor, ``|R force + v| >= Vmax (1 - 1e-9)`` (the voltage clip, screened
    with a margin; :func:`limit_acted` decides on the commanded torque)."""
    e = np.abs(force, out=e)
    acted = np.greater_equal(e, lim, out=acted)
    if any_motor:
        np.multiply(r, force, out=e)
        e += vel
        np.abs(e, out=e)
        acted |= e >= vscreen
    return acted


def drive_torque(u_pos, u_vel, u_ff, length, vel, kp, kd, bias, t=None, e=None):
    """``kp (u_pos - length) + kd (u_vel - vel) + u_ff + bias`` (into ``t``, ``e`` as scratch)."""
    t = np.subtract(u_pos, length, out=t)
    t *= kp
    e = np.subtract(u_vel, vel, out=e)
    e *= kd
    t += e
    t += u_ff
    t += bias
    return t


def limit_acted(force, t, vel, lim, r, vmax, any_motor: bool, acted=None):
    """Where a limit acted on the commanded torque ``t``: the force on its bound, or the motor's
    voltage ``R t + v`` beyond ``Vmax``."""
    acted = np.greater_equal(np.abs(force), lim, out=acted)
    if any_motor:
        acted |= np.abs(r * t + vel) > vmax
    return acted


def derive_commanded(b: np.ndarray, J: int, raw_at: int, any_motor: bool) -> None:
    """Fill the commanded-torque row ``b[:, :J]`` (it holds the force until then) of raw snapshot
    buffers ``b`` ``(m, width)`` from their raw rows (:data:`RAW_ROWS` from column ``raw_at``):
    the step's law as :meth:`~actuator_gym.backends.mujoco_native.NativeActuators.telemetry`
    computes it, per snapshot (one env's step: a row without a screened limit keeps the force)."""
    m = len(b)
    force, vel = b[:, J:2 * J], b[:, 2 * J:3 * J]
    raw = b[:, raw_at:raw_at + len(RAW_ROWS) * J].reshape(m, len(RAW_ROWS), J)
    length, up, uv, uf, kp, kd, bias, lim, r, vmax, vs = (raw[:, k] for k in range(len(RAW_ROWS)))
    rows = screen_limits(force, vel, lim, r, vs, any_motor).any(axis=1)
    if not rows.any():
        return
    t = drive_torque(up, uv, uf, length, vel, kp, kd, bias)
    acted = limit_acted(force, t, vel, lim, r, vmax, any_motor)
    acted &= rows[:, None]
    np.copyto(b[:, :J], t, where=acted)


class RawSnapshots:
    """One world's raw rows as :class:`~actuator_gym.runtime.lazy_telemetry.StepSnapshot` s (module doc).

    ``rows(env)`` gives the env's live 1-D views ``[force, velocity, length, ctrl (pos vel ff per
    joint), law (LAW_ROWS x joints)]`` in native-actuator order; ``native_pos[c]`` is the native
    position of collection column ``c`` (-1: not native)."""

    def __init__(self, rows: Any, native_pos: np.ndarray, any_motor: bool):
        self._rows, self._pos, self._any_motor = rows, native_pos, any_motor
        self._plan: tuple | None = None

    def snapshot(self, cols: tuple[int, Any], extra_keys: tuple[str, ...], extra: Sequence[tuple[np.ndarray, Any]],
                 substeps: int, physics_dt: float) -> StepSnapshot:
        """The step just run, env ``cols[0]``'s joints ``cols[1]`` (collection columns, all native),
        with ``extra`` ``(array, indices)`` appended under ``extra_keys``: one concatenation (the
        gather and the law run when the snapshot is read), planned once for the same ``cols``,
        ``extra`` and ``extra_keys`` objects and the same substeps."""
        p = self._plan
        if p is None or p[0] is not cols or p[1] is not extra or p[3].extra is not extra_keys or p[3].substeps != substeps:
            arrays, index, J, derive = self._make_plan(cols, extra)
            p = self._plan = (cols, extra, arrays, SnapshotLayout(J, substeps, True, physics_dt, extra_keys, index, derive))
        return StepSnapshot(np.concatenate(p[2]), p[3])

    def _make_plan(self, cols, extra) -> tuple:
        env, ids = cols
        ids = np.arange(len(self._pos))[ids]
        p = self._pos[ids]
        if (p < 0).any():  # pragma: no cover - the engine defers only when every group is native
            raise ValueError("raw native snapshot: a column is not native")
        base = self._rows(env)
        n = len(base[0])
        F, V, L, U, LAW = 0, n, 2 * n, 3 * n, 6 * n
        law = {k: LAW + i * n for i, k in enumerate(LAW_ROWS)}
        index = [F + p, F + p, V + p]  # computed (the force until derived), applied, velocity
        off = LAW + len(LAW_ROWS) * n
        arrays = list(base)
        for vec, at in extra:
            index.append(off + np.arange(len(vec))[at])
            arrays.append(vec)
            off += len(vec)
        index += [L + p, U + 3 * p, U + 3 * p + 1, U + 3 * p + 2]
        index += [law[k] + p for k in RAW_ROWS[4:]]
        J = len(ids)
        # one derive object per plan: snapshots that share it stack into one pass (StepSnapshot.layout)
        derive = partial(derive_commanded, J=J, raw_at=(3 + len(extra)) * J, any_motor=self._any_motor)
        return arrays, np.concatenate(index), J, derive
