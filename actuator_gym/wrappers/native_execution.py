"""``ActuatorWrapper(..., execution="native")``: the wrapper's groups as MuJoCo's own actuators.

:class:`WrapperNative` plans the groups (:func:`~actuator_gym.backends.mujoco_native.native_plan`:
refusals name the group and the reason), compiles the env's model file with the native actuators
appended (:class:`~actuator_gym.backends.mujoco_native.NativeActuators`) and, once every check of
the wrapper passed, makes the env use that model: the values the env's model holds (options,
physical properties edited at run time, the wrapper's joint properties) are copied over, so the
env's own options, observation and rendering stay as they were; its own actuators keep their ids
and control addresses (their controls are zeroed, as on the explicit path: the groups replace them).
The substep engine then runs every control step as one engine call
(:meth:`~actuator_gym.substep.SubstepEngine.advance_native`), or, where ``"auto"`` runs some groups
explicitly (a mix), one ``mj_step(model, data, 1)`` per substep with those groups computed before
each (the engine's explicit loop).
"""

from __future__ import annotations

from functools import partial
from typing import Any, Sequence

import mujoco

from ..backends.mujoco import MujocoBackend
from ..backends.mujoco_native import NativeActuators, copy_model_values, native_only_fields, native_plan

__all__ = ["WrapperNative"]


class WrapperNative:
    """The native side of one :class:`~actuator_gym.wrappers.ActuatorWrapper` (module doc).

    ``active`` is False when the plan runs every group explicitly (``execution="explicit"``, or
    ``"auto"`` where no group is native); then nothing else is used. Where some groups are native
    and others not (``"auto"``, per group), only the native ones are compiled. Construction writes nothing
    into the env; :meth:`install` does.
    """

    def __init__(self, sim: Any, collection: Any, model: mujoco.MjModel, data: mujoco.MjData,
                 joint_names: Sequence[str], execution: str):
        self.plans = native_plan(collection, model, execution, "ActuatorWrapper")
        self.active = any(p is not None for p in self.plans.values())
        self.sim, self.collection = sim, collection
        self.has_motor_telemetry = False
        """Whether :meth:`motor_telemetry` has keys (a group with the thermal model or inductance)."""
        self.env_model, self.env_data = model, data
        if not self.active:
            return
        spec_of = getattr(sim, "model_spec", None)
        if not callable(spec_of) and execution == "auto" and not native_only_fields(collection):  # explicit
            self.plans, self.active = {g: None for g in self.plans}, False
            return
        if not callable(spec_of):
            raise ValueError("ActuatorWrapper: execution='native' needs a Gymnasium MujocoEnv (its model file is "
                             f"recompiled with the native actuators); {type(sim).__name__} has no model_spec()")
        self.actuators = NativeActuators(spec_of(), joint_names, {g: p for g, p in self.plans.items() if p is not None})
        self.model, self.data = self.actuators.compile()
        if self.actuators.env_controls != model.nu:
            raise ValueError(f"ActuatorWrapper: execution='native': the env's model file has {self.actuators.env_controls} "
                             f"controls but the env's model {model.nu}; was the model built from another file?")
        self.backend = MujocoBackend(self.model, self.data, joint_names)

    def install(self, engine: Any, channels: Sequence[str]) -> None:
        """Make the env use the native model (after every check passed) and run ``engine``'s native
        step; ``channels``: the target channels the actions write (``"pos"``, ``"vel"``, ``"eff"``;
        the others change only at resets)."""
        m, d, src = self.model, self.data, self.env_data
        self.actuators.step_channels = tuple(("pos", "vel", "eff").index(ch) for ch in channels)
        copy_model_values(self.env_model, m)
        self.actuators.write_parameters()
        d.qpos[:], d.qvel[:], d.time = src.qpos, src.qvel, src.time
        mujoco.mj_forward(m, d)
        # which keys there are follows from the compiled groups alone: asked once, not at every step
        self.has_motor_telemetry = bool(self.actuators.motor_telemetry())
        self.sim.install_model(m, d, int(self.env_model.nu))
        # the env's own actuators are replaced (as on the explicit path): their controls stay zero
        # (the step hook does not write the action into them; a reset's mj_resetData zeroes them)
        d.ctrl[:int(self.env_model.nu)] = 0.0
        advance = partial(mujoco.mj_step, m, d)  # advance(n): n substeps in one engine call (a mix: n = 1)
        # step(n_frames): the engine's control step, which checks n_frames against its substeps
        self.sim.set_step_hook(partial(engine.advance_native, advance))

    def reset(self) -> None:
        """After the env's reset and the groups' re-draw: the values in force into the model, and the
        delay histories to be filled with the first command."""
        self.actuators.write_parameters()
        self.actuators.reset()

    def motor_telemetry(self, cols: Any) -> dict[str, Any]:
        """The native motor physics' telemetry (``MOTOR_TELEMETRY``: ``motor_temperature`` [°C],
        ``motor_current``) of the collection columns ``cols``; ``{}`` when no group has them."""
        return {k: v[0, cols] for k, v in self.actuators.motor_telemetry().items()}

    def parameters_changed(self) -> None:
        self.actuators.write_parameters()

    def uninstall(self) -> None:
        self.sim.restore_model()

    def summary(self) -> dict[str, str]:
        """``{group: "native" | "explicit"}``."""
        return {g: "explicit" if p is None else "native" for g, p in self.plans.items()}

