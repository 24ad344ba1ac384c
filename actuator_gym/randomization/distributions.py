"""Distributions for domain randomization of actuator parameters.

Any numeric parameter of any actuator model may be given as a distribution instead of a value.
Its value is then drawn again for an env every time that env is reset (and once at construction),
from that env's own random stream (:mod:`actuator_gym.randomization.streams`: env ``i`` of a model seeded ``s``
draws exactly what a one-env model seeded ``s + i`` draws). Each draw starts from the **nominal**
value, so repeated resets never accumulate.

``operation`` says how a sample becomes the value in force:

* ``"abs"``   -- the sample is the value;
* ``"scale"`` -- ``nominal * sample``;
* ``"add"``   -- ``nominal + sample``.

The nominal value is the parameter's plain value where one is given next to the distribution (for
example a config field plus a ``randomization={field: dist}`` entry), else ``nominal=`` on the
distribution, else the parameter's default.

``per_joint=False`` draws one sample per env shared by the group's joints; ``per_joint=True`` draws
one per env and joint.

Gaussian samples are truncated at ``mean +- 3 std`` (by clamping), so every distribution has finite
bounds and a parameter's admissible range can be checked before anything is sampled.

Value rules: every bound, ``mean``, ``std`` and ``nominal`` is a finite real number (a bool, a
string or a complex number is a ``TypeError``); the width of the range (``high - low``,
``6 std``) must be finite too; integer distributions stay within ``[-2**53, 2**53]``;
``operation`` is one of the three above and ``per_joint`` is True or False. Where a distribution
is used, every value it can give must be admissible for the parameter (checked before sampling).
"""

from __future__ import annotations

import math
from typing import Any
from dataclasses import dataclass

import numpy as np
import torch

from .._checks import check_bool, check_real
from .streams import EnvRandom

__all__ = [
    "Distribution",
    "Uniform",
    "LogUniform",
    "Gaussian",
    "IntUniform",
    "IntGaussian",
    "GAUSSIAN_TRUNCATION",
]

_OPERATIONS = ("abs", "scale", "add")
GAUSSIAN_TRUNCATION = 3.0
"""Gaussian draws are clamped to ``mean +- GAUSSIAN_TRUNCATION * std``."""


INT_LIMIT = 2**53
"""Integer distributions draw within ``[-2**53, 2**53]`` (integers exact in float64)."""


def _span(what: str, lo: float, hi: float) -> None:
    """The distance between two finite bounds must be finite too (sampling computes it)."""
    if not math.isfinite(hi - lo):
        raise ValueError(f"{what}: the range [{lo}, {hi}] is wider than the float range; narrow it")


def _int_bound(what: str, name: str, v: float) -> None:
    if abs(v) > INT_LIMIT:
        raise ValueError(f"{what}: {name} must lie in [-2**53, 2**53], got {v}")


@dataclass(frozen=True)
class Distribution:
    """Base class. Subclasses define ``_draw`` and ``bounds``."""

    operation: str = "abs"
    per_joint: bool = False
    nominal: float | None = None
    integer: bool = False

    def _init(self, operation: Any, per_joint: Any, nominal: Any, integer: bool = False, whole: bool = False, **values: Any) -> None:
        """Set the frozen fields: ``values`` (name -> value) each a finite number (with ``whole``: an
        integer, kept as ``int``; ``high >= low``, ``std >= 0``), then the common ones, checked."""
        what = type(self).__name__
        for name, v in values.items():
            x = check_real(v, name, what)
            if whole and not x.is_integer():
                raise ValueError(f"{what}: {name} must be an integer, got {v!r}")
            object.__setattr__(self, name, int(v) if whole else x)
        for name, v in (("operation", operation), ("per_joint", per_joint), ("nominal", nominal), ("integer", integer)):
            object.__setattr__(self, name, v)
        if not isinstance(self.operation, str) or self.operation not in _OPERATIONS:
            raise ValueError(f"{what}: operation must be one of {_OPERATIONS}, got {self.operation!r}")
        object.__setattr__(self, "per_joint", check_bool(self.per_joint, "per_joint", what))
        if self.nominal is not None:
            object.__setattr__(self, "nominal", check_real(self.nominal, "nominal", what))
        if "high" in values and self.high < self.low:
            raise ValueError(f"{what}: high ({self.high}) must be >= low ({self.low})")
        if "std" in values:
            if self.std < 0:
                raise ValueError(f"{what}: std must be >= 0, got {self.std}")
            _span(what, self.mean - GAUSSIAN_TRUNCATION * self.std, self.mean + GAUSSIAN_TRUNCATION * self.std)

    # -- sampling ---------------------------------------------------------------------------
    def _draw(self, shape: tuple[int, ...], rng: EnvRandom) -> np.ndarray:
        """``shape`` samples (float64), env axis first: row ``j`` from ``rng``'s env ``j``."""
        raise TypeError(f"{type(self).__name__} is the abstract base; use Uniform, LogUniform, Gaussian, IntUniform or IntGaussian")

    def bounds(self) -> tuple[float, float]:
        """Smallest and largest value a sample can take."""
        raise TypeError(f"{type(self).__name__} is the abstract base; use Uniform, LogUniform, Gaussian, IntUniform or IntGaussian")

    def sample(self, nominal: torch.Tensor, rng: EnvRandom) -> torch.Tensor:
        """Values in force for a block of nominal values ``(n, num_joints)`` (float64, CPU), row ``j``
        drawn from env ``rng.env_ids[j]``'s stream (``rng``: :meth:`~actuator_gym.randomization.streams.EnvStreams.for_envs`)."""
        return torch.from_numpy(self.sample_array(nominal.numpy(), rng))

    def sample_array(self, nominal: np.ndarray, rng: EnvRandom) -> np.ndarray:
        """:meth:`sample` on a float64 numpy block: a fresh ``(n, num_joints)`` float64 array."""
        n, j = nominal.shape
        if not isinstance(rng, EnvRandom) or len(rng) != n:
            raise TypeError(
                f"{type(self).__name__}.sample: rng must be an actuator_gym.randomization.streams.EnvRandom over the block's {n} envs, "
                f"got {type(rng).__name__}"
            )
        s = self._draw((n, j) if self.per_joint else (n, 1), rng)
        if self.integer:
            np.round(s, out=s)
        if self.operation == "abs":
            return np.array(np.broadcast_to(s, (n, j)))
        return nominal * s if self.operation == "scale" else nominal + s

    def value_range(self, nominal_low: float, nominal_high: float) -> tuple[float, float]:
        """Range of the values in force for nominal values in ``[nominal_low, nominal_high]``."""
        lo, hi = self.bounds()
        if self.operation == "abs":
            return lo, hi
        if self.operation == "add":
            return nominal_low + lo, nominal_high + hi
        corners = [a * b for a in (nominal_low, nominal_high) for b in (lo, hi)]
        corners = [0.0 if math.isnan(c) else c for c in corners]
        return min(corners), max(corners)


@dataclass(frozen=True)
class Uniform(Distribution):
    """Uniform on ``[low, high]``."""

    low: float = 0.0
    high: float = 1.0

    def __init__(self, low, high, operation="abs", per_joint=False, nominal=None):
        self._init(operation, per_joint, nominal, low=low, high=high)
        _span("Uniform", self.low, self.high)

    def _draw(self, shape, rng):
        return self.low + (self.high - self.low) * rng.random(shape)

    def bounds(self):
        return self.low, self.high


@dataclass(frozen=True)
class LogUniform(Uniform):
    """``exp(Uniform(log low, log high))``, ``0 < low <= high``."""

    low: float = 1.0
    high: float = 1.0

    def __init__(self, low, high, operation="abs", per_joint=False, nominal=None):
        super().__init__(low, high, operation, per_joint, nominal)
        if self.low <= 0:
            raise ValueError(f"LogUniform: low must be > 0, got {self.low}")

    def _draw(self, shape, rng):
        u = rng.random(shape)
        return np.exp(math.log(self.low) + (math.log(self.high) - math.log(self.low)) * u)


@dataclass(frozen=True)
class Gaussian(Distribution):
    """Normal ``(mean, std)``, truncated at ``mean +- 3 std``; ``std >= 0``."""

    mean: float = 0.0
    std: float = 0.0

    def __init__(self, mean, std, operation="abs", per_joint=False, nominal=None):
        self._init(operation, per_joint, nominal, mean=mean, std=std)

    def _draw(self, shape, rng):
        z = np.clip(rng.standard_normal(shape), -GAUSSIAN_TRUNCATION, GAUSSIAN_TRUNCATION)
        return self.mean + self.std * z

    def bounds(self):
        return (self.mean - GAUSSIAN_TRUNCATION * self.std, self.mean + GAUSSIAN_TRUNCATION * self.std)


@dataclass(frozen=True)
class IntUniform(Distribution):
    """Integer uniform on ``{low, ..., high}`` (both inclusive), e.g. delays in substeps."""

    low: int = 0
    high: int = 0

    def __init__(self, low, high, operation="abs", per_joint=False, nominal=None):
        self._init(operation, per_joint, nominal, integer=True, whole=True, low=low, high=high)
        _int_bound("IntUniform", "low", self.low)
        _int_bound("IntUniform", "high", self.high)

    def _draw(self, shape, rng):
        return rng.integers(self.low, self.high, shape, endpoint=True).astype(np.float64)

    def bounds(self):
        return float(self.low), float(self.high)


@dataclass(frozen=True)
class IntGaussian(Distribution):
    """Gaussian rounded to the nearest integer (truncated at ``mean +- 3 std`` before rounding)."""

    mean: float = 0.0
    std: float = 0.0

    def __init__(self, mean, std, operation="abs", per_joint=False, nominal=None):
        self._init(operation, per_joint, nominal, integer=True, mean=mean, std=std)
        for name, v in zip(("mean - 3 std", "mean + 3 std"), self.bounds()):
            _int_bound("IntGaussian", name, v)

    def _draw(self, shape, rng):
        return self.mean + self.std * np.clip(rng.standard_normal(shape), -GAUSSIAN_TRUNCATION, GAUSSIAN_TRUNCATION)

    def bounds(self):
        t = GAUSSIAN_TRUNCATION * self.std
        return float(round(self.mean - t)), float(round(self.mean + t))
