"""The batched tasks' ``execution=`` option (``gym.make(id, execution=...)``, ``gym.make_vec(id, ...,
execution=...)``, ``BatchedTask(execution=...)``), docs/native.md:

* ``"explicit"`` (default): the runtime's substep loop computes the groups in numpy at every substep.
* ``"native"``: every joint group compiled into MuJoCo 4's own actuators (the compiler the wrapper
  uses, :class:`~actuator_gym.backends.mujoco_native.NativeActuators`): the task's MJCF is compiled
  with the native actuators appended *before* the batch is built; each env's values in force are
  written into its world's model fields (``mujoco.batch.Batch.expand``: ``gainprm``, ``biasprm``,
  ``forcerange``, ``actrange``, ``actuator_delay``) at every reset and parameter change; each reset
  env's delay history is filled with its first command; a control step is one
  ``Batch.step(nstep=decimation)`` call for every world. Backends ``"mujoco"`` and ``"mujoco_warp"``
  (the same compiled model on MuJoCo-Warp: the same fields batched per world, one
  ``step(nstep=decimation)`` of every world, no actuator kernels of ours; PD drives there are the
  ``dcmotor``'s controller, MuJoCo-Warp 4.0 having no ``pid`` gain, and PID drives / ``const_effort``
  have no native form).
* ``"auto"``: **per group**, as on the wrapper
  (:func:`~actuator_gym.backends.mujoco_native.native_plan`): under Euler each group with an exact
  native form is compiled into MuJoCo actuators and the others run explicitly beside them (a mix:
  ``task.execution == "mixed"``); under another integrator only the groups with native-only DC-motor
  extras run natively. A mix runs the engine's per-substep loop (``SubstepEngine.mixed``): the
  explicit groups' efforts into ``qfrc_applied`` (zero on the native joints) and one
  ``Batch.step(nstep=1, derived=False)`` per substep; the native groups' controls are written once
  per control step. On Newton ``"auto"`` is explicit.

:class:`TaskNative` is the task's native side; the task calls it at construction, reset, parameter
change and step.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["task_execution", "TaskNative", "group_execution"]

_VALUES = ("explicit", "native", "auto")


NATIVE_BACKENDS = ("mujoco", "mujoco_warp")
"""The batched backends with native execution (MuJoCo's actuators in ``mujoco.batch`` / MuJoCo-Warp)."""


def task_execution(execution: Any, backend: Any, owner: str) -> str:
    """The requested ``execution=`` checked against the backend: ``"explicit"``, ``"native"`` or
    ``"auto"`` (``"auto"`` on a backend without native execution, Newton, is ``"explicit"``);
    ``"native"`` there is a ``ValueError``."""
    if execution not in _VALUES:
        raise ValueError(f"{owner}: execution must be one of {_VALUES}, got {execution!r}")
    if backend not in NATIVE_BACKENDS and execution != "explicit":
        if execution == "native":
            raise ValueError(
                f"{owner}: execution='native' runs on backend 'mujoco' (mujoco.batch) or 'mujoco_warp' only; "
                f"backend={backend!r} has no MuJoCo actuators; use execution='explicit' or 'auto' (explicit there)"
            )
        return "explicit"
    return execution


class TaskNative:
    """The native side of one batched task (module doc).

    Args:
        collection: the task's joint groups (built before the backend), or None.
        rotor_groups: names of the task's rotor groups (they have no native form).
        model: the task's compiled model (options and joint properties already written).
        xml: the task's MJCF (recompiled with the native actuators).
        execution: ``"native"`` or ``"auto"``.
        owner: the task's name, for messages.
        backend: ``"mujoco"`` or ``"mujoco_warp"`` (the engine the groups compile for: on MuJoCo-Warp a
            PID drive or a ``const_effort`` has no native form, ``"auto"`` runs such a group explicitly).

    ``active`` is False where ``"auto"`` runs every group explicitly (then :attr:`model` is the
    task's own); otherwise :attr:`model` is the model with the native actuators (the task builds its
    backend from it) and :attr:`actuators` the compiled groups, the native ones only (:meth:`attach`
    binds them to the backend's worlds). :attr:`execution` is ``"native"``, or ``"mixed"`` where some
    groups run explicitly beside them; :attr:`plans` says which (``None``: explicit).
    """

    def __init__(self, collection: Any, rotor_groups: Any, model: Any, xml: str, execution: str, owner: str,
                 backend: str = "mujoco"):
        import mujoco

        from ..backends.mujoco_native import NativeActuators, copy_model_values, native_plan

        self.active, self.model, self.execution, self.plans = False, model, "explicit", {}
        if rotor_groups:
            if execution == "native":
                raise ValueError(f"{owner}: execution='native': group '{next(iter(rotor_groups))}' is a rotor group "
                                 "(ThrusterCfg), which has no MuJoCo-native form; use execution='explicit' (or 'auto')")
            return
        if collection is None:
            return
        self.plans = native_plan(collection, model, execution, owner, backend)  # per group ("auto": Euler, native-only extras)
        native = {g: p for g, p in self.plans.items() if p is not None}
        self.active = bool(native)
        if not self.active:
            return
        self.execution = "native" if len(native) == len(self.plans) else "mixed"
        spec = mujoco.MjSpec.from_string(xml)
        spec.option.timestep = float(model.opt.timestep)  # the delays' buffers are sized in substeps of it
        self.actuators = NativeActuators(spec, collection.joint_names, native)
        self.model = self.actuators.compile_model()
        copy_model_values(model, self.model)  # the task's options and joint properties

    @staticmethod
    def joint_names(model: Any) -> tuple[str, ...]:
        """The model's 1-DOF joints, as the batched backend will list them (the collection is built first)."""
        from ..backends.mujoco import joint_info

        return joint_info(model).names

    motor_telemetry: dict = {}
    """The native motor physics' telemetry of the last control step (``MOTOR_TELEMETRY`` keys,
    ``(num_envs, num_joints)``; empty when no group has the thermal model or inductance)."""

    def attach(self, backend: Any) -> None:
        """Run in ``backend``'s worlds (a :class:`~actuator_gym.backends.mujoco_batch.MujocoBatchBackend` or a
        :class:`~actuator_gym.backends.mujoco_warp.MujocoWarpBackend`)."""
        self.backend = backend
        self.actuators.attach(backend)
        self.motor_telemetry = self.actuators.motor_telemetry()  # the same keys from the first info on

    def reset(self, env_ids: np.ndarray) -> None:
        """After the groups re-drew ``env_ids``' parameters and the backend reset their worlds: the
        values in force into those worlds' fields; their delay histories are filled at the next step."""
        self.actuators.write_parameters(env_ids)
        self.actuators.reset(env_ids)
        if self.motor_telemetry:  # reset worlds: the winding at ambient, no current yet
            fresh = self.actuators.motor_telemetry()
            for key, value in self.motor_telemetry.items():
                value[env_ids] = fresh[key][env_ids]
            cur = self.motor_telemetry["motor_current"]
            cur[env_ids] = np.where(np.isnan(cur[env_ids]), np.nan, 0.0)

    def parameters_changed(self, env_ids: Any = None) -> None:
        self.actuators.write_parameters(env_ids)

    def run(self, engine: Any) -> None:
        """One control step of every world: the engine's native step (targets into ``ctrl``, one
        ``Batch.step(nstep=decimation)``, the last substep's efforts back; a mix: the explicit groups
        per substep, one ``Batch.step(nstep=1)`` each), then the derived fields."""
        be = self.backend
        engine.begin()
        engine.advance_native(lambda n: be.step(nstep=n, derived=False))
        self.motor_telemetry = self.actuators.motor_telemetry()  # before the derived pass rewrites act_dot
        be.refresh_derived()


def group_execution(collection: Any, rotor_groups: Any, native: TaskNative | None) -> dict[str, str]:
    """``{group: "native" | "explicit"}`` of a task (``task.group_execution``, as the wrapper's):
    every joint group, then the rotor groups (explicit: rotor dynamics run in the substep engine)."""
    plans = native.plans if native is not None else {}
    out = {g: "explicit" if plans.get(g) is None else "native" for g in (collection or ())}
    out.update({g: "explicit" for g in (rotor_groups or ())})
    return out


def refuse_native_only(collection: Any, execution: str, owner: str) -> None:
    """An explicit task (``execution="explicit"``, or ``"auto"`` resolved so) with a group that runs only
    natively (the DC-motor extras) is a ``ValueError`` naming the group and the fields, at construction."""
    if collection is not None and execution == "explicit":
        from ..backends.mujoco_native import refuse_native_only as refuse

        refuse(collection, owner, execution)
