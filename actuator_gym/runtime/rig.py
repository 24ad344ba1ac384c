"""``ActuatorRig``: the actuated pipeline between a policy's actions and the physics, built once
from (joint and rotor groups, the joint state, an :class:`ActionSpec`). It owns the groups
(:class:`~actuator_gym.runtime.groups.ActuatorGroups`), the one :class:`~actuator_gym.runtime.actions.ActionMap`,
the substep engine with its execution strategy, the episode statistics and the one rule for when
``info["actuator"]["parameters"]`` is shown (:meth:`ActuatorRig.shown`: at a reset and after
:meth:`ActuatorRig.set_parameter`). Both front doors hold one: ``ActuatorWrapper`` (Gymnasium glue
around a rig of one env, the engine installed as the env's substep hook) and ``BatchedTask``
(resets, autoreset and ``info`` around a rig of ``num_envs``: :meth:`ActuatorRig.advance`). What
differs stays with the doors: the joints and backend, the native side's compile (:mod:`actuator_gym.backends.native_side`),
and the format of ``info``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch

from .actions import ActionMap
from .episode_stats import EpisodeStats
from .groups import ActuatorGroups
from .substep import SubstepEngine

__all__ = ["ActionSpec", "ActuatorRig", "RigDoor", "check_mass_matrix"]


@dataclass(frozen=True)
class ActionSpec:
    """What the policy's actions mean (the :class:`~actuator_gym.runtime.actions.ActionMap`'s arguments).

    ``joints``: a backend's static joint info (None: rotor groups only); ``cols``: the action joints'
    columns, in action order; ``peaks``: the effort default scale per action joint
    (:func:`~actuator_gym.runtime.actions.motor_peaks`); the rest as :class:`~actuator_gym.runtime.actions.ActionMap`
    takes them."""

    mode: str = "position"
    joints: Any = None
    cols: Sequence[int] = ()
    peaks: Any = None
    normalize: Any = None
    scale: Any = None
    offset: Any = "default"
    bounds: Any = None


class RigDoor:
    """What both front doors (``ActuatorWrapper``, ``BatchedTask``) show of their rig's action map."""

    action_map: ActionMap

    @property
    def action_scale(self) -> np.ndarray:
        """``(num_actions,)`` target units per action unit, per action element (a copy)."""
        return self.action_map.scale.copy()

    @property
    def action_offset(self) -> np.ndarray:
        """``(num_actions,)`` the target of action 0, per action element (a copy)."""
        return self.action_map.offset.copy()


class ActuatorRig:
    """The actuator and rotor groups, the action map, the engine and the episode statistics of one model.

    Args:
        collection: the joint groups (:class:`~actuator_gym.ActuatorCollection`) or None.
        rotors: the rotor groups (:class:`~actuator_gym.runtime.rotors.RotorGroups`) or None.
        state: the joint state the engine reads and writes (:class:`~actuator_gym.runtime.substep.JointState`).
        actions: the :class:`ActionSpec`.
        physics_dt: the physics step [s]; num_substeps: substeps per control step.
        native: the native side (:class:`~actuator_gym.backends.native_side.NativeSide`) or None.
        participants: further substep participants (run before the rotor groups).
        capture: the engine's CUDA-graph capture option (None: none).
        env: the one env row the actions write (the wrapper: 0); None: every env's row.
        stats_columns: the joint columns the episode statistics cover (None: all).
        owner: the consumer's name, for messages.

    Every check raises before anything is written into the groups' targets.
    """

    def __init__(self, collection: Any, rotors: Any, state: Any, actions: ActionSpec, *, physics_dt: float,
                 num_substeps: int, native: Any = None, participants: Sequence[Any] = (), capture: Any = None,
                 env: int | None = None, stats_columns: Any = None, owner: str):
        self.collection, self.rotors = collection, rotors
        self.groups = ActuatorGroups(collection, rotors)
        """Every group, both kinds: one ``reset`` / ``seed`` / ``parameters``."""
        self.num_envs = self.groups.num_envs
        a = actions
        self.action_map = ActionMap(a.mode, a.joints, a.cols, collection, peaks=a.peaks, normalize=a.normalize,
                                    scale=a.scale, offset=a.offset, bounds=a.bounds, rotors=rotors, owner=owner)
        """The one action map (:class:`~actuator_gym.runtime.actions.ActionMap`)."""
        self.action_map.bind(None if collection is None else collection.target_command, env=env)
        self.engine = SubstepEngine(collection, state, physics_dt, num_substeps, native=native, capture=capture,
                                    participants=list(participants) + ([rotors] if rotors is not None else []))
        """The substep engine and its execution strategy (:mod:`actuator_gym.runtime.substep`)."""
        self.episode_stats = EpisodeStats.of(self.num_envs, collection, rotors, stats_columns)
        """The running episodes' actuator statistics (:mod:`actuator_gym.runtime.episode_stats`)."""
        self.randomized = self.groups.randomized()
        """Groups with a randomized parameter (what a reset re-draws)."""
        self._parameters: tuple[tuple[int, ...], dict] | None = None  # (version, the values gathered then)
        self.parameters_changed = np.zeros(self.num_envs, dtype=bool)
        """Envs whose parameters :meth:`set_parameter` changed since the last :meth:`shown`."""
        self.any_parameters_changed = False
        """Whether any env's parameters changed since the last :meth:`shown` (a ``bool``: the wrapper's per-step test)."""
        self.telemetry: dict[str, np.ndarray] | None = None
        """The last control step's telemetry ``{key: (num_envs, ...)}`` (joints:
        :data:`~actuator_gym.runtime.telemetry.TELEMETRY`; rotors: :data:`~actuator_gym.runtime.rotors.ROTOR_TELEMETRY`),
        written by :meth:`advance` (the batched tasks; the wrapper reads the engine's step per env
        instead, on demand); None until :meth:`keep_telemetry`."""

    def keep_telemetry(self) -> dict[str, np.ndarray]:
        """Keep every env's telemetry in :attr:`telemetry` (zeros until the first :meth:`advance`)."""
        self.telemetry = {k: np.zeros_like(v) for k, v in self.engine.telemetry().items()}
        return self.telemetry

    def advance(self, after: Any = None) -> None:
        """One control step's substeps (whatever the execution strategy), ``after(k)`` after each
        explicit substep; then the step's telemetry into :attr:`telemetry`."""
        self.engine.advance(after=after)
        if self.telemetry is not None:
            for key, value in self.engine.telemetry().items():
                self.telemetry[key][:] = value

    def reset(self, env_ids: Any = None) -> None:
        """After the groups' and the state's reset of ``env_ids`` (None: all): the values in force into
        the native worlds, the reset targets, the episode statistics and kept telemetry cleared."""
        self.engine.reset_envs(env_ids)
        self.action_map.reset(env_ids)
        if self.collection is not None:  # the servos on a bus execute the reset targets
            self.collection.reset_commands(env_ids)
        self.episode_stats.reset(env_ids)
        for v in (self.telemetry or {}).values():
            v[slice(None) if env_ids is None else env_ids] = 0

    def set_parameter(self, group: str, name: str, value: Any, env_ids: Any = None, joints: Any = None) -> None:
        """Set parameter ``name`` of ``group`` for ``env_ids`` (None: all) and the group's ``joints``
        now (validated; nothing changes on error), in force from the next substep (native worlds too),
        shown by the next :meth:`shown`."""
        self.groups.set_parameter(group, name, value, env_ids=env_ids, joint_ids=joints)
        ids = None if env_ids is None else np.asarray(torch.as_tensor(env_ids).cpu())
        self.engine.parameters_changed(ids)
        self.parameters_changed[slice(None) if ids is None else ids] = True
        self.any_parameters_changed = bool(self.parameters_changed.any())

    def parameters(self) -> dict[str, dict[str, np.ndarray]]:
        """``{group: {parameter: (num_envs, group joints or rotors)}}`` in force (fresh arrays, copied from
        values gathered once per change: :meth:`ActuatorGroups.parameters_version`)."""
        version = self.groups.parameters_version()
        if self._parameters is None or self._parameters[0] != version:
            gathered = {g: {k: v.cpu().numpy() for k, v in p.items()} for g, p in self.groups.parameters().items()}
            self._parameters = (version, gathered)
        return {g: {k: v.copy() for k, v in p.items()} for g, p in self._parameters[1].items()}

    def shown(self, reset: Any = None) -> np.ndarray:
        """The rule for ``info["actuator"]["parameters"]``, the same on both doors: ``(num_envs,)``
        bool, the envs ``reset`` in this call (None: none) or whose parameters were set since the
        last call (then cleared)."""
        shown = self.parameters_changed.copy()
        if reset is not None:
            shown |= reset
        self.parameters_changed[:] = False
        self.any_parameters_changed = False
        return shown


def check_mass_matrix(collection: Any, backend: Any, backend_name: str, owner: str) -> None:
    """``ValueError`` naming the groups when some group needs the mass-matrix terms (Stable-PD:
    ``effort_mode="implicit"`` or ``ImplicitActuatorCfg``) and ``backend`` does not provide them."""
    if collection is None or not collection.needs_mass_matrix:
        return
    try:
        backend.mass_matrix_terms(np.arange(collection.num_joints))
    except NotImplementedError as exc:
        groups = collection.stable_pd_groups
        servos = [g for g in groups if getattr(collection[g].cfg, "solver_side", False)]
        modes = [g for g in groups if g not in servos]
        who = [f"groups {modes} use effort_mode='implicit'"] if modes else []
        if servos:
            who.append(f"implicit groups {servos} (ImplicitActuatorCfg: their PD is solved in the "
                       "Stable-PD effort mode)")
        fixes = ["backend='mujoco'"] + (["effort_mode='explicit'"] if modes else []) + (
            ["an explicit model (e.g. IdealPDActuatorCfg) for the implicit groups"] if servos else [])
        raise ValueError(
            f"{owner}: {'; '.join(who)}, which needs the inverse mass matrix from the physics backend; "
            f"backend {backend_name!r} does not provide it ({exc}); use {' or '.join(fixes)}"
        ) from None
