"""The batched task layer: your MJCF + four functions -> a Gymnasium ``VectorEnv`` with actuators.

A task is a subclass of :class:`BatchedTask` with a :class:`TaskCfg` (or a subclass of it) and
these methods (all vectorized over envs; never loop over envs in Python):

================================  =================================================================
``setup(self)``                   optional; once, after the model, backend and actuators exist:
                                  allocate per-env buffers (``np.zeros(self.num_envs)``).
``sample_reset(self, env_ids,     optional; the reset distribution. Draw from ``rng`` (an ``EnvRandom``,
rng) -> dict | None``             env axis FIRST: row ``j`` from env ``env_ids[j]``'s own stream) for the
                                  ``len(env_ids)`` envs, update buffers at ``env_ids``, return any of
                                  ``{"qpos": (n, nq), "qvel": (n, nv), "act": (n, na)}``
                                  (missing: the model's ``qpos0`` / zeros).
``observe(self) -> (num_envs, D)``  required; a fresh float array; ``D`` fixes the observation space.
``reward(self) -> (num_envs,)``   required.
``terminated(self) -> (num_envs,)``  optional (default: never); bool.
``extra_info(self) -> dict``      optional; ``{key: (num_envs, ...) array}`` added to ``info``.
``actuator_telemetry(self)``       optional; ``{key: (num_envs, ...) array}`` added to
                                  ``info["actuator"]``.
``rotor_group(self, name, cfg,     required when ``cfg.actuators`` has rotor groups (``ThrusterCfg``):
seed) -> RotorGroup``              the group over the model's rotors with the writer that delivers
                                  its thrust (:mod:`actuator_gym.runtime.rotors`); called before ``setup``.
================================  =================================================================

Actuator groups (``cfg.actuators``) are joint groups (actuator configs over the model's 1-DOF
joints: ``self.collection``, an ``ActuatorCollection``) and rotor groups (``ThrusterCfg``:
``self.rotors``, :class:`~actuator_gym.runtime.rotors.RotorGroups`); a task may have either kind or both
(``self.collection`` / ``self.rotors`` is None for a kind it lacks). ``self.actuators``
(:class:`~actuator_gym.runtime.groups.ActuatorGroups`) resets, seeds and reports both. Actions are the joint
actions (below) followed by one action per rotor in ``[-1, 1]``, mapped onto the group's
``thrust_range`` (:func:`~actuator_gym.runtime.rotors.action_to_thrust`).

Inside the methods, read the state from ``self.backend`` (a
:class:`~actuator_gym.backends.mujoco_batch.MujocoBatchBackend`: ``qpos``, ``qvel``,
``joint_pos()``, ``joint_vel()``, ``field("xpos" | "xquat" | "cvel" | "sensordata" | ...)``) and the
step's data from ``self.actions`` (``(num_envs, num_actions)``, clipped, in action units),
``self.telemetry`` (the actuator telemetry of the last control step, below) and
``self.episode_step`` (``(num_envs,)`` control steps since reset).

Stepping. ``step(actions)`` maps actions ``(num_envs, num_actions)`` to targets of
``cfg.action_joints`` -- ``target = action_offset + action_scale * clip(action)`` in the channels
of ``cfg.action_mode`` (``"position"`` [rad or m], ``"velocity"`` [rad/s or m/s], ``"effort"``
feed-forward [N·m or N] or ``"position_velocity"``), position targets clipped into the joint range
-- holds them over the control step, and runs ``cfg.decimation``
substeps; every substep computes the actuators of ALL envs in one ``ActuatorCollection.compute``
call, writes the efforts to ``qfrc_applied`` and steps every world in C. Delays count substeps.
Actions that are non-finite or of the wrong shape raise ``ValueError`` and change nothing.
The map is ``task.action_map``, the wrapper's (:class:`~actuator_gym.runtime.actions.ActionMap`: the same
modes, defaults and clipping): ``cfg.normalize_actions`` (None: unless ``action_scale``,
``action_offset`` or ``action_bounds`` is given) makes the action space ``Box(-1, 1)`` mapped onto
each joint's reachable targets (joint range, or +-the actuator's limit);
``task.action_scale`` / ``task.action_offset`` ``(num_actions,)`` hold the mapping in force.
``add_substep_callback(fn)`` registers ``fn(task, substep_index)`` called after every substep
(recorders, per-substep tests).

Episodes last ``round(cfg.episode_length_s / dt)`` control steps, or ``max_episode_steps`` where given
(``truncated``; ``cfg.random_episode_start``: the first episodes at random clocks). Autoreset follows ``metadata["autoreset_mode"]``: ``NEXT_STEP`` (default: the step
after an episode ends resets that env, its action is ignored, reward 0), ``SAME_STEP`` (ended envs
reset in the same step; ``info["final_obs"]`` (object array) / ``info["final_info"]`` hold their last
obs and info; what skrl's vectorized wrapper assumes: pass it explicitly) or ``DISABLED`` (call
``reset(options={"reset_mask": mask})`` yourself; stepping an ended env raises ``AssertionError``,
as in ``SyncVectorEnv``). Conventions: :mod:`actuator_gym.envs.task_conventions`.

Resets. ``reset(seed=s)`` seeds env ``i`` with ``s + i`` (``seed=[s0, ...]``: ``s_i``); env ``i`` then
rolls out exactly as ``gymnasium.make`` reset with ``s + i`` (per-env streams, :mod:`actuator_gym.randomization.streams`;
draws during steps: ``self.streams.for_envs(ids)``). Resetting env ``i`` re-draws its actuator parameters
(``collection.reset(env_ids)``), model fields (``cfg.model_randomization``) and state; env ``j != i`` keeps its own bit for bit.

``info`` is in Gymnasium's vector format (``(num_envs, ...)`` arrays plus boolean ``_key`` masks):

* ``info["actuator"]`` after ``step``: joint groups' keys (:data:`~actuator_gym.runtime.substep.TELEMETRY`,
  ``(num_envs, num_joints)`` over ``task.joint_names``) and ``joint_pos`` / ``joint_vel`` (after the
  step); rotor groups' keys (:data:`~actuator_gym.runtime.rotors.ROTOR_TELEMETRY`, ``(num_envs, num_rotors)``
  over ``task.rotors.rotor_names``).
* ``info["actuator"]["parameters"][group][name]`` ``(num_envs, group joints or rotors)``: the
  parameters in force; mask ``info["actuator"]["_parameters"]``: the envs reset in this call (or
  whose parameters were set with :meth:`set_actuator_parameter`).
* ``info["randomization"][label]`` ``(num_envs, k)``: model-field values drawn at reset (same mask).
* ``info["action_scale"]`` / ``info["action_offset"]`` ``(num_envs, num_actions)``: the action
  mapping in force (masks ``_action_scale`` / ``_action_offset``: the envs reset in this call).
* ``info["actuator_episode"]``: the episode statistics (:mod:`actuator_gym.runtime.episode_stats`; mask: the
  envs whose episode ended in this step).
* ``info["physics_diverged"]`` ``(num_envs,)`` bool (mask: all envs): the envs whose physics diverged in
  this step (MuJoCo reset their worlds: ``backend.diverged()``); their episodes truncate.
Every info has the same keys (torchrl stacks them); only the masks change.

Single env: :class:`~actuator_gym.envs.task_env.TaskEnv` wraps a task built with ``num_envs=1`` as a ``gymnasium.Env``
(``unwrapped.model``, ``unwrapped.data``, ``unwrapped.dt``). Registration:
``register_task("pkg/MyTask-v0", "pkg.module:MyTask")`` registers both the single-env
``entry_point`` and the ``vector_entry_point``, so ``gymnasium.make_vec(id, num_envs=N)``
builds the native batched class; ``make``/``make_vec`` keyword arguments override ``TaskCfg``
fields (``actuators=...``, ``episode_length_s=...``) or go to the constructor (``render_mode``,
``autoreset_mode``, ``seed``, ``max_episode_steps``); others raise Python's ``TypeError``.

Backends: ``backend="mujoco"`` (default; numpy actuator path, ``mujoco.batch``), ``"mujoco_warp"``
or ``"newton"``, with ``device="cpu"`` or ``"cuda[:N]"`` (constructor / ``make`` keyword arguments;
see ``docs/backends.md``). See ``docs/tasks.md`` for a worked example.

Implicit effort mode: when a group's config has ``effort_mode="implicit"``, or is an
``ImplicitActuatorCfg`` (solver-side PD, always solved in the Stable-PD mode)
(``collection.needs_mass_matrix``), the default ``run_substeps`` fetches
``backend.mass_matrix_terms`` (inverse mass matrix and bias force of the current state) every
substep and passes them to ``collection.compute``; backends without them (``mujoco_warp``,
``newton``) are rejected at construction with a ``ValueError``. See ``docs/neural.md``.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector import AutoresetMode, VectorEnv

from .._checks import check_num_envs, is_int, real_array
from ..runtime.collection import ActuatorCollection
from ..runtime.episode_stats import with_episode_scalars
from ..runtime.groups import split_groups
from ..runtime.rotors import RotorGroup, RotorGroups, rotor_group_seeds
from ..randomization.streams import EnvRandom, EnvStreams, derive_seeds, env_seeds
from ..backends.native_side import NativeSide, group_execution, resolve_execution
from ..actuators.params import match_names
from ..backends.mujoco import motor_peaks
from ..backends.mujoco_asset import MjcfJoints, write_joint_properties
from ..runtime.rig import ActionSpec, ActuatorRig, RigDoor, check_mass_matrix
from ..runtime.substep import TorchJointState
from .task_info import action_info, masked_info, vector_info, with_finals
from .task_conventions import (LimitedSpec, SubEnvCalls, check_not_ended, check_open, episode_limit, library_conventions,
                               random_episode_clocks)
from .task_cfg import FIELD_STREAM, TASK_STREAM, FieldRand, ModelFieldRandomization, TaskCfg, gym_np_random, resolve_cfg
from .task_cfg import autoreset_mode as _autoreset_mode

__all__ = [
    "TaskCfg",
    "ModelFieldRandomization",
    "BatchedTask",
]

class BatchedTask(VectorEnv, SubEnvCalls, RigDoor):
    """Base of batched actuator-gym tasks (a ``gymnasium.vector.VectorEnv``); see the module doc.

    Args:
        num_envs: number of parallel envs.
        cfg: the task config (default: ``cfg_cls()``).
        render_mode: None or ``"rgb_array"``.
        autoreset_mode: ``AutoresetMode`` (or its string value); NEXT_STEP by default.
        seed: seed of the construction-time reset as ``reset(seed=...)`` takes it (env ``i``: ``s + i``).
        max_episode_steps: Gymnasium's episode limit [control steps] (``make_vec(id, max_episode_steps=K)``);
            episodes truncate after ``min(K, round(episode_length_s / dt))`` steps; None / -1: no extra limit.
        flat_info: info as flat ``"actuator/..."`` keys (torchrl's reader needs them: ``GymEnv(id, num_envs=N, flat_info=True)``).
        skrl_episode_info: the finished episodes' actuator statistics also as skrl's ``info["episode"]`` scalars
            (needs ``autoreset_mode=SAME_STEP``, which skrl's trainers assume; :mod:`.task_conventions`).
        backend: ``"mujoco"`` (batched CPU MuJoCo, default), ``"mujoco_warp"`` or ``"newton"`` (``docs/backends.md``).
        device: ``"cpu"`` (default) or ``"cuda[:N]"`` (Warp backends only): where the physics
            state and the actuator collection live.
        execution: ``"explicit"`` (default), ``"native"`` (the groups as MuJoCo's own actuators; backends
            ``"mujoco"``, ``"mujoco_warp"``) or ``"auto"`` (per group, native where exact: Euler); ``task.execution`` says which runs
            (``"mixed"``: some groups of each) and ``task.group_execution`` per group (docs/native.md).
        **overrides: ``TaskCfg`` field values replacing those of ``cfg``.
    """

    cfg_cls: type = TaskCfg
    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "autoreset_mode": AutoresetMode.NEXT_STEP}
    spec = LimitedSpec()  # Gymnasium's EnvSpec, read back with max_episode_steps = the limit applied
    actuator_dtype: torch.dtype = torch.float32  # the joint groups' dtype (explicit arithmetic; a subclass may set float64)
    past_end_raises: bool = True  # DISABLED: stepping an ended env raises (TaskEnv clears it: single envs go on)

    def __init__(
        self,
        num_envs: int = 1,
        *,
        cfg: TaskCfg | None = None,
        render_mode: str | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        seed: int | None = None,
        max_episode_steps: int | None = None,
        flat_info: bool = False,
        skrl_episode_info: bool = False,
        backend: str = "mujoco",
        device: str = "cpu",
        execution: str = "explicit",
        **overrides: Any,
    ):
        import mujoco

        from ..backends import make_backend

        owner = type(self).__name__
        num_envs = check_num_envs(num_envs, owner)
        seeds = env_seeds(seed, num_envs, owner)
        mode = _autoreset_mode(autoreset_mode, owner)
        self.execution = resolve_execution(execution, backend, owner)  # what runs (docs/native.md; resolved below)
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"{type(self).__name__}: render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.cfg = cfg = resolve_cfg(self.cfg_cls, cfg, overrides)
        self.num_envs = int(num_envs)
        self.render_mode = render_mode
        self.autoreset_mode = mode
        self.flat_info, self.skrl_episode_info = library_conventions(flat_info, skrl_episode_info, mode, owner)

        xml = cfg.model_xml()
        try:
            self.model = mujoco.MjModel.from_xml_string(xml)
        except Exception as exc:
            raise ValueError(f"{type(self).__name__}: the MJCF does not compile: {exc}") from exc
        self.model.opt.timestep = float(cfg.physics_dt)
        joint_cfgs, rotor_cfgs = split_groups(cfg.actuators)
        write_joint_properties(self.model, joint_cfgs, backend, owner)  # armature, friction: before the batch
        self.physics_dt = float(cfg.physics_dt)
        self.decimation = int(cfg.decimation)
        self.dt = self.physics_dt * self.decimation
        self.max_episode_steps = episode_limit(cfg.episode_length_s, self.dt, max_episode_steps, owner)
        self.native = early = None  # the native side (rig.native.NativeSide), when some group runs natively
        if self.execution != "explicit":  # the groups first, compiled into the backend's model
            early = self._joint_collection(joint_cfgs, seeds, NativeSide.joint_names(self.model), torch.device("cpu"))
            native = NativeSide.for_task(early, rotor_cfgs, self.model, xml, self.execution, owner, backend)
            self.native, self.execution, self.model = (native if native.active else None), native.execution, native.model
        self.backend = make_backend(backend, self.model, self.num_envs, device, mjcf=xml, nthread=cfg.nthread)
        if self.native is not None:
            self.native.attach(self.backend)
        self.backend_name = backend
        self.device = self.backend.device
        self._on_device = self.device.type != "cpu" and self.native is None  # CUDA: collection on the GPU
        self.joint_names = self.backend.joint_names
        self.collection = early if early is not None else self._joint_collection(joint_cfgs, seeds, self.joint_names, self.device)
        # {group: native | explicit}; an explicit task refuses DC-motor extras that run natively only
        self.group_execution = group_execution(self.collection, rotor_cfgs, self.native, self.execution, owner)
        """The joint groups (None: the task has only rotor groups)."""
        self.rotors = None if not rotor_cfgs else RotorGroups(
            [self.rotor_group(g, c, s) for (g, c), s in zip(rotor_cfgs.items(), rotor_group_seeds(seeds, len(rotor_cfgs), num_envs))],
            self.decimation, self.physics_dt)
        """The rotor groups (None: the task has only joint groups)."""
        check_mass_matrix(self.collection, self.backend, backend, owner)  # Stable-PD and implicit groups: M^-1
        self.field_rands = [FieldRand(s, self.model, self.backend) for s in cfg.model_randomization]
        """The resolved model-field randomizations (``cfg.model_randomization``): ``info["randomization"]``."""
        self.rig = self._make_rig()
        """The rig (:class:`~actuator_gym.runtime.ActuatorRig`): groups, action map, engine, episode statistics."""
        self.actuators, self.action_map, self.engine = self.rig.groups, self.rig.action_map, self.rig.engine
        self.episode_stats = self.rig.episode_stats
        self.action_joint_ids, self._act_low, self._act_high = self.action_map.joint_ids, self.action_map.low, self.action_map.high
        n = self.num_envs
        self.actions = np.zeros((n, self.num_actions))
        self.episode_step = np.zeros(n, dtype=np.int64)
        self.telemetry = self.rig.keep_telemetry()
        """The last control step's telemetry (joints: :data:`~actuator_gym.runtime.substep.TELEMETRY`; rotors:
        :data:`~actuator_gym.runtime.rotors.ROTOR_TELEMETRY`)."""
        self._substep_callbacks: list[Callable[[BatchedTask, int], None]] = []
        self._autoreset, self.physics_diverged = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)  # info["physics_diverged"]
        self.streams, self._field_streams = (EnvStreams(n, derive_seeds(seeds, t), owner=owner) for t in (TASK_STREAM, FIELD_STREAM))
        self.metadata = {**type(self).metadata, "autoreset_mode": mode, "render_fps": int(round(1.0 / self.dt))}
        self.render_env_ids: Sequence[int] = tuple(range(min(n, 8)))
        """Envs drawn by ``render()`` (one frame each)."""

        self.setup()
        self._reset_envs(np.arange(n), full=True)
        obs = self._observe_checked()
        self.single_observation_space = self.observation_space_single(obs.shape[1])
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, n)
        self.single_action_space = gym.spaces.Box(self._act_low, self._act_high, dtype=np.float32)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, n)
        self._np_random, self._np_random_seed = gym_np_random(seed, seeds)

    # -- hooks (override) ---------------------------------------------------------------------
    def setup(self) -> None:
        """Allocate per-env task buffers (called once, before the first reset)."""

    def sample_reset(self, env_ids: np.ndarray, rng: EnvRandom) -> Mapping[str, Any] | None:
        """Reset distribution for ``env_ids`` from ``rng`` (env axis first); ``{"qpos", "qvel", "act"}`` or None."""
        return None

    def observe(self) -> np.ndarray:
        """Observations ``(num_envs, D)`` (a fresh array)."""
        raise NotImplementedError(f"{type(self).__name__} must define observe()")

    def reward(self) -> np.ndarray:
        """Rewards ``(num_envs,)`` for the control step just taken."""
        raise NotImplementedError(f"{type(self).__name__} must define reward()")

    def terminated(self) -> np.ndarray:
        """Terminal flags ``(num_envs,)`` (default: never)."""
        return np.zeros(self.num_envs, dtype=bool)

    def extra_info(self) -> dict[str, np.ndarray]:
        """Extra ``{key: (num_envs, ...)}`` entries of ``info`` after every step and reset."""
        return {}

    def observation_space_single(self, dim: int) -> gym.spaces.Box:
        """The single-env observation space (default: unbounded float32 Box of size ``dim``)."""
        return gym.spaces.Box(-np.inf, np.inf, shape=(dim,), dtype=np.float32)

    # -- public API ---------------------------------------------------------------------------
    @property
    def num_actions(self) -> int:
        """Joint actions (one per action joint and channel), then one per rotor."""
        return self.action_map.num_actions

    def rotor_group(self, name: str, cfg: Any, seed: np.ndarray) -> RotorGroup:
        """The :class:`~actuator_gym.runtime.rotors.RotorGroup` of rotor group ``name`` (a ``ThrusterCfg``;
        ``seed``: its per-env seeds for ``RotorGroup``) over this task's model: which rotors, the writer that
        delivers their thrust, the initial rotor speed. Tasks with rotor groups define it."""
        raise ValueError(
            f"{type(self).__name__}: actuator group {name!r} is a rotor group (ThrusterCfg); the task must define "
            "rotor_group(name, cfg, seed) returning an actuator_gym.runtime.rotors.RotorGroup (which rotors, and the writer "
            "that delivers their thrust to the physics)"
        )

    def _joint_collection(self, joint_cfgs: Any, seeds: Any, joint_names: Sequence[str], device: Any) -> Any:
        if not joint_cfgs:
            return None
        if not joint_names:
            raise ValueError(f"{type(self).__name__}: the model has no hinge or slide joint to actuate")
        return ActuatorCollection(joint_cfgs, joint_names=joint_names, num_envs=self.num_envs, device=device, seed=seeds,
                                  asset=MjcfJoints(self.model), dtype=self.actuator_dtype)

    def add_substep_callback(self, fn: Callable[["BatchedTask", int], None]) -> None:
        """Call ``fn(task, k)`` after every physics substep ``k`` (0 .. decimation-1) of every step
        (not with native groups, ``task.execution`` ``"native"`` or ``"mixed"``)."""
        if not callable(fn):
            raise ValueError("add_substep_callback: fn must be callable")
        if self.native is not None:  # (a mix reads the native power from the engine's outputs after each substep)
            raise ValueError(f"add_substep_callback: {type(self).__name__} runs execution={self.execution!r} (native "
                             "groups inside MuJoCo's step); per-substep callbacks need execution='explicit'")
        self._substep_callbacks.append(fn)

    def notify_substep(self, k: int) -> None:
        """Call the registered substep callbacks (``run_substeps`` does this after substep ``k``)."""
        for fn in self._substep_callbacks:
            fn(self, k)

    def actuator_telemetry(self) -> dict[str, np.ndarray]:
        """Extra ``(num_envs, ...)`` arrays added to ``info["actuator"]`` after every step (e.g. rotor
        thrusts); default none."""
        return {}

    def remove_substep_callback(self, fn: Callable[["BatchedTask", int], None]) -> None:
        self._substep_callbacks.remove(fn)

    def reset(self, *, seed: Any = None, options: dict[str, Any] | None = None):
        """Reset all envs, or those of ``options["reset_mask"]`` ((num_envs,) bool). ``seed`` re-seeds
        every env (an int ``s`` in ``[0, 2**64)``: env ``i`` gets ``s + i``; or ``[s0, s1, ...]``, one
        int or None per env). Everything is validated before anything changes."""
        check_open(self, "reset")
        owner = f"{type(self).__name__}.reset"
        if seed is not None:  # validated, and a list's None entries resolved, before anything changes
            seeds = env_seeds(seed, self.num_envs, owner)
            seed = int(seed) if is_int(seed) else seeds
        if options is not None and not isinstance(options, Mapping):
            raise TypeError(f"{owner}: options must be a dict (e.g. {{'reset_mask': mask}}) or None, got {type(options).__name__}")
        mask = None if options is None else options.get("reset_mask")
        if mask is None:
            ids = np.arange(self.num_envs)
        else:
            mask = np.asarray(mask.detach().cpu() if isinstance(mask, torch.Tensor) else mask)
            if mask.dtype != np.bool_ or mask.shape != (self.num_envs,):
                raise ValueError(
                    f"{owner}: options['reset_mask'] must be a bool array of shape "
                    f"({self.num_envs},), got {mask.dtype} {mask.shape}"
                )
            ids = np.flatnonzero(mask)
        if seed is not None:
            self._reseed(seed)
        self._reset_envs(ids, full=mask is None)
        reset_mask = np.isin(np.arange(self.num_envs), ids)
        obs = self._observe_checked()
        info = self._info(stepped=np.zeros(self.num_envs, bool), reset=reset_mask)
        return obs, info

    def _reseed(self, seed: Any) -> None:
        """Re-seed every stream of the task and its actuator groups from ``seed`` (validated: an int,
        env ``i`` from ``seed + i``, or one per env); tasks with streams of their own extend it."""
        seeds = env_seeds(seed, self.num_envs, f"{type(self).__name__}.reset")
        for streams, tag in ((self.streams, TASK_STREAM), (self._field_streams, FIELD_STREAM)):
            streams.seed(derive_seeds(seeds, tag))
        self.actuators.seed(seeds)
        self._np_random, self._np_random_seed = gym_np_random(seed, seeds)

    def step(self, actions: Any):
        check_open(self, "step")
        if self.autoreset_mode == AutoresetMode.DISABLED and self.past_end_raises:
            check_not_ended(self._autoreset, f"{type(self).__name__}.step")
        a = self._check_actions(actions)
        n = self.num_envs
        reset_now = self._autoreset.copy() if self.autoreset_mode == AutoresetMode.NEXT_STEP else np.zeros(n, bool)
        if self.cfg.clip_actions:
            a = np.clip(a, self._act_low, self._act_high)
        self.actions = a
        self.action_map.write(a)
        self.run_substeps()
        self.episode_step += 1
        self.physics_diverged[:] = self.backend.diverged()  # MuJoCo reset those worlds: their episodes end
        rew = np.asarray(self.reward(), dtype=np.float64).reshape(-1)
        term = np.asarray(self.terminated(), dtype=bool).reshape(-1)
        if rew.shape != (n,) or term.shape != (n,):
            raise ValueError(f"{type(self).__name__}: reward() and terminated() must return ({n},) arrays")
        trunc = (self.episode_step >= self.max_episode_steps) | self.physics_diverged
        stepped = ~reset_now
        self.episode_stats.update(self.telemetry, stepped)

        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            if reset_now.any():
                ids = np.flatnonzero(reset_now)
                self._reset_envs(ids)
                rew[ids], term[ids], trunc[ids] = 0.0, False, False
            info = self._info(stepped=stepped, reset=reset_now, ended=term | trunc)  # once, after the resets
            obs = self._observe_checked()
            self._autoreset = term | trunc
            return obs, rew, term, trunc, info
        info = self._info(stepped=stepped, reset=reset_now, ended=term | trunc)
        if self.autoreset_mode == AutoresetMode.SAME_STEP:
            obs = self._observe_checked()
            done = term | trunc
            if done.any():
                final_obs, final_info = obs, masked_info(info, done)
                self._reset_envs(np.flatnonzero(done))
                obs = self._observe_checked()
                info = with_finals(self._info(stepped=stepped, reset=done), final_obs, final_info, done)
                if self.skrl_episode_info:  # skrl's trainers track info["episode"]
                    info = with_episode_scalars(info)
        else:  # DISABLED: ended envs must be reset before their next step
            obs = self._observe_checked()
            self._autoreset = term | trunc
        return obs, rew, term, trunc, info

    def render(self):
        if self.render_mode != "rgb_array":
            return None
        c = self.cfg
        return tuple(self.backend.render(i, c.render_width, c.render_height, c.render_camera) for i in self.render_env_ids)

    def close_extras(self, **kwargs: Any) -> None:
        self.backend.close()

    def __deepcopy__(self, memo: dict) -> "BatchedTask":  # also reached by copy.deepcopy of a gym.make env
        raise TypeError(
            f"{type(self).__name__} cannot be deep-copied: its MuJoCo batch (the simulator's native memory) "
            "is not copyable. Build an independent env from the spec (it holds your keywords): "
            "gymnasium.make_vec(env.spec, num_envs=env.num_envs) for a task, gymnasium.make(env.spec) for a "
            "single env; reset both with the same seed and the same actions give the same rollouts")

    def actuator_parameters(self) -> dict[str, dict[str, np.ndarray]]:
        """``{group: {parameter: (num_envs, group joints or rotors)}}`` in force, both kinds of group."""
        return self.rig.parameters()

    def set_actuator_parameter(self, group: str, name: str, value: Any, env_ids: Any = None, joints: Any = None) -> None:
        """Set parameter ``name`` of ``group`` for ``env_ids`` (None = all) and the group's ``joints``
        (None = all; regexes over its joint names, or indices) now: validated with the parameter's
        domain (nothing changes on error), in force from the next substep, in the next ``info``'s
        ``["actuator"]["parameters"]`` for those envs, and the new nominal over later resets
        (docs/actuators.md, "Changing parameters at run time")."""
        self.rig.set_parameter(group, name, value, env_ids=env_ids, joints=joints)

    # -- internals ----------------------------------------------------------------------------
    def _check_actions(self, actions: Any) -> np.ndarray:
        shape = (self.num_envs, self.num_actions)
        if type(actions) is np.ndarray and actions.dtype.kind in "fiu":
            a = np.array(actions, dtype=np.float64)  # the common case; a copy (the caller's array stays theirs)
        else:
            a = np.array(real_array(actions, "actions", f"{type(self).__name__}.step"), dtype=np.float64)
        if a.shape != shape:
            raise ValueError(
                f"{type(self).__name__}.step: actions must have shape {shape} (num_envs, num_actions), got {a.shape}"
            )
        bad = ~np.isfinite(a)
        if bad.any():
            e, j = np.argwhere(bad)[0]
            raise ValueError(f"{type(self).__name__}.step: actions[{e}, {j}] ({self.action_map.labels[j]}) is {a[e, j]} "
                             "(non-finite); nothing was stepped")
        return a

    def run_substeps(self) -> None:
        """One control step's physics: ``decimation`` substeps of actuators + physics, run by the
        substep engine (:class:`~actuator_gym.runtime.substep.SubstepEngine`: the wrapper's, too; the rotor
        groups are its participant), then the step's telemetry into ``self.telemetry``.

        Targets are already written (``collection.target_command``, ``rotors.target_thrust``). An
        override must still call :meth:`notify_substep` after every substep so substep callbacks
        keep working.
        """
        self.rig.advance(after=self.notify_substep)  # whatever runs (explicit, captured, native, mixed)

    def _make_rig(self) -> ActuatorRig:
        """The rig over this task's backend: numpy views on CPU (and native groups); on a device,
        torch views, the actuator part replayed from a CUDA graph where the collection allows it."""
        be, coll, on_device = self.backend, self.collection, self._on_device
        state = TorchJointState(be, coll.applied_effort) if on_device and coll is not None else be
        return ActuatorRig(coll, self.rotors, state, self._action_spec(coll), physics_dt=self.physics_dt,
                           num_substeps=self.decimation, native=self.native, capture="auto" if on_device else None,
                           owner=type(self.cfg).__name__)

    def _action_spec(self, collection: Any) -> ActionSpec:
        """The action spec of this task (its cfg, backend joints and ``collection``): the joints of
        ``cfg.action_joints`` (actuated, in model order; the rotors follow them in the map); every check
        raises before anything changes."""
        cfg, owner = self.cfg, type(self.cfg).__name__
        ids: list[int] = []
        if collection is not None:
            ids = match_names(cfg.action_joints, list(self.joint_names), "action_joints")
            if not ids:
                raise ValueError(f"{owner}: action_joints {list(np.atleast_1d(cfg.action_joints))} match none of the "
                                 f"joints {list(self.joint_names)}")
            passive = [self.joint_names[i] for i in ids if self.joint_names[i] in collection.passive_joints]
            if passive:
                raise ValueError(f"action_joints: joints {passive} are in no actuator group; add a group or drop them")
        # the effort default: the task model's own motors (native execution appends its actuators after them)
        own = self.native.actuators.first_actuator if self.native is not None else None
        peaks = motor_peaks(self.model, [self.joint_names[i] for i in ids], num_actuators=own)
        return ActionSpec(cfg.action_mode, self.backend.joints, ids, peaks=peaks, normalize=cfg.normalize_actions,
                          scale=cfg.action_scale, offset=cfg.action_offset, bounds=cfg.action_bounds)

    def _reset_envs(self, ids: np.ndarray, full: bool = False) -> None:  # full: every env, no reset_mask
        ids = np.asarray(ids, dtype=np.int64)
        if ids.size == 0:
            return
        for fr in self.field_rands:
            fr.apply(ids, self._field_streams)
        if any(fr.needs_const for fr in self.field_rands):
            self.backend.set_const(ids)
        self.actuators.reset(torch.from_numpy(ids).to(self.device if self._on_device else "cpu"))
        state = self.sample_reset(ids, self.streams.for_envs(ids)) or {}
        unknown = set(state) - {"qpos", "qvel", "act"}
        if unknown:
            raise ValueError(f"{type(self).__name__}.sample_reset returned unknown keys {sorted(unknown)}")
        qpos = state.get("qpos")
        if qpos is None:
            qpos = np.broadcast_to(self.model.qpos0, (len(ids), self.model.nq))
        self.backend.reset_envs(ids, qpos=qpos, qvel=state.get("qvel"), act=state.get("act"))
        self.rig.reset(ids)  # native values into the worlds' fields, the joint targets, episode statistics, telemetry
        self.actions[ids] = 0.0
        start = full and self.cfg.random_episode_start  # the clocks drawn after the state, from the same streams
        self.episode_step[ids] = random_episode_clocks(self.streams, ids, self.max_episode_steps) if start else 0
        self._autoreset[ids] = self.physics_diverged[ids] = False

    def _observe_checked(self) -> np.ndarray:
        obs = np.array(self.observe(), dtype=np.float32)  # fresh copy
        if obs.ndim != 2 or obs.shape[0] != self.num_envs:
            raise ValueError(f"{type(self).__name__}.observe() must return (num_envs, D), got {obs.shape}")
        return obs

    def _info(self, stepped: np.ndarray, reset: np.ndarray, ended: np.ndarray | None = None) -> dict[str, Any]:
        return {**vector_info(self, stepped, reset, ended), **action_info(self.action_map, reset)}

