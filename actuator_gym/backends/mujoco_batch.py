"""``MujocoBatchBackend``: ``num_envs`` worlds of one ``MjModel`` stepped together in C.

The whole batch's state lives in single arrays (``qpos (num_envs, nq)``, ``qvel (num_envs, nv)``,
...) owned by a :class:`mujoco.batch.Batch`; one call advances every world by one substep on a
persistent thread pool, with no Python per world. Chosen over ``mujoco.rollout`` called with
``nstep=1`` and over a Python loop of ``mj_step`` on per-world ``MjData`` by measurement (see
``benchmarks/README.md``, "Batched MuJoCo backend", and ``benchmarks/batched_backend.py``).

    backend = MujocoBatchBackend(model, num_envs=64)
    q, qd = backend.joint_pos(), backend.joint_vel()        # (num_envs, num_joints) copies
    backend.set_joint_effort(effort)                          # -> qfrc_applied on the joints' DOFs
    backend.step()                                            # one substep of every world
    backend.reset_envs([3, 7], qpos=..., qvel=...)            # partial reset; other worlds untouched
    backend.model_field("body_mass")[3, body_id] = 0.7        # per-world model fields
    backend.set_const([3])                                    # after fields mj_setConst reads

Derived fields (``xpos``, ``xquat``, ``cvel``, ``sensordata``, ...) from :meth:`field` describe
the **current** state after :meth:`reset_envs` and after a ``step(derived=True)`` (the default; the
batch then computes the position and velocity stages at the new state). ``step(derived=False)``
skips that pass (about 20 % of an Ant substep): derived fields then describe the state before the
substep, as after ``mj_step``. Tasks pass ``derived=False`` for all but the last substep of a
control step; until a derived field is first bound through :meth:`field`, no such pass runs
at all. Acceleration-dependent fields (``qacc``, ``cacc``, contact forces) are those of the
last substep.

Mass-matrix terms (implicit effort mode): :meth:`mass_matrix_terms` returns ``(M^-1)[dofs, dofs]``
and ``qfrc_bias[dofs]`` of every world at its **current** state, from the batch's ``M`` (the
engine's sparse joint-space inertia, armature included) and ``qfrc_bias``. Once it has been called,
``step(derived=True)`` runs the position/velocity pass inside the step's C call, and the tasks step
with ``derived=True`` every substep; after a ``step(derived=False)`` (or ``set_const``) it runs that
pass itself with ``forward``. The dense inverse block is one batched numpy solve over all worlds
(no per-world Python loop): :class:`~actuator_gym.backends.mujoco_dynamics.MassMatrixTerms`, the
same code the single-``MjData`` backend uses. Measured with ``benchmarks/implicit_effort.py`` (Ant,
8 hinges, 2-core reference machine): step + terms 39 -> 78 us at one world, 2388 -> 2998 us at 64
worlds (~10 us per world).

Joints: ``joint_info(model)`` from ``backends/mujoco.py`` (shared with the single-``MjData``
backend) lists the model's 1-DOF joints (hinge and slide) in model order; free and ball joints are
left to the task (``qpos``/``qvel`` give them).

Rendering: :meth:`render` draws one world with ``mujoco.Renderer``; it needs an OpenGL backend
(``MUJOCO_GL=egl`` or ``osmesa``) and raises ``RuntimeError`` naming the problem otherwise.
"""

from __future__ import annotations

import functools
import os
from typing import Any, Sequence

import mujoco
import mujoco.batch
import numpy as np
import torch

from .base import PhysicsBackend, check_num_envs, env_index
from .mujoco import OffscreenRenderer, joint_info, take_diverged  # shared with the single-MjData backend
from .mujoco_dynamics import MassMatrixTerms
from .mujoco_friction import BatchFrictionForce

__all__ = ["MujocoBatchBackend", "joint_info", "gl_available"]

@functools.lru_cache(maxsize=1)
def gl_available() -> bool:
    """Whether ``mujoco.Renderer`` can make a context here (tried once per process: creating and
    destroying GL contexts over and over is what some EGL drivers abort on)."""
    if not os.environ.get("MUJOCO_GL") and not os.environ.get("DISPLAY"):
        return False
    try:
        model = mujoco.MjModel.from_xml_string("<mujoco><worldbody/></mujoco>")
        r = mujoco.Renderer(model, 8, 8)
        r.close()
        return True
    except Exception:
        return False


def _index(idx: np.ndarray):
    """A slice where the addresses are contiguous (views instead of copies on read)."""
    if len(idx) and np.array_equal(idx, np.arange(idx[0], idx[0] + len(idx))):
        return slice(int(idx[0]), int(idx[0]) + len(idx))
    return idx


SERIAL_WORLDS = 8
"""Resets of at most this many worlds run world by world on the caller's thread
(:meth:`MujocoBatchBackend.reset_envs`): a control step's autoresets are usually a few worlds."""


class MujocoBatchBackend(PhysicsBackend):
    """``num_envs`` copies of ``model`` stepped in C by ``mujoco.batch.Batch``.

    Args:
        model: the compiled model (its ``opt.timestep`` is the substep ``physics_dt`` [s]).
        num_envs: number of worlds.
        nthread: threads of the batch's pool (0: all CPUs). Default: 1 below 128 worlds, else
            ``min(2, os.cpu_count())`` (measured on the 2-core reference machine: a second
            thread only pays off for large batches; see benchmarks/README.md).
        persistent: keep one ``MjData`` per world (required for models with sleep; measured
            ~15 % slower on Ant). Default False.
    """

    _STATE = frozenset(("time", "qpos", "qvel", "act", "history", "qacc_warmstart", "ctrl", "qfrc_applied",
                        "xfrc_applied", "eq_active", "mocap_pos", "mocap_quat", "userdata", "plugin_state", "plastic"))

    def __init__(self, model: mujoco.MjModel, num_envs: int, nthread: int | None = None, persistent: bool = False):
        num_envs = check_num_envs("MujocoBatchBackend", num_envs)
        if nthread is None:
            nthread = 1 if num_envs < 128 else min(2, os.cpu_count() or 1)
        if nthread < 0:
            raise ValueError(f"MujocoBatchBackend: nthread must be >= 0, got {nthread}")
        self.model = model
        self.num_envs = int(num_envs)
        self.physics_dt = float(model.opt.timestep)
        self.device = torch.device("cpu")
        self.joints = joint_info(model)
        self.batch = mujoco.batch.Batch(model, self.num_envs, nthread=int(nthread), persistent=bool(persistent))
        b = self.batch
        # state (live views of the batch's rows)
        self.qpos = b.bind("qpos")
        self.qvel = b.bind("qvel")
        self.act = b.bind("act")
        self.ctrl = b.bind("ctrl")
        self.qfrc_applied = b.bind("qfrc_applied")
        self.xfrc_applied = b.bind("xfrc_applied")
        self.time = b.bind("time")
        self._warnings = b.warning[..., 1]  # (num_envs, mjNWARNING) MuJoCo's warning counters, per world
        self._qadr = _index(self.joints.qpos_adr)
        self._dadr = _index(self.joints.dof_adr)
        self._stage = int(mujoco.mjtStage.mjSTAGE_VEL)
        self._renderer: OffscreenRenderer | None = None
        self._bound: set[str] = set()
        self._per_world = False  # set once a model field is expanded
        self._model_copy: mujoco.MjModel | None = None
        self._mass: dict[str, Any] | None = None  # bound M / qfrc_bias and the terms, once used
        self._derived_current = True  # whether bound derived fields describe the current state
        self._friction: dict[str, Any] | None = None  # friction-budget groups' arrays, once joint_loads is called
        b.reset(stage=self._stage)

    # -- PhysicsBackend ----------------------------------------------------------------------
    def joint_pos(self) -> np.ndarray:
        """Joint positions [rad or m], ``(num_envs, num_joints)`` float64 (a copy)."""
        return np.array(self.qpos[:, self._qadr])

    def joint_vel(self) -> np.ndarray:
        """Joint velocities [rad/s or m/s], ``(num_envs, num_joints)`` float64 (a copy)."""
        return np.array(self.qvel[:, self._dadr])

    def set_joint_effort(self, effort: Any) -> None:
        """Generalized force [N·m or N] on each joint's DOF (``qfrc_applied``), held until set again."""
        e = effort.detach().cpu().numpy() if isinstance(effort, torch.Tensor) else np.asarray(effort)
        if e.shape != (self.num_envs, len(self.joints)):
            raise ValueError(
                f"MujocoBatchBackend.set_joint_effort: effort must have shape ({self.num_envs}, "
                f"{len(self.joints)}) (num_envs, num_joints), got {e.shape}"
            )
        self.qfrc_applied[:, self._dadr] = e

    def step(self, nstep: int = 1, derived: bool = True) -> None:
        """Advance every world by ``nstep`` substeps (one C call). ``derived=True`` makes the derived
        fields (``xpos``, ``cvel``, ``sensordata``, ...) describe the new state. While no derived
        field has been bound through :meth:`field` the pass is skipped (nothing would read it;
        binding one computes it then), which saves about 20 % of an Ant substep."""
        stage = self._stage if derived and (self._bound or self._mass is not None) else 0
        if self._friction is not None:  # the velocity the step's forward reads (joint_loads)
            if nstep != 1:
                raise ValueError("MujocoBatchBackend.step: friction-budget groups (BAM servos) step one substep at a time")
            self._friction["qvel"][:] = self.qvel[:, self._dadr]
        self.batch.step(nstep=int(nstep), stage=stage)
        self._derived_current = stage != 0

    def diverged(self) -> np.ndarray:
        """``(num_envs,)`` bool: the worlds MuJoCo found diverged since the last call or their reset
        (a NaN, inf or huge ``qpos``, ``qvel`` or ``qacc``, after which it reset the world to the model's
        defaults and went on); from the batch's per-world warning counters, which the call clears
        (:func:`~actuator_gym.backends.mujoco.take_diverged`)."""
        return take_diverged(self._warnings)

    # -- state access ------------------------------------------------------------------------
    def field(self, name: str) -> np.ndarray:
        """A live ``(num_envs, ...)`` view of an ``MjData`` field (``xpos``, ``xquat``, ``cvel``,
        ``sensordata``, ``qacc``, ...). State fields are writable; derived ones read-only."""
        if name in self._STATE or name in self._bound:
            return self.batch.bind(name)
        arr = self.batch.bind(name)
        self._bound.add(name)
        # a derived field bound between calls reads zero until the next call: fill it now
        self.batch.forward(stage=self._stage)
        self._derived_current = True
        return arr

    def output(self, name: str) -> np.ndarray:
        """A live read-only ``(num_envs, ...)`` view of an ``MjData`` output every substep computes
        (``actuator_force``, ``actuator_length``, ``actuator_velocity``, ...): the **last substep's**
        values after a ``step(derived=False)`` (as after ``mj_step``), refreshed by every batch call.
        Unlike :meth:`field` it asks for no derived pass (native execution reads the actuators'
        outputs this way, then calls :meth:`refresh_derived`)."""
        return self.batch.bind(name)

    def refresh_derived(self) -> None:
        """Make the derived fields bound through :meth:`field` describe the current state (after a
        ``step(derived=False)``); nothing when none is bound. It overwrites :meth:`output` views
        with values of the pass, so read those first."""
        if (self._bound or self._mass is not None) and not self._derived_current:
            self.batch.forward(stage=self._stage)
            self._derived_current = True

    def mass_matrix_terms(self, joint_ids: Sequence[int], refresh: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """``(inverse_mass (num_envs, J, J), bias_force (num_envs, J))`` of the listed joints
        (indices into :attr:`joints`) at every world's current state: the block of ``M^-1``
        (armature included; the block of the inverse, so coupling through other DOFs such as a
        floating base is kept) and ``qfrc_bias`` (Coriolis, centrifugal, gravity) [N·m or N].

        The position/velocity pass runs when the derived fields are stale (after a
        ``step(derived=False)`` or ``set_const``); pass ``refresh=True`` after writing ``qpos`` /
        ``qvel`` or model fields directly. Fresh float64 arrays, computed by
        :class:`~actuator_gym.backends.mujoco_dynamics.MassMatrixTerms` (shared with the
        single-``MjData`` backend)."""
        ids = self._check_joint_ids(joint_ids)
        mm = self._mass
        if mm is None:
            mm = self._mass = {
                "M": self.batch.bind("M"),
                "bias": self.batch.bind("qfrc_bias"),
                "terms": MassMatrixTerms(self.model, self.num_envs),
            }
            refresh = True  # bound just now: the arrays read zero until the next call
        if refresh or not self._derived_current:
            self.batch.forward(stage=self._stage)
            self._derived_current = True
        return mm["terms"](mm["M"], mm["bias"], self.joints.dof_adr[ids])

    # -- friction-budget groups (BAM servos): mujoco_friction.py ----------------------------
    def joint_loads(self) -> np.ndarray:
        """``(num_envs, J)`` external torques [N·m or N] on the joints at every world's last forward:
        ``-qfrc_bias + qfrc_constraint`` less the joints' own dry friction, which MuJoCo's constraint law
        gives (:mod:`.mujoco_friction`; ``ValueError`` for a model with noslip). From the first call on,
        every step runs one substep per call and resets compute the accelerations (a live view set up once)."""
        f = self._friction
        if f is None:
            f = self._friction = {
                "force": BatchFrictionForce(self.model, self.joints.dof_adr, "MujocoBatchBackend"),
                "bias": self.batch.bind("qfrc_bias"), "constraint": self.batch.bind("qfrc_constraint"),
                "qacc": self.batch.bind("qacc"), "qvel": np.array(self.qvel[:, self._dadr]),
                "frictionloss": self.model_field("dof_frictionloss"), "damping": self.model_field("dof_damping"),
            }
            self.batch.forward(stage=int(mujoco.mjtStage.mjSTAGE_ACC))  # the outputs describe the current state
            self._derived_current = True
        d = self._dadr
        weights = self.batch.expanded("dof_invweight0")
        weights = self.model.dof_invweight0[d][None] if weights is None else weights[:, d]
        friction = f["force"](f["qacc"][:, d], f["qvel"], f["frictionloss"][:, d], weights)
        return f["constraint"][:, d] - f["bias"][:, d] - friction

    def set_joint_friction(self, cols: Any, frictionloss: np.ndarray, damping: np.ndarray) -> None:
        """Per-world ``dof_frictionloss`` [N·m] and ``dof_damping`` [N·m·s/rad] of the joints ``cols``
        (indices into :attr:`joints`) for the coming substeps, from ``(num_envs, len(cols))`` arrays."""
        dofs = self.joints.dof_adr[cols]
        self.model_field("dof_frictionloss")[:, dofs] = frictionloss
        self.model_field("dof_damping")[:, dofs] = damping

    def set_joint_armature(self, cols: Any, armature: np.ndarray, env_ids: Any = None) -> None:
        """Per-world ``dof_armature`` [kg·m²] of the joints ``cols`` for ``env_ids`` (None: all) from a
        ``(num_envs, len(cols))`` array, then their worlds' constants (:meth:`set_const`)."""
        dofs, ids = self.joints.dof_adr[cols], self._ids(env_ids)
        rows = slice(None) if ids is None else ids
        field = self.model_field("dof_armature")
        if np.array_equal(field[rows][:, dofs], armature[rows]):
            return
        field[np.arange(self.num_envs)[rows][:, None], dofs[None, :]] = armature[rows]
        self.set_const(ids)

    def model_field(self, name: str) -> np.ndarray:
        """Per-world values ``(num_envs, ...)`` of a model field (``body_mass``, ``geom_friction``,
        ``dof_damping``, ``opt.gravity``, ...), writable. After writing a field that
        ``mj_setConst`` reads (``body_mass``, ``body_inertia``, ``dof_armature``, ...) call
        :meth:`set_const` for the worlds written."""
        self._per_world = True
        return self.batch.expand(name)

    def set_const(self, env_ids: Any = None) -> None:
        """Recompute the constants derived from model fields for ``env_ids`` (None = all)."""
        self._per_world = True
        self.batch.set_const(self._ids(env_ids))
        self._derived_current = False  # masses/inertias changed: the derived fields are stale

    def reset_envs(
        self,
        env_ids: Any = None,
        qpos: Any = None,
        qvel: Any = None,
        act: Any = None,
        time: Any = None,
    ) -> None:
        """Reset ``env_ids`` (None = all) to the model defaults (time 0, zero warmstart, controls
        and applied forces), then set ``qpos (n, nq)``, ``qvel (n, nv)``, ``act (n, na)``, ``time
        (n,)`` where given, and recompute the derived fields. Other worlds are untouched bit for bit.
        Up to :data:`SERIAL_WORLDS` worlds are reset one batch call each, on the caller's thread
        (a control step's few autoresets: no wake-up of the batch's pool; the same results)."""
        ids = self._ids(env_ids)
        n = self.num_envs if ids is None else len(ids)
        if n == 0:
            return
        self._few(self.batch.reset, ids, int(mujoco.mjtStage.mjSTAGE_NONE))
        rows = slice(None) if ids is None else ids
        for name, value, arr in (("qpos", qpos, self.qpos), ("qvel", qvel, self.qvel), ("act", act, self.act)):
            if value is None:
                continue
            v = np.asarray(value, dtype=np.float64)
            shape = (n, arr.shape[1])
            if v.shape != shape:
                raise ValueError(f"MujocoBatchBackend.reset_envs: {name} must have shape {shape}, got {v.shape}")
            arr[rows] = v
        if time is not None:
            self.time[rows] = np.broadcast_to(np.asarray(time, dtype=np.float64), (n,))
        if self._friction is not None:  # joint_loads reads the forward's accelerations and velocities
            self._few(self.batch.forward, ids, int(mujoco.mjtStage.mjSTAGE_ACC))
            self._friction["qvel"][rows] = self.qvel[rows][:, self._dadr]
        else:
            self._few(self.batch.forward, ids, self._stage)
        if ids is None:
            self._derived_current = True

    @staticmethod
    def _few(call: Any, ids: Any, stage: int) -> None:
        """``call(ids, stage=stage)`` (``Batch.reset`` / ``Batch.forward``); up to :data:`SERIAL_WORLDS`
        worlds one call per world, which runs on the caller's thread: waking the batch's pool for a few
        worlds costs more than their work (measured on the shared 2-core machine, quadruped worlds:
        4 worlds in one call 0.37 ms, one world 0.012 ms). The results are the same either way (each
        world's call is independent of the threads)."""
        if ids is not None and 1 < len(ids) <= SERIAL_WORLDS:
            for k in range(len(ids)):
                call(ids[k : k + 1], stage=stage)
        else:
            call(ids, stage=stage)

    def _ids(self, env_ids: Any):
        return env_index(env_ids, self.num_envs, np.int32)

    def data(self, world_id: int = 0, data: mujoco.MjData | None = None, forward: bool = True) -> mujoco.MjData:
        """World ``world_id`` as an ``MjData`` (a copy; writes to it do not reach the batch), with its
        derived fields recomputed by ``mj_forward`` on the world's model when ``forward``."""
        d = self.batch.get_data(int(world_id), data)
        if forward:
            mujoco.mj_forward(self._model_of(int(world_id)), d)
        return d

    def _model_of(self, world_id: int) -> mujoco.MjModel:
        """The shared model, or (after per-world fields were written) a cached copy holding world's."""
        if not self._per_world:
            return self.model
        if self._model_copy is None:
            self._model_copy = self.batch.get_model(world_id)
        return self.batch.get_model(world_id, self._model_copy)

    def world_model(self, world_id: int = 0) -> mujoco.MjModel:
        """World ``world_id``'s model, with its per-world fields (a copy)."""
        return self.batch.get_model(int(world_id))

    # -- rendering ---------------------------------------------------------------------------
    def render(self, world_id: int = 0, width: int = 480, height: int = 480, camera: int | str = -1) -> np.ndarray:
        """An ``(height, width, 3)`` uint8 image of world ``world_id``."""
        world_id = self._world_id(world_id, "render")
        if self._renderer is None:
            self._renderer = OffscreenRenderer(self.model)
            self._render_model = self.batch.get_model(0)  # refreshed in place per world below
        m = self.batch.get_model(int(world_id), self._render_model)
        d = self.batch.get_data(int(world_id), self._renderer.scratch)
        mujoco.mj_forward(m, d)  # derived fields for drawing (a non-persistent batch keeps none)
        return self._renderer.draw(d, width, height, camera, self._render_model)

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
        self._renderer = None
