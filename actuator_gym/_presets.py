"""Where the bundled data lives: the ``configs/`` folder of a source checkout, installed by the wheel
as the data package ``actuator_gym/presets`` (pyproject's ``package-dir``)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["preset_dir"]


def preset_dir() -> Path:
    """The folder of bundled presets.

    The project keeps them in ``configs/`` at its root; the wheel installs that folder as the data
    package ``actuator_gym/presets`` (pyproject's ``package-dir``), so an installed package finds
    them beside this module and a source checkout (editable install) finds ``configs/``.
    """
    here = Path(__file__).resolve().parent
    installed = here / "presets"
    return installed if installed.is_dir() else here.parent / "configs"
