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

Beside this loader: :mod:`._config_checks` (the error, key paths, limits and shape checks every
section shares), :mod:`._config_groups` (actuator and thruster groups), :mod:`._config_train`
(training settings), :mod:`._config_transfer` (transfer files).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ._checks import is_real
from ._presets import preset_dir
from ._config_checks import (
    CLUSTER_KEY, DEFAULT_CONFIG_LIMITS, TRUST_KEY, ConfigError, ConfigLimits, key_path, mapping, only,
)
from ._config_groups import GroupChecker
from ._config_train import (
    DEFAULT_ENGINE, RAY_TRAIN_KEYS, RSL_RL_TRAIN_KEYS, TRAIN_KEYS, TRAIN_SETTINGS, ray_settings, train_settings, transfer_train,
)
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

    from .actuators.bam import BAMServoCfg

    table.update(ActuatorNetMLP=ActuatorNetMLPCfg, ActuatorNetLSTM=ActuatorNetLSTMCfg, ActuatorNetGRU=ActuatorNetGRUCfg,
                 BAMServo=BAMServoCfg)
    return table


MODELS = tuple(_model_table())
"""Model names accepted under ``model:`` in an actuator preset."""

UNLIMITED_FIELDS = (
    "actuator_effort_limit", "actuator_velocity_limit", "joint_effort_limit", "joint_velocity_limit",
    "effort_limit", "velocity_limit", "effort_limit_sim", "velocity_limit_sim", "max_thrust_rate",
)
"""Fields whose value may be ``.inf`` ("no limit"); everywhere else numbers must be finite."""


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


def actuator_groups(value: Any) -> Any:
    """``actuators=`` as every door takes it (``gym.make`` / ``gym.make_vec`` and the task configs,
    ``ActuatorWrapper``): a ``{group: config}`` mapping (returned as it is), a bundled preset's name or
    a YAML file's path (loaded with :func:`load`), or what :func:`load` returns -- an
    :class:`ActuatorPreset` (its groups), an :class:`Experiment` (its actuators) or a
    :class:`ThrusterPreset` (``{name: its thruster config}``). Anything else is returned for the
    caller's own check (which names what it takes)."""
    if isinstance(value, (str, Path)):
        value = load(value)
    if isinstance(value, ActuatorPreset):
        return dict(value.actuators)
    if isinstance(value, Experiment) and value.actuators:
        return dict(value.actuators)
    if isinstance(value, ThrusterPreset):
        return {value.name: value.thrusters}
    return value


def list_presets() -> dict[str, Path]:
    """``{preset name: path}`` for every bundled YAML file (name = file stem)."""
    root = preset_dir()
    if not root.is_dir():
        return {}
    return {p.stem: p for p in sorted(root.rglob("*.yaml"))}


def bundled_policies() -> dict[str, Path]:
    """``{name: folder}`` of the policies shipped with the package (``policies/NAME/`` beside the
    presets, each holding ``policy.json`` + ``policy.pt``): ``SavedPolicy.load(NAME)`` and ``--policy NAME``."""
    root = preset_dir() / "policies"
    return {p.parent.name: p.parent for p in sorted(root.glob("*/policy.json"))} if root.is_dir() else {}


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
            only(doc, {"kind", "name", "description", "groups"}, where)
            return ActuatorPreset(name, groups.groups(doc.get("groups"), "groups", _model_table()), desc, src)
        if kind == "thrusters":
            only(doc, {"kind", "name", "description", "thrusters", "initial_rps"}, where)
            from .actuators.thruster import ThrusterCfg

            cfg = groups.build(ThrusterCfg, mapping(doc.get("thrusters"), where, "thrusters"), "thrusters")
            rps = doc.get("initial_rps")
            if rps is not None and not is_real(rps):
                raise ConfigError(f"{where}: initial_rps must be a number (rev/s), got {rps!r}")
            return ThrusterPreset(name, cfg, None if rps is None else float(rps), desc, src)
        if kind == "experiment":
            return self._experiment(doc, where, name, desc, src, folder, groups)
        if kind == "transfer":
            return parse_transfer(doc, where, name, desc, src, lambda a, key: self._actuators(a, key, where, folder, groups),
                                  lambda engine, train: transfer_train(engine, train, where, self.limits))
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
        only(doc, {"kind", "name", "description", "task", "task_kwargs", "actuators", "engine", "train", "seed"}, where)
        task = doc.get("task")
        if not isinstance(task, str) or not re.fullmatch(r"[\w./:\-]+-v\d+", task):
            raise ConfigError(f"{where}: 'task' must be a Gymnasium id such as 'actuator_gym/Pendulum-v0', got {task!r}")
        task_kwargs = mapping(doc.get("task_kwargs", {}), where, "task_kwargs")
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
        train = train_settings(engine, mapping(doc.get("train", {}), where, "train"), f"{where}: ", "train.", self.limits)
        seed = doc.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
            raise ConfigError(f"{where}: seed must be an integer in [0, 2**63), got {seed!r}")
        return Experiment(name, task, task_kwargs, actuators, train, seed, desc, src, engine)


# -- helpers ---------------------------------------------------------------------------------
def _text(x: Any, where: str, key: str) -> str:
    if not isinstance(x, str):
        raise ConfigError(f"{where}: '{key}' must be a string, got {type(x).__name__}")
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
