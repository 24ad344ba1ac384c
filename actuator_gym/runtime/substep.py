"""The substep engine: the one place that runs the actuators at every physics substep.

Every consumer -- :class:`~actuator_gym.wrappers.ActuatorWrapper` on a Gymnasium env, the batched
tasks, the device loop on the Warp backends, rotor groups -- runs the same order of operations for
each of the ``S`` physics substeps of a control step::

    q, qd  = state.joint_pos(), state.joint_vel()            # the state the actuators see
    [M^-1, bias = state.mass_matrix_terms(ids)]              # only for effort_mode="implicit" groups
    collection.compute(q, qd, dt, ...)                        # every joint group: Delay -> Drive -> Clamps
    state.set_joint_effort(collection.output_command.effort)  # generalized forces on the joints' DOFs
    [participants: rotor groups (thrust dynamics -> writer)]
    telemetry.record(k, applied, qd)
    physics.step(1, derived)                                  # one substep

How a control step runs is the engine's execution strategy (:mod:`actuator_gym.runtime.execution`:
``Explicit``, ``Captured``, ``Native``, ``Mixed``), chosen once when the engine is built from what it
is given (``native=``, ``capture=``). A consumer calls :meth:`SubstepEngine.advance`, or, when its env
runs the substeps itself (the wrapper's Gymnasium env), :meth:`SubstepEngine.install` once; it never
asks which strategy runs. Telemetry: :data:`~actuator_gym.runtime.telemetry.TELEMETRY`, one meaning for
the wrapper, the single task env and the vector env.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, Sequence, runtime_checkable

import numpy as np

from .lazy_telemetry import LazyTelemetry, StepSnapshot
from .device import TorchJointState, graph_capturable
from .execution import strategy_for
from .friction import JointFriction
from .telemetry import TELEMETRY, StepTelemetry

__all__ = ["JointState", "SubstepParticipant", "NativeGroups", "TorchJointState", "StepTelemetry", "StepSnapshot",
           "LazyTelemetry", "SubstepEngine", "TELEMETRY", "graph_capturable"]


@runtime_checkable
class JointState(Protocol):
    """Where the joint state lives: what the engine reads and writes at each substep.

    Every physics backend satisfies it (:mod:`actuator_gym.backends.protocols`); the device path
    uses :class:`TorchJointState` over a device backend's torch views.
    """

    def joint_pos(self) -> Any:
        """``(num_envs, num_joints)`` [rad or m], valid until the physics advances."""

    def joint_vel(self) -> Any:
        """``(num_envs, num_joints)`` [rad/s or m/s], valid until the physics advances."""

    def set_joint_effort(self, effort: Any) -> None:
        """Generalized force [N·m or N] on each joint's DOF for the coming substep(s)."""

    def mass_matrix_terms(self, joint_ids: Sequence[int]) -> tuple[Any, Any]:
        """``(inverse_mass (N, J, J), bias_force (N, J))`` of the current state (Stable-PD groups)."""


class SubstepParticipant(Protocol):
    """Something besides the joint groups that acts at every substep (rotor groups, engine
    servos): ``substep(k)`` is called after the joint groups computed and wrote their efforts,
    before the physics advances.

    Optional members, used when present: ``begin()`` (the engine's :meth:`SubstepEngine.begin`
    calls it: a control step starts), ``telemetry() -> {key: (num_envs, ...) array}`` (merged into
    :meth:`SubstepEngine.telemetry`: the participant's ``info["actuator"]`` keys, e.g.
    :data:`actuator_gym.runtime.rotors.ROTOR_TELEMETRY`), ``resize(num_substeps)`` and ``needs_derived``
    (True: it reads derived fields, e.g. body orientations, at every substep).
    """

    def substep(self, k: int) -> None: ...


class NativeGroups(Protocol):
    """Joint groups compiled into the physics engine's own actuators (native execution; the
    :class:`~actuator_gym.backends.native_side.NativeSide`'s ``actuators``)."""

    def bind_commands(self, pos: Any, vel: Any, eff: Any) -> None:
        """The targets ``(num_envs, num_joints)`` (collection order) :meth:`write_commands` copies."""

    def write_commands(self) -> None:
        """The control step's targets into the engine's controls."""

    groups: Sequence[str]
    """The native groups (the others run explicitly: a mix)."""
    cols: Any
    """Their collection columns."""

    def telemetry(self, computed: Any, applied: Any, qd: Any, substeps: int, deferred: bool = False) -> None:
        """The last substep's commanded and applied efforts and the velocity the actuators read,
        written into ``(num_envs, num_joints)`` collection-order buffers (``substeps``: in this control
        step; ``deferred``: of a step :meth:`defer_telemetry` counted)."""

    def defer_telemetry(self, substeps: int) -> bool:
        """Whether the step just run may be read later through :meth:`snapshot` (then it is counted)."""

    def snapshot(self, cols: Any, extra_keys: Any, extra: Any, substeps: int, physics_dt: float) -> Any:
        """One env's deferred step as a ``StepSnapshot`` (the values :meth:`telemetry` gives)."""

    def substep_power(self) -> Any:
        """``(num_envs, len(cols))``: the power [W] of the substep that just ran (a mix)."""


class SubstepEngine:
    """Runs an :class:`~actuator_gym.ActuatorCollection` (and its participants) at every substep.

    Args:
        collection: the joint groups (``target_command`` already written for this control step), or
            None for a model actuated by participants only (rotor groups: no joint telemetry).
        state: a :class:`JointState` (a backend, or an adapter over one); unused without joint groups.
            Also the physics :meth:`advance` steps unless given one (``step(nstep, derived)``).
        physics_dt: the substep [s].
        num_substeps: substeps per control step (the telemetry's row count; :meth:`resize` changes it).
        participants: rotor groups: :class:`SubstepParticipant` called after the
            joint groups at each substep.
        capture: None (default): the physics runs on the host. ``False`` / ``"auto"``: state and
            physics on a device (no derived pass at the last substep); ``"auto"`` replays the
            actuator part from a CUDA graph where the collection allows it (:func:`graph_capturable`)
            and the state lives on a CUDA device.
        native: the groups compiled into the engine's own actuators
            (:class:`~actuator_gym.backends.native_side.NativeSide`; numpy state, no participants).

    :attr:`strategy` is the execution strategy chosen from these (:mod:`actuator_gym.runtime.execution`).
    ``begin()`` / ``telemetry()`` bracket a control step; :meth:`advance` runs one.
    """

    def __init__(
        self,
        collection: Any,
        state: JointState,
        physics_dt: float,
        num_substeps: int,
        *,
        participants: Sequence[SubstepParticipant] = (),
        capture: Any = None,
        native: Any = None,
    ):
        self.collection, self.state = collection, state
        self.dt = float(physics_dt)
        self.friction = JointFriction.of(collection, state)
        """The friction-budget groups' participant (BAM servos: :mod:`actuator_gym.runtime.friction`), or None."""
        self.participants = ([self.friction] if self.friction is not None else []) + list(participants)
        self.begins = [p.begin for p in self.participants if callable(getattr(p, "begin", None))]
        if getattr(collection, "buses", None):  # the collection's buses draw a frame per control step
            self.begins.insert(0, collection.begin_step)
        self.participant_telemetry = [p.telemetry for p in participants if callable(getattr(p, "telemetry", None))]
        self.num_substeps = int(num_substeps)
        self.telemetry_rows: StepTelemetry | None = None
        self.mass_ids = None if collection is None or not collection.needs_mass_matrix else np.arange(collection.num_joints)
        self.derive_every = self.mass_ids is not None or any(getattr(p, "needs_derived", False) for p in self.participants)
        """Whether every substep asks the physics for its derived pass (the mass matrix, body orientations)."""
        if collection is not None:
            applied, computed = collection.applied_effort, collection.computed_effort
            effort = collection.output_command.effort
            if collection.ops.name == "numpy" and not isinstance(state, TorchJointState):  # zero-copy numpy views
                applied, computed, effort = applied.numpy(), computed.numpy(), effort.numpy()
            self.applied, self.computed, self.effort = applied, computed, effort
            """The collection's applied / computed efforts and output command (numpy views on the host)."""
            self.telemetry_rows = StepTelemetry(applied, num_substeps, self.dt)
        self.strategy = strategy_for(self, capture, native)
        """The execution strategy (:mod:`actuator_gym.runtime.execution`), chosen once."""

    # -- one control step ------------------------------------------------------------------------
    def begin(self) -> None:
        """Start a control step (the telemetry counts its substeps from here; the collection's
        ``begin_step``: its buses' frames; participants' ``begin``)."""
        self.strategy.begin()
        if self.telemetry_rows is not None:
            self.telemetry_rows.begin()
        for begin in self.begins:
            begin()

    def advance(self, physics: Any = None, after: Callable[[int], None] | None = None) -> None:
        """One control step: :meth:`begin`, then the strategy advances ``physics`` (default: the
        state) by :attr:`num_substeps` substeps, calling ``after(k)`` after each substep ``k`` where
        substeps run one by one (not on native groups)."""
        self.begin()
        self.strategy.advance(self.state if physics is None else physics, after)

    def substep(self, k: int) -> None:
        """Substep ``k`` of the control step (state -> actuators -> efforts -> participants ->
        telemetry), for a consumer whose env runs the substeps (explicit strategies only)."""
        self.strategy.substep(k)

    def install(self, sim: Any, ctrl: np.ndarray) -> None:
        """Run in ``sim``, an env that runs the substeps itself (the wrapper's
        :class:`~actuator_gym.wrappers.protocol.SubstepHookEnv`): its substep hook, or, with native
        groups, its model and whole simulation step; ``ctrl``: the env's own controls (kept at zero).
        The consumer calls :meth:`begin` before each env step; :meth:`uninstall` undoes it."""
        self.strategy.install(sim, ctrl)

    def uninstall(self, sim: Any) -> None:
        self.strategy.uninstall(sim)

    def reset_envs(self, env_ids: Any = None) -> None:
        """After the groups re-drew ``env_ids``' parameters (None: all) and the physics reset their
        worlds: native groups write the values in force into those worlds, friction-budget groups
        their armature; nothing otherwise."""
        self.strategy.reset_envs(env_ids)
        if self.friction is not None:
            self.friction.reset_envs(env_ids)

    def parameters_changed(self, env_ids: Any = None) -> None:
        """After actuator parameters of ``env_ids`` (None: all) were set at run time."""
        self.strategy.parameters_changed(env_ids)

    def resize(self, num_substeps: int) -> None:
        """Change the substeps per control step (a wrapped env whose ``frame_skip`` changed)."""
        if int(num_substeps) != self.num_substeps:
            self.num_substeps = int(num_substeps)
            if self.collection is not None:
                self.telemetry_rows = StepTelemetry(self.applied, num_substeps, self.dt)
            self.strategy.resize()
            for p in self.participants:
                if callable(getattr(p, "resize", None)):
                    p.resize(self.num_substeps)

    # -- what the step reports -------------------------------------------------------------------
    @property
    def substeps_run(self) -> int:
        """Substeps run since :meth:`begin` (the wrapper checks its env called the hook each time)."""
        return self.strategy.substeps

    @property
    def captured(self) -> bool:
        """Whether the actuator part replays a CUDA graph."""
        return self.strategy.captured

    @property
    def note(self) -> str:
        """Why the actuator part is not captured ("" when it is)."""
        return self.strategy.note

    @property
    def defer_native_telemetry(self) -> bool:
        """One consumer reading :meth:`snapshot`: every group native, a step's telemetry is derived on
        demand where the groups allow it (the wrapper's hot path, docs/native.md); no effect otherwise."""
        return self.strategy.defer

    @defer_native_telemetry.setter
    def defer_native_telemetry(self, value: bool) -> None:
        self.strategy.defer = bool(value)

    @property
    def motor_telemetry(self) -> dict[str, np.ndarray]:
        """The motor keys of the last control step, ``(num_envs, num_joints)`` (NaN in the columns of
        groups without them): native motor physics' (``motor_temperature`` [°C], ``motor_current``) and
        BAM servos' (:data:`~actuator_gym.runtime.friction.SERVO_TELEMETRY`); ``{}`` without such groups."""
        native = self.strategy.motor_telemetry
        if self.friction is None:
            return native
        out = self.friction.telemetry()
        for key, value in native.items():
            out[key] = np.where(np.isnan(value), out[key], value) if key in out else value
        return out

    def snapshot(self, cols: tuple[int, Any], extra_keys: tuple[str, ...] = (),
                 extra: Sequence[np.ndarray] = ()) -> StepSnapshot:
        """The control step just run, one env's joints ``cols = (env, joint_ids)``, as a
        :class:`~actuator_gym.runtime.lazy_telemetry.StepSnapshot` (numpy joint groups; the raw rows copied
        once, the :data:`TELEMETRY` values derived from it on demand: the same numbers as
        :meth:`telemetry`); ``extra`` arrays appended under ``extra_keys``."""
        return self.strategy.snapshot(cols, extra_keys, extra)

    def telemetry(self, cols: Any = None) -> dict[str, np.ndarray]:
        """The :data:`TELEMETRY` effort keys of the control step just run (fresh host arrays, one
        env's joints ``cols = (env, joint_ids)`` only when given; the consumer adds ``joint_pos`` /
        ``joint_vel`` after the step; none without joint groups), plus the participants' keys
        (rotor groups: :data:`~actuator_gym.runtime.rotors.ROTOR_TELEMETRY`)."""
        self.strategy.settle()
        out = {} if self.collection is None else self.telemetry_rows.finish(self.computed, self.applied, cols)
        for tel in self.participant_telemetry:
            out.update(tel())
        return out
