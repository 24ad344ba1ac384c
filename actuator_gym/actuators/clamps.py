"""Clamps: the parts of a recipe that bound the effort coming from the previous stage, applied in
list order (``ClampingMaxEffort``, ``ClampingDCMotor``, ``ClampingPositionBased``).

Parts never loop over elements in Python; their math is written once against the array
namespace of :mod:`actuator_gym._array` (numpy on CPU, torch elsewhere). Every shape below is
``(num_envs, num_joints)``; efforts are N·m (hinges) or N (slides).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import torch

from .._array import np_clip
from .._checks import real_array
from .params import GAIN, NONNEG, POSITIVE, BindContext
from .part import Part

__all__ = ["Clamping", "ClampingMaxEffort", "ClampingDCMotor", "ClampingPositionBased", "clamp_between", "clip_for", "CLIP_UFUNC_MAX"]


CLIP_UFUNC_MAX = 512
"""Up to this many elements numpy's clip ufunc runs a clamp in one call (~0.25 us at 12 elements
against ~0.6 us for ``maximum`` then ``minimum``); above it the two SIMD calls are faster (the ufunc
is not vectorized: ~30 us against ~6 us at 49,152 elements)."""


def _two_calls(xp: Any):
    def clip(x: Any, lo: Any, hi: Any, out: Any) -> None:
        xp.maximum(x, lo, out=out)
        xp.minimum(out, hi, out=out)

    return clip


_NP_TWO_CALLS, _TORCH_TWO_CALLS = _two_calls(np), _two_calls(torch)


def clip_for(xp: Any, size: int) -> Any:
    """The clamp ``clip(x, lo, hi, out)`` (``out`` positional or keyword) of the array library ``xp``
    for outputs of ``size`` elements: ``out = min(max(lo, x), hi)`` (the reference implementations'
    clamp, also when ``lo > hi``; NaN in any operand gives NaN). numpy up to :data:`CLIP_UFUNC_MAX`
    elements: its clip ufunc in one call (:data:`~actuator_gym._array.np_clip`); otherwise
    ``maximum`` then ``minimum``. Parts look it up once at bind, for the hot path."""
    if xp is np:
        return np_clip if size <= CLIP_UFUNC_MAX else _NP_TWO_CALLS
    return _TORCH_TWO_CALLS


def clamp_between(xp: Any, x: Any, lo: Any, hi: Any, out: Any) -> None:
    """``out = min(max(lo, x), hi)`` in the array library ``xp`` (:func:`clip_for`); arrays of one
    shape or broadcastable to ``out``."""
    clip_for(xp, out.size if xp is np else 0)(x, lo, hi, out)


class Clamping(Part):
    """A clamp bounds the effort coming from the previous stage; clamps apply in list order."""

    def apply(self, effort, q, qd, out) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    _clamp = staticmethod(clamp_between)  # the shared clamp, for subclasses


class ClampingMaxEffort(Clamping):
    """``clip(effort, -max_effort, +max_effort)``; max_effort [N·m or N] >= 0 or +inf (the default:
    no limit)."""

    PARAMS = {"max_effort": (math.inf, NONNEG)}
    GRAPH_SAFE = True
    STATEFUL = False
    NATIVE_FORM = "forcerange"

    def to_mujoco(self, compiler: Any) -> Any:
        """The actuator's ``forcerange = ±max_effort`` (``forcelimited`` off where it is +inf)."""
        return compiler.form("forcerange", self, limit="max_effort")

    def __init__(self, max_effort: Any = math.inf):
        super().__init__(max_effort=max_effort)

    def to_newton(self, exporter: Any) -> Any:
        """``newton.actuators.ClampingMaxEffort`` with the per-env limits in force [N·m or N]."""
        return exporter.newton_actuators.ClampingMaxEffort(max_effort=exporter.floats(self, "max_effort"))

    def _setup(self, ctx):
        self._neg_t, self._neg = self._buffer(ctx)
        self._max = self.params["max_effort"].array

    def refresh(self):
        torch.neg(self.params["max_effort"].values, out=self._neg_t)

    def apply(self, effort, q, qd, out):
        clamp_between(self._ctx.ops.xp, effort, self._neg, self._max, out)


class ClampingDCMotor(Clamping):
    """Four-quadrant linear torque-speed curve of a DC motor.

    saturation_effort [N·m] (stall torque, >= 0), velocity_limit [rad/s] (no-load speed, > 0),
    effort_limit [N·m] (continuous torque, > 0, may be inf). With ``v_c = velocity_limit *
    (1 + effort_limit / saturation_effort)`` and ``v = clip(qd, -v_c, v_c)``::

        tau_max = min(saturation_effort * (1 - v / velocity_limit),  effort_limit)
        tau_min = max(saturation_effort * (-1 - v / velocity_limit), -effort_limit)
        applied = clip(effort, tau_min, tau_max)

    A zero saturation_effort is a dead motor (``v_c = velocity_limit``, output 0).

    Value rules: saturation_effort is finite (an infinite stall torque has no torque-speed line);
    velocity_limit and effort_limit may be +inf (no back-EMF / no current limit). The slope
    ``saturation_effort / velocity_limit`` and the envelope's span ``saturation_effort +
    effort_limit`` (finite limits) must be representable in the model's dtype. With these the
    envelope is computed without NaN for every finite joint velocity, and is finite wherever its
    true value is representable (with ``effort_limit = +inf`` it grows as
    ``saturation_effort * |v| / velocity_limit``). The envelope is evaluated in the model's dtype,
    so its bounds (``|applied| <= effort_limit`` included) hold up to that dtype's rounding of
    ``saturation_effort * (1 + |v| / velocity_limit)`` -- noticeable only when the stall torque
    dwarfs the effort limit (float32: about 1e-7 of it).

    Evaluation (six array calls on the numpy path for small batches, none broadcasting): ``v`` by
    one clip, ``s = slope * v``, the two lines ``-saturation_effort - s`` and ``saturation_effort -
    s`` into the rows of a ``(2, num_envs, num_joints)`` buffer, both limits at once as one clip of
    it against ``[-effort_limit, -inf]`` / ``[+inf, effort_limit]`` (``max(line, -effort_limit)``
    and ``min(line, effort_limit)`` exactly), then the effort's clip between the two rows. Large
    batches and torch (:func:`clip_for`, :data:`CLIP_UFUNC_MAX`) take each clip as ``maximum`` then
    ``minimum`` and the limits row by row (nine calls). Every value
    equals the formula above evaluated operation by operation in the model's dtype (the same
    roundings; only the sign of a zero may differ).
    """

    PARAMS = {
        "saturation_effort": (math.nan, GAIN),
        "velocity_limit": (math.nan, POSITIVE),
        "effort_limit": (math.inf, POSITIVE),
    }
    GRAPH_SAFE = True
    STATEFUL = False
    NATIVE_FORM = "dcmotor"

    def to_mujoco(self, compiler: Any) -> Any:
        """MuJoCo's ``dcmotor`` with ``K = 1``, ``Vmax = velocity_limit``, ``R = velocity_limit /
        saturation_effort`` and ``saturation = effort_limit``: the same four-quadrant envelope."""
        return compiler.form("dcmotor", self, stall="saturation_effort", noload="velocity_limit", limit="effort_limit")

    def __init__(self, saturation_effort: Any, velocity_limit: Any, effort_limit: Any = math.inf):
        if saturation_effort is None or velocity_limit is None:
            raise ValueError("ClampingDCMotor: saturation_effort and velocity_limit are required")
        super().__init__(saturation_effort=saturation_effort, velocity_limit=velocity_limit, effort_limit=effort_limit)

    def to_newton(self, exporter: Any) -> Any:
        """``newton.actuators.ClampingDCMotor`` (Newton calls ``effort_limit`` ``max_motor_effort``)."""
        return exporter.newton_actuators.ClampingDCMotor(
            saturation_effort=exporter.floats(self, "saturation_effort"),
            velocity_limit=exporter.floats(self, "velocity_limit"),
            max_motor_effort=exporter.floats(self, "effort_limit"),
        )

    def bind(self, ctx, randomization=None):
        part = super().bind(ctx, randomization)
        sat, vel, el = (part.params[k] for k in ("saturation_effort", "velocity_limit", "effort_limit"))
        fmax = torch.finfo(ctx.dtype).max
        if sat.randomized or vel.randomized or el.randomized:
            slope = sat.bounds()[1] / vel.bounds()[0]
            el_hi = el.bounds()[1]
            corner = sat.bounds()[1] + (el_hi if el_hi <= fmax else 0.0)  # beyond the range: +inf, no limit
        else:
            slope = (sat.nominal / vel.nominal).max().item()
            corner = (sat.nominal + torch.where(el.nominal > fmax, 0.0, el.nominal)).max().item()
        dtype = str(ctx.dtype).replace("torch.", "")
        if slope > fmax:
            raise ValueError(
                f"{ctx.owner}: parameters 'saturation_effort' / 'velocity_limit' (the torque-speed slope) can "
                f"reach {slope:.4g}, which {dtype} cannot represent; allowed: saturation_effort / velocity_limit "
                f"<= {fmax:.4g}"
            )
        if corner > fmax:  # the envelope reaches -(saturation_effort + effort_limit) ... at +-v_c
            raise ValueError(
                f"{ctx.owner}: parameters 'saturation_effort' + 'effort_limit' can reach {corner:.4g} (the "
                f"torque-speed envelope spans that much), which {dtype} cannot represent; allowed: "
                f"saturation_effort + effort_limit <= {fmax:.4g}"
            )
        return part

    def _setup(self, ctx):
        for n in ("vc", "neg_vc", "slope", "s"):
            t, a = self._buffer(ctx)
            setattr(self, "_" + n + "_t", t)
            setattr(self, "_" + n, a)
        self._sat = self.params["saturation_effort"].array
        shape2 = (2, ctx.num_envs, ctx.num_joints)  # rows [0]: the lower line / limit, [1]: the upper one
        self._lo2_t, self._lo2 = self._buffer(ctx, shape=shape2)  # [-effort_limit, -inf]
        self._hi2_t, self._hi2 = self._buffer(ctx, shape=shape2)  # [+inf, effort_limit]
        self._env_t, self._env = self._buffer(ctx, shape=shape2)  # [tau_min, tau_max] of the last apply
        self._neg_sat_t, self._neg_sat = self._buffer(ctx)
        self._tau_min, self._tau_max = self._env[0], self._env[1]
        size = 2 * ctx.num_envs * ctx.num_joints  # the envelope's two rows
        self._clip = clip_for(ctx.ops.xp, size)
        self._fused = self._clip is np_clip  # one clip ufunc call for both rows (small numpy batches)
        self._neg_el, self._el = self._lo2[0], self._hi2[1]

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
        torch.neg(el, out=self._lo2_t[0])
        self._lo2_t[1].fill_(-math.inf)
        self._hi2_t[0].fill_(math.inf)
        self._hi2_t[1].copy_(el)

    def apply(self, effort, q, qd, out):
        xp, clip, s, env = self._ctx.ops.xp, self._clip, self._s, self._env
        lo, hi = self._tau_min, self._tau_max
        clip(qd, self._neg_vc, self._vc, s)  # v (out positional: ~0.06 us less a call than out=)
        xp.multiply(self._slope, s, out=s)  # s = sat * v / vel
        xp.subtract(self._neg_sat, s, out=lo)  # -sat - s
        xp.subtract(self._sat, s, out=hi)  # sat - s
        if self._fused:  # tau_min = max(., -effort_limit), tau_max = min(., effort_limit) in one clip
            clip(env, self._lo2, self._hi2, env)
        else:  # the same per row (large batches: two SIMD calls beat the clip over both rows)
            xp.maximum(lo, self._neg_el, out=lo)
            xp.minimum(hi, self._el, out=hi)
        clip(effort, lo, hi, out)


class ClampingPositionBased(Clamping):
    """Angle-dependent limit for linkage-driven joints: ``limit = interp(q)``.

    ``lookup_positions`` [rad or m] non-decreasing, ``lookup_efforts`` [N·m or N] >= 0, equal
    lengths >= 1; one table shared by the group's joints. Piecewise linear in the measured q,
    holding the end values outside the table, left-continuous at a duplicated breakpoint, no
    angle wrapping. ``applied = clip(effort, -limit, +limit)``.
    """

    GRAPH_SAFE = True  # the fill beyond the table is by mask (ArrayOps.fill_where): no host sync
    STATEFUL = False

    def __init__(self, lookup_positions: Sequence[float], lookup_efforts: Sequence[float]):
        def table(name, value):
            if not isinstance(value, (list, tuple, np.ndarray, torch.Tensor)):
                raise TypeError(f"ClampingPositionBased: {name} must be a sequence of numbers, got {type(value).__name__} {value!r}")
            arr = real_array(value, name, "ClampingPositionBased")
            if arr.ndim != 1:
                raise ValueError(f"ClampingPositionBased: {name} must be one-dimensional, got shape {arr.shape}")
            return arr

        xs, ys = table("lookup_positions", lookup_positions), table("lookup_efforts", lookup_efforts)
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

    def to_newton(self, exporter: Any) -> Any:
        """``newton.actuators.ClampingPositionBased`` with the same table (rad or m, N·m or N)."""
        return exporter.newton_actuators.ClampingPositionBased(
            lookup_positions=tuple(float(x) for x in self.lookup_positions),
            lookup_efforts=tuple(float(y) for y in self.lookup_efforts),
        )

    @staticmethod
    def _slopes(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        """Slope of each segment ending at entry k (0 for k = 0 and for duplicated breakpoints), float64."""
        k = xs.size
        width = np.diff(xs)
        slope = np.zeros(k)
        with np.errstate(over="ignore"):
            slope[1:] = np.divide(np.diff(ys), width, out=np.zeros(k - 1), where=width > 0)
        return slope

    def _check_dtype(self, ctx: BindContext) -> None:
        """The tables and slopes in the model's dtype must stay finite (``ValueError`` naming the entry)."""
        fmax = torch.finfo(ctx.dtype).max
        name = str(ctx.dtype).replace("torch.", "")
        for label, arr, hint in (
            ("lookup_positions", self.lookup_positions, "use dtype=torch.float64"),
            ("lookup_efforts", self.lookup_efforts, "use dtype=torch.float64"),
            ("slope between lookup entries", self._slopes(self.lookup_positions, self.lookup_efforts),
             "move breakpoints this close together apart, merge them, or use dtype=torch.float64"),
        ):
            big = np.flatnonzero(~(np.abs(arr) <= fmax))
            if big.size:
                i = int(big[0])
                raise ValueError(
                    f"{ctx.owner}: ClampingPositionBased {label} (entry {i}: {arr[i]:.4g}) cannot be represented "
                    f"in {name} (|x| <= {fmax:.4g}); {hint}"
                )

    def bind(self, ctx, randomization=None):
        self._check_dtype(ctx)
        return super().bind(ctx, randomization)

    def _setup(self, ctx):
        xs, ys = self.lookup_positions, self.lookup_efforts
        k = xs.size
        slope = self._slopes(xs, ys)
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
        clamp_between(xp, effort, self._neg, lim, out)
