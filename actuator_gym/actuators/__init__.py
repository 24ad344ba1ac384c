"""The actuator runtime: composable parts, the ``Actuator`` that runs a recipe of them, named models.

Import direction: this package depends on nothing else of actuator_gym except ``randomization``
and ``_array``; wrappers, envs and backends depend on it.
"""

from .actuator import Actuator, as_env_ids
from .models import (
    ActuatorBaseCfg,
    DCMotorCfg,
    DelayedPDActuatorCfg,
    IdealPDActuatorCfg,
    ImplicitActuatorCfg,
    RemotizedPDActuatorCfg,
)
from .params import Param
from .parts import (
    Clamping,
    ClampingDCMotor,
    ClampingMaxEffort,
    ClampingPositionBased,
    Delay,
    Drive,
    DrivePD,
    DrivePID,
    Part,
)
from .thruster import Thruster, ThrusterCfg, allocation_matrix, body_wrench

__all__ = [
    "Actuator",
    "as_env_ids",
    "Param",
    "Part",
    "Delay",
    "Drive",
    "DrivePD",
    "DrivePID",
    "Clamping",
    "ClampingMaxEffort",
    "ClampingDCMotor",
    "ClampingPositionBased",
    "ActuatorBaseCfg",
    "IdealPDActuatorCfg",
    "DCMotorCfg",
    "DelayedPDActuatorCfg",
    "RemotizedPDActuatorCfg",
    "ImplicitActuatorCfg",
    "ThrusterCfg",
    "Thruster",
    "allocation_matrix",
    "body_wrench",
]
