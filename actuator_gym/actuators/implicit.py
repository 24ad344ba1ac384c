"""The Stable-PD effort mode (``effort_mode="implicit"``): solve for the drive's impulse at the
predicted end-of-substep state.

"Implicit" has one meaning in this package, the *Stable-PD effort mode*: the actuator model solves
its own drive and clamp chain implicitly and the result is applied as a generalized force.
:class:`~actuator_gym.actuators.ImplicitActuatorCfg` (Isaac Lab's solver-side PD) always runs it.

For each env, with ``A`` the inverse joint-space mass matrix block of the group's DOFs
``(num_envs, J, J)`` (armature included), ``b`` the optional bias force ``(num_envs, J)`` and
``h = dt``::

    qd(p) = qd - h A b + A p,    q(p) = q + h qd(p)
    r(p)  = p - h g(q(p), qd(p))           g = drive law followed by the clamp chain

The algorithm (Newton 1.8's implicit effort mode, same options and defaults: :class:`ImplicitOptions`)
runs per env, batched over the envs, each env stopping on its own:

1. warm start ``p`` = the clamped explicit impulse ``h g(q, qd)`` (``warm_start="zero"``: ``p = 0``);
2. up to ``max_iters`` Newton iterations. Iteration ``k`` (from 0):

   * stop if ``k > 0`` and ``|r(p)|^2 < residual_tol^2`` (so at least one step is always taken:
     a small absolute residual would otherwise accept the warm start whenever efforts are small);
   * slope ``s`` of ``g`` along ``(h, 1)`` by one forward difference of velocity step
     ``eps = fd_epsilon (1 + |qd(p)|)`` (``g`` of one DOF depends only on that DOF's state);
   * step ``dp`` solving ``(I - h diag(s) A) dp = -r`` by Gauss elimination without row
     exchanges, every pivot of magnitude below ``derivative_floor`` replaced by +-``derivative_floor``
     (sign kept, 0 -> +);
   * line search on ``a = 1, 1/2, 1/4, ...`` (``ls_iterations`` tries): accept the first ``a`` with
     ``|r(p + a dp)|^2 <= (1 - 1e-4 a) |r(p)|^2``. Iteration 0, or ``ls_iterations == 0``, takes the
     full step unconditionally. No accepted try: stop, keeping ``p``;
   * ``p <- p + a dp``; stop if ``|dp|^2 < update_tol^2`` (the full step's norm).

   At the cap the last iterate is returned whether or not it solves ``r(p) = 0``.

Outputs: ``computed`` = drive law at the predicted state ``(q(p), qd(p))`` (unclamped), ``applied``
= clamp chain of ``p / h`` at that state. A PID integral (``ImplicitOptions.pid_integral_error``),
by default as Newton 1.8: ``I = clip(I + (q* - q) h, +-integral_max)`` once, before the solve, and
``ki I`` held during it (warm start, law, ``computed``); ``"predicted"``: every law evaluation advances
it from the substep's start with ``q* - q(p)``, leaving it at the solution's.
Everything runs in float64; the model's float32 buffers receive the rounded results.

Gauss elimination without row exchanges is what the pivot floor is defined on. It is replaced by a
library solve (partial pivoting; the same step up to rounding) when the floor provably never
applies: when ``A + A^T`` is positive definite (Cholesky succeeds; checked once per call) and every
slope is ``<= 0`` (any PD/PID drive with max-effort or DC-motor clamps: their float64 evaluation is
monotone), every pivot of ``I - h diag(s) A`` without exchanges is ``>= 1``: with
``D = -h diag(s) >= 0``, pivot ``k`` is ``1 + d_k c_k``, ``c_k`` the last Schur complement of the
leading ``k x k`` block of ``A`` plus ``diag(1/d_1, ..., 1/d_(k-1), 0)``, a matrix whose symmetric part is
positive definite, so ``c_k > 0``. Hence the library solve is used while ``derivative_floor <=
FAST_FLOOR_MAX`` (0.5), and the explicit elimination otherwise.

The solve runs on private float64 copies of the model's drive and clamps (bound once;
parameters re-copied and the copies refreshed only when a model parameter tensor changed), so the
laws are the parts' own code. One algorithm, two array libraries (:class:`NumpyLA`,
:class:`TorchLA`):

* numpy (models on the numpy array path, i.e. CPU): plain float64 numpy arrays, no torch call in
  the usual case. ``J == 1``: the Newton step is a division. ``J > 1``: one batched
  ``np.linalg.solve`` while ``num_envs * J * J <= SMALL_SOLVE`` (least overhead for small
  batches), else ``torch.linalg.solve_ex`` on zero-copy views (faster for large batches).
* torch (other devices, or ``array_backend="torch"``): the same code on float64 tensors. One host
  sync per Newton iteration (was the full step accepted by every active env, is any env still
  active; at iteration 0 it also carries the finiteness check of ``inverse_mass``, and for
  ``J > 1`` the library-solve condition above, redone by elimination in the rare case it fails);
  an iteration where some env rejects the full step adds one per halving.

Per call: the warm start and the first residual (2 law evaluations), then per Newton iteration
the slope and the full-step trial (2); the accepted trial's residual, state and unclamped law are
carried over as the next iterate's (no re-evaluation), and the unclamped law at the solution is
the ``computed`` output (with ``pid_integral_error="predicted"`` a PID drive evaluates it once more
to leave its integral at the predicted state). The clamp chain of ``p / h`` gives ``applied``.

Supported drives: ``DrivePD`` and ``DrivePID`` with any clamp chain; an ``Actuator`` with a learned
drive refuses ``effort_mode="implicit"`` at construction (``ValueError``).

The model owns its solver (:attr:`Actuator.stable_pd_solver <actuator_gym.actuators.Actuator.stable_pd_solver>`,
a :class:`StablePDSolver`, built on first use); the solve returns ``(computed, applied)`` and the
model stores them (:meth:`Actuator.store_efforts <actuator_gym.actuators.Actuator.store_efforts>`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .._checks import UnsupportedError, check_dt, real_array
from .drives import DrivePD, DrivePID
from ..randomization.streams import EnvStreams
from .params import BindContext
from .implicit_la import FAST_FLOOR_MAX, NumpyLA, TorchLA

__all__ = ["ImplicitOptions", "StablePDSolver", "NumpyLA", "TorchLA", "solve_implicit"]

SUFFICIENT_DECREASE = 1e-4  # line search: accept a if |r|^2 drops to at most (1 - SUFFICIENT_DECREASE a) |r|^2
WARM_STARTS = ("explicit", "zero")
PID_INTEGRAL_ERRORS = ("current", "predicted")


@dataclass(frozen=True)
class ImplicitOptions:
    """Options of the Stable-PD effort solve, ``effort_mode="implicit"`` (names and defaults as
    Newton 1.8's implicit effort mode).

    Pass to :func:`solve_implicit` as ``options=``, or set ``actuator.implicit_options``.
    """

    max_iters: int = 8
    """Newton iterations per env, at most (>= 0; 0 returns the warm start)."""

    residual_tol: float = 1e-5
    """Converged when the residual's Euclidean norm over the env's joints is below this [N·m·s or
    N·s] (tested from the second iteration on). >= 0."""

    update_tol: float = 1e-5
    """Converged when the norm of the full Newton step is below this [N·m·s or N·s]. >= 0."""

    fd_epsilon: float = 1e-4
    """Relative forward-difference step for the law's slope: the velocity moves by
    ``fd_epsilon (1 + |qd|)`` [rad/s or m/s] and the position by ``h`` times that (dimensionless). > 0."""

    derivative_floor: float = 1e-8
    """Smallest pivot magnitude in the elimination of the Newton system (dimensionless: the
    Jacobian is d(impulse)/d(impulse)); smaller pivots are replaced by +-this. > 0."""

    warm_start: str = "explicit"
    """Initial impulse: ``"explicit"`` (the clamped explicit impulse ``h g(q, qd)``) or ``"zero"``."""

    ls_iterations: int = 8
    """Step lengths tried per Newton iteration (1, 1/2, 1/4, ...) until the residual drops enough;
    no success stops the env. 0: always the full step (>= 0)."""

    pid_integral_error: str = "current"
    """``DrivePID`` integral error (module doc): ``"current"`` (Newton 1.8, ``q* - q`` before the solve)
    or ``"predicted"`` (``q* - q(p)`` inside it). Not a Newton option; PD drives ignore it."""

    def __post_init__(self) -> None:
        for name in ("max_iters", "ls_iterations"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
                raise ValueError(f"ImplicitOptions: {name} must be an integer >= 0, got {v!r}")
        for name, positive in (("residual_tol", False), ("update_tol", False), ("fd_epsilon", True), ("derivative_floor", True)):
            v = getattr(self, name)
            ok = isinstance(v, (int, float, np.floating)) and not isinstance(v, bool) and math.isfinite(v)
            if not ok or (v <= 0 if positive else v < 0):
                rng = "> 0" if positive else ">= 0"
                raise ValueError(f"ImplicitOptions: {name} must be a finite number {rng}, got {v!r}")
        if self.warm_start not in WARM_STARTS:
            raise ValueError(f"ImplicitOptions: warm_start must be one of {WARM_STARTS}, got {self.warm_start!r}")
        if self.pid_integral_error not in PID_INTEGRAL_ERRORS:
            raise ValueError(f"ImplicitOptions: pid_integral_error must be one of {PID_INTEGRAL_ERRORS}, got {self.pid_integral_error!r}")


DEFAULT_OPTIONS = ImplicitOptions()


class _Shadow:
    """float64 copies of an actuator's drive and clamps, in the solve's array library.

    Parameters are copied from the model (and the copies refreshed) only when a parameter tensor
    of the model changed since the last call, detected through torch's in-place version counters
    (every writer of parameter values -- resets, re-sampling -- writes in place through torch).
    Inference-mode tensors have no counter: then the copy happens every call.
    """

    def __init__(self, actuator, ops):
        ctx = BindContext(
            num_envs=actuator.num_envs,
            num_joints=actuator.num_joints,
            joint_names=actuator.joint_names,
            device=actuator.device,
            dtype=torch.float64,
            ops=ops,
            generator=EnvStreams(actuator.num_envs, 0),  # throwaway: the values are copied from the model
            owner=actuator.name,
        )
        with warnings.catch_warnings():  # the model already warned about its parameters
            warnings.simplefilter("ignore")
            self.drive = actuator.drive.bind(ctx)
            self.clamps = [c.bind(ctx) for c in actuator.clamping]
        self.pairs = [(actuator.drive, self.drive)] + list(zip(actuator.clamping, self.clamps))
        self._real_params = [p for real, _ in self.pairs for p in real.params.values()]
        self._key: list | None = None
        self._held: list[torch.Tensor] = []  # keeps the keyed tensors alive (ids stay unique)

    def _version_key(self) -> list | None:
        try:
            return [(id(v), v._version) for v in [p.values for p in self._real_params]]
        except RuntimeError:  # inference tensors track no version
            return None

    def sync(self) -> None:
        key = self._version_key()
        if key is not None and key == self._key:
            return
        for real, mine in self.pairs:
            for name, p in real.params.items():
                mine.params[name].values.copy_(p.values)
            mine.refresh()
        self._key = key
        self._held = [p.values for p in self._real_params]


def _select(mask, new: tuple, old: tuple) -> tuple:
    """Per env (rows of ``mask``), ``new`` where set, else ``old``; a ``(n,)`` mask also applies to
    ``(n, J)`` arrays."""
    xp = np if isinstance(mask, np.ndarray) else torch
    m2 = mask[:, None]
    return tuple(xp.where(mask if a.ndim == 1 else m2, a, b) for a, b in zip(new, old))


class StablePDSolver:
    """Per-actuator state of the Stable-PD solve: the array library and the shadow parts. Owned by
    the model (:attr:`Actuator.stable_pd_solver <actuator_gym.actuators.Actuator.stable_pd_solver>`)."""

    def __init__(self, actuator):
        la_cls = NumpyLA if actuator.ops.name == "numpy" else TorchLA
        self.la = la_cls(actuator.num_envs, actuator.num_joints, actuator.device)
        self.shadow = _Shadow(actuator, self.la.ops)
        self.pid = isinstance(actuator.drive, DrivePID)
        if self.pid:
            self.model_integral = actuator.ops.view(actuator.drive.integral_t)
            self.shadow_integral = self.la.ops.view(self.shadow.drive.integral_t)

    def solve(self, actuator, q, qd, tq, tqd, tff, h: float, A, b, opt: ImplicitOptions) -> tuple:
        """``(computed, applied)`` float64 arrays ``(num_envs, num_joints)`` [N·m or N] of the
        solution at substep ``h`` [s] (module doc); a PID drive's integral is advanced."""
        la, xp = self.la, self.la.xp
        shadow = self.shadow
        shadow.sync()
        sd, clamps, pid = shadow.drive, shadow.clamps, self.pid
        q, qd, tq, tqd, tff = la.asarray(q), la.asarray(qd), la.asarray(tq), la.asarray(tqd), la.asarray(tff)
        Am = la.operand(A)
        v0 = qd if b is None else qd - h * la.matvec(Am, b)
        predicted = pid and opt.pid_integral_error == "predicted"
        if pid:
            integral0, shadow_integral = la.copy64(self.model_integral), self.shadow_integral
            la.assign(shadow_integral, integral0)
            if not predicted:  # Newton: advance once with the current error, then hold ki * integral
                sd.advance_integral(q, tq, h)
        res_tol2, upd_tol2 = opt.residual_tol**2, opt.update_tol**2
        floor, fd, ls = opt.derivative_floor, opt.fd_epsilon, opt.ls_iterations

        def law(x, v):
            out = la.empty()
            if pid and not predicted:  # the integral held
                sd.held_law(x, v, tq, tqd, tff, out)
            else:
                if predicted:  # every evaluation advances from the model's integral
                    la.assign(shadow_integral, integral0)
                sd.compute(x, v, tq, tqd, tff, h, out)
            return out

        def chain(effort, x, v):  # a fresh output per clamp (numpy's in-place ufuncs cost more)
            for c in clamps:
                out = la.empty()
                c.apply(effort, x, v, out)
                effort = out
            return effort

        def g(x, v):
            return chain(law(x, v), x, v)

        def state(p):
            """``(p, x, v, g, law, r, |r|^2)`` at impulse ``p``; the unclamped law is kept so the
            output needs no extra evaluation (a predicted-error PID re-evaluates it for its integral)."""
            v = v0 + la.matvec(Am, p)
            x = q + h * v
            e = law(x, v)
            gp = chain(e, x, v)
            r = p - h * gp
            return p, x, v, gp, e, r, la.sqnorm(r)

        # warm start
        cur = state(la.zeros() if opt.warm_start == "zero" else h * g(q, qd))
        # library solve for J > 1? (module doc) numpy: decided now; torch: a device flag, or False
        fast = la.j > 1 and floor <= FAST_FLOOR_MAX and opt.max_iters > 0 and la.positive_definite(A)
        finite = torch.isfinite(A).all() if la.lazy_checks else True  # torch: checked at the first sync
        if opt.max_iters == 0:
            (finite,) = la.sync(finite)
        active = None  # None: every env (iteration 0 always steps)
        for it in range(opt.max_iters):
            p, x, v, gp, _, r, rn = cur
            eps = fd * (1.0 + xp.abs(v))
            s = (g(x + h * eps, v + eps) - gp) / eps
            dp, exact = la.newton_step(Am, s, r, h, floor, fast)
            while True:
                trial = state(p + dp)
                nt = trial[6]
                if it == 0 or ls == 0:  # the full step, unconditionally
                    take = active
                else:
                    ok = nt <= (1.0 - SUFFICIENT_DECREASE) * rn
                    take = ok if active is None else active & ok
                dpn = la.sqnorm(dp)
                nxt = ~(dpn < upd_tol2) & ~(nt < res_tol2)  # Newton's stop tests, NaN continues
                if take is None:
                    all_take, rejected = True, False
                else:
                    nxt = nxt & take
                    all_take = la.all(take)
                    rejected = False if take is active else la.any(~take if active is None else active & ~take)
                finite, exact, all_take, rejected, go = la.sync(finite, exact, all_take, rejected, la.any(nxt))
                if not finite:
                    raise ValueError(f"{actuator.name}: inverse_mass has non-finite entries")
                if not exact:  # torch: the library solve's condition failed: eliminate
                    fast = False
                    dp, exact = la.eliminate(Am, s, r, h, floor), True
                    continue
                break
            if all_take:  # every env took the full step (the usual case)
                cur, active = trial, nxt
            elif not rejected:  # every active env took it, converged ones keep their iterate
                cur, active = _select(take, trial, cur), nxt
            else:
                cur, active, go = self._backtrack(cur, trial, dp, dpn, take, active, state, opt)
            if not go:
                break

        p, x, v, _, lp, _, _ = cur
        computed = law(x, v) if predicted else lp  # predicted: leaves the integral at the solution
        if pid:
            la.assign(self.model_integral, shadow_integral)
        applied = chain(p / h, x, v)
        return computed, applied

    def _backtrack(self, cur, trial, dp, dpn, take, active, state, opt: ImplicitOptions):
        """Shorter steps for the envs that rejected the full one: ``a = 1/2, 1/4, ...`` (up to
        ``ls_iterations`` lengths in all), each env taking its first with ``|r|^2 <= (1 - 1e-4 a)
        |r0|^2``; envs with none stop at their iterate. Returns (state, active, any active)."""
        la = self.la
        p, rn = cur[0], cur[6]
        new = _select(take, trial, cur)
        pending = ~take if active is None else active & ~take
        alpha = 1.0
        for k in range(1, max(opt.ls_iterations, 1)):
            if k > 1 and not la.sync(la.any(pending))[0]:
                break
            alpha *= 0.5
            tr = state(p + alpha * dp)
            ok = pending & (tr[6] <= (1.0 - SUFFICIENT_DECREASE * alpha) * rn)
            new = _select(ok, tr, new)
            take = take | ok
            pending = pending & ~ok
        active = take & ~(dpn < opt.update_tol**2) & ~(new[6] < opt.residual_tol**2)
        (go,) = la.sync(la.any(active))
        return new, active, go


def implicit_drive_error(name: str, drive: Any) -> str:
    return (
        f"{name}: effort_mode='implicit' supports DrivePD and DrivePID drives (with any clamp chain); "
        f"{type(drive).__name__} has no implicit form -- use effort_mode='explicit'"
    )


def _real(x: Any, what: str, owner: str):
    """``x`` unchanged when it is already a real array or tensor (the per-substep case), else
    :func:`~actuator_gym._checks.real_array` (complex values, strings and bools are a ``TypeError``)."""
    if isinstance(x, torch.Tensor) and not (x.is_complex() or x.dtype == torch.bool):
        return x
    if type(x) is np.ndarray and x.dtype.kind in "fiu":
        return x
    return real_array(x, what, owner)


def solve_implicit(actuator, q, qd, tq, tqd, tff, dt, inverse_mass, bias_force, options: ImplicitOptions | None = None) -> None:
    """Fill the actuator's ``computed_effort`` / ``applied_effort`` with the Stable-PD solution (see
    module doc) for the (already delayed) commands; ``dt`` [s].

    ``options``: the solver's :class:`ImplicitOptions`; default ``actuator.implicit_options``, and
    when that is None ``ImplicitOptions()`` (Newton's defaults).
    """
    prepared = prepare_implicit(actuator, dt, inverse_mass, bias_force, options)
    actuator.store_efforts(*run_implicit(actuator, q, qd, tq, tqd, tff, prepared))


def run_implicit(actuator, q, qd, tq, tqd, tff, prepared: tuple) -> tuple:
    """The Stable-PD solve on inputs checked by :func:`prepare_implicit`: ``(computed, applied)``."""
    solver, h, A, b, options = prepared
    return solver.solve(actuator, q, qd, tq, tqd, tff, h, A, b, options)


def prepare_implicit(actuator, dt, inverse_mass, bias_force, options: ImplicitOptions | None = None) -> tuple:
    """Check the Stable-PD mode's inputs (``dt`` [s], ``inverse_mass``, ``bias_force``, options)
    before any state changes: ``(solver, h, A, b, options)`` for :func:`run_implicit`."""
    name = actuator.name
    drive = actuator.drive
    if not isinstance(drive, DrivePD):  # Actuator refuses this at construction already
        raise UnsupportedError(implicit_drive_error(name, drive))
    if dt is None:
        raise ValueError(f"{name}: effort_mode='implicit' needs dt= (the substep in s, > 0), got None")
    h = check_dt(dt, f"{name}: effort_mode='implicit'")
    n, j = actuator.num_envs, actuator.num_joints
    if inverse_mass is None:
        raise ValueError(
            f"{name}: effort_mode='implicit' needs inverse_mass= ({n}, {j}, {j}) (num_envs, num_joints, "
            f"num_joints): the inverse joint-space mass matrix block of the group's DOFs "
            f"(MuJoCo: actuator_gym.backends.mujoco_dynamics.joint_space_dynamics)"
        )
    solver = actuator.stable_pd_solver
    la = solver.la
    A = la.asarray(_real(inverse_mass, "inverse_mass", name))
    if tuple(A.shape) == (j, j):
        A = la.expand(A, (n, j, j))
    if tuple(A.shape) != (n, j, j):
        raise ValueError(f"{name}: inverse_mass must have shape ({n}, {j}, {j}) (num_envs, num_joints, num_joints), got {tuple(A.shape)}")
    if not la.lazy_checks and not la.all(np.isfinite(A)):
        raise ValueError(f"{name}: inverse_mass has non-finite entries")
    b = None
    if bias_force is not None:
        b = la.asarray(_real(bias_force, "bias_force", name))
        if tuple(b.shape) != (n, j):
            raise ValueError(f"{name}: bias_force must have shape ({n}, {j}) (num_envs, num_joints), got {tuple(b.shape)}")
    if options is None:
        options = actuator.implicit_options or DEFAULT_OPTIONS
    if not isinstance(options, ImplicitOptions):
        raise TypeError(f"{name}: implicit options must be an ImplicitOptions, got {type(options).__name__}")
    return solver, h, A, b, options
