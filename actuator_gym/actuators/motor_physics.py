"""DC-motor physics beyond the torque-speed line, from MuJoCo 4's ``dcmotor``: winding heating
(thermal model), current dynamics (inductance), cogging torque and LuGre friction.

These exist **only** in MuJoCo's native ``dcmotor`` (``execution="native"``, docs/native.md): the
explicit path (the runtime's substep loop) has no implementation of them, and refuses a group that
sets any of these fields, naming the field. Every field is None by default (the feature is off); a
feature is on when its required fields are given. The fields live on :class:`DCMotorPhysicsFields`,
which :class:`~actuator_gym.actuators.models.DCMotorCfg` inherits, so they are flat config fields
(``DCMotorCfg(thermal_resistance=2.0, ...)``) that take every numeric form (a number, per joint, a
``{regex: value}`` dict, a distribution) and may be randomized (``randomization={field: dist}``):
re-drawn at every reset and written into the actuator's model fields (``actuator_dynprm``,
``actuator_gainprm``, ``actuator_biasprm``, all writable at run time and per world in
``mujoco.batch``). Not randomizable: ``cogging_poles`` (an integer count).

The engine runs the motor with the motor constant ``K = 1`` (docs/native.md: ``R = Vmax / stall
torque``), so its current is in the units of a motor with a torque constant of 1 N·m/A: numerically
the motor torque ``K i`` [N·m]; a motor with torque constant ``Kt`` carries ``motor_current / Kt``
amperes. Joule heat ``R i^2`` [W] and the time constants are the same under that scaling, so the
thermal and electrical parameters below are the real motor's.

MuJoCo 4.0.0's laws, as verified on the installed engine (tests/wrappers/test_native_thermal.py):

* thermal: the state is the winding's rise over ambient ``dT`` [K], Euler-integrated,
  ``d(dT)/dt = (R_T i^2 - dT / thermal_resistance) / thermal_capacitance`` with ``R_T = R (1 +
  temperature_coefficient (dT + ambient_temperature - reference_temperature))``; the winding
  current is ``i = (V - K qd) / R_T``. The on-board controller computes the drive voltage with the
  reference resistance, ``V = clip(R tau* + K qd, +-Vmax)``, so a hot winding delivers ``R / R_T``
  of the commanded torque, and the stall torque falls to ``K Vmax / R_T``. The resistance ``R``
  (hence ``saturation_effort``) is the one at ``reference_temperature``.
* inductance: the current is a state, exactly integrated toward ``(V - K qd) / R`` with the time
  constant ``electrical_time_constant = L / R`` (``actearly``: the force uses the updated current).
* cogging: ``+ cogging_amplitude sin(cogging_poles q + cogging_phase)`` added to the force.
* LuGre: a bristle state ``z``, ``dz/dt = qd - sigma0 |qd| z / g(qd)``, ``g = F_C + (F_S - F_C)
  exp(-(qd / v_S)^2)``; the friction ``-(sigma0 z + sigma1 dz/dt)`` is added to the force. MuJoCo's
  viscous term ``sigma2`` is not part of it: use the joint's ``viscous_friction``.

Not offered (MuJoCo 4.0 has them, we do not expose them yet): the thermal time constant as an
alternative to the capacitance (give ``thermal_capacitance = time constant / thermal_resistance``),
``saturation``'s current-rate limit (needs inductance), an initial winding temperature (MuJoCo's
state starts at ambient after every reset; it has no such parameter).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from ..randomization.distributions import Distribution
from .clamps import Clamping
from .params import FINITE, FINITE_POSITIVE, GAIN

__all__ = ["DCMotorPhysicsFields", "MotorThermal", "MotorInductance", "MotorCogging", "MotorLuGre",
           "NATIVE_ONLY_FORM", "COPPER_TEMPERATURE_COEFFICIENT"]

NATIVE_ONLY_FORM = "dcmotor_physics"
"""The ``NATIVE_FORM`` of the motor-physics parts: extra fields of the native ``dcmotor`` actuator;
the parts have no explicit implementation."""

COPPER_TEMPERATURE_COEFFICIENT = 3.93e-3
"""[1/K]: the resistance temperature coefficient of copper at 20 °C, the default of
``temperature_coefficient`` when the thermal model is on."""

ParamValue = Any


@dataclass(kw_only=True)
class DCMotorPhysicsFields:
    """The optional motor-physics fields of :class:`~actuator_gym.actuators.models.DCMotorCfg`
    (module doc). All None by default: off."""

    thermal_resistance: ParamValue = None
    """[K/W]: winding-to-ambient thermal resistance ``R_th`` (> 0). Turns the thermal model on
    together with ``thermal_capacitance``."""
    thermal_capacitance: ParamValue = None
    """[J/K]: winding heat capacity ``C_th`` (> 0); the thermal time constant is ``R_th C_th`` [s]."""
    temperature_coefficient: ParamValue = None
    """[1/K]: resistance temperature coefficient ``alpha`` (>= 0); None with the thermal model on:
    copper's 3.93e-3."""
    reference_temperature: ParamValue = None
    """[°C]: temperature at which the winding has the nominal resistance (the one behind
    ``saturation_effort``); None with the thermal model on: 25 °C."""
    ambient_temperature: ParamValue = None
    """[°C]: ambient temperature, the winding's temperature after every reset; None with the
    thermal model on: 25 °C."""
    electrical_time_constant: ParamValue = None
    """[s]: ``L / R`` of the winding (> 0): the current becomes a state (inductance)."""
    cogging_amplitude: ParamValue = None
    """[N·m]: amplitude of the cogging torque (>= 0); turns cogging on together with ``cogging_poles``."""
    cogging_poles: Any = None
    """[1, integer >= 1]: cogging periods per revolution ``N`` (one integer for the group; not randomizable)."""
    cogging_phase: ParamValue = None
    """[rad]: cogging phase ``phi``; None with cogging on: 0."""
    lugre_stiffness: ParamValue = None
    """[N·m/rad]: bristle stiffness ``sigma0`` (> 0); turns LuGre friction on with the other
    ``lugre_*`` fields."""
    lugre_damping: ParamValue = None
    """[N·m·s/rad]: bristle damping ``sigma1`` (>= 0); None with LuGre on: 0."""
    lugre_coulomb: ParamValue = None
    """[N·m]: Coulomb friction level ``F_C`` (>= 0)."""
    lugre_static: ParamValue = None
    """[N·m]: static (breakaway) friction level ``F_S`` (>= 0)."""
    lugre_stribeck_velocity: ParamValue = None
    """[rad/s]: Stribeck velocity ``v_S`` (> 0)."""

    def motor_physics_parts(self) -> list[Clamping]:
        """The parts of the features switched on (after the DC-motor clamp in the recipe).
        ``ValueError`` naming the field for a feature half given, or a bad ``cogging_poles``."""
        owner = type(self).__name__
        parts: list[Clamping] = []
        for cls in (MotorThermal, MotorInductance, MotorCogging, MotorLuGre):
            given = {f: getattr(self, f) for f in cls.PARAMS if getattr(self, f) is not None}
            if not given:
                continue
            missing = [f for f in cls.REQUIRED if f not in given]
            if missing:
                raise ValueError(f"{owner}: {cls.FEATURE} needs {missing} too (given: {sorted(given)})")
            parts.append(cls(**given))
        cog = next((p for p in parts if isinstance(p, MotorCogging)), None)
        if cog is not None:
            poles = self.cogging_poles
            if isinstance(poles, Distribution) or "cogging_poles" in getattr(self, "randomization", {}):
                raise ValueError(f"{owner}: cogging_poles is an integer count and cannot be randomized")
            if isinstance(poles, bool) or not isinstance(poles, int) or poles < 1:
                raise ValueError(f"{owner}: cogging_poles must be one integer >= 1 for the group, got {poles!r}")
        return parts

    def native_only_fields(self) -> list[str]:
        """The motor-physics fields this config sets (they run only natively)."""
        return [f.name for f in fields(DCMotorPhysicsFields) if getattr(self, f.name) is not None]


def _to_mujoco(part: "_MotorPhysics", compiler: Any) -> Any:
    """The part's declaration: extra fields of the group's native ``dcmotor`` (each part class
    declares it in its own body: capabilities are not inherited, :mod:`.part`)."""
    return compiler.form(NATIVE_ONLY_FORM, part, fixed={"feature": part.NATIVE_KEY}, **part.NATIVE_FIELDS)


class _MotorPhysics(Clamping):
    """Base of the motor-physics parts: a declaration for the native ``dcmotor`` only."""

    FEATURE: ClassVar[str] = ""
    NATIVE_KEY: ClassVar[str] = ""
    """The dcmotor attribute it fills (``thermal``, ``inductance``, ``cogging``, ``lugre``)."""
    REQUIRED: ClassVar[tuple[str, ...]] = ()
    NATIVE_FIELDS: ClassVar[dict[str, str]] = {}
    """native field name (mujoco_native's) -> parameter name."""

    @property
    def native_only_fields(self) -> list[str]:
        """The config fields of this part (they exist only in MuJoCo's native dcmotor)."""
        return sorted(self._raw)

    def apply(self, effort, q, qd, out) -> None:
        raise RuntimeError(
            f"{type(self).__name__}: {self.native_only_fields} exist only in MuJoCo's native dcmotor; the "
            "explicit path cannot run them (use execution='native' or 'auto')"
        )


class MotorThermal(_MotorPhysics):
    """Winding heating: resistance rising with temperature (module doc; native only)."""

    FEATURE = "the thermal model"
    NATIVE_KEY = "thermal"
    REQUIRED = ("thermal_resistance", "thermal_capacitance")
    PARAMS = {
        "thermal_resistance": (math.nan, FINITE_POSITIVE),
        "thermal_capacitance": (math.nan, FINITE_POSITIVE),
        "temperature_coefficient": (COPPER_TEMPERATURE_COEFFICIENT, GAIN),
        "reference_temperature": (25.0, FINITE),
        "ambient_temperature": (25.0, FINITE),
    }
    NATIVE_FIELDS = {"rth": "thermal_resistance", "cth": "thermal_capacitance", "alpha": "temperature_coefficient",
                     "tref": "reference_temperature", "tamb": "ambient_temperature"}
    NATIVE_FORM = NATIVE_ONLY_FORM
    to_mujoco = _to_mujoco
    STATEFUL = True


class MotorInductance(_MotorPhysics):
    """Current dynamics: the winding current as a state with time constant ``L / R`` (native only)."""

    FEATURE = "inductance"
    NATIVE_KEY = "inductance"
    REQUIRED = ("electrical_time_constant",)
    PARAMS = {"electrical_time_constant": (math.nan, FINITE_POSITIVE)}
    NATIVE_FIELDS = {"te": "electrical_time_constant"}
    NATIVE_FORM = NATIVE_ONLY_FORM
    to_mujoco = _to_mujoco
    STATEFUL = True


class MotorCogging(_MotorPhysics):
    """Cogging torque ``A sin(N q + phi)`` (native only)."""

    FEATURE = "cogging"
    NATIVE_KEY = "cogging"
    REQUIRED = ("cogging_amplitude", "cogging_poles")
    PARAMS = {
        "cogging_amplitude": (math.nan, GAIN),
        "cogging_poles": (math.nan, FINITE_POSITIVE),
        "cogging_phase": (0.0, FINITE),
    }
    NATIVE_FIELDS = {"amplitude": "cogging_amplitude", "poles": "cogging_poles", "phase": "cogging_phase"}
    NATIVE_FORM = NATIVE_ONLY_FORM
    to_mujoco = _to_mujoco
    STATEFUL = False


class MotorLuGre(_MotorPhysics):
    """LuGre (bristle) friction (native only)."""

    FEATURE = "LuGre friction"
    NATIVE_KEY = "lugre"
    REQUIRED = ("lugre_stiffness", "lugre_coulomb", "lugre_static", "lugre_stribeck_velocity")
    PARAMS = {
        "lugre_stiffness": (math.nan, FINITE_POSITIVE),
        "lugre_damping": (0.0, GAIN),
        "lugre_coulomb": (math.nan, GAIN),
        "lugre_static": (math.nan, GAIN),
        "lugre_stribeck_velocity": (math.nan, FINITE_POSITIVE),
    }
    NATIVE_FIELDS = {"sigma0": "lugre_stiffness", "sigma1": "lugre_damping", "coulomb": "lugre_coulomb",
                     "static": "lugre_static", "stribeck": "lugre_stribeck_velocity"}
    NATIVE_FORM = NATIVE_ONLY_FORM
    to_mujoco = _to_mujoco
    STATEFUL = True
