"""PPO on Ray RLlib (new API stack): env runners over a Ray cluster, learners on CPUs or GPUs.

:func:`train_ray` builds RLlib's ``PPOConfig`` with our native vector envs as the env runners' envs
(``gym_env_vectorize_mode=VECTOR_ENTRY_POINT``: one env runner steps its ``envs_per_runner`` worlds in
one batched backend, :mod:`actuator_gym.tools.ray_env`), ``env_runners`` env runner actors spread by
Ray over the cluster's nodes, and RLlib's learner group of ``learners`` learner actors (torch DDP
between them; 0: one learner in the driver process). World seeds: world ``i`` of env runner ``k``
(1-based) is seeded ``seed + (k - 1) * envs_per_runner + i`` (:func:`~actuator_gym.tools.distributed.block_seed`),
actuator randomization included. The actuator episode statistics reach RLlib's metrics
(:class:`~actuator_gym.adapters.ActuatorMetricsCallback`: ``result["env_runners"]["Episode_Actuator/..."]``).

Ray itself: ``address`` names an existing cluster (``"auto"``, ``"ray://host:10001"``, ``"host:6379"``;
from code or ``--address`` only, never from a data file: :data:`actuator_gym.configs.CLUSTER_KEY`);
without it a local one is started with ``num_cpus`` CPUs (default: this machine's) unless this process
already joined one (``ray.init`` called before; it is then reused and left running). Every node must
have actuator-gym installed. Actor CPU requests (:func:`actor_cpus`): each env runner and each learner
asks for ``min(1, cpus / (env_runners + learners))`` CPUs (rounded down to 0.01), so the run fits the
cluster: 2 env runners + 2 learners on 2 CPUs ask for 0.5 each.

Outputs in ``out_dir`` (as every engine): ``policy.json`` + ``policy.pt`` (the deterministic actor in
the safe format: ``action = clip(mean)``, RLlib's actor encoder as ``policy_net`` and the mean half of
its ``pi`` head as ``action_net``), ``learning_curve.csv`` / ``.png`` (deterministic evaluations on a
single env, as the SB3 engine does), ``progress.csv`` (one row per RLlib iteration: timesteps,
RLlib's ``episode_return_mean``, samples/s of the iteration, the actuator statistics) and
``summary.json`` (docs/distributed.md: engine ``"ray"``, each env runner's pid, host, world seeds and
env-step time; samples/s = env steps / wall time of the ``train()`` calls, sampling and learning).
"""

from __future__ import annotations

import math
import os
import socket
import time
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import torch

from .. import configs

__all__ = ["train_ray", "RAY_SETTINGS", "TRAIN_TO_RAY", "settings_from_train", "actor_cpus", "rllib_actor_state", "check_settings"]

RAY_SETTINGS: dict[str, Any] = configs.RAY_TRAIN_KEYS
"""Every setting of :func:`train_ray` and its default (:data:`actuator_gym.configs.RAY_TRAIN_KEYS`).
``iterations`` (RLlib ``train()`` calls), when given, replaces ``total_timesteps``; one iteration samples
``env_runners * envs_per_runner * rollout_fragment_length`` env steps. ``cpus_per_env_runner`` /
``cpus_per_learner``: None sizes them to fit (:func:`actor_cpus`). ``num_cpus``: the CPUs of a local
cluster this call starts. ``address``: an existing cluster (from code or ``--address`` only: a data
file naming one is refused). Bounds: :class:`actuator_gym.configs.ConfigLimits` (docs/distributed.md)."""


def check_settings(settings: Mapping[str, Any] | None) -> dict[str, Any]:
    """:data:`RAY_SETTINGS` updated with ``settings``, each value checked (:func:`actuator_gym.configs.ray_settings`):
    a ``ValueError`` naming the setting and its allowed range (unknown names list the allowed ones)."""
    return configs.ray_settings(dict(settings or {}), "train_ray: ", "")


TRAIN_TO_RAY = {"total_timesteps": "total_timesteps", "num_envs": "envs_per_runner", "n_steps": "rollout_fragment_length",
                "batch_size": "minibatch_size", "learning_rate": "learning_rate", "gamma": "gamma",
                "eval_every": "eval_every", "eval_episodes": "eval_episodes", "net_arch": "net_arch"}
"""An experiment file's ``train:`` keys (the SB3 ones, ``configs.TRAIN_KEYS``) and the Ray setting each
sets: ``num_envs`` is the worlds of each env runner, ``n_steps`` the env steps each world takes per
iteration, ``batch_size`` PPO's minibatch. ``algo`` is PPO for both."""


def settings_from_train(train: Mapping[str, Any]) -> dict[str, Any]:
    """Ray settings from an experiment's ``train:`` section (:data:`TRAIN_TO_RAY`)."""
    return {TRAIN_TO_RAY[k]: (list(v) if k == "net_arch" else v) for k, v in train.items() if k in TRAIN_TO_RAY}


def actor_cpus(cpus: float, env_runners: int, learners: int) -> float:
    """CPUs each env runner and each learner actor asks for so that all fit on ``cpus``:
    ``min(1, cpus / (env_runners + learners))`` rounded down to 0.01 (``learners=0``: the learner
    runs in the driver, no actor). ``ValueError`` when that is below 0.01."""
    actors = env_runners + learners
    share = min(1.0, math.floor(100 * cpus / actors) / 100)
    if share < 0.01:
        raise ValueError(f"{env_runners} env runner(s) + {learners} learner(s) do not fit on {cpus:g} CPU(s) "
                         f"at 0.01 CPU each; allowed: env_runners + learners <= {int(cpus * 100)}")
    return share


def rllib_actor_state(state: Mapping[str, Any], net_arch, act_dim: int) -> dict[str, torch.Tensor]:
    """The deterministic actor of RLlib's default PPO module (``DefaultPPOTorchRLModule``, separate
    actor and critic encoders, no head hidden layers) in :class:`~actuator_gym.tools.training.SavedPolicy`'s
    names: the actor encoder's ``Linear`` layers as ``policy_net.<i>``, the first ``act_dim`` rows (the
    Gaussian's mean; the rest is its log std) of the ``pi`` head as ``action_net``. ``state``: a learner
    module's state (``encoder.actor_encoder.*``) or an inference-only one (``encoder.encoder.*``).
    ``ValueError`` naming the missing or misshaped tensor."""
    t = {k: (v.detach().to("cpu", torch.float32) if isinstance(v, torch.Tensor) else torch.tensor(np.asarray(v), dtype=torch.float32))
         for k, v in state.items()}
    prefix = next((p for p in ("encoder.actor_encoder.net.mlp.", "encoder.encoder.net.mlp.") if p + "0.weight" in t), None)
    if prefix is None:
        raise ValueError(f"RLlib module state: no actor encoder (encoder.actor_encoder.net.mlp.0.weight); keys: {sorted(t)[:8]}")
    out: dict[str, torch.Tensor] = {}
    for layer in range(len(net_arch)):
        for part in ("weight", "bias"):
            key = f"{prefix}{2 * layer}.{part}"
            if key not in t:
                raise ValueError(f"RLlib module state: {key} missing (net_arch {list(net_arch)})")
            out[f"policy_net.{2 * layer}.{part}"] = t[key]
    w, b = t.get("pi.net.mlp.0.weight"), t.get("pi.net.mlp.0.bias")
    if w is None or b is None or w.shape[0] != 2 * act_dim or "pi.net.mlp.1.weight" in t:
        raise ValueError(f"RLlib module state: pi head must be one Linear layer of 2 * act_dim = {2 * act_dim} outputs "
                         f"(mean, log std), got {None if w is None else tuple(w.shape)}")
    out["action_net.weight"], out["action_net.bias"] = w[:act_dim], b[:act_dim]
    return out


def _ray_init(s: dict[str, Any]) -> tuple[bool, float]:
    """Join or start the cluster; (whether this call started it, the cluster's CPUs)."""
    import ray

    started = False
    if not ray.is_initialized():
        if s["address"] is not None:
            ray.init(address=s["address"], log_to_driver=False)
        else:
            ray.init(num_cpus=s["num_cpus"] or os.cpu_count() or 1, include_dashboard=False, log_to_driver=False,
                     runtime_env={"env_vars": {"OMP_NUM_THREADS": "1"}})
            started = True
    return started, float(ray.cluster_resources().get("CPU", 1.0))


def _ppo_config(task, actuators, task_kwargs, seed: int, s: dict[str, Any], cpus: float):
    import gymnasium as gym
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    from ray.tune.registry import register_env

    from ..adapters import ActuatorMetricsCallback
    from .ray_env import RUNNER_ENV_ID, assign_runner_worlds, make_runner_env, runner_env_config

    register_env(RUNNER_ENV_ID, make_runner_env)  # the registry travels to every env runner process

    k, n, learners = s["env_runners"], s["envs_per_runner"], s["learners"]
    share = actor_cpus(cpus, k, learners)
    cpu_runner = s["cpus_per_env_runner"] or share
    cpu_learner = s["cpus_per_learner"] or share
    batch = k * n * s["rollout_fragment_length"]
    per_learner = max(1, batch // max(learners, 1))
    config = (
        PPOConfig()
        .environment(env=RUNNER_ENV_ID, env_config=runner_env_config(task, seed, n, actuators, task_kwargs),
                     normalize_actions=False, clip_actions=True)
        .env_runners(num_env_runners=k, num_envs_per_env_runner=n, rollout_fragment_length=s["rollout_fragment_length"],
                     gym_env_vectorize_mode=gym.VectorizeMode.VECTOR_ENTRY_POINT, num_cpus_per_env_runner=cpu_runner)
        .learners(num_learners=learners, num_cpus_per_learner=cpu_learner, num_gpus_per_learner=s["gpus_per_learner"])
        .training(train_batch_size_per_learner=per_learner, minibatch_size=min(s["minibatch_size"], per_learner),
                  num_epochs=s["num_epochs"], lr=s["learning_rate"], gamma=s["gamma"], lambda_=s["lambda_"],
                  clip_param=s["clip_param"], entropy_coeff=s["entropy_coeff"])
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=list(s["net_arch"]), fcnet_activation=s["activation"],
                                                   vf_share_layers=False, head_fcnet_hiddens=[]))
        .callbacks(ActuatorMetricsCallback, on_environment_created=assign_runner_worlds)
        .debugging(seed=seed, log_level="ERROR")
    )
    return config, {"cpus_per_env_runner": cpu_runner, "cpus_per_learner": cpu_learner if learners else 0.0,
                    "env_steps_per_iteration": batch}


def _runner_report(runner) -> dict[str, Any]:
    """What an env runner reports of itself (runs in its process)."""
    import os as _os
    import socket as _socket

    from actuator_gym.tools.ray_env import find_runner_worlds

    worlds = find_runner_worlds(runner.env)
    return {"index": worlds.runner_index, "worker_index": int(runner.worker_index), "pid": _os.getpid(),
            "host": _socket.gethostname(), "world_seeds": worlds.world_seeds, "env_steps": worlds.env_steps,
            "env_step_s": worlds.step_seconds}


def train_ray(task: str, out_dir: str | Path, *, actuators: Mapping[str, Any] | None = None,
              task_kwargs: Mapping[str, Any] | None = None, seed: int = 0, settings: Mapping[str, Any] | None = None,
              progress: bool = True) -> dict[str, Any]:
    """Train PPO on Ray RLlib (module doc); ``settings``: :data:`RAY_SETTINGS`. Writes the engine
    files into ``out_dir`` and returns the report that ``summary.json`` holds, plus ``curve``
    (:func:`~actuator_gym.tools.engines.train_policy` writes ``summary.json``, last)."""
    try:
        import ray
        from ray.rllib.core import DEFAULT_MODULE_ID
    except ImportError:
        raise ValueError("the ray engine needs Ray RLlib: pip install 'actuator-gym[ray]' (docs/distributed.md)") from None
    from .distributed import block_seed
    from .progress import Progress
    from .tables import write_csv
    from .training import SavedPolicy, evaluate, make_env, prepare_run_dir, save_policy, torch_threads, write_learning_curve

    s = check_settings(settings)
    block_seed(seed, s["env_runners"] - 1, s["envs_per_runner"])  # every world seed in range, before Ray starts
    task_kwargs = dict(task_kwargs or {})
    out = prepare_run_dir(out_dir)  # an earlier run's files removed; train_policy writes summary.json last
    eval_env = make_env(task, actuators, **task_kwargs)
    obs_space, act_space = eval_env.observation_space, eval_env.action_space
    act_dim = int(np.prod(act_space.shape))
    with torch_threads(1):
        started, cpus = _ray_init(s)
        algo = None
        try:
            config, sizing = _ppo_config(task, actuators, task_kwargs, seed, s, cpus)
            per_iter = sizing["env_steps_per_iteration"]
            iterations = s["iterations"] or max(1, math.ceil(s["total_timesteps"] / per_iter))
            t0 = time.perf_counter()
            algo = config.build_algo()
            build_s = time.perf_counter() - t0
            runners = sorted(algo.env_runner_group.foreach_env_runner(_runner_report, local_env_runner=False),
                             key=lambda r: r["index"])

            def actor_state() -> dict[str, torch.Tensor]:  # the learners' current actor (the authoritative weights)
                weights = algo.learner_group.get_weights(module_ids=[DEFAULT_MODULE_ID])[DEFAULT_MODULE_ID]
                return rllib_actor_state(weights, s["net_arch"], act_dim)

            def policy_of(state) -> SavedPolicy:
                meta = {"obs_dim": int(np.prod(obs_space.shape)), "act_dim": act_dim, "net_arch": s["net_arch"],
                        "activation": s["activation"], "action_low": act_space.low.tolist(), "action_high": act_space.high.tolist()}
                return SavedPolicy(meta, state)

            eval_seed = seed + 1000
            curve = [(0, evaluate(policy_of(actor_state()), eval_env, s["eval_episodes"], eval_seed))]
            rows: list[dict[str, Any]] = []
            steps, next_eval, train_s = 0, s["eval_every"], 0.0
            bar = Progress(iterations * per_iter, f"RLlib PPO {task}", "step", progress)
            for it in range(iterations):
                t = time.perf_counter()
                result = algo.train()
                dt = time.perf_counter() - t
                train_s += dt
                new_steps = int(result["num_env_steps_sampled_lifetime"])
                sampled = new_steps - steps
                steps = new_steps
                er = result.get("env_runners", {})
                row = {"iteration": it + 1, "timesteps": steps, "episode_return_mean": er.get("episode_return_mean", float("nan")),
                       "samples_per_s": sampled / dt, "iteration_s": dt}
                row.update({k: float(v) for k, v in er.items() if k.startswith("Episode_Actuator/")})
                rows.append(row)
                bar.update(sampled)
                if steps >= next_eval or it == iterations - 1:
                    while next_eval <= steps:
                        next_eval += s["eval_every"]
                    curve.append((steps, evaluate(policy_of(actor_state()), eval_env, s["eval_episodes"], eval_seed)))
                    bar.set_postfix(eval_return=f"{curve[-1][1]:.1f}")
            bar.close()
            wall = time.perf_counter() - t0
            ends = {r["index"]: r for r in algo.env_runner_group.foreach_env_runner(_runner_report, local_env_runner=False)}
            for r in runners:  # what each runner stepped: env steps, and the time its batched env took for them
                r["env_steps"], r["env_step_s"] = ends[r["index"]]["env_steps"], ends[r["index"]]["env_step_s"]
                r["env_step_samples_per_s"] = r["env_steps"] / r["env_step_s"] if r["env_step_s"] > 0 else float("nan")
            save_policy(out, task, obs_space, act_space, s["net_arch"], s["activation"], actor_state())
        finally:
            if algo is not None:
                algo.stop()
            if started:
                ray.shutdown()
            eval_env.close()
        write_learning_curve(out, curve, f"PPO (Ray RLlib, {s['env_runners']} env runners) on {task}")
        keys = list(dict.fromkeys(k for r in rows for k in r))
        write_csv(out / "progress.csv", [{k: r.get(k, "") for k in keys} for r in rows])
        samples_per_s = steps / train_s
        summary = {
            "engine": "ray", "task": task, "seed": int(seed), "timesteps": int(steps), "wall_s": wall,
            "final_eval_return": float(curve[-1][1]), "iterations": iterations, "build_s": build_s,
            "env_runners": runners, "envs_per_runner": s["envs_per_runner"], "learners": s["learners"],
            "samples_per_s": samples_per_s, "samples_per_s_per_runner": samples_per_s / s["env_runners"],
            "train_s": train_s, "cluster_cpus": cpus, "address": s["address"], "driver_pid": os.getpid(),
            "driver_host": socket.gethostname(), "ray_version": ray.__version__, **sizing,
            "actuator_metrics": {k: v for k, v in rows[-1].items() if k.startswith("Episode_Actuator/")},
            "settings": s,
        }
        return {**summary, "curve": curve, "out_dir": str(out)}
