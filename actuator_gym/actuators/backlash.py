"""``Backlash``: the play of a gear train between the motor side and the joint (see the class).

The model (docs/actuators.md, "Backlash, encoders and the bus"): a play of total width ``b`` [rad or
m] between a **massless** motor side and the joint, the drive's encoder on the motor side. For a
position-commanded joint at ``q`` with target ``q*``:

* ``|q* - q| < b/2`` (the target lies inside the play): the motor side sits at ``q*``, the drive
  reads it there (no error) and **no torque passes**: the group's computed and applied efforts of
  that joint are 0;
* otherwise the motor side rests on the flank, ``m = q + sign(q* - q) * b/2``; the drive reads ``m``
  as the position (its error is ``q* - m``) and the joint velocity as the motor-side velocity, and
  its effort passes to the joint.

So after a reversal the joint receives no torque until the target has travelled ``b`` back. With a
massless motor side and an encoder on the joint the controller would close the gap at once and the
play would have no effect; geared motors with motor-shaft encoders (most quadruped joint modules)
cannot see their play, which is what hurts policies. ``b = 0`` passes everything through unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .params import GAIN
from .part import Part

__all__ = ["Backlash"]


class Backlash(Part):
    """The play of width ``backlash`` [rad or m] (finite, >= 0; per joint, randomizable) between a
    massless motor side and the joint (module doc). Applied by
    :class:`~actuator_gym.actuators.Actuator` on the measured state before the drive
    (:meth:`apply`) and on the efforts after the clamps (:meth:`gate`); explicit effort mode only
    (no Stable-PD, no MuJoCo-native form, no Newton export)."""

    PARAMS = {"backlash": (0.0, GAIN)}
    GRAPH_SAFE = True  # in-place array math on buffers fixed at bind
    STATEFUL = False  # the motor side is massless: its position follows from q and q* every substep
    NATIVE_FORM = "none"

    def __init__(self, backlash: Any = 0.0):
        super().__init__(backlash=backlash)

    def _setup(self, ctx):
        self._half_t, self._half = self._buffer(ctx)  # b / 2
        self._m_t, self._m = self._buffer(ctx)  # the motor-side position the drive reads
        self._md_t, self._md = self._buffer(ctx)  # the motor-side velocity the drive reads
        self._free_t, self._free = self._buffer(ctx, dtype=torch.bool)  # |q* - q| < b/2: no torque
        self._numpy = ctx.ops.name == "numpy"

    def refresh(self):
        torch.mul(self.params["backlash"].values, 0.5, out=self._half_t)

    @property
    def free(self) -> Any:
        """``(num_envs, num_joints)`` bool of the last :meth:`apply`: the target lay inside the play
        (no torque passed). Read it, do not write it."""
        return self._free

    def apply(self, q, qd, tq, tqd) -> tuple[Any, Any]:
        """The motor-side position and velocity the drive reads, from the joint's ``q``, ``qd`` and
        the (delayed) targets ``tq``, ``tqd`` (the model's own buffers, overwritten next call)."""
        xp, m, md, free, half = self._ctx.ops.xp, self._m, self._md, self._free, self._half
        xp.subtract(tq, q, out=m)  # d = q* - q
        xp.abs(m, out=md)
        xp.less(md, half, out=free)  # inside the play
        xp.sign(m, out=m)
        xp.multiply(m, half, out=m)
        xp.add(q, m, out=m)  # on the flank: q + sign(d) b/2
        if self._numpy:
            np.copyto(m, tq, where=free)  # inside: the motor side sits at the target
            np.copyto(md, qd)
            np.copyto(md, tqd, where=free)
        else:
            torch.where(free, tq, m, out=m)
            torch.where(free, tqd, qd, out=md)
        return m, md

    def gate(self, computed, applied) -> None:
        """No torque passes where the target lay inside the play (the last :meth:`apply`)."""
        fill = self._ctx.ops.fill_where
        fill(computed, self._free, 0.0)
        fill(applied, self._free, 0.0)
