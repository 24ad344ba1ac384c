"""The training settings an experiment (``train:``), a transfer file and ``train_policy`` take: each
engine's keys and defaults, and their checks (one vocabulary of bounds, :class:`ConfigLimits`).
Read through :mod:`actuator_gym.configs`, which re-exports the tables and the two checks."""

from __future__ import annotations

import math
from typing import Any

from ._checks import is_real
from ._config_checks import CLUSTER_KEY, DEFAULT_CONFIG_LIMITS, ConfigError, ConfigLimits

__all__ = ["TRAIN_KEYS", "RSL_RL_TRAIN_KEYS", "RAY_TRAIN_KEYS", "TRAIN_SETTINGS", "DEFAULT_ENGINE", "train_settings",
           "ray_settings", "transfer_train"]

TRAIN_KEYS = {
    "algo": "ppo",
    "total_timesteps": 50_000,
    "num_envs": 8,
    "n_steps": 256,
    "batch_size": 256,
    "learning_rate": 3e-4,
    "gamma": 0.99,
    "eval_every": 10_000,
    "eval_episodes": 5,
    "net_arch": [64, 64],
    "log_std_init": 0.0,
}
"""Keys of an experiment's ``train:`` section for the ``sb3`` engine (the keyword arguments of
:func:`actuator_gym.tools.training.train_ppo`) and their defaults."""

RSL_RL_TRAIN_KEYS = {
    "total_timesteps": 1_000_000,
    "num_envs": 1024,
    "num_steps_per_env": 24,
    "eval_every": 200_000,
    "eval_episodes": 5,
    "num_learning_epochs": 5,
    "num_mini_batches": 4,
    "learning_rate": 1e-3,
    "schedule": "adaptive",
    "desired_kl": 0.01,
    "clip_param": 0.2,
    "gamma": 0.99,
    "lam": 0.95,
    "entropy_coef": 0.01,
    "value_loss_coef": 1.0,
    "max_grad_norm": 1.0,
    "actor_hidden_dims": [256, 128, 64],
    "critic_hidden_dims": [256, 128, 64],
    "activation": "elu",
    "init_noise_std": 1.0,
    "obs_normalization": True,
    "symmetry": "none",
    "mirror_loss_coeff": 1.0,
    "torch_threads": 0,
}
"""Keys of an experiment's ``train:`` section for the ``rsl_rl`` engine and their defaults: the
legged_gym settings (24 steps per env per iteration, 5 epochs, 4 mini-batches, adaptive learning
rate from 1e-3 at a KL of 0.01, ELU [256, 128, 64] actor and critic, observation normalization,
1024 envs). The algorithm keys are rsl_rl's ``PPO`` arguments; ``obs_normalization`` applies to
actor and critic. ``symmetry``: rsl_rl's symmetry extension with the task's mirror
(:func:`actuator_gym.adapters.rsl_rl_mirror`; tasks that declare one: the quadruped) -- ``none``,
``augment`` (mirrored samples appended to every mini-batch: twice the update's work), ``mirror_loss``
(a loss, weighted ``mirror_loss_coeff``, on the actor's disagreement with its mirrored self) or
``both``. ``torch_threads``: torch's intra-op threads for the run (0: every CPU the process
may use; the physics pool runs between the updates, so they do not compete: on 2 cores the PPO
update takes ~0.68 s per iteration on 2 threads against ~1.20 s on 1, benchmarks/training.md)."""

RAY_TRAIN_KEYS: dict[str, Any] = {
    "env_runners": 2,
    "envs_per_runner": 8,
    "learners": 0,
    "address": None,
    "total_timesteps": 50_000,
    "iterations": None,
    "rollout_fragment_length": 64,
    "minibatch_size": 256,
    "num_epochs": 4,
    "learning_rate": 3e-4,
    "gamma": 0.99,
    "lambda_": 0.95,
    "clip_param": 0.2,
    "entropy_coeff": 0.0,
    "net_arch": [64, 64],
    "activation": "tanh",
    "eval_every": 10_000,
    "eval_episodes": 5,
    "num_cpus": None,
    "cpus_per_env_runner": None,
    "cpus_per_learner": None,
    "gpus_per_learner": 0,
}
"""Settings of the ``ray`` engine (:func:`actuator_gym.tools.ray_engine.train_ray`, a transfer file's
``train:`` with ``engine: ray``) and their defaults; checked by :func:`ray_settings`. ``iterations``
(RLlib ``train()`` calls), when given, replaces ``total_timesteps``. ``address`` (the Ray cluster) is
set only from code or the command line: a data file naming it is refused (:data:`CLUSTER_KEY`)."""

TRAIN_SETTINGS = {"sb3": TRAIN_KEYS, "rsl_rl": RSL_RL_TRAIN_KEYS}
"""``{engine: {setting: default}}``: the training engines an experiment's ``engine:`` names and the
settings each takes."""

DEFAULT_ENGINE = "sb3"
"""The engine of an experiment file without an ``engine:`` key."""


def transfer_train(engine: str, train: dict, where: str, limits: ConfigLimits) -> dict[str, Any]:
    """A transfer file's ``train:``: the engine's full settings, checked (:func:`train_settings`, :func:`ray_settings`)."""
    if engine == "ray":
        return ray_settings(train, f"{where}: ", "train.", limits)
    return train_settings(engine, train, f"{where}: ", "train.", limits)


def train_settings(
    engine: Any, values: dict, where: str = "", prefix: str = "settings.", limits: ConfigLimits | None = None
) -> dict[str, Any]:
    """``engine``'s full settings: ``values`` checked and laid over its defaults (:data:`TRAIN_SETTINGS`).

    :class:`ConfigError` naming ``where`` + ``prefix`` + the key and the allowed values for an unknown
    engine, an unknown key or a value out of its domain, and for a rollout buffer over
    ``ConfigLimits.max_rollout_steps`` rows. The experiment loader and
    :func:`actuator_gym.tools.engines.train_policy` both check here, before anything is written."""
    limits = limits or DEFAULT_CONFIG_LIMITS
    if not isinstance(engine, str) or engine not in TRAIN_SETTINGS:
        raise ConfigError(f"{where}engine must be one of {sorted(TRAIN_SETTINGS)}, got {engine!r}")
    out = _settings(engine, TRAIN_SETTINGS[engine], values, where, prefix, limits)
    steps = "n_steps" if "n_steps" in out else "num_steps_per_env"
    rows = _rows(out, (steps, "num_envs"), where, prefix, limits)
    if "num_mini_batches" in out and out["num_mini_batches"] > rows:
        raise ConfigError(f"{where}{prefix}num_mini_batches = {out['num_mini_batches']}; allowed: at most "
                          f"{steps} * num_envs = {rows} (each mini-batch holds at least one transition)")
    return out


RAY_ACTIVATIONS = ("tanh", "relu")
"""``activation`` values of the ``ray`` engine (RLlib's default model)."""


def ray_settings(values: dict, where: str = "", prefix: str = "settings.", limits: ConfigLimits | None = None) -> dict[str, Any]:
    """The ``ray`` engine's full settings (:data:`RAY_TRAIN_KEYS`), checked as :func:`train_settings`
    checks the others (one vocabulary of bounds, :class:`ConfigLimits`), plus: the env steps of one
    iteration (``env_runners * envs_per_runner * rollout_fragment_length``) at most
    ``max_rollout_steps``, and ``iterations`` times them at most ``max_timesteps``."""
    limits = limits or DEFAULT_CONFIG_LIMITS
    out = _settings("ray", RAY_TRAIN_KEYS, values, where, prefix, limits)
    if out["activation"] not in RAY_ACTIVATIONS:
        raise ConfigError(f"{where}{prefix}activation must be one of {list(RAY_ACTIVATIONS)}, got {out['activation']!r}")
    rows = _rows(out, ("env_runners", "envs_per_runner", "rollout_fragment_length"), where, prefix, limits)
    if out["iterations"] is not None and out["iterations"] * rows > limits.max_timesteps:
        raise ConfigError(f"{where}{prefix}iterations * {rows} env steps per iteration = {out['iterations'] * rows}; "
                          f"allowed: at most {limits.max_timesteps} (ConfigLimits.max_timesteps)")
    return out


def _settings(engine: str, defaults: dict, values: Any, where: str, prefix: str, limits: ConfigLimits) -> dict[str, Any]:
    """``values`` checked key by key (:func:`_check_train`) over ``defaults``; a None default may stay None."""
    if not isinstance(values, dict):
        raise ConfigError(f"{where}{prefix.rstrip('.')} must be a mapping, got {type(values).__name__}")
    unknown = sorted(set(values) - set(defaults), key=str)
    if unknown:
        raise ConfigError(f"{where}unknown key(s) {[prefix + str(k) for k in unknown]} for engine {engine!r}; allowed: {sorted(defaults)}")
    out = dict(defaults)
    for k, v in values.items():
        out[k] = None if v is None and defaults[k] is None else _check_train(k, v, f"{where}{prefix}{k}", limits)
    return out


def _rows(settings: dict, keys: tuple[str, ...], where: str, prefix: str, limits: ConfigLimits) -> int:
    """The product of ``keys`` (the rows of one rollout), refused over ``max_rollout_steps``."""
    rows = math.prod(settings[k] for k in keys)
    if rows > limits.max_rollout_steps:
        raise ConfigError(f"{where}{' * '.join(prefix + k for k in keys)} = {rows}; allowed: at most "
                          f"{limits.max_rollout_steps} (ConfigLimits.max_rollout_steps)")
    return rows


_CHOICES = {"algo": ("ppo",), "schedule": ("adaptive", "fixed"), "activation": ("elu", "tanh", "relu"),
            "symmetry": ("none", "augment", "mirror_loss", "both")}
_WIDTHS = ("net_arch", "actor_hidden_dims", "critic_hidden_dims")
_NUMBERS = {  # key -> (low, high: a number or a ConfigLimits field, low is open)
    "learning_rate": (0.0, 1.0, True), "gamma": (0.0, 1.0, True), "lam": (0.0, 1.0, False), "lambda_": (0.0, 1.0, True),
    "desired_kl": (0.0, 1.0, True), "clip_param": (0.0, 1.0, True), "entropy_coef": (0.0, 1.0, False),
    "entropy_coeff": (0.0, 1.0, False), "value_loss_coef": (0.0, 1e3, False), "max_grad_norm": (0.0, 1e3, True),
    "init_noise_std": (0.0, 1e3, True), "log_std_init": (-10.0, 2.0, False), "mirror_loss_coeff": (0.0, 1e3, False),
    "cpus_per_env_runner": (0.01, "max_cpus", False), "cpus_per_learner": (0.01, "max_cpus", False),
}
_INTEGERS = {  # key -> (low, high: a number or a ConfigLimits field)
    "total_timesteps": (1, "max_timesteps"), "eval_every": (1, "max_timesteps"), "iterations": (1, "max_iterations"),
    "num_envs": (1, "max_num_envs"), "envs_per_runner": (1, "max_num_envs"),
    **dict.fromkeys(("n_steps", "num_steps_per_env", "rollout_fragment_length", "batch_size", "minibatch_size",
                     "num_mini_batches"), (1, "max_rollout_steps")),
    "num_epochs": (1, "max_epochs"), "num_learning_epochs": (1, "max_epochs"), "eval_episodes": (1, "max_eval_episodes"),
    "env_runners": (1, "max_env_runners"), "learners": (0, "max_env_runners"), "num_cpus": (1, "max_cpus"),
    "gpus_per_learner": (0, 8),
}
"""Every integer training setting and its range (docs/security.md, docs/distributed.md)."""


def _bound(hi: Any, limits: ConfigLimits) -> tuple[Any, str]:
    """A bound of :data:`_NUMBERS` / :data:`_INTEGERS` and where it comes from (``, ConfigLimits.<field>``)."""
    return (getattr(limits, hi), f"ConfigLimits.{hi}") if isinstance(hi, str) else (hi, "")


def _check_train(k: str, v: Any, at: str, limits: ConfigLimits) -> Any:
    """One training setting checked; ``at`` names it (``<file>: train.<key>``)."""
    if k in _CHOICES:
        if v not in _CHOICES[k]:
            raise ConfigError(f"{at} must be one of {list(_CHOICES[k])}, got {v!r}")
        return v
    if k == "torch_threads":
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 1024:
            raise ConfigError(f"{at} must be an integer in [0, 1024] (0: every CPU), got {v!r}")
        return v
    if k == "obs_normalization":
        if not isinstance(v, bool):
            raise ConfigError(f"{at} must be true or false, got {v!r}")
        return v
    if k in _WIDTHS:
        ok = isinstance(v, (list, tuple)) and 1 <= len(v) <= limits.max_net_layers
        ok = ok and all(isinstance(i, int) and not isinstance(i, bool) and 1 <= i <= limits.max_net_width for i in v)
        if not ok:
            raise ConfigError(
                f"{at} must be a list of 1 to {limits.max_net_layers} integers in "
                f"[1, {limits.max_net_width}] (ConfigLimits.max_net_layers / max_net_width), got {v!r}"
            )
        return list(v)
    if k == CLUSTER_KEY:
        if not isinstance(v, str) or not v:
            raise ConfigError(f"{at} must be a Ray cluster address ('auto', 'host:6379', 'ray://host:10001') or None "
                              f"(a local cluster), got {v!r}")
        return v
    if k in _NUMBERS:
        lo, hi, lo_open = _NUMBERS[k]
        hi, src = _bound(hi, limits)
        if not is_real(v) or not math.isfinite(v) or not ((v > lo if lo_open else v >= lo) and v <= hi):
            src = f" ({src})" if src else ""
            raise ConfigError(f"{at} must be a number in {'(' if lo_open else '['}{lo:g}, {hi:g}]{src}, got {v!r}")
        return float(v)
    lo, hi = _INTEGERS[k]
    hi, src = _bound(hi, limits)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        rule = f"a positive integer (at most {hi}{', ' + src if src else ''})" if lo == 1 else \
            f"an integer in [{lo}, {hi}]{' (' + src + ')' if src else ''}"
        raise ConfigError(f"{at} must be {rule}, got {v!r}")
    return v
