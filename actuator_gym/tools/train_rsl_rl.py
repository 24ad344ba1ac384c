"""PPO training through rsl_rl's own ``OnPolicyRunner`` on a task's native vector env.

Read top to bottom, one run is:

1. the settings (:data:`actuator_gym.configs.RSL_RL_TRAIN_KEYS` under the caller's values) become
   rsl_rl's train config: the runner's ``num_steps_per_env``, ``PPO``'s arguments, an MLP actor with
   a Gaussian head and an MLP critic, both with observation normalization when asked;
2. the vector env (``gymnasium.make_vec``, the task's own batched class) reaches the runner through
   :func:`actuator_gym.adapters.rsl_rl`; torch is seeded and runs one thread;
3. one ``runner.learn`` of whole iterations (``num_envs * num_steps_per_env`` env steps each);
   after each iteration's update (where the runner calls its logger) the deterministic actor is
   written in the safe format and evaluated with :func:`~actuator_gym.tools.training.evaluate` on a
   single env, every ``eval_every`` steps (the same evaluation as the Stable-Baselines3 engine);
   with ``symmetry`` set, rsl_rl's symmetry extension mirrors the samples through the task's
   reflection (:func:`actuator_gym.adapters.rsl_rl_mirror`);
4. the files: ``policy.json`` + ``policy.pt`` (read by ``SavedPolicy.load``, normalizer
   included), ``rsl_rl_model.pt`` (rsl_rl's own checkpoint: actor, critic, optimizer, iteration;
   ``OnPolicyRunner.load`` resumes from it -- a pickle-bearing file, load it only from a folder you
   trust), ``learning_curve.csv`` / ``.png``, and rsl_rl's TensorBoard log in ``logs/`` when
   ``tensorboard`` is installed (its ``Train/``, ``Loss/``, ``Perf/`` keys, the env's
   ``info["log"]`` and the actuator statistics ``Episode_Actuator/<group>/<stat>``).

The deterministic policy of rsl_rl (``get_inference_policy()``) is
``mlp((obs - mean) / (std + eps))`` clipped to the action bounds by the adapter; ``SavedPolicy``
computes exactly that from the saved files.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import time
from pathlib import Path
from typing import Any, Mapping

import torch

from .. import configs
from .._safe_io import atomic_path, output_dir
from ..envs.symmetry import task_mirror
from .training import (LOG_DIR, SavedPolicy, evaluate, log_formats, make_env, make_vec_env, prepare_run_dir, save_policy,
                       torch_threads, write_learning_curve)

__all__ = ["train_rsl_rl", "RSL_RL_MODEL_FILE", "runner_config", "saved_actor"]

RSL_RL_MODEL_FILE = "rsl_rl_model.pt"
"""rsl_rl's own checkpoint beside the safe policy files (``OnPolicyRunner.load`` reads it; being a
pickle-bearing format, load it only from a folder you trust)."""


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the OS has one)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def runner_config(settings: Mapping[str, Any]) -> dict[str, Any]:
    """rsl_rl 5.x's ``OnPolicyRunner`` train config from our flat settings (all keys present)."""
    mlp = {"class_name": "rsl_rl.models.MLPModel", "activation": settings["activation"],
           "obs_normalization": settings["obs_normalization"]}
    ppo_keys = ("num_learning_epochs", "num_mini_batches", "learning_rate", "schedule", "desired_kl", "clip_param",
                "gamma", "lam", "entropy_coef", "value_loss_coef", "max_grad_norm")
    algorithm = {"class_name": "rsl_rl.algorithms.PPO", **{k: settings[k] for k in ppo_keys}}
    mode = settings["symmetry"]
    if mode != "none":
        algorithm["symmetry_cfg"] = {"use_data_augmentation": mode in ("augment", "both"),
                                     "use_mirror_loss": mode in ("mirror_loss", "both"),
                                     "mirror_loss_coeff": settings["mirror_loss_coeff"],
                                     "data_augmentation_func": "actuator_gym.adapters:rsl_rl_mirror"}
    return {
        "num_steps_per_env": settings["num_steps_per_env"],
        "save_interval": 10**9,  # the runner's own model_<it>.pt only at the first and last iteration
        "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
        "algorithm": algorithm,
        "actor": {**mlp, "hidden_dims": list(settings["actor_hidden_dims"]),
                  "distribution_cfg": {"class_name": "rsl_rl.modules.GaussianDistribution",
                                       "init_std": settings["init_noise_std"]}},
        "critic": {**mlp, "hidden_dims": list(settings["critic_hidden_dims"])},
    }


def saved_actor(actor: torch.nn.Module) -> tuple[dict[str, torch.Tensor], float | None]:
    """An rsl_rl ``MLPModel`` actor's deterministic part in the safe format's names:
    ``({name: tensor}, normalizer epsilon or None)``. Its MLP ``mlp.<i>`` (``Linear`` at even ``i``)
    maps to ``policy_net.<i>``, the last ``Linear`` to ``action_net``."""
    linear = [i for i, m in enumerate(actor.mlp) if isinstance(m, torch.nn.Linear)]
    last = linear[-1]
    state: dict[str, torch.Tensor] = {}
    for i in linear:
        name = "action_net" if i == last else f"policy_net.{i}"
        state[f"{name}.weight"] = actor.mlp[i].weight
        state[f"{name}.bias"] = actor.mlp[i].bias
    if not actor.obs_normalization:
        return state, None
    norm = actor.obs_normalizer
    state["obs_normalizer.mean"], state["obs_normalizer.std"] = norm.mean, norm.std
    return state, float(norm.eps)


def train_rsl_rl(task: str, out_dir: str | Path, *, actuators: Mapping[str, Any] | None = None,
                 task_kwargs: Mapping[str, Any] | None = None, seed: int = 0, settings: Mapping[str, Any] | None = None,
                 progress: bool = True) -> dict[str, Any]:
    """Train PPO with rsl_rl's ``OnPolicyRunner`` on ``task`` and write the policy (safe format),
    ``rsl_rl_model.pt``, ``learning_curve.csv`` and ``learning_curve.png`` into ``out_dir``.

    ``settings``: keys of :data:`actuator_gym.configs.RSL_RL_TRAIN_KEYS` (checked; the others keep
    their defaults). The run trains whole iterations: at least ``total_timesteps`` env steps, rounded
    up to a multiple of ``num_envs * num_steps_per_env``. Returns a report (``timesteps``,
    ``wall_s``, ``curve``, ``iterations``, ``learn_s``: the time of collection and updates (the
    evaluations not counted), ``steps_per_s`` = timesteps / learn_s, ``resume_file``, ``log_dir``
    when a TensorBoard log was written)."""
    try:
        from rsl_rl.runners import OnPolicyRunner
    except ImportError:
        raise ValueError("the rsl_rl engine needs rsl-rl-lib: pip install 'actuator-gym[rsl-rl]'") from None
    from ..adapters import rsl_rl
    from .progress import Progress

    s = configs.train_settings("rsl_rl", dict(settings or {}))
    out = Path(out_dir)
    task_kwargs = dict(task_kwargs or {})

    # 1. seeding and threads (the updates run between the physics pool's steps: every CPU by default);
    #    the env has its own streams
    with torch_threads(s["torch_threads"] or usable_cpus()):
        torch.manual_seed(seed)
        vec = make_vec_env(task, s["num_envs"], actuators, **task_kwargs)
        if s["symmetry"] != "none":
            try:
                task_mirror(vec)
            except ValueError as exc:
                vec.close()
                raise ValueError(f"settings.symmetry = {s['symmetry']!r}: {exc}") from None
        prepare_run_dir(out)  # an earlier run's outputs removed before this run writes any
        env = rsl_rl(vec, seed=seed)
        eval_env = make_env(task, actuators, **task_kwargs)
        log_dir = output_dir(out, LOG_DIR) if "tensorboard" in log_formats() else None
        with contextlib.redirect_stdout(io.StringIO()):  # the runner prints its models
            runner = OnPolicyRunner(env, runner_config(s), log_dir=None if log_dir is None else str(log_dir), device="cpu")
        runner.logger.git_status_repos = []  # else rsl_rl stores the git diff of whatever repository holds it

        # 2. the deterministic actor, as saved, is what is evaluated
        def snapshot() -> SavedPolicy:
            state, eps = saved_actor(runner.alg.get_policy())
            return save_policy(out, task, eval_env.observation_space, eval_env.action_space, s["actor_hidden_dims"],
                               s["activation"], state, eps)

        per_iteration = s["num_envs"] * s["num_steps_per_env"]
        iterations = math.ceil(s["total_timesteps"] / per_iteration)
        curve: list[tuple[int, float]] = []
        bar = Progress(iterations * per_iteration, f"rsl_rl PPO {task}", "step", progress)
        next_eval, eval_s = s["eval_every"], 0.0

        def evaluate_now(steps: int) -> None:
            nonlocal eval_s
            t = time.perf_counter()
            curve.append((steps, evaluate(snapshot(), eval_env, s["eval_episodes"], seed + 1000)))
            bar.set_postfix(eval_return=f"{curve[-1][1]:.1f}")
            eval_s += time.perf_counter() - t

        # 3. the runner calls its logger after every iteration's update: evaluate there, every eval_every steps
        log_iteration = runner.logger.log

        def log_and_evaluate(**kw) -> None:
            nonlocal next_eval
            log_iteration(**kw)
            steps = (kw["it"] + 1) * per_iteration
            bar.update(steps - bar.n)
            if steps >= next_eval or kw["it"] + 1 == iterations:
                while next_eval <= steps:
                    next_eval += s["eval_every"]
                evaluate_now(steps)

        runner.logger.log = log_and_evaluate
        t0 = time.perf_counter()
        evaluate_now(0)
        with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):  # rsl_rl's console log
            runner.learn(num_learning_iterations=iterations)
        wall = time.perf_counter() - t0
        learn_s = wall - eval_s
        bar.close()

        # 4. the files (the safe policy was written by the last evaluation)
        if log_dir is not None:
            runner.logger.writer.close()  # rsl_rl leaves its TensorBoard writer open
            for f in log_dir.glob("model_*.pt"):  # rsl_rl's own saves (first and last iteration): one resume file instead
                f.unlink()
            with contextlib.suppress(OSError):
                (log_dir / "git").rmdir()  # the folder of the git diffs it was told not to store, when empty
        with atomic_path(out / RSL_RL_MODEL_FILE) as tmp:
            runner.save(str(tmp))
        write_learning_curve(out, curve, f"PPO (rsl_rl) on {task}")
        env.close()
        eval_env.close()
        steps = iterations * per_iteration
        report = {"log_dir": str(log_dir)} if log_dir is not None else {}
        return {**report, "task": task, "timesteps": steps, "wall_s": wall, "curve": curve, "out_dir": str(out),
                "iterations": iterations, "learn_s": learn_s, "steps_per_s": steps / learn_s if learn_s > 0 else float("nan"),
                "resume_file": RSL_RL_MODEL_FILE, "settings": s}
