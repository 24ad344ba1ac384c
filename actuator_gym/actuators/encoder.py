"""``Encoder``: the drive reads a quantized position and the velocity servo firmware derives from it.

With ``encoder_resolution = counts`` [counts per revolution] the position the drive reads is
rounded to the nearest multiple of ``2 pi / counts`` (ties to even), and the velocity it reads is
the quantized position's difference over the physics substep, as servo firmware computes it::

    q_read[k]  = round(q[k] / step) * step,          step = 2 pi / counts
    qd_read[k] = (q_read[k] - q_read[k - 1]) / dt

The previous quantized position is per-env state, set at the first substep after a reset of that env
to the current quantized position (so the first velocity after a reset is 0). With backlash the
encoder reads the motor side (docs/actuators.md, "Backlash, encoders and the bus"). A slide joint
is read with the same step, ``2 pi / counts`` metres (``counts = round(2 pi / step_m)`` for a linear
encoder of step ``step_m``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from .._checks import check_int
from .part import Part

__all__ = ["Encoder", "MAX_ENCODER_COUNTS"]

MAX_ENCODER_COUNTS = 2**31
"""Largest ``encoder_resolution`` [counts per revolution] (31-bit encoders are past any servo's)."""


class Encoder(Part):
    """A position encoder of ``counts`` counts per revolution (an integer in ``[2, 2**31]``) read by
    the drive (module doc). Applied by :class:`~actuator_gym.actuators.Actuator` on the position the
    drive reads (after any backlash); needs ``dt``. Explicit effort mode only (no Stable-PD, no
    MuJoCo-native form, no Newton export)."""

    PARAMS: dict = {}
    GRAPH_SAFE = True  # in-place array math on buffers fixed at bind (dt is the engine's fixed substep)
    STATEFUL = True  # the previous quantized position
    NATIVE_FORM = "none"

    def __init__(self, counts: int, *, name: str = "encoder_resolution", owner: str = "Encoder"):
        self.counts = check_int(counts, name, owner, low=2, high=MAX_ENCODER_COUNTS)
        super().__init__()
        self.step = 2.0 * math.pi / self.counts
        """The quantization step [rad] (slide joints: m)."""

    def _setup(self, ctx):
        self._q_t, self._q = self._buffer(ctx)  # the quantized position the drive reads
        self._v_t, self._v = self._buffer(ctx)  # the velocity the drive reads
        self._prev_t, self._prev = self._buffer(ctx)  # the previous quantized position
        self._fresh_t, self._fresh = self._buffer(ctx, dtype=torch.bool, shape=(ctx.num_envs, 1))
        self._fresh_t.fill_(True)  # nothing read yet: the first velocity is 0
        self._numpy = ctx.ops.name == "numpy"
        self._inv = self.counts / (2.0 * math.pi)

    def reset(self, env_ids):
        if env_ids is None:
            self._fresh_t.fill_(True)
        else:
            self._fresh_t[env_ids] = True

    def apply(self, q, dt) -> tuple[Any, Any]:
        """The quantized position and the firmware velocity the drive reads, from the position
        ``q`` the encoder sees (the model's own buffers, overwritten next call)."""
        xp, qq, v, prev, fresh = self._ctx.ops.xp, self._q, self._v, self._prev, self._fresh
        xp.multiply(q, self._inv, out=qq)
        if self._numpy:
            np.rint(qq, out=qq)
            qq *= self.step
            np.copyto(prev, qq, where=fresh)  # the first substep after a reset: no difference yet
        else:
            torch.round(qq, out=qq)
            qq.mul_(self.step)
            torch.where(fresh, qq, prev, out=prev)
        xp.subtract(qq, prev, out=v)
        xp.divide(v, dt, out=v)
        prev[...] = qq
        fresh[...] = False
        return qq, v

    def __repr__(self) -> str:
        return f"Encoder(counts={self.counts})"
