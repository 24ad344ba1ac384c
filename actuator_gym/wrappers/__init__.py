"""Gymnasium wrappers: realistic actuators for existing MuJoCo envs, and the substep-hook protocol."""

from .actuator_wrapper import ActuatorWrapper
from .effort_penalty import EffortPenalty
from .protocol import GymnasiumMujocoAdapter, SubstepHook, SubstepHookEnv, substep_hook_env

__all__ = [
    "ActuatorWrapper",
    "EffortPenalty",
    "SubstepHook",
    "SubstepHookEnv",
    "GymnasiumMujocoAdapter",
    "substep_hook_env",
]
