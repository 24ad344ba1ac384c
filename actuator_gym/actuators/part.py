"""``Part``: the base of every actuator part (delays, drives, clamps, neural drives).

A part is built from plain parameter values (see :mod:`.params` for what a value may be) and
knows nothing about envs until an :class:`~actuator_gym.actuators.Actuator` binds a private copy
of it to a batch ``(num_envs, num_joints)``.

Capabilities. Each part class *declares* what it can do, so no one outside keeps a table of class
names: :attr:`Part.GRAPH_SAFE` (its step may be captured in a CUDA graph), :attr:`Part.STATEFUL`
(it keeps state between substeps), :meth:`Part.to_newton` (its ``newton.actuators`` form),
:attr:`Part.NATIVE_FORM` / :meth:`Part.to_mujoco` (its MuJoCo-native actuator form). A declaration
describes the code of the class that makes it, so it is **not inherited**: a subclass (which may
change the law) starts from the conservative defaults -- not graph-safe, stateful, no Newton
export, no native form -- and re-declares what still holds. Adding a drive or a clamp therefore
touches its own file only.
"""

from __future__ import annotations

import copy
from types import MappingProxyType
from typing import Any, ClassVar, Mapping

import torch

from .params import BindContext, Domain, Param, check_value

__all__ = ["Part", "CAPABILITIES"]

CAPABILITIES = ("GRAPH_SAFE", "STATEFUL", "NATIVE_FORM", "to_newton", "to_mujoco")
"""The class attributes and methods a part class declares for itself (reset to :class:`Part`'s
defaults in every subclass that does not define them in its own body)."""


class Part:
    """Base of all parts. Subclasses declare ``PARAMS = {name: (default, Domain)}`` and their
    capabilities (module doc).

    Value rules (checked when a part is bound to a batch, or by :meth:`validate`): every parameter
    is finite unless its domain allows +inf (the limits: ``max_effort``, ``integral_max``,
    ``velocity_limit``, ``effort_limit``, where +inf, or None, means no limit; None for another
    parameter is a ``TypeError`` at bind, not its default); NaN never; each value a
    distribution can give must lie in the domain too; and the values in force must be
    representable in the model's dtype (see :class:`~actuator_gym.actuators.params.Domain`).
    """

    PARAMS: ClassVar[dict[str, tuple[float, Domain]]] = {}

    # -- declared capabilities (not inherited: see the module doc) ---------------------------
    GRAPH_SAFE: ClassVar[bool] = False
    """The bound part's step is pure in-place tensor math on buffers fixed at bind (no Python-side
    state that changes between substeps, no host synchronisation), so a captured CUDA graph replays
    it correctly. Default False: user parts and neural drives are never captured."""

    STATEFUL: ClassVar[bool] = True
    """The part keeps state from one substep to the next that :meth:`reset` clears (a delay
    history, a PID integral, a network's history or hidden state). Default True (a part that does
    not say may keep state)."""

    NATIVE_FORM: ClassVar[str] = "none"
    """Which of MuJoCo 4's own actuator elements can run this part inside the engine (e.g.
    ``"dcmotor"``, ``"pid"``, ``"delay"``); ``"none"`` (the default): the part runs in the runtime
    and its effort reaches the engine as a generalized force. Declared by ``DrivePD`` / ``DrivePID``
    (``"pid"``), ``ClampingMaxEffort`` (``"forcerange"``), ``ClampingDCMotor`` (``"dcmotor"``) and
    ``Delay`` (``"delay"``); compiled by :mod:`actuator_gym.backends.mujoco_native`."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in CAPABILITIES:
            if name not in cls.__dict__:
                setattr(cls, name, Part.__dict__[name])

    def __init__(self, **raw: Any):
        self._raw = raw
        self._bound = False
        self.params: dict[str, Param] = {}

    # -- capabilities -----------------------------------------------------------------------
    @property
    def graph_safe(self) -> bool:
        """Whether this part's step may be captured in a CUDA graph (:attr:`GRAPH_SAFE`)."""
        return self.GRAPH_SAFE

    @property
    def graph_unsafe_reason(self) -> str:
        """Why this part may not be captured in a CUDA graph; ``""`` when :attr:`graph_safe`."""
        return "" if self.graph_safe else f"part {type(self).__name__} is not known to be graph-safe"

    @property
    def stateful(self) -> bool:
        """Whether this part keeps state between substeps (:attr:`STATEFUL`)."""
        return self.STATEFUL

    @property
    def native_form(self) -> str:
        """The MuJoCo-native actuator form of this part (:attr:`NATIVE_FORM`; ``"none"``: none)."""
        return self.NATIVE_FORM

    def to_newton(self, exporter: Any) -> Any:
        """This bound part as a ``newton.actuators`` object, with the per-env values in force.

        ``exporter`` (:class:`~actuator_gym.backends.newton.export.NewtonExporter`) gives the
        ``newton.actuators`` module (``exporter.newton_actuators``) and per-lane Warp arrays of a
        parameter (``exporter.floats(part, name)``, ``exporter.ints(part, name)``; lanes env-major).
        Returns None when the part exports to nothing (a Delay of at most 0 substeps). The default
        raises ``NotImplementedError``: the part has no Newton form.
        """
        raise NotImplementedError(f"{type(self).__name__} has no newton.actuators export")

    def to_mujoco(self, compiler: Any) -> Any:
        """This bound part in MuJoCo 4's own actuator vocabulary (``<dcmotor>``, ``general`` with
        PID gains, ``nsample`` / ``delay``), for ``compiler``
        (:class:`~actuator_gym.backends.mujoco_native.NativeCompiler`: a part returns
        ``compiler.form(kind, self, **{native field: parameter name})``), or None: no native form
        (the default; :attr:`native_form` is ``"none"``)."""
        return None

    # -- construction values ----------------------------------------------------------------
    @property
    def raw_values(self) -> Mapping[str, Any]:
        """The parameter values as given at construction, before binding (read-only)."""
        return MappingProxyType(self._raw)

    def with_raw_values(self, **values: Any) -> "Part":
        """A copy of this (unbound) part with some construction values replaced; nothing is
        checked until it is bound or validated."""
        part = copy.copy(self)
        part._raw = {**self._raw, **values}
        return part

    # -- binding ----------------------------------------------------------------------------
    def bind(self, ctx: BindContext, randomization: dict | None = None) -> "Part":
        """A copy of this part sized and seeded for ``ctx`` (the original stays reusable)."""
        part = copy.copy(self)
        part.params = {}
        part._ctx = ctx
        randomization = dict(randomization or {})
        for name, (default, domain) in self.PARAMS.items():
            if name in self._raw and self._raw[name] is None and not domain.allow_inf:  # None: "no limit", for limits only
                raise TypeError(
                    f"{ctx.owner}: parameter '{name}' of {type(self).__name__} is None; allowed: a number or array of "
                    f"{domain.describe()} (omit it for the default {default:g})"
                )
            part.params[name] = Param(
                name,
                self._raw.get(name),
                ctx,
                default=default,
                domain=domain,
                randomization=randomization.pop(name, None),
            )
        if randomization:
            raise ValueError(
                f"{ctx.owner}: randomization names unknown parameter(s) {sorted(randomization)} of "
                f"{type(self).__name__}; its parameters are {sorted(self.PARAMS)}"
            )
        part._bound = True
        part._setup(ctx)
        part.refresh()
        return part

    def validate(self, owner: str = "") -> None:
        """Check every parameter value against its domain without binding to a batch (configs call
        this at load time): ``TypeError`` for a wrong type, ``ValueError`` naming the parameter and
        the allowed values otherwise (checked in float64; a model's own dtype is checked at bind)."""
        for name, (default, domain) in self.PARAMS.items():
            check_value(self._raw.get(name), name, owner or type(self).__name__, default=default, domain=domain)

    def _setup(self, ctx: BindContext) -> None:
        """Allocate state and scratch buffers (called once at bind)."""

    def refresh(self) -> None:
        """Recompute values derived from parameters (after they were re-sampled)."""

    def runtime_bounds(self, name: str) -> tuple[float, float] | None:
        """The range parameter ``name`` may be set to at run time (``set_parameter``) beyond its
        domain, when the bound state depends on it (a delay's history length); None: the domain."""
        return None

    def reset(self, env_ids: torch.Tensor | None) -> None:
        """Clear the internal state of ``env_ids`` (None = all)."""

    def a(self, name: str):
        """The values in force of a parameter, as an array of the model's array library
        (``self.params[name].array``; a shorthand for user parts, unused by the built-in ones)."""
        return self.params[name].array

    def _buffer(self, ctx: BindContext, dtype=None, shape=None):
        t = torch.zeros(shape or (ctx.num_envs, ctx.num_joints), dtype=dtype or ctx.dtype, device=ctx.device)
        return t, ctx.ops.view(t)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._raw.items() if v is not None)
        return f"{type(self).__name__}({args})"
