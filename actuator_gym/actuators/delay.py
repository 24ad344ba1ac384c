"""``Delay``: transport latency on the commands, counted in physics substeps (see the class)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .._checks import check_bool, check_int, real_array
from ..randomization.distributions import Distribution, IntUniform
from .params import NONNEG_INT
from .part import Part

__all__ = ["Delay", "MAX_DELAY", "MAX_DELAY_HISTORY"]

# ---------------------------------------------------------------------------------------------
# Delay
# ---------------------------------------------------------------------------------------------
MAX_DELAY = 2**20
"""Largest ``max_delay`` [substeps] a Delay accepts."""
MAX_DELAY_HISTORY = 2**27
"""Largest delay history (``3 * (max_delay + 1) * num_envs * num_joints`` values) a Delay allocates."""


class Delay(Part):
    """Transport latency on the commands (q*, qd*, tau_ff), counted in physics substeps.

    Either ``Delay(min_delay=, max_delay=, per_joint=False)``: each env draws an integer lag
    ``L`` uniformly in ``[min_delay, max_delay]`` at construction and at every reset of that env
    (shared by its joints unless ``per_joint=True``); or ``Delay(delay_steps=, max_delay=)`` with
    fixed lags (an int, a ``(num_joints,)`` sequence, an int tensor ``(num_envs, num_joints)``, or
    an integer distribution: ``IntUniform`` / ``IntGaussian``; a float one such as ``Uniform`` is a
    ``ValueError``, as its draws would be rounded).

    At the k-th substep since an env's last reset (k = 0 first) the delayed command is
    ``x[max(0, k - L)]``: with a history shorter than the lag the oldest command since the reset is
    used, never zeros and never data from before the reset. ``L = 0`` passes commands through.
    The history holds ``max_delay + 1`` frames.

    ``min_delay`` / ``max_delay`` are integers (not bools) in ``[0, 2**20]`` with ``min_delay <=
    max_delay``; ``per_joint`` is True or False; the history (``3 * (max_delay + 1) * num_envs *
    num_joints`` values) may hold at most ``2**27`` values.
    """

    PARAMS = {"delay_steps": (0.0, NONNEG_INT)}
    GRAPH_SAFE = True  # on the torch path only: see graph_safe
    STATEFUL = True  # the command history and the substeps counted since each env's reset
    _device_indexed = False  # set at bind: the torch path keeps every index on the device
    NATIVE_FORM = "delay"

    def to_mujoco(self, compiler: Any) -> Any:
        """MuJoCo's control history: ``nsample = max_delay``, ``delay = (L - 0.5) * timestep`` per
        joint (the half step keeps the zero-order hold on substep ``k - L`` however ``data.time``
        rounds), filled with the first command after every reset."""
        return compiler.form("delay", self, fixed={"max_delay": int(self.max_delay)}, lag="delay_steps")

    def __init__(
        self,
        min_delay: int | None = None,
        max_delay: int | None = None,
        *,
        delay_steps: Any = None,
        per_joint: bool = False,
    ):
        def _int(name, v):
            return check_int(v, name, "Delay", low=0, high=MAX_DELAY)

        per_joint = check_bool(per_joint, "per_joint", "Delay")
        if delay_steps is None:
            if max_delay is None:
                raise ValueError("Delay: give min_delay= and max_delay=, or delay_steps= (and max_delay=)")
            max_delay = _int("max_delay", max_delay)
            min_delay = _int("min_delay", 0 if min_delay is None else min_delay)
            if min_delay > max_delay:
                raise ValueError(f"Delay: min_delay ({min_delay}) must be <= max_delay ({max_delay})")
            delay_steps = IntUniform(min_delay, max_delay, per_joint=per_joint)
        else:
            if min_delay is not None:
                raise ValueError("Delay: give either min_delay/max_delay or delay_steps, not both")
            if isinstance(delay_steps, (bool, float, np.floating, np.bool_, str, complex)):
                raise TypeError(f"Delay: delay_steps must be an integer, a sequence, a tensor or a distribution, got {delay_steps!r}")
            if max_delay is None:
                if isinstance(delay_steps, (int, np.integer)) and not isinstance(delay_steps, bool):
                    max_delay = _int("delay_steps", delay_steps)
                elif isinstance(delay_steps, Distribution):
                    max_delay = int(delay_steps.value_range(0, 0)[1])
                else:
                    raise ValueError("Delay: delay_steps given as an array needs max_delay=")
            max_delay = _int("max_delay", max_delay)
        super().__init__(delay_steps=delay_steps)
        self.max_delay = max_delay
        self.min_delay = min_delay
        # fixed arrays are checked here, before any state exists
        if isinstance(delay_steps, (torch.Tensor, np.ndarray, list, tuple)):
            arr = real_array(delay_steps, "delay_steps", "Delay")
            if arr.size and not (np.isfinite(arr).all() and arr.max() <= max_delay and arr.min() >= 0):
                raise ValueError(
                    f"Delay: delay_steps must lie in [0, max_delay={max_delay}], got values in "
                    f"[{arr.min()}, {arr.max()}]"
                )
        self.validate("Delay")  # integers (and integer distributions) >= 0, before any state exists

    def bind(self, ctx, randomization=None):
        size = 3 * (self.max_delay + 1) * ctx.num_envs * ctx.num_joints
        if size > MAX_DELAY_HISTORY:
            raise ValueError(
                f"{ctx.owner}: Delay max_delay={self.max_delay} needs a history of 3 x {self.max_delay + 1} x "
                f"{ctx.num_envs} x {ctx.num_joints} = {size} values, more than the {MAX_DELAY_HISTORY} (2**27) "
                "allowed; a lag is counted in physics substeps"
            )
        part = super().bind(ctx, randomization)
        steps = part.params["delay_steps"]
        if steps.values.numel() and int(steps.values.max()) > self.max_delay:
            raise ValueError(
                f"{ctx.owner}: parameter 'delay_steps' can exceed max_delay={self.max_delay} "
                f"(largest {int(steps.values.max())}); allowed: integers in [0, {self.max_delay}]"
            )
        for _, dist in steps.randomizers:
            lo, hi = dist.value_range(steps.nominal.min().item(), steps.nominal.max().item())
            if hi > self.max_delay:
                raise ValueError(
                    f"{ctx.owner}: parameter 'delay_steps' {type(dist).__name__} can give {hi} > "
                    f"max_delay={self.max_delay}; allowed: integers in [0, {self.max_delay}]"
                )
        return part

    def _setup(self, ctx):
        n, j, h = ctx.num_envs, ctx.num_joints, self.max_delay + 1
        self.history_len = h
        self._nj = n * j
        # history (channel, slot, env, joint); read with one flat gather per channel
        self._hist_t = torch.zeros((3, h, n, j), dtype=ctx.dtype, device=ctx.device)
        self._hist = ctx.ops.view(self._hist_t)
        self._flat = ctx.ops.view(self._hist_t.reshape(-1))
        self._out_t = torch.zeros((3, n, j), dtype=ctx.dtype, device=ctx.device)
        self._out = ctx.ops.view(self._out_t)
        self._count_t = torch.zeros((n, 1), dtype=torch.int64, device=ctx.device)
        self._count = ctx.ops.view(self._count_t)
        self._max_t = torch.full((1, 1), self.max_delay, dtype=torch.int64, device=ctx.device)
        self._max = ctx.ops.view(self._max_t)
        self._steps_since_reset = 0  # substeps since the most recent reset of any env
        self._write = 0
        self._gather = [None] * h  # saturated regime: gather index per write slot (lags fixed until reset)
        self._base = ctx.ops.view(torch.arange(n * j, device=ctx.device).reshape(n, j))
        self._chan = ctx.ops.view(torch.arange(3, device=ctx.device).reshape(3, 1, 1) * (h * n * j))
        self._offs_t = torch.zeros((n, j), dtype=torch.int64, device=ctx.device)
        self._offs = ctx.ops.view(self._offs_t)
        self._offs3_t = torch.zeros((3, n, j), dtype=torch.int64, device=ctx.device)
        self._offs3 = ctx.ops.view(self._offs3_t)
        # torch path: the write index lives on the device, so a captured CUDA graph can replay
        # the delay (no Python-side state changes between substeps)
        self._write_t = torch.zeros((1,), dtype=torch.int64, device=ctx.device)
        self._device_indexed = ctx.ops.name == "torch"

    @property
    def graph_safe(self) -> bool:
        """True on the torch path (every non-CPU device, or ``array_backend="torch"``): the write
        index and the warm-up counters live in device tensors. The numpy path keeps its write index
        in Python, so a captured graph would replay a stale one."""
        return self.GRAPH_SAFE and self._device_indexed

    @property
    def graph_unsafe_reason(self) -> str:
        if self.GRAPH_SAFE and not self._device_indexed:
            return "Delay on the numpy path keeps its write index in Python"
        return super().graph_unsafe_reason

    def to_newton(self, exporter: Any) -> Any:
        """``newton.actuators.Delay`` with the per-env lags in force [substeps], or None when
        ``max_delay`` is 0 (nothing to delay). Newton falls back to the current target before a
        lag's history fills, ours to the oldest target since the reset."""
        if self.max_delay < 1:
            return None
        return exporter.newton_actuators.Delay(delay_steps=exporter.ints(self, "delay_steps"), max_delay=int(self.max_delay))

    def refresh(self):
        self._gather = [None] * self.history_len  # lags may have been re-drawn

    def runtime_bounds(self, name):
        return (0.0, float(self.max_delay))  # the history holds max_delay + 1 substeps

    def reset(self, env_ids):
        if env_ids is None:
            self._count_t.zero_()
        else:
            self._count_t[env_ids] = 0
        self._steps_since_reset = 0
        self._gather = [None] * self.history_len

    def apply(self, tq, tqd, tff):
        """Record this substep's commands and return the delayed ``(q*, qd*, tau_ff)``."""
        if self._device_indexed:
            return self._apply_tensor(tq, tqd, tff)
        ops = self._ctx.ops
        xp = ops.xp
        hist, w, offs = self._hist, self._write, self._offs
        hist[0, w] = tq
        hist[1, w] = tqd
        hist[2, w] = tff
        # slot of x[max(0, k - L)]: (w - min(L, k)) mod H; flat offset channel + slot * N*J + element
        saturated = self._steps_since_reset > self.max_delay  # then k >= max_delay >= L everywhere
        index = self._gather[w] if saturated else None
        if index is None:
            if saturated:
                xp.negative(self.params["delay_steps"].array, out=offs)
            else:
                xp.minimum(self.params["delay_steps"].array, self._count, out=offs)
                xp.negative(offs, out=offs)
            offs += w
            offs %= self.history_len
            offs *= self._nj
            offs += self._base
            index = xp.add(offs, self._chan, out=self._offs3)
            if saturated:  # depends only on w and the lags from now until the next reset
                self._gather[w] = index = ops.copy(index)
        out = self._out
        ops.take_flat(self._flat, index, out)
        self._write = (w + 1) % self.history_len
        if not saturated:
            self._count += 1
            xp.minimum(self._count, self._max, out=self._count)
            self._steps_since_reset += 1
        return out[0], out[1], out[2]


    def _apply_tensor(self, tq, tqd, tff):
        """The same law with every index on the device (torch path): in-place tensor ops only, no
        host synchronisation, no Python state -- safe to capture in a CUDA graph."""
        w, offs, h = self._write_t, self._offs_t, self.history_len
        self._hist_t.index_copy_(1, w, torch.stack((tq, tqd, tff)).unsqueeze(1))
        torch.minimum(self.params["delay_steps"].values, self._count_t, out=offs)
        offs.neg_().add_(w).remainder_(h).mul_(self._nj).add_(self._base)
        torch.add(offs, self._chan, out=self._offs3_t)
        self._out_t.copy_(self._hist_t.reshape(-1).take(self._offs3_t))
        w.add_(1).remainder_(h)
        self._count_t.add_(1).clamp_(max=self.max_delay)
        return self._out_t[0], self._out_t[1], self._out_t[2]
