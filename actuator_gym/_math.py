"""Small batched rotation helpers shared by the tasks and the backends (numpy, batch-first).

Quaternions are ``(w, x, y, z)`` (MuJoCo's order); rotation matrices map body-frame vectors to the
world frame. Engine-free: importing this module imports numpy only.
"""

from __future__ import annotations

import numpy as np

__all__ = ["quat_to_rotmat", "quat_rotate_inverse", "rotate", "rotate_inverse"]


def quat_to_rotmat(quat: np.ndarray) -> np.ndarray:
    """Body-to-world rotation matrices ``(N, 3, 3)`` (float64) from quaternions ``(N, 4)``
    ``(w, x, y, z)``. Non-unit quaternions are normalized (the ``2 / |q|^2`` scale); a zero
    quaternion gives the identity."""
    q = np.asarray(quat, dtype=np.float64)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    n = w * w + x * x + y * y + z * z
    s = np.where(n > 0, 2.0 / np.where(n > 0, n, 1.0), 0.0)
    r = np.empty(q.shape[:-1] + (3, 3))
    r[..., 0, 0] = 1 - s * (y * y + z * z)
    r[..., 0, 1] = s * (x * y - z * w)
    r[..., 0, 2] = s * (x * z + y * w)
    r[..., 1, 0] = s * (x * y + z * w)
    r[..., 1, 1] = 1 - s * (x * x + z * z)
    r[..., 1, 2] = s * (y * z - x * w)
    r[..., 2, 0] = s * (x * z - y * w)
    r[..., 2, 1] = s * (y * z + x * w)
    r[..., 2, 2] = 1 - s * (x * x + y * y)
    return r


def rotate(rot: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``R v`` per row: ``(N, 3, 3)`` matrices times ``(N, 3)`` vectors -> ``(N, 3)``."""
    return np.einsum("nij,nj->ni", rot, v)


def rotate_inverse(rot: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``R^T v`` per row (world vectors in the body frame): ``(N, 3, 3)``, ``(N, 3)`` -> ``(N, 3)``."""
    return np.einsum("nji,nj->ni", rot, v)


def quat_rotate_inverse(quat: np.ndarray, v: np.ndarray) -> np.ndarray:
    """World vectors ``v`` ``(N, 3)`` expressed in the body frame of ``quat`` ``(N, 4)``."""
    return rotate_inverse(quat_to_rotmat(quat), np.asarray(v, dtype=np.float64))
