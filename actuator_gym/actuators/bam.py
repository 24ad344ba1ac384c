"""BAM servos: the voltage-domain servo model and friction budget of BAM ("Better Actuator Models",
Rhoban, Apache-2.0), release 1.0.2, with the parameters BAM's authors identified on real Dynamixel
servos (package data: ``presets/actuators/bam/<motor>_<model>.json``).

A BAM servo is a position servo. Each physics substep, in BAM's ``MujocoController`` order:

1. **supply**: ``V = max(vin - vin_drop_resistance * I, vin_min)``, ``I = sum_j |tau_j| / kt_j`` over
   every joint on the supply, ``tau`` the motor torques of the previous substep (0 after a reset).
   A group is one supply; groups naming the same ``supply`` share one (:func:`share_supplies`).
2. **firmware**: ``duty = clip((q* - q) * kp * error_gain, window, +-max_pwm)``, where the window
   ``kt qd / V +- R max_current / V`` is the firmware current limiter (servos with a
   ``max_current``: XL-330), applied first, and the PWM limit last.
3. **motor**: ``tau = kt (V duty) / R - kt^2 qd / R`` (back-EMF), applied to the joint.
4. **friction budget**: from the previous substep's motor torque ``tau_m``, the external torque on the
   joint ``tau_e`` (gravity, Coriolis and constraint forces other than the joint's own dry friction:
   ``-qfrc_bias + qfrc_constraint - f_friction`` of the substep just run) and the velocity ``qd``::

       frictionloss = friction_base + load terms(|tau_e - tau_m|, or directional |a tau_e - b tau_m|)
                      + Stribeck terms * exp(-|qd / dtheta_stribeck|^alpha) (+ quadratic terms, m6)
       damping      = friction_viscous

   written into the joint's ``dof_frictionloss`` / ``dof_damping`` for the coming substep (per env),
   so MuJoCo's constraint solver applies the stopping friction (the runtime's
   :class:`~actuator_gym.runtime.friction.JointFriction` does the writing).

The friction models (``model=``): m1 Coulomb-viscous, m2 + Stribeck, m3 load-dependent, m4 m3 +
Stribeck, m5 m4 directional (motor-side and load-side coefficients), m6 m5 + quadratic load terms.
The armature (the motor's reflected inertia) is written into ``dof_armature`` per env at every reset.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Iterable, Mapping

import numpy as np

from .._checks import UnsupportedError
from .._presets import preset_dir
from .._safe_io import parse_json_object, read_text
from .drives import Drive
from .models import ActuatorBaseCfg, ParamValue
from .params import FINITE_POSITIVE, GAIN, Domain

__all__ = ["BAMServoCfg", "BAMServo", "BAM_MOTORS", "BAM_FRICTION_MODELS", "bam_parameters", "share_supplies", "check_supplies"]


@dataclass(frozen=True)
class BAMMotor:
    """A servo's firmware constants (BAM 1.0.2's actuator classes, measured by BAM's authors with an
    oscilloscope): ``vin`` [V] supply, ``kp`` the firmware gain, ``error_gain`` [duty / (rad * kp)],
    ``max_pwm`` [duty, 0..1], ``max_current`` [A] (the firmware's current limit; inf: none)."""

    vin: float
    kp: float
    error_gain: float
    max_pwm: float
    max_current: float = math.inf


_XL330_COUNTS, _XL330_KP_DIVISOR, _XL330_PWM_LIMIT = 4096, 256, 885
BAM_MOTORS: dict[str, BAMMotor] = {
    "mx64": BAMMotor(vin=15.0, kp=32.0, error_gain=0.158, max_pwm=0.9625),
    "mx106": BAMMotor(vin=15.0, kp=32.0, error_gain=0.158, max_pwm=0.9625),
    "xl320": BAMMotor(vin=7.5, kp=32.0, error_gain=0.05048199, max_pwm=1.0),
    "xl330": BAMMotor(vin=7.5, kp=400.0, error_gain=(_XL330_COUNTS / (2 * np.pi)) / (_XL330_KP_DIVISOR * _XL330_PWM_LIMIT),
                      max_pwm=1.0, max_current=1.75),
}
"""The voltage-controlled Dynamixel servos BAM publishes parameters for."""

BAM_FRICTION_MODELS: dict[str, tuple[bool, bool, bool, bool]] = {
    # (load_dependent, stribeck, directional, quadratic)
    "m1": (False, False, False, False),
    "m2": (False, True, False, False),
    "m3": (True, False, False, False),
    "m4": (True, True, False, False),
    "m5": (True, True, True, False),
    "m6": (True, True, True, True),
}
"""BAM's friction models m1..m6 as the terms they switch on."""

_MOTOR_KEYS = ("kt", "R", "armature")
_FRICTION_KEYS = (
    "friction_base", "friction_stribeck", "load_friction_base", "load_friction_stribeck", "load_friction_motor",
    "load_friction_external", "load_friction_motor_stribeck", "load_friction_external_stribeck",
    "load_friction_motor_quad", "load_friction_external_quad", "dtheta_stribeck", "alpha", "friction_viscous",
)
_IGNORED_KEYS = ("q_offset",)  # the test bench's encoder offset, not the servo's (BAM's MujocoController ignores it)
_MAX_FILE = 64 * 1024


@functools.lru_cache(maxsize=None)
def _bundled(motor: str, model: str) -> dict[str, Any]:
    """A bundled parameter file, parsed once per process (package data does not change; callers copy it)."""
    path = preset_dir() / "actuators" / "bam" / f"{motor}_{model}.json"
    return parse_json_object(read_text(path, _MAX_FILE, "BAM parameter file"), path.name, "BAM parameter file")


def bam_parameters(motor: str | None = None, model: str | None = None, params: Any = None,
                   owner: str = "BAMServoCfg") -> dict[str, Any]:
    """A BAM parameter set as a dict (``kt``, ``R``, ``armature``, the friction terms, ``model``,
    ``actuator``): the bundled one of ``motor`` / ``model``, or ``params`` (a path to a BAM JSON file,
    read as data only, at most 64 KiB, or a mapping), taken as is (``q_offset`` ignored). ``ValueError``
    naming the motor, model, file or key and what is allowed."""
    if params is not None:
        if motor is not None and motor not in BAM_MOTORS:
            raise ValueError(f"{owner}: motor={motor!r} is not a BAM servo; allowed: {sorted(BAM_MOTORS)}")
        if isinstance(params, Mapping):
            data, source = dict(params), f"{owner}: params"
        elif isinstance(params, str) or hasattr(params, "__fspath__"):
            source = f"{owner}: params file {str(params)!r}"
            data = parse_json_object(read_text(params, _MAX_FILE, "BAM parameter file"), source, "BAM parameter file")
        else:
            raise TypeError(f"{owner}: params must be a BAM parameter file path or a mapping, got {type(params).__name__}")
    else:
        if motor not in BAM_MOTORS:
            raise ValueError(f"{owner}: motor={motor!r} is not a bundled BAM servo; allowed: {sorted(BAM_MOTORS)} "
                             "(or params= a BAM parameter file)")
        if model not in BAM_FRICTION_MODELS:
            what = "is required with motor= (the friction model" if model is None else "is not a BAM friction model ("
            raise ValueError(f"{owner}: model={model!r} {what}; in YAML: friction_model); allowed: "
                             f"{sorted(BAM_FRICTION_MODELS)}")
        source = f"{owner}: {motor}_{model}.json"
        data = dict(_bundled(motor, model))
    required = [k for k in (*_MOTOR_KEYS, "model", "actuator") if k not in data and not (k == "actuator" and motor)]
    if params is not None and required:
        raise ValueError(f"{source}: missing {required}; a BAM parameter set gives kt [N·m/A], R [ohm], armature "
                         f"[kg·m²], 'model' (m1..m6) and 'actuator' (one of {sorted(BAM_MOTORS)}, or motor=), and the "
                         "friction terms of its model")
    kind = data.get("model", model)
    if kind not in BAM_FRICTION_MODELS:
        raise ValueError(f"{source}: 'model' is {kind!r}; allowed: {sorted(BAM_FRICTION_MODELS)}")
    actuator = data.get("actuator", motor)
    if actuator not in BAM_MOTORS:
        raise ValueError(f"{source}: 'actuator' is {actuator!r}, a servo without published firmware constants; "
                         f"allowed: {sorted(BAM_MOTORS)}")
    if motor is not None and actuator != motor:
        raise ValueError(f"{source}: the file is for actuator {actuator!r}, not motor={motor!r}")
    known = {*_MOTOR_KEYS, *_FRICTION_KEYS, *_IGNORED_KEYS, "model", "actuator"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"{source}: unknown key(s) {unknown}; a BAM parameter file holds {sorted(known)}")
    missing = [k for k in _MOTOR_KEYS if k not in data]
    if missing:
        raise ValueError(f"{source}: missing {missing} (the motor's kt [N·m/A], R [ohm], armature [kg·m²])")
    for k in (*_MOTOR_KEYS, *_FRICTION_KEYS):
        v = data.get(k)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)):
            raise ValueError(f"{source}: {k!r} must be a finite number, got {v!r}")
    return {**{k: float(v) for k, v in data.items() if k in (*_MOTOR_KEYS, *_FRICTION_KEYS)},
            "model": kind, "actuator": actuator}


_UNIT = Domain(low=0.0, high=1.0, low_open=True, allow_inf=False)


class BAMServo(Drive):
    """The BAM servo as one drive part: firmware, motor and friction budget (module doc). Every
    parameter is per env and joint and may be randomized. Position targets only (velocity and
    effort targets are ignored: a Dynamixel in position mode has none). Numpy (CPU) only.

    State: the motor torque of the previous substep (the supply's current and the friction budget
    read it; 0 after a reset), the supply voltage and the duty cycle of the last substep."""

    PARAMS = {
        "kt": (math.nan, FINITE_POSITIVE), "R": (math.nan, FINITE_POSITIVE), "armature": (0.0, GAIN),
        "kp": (math.nan, GAIN), "error_gain": (math.nan, FINITE_POSITIVE), "max_pwm": (1.0, _UNIT),
        "max_current": (math.inf, Domain(low=0.0, low_open=True)),
        "vin": (math.nan, FINITE_POSITIVE), "vin_drop_resistance": (0.0, GAIN), "vin_min": (0.0, GAIN),
        **{k: (1.35 if k == "alpha" else 0.2 if k == "dtheta_stribeck" else 0.0,
               FINITE_POSITIVE if k in ("alpha", "dtheta_stribeck") else GAIN) for k in _FRICTION_KEYS},
    }
    STATEFUL = True
    SUPPLY_PARAMS: ClassVar[tuple[str, ...]] = ("vin", "vin_drop_resistance", "vin_min")

    def __init__(self, friction_model: str = "m1", supply: str | None = None, **params: Any):
        if friction_model not in BAM_FRICTION_MODELS:
            raise ValueError(f"BAMServo: friction_model must be one of {sorted(BAM_FRICTION_MODELS)}, got {friction_model!r}")
        super().__init__(**params)
        self.friction_model, self.supply_name = friction_model, supply
        self.load_dependent, self.stribeck, self.directional, self.quadratic = BAM_FRICTION_MODELS[friction_model]

    def _setup(self, ctx):
        if ctx.ops.name != "numpy":
            raise UnsupportedError(f"{ctx.owner}: BAMServo runs on the numpy array path (a CPU MuJoCo backend); "
                                   f"got the {ctx.ops.name} path")
        shape = (ctx.num_envs, ctx.num_joints)
        self.dtype = np.dtype(str(ctx.dtype).replace("torch.", ""))
        """The model's dtype: the state and the laws run in it (float64 in the wrapper, float32 in the tasks)."""
        self.owner, self.num_envs = ctx.owner, ctx.num_envs
        """The group's name (for messages) and its number of envs."""
        self.torque = np.zeros(shape, self.dtype)
        """[N·m] the motor torque of the last substep (float64)."""
        self.previous_torque = np.zeros(shape, self.dtype)
        """[N·m] the motor torque of the substep before it (what the friction budget reads)."""
        self.duty_cycle = np.zeros(shape, self.dtype)
        """The firmware's duty cycle of the last substep, in ``[-max_pwm, max_pwm]``."""
        self.velocity = np.zeros(shape, self.dtype)
        """[rad/s] the joint velocity the last substep read."""
        self.supply = Supply(self)
        """The supply this group draws from (shared with other groups by :func:`share_supplies`)."""
        self._computes = 0

    def reset(self, env_ids):
        rows = slice(None) if env_ids is None else np.asarray(env_ids.cpu() if hasattr(env_ids, "cpu") else env_ids)
        for a in (self.torque, self.previous_torque, self.duty_cycle, self.velocity):
            a[rows] = 0.0

    def p(self, name: str) -> np.ndarray:
        """The values in force of parameter ``name`` ``(num_envs, num_joints)``."""
        return self.params[name].array

    def current(self) -> np.ndarray:
        """``(num_envs,)`` [A]: the supply current of this group's joints, ``sum |tau| / kt`` of the last substep."""
        return (np.abs(self.torque) / self.p("kt")).sum(axis=1)

    def compute(self, q, qd, tq, tqd, tff, dt, out):
        self._computes += 1
        vin = self.supply.voltage(self._computes)[:, None]
        a, duty, tmp = self._a, self.duty_cycle, self._tmp
        np.subtract(tq, q, out=duty)
        duty *= a["kp_gain"]  # kp * error_gain
        if self._limited:  # the firmware's current limiter: kt qd / V +- R max_current / V
            np.multiply(a["kt"], qd, out=tmp)
            tmp /= vin
            span = a["R"] * a["max_current"] / vin
            np.clip(duty, tmp - span, tmp + span, out=duty)
        np.clip(duty, a["neg_max_pwm"], a["max_pwm"], out=duty)
        self.previous_torque, self.torque = self.torque, self.previous_torque  # keep the previous substep's
        torque = self.torque
        np.multiply(vin, duty, out=torque)
        torque *= a["kt"]
        torque /= a["R"]
        np.multiply(a["kt2"], qd, out=tmp)
        tmp /= a["R"]
        torque -= tmp
        self.velocity[...] = qd
        out[...] = torque

    def refresh(self):
        p = self.p
        self._limited = bool(np.isfinite(p("max_current")).any())
        # the values in force and their products, recomputed at every re-draw (the laws read them per substep)
        self._a = {k: p(k) for k in self.PARAMS}
        self._a.update(kp_gain=p("kp") * p("error_gain"), neg_max_pwm=-p("max_pwm"), kt2=p("kt") ** 2,
                       inv_dtheta=1.0 / p("dtheta_stribeck"))
        self._tmp = np.empty_like(p("kt"))

    def friction_budget(self, external_torque: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(frictionloss [N·m], damping [N·m·s/rad])`` ``(num_envs, num_joints)`` for the coming substep,
        from the external torque on the joints (module doc), the previous substep's motor torque and
        the velocity the last substep read (BAM's ``Model.compute_frictions``)."""
        a, tm, dq = self._a, self.previous_torque, self.velocity
        te = external_torque.astype(self.dtype, copy=False)
        if self.directional:
            gearbox = np.abs(te * a["load_friction_external"] - tm * a["load_friction_motor"])
        else:
            gearbox = np.abs(te - tm)
        fl = a["friction_base"] + (gearbox if self.directional else a["load_friction_base"] * gearbox) \
            if self.load_dependent else a["friction_base"].copy()
        if self.stribeck:
            coeff = np.abs(dq * a["inv_dtheta"])
            np.power(coeff, a["alpha"], out=coeff)
            np.negative(coeff, out=coeff)
            np.exp(coeff, out=coeff)
            fl += coeff * a["friction_stribeck"]
            if self.load_dependent:
                if self.directional:
                    g = np.abs(te * a["load_friction_external_stribeck"] - tm * a["load_friction_motor_stribeck"])
                else:
                    g = a["load_friction_stribeck"] * gearbox
                if self.quadratic:  # the load-side term when the motor dominates, the motor-side one otherwise
                    ae, am = np.abs(te), np.abs(tm)
                    quad = np.where(ae < am, a["load_friction_external_quad"] * ae**2,
                                    np.where(ae > am, a["load_friction_motor_quad"] * am**2, 0.0))
                    quad *= np.sign(te) != np.sign(tm)
                    g += quad
                g *= coeff
                fl += g
        return fl, a["friction_viscous"]


class Supply:
    """One battery: ``V = max(vin - vin_drop_resistance * I, vin_min)`` per env from the current ``I``
    of every member group's previous substep, recomputed once per substep (at the first member's
    compute of it); its ``vin`` / ``vin_drop_resistance`` / ``vin_min`` are the first member's."""

    def __init__(self, owner: BAMServo):
        self.members = [owner]
        self.value = np.zeros(owner.num_envs, owner.dtype)
        self._stamp = 0

    def voltage(self, stamp: int) -> np.ndarray:
        if stamp != self._stamp:
            self._stamp = stamp
            first = self.members[0]
            current = sum(m.current() for m in self.members)
            vin = first.p("vin")[:, 0]
            np.maximum(vin - first.p("vin_drop_resistance")[:, 0] * current, first.p("vin_min")[:, 0], out=self.value)
        return self.value


def share_supplies(drives: Iterable[Any]) -> None:
    """Make the BAM drives that name the same ``supply`` share one :class:`Supply`, the first's (whose
    ``vin`` / ``vin_drop_resistance`` / ``vin_min`` it uses; :func:`check_supplies` makes sure every
    member's configuration gives the same, before the drives are built)."""
    named: dict[str, list[BAMServo]] = {}
    for d in drives:
        if isinstance(d, BAMServo) and d.supply_name is not None:
            named.setdefault(d.supply_name, []).append(d)
    for members in named.values():
        shared = members[0].supply
        shared.members = members
        for m in members[1:]:
            m.supply = shared


def check_supplies(cfgs: Mapping[str, Any]) -> None:
    """The BAM groups of ``{group: config}`` naming one ``supply`` give it the same ``vin``,
    ``vin_drop_resistance``, ``vin_min`` (after the motors' defaults) and randomize them alike: else a
    ``ValueError`` naming the supply, the groups and the field (``configs.load`` and the collection check
    it before anything is built)."""
    first: dict[str, tuple[str, Any]] = {}
    for g, cfg in cfgs.items():
        if not isinstance(cfg, BAMServoCfg) or cfg.supply is None:
            continue
        raw = cfg.recipe()["drive"].raw_values
        mine = {k: (raw[k], cfg.randomization.get(k)) for k in BAMServo.SUPPLY_PARAMS}
        if cfg.supply not in first:
            first[cfg.supply] = (g, mine)
            continue
        g0, theirs = first[cfg.supply]
        for k in BAMServo.SUPPLY_PARAMS:
            if not all(_equal(a, b) for a, b in zip(mine[k], theirs[k])):
                raise ValueError(f"supply {cfg.supply!r}: groups '{g0}' and '{g}' give different {k!r} ({theirs[k][0]!r} "
                                 f"and {mine[k][0]!r}); the groups on one supply must give the same vin, "
                                 "vin_drop_resistance, vin_min (and randomize them alike)")


def _equal(a: Any, b: Any) -> bool:
    """Whether two field values are the same: numbers, per-joint sequences or arrays, maps, distributions."""
    try:
        return bool(a == b)
    except (ValueError, TypeError, RuntimeError):  # arrays and tensors compare element by element
        return type(a) is type(b) and np.array_equal(np.asarray(a), np.asarray(b))


_BAM_FIELDS = (*_MOTOR_KEYS[:2], *_FRICTION_KEYS)


@dataclass(kw_only=True)
class BAMServoCfg(ActuatorBaseCfg):
    """A BAM servo (module doc): ``BAMServoCfg(joint_names_expr=[".*"], motor="mx64", model="m6")``.

    The servo's parameters are BAM's published ones for ``motor`` / ``model`` (package data), or
    ``params=`` a BAM parameter file or mapping (its ``actuator`` names the firmware constants); each
    field below left None takes that value, and every one may be given per joint, as a distribution,
    or randomized (``randomization={"kt": Uniform(0.95, 1.05, operation="scale")}``).
    ``armature`` [kg·m²] (None: the motor's) is written into the joints' ``dof_armature`` per env at
    every reset. The supply is the group's joints' (``supply=None``), or shared with every group
    naming the same ``supply``. The PD fields of the base config (``stiffness``, ``damping``, the
    effort and velocity limits) do not apply: the firmware's PWM and current limits are the servo's.
    """

    motor: str | None = None
    """A bundled servo: ``"mx64"``, ``"mx106"``, ``"xl320"``, ``"xl330"`` (:data:`BAM_MOTORS`)."""
    model: str | None = None
    """BAM's friction model of the bundled parameters: ``"m1"`` .. ``"m6"`` (:data:`BAM_FRICTION_MODELS`)."""
    params: Any = None
    """A BAM parameter file (path; read as data only) or mapping, instead of ``motor`` / ``model``."""
    kp: ParamValue = None
    """The firmware's position gain (Dynamixel units; None: the motor's, 32 for MX / XL-320, 400 for XL-330)."""
    vin: ParamValue = None
    """[V]: supply voltage with no load (None: the motor's nominal, 15 V MX, 7.5 V XL)."""
    vin_drop_resistance: ParamValue = 0.0
    """[ohm]: battery + wiring resistance; the supply sags by it times the current of its joints."""
    vin_min: ParamValue = 0.0
    """[V]: the supply never sags below this."""
    supply: str | None = None
    """Name of a supply shared with other groups (None: the group's own)."""
    kt: ParamValue = None
    """[N·m/A]: torque constant (None: the parameter set's)."""
    R: ParamValue = None
    """[ohm]: winding resistance (None: the parameter set's)."""
    friction_base: ParamValue = None
    """[N·m]: Coulomb friction (None: the parameter set's; likewise every friction term below)."""
    friction_stribeck: ParamValue = None
    """[N·m]: extra friction at rest (Stribeck; m2, m4-m6)."""
    load_friction_base: ParamValue = None
    """[1]: friction per N·m of gearbox load (m3, m4)."""
    load_friction_stribeck: ParamValue = None
    """[1]: extra load friction at rest (m4)."""
    load_friction_motor: ParamValue = None
    """[1]: friction per N·m of motor torque (directional, m5, m6)."""
    load_friction_external: ParamValue = None
    """[1]: friction per N·m of external torque (directional, m5, m6)."""
    load_friction_motor_stribeck: ParamValue = None
    """[1]: extra motor-load friction at rest (m5, m6)."""
    load_friction_external_stribeck: ParamValue = None
    """[1]: extra external-load friction at rest (m5, m6)."""
    load_friction_motor_quad: ParamValue = None
    """[1/(N·m)]: quadratic motor-load friction (m6)."""
    load_friction_external_quad: ParamValue = None
    """[1/(N·m)]: quadratic external-load friction (m6)."""
    dtheta_stribeck: ParamValue = None
    """[rad/s]: Stribeck velocity."""
    alpha: ParamValue = None
    """[1]: Stribeck curvature."""
    friction_viscous: ParamValue = None
    """[N·m·s/rad]: viscous friction (written as ``dof_damping``)."""

    _ASSET_FIELDS = ()
    YAML_ALIASES: ClassVar[dict[str, str]] = {"friction_model": "model"}
    """In a YAML group, ``model:`` names the config (``model: BAMServo``), so BAM's friction model is
    written ``friction_model: m6``."""
    _no_stable_pd = "a BAM servo's friction acts inside the physics step (MuJoCo's frictionloss); its motor is explicit"

    def __post_init__(self):
        super().__post_init__()
        self.validate_servo()

    def validate_servo(self) -> None:
        """Every check that needs no joints, when the config is made: the parameter set (``motor`` /
        ``model`` / ``params``), the refused PD fields, ``supply``, every parameter's domain, and ``vin_min``
        not above ``vin`` (where both are numbers). ``ValueError`` / ``TypeError`` naming the field."""
        drive = self.recipe()["drive"]
        drive.validate(type(self).__name__)
        vin, vin_min = drive.raw_values["vin"], drive.raw_values["vin_min"]
        if isinstance(vin, (int, float)) and isinstance(vin_min, (int, float)) and vin_min > vin:
            raise ValueError(f"{type(self).__name__}: vin_min ({vin_min:g} V) must be <= vin ({vin:g} V): the supply only sags")

    def _parameter_set(self) -> dict[str, Any]:
        return bam_parameters(self.motor, self.model, self.params, type(self).__name__)

    def recipe(self):
        owner = type(self).__name__
        given = [k for k in ("actuator_effort_limit", "actuator_velocity_limit", "joint_effort_limit", "stiffness", "damping")
                 if not _is_default(self, k)]
        if given:
            raise ValueError(f"{owner}: {given} do not apply to a BAM servo (its firmware gain is kp, its limits the "
                             "PWM and current limits); leave them unset")
        if not isinstance(self.supply, (str, type(None))) or self.supply == "":
            raise TypeError(f"{owner}: supply must be a non-empty string or None, got {self.supply!r}")
        data = self._parameter_set()
        motor = BAM_MOTORS[data["actuator"]]
        values = {k: data.get(k, BAMServo.PARAMS[k][0]) for k in (*_MOTOR_KEYS, *_FRICTION_KEYS)}
        for k in _BAM_FIELDS:
            if getattr(self, k) is not None:
                values[k] = getattr(self, k)
        if self.armature is not None:
            values["armature"] = self.armature
        values.update(kp=motor.kp if self.kp is None else self.kp, vin=motor.vin if self.vin is None else self.vin,
                      error_gain=motor.error_gain, max_pwm=motor.max_pwm, max_current=motor.max_current,
                      vin_drop_resistance=self.vin_drop_resistance, vin_min=self.vin_min)
        return dict(drive=BAMServo(friction_model=data["model"], supply=self.supply, **values), clamping=[], aliases={})


def _is_default(cfg: Any, name: str) -> bool:
    f = next(f for f in fields(cfg) if f.name == name)
    v = getattr(cfg, name)
    return v is None or v is f.default or (isinstance(v, float) and isinstance(f.default, float) and v == f.default)
