"""The actuator runtime: composable parts, the ``Actuator`` that runs a recipe of them, named models.

Layout: :mod:`.part` (the ``Part`` base and the capabilities each part class declares),
:mod:`.delay`, :mod:`.drives`, :mod:`.clamps`, :mod:`.neural` (the parts by kind; :mod:`.parts`
re-exports the first four), :mod:`.params` (parameter values), :mod:`.actuator` (``Actuator``),
:mod:`.implicit` (the Stable-PD effort mode), :mod:`.models` (named configs; :mod:`.net_models`:
the GRU net config), :mod:`.thruster`.

Import direction: this package depends on nothing else of actuator_gym except ``randomization``,
``_array``, ``_checks`` (value rules) and ``_safe_io`` (bounded file readers); wrappers, envs and backends
depend on it.
"""

from .actuator import Actuator, as_env_ids
from .bam import BAMServoCfg
from .checkpoints import load_network, network_from_state_dict
from .implicit import ImplicitOptions
from .limits import NetworkLimits, network_limits
from .models import (
    ActuatorBaseCfg,
    ComposedActuatorCfg,
    DCMotorCfg,
    DelayedPDActuatorCfg,
    IdealPDActuatorCfg,
    ImplicitActuatorCfg,
    RemotizedPDActuatorCfg,
)
from .net_models import ActuatorNetGRUCfg, ActuatorNetLSTMCfg, ActuatorNetMLPCfg
from .neural import DriveNeuralGRU, DriveNeuralLSTM, DriveNeuralMLP
from .params import Param
from .parts import *  # noqa: F401,F403  (Part, Delay, the drives and the clamps)
from .parts import __all__ as _part_names
from .thruster import Thruster, ThrusterCfg, allocation_matrix, body_wrench

__all__ = [
    "Actuator",
    "as_env_ids",
    "Param",
    *_part_names,
    "ActuatorBaseCfg",
    "ComposedActuatorCfg",
    "IdealPDActuatorCfg",
    "DCMotorCfg",
    "DelayedPDActuatorCfg",
    "RemotizedPDActuatorCfg",
    "ImplicitActuatorCfg",
    "BAMServoCfg",
    "ImplicitOptions",
    "ThrusterCfg",
    "Thruster",
    "allocation_matrix",
    "body_wrench",
    "ActuatorNetMLPCfg",
    "ActuatorNetLSTMCfg",
    "ActuatorNetGRUCfg",
    "DriveNeuralMLP",
    "DriveNeuralLSTM",
    "DriveNeuralGRU",
    "load_network",
    "network_from_state_dict",
    "NetworkLimits",
    "network_limits",
]
