"""``NewtonContactCfg``: the penalty-contact settings of :class:`~actuator_gym.backends.newton.NewtonBackend`."""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["NewtonContactCfg"]


@dataclass(frozen=True)
class NewtonContactCfg:
    """Penalty contacts of :class:`NewtonBackend`: Newton's ``CollisionPipeline`` finds the contacts
    (the MJCF's ``contype``/``conaffinity`` filtering as imported by Newton), the solver turns each
    into a spring-damper force with Coulomb-limited viscous friction, integrated explicitly.

    Explicit integration is stable only while a contact's gains stay below its body's mass over
    the step, so the gains are set **per collision shape** from the mass ``m`` [kg] of the body
    that carries it and the contact step ``h = physics_dt / substeps`` [s]:
    ``ke = ke_scale * m / h^2``, ``kd = kd_scale * m / h``, ``kf = kf_scale * m / h``. Static
    shapes (the floor) carry zero gains and the body's shape twice the value (Newton averages the
    two shapes of a pair), so a body-vs-floor contact gets exactly these gains. Example: the
    quadruped's calf+foot body (0.25 kg) at 5 ms gets ``ke = 1e4 N/m``, ``kd = 50 N·s/m``,
    ``kf = 50 N·s/m``."""

    ke_scale: float = 1.0
    """Normal stiffness ``ke = ke_scale * m / h^2`` [N/m] (stability limit: about 4)."""
    kd_scale: float = 1.0
    """Normal damping (while approaching) ``kd = kd_scale * m / h`` [N·s/m] (limit: about 2)."""
    kf_scale: float = 1.0
    """Friction slope ``kf = kf_scale * m / h`` [N·s/m]: tangential force ``kf * v_t`` up to the
    Coulomb limit ``mu * f_n`` (limit: about 2; smaller values let loaded feet creep faster)."""
    mu: float | None = None
    """Coulomb friction coefficient [-]; ``None`` keeps the MJCF geoms' ``friction[0]``."""
    substeps: int = 1
    """Solver steps per physics substep [-], each of ``h = physics_dt / substeps`` [s] with its own
    collision pass (stiffer contacts, more compute)."""

    def validate(self) -> None:
        for name in ("ke_scale", "kd_scale", "kf_scale"):
            v = getattr(self, name)
            if isinstance(v, bool) or not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise ValueError(f"NewtonContactCfg: {name} must be a finite number >= 0, got {v!r}")
        if isinstance(self.substeps, bool) or not isinstance(self.substeps, int) or self.substeps < 1:
            raise ValueError(f"NewtonContactCfg: substeps must be an integer >= 1, got {self.substeps!r}")
        mu = self.mu
        if mu is not None and (isinstance(mu, bool) or not (isinstance(mu, (int, float)) and math.isfinite(mu) and mu >= 0)):
            raise ValueError(f"NewtonContactCfg: mu must be None or a finite number >= 0, got {self.mu!r}")
