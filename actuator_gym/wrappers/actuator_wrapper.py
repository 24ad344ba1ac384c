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
``thrust_range`` (:func:`actuator_gym.rotors.action_to_thrust`); the rotor dynamics run at every
substep and the thrust reaches the env through its own actuators' ``ctrl`` (or ``xfrc_applied``);
``info["actuator"]`` holds :data:`actuator_gym.rotors.ROTOR_TELEMETRY`. One wrapper takes either
joint groups or rotor groups (a mixed env is refused).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from math import isfinite
from typing import Any, Sequence

import gymnasium as gym
import numpy as np
import torch

from .._checks import check_seed, real_array
from ..backends.mujoco import MujocoBackend, actuated_joints, joint_info, take_diverged
from ..backends.mujoco_asset import MjcfJoints, apply_joint_properties, plan_joint_properties
from ..actuators.params import match_names
from ..collection import ActuatorCollection
from ..actions import joint_limits, normalized_mapping, per_element, position_bounds, thrust_mapping, use_normalized
from ..episode_stats import EPISODE_INFO_KEY, EpisodeStats
from ..groups import ActuatorGroups, split_groups
from ..lazy_telemetry import LazyTelemetry
from ..substep import SubstepEngine
from .engine_servo import EngineServos
from .native_execution import WrapperNative
from .protocol import substep_hook_env
from .rotor_groups import env_rotor_groups

__all__ = ["ActuatorWrapper", "ACTION_MODES", "DEFAULT_POSITION_SCALE", "DEFAULT_VELOCITY_SCALE"]

ACTION_MODES = ("position", "velocity", "effort", "position_velocity")
DEFAULT_POSITION_SCALE = 0.5
"""[rad or m per action unit]: default ``action_scale`` of the position channel."""
DEFAULT_VELOCITY_SCALE = 5.0
"""[rad/s or m/s per action unit]: default ``action_scale`` of the velocity channel."""
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


def _per_joint(value: Any, n: int, what: str, convert_only: bool = False) -> np.ndarray:
    if convert_only:  # the caller tiles it per channel first
        if isinstance(value, (str, bytes)) or value is None:
            raise TypeError(f"ActuatorWrapper: {what} must be a number or a sequence of {n} numbers, got {value!r}")
        return real_array(value, what, "ActuatorWrapper")
    return per_element(value, n, what, "ActuatorWrapper")


class ActuatorWrapper(gym.Wrapper, gym.utils.RecordConstructorArgs):
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
    of a step: a read-only :class:`~actuator_gym.lazy_telemetry.LazyTelemetry`, computed from the
    step's raw numbers on first access; docs/wrapper.md, "Telemetry"). With rotor groups
    (``ThrusterCfg``; joint options then do not apply) it covers :attr:`rotor_names`, one thrust
    command in ``[-1, 1]`` each, and :attr:`collection` is None (:attr:`groups` holds both kinds).
    :attr:`action_scale` / :attr:`action_offset` (and ``info["action_scale"]`` /
    ``info["action_offset"]`` of every reset) give the mapping ``target = offset + scale * action``
    in force, per action element (rotors: thrust [N]).
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
        if not isinstance(action_mode, str) or action_mode not in ACTION_MODES:
            raise ValueError(f"ActuatorWrapper: action_mode must be one of {ACTION_MODES}, got {action_mode!r}")
        self.action_mode = action_mode
        self._closed = False
        self._native = None
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
        """The rotor groups (:class:`~actuator_gym.rotors.RotorGroups`), or None."""
        self.rotor_names: tuple[str, ...] = ()
        joint_cfgs, rotor_cfgs = split_groups(actuators) if isinstance(actuators, Mapping) else (actuators, {})
        given = {"action_scale": action_scale is not None,
                 "action_offset": not (isinstance(action_offset, str) and action_offset == "default")}
        normalized = use_normalized(normalize_actions, given, "ActuatorWrapper")
        if rotor_cfgs:
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
        env_acts = actuated_joints(model)
        if joints is None:
            cand = list(dict.fromkeys(name for _, name in env_acts))
            if not cand:
                raise ValueError(
                    "ActuatorWrapper: the env's MuJoCo actuators drive no hinge/slide joint; pass joints=[...]"
                )
        else:
            cand = self._resolve_joints(model, joints)
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
        ji = self.backend.joints
        self._range = ji.range[cols]
        self._lo, self._hi = self._range[:, 0].copy(), self._range[:, 1].copy()
        self._kinds = [ji.kind[i] for i in cols]
        self._default_pos = np.clip(ji.default_pos[cols], self._range[:, 0], self._range[:, 1])

        # -- validate everything first; the env's MjModel is written only at the end, so a refused
        #    construction leaves the env bit for bit as it was
        self.groups = ActuatorGroups(self.collection)
        """Every actuator group (:class:`~actuator_gym.groups.ActuatorGroups`)."""
        self._servos = (EngineServos(self.collection, self.backend, self._cols_idx, action_mode == "position")
                        if self.collection.engine_servo_groups else None)
        property_writes = plan_joint_properties(model, actuators, model_order, "ActuatorWrapper")
        self._setup_action_space(action_scale, action_offset, env_acts, normalized)
        native = WrapperNative(self._sim, self.collection, model, data, model_order, execution)
        self.group_execution = native.summary()
        if native.active:  # the groups run in the native model: the state lives there
            self._native = native
            self.execution = "native" if "explicit" not in self.group_execution.values() else "mixed"
            self.backend, data = native.backend, native.data

        # -- hot-path buffers ----------------------------------------------------------------
        c = self.collection
        self._tgt_pos = c.target_command.position.numpy()
        self._tgt_vel = c.target_command.velocity.numpy()
        self._tgt_eff = c.target_command.effort.numpy()
        self._ctrl, self._warnings = data.ctrl, data.warning.number  # MuJoCo's warnings: info["physics_diverged"]
        self._dt = float(self.backend.physics_dt)
        self._tel_cols = (0, self._cols_idx)  # env 0, the driven joints in action order
        self.engine = SubstepEngine(self.collection, self.backend, self._dt, int(self._sim.frame_skip),
                                    participants=[self._servos] if self._servos else [],
                                    native=self._native.actuators if self._native else None)
        """The substep engine (:mod:`actuator_gym.substep`) run at each of the env's substeps."""
        self._finish_setup()
        self._plan_targets()
        self._reset_targets()
        # -- every check passed: write into the env's model, then install the hook
        if self._servos:
            self._servos.configure()
        apply_joint_properties(property_writes)
        if self._native:
            self._native.install(self.engine, self._channels)
        else:
            self._sim.set_substep_hook(self._substep)
        # info["actuator"] on demand (engine.snapshot) unless a part's keys are read from the engine now
        self._lazy = not self._servos and not (self._native and self._native.has_motor_telemetry)
        # every group native and info["actuator"] on demand: the law's arithmetic too (docs/native.md)
        self.engine.defer_native_telemetry = self._lazy and self.execution == "native"
        self._snap_cols = (0, self._cols)  # the driven joints' collection columns, in action order
        # the state after the step (what the observation sees), in action order: (array, addresses)
        self._state = ((data.qpos, self.backend.joints.qpos_adr[cols]), (data.qvel, self.backend.joints.dof_adr[cols]))

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
        self.collection, self.backend, self._servos, self.joint_names = None, None, None, ()
        self.groups = ActuatorGroups(None, self.rotors)
        r = self.rotors.num_rotors
        self.action_space = gym.spaces.Box(-np.ones(r, np.float32), np.ones(r, np.float32), dtype=np.float32)
        self._scale, self._offset = thrust_mapping(self.rotors)
        self._nact, self._channels = r, ["thrust"]
        self._labels = [f"thrust command of rotor '{n}'" for n in self.rotor_names]
        self._ctrl, self._dt, self._warnings = data.ctrl, float(model.opt.timestep), data.warning.number
        self.engine = SubstepEngine(None, None, self._dt, int(self._sim.frame_skip), participants=[self.rotors])
        self._finish_setup()
        self._sim.set_substep_hook(self._substep)

    def _finish_setup(self) -> None:
        model = self._model
        self._lazy = False
        self._inner_zero = np.zeros(model.nu)
        self._pass_action = self.action_space.shape[0] == model.nu
        self._action_shape = (self._nact,)
        self._randomized = self.groups.randomized()
        self._param_cache = {g: {k: v[0].numpy().copy() for k, v in ps.items()} for g, ps in self.groups.parameters().items()}
        self.episode_stats = EpisodeStats.of(1, self.collection, self.rotors,
                                             None if self.rotors is not None else self._cols_idx)
        """The running episode's actuator statistics (:mod:`actuator_gym.episode_stats`)."""
        if self.rotors is None:
            self._labels = [f"{ch} command of joint '{n}'" for ch in self._channels for n in self.joint_names]

    @staticmethod
    def _resolve_joints(model, patterns: Sequence[str]) -> list[str]:
        import mujoco

        if isinstance(patterns, str):
            patterns = [patterns]
        if not isinstance(patterns, (list, tuple)) or not all(isinstance(p, str) for p in patterns):
            raise TypeError(f"ActuatorWrapper: joints must be a list of regex strings (or None), got {patterns!r}")
        if not patterns:
            raise ValueError("ActuatorWrapper: joints must name at least one joint (or be None: the env's actuated joints)")
        names = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j) or f"joint{j}" for j in range(model.njnt)]
        out: list[str] = []
        for p in patterns:
            try:
                rx = re.compile(p)
            except re.error as exc:
                raise ValueError(f"ActuatorWrapper: joints: invalid regular expression {p!r}: {exc}") from None
            hits = [n for n in names if rx.fullmatch(n)]
            if not hits:
                raise ValueError(f"ActuatorWrapper: joints: {p!r} matches no joint of the model; joints are {names}")
            out += [h for h in hits if h not in out]
        return out

    def _setup_action_space(self, action_scale, action_offset, env_acts, normalized: bool) -> None:
        J, mode = len(self.joint_names), self.action_mode
        channels = {"position": ["pos"], "velocity": ["vel"], "effort": ["eff"], "position_velocity": ["pos", "vel"]}[mode]
        self._channels = channels
        A = J * len(channels)
        # defaults per channel
        eff_scale = np.ones(J)
        m = self._model
        # the engine-servo groups' actuators become gear-1 servos without ctrl limits in effort mode
        # (configured after this check), so their scale stays 1
        servo = {self.backend.joints.names[i] for i in self._servos.cols} if self._servos else set()
        for a, name in env_acts:
            if name in self.joint_names and name not in servo:
                cr = m.actuator_ctrlrange[a]
                peak = abs(m.actuator_gear[a, 0]) * (max(abs(cr[0]), abs(cr[1])) if m.actuator_ctrllimited[a] else 1.0)
                if peak > 0:
                    eff_scale[self.joint_names.index(name)] = peak
        default_scale = {"pos": np.full(J, DEFAULT_POSITION_SCALE), "vel": np.full(J, DEFAULT_VELOCITY_SCALE), "eff": eff_scale}
        default_offset = {"pos": self.backend.joints.default_pos[self._cols_idx].copy(), "vel": np.zeros(J), "eff": np.zeros(J)}
        if normalized:
            self._setup_normalized(channels, default_scale)
            return
        if action_scale is None:
            scale = np.concatenate([default_scale[ch] for ch in channels])
        else:
            s = _per_joint(action_scale, A, "action_scale", convert_only=True)
            scale = _per_joint(np.tile(s, len(channels)) if s.shape == (J,) and A != J else s, A, "action_scale")
        if (scale == 0).any():
            raise ValueError(f"ActuatorWrapper: action_scale must be non-zero, got {scale.tolist()}")
        if isinstance(action_offset, str):
            if action_offset != "default":
                raise ValueError(f"ActuatorWrapper: action_offset must be 'default', a number or an array, got {action_offset!r}")
            offset = np.concatenate([default_offset[ch] for ch in channels])
        else:
            o = _per_joint(action_offset, A, "action_offset", convert_only=True)
            offset = _per_joint(np.tile(o, len(channels)) if o.shape == (J,) and A != J else o, A, "action_offset")
        self._scale, self._offset = scale, offset
        low, high = -np.ones(A), np.ones(A)
        if "pos" in channels:
            low[:J], high[:J] = position_bounds(self._range, self._kinds, scale[:J], offset[:J])
        self.action_space = gym.spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)
        self._nact = A

    def _setup_normalized(self, channels: list[str], default_scale: dict[str, np.ndarray]) -> None:
        """``Box(-1, 1)`` onto each joint's reachable targets (:func:`~actuator_gym.actions.normalized_mapping`)."""
        parts = []
        for ch in channels:
            if ch == "pos":
                parts.append(normalized_mapping("position", ranges=self._range, kinds=self._kinds,
                                                default_pos=self._default_pos))
            else:
                name = "actuator_velocity_limit" if ch == "vel" else "actuator_effort_limit"
                parts.append(normalized_mapping("velocity" if ch == "vel" else "effort", default_scale=default_scale[ch],
                                                limits=joint_limits(self.collection, self._cols_idx, name)))
        self._scale = np.concatenate([p[0] for p in parts])
        self._offset = np.concatenate([p[1] for p in parts])
        A = len(self._scale)
        self.action_space = gym.spaces.Box(-np.ones(A, np.float32), np.ones(A, np.float32), dtype=np.float32)
        self._nact = A

    @property
    def action_scale(self) -> np.ndarray:
        """``(num_actions,)`` target units per action unit, per action element (a copy)."""
        return self._scale.copy()

    @property
    def action_offset(self) -> np.ndarray:
        """``(num_actions,)`` the target of action 0, per action element (a copy)."""
        return self._offset.copy()

    # ---------------------------------------------------------------------------------------
    # runtime
    # ---------------------------------------------------------------------------------------
    def _reset_targets(self) -> None:
        c = self._cols
        self._tgt_pos[0, c] = self._default_pos
        self._tgt_vel[0, c] = 0.0
        self._tgt_eff[0, c] = 0.0

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
                f"ActuatorWrapper: action must be a numeric array of shape ({self._nact},), got {type(action).__name__}"
            )
        else:
            a = real_array(action, "action", "ActuatorWrapper")
        if a.shape != (self._nact,):
            over = (f"for action_mode={self.action_mode!r} over joints {list(self.joint_names)}" if self.rotors is None
                    else f"(thrust commands) over rotors {list(self.rotor_names)}")
            raise ValueError(f"ActuatorWrapper: action must have shape ({self._nact},) {over}, got shape {a.shape}")
        finite = np.isfinite(a)
        if not finite.all():
            i = int(np.flatnonzero(~finite)[0])
            raise ValueError(f"ActuatorWrapper: action[{i}] ({self._labels[i]}) is {a[i]}; actions must be finite")
        return a

    def _plan_targets(self) -> None:
        """How :meth:`_write_targets` computes ``offset + scale * action`` (clipped into the joint
        range on the position channel) into the collection's target rows, per channel: the driven
        joints are the first ``J`` columns of the collection (passive joints come last), so the
        action elements are gathered in column order (the per-element constants permuted alike:
        the same values) and the result lands in the row's first ``J`` columns through a view.
        ``(gather or None (already in order), scale, offset, (lo, hi) or None, view)`` per channel."""
        J, A, cols = len(self.joint_names), self._nact, self._cols_idx
        order = np.argsort(cols, kind="stable")
        if not np.array_equal(cols[order], np.arange(J)):  # pragma: no cover - the layout guarantees it
            raise RuntimeError(f"ActuatorWrapper: the driven joints are not the collection's first {J} columns")
        plan = []
        for k, ch in enumerate(self._channels):
            dest = {"pos": self._tgt_pos, "vel": self._tgt_vel, "eff": self._tgt_eff}[ch]
            idx = k * J + order
            gather = None if J == A and np.array_equal(order, np.arange(J)) else idx
            bounds = (self._lo[order], self._hi[order]) if ch == "pos" else None
            plan.append((gather, self._scale[idx], self._offset[idx], bounds, dest[0, :J]))
        self._target_plan = plan

    def _write_targets(self, a: np.ndarray) -> None:
        if self.rotors is not None:
            self.rotors.set_actions(a[None])
            return
        for gather, scale, offset, bounds, view in self._target_plan:
            if gather is None:
                t = scale * a
            else:
                t = a[gather]  # (fancy indexing: faster than np.take with out=)
                t *= scale
            if bounds is None:
                np.add(t, offset, out=view)  # offset + scale * action
            else:  # position targets clipped into the joint range
                t += offset
                np.maximum(t, bounds[0], out=t)
                np.minimum(t, bounds[1], out=view)

    def _substep(self, k: int) -> None:
        """The env's per-substep hook: the substep engine (actuators -> qfrc_applied, engine servos'
        ctrl); the env's own actuators are replaced (their ctrl zeroed at the first substep)."""
        if k == 0:
            self._ctrl.fill(0.0)
        self.engine.substep(k)

    def _check_open(self, what: str) -> None:
        if self._closed:
            raise ValueError(f"ActuatorWrapper: {what}() called after close(); the actuators are detached from the env")

    def step(self, action):
        if self._closed:
            self._check_open("step")
        a = self._check_action(action)
        self._write_targets(a)
        engine = self.engine
        if (frame_skip := self._sim.frame_skip) != engine.num_substeps:
            engine.resize(int(frame_skip))
        engine.begin()  # and the participants' begin (engine servos)
        obs, reward, terminated, truncated, info = self.env.step(a if self._pass_action else self._inner_zero)
        if engine.substeps_run != engine.num_substeps:
            raise RuntimeError(
                f"ActuatorWrapper: the substep hook ran {engine.substeps_run} times in one step, expected "
                f"frame_skip={engine.num_substeps}; the env does not call its simulation hook (unsupported "
                "Gymnasium version? actuator-gym needs gymnasium>=1.0,<2)"
            )
        info = dict(info, physics_diverged=take_diverged(self._warnings))  # MuJoCo reset a diverged simulation
        truncated = truncated or info["physics_diverged"]  # (the episode is over, whatever its state says now)
        if self._lazy:  # the raw rows copied once; info["actuator"] computed on first access
            snap = engine.snapshot(self._snap_cols, _JOINT_STATE, self._state)
            self.episode_stats.defer(snap)
            info["actuator"] = LazyTelemetry(snap.values)
        else:  # rotor groups, engine servos, native motor telemetry: the values read from the engine now
            tel = self._telemetry()
            self.episode_stats.update(tel)
            info["actuator"] = LazyTelemetry(values=tel)
        if terminated or truncated:
            info[EPISODE_INFO_KEY] = self.episode_stats.env_record(0)
        return obs, reward, terminated, truncated, info

    def _telemetry(self) -> dict[str, np.ndarray]:
        """The engine's step telemetry (:data:`~actuator_gym.substep.TELEMETRY`) in action order,
        the engine servos' columns from MuJoCo's own actuator force; rotor groups:
        :data:`~actuator_gym.rotors.ROTOR_TELEMETRY`."""
        if self.rotors is not None:
            return {k: v[0] for k, v in self.engine.telemetry().items()}
        tel = self.engine.telemetry(self._tel_cols)
        if self._servos:
            self._servos.finish(tel, self._dt)
        be, cols = self.backend, self._tel_cols[1]  # the state after the step, as the env's observation sees it
        tel["joint_pos"], tel["joint_vel"] = be.joint_pos()[0][cols], be.joint_vel()[0][cols]
        if self._native and self._native.has_motor_telemetry:  # motor_temperature, motor_current
            tel.update(self._native.motor_telemetry(cols))
        return tel

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self._check_open("reset")
        check_seed(seed, "ActuatorWrapper.reset")  # before the env's own seeding sees it
        if options is not None and not isinstance(options, Mapping):
            raise TypeError(f"ActuatorWrapper.reset: options must be a dict or None, got {type(options).__name__}")
        obs, info = self.env.reset(seed=seed, options=options)
        if self._randomized:
            # the actuator randomness comes from the env's seeded generator: seeded runs reproduce
            self.groups.seed(int(self.env.unwrapped.np_random.integers(0, 2**63 - 1)))
        self.groups.reset()
        if self._native:
            self._native.reset()
        self.episode_stats.reset()
        for g in self._randomized:
            self._param_cache[g] = {k: v[0].numpy().copy() for k, v in self.groups[g].parameters().items()}
        if self._servos:
            self._servos.apply_gains()
        if self.collection is not None:
            self._reset_targets()
        info = dict(info, physics_diverged=take_diverged(self._warnings))  # (and the counters cleared)
        info["actuator"] = {"parameters": self.parameters()}
        info["action_scale"], info["action_offset"] = self.action_scale, self.action_offset
        return obs, info

    def set_actuator_parameter(self, group: str, name: str, value: Any, joints: Any = None) -> None:
        """Set parameter ``name`` of ``group`` now, for its joints ``joints`` (None = all; regexes
        over the group's joint names, or indices): validated with the parameter's domain, in force
        from the next substep, shown by :meth:`parameters`, and the new nominal value over later
        resets (docs/actuators.md, "Changing parameters at run time"). Engine-servo groups rewrite
        the MuJoCo servo's gains."""
        self._check_open("set_actuator_parameter")
        self.groups.set_parameter(group, name, value, joint_ids=joints)
        self._param_cache[group] = {k: v[0].numpy().copy() for k, v in self.groups[group].parameters().items()}
        if self._servos:
            self._servos.apply_gains()
        if self._native:
            self._native.parameters_changed()

    def parameters(self) -> dict[str, dict[str, np.ndarray]]:
        """``{group: {parameter: values in force (group joints or rotors,)}}`` (fresh arrays) for this episode."""
        return {g: {k: v.copy() for k, v in ps.items()} for g, ps in self._param_cache.items()}

    def close(self):
        """Detach the actuators (the env's own simulation step is restored) and close the env.
        Idempotent; ``step`` / ``reset`` afterwards are a ``ValueError``."""
        if self._closed:
            return
        self._closed = True
        try:
            self._sim.set_substep_hook(None)
            if self._native:
                self._native.uninstall()
            for g in self.rotors or ():
                clear = getattr(self.rotors.group(g).writer, "clear", None)
                if clear is not None:
                    clear()
        finally:
            super().close()
