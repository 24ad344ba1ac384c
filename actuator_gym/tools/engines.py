"""Training engines behind one function: :func:`train_policy`.

    from actuator_gym.tools.engines import train_policy
    report = train_policy("rsl_rl", "actuator_gym/Pendulum-v0", "out/pendulum",
                          settings={"num_envs": 64, "total_timesteps": 100_000})

:data:`ENGINES` maps an engine name to its trainer; every trainer takes
``(task, out_dir, *, actuators, task_kwargs, seed, settings, progress)`` and writes into
``out_dir``:

* ``policy.json`` + ``policy.pt`` -- the deterministic actor in the safe format
  (:class:`~actuator_gym.tools.training.SavedPolicy`, ``actuator-gym rollout --policy OUT``);
* ``learning_curve.csv`` (``timesteps,mean_eval_return``) and ``learning_curve.png`` -- the
  deterministic evaluation (:func:`~actuator_gym.tools.training.evaluate`) every ``eval_every``
  env steps, at 0 and after the last update;
* the engine's own resume file (``sb3_model.zip``, ``rsl_rl_model.pt``: pickle-bearing formats,
  load them only from folders you trust);

and :func:`train_policy` adds ``summary.json`` (:data:`SUMMARY_KEYS` and the engine's own fields) last:
a folder with ``summary.json`` holds one finished run's files, all of them. Before its first write an
engine removes an earlier run's outputs from ``out_dir``
(:func:`~actuator_gym.tools.training.prepare_run_dir`: :data:`~actuator_gym.tools.training.TRAIN_OUTPUTS`,
``summary.json`` first), and every file is written atomically (a temporary file renamed over the
target: a symbolic link there is replaced, never written through; ``logs/`` must not be a link).
``settings`` holds the engine's knobs (:data:`actuator_gym.configs.TRAIN_SETTINGS`): for ``sb3`` the
keyword arguments of :func:`~actuator_gym.tools.training.train_ppo`, for ``rsl_rl``
:data:`actuator_gym.configs.RSL_RL_TRAIN_KEYS`, for ``ray``
:data:`actuator_gym.tools.ray_engine.RAY_SETTINGS` (docs/distributed.md); they are checked (unknown
keys, domains) before anything is written.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable, Mapping

from .. import configs
from .._safe_io import write_atomic

__all__ = ["ENGINES", "SUMMARY_FILE", "SUMMARY_KEYS", "train_policy"]

SUMMARY_FILE = "summary.json"
SUMMARY_KEYS = ("engine", "task", "seed", "timesteps", "wall_s", "final_eval_return", "settings", "curve")
"""Fields every ``summary.json`` holds (``curve``: ``[[timesteps, mean_eval_return], ...]``,
``settings``: every setting the run used); engines add their own (``resume_file``, ...)."""


def _sb3(task, out_dir, *, actuators, task_kwargs, seed, settings, progress) -> dict[str, Any]:
    from .training import train_ppo

    return train_ppo(task, out_dir, actuators=actuators, task_kwargs=task_kwargs, seed=seed, progress=progress, **settings)


def _rsl_rl(task, out_dir, *, actuators, task_kwargs, seed, settings, progress) -> dict[str, Any]:
    from .train_rsl_rl import train_rsl_rl

    return train_rsl_rl(task, out_dir, actuators=actuators, task_kwargs=task_kwargs, seed=seed, settings=settings,
                        progress=progress)


def _ray(task, out_dir, *, actuators, task_kwargs, seed, settings, progress) -> dict[str, Any]:
    from .ray_engine import train_ray  # ray is imported there, lazily: an optional extra

    return train_ray(task, out_dir, actuators=actuators, task_kwargs=task_kwargs, seed=seed, settings=settings,
                     progress=progress)


ENGINES: dict[str, Callable[..., dict[str, Any]]] = {"sb3": _sb3, "rsl_rl": _rsl_rl, "ray": _ray}
"""``{engine name: trainer}`` (see the module docstring for the trainer's contract)."""


def _json_safe(x: Any) -> Any:
    if isinstance(x, Mapping):
        return {str(k): _json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_safe(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if hasattr(x, "item") and callable(x.item):  # numpy / torch scalars
        return _json_safe(x.item())
    return x


def train_policy(engine: str, task: str, out_dir: str | Path, *, actuators: Mapping[str, Any] | None = None,
                 task_kwargs: Mapping[str, Any] | None = None, seed: int = 0, settings: Mapping[str, Any] | None = None,
                 progress: bool = True) -> dict[str, Any]:
    """Train a policy for ``task`` with ``engine`` (a key of :data:`ENGINES`) into ``out_dir``.

    ``settings`` are laid over the engine's defaults after checking (``ValueError`` naming
    ``settings.<key>`` and the allowed keys / values; an unknown engine names the engines), before
    anything is written. Returns the engine's report with ``summary`` (what ``summary.json`` holds)."""
    if not isinstance(engine, str) or engine not in ENGINES:
        raise ValueError(f"train_policy: engine must be one of {sorted(ENGINES)}, got {engine!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise ValueError(f"train_policy: seed must be an integer in [0, 2**63), got {seed!r}")
    values = dict(settings or {})
    full = configs.train_settings(engine, values, "train_policy: ") if engine in configs.TRAIN_SETTINGS else values
    out = Path(out_dir)
    report = ENGINES[engine](task, out, actuators=actuators, task_kwargs=dict(task_kwargs or {}), seed=seed,
                             settings=full, progress=progress)
    curve = [(int(s), float(r)) for s, r in report["curve"]]
    summary = {
        "engine": engine, "task": task, "seed": seed, "timesteps": int(report["timesteps"]),
        "wall_s": float(report["wall_s"]), "final_eval_return": curve[-1][1],
        # an engine that checks its own settings (not in configs.TRAIN_SETTINGS: ray) reports them in full
        "settings": full if engine in configs.TRAIN_SETTINGS else report.get("settings", full),
        "curve": curve,
        **{k: v for k, v in report.items() if k not in SUMMARY_KEYS and k not in ("out_dir", "log_dir")},
    }
    if "log_dir" in report:  # relative to out_dir: the folder can move
        summary["log_dir"] = str(Path(report["log_dir"]).relative_to(out)) if Path(report["log_dir"]).is_relative_to(out) else report["log_dir"]
    summary = _json_safe(summary)
    write_atomic(out / SUMMARY_FILE, json.dumps(summary, indent=1))  # last: the run is complete
    return {**report, "engine": engine, "summary": summary}
