"""The substep engine's former home: :mod:`actuator_gym.rig.substep` (the engine), with
:mod:`actuator_gym.rig.telemetry` (``TELEMETRY``, ``StepTelemetry``), re-exported here."""

from .rig.substep import *  # noqa: F401,F403
from .rig.substep import __all__  # noqa: F401
