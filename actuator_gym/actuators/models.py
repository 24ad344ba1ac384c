"""Named actuator models: typed configs with Isaac Lab's field names, each a recipe of parts.

    model = DCMotorCfg(stiffness=60.0, damping=1.5, saturation_effort=33.5,
                       actuator_effort_limit=23.7, actuator_velocity_limit=21.0)
        .build(joint_names=["FL_hip", ...], num_envs=4096, device="cpu", seed=0)
    effort = model.compute(joint_pos=q, joint_vel=qd, target_pos=q_star, dt=0.005)

| config                    | recipe                                                   |
| ------------------------- | -------------------------------------------------------- |
| ``IdealPDActuatorCfg``     | DrivePD -> ClampingMaxEffort(actuator_effort_limit)     |
| ``DCMotorCfg``             | DrivePD -> ClampingDCMotor(saturation_effort, actuator_velocity_limit, actuator_effort_limit) |
| ``DelayedPDActuatorCfg``   | Delay(min_delay, max_delay) -> DrivePD -> ClampingMaxEffort |
| ``RemotizedPDActuatorCfg`` | Delay -> DrivePD -> ClampingPositionBased(joint_parameter_lookup) |
| ``ImplicitActuatorCfg``    | solver-side PD: the engine's servo, or Stable-PD on tasks |

The actuator-network configs (``ActuatorNetMLPCfg``, ``ActuatorNetLSTMCfg``, ``ActuatorNetGRUCfg``)
are in :mod:`.net_models`.

``joint_effort_limit`` (Isaac Lab's ``effort_limit_sim``), when given, adds a last
``ClampingMaxEffort``: the solver's limit, a parameter apart from ``actuator_effort_limit``. Fields
set to None take the asset's values at build (``build(..., asset=)``, :mod:`.asset`); every Isaac
Lab field is accepted (docs/actuators.md).

Every model takes ``backlash`` (a gear play read through a motor-side encoder), ``encoder_resolution``
(a quantized position and its firmware velocity) and the ``bus`` fields (a command bus that holds,
drops and jitters a control step's command frame); docs/actuators.md, "Backlash, encoders and the bus".

Every numeric field accepts a number, a per-joint sequence, a ``(num_envs, num_joints)`` tensor,
a ``{regex: value}`` dict or a distribution; ``randomization={field: Distribution}`` randomizes a
field around its nominal value (``operation="scale"`` / ``"add"``) at every reset.

"Implicit" means two things here: :class:`ImplicitActuatorCfg` is a PD inside the physics step (the
engine's servo, or on the batched tasks the Stable-PD solve), ``effort_mode="implicit"`` on the
other models is the Stable-PD effort mode solved by the actuator model (:mod:`.implicit`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Sequence

import numpy as np
import torch

from .._checks import UnsupportedError, check_bool, check_int, real_array
from ..randomization.distributions import Distribution
from .actuator import Actuator
from .asset import JOINT_PROPERTY_FIELDS, AssetJoints, check_class_type, resolve_cfg
from .clamps import Clamping, ClampingDCMotor, ClampingMaxEffort, ClampingPositionBased
from .delay import MAX_DELAY, Delay
from .drives import Drive, DrivePD
from .implicit import ImplicitOptions
from .motor_physics import DCMotorPhysicsFields
from .transmission import TransmissionFields, bus_plan
from .params import FINITE_POSITIVE, GAIN, NONNEG, POSITIVE, check_value, select_names, uncovered_names

__all__ = [
    "ActuatorBaseCfg",
    "IdealPDActuatorCfg",
    "DCMotorCfg",
    "DelayedPDActuatorCfg",
    "RemotizedPDActuatorCfg",
    "ImplicitActuatorCfg",
    "DELAY_ALIASES",
    "bus_plan",
]

ParamValue = Any
"""A number, a ``(num_joints,)`` sequence, a ``(num_envs, num_joints)`` tensor, a ``{regex: value}``
dict, or a :class:`~actuator_gym.randomization.Distribution`."""

_DEPRECATED = {
    "effort_limit": "actuator_effort_limit",
    "velocity_limit": "actuator_velocity_limit",
    "effort_limit_sim": "joint_effort_limit",
    "velocity_limit_sim": "joint_velocity_limit",
}


@dataclass(kw_only=True)
class ActuatorBaseCfg(TransmissionFields):
    """Fields shared by every named model. Units are for hinge joints (slide: m, N)."""

    joint_names_expr: list[str] = field(default_factory=lambda: [".*"])
    """Regexes full-matched against joint names; the group drives every joint matched."""
    stiffness: ParamValue = 0.0
    """kp [N·m/rad]: position gain."""
    damping: ParamValue = 0.0
    """kd [N·m·s/rad]: velocity gain."""
    actuator_effort_limit: ParamValue = math.inf
    """[N·m]: the actuator model's effort limit (clamp in the model)."""
    actuator_velocity_limit: ParamValue = math.inf
    """[rad/s]: the actuator model's velocity limit (DC motor no-load speed)."""
    joint_effort_limit: ParamValue = None
    """[N·m]: solver-side effort limit written to the physics model (None = leave the model's)."""
    joint_velocity_limit: ParamValue = None
    """[rad/s]: solver-side velocity limit (None = leave the model's)."""
    armature: ParamValue = None
    """[kg·m²]: reflected rotor inertia written to the physics model (MuJoCo ``dof_armature``;
    None = leave the model's)."""
    friction: ParamValue = None
    """[N·m]: static (Coulomb) joint friction effort, Isaac Lab's meaning, written to the physics
    model as MuJoCo's dry friction ``dof_frictionloss`` (None = leave the model's)."""
    dynamic_friction: ParamValue = None
    """[N·m]: kinetic joint friction effort (Isaac Lab). MuJoCo has one dry-friction level
    (``dof_frictionloss``): written there when ``friction`` is None; with both given it must be
    <= ``friction`` and the static level is written (docs/actuators.md, "Joint properties")."""
    viscous_friction: ParamValue = None
    """[N·m·s/rad]: viscous joint friction coefficient, written as MuJoCo's ``dof_damping``
    (None = leave the model's)."""
    class_type: Any = None
    """Isaac Lab's actuator class (a class or a ``"module:Class"`` string); accepted for verbatim
    configs and checked: its class name must be this config's name without ``Cfg`` (e.g.
    ``DCMotor`` for :class:`DCMotorCfg`). None (default): this config's own model."""
    min_delay: int = 0
    """[physics substeps]: smallest command lag (with ``max_delay`` > 0 every model gets a Delay part)."""
    max_delay: int = 0
    """[physics substeps]: largest command lag; lags are drawn per env at every reset."""
    per_joint_delay: bool = False
    """Draw a lag per env and joint instead of per env."""
    effort_mode: str = "explicit"
    """How the model's effort enters the physics substep. ``"explicit"`` (default): the drive is
    evaluated at the measured state and its clamped effort held over the substep (zero-order
    hold). ``"implicit"`` (Stable-PD): the drive + clamp chain is solved at the predicted
    end-of-substep state, using the inverse joint-space mass matrix of the group's DOFs
    (``compute(..., inverse_mass=(num_envs, J, J), bias_force=(num_envs, J))``; the wrapper and
    the batched tasks fetch it from the MuJoCo backend every substep), which stays stable at
    stiff gains and large substeps where explicit PD oscillates or diverges. The effort is still
    computed by the actuator model and applied as a generalized force, so every clamp (DC-motor
    envelope, limits) acts on it. PD/PID drives only: learned-net configs reject ``"implicit"``.
    :class:`ImplicitActuatorCfg` always runs this mode (docs/actuators.md, "Implicit: one meaning")."""
    implicit_options: Any = None
    """Options of the Stable-PD (``effort_mode="implicit"``) solve: an
    :class:`~actuator_gym.actuators.implicit.ImplicitOptions` or a dict of its fields (``max_iters``,
    ``residual_tol`` [N·m·s], ``update_tol`` [N·m·s], ``fd_epsilon``, ``derivative_floor``,
    ``warm_start``, ``ls_iterations``); None = Newton 1.8's defaults."""
    randomization: dict[str, Any] = field(default_factory=dict)
    """``{field name: Distribution}``: re-sampled per env at every reset, from the nominal value."""
    # deprecated Isaac Lab aliases (DeprecationWarning; conflicting values -> ValueError)
    effort_limit: ParamValue = None
    velocity_limit: ParamValue = None
    effort_limit_sim: ParamValue = None
    velocity_limit_sim: ParamValue = None

    solver_side: ClassVar[bool] = False
    """PD inside the physics step (:class:`ImplicitActuatorCfg`): always the Stable-PD effort mode."""
    _DEPRECATED = _DEPRECATED
    """Isaac Lab's deprecated names -> the field they set (ImplicitActuatorCfg: a lone
    ``effort_limit`` sets the solver limit too, as in Isaac Lab 3.0)."""
    _ASSET_FIELDS = ("stiffness", "damping", "actuator_effort_limit", "actuator_velocity_limit")
    """Fields whose None means "take the value from the asset" (:mod:`.asset`)."""

    def __post_init__(self):
        defaults = {f.name: f.default for f in fields(self)}
        self._written_as: dict[str, str] = {}  # field -> the Isaac Lab name the user wrote it as (for errors)
        if self.solver_side and self.effort_limit is not None and self.effort_limit_sim is None and self.joint_effort_limit is None:
            self.joint_effort_limit = self.effort_limit  # Isaac Lab 3.0: a lone effort_limit reaches the solver too
            self._written_as["joint_effort_limit"] = "effort_limit"
        for old, new in self._DEPRECATED.items():
            value = getattr(self, old)
            if value is None:
                continue
            self._written_as[new] = old
            warnings.warn(
                f"{type(self).__name__}: '{old}' is deprecated; use '{new}'", DeprecationWarning, stacklevel=3
            )
            current = getattr(self, new)
            if current is not None and current is not defaults[new] and not _same(current, value):
                raise ValueError(
                    f"{type(self).__name__}: '{old}' ({value!r}) conflicts with '{new}' ({current!r}); give only '{new}'"
                )
            setattr(self, new, value)
            setattr(self, old, None)
        name = type(self).__name__
        if isinstance(self.joint_names_expr, str):
            self.joint_names_expr = [self.joint_names_expr]
        if not isinstance(self.joint_names_expr, (list, tuple)) or not all(isinstance(e, str) for e in self.joint_names_expr):
            raise TypeError(f"{name}: joint_names_expr must be a list of regex strings, got {self.joint_names_expr!r}")
        self.joint_names_expr = list(self.joint_names_expr)
        _check_effort_mode(self, self.effort_mode, supported=False)
        self._check_delay_fields()
        if not isinstance(self.randomization, Mapping):
            raise TypeError(f"{name}: randomization must be a {{field name: Distribution}} dict, got {type(self.randomization).__name__}")
        unknown = set(self.randomization) - {f.name for f in fields(self)}
        if unknown:
            raise ValueError(
                f"{name}: randomization names unknown field(s) {sorted(unknown)}"
            )
        for key, dist in self.randomization.items():
            if not isinstance(dist, Distribution):
                raise TypeError(f"{name}: randomization[{key!r}] must be a Distribution, got {type(dist).__name__} {dist!r}")
        for key in JOINT_PROPERTY_FIELDS:
            _check_joint_property(name, key, getattr(self, key))
        self._check_transmission_fields()
        check_class_type(self)

    def _check_delay_fields(self) -> None:
        """``min_delay`` / ``max_delay`` integers in ``[0, 2**20]`` with ``min_delay <= max_delay``;
        ``per_joint_delay`` a bool. Checked at construction and again at build (a Delay part is
        added only when ``max_delay > 0``, so a bad pair would otherwise be dropped silently)."""
        name = type(self).__name__
        self.min_delay = check_int(self.min_delay, "min_delay", name, low=0, high=MAX_DELAY)
        self.max_delay = check_int(self.max_delay, "max_delay", name, low=0, high=MAX_DELAY)
        if self.min_delay > self.max_delay:
            raise ValueError(f"{name}: min_delay ({self.min_delay}) must be <= max_delay ({self.max_delay}) [substeps]")
        self.per_joint_delay = check_bool(self.per_joint_delay, "per_joint_delay", name)

    def _check_unused_fields(self, recipe: dict[str, Any], aliases: dict[str, str]) -> None:
        """Numeric fields this model's recipe does not use are still checked when given (an unused
        field must not hide a NaN or a typo); the used ones are checked by the parts, per joint."""
        parts = [recipe.get("delay"), recipe.get("drive"), *recipe.get("clamping", [])]
        used = set(aliases) | {p for part in parts if part is not None for p in part.PARAMS}
        for key, (default, domain) in _FIELD_DOMAINS.items():
            if key not in used and hasattr(self, key):
                check_value(getattr(self, key), key, type(self).__name__, default=default, domain=domain)

    def _check_gain_maps(self, names: list[str], group: str | None) -> None:
        """A ``{regex: value}`` map in a numeric field must cover every joint of the group: Isaac Lab
        leaves the joints no key matches at 0 (a limp joint, a limit of 0); we refuse them, naming the
        field as the user wrote it (``effort_limit`` or ``actuator_effort_limit``) and the joints."""
        cls = type(self).__name__
        where = cls if group in (None, cls) else f"{cls} (group '{group}')"
        for key in _FIELD_DOMAINS:
            value, written = getattr(self, key, None), f"{where}: '{self._written_as.get(key, key)}'"
            uncovered = uncovered_names(value, names, written) if isinstance(value, Mapping) else []
            if uncovered:
                raise ValueError(
                    f"{written} = {{regex: value}} with keys {list(value)} leaves joints {uncovered} of the group "
                    f"matched by no key; give every joint of the group a value (the group's joints: {list(names)})"
                )

    def validate(self) -> None:
        """Every check :meth:`build` makes that needs no joints: ``effort_mode``, the delay fields,
        ``implicit_options``, the recipe's parts and the numeric fields the recipe does not use.
        ``ValueError`` / ``TypeError`` naming the field (``configs.load`` calls it for every group)."""
        _check_effort_mode(self, self.effort_mode)
        self._check_delay_fields()
        self._check_transmission_fields()
        self._stable_pd_options()
        recipe = self.recipe()
        self._check_unused_fields(recipe, recipe.pop("aliases", {}))

    # -- recipe -----------------------------------------------------------------------------
    def recipe(self) -> dict[str, Any]:
        """``dict(drive=, delay=, clamping=, aliases=)`` for :class:`Actuator`."""
        raise TypeError(
            f"{type(self).__name__} is the base of the named configs and has no recipe; use IdealPDActuatorCfg, "
            "DCMotorCfg, DelayedPDActuatorCfg, RemotizedPDActuatorCfg, ImplicitActuatorCfg or ComposedActuatorCfg"
        )

    def select_joints(self, joint_names: Sequence[str]) -> list[str]:
        """The joints of ``joint_names`` this config drives (full-match of ``joint_names_expr``).
        ``joint_names`` is a sequence of strings (a single string is a ``TypeError``)."""
        return select_names(self.joint_names_expr, joint_names, type(self).__name__, "joint_names_expr", "joints")

    def _stable_pd_options(self):
        """``implicit_options`` (the Stable-PD solve's) as an ``ImplicitOptions`` (validated), or None."""
        opts = self.implicit_options
        if opts is None:
            return None
        if isinstance(opts, ImplicitOptions):
            return opts
        if not isinstance(opts, dict):
            raise TypeError(f"{type(self).__name__}: implicit_options must be an ImplicitOptions or a dict, got {opts!r}")
        try:
            return ImplicitOptions(**opts)
        except TypeError as exc:
            raise TypeError(f"{type(self).__name__}: implicit_options: {exc}") from None

    def delay_part(self) -> Delay:
        """The ``Delay`` part of the delay fields: lags ``U{min_delay..max_delay}`` [substeps] per env
        (per env and joint with ``per_joint_delay``). :meth:`build` adds it to any recipe without
        one when ``max_delay > 0``; its parameter takes the names in :data:`DELAY_ALIASES`."""
        return Delay(min_delay=self.min_delay, max_delay=self.max_delay, per_joint=self.per_joint_delay)

    def build(
        self,
        joint_names: Sequence[str],
        num_envs: int = 1,
        device: str | torch.device = "cpu",
        seed: int | None = None,
        asset: AssetJoints | None = None,
        **kwargs: Any,
    ) -> Actuator:
        """Bind this recipe to the joints of ``joint_names`` it matches, for ``num_envs`` envs.

        ``asset`` (an :class:`~actuator_gym.actuators.asset.AssetJoints`, e.g. the MJCF's values
        from :class:`~actuator_gym.backends.mujoco_asset.MjcfJoints`) fills the fields left None
        ("take the value from the asset", Isaac Lab's meaning; :func:`.asset.resolve_cfg`); the
        model is built from that resolved copy (``model.resolved_cfg``) and ``model.cfg`` stays
        this config. Extra keyword arguments (``dtype``, ``check_finite``, ``array_backend``,
        ``name``, ``effort_mode``) go to :class:`Actuator`; ``effort_mode`` defaults to the
        config's field.
        """
        kwargs.setdefault("effort_mode", self.effort_mode)
        _check_effort_mode(self, kwargs["effort_mode"])
        return self._bind(joint_names, num_envs, device, seed, asset, **kwargs)

    def _bind(self, joint_names, num_envs, device, seed, asset, **kwargs) -> Actuator:
        """:meth:`build` after its ``effort_mode`` check (``kwargs["effort_mode"]`` is set)."""
        self._check_delay_fields()
        self._check_transmission_fields(kwargs.get("name"), kwargs["effort_mode"])
        options = self._stable_pd_options()
        names = self.select_joints(joint_names)
        self._check_gain_maps(names, kwargs.get("name"))
        resolved = resolve_cfg(self, names, asset)
        recipe = resolved.recipe()
        aliases = recipe.pop("aliases", {})
        resolved._check_unused_fields(recipe, aliases)
        if recipe.get("delay") is None and self.max_delay > 0:
            recipe["delay"] = self.delay_part()
        if recipe.get("delay") is not None:
            aliases = {**aliases, **DELAY_ALIASES}
        recipe["backlash"], recipe["encoder"] = resolved.backlash_part(), resolved.encoder_part()
        randomization = {aliases.get(k, k): v for k, v in self.randomization.items()}
        kwargs.setdefault("name", type(self).__name__)
        model = Actuator(**recipe, num_envs=num_envs, joint_names=names, device=device, seed=seed,
                         randomization=randomization, aliases=aliases, **kwargs)
        if self.on_bus:
            model.explicit_only += ("bus",)
        model.cfg = self
        model.resolved_cfg = resolved
        if options is not None:
            model.implicit_options = options
        return model


_EFFORT_MODES = ("explicit", "implicit")


def _check_effort_mode(cfg: "ActuatorBaseCfg", mode: Any, supported: bool = True) -> None:
    """``ValueError`` unless ``mode`` is an effort mode (and, with ``supported``, one this config's
    model supports: checked at build)."""
    name = type(cfg).__name__
    if mode not in _EFFORT_MODES:
        raise ValueError(f"{name}: effort_mode must be one of {list(_EFFORT_MODES)}, got {mode!r}")
    reason = getattr(cfg, "_no_stable_pd", None)
    if supported and mode == "implicit" and reason:
        raise UnsupportedError(f"{name}: effort_mode='implicit' is not supported: {reason}; use effort_mode='explicit'")


_FIELD_DOMAINS = {
    "stiffness": (0.0, GAIN),
    "damping": (0.0, GAIN),
    "actuator_effort_limit": (math.inf, NONNEG),
    "actuator_velocity_limit": (math.inf, POSITIVE),
    "joint_effort_limit": (math.inf, NONNEG),
    "joint_velocity_limit": (math.inf, POSITIVE),
    "saturation_effort": (0.0, GAIN),
    "backlash": (0.0, GAIN),
}
"""Domains of the named configs' numeric fields (the parts' domains; docs/runtime.md)."""


def _check_joint_property(owner: str, key: str, value: Any) -> None:
    """``armature`` / ``friction``: None, or finite values >= 0 (a number or a per-joint sequence;
    dicts, tensors and distributions are passed on, the consumer checks them)."""
    if value is None or isinstance(value, (dict, torch.Tensor, Distribution)):
        return
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{owner}: {key} must be a number or a per-joint sequence, got {value!r}")
    arr = real_array(value, key, owner)
    if arr.ndim > 1 or arr.size == 0:
        raise ValueError(f"{owner}: {key} must be a number or a per-joint sequence, got shape {arr.shape}")
    if not (np.isfinite(arr).all() and (arr >= 0).all()):
        raise ValueError(f"{owner}: {key} must be >= 0 and finite, got {arr.tolist()}")


def _same(a, b) -> bool:
    try:
        return bool(a == b)
    except Exception:  # arrays, tensors
        return False


_PD_ALIASES = {"stiffness": "kp", "damping": "kd"}


def _with_solver_limit(cfg: "ActuatorBaseCfg", clamping: list, aliases: dict) -> dict:
    """Append the solver-side effort limit (``joint_effort_limit``, Isaac Lab's
    ``effort_limit_sim``) as the last clamp when it is given: the effort the physics receives is
    clipped to it after the actuator model's own limits, and it is its own parameter
    (``joint_effort_limit``), apart from the rated ``actuator_effort_limit``."""
    if cfg.joint_effort_limit is None:
        return aliases
    check_value(cfg.joint_effort_limit, "joint_effort_limit", type(cfg).__name__, default=math.inf, domain=NONNEG)
    clamping.append(ClampingMaxEffort(max_effort=cfg.joint_effort_limit))
    return {**aliases, "joint_effort_limit": f"clamping[{len(clamping) - 1}].max_effort"}
DELAY_ALIASES = {"min_delay": "delay_steps", "max_delay": "delay_steps", "delay": "delay_steps"}
"""Config field names that address a recipe's Delay parameter ``delay_steps`` (e.g. in ``randomization``)."""


@dataclass(kw_only=True)
class IdealPDActuatorCfg(ActuatorBaseCfg):
    """Explicit PD: ``clip(kp (q* - q) + kd (qd* - qd) + tau_ff, ±actuator_effort_limit)``."""

    def recipe(self):
        clamping = [ClampingMaxEffort(max_effort=self.actuator_effort_limit)]
        aliases = {**_PD_ALIASES, "actuator_effort_limit": "clamping[0].max_effort"}
        return dict(
            drive=DrivePD(kp=self.stiffness, kd=self.damping),
            clamping=clamping,
            aliases=_with_solver_limit(self, clamping, aliases),
        )


@dataclass(kw_only=True)
class DCMotorCfg(ActuatorBaseCfg, DCMotorPhysicsFields):
    """PD followed by the DC-motor torque-speed clamp.

    ``saturation_effort`` [N·m] is the stall torque; ``actuator_velocity_limit`` [rad/s] the
    no-load speed; ``actuator_effort_limit`` [N·m] the continuous torque. Both
    ``saturation_effort`` and ``actuator_velocity_limit`` are required. The optional motor
    physics (thermal model, inductance, cogging, LuGre friction; :mod:`.motor_physics`) run only
    in MuJoCo's native ``dcmotor`` (``execution="native"``).
    """

    saturation_effort: ParamValue = None
    """[N·m]: stall torque (peak torque at zero speed)."""

    def recipe(self):
        if self.saturation_effort is None:
            raise ValueError(f"{type(self).__name__}: saturation_effort is required (stall torque, N·m)")
        v = self.actuator_velocity_limit
        if v is None or (isinstance(v, float) and math.isinf(v)):  # the field's default: not given
            raise ValueError(
                f"{type(self).__name__}: actuator_velocity_limit is required (no-load speed, rad/s, finite > 0)"
            )
        for domain in (POSITIVE, FINITE_POSITIVE):  # the clamp's rule, then no +inf in any element (as a scalar)
            check_value(v, "actuator_velocity_limit", type(self).__name__, default=math.nan, domain=domain)
        clamping = [
            ClampingDCMotor(
                saturation_effort=self.saturation_effort,
                velocity_limit=self.actuator_velocity_limit,
                effort_limit=self.actuator_effort_limit,
            ),
            *self.motor_physics_parts(),  # native only (motor_physics.py)
        ]
        aliases = {**_PD_ALIASES, "actuator_effort_limit": "effort_limit", "actuator_velocity_limit": "velocity_limit"}
        return dict(
            drive=DrivePD(kp=self.stiffness, kd=self.damping),
            clamping=clamping,
            aliases=_with_solver_limit(self, clamping, aliases),
        )


@dataclass(kw_only=True)
class DelayedPDActuatorCfg(IdealPDActuatorCfg):
    """Ideal PD whose commands arrive ``L`` substeps late, ``L ~ U{min_delay..max_delay}`` per env,
    re-drawn at every reset (``per_joint_delay=True``: per env and joint). (Every named model accepts
    ``min_delay``/``max_delay``; this one always carries a Delay part, as in Isaac Lab.)"""

    def recipe(self):
        r = super().recipe()
        r["delay"] = self.delay_part()
        r["aliases"] = {**r["aliases"], **DELAY_ALIASES}
        return r


@dataclass(kw_only=True)
class RemotizedPDActuatorCfg(DelayedPDActuatorCfg):
    """Delayed PD whose effort limit depends on the joint angle (linkage-driven joints, e.g. a
    knee driven through a rod). ``joint_parameter_lookup`` rows are ``(angle [rad],
    transmission_ratio, max_effort [N·m])``; columns 0 and 2 define the limit (the ratio is carried,
    unused, as in Isaac Lab). Box limits are +inf."""

    joint_parameter_lookup: list[list[float]] = field(default_factory=list)

    def recipe(self):
        lookup = self.joint_parameter_lookup
        ok = isinstance(lookup, (list, tuple, np.ndarray)) and all(
            isinstance(r, (list, tuple, np.ndarray)) and len(r) == 3 for r in lookup
        )
        rows = [list(r) for r in lookup] if ok else []
        if not rows:
            raise ValueError(
                f"{type(self).__name__}: joint_parameter_lookup needs rows (angle, transmission_ratio, max_effort), "
                f"got {self.joint_parameter_lookup!r}"
            )
        clamping = [ClampingPositionBased([r[0] for r in rows], [r[2] for r in rows])]
        return dict(
            delay=self.delay_part(),
            drive=DrivePD(kp=self.stiffness, kd=self.damping),
            clamping=clamping,
            aliases=_with_solver_limit(self, clamping, {**_PD_ALIASES, **DELAY_ALIASES}),
        )


@dataclass(kw_only=True)
class ComposedActuatorCfg(ActuatorBaseCfg):
    """Any recipe of parts as a config, so hand-composed models (Newton's vocabulary) join
    collections, wrappers and tasks like the named ones::

        ComposedActuatorCfg(joint_names_expr=[".*_calf_joint"], drive=DrivePID(kp=15.0, ki=4.0, kd=1.0),
                            clamping=[ClampingMaxEffort(max_effort=2.5)])

    The parameters live in the parts; the PD fields of the base config (``stiffness``, ``damping``,
    ``actuator_*_limit``) are not used. ``min_delay``/``max_delay`` add a Delay when ``delay`` is None.
    """

    _ASSET_FIELDS = ()

    drive: Drive | None = None
    """The drive part (required): ``DrivePD``, ``DrivePID`` or a neural drive."""
    delay: Delay | None = None
    """Optional ``Delay`` part on the commands."""
    clamping: list[Clamping] = field(default_factory=list)
    """Clamp parts applied in order."""

    def recipe(self):
        if not isinstance(self.drive, Drive):
            error = ValueError if self.drive is None else TypeError
            raise error(f"{type(self).__name__}: drive must be a Drive part (e.g. DrivePID(...)), got {self.drive!r}")
        clamping = [self.clamping] if isinstance(self.clamping, Clamping) else self.clamping
        if not isinstance(clamping, (list, tuple)):
            raise TypeError(f"{type(self).__name__}: clamping must be a list of Clamping parts, got {self.clamping!r}")
        return dict(drive=self.drive, delay=self.delay, clamping=list(clamping), aliases={})


@dataclass(kw_only=True)
class ImplicitActuatorCfg(ActuatorBaseCfg):
    """Solver-side PD (Isaac Lab's implicit actuator): ``kp (q* - q) + kd (qd* - qd) + tau_ff``
    integrated implicitly inside the physics step, clamped at the solver's ``joint_effort_limit``
    (``effort_limit_sim``). As in Isaac Lab 3.0 the deprecated ``effort_limit`` sets the rated
    ``actuator_effort_limit`` and, when no solver limit is given, ``joint_effort_limit`` too; both
    aliases given with different values is legal (each a ``DeprecationWarning``).

    One meaning everywhere (the wrapper, the batched tasks, every backend with a mass matrix): the
    model runs the Stable-PD effort mode (``stable_pd`` True, :mod:`.implicit`), which solves the PD
    at the end-of-substep state with the inverse mass matrix -- the implicit drive PhysX integrates
    for Isaac Lab -- and clamps there; the effort is applied as a generalized force and reported
    exactly. A finite rated ``actuator_effort_limit`` clamps it too (Isaac Lab's configs leave it
    +inf). The config's own ``effort_mode`` stays ``"explicit"`` (docs/actuators.md, "Implicit").
    """

    implicit: bool = field(default=True, init=False)
    """Always True (Isaac Lab's marker; the built model says ``stable_pd``)."""
    solver_side: ClassVar[bool] = True
    _no_stable_pd = ("ImplicitActuatorCfg is integrated inside the physics step (solver-side PD, always solved as Stable-PD); "
                     "effort_mode applies to the explicit models (IdealPD, DCMotor, DelayedPD, RemotizedPD)")
    _ASSET_FIELDS = (*ActuatorBaseCfg._ASSET_FIELDS, "joint_effort_limit")

    def recipe(self):
        for key in ("actuator_effort_limit", "joint_effort_limit"):
            check_value(getattr(self, key), key, type(self).__name__, default=math.inf, domain=NONNEG)
        return dict(
            drive=DrivePD(kp=self.stiffness, kd=self.damping),
            clamping=[ClampingMaxEffort(max_effort=self.actuator_effort_limit),
                      ClampingMaxEffort(max_effort=self.joint_effort_limit)],
            aliases={**_PD_ALIASES, "actuator_effort_limit": "clamping[0].max_effort",
                     "joint_effort_limit": "clamping[1].max_effort"},
        )

    def build(self, joint_names, num_envs=1, device="cpu", seed=None, asset=None, **kwargs):
        """As :meth:`ActuatorBaseCfg.build`; the model runs the Stable-PD effort mode (the class doc)."""
        kwargs.setdefault("effort_mode", self.effort_mode)
        _check_effort_mode(self, kwargs["effort_mode"])  # the config's own: "explicit" only
        kwargs["effort_mode"] = "implicit"
        return self._bind(joint_names, num_envs, device, seed, asset, **kwargs)


# ---------------------------------------------------------------------------------------------
# Learned actuators (neural drive -> DC-motor clamp with the current qd); see neural.py
# ---------------------------------------------------------------------------------------------
