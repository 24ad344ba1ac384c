"""``JointFriction``: the substep participant of friction-budget groups (BAM servos,
:mod:`actuator_gym.actuators.bam`), built by the substep engine whenever the collection has one, so
the wrapper and the batched tasks run it alike.

At every substep, after the joint groups computed their efforts and before the physics advances, it
reads the joints' external torques from the state (:class:`FrictionState`: the last forward's
``-qfrc_bias + qfrc_constraint`` less the joints' own dry friction), asks each such group for its
friction budget and writes it into the engine (``dof_frictionloss`` / ``dof_damping`` per env). At
every reset it writes the groups' armature per env (``dof_armature``, then the engine's constants).

Its telemetry (:data:`SERVO_TELEMETRY`, ``(num_envs, num_joints)``, NaN in the columns of other groups)
is that of the control step's last substep.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from .._checks import UnsupportedError

__all__ = ["JointFriction", "FrictionState", "SERVO_TELEMETRY"]

SERVO_TELEMETRY: dict[str, str] = {
    "supply_voltage": "supply voltage after the sag under load [V] (BAM servos; NaN in other columns)",
    "motor_current": "winding current [A]: the motor torque over the torque constant kt, signed (BAM servos; native "
                     "DC motors with the thermal model or inductance run a motor of kt = 1 N·m/A, see docs/native.md)",
    "friction_budget": "the most dry + viscous friction MuJoCo may apply at the substep's velocity, frictionloss + "
                       "damping * |qd| [N·m] (BAM servos; NaN in other columns)",
    "duty_cycle": "the firmware's PWM duty cycle in [-max_pwm, max_pwm] (BAM servos; NaN in other columns)",
}
"""The ``info["actuator"]`` keys of friction-budget (BAM) groups, at the control step's last substep."""


@runtime_checkable
class FrictionState(Protocol):
    """What :class:`JointFriction` needs of the joint state (both MuJoCo backends)."""

    def joint_loads(self) -> np.ndarray:
        """``(num_envs, num_joints)`` external torques [N·m] at the last forward."""

    def set_joint_friction(self, cols: Any, frictionloss: np.ndarray, damping: np.ndarray) -> None:
        """Per-env ``dof_frictionloss`` / ``dof_damping`` of the joints ``cols`` for the coming substeps."""

    def set_joint_armature(self, cols: Any, armature: np.ndarray, env_ids: Any = None) -> None:
        """Per-env ``dof_armature`` of the joints ``cols`` (rows ``env_ids``), then the engine's constants."""


class JointFriction:
    """The friction-budget groups of ``collection`` over ``state`` (module doc); :meth:`of` builds one
    when the collection has such a group."""

    @classmethod
    def of(cls, collection: Any, state: Any) -> "JointFriction | None":
        names = [] if collection is None else [
            g for g in collection if callable(getattr(collection[g].drive, "friction_budget", None))]
        if not names:
            return None
        if not isinstance(state, FrictionState):
            raise UnsupportedError(
                f"groups {names} are BAM servos, whose friction budget is written into MuJoCo's dof_frictionloss / "
                f"dof_damping every substep; the physics backend {type(state).__name__} cannot do that (use "
                "ActuatorWrapper or backend='mujoco')")
        groups = [(np.asarray(collection.joint_ids(g)), collection[g].drive) for g in names]
        return cls(groups, state, collection.num_envs, collection.num_joints)

    def __init__(self, groups: list, state: FrictionState, num_envs: int, num_joints: int):
        self.groups, self.state = groups, state
        self.shape = (num_envs, num_joints)
        self.budgets: list = [None] * len(groups)
        """Each group's last ``(frictionloss, damping)`` (the telemetry derives from it when read)."""

    def substep(self, k: int) -> None:
        loads = self.state.joint_loads()
        for i, (cols, drive) in enumerate(self.groups):
            budget = self.budgets[i] = drive.friction_budget(loads[:, cols])
            self.state.set_joint_friction(cols, *budget)

    def reset_envs(self, env_ids: Any = None) -> None:
        """The groups' armature of ``env_ids`` (None: all) into the engine (after their parameters were re-drawn)."""
        for cols, drive in self.groups:
            self.state.set_joint_armature(cols, drive.p("armature"), env_ids)

    def telemetry(self) -> dict[str, np.ndarray]:
        """:data:`SERVO_TELEMETRY` of the last substep, fresh ``(num_envs, num_joints)`` arrays (NaN in the
        columns of other groups; the budget 0 before the first substep)."""
        out = {k: np.full(self.shape, np.nan) for k in SERVO_TELEMETRY}
        for (cols, drive), budget in zip(self.groups, self.budgets):
            frictionloss, damping = budget if budget is not None else (0.0, 0.0)
            out["friction_budget"][:, cols] = frictionloss + damping * np.abs(drive.velocity)
            out["supply_voltage"][:, cols] = drive.supply.value[:, None]
            out["motor_current"][:, cols] = drive.torque / drive.p("kt")
            out["duty_cycle"][:, cols] = drive.duty_cycle
        return out
