"""The two array libraries of the Stable-PD solve (:mod:`actuator_gym.actuators.implicit`): one
algorithm, written once against this small interface, over float64 numpy arrays on the host
(:class:`NumpyLA`) or torch tensors on the model's device (:class:`TorchLA`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .._array import NUMPY_OPS, TORCH_OPS

__all__ = ["NumpyLA", "TorchLA", "FAST_FLOOR_MAX", "SMALL_SOLVE"]

FAST_FLOOR_MAX = 0.5  # library solve allowed while derivative_floor <= this (pivots are >= 1 there)
SMALL_SOLVE = 4096  # num_envs * J * J up to which the numpy path solves with np.linalg.solve


class NumpyLA:
    """float64 numpy arrays on the host; host checks are free."""

    xp = np
    ops = NUMPY_OPS
    lazy_checks = False  # checks are decided on the host as they come

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

    def empty(self, *tail: int) -> np.ndarray:
        return np.empty((self.n,) + (tail or (self.j,)))

    def zeros(self) -> np.ndarray:
        return np.zeros((self.n, self.j))

    def assign(self, dst, src) -> None:
        dst[...] = src

    def operand(self, A):
        """``A`` as :meth:`matvec` and :meth:`newton_step` take it: ``(n, 1)`` when ``J == 1``."""
        return A[:, :, 0] if self.j == 1 else A

    def matvec(self, A, p):
        if self.j == 1:
            return A * p
        return (A @ p[..., None])[..., 0]

    def sqnorm(self, r):
        """Squared Euclidean norm per env, ``(n,)``."""
        if self.j == 1:
            return np.square(r[:, 0])
        return np.einsum("ij,ij->i", r, r)

    def all(self, mask) -> bool:
        return np.count_nonzero(mask) == mask.size

    def any(self, mask) -> bool:
        return np.count_nonzero(mask) > 0

    def sync(self, *flags) -> tuple:
        """Host booleans of ``flags``."""
        return tuple(bool(f) for f in flags)

    def positive_definite(self, A):
        """Whether every env's ``A + A^T`` is positive definite."""
        try:
            np.linalg.cholesky(A + A.swapaxes(1, 2))
        except np.linalg.LinAlgError:
            return False
        return True

    def floor_pivots(self, piv, floor: float):
        """``piv`` with entries of magnitude below ``floor`` replaced by +-``floor`` (0 -> +)."""
        small = np.abs(piv) < floor
        if not np.count_nonzero(small):
            return piv
        return np.where(small, np.where(piv < 0.0, -floor, floor), piv)

    def newton_step(self, A, s, r, h: float, floor: float, fast):
        """``(dp, exact)``: ``dp`` solves ``(I - h diag(s) A) dp = -r`` as the elimination with
        floored pivots does (module doc); ``exact`` is True (decided on the host)."""
        if self.j == 1:
            return -r / self.floor_pivots(1.0 - (h * s) * A, floor), True
        if fast and s.max() <= 0.0:  # pivots >= 1: the floor never applies (module doc)
            jac = np.eye(self.j) - (h * s[:, :, None]) * A
            if self.small:
                try:
                    return np.linalg.solve(jac, -r[..., None])[..., 0], True
                except np.linalg.LinAlgError:  # cannot happen in exact arithmetic
                    pass
            else:
                dp, info = torch.linalg.solve_ex(torch.from_numpy(jac), torch.from_numpy(-r))
                if not info.any():
                    return dp.numpy(), True
        return self.eliminate(A, s, r, h, floor), True

    def eliminate(self, A, s, r, h: float, floor: float):
        """Gauss elimination of ``(I - h diag(s) A) dp = -r`` without row exchanges, pivots floored."""
        j = self.j
        M = self.empty(j, j + 1)  # [Jacobian | right-hand side]
        M[:, :, :j] = -(h * s[:, :, None]) * A
        for i in range(j):
            M[:, i, i] += 1.0
        M[:, :, j] = -r
        for k in range(j):
            piv = self.floor_pivots(M[:, k, k], floor)
            M[:, k, k] = piv
            if k + 1 < j:
                fac = M[:, k + 1 :, k] / piv[:, None]
                M[:, k + 1 :, k + 1 :] -= fac[:, :, None] * M[:, k, None, k + 1 :]
        dp = self.empty()
        for i in range(j - 1, -1, -1):
            rhs = M[:, i, j] - (M[:, i, i + 1 : j] * dp[:, i + 1 :]).sum(1) if i + 1 < j else M[:, i, j]
            dp[:, i] = rhs / M[:, i, i]
        return dp


class TorchLA(NumpyLA):
    """float64 torch tensors on the model's device; host checks are batched into one sync."""

    xp = torch
    ops = TORCH_OPS
    lazy_checks = True  # checks ride on the next host sync

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

    def empty(self, *tail: int):
        return torch.empty((self.n,) + (tail or (self.j,)), dtype=torch.float64, device=self.device)

    def zeros(self):
        return torch.zeros((self.n, self.j), dtype=torch.float64, device=self.device)

    def assign(self, dst, src) -> None:
        dst.copy_(src)

    def sqnorm(self, r):
        return (r * r).sum(1)

    def all(self, mask):
        return mask.all()

    def any(self, mask):
        return mask.any()

    def sync(self, *flags) -> tuple:
        """Host booleans of ``flags`` (Python values or 0-d device tensors: one transfer for all)."""
        out = list(flags)
        idx = [i for i, f in enumerate(flags) if isinstance(f, torch.Tensor)]
        if idx:
            for i, value in zip(idx, torch.stack([flags[i] for i in idx]).tolist()):
                out[i] = value
        return tuple(bool(f) for f in out)

    def positive_definite(self, A):
        return (torch.linalg.cholesky_ex(A + A.mT).info == 0).all()

    def floor_pivots(self, piv, floor: float):
        f = torch.full_like(piv, floor)
        return torch.where(piv.abs() < floor, torch.where(piv < 0.0, -f, f), piv)

    def newton_step(self, A, s, r, h: float, floor: float, fast):
        """As the numpy path, but ``exact`` for ``J > 1`` is a device flag (checked at the next
        sync; when false the caller redoes the step with :meth:`eliminate`)."""
        if self.j == 1:
            return -r / self.floor_pivots(1.0 - (h * s) * A, floor), True
        if fast is False:
            return self.eliminate(A, s, r, h, floor), True
        jac = self.eye - (h * s.unsqueeze(-1)) * A
        dp, info = torch.linalg.solve_ex(jac, -r)
        return dp, (s <= 0.0).all() & (info == 0).all() & fast
