"""The runtime between the actuator groups and the physics: the substep engine (:mod:`.substep`),
its execution strategies (:mod:`.execution`: explicit, captured, native, mixed; chosen once when the
engine is built), the one native side (:mod:`.native`: groups compiled into MuJoCo's own actuators,
for the wrapper and the batched tasks), the control step's telemetry (:mod:`.telemetry`) and the rig that
owns them all with the groups, the action map and the episode statistics (:mod:`.rig`: :class:`ActuatorRig`)."""

from .rig import ActionSpec, ActuatorRig

__all__ = ["ActionSpec", "ActuatorRig"]
