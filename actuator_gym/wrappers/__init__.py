"""Gymnasium wrappers: realistic actuators for existing MuJoCo envs, the substep-hook protocol, and sensor
realism on a vector env's observations (:class:`ObservationSensor`)."""

from .actuator_wrapper import ActuatorWrapper
from .effort_penalty import EffortPenalty
from .protocol import GymnasiumMujocoAdapter, SubstepHook, SubstepHookEnv, substep_hook_env
from .sensor import ObservationSensor

__all__ = [
    "ActuatorWrapper",
    "EffortPenalty",
    "ObservationSensor",
    "SubstepHook",
    "SubstepHookEnv",
    "GymnasiumMujocoAdapter",
    "substep_hook_env",
]
