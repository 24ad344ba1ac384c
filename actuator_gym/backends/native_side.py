"""The native side: actuator groups compiled into MuJoCo's own actuators (``execution="native"`` /
``"auto"``, docs/native.md), one class for the wrapper and the batched tasks.

:class:`NativeSide` plans the groups (:func:`~actuator_gym.backends.mujoco_native.native_plan`:
per group under ``"auto"``; refusals name the group and the reason), compiles the consumer's model
with the native actuators appended (:class:`~actuator_gym.backends.mujoco_native.NativeActuators`),
then runs in worlds that offer ``model_field`` / ``field`` / ``output``:

* the wrapper (:meth:`NativeSide.for_env`): one ``MjData`` of the compiled model seen as a batch of
  one (:class:`OneWorld`); once every check of the wrapper passed, :meth:`NativeSide.install` makes the
  env use that model: the values the env's model holds (options, physical properties edited at run
  time, the wrapper's joint properties) are copied over, so the env's own options, observation and
  rendering stay as they were; its own actuators keep their ids and control addresses (their
  controls are zeroed, as on the explicit path: the groups replace them);
* the batched tasks (:meth:`NativeSide.for_task`): the task's MJCF is compiled with the native actuators
  *before* the batch is built, and :meth:`NativeSide.attach` binds the backend's worlds (``mujoco.batch``
  per-world fields through ``Batch.expand``, or MuJoCo-Warp's, where PD drives are the ``dcmotor``'s
  controller and PID drives / ``const_effort`` have no native form).

Either way each env's values in force are written into its world's model fields at every reset and
parameter change, each reset env's delay history is filled with its first command, and the substep
engine runs a control step as one physics call (:class:`~actuator_gym.runtime.execution.Native`) or, where
``"auto"`` runs some groups explicitly beside them (a mix: ``execution == "mixed"``), one physics
substep per call (:class:`~actuator_gym.runtime.execution.Mixed`).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import mujoco
import numpy as np

from .mujoco import MujocoBackend, joint_info
from .mujoco_native import (EXECUTIONS, NativeActuators, copy_model_values, native_only_fields, native_plan,
                                      refuse_native_only)

__all__ = ["NativeSide", "OneWorld", "resolve_execution", "group_execution", "NATIVE_BACKENDS"]

NATIVE_BACKENDS = ("mujoco", "mujoco_warp")
"""The batched backends with native execution (MuJoCo's actuators in ``mujoco.batch`` / MuJoCo-Warp)."""


class OneWorld:
    """One ``MjModel`` + ``MjData`` seen as a batch of one world: the ``(1, ...)`` views
    :class:`~actuator_gym.backends.mujoco_native.NativeActuators` reads and writes (the batched
    backends offer the same three methods: ``model_field`` = per-world model fields, ``field`` =
    state, ``output`` = the last substep's outputs), and the physics the engine steps."""

    def __init__(self, model: mujoco.MjModel, data: mujoco.MjData):
        self.model, self.data = model, data

    def model_field(self, name: str) -> np.ndarray:
        return getattr(self.model, name)[None]

    def field(self, name: str) -> np.ndarray:
        if name == "time":
            return np.array([self.data.time])
        return getattr(self.data, name)[None]

    output = field

    def step(self, nstep: int, derived: bool) -> None:
        """``nstep`` substeps in one ``mj_step`` call (the env's ``mj_rnePostConstraint`` follows)."""
        mujoco.mj_step(self.model, self.data, nstep)

    def refresh_derived(self) -> None:
        """What Gymnasium's simulation step computes after ``mj_step`` for the observation
        (``mj_rnePostConstraint``: ``cacc``, ``cfrc_int``, ``cfrc_ext``)."""
        mujoco.mj_rnePostConstraint(self.model, self.data)


class NativeSide:
    """The native side of one consumer (module doc).

    Args:
        collection: the joint groups (None: nothing runs natively).
        model: the consumer's model in force (options and joint properties written).
        spec: a callable giving the model's ``MjSpec`` (called only when some group runs natively).
        execution: ``"explicit"``, ``"native"`` or ``"auto"``.
        owner: the consumer's name, for messages.
        engine: ``"mujoco"`` or ``"mujoco_warp"`` (what the groups compile for).

    :attr:`active` is False where every group runs explicitly (then :attr:`model` is ``model``);
    otherwise :attr:`model` is the model with the native actuators and :attr:`actuators` the
    compiled groups (the native ones only). :attr:`execution` is ``"explicit"``, ``"native"`` or
    ``"mixed"``; :attr:`plans` says which group runs how (``None``: explicit).
    """

    def __init__(self, collection: Any, model: Any, spec: Callable[[], Any], execution: str, owner: str,
                 engine: str = "mujoco"):
        self.plans = {} if collection is None else native_plan(collection, model, execution, owner, engine)
        native = {g: p for g, p in self.plans.items() if p is not None}
        self.active = bool(native)
        self.execution = "explicit" if not native else "native" if len(native) == len(self.plans) else "mixed"
        self.model = model
        self.motor_telemetry: dict[str, np.ndarray] = {}
        """The native motor physics' telemetry of the last control step (``MOTOR_TELEMETRY`` keys,
        ``(num_envs, num_joints)``; empty when no group has the thermal model or inductance)."""
        self.has_motor_telemetry = False
        if not native:
            return
        spec = spec()
        spec.option.timestep = float(model.opt.timestep)  # the delays' buffers are sized in substeps of it
        self.actuators = NativeActuators(spec, collection.joint_names, native)
        self.model = self.actuators.compile_model()
        copy_model_values(model, self.model)  # the consumer's options and joint properties

    @classmethod
    def for_env(cls, sim: Any, collection: Any, execution: str, channels: Sequence[str], backend: Any) -> "NativeSide":
        """The wrapper's side over ``sim`` (a :class:`~actuator_gym.wrappers.protocol.SubstepHookEnv`):
        compiled from the env's model file (``sim.model_spec()``) into one world of its own
        (:attr:`data`, :attr:`world`, :attr:`backend`: a ``MujocoBackend`` over it with ``backend``'s
        joints; the env's data and ``backend`` where nothing runs natively). ``channels``: the target
        channels the actions write (``"pos"``, ``"vel"``, ``"eff"``; the others change only at resets).
        Writes nothing into the env: :meth:`install` does."""
        spec_of = getattr(sim, "model_spec", None)
        if not callable(spec_of):
            if execution == "auto" and not native_only_fields(collection):
                execution = "explicit"  # no model file to recompile: every group explicit

            def spec_of():
                raise ValueError("ActuatorWrapper: execution='native' needs a Gymnasium MujocoEnv (its model file is "
                                 f"recompiled with the native actuators); {type(sim).__name__} has no model_spec()")
        side = cls(collection, sim.model, spec_of, execution, "ActuatorWrapper")
        side.data, side.backend = sim.data, backend
        if side.active:
            if side.actuators.env_controls != sim.model.nu:
                raise ValueError(f"ActuatorWrapper: execution='native': the env's model file has "
                                 f"{side.actuators.env_controls} controls but the env's model {sim.model.nu}; was the "
                                 "model built from another file?")
            side.data = mujoco.MjData(side.model)
            side.world = OneWorld(side.model, side.data)
            side.backend = MujocoBackend(side.model, side.data, backend.joint_names)
            side.attach(side.world)
            side.actuators.step_channels = tuple(("pos", "vel", "eff").index(ch) for ch in channels)
        return side

    @classmethod
    def for_task(cls, collection: Any, rotor_groups: Any, model: Any, xml: str, execution: str, owner: str,
                 backend: str = "mujoco") -> "NativeSide":
        """A batched task's side: its MJCF ``xml`` recompiled (then :meth:`attach` the backend built
        from :attr:`model`); rotor groups have no native form (``"auto"``: everything explicit)."""
        if rotor_groups:
            if execution == "native":
                raise ValueError(f"{owner}: execution='native': group '{next(iter(rotor_groups))}' is a rotor group "
                                 "(ThrusterCfg), which has no MuJoCo-native form; use execution='explicit' (or 'auto')")
            collection = None
        return cls(collection, model, lambda: mujoco.MjSpec.from_string(xml), execution, owner, backend)

    @staticmethod
    def joint_names(model: Any) -> tuple[str, ...]:
        """The model's 1-DOF joints, as a batched backend lists them (a task builds its collection first)."""
        return joint_info(model).names

    def attach(self, worlds: Any) -> None:
        """Run in ``worlds`` (:class:`OneWorld`, a :class:`~actuator_gym.backends.mujoco_batch.MujocoBatchBackend`
        or a :class:`~actuator_gym.backends.mujoco_warp.MujocoWarpBackend`)."""
        self.actuators.attach(worlds)
        self.motor_telemetry = self.actuators.motor_telemetry()  # the same keys from the first info on
        self.has_motor_telemetry = bool(self.motor_telemetry)

    def install(self, sim: Any) -> None:
        """The wrapper's, after every check passed: the env runs the native model from now on."""
        m, d, env_model, src = self.model, self.data, sim.model, sim.data
        copy_model_values(env_model, m)
        self.actuators.write_parameters()
        d.qpos[:], d.qvel[:], d.time = src.qpos, src.qvel, src.time
        mujoco.mj_forward(m, d)
        sim.install_model(m, d, int(env_model.nu))
        # the env's own actuators are replaced (as on the explicit path): their controls stay zero
        # (the step does not write the action into them; a reset's mj_resetData zeroes them)
        d.ctrl[:int(env_model.nu)] = 0.0

    def uninstall(self, sim: Any) -> None:
        sim.restore_model()

    def reset(self, env_ids: Any = None) -> None:
        """After the groups re-drew ``env_ids``' (None: all) parameters and their worlds were reset: the
        values in force into those worlds' fields; their delay histories are filled at the next step."""
        self.actuators.write_parameters(env_ids)
        self.actuators.reset(env_ids)
        if self.has_motor_telemetry:  # reset worlds: the winding at ambient, no current yet
            rows = slice(None) if env_ids is None else env_ids
            fresh = self.actuators.motor_telemetry()
            for key, value in self.motor_telemetry.items():
                value[rows] = fresh[key][rows]
            cur = self.motor_telemetry["motor_current"]
            cur[rows] = np.where(np.isnan(cur[rows]), np.nan, 0.0)

    def parameters_changed(self, env_ids: Any = None) -> None:
        self.actuators.write_parameters(env_ids)

    def after_step(self) -> None:
        """A control step ran (before the derived pass rewrites the engine's outputs): its motor
        telemetry (the strategy calls it where :attr:`has_motor_telemetry`)."""
        self.motor_telemetry = self.actuators.motor_telemetry()

    def summary(self) -> dict[str, str]:
        """``{group: "native" | "explicit"}``."""
        return {g: "explicit" if p is None else "native" for g, p in self.plans.items()}


def resolve_execution(execution: Any, backend: Any, owner: str) -> str:
    """A task's ``execution=`` checked against its backend: ``"explicit"``, ``"native"`` or ``"auto"``
    (``"auto"`` on a backend without native execution, Newton, is ``"explicit"``); ``"native"``
    there is a ``ValueError``."""
    if execution not in EXECUTIONS:
        raise ValueError(f"{owner}: execution must be one of {EXECUTIONS}, got {execution!r}")
    if backend not in NATIVE_BACKENDS and execution != "explicit":
        if execution == "native":
            raise ValueError(
                f"{owner}: execution='native' runs on backend 'mujoco' (mujoco.batch) or 'mujoco_warp' only; "
                f"backend={backend!r} has no MuJoCo actuators; use execution='explicit' or 'auto' (explicit there)"
            )
        return "explicit"
    return execution


def group_execution(collection: Any, rotor_groups: Any, side: NativeSide | None, execution: str,
                    owner: str) -> dict[str, str]:
    """``{group: "native" | "explicit"}`` of a task (``task.group_execution``, as the wrapper's): every
    joint group, then the rotor groups (explicit: rotor dynamics run in the substep engine). An
    explicit task with a group that runs only natively (the DC-motor extras) is a ``ValueError``
    naming the group and the fields."""
    if collection is not None and execution == "explicit":
        refuse_native_only(collection, owner, execution)
    plans = side.plans if side is not None else {}
    out = {g: "explicit" if plans.get(g) is None else "native" for g in (collection or ())}
    out.update({g: "explicit" for g in (rotor_groups or ())})
    return out
