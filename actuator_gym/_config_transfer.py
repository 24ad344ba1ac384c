"""The ``kind: transfer`` file: a sim-to-sim transfer benchmark (read by ``actuator-gym transfer``).

Parsed by :func:`actuator_gym.configs.load` like every other file (same safe loader, same limits);
this module holds the schema only. The runner is :mod:`actuator_gym.tools.transfer`.

.. code-block:: yaml

    kind: transfer
    task: actuator_gym/Pendulum-v0
    task_kwargs: {}                 # shared by every condition (a condition's own task_kwargs win)
    engine: sb3                     # training engine (sb3 | rsl_rl | ray, as `actuator-gym train --engine`)
    train: {total_timesteps: 60000} # the engine's settings, checked here (configs.TRAIN_SETTINGS, RAY_TRAIN_KEYS;
                                    # never a Ray cluster `address`: that comes from code or --address)
    seeds: 3                        # N (seeds 0..N-1) or an explicit list of seeds >= 0
    evaluation: {episodes: 8, seed: 10000}
    train_conditions:               # >= 1: {name: condition}
      ideal:    {description: ..., actuators: <preset name | file | inline groups>, task_kwargs: {...}}
    hardware_conditions:            # >= 1: {name: condition}, none equal to a training condition
      slow_bus: {actuators: ..., task_kwargs: {...}}
      learned:  {fitted_net: {...}} # a learned actuator net, fitted inside the pipeline
      laggy_encoders: {actuators: ..., sensor: {columns: [0, 1, 2], max_delay: 3, noise_std: 0.01}}

``name`` (default: the file's name) and the condition names name output folders: letters, digits,
``_`` and ``-`` only. A condition without ``actuators`` uses the task's default actuators. ``fitted_net`` (hardware only):
``group`` (the group name), ``joint_names_expr`` (regexes), ``motor`` (the analytic motor the net is
fitted to: :data:`FIT_MOTOR_KEYS`, the keyword arguments of ``fit.generate_synthetic_log``; ``dt`` [s]
must be the task's physics substep, checked against the task before anything runs), ``log``
(:data:`FIT_LOG_KEYS`: log size, at most :data:`FIT_MAX_SAMPLES` samples) and ``fit`` (:data:`FIT_KEYS`:
options of ``fit.fit_actuator_net``; at most :data:`FIT_MAX_LAYERS` hidden layers and
:data:`FIT_MAX_INPUT_VALUES` input values). The net drives the group behind the DC-motor
clamp of the motor it imitates (``saturation_effort``, ``effort_limit``, ``velocity_limit``).
``sensor`` (hardware only, :data:`SENSOR_KEYS`): latency [control steps], bias and noise on the
observation columns the policy reads (:class:`~actuator_gym.wrappers.sensor.ObservationSensor`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ._checks import SENSOR_MAX_STD
from ._config_checks import ConfigError, integer, key_path, mapping, only

__all__ = ["TransferCondition", "TransferExperiment", "parse_transfer", "FIT_MOTOR_KEYS", "FIT_LOG_KEYS", "FIT_KEYS", "SENSOR_KEYS",
           "ENGINE_NAMES", "EVALUATION_KEYS", "MAX_SEEDS", "MAX_CONDITIONS", "FIT_MAX_LAYERS", "FIT_MAX_SAMPLES",
           "FIT_MAX_INPUT_VALUES"]

ENGINE_NAMES = ("sb3", "rsl_rl", "ray")
"""Values of ``engine:`` (the shared ``actuator-gym train --engine`` names)."""

FIT_MOTOR_KEYS = {
    "stiffness": "N·m/rad", "kd": "N·m·s/rad", "saturation_effort": "N·m", "effort_limit": "N·m",
    "velocity_limit": "rad/s", "delay_steps": "substeps", "inertia": "kg·m²", "damping": "N·m·s/rad", "dt": "s",
}
"""``fitted_net.motor`` keys (all required) and their units: the motor, delay and 1-DOF load of the log."""
FIT_LOG_KEYS = {"num_steps": (100, 10**6), "num_sequences": (1, 1024)}
"""``fitted_net.log`` keys and their integer ranges (defaults: 3000 steps, 8 sequences)."""
FIT_KEYS = {"epochs": (1, 100_000), "hidden": (1, 4096), "input_idx": (0, 1024), "batch_size": (1, 2**24)}
"""``fitted_net.fit`` keys and their integer ranges (``hidden`` / ``input_idx``: lists of them); ``lr``: a number in (0, 1]."""
FIT_MAX_LAYERS = 16
"""Most hidden layers of a fitted net (``fitted_net.fit.hidden``; ``actuator-gym fit --hidden`` too)."""
FIT_MAX_SAMPLES = 2**20
"""Most samples of a fitted net's synthetic log, ``log.num_steps * log.num_sequences`` (4 float64 columns: 32 MiB)."""
FIT_MAX_INPUT_VALUES = 2**24
"""Most values of the fit's input matrix, ``samples * 2 * len(fit.input_idx)`` (128 MiB in float64)."""
FIT_DEFAULT_INPUTS = 4
"""``len(input_idx)`` of ``fit.fit_actuator_net``'s default ``input_idx`` (0, 1, 2, 3)."""
EVALUATION_KEYS = {"episodes": 8, "seed": 10_000}
"""``evaluation:`` keys and their defaults: episodes per (policy, hardware condition), the first reset seed."""
MAX_SEEDS = 64
"""Most seeds per training condition."""
MAX_CONDITIONS = 64
"""Most training (and hardware) conditions."""


@dataclass
class TransferCondition:
    """One training or hardware condition: actuators (None: the task's default) and task overrides."""

    name: str
    actuators: dict[str, Any] | None = None
    task_kwargs: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    fitted_net: dict[str, Any] | None = None
    sensor: dict[str, Any] | None = None


@dataclass
class TransferExperiment:
    """A validated ``kind: transfer`` file."""

    name: str
    task: str
    task_kwargs: dict[str, Any]
    engine: str
    train: dict[str, Any]
    seeds: list[int]
    episodes: int
    eval_seed: int
    train_conditions: dict[str, TransferCondition]
    hardware_conditions: dict[str, TransferCondition]
    description: str = ""
    source: Path | None = None


def _fitted_net(x: Any, where: str, kp: str) -> dict[str, Any]:
    x = mapping(x, where, kp)
    only(x, {"group", "joint_names_expr", "motor", "log", "fit"}, where, kp)
    group = x.get("group", "all")
    if not isinstance(group, str) or not group:
        raise ConfigError(f"{where}: {kp}.group must be a non-empty string, got {group!r}")
    joints = x.get("joint_names_expr", [".*"])
    if not isinstance(joints, list) or not joints or not all(isinstance(j, str) for j in joints):
        raise ConfigError(f"{where}: {kp}.joint_names_expr must be a non-empty list of regular expressions, got {joints!r}")
    motor = mapping(x.get("motor"), where, f"{kp}.motor")
    only(motor, FIT_MOTOR_KEYS, where, f"{kp}.motor")
    missing = sorted(set(FIT_MOTOR_KEYS) - set(motor))
    if missing:
        raise ConfigError(f"{where}: {kp}.motor: missing key(s) {missing}; units: {FIT_MOTOR_KEYS}")
    for k, v in motor.items():
        if k == "delay_steps":
            integer(v, where, f"{kp}.motor.delay_steps", 0, 1000)
            continue
        ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        if not ok or v < 0 or (v == 0 and k not in ("damping", "kd")):
            rule = ">= 0" if k in ("damping", "kd") else "> 0"
            raise ConfigError(f"{where}: {kp}.motor.{k} must be a finite number {rule} [{FIT_MOTOR_KEYS[k]}], got {v!r}")
    log = mapping(x.get("log", {}), where, f"{kp}.log")
    only(log, FIT_LOG_KEYS, where, f"{kp}.log")
    for k, v in log.items():
        integer(v, where, f"{kp}.log.{k}", *FIT_LOG_KEYS[k])
    samples = log.get("num_steps", 3000) * log.get("num_sequences", 8)
    if samples > FIT_MAX_SAMPLES:
        raise ConfigError(f"{where}: {kp}.log: num_steps * num_sequences = {samples} samples; allowed: at most {FIT_MAX_SAMPLES}")
    fit = mapping(x.get("fit", {}), where, f"{kp}.fit")
    only(fit, {*FIT_KEYS, "lr"}, where, f"{kp}.fit")
    for k, v in fit.items():
        if k == "lr":
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v <= 1:
                raise ConfigError(f"{where}: {kp}.fit.lr must be a number in (0, 1], got {v!r}")
        elif k in ("hidden", "input_idx"):
            if not isinstance(v, list) or not v:
                raise ConfigError(f"{where}: {kp}.fit.{k} must be a non-empty list of integers in {list(FIT_KEYS[k])}, got {v!r}")
            if k == "hidden" and len(v) > FIT_MAX_LAYERS:
                raise ConfigError(f"{where}: {kp}.fit.hidden must list 1 to {FIT_MAX_LAYERS} layer widths, got {len(v)}")
            for i, w in enumerate(v):
                integer(w, where, f"{kp}.fit.{k}[{i}]", *FIT_KEYS[k])
            if k == "input_idx" and len(set(v)) != len(v):
                raise ConfigError(f"{where}: {kp}.fit.input_idx must not repeat a history index, got {v}")
        else:
            integer(v, where, f"{kp}.fit.{k}", *FIT_KEYS[k])
    values = samples * 2 * len(fit.get("input_idx", range(FIT_DEFAULT_INPUTS)))
    if values > FIT_MAX_INPUT_VALUES:
        raise ConfigError(f"{where}: {kp}: num_steps * num_sequences * 2 * len(fit.input_idx) = {values} input values; "
                          f"allowed: at most {FIT_MAX_INPUT_VALUES}")
    return {"group": group, "joint_names_expr": list(joints), "motor": dict(motor), "log": dict(log), "fit": dict(fit)}


SENSOR_KEYS = ("columns", "min_delay", "max_delay", "noise_std", "bias_std")
"""``sensor:`` keys (hardware only): :class:`~actuator_gym.wrappers.sensor.ObservationSensor`'s arguments."""


def _sensor(x: Any, where: str, kp: str) -> dict[str, Any]:
    x = mapping(x, where, kp)
    only(x, SENSOR_KEYS, where, kp)
    cols = x.get("columns")
    if not isinstance(cols, list) or not cols:
        raise ConfigError(f"{where}: {kp}.columns must be a non-empty list of observation indices >= 0, got {cols!r}")
    for i, c in enumerate(cols):
        integer(c, where, f"{kp}.columns[{i}]", 0, 2**16)
    lo = integer(x.get("min_delay", 0), where, f"{kp}.min_delay [control steps]", 0, 10_000)
    hi = integer(x.get("max_delay", lo), where, f"{kp}.max_delay [control steps]", 0, 10_000)
    if lo > hi:
        raise ConfigError(f"{where}: {kp}: min_delay ({lo}) must be <= max_delay ({hi}) [control steps]")
    out: dict[str, Any] = {"columns": list(cols), "min_delay": lo, "max_delay": hi}
    for k in ("noise_std", "bias_std"):
        v = x.get(k, 0.0)
        vals = v if isinstance(v, list) else [v]
        ok = len(vals) in (1, len(cols)) and all(isinstance(a, (int, float)) and not isinstance(a, bool) and 0 <= a <= SENSOR_MAX_STD
                                                for a in vals)
        if not ok:
            raise ConfigError(f"{where}: {kp}.{k} must be a number in [0, {SENSOR_MAX_STD:g}] (SENSOR_MAX_STD) or "
                              f"{len(cols)} of them (one per column), got {v!r}")
        out[k] = v
    return out


def _folder_name(name: Any) -> bool:
    """Whether ``name`` may name an output folder: letters, digits, '_' and '-' only (no '/', no '..')."""
    return isinstance(name, str) and name.replace("_", "").replace("-", "").isalnum()


def _conditions(x: Any, where: str, key: str, actuators: Callable[[Any, str], dict], hardware: bool) -> dict[str, TransferCondition]:
    x = mapping(x, where, key)
    if not 1 <= len(x) <= MAX_CONDITIONS:
        raise ConfigError(f"{where}: '{key}' must define 1 to {MAX_CONDITIONS} conditions, got {len(x)}")
    out = {}
    allowed = {"description", "actuators", "task_kwargs"} | ({"fitted_net", "sensor"} if hardware else set())
    for name, body in x.items():
        kp = key_path(key, name)
        if not _folder_name(name):
            raise ConfigError(f"{where}: {kp}: condition names must be letters, digits, '_' or '-' (they name folders), got {name!r}")
        body = mapping(body, where, kp)
        only(body, allowed, where, kp)
        if "fitted_net" in body and "actuators" in body:
            raise ConfigError(f"{where}: {kp}: give either 'actuators' or 'fitted_net', not both")
        desc = body.get("description", "")
        if not isinstance(desc, str):
            raise ConfigError(f"{where}: {kp}.description must be a string, got {type(desc).__name__}")
        tk = dict(mapping(body.get("task_kwargs", {}), where, f"{kp}.task_kwargs"))
        if "actuators" in tk:
            raise ConfigError(f"{where}: {kp}.task_kwargs.actuators is not allowed; give them under {kp}.actuators")
        acts = actuators(body["actuators"], f"{kp}.actuators") if body.get("actuators") is not None else None
        net = _fitted_net(body["fitted_net"], where, f"{kp}.fitted_net") if "fitted_net" in body else None
        sensor = _sensor(body["sensor"], where, f"{kp}.sensor") if "sensor" in body else None
        out[name] = TransferCondition(name, acts, tk, desc, net, sensor)
    return out


def parse_transfer(
    doc: dict, where: str, name: str, desc: str, src: Path | None,
    actuators: Callable[[Any, str], dict], check_train: Callable[[str, dict], dict],
) -> TransferExperiment:
    """Validate a ``kind: transfer`` document (see the module doc). ``actuators(value, key)`` builds an
    ``actuators:`` entry (preset name, file or inline groups); ``check_train(engine, train)`` gives the
    engine's full settings, checked (``configs.train_settings`` / ``configs.ray_settings``)."""
    if not _folder_name(name):
        raise ConfigError(f"{where}: 'name' must be letters, digits, '_' or '-' (it names the output folder), got {name!r}; "
                          "the default is the file's name")
    only(doc, {"kind", "name", "description", "task", "task_kwargs", "engine", "train", "seeds", "evaluation",
                "train_conditions", "hardware_conditions"}, where, "<top level>")
    task = doc.get("task")
    if not isinstance(task, str) or not task.rsplit("-v", 1)[-1].isdigit():
        raise ConfigError(f"{where}: 'task' must be a Gymnasium id such as 'actuator_gym/Pendulum-v0', got {task!r}")
    task_kwargs = dict(mapping(doc.get("task_kwargs", {}), where, "task_kwargs"))
    if "actuators" in task_kwargs:
        raise ConfigError(f"{where}: task_kwargs.actuators is not allowed; give actuators per condition")
    engine = doc.get("engine", "sb3")
    if engine not in ENGINE_NAMES:
        raise ConfigError(f"{where}: engine must be one of {list(ENGINE_NAMES)}, got {engine!r}")
    tr = mapping(doc.get("train", {}), where, "train")
    train = check_train(engine, dict(tr))
    seeds = doc.get("seeds", 3)
    if isinstance(seeds, list):
        if not 1 <= len(seeds) <= MAX_SEEDS:
            raise ConfigError(f"{where}: seeds must list 1 to {MAX_SEEDS} seeds, got {len(seeds)}")
        seeds = [integer(s, where, f"seeds[{i}]", 0, 2**31 - 1) for i, s in enumerate(seeds)]
        if len(set(seeds)) != len(seeds):
            raise ConfigError(f"{where}: seeds must not repeat a seed, got {seeds}")
    else:
        seeds = list(range(integer(seeds, where, "seeds", 1, MAX_SEEDS)))
    ev = mapping(doc.get("evaluation", {}), where, "evaluation")
    only(ev, EVALUATION_KEYS, where, "evaluation")
    episodes = integer(ev.get("episodes", EVALUATION_KEYS["episodes"]), where, "evaluation.episodes", 1, 4096)
    eval_seed = integer(ev.get("seed", EVALUATION_KEYS["seed"]), where, "evaluation.seed", 0, 2**31 - 1)
    trains = _conditions(doc.get("train_conditions"), where, "train_conditions", actuators, hardware=False)
    hards = _conditions(doc.get("hardware_conditions"), where, "hardware_conditions", actuators, hardware=True)
    for h, hc in hards.items():
        for t, tc in trains.items():
            if hc.fitted_net is None and hc.sensor is None and repr((hc.actuators, hc.task_kwargs)) == repr((tc.actuators, tc.task_kwargs)):
                raise ConfigError(f"{where}: hardware_conditions.{h} equals train_conditions.{t}; a hardware condition "
                                  "must be held out (differ from every training condition)")
    return TransferExperiment(name, task, task_kwargs, engine, train, seeds, episodes, eval_seed, trains, hards, desc, src)
