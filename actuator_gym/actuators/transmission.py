"""What happens between the policy's command and the joint besides the motor: ``backlash`` (a gear play
read through a motor-side encoder, :mod:`.backlash`), ``encoder_resolution`` (a quantized position and its
firmware velocity, :mod:`.encoder`) and the bus fields (a command bus that holds, drops and jitters a
control step's frame, :mod:`actuator_gym.runtime.bus`). :class:`TransmissionFields` holds them; every
named config inherits it through :class:`~actuator_gym.actuators.models.ActuatorBaseCfg`, so they are
flat config fields (docs/actuators.md, "Backlash, encoders and the bus"). Its checks read the config's
``effort_mode``, ``solver_side`` and ``randomization``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .._checks import UnsupportedError, check_int, check_real
from ..randomization.distributions import Distribution
from .backlash import Backlash
from .delay import MAX_DELAY
from .encoder import MAX_ENCODER_COUNTS, Encoder
from .params import GAIN, check_value

__all__ = ["TransmissionFields", "bus_plan"]

ParamValue = Any


@dataclass(kw_only=True)
class TransmissionFields:
    """The transmission fields of every named config (module doc)."""

    backlash: ParamValue = None
    """[rad or m]: total width of the gear play between a massless motor side and the joint, the
    drive's encoder on the motor side: while the target lies within ``backlash / 2`` of the joint no
    effort passes; otherwise the drive reads the motor side ``q + sign(q* - q) * backlash / 2``
    (:mod:`.backlash`). Finite, >= 0, randomizable; None or 0: none. Explicit effort mode only."""
    encoder_resolution: int | None = None
    """[counts per revolution]: the position the drive reads is rounded to multiples of
    ``2 pi / counts`` and the velocity it reads is that position's difference over the substep
    (:mod:`.encoder`); an integer in ``[2, 2**31]``, None: ideal. Explicit effort mode only."""
    bus: str | None = None
    """The command bus this group's servos are on: groups naming the same bus share its random
    draws (one sync-write frame per env and control step). None with a bus field set: a bus of the
    group's own, named after the group. Runs in the runtime only (no native execution)."""
    bus_jitter: int = 0
    """[physics substeps]: the frame arrives ``U{0..bus_jitter}`` substeps into the control step
    (the previous command applies until then; past the step's end: at the next step's start)."""
    bus_hold_probability: float = 0.0
    """Per env and control step, the probability that the frame repeats the previous one (the
    servo keeps executing its command); in ``[0, 1]``."""
    bus_drop_probability: float = 0.0
    """Per env and control step, the probability that the frame is lost (the servo keeps its last
    command); in ``[0, 1]``, with ``bus_hold_probability + bus_drop_probability <= 1``."""

    def _check_transmission_fields(self, group: str | None = None, effort_mode: str | None = None) -> None:
        """``backlash`` (finite >= 0), ``encoder_resolution`` (None or an integer in ``[2, 2**31]``), the
        bus fields (``bus`` a non-empty string or None, ``bus_jitter`` an integer in ``[0, 2**20]``
        substeps, the probabilities in ``[0, 1]`` summing to at most 1), and no explicit-only field
        (backlash, encoder) in the Stable-PD mode (``effort_mode``, default the config's own).
        ``ValueError`` / ``TypeError`` naming the field, the group (when given) and the allowed range."""
        cls = type(self).__name__
        where = cls if group in (None, cls) else f"{cls} (group '{group}')"
        check_value(self.backlash, "backlash", where, default=0.0, domain=GAIN)
        if self.encoder_resolution is not None:
            self.encoder_resolution = check_int(self.encoder_resolution, "encoder_resolution", where, low=2,
                                                high=MAX_ENCODER_COUNTS)
        if self.bus is not None and not (isinstance(self.bus, str) and self.bus):
            raise TypeError(f"{where}: bus must be a bus name (a non-empty string) or None, got {self.bus!r}")
        self.bus_jitter = check_int(self.bus_jitter, "bus_jitter [physics substeps]", where, low=0, high=MAX_DELAY)
        hold = check_real(self.bus_hold_probability, "bus_hold_probability", where, low=0.0, high=1.0)
        drop = check_real(self.bus_drop_probability, "bus_drop_probability", where, low=0.0, high=1.0)
        if hold + drop > 1.0:
            raise ValueError(f"{where}: bus_hold_probability ({hold:g}) + bus_drop_probability ({drop:g}) must be "
                             "<= 1 (the frame is held, dropped or delivered)")
        self.bus_hold_probability, self.bus_drop_probability = hold, drop
        used = self.explicit_only_fields()
        mode = self.effort_mode if effort_mode is None else effort_mode
        if used and (mode == "implicit" or self.solver_side):
            what = "ImplicitActuatorCfg (solver-side PD)" if self.solver_side else "effort_mode='implicit' (Stable-PD)"
            raise UnsupportedError(
                f"{where}: {' and '.join(used)} run(s) on the explicit path only (what the drive reads at the "
                f"measured state), not with {what}; use an explicit model (e.g. IdealPDActuatorCfg) with "
                "effort_mode='explicit'"
            )

    def explicit_only_fields(self) -> tuple[str, ...]:
        """The fields in use here that have no Stable-PD form: ``"backlash"`` (a value other than
        None / 0, or randomized) and ``"encoder_resolution"`` (not None)."""
        out = []
        if "backlash" in self.randomization or not _off(self.backlash):
            out.append("backlash")
        if self.encoder_resolution is not None:
            out.append("encoder_resolution")
        return tuple(out)

    @property
    def on_bus(self) -> bool:
        """Whether the group's commands go through a bus (``bus`` named, or a bus field set)."""
        return self.bus is not None or bool(self.bus_jitter or self.bus_hold_probability or self.bus_drop_probability)

    def backlash_part(self) -> Backlash | None:
        """The :class:`~.backlash.Backlash` of ``backlash`` (None when none: None or 0, not randomized)."""
        if "backlash" not in self.explicit_only_fields():
            return None
        return Backlash(backlash=0.0 if self.backlash is None else self.backlash)

    def encoder_part(self) -> Encoder | None:
        """The :class:`~.encoder.Encoder` of ``encoder_resolution`` (None: ideal)."""
        if self.encoder_resolution is None:
            return None
        return Encoder(self.encoder_resolution, owner=type(self).__name__)


def bus_plan(cfgs: Mapping[str, Any], owner: str = "") -> dict[str, tuple[list[str], tuple[int, float, float]]]:
    """The buses of the groups ``cfgs`` (``{group name: config}``): ``{bus name: (its groups,
    (bus_jitter, bus_hold_probability, bus_drop_probability))}`` in the order the buses first
    appear. A group with a bus field set and ``bus=None`` has a bus of its own, named after the
    group. The groups of one bus share its frames, so they must give it the same fields: else a
    ``ValueError`` naming the bus, the groups and the fields."""
    out: dict[str, tuple[list[str], tuple[int, float, float]]] = {}
    for gname, cfg in cfgs.items():
        if not getattr(cfg, "on_bus", False):
            continue
        bname = cfg.bus if cfg.bus is not None else gname
        spec = (cfg.bus_jitter, cfg.bus_hold_probability, cfg.bus_drop_probability)
        if bname in out and out[bname][1] != spec:
            raise ValueError(
                f"{owner + ': ' if owner else ''}groups '{out[bname][0][0]}' and '{gname}' are on bus '{bname}' with "
                f"different (bus_jitter, bus_hold_probability, bus_drop_probability): {out[bname][1]} and {spec}; "
                "the groups of one bus share its frames: give them the same values"
            )
        out.setdefault(bname, ([], spec))[0].append(gname)
    return out


def _off(value: Any) -> bool:
    """Whether a ``backlash`` value means none: None, or 0 everywhere (a distribution never is)."""
    if value is None:
        return True
    if isinstance(value, Mapping):
        return all(_off(v) for v in value.values())
    if isinstance(value, Distribution) or isinstance(value, (str, bytes)):
        return False
    try:
        return bool((np.asarray(value.cpu() if isinstance(value, torch.Tensor) else value, dtype=np.float64) == 0).all())
    except (TypeError, ValueError):
        return False  # the part's own checks name what is wrong
