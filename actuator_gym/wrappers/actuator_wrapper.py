"""``ActuatorWrapper``: realistic actuators for any Gymnasium MuJoCo environment, in one line.

    env = ActuatorWrapper(gym.make("Ant-v5"),
                          actuators={"legs": DCMotorCfg(stiffness=60.0, damping=1.5, saturation_effort=150.0,
                                                        actuator_velocity_limit=15.0, actuator_effort_limit=120.0)},
                          action_mode="position")

The policy's action becomes a command (joint targets by default) to the actuator groups; the
actuator models run at every physics substep (the env's ``frame_skip``) and their efforts enter the
simulation as generalized forces on the joints' DOFs. The env's observation, reward and
termination logic are unchanged. See docs/wrapper.md.

Rotor groups (``ThrusterCfg``) on a multirotor env whose actuators drive sites (or whose rotors are
bodies) -- see :mod:`actuator_gym.wrappers.rotor_groups`::

    env = ActuatorWrapper(MyQuadEnv(), actuators={"rotors": ThrusterCfg(thruster_names_expr=["rotor_.*"], ...)},
                          initial_thrust=hover_thrust)

The action is then one thrust command per rotor in ``[-1, 1]``, mapped linearly onto the group's
``thrust_range`` (:func:`actuator_gym.runtime.rotors.action_to_thrust`); the rotor dynamics run at every
substep and the thrust reaches the env through its own actuators' ``ctrl`` (or ``xfrc_applied``);
``info["actuator"]`` holds :data:`actuator_gym.runtime.rotors.ROTOR_TELEMETRY`. One wrapper takes either
joint groups or rotor groups (a mixed env is refused).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from math import isfinite
from typing import Any, Sequence

import gymnasium as gym
import numpy as np
import torch

from .._checks import check_seed, real_array
from ..configs import actuator_groups
from ..backends.mujoco import MujocoBackend, candidate_joints, joint_info, motor_peaks, take_diverged
from ..backends.mujoco_asset import MjcfJoints, apply_joint_properties, plan_joint_properties
from ..actuators.params import match_names
from ..runtime.collection import ActuatorCollection
from ..runtime.actions import (ACTION_MODES, CHANNELS, DEFAULT_POSITION_SCALE, DEFAULT_VELOCITY_SCALE, check_action_mode,
                                   given_options, use_normalized)
from ..runtime.episode_stats import EPISODE_INFO_KEY
from ..runtime.groups import split_groups
from ..runtime.lazy_telemetry import LazyTelemetry
from ..backends.native_side import NativeSide
from ..runtime.rig import ActionSpec, ActuatorRig, RigDoor
from .protocol import substep_hook_env
from .rotor_groups import env_rotor_groups

__all__ = ["ActuatorWrapper", "ACTION_MODES", "DEFAULT_POSITION_SCALE", "DEFAULT_VELOCITY_SCALE"]

_F64 = np.dtype(np.float64)
_JOINT_STATE = ("joint_pos", "joint_vel")


def _refuse_stacking(env: gym.Env) -> None:
    """``TypeError`` when ``env`` already has an ActuatorWrapper in its wrapper chain (the inner
    wrapper's substep hook would be replaced and its actuators would never run)."""
    e = env
    while isinstance(e, gym.Wrapper):
        if isinstance(e, ActuatorWrapper):
            raise TypeError(
                f"ActuatorWrapper: the env is already wrapped in an ActuatorWrapper (groups {list(e.groups)}); "
                "wrapping it again would replace its substep hook -- put every actuator group into one "
                "ActuatorWrapper(env, actuators={...})"
            )
        e = e.env


class ActuatorWrapper(gym.Wrapper, gym.utils.RecordConstructorArgs, RigDoor):
    """Put actuator models between the policy and a MuJoCo env's joints.

    Args:
        env: a Gymnasium env whose ``unwrapped`` is a Gymnasium ``MujocoEnv``, or any env
            implementing :class:`~actuator_gym.wrappers.protocol.SubstepHookEnv`.
        actuators: ``{group name: actuator config}`` (``IdealPDActuatorCfg``, ``DCMotorCfg``,
            ``DelayedPDActuatorCfg``, ``RemotizedPDActuatorCfg``, ``ImplicitActuatorCfg``, ...);
            each group's ``joint_names_expr`` regexes are full-matched against the candidate joints.
        action_mode: ``"position"`` (joint targets), ``"velocity"`` (joint velocity targets),
            ``"effort"`` (feed-forward efforts) or ``"position_velocity"`` (both targets; action
            ``[positions..., velocities...]``).
        normalize_actions: True: the action space is ``Box(-1, 1)`` and ``[-1, 1]`` maps onto each
            joint's reachable targets -- position: the joint range (``offset`` its middle, ``scale``
            its half-width; unlimited joints ``qpos0 +- pi rad`` (1 m)); velocity:
            ``+-actuator_velocity_limit``; effort: ``+-actuator_effort_limit`` (where that limit is
            infinite or randomized, the mode's default scale below). False: ``action_scale`` /
            ``action_offset``. None (default): True unless ``action_scale`` or ``action_offset`` is
            given. See docs/wrapper.md.
        action_scale: a number or a per-action-element array. ``None`` = the mode's default:
            position 0.5 rad (m) per unit; velocity 5.0 rad/s (m/s) per unit; effort the env
            actuator's peak force ``gear * max|ctrlrange|`` [N·m or N] (1.0 where there is none).
        action_offset: ``"default"`` (position channel: the model's default pose ``qpos0``; other
            channels: 0), a number or a per-action-element array. ``action_scale=1.0,
            action_offset=0.0`` gives absolute targets in joint units.
        joints: candidate joints, as regexes full-matched against the model's joint names (each must
            match; free and ball joints are rejected). ``None`` = the joints the env's own actuators
            drive, in actuator order. Candidates in no group stay passive (zero effort, a warning).
        initial_thrust: rotor groups only: each rotor's thrust [N] at reset, a number or
            ``{group: number}``; None = idle (see :mod:`actuator_gym.wrappers.rotor_groups`).
        execution: ``"explicit"`` (default: the runtime computes the efforts at every substep and
            writes them as generalized forces), ``"native"`` (every group compiled into MuJoCo's own
            actuators, stepped in one ``mj_step`` call per control step; a group with no exact
            native form is a ``ValueError`` naming it and why) or ``"auto"`` (per group: under Euler
            each group with a native form runs natively and the others explicitly, per substep beside
            them; under other integrators explicit, except groups with native-only DC-motor extras).
            See docs/native.md; :attr:`execution` / :attr:`group_execution` say what runs.

    The action vector covers the driven joints (candidates claimed by a group) in candidate order;
    :attr:`joint_names` lists them, and every telemetry array follows that order (``info["actuator"]``
    of a step: a read-only :class:`~actuator_gym.runtime.lazy_telemetry.LazyTelemetry`, computed from the
    step's raw numbers on first access; docs/wrapper.md, "Telemetry"). With rotor groups
    (``ThrusterCfg``; joint options then do not apply) it covers :attr:`rotor_names`, one thrust
    command in ``[-1, 1]`` each, and :attr:`collection` is None (:attr:`groups` holds both kinds).
    :attr:`action_scale` / :attr:`action_offset` (and ``info["action_scale"]`` /
    ``info["action_offset"]`` of every reset) give the mapping ``target = offset + scale * action``
    in force, per action element (rotors: thrust [N]); :attr:`action_map` is the map itself
    (:class:`~actuator_gym.runtime.actions.ActionMap`, the batched tasks' too: position targets clipped into
    the joint range), part of :attr:`rig` (:class:`~actuator_gym.runtime.ActuatorRig`: groups, action
    map, engine, episode statistics; a batched task holds one too).
    """

    def __init__(
        self,
        env: gym.Env,
        actuators: Mapping[str, Any],
        action_mode: str = "position",
        *,
        action_scale: Any = None,
        action_offset: Any = "default",
        joints: Sequence[str] | None = None,
        initial_thrust: Any = None,
        normalize_actions: bool | None = None,
        execution: str = "explicit",
    ):
        gym.utils.RecordConstructorArgs.__init__(
            self, actuators=actuators, action_mode=action_mode, action_scale=action_scale,
            action_offset=action_offset, joints=joints, initial_thrust=initial_thrust,
            normalize_actions=normalize_actions, execution=execution,
        )
        gym.Wrapper.__init__(self, env)
        actuators = actuator_groups(actuators)  # a preset's name, a YAML path or configs.load(...) too
        self.action_mode = check_action_mode(action_mode, "ActuatorWrapper")
        self._closed = False
        self.execution = "explicit"
        """What runs: ``"explicit"``, ``"native"`` or, where ``execution="auto"`` runs some groups
        natively and the others explicitly, ``"mixed"`` (:attr:`group_execution` says which)."""
        self.group_execution: dict[str, str] = {}
        """``{group: "native" | "explicit"}``: how each joint group runs (``execution="auto"`` resolved
        per group; empty with rotor groups, which run explicitly)."""
        _refuse_stacking(env)
        self._sim = substep_hook_env(env)
        if getattr(self._sim, "has_substep_hook", lambda: False)():
            raise ValueError(
                "ActuatorWrapper: the env already has a substep hook installed (is another ActuatorWrapper "
                "wrapping the same env?); one env takes one ActuatorWrapper, with every actuator group in it"
            )
        model, data = self._sim.model, self._sim.data
        self._model, self._data = model, data
        self.rotors = None
        """The rotor groups (:class:`~actuator_gym.runtime.rotors.RotorGroups`), or None."""
        self.rotor_names: tuple[str, ...] = ()
        joint_cfgs, rotor_cfgs = split_groups(actuators) if isinstance(actuators, Mapping) else (actuators, {})
        if rotor_cfgs:
            use_normalized(normalize_actions, given_options(action_scale, action_offset, None), "ActuatorWrapper")
            if normalize_actions is False:
                raise ValueError("ActuatorWrapper: normalize_actions=False applies to joint groups; rotor actions are "
                                 "thrust commands in [-1, 1] mapped onto each group's thrust_range")
            if execution != "explicit":
                raise ValueError(f"ActuatorWrapper: execution={execution!r} applies to joint groups; rotor groups run "
                                 "explicitly (execution='explicit')")
            self._init_rotor_groups(joint_cfgs, rotor_cfgs, joints, action_scale, action_offset, initial_thrust)
            return
        if initial_thrust is not None:
            raise ValueError("ActuatorWrapper: initial_thrust applies to rotor groups (ThrusterCfg) only")

        # -- joints: candidates (action order), backend/collection in model order ------------
        cand = candidate_joints(model, joints, "ActuatorWrapper")
        info_c = joint_info(model, cand)  # rejects non-1-DOF joints with a clear message
        model_order = sorted(cand, key=lambda n: int(info_c.joint_ids[cand.index(n)]))
        # backend/collection order: group by group (model order inside a group), passive last, so
        # each group is a contiguous column block (the collection's fast path); the state reads
        # stay zero-copy views whenever this is also contiguous in qpos.
        if isinstance(actuators, Mapping):
            grouped: list[str] = []
            for cfg in actuators.values():
                expr = getattr(cfg, "joint_names_expr", None)
                if expr is not None:
                    grouped += [model_order[i] for i in match_names(expr, model_order, "ActuatorWrapper")
                                if model_order[i] not in grouped]
            model_order = grouped + [n for n in model_order if n not in grouped]
        self.backend = MujocoBackend(model, data, model_order)
        self.collection = ActuatorCollection(
            actuators, joint_names=model_order, num_envs=1, device="cpu", seed=0, dtype=torch.float64,
            asset=MjcfJoints(model),
        )
        passive = set(self.collection.passive_joints)
        self.joint_names: tuple[str, ...] = tuple(n for n in cand if n not in passive)
        J = len(self.joint_names)
        cols = np.asarray([model_order.index(n) for n in self.joint_names], dtype=np.intp)
        self._cols = slice(0, J) if np.array_equal(cols, np.arange(J)) else cols
        self._cols_idx = cols

        # -- validate everything first; the env's MjModel is written only at the end, so a refused
        #    construction leaves the env bit for bit as it was
        property_writes = plan_joint_properties(model, actuators, model_order, "ActuatorWrapper")
        spec = ActionSpec(action_mode, self.backend.joints, cols, peaks=motor_peaks(model, self.joint_names),
                          normalize=normalize_actions, scale=action_scale, offset=action_offset)
        native = NativeSide.for_env(self._sim, self.collection, execution, [ch[:3] for ch in CHANNELS[self.action_mode]],
                                    self.backend)  # channels "pos", "vel", "eff"
        self.execution, self.group_execution = native.execution, native.summary()
        self.backend, data = native.backend, native.data  # where some group runs natively: the native model's
        self._dt = float(self.backend.physics_dt)
        self._finish_setup(ActuatorRig(self.collection, None, self.backend, spec, physics_dt=self._dt,
                                       num_substeps=int(self._sim.frame_skip), native=native, env=0,
                                       stats_columns=self._cols_idx, owner="ActuatorWrapper"), data)
        self._tel_cols = (0, self._cols_idx)  # env 0, the driven joints in action order
        # -- every check passed: write into the env's model, then install the hook
        apply_joint_properties(property_writes)
        self.engine.install(self._sim, self._ctrl)  # the env's substep hook, or its native model and step
        # info["actuator"] on demand (engine.snapshot) unless a part's keys are read from the engine now
        self._lazy = not self.engine.motor_telemetry
        # every group native and info["actuator"] on demand: the law's arithmetic too (docs/native.md)
        self.engine.defer_native_telemetry = self._lazy
        # the step's raw rows of the driven joints (collection columns, in action order) and the state
        # after the step (what the observation sees; (array, addresses) in action order)
        state = ((data.qpos, self.backend.joints.qpos_adr[cols]), (data.qvel, self.backend.joints.dof_adr[cols]))
        self._snapshot = partial(self.engine.snapshot, (0, self._cols), _JOINT_STATE, state)

    # ---------------------------------------------------------------------------------------
    # construction helpers
    # ---------------------------------------------------------------------------------------
    def _init_rotor_groups(self, joint_cfgs, rotor_cfgs, joints, action_scale, action_offset, initial_thrust) -> None:
        """Rotor groups only: actions are thrust commands in [-1, 1] (module docstring)."""
        if joint_cfgs:
            raise ValueError(
                f"ActuatorWrapper: groups {list(joint_cfgs)} drive joints and groups {list(rotor_cfgs)} are rotor groups "
                "(ThrusterCfg); one wrapper takes either joint groups or rotor groups, not both"
            )
        given = [k for k, v, d in (("joints", joints, None), ("action_scale", action_scale, None),
                                   ("action_offset", action_offset, "default")) if v is not d]
        if given:
            raise ValueError(f"ActuatorWrapper: {given} apply to joint groups; rotor actions are thrust commands in "
                             "[-1, 1] mapped onto each group's thrust_range")
        model, data = self._model, self._data
        self.rotors = env_rotor_groups(model, data, rotor_cfgs, num_substeps=int(self._sim.frame_skip), seed=0,
                                       initial_thrust=initial_thrust)
        self.rotor_names = self.rotors.rotor_names
        self.collection, self.backend, self.joint_names = None, None, ()
        self._dt = float(model.opt.timestep)
        self._finish_setup(ActuatorRig(None, self.rotors, None, ActionSpec(), physics_dt=self._dt, env=0,
                                       num_substeps=int(self._sim.frame_skip), owner="ActuatorWrapper"), data)
        self.engine.install(self._sim, self._ctrl)

    def _finish_setup(self, rig: ActuatorRig, data: Any) -> None:
        self.rig = rig
        """The rig (:class:`~actuator_gym.runtime.ActuatorRig`): groups, action map, engine, episode statistics."""
        self.groups, self.action_map, self.engine, self.episode_stats = rig.groups, rig.action_map, rig.engine, rig.episode_stats
        self.action_space = gym.spaces.Box(self.action_map.low, self.action_map.high, dtype=np.float32)
        self._ctrl, self._warnings = data.ctrl, data.warning.number  # MuJoCo's warnings: info["physics_diverged"]
        self._lazy = False
        self._inner_zero = np.zeros(self._model.nu)
        self._pass_action = self.action_space.shape[0] == self._model.nu
        self._action_shape = (self.action_map.num_actions,)
        self.action_map.reset()

    # ---------------------------------------------------------------------------------------
    # runtime
    # ---------------------------------------------------------------------------------------
    def _check_action(self, action: Any) -> np.ndarray:
        if type(action) is np.ndarray and action.shape == self._action_shape:  # the common case, checked lean
            a = action if action.dtype is _F64 else action.astype(np.float64) if action.dtype.kind in "fiu" else None
            # a finite sum means every element is finite (nan / inf propagate); an overflow of the sum
            # (Python floats: inf, no warning) falls through to the element-wise check below
            if a is not None and isfinite(sum(a.tolist())):
                return a
        if type(action) is np.ndarray and action.dtype.kind in "fiu":
            a = action.astype(np.float64, copy=False)
        elif isinstance(action, (dict, set, str, bytes)) or action is None:
            raise TypeError(
                f"ActuatorWrapper: action must be a numeric array of shape {self._action_shape}, got {type(action).__name__}"
            )
        else:
            a = real_array(action, "action", "ActuatorWrapper")
        if a.shape != self._action_shape:
            over = (f"for action_mode={self.action_mode!r} over joints {list(self.joint_names)}" if self.rotors is None
                    else f"(thrust commands) over rotors {list(self.rotor_names)}")
            raise ValueError(f"ActuatorWrapper: action must have shape {self._action_shape} {over}, got shape {a.shape}")
        finite = np.isfinite(a)
        if not finite.all():
            i = int(np.flatnonzero(~finite)[0])
            raise ValueError(f"ActuatorWrapper: action[{i}] ({self.action_map.labels[i]}) is {a[i]}; actions must be finite")
        return a

    def _check_open(self, what: str) -> None:
        if self._closed:
            raise ValueError(f"ActuatorWrapper: {what}() called after close(); the actuators are detached from the env")

    def step(self, action):
        if self._closed:
            self._check_open("step")
        a = self._check_action(action)
        self.action_map.write(a)
        engine = self.engine
        if (frame_skip := self._sim.frame_skip) != engine.num_substeps:
            engine.resize(int(frame_skip))
        engine.begin()
        obs, reward, terminated, truncated, info = self.env.step(a if self._pass_action else self._inner_zero)
        if engine.substeps_run != engine.num_substeps:
            raise RuntimeError(
                f"ActuatorWrapper: the substep hook ran {engine.substeps_run} times in one step, expected "
                f"frame_skip={engine.num_substeps}; the env does not call its simulation hook (unsupported "
                "Gymnasium version? actuator-gym needs gymnasium>=1.0,<2)"
            )
        info = dict(info, physics_diverged=take_diverged(self._warnings))  # MuJoCo reset a diverged simulation
        truncated = truncated or info["physics_diverged"]  # (the episode is over, whatever its state says now)
        # the parameters in force after a step that changed them (the rule of reset and task info: ActuatorRig.shown)
        params = {"parameters": self.parameters()} if self.rig.any_parameters_changed and self.rig.shown()[0] else {}
        if self._lazy:  # the raw rows copied once; info["actuator"] computed on first access
            snap = self._snapshot()
            self.episode_stats.defer(snap)
            info["actuator"] = LazyTelemetry(lambda: {**snap.telemetry(), **params}) if params else snap
        else:  # rotor groups, native motor telemetry: the values read from the engine now
            tel = self._telemetry()
            self.episode_stats.update(tel)
            info["actuator"] = LazyTelemetry(values={**tel, **params})
        if terminated or truncated:
            info[EPISODE_INFO_KEY] = self.episode_stats.env_record(0)
        return obs, reward, terminated, truncated, info

    def _telemetry(self) -> dict[str, np.ndarray]:
        """The engine's step telemetry (:data:`~actuator_gym.runtime.substep.TELEMETRY`) in action order; rotor groups:
        :data:`~actuator_gym.runtime.rotors.ROTOR_TELEMETRY`."""
        if self.rotors is not None:
            return {k: v[0] for k, v in self.engine.telemetry().items()}
        tel = self.engine.telemetry(self._tel_cols)
        be, cols = self.backend, self._tel_cols[1]  # the state after the step, as the env's observation sees it
        tel["joint_pos"], tel["joint_vel"] = be.joint_pos()[0][cols], be.joint_vel()[0][cols]
        for key, value in self.engine.motor_telemetry.items():  # native motor_temperature, motor_current
            tel[key] = value[0, cols]
        return tel

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self._check_open("reset")
        check_seed(seed, "ActuatorWrapper.reset")  # before the env's own seeding sees it
        if options is not None and not isinstance(options, Mapping):
            raise TypeError(f"ActuatorWrapper.reset: options must be a dict or None, got {type(options).__name__}")
        obs, info = self.env.reset(seed=seed, options=options)
        if self.rig.randomized:
            # the actuator randomness comes from the env's seeded generator: seeded runs reproduce
            self.groups.seed(int(self.env.unwrapped.np_random.integers(0, 2**63 - 1)))
        self.groups.reset()
        self.rig.reset()  # native groups: the values in force into the native model; targets, episode statistics
        info = dict(info, physics_diverged=take_diverged(self._warnings))  # (and the counters cleared)
        self.rig.shown()  # shown now: a step shows them again once they change (ActuatorRig.shown)
        info["actuator"] = {"parameters": self.parameters()}
        info["action_scale"], info["action_offset"] = self.action_scale, self.action_offset
        return obs, info

    def set_actuator_parameter(self, group: str, name: str, value: Any, joints: Any = None) -> None:
        """Set parameter ``name`` of ``group`` now, for its joints ``joints`` (None = all; regexes
        over the group's joint names, or indices): validated with the parameter's domain, in force
        from the next substep, shown by :meth:`parameters`, and the new nominal value over later
        resets (docs/actuators.md, "Changing parameters at run time"); the next step's
        ``info["actuator"]["parameters"]`` shows them."""
        self._check_open("set_actuator_parameter")
        self.rig.set_parameter(group, name, value, joints=joints)

    def parameters(self) -> dict[str, dict[str, np.ndarray]]:
        """``{group: {parameter: values in force (group joints or rotors,)}}`` (fresh arrays)."""
        return {g: {k: v[0] for k, v in ps.items()} for g, ps in self.rig.parameters().items()}

    def close(self):
        """Detach the actuators (the env's own simulation step is restored) and close the env.
        Idempotent; ``step`` / ``reset`` afterwards are a ``ValueError``."""
        if self._closed:
            return
        self._closed = True
        try:
            self.engine.uninstall(self._sim)  # the env's own simulation step (and model) again
            for g in self.rotors or ():
                clear = getattr(self.rotors.group(g).writer, "clear", None)
                if clear is not None:
                    clear()
        finally:
            super().close()
