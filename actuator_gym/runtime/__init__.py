"""The actuator runtime between a policy's actions and the physics, below both front doors
(``ActuatorWrapper`` and ``BatchedTask``): the groups (:mod:`.collection`: joint groups of
``Actuator`` parts; :mod:`.rotors`: rotor groups; :mod:`.groups`: both kinds), the one action map
(:mod:`.actions`), the substep engine (:mod:`.substep`) and its execution strategies
(:mod:`.execution`: explicit, captured, native, mixed, chosen once), the native side (:mod:`actuator_gym.backends.native_side`:
groups compiled into MuJoCo's own actuators), the control step's telemetry (:mod:`.telemetry`,
:mod:`.lazy_telemetry`), the episode statistics (:mod:`.episode_stats`) and the rig that owns them
(:mod:`.rig`: :class:`ActuatorRig`)."""

from .rig import ActionSpec, ActuatorRig
from .telemetry import TELEMETRY

__all__ = ["ActionSpec", "ActuatorRig", "TELEMETRY"]
