"""Parameter resolution: from what a user writes to the per-env values in force.

A per-joint parameter may be given as

* a number -- the same value for every joint;
* a sequence / array / tensor of shape ``(num_joints,)`` -- one value per joint;
* a tensor of shape ``(num_envs, num_joints)`` -- one value per env and joint;
* a dict ``{regex: value}`` -- keys full-matched against the group's joint names; values are
  numbers or distributions. A joint matched by two keys, a key matching no joint, or a joint
  matched by no key is a ``ValueError`` naming them (Isaac Lab silently leaves an unmatched joint
  at 0: a limp joint, a limit of 0);
* a :class:`~actuator_gym.randomization.Distribution` -- re-sampled per env at every reset.

The resolved values are ``(num_envs, num_joints)`` tensors (:attr:`Param.values`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import torch

from .._array import NUMPY_OPS, ArrayOps
from .._checks import UnknownNameError, check_names, is_real, real_array
from ..randomization.distributions import Distribution
from ..randomization.streams import EnvStreams

__all__ = [
    "Domain",
    "Param",
    "BindContext",
    "ANY",
    "NONNEG",
    "POSITIVE",
    "NONNEG_INT",
    "FINITE",
    "GAIN",
    "FINITE_POSITIVE",
    "UnknownParameterError",
    "check_value",
    "match_names",
    "select_names",
    "uncovered_names",
]


@dataclass(frozen=True)
class Domain:
    """Admissible values of a parameter.

    Values are finite unless ``allow_inf`` (then ``+inf`` is admissible too: an unset limit, "no
    limit"); NaN never is. At bind the values in force must also be representable in the model's
    dtype: a finite value beyond the dtype's range (``1e39`` in float32) is refused, except for
    ``allow_inf`` parameters, where it becomes ``+inf`` (a limit beyond the range is no limit);
    a positive value that rounds to 0 (``1e-50`` in float32) is refused for ``low_open`` domains.
    """

    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    integer: bool = False
    allow_inf: bool = True

    def describe(self, dtype: torch.dtype | None = None) -> str:
        if self.integer:
            kind = "integers"
        else:
            kind = "values" if self.allow_inf else "finite values"
        if self.low > -math.inf and self.high < math.inf:
            left = "(" if self.low_open else "["
            text = f"{kind} in {left}{self.low:g}, {self.high:g}]"
        elif self.low > -math.inf:
            text = f"{kind} {'>' if self.low_open else '>='} {self.low:g}"
        elif self.high < math.inf:
            text = f"{kind} <= {self.high:g}"
        else:
            text = kind
        if self.allow_inf:
            text += " or +inf (no limit)"
        if dtype is not None and dtype.is_floating_point and not self.integer:
            text += f", representable in {str(dtype).replace('torch.', '')} (|x| <= {torch.finfo(dtype).max:.4g})"
        return text

    def contains(self, lo: float, hi: float) -> bool:
        if math.isnan(lo) or math.isnan(hi):
            return False
        for v in (lo, hi):
            if math.isinf(v) and not (self.allow_inf and v > 0):
                return False
        low_ok = lo > self.low if self.low_open else lo >= self.low
        return low_ok and hi <= self.high


# finite domains (gains, biases, lags)
FINITE = Domain(allow_inf=False)
"""Finite values (e.g. a constant effort)."""
GAIN = Domain(low=0.0, allow_inf=False)
"""Finite values >= 0 (gains, stall torques)."""
FINITE_POSITIVE = Domain(low=0.0, low_open=True, allow_inf=False)
"""Finite values > 0."""
NONNEG_INT = Domain(low=0.0, integer=True, allow_inf=False)
"""Integers >= 0 (lags in substeps)."""
# domains that admit +inf (limits: +inf = no limit); the names and meaning of these predate the
# finite ones above and are kept for code that builds on them
ANY = Domain()
"""Any value or +inf."""
NONNEG = Domain(low=0.0)
"""Values >= 0 or +inf (limits)."""
POSITIVE = Domain(low=0.0, low_open=True)
"""Values > 0 or +inf (limits that may not be 0)."""


class UnknownParameterError(UnknownNameError):
    """An unknown parameter name (a ``KeyError`` and a ``ValueError``)."""


@dataclass
class BindContext:
    """What a part needs to size and seed its state."""

    num_envs: int
    num_joints: int
    joint_names: tuple[str, ...] | None
    device: torch.device
    dtype: torch.dtype
    ops: ArrayOps
    generator: EnvStreams
    """The model's per-env random streams (env axis of every draw: the model's envs)."""
    owner: str = "actuator"


def uncovered_names(mapping: Mapping[str, Any], names: Sequence[str], what: str) -> list[str]:
    """The ``names`` no key of a ``{regex: value}`` map full-matches (in ``names`` order); a key that
    matches no name is a ``ValueError`` naming it."""
    covered: set[int] = set()
    for key in mapping:
        cols = match_names([key], names, what)
        if not cols:
            raise ValueError(f"{what}: key {key!r} matches no joint of the group; joints are {list(names)}")
        covered.update(cols)
    return [n for i, n in enumerate(names) if i not in covered]


def match_names(patterns: Sequence[str], names: Sequence[str], what: str) -> list[int]:
    """Indices of ``names`` full-matched by any of ``patterns`` (in ``names`` order)."""
    if isinstance(patterns, str):
        patterns = [patterns]
    if isinstance(patterns, (dict, set)) or not hasattr(patterns, "__iter__"):
        raise TypeError(f"{what}: expected a list of regex strings, got {type(patterns).__name__} {patterns!r}")
    compiled = []
    for p in patterns:
        if not isinstance(p, str):
            raise TypeError(f"{what}: regular expressions must be strings, got {type(p).__name__} {p!r}")
        try:
            compiled.append(re.compile(p))
        except re.error as exc:
            raise ValueError(f"{what}: invalid regular expression {p!r}: {exc}") from None
    return [i for i, n in enumerate(names) if any(c.fullmatch(n) for c in compiled)]


def select_names(patterns: Sequence[str], names: Sequence[str], owner: str, field: str, what: str) -> list[str]:
    """The names of ``names`` full-matched by ``patterns``; ``ValueError`` naming ``owner.field``
    and the available ``what`` (e.g. "joints") when none match."""
    singular = what.rstrip("s")
    names = list(check_names(names, owner, f"{singular}_names", what=f"{singular} names", allow_empty=True))
    ids = match_names(patterns, names, f"{owner}: {field}")
    if not ids:
        raise ValueError(f"{owner}: {field} {list(patterns)} matches none of the {what} {names}")
    return [names[i] for i in ids]


def _number(x: Any, where: str, expected: str) -> float:
    """A plain number as a float (bools, complex numbers and other types are a ``TypeError``)."""
    if not is_real(x):
        raise TypeError(f"{where}: expected {expected}; got {type(x).__name__} {x!r}")
    try:
        return float(x)
    except OverflowError:
        raise ValueError(f"{where}: an integer of {len(str(x))} digits is beyond the float range") from None


_EXPECTED = "a number, a sequence of {j} values, a ({n}, {j}) tensor, a {{regex: value}} dict or a Distribution"


class Param:
    """One numeric parameter of a part, resolved to ``(num_envs, num_joints)`` values in force.

    ``values`` holds the values in force (float ``dtype`` or int64 for integer parameters) on the
    model's device; ``array`` is the same memory in the model's array library. ``nominal`` keeps the
    un-randomized values (float64, CPU), from which every draw starts.

    Construction validates everything (types, shapes, the domain, every value a distribution can
    give, representability in the model's dtype) before the values exist: a ``TypeError`` for a
    wrong type, a ``ValueError`` naming the parameter, the joint and the allowed values otherwise.
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
        self._expected = _EXPECTED.format(n=n, j=j)
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
        elif isinstance(raw, (bool, np.bool_, complex, str, bytes)) or is_real(raw):
            self.nominal.fill_(_number(raw, self._where, self._expected))
        else:
            self._resolve_array(raw)

        if randomization is not None:
            if not isinstance(randomization, Distribution):
                raise TypeError(
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
                raise TypeError(f"{self._where}: dict keys must be regex strings, got {key!r}")
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
            else:
                self.nominal[:, idx] = _number(value, f"{self._where}: value for key {key!r}", "a number or a Distribution")
        missing = [names[i] for i in range(len(names)) if i not in claimed]
        if missing:  # Isaac Lab leaves them at 0: a limp joint, a limit of 0
            required = ", and the parameter has no default (it is required)" if math.isnan(default) else ""
            raise ValueError(
                f"{self._where}: joints {missing} are matched by no key{required}; give every joint a value "
                f"(keys {list(raw)}, joints {list(names)})"
            )

    def _resolve_array(self, raw: Any) -> None:
        n, j = self._ctx.num_envs, self._ctx.num_joints
        if not isinstance(raw, (torch.Tensor, np.ndarray, list, tuple)):
            raise TypeError(f"{self._where}: expected {self._expected}; got {type(raw).__name__}")
        try:
            arr = torch.as_tensor(real_array(raw, f"parameter '{self.name}'", self._ctx.owner))
        except TypeError as exc:
            raise TypeError(f"{self._where}: expected {self._expected}; {str(exc).split(': ', 2)[-1]}") from None
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

    def assign(self, value: Any, env_ids: torch.Tensor | None, cols: torch.Tensor,
               bounds: tuple[float, float] | None = None) -> None:
        """Set the nominal and in-force values of ``env_ids`` (None = all) x ``cols`` to ``value`` (a
        number or an array broadcastable to that block), validated first with this parameter's
        domain and distributions (and ``bounds``, a part's runtime range): nothing changes on error."""
        rows = torch.arange(self.nominal.shape[0]) if env_ids is None else env_ids.cpu()
        cols = cols.cpu()
        if isinstance(value, (dict, Distribution)) or not (is_real(value) or isinstance(value, (torch.Tensor, np.ndarray, list, tuple))):
            raise TypeError(f"{self._where}: set_parameter takes a number or an array, got {type(value).__name__} {value!r}")
        v = value if is_real(value) else torch.as_tensor(real_array(value, f"parameter '{self.name}'", self._ctx.owner))
        try:
            block = torch.broadcast_to(torch.as_tensor(v, dtype=torch.float64), (len(rows), len(cols))).clone()
        except RuntimeError:
            raise ValueError(
                f"{self._where}: value of shape {tuple(torch.as_tensor(v).shape)} does not broadcast to "
                f"({len(rows)}, {len(cols)}) (envs, joints)"
            ) from None
        if bounds is not None and not bool(((block >= bounds[0]) & (block <= bounds[1])).all()):
            env, col = (~((block >= bounds[0]) & (block <= bounds[1]))).nonzero()[0].tolist()
            raise ValueError(
                f"{self._where}: {self._joint(int(cols[col]))} (env {int(rows[env])}) value {block[env, col].item()} is "
                f"outside the range this model was built for; allowed: [{bounds[0]:g}, {bounds[1]:g}]"
            )
        old = self.nominal
        self.nominal = old.clone()
        self.nominal[rows[:, None], cols[None, :]] = block
        try:
            self._validate()
        except (ValueError, TypeError):
            self.nominal = old
            raise
        if self.domain.integer:
            block = torch.round(block)
        dev = self.values.device
        self.values[rows.to(dev)[:, None], cols.to(dev)[None, :]] = block.to(device=dev, dtype=self.values.dtype)

    def _validate(self) -> None:
        d, dtype = self.domain, self._ctx.dtype
        nom = self.nominal
        allowed = d.describe(dtype)
        if torch.isnan(nom).any():
            env, col = (torch.isnan(nom)).nonzero()[0].tolist()
            raise ValueError(f"{self._where}: {self._joint(col)} (env {env}) is NaN; allowed: {allowed}")
        bad = ~self._in_domain(nom)
        if bad.any():
            env, col = bad.nonzero()[0].tolist()
            raise ValueError(
                f"{self._where}: {self._joint(col)} (env {env}) has value {nom[env, col].item()}; allowed: {allowed}"
            )
        bad = ~self._representable(nom)
        if bad.any():
            env, col = bad.nonzero()[0].tolist()
            raise ValueError(
                f"{self._where}: {self._joint(col)} (env {env}) has value {nom[env, col].item()}, which "
                f"{str(dtype).replace('torch.', '')} cannot represent; allowed: {allowed}"
            )
        for cols, dist in self.randomizers:
            if d.integer and not dist.integer:  # rounding its draws would change the distribution silently
                raise ValueError(
                    f"{self._where}: {type(dist).__name__} draws non-integer values; allowed: an integer "
                    f"distribution (IntUniform, IntGaussian) of {allowed}"
                )
            block = nom[:, cols]
            lo, hi = dist.value_range(block.min().item(), block.max().item())
            if dist.operation == "scale" and torch.isinf(block).any() and dist.bounds()[0] <= 0.0:
                raise ValueError(
                    f"{self._where}: {type(dist).__name__} with operation='scale' scales an infinite nominal "
                    f"value by factors down to {dist.bounds()[0]} (inf * 0 is NaN); give a finite nominal "
                    f"value or factors > 0; allowed: {allowed}"
                )
            if not d.contains(lo, hi):
                raise ValueError(
                    f"{self._where}: {type(dist).__name__} with operation={dist.operation!r} can give values "
                    f"in [{lo}, {hi}]; allowed: {allowed}"
                )
            ends = torch.tensor([[lo, hi]], dtype=torch.float64)
            if not bool(self._representable(ends).all()):
                raise ValueError(
                    f"{self._where}: {type(dist).__name__} with operation={dist.operation!r} can give values "
                    f"in [{lo}, {hi}], which {str(dtype).replace('torch.', '')} cannot represent; allowed: {allowed}"
                )

    def _in_domain(self, x: torch.Tensor) -> torch.Tensor:
        d = self.domain
        ok = (x > d.low) if d.low_open else (x >= d.low)
        ok &= x <= d.high
        ok &= torch.isfinite(x) | (d.allow_inf & (x == math.inf))
        if d.integer:
            ok &= torch.where(torch.isfinite(x), x == torch.round(x), torch.zeros_like(ok))
        return ok

    def _representable(self, x: torch.Tensor) -> torch.Tensor:
        """Whether in-domain float64 values keep their meaning in the model's dtype: finite values
        stay finite (limits may become +inf: beyond the range is no limit), positive values of a
        ``low_open`` domain stay positive; integers stay exact (|x| <= 2**53)."""
        d = self.domain
        if d.integer:
            return x.abs() <= 2.0**53
        cast = x.to(self._ctx.dtype).to(torch.float64)
        ok = torch.isfinite(cast) | ~torch.isfinite(x) | (d.allow_inf & (cast == math.inf))
        if d.low_open:
            ok &= (cast > d.low) | ~(x > d.low)
        return ok

    # -- state ------------------------------------------------------------------------------
    @property
    def randomized(self) -> bool:
        return bool(self.randomizers)

    def bounds(self) -> tuple[float, float]:
        """Smallest and largest value this parameter can take in any env (nominal values and every
        value its distributions can give), float64."""
        lo, hi = self.nominal.min().item(), self.nominal.max().item()
        for cols, dist in self.randomizers:
            block = self.nominal[:, cols]
            a, b = dist.value_range(block.min().item(), block.max().item())
            lo, hi = min(lo, a), max(hi, b)
        return lo, hi

    def resample(self, env_ids: torch.Tensor | None, generator: EnvStreams) -> None:
        """Set the values in force of ``env_ids`` (None = all) from nominal, drawing any distributions
        from each env's own stream of ``generator`` (numpy on the host, one write into the values)."""
        ids = None if env_ids is None else env_ids.cpu().numpy()
        nominal = self.nominal.numpy()
        block = nominal.copy() if ids is None else nominal[ids]
        if self.randomizers:
            rng = generator.for_envs(ids)
            for cols, dist in self.randomizers:
                cols = cols.numpy() if isinstance(cols, torch.Tensor) else cols
                block[:, cols] = dist.sample_array(block[:, cols], rng)
        if self.domain.integer:
            np.round(block, out=block)
        if self.values.device.type == "cpu":
            values = self.values.numpy()
            if ids is None:
                values[...] = block
            else:
                values[ids] = block
            return
        block_t = torch.from_numpy(block).to(device=self.values.device, dtype=self.values.dtype)
        if ids is None:
            self.values.copy_(block_t)
        else:
            self.values[env_ids.to(self.values.device)] = block_t

    def __repr__(self) -> str:
        return f"Param({self.name!r}, shape={tuple(self.values.shape)}, randomized={self.randomized})"


def check_value(raw: Any, name: str, owner: str, *, default: float, domain: Domain) -> None:
    """Validate a raw parameter value without a batch or joint names (what configs check at
    construction and load time), in float64: the rules of :class:`Param` (types, NaN, the domain,
    every value a distribution can give). Shapes are checked when the value is bound."""
    if raw is None:
        return
    if isinstance(raw, dict):
        for key, v in raw.items():
            if not isinstance(key, str):
                raise TypeError(f"{owner}: parameter '{name}': dict keys must be regex strings, got {key!r}")
            check_value(v, name, owner, default=default, domain=domain)
        return
    shape = (1, 1)
    if isinstance(raw, (list, tuple, np.ndarray, torch.Tensor)):
        arr = real_array(raw, f"parameter '{name}'", owner)
        shape = arr.shape if arr.ndim == 2 else (1, max(1, arr.size))
        if arr.ndim == 1 or arr.ndim == 2:
            raw = arr.reshape(shape) if arr.ndim == 2 else arr.reshape(-1) if arr.size else arr
    ctx = BindContext(shape[0], shape[1], None, torch.device("cpu"), torch.float64, NUMPY_OPS, EnvStreams(shape[0], 0), owner)
    Param(name, raw, ctx, default=default, domain=domain)
