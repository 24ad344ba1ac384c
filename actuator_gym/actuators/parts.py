"""The swappable parts of an actuator recipe: ``Delay -> Drive -> Clamping[0] -> Clamping[1] ...``,
and what the drive reads through: ``Backlash``, ``Encoder``.

A re-export module (user code imports from here): each kind lives in its own file --
:mod:`.part` (the ``Part`` base and its declared capabilities), :mod:`.delay`, :mod:`.drives`,
:mod:`.clamps`, :mod:`.backlash`, :mod:`.encoder`, and :mod:`.neural` (the learned drives).
"""

from __future__ import annotations

from .backlash import Backlash
from .clamps import Clamping, ClampingDCMotor, ClampingMaxEffort, ClampingPositionBased
from .delay import Delay
from .drives import Drive, DrivePD, DrivePID
from .encoder import Encoder
from .part import Part

__all__ = [
    "Part",
    "Delay",
    "Drive",
    "DrivePD",
    "DrivePID",
    "Clamping",
    "ClampingMaxEffort",
    "ClampingDCMotor",
    "ClampingPositionBased",
    "Backlash",
    "Encoder",
]
