"""The native delays' history prefill: what ``mj_initCtrlHistory`` writes, for many worlds at once.

MuJoCo keeps each delayed actuator's recent controls, timestamped, in ``data.history`` (part of the
physics state). Our ``Delay`` holds the first command since an env's reset for the first ``L``
substeps; natively that is a history filled with that command, timestamped at the substeps before
the world's time (``mj_initCtrlHistory``). Calling it per actuator and world at every reset costs
a Python call each; :class:`HistoryPrefill` finds once where it puts what and then writes every
reset world's blocks in a few array operations.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

__all__ = ["HistoryPrefill"]


class HistoryPrefill:
    """The history layout of the delayed native actuators ``delayed`` (actuator ids; the native
    actuators start at ``first``, three controls each: pos vel ff) of ``model``.

    Found by calling ``mj_initCtrlHistory`` on a scratch ``MjData`` at time 0: the constant slots of
    each delayed actuator's block (its values with zero controls), the timestamp slots (they move
    with the world's time) and the slot of each (sample, control) value."""

    def __init__(self, model: mujoco.MjModel, delayed: np.ndarray, first: int):
        m, dt = model, float(model.opt.timestep)
        d = mujoco.MjData(m)
        idx, base, tmask, vslot, vsrc = [], [], [], [], []
        for i in delayed:
            n, nc = int(m.actuator_history[i, 0]), int(m.actuator_ctrlnum[i])
            a = int(m.actuator_historyadr[i])
            blk = np.arange(a, a + 2 + n * (1 + nc))
            t = -dt * np.arange(n, 0, -1, dtype=np.float64).reshape(-1, 1)
            mujoco.mj_initCtrlHistory(m, d, int(i), t, np.zeros((n, nc)))
            zero = d.history[blk].copy()
            mujoco.mj_initCtrlHistory(m, d, int(i), t + 1.0, np.zeros((n, nc)))
            moved = d.history[blk] - zero
            marks = 1e6 + np.arange(n * nc, dtype=np.float64).reshape(n, nc)  # unlike any cursor or timestamp
            mujoco.mj_initCtrlHistory(m, d, int(i), t, marks)
            filled = d.history[blk]
            slots = [int(np.flatnonzero(filled == v)[0]) for v in marks.ravel()]
            idx.append(blk)
            base.append(np.where(np.isin(np.arange(len(blk)), slots), 0.0, zero))
            tmask.append(moved == 1.0)
            vslot.append(blk[slots])
            vsrc.append(np.tile(np.arange(nc), n) + 3 * (i - first))  # which of the env's (native joint, control)
        self._idx = np.concatenate(idx)
        self._base = np.concatenate(base)
        self._time = np.concatenate(tmask).astype(np.float64)
        self._vslot, self._vsrc = np.concatenate(vslot), np.concatenate(vsrc)

    def fill(self, worlds: Any, envs: np.ndarray, controls: np.ndarray) -> None:
        """Every delayed actuator's history of the worlds ``envs`` filled with the env's current
        command (``controls``: ``(num_envs, 3 x native actuators)``, the native ``ctrl`` block),
        timestamped at the substeps before the world's time. ``worlds.field`` gives the live
        ``history`` / ``time`` (a device backend's current mirrors)."""
        hist, times = worlds.field("history"), worlds.field("time")[envs]
        block = np.multiply.outer(times, self._time)  # the world's time on the timestamp slots
        block += self._base
        hist[envs[:, None], self._idx[None, :]] = block
        hist[envs[:, None], self._vslot[None, :]] = controls[envs][:, self._vsrc]
