"""Per-env random streams: every random draw of env ``i`` depends only on env ``i``'s seed and on
what env ``i`` drew before -- never on the number of envs, on the other envs' seeds or on when the
other envs reset.

That is Gymnasium's vector convention made exact: ``make_vec(id, num_envs=N).reset(seed=s)`` seeds
env ``i`` with ``s + i``, and env ``i`` then rolls out exactly as ``make(id).reset(seed=s + i)``
(the same actuator parameters, delays, model fields and initial states, episode after episode).
The same rule holds for every batched model: ``cfg.build(..., num_envs=N, seed=s)`` row ``i`` is a
``num_envs=1`` model seeded ``s + i``.

Seeds (:func:`env_seeds`): ``None`` (fresh OS entropy for every env), an integer ``s`` in
``[0, 2**64)`` (env ``i`` gets ``s + i``; ``s + num_envs - 1`` must stay below ``2**64``), or a
sequence / array of ``num_envs`` entries (env ``i`` gets entry ``i``; each an integer in
``[0, 2**64)``, or None for fresh entropy), Gymnasium's ``reset(seed=[s0, s1, ...])`` form.

Mechanism: a counter-based generator (SplitMix64). Env ``i`` of a stream has a 64-bit key derived
from its seed and the stream's tags (:func:`derive_seeds`: a joint group, a rotor group, the task's
reset draws each have their own), and a counter of the 64-bit words it has drawn. Its ``c``-th word
is ``mix64(key + (c + 1) * 0x9E3779B97F4A7C15)``, SplitMix64's output function, so a draw for many envs
is a handful of vectorized numpy integer operations (no Python loop over envs, no per-env generator
object) and each env's counter advances only when that env draws. :meth:`EnvStreams.for_envs` gives
the :class:`EnvRandom` draws of a set of envs, env axis first.

Why this design: one generator for the whole batch (what earlier releases had: a ``torch.Generator``
per model, a numpy generator per task) makes env ``i``'s draws depend on ``num_envs`` and on the
other envs' resets, so no env of a batch matches any single env; one generator object per env would
match, but costs a Python loop over thousands of envs at every reset. A counter-based stream keeps
the draw one vectorized operation and gives each env its own sequence. (So a given seed draws other
values than in those releases.) The per-env rule needs every env to draw in the same order, which
the batched code does by construction; a task's ``sample_reset`` must not branch on ``num_envs``.

Variates: ``random`` is ``(word >> 11) * 2**-53`` (53 bits, ``[0, 1)``); ``integers`` is
``low + word mod (high - low)`` (a bias below ``(high - low) / 2**64``, nil for the ranges of delays
and counts); ``standard_normal`` is Box-Muller on two words (the cosine branch only).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .._checks import SEED_LIMIT, is_int, type_name

__all__ = ["EnvStreams", "EnvRandom", "env_seeds", "derive_seeds"]

_U64 = np.uint64
_GAMMA = _U64(0x9E3779B97F4A7C15)
_M1 = _U64(0xBF58476D1CE4E5B9)
_M2 = _U64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = _U64(30), _U64(27), _U64(31), _U64(11)
_TWO_M53 = 2.0**-53


def _mix64(z: np.ndarray) -> np.ndarray:
    """SplitMix64's output function, in place on a uint64 array (wrapping arithmetic)."""
    z ^= z >> _S30
    z *= _M1
    z ^= z >> _S27
    z *= _M2
    z ^= z >> _S31
    return z


def _entropy(n: int) -> np.ndarray:
    return np.random.SeedSequence().generate_state(n, np.uint64)


def env_seeds(seed: Any, num_envs: int, owner: str = "", name: str = "seed", *, allow_none: bool = True) -> np.ndarray:
    """The ``(num_envs,)`` uint64 per-env seeds of ``seed`` (module doc: None, an int ``s`` -> ``s + i``,
    or one entry per env); ``TypeError`` / ``ValueError`` naming ``owner`` and ``name`` otherwise
    (``allow_none=False``: None is a ``TypeError``, what re-seeding methods want)."""
    who = f"{owner}: {name}" if owner else name
    allowed = (f"{'None or ' if allow_none else ''}an integer in [0, 2**64), or a sequence of num_envs ({num_envs}) "
               "integers in [0, 2**64) or None (one per env)")
    if seed is None:
        if not allow_none:
            raise TypeError(f"{who} must be {allowed}, got None")
        return _entropy(num_envs)
    if isinstance(seed, (bool, np.bool_)):
        raise TypeError(f"{who} must be {allowed}, got {type_name(seed)} {seed!r}")
    if is_int(seed):
        s = int(seed)
        if not 0 <= s < SEED_LIMIT:
            raise ValueError(f"{who} must be {allowed}, got {s}")
        if s + num_envs - 1 >= SEED_LIMIT:
            raise ValueError(
                f"{who}={s} gives env i the seed {s} + i, which passes 2**64 - 1 for num_envs={num_envs}; "
                f"allowed: an integer in [0, 2**64 - {num_envs}]"
            )
        return (np.arange(num_envs, dtype=_U64) + _U64(s)).astype(_U64)
    if isinstance(seed, np.ndarray) and seed.dtype.kind in "ui" and seed.ndim == 1:
        if len(seed) != num_envs:
            raise ValueError(f"{who}: one seed per env is needed: got {len(seed)} for num_envs={num_envs}")
        if seed.dtype.kind == "i" and (seed < 0).any():
            j = int(np.flatnonzero(seed < 0)[0])
            raise ValueError(f"{who}[{j}] must be an integer in [0, 2**64) or None, got {int(seed[j])}")
        return seed.astype(_U64)
    if isinstance(seed, (str, bytes, dict, set)) or not isinstance(seed, (Sequence, np.ndarray)):
        raise TypeError(f"{who} must be {allowed}, got {type_name(seed)} {seed!r}")
    entries = list(seed.tolist() if isinstance(seed, np.ndarray) else seed)
    if len(entries) != num_envs:
        raise ValueError(f"{who}: one seed per env is needed: got {len(entries)} for num_envs={num_envs}")
    out = np.empty(num_envs, dtype=_U64)
    fresh = [j for j, v in enumerate(entries) if v is None]
    for j, v in enumerate(entries):
        if v is None:
            continue
        if isinstance(v, (bool, np.bool_)) or not is_int(v):
            raise TypeError(f"{who}[{j}] must be an integer in [0, 2**64) or None, got {type_name(v)} {v!r}")
        if not 0 <= int(v) < SEED_LIMIT:
            raise ValueError(f"{who}[{j}] must be an integer in [0, 2**64) or None, got {int(v)}")
        out[j] = int(v)
    if fresh:
        out[fresh] = _entropy(len(fresh))
    return out


def derive_seeds(seeds: np.ndarray, *tags: int) -> np.ndarray:
    """Per-env seeds of a sub-stream (a group, a role) tagged ``tags`` (non-negative ints): env ``i``'s
    result depends only on ``seeds[i]`` and the tags, so a batch and a single env agree."""
    out = np.array(seeds, dtype=_U64)
    for t in tags:
        tag = _mix64(np.array([int(t) + 1], dtype=_U64) * _GAMMA)
        out = _mix64((_mix64(out + _GAMMA) ^ tag))
    return out


class EnvStreams:
    """One random stream per env (module doc), the source of every draw of a batched model or task.

    Args:
        num_envs: streams held.
        seed: per-env seeds as :func:`env_seeds` takes them (default None: fresh entropy).
        owner: named by the messages of a bad seed.
    """

    def __init__(self, num_envs: int, seed: Any = None, *, owner: str = "EnvStreams"):
        self.num_envs = int(num_envs)
        self.owner = owner
        self.keys = np.zeros(self.num_envs, dtype=_U64)
        """Per-env keys (derived from the seeds)."""
        self.counters = np.zeros(self.num_envs, dtype=_U64)
        """Per-env counts of the 64-bit words drawn since the last seeding."""
        self.seed(seed)

    def seed(self, seed: Any) -> None:
        """Re-key every env from ``seed`` (:func:`env_seeds`) and restart its counter; validated first."""
        seeds = env_seeds(seed, self.num_envs, self.owner)
        self.keys[:] = _mix64(seeds + _GAMMA)
        self.counters[:] = 0

    def for_envs(self, env_ids: Any = None) -> "EnvRandom":
        """Draws for ``env_ids`` (None = every env, in order; ids or a boolean mask), env axis first."""
        if env_ids is None:
            return EnvRandom(self, np.arange(self.num_envs))
        ids = np.asarray(env_ids).reshape(-1)
        return EnvRandom(self, np.flatnonzero(ids) if ids.dtype == np.bool_ else ids.astype(np.int64))

    def _words(self, ids: np.ndarray, width: int) -> np.ndarray:
        """``(len(ids), width)`` fresh uint64 words, row ``j`` from env ``ids[j]``'s stream."""
        ctr = self.counters[ids]
        z = (ctr[:, None] + np.arange(1, width + 1, dtype=_U64)[None, :]) * _GAMMA
        z += self.keys[ids][:, None]
        self.counters[ids] = ctr + _U64(width)
        return _mix64(z)

    def __repr__(self) -> str:
        return f"EnvStreams(num_envs={self.num_envs})"


class EnvRandom:
    """Random draws for the envs ``env_ids`` of an :class:`EnvStreams`, in ``np.random.Generator``'s
    words, **env axis first**: ``size`` is the whole result's shape and its first entry must be
    ``len(env_ids)`` (None: one value per env); row ``j`` comes from env ``env_ids[j]``'s own
    stream. Draw from it in the same order for every env (a task's ``sample_reset`` does).
    """

    def __init__(self, streams: EnvStreams, env_ids: np.ndarray):
        self._streams = streams
        self.env_ids = env_ids
        """The envs drawn for, one row each."""

    def __len__(self) -> int:
        return len(self.env_ids)

    def _shape(self, size: Any) -> tuple[int, ...]:
        n = len(self.env_ids)
        if size is None:
            return (n,)
        shape = (int(size),) if is_int(size) else tuple(int(s) for s in size)
        if not shape or shape[0] != n or any(s < 0 for s in shape):
            raise ValueError(
                f"EnvRandom: size must start with the number of envs drawn for ({n}): the env axis comes first "
                f"(row j is env env_ids[j]'s draw); got size={size!r}"
            )
        return shape

    def _draw_words(self, shape: tuple[int, ...], per_value: int = 1) -> np.ndarray:
        width = int(np.prod(shape[1:], dtype=np.int64)) * per_value
        return self._streams._words(self.env_ids, width)

    def random(self, size: Any = None) -> np.ndarray:
        """Uniform floats in ``[0, 1)`` (float64, 53 random bits)."""
        shape = self._shape(size)
        w = self._draw_words(shape)
        return ((w >> _S11).astype(np.float64) * _TWO_M53).reshape(shape)

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Any = None) -> np.ndarray:
        """``low + (high - low) * random(size)`` (``low`` / ``high`` broadcast against ``size``)."""
        low, high = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
        return low + (high - low) * self.random(size)

    def standard_normal(self, size: Any = None) -> np.ndarray:
        """Standard normal floats (Box-Muller on two words per value)."""
        shape = self._shape(size)
        w = self._draw_words(shape, 2).reshape(len(self.env_ids), -1, 2)
        u = (w >> _S11).astype(np.float64) * _TWO_M53
        r = np.sqrt(-2.0 * np.log1p(-u[..., 0]))  # 1 - u in (0, 1]
        return (r * np.cos(2.0 * np.pi * u[..., 1])).reshape(shape)

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> np.ndarray:
        """``loc + scale * standard_normal(size)``."""
        return np.asarray(loc, dtype=np.float64) + np.asarray(scale, dtype=np.float64) * self.standard_normal(size)

    def integers(self, low: int, high: int | None = None, size: Any = None, endpoint: bool = False) -> np.ndarray:
        """Integers (int64) uniform in ``[low, high)`` (``[low, high]`` with ``endpoint=True``;
        ``integers(h)`` is ``[0, h)``); ``low`` and ``high`` are scalars."""
        if high is None:
            low, high = 0, low
        if not (is_int(low) and is_int(high)):
            raise TypeError(f"EnvRandom.integers: low and high must be integers, got {low!r}, {high!r}")
        span = int(high) - int(low) + (1 if endpoint else 0)
        if not 0 < span <= 2**63:
            raise ValueError(f"EnvRandom.integers: need low < high (low <= high with endpoint=True), got [{low}, {high}]")
        shape = self._shape(size)
        w = self._draw_words(shape)
        return ((w % _U64(span)).astype(np.int64) + np.int64(low)).reshape(shape)
