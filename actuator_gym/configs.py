"""YAML presets and experiment files, loaded safely and validated into the typed configs.

    from actuator_gym import configs
    preset = configs.load("configs/actuators/go1_dc_motor.yaml")   # or configs.load("go1_dc_motor")
    preset.actuators  # {"legs": DCMotorCfg(...)}

Files are read with ``yaml.safe_load`` (no Python objects can be constructed from YAML). Every
error is a :class:`ConfigError` (a ``ValueError``) naming the file, the key path and the allowed
values.

File kinds (top-level ``kind:``):

``actuators``
    ``groups: {group name: {model: <name>, <config fields>...}}`` -- one actuator config per group.
    ``model`` is one of :data:`MODELS`. Numeric fields take a number, a list (per joint), a
    ``{regex: value}`` mapping, or a distribution ``{dist: uniform|log_uniform|gaussian|int_uniform|
    int_gaussian, ...}`` with the distribution's arguments (``low``/``high`` or ``mean``/``std``,
    ``operation``, ``per_joint``). ``randomization: {field: <distribution>}`` randomizes a field
    around its nominal value.
``thrusters``
    ``thrusters: {<ThrusterCfg fields>}`` plus optional ``initial_rps``.
``experiment``
    ``task: <gymnasium id>``, ``task_kwargs: {...}``, ``actuators: <preset name | file | inline
    groups>``, ``train: {...}`` (see :data:`TRAIN_KEYS`), ``seed``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from . import randomization as rnd
from .actuators import models as _models

__all__ = ["ConfigError", "ActuatorPreset", "ThrusterPreset", "Experiment", "load", "preset_dir", "list_presets", "MODELS"]


class ConfigError(ValueError):
    """A configuration file is malformed or holds a value outside its allowed range."""


def _model_table() -> dict[str, type]:
    table = {
        "IdealPD": _models.IdealPDActuatorCfg,
        "DCMotor": _models.DCMotorCfg,
        "DelayedPD": _models.DelayedPDActuatorCfg,
        "RemotizedPD": _models.RemotizedPDActuatorCfg,
        "Implicit": _models.ImplicitActuatorCfg,
    }
    for name, cls_name in (("ActuatorNetMLP", "ActuatorNetMLPCfg"), ("ActuatorNetLSTM", "ActuatorNetLSTMCfg")):
        if hasattr(_models, cls_name):
            table[name] = getattr(_models, cls_name)
    return table


MODELS = tuple(_model_table())
"""Model names accepted under ``model:`` in an actuator preset."""

_DISTS = {
    "uniform": (rnd.Uniform, ("low", "high")),
    "log_uniform": (rnd.LogUniform, ("low", "high")),
    "gaussian": (rnd.Gaussian, ("mean", "std")),
    "int_uniform": (rnd.IntUniform, ("low", "high")),
    "int_gaussian": (rnd.IntGaussian, ("mean", "std")),
}
_DIST_OPTIONAL = ("operation", "per_joint", "nominal")

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
}
"""Keys of an experiment's ``train:`` section and their defaults."""


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


def _resolve_path(path_or_name: str | Path) -> Path:
    p = Path(path_or_name)
    if p.suffix in (".yaml", ".yml") or p.exists():
        if not p.is_file():
            raise ConfigError(f"{p}: no such file")
        return p
    presets = list_presets()
    if str(path_or_name) in presets:
        return presets[str(path_or_name)]
    raise ConfigError(f"unknown preset {str(path_or_name)!r}; bundled presets: {sorted(presets)}")


def load(path_or_name: str | Path) -> ActuatorPreset | ThrusterPreset | Experiment:
    """Load and validate a YAML file (a path, or the name of a bundled preset)."""
    path = _resolve_path(path_or_name)
    try:
        doc = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: malformed YAML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    return parse(doc, source=path)


def parse(doc: Any, source: Path | str = "<config>") -> ActuatorPreset | ThrusterPreset | Experiment:
    """Validate an already-parsed YAML document."""
    where = str(source)
    if not isinstance(doc, dict):
        raise ConfigError(f"{where}: the top level must be a mapping with a 'kind' key, got {type(doc).__name__}")
    kind = doc.get("kind")
    name = str(doc.get("name", Path(where).stem))
    desc = str(doc.get("description", ""))
    src = Path(source) if source != "<config>" else None
    if kind == "actuators":
        _only(doc, {"kind", "name", "description", "groups"}, where, "")
        return ActuatorPreset(name, _groups(doc.get("groups"), where, "groups"), desc, src)
    if kind == "thrusters":
        _only(doc, {"kind", "name", "description", "thrusters", "initial_rps"}, where, "")
        from .actuators.thruster import ThrusterCfg

        body = _mapping(doc.get("thrusters"), where, "thrusters")
        cfg = _build(ThrusterCfg, body, where, "thrusters")
        rps = doc.get("initial_rps")
        if rps is not None and not _is_number(rps):
            raise ConfigError(f"{where}: initial_rps must be a number (rev/s), got {rps!r}")
        return ThrusterPreset(name, cfg, None if rps is None else float(rps), desc, src)
    if kind == "experiment":
        _only(doc, {"kind", "name", "description", "task", "task_kwargs", "actuators", "train", "seed"}, where, "")
        task = doc.get("task")
        if not isinstance(task, str) or not task:
            raise ConfigError(f"{where}: 'task' must be a Gymnasium id such as 'actuator_gym/Pendulum-v0', got {task!r}")
        task_kwargs = _mapping(doc.get("task_kwargs", {}), where, "task_kwargs")
        acts = doc.get("actuators")
        actuators = None
        if isinstance(acts, str):
            preset = load(acts if Path(acts).suffix else acts)
            if not isinstance(preset, ActuatorPreset):
                raise ConfigError(f"{where}: actuators: {acts!r} is not an actuator preset")
            actuators = preset.actuators
        elif acts is not None:
            actuators = _groups(acts, where, "actuators")
        train = dict(TRAIN_KEYS)
        tr = _mapping(doc.get("train", {}), where, "train")
        _only(tr, set(TRAIN_KEYS), where, "train.")
        for k, v in tr.items():
            train[k] = _check_train(k, v, where)
        seed = doc.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ConfigError(f"{where}: seed must be a non-negative integer, got {seed!r}")
        return Experiment(name, task, task_kwargs, actuators, train, seed, desc, src)
    raise ConfigError(f"{where}: 'kind' must be one of ['actuators', 'thrusters', 'experiment'], got {kind!r}")


# -- helpers ---------------------------------------------------------------------------------
def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _only(doc: dict, allowed: set[str], where: str, prefix: str) -> None:
    unknown = sorted(set(doc) - allowed)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {[prefix + k for k in unknown]}; allowed: {sorted(allowed)}")


def _mapping(x: Any, where: str, key: str) -> dict:
    if not isinstance(x, dict):
        raise ConfigError(f"{where}: '{key}' must be a mapping, got {type(x).__name__}")
    return x


def _check_train(k: str, v: Any, where: str) -> Any:
    if k == "algo":
        if v != "ppo":
            raise ConfigError(f"{where}: train.algo must be 'ppo', got {v!r}")
        return v
    if k == "net_arch":
        if not isinstance(v, list) or not v or not all(isinstance(i, int) and i > 0 for i in v):
            raise ConfigError(f"{where}: train.net_arch must be a list of positive integers, got {v!r}")
        return v
    if k in ("learning_rate", "gamma"):
        hi = 1.0
        if not _is_number(v) or not (0 < v <= hi):
            raise ConfigError(f"{where}: train.{k} must be a number in (0, {hi}], got {v!r}")
        return float(v)
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ConfigError(f"{where}: train.{k} must be a positive integer, got {v!r}")
    return v


def _value(x: Any, where: str, key: str) -> Any:
    """A numeric field: number, list, {regex: value} mapping, or a distribution mapping."""
    if isinstance(x, dict) and "dist" in x:
        return _dist(x, where, key)
    if isinstance(x, dict):
        return {str(k): _value(v, where, f"{key}.{k}") for k, v in x.items()}
    if isinstance(x, list):
        return [_value(v, where, f"{key}[{i}]") for i, v in enumerate(x)]
    if isinstance(x, str) and x.lower() in ("inf", "+inf", ".inf"):
        return math.inf
    return x


def _dist(x: dict, where: str, key: str) -> rnd.Distribution:
    kind = x.get("dist")
    if kind not in _DISTS:
        raise ConfigError(f"{where}: {key}.dist must be one of {sorted(_DISTS)}, got {kind!r}")
    cls, required = _DISTS[kind]
    _only(x, {"dist", *required, *_DIST_OPTIONAL}, where, f"{key}.")
    missing = [r for r in required if r not in x]
    if missing:
        raise ConfigError(f"{where}: {key}: a {kind} distribution needs {list(required)}; missing {missing}")
    kwargs = {k: x[k] for k in (*required, *_DIST_OPTIONAL) if k in x}
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {key}: {exc}") from None


def _build(cls: type, body: dict, where: str, key: str) -> Any:
    names = {f.name for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(body) - names)
    if unknown:
        raise ConfigError(f"{where}: {key}: unknown key(s) {unknown} for {cls.__name__}; allowed: {sorted(names)}")
    kwargs = {}
    for k, v in body.items():
        if k == "randomization":
            kwargs[k] = {rk: _dist(_mapping(rv, where, f"{key}.randomization.{rk}"), where, f"{key}.randomization.{rk}")
                         for rk, rv in _mapping(v, where, f"{key}.randomization").items()}
        elif k in ("joint_names_expr", "thruster_names_expr") and isinstance(v, str):
            kwargs[k] = [v]
        elif k == "network_file" and isinstance(v, str) and not Path(v).is_absolute() and Path(where).is_file():
            kwargs[k] = str(Path(where).resolve().parent / v)  # relative to the YAML file
        else:
            kwargs[k] = _value(v, where, f"{key}.{k}")
    try:
        cfg = cls(**kwargs)
        if hasattr(cfg, "recipe"):
            recipe = cfg.recipe()  # constructs the parts: validates required fields and tables now
            for part in [recipe.get("delay"), recipe.get("drive"), *recipe.get("clamping", [])]:
                if part is not None:
                    part.validate(cls.__name__)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {key}: {exc}") from None
    return cfg


def _groups(x: Any, where: str, key: str) -> dict[str, Any]:
    groups = _mapping(x, where, key)
    if not groups:
        raise ConfigError(f"{where}: '{key}' must define at least one group")
    table = _model_table()
    out = {}
    for gname, body in groups.items():
        body = dict(_mapping(body, where, f"{key}.{gname}"))
        model = body.pop("model", None)
        if model not in table:
            raise ConfigError(f"{where}: {key}.{gname}.model must be one of {sorted(table)}, got {model!r}")
        out[str(gname)] = _build(table[model], body, where, f"{key}.{gname}")
    return out
