"""Sim-to-sim transfer benchmark: train under several conditions, evaluate on held-out "hardware".

    actuator-gym transfer transfer_pendulum --out out/        # a bundled file, or a path
    report = run_transfer("configs/experiments/transfer_pendulum.yaml", "out/transfer_pendulum")

From a ``kind: transfer`` file (schema: :mod:`actuator_gym._config_transfer`) the pipeline

0. checks the whole file against its task before anything runs (:func:`check_transfer`);
1. fits every ``fitted_net`` hardware condition's learned actuator network (``fit.generate_synthetic_log``
   from the named motor, then ``fit.fit_actuator_net``), cached in ``OUT/nets/<condition>/``;
2. trains one policy per (training condition, seed) through :func:`_train_condition` (the experiment's
   ``engine``) into ``OUT/policies/<condition>/seed_<seed>/``;
3. evaluates every policy deterministically on every training condition (columns ``train:<name>``,
   :func:`train_column`: the in-distribution diagonal and the cross-block) and every hardware
   condition: ``evaluation.episodes`` episodes, env ``i`` reset with seed
   ``evaluation.seed + i`` (the same starts and commands for every policy), each env's first episode;
4. writes ``results.csv`` (one row per policy and condition), ``summary.csv`` / ``summary.md`` (mean and
   95 % confidence interval over seeds) and ``heatmaps.png`` (:mod:`.transfer_report`).

Resumable: a policy folder (or a net folder) is reused when its ``condition.json`` records the same
condition, engine, settings and seed; anything else is trained again. ``condition.json`` is written
last, so an interrupted training is redone. A policy's evaluations are kept beside it
(``evaluations.json``, keyed by the hardware condition and the evaluation settings; dropped when the
policy is trained again): a rerun evaluates only conditions it has not seen.

Metrics per episode (:data:`METRICS`): ``return`` (undiscounted), ``tracking_error`` (mean over the
episode's steps of the task's error, :data:`TRACKING`), ``fell`` (1 when the episode terminated rather
than timed out), and from ``info["actuator_episode"]`` (:mod:`actuator_gym.runtime.episode_stats`, group
``all_joints``) ``energy`` [J], ``saturated_fraction`` and ``peak_abs_effort`` [N·m].
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from .._config_checks import key_path
from .._math import quat_rotate_inverse
from .._safe_io import write_atomic
from ..runtime.episode_stats import ALL_JOINTS, EPISODE_INFO_KEY
from .transfer_report import train_column

__all__ = ["run_transfer", "load_transfer", "check_transfer", "evaluate_policy", "tracking_error", "TRACKING", "METRICS",
           "train_column"]


METRICS = ("return", "tracking_error", "fell", "energy", "saturated_fraction", "peak_abs_effort")
"""Per-episode metrics of an evaluation (module doc)."""
_EPISODE_STATS = ("energy", "saturated_fraction", "peak_abs_effort")
RECORD = "condition.json"
"""The file recording what a policy (or a fitted net) folder was made from."""
EVALUATIONS = "evaluations.json"
"""A policy folder's evaluations so far: ``{condition and evaluation settings (JSON): mean metrics}``."""


def _pendulum_error(task: Any) -> np.ndarray:
    return np.abs(task.angle_error())


def _quadruped_error(task: Any) -> np.ndarray:
    qpos, qvel = np.asarray(task.backend.qpos), np.asarray(task.backend.qvel)
    v_body = quat_rotate_inverse(qpos[:, 3:7], qvel[:, 0:3])
    return np.abs(v_body[:, 0] - task.commands[:, 0])


TRACKING: dict[str, tuple[str, Callable[[Any], np.ndarray]]] = {
    "actuator_gym/Pendulum-v0": ("|angle error| [rad]", _pendulum_error),
    "actuator_gym/Quadruped-v0": ("|vx error| [m/s] (body frame)", _quadruped_error),
}
"""``{task id: (label, fn(task) -> (num_envs,) error)}``: the tracking error of a step, read from the
batched task's state after the step (the one place it is computed)."""


def tracking_error(task_id: str, task: Any) -> np.ndarray:
    """The per-env tracking error of ``task`` (a ``BatchedTask`` of ``task_id``) now (:data:`TRACKING`)."""
    if task_id not in TRACKING:
        raise ValueError(f"transfer: task {task_id!r} has no tracking-error definition; supported: {sorted(TRACKING)}")
    return TRACKING[task_id][1](task)


def load_transfer(path: str | Path, allow_unsafe_checkpoint: bool = False):
    """A validated :class:`~actuator_gym.configs.TransferExperiment` from a file or bundled name."""
    from .. import configs

    exp = configs.load(path, allow_unsafe_checkpoint=allow_unsafe_checkpoint)
    if not isinstance(exp, configs.TransferExperiment):
        raise ValueError(f"{path}: not a transfer file (kind: transfer), got a {type(exp).__name__}")
    if exp.task not in TRACKING:
        raise ValueError(f"{path}: task {exp.task!r} has no tracking-error definition; supported: {sorted(TRACKING)}")
    if exp.engine not in _engines():
        raise ValueError(f"{path}: engine {exp.engine!r} is not available; available: {list(_engines())}")
    return exp


ENGINE_LIBRARIES = {"sb3": "stable_baselines3", "rsl_rl": "rsl_rl", "ray": "ray"}
"""The library each training engine imports (checked installed before anything runs)."""


def check_transfer(exp, settings: Mapping[str, Any] | None = None) -> None:
    """Check the whole file against its task before anything is fitted, trained or written: the
    engine's library is installed (and the ray engine's ``settings``, the file's with the run's
    ``address``, are valid); every condition's env is built once (one world, reset, one step) with its actuators and
    task overrides (a ``fitted_net`` condition: an ideal PD on the net's joints, which must exist) and
    its sensor (columns within the observation); a ``fitted_net`` motor's ``dt`` is the condition's
    physics substep; an rsl_rl symmetry needs the task's mirror. A ``ConfigError`` names the file and
    the condition's key."""
    import importlib.util

    from .. import configs
    from ..actuators.models import IdealPDActuatorCfg
    from ..envs.symmetry import task_mirror
    from ..wrappers.sensor import ObservationSensor
    from .training import make_vec_env

    where = str(exp.source or exp.name)
    if importlib.util.find_spec(ENGINE_LIBRARIES[exp.engine]) is None:
        raise configs.ConfigError(f"{where}: engine {exp.engine!r} needs {ENGINE_LIBRARIES[exp.engine]}, which is not "
                                  f"installed (pip install 'actuator-gym[{exp.engine.replace('_', '-')}]')")
    if exp.engine == "ray" and settings is not None:  # the file's were checked at load; this adds the address
        configs.ray_settings(dict(settings), "run_transfer: ", "settings.")
    conditions = [("train_conditions", n, c) for n, c in exp.train_conditions.items()]
    conditions += [("hardware_conditions", n, c) for n, c in exp.hardware_conditions.items()]
    for key, name, c in conditions:
        kp, acts, net = key_path(key, name), c.actuators, c.fitted_net
        if net is not None:
            kp += ".fitted_net"
            acts = {net["group"]: IdealPDActuatorCfg(joint_names_expr=list(net["joint_names_expr"]),
                                                     stiffness=float(net["motor"]["stiffness"]), damping=float(net["motor"]["kd"]))}
        try:
            vec = make_vec_env(exp.task, 1, acts, **{**exp.task_kwargs, **c.task_kwargs})
        except (TypeError, ValueError, KeyError) as exc:
            raise configs.ConfigError(f"{where}: {kp}: {exc}") from None
        try:
            dt = vec.unwrapped.physics_dt
            if net is not None and not math.isclose(net["motor"]["dt"], dt, rel_tol=1e-9):
                raise configs.ConfigError(f"{where}: {kp}.motor.dt must be the task's physics substep {dt!r} s (the net's "
                                          f"history counts substeps), got {net['motor']['dt']!r}")
            if c.sensor is not None:
                try:
                    vec = ObservationSensor(vec, **dict(c.sensor))
                except ValueError as exc:
                    raise configs.ConfigError(f"{where}: {kp}.sensor: {exc}") from None
            if key == "train_conditions" and exp.engine == "rsl_rl" and exp.train["symmetry"] != "none":
                try:
                    task_mirror(vec)
                except ValueError as exc:
                    raise configs.ConfigError(f"{where}: train.symmetry = {exp.train['symmetry']!r} ({kp}): {exc}") from None
            try:
                vec.reset(seed=exp.eval_seed)
                vec.step(np.zeros(vec.action_space.shape, vec.action_space.dtype))
            except (TypeError, ValueError, KeyError) as exc:
                raise configs.ConfigError(f"{where}: {kp}: {exc}") from None
        finally:
            vec.close()


# -- training ----------------------------------------------------------------------------------
def _engines() -> tuple[str, ...]:
    """The training engines :func:`_train_condition` can run."""
    from .engines import ENGINES

    return tuple(ENGINES)


def _train_condition(engine: str, task: str, out_dir: Path, *, actuators, task_kwargs, seed: int,
                     settings: Mapping[str, Any], progress: bool) -> dict[str, Any]:
    """Train one policy (the one place that calls a training engine)."""
    from .engines import train_policy

    return train_policy(engine, task, out_dir, actuators=actuators, task_kwargs=task_kwargs, seed=seed,
                        settings=dict(settings), progress=progress)


def _canon(x: Any) -> Any:
    """A JSON-able, order-stable form of a condition (configs are dataclasses: their repr)."""
    return json.loads(json.dumps(x, sort_keys=True, default=repr))


def _matches(folder: Path, record: dict[str, Any], files: tuple[str, ...]) -> bool:
    f = folder / RECORD
    if not f.is_file() or not all((folder / n).is_file() for n in files):
        return False
    try:
        return json.loads(f.read_text()) == record
    except (ValueError, OSError):
        return False


def _fit_net(name: str, spec: Mapping[str, Any], folder: Path, progress: bool) -> tuple[dict[str, Any], bool]:
    """The actuators of a ``fitted_net`` condition, fitting the net into ``folder`` unless cached."""
    from ..actuators.net_models import ActuatorNetMLPCfg
    from . import fit

    record = _canon({"fitted_net": dict(spec)})
    fitted = not _matches(folder, record, ("actuator_net.onnx", "report.json"))
    if fitted:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / RECORD).unlink(missing_ok=True)
        m = dict(spec["motor"])
        log = fit.generate_synthetic_log(folder / "log.npz", seed=0, **m, **dict(spec["log"]))
        fit.fit_actuator_net(log, folder, "mlp", progress=progress, **dict(spec["fit"]))
        write_atomic(folder / RECORD, json.dumps(record, indent=1))
    m = spec["motor"]
    cfg = ActuatorNetMLPCfg(joint_names_expr=list(spec["joint_names_expr"]), network_file=str(folder / "actuator_net.onnx"),
                            saturation_effort=float(m["saturation_effort"]), actuator_effort_limit=float(m["effort_limit"]),
                            actuator_velocity_limit=float(m["velocity_limit"]))
    return {spec["group"]: cfg}, fitted


# -- evaluation --------------------------------------------------------------------------------
def evaluate_policy(policy: Callable[[np.ndarray], np.ndarray], task: str, actuators: Mapping[str, Any] | None,
                    task_kwargs: Mapping[str, Any], episodes: int, seed: int,
                    sensor: Mapping[str, Any] | None = None) -> dict[str, np.ndarray]:
    """``{metric: (episodes,)}`` (:data:`METRICS`) of ``policy`` on ``episodes`` envs of the batched
    ``task``, reset together with ``seed`` (env ``i``: seed + i), each env's first episode; ``sensor``:
    :class:`~actuator_gym.wrappers.sensor.ObservationSensor` arguments for what the policy sees (the
    tracking error is the true state's). Every evaluation starts whole episodes: a ``random_episode_start``
    of ``task_kwargs`` (a training option) is turned off here."""
    from .training import make_vec_env

    vec = make_vec_env(task, episodes, actuators, **{**dict(task_kwargs), "random_episode_start": False})
    env = vec.unwrapped
    if sensor is not None:
        from ..wrappers.sensor import ObservationSensor

        vec = ObservationSensor(vec, **dict(sensor))
    try:
        obs, _ = vec.reset(seed=seed)
        n = episodes
        done = np.zeros(n, bool)
        out = {k: np.zeros(n) for k in METRICS}
        err_sum, steps = np.zeros(n), np.zeros(n)
        while not done.all():
            obs, rew, term, trunc, info = vec.step(policy(obs))
            live = ~done
            out["return"][live] += rew[live]
            err_sum[live] += tracking_error(task, env)[live]
            steps[live] += 1
            ended = live & (term | trunc)
            if ended.any():
                out["fell"][ended & term] = 1.0
                rec = info[EPISODE_INFO_KEY][ALL_JOINTS]
                for k in _EPISODE_STATS:
                    out[k][ended] = np.asarray(rec[k])[ended]
            done |= ended
        out["tracking_error"] = err_sum / np.maximum(steps, 1)
        return out
    finally:
        vec.close()


# -- the pipeline ------------------------------------------------------------------------------
def run_transfer(path: str | Path, out_dir: str | Path, *, allow_unsafe_checkpoint: bool = False, progress: bool = True,
                 log: Callable[[str], None] = print, ray_address: str | None = None) -> dict[str, Any]:
    """Run the benchmark of the transfer file ``path`` into ``out_dir`` (module doc). Returns
    ``{"trained": [...], "reused": [...], "fitted": [...], "evaluated": int, "rows": [...], "summary": [...],
    "files": [...], "wall_s"}`` (``evaluated``: the (policy, condition) evaluations run, not read from a cache).
    ``ray_address``: the Ray cluster a file with ``engine: ray`` trains on (None: a local one); a file
    cannot name one. The whole file is checked first (:func:`check_transfer`)."""
    from . import transfer_report
    from .progress import Progress
    from .training import SavedPolicy

    exp = load_transfer(path, allow_unsafe_checkpoint)
    settings = dict(exp.train)
    if ray_address is not None:
        if exp.engine != "ray":
            raise ValueError(f"run_transfer: ray_address: only for a file with engine: ray; {path} trains with {exp.engine!r}")
        settings["address"] = ray_address
    check_transfer(exp, settings)
    out = Path(out_dir)
    t0 = time.perf_counter()
    hardware: dict[str, tuple[Any, dict[str, Any], Any, Any]] = {}  # actuators, task kwargs, sensor, fitted_net
    fitted = []
    for name, c in exp.hardware_conditions.items():
        acts = c.actuators
        if c.fitted_net is not None:
            acts, new = _fit_net(name, c.fitted_net, out / "nets" / name, progress)
            if new:
                fitted.append(name)
                log(f"fitted the actuator net of {name} ({out / 'nets' / name})")
        hardware[name] = (acts, {**exp.task_kwargs, **c.task_kwargs}, c.sensor, c.fitted_net)
    trained, reused, policies = [], [], []
    columns: dict[str, tuple[Any, dict[str, Any], Any, Any]] = {}  # the training conditions', then the hardware's
    for name, c in exp.train_conditions.items():
        kwargs = {**exp.task_kwargs, **c.task_kwargs}
        for seed in exp.seeds:
            folder = out / "policies" / name / f"seed_{seed}"
            record = _canon({"task": exp.task, "engine": exp.engine, "train": exp.train, "seed": seed,
                             "actuators": c.actuators, "task_kwargs": kwargs})
            if _matches(folder, record, ("policy.json", "policy.pt")):
                reused.append((name, seed))
            else:
                (folder / RECORD).unlink(missing_ok=True)
                (folder / EVALUATIONS).unlink(missing_ok=True)
                log(f"training {name} seed {seed} ({exp.engine}) -> {folder}")
                _train_condition(exp.engine, exp.task, folder, actuators=c.actuators, task_kwargs=kwargs, seed=seed,
                                 settings=settings, progress=progress)
                write_atomic(folder / RECORD, json.dumps(record, indent=1))
                trained.append((name, seed))
            policies.append((name, seed, folder))
        columns[train_column(name)] = (c.actuators, kwargs, None, None)
    columns.update(hardware)
    rows, evaluated = [], 0
    bar = Progress(len(policies) * len(columns), f"evaluating on {len(columns)} condition(s)", "evaluation", progress)
    for name, seed, folder in policies:
        policy = SavedPolicy.load(folder)
        cache_file = folder / EVALUATIONS
        try:
            cache = json.loads(cache_file.read_text()) if cache_file.is_file() else {}
        except (ValueError, OSError):  # a damaged cache is dropped: the evaluations are run again
            cache = {}
        for hw, (acts, kwargs, sensor, net) in columns.items():
            key = json.dumps(_canon({"actuators": acts, "task_kwargs": kwargs, "sensor": sensor, "fitted_net": net,
                                     "episodes": exp.episodes, "seed": exp.eval_seed}), sort_keys=True)
            if key not in cache:
                m = evaluate_policy(policy, exp.task, acts, kwargs, exp.episodes, exp.eval_seed, sensor)
                cache[key] = {k: float(np.mean(v)) for k, v in m.items()}
                evaluated += 1
            rows.append({"train_condition": name, "seed": seed, "hardware_condition": hw, **cache[key]})
            bar.update(1)
        write_atomic(cache_file, json.dumps(cache, indent=1))
    bar.close()
    files = transfer_report.write(out, rows, exp, TRACKING[exp.task][0])
    wall = time.perf_counter() - t0
    summary = transfer_report.summarize(rows)
    write_atomic(out / "transfer_summary.json", json.dumps(
        {"experiment": exp.name, "task": exp.task, "engine": exp.engine, "seeds": exp.seeds, "episodes": exp.episodes,
         "trained": trained, "reused": reused, "fitted": fitted, "evaluated": evaluated, "wall_s": wall}, indent=1))
    return {"trained": trained, "reused": reused, "fitted": fitted, "evaluated": evaluated, "rows": rows, "summary": summary, "files": files,
            "wall_s": wall, "out_dir": str(out)}
