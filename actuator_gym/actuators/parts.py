"""The swappable parts of an actuator recipe: ``Delay -> Drive -> Clamping[0] -> Clamping[1] ...``.

A part is built from plain parameter values (see :mod:`.params` for what a value may be) and knows
nothing about envs until an :class:`~actuator_gym.actuators.Actuator` binds a private copy of it to
a batch ``(num_envs, num_joints)``. Parts never loop over elements in Python; their math is written
once against the array namespace of :mod:`actuator_gym._array` (numpy on CPU, torch elsewhere).

Every shape below is ``(num_envs, num_joints)`` unless said otherwise.
"""

from __future__ import annotations

import copy
import math
from typing import Any, ClassVar, Sequence

import numpy as np
import torch

from .params import ANY, NONNEG, NONNEG_INT, POSITIVE, BindContext, Domain, Param

__all__ = [
    "Part",
    "Delay",
    "Drive",
    "DrivePD",
    "DrivePID",
    "Clamping",
    "ClampingMaxEffort",
    "ClampingDCMotor",
    "ClampingPositionBased",
]


class Part:
    """Base of all parts. Subclasses declare ``PARAMS = {name: (default, Domain)}``."""

    PARAMS: ClassVar[dict[str, tuple[float, Domain]]] = {}

    def __init__(self, **raw: Any):
        self._raw = raw
        self._bound = False
        self.params: dict[str, Param] = {}

    # -- binding ----------------------------------------------------------------------------
    def bind(self, ctx: BindContext, randomization: dict | None = None) -> "Part":
        """A copy of this part sized and seeded for ``ctx`` (the original stays reusable)."""
        part = copy.copy(self)
        part.params = {}
        part._ctx = ctx
        randomization = dict(randomization or {})
        for name, (default, domain) in self.PARAMS.items():
            part.params[name] = Param(
                name,
                self._raw.get(name),
                ctx,
                default=default,
                domain=domain,
                randomization=randomization.pop(name, None),
            )
        if randomization:
            raise ValueError(
                f"{ctx.owner}: randomization names unknown parameter(s) {sorted(randomization)} of "
                f"{type(self).__name__}; its parameters are {sorted(self.PARAMS)}"
            )
        part._bound = True
        part._setup(ctx)
        part.refresh()
        return part

    def validate(self, owner: str = "") -> None:
        """Check every parameter value against its domain without binding to a batch (configs call
        this at load time). Raises ``ValueError`` naming the parameter and the allowed range."""
        from .._array import NUMPY_OPS

        def check(name, raw, default, domain):
            shape = (1, 1)
            if isinstance(raw, (list, tuple, np.ndarray, torch.Tensor)):
                arr = np.asarray(raw.cpu() if isinstance(raw, torch.Tensor) else raw, dtype=object)
                shape = arr.shape if arr.ndim == 2 else (1, max(1, arr.size))
            ctx = BindContext(shape[0], shape[1], None, torch.device("cpu"), torch.float64, NUMPY_OPS,
                              torch.Generator(), owner or type(self).__name__)
            Param(name, raw, ctx, default=default, domain=domain)

        for name, (default, domain) in self.PARAMS.items():
            raw = self._raw.get(name)
            if isinstance(raw, dict):
                for v in raw.values():
                    check(name, v, default, domain)
            else:
                check(name, raw, default, domain)

    def _setup(self, ctx: BindContext) -> None:
        """Allocate state and scratch buffers (called once at bind)."""

    def refresh(self) -> None:
        """Recompute values derived from parameters (after they were re-sampled)."""

    def reset(self, env_ids: torch.Tensor | None) -> None:
        """Clear the internal state of ``env_ids`` (None = all)."""

    def a(self, name: str):
        """The values in force of a parameter, as an array of the model's array library."""
        return self.params[name].array

    def _buffer(self, ctx: BindContext, dtype=None, shape=None):
        t = torch.zeros(shape or (ctx.num_envs, ctx.num_joints), dtype=dtype or ctx.dtype, device=ctx.device)
        return t, ctx.ops.view(t)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._raw.items() if v is not None)
        return f"{type(self).__name__}({args})"


# ---------------------------------------------------------------------------------------------
# Delay
# ---------------------------------------------------------------------------------------------
class Delay(Part):
    """Transport latency on the commands (q*, qd*, tau_ff), counted in physics substeps.

    Either ``Delay(min_delay=, max_delay=, per_joint=False)``: each env draws an integer lag
    ``L`` uniformly in ``[min_delay, max_delay]`` at construction and at every reset of that env
    (shared by its joints unless ``per_joint=True``); or ``Delay(delay_steps=, max_delay=)`` with
    fixed lags (an int, a ``(num_joints,)`` sequence, an int tensor ``(num_envs, num_joints)``, or
    an integer distribution).

    At the k-th substep since an env's last reset (k = 0 first) the delayed command is
    ``x[max(0, k - L)]``: with a history shorter than the lag the oldest command since the reset is
    used, never zeros and never data from before the reset. ``L = 0`` passes commands through.
    The history holds ``max_delay + 1`` frames.
    """

    PARAMS = {"delay_steps": (0.0, NONNEG_INT)}

    def __init__(
        self,
        min_delay: int | None = None,
        max_delay: int | None = None,
        *,
        delay_steps: Any = None,
        per_joint: bool = False,
    ):
        from ..randomization import Distribution, IntUniform

        def _int(name, v):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise ValueError(f"Delay: {name} must be a non-negative integer, got {v!r}")
            if v < 0:
                raise ValueError(f"Delay: {name} must be >= 0, got {v}")
            return int(v)

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
            if max_delay is None:
                if isinstance(delay_steps, (int, np.integer)) and not isinstance(delay_steps, bool):
                    max_delay = int(delay_steps)
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
            arr = np.asarray(delay_steps.cpu() if isinstance(delay_steps, torch.Tensor) else delay_steps)
            if arr.size and (arr.max() > max_delay or arr.min() < 0):
                raise ValueError(
                    f"Delay: delay_steps must lie in [0, max_delay={max_delay}], got values in "
                    f"[{arr.min()}, {arr.max()}]"
                )

    def bind(self, ctx, randomization=None):
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
        self.graph_safe = ctx.ops.name == "torch"

    def refresh(self):
        self._gather = [None] * self.history_len  # lags may have been re-drawn

    def reset(self, env_ids):
        if env_ids is None:
            self._count_t.zero_()
        else:
            self._count_t[env_ids] = 0
        self._steps_since_reset = 0
        self._gather = [None] * self.history_len

    def apply(self, tq, tqd, tff):
        """Record this substep's commands and return the delayed ``(q*, qd*, tau_ff)``."""
        if self.graph_safe:
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


# ---------------------------------------------------------------------------------------------
# Drives
# ---------------------------------------------------------------------------------------------
class Drive(Part):
    """A drive turns (delayed) commands and the measured state into a raw effort."""

    def compute(self, q, qd, tq, tqd, tff, dt, out) -> None:  # pragma: no cover - interface
        raise NotImplementedError


class DrivePD(Drive):
    """``computed = kp * (q* - q) + kd * (qd* - qd) + tau_ff + const_effort``.

    kp [N·m/rad or N/m], kd [N·m·s/rad or N·s/m], const_effort [N·m or N] (a per-joint bias such as
    gravity compensation). Gains default to 0.
    """

    PARAMS = {"kp": (0.0, NONNEG), "kd": (0.0, NONNEG), "const_effort": (0.0, ANY)}

    def __init__(self, kp: Any = 0.0, kd: Any = 0.0, const_effort: Any = 0.0):
        super().__init__(kp=kp, kd=kd, const_effort=const_effort)

    def _setup(self, ctx):
        self._tmp_t, self._tmp = self._buffer(ctx)
        # parameter arrays are written in place at resample, so the references stay valid
        self._kp, self._kd, self._const = (self.params[k].array for k in ("kp", "kd", "const_effort"))
        c = self.params["const_effort"]
        self._has_const = c.randomized or bool((c.nominal != 0).any())

    def compute(self, q, qd, tq, tqd, tff, dt, out):
        xp, tmp = self._ctx.ops.xp, self._tmp
        xp.subtract(tq, q, out=out)
        xp.multiply(self._kp, out, out=out)
        xp.subtract(tqd, qd, out=tmp)
        xp.multiply(self._kd, tmp, out=tmp)
        xp.add(out, tmp, out=out)
        xp.add(out, tff, out=out)
        if self._has_const:
            xp.add(out, self._const, out=out)


class DrivePID(DrivePD):
    """PD plus ``ki * integral``; each substep first
    ``integral = clip(integral + (q* - q) * dt, -integral_max, integral_max)``, then the effort uses
    the new integral. ki [N·m/(rad·s)], integral_max [rad·s] (default +inf, no anti-windup).
    The integral is per env and joint and zeroed at reset. ``dt`` [s] is required.
    """

    PARAMS = {**DrivePD.PARAMS, "ki": (0.0, NONNEG), "integral_max": (math.inf, NONNEG)}

    def __init__(self, kp: Any = 0.0, ki: Any = 0.0, kd: Any = 0.0, integral_max: Any = math.inf, const_effort: Any = 0.0):
        Part.__init__(self, kp=kp, ki=ki, kd=kd, integral_max=integral_max, const_effort=const_effort)

    def _setup(self, ctx):
        super()._setup(ctx)
        self.integral_t, self._integral = self._buffer(ctx)
        self._neg_imax_t, self._neg_imax = self._buffer(ctx)

    def refresh(self):
        torch.neg(self.params["integral_max"].values, out=self._neg_imax_t)

    def reset(self, env_ids):
        if env_ids is None:
            self.integral_t.zero_()
        else:
            self.integral_t[env_ids] = 0.0

    def compute(self, q, qd, tq, tqd, tff, dt, out):
        if dt is None:
            raise ValueError(f"{self._ctx.owner}: DrivePID needs dt= (the substep in s)")
        xp, tmp, integ = self._ctx.ops.xp, self._tmp, self._integral
        super().compute(q, qd, tq, tqd, tff, dt, out)
        xp.subtract(tq, q, out=tmp)
        xp.multiply(tmp, float(dt), out=tmp)
        xp.add(integ, tmp, out=integ)
        Clamping._clamp(xp, integ, self._neg_imax, self.params["integral_max"].array, integ)
        xp.multiply(self.params["ki"].array, integ, out=tmp)
        xp.add(out, tmp, out=out)


# ---------------------------------------------------------------------------------------------
# Clamps
# ---------------------------------------------------------------------------------------------
class Clamping(Part):
    """A clamp bounds the effort coming from the previous stage; clamps apply in list order."""

    def apply(self, effort, q, qd, out) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    @staticmethod
    def _clamp(xp, x, lo, hi, out):
        # min(max(lo, x), hi), the reference implementations' clamp (also when lo > hi)
        xp.maximum(x, lo, out=out)
        xp.minimum(out, hi, out=out)


class ClampingMaxEffort(Clamping):
    """``clip(effort, -max_effort, +max_effort)``; max_effort [N·m or N], default +inf."""

    PARAMS = {"max_effort": (math.inf, NONNEG)}

    def __init__(self, max_effort: Any = math.inf):
        super().__init__(max_effort=max_effort)

    def _setup(self, ctx):
        self._neg_t, self._neg = self._buffer(ctx)
        self._max = self.params["max_effort"].array

    def refresh(self):
        torch.neg(self.params["max_effort"].values, out=self._neg_t)

    def apply(self, effort, q, qd, out):
        self._clamp(self._ctx.ops.xp, effort, self._neg, self._max, out)


class ClampingDCMotor(Clamping):
    """Four-quadrant linear torque-speed curve of a DC motor.

    saturation_effort [N·m] (stall torque, >= 0), velocity_limit [rad/s] (no-load speed, > 0),
    effort_limit [N·m] (continuous torque, > 0, may be inf). With ``v_c = velocity_limit *
    (1 + effort_limit / saturation_effort)`` and ``v = clip(qd, -v_c, v_c)``::

        tau_max = min(saturation_effort * (1 - v / velocity_limit),  effort_limit)
        tau_min = max(saturation_effort * (-1 - v / velocity_limit), -effort_limit)
        applied = clip(effort, tau_min, tau_max)

    A zero saturation_effort is a dead motor (``v_c = velocity_limit``, output 0).
    """

    PARAMS = {
        "saturation_effort": (math.nan, NONNEG),
        "velocity_limit": (math.nan, POSITIVE),
        "effort_limit": (math.inf, POSITIVE),
    }

    def __init__(self, saturation_effort: Any, velocity_limit: Any, effort_limit: Any = math.inf):
        if saturation_effort is None or velocity_limit is None:
            raise ValueError("ClampingDCMotor: saturation_effort and velocity_limit are required")
        super().__init__(saturation_effort=saturation_effort, velocity_limit=velocity_limit, effort_limit=effort_limit)

    def bind(self, ctx, randomization=None):
        part = super().bind(ctx, randomization)
        sat, vel = part.params["saturation_effort"], part.params["velocity_limit"]
        bad = torch.isinf(sat.nominal) & torch.isfinite(vel.nominal)
        if bad.any() or any(math.isinf(d.value_range(0, 0)[1]) for _, d in sat.randomizers):
            raise ValueError(
                f"{ctx.owner}: parameter 'saturation_effort' is inf with a finite velocity_limit; "
                "allowed: finite values >= 0"
            )
        return part

    def _setup(self, ctx):
        names = ("vc", "neg_vc", "slope", "neg_sat", "neg_el", "t1", "t2")
        for n in names:
            t, a = self._buffer(ctx)
            setattr(self, "_" + n + "_t", t)
            setattr(self, "_" + n, a)
        self._sat, self._el = self.params["saturation_effort"].array, self.params["effort_limit"].array

    def refresh(self):
        sat = self.params["saturation_effort"].values
        vel = self.params["velocity_limit"].values
        el = self.params["effort_limit"].values
        alive = sat > 0
        safe_sat = torch.where(alive, sat, torch.ones_like(sat))
        vc = torch.where(alive, vel * (1.0 + el / safe_sat), vel)
        self._vc_t.copy_(vc)
        torch.neg(vc, out=self._neg_vc_t)
        torch.div(sat, vel, out=self._slope_t)
        torch.neg(sat, out=self._neg_sat_t)
        torch.neg(el, out=self._neg_el_t)

    def apply(self, effort, q, qd, out):
        xp, t1, t2 = self._ctx.ops.xp, self._t1, self._t2
        self._clamp(xp, qd, self._neg_vc, self._vc, t1)  # v
        xp.multiply(self._slope, t1, out=t1)  # sat * v / vel
        xp.subtract(self._sat, t1, out=t2)
        xp.minimum(t2, self._el, out=t2)  # tau_max
        xp.subtract(self._neg_sat, t1, out=t1)
        xp.maximum(t1, self._neg_el, out=t1)  # tau_min
        self._clamp(xp, effort, t1, t2, out)


class ClampingPositionBased(Clamping):
    """Angle-dependent limit for linkage-driven joints: ``limit = interp(q)``.

    ``lookup_positions`` [rad or m] non-decreasing, ``lookup_efforts`` [N·m or N] >= 0, equal
    lengths >= 1; one table shared by the group's joints. Piecewise linear in the measured q,
    holding the end values outside the table, left-continuous at a duplicated breakpoint, no
    angle wrapping. ``applied = clip(effort, -limit, +limit)``.
    """

    def __init__(self, lookup_positions: Sequence[float], lookup_efforts: Sequence[float]):
        xs = np.asarray(lookup_positions, dtype=np.float64).reshape(-1)
        ys = np.asarray(lookup_efforts, dtype=np.float64).reshape(-1)
        if xs.size < 1 or xs.size != ys.size:
            raise ValueError(
                f"ClampingPositionBased: lookup_positions and lookup_efforts need equal lengths >= 1, "
                f"got {xs.size} and {ys.size}"
            )
        if not (np.isfinite(xs).all() and np.isfinite(ys).all()):
            raise ValueError("ClampingPositionBased: lookup tables must be finite")
        if np.any(np.diff(xs) < 0):
            i = int(np.argmax(np.diff(xs) < 0))
            raise ValueError(
                f"ClampingPositionBased: lookup_positions must be non-decreasing; entry {i + 1} "
                f"({xs[i + 1]}) < entry {i} ({xs[i]})"
            )
        if np.any(ys < 0):
            raise ValueError(f"ClampingPositionBased: lookup_efforts must be >= 0, got min {ys.min()}")
        super().__init__()
        self.lookup_positions, self.lookup_efforts = xs, ys

    def _setup(self, ctx):
        xs, ys = self.lookup_positions, self.lookup_efforts
        k = xs.size
        width = np.diff(xs)
        slope = np.zeros(k)
        slope[1:] = np.divide(np.diff(ys), width, out=np.zeros(k - 1), where=width > 0)
        x_left = np.concatenate([xs[:1], xs[:-1]])
        y_left = np.concatenate([ys[:1], ys[:-1]])

        def arr(x):
            return ctx.ops.view(torch.as_tensor(x, dtype=ctx.dtype, device=ctx.device).contiguous())

        self._xs, self._slope, self._x_left, self._y_left = arr(xs), arr(slope), arr(x_left), arr(y_left)
        self._x0, self._xk, self._yk, self._k = float(xs[0]), float(xs[-1]), float(ys[-1]), k
        self._lim_t, self._lim = self._buffer(ctx)
        self._neg_t, self._neg = self._buffer(ctx)

    def limit(self, q):
        """The effort limit at measured positions ``q`` (written into a scratch buffer)."""
        xp, lim = self._ctx.ops.xp, self._lim
        if self._k == 1:
            lim[...] = self._yk
            return lim
        qc = xp.clip(q, self._x0, self._xk)
        idx = self._ctx.ops.searchsorted(self._xs, qc)
        idx = xp.clip(idx, 1, self._k - 1)
        xp.subtract(qc, self._x_left[idx], out=lim)
        xp.multiply(lim, self._slope[idx], out=lim)
        xp.add(lim, self._y_left[idx], out=lim)
        self._ctx.ops.fill_where(lim, q > self._xk, self._yk)
        return lim

    def apply(self, effort, q, qd, out):
        xp = self._ctx.ops.xp
        lim = self.limit(q)
        xp.negative(lim, out=self._neg)
        self._clamp(xp, effort, self._neg, lim, out)
