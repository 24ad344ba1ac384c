"""Joint-space dynamics from MuJoCo for the implicit effort mode.

    A, b = joint_space_dynamics(model, data, ["hip", "knee"])       # after mj_forward / mj_step1
    actuator.compute(..., dt=model.opt.timestep, inverse_mass=A[None], bias_force=b[None])

``A = S M^-1 S^T`` is the block of the inverse of the engine's dense joint-space inertia
(``mj_fullM``; armature included) on the given DOFs -- the block of the inverse, not the inverse of
the block, so the coupling through unactuated DOFs is kept. ``b = qfrc_bias`` on those DOFs
(Coriolis/centrifugal + gravity, ``C(q, qd) qd + g(q)``). Passive forces (joint damping, springs)
and constraint forces are not included. ``data`` must be current: call ``mujoco.mj_forward`` (or
``mj_step1``) for the state first, or pass ``forward=True``.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["joint_space_dynamics", "dof_indices"]


def dof_indices(model, joints: Sequence[str | int]) -> np.ndarray:
    """DOF addresses of hinge/slide joints given by name or joint id (``ValueError`` otherwise)."""
    import mujoco

    ids = []
    for jn in joints:
        jid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, jn) if isinstance(jn, str) else int(jn)
        if jid < 0 or jid >= model.njnt:
            raise ValueError(f"joint_space_dynamics: unknown joint {jn!r}")
        if int(model.jnt_type[jid]) not in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)):
            raise ValueError(f"joint_space_dynamics: joint {jn!r} is not a hinge or slide joint (one DOF)")
        ids.append(int(model.jnt_dofadr[jid]))
    return np.asarray(ids, dtype=np.int64)


def full_inertia(model, data) -> np.ndarray:
    """The dense joint-space inertia matrix ``(nv, nv)`` (armature included)."""
    import mujoco

    M = np.zeros((model.nv, model.nv))
    try:
        mujoco.mj_fullM(model, data, M)  # MuJoCo >= 3.4 signature
    except TypeError:
        mujoco.mj_fullM(model, M, data.qM)
    return M


def joint_space_dynamics(model, data, joints: Sequence[str | int], forward: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(inverse_mass (J, J), bias_force (J,))`` for the given joints at ``data``'s state."""
    import mujoco

    if forward:
        mujoco.mj_forward(model, data)
    dofs = dof_indices(model, joints)
    Minv = np.linalg.inv(full_inertia(model, data))
    return Minv[np.ix_(dofs, dofs)].copy(), np.asarray(data.qfrc_bias)[dofs].copy()
