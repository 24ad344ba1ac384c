"""The vocabulary every section of a configuration file is checked with (:mod:`.configs`,
:mod:`._config_groups`, :mod:`._config_transfer`): the error, key paths, the keys no data file may
hold, and the shape checks whose messages name the file and the key. Numbers are told apart with
:func:`actuator_gym._checks.is_real` / ``is_int``, as everywhere else."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any, Iterable

__all__ = ["ConfigError", "ConfigLimits", "DEFAULT_CONFIG_LIMITS", "TRUST_KEY", "CLUSTER_KEY", "key_path", "only", "mapping",
           "integer"]

TRUST_KEY = "allow_unsafe_checkpoint"
"""The opt-in to checkpoint formats that can run code: from code or the command line only, never from
a data file (refused at any depth; set on a group's config by the loader when the caller opted in)."""
CLUSTER_KEY = "address"
"""A key no data file may hold, at any depth: a Ray cluster's address comes only from code
(``settings={"address": ...}``, ``run_transfer(..., ray_address=...)``) or the command line (``--address``)."""


class ConfigError(ValueError):
    """A configuration file is malformed or holds a value outside its allowed range."""


@dataclass(frozen=True)
class ConfigLimits:
    """Bounds on what a YAML file may ask for (checked before anything is built).

    Override in code: ``configs.load(path, limits=ConfigLimits(max_nodes=1_000_000))``.
    """

    max_file_bytes: int = 2**20
    """[bytes]: size of a YAML file."""
    max_nodes: int = 100_000
    """YAML nodes after alias expansion (a "billion laughs" file is refused in microseconds)."""
    max_depth: int = 32
    """Nesting depth of mappings and lists (aliases included)."""
    max_includes: int = 8
    """Depth of file references (an experiment naming an actuator preset file, ...)."""
    max_abs_value: float = 1e9
    """Largest magnitude of any number in an actuator or thruster section (in the field's unit;
    ``.inf`` in a limit field is "no limit"). Keeps efforts representable in float32 for any
    state with ``|q - q*|, |qd| <= 1e3``."""
    max_delay_steps: int = 1000
    """[substeps]: largest ``min_delay`` / ``max_delay`` (the delay history holds ``max_delay + 1`` frames)."""
    max_solver_iterations: int = 1000
    """Largest ``implicit_options.max_iters`` and ``ls_iterations``."""
    max_num_envs: int = 65_536
    """Largest ``train.num_envs``."""
    max_rollout_steps: int = 2**24
    """Largest ``train.n_steps * train.num_envs`` and ``train.batch_size`` (rows of the PPO buffer)."""
    max_timesteps: int = 10**12
    """Largest ``train.total_timesteps`` / ``train.eval_every``."""
    max_net_layers: int = 16
    """Largest ``len(train.net_arch)``."""
    max_net_width: int = 8192
    """Largest entry of ``train.net_arch``."""
    max_eval_episodes: int = 10_000
    """Largest ``train.eval_episodes`` (each evaluation runs them one after the other)."""
    max_epochs: int = 1000
    """Largest ``train.num_epochs`` / ``train.num_learning_epochs`` (passes over each rollout)."""
    max_iterations: int = 10**7
    """Largest ``train.iterations`` of the ``ray`` engine (RLlib ``train()`` calls); their env steps
    (``iterations * env_runners * envs_per_runner * rollout_fragment_length``) stay within ``max_timesteps``."""
    max_env_runners: int = 1024
    """Largest ``train.env_runners`` and ``train.learners`` of the ``ray`` engine (actors of one run)."""
    max_cpus: int = 1024
    """Largest ``train.num_cpus`` (the CPUs of a local Ray cluster), ``cpus_per_env_runner`` and ``cpus_per_learner``."""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 1:
                raise ValueError(f"ConfigLimits: {f.name} must be a number >= 1, got {v!r}")


DEFAULT_CONFIG_LIMITS = ConfigLimits()
"""The limits :func:`load` uses unless given ``limits=``."""


def key_path(path: str, key: Any) -> str:
    """``path.key`` (``path[3]`` for list indices, ``path['.*_hip']`` for keys that are not plain names)."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if re.fullmatch(r"[A-Za-z_][\w\-]*", str(key)):
        return f"{path}.{key}" if path else str(key)
    return f"{path}[{key!r}]"


def only(doc: dict, allowed: Iterable[str], where: str, kp: str = "") -> None:
    """Refuse keys of ``doc`` (at key path ``kp`` of file ``where``) outside ``allowed``."""
    unknown = sorted(set(doc) - set(allowed))
    if unknown:
        raise ConfigError(f"{where}: {kp + ': ' if kp else ''}unknown key(s) {unknown}; allowed: {sorted(allowed)}")


def mapping(x: Any, where: str, kp: str) -> dict:
    """``x``, refused unless it is a mapping."""
    if not isinstance(x, dict):
        raise ConfigError(f"{where}: '{kp}' must be a mapping, got {type(x).__name__}")
    return x


def integer(x: Any, where: str, kp: str, lo: int, hi: int) -> int:
    """``x``, refused unless it is an integer (not a bool) in ``[lo, hi]``."""
    if isinstance(x, bool) or not isinstance(x, int) or not lo <= x <= hi:
        raise ConfigError(f"{where}: {kp} must be an integer in [{lo}, {hi}], got {x!r}")
    return x
