"""YAML presets and experiment files, loaded safely and validated into the typed configs.

    from actuator_gym import configs
    preset = configs.load("configs/actuators/go1_dc_motor.yaml")   # or configs.load("go1_dc_motor")
    preset.actuators  # {"legs": DCMotorCfg(...)}

**Data, not code.** Files are parsed by a bounded ``yaml.SafeLoader`` (:mod:`._safe_yaml`): no
Python objects can be constructed, only plain data tags are accepted, and the file size, the node
count after alias expansion and the nesting depth are bounded by :class:`ConfigLimits` before
anything is built. A preset can never switch trust on: a key ``allow_unsafe_checkpoint`` anywhere
in a file is refused; the opt-in for checkpoint formats that can run code (TorchScript, pickle,
``.pt2``) comes only from code, ``configs.load(path, allow_unsafe_checkpoint=True)``, or from the
command line, ``--allow-unsafe-checkpoint``. Nor can a file choose a Ray cluster: a key ``address``
anywhere is refused (:data:`CLUSTER_KEY`; the address comes from code or ``--address``).

**Validated fully at load.** Every error is a :class:`ConfigError` (a ``ValueError``) naming the
file, the key path and the allowed values: wrong types, unknown keys, bad regular expressions,
non-finite or overflowing numbers, numbers over ``ConfigLimits.max_abs_value``, bad delays and
implicit options, distributions that can leave a parameter's range, a self-referencing
experiment. Each actuator group is then build-checked without an asset: its parts are bound to a
one-env batch (``{regex: value}`` entries one at a time), so what would fail at ``build`` fails here.
What still depends on the asset (which joints a regex matches) is checked at ``build``.

File kinds (top-level ``kind:``):

``actuators``
    ``groups: {group name: {model: <name>, <config fields>...}}`` -- one actuator config per group.
    ``model`` is one of :data:`MODELS`. Numeric fields take a number, a list (per joint), a
    ``{regex: value}`` mapping, or a distribution ``{dist: uniform|log_uniform|gaussian|int_uniform|
    int_gaussian, ...}`` with the distribution's arguments (``low``/``high`` or ``mean``/``std``,
    ``operation``, ``per_joint``). ``randomization: {field: <distribution>}`` randomizes a field
    around its nominal value. ``.inf`` (or ``inf``) is accepted only by the limit fields
    (:data:`UNLIMITED_FIELDS`), where it means "no limit".
``thrusters``
    ``thrusters: {<ThrusterCfg fields>}`` plus optional ``initial_rps``.
``experiment``
    ``task: <gymnasium id>``, ``task_kwargs: {...}``, ``actuators: <preset name | file | inline
    groups>`` (a relative file is resolved next to the experiment), ``engine: sb3 | rsl_rl`` (the
    training engine, default ``sb3``; :data:`TRAIN_SETTINGS`), ``train: {...}`` (that engine's
    settings: :data:`TRAIN_KEYS` for ``sb3``, :data:`RSL_RL_TRAIN_KEYS` for ``rsl_rl``), ``seed``.
``transfer``
    a sim-to-sim transfer benchmark (``actuator-gym transfer``): training conditions, seeds and
    held-out hardware conditions; schema in :mod:`actuator_gym._config_transfer`.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ._config_groups import ConfigError, GroupChecker, key_path
from ._config_transfer import TransferCondition, TransferExperiment, parse_transfer
from ._safe_io import read_text
from ._safe_yaml import Overflow, YamlRefused, load_yaml

__all__ = [
    "ConfigError",
    "ConfigLimits",
    "DEFAULT_CONFIG_LIMITS",
    "ActuatorPreset",
    "ThrusterPreset",
    "Experiment",
    "TransferExperiment",
    "TransferCondition",
    "load",
    "parse",
    "preset_dir",
    "list_presets",
    "MODELS",
    "UNLIMITED_FIELDS",
    "TRAIN_KEYS",
    "RSL_RL_TRAIN_KEYS",
    "RAY_TRAIN_KEYS",
    "TRAIN_SETTINGS",
    "DEFAULT_ENGINE",
    "train_settings",
    "ray_settings",
]


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


def _model_table() -> dict[str, type]:
    from .actuators import models as _models

    table = {
        "IdealPD": _models.IdealPDActuatorCfg,
        "DCMotor": _models.DCMotorCfg,
        "DelayedPD": _models.DelayedPDActuatorCfg,
        "RemotizedPD": _models.RemotizedPDActuatorCfg,
        "Implicit": _models.ImplicitActuatorCfg,
    }
    from .actuators.net_models import ActuatorNetGRUCfg, ActuatorNetLSTMCfg, ActuatorNetMLPCfg

    table.update(ActuatorNetMLP=ActuatorNetMLPCfg, ActuatorNetLSTM=ActuatorNetLSTMCfg, ActuatorNetGRU=ActuatorNetGRUCfg)
    return table


MODELS = tuple(_model_table())
"""Model names accepted under ``model:`` in an actuator preset."""

UNLIMITED_FIELDS = (
    "actuator_effort_limit", "actuator_velocity_limit", "joint_effort_limit", "joint_velocity_limit",
    "effort_limit", "velocity_limit", "effort_limit_sim", "velocity_limit_sim", "max_thrust_rate",
)
"""Fields whose value may be ``.inf`` ("no limit"); everywhere else numbers must be finite."""

TRUST_KEY = "allow_unsafe_checkpoint"
CLUSTER_KEY = "address"
"""A key no data file may hold, at any depth: a Ray cluster's address comes only from code
(``settings={"address": ...}``, ``run_transfer(..., ray_address=...)``) or the command line (``--address``)."""

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


@dataclass
class ActuatorPreset:
    """A validated actuator preset: ``{group name: actuator config}``."""

    name: str
    actuators: dict[str, Any]
    description: str = ""
    source: Path | None = None


@dataclass
class ThrusterPreset:
    name: str
    thrusters: Any
    initial_rps: float | None = None
    description: str = ""
    source: Path | None = None


@dataclass
class Experiment:
    """A validated experiment: a task, its actuators and training settings."""

    name: str
    task: str
    task_kwargs: dict[str, Any] = field(default_factory=dict)
    actuators: dict[str, Any] | None = None
    train: dict[str, Any] = field(default_factory=lambda: dict(TRAIN_KEYS))
    seed: int = 0
    description: str = ""
    source: Path | None = None
    engine: str = DEFAULT_ENGINE
    """The training engine (a key of :data:`TRAIN_SETTINGS`); ``train`` holds its settings, every
    one filled in (the file's values over the engine's defaults)."""


def preset_dir() -> Path:
    """The folder of bundled presets.

    The project keeps them in ``configs/`` at its root; the wheel installs that folder as the data
    package ``actuator_gym/presets`` (pyproject's ``package-dir``), so an installed package finds
    them beside this module and a source checkout (editable install) finds ``configs/``.
    """
    here = Path(__file__).resolve().parent
    installed = here / "presets"
    return installed if installed.is_dir() else here.parent / "configs"


def list_presets() -> dict[str, Path]:
    """``{preset name: path}`` for every bundled YAML file (name = file stem)."""
    root = preset_dir()
    if not root.is_dir():
        return {}
    return {p.stem: p for p in sorted(root.rglob("*.yaml"))}


def _resolve_path(path_or_name: str | Path, base: Path | None = None) -> Path:
    """A YAML path (relative ones against ``base`` when given) or the file of a bundled preset."""
    p = Path(path_or_name)
    if base is not None and not p.is_absolute() and (p.suffix in (".yaml", ".yml") or "/" in str(path_or_name)):
        p = base / p
    if p.suffix in (".yaml", ".yml") or p.exists():
        if not p.is_file():
            raise ConfigError(f"{p}: no such file")
        return p
    presets = list_presets()
    if str(path_or_name) in presets:
        return presets[str(path_or_name)]
    raise ConfigError(f"unknown preset {str(path_or_name)!r}; bundled presets: {sorted(presets)}")


def load(
    path_or_name: str | Path,
    *,
    allow_unsafe_checkpoint: bool = False,
    limits: ConfigLimits | None = None,
) -> ActuatorPreset | ThrusterPreset | Experiment:
    """Load and validate a YAML file (a path, or the name of a bundled preset).

    ``allow_unsafe_checkpoint=True`` lets the file's learned-actuator groups load checkpoint
    formats that can execute code (TorchScript, pickle, ``.pt2``): pass it only for files whose
    checkpoints you trust. ``limits`` bounds what the file may ask for (:class:`ConfigLimits`).
    """
    return _Loader(bool(allow_unsafe_checkpoint), limits or DEFAULT_CONFIG_LIMITS, ()).load(path_or_name, None)


def parse(
    doc: Any,
    source: Path | str = "<config>",
    *,
    allow_unsafe_checkpoint: bool = False,
    limits: ConfigLimits | None = None,
) -> ActuatorPreset | ThrusterPreset | Experiment:
    """Validate an already-parsed YAML document (see :func:`load`)."""
    return _Loader(bool(allow_unsafe_checkpoint), limits or DEFAULT_CONFIG_LIMITS, ()).parse(doc, source)


class _Loader:
    """One :func:`load` call: the trust opt-in, the limits and the chain of files being loaded."""

    def __init__(self, allow_unsafe: bool, limits: ConfigLimits, stack: tuple[Path, ...]):
        if not isinstance(limits, ConfigLimits):
            raise TypeError(f"configs.load: limits must be a ConfigLimits, got {type(limits).__name__}")
        self.allow_unsafe, self.limits, self.stack = allow_unsafe, limits, stack

    def load(self, path_or_name: str | Path, base: Path | None) -> Any:
        path = _resolve_path(path_or_name, base)
        real = path.resolve()
        if real in self.stack:
            chain = " -> ".join(str(p) for p in (*self.stack, real))
            raise ConfigError(f"{path}: the file references itself ({chain}); allowed: references without cycles")
        if len(self.stack) >= self.limits.max_includes:
            raise ConfigError(f"{path}: file references nest deeper than {self.limits.max_includes}; allowed: at most that (ConfigLimits.max_includes)")
        try:
            text = read_text(path, self.limits.max_file_bytes, "YAML file")
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        if "\x00" in text:
            raise ConfigError(f"{path}: a YAML file holds no NUL bytes (binary data?); allowed: a UTF-8 text file")
        try:
            doc = load_yaml(text, self.limits.max_depth, self.limits.max_nodes)
        except YamlRefused as exc:
            raise ConfigError(f"{path}: {exc}") from None
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: malformed YAML: {' '.join(str(exc).split())}") from None
        return _Loader(self.allow_unsafe, self.limits, (*self.stack, real)).parse(doc, path)

    # -- documents ---------------------------------------------------------------------------
    def parse(self, doc: Any, source: Path | str) -> Any:
        where = str(source)
        if not isinstance(doc, dict):
            raise ConfigError(f"{where}: the top level must be a mapping with a 'kind' key, got {type(doc).__name__}")
        _scan(doc, where, "", False, False, self.limits)
        kind = doc.get("kind")
        name = _text(doc.get("name", Path(where).stem), where, "name")
        desc = _text(doc.get("description", ""), where, "description")
        src = Path(source) if where != "<config>" else None
        folder = src.resolve().parent if src is not None and src.is_file() else None
        groups = GroupChecker(where, folder, self.allow_unsafe, self.limits, UNLIMITED_FIELDS)
        if kind == "actuators":
            _only(doc, {"kind", "name", "description", "groups"}, where, "")
            return ActuatorPreset(name, groups.groups(doc.get("groups"), "groups", _model_table()), desc, src)
        if kind == "thrusters":
            _only(doc, {"kind", "name", "description", "thrusters", "initial_rps"}, where, "")
            from .actuators.thruster import ThrusterCfg

            cfg = groups.build(ThrusterCfg, _mapping(doc.get("thrusters"), where, "thrusters"), "thrusters")
            rps = doc.get("initial_rps")
            if rps is not None and not _is_number(rps):
                raise ConfigError(f"{where}: initial_rps must be a number (rev/s), got {rps!r}")
            return ThrusterPreset(name, cfg, None if rps is None else float(rps), desc, src)
        if kind == "experiment":
            return self._experiment(doc, where, name, desc, src, folder, groups)
        if kind == "transfer":
            return parse_transfer(doc, where, name, desc, src, lambda a, key: self._actuators(a, key, where, folder, groups),
                                  lambda engine, train: _transfer_train(engine, train, where, self.limits))
        raise ConfigError(f"{where}: 'kind' must be one of ['actuators', 'thrusters', 'experiment', 'transfer'], got {kind!r}")

    def _actuators(self, acts: Any, key: str, where: str, folder: Path | None, groups: GroupChecker) -> dict[str, Any]:
        """An ``actuators:`` value of a transfer condition: a preset name / file, or inline groups."""
        if isinstance(acts, str):
            preset = self.load(acts, folder)
            if not isinstance(preset, ActuatorPreset):
                raise ConfigError(f"{where}: {key}: {acts!r} is not an actuator preset (kind: {type(preset).__name__})")
            return preset.actuators
        return groups.groups(acts, key, _model_table())

    def _experiment(self, doc, where, name, desc, src, folder, groups) -> Experiment:
        _only(doc, {"kind", "name", "description", "task", "task_kwargs", "actuators", "engine", "train", "seed"}, where, "")
        task = doc.get("task")
        if not isinstance(task, str) or not re.fullmatch(r"[\w./:\-]+-v\d+", task):
            raise ConfigError(f"{where}: 'task' must be a Gymnasium id such as 'actuator_gym/Pendulum-v0', got {task!r}")
        task_kwargs = _mapping(doc.get("task_kwargs", {}), where, "task_kwargs")
        if "actuators" in task_kwargs:
            raise ConfigError(f"{where}: task_kwargs.actuators is not allowed; give the actuators under the top-level 'actuators' key")
        acts = doc.get("actuators")
        actuators = None
        if isinstance(acts, str):
            preset = self.load(acts, folder)
            if not isinstance(preset, ActuatorPreset):
                raise ConfigError(f"{where}: actuators: {acts!r} is not an actuator preset (kind: {type(preset).__name__})")
            actuators = preset.actuators
        elif acts is not None:
            actuators = groups.groups(acts, "actuators", _model_table())
        engine = doc.get("engine", DEFAULT_ENGINE)
        train = train_settings(engine, _mapping(doc.get("train", {}), where, "train"), f"{where}: ", "train.", self.limits)
        seed = doc.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
            raise ConfigError(f"{where}: seed must be an integer in [0, 2**63), got {seed!r}")
        return Experiment(name, task, task_kwargs, actuators, train, seed, desc, src, engine)


# -- helpers ---------------------------------------------------------------------------------
def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _text(x: Any, where: str, key: str) -> str:
    if not isinstance(x, str):
        raise ConfigError(f"{where}: '{key}' must be a string, got {type(x).__name__}")
    return x


def _only(doc: dict, allowed: set[str], where: str, prefix: str) -> None:
    unknown = sorted(set(doc) - allowed)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {[prefix + k for k in unknown]}; allowed: {sorted(allowed)}")


def _mapping(x: Any, where: str, key: str) -> dict:
    if not isinstance(x, dict):
        raise ConfigError(f"{where}: '{key}' must be a mapping, got {type(x).__name__}")
    return x


_BOUNDED_SECTIONS = ("groups", "actuators", "thrusters", "initial_rps")


def _scan(x: Any, where: str, path: str, unlimited: bool, bounded: bool, limits: ConfigLimits) -> None:
    """Refuse, anywhere in the document: non-string keys, the trust key, overflowing / NaN numbers,
    infinities outside limit fields, and (in actuator / thruster sections) magnitudes over
    ``limits.max_abs_value``. Recursion is bounded by the loader's depth limit."""
    at = path or "<top level>"
    if isinstance(x, Overflow):
        tail = "; .inf means 'no limit' in this field" if unlimited else ""
        raise ConfigError(f"{where}: {at}: {x.text} (line {x.line}) overflows a 64-bit float; allowed: finite numbers{tail}")
    if isinstance(x, dict):
        for k, v in x.items():
            if not isinstance(k, str):
                raise ConfigError(f"{where}: {at}: key {k!r} ({type(k).__name__}) must be a string; quote it")
            if k == TRUST_KEY:
                raise ConfigError(
                    f"{where}: {key_path(path, k)}: the trust opt-in cannot come from a data file; pass "
                    f"configs.load(path, allow_unsafe_checkpoint=True) in code or --allow-unsafe-checkpoint on the "
                    f"command line (only for checkpoints you trust)"
                )
            if k == CLUSTER_KEY:
                raise ConfigError(
                    f"{where}: {key_path(path, k)}: a data file cannot choose a Ray cluster; give it on the command "
                    f"line (--address) or in code (settings={{'address': ...}}, run_transfer(..., ray_address=...))"
                )
            _scan(v, where, key_path(path, k), unlimited or k in UNLIMITED_FIELDS, bounded or (not path and k in _BOUNDED_SECTIONS), limits)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            _scan(v, where, key_path(path, i), unlimited, bounded, limits)
    elif isinstance(x, bool) or x is None or isinstance(x, str):
        return
    elif isinstance(x, float):
        if math.isnan(x):
            raise ConfigError(f"{where}: {at}: NaN is not allowed; allowed: finite numbers")
        if math.isinf(x) and not (unlimited and x > 0):
            tail = " (or .inf, 'no limit', in the limit fields)" if not unlimited else ", or .inf ('no limit')"
            raise ConfigError(f"{where}: {at}: {x} is not allowed; allowed: finite numbers{tail}")
        if bounded and math.isfinite(x) and abs(x) > limits.max_abs_value:
            raise ConfigError(f"{where}: {at}: {x} is too large; allowed: |value| <= {limits.max_abs_value:g} (ConfigLimits.max_abs_value)")
    elif isinstance(x, int):
        if abs(x) >= 2**63 or (bounded and abs(x) > limits.max_abs_value):
            bound = f"{limits.max_abs_value:g} (ConfigLimits.max_abs_value)" if bounded else "2**63 - 1"
            text = str(x) if abs(x) < 10**30 else f"an integer of {len(str(abs(x)))} digits"
            raise ConfigError(f"{where}: {at}: {text} is too large; allowed: |value| <= {bound}")
    else:
        raise ConfigError(f"{where}: {at}: a {type(x).__name__} is not allowed; allowed: mappings, lists, strings, numbers, booleans, null")


def _transfer_train(engine: str, train: dict, where: str, limits: ConfigLimits) -> dict[str, Any]:
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
        if not _is_number(v) or not math.isfinite(v) or not ((v > lo if lo_open else v >= lo) and v <= hi):
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
