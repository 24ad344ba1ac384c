"""The physics-backend interface: what wrappers and tasks need from a physics engine.

A backend owns ``num_envs`` worlds of one model and exposes the state of its 1-DOF joints
(hinges and slides) as ``(num_envs, num_joints)`` arrays in the model's joint order. The actuator
runtime never talks to an engine directly; wrappers and tasks move data between the two:

    q, qd = backend.joint_pos(), backend.joint_vel()          # before the substep
    effort = actuators.compute(joint_pos=q, joint_vel=qd, dt=backend.physics_dt)
    backend.set_joint_effort(effort)                          # generalized forces on the joints' DOFs
    backend.step()                                            # one physics substep for every world

Implementations: :class:`~actuator_gym.backends.mujoco.MujocoBackend` (one ``MjData``, CPU; used by
``ActuatorWrapper`` on Gymnasium's MuJoCo envs), :class:`~actuator_gym.backends.mujoco_batch.MujocoBatchBackend`
(N worlds stepped in C, CPU), and the Warp backends
:class:`~actuator_gym.backends.mujoco_warp.MujocoWarpBackend` and
:class:`~actuator_gym.backends.newton.NewtonBackend` (Warp's CPU device or CUDA). Wrappers and
models must not depend on which one runs.

:class:`PhysicsBackend` is the abstract base all four derive from (the four methods every backend
implements, plus shared checks). The full contract each kind of backend keeps -- what the wrapper,
the task layer and the device loop call -- is written down as ``typing.Protocol`` classes in
:mod:`actuator_gym.backends.protocols` (``BatchedBackend``,
``DeviceBackend``), and ``tests/backends/test_backend_contract.py`` checks every backend against them.
"""

from __future__ import annotations

import abc
from typing import Any, Sequence

import torch

__all__ = ["PhysicsBackend", "JointInfo", "env_index", "check_num_envs"]


def env_index(env_ids: Any, num_envs: int, dtype=None):
    """Validated env ids as a 1-D numpy integer array (None stays None): ids, a sequence, an array,
    a tensor, or a boolean mask of shape ``(num_envs,)``."""
    import numpy as np

    if env_ids is None:
        return None
    ids = np.asarray(env_ids.cpu() if isinstance(env_ids, torch.Tensor) else env_ids)
    if ids.dtype == np.bool_:
        if ids.shape != (num_envs,):
            raise ValueError(f"env_ids: a boolean mask needs shape ({num_envs},), got {ids.shape}")
        ids = np.flatnonzero(ids)
    ids = ids.reshape(-1).astype(dtype or np.int64)
    if ids.size and (ids.min() < 0 or ids.max() >= num_envs):
        raise ValueError(f"env_ids: ids must lie in [0, {num_envs - 1}], got {ids.tolist()}")
    return ids


def check_num_envs(owner: str, num_envs: Any) -> int:
    """``num_envs`` as an ``int``, or ``ValueError`` naming ``owner`` unless it is an integer >= 1."""
    import numpy as np

    if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
        raise ValueError(f"{owner}: num_envs must be an integer >= 1, got {num_envs!r}")
    return int(num_envs)


class JointInfo:
    """Static description of the actuatable joints of a model (model joint order).

    Attributes:
        names: joint names, ``(num_joints,)``.
        qpos_adr: index of each joint's coordinate in the model's position vector.
        dof_adr: index of each joint's degree of freedom in the model's velocity/force vectors.
        range: ``(num_joints, 2)`` position limits [rad or m]; ``(-inf, inf)`` where unlimited.
        default_pos: ``(num_joints,)`` the model's default pose [rad or m].
        kind: ``"hinge"`` or ``"slide"`` per joint.
        joint_ids: ``(num_joints,)`` each joint's id in the MuJoCo model (None where not known).
    """

    def __init__(self, names, qpos_adr, dof_adr, range, default_pos, kind, joint_ids=None):
        self.names = tuple(names)
        self.qpos_adr = qpos_adr
        self.dof_adr = dof_adr
        self.range = range
        self.default_pos = default_pos
        self.kind = tuple(kind)
        self.joint_ids = joint_ids

    def __len__(self) -> int:
        return len(self.names)

    def index(self, names: Sequence[str]) -> list[int]:
        missing = [n for n in names if n not in self.names]
        if missing:
            raise ValueError(f"unknown joint(s) {missing}; the model's 1-DOF joints are {list(self.names)}")
        return [self.names.index(n) for n in names]


class PhysicsBackend(abc.ABC):
    """Batched physics for the actuator runtime. Shapes are ``(num_envs, num_joints)``.

    ``joint_pos``/``joint_vel`` return arrays that are valid until the next ``step``/``reset``
    (views where the engine allows it). ``set_joint_effort`` sets the generalized force applied on
    each joint's DOF during the following substeps until set again; it bypasses the model's
    actuator ``ctrlrange`` (the actuator model is the limit). ``step`` advances every world by one
    physics substep of ``physics_dt`` seconds.
    """

    num_envs: int
    physics_dt: float
    joints: JointInfo
    device: torch.device

    @property
    def joint_names(self) -> tuple[str, ...]:
        return self.joints.names

    @abc.abstractmethod
    def joint_pos(self) -> Any:
        """Measured joint positions [rad or m], ``(num_envs, num_joints)``."""

    @abc.abstractmethod
    def joint_vel(self) -> Any:
        """Measured joint velocities [rad/s or m/s], ``(num_envs, num_joints)``."""

    @abc.abstractmethod
    def set_joint_effort(self, effort: Any) -> None:
        """Generalized force [N·m or N] on each joint's DOF for the coming substeps."""

    @abc.abstractmethod
    def step(self) -> None:
        """Advance every world by one physics substep."""

    def mass_matrix_terms(self, joint_ids: Sequence[int]) -> tuple[Any, Any]:
        """``(inverse_mass (num_envs, J, J), bias_force (num_envs, J))`` for the implicit effort mode;
        ``NotImplementedError`` on backends that do not provide them."""
        raise NotImplementedError(f"{type(self).__name__} does not provide mass-matrix terms")

    def diverged(self) -> Any:
        """``(num_envs,)`` bool: the worlds whose simulation diverged since the last call (the task
        ends their episode: ``info["physics_diverged"]``). Default: a non-finite ``qpos`` / ``qvel``
        (the Warp engines carry NaN on); the MuJoCo backends read MuJoCo's own warnings instead (it
        resets a diverged world: :func:`~actuator_gym.backends.mujoco.take_diverged`)."""
        import numpy as np

        q, v = (np.asarray(getattr(self, k)) for k in ("qpos", "qvel"))
        return ~(np.isfinite(q).all(axis=1) & np.isfinite(v).all(axis=1))

    # -- shared checks ---------------------------------------------------------------------------
    def _check_joint_ids(self, joint_ids: Sequence[int]):
        """``joint_ids`` (indices into :attr:`joints`) as a 1-D ``intp`` array, or ``ValueError``."""
        import numpy as np

        ids = np.asarray(joint_ids, dtype=np.intp).reshape(-1)
        if ids.size and (ids.min() < 0 or ids.max() >= len(self.joints)):
            raise ValueError(f"mass_matrix_terms: joint_ids must lie in [0, {len(self.joints) - 1}], got {ids.tolist()}")
        return ids

    def _world_id(self, world_id: int, what: str) -> int:
        """``world_id`` as an ``int`` in ``[0, num_envs)``, or ``ValueError`` naming ``what``."""
        w = int(world_id)
        if not 0 <= w < self.num_envs:
            raise ValueError(f"{what}: world_id must lie in [0, {self.num_envs - 1}], got {world_id}")
        return w
