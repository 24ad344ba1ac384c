"""The runtime between the actuator groups and the physics: the substep engine (:mod:`.substep`),
its execution strategies (:mod:`.execution`: explicit, captured, native, mixed; chosen once when the
engine is built), the one native side (:mod:`.native`: groups compiled into MuJoCo's own actuators,
for the wrapper and the batched tasks) and the control step's telemetry (:mod:`.telemetry`)."""
