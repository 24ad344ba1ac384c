"""Parameter resolution: from what a user writes to the per-env values in force.

A per-joint parameter may be given as

* a number -- the same value for every joint;
* a sequence / array / tensor of shape ``(num_joints,)`` -- one value per joint;
* a tensor of shape ``(num_envs, num_joints)`` -- one value per env and joint;
* a dict ``{regex: value}`` -- keys full-matched against the group's joint names; values are
  numbers or distributions. A joint matched by two keys, or a key matching no joint, is a
  ``ValueError``. Joints matched by no key take the parameter's **default** (gains 0, limits +inf)
  and a warning names them (Isaac Lab silently uses 0, which makes a limit of 0);
* a :class:`~actuator_gym.randomization.Distribution` -- re-sampled per env at every reset.

The resolved values are ``(num_envs, num_joints)`` tensors (:attr:`Param.values`).
"""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch

from .._array import ArrayOps
from ..randomization import Distribution

__all__ = ["Domain", "Param", "BindContext", "ANY", "NONNEG", "POSITIVE", "NONNEG_INT", "match_names", "select_names"]


@dataclass(frozen=True)
class Domain:
    """Admissible values of a parameter."""

    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    integer: bool = False
    allow_inf: bool = True

    def describe(self) -> str:
        left = "(" if self.low_open else "["
        kind = "integers" if self.integer else "values"
        return f"{kind} in {left}{self.low}, {self.high}]"

    def contains(self, lo: float, hi: float) -> bool:
        if math.isnan(lo) or math.isnan(hi):
            return False
        if not self.allow_inf and (math.isinf(lo) or math.isinf(hi)):
            return False
        low_ok = lo > self.low if self.low_open else lo >= self.low
        return low_ok and hi <= self.high


ANY = Domain()
NONNEG = Domain(low=0.0)
POSITIVE = Domain(low=0.0, low_open=True)
NONNEG_INT = Domain(low=0.0, integer=True, allow_inf=False)


@dataclass
class BindContext:
    """What a part needs to size and seed its state."""

    num_envs: int
    num_joints: int
    joint_names: tuple[str, ...] | None
    device: torch.device
    dtype: torch.dtype
    ops: ArrayOps
    generator: torch.Generator
    owner: str = "actuator"


def match_names(patterns: Sequence[str], names: Sequence[str], what: str) -> list[int]:
    """Indices of ``names`` full-matched by any of ``patterns`` (in ``names`` order)."""
    if isinstance(patterns, str):
        patterns = [patterns]
    compiled = []
    for p in patterns:
        try:
            compiled.append(re.compile(p))
        except re.error as exc:
            raise ValueError(f"{what}: invalid regular expression {p!r}: {exc}") from None
    return [i for i, n in enumerate(names) if any(c.fullmatch(n) for c in compiled)]


def select_names(patterns: Sequence[str], names: Sequence[str], owner: str, field: str, what: str) -> list[str]:
    """The names of ``names`` full-matched by ``patterns``; ``ValueError`` naming ``owner.field``
    and the available ``what`` (e.g. "joints") when none match."""
    names = [str(n) for n in names]
    ids = match_names(patterns, names, owner)
    if not ids:
        raise ValueError(f"{owner}: {field} {list(patterns)} matches none of the {what} {names}")
    return [names[i] for i in ids]


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)


class Param:
    """One numeric parameter of a part, resolved to ``(num_envs, num_joints)`` values in force.

    ``values`` holds the values in force (float ``dtype`` or int64 for integer parameters) on the
    model's device; ``array`` is the same memory in the model's array library. ``nominal`` keeps the
    un-randomized values (float64, CPU), from which every draw starts.
    """

    def __init__(
        self,
        name: str,
        raw: Any,
        ctx: BindContext,
        *,
        default: float,
        domain: Domain = ANY,
        randomization: Distribution | None = None,
    ):
        self.name = name
        self.domain = domain
        self._ctx = ctx
        n, j = ctx.num_envs, ctx.num_joints
        self._where = f"{ctx.owner}: parameter '{name}'"
        self.nominal = torch.full((n, j), float(default), dtype=torch.float64)
        # (column indices, distribution) pairs applied at every resample
        self.randomizers: list[tuple[torch.Tensor, Distribution]] = []
        all_cols = torch.arange(j)

        if raw is None:
            pass
        elif isinstance(raw, Distribution):
            nominal = raw.nominal if raw.nominal is not None else default
            self.nominal.fill_(float(nominal))
            self.randomizers.append((all_cols, raw))
        elif isinstance(raw, dict):
            self._resolve_dict(raw, default)
        elif _is_number(raw):
            self.nominal.fill_(float(raw))
        else:
            self._resolve_array(raw)

        if randomization is not None:
            if not isinstance(randomization, Distribution):
                raise ValueError(
                    f"{self._where}: randomization must be a Distribution, got {type(randomization).__name__}"
                )
            if self.randomizers:
                raise ValueError(
                    f"{self._where}: given as a distribution and randomized again; use one of the two"
                )
            self.randomizers.append((all_cols, randomization))

        self._validate()
        vdtype = torch.int64 if domain.integer else ctx.dtype
        self.values = torch.empty((n, j), dtype=vdtype, device=ctx.device)
        self.array = ctx.ops.view(self.values)
        self.resample(None, ctx.generator)

    # -- parsing ----------------------------------------------------------------------------
    def _resolve_dict(self, raw: dict, default: float) -> None:
        names = self._ctx.joint_names
        if names is None:
            raise ValueError(
                f"{self._where}: a {{regex: value}} dict needs the joint names; pass joint_names= to the actuator"
            )
        claimed: dict[int, str] = {}
        for key, value in raw.items():
            if not isinstance(key, str):
                raise ValueError(f"{self._where}: dict keys must be regex strings, got {key!r}")
            cols = match_names([key], names, self._where)
            if not cols:
                raise ValueError(
                    f"{self._where}: key {key!r} matches no joint of the group; joints are {list(names)}"
                )
            for c in cols:
                if c in claimed:
                    raise ValueError(
                        f"{self._where}: joint '{names[c]}' is matched by both keys {claimed[c]!r} and {key!r}"
                    )
                claimed[c] = key
            idx = torch.tensor(cols, dtype=torch.long)
            if isinstance(value, Distribution):
                nominal = value.nominal if value.nominal is not None else default
                self.nominal[:, idx] = float(nominal)
                self.randomizers.append((idx, value))
            elif _is_number(value):
                self.nominal[:, idx] = float(value)
            else:
                raise ValueError(
                    f"{self._where}: value for key {key!r} must be a number or a Distribution, got {value!r}"
                )
        missing = [names[i] for i in range(len(names)) if i not in claimed]
        if missing:
            warnings.warn(
                f"{self._where}: joints {missing} are matched by no key; they use the default {default}",
                stacklevel=4,
            )

    def _resolve_array(self, raw: Any) -> None:
        n, j = self._ctx.num_envs, self._ctx.num_joints
        try:
            if isinstance(raw, torch.Tensor):
                arr = raw.detach().to("cpu", torch.float64)
            else:
                arr = torch.as_tensor(np.asarray(raw, dtype=np.float64))
        except (TypeError, ValueError):
            raise ValueError(
                f"{self._where}: expected a number, a sequence of {j} values, a ({n}, {j}) tensor, "
                f"a {{regex: value}} dict or a Distribution; got {type(raw).__name__}"
            ) from None
        if arr.shape == (j,):
            self.nominal[:] = arr.unsqueeze(0)
        elif arr.shape == (n, j):
            self.nominal[:] = arr
        else:
            raise ValueError(
                f"{self._where}: expected shape ({j},) (num_joints,) or ({n}, {j}) (num_envs, num_joints), "
                f"got {tuple(arr.shape)}"
            )

    def _joint(self, col: int) -> str:
        names = self._ctx.joint_names
        return f"joint '{names[col]}'" if names is not None else f"joint {col}"

    def _validate(self) -> None:
        d = self.domain
        nom = self.nominal
        if torch.isnan(nom).any():
            env, col = (torch.isnan(nom)).nonzero()[0].tolist()
            raise ValueError(f"{self._where}: {self._joint(col)} (env {env}) is NaN; allowed: {d.describe()}")
        bad = ~self._in_domain(nom)
        if bad.any():
            env, col = bad.nonzero()[0].tolist()
            raise ValueError(
                f"{self._where}: {self._joint(col)} (env {env}) has value {nom[env, col].item()}; "
                f"allowed: {d.describe()}"
            )
        for cols, dist in self.randomizers:
            block = nom[:, cols]
            lo, hi = dist.value_range(block.min().item(), block.max().item())
            if not d.contains(lo, hi):
                raise ValueError(
                    f"{self._where}: {type(dist).__name__} with operation={dist.operation!r} can give values "
                    f"in [{lo}, {hi}]; allowed: {d.describe()}"
                )

    def _in_domain(self, x: torch.Tensor) -> torch.Tensor:
        d = self.domain
        ok = (x > d.low) if d.low_open else (x >= d.low)
        ok &= x <= d.high
        if not d.allow_inf:
            ok &= torch.isfinite(x)
        if d.integer:
            ok &= torch.where(torch.isfinite(x), x == torch.round(x), torch.zeros_like(ok))
        return ok

    # -- state ------------------------------------------------------------------------------
    @property
    def randomized(self) -> bool:
        return bool(self.randomizers)

    def resample(self, env_ids: torch.Tensor | None, generator: torch.Generator) -> None:
        """Set the values in force of ``env_ids`` (None = all) from nominal, drawing any distributions."""
        if env_ids is None:
            block = self.nominal.clone()
        else:
            block = self.nominal[env_ids.cpu()].clone()
        for cols, dist in self.randomizers:
            block[:, cols] = dist.sample(block[:, cols], generator)
        if self.domain.integer:
            block = torch.round(block)
        block = block.to(device=self.values.device, dtype=self.values.dtype)
        if env_ids is None:
            self.values.copy_(block)
        else:
            self.values[env_ids.to(self.values.device)] = block

    def __repr__(self) -> str:
        return f"Param({self.name!r}, shape={tuple(self.values.shape)}, randomized={self.randomized})"
