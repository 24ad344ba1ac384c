"""``Part``: the base of every actuator part (delays, drives, clamps, neural drives).

A part is built from plain parameter values (see :mod:`.params` for what a value may be) and
knows nothing about envs until an :class:`~actuator_gym.actuators.Actuator` binds a private copy
of it to a batch ``(num_envs, num_joints)``.
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar

import torch

from .params import BindContext, Domain, Param, check_value

__all__ = ["Part"]


class Part:
    """Base of all parts. Subclasses declare ``PARAMS = {name: (default, Domain)}``.

    Value rules (checked when a part is bound to a batch, or by :meth:`validate`): every parameter
    is finite unless its domain allows +inf (the limits: ``max_effort``, ``integral_max``,
    ``velocity_limit``, ``effort_limit``, where +inf means no limit); NaN never; each value a
    distribution can give must lie in the domain too; and the values in force must be
    representable in the model's dtype (see :class:`~actuator_gym.actuators.params.Domain`).
    """

    PARAMS: ClassVar[dict[str, tuple[float, Domain]]] = {}

    def __init__(self, **raw: Any):
        self._raw = raw
        self._bound = False
        self.params: dict[str, Param] = {}

    # -- binding ----------------------------------------------------------------------------
    def bind(self, ctx: BindContext, randomization: dict | None = None) -> "Part":
        """A copy of this part sized and seeded for ``ctx`` (the original stays reusable)."""
        part = copy.copy(self)
        part.params = {}
        part._ctx = ctx
        randomization = dict(randomization or {})
        for name, (default, domain) in self.PARAMS.items():
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

    def reset(self, env_ids: torch.Tensor | None) -> None:
        """Clear the internal state of ``env_ids`` (None = all)."""

    def a(self, name: str):
        """The values in force of a parameter, as an array of the model's array library."""
        return self.params[name].array

    def _buffer(self, ctx: BindContext, dtype=None, shape=None):
        t = torch.zeros(shape or (ctx.num_envs, ctx.num_joints), dtype=dtype or ctx.dtype, device=ctx.device)
        return t, ctx.ops.view(t)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._raw.items() if v is not None)
        return f"{type(self).__name__}({args})"
