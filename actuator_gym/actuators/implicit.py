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
at the predicted state. The solve runs in float64 (torch, same code on every device) on private
float64 copies of the drive and clamps whose parameters are synced from the model every call, so
the laws are the parts' own code. A PID integral advances once, with the predicted error.

Supported drives: ``DrivePD`` and ``DrivePID`` with any clamp chain; learned drives raise
``NotImplementedError``.
"""

from __future__ import annotations

import warnings
from typing import Any

import torch

from .._array import TORCH_OPS
from .params import BindContext
from .parts import DrivePD, DrivePID

__all__ = ["solve_implicit", "MAX_ITERS", "TOL"]

MAX_ITERS = 8
TOL = 1e-5
LINE_SEARCH_STEPS = 8


class _Shadow:
    """float64 torch copies of an actuator's drive and clamps (parameters synced per call)."""

    def __init__(self, actuator):
        ctx = BindContext(
            num_envs=actuator.num_envs,
            num_joints=actuator.num_joints,
            joint_names=actuator.joint_names,
            device=actuator.device,
            dtype=torch.float64,
            ops=TORCH_OPS,
            generator=torch.Generator(device="cpu"),
            owner=actuator.name,
        )
        with warnings.catch_warnings():  # the model already warned about its parameters
            warnings.simplefilter("ignore")
            self.drive = actuator.drive.bind(ctx)
            self.clamps = [c.bind(ctx) for c in actuator.clamping]
        self.pairs = [(actuator.drive, self.drive)] + list(zip(actuator.clamping, self.clamps))

    def sync(self) -> None:
        for real, mine in self.pairs:
            for name, p in real.params.items():
                mine.params[name].values.copy_(p.values)
            mine.refresh()


def _as64(x: Any, device: torch.device) -> torch.Tensor:
    return torch.as_tensor(x).to(device=device, dtype=torch.float64)


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
    n, j, dev = actuator.num_envs, actuator.num_joints, actuator.device
    if inverse_mass is None:
        raise ValueError(
            f"{name}: effort_mode='implicit' needs inverse_mass= ({n}, {j}, {j}) (num_envs, num_joints, "
            f"num_joints): the inverse joint-space mass matrix block of the group's DOFs "
            f"(MuJoCo: actuator_gym.backends.mujoco_dynamics.joint_space_dynamics)"
        )
    A = _as64(inverse_mass, dev)
    if A.shape == (j, j):
        A = A.expand(n, j, j)
    if tuple(A.shape) != (n, j, j):
        raise ValueError(f"{name}: inverse_mass must have shape ({n}, {j}, {j}) (num_envs, num_joints, num_joints), got {tuple(A.shape)}")
    if not bool(torch.isfinite(A).all()):
        raise ValueError(f"{name}: inverse_mass has non-finite entries")
    h = float(dt)
    q, qd, tq, tqd, tff = (_as64(a, dev) for a in (q, qd, tq, tqd, tff))
    v0 = qd
    if bias_force is not None:
        b = _as64(bias_force, dev)
        if tuple(b.shape) != (n, j):
            raise ValueError(f"{name}: bias_force must have shape ({n}, {j}) (num_envs, num_joints), got {tuple(b.shape)}")
        v0 = qd - h * (A @ b.unsqueeze(-1)).squeeze(-1)

    shadow = getattr(actuator, "_implicit_shadow", None)
    if shadow is None:
        shadow = actuator._implicit_shadow = _Shadow(actuator)
    shadow.sync()
    sd, clamps = shadow.drive, shadow.clamps
    pid = isinstance(drive, DrivePID)
    if pid:
        integral0 = drive.integral_t.to(torch.float64)

    def law(x, v):
        if pid:
            sd.integral_t.copy_(integral0)
        out = torch.empty((n, j), dtype=torch.float64, device=dev)
        sd.compute(x, v, tq, tqd, tff, h, out)
        return out

    def chain(effort, x, v):
        src = effort
        for c in clamps:
            out = torch.empty_like(effort)
            c.apply(src, x, v, out)
            src = out
        return src

    def g(x, v):
        return chain(law(x, v), x, v)

    def predict(p):
        v = v0 + (A @ p.unsqueeze(-1)).squeeze(-1)
        return q + h * v, v

    def residual(p):
        x, v = predict(p)
        return p - h * g(x, v)

    p = h * g(q, qd)  # warm start: the clamped explicit impulse
    active = torch.ones(n, dtype=torch.bool, device=dev)
    eye = torch.eye(j, dtype=torch.float64, device=dev)
    for _ in range(MAX_ITERS):
        x, v = predict(p)
        gp = g(x, v)
        r = p - h * gp
        rn = r.norm(dim=1)
        active &= rn >= TOL
        if not bool(active.any()):
            break
        eps = 1e-6 * (1.0 + v.abs())
        s = (g(x + h * eps, v + eps) - gp) / eps
        jac = eye - h * s.unsqueeze(-1) * A
        dp, info = torch.linalg.solve_ex(jac, -r)
        dp = torch.where((info != 0).unsqueeze(-1), -r, dp)  # singular Jacobian: fixed-point step
        alpha = torch.ones(n, dtype=torch.float64, device=dev)
        chosen = torch.ones_like(alpha)
        done = torch.zeros_like(active)
        best_a, best_n = torch.ones_like(alpha), torch.full_like(alpha, float("inf"))
        for _ls in range(LINE_SEARCH_STEPS):
            nt = residual(p + alpha.unsqueeze(-1) * dp).norm(dim=1)
            better = nt < best_n
            best_a = torch.where(better, alpha, best_a)
            best_n = torch.where(better, nt, best_n)
            ok = (nt <= (1.0 - 0.5 * alpha) * rn) & ~done
            chosen = torch.where(ok, alpha, chosen)
            done |= ok
            if bool(done.all()):
                break
            alpha = torch.where(done, alpha, 0.5 * alpha)
        chosen = torch.where(done, chosen, best_a)
        step = torch.where(active.unsqueeze(-1), chosen.unsqueeze(-1) * dp, torch.zeros_like(dp))
        p = p + step
        active &= step.norm(dim=1) >= TOL
        if not bool(active.any()):
            break

    x, v = predict(p)
    computed = law(x, v)
    if pid:
        drive.integral_t.copy_(sd.integral_t)  # the integral advanced with the predicted error
    applied = chain(p / h, x, v)
    _store(actuator, actuator._computed, computed)
    _store(actuator, actuator._applied, applied)


def _store(actuator, dst, src: torch.Tensor) -> None:
    if actuator.ops.name == "numpy":
        dst[...] = src.cpu().numpy()
    else:
        dst.copy_(src)
