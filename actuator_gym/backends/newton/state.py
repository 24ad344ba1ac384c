"""MuJoCo <-> Newton generalized state (quaternion order, free- and ball-joint velocities) and the
check that Newton's import of a world matches MuJoCo's model; the conventions are described in
:mod:`actuator_gym.backends.newton`."""

from __future__ import annotations

import mujoco
import numpy as np

from ..._math import quat_to_rotmat, rotate, rotate_inverse

__all__ = ["StateConverter", "build_converter"]


class StateConverter:
    """MuJoCo <-> Newton generalized state for one model (see the module docstring for the
    conventions). ``free``: ``(qpos_adr, dof_adr, com)`` per free joint, ``com`` the child body's
    centre of mass in its frame [m]; ``ball``: ``(qpos_adr, dof_adr)`` per ball joint."""

    def __init__(self, free: list[tuple[int, int, np.ndarray]], ball: list[tuple[int, int]]):
        self.free, self.ball = free, ball

    @property
    def identity(self) -> bool:
        return not self.free and not self.ball

    def to_mujoco(self, jq: np.ndarray, jqd: np.ndarray, qpos: np.ndarray, qvel: np.ndarray) -> None:
        """Newton ``joint_q (n, nq)``, ``joint_qd (n, nv)`` -> MuJoCo ``qpos``, ``qvel`` (written in place)."""
        qpos[:] = jq
        qvel[:] = jqd
        for a, d, com in self.free:
            wxyz = jq[:, [a + 6, a + 3, a + 4, a + 5]].astype(np.float64)
            R = quat_to_rotmat(wxyz)
            omega = jqd[:, d + 3:d + 6].astype(np.float64)
            qpos[:, a + 3:a + 7] = wxyz
            qvel[:, d:d + 3] = jqd[:, d:d + 3] - np.cross(omega, rotate(R, np.broadcast_to(com, omega.shape)))
            qvel[:, d + 3:d + 6] = rotate_inverse(R, omega)
        for a, d in self.ball:
            wxyz = jq[:, [a + 3, a, a + 1, a + 2]].astype(np.float64)
            qpos[:, a:a + 4] = wxyz
            qvel[:, d:d + 3] = rotate_inverse(quat_to_rotmat(wxyz), jqd[:, d:d + 3].astype(np.float64))

    def to_newton(self, qpos: np.ndarray, qvel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """MuJoCo ``qpos (n, nq)``, ``qvel (n, nv)`` -> Newton ``(joint_q, joint_qd)`` (fresh float64)."""
        jq, jqd = np.array(qpos, dtype=np.float64), np.array(qvel, dtype=np.float64)
        for a, d, com in self.free:
            wxyz = _unit(qpos[:, a + 3:a + 7], "qpos", a + 3)
            R = quat_to_rotmat(wxyz)
            omega = rotate(R, qvel[:, d + 3:d + 6])
            jq[:, a + 3:a + 6], jq[:, a + 6] = wxyz[:, 1:], wxyz[:, 0]
            jqd[:, d:d + 3] = qvel[:, d:d + 3] + np.cross(omega, rotate(R, np.broadcast_to(com, omega.shape)))
            jqd[:, d + 3:d + 6] = omega
        for a, d in self.ball:
            wxyz = _unit(qpos[:, a:a + 4], "qpos", a)
            jq[:, a:a + 3], jq[:, a + 3] = wxyz[:, 1:], wxyz[:, 0]
            jqd[:, d:d + 3] = rotate(quat_to_rotmat(wxyz), qvel[:, d:d + 3])
        return jq, jqd


def _unit(quat: np.ndarray, name: str, adr: int) -> np.ndarray:
    q = np.asarray(quat, dtype=np.float64)
    norm = np.linalg.norm(q, axis=1, keepdims=True)
    if not np.all(np.isfinite(norm)) or np.any(norm < 1e-9):
        raise ValueError(f"NewtonBackend.reset_envs: {name}[:, {adr}:{adr + 4}] holds a zero or non-finite quaternion")
    return q / norm


def _is_identity(xf, tol: float = 1e-6) -> bool:
    v = np.asarray(xf, dtype=np.float64)  # (px, py, pz, qx, qy, qz, qw)
    return bool(np.all(np.abs(v[:3]) < tol) and (np.all(np.abs(v[3:6]) < tol) and abs(abs(v[6]) - 1) < tol))


def build_converter(m: mujoco.MjModel, art, newton) -> StateConverter:
    """Check that Newton's import of one world matches MuJoCo's model (joints, bodies, layout) and
    build the state converter; ``ValueError`` naming what differs or is unsupported."""
    JT = newton.JointType
    names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) or f"joint{j}" for j in range(m.njnt)]
    # Newton adds a FIXED joint (no coordinates) for every body MuJoCo welds to its parent
    moving = [i for i, t in enumerate(art.joint_type) if int(t) != int(JT.FIXED)]
    labels = [art.joint_label[i].rsplit("/", 1)[-1] for i in moving]
    if labels != names or art.joint_coord_count != m.nq or art.joint_dof_count != m.nv:
        raise ValueError(
            f"NewtonBackend: Newton's import has joints {labels} ({art.joint_coord_count} coordinates, "
            f"{art.joint_dof_count} DOFs), MuJoCo's {names} ({m.nq}, {m.nv}); the layouts must match"
        )
    bodies = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b) or "" for b in range(1, m.nbody)]
    blabels = [lab.rsplit("/", 1)[-1] for lab in art.body_label]
    if len(blabels) != len(bodies) or any(b and b != lab for b, lab in zip(bodies, blabels)):  # unnamed: any
        raise ValueError(f"NewtonBackend: Newton's import has bodies {blabels}, MuJoCo's {bodies}; they must match")
    free, ball = [], []
    for jm in range(m.njnt):
        kind, j = int(m.jnt_type[jm]), moving[jm]
        a, d = int(m.jnt_qposadr[jm]), int(m.jnt_dofadr[jm])
        if int(art.joint_q_start[j]) != a or int(art.joint_qd_start[j]) != d:
            raise ValueError(f"NewtonBackend: joint {names[jm]!r} has another address in Newton's layout")
        if kind == int(mujoco.mjtJoint.mjJNT_FREE):
            ok = (int(art.joint_type[j]) == int(JT.FREE) and art.joint_parent[j] == -1
                  and _is_identity(art.joint_X_p[j]) and _is_identity(art.joint_X_c[j]))
            if not ok:
                raise ValueError(
                    f"NewtonBackend: free joint {names[jm]!r} must be a floating base (parent: the world, no "
                    "joint frame offset) for the MuJoCo <-> Newton state conversion"
                )
            free.append((a, d, np.asarray(art.body_com[int(art.joint_child[j])], dtype=np.float64)))
        elif kind == int(mujoco.mjtJoint.mjJNT_BALL):
            xc = np.asarray(art.joint_X_c[j], dtype=np.float64)
            if int(art.joint_type[j]) != int(JT.BALL) or not _is_identity(np.r_[0.0, 0.0, 0.0, xc[3:]]):
                raise ValueError(f"NewtonBackend: ball joint {names[jm]!r} has a rotated child frame in Newton's import")
            ball.append((a, d))
    return StateConverter(free, ball)
