"""Per-env random streams (actuator_gym.randomization.streams): the generator itself, the per-env rule, and the
distributions drawn from it."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from actuator_gym.randomization import Gaussian, IntGaussian, IntUniform, LogUniform, Uniform
from actuator_gym.randomization.streams import EnvStreams, derive_seeds, env_seeds

# SplitMix64 (Vigna's reference) seeded 1234567: its first three outputs
SPLITMIX_1234567 = [6457827717110365317, 3203168211198807973, 9817491932198370423]


def test_words_are_splitmix64_of_the_env_key():
    s = EnvStreams(2, 0)
    s.keys[:] = [1234567, 1234567]
    got = s.for_envs([1]).random((1, 3))  # 53 top bits of each word
    np.testing.assert_array_equal((got * 2.0**53).astype(np.uint64)[0], [v >> 11 for v in SPLITMIX_1234567])
    assert s.counters.tolist() == [0, 3]  # only the env drawn for advanced


def test_env_i_draws_depend_only_on_its_own_seed_and_history():
    full = EnvStreams(5, 100)
    rows = [EnvStreams(1, 100 + i) for i in range(5)]
    a = full.for_envs().random((5, 4))
    for i in range(5):
        np.testing.assert_array_equal(a[i], rows[i].for_envs().random((1, 4))[0])
    # other envs drawing (or not) in between changes nothing of env 3's next draws
    full.for_envs([0, 1]).standard_normal((2, 7))
    full.for_envs([4]).integers(0, 9, (1, 2))
    np.testing.assert_array_equal(full.for_envs([3]).random((1, 2)), rows[3].for_envs().random((1, 2)))
    # draws for a subset, in any order, are each env's own
    b = full.for_envs([2, 0]).uniform(-1.0, 1.0, (2, 3))
    np.testing.assert_array_equal(b[0], rows[2].for_envs().uniform(-1.0, 1.0, (1, 3))[0])
    # re-seeding restarts every stream
    full.seed(100)
    np.testing.assert_array_equal(full.for_envs().random((5, 4)), a)


def test_seeds_and_their_errors():
    np.testing.assert_array_equal(env_seeds(7, 3), [7, 8, 9])
    np.testing.assert_array_equal(env_seeds([5, 2**64 - 1, 0], 3), np.array([5, 2**64 - 1, 0], dtype=np.uint64))
    fresh = env_seeds([1, None, None], 3)
    assert fresh[0] == 1 and fresh[1] != fresh[2]
    assert not np.array_equal(env_seeds(None, 4), env_seeds(None, 4))
    for bad, error, match in [
        ([1, 2], ValueError, "one seed per env is needed: got 2 for num_envs=3"),
        ([1, 2.0, 3], TypeError, r"seed\[1\] must be an integer"),
        ([1, 2, 2**64], ValueError, r"seed\[2\]"),
        (np.array([1, -1, 2]), ValueError, r"seed\[1\]"),
        ("123", TypeError, "seed must be None or an integer"),
        (True, TypeError, "seed must be"),
        (2**64 - 2, ValueError, r"passes 2\*\*64 - 1 for num_envs=3"),
    ]:
        with pytest.raises(error, match=match):
            env_seeds(bad, 3, "owner")
    with pytest.raises(TypeError, match="got None"):
        env_seeds(None, 3, "owner", allow_none=False)
    # a sub-stream's seed of env i depends on env i's seed (and the tags) only
    seeds = env_seeds(40, 6)
    d = derive_seeds(seeds, 3, 1)
    assert all(d[i] == derive_seeds(seeds[i:i + 1], 3, 1)[0] for i in range(6))
    assert len(set(d.tolist()) | set(derive_seeds(seeds, 3, 2).tolist()) | set(seeds.tolist())) == 18


def test_env_axis_comes_first():
    r = EnvStreams(3, 0).for_envs([0, 2])
    assert r.random().shape == (2,) and r.normal(size=(2, 4, 5)).shape == (2, 4, 5)
    for size in ((3, 2), (4,), 3, ()):
        with pytest.raises(ValueError, match="size must start with the number of envs drawn for \\(2\\)"):
            r.random(size)
    with pytest.raises(ValueError, match="low < high"):
        r.integers(3, 3, (2,))


def test_variates_have_their_distributions():
    n = 4096
    r = EnvStreams(n, 0).for_envs()
    u = r.random((n, 16))
    assert u.min() >= 0.0 and u.max() < 1.0
    se = 1.0 / math.sqrt(12 * u.size)  # standard error of the mean of U(0, 1)
    assert abs(u.mean() - 0.5) < 5 * se and abs(u.var() - 1 / 12) < 5e-3
    z = r.standard_normal((n, 16))
    assert abs(z.mean()) < 5 / math.sqrt(z.size) and abs(z.std() - 1.0) < 0.01
    assert abs((np.abs(z) < 1.0).mean() - 0.682689) < 0.01  # the normal's shape, not only its moments
    k = r.integers(-2, 2, (n, 8), endpoint=True)
    counts = np.bincount((k + 2).ravel(), minlength=5)
    expected = k.size / 5
    assert counts.size == 5 and ((counts - expected) ** 2 / expected).sum() < 20.5  # chi2(4) p ~ 4e-4
    # rows are not copies of each other
    assert len(np.unique(u[:, 0])) == n


@pytest.mark.parametrize(
    "dist, lo, hi, mean",
    [
        (Uniform(2.0, 4.0, per_joint=True), 2.0, 4.0, 3.0),
        (LogUniform(1.0, math.e**2, per_joint=True), 1.0, math.e**2, (math.e**2 - 1) / 2),
        (Gaussian(1.0, 0.5, per_joint=True), -0.5, 2.5, 1.0),
        (IntUniform(0, 3, per_joint=True), 0.0, 3.0, 1.5),
        (IntGaussian(5.0, 1.0, per_joint=True), 2.0, 8.0, 5.0),
    ],
)
def test_distributions_keep_their_semantics(dist, lo, hi, mean):
    n, j = 2048, 8
    s = dist.sample(torch.zeros((n, j), dtype=torch.float64), EnvStreams(n, 1).for_envs())
    assert s.shape == (n, j) and s.dtype == torch.float64
    assert s.min() >= lo and s.max() <= hi
    assert abs(s.mean().item() - mean) < 0.03 * (hi - lo)
    if dist.integer:
        assert torch.equal(s, torch.round(s))
    if isinstance(dist, IntUniform):
        assert set(torch.unique(s).tolist()) == {0.0, 1.0, 2.0, 3.0}
    if isinstance(dist, Gaussian):
        assert abs(s.std().item() - 0.5 * 0.9975) < 0.01  # std of a normal clamped at +-3 sigma
    if isinstance(dist, LogUniform):
        logs = torch.log(s)
        assert abs(logs.mean().item() - 1.0) < 0.02  # uniform in log space on [0, 2]
    # scale / add / shared-per-env semantics
    nominal = torch.full((4, 3), 2.0, dtype=torch.float64)
    shared = Uniform(1.0, 2.0, operation="scale").sample(nominal, EnvStreams(4, 0).for_envs())
    assert torch.equal(shared, shared[:, :1].expand(4, 3)) and (shared >= 2.0).all() and (shared <= 4.0).all()
    with pytest.raises(TypeError, match="EnvRandom over the block's 3 envs"):
        Uniform(0.0, 1.0).sample(torch.zeros((3, 1), dtype=torch.float64), EnvStreams(4, 0).for_envs())
