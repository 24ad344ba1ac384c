"""ObservationSensor: latency, bias and noise on observation columns, drawn per env at every reset."""

from __future__ import annotations

import numpy as np
import pytest

import actuator_gym  # noqa: F401  (before mujoco)
from actuator_gym.tools.training import make_vec_env
from actuator_gym.wrappers.sensor import ObservationSensor

TASK = "actuator_gym/Pendulum-v0"
COLS = [0, 1, 2, 4]  # sin q, cos q, qd, wrap(q - command): the joint state the pendulum policy reads


def actions(n, steps, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, (steps, n, 1)).astype(np.float32)


def rollout(env, acts, seed):
    obs, _ = env.reset(seed=seed)
    out, dones = [obs], []
    for a in acts:
        obs, _, term, trunc, _ = env.step(a)
        out.append(obs)
        dones.append(term | trunc)
    env.close()
    return np.stack(out), np.stack(dones)


def test_delay_is_exact_and_restarts_with_every_episode():
    n, d, steps = 2, 2, 14
    kw = dict(episode_length_s=5 / 60)  # 5 control steps per episode: two autoresets in the rollout
    acts = actions(n, steps)
    true, dones = rollout(make_vec_env(TASK, n, **kw), acts, seed=4)
    seen, _ = rollout(ObservationSensor(make_vec_env(TASK, n, **kw), COLS, min_delay=d, max_delay=d), acts, seed=4)
    other = [c for c in range(true.shape[-1]) if c not in COLS]
    np.testing.assert_array_equal(seen[..., other], true[..., other])
    # out[k] follows step k - 1; NEXT_STEP: the step after the one that ended resets, so out[t + 2] is a reset obs
    starts = [0] + [t + 2 for t in range(steps) if dones[t].all()]
    assert len(starts) == 3
    for t in range(steps + 1):
        s = max(s for s in starts if s <= t)  # the episode's first observation
        np.testing.assert_allclose(seen[t][:, COLS], true[max(t - d, s)][:, COLS], rtol=0, atol=1e-6)


def test_draws_are_per_env_streams_and_redrawn_at_reset():
    acts = actions(3, 8)
    kw = dict(columns=COLS, min_delay=0, max_delay=3, noise_std=[0.01, 0.01, 0.1, 0.01], bias_std=0.05)
    batch = ObservationSensor(make_vec_env(TASK, 3), **kw)
    seen3, _ = rollout(batch, acts, seed=20)
    for i in range(3):
        one = ObservationSensor(make_vec_env(TASK, 1), **kw)
        seen1, _ = rollout(one, acts[:, i : i + 1], seed=20 + i)
        np.testing.assert_allclose(seen1[:, 0], seen3[:, i], rtol=0, atol=1e-6)
    true, _ = rollout(make_vec_env(TASK, 3), acts, seed=20)
    assert np.abs(seen3[..., COLS] - true[..., COLS]).max() > 0.01  # the sensor acted
    s = ObservationSensor(make_vec_env(TASK, 64), **kw)
    s.reset(seed=1)
    first = (s.delay.copy(), s.bias.copy())
    s.reset(seed=2)
    assert set(first[0].tolist()) == {0, 1, 2, 3} and not np.array_equal(first[1], s.bias)
    s.close()


@pytest.mark.parametrize("kwargs, match", [
    (dict(columns=[5]), r"columns must be distinct observation indices in \[0, 4\], got \[5\]"),
    (dict(columns=[0, 0]), r"columns must be distinct"),
    (dict(columns=[0], min_delay=3, max_delay=1), r"min_delay \(3\) must be <= max_delay \(1\)"),
    (dict(columns=[0, 1], noise_std=[0.1, 0.1, 0.1]), r"noise_std must be one number or 2"),
    (dict(columns=[0], bias_std=-1.0), r"bias_std"),
])
def test_bad_arguments_are_refused(kwargs, match):
    env = make_vec_env(TASK, 2)
    with pytest.raises(ValueError, match=match):
        ObservationSensor(env, **kwargs)
    env.close()


@pytest.mark.parametrize("columns", [[0.7], ["1"], [True], [0, True], [np.float64(2.0)]])
def test_columns_must_be_integers(columns):
    """np.asarray would make 0.7 -> 0, '1' -> 1, True -> 1: silently another column."""
    env = make_vec_env(TASK, 2)
    with pytest.raises(TypeError, match=r"ObservationSensor: columns must be integer observation indices in \[0, 4\]"):
        ObservationSensor(env, columns)
    env.close()


@pytest.mark.parametrize("key", ["noise_std", "bias_std"])
def test_std_is_bounded_and_the_largest_keeps_observations_finite(key):
    from actuator_gym.wrappers.sensor import SENSOR_MAX_STD

    env = make_vec_env(TASK, 2)
    for bad in (1e300, [0.1, SENSOR_MAX_STD * 1.01], float("inf"), True):
        with pytest.raises((ValueError, TypeError), match=key):
            ObservationSensor(env, [0, 2], **{key: bad})
    s = ObservationSensor(env, [0, 2], **{key: SENSOR_MAX_STD})  # the largest: the observations stay finite
    obs, _ = s.reset(seed=0)
    for _ in range(3):
        obs, *_ = s.step(np.zeros((2, 1), np.float32))
        assert np.isfinite(obs).all() and np.abs(obs[:, [0, 2]]).max() > 1e3
    s.close()
