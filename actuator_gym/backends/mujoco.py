"""MuJoCo backend for one ``MjData`` (CPU, the ``mujoco`` package; ``num_envs = 1``).

    backend = MujocoBackend(model, data, joint_names=["hip_1", "ankle_1"])
    q, qd = backend.joint_pos(), backend.joint_vel()     # (1, J) views into data.qpos / data.qvel
    backend.set_joint_effort(effort)                     # written to data.qfrc_applied[dof_adr]
    backend.step()                                       # one mj_step

Efforts enter as generalized forces on the joints' DOFs (``qfrc_applied``), so the model's
actuator ``ctrlrange`` and ``gear`` never clip or scale them; the actuator model is the limit.

Reading the state: when the joints' ``qpos``/``qvel`` addresses are contiguous (the usual case,
joints in model order) ``joint_pos``/``joint_vel`` return cached zero-copy views; otherwise a
fancy-index copy (``qpos[adr]``, ~0.5 us at 8 joints, faster than ``np.take(..., out=)``).
"""

from __future__ import annotations

import os
import re
from typing import Any, Sequence

import mujoco
import numpy as np
import torch

from .._checks import check_patterns
from .base import JointInfo, PhysicsBackend
from .mujoco_dynamics import MassMatrixTerms
from .mujoco_friction import single_joint_loads

__all__ = ["MujocoBackend", "OffscreenRenderer", "joint_info", "one_dof_joint_names", "actuated_joints", "motor_peaks", "candidate_joints", "DIVERGED",
           "take_diverged"]

_HINGE = int(mujoco.mjtJoint.mjJNT_HINGE)
_SLIDE = int(mujoco.mjtJoint.mjJNT_SLIDE)
_TRN_JOINT = int(mujoco.mjtTrn.mjTRN_JOINT)
_KIND = {_HINGE: "hinge", _SLIDE: "slide"}


DIVERGED = slice(int(mujoco.mjtWarning.mjWARN_BADQPOS), int(mujoco.mjtWarning.mjWARN_BADQACC) + 1)
"""MuJoCo's warnings of a diverged simulation (``mjWARN_BADQPOS``, ``BADQVEL``, ``BADQACC``: a NaN, inf
or huge ``qpos``, ``qvel`` or ``qacc``), after which ``mj_step`` resets the world (``mj_resetData``)
and goes on: the episode is over, whatever its state now says."""


def take_diverged(counts: np.ndarray) -> Any:
    """Whether MuJoCo flagged a diverged simulation (:data:`DIVERGED`) since the counters were last
    taken, and clears them: ``counts`` is ``MjData.warning.number`` (a ``bool``) or the
    ``(num_worlds, mjNWARNING)`` counters of a batch (a ``(num_worlds,)`` bool array). Cleared
    because MuJoCo's reset clears them too: a world that diverges at every step counts 1 each time."""
    if counts.ndim == 1:  # one MjData: ~0.3 us (the wrapper's every step; one numpy call)
        hit = any(counts.tolist()[DIVERGED])
        if hit:
            counts[DIVERGED] = 0
        return hit
    hit = counts[:, DIVERGED].any(axis=1)
    if hit.any():
        counts[hit, DIVERGED] = 0
    return hit


def _joint_name(model: mujoco.MjModel, j: int) -> str:
    return mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j) or f"joint{j}"


def one_dof_joint_names(model: mujoco.MjModel) -> list[str]:
    """Names of the model's hinge and slide joints, in model order."""
    return [_joint_name(model, j) for j in range(model.njnt) if int(model.jnt_type[j]) in _KIND]


def joint_info(model: mujoco.MjModel, joint_names: Sequence[str] | None = None) -> JointInfo:
    """:class:`JointInfo` for ``joint_names`` (in that order; None = every hinge/slide joint in model
    order). A name that is not a joint of the model, or a free/ball joint (not one DOF), is a
    ``ValueError``. Reused by batched MuJoCo backends."""
    all_names = [_joint_name(model, j) for j in range(model.njnt)]
    if joint_names is None:
        joint_names = one_dof_joint_names(model)
    ids = []
    for n in joint_names:
        if n not in all_names:
            raise ValueError(
                f"joint {n!r} is not a joint of the MuJoCo model; its 1-DOF joints are {one_dof_joint_names(model)}"
            )
        j = all_names.index(n)
        if int(model.jnt_type[j]) not in _KIND:
            raise ValueError(
                f"joint {n!r} is a {mujoco.mjtJoint(int(model.jnt_type[j])).name} joint with no single DOF; "
                f"only hinge and slide joints can be actuated; the model's are {one_dof_joint_names(model)}"
            )
        ids.append(j)
    if len(set(ids)) != len(ids):
        raise ValueError(f"joint_names has duplicates: {list(joint_names)}")
    ids_a = np.asarray(ids, dtype=np.intp)
    limited = model.jnt_limited[ids_a].astype(bool) if ids else np.zeros(0, bool)
    rng = model.jnt_range[ids_a].astype(np.float64).reshape(-1, 2)
    rng[~limited] = (-np.inf, np.inf)
    return JointInfo(
        names=[all_names[j] for j in ids],
        qpos_adr=model.jnt_qposadr[ids_a].astype(np.intp),
        dof_adr=model.jnt_dofadr[ids_a].astype(np.intp),
        range=rng,
        default_pos=model.qpos0[model.jnt_qposadr[ids_a]].astype(np.float64),
        kind=[_KIND[int(model.jnt_type[j])] for j in ids],
        joint_ids=ids_a,
    )


def actuated_joints(model: mujoco.MjModel) -> list[tuple[int, str]]:
    """``(actuator id, joint name)`` for the model's actuators that drive a hinge or slide joint
    directly (transmission type ``joint``), in actuator order."""
    out = []
    for a in range(len(model.actuator_trntype)):  # actuators (MuJoCo 4: ``nu`` counts controls, several per actuator)
        if int(model.actuator_trntype[a]) != _TRN_JOINT:
            continue
        j = int(model.actuator_trnid[a, 0])
        if int(model.jnt_type[j]) in _KIND:
            out.append((a, _joint_name(model, j)))
    return out


def motor_peaks(model: Any, names: Sequence[str], num_actuators: int | None = None) -> np.ndarray:
    """``(len(names),)`` the peak effort ``gear * max|ctrlrange|`` [N·m or N] (``gear`` alone where
    the control is unlimited) of the model's own joint actuator of each joint (among its first
    ``num_actuators`` actuators; None: all), 1.0 where there is none or it is zero."""
    peaks, pos = np.ones(len(names)), {n: k for k, n in enumerate(names)}
    for a, name in actuated_joints(model):
        if name in pos and (num_actuators is None or a < num_actuators):
            cr = model.actuator_ctrlrange[a]
            peak = abs(model.actuator_gear[a, 0]) * (max(abs(cr[0]), abs(cr[1])) if model.actuator_ctrllimited[a] else 1.0)
            if peak > 0:
                peaks[pos[name]] = peak
    return peaks


def candidate_joints(model: mujoco.MjModel, patterns: Sequence[str] | str | None, owner: str) -> list[str]:
    """The joints ``patterns`` names (regexes full-matched against the model's joint names, in the
    patterns' order; each must match) or, for None, the joints the model's own actuators drive, in
    actuator order; a ``ValueError`` / ``TypeError`` naming ``owner`` otherwise."""
    if patterns is None:
        cand = list(dict.fromkeys(name for _, name in actuated_joints(model)))
        if not cand:
            raise ValueError(f"{owner}: the env's MuJoCo actuators drive no hinge/slide joint; pass joints=[...]")
        return cand
    patterns = check_patterns(patterns, "joints", owner, " (or None: the env's actuated joints)")
    names = [_joint_name(model, j) for j in range(model.njnt)]
    out: list[str] = []
    for p in patterns:
        try:
            rx = re.compile(p)
        except re.error as exc:
            raise ValueError(f"{owner}: joints: invalid regular expression {p!r}: {exc}") from None
        hits = [n for n in names if rx.fullmatch(n)]
        if not hits:
            raise ValueError(f"{owner}: joints: {p!r} matches no joint of the model; joints are {names}")
        out += [h for h in hits if h not in out]
    return out


class OffscreenRenderer:
    """A ``mujoco.Renderer`` kept across calls (re-created when the image size changes) plus a
    scratch ``MjData`` to draw worlds of a batched backend; shared by the batched backends."""

    def __init__(self, model: mujoco.MjModel):
        self.scratch = mujoco.MjData(model)
        self._renderer = None
        self._size: tuple[int, int] | None = None

    def draw(self, data: mujoco.MjData, width: int, height: int, camera: int | str, model: mujoco.MjModel) -> np.ndarray:
        """An ``(height, width, 3)`` uint8 image of ``data``; ``model`` builds the GL context when
        the renderer is (re)created."""
        if self._size != (width, height):
            self.close()
            try:
                self._renderer = mujoco.Renderer(model, height, width)
            except Exception as exc:  # no GL context
                from ..headless_gl import headless_gl_problem

                why = headless_gl_problem() or f"MUJOCO_GL={os.environ.get('MUJOCO_GL')!r}: {exc}"
                raise RuntimeError(f"render: no OpenGL backend available ({why})") from exc
            self._size = (width, height)
        self._renderer.update_scene(data, camera=camera)
        return self._renderer.render()

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
        self._renderer, self._size = None, None


def _view_or_index(vec: np.ndarray, adr: np.ndarray):
    """A ``(1, J)`` view of ``vec[adr]`` when the addresses are contiguous, else the index array."""
    if len(adr) and np.array_equal(adr, np.arange(adr[0], adr[0] + len(adr))):
        return vec[int(adr[0]) : int(adr[0]) + len(adr)].reshape(1, -1), None
    return None, adr


class MujocoBackend(PhysicsBackend):
    """:class:`PhysicsBackend` over one ``MjModel``/``MjData`` pair (``num_envs = 1``, CPU, float64).

    Args:
        model, data: the MuJoCo model and its data (not copied; the backend reads and writes them).
        joint_names: the joints to expose, in this order (None = every hinge/slide joint in model
            order). Model order gives zero-copy state views.
    """

    def __init__(self, model: mujoco.MjModel, data: mujoco.MjData, joint_names: Sequence[str] | None = None):
        self.model, self.data = model, data
        self.num_envs = 1
        self.physics_dt = float(model.opt.timestep)
        self.device = torch.device("cpu")
        self.joints = joint_info(model, joint_names)
        if len(self.joints) == 0:
            raise ValueError("MujocoBackend: the model has no hinge or slide joint to actuate")
        # data.qpos & co. are numpy views of MjData's buffers, valid for the lifetime of `data`
        self._qpos_view, self._qpos_idx = _view_or_index(data.qpos, self.joints.qpos_adr)
        self._qvel_view, self._qvel_idx = _view_or_index(data.qvel, self.joints.dof_adr)
        self._qfrc_view, self._qfrc_idx = _view_or_index(data.qfrc_applied, self.joints.dof_adr)
        self._joint_ids = self.joints.joint_ids
        self._qpos, self._qvel, self._qfrc = data.qpos, data.qvel, data.qfrc_applied  # cached views
        self._mass: MassMatrixTerms | None = None  # created on the first mass_matrix_terms call
        self._scratch: mujoco.MjData | None = None  # mj_setConst's workspace (set_joint_armature)

    # -- state ------------------------------------------------------------------------------
    def joint_pos(self) -> np.ndarray:
        """``(1, J)`` joint positions [rad or m]; a live view when the addresses are contiguous."""
        if self._qpos_view is not None:
            return self._qpos_view
        return self._qpos[self._qpos_idx].reshape(1, -1)

    def joint_vel(self) -> np.ndarray:
        """``(1, J)`` joint velocities [rad/s or m/s]; a live view when the addresses are contiguous."""
        if self._qvel_view is not None:
            return self._qvel_view
        return self._qvel[self._qvel_idx].reshape(1, -1)

    def set_joint_effort(self, effort: Any) -> None:
        """Write ``(1, J)`` efforts [N·m or N] to ``qfrc_applied`` on the joints' DOFs (other DOFs untouched)."""
        if not isinstance(effort, np.ndarray):
            effort = effort.detach().cpu().numpy() if isinstance(effort, torch.Tensor) else np.asarray(effort, np.float64)
        if self._qfrc_view is not None:
            np.copyto(self._qfrc_view, effort)
        else:
            self._qfrc[self._qfrc_idx] = effort[0] if effort.ndim == 2 else effort

    def step(self) -> None:
        """One ``mj_step`` (any integrator, RK4 included)."""
        mujoco.mj_step(self.model, self.data)

    def diverged(self) -> np.ndarray:
        """``(1,)`` bool: whether MuJoCo found the simulation diverged since the last call (its
        warnings, cleared by the call: :func:`take_diverged`)."""
        return np.array([take_diverged(self.data.warning.number)])

    def mass_matrix_terms(self, joint_ids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """``(inverse_mass (1, J, J), bias_force (1, J))`` of the listed joints (indices into
        :attr:`joints`) at the current state: rows/columns of ``M^-1`` (armature included; the
        block of the inverse, so coupling through other DOFs is kept) and ``qfrc_bias`` (Coriolis,
        centrifugal, gravity) [N·m or N]; fresh float64 arrays, computed by
        :class:`~actuator_gym.backends.mujoco_dynamics.MassMatrixTerms` (shared with the batched
        backend).

        After ``mj_step`` the data's ``M``/``qfrc_bias`` belong to the state before the step, so
        this runs MuJoCo's position and velocity stages (``mj_fwdPosition``, ``mj_fwdVelocity``)
        at the current state first; the next ``mj_step`` recomputes them from the same state, so
        the trajectory is unchanged. Cost per call on a 2-core machine (Gymnasium's Ant-v5, 8
        hinges): about 14 us (4 us for the two stages, 8 us for the terms), against 8-36 us per
        ``mj_step``; the terms cost ~3.5 us more than the ``mj_solveM`` solve used before the two
        MuJoCo backends shared :class:`MassMatrixTerms`."""
        ids = self._check_joint_ids(joint_ids)
        mujoco.mj_fwdPosition(self.model, self.data)
        mujoco.mj_fwdVelocity(self.model, self.data)
        if self._mass is None:
            self._mass = MassMatrixTerms(self.model, 1)
        return self._mass(self.data.M[None], self.data.qfrc_bias[None], self.joints.dof_adr[ids])

    # -- friction-budget groups (BAM servos): mujoco_friction.py -----------------------------
    def joint_loads(self) -> np.ndarray:
        """``(1, J)`` external torques [N·m or N] on the joints at the last forward:
        ``-qfrc_bias + qfrc_constraint`` less the joints' own dry friction (:mod:`.mujoco_friction`)."""
        return single_joint_loads(self.model, self.data, self.joints.dof_adr)

    def set_joint_friction(self, cols: Any, frictionloss: np.ndarray, damping: np.ndarray) -> None:
        """``dof_frictionloss`` [N·m] and ``dof_damping`` [N·m·s/rad] of the joints ``cols`` (indices into
        :attr:`joints`) for the coming substeps, from ``(1, len(cols))`` arrays."""
        dofs = self.joints.dof_adr[cols]
        self.model.dof_frictionloss[dofs] = frictionloss[0]
        self.model.dof_damping[dofs] = damping[0]

    def set_joint_armature(self, cols: Any, armature: np.ndarray, env_ids: Any = None) -> None:
        """``dof_armature`` [kg·m²] of the joints ``cols`` from a ``(1, len(cols))`` array, then MuJoCo's
        constants (``mj_setConst``, on a scratch ``MjData``: the env's state is untouched)."""
        dofs = self.joints.dof_adr[cols]
        if np.array_equal(self.model.dof_armature[dofs], armature[0]):
            return
        self.model.dof_armature[dofs] = armature[0]
        if self._scratch is None:
            self._scratch = mujoco.MjData(self.model)
        mujoco.mj_setConst(self.model, self._scratch)
