"""Rotor thrust dynamics for multirotors, and the allocation of rotor thrusts to a body wrench.

A multirotor is actuated by rotors, not joints. A policy (or a controller) commands a desired thrust
per rotor [N]; :class:`Thruster` turns it into the thrust the motor actually delivers (first-order
rotor-speed dynamics with separate rise and fall time constants); :func:`allocation_matrix` and
:func:`body_wrench` turn the rotor thrusts into one wrench on the airframe::

    model = ThrusterCfg(thruster_names_expr=["rotor_.*"], thrust_range=(0.1, 10.0),
                        thrust_const_range=(9.26e-6, 1.83e-5), tau_inc_range=(0.05, 0.08),
                        tau_dec_range=(0.005, 0.005), torque_to_thrust_ratio=0.07, dt=0.005)
        .build(rotor_names=["rotor_0", ...], num_envs=4096, device="cpu", seed=0, initial_rps=hover_rps)
    thrust = model.compute(target_thrust=t_star)           # (num_envs, num_rotors) [N]
    A = allocation_matrix(positions, spin_directions, 0.07)  # (6, num_rotors)
    wrench = body_wrench(A, thrust)                          # (num_envs, 6): force [N], torque [N·m]

One step, per env and rotor (``T`` the current thrust, ``k_f`` the thrust constant)::

    T_des = clip(target, thrust_range)
    s     = sign(T) * sign(T_des - T);  tau = tau_dec where s < 0 else tau_inc
    m     = 1 / (dt + tau)  (discrete approximation)  or  1 / tau  (continuous)
    w     = sqrt(max(T / k_f, 0));  e = sqrt(max(T_des / k_f, 0)) - w     [rps]
    f(x)  = clip(m * x, -max_thrust_rate, max_thrust_rate)
    euler: w' = w + dt f(e)
    rk4:   k1 = f(e), k2 = f(e - dt/2 k1), k3 = f(e - dt/2 k2), k4 = f(e - dt k3)
           w' = w + dt/6 (k1 + 2 k2 + 2 k3 + k4)
    T     = k_f w'^2  (computed_thrust);  applied_thrust = clip(T, thrust_range)

Where we differ from Isaac Lab's multirotor thrusters (see ``docs/thruster.md``): the initial rotor
speed (or an initial thrust, for whatever ``k_f`` is drawn) is honoured at construction and at every
reset; ``k_f`` is clamped to ``>= 1e-6`` at both; RK4 uses ``e - ...`` stages; the yaw reaction
torque is built from ``torque_to_thrust_ratio`` and the spin directions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch

from .._array import ops_for
from .._checks import (
    check_batch,
    check_bool,
    check_device,
    check_dtype,
    check_interval,
    check_names,
    check_num_envs,
    check_patterns,
    check_real,
    check_str,
    real_array,
)
from ..randomization.distributions import Distribution, Uniform
from .batch import BatchModel
from .params import FINITE, FINITE_POSITIVE, GAIN, Param, UnknownParameterError, select_names

__all__ = ["ThrusterCfg", "Thruster", "allocation_matrix", "body_wrench", "MIN_THRUST_CONST"]

MIN_THRUST_CONST = 1e-6
"""[N/rps²]: sampled thrust constants are clamped to at least this (a k_f of 0 would divide by 0)."""

_SCHEMES = ("rk4", "euler")


def _range(cls: str, name: str, value: Any, *, low_min: float | None = None, low_open: bool = False,
           high_positive: bool = False) -> tuple[float, float]:
    """Validate a ``(low, high)`` pair of finite numbers with ``low <= high``."""
    lo, hi = check_interval(value, name, cls)
    if low_min is not None and (lo <= low_min if low_open else lo < low_min):
        op = ">" if low_open else ">="
        raise ValueError(f"{cls}: {name} must have low {op} {low_min}, got ({lo}, {hi})")
    if high_positive and hi <= 0:
        raise ValueError(
            f"{cls}: {name} must have high > 0 (values are clamped to >= {MIN_THRUST_CONST}), got ({lo}, {hi})"
        )
    return lo, hi


def _uniform_or_constant(lo: float, hi: float) -> float | Distribution:
    """A degenerate range is a constant; otherwise one uniform draw per env and rotor."""
    return lo if lo == hi else Uniform(lo, hi, per_joint=True)


@dataclass(kw_only=True)
class ThrusterCfg:
    """Rotor thrust dynamics (Isaac Lab field names). Ranges are ``(low, high)`` of a uniform draw
    per env and rotor, re-drawn at every reset of that env; ``low == high`` is a constant."""

    thruster_names_expr: list[str]
    """Regexes full-matched against rotor (site or body) names; the model drives every rotor matched."""
    thrust_range: tuple[float, float]
    """[N]: (min, max) clamp of the commanded thrust and of the applied thrust."""
    thrust_const_range: tuple[float, float]
    """[N/rps²]: range of the thrust constant ``k_f`` in ``T = k_f * w²`` (``w`` in rev/s);
    draws are clamped to ``>= 1e-6``; ``high`` must be > 0."""
    tau_inc_range: tuple[float, float]
    """[s]: range of the rise time constant (rotor speeding up)."""
    tau_dec_range: tuple[float, float]
    """[s]: range of the fall time constant (rotor slowing down; usually much shorter)."""
    torque_to_thrust_ratio: float
    """[m] (N·m per N): yaw reaction torque per newton of thrust; >= 0, the spin direction gives the sign."""
    max_thrust_rate: float = 1e5
    """[rps/s]: clamp on the rotor-speed derivative (Isaac Lab calls it a thrust rate; it acts on rotor speed)."""
    use_discrete_approximation: bool = True
    """Mixing factor ``1 / (dt + tau)`` [1/s] when True, ``1 / tau`` when False."""
    integration_scheme: str = "rk4"
    """``"rk4"`` or ``"euler"``."""
    dt: float | None = None
    """[s]: integration step, the physics step (None: must be given to ``build(dt=)``)."""

    def __post_init__(self):
        cls = type(self).__name__
        self.thruster_names_expr = check_patterns(self.thruster_names_expr, "thruster_names_expr", cls)
        if not isinstance(self.integration_scheme, str) or self.integration_scheme not in _SCHEMES:
            raise ValueError(
                f"{cls}: integration_scheme must be one of {_SCHEMES}, got {self.integration_scheme!r}"
            )
        self.use_discrete_approximation = check_bool(self.use_discrete_approximation, "use_discrete_approximation", cls)
        self.thrust_range = _range(cls, "thrust_range", self.thrust_range)
        self.thrust_const_range = _range(cls, "thrust_const_range", self.thrust_const_range, high_positive=True)
        # tau = 0 is an instant response with the discrete factor 1/(dt + tau); 1/tau needs tau > 0
        open_ = not self.use_discrete_approximation
        self.tau_inc_range = _range(cls, "tau_inc_range", self.tau_inc_range, low_min=0.0, low_open=open_)
        self.tau_dec_range = _range(cls, "tau_dec_range", self.tau_dec_range, low_min=0.0, low_open=open_)
        self.torque_to_thrust_ratio = _scalar(cls, "torque_to_thrust_ratio", self.torque_to_thrust_ratio, low=0.0)
        self.max_thrust_rate = _scalar(
            cls, "max_thrust_rate", self.max_thrust_rate, low=0.0, low_open=True, allow_inf=True
        )
        if self.dt is not None:
            self.dt = _scalar(cls, "dt", self.dt, low=0.0, low_open=True)

    def select_rotors(self, rotor_names: Sequence[str]) -> list[str]:
        """The rotors of ``rotor_names`` this config drives (full-match of ``thruster_names_expr``)."""
        return select_names(self.thruster_names_expr, rotor_names, type(self).__name__, "thruster_names_expr", "rotors")

    def build(self, rotor_names: Sequence[str], num_envs: int = 1, device: str | torch.device = "cpu", seed: Any = None,
              **kwargs: Any) -> "Thruster":
        """A :class:`Thruster` for the rotors of ``rotor_names`` this config matches.

        The rotors' state at construction and after every reset, one of the two (each a number, a
        ``(num_rotors,)`` sequence, a ``(num_envs, num_rotors)`` tensor or a ``{regex: value}`` dict):
        ``initial_rps`` [rev/s], the rotor speed (thrust ``k_f * initial_rps²``: it varies with the
        ``k_f`` drawn), or ``initial_thrust`` [N], the thrust itself whatever ``k_f`` is drawn (e.g.
        the hover thrust; the speed is then ``sqrt(initial_thrust / k_f)``, the ``initial_rps`` in
        force). They and the other keyword arguments (``dt``, ``dtype``, ``array_backend``,
        ``check_finite``, ``name``) go to :class:`Thruster`.
        """
        return Thruster(self, rotor_names=self.select_rotors(rotor_names), num_envs=num_envs, device=device, seed=seed, **kwargs)


def _scalar(cls: str, name: str, value: Any, *, low: float, low_open: bool = False, allow_inf: bool = False) -> float:
    return check_real(value, name, cls, low=low, low_open=low_open, allow_inf=allow_inf)


def _scalar_clip(ops):
    """``clip(x, lo, hi, out=)`` with scalar bounds (``hi`` may be None); numpy's ``clip`` is slow on small arrays."""
    if ops.name == "numpy":
        def clip(x, lo, hi, out):
            np.maximum(x, lo, out=out)
            if hi is not None:
                np.minimum(out, hi, out=out)
            return out
    else:
        def clip(x, lo, hi, out):
            return torch.clamp(x, lo, hi, out=out)
    return clip


class Thruster(BatchModel):
    """A batch of rotors ``(num_envs, num_rotors)`` with first-order rotor-speed dynamics.

    Args:
        cfg: the :class:`ThrusterCfg`.
        rotor_names: names of the driven rotors (in the order of the thrust columns).
        num_envs: number of parallel environments.
        device: torch device of state and outputs. On CPU the math runs in numpy on shared memory.
        seed: per-env seeds of the streams that draw ``k_f``, ``tau_inc`` and ``tau_dec``: None, an
            int ``s`` (env ``i`` draws as a one-env model seeded ``s + i``) or one seed per env.
        initial_rps: [rev/s] rotor speed at construction and after every reset (see
            :meth:`ThrusterCfg.build`); ``k_f * initial_rps²`` must lie in ``thrust_range`` for every
            ``k_f`` the range can give.
        initial_thrust: [N] instead of ``initial_rps``: the thrust at construction and after every
            reset for every ``k_f`` drawn (within ``thrust_range``, >= 0).
        dt: [s] overrides ``cfg.dt``.
        dtype: float dtype of state and outputs (float32).
        check_finite: raise on the first non-finite target or output (debug mode).
        array_backend: ``"auto"`` (numpy on CPU, torch elsewhere), ``"numpy"`` or ``"torch"``.

    Attributes ``computed_thrust`` (the rotor thrust ``k_f w²``, the model state) and
    ``applied_thrust`` (clipped to ``thrust_range``) are the model's own ``(num_envs, num_rotors)``
    buffers [N], overwritten by the next :meth:`compute` and set to the initial thrust by :meth:`reset`.
    """

    PARAMETERS = ("thrust_const", "tau_inc", "tau_dec", "initial_rps")
    """The names :meth:`parameter` accepts (and :meth:`parameters` returns, in this order)."""
    AXIS, ITEM, ITEM_NAMES = "num_rotors", "rotor", "rotor_names"  # how BatchModel's messages word columns

    def __init__(
        self,
        cfg: ThrusterCfg,
        *,
        rotor_names: Sequence[str],
        num_envs: int = 1,
        device: str | torch.device = "cpu",
        seed: Any = None,
        initial_rps: Any = None,
        initial_thrust: Any = None,
        dt: float | None = None,
        dtype: torch.dtype = torch.float32,
        check_finite: bool = False,
        array_backend: str = "auto",
        name: str = "Thruster",
    ):
        name = check_str(name, "name", "Thruster")
        if not isinstance(cfg, ThrusterCfg):
            raise TypeError(f"{name}: cfg must be a ThrusterCfg, got {type(cfg).__name__}")
        num_envs = check_num_envs(num_envs, name)
        rotor_names = check_names(rotor_names, name, "rotor_names", what="rotor names")
        check_batch(num_envs, len(rotor_names), name, "num_rotors")
        dt = cfg.dt if dt is None else _scalar(name, "dt", dt, low=0.0, low_open=True)
        if dt is None:
            raise ValueError(f"{name}: dt [s] is not set; give ThrusterCfg(dt=) or build(dt=) (the physics step)")
        if (initial_rps is None) == (initial_thrust is None):
            raise ValueError(f"{name}: give one of initial_rps [rev/s] (the rotor speed at reset) or initial_thrust [N] "
                             "(the thrust at reset, whatever k_f is drawn)")
        for key, v in (("initial_rps", initial_rps), ("initial_thrust", initial_thrust)):
            if isinstance(v, Distribution):
                raise ValueError(f"{name}: {key} must be a number, a per-rotor sequence, a tensor or a dict, not a distribution")
        device = check_device(device, name)
        dtype = check_dtype(dtype, name)
        streams = self.new_generator(seed, num_envs, name)  # validates the seed
        check_finite = check_bool(check_finite, "check_finite", name)
        fmax = torch.finfo(dtype).max
        for field, v in (("thrust_range", max(abs(x) for x in cfg.thrust_range)), ("max_thrust_rate", cfg.max_thrust_rate)):
            if math.isfinite(v) and v > fmax:
                raise ValueError(f"{name}: {field} ({v:g}) cannot be represented in {str(dtype).replace('torch.', '')} (|x| <= {fmax:.4g})")

        self.cfg = cfg
        self.name = name
        self.rotor_names = tuple(str(n) for n in rotor_names)
        self.num_envs, self.num_rotors = int(num_envs), len(self.rotor_names)
        self.device = torch.device(device)
        self.dtype = dtype
        self.dt = float(dt)
        self.check_finite = check_finite
        self.ops = ops_for(self.device, array_backend)
        self._clip = _scalar_clip(self.ops)
        self.generator = streams

        ctx = self._bind_context(self.num_rotors, self.rotor_names, dtype)
        tau_domain = FINITE_POSITIVE if not cfg.use_discrete_approximation else GAIN
        self._params: dict[str, Param] = {
            "thrust_const": Param("thrust_const", _uniform_or_constant(*cfg.thrust_const_range), ctx,
                                  default=cfg.thrust_const_range[0], domain=FINITE),
            "tau_inc": Param("tau_inc", _uniform_or_constant(*cfg.tau_inc_range), ctx,
                             default=cfg.tau_inc_range[0], domain=tau_domain),
            "tau_dec": Param("tau_dec", _uniform_or_constant(*cfg.tau_dec_range), ctx,
                             default=cfg.tau_dec_range[0], domain=tau_domain),
            "initial_rps": Param("initial_rps", initial_rps, ctx, default=0.0, domain=GAIN),
        }
        self._t0 = None if initial_thrust is None else Param("initial_thrust", initial_thrust, ctx, default=0.0, domain=GAIN)
        """The thrust [N] every reset starts at (None: ``k_f * initial_rps²``)."""
        self._check_initial_thrust()

        n, r = self.num_envs, self.num_rotors
        self._shape = (n, r)
        self._np_dtype = np.dtype(np.float32 if dtype == torch.float32 else np.float64)

        def buf():
            t = torch.zeros((n, r), dtype=dtype, device=self.device)
            return t, self.ops.view(t)

        self.computed_thrust, self._T = buf()
        self.applied_thrust, self._applied = buf()
        _, self._m_inc = buf()
        _, self._m_dec = buf()
        # scratch for the step
        self._tmp = [buf()[1] for _ in range(6)]
        self._k_f_clamp()
        self._refresh()
        self.reset()

    # -- parameters -------------------------------------------------------------------------
    def _check_initial_thrust(self) -> None:
        lo, hi = self.cfg.thrust_range
        if self._t0 is not None:
            t_min, t_max = self._t0.nominal.min().item(), self._t0.nominal.max().item()
            if t_min < lo or t_max > hi:
                raise ValueError(f"{self.name}: initial_thrust takes values in [{t_min}, {t_max}] N, outside "
                                 f"thrust_range {self.cfg.thrust_range}")
            return
        kf_lo, kf_hi = (max(v, MIN_THRUST_CONST) for v in self.cfg.thrust_const_range)
        rps2 = self._params["initial_rps"].nominal ** 2
        t_min, t_max = kf_lo * rps2.min().item(), kf_hi * rps2.max().item()
        if t_min < lo or t_max > hi:
            raise ValueError(
                f"{self.name}: the initial thrust k_f * initial_rps² can take values in [{t_min}, {t_max}] N "
                f"(thrust_const_range {self.cfg.thrust_const_range}, initial_rps up to "
                f"{math.sqrt(rps2.max().item())} rps), outside thrust_range {self.cfg.thrust_range}"
            )

    def _k_f_clamp(self) -> None:
        # in place on every env: values already >= the floor are left bit for bit
        self._params["thrust_const"].values.clamp_(min=MIN_THRUST_CONST)

    def _refresh(self) -> None:
        """Mixing factors m [1/s] for rise and fall, from tau (and dt for the discrete approximation)."""
        xp = self.ops.xp
        for tau_name, m in (("tau_inc", self._m_inc), ("tau_dec", self._m_dec)):
            tau = self._params[tau_name].array
            if self.cfg.use_discrete_approximation:
                xp.add(tau, self.dt, out=m)
                xp.reciprocal(m, out=m)
            else:
                xp.reciprocal(tau, out=m)

    def parameter(self, name: str) -> torch.Tensor:
        """Values in force, ``(num_envs, num_rotors)`` (a copy): ``"thrust_const"`` [N/rps²],
        ``"tau_inc"`` [s], ``"tau_dec"`` [s], ``"initial_rps"`` [rev/s]."""
        if not isinstance(name, str) or name not in self._params:
            raise UnknownParameterError(f"{self.name}: unknown parameter {name!r}; known: {list(self.PARAMETERS)}")
        return self._params[name].values.clone()

    def _parameter_table(self) -> dict[str, Param]:
        return self._params  # parameters() / randomized_parameters() / seed(): BatchModel (PARAMETERS order)

    def _settable(self, name: str):
        self.parameter(name)  # unknown names: the same error
        if name == "initial_rps" and self._t0 is not None:
            raise ValueError(f"{self.name}: initial_rps follows initial_thrust (sqrt(initial_thrust / k_f), set at "
                             "every reset); build the thruster with initial_rps to set the speed instead")
        return self._params[name], self._refresh, None

    # -- reset ------------------------------------------------------------------------------
    def reset(self, env_ids: Any = None) -> None:
        """Re-draw ``k_f``, ``tau_inc``, ``tau_dec`` of ``env_ids`` (None = all) and set their thrust to
        ``k_f * initial_rps²`` (built with ``initial_thrust``: to it, at ``initial_rps = sqrt(initial_thrust /
        k_f)``). Other envs' state and parameters are untouched bit for bit."""
        ids, nothing = self._reset_ids(env_ids)
        if nothing:
            return
        self._resample((self._params[k] for k in ("thrust_const", "tau_inc", "tau_dec")), ids)
        self._k_f_clamp()
        self._refresh()
        kf = self._params["thrust_const"].values
        rps = self._params["initial_rps"].values
        lo, hi = self.cfg.thrust_range
        if self._t0 is not None:  # the thrust given, the speed derived from the k_f drawn
            rows = slice(None) if ids is None else ids
            t0 = self._t0.values[rows]
            rps[rows] = torch.sqrt(t0 / kf[rows])
            self.computed_thrust[rows] = t0
            self.applied_thrust[rows] = t0.clamp(lo, hi)
        elif ids is None:
            torch.mul(kf, rps * rps, out=self.computed_thrust)
            torch.clamp(self.computed_thrust, lo, hi, out=self.applied_thrust)
        else:
            t0 = kf[ids] * rps[ids] * rps[ids]
            self.computed_thrust[ids] = t0
            self.applied_thrust[ids] = t0.clamp(lo, hi)

    # -- compute ----------------------------------------------------------------------------
    def compute(self, target_thrust: Any) -> torch.Tensor:
        """Advance the rotors by one step ``dt``; returns the applied thrust ``(num_envs, num_rotors)`` [N]
        (a fresh tensor). ``target_thrust`` [N]: desired thrust per rotor, clipped to ``thrust_range``."""
        self.compute_arrays(self._input(target_thrust, "target_thrust"))
        return self.ops.to_torch(self.ops.copy(self._applied))

    def compute_arrays(self, target: Any) -> None:
        """:meth:`compute` without input conversion or output copy, for callers that hold a
        ``(num_envs, num_rotors)`` array of the model's array library and dtype (rotor groups'
        hot path); the results are left in :attr:`computed_thrust` / :attr:`applied_thrust`."""
        if self.check_finite:
            self._check([("target_thrust", target)])
        xp, clip = self.ops.xp, self._clip
        lo, hi = self.cfg.thrust_range
        rate = self.cfg.max_thrust_rate
        dt = self.dt
        T, kf = self._T, self._params["thrust_const"].array
        t_des, m, w, e, acc, k = self._tmp

        clip(target, lo, hi, t_des)
        # rise or fall: s = sign(T) * sign(T_des - T) < 0 -> tau_dec (T == 0 -> tau_inc)
        xp.subtract(t_des, T, out=e)
        xp.sign(e, out=e)
        xp.sign(T, out=w)
        xp.multiply(w, e, out=e)
        m[...] = xp.where(e < 0, self._m_dec, self._m_inc)
        # rotor speeds [rps] and the speed error
        xp.divide(T, kf, out=w)
        clip(w, 0.0, None, w)
        xp.sqrt(w, out=w)
        xp.divide(t_des, kf, out=e)
        clip(e, 0.0, None, e)
        xp.sqrt(e, out=e)
        xp.subtract(e, w, out=e)

        def f(x, out):  # clipped rotor-speed derivative [rps/s]
            xp.multiply(m, x, out=out)
            clip(out, -rate, rate, out)
            return out

        if self.cfg.integration_scheme == "euler":
            f(e, k)
            xp.multiply(k, dt, out=k)
            xp.add(w, k, out=w)
        else:
            f(e, k)  # k1
            acc[...] = k
            for c, weight in ((dt / 2, 2.0), (dt / 2, 2.0), (dt, 1.0)):  # k2, k3, k4
                xp.multiply(k, -c, out=k)
                xp.add(e, k, out=k)
                f(k, k)
                if weight == 1.0:
                    xp.add(acc, k, out=acc)
                else:
                    xp.add(acc, weight * k, out=acc)
            xp.multiply(acc, dt / 6, out=acc)
            xp.add(w, acc, out=w)
        xp.multiply(w, w, out=w)
        xp.multiply(kf, w, out=T)
        clip(T, lo, hi, self._applied)
        if self.check_finite:
            self._check([("computed_thrust", T)])

    def __repr__(self) -> str:
        c = self.cfg
        return (
            f"Thruster({self.name!r}, num_envs={self.num_envs}, rotors={list(self.rotor_names)}, "
            f"scheme={c.integration_scheme!r}, discrete={c.use_discrete_approximation}, dt={self.dt})"
        )


# ---------------------------------------------------------------------------------------------
# Allocation
# ---------------------------------------------------------------------------------------------
def allocation_matrix(
    positions: Any,
    spin_directions: Any,
    torque_to_thrust_ratio: float,
    axes: Any = None,
    *,
    dtype: torch.dtype = torch.float32,
    device: str | torch.device | None = None,
) -> torch.Tensor:
    """The ``(6, num_rotors)`` matrix ``A`` with ``wrench = A @ thrust`` on the airframe body.

    Rows 0-2: body-frame force [N per N of thrust]; rows 3-5: body-frame torque about the body
    origin [N·m per N] (give positions relative to the centre of mass to get the torque about it).
    For rotor ``i`` at ``r_i`` with unit thrust axis ``a_i`` and spin direction ``s_i``::

        force column  a_i
        torque column r_i x a_i + s_i * torque_to_thrust_ratio * a_i

    Sign convention: ``s_i = +1`` is a rotor that spins **clockwise seen from above** (seen from the
    tip of ``a_i``; rotor angular velocity along ``-a_i``). The aerodynamic drag on such a rotor
    pushes the airframe the other way, so its reaction torque on the airframe is
    ``+ratio * T_i`` about ``+a_i`` (counter-clockwise seen from above: positive yaw for
    ``a_i = +z``). ``s_i = -1`` (counter-clockwise rotor) yaws the airframe clockwise.

    Args:
        positions: [m] ``(num_rotors, 3)`` rotor positions in the body frame.
        spin_directions: ``(num_rotors,)`` of ``+1`` / ``-1`` (above).
        torque_to_thrust_ratio: [m] yaw reaction torque per newton of thrust, ``>= 0``.
        axes: ``(num_rotors, 3)`` thrust directions in the body frame (normalized here); default ``+z``.
    """
    dtype = check_dtype(dtype, "allocation_matrix")
    if device is not None:
        device = check_device(device, "allocation_matrix")
    pos = torch.as_tensor(real_array(positions, "positions", "allocation_matrix"))
    if pos.ndim != 2 or pos.shape[1] != 3 or pos.shape[0] < 1:
        raise ValueError(f"allocation_matrix: positions must have shape (num_rotors, 3), got {tuple(pos.shape)}")
    r = pos.shape[0]
    if not torch.isfinite(pos).all():
        raise ValueError("allocation_matrix: positions must be finite")
    spin = torch.as_tensor(real_array(spin_directions, "spin_directions", "allocation_matrix")).reshape(-1)
    if spin.shape != (r,):
        raise ValueError(f"allocation_matrix: spin_directions must have shape ({r},) (num_rotors,), got {tuple(spin.shape)}")
    if not ((spin == 1.0) | (spin == -1.0)).all():
        raise ValueError(f"allocation_matrix: spin_directions must be +1 or -1, got {spin.tolist()}")
    ratio = _scalar("allocation_matrix", "torque_to_thrust_ratio", torque_to_thrust_ratio, low=0.0)
    if axes is None:
        ax = torch.zeros((r, 3), dtype=torch.float64)
        ax[:, 2] = 1.0
    else:
        ax = torch.as_tensor(real_array(axes, "axes", "allocation_matrix"))
        if ax.shape != (r, 3):
            raise ValueError(f"allocation_matrix: axes must have shape ({r}, 3) (num_rotors, 3), got {tuple(ax.shape)}")
        norm = torch.linalg.norm(ax, dim=1, keepdim=True)
        if not torch.isfinite(ax).all() or (norm <= 1e-12).any():
            raise ValueError("allocation_matrix: axes must be finite, non-zero vectors")
        ax = ax / norm
    torque = torch.linalg.cross(pos, ax, dim=1) + (spin * ratio).unsqueeze(1) * ax
    if device is None:
        device = positions.device if isinstance(positions, torch.Tensor) else "cpu"
    return torch.cat([ax, torque], dim=1).T.contiguous().to(device=device, dtype=dtype)


def body_wrench(allocation: Any, thrust: Any) -> torch.Tensor:
    """Body-frame wrench ``(num_envs, 6)`` = ``thrust @ allocation.T``: force [N] then torque [N·m].

    ``allocation``: ``(6, num_rotors)``; ``thrust``: ``(num_envs, num_rotors)`` [N]. The result has
    ``thrust``'s device and dtype.
    """
    if not isinstance(thrust, torch.Tensor) or thrust.is_complex() or thrust.dtype == torch.bool:
        thrust = torch.as_tensor(real_array(thrust, "thrust", "body_wrench", np.float32))
    if not isinstance(allocation, torch.Tensor) or allocation.is_complex() or allocation.dtype == torch.bool:
        allocation = torch.as_tensor(real_array(allocation, "allocation", "body_wrench"))
    t, a = thrust, allocation
    if a.ndim != 2 or a.shape[0] != 6:
        raise ValueError(f"body_wrench: allocation must have shape (6, num_rotors), got {tuple(a.shape)}")
    if t.ndim != 2 or t.shape[1] != a.shape[1]:
        raise ValueError(
            f"body_wrench: thrust must have shape (num_envs, {a.shape[1]}) (num_envs, num_rotors), got {tuple(t.shape)}"
        )
    return t @ a.to(device=t.device, dtype=t.dtype).T
