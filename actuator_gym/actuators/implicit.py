"""Implicit (Stable-PD) effort mode: solve for the drive's impulse at the predicted end-of-substep state.

For each env, with ``A`` the inverse joint-space mass matrix block of the group's DOFs
``(num_envs, J, J)`` (armature included), ``b`` the optional bias force ``(num_envs, J)`` and
``h = dt``::

    qd(p) = qd - h A b + A p,    q(p) = q + h qd(p)
    r(p)  = p - h g(q(p), qd(p))           g = drive law followed by the clamp chain

``r(p) = 0`` is solved by Newton's method, batched over envs: Jacobian ``I - h diag(s) A`` with
``s`` the law's slope along ``(h, 1)`` (a forward difference; ``g`` of one DOF depends only on that
DOF's state), warm start at the clamped explicit impulse, backtracking line search (sufficient
decrease ``|r(p + a dp)| <= (1 - a/2) |r(p)|``, 8 halvings, else the best step tried), at most 8
iterations, tolerance 1e-5 on ``|r|`` and on ``|dp|``, each env stopping on its own. Outputs:
``computed`` = drive law at the predicted state (unclamped), ``applied`` = clamp chain of ``p / h``
at the predicted state. A PID integral advances once, with the predicted error.

The solve runs in float64 on private float64 copies of the model's drive and clamps (bound once;
parameters re-copied and the copies refreshed only when a model parameter tensor changed), so the
laws are the parts' own code. One algorithm, two array libraries (:class:`_NumpyLA`,
:class:`_TorchLA`):

* numpy (models on the numpy array path, i.e. CPU): plain float64 numpy arrays, no torch call in
  the usual case. ``J == 1``: the Newton step is a division. ``J > 1``: one batched
  ``np.linalg.solve`` while ``num_envs * J * J <= SMALL_SOLVE`` (least overhead for small
  batches), else ``torch.linalg.solve_ex`` on zero-copy views (faster for large batches); an
  exactly singular Jacobian (``np.linalg.solve`` raises) also goes to ``solve_ex``, which takes
  the fixed-point step ``-r`` for the singular envs only.
* torch (other devices, or ``array_backend="torch"``): the same code on float64 tensors. Host
  syncs (unavoidable for the early exits): one for the first convergence check (it also carries
  the finiteness check of ``inverse_mass``), then one per Newton iteration (was the full step
  accepted by every active env, is any env still active); an iteration where some env rejects the
  full step adds one per extra halving and two after the step. Dropping the early exits (a fixed
  8 iterations x 8 halvings) would remove the syncs but launch ~20-40x more kernels than a typical
  solve (1-3 iterations, no halving).

Per call: the warm start and the first residual (2 law evaluations), then per Newton iteration the
slope and the full-step trial (2); the accepted trial's residual, state and unclamped law are
carried over as the next iterate's (no re-evaluation), and the unclamped law at the solution is
the ``computed`` output (a PID drive evaluates it once more to leave its integral at the
predicted state). The clamp chain of ``p / h`` gives ``applied``.

Supported drives: ``DrivePD`` and ``DrivePID`` with any clamp chain; learned drives raise
``NotImplementedError``.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import torch

from .._array import NUMPY_OPS, TORCH_OPS
from .params import BindContext
from .parts import DrivePD, DrivePID

__all__ = ["solve_implicit", "MAX_ITERS", "TOL"]

MAX_ITERS = 8
TOL = 1e-5
LINE_SEARCH_STEPS = 8
SMALL_SOLVE = 4096  # num_envs * J * J up to which the numpy path solves with np.linalg.solve


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
            generator=torch.Generator(device="cpu"),
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


class _NumpyLA:
    """float64 numpy arrays on the host; host checks are free."""

    xp = np
    ops = NUMPY_OPS
    defers_checks = False  # validate inverse_mass up front (free on the host)

    def __init__(self, n: int, j: int, device: torch.device):
        self.n, self.j = n, j
        # numpy's batched solve has the least overhead for small batches; torch's (on zero-copy
        # views) is faster for large ones (2-core machine: equal at 64 x 8 x 8, 2x at 1024 x 12 x 12)
        self.small = n * j * j <= SMALL_SOLVE

    def asarray(self, x: Any) -> np.ndarray:
        """float64 values of ``x`` (no copy when it already is a float64 array: inputs are only read)."""
        if type(x) is np.ndarray:
            return x.astype(np.float64, copy=False)
        if isinstance(x, torch.Tensor):
            x = x.detach().cpu().numpy()
        return np.asarray(x, dtype=np.float64)

    def copy64(self, x: Any) -> np.ndarray:
        return np.array(x, dtype=np.float64)

    def expand(self, A: np.ndarray, shape: tuple) -> np.ndarray:
        return np.broadcast_to(A, shape)

    def empty(self) -> np.ndarray:
        return np.empty((self.n, self.j))

    def assign(self, dst, src) -> None:
        dst[...] = src

    def operand(self, A):
        """``A`` as :meth:`matvec` and :meth:`newton_step` take it: ``(n, 1)`` when ``J == 1``."""
        return A[:, :, 0] if self.j == 1 else A

    def matvec(self, A, p):
        if self.j == 1:
            return A * p
        return (A @ p[..., None])[..., 0]

    def rownorm(self, r):
        if self.j == 1:
            return np.abs(r[:, 0])
        return np.sqrt(np.einsum("ij,ij->i", r, r))

    def all(self, mask) -> bool:
        return np.count_nonzero(mask) == mask.size

    def any(self, mask) -> bool:
        return np.count_nonzero(mask) > 0

    def accepted(self, ok, active) -> bool:
        """Whether every active env passed (``all(ok | ~active)``)."""
        return np.count_nonzero(ok) == self.n or np.count_nonzero(ok | ~active) == self.n

    def host(self, *flags) -> tuple:
        return flags

    def where_mask(self, active):
        """``active`` for row selections, or None when every env is active (selection is a no-op)."""
        return None if np.count_nonzero(active) == self.n else active

    def newton_step(self, A, s, r, h):
        """``dp`` solving ``(I - h diag(s) A) dp = -r``; ``-r`` where the Jacobian is singular."""
        if self.j == 1:
            jac = 1.0 - (h * s) * A
            singular = jac == 0.0
            if np.count_nonzero(singular):
                return np.where(singular, -r, -r / np.where(singular, 1.0, jac))
            return -r / jac
        jac = np.eye(self.j) - (h * s[:, :, None]) * A
        if self.small:
            try:
                return np.linalg.solve(jac, -r[..., None])[..., 0]
            except np.linalg.LinAlgError:  # some env's Jacobian is exactly singular: as below
                pass
        dp, info = torch.linalg.solve_ex(torch.from_numpy(jac), torch.from_numpy(-r))
        return np.where((info != 0).numpy()[:, None], -r, dp.numpy())


class _TorchLA(_NumpyLA):
    """float64 torch tensors on the model's device; host checks are batched into one sync."""

    xp = torch
    ops = TORCH_OPS
    defers_checks = True  # the finiteness check of inverse_mass rides on the first sync

    def __init__(self, n: int, j: int, device: torch.device):
        super().__init__(n, j, device)
        self.device = device
        self.eye = torch.eye(j, dtype=torch.float64, device=device)

    def asarray(self, x: Any) -> torch.Tensor:
        return torch.as_tensor(x).to(device=self.device, dtype=torch.float64)

    def copy64(self, x: Any) -> torch.Tensor:
        return x.to(dtype=torch.float64, copy=True)

    def expand(self, A, shape):
        return A.expand(shape)

    def empty(self):
        return torch.empty((self.n, self.j), dtype=torch.float64, device=self.device)

    def assign(self, dst, src) -> None:
        dst.copy_(src)

    def rownorm(self, r):
        return r.norm(dim=1)

    def all(self, mask):
        return mask.all()

    def any(self, mask):
        return mask.any()

    def accepted(self, ok, active):
        return (ok | ~active).all()

    def host(self, *flags) -> tuple:
        return tuple(torch.stack(flags).tolist())  # one device -> host transfer

    def where_mask(self, active):
        return active

    def newton_step(self, A, s, r, h):
        if self.j == 1:
            jac = 1.0 - (h * s) * A
            singular = jac == 0.0
            return torch.where(singular, -r, -r / torch.where(singular, 1.0, jac))
        jac = self.eye - (h * s.unsqueeze(-1)) * A
        dp, info = torch.linalg.solve_ex(jac, -r)
        return torch.where((info != 0).unsqueeze(-1), -r, dp)


class _Solver:
    """Per-actuator state of the implicit solve: the array library and the shadow parts."""

    def __init__(self, actuator):
        la_cls = _NumpyLA if actuator.ops.name == "numpy" else _TorchLA
        self.la = la_cls(actuator.num_envs, actuator.num_joints, actuator.device)
        self.shadow = _Shadow(actuator, self.la.ops)
        self.pid = isinstance(actuator.drive, DrivePID)
        if self.pid:
            self.model_integral = actuator.ops.view(actuator.drive.integral_t)
            self.shadow_integral = self.la.ops.view(self.shadow.drive.integral_t)

    def solve(self, actuator, q, qd, tq, tqd, tff, h: float, A, b) -> None:
        la, xp = self.la, self.la.xp
        shadow = self.shadow
        shadow.sync()
        sd, clamps, pid = shadow.drive, shadow.clamps, self.pid
        q, qd, tq, tqd, tff = la.asarray(q), la.asarray(qd), la.asarray(tq), la.asarray(tqd), la.asarray(tff)
        Am = la.operand(A)
        v0 = qd if b is None else qd - h * la.matvec(Am, b)
        if pid:
            integral0 = la.copy64(self.model_integral)
            shadow_integral = self.shadow_integral

        def law(x, v):
            if pid:  # every evaluation starts from the model's integral
                la.assign(shadow_integral, integral0)
            out = la.empty()
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

        def g_law(x, v):
            """``g`` and the unclamped law at a point that may become the solution (kept so the
            output needs no extra evaluation; a PID re-evaluates it for its integral)."""
            e = law(x, v)
            return chain(e, x, v), e

        def predict(p):
            v = v0 + la.matvec(Am, p)
            return q + h * v, v

        p = h * g(q, qd)  # warm start: the clamped explicit impulse
        x, v = predict(p)
        gp, lp = g_law(x, v)
        r = p - h * gp
        rn = la.rownorm(r)
        active = rn >= TOL
        if la.defers_checks:
            finite, go = la.host(la.all(torch.isfinite(A)), la.any(active))
            if not finite:
                raise ValueError(f"{actuator.name}: inverse_mass has non-finite entries")
        else:
            go = la.any(active)
        current = True  # x, v, gp, lp, r, rn belong to p
        it = 0
        while go and it < MAX_ITERS:
            it += 1
            eps = 1e-6 * (1.0 + xp.abs(v))
            s = (g(x + h * eps, v + eps) - gp) / eps
            dp = la.newton_step(Am, s, r, h)
            # line search: first trial at the full step
            pt = p + dp
            xt, vt = predict(pt)
            gt, lt = g_law(xt, vt)
            rt = pt - h * gt
            nt = la.rownorm(rt)
            ok = nt <= 0.5 * rn
            nxt = active & (la.rownorm(dp) >= TOL) & (nt >= TOL)
            full, go = la.host(la.accepted(ok, active), la.any(nxt))
            if full:  # accepted by every active env (the usual case): the trial is the next iterate
                m = la.where_mask(active)
                if m is None:
                    p, x, v, gp, lp, r, rn = pt, xt, vt, gt, lt, rt, nt
                else:  # converged envs keep their iterate
                    m2 = m[:, None]
                    p = p + xp.where(m2, dp, 0.0)
                    x, v, gp, lp, r = (
                        xp.where(m2, new, old) for new, old in ((xt, x), (vt, v), (gt, gp), (lt, lp), (rt, r))
                    )
                    rn = xp.where(m, nt, rn)
                active = nxt
                continue
            chosen = self._backtrack(p, dp, rn, nt, ok, active, predict, g, h)
            step = xp.where(active[:, None], chosen[:, None] * dp, 0.0)
            p = p + step
            active = active & (la.rownorm(step) >= TOL)
            (go,) = la.host(la.any(active))
            current = False
            if go and it < MAX_ITERS:
                x, v = predict(p)
                gp, lp = g_law(x, v)
                r = p - h * gp
                rn = la.rownorm(r)
                active = active & (rn >= TOL)
                (go,) = la.host(la.any(active))
                current = True

        if not current:
            x, v = predict(p)
        computed = law(x, v) if (pid or not current) else lp
        if pid:  # the integral advanced with the predicted error
            la.assign(self.model_integral, shadow_integral)
        applied = chain(p / h, x, v)
        la.assign(actuator._computed, computed)
        la.assign(actuator._applied, applied)

    def _backtrack(self, p, dp, rn, nt, ok, active, predict, g, h):
        """Halve the step per env until ``|r| <= (1 - a/2) |r0|`` (trial ``a = 1`` already done:
        its norm ``nt``, its test ``ok``); envs that never pass take the best step tried."""
        la, xp = self.la, self.la.xp
        ones = xp.ones_like(rn)
        alpha, chosen, best_a = ones, ones, ones
        best_n = xp.where(nt < math.inf, nt, math.inf)
        done = ok
        for _ in range(1, LINE_SEARCH_STEPS):
            alpha = xp.where(done, alpha, 0.5 * alpha)
            pt = p + alpha[:, None] * dp
            x, v = predict(pt)
            nt = la.rownorm(pt - h * g(x, v))
            better = nt < best_n
            best_a = xp.where(better, alpha, best_a)
            best_n = xp.where(better, nt, best_n)
            ok = (nt <= (1.0 - 0.5 * alpha) * rn) & ~done
            chosen = xp.where(ok, alpha, chosen)
            done = done | ok
            (finished,) = la.host(la.all(done | ~active))
            if finished:
                break
        return xp.where(done, chosen, best_a)


def solve_implicit(actuator, q, qd, tq, tqd, tff, dt, inverse_mass, bias_force) -> None:
    """Fill ``actuator._computed`` / ``actuator._applied`` with the implicit solution (see module doc)."""
    name = actuator.name
    drive = actuator.drive
    if not isinstance(drive, DrivePD):
        raise NotImplementedError(
            f"{name}: effort_mode='implicit' supports DrivePD and DrivePID drives (with any clamp chain); "
            f"{type(drive).__name__} has no implicit form -- use effort_mode='explicit'"
        )
    if dt is None or not float(dt) > 0:
        raise ValueError(f"{name}: effort_mode='implicit' needs dt= (the substep in s, > 0), got {dt!r}")
    n, j = actuator.num_envs, actuator.num_joints
    if inverse_mass is None:
        raise ValueError(
            f"{name}: effort_mode='implicit' needs inverse_mass= ({n}, {j}, {j}) (num_envs, num_joints, "
            f"num_joints): the inverse joint-space mass matrix block of the group's DOFs "
            f"(MuJoCo: actuator_gym.backends.mujoco_dynamics.joint_space_dynamics)"
        )
    solver = getattr(actuator, "_implicit_solver", None)
    if solver is None:
        solver = actuator._implicit_solver = _Solver(actuator)
    la = solver.la
    A = la.asarray(inverse_mass)
    if tuple(A.shape) == (j, j):
        A = la.expand(A, (n, j, j))
    if tuple(A.shape) != (n, j, j):
        raise ValueError(f"{name}: inverse_mass must have shape ({n}, {j}, {j}) (num_envs, num_joints, num_joints), got {tuple(A.shape)}")
    if not la.defers_checks and not la.all(np.isfinite(A)):
        raise ValueError(f"{name}: inverse_mass has non-finite entries")
    h = float(dt)
    b = None
    if bias_force is not None:
        b = la.asarray(bias_force)
        if tuple(b.shape) != (n, j):
            raise ValueError(f"{name}: bias_force must have shape ({n}, {j}) (num_envs, num_joints), got {tuple(b.shape)}")
    solver.solve(actuator, q, qd, tq, tqd, tff, h, A, b)
