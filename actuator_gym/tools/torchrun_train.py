"""Multi-GPU / multi-node PPO on ``torchrun``: rsl_rl's or skrl's distributed mode over our batched envs.

    torchrun --nproc-per-node G -m actuator_gym.tools.torchrun_train \\
        --experiment quadruped_torchrun --out runs/quadruped_ddp
    # several nodes: torchrun --nnodes M --node-rank R --rdzv-backend c10d --rdzv-endpoint HOST:29500 \\
    #                         --nproc-per-node G -m actuator_gym.tools.torchrun_train ...

Every rank (:func:`~actuator_gym.tools.distributed.rank_plan`) builds its own batched env of the
experiment's ``train.num_envs`` worlds on its own device (``cuda:<LOCAL_RANK>``: the experiment's
``task_kwargs.backend``, e.g. ``mujoco_warp``, steps them there), seeded ``seed + rank * num_envs``
(its worlds are worlds ``rank * num_envs ..`` of the run; actuator randomization follows), seeds
torch with ``seed + rank``, and runs rsl_rl's ``OnPolicyRunner`` (``--library rsl_rl``, the default)
or skrl's PPO with its ``SequentialTrainer`` (``--library skrl``); both read the same ``RANK`` /
``LOCAL_RANK`` / ``WORLD_SIZE``, join the NCCL process group, broadcast rank 0's weights and
all-reduce the gradients. Their distributed modes are CUDA / NCCL only; without torchrun (one
process) the same command trains on one device, the CPU included. Rank 0 writes ``model.pt`` (rsl_rl's
checkpoint; skrl: the policy's state dict) and ``summary.json`` (engine ``<library>-torchrun``, every
rank's pid, host, device and world seeds). The training settings come from the experiment's ``train:`` section:
``num_envs`` worlds per rank, ``n_steps`` steps per world per iteration, ``total_timesteps`` over
all ranks, ``learning_rate``, ``gamma``, ``net_arch``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import socket
import time
from pathlib import Path
from typing import Any, Sequence

__all__ = ["main", "rsl_rl_cfg"]


def rsl_rl_cfg(train: dict[str, Any], iterations_hint: int = 0) -> dict[str, Any]:
    """rsl_rl 5.x ``OnPolicyRunner`` config from an experiment's ``train:`` section."""
    mlp = {"class_name": "rsl_rl.models.MLPModel", "hidden_dims": list(train["net_arch"]), "activation": "elu"}
    return {
        "num_steps_per_env": int(train["n_steps"]),
        "save_interval": max(1, iterations_hint),
        "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
        "algorithm": {"class_name": "rsl_rl.algorithms.PPO", "num_learning_epochs": 5, "num_mini_batches": 4,
                      "learning_rate": float(train["learning_rate"]), "gamma": float(train["gamma"])},
        "actor": {**mlp, "distribution_cfg": {"class_name": "rsl_rl.modules.GaussianDistribution", "init_std": 1.0}},
        "critic": dict(mlp),
    }


def _skrl_models(env, net_arch, device: str):
    """skrl's PPO pair: a Gaussian policy (state-independent log std) and a value net, ELU MLPs."""
    import torch
    import torch.nn as nn
    from skrl.models.torch import DeterministicMixin, GaussianMixin, Model

    def mlp(n_in: int, n_out: int) -> nn.Sequential:
        layers: list[nn.Module] = []
        for w in net_arch:
            layers += [nn.Linear(n_in, w), nn.ELU()]
            n_in = w
        return nn.Sequential(*layers, nn.Linear(n_in, n_out))

    class Policy(GaussianMixin, Model):
        def __init__(self):
            Model.__init__(self, observation_space=env.observation_space, action_space=env.action_space, device=device)
            GaussianMixin.__init__(self, clip_actions=True)
            self.net = mlp(self.num_observations, self.num_actions)
            self.log_std = nn.Parameter(torch.zeros(self.num_actions))

        def compute(self, inputs, role):
            return self.net(inputs["observations"]), {"log_std": self.log_std}

    class Value(DeterministicMixin, Model):
        def __init__(self):
            Model.__init__(self, observation_space=env.observation_space, action_space=env.action_space, device=device)
            DeterministicMixin.__init__(self)
            self.net = mlp(self.num_observations, 1)

        def compute(self, inputs, role):
            return self.net(inputs["observations"]), {}

    return {"policy": Policy(), "value": Value()}


def _train_skrl(vec, train: dict[str, Any], iterations: int, device: str, is_main: bool):
    """skrl PPO (its distributed mode: ``skrl.config.torch`` reads the same torchrun variables, and PPO
    broadcasts rank 0's weights and all-reduces the gradients); returns the agent."""
    from skrl.agents.torch.ppo import PPO, PPO_CFG
    from skrl.memories.torch import RandomMemory
    from skrl.trainers.torch import SequentialTrainer

    from ..adapters import skrl

    env = skrl(vec)
    steps = int(train["n_steps"])
    cfg = PPO_CFG(rollouts=steps, learning_epochs=5, mini_batches=4, learning_rate=float(train["learning_rate"]),
                  discount_factor=float(train["gamma"]))
    cfg.experiment.write_interval = 0
    cfg.experiment.checkpoint_interval = 0
    agent = PPO(models=_skrl_models(env, train["net_arch"], device), memory=RandomMemory(memory_size=steps, num_envs=env.num_envs, device=device),
                observation_space=env.observation_space, action_space=env.action_space, device=device, cfg=cfg)
    SequentialTrainer(env=env, agents=agent, cfg={"timesteps": iterations * steps, "headless": True,
                                                  "disable_progressbar": not is_main, "close_environment_at_exit": False}).train()
    return agent


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m actuator_gym.tools.torchrun_train", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--experiment", required=True, help="experiment preset name or YAML file")
    p.add_argument("--out", default="actuator_gym_out/torchrun", help="output folder (rank 0 writes)")
    p.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto",
                   help="cuda:<LOCAL_RANK> (auto: when this node has GPUs) or cpu (one process only: rsl_rl's "
                        "distributed mode needs CUDA)")
    p.add_argument("--library", choices=["rsl_rl", "skrl"], default="rsl_rl", help="the PPO library (default: %(default)s)")
    p.add_argument("--iterations", type=int, default=None,
                   help="PPO iterations of n_steps per world (default: from total_timesteps)")
    args = p.parse_args(argv)
    import gymnasium as gym
    import torch

    from .. import configs
    from .._safe_io import atomic_path, clear_outputs, output_dir, write_atomic
    from ..adapters import rsl_rl
    from .distributed import rank_plan

    exp = configs.load(args.experiment)
    if not isinstance(exp, configs.Experiment):
        raise SystemExit(f"{args.experiment}: not an experiment file")
    n = int(exp.train["num_envs"])
    plan = rank_plan(exp.seed, n, device=args.device)
    if plan.world_size > 1 and plan.backend != "nccl":
        raise SystemExit(f"torchrun_train: {args.library}'s distributed mode needs CUDA (NCCL); run one process on the CPU")
    torch.manual_seed(plan.torch_seed)
    kwargs = dict(exp.task_kwargs)
    if exp.actuators is not None:
        kwargs["actuators"] = dict(exp.actuators)
    # built and first reset with this rank's block of world seeds (the libraries' own resets then continue its streams)
    vec = gym.make_vec(exp.task, num_envs=n, vectorization_mode="vector_entry_point", device=plan.device,
                       seed=plan.env_seed, **kwargs)
    per_iteration = plan.world_size * n * int(exp.train["n_steps"])
    iterations = args.iterations or max(1, math.ceil(exp.train["total_timesteps"] / per_iteration))
    out = Path(args.out)
    t0 = time.perf_counter()
    if args.library == "rsl_rl":
        from rsl_rl.runners import OnPolicyRunner

        runner = OnPolicyRunner(rsl_rl(vec, device=plan.device, seed=plan.env_seed), rsl_rl_cfg(exp.train, iterations),
                                log_dir=None, device=plan.device)
        runner.learn(num_learning_iterations=iterations)
        save = lambda path: runner.save(str(path))  # noqa: E731
    else:
        agent = _train_skrl(vec, exp.train, iterations, plan.device, plan.is_main)
        save = lambda path: torch.save({"policy": agent.models["policy"].state_dict()}, path)  # noqa: E731
    wall = time.perf_counter() - t0
    me = {"rank": plan.rank, "local_rank": plan.local_rank, "pid": os.getpid(), "host": socket.gethostname(),
          "device": plan.device, "world_seeds": plan.world_seeds}
    ranks = [me]
    if plan.world_size > 1:
        ranks = [None] * plan.world_size
        torch.distributed.all_gather_object(ranks, me)
    if plan.is_main:
        out = output_dir(out)
        clear_outputs(out, ("summary.json", "model.pt"))  # an earlier run's: summary.json is written last
        with atomic_path(out / "model.pt") as tmp:
            save(tmp)
        summary = {"engine": f"{args.library}-torchrun", "task": exp.task, "seed": exp.seed, "world_size": plan.world_size,
                   "timesteps": iterations * per_iteration, "iterations": iterations, "wall_s": wall,
                   "samples_per_s": iterations * per_iteration / wall, "envs_per_rank": n, "ranks": ranks}
        write_atomic(out / "summary.json", json.dumps(summary, indent=1))
        print(f"{args.library} on {plan.world_size} rank(s) x {n} worlds: {summary['timesteps']} steps in {wall:.1f} s "
              f"({summary['samples_per_s']:.0f} samples/s); {out}/summary.json")
    vec.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
