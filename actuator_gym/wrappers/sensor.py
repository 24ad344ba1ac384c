"""Observation-side realism: sensor latency, bias and noise on what the policy sees.

:class:`ObservationSensor` wraps a vector env (our batched tasks, or any ``VectorEnv`` with
Gymnasium's default ``NEXT_STEP`` autoreset) and corrupts the observation columns ``columns`` (the
joint state the policy reads):

    seen[t] = true[t - d] + bias + noise[t]

* ``d`` [control steps] ~ ``U{min_delay..max_delay}`` per env, drawn at every reset of that env (a
  bus / filter latency; the first ``d`` steps of an episode repeat the reset observation);
* ``bias`` ~ ``N(0, bias_std)`` per env and column, drawn at every reset (a calibration offset);
* ``noise[t]`` ~ ``N(0, noise_std)`` per env, column and step (white measurement noise).

``bias_std`` and ``noise_std`` take one value or one per column (the columns' units), each in
``[0, SENSOR_MAX_STD]``; ``columns`` are integers (not bools, floats or strings). Every draw comes
from per-env streams (:mod:`actuator_gym.randomization.streams`, tagged apart from the task's): env ``i`` of a
wrapper reset with seed ``s`` draws what a one-env wrapper reset with ``s + i`` draws. Other columns
and everything but the observation pass through unchanged.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv, VectorWrapper

from .._checks import SENSOR_MAX_STD, check_int, check_real, is_int, real_array
from ..randomization.streams import EnvStreams, derive_seeds, env_seeds

__all__ = ["ObservationSensor", "SENSOR_STREAM_TAG", "SENSOR_MAX_STD"]

SENSOR_STREAM_TAG = 0x5E5
"""Tag of the sensor's per-env streams (:func:`~actuator_gym.randomization.streams.derive_seeds`)."""


class ObservationSensor(VectorWrapper):
    """Delay, bias and noise on observation ``columns`` of a vector env (module doc)."""

    def __init__(self, env: VectorEnv, columns: Sequence[int], *, min_delay: int = 0, max_delay: int = 0,
                 noise_std: float | Sequence[float] = 0.0, bias_std: float | Sequence[float] = 0.0):
        super().__init__(env)
        name = "ObservationSensor"
        mode = env.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
        if mode != AutoresetMode.NEXT_STEP:
            raise ValueError(f"{name}: the env's autoreset_mode must be NEXT_STEP, got {mode}")
        dim = int(np.prod(env.single_observation_space.shape))
        listed = list(columns) if not isinstance(columns, (str, bytes)) else [columns]
        bad = next((c for c in listed if not is_int(c)), None)
        if bad is not None:  # np.asarray would turn 0.7, '1' and True into indices
            raise TypeError(f"{name}: columns must be integer observation indices in [0, {dim - 1}], got "
                            f"{type(bad).__name__} {bad!r} in {listed}")
        cols = np.asarray(listed, dtype=np.int64) if listed else np.zeros(0, np.int64)
        if cols.size == 0 or cols.min() < 0 or cols.max() >= dim or len(set(cols.tolist())) != cols.size:
            raise ValueError(f"{name}: columns must be distinct observation indices in [0, {dim - 1}], got {list(columns)}")
        self.columns = cols
        self.min_delay = check_int(min_delay, "min_delay [control steps]", name, low=0, high=10_000)
        self.max_delay = check_int(max_delay, "max_delay [control steps]", name, low=0, high=10_000)
        if self.min_delay > self.max_delay:
            raise ValueError(f"{name}: min_delay ({self.min_delay}) must be <= max_delay ({self.max_delay}) [control steps]")
        self.noise_std = self._per_column(noise_std, "noise_std", name)
        self.bias_std = self._per_column(bias_std, "bias_std", name)
        n, k = self.num_envs, cols.size
        self.delay = np.zeros(n, dtype=np.int64)
        """Each env's delay in force [control steps]."""
        self.bias = np.zeros((n, k))
        """Each env's bias in force, ``(num_envs, len(columns))``."""
        self._hist = np.zeros((self.max_delay + 1, n, k))  # ring of true values, newest at _t
        self._t = 0
        self._done = np.zeros(n, dtype=bool)
        self._streams = EnvStreams(n, None, owner=name)

    def _per_column(self, v: Any, key: str, name: str) -> np.ndarray:
        vals = np.atleast_1d(real_array(v, key, name))  # bools and strings refused
        if vals.shape not in ((1,), (self.columns.size,)):
            raise ValueError(f"{name}: {key} must be one number or {self.columns.size} (one per column), got {v!r}")
        for x in vals:
            check_real(float(x), key, name, low=0.0, high=SENSOR_MAX_STD)
        return np.broadcast_to(vals, (self.columns.size,)).copy()

    def _start(self, ids: np.ndarray, obs: np.ndarray) -> None:
        """New episodes for ``ids``: draw their delay and bias, fill their history with ``obs``."""
        rng = self._streams.for_envs(ids)
        self.delay[ids] = rng.integers(self.min_delay, self.max_delay, len(ids), endpoint=True)
        self.bias[ids] = rng.standard_normal((len(ids), self.columns.size)) * self.bias_std
        self._hist[:, ids] = obs[ids][:, self.columns][None]

    def _seen(self, obs: np.ndarray) -> np.ndarray:
        out = np.array(obs, dtype=np.float64)
        n = self.num_envs
        rows = (self._t - self.delay) % (self.max_delay + 1)
        noise = self._streams.for_envs().standard_normal((n, self.columns.size)) * self.noise_std
        out[:, self.columns] = self._hist[rows, np.arange(n)] + self.bias + noise
        return out.astype(obs.dtype)

    def reset(self, *, seed: Any = None, options: dict[str, Any] | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        if seed is not None:
            self._streams.seed(derive_seeds(env_seeds(seed, self.num_envs, "ObservationSensor"), SENSOR_STREAM_TAG))
        self._t = 0
        self._done[:] = False
        self._start(np.arange(self.num_envs), np.asarray(obs))
        return self._seen(np.asarray(obs)), info

    def step(self, actions: Any):
        obs, rew, term, trunc, info = self.env.step(actions)
        obs = np.asarray(obs)
        self._t = (self._t + 1) % (self.max_delay + 1)
        self._hist[self._t] = obs[:, self.columns]
        restarted = np.flatnonzero(self._done)  # NEXT_STEP: envs that ended last step were reset in this one
        if restarted.size:
            self._start(restarted, obs)
        self._done = np.asarray(term, dtype=bool) | np.asarray(trunc, dtype=bool)
        return self._seen(obs), rew, term, trunc, info
