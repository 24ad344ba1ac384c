"""actuator-gym: realistic actuators between an RL policy and the physics."""

from .headless_gl import choose_headless_gl as _choose_headless_gl

_choose_headless_gl()  # before anything imports mujoco: headless render() without MUJOCO_GL

from . import randomization
from .actuators import *  # noqa: F401,F403
from .actuators import __all__ as _actuator_names
from .runtime.collection import ActuatorCollection
from .runtime.groups import ActuatorGroups
from . import envs, tasks  # tasks registers the Gymnasium ids (lazy: no MuJoCo import)

__version__ = "0.1.0"
__all__ = ["ActuatorCollection", "ActuatorGroups", "randomization", *_actuator_names]
