"""Drives: the part of a recipe that turns (delayed) commands and the measured state into a raw
effort (``DrivePD``, ``DrivePID``; the learned drives are in :mod:`.neural`).

Parts never loop over elements in Python; their math is written once against the array
namespace of :mod:`actuator_gym._array` (numpy on CPU, torch elsewhere). Every shape below is
``(num_envs, num_joints)``; efforts are N·m (hinges) or N (slides).
"""

from __future__ import annotations

import math
from typing import Any

import torch

from .._checks import check_dt
from .clamps import clamp_between
from .params import FINITE, GAIN, NONNEG
from .part import Part

__all__ = ["Drive", "DrivePD", "DrivePID"]


class Drive(Part):
    """A drive turns (delayed) commands and the measured state into a raw effort."""

    def compute(self, q, qd, tq, tqd, tff, dt, out) -> None:  # pragma: no cover - interface
        raise NotImplementedError


class DrivePD(Drive):
    """``computed = kp * (q* - q) + kd * (qd* - qd) + tau_ff + const_effort``.

    kp [N·m/rad or N/m], kd [N·m·s/rad or N·s/m], const_effort [N·m or N] (a per-joint bias such as
    gravity compensation). Gains default to 0. All three are finite (gains >= 0) and representable
    in the model's dtype; the effort is finite as long as the products stay inside that range.
    """

    PARAMS = {"kp": (0.0, GAIN), "kd": (0.0, GAIN), "const_effort": (0.0, FINITE)}
    GRAPH_SAFE = True
    STATEFUL = False
    NATIVE_FORM = "pid"

    def to_mujoco(self, compiler: Any) -> Any:
        """MuJoCo's PID-gain actuator with ``ki = 0``: ``general gaintype="pid" biastype="affine"``,
        ``biasprm = (const_effort, -kp, -kd)``, ``input="pos vel ff"`` (or the torque-space
        controller of a ``dcmotor`` when a DC-motor clamp follows)."""
        return compiler.form("pid", self, kp="kp", kd="kd", bias="const_effort")

    def __init__(self, kp: Any = 0.0, kd: Any = 0.0, const_effort: Any = 0.0):
        super().__init__(kp=kp, kd=kd, const_effort=const_effort)

    def to_newton(self, exporter: Any) -> Any:
        """``newton.actuators.DrivePD`` with the per-env gains and bias in force."""
        f = exporter.floats
        return exporter.newton_actuators.DrivePD(kp=f(self, "kp"), kd=f(self, "kd"), const_effort=f(self, "const_effort"))

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
    The integral is per env and joint and zeroed at reset. ``dt`` [s] is required: a finite
    number > 0 (``ValueError`` otherwise, before the integral changes). ``ki`` is finite >= 0;
    ``integral_max`` is >= 0 or +inf (no anti-windup).
    """

    PARAMS = {**DrivePD.PARAMS, "ki": (0.0, GAIN), "integral_max": (math.inf, NONNEG)}
    GRAPH_SAFE = True  # the integral is a tensor updated in place
    STATEFUL = True  # the integral
    NATIVE_FORM = "pid"

    def to_mujoco(self, compiler: Any) -> Any:
        """``general gaintype="pid" dyntype="pid" biastype="affine" gainprm="ki" biasprm="const -kp
        -kd" actearly="true"`` with ``actrange = ±integral_max``: our integral and anti-windup exactly
        (the ``pid`` shortcut's conditional anti-windup differs)."""
        return compiler.form("pid", self, kp="kp", kd="kd", bias="const_effort", ki="ki", imax="integral_max")

    def __init__(self, kp: Any = 0.0, ki: Any = 0.0, kd: Any = 0.0, integral_max: Any = math.inf, const_effort: Any = 0.0):
        Part.__init__(self, kp=kp, ki=ki, kd=kd, integral_max=integral_max, const_effort=const_effort)

    def to_newton(self, exporter: Any) -> Any:
        """``newton.actuators.DrivePID`` with the per-env gains, anti-windup bound and bias in force."""
        f = exporter.floats
        return exporter.newton_actuators.DrivePID(
            kp=f(self, "kp"), ki=f(self, "ki"), kd=f(self, "kd"),
            integral_max=f(self, "integral_max"), const_effort=f(self, "const_effort"),
        )

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

    _dt_checked: Any = ()  # the last dt float that passed check_dt (callers reuse one object)

    def compute(self, q, qd, tq, tqd, tff, dt, out):
        self.advance_integral(q, tq, dt)
        self.held_law(q, qd, tq, tqd, tff, out)

    def advance_integral(self, q, tq, dt) -> None:
        """``integral = clip(integral + (q* - q) * dt, -integral_max, integral_max)`` (``dt`` [s] checked
        before the integral changes). ``compute`` is this followed by :meth:`held_law`; the Stable-PD
        solve calls the two separately (once per substep, then the law with the integral held)."""
        if dt is not self._dt_checked:
            if dt is None:
                raise ValueError(f"{self._ctx.owner}: DrivePID needs dt= (the substep in s)")
            self._dt_value = check_dt(dt, f"{self._ctx.owner}: DrivePID")
            self._dt_checked = dt if type(dt) is float else ()  # floats are immutable: checked once
        xp, tmp, integ = self._ctx.ops.xp, self._tmp, self._integral
        xp.subtract(tq, q, out=tmp)
        xp.multiply(tmp, self._dt_value, out=tmp)
        xp.add(integ, tmp, out=integ)
        clamp_between(xp, integ, self._neg_imax, self.params["integral_max"].array, integ)

    def held_law(self, q, qd, tq, tqd, tff, out) -> None:
        """The PD law plus ``ki * integral`` with the integral as it stands (not advanced)."""
        super().compute(q, qd, tq, tqd, tff, None, out)
        tmp = self._tmp
        self._ctx.ops.xp.multiply(self.params["ki"].array, self._integral, out=tmp)
        self._ctx.ops.xp.add(out, tmp, out=out)
