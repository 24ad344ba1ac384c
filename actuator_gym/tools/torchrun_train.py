"""Multi-GPU / multi-node PPO on ``torchrun``: rsl_rl's distributed mode over our batched envs.

    torchrun --nproc-per-node G -m actuator_gym.tools.torchrun_train \\
        --experiment quadruped_torchrun --out runs/quadruped_ddp
    # several nodes: torchrun --nnodes M --node-rank R --rdzv-backend c10d --rdzv-endpoint HOST:29500 \\
    #                         --nproc-per-node G -m actuator_gym.tools.torchrun_train ...

Every rank (:func:`~actuator_gym.tools.distributed.rank_plan`) builds its own batched env of the
experiment's ``train.num_envs`` worlds on its own device (``cuda:<LOCAL_RANK>``: the experiment's
``task_kwargs.backend``, e.g. ``mujoco_warp``, steps them there), seeded ``seed + rank * num_envs``
(its worlds are worlds ``rank * num_envs ..`` of the run; actuator randomization follows), seeds
torch with ``seed + rank``, and runs rsl_rl's ``OnPolicyRunner``, which reads the same ``RANK`` /
``LOCAL_RANK`` / ``WORLD_SIZE``, joins the NCCL process group, broadcasts rank 0's weights and
all-reduces the gradients. rsl_rl's distributed mode is CUDA / NCCL only; without torchrun (one
process) the same command trains on one device, the CPU included. Rank 0 writes ``model.pt``
(rsl_rl's checkpoint) and ``summary.json`` (engine ``rsl_rl-torchrun``, every rank's pid, host,
device and world seeds). The training settings come from the experiment's ``train:`` section:
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


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m actuator_gym.tools.torchrun_train", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--experiment", required=True, help="experiment preset name or YAML file")
    p.add_argument("--out", default="actuator_gym_out/torchrun", help="output folder (rank 0 writes)")
    p.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto",
                   help="cuda:<LOCAL_RANK> (auto: when this node has GPUs) or cpu (one process only: rsl_rl's "
                        "distributed mode needs CUDA)")
    p.add_argument("--iterations", type=int, default=None, help="rsl_rl iterations (default: from total_timesteps)")
    args = p.parse_args(argv)
    import gymnasium as gym
    import torch

    from .. import configs
    from ..adapters import rsl_rl
    from .distributed import rank_plan

    exp = configs.load(args.experiment)
    if not isinstance(exp, configs.Experiment):
        raise SystemExit(f"{args.experiment}: not an experiment file")
    n = int(exp.train["num_envs"])
    plan = rank_plan(exp.seed, n, device=args.device)
    if plan.world_size > 1 and plan.backend != "nccl":
        raise SystemExit("torchrun_train: rsl_rl's distributed mode needs CUDA (NCCL); run one process on the CPU")
    torch.manual_seed(plan.torch_seed)
    kwargs = dict(exp.task_kwargs)
    if exp.actuators is not None:
        kwargs["actuators"] = dict(exp.actuators)
    vec = gym.make_vec(exp.task, num_envs=n, vectorization_mode="vector_entry_point", device=plan.device, **kwargs)
    env = rsl_rl(vec, device=plan.device, seed=plan.env_seed)
    per_iteration = plan.world_size * n * int(exp.train["n_steps"])
    iterations = args.iterations or max(1, math.ceil(exp.train["total_timesteps"] / per_iteration))
    out = Path(args.out)
    from rsl_rl.runners import OnPolicyRunner

    runner = OnPolicyRunner(env, rsl_rl_cfg(exp.train, iterations), log_dir=None, device=plan.device)
    t0 = time.perf_counter()
    runner.learn(num_learning_iterations=iterations)
    wall = time.perf_counter() - t0
    me = {"rank": plan.rank, "local_rank": plan.local_rank, "pid": os.getpid(), "host": socket.gethostname(),
          "device": plan.device, "world_seeds": plan.world_seeds}
    ranks = [me]
    if plan.world_size > 1:
        ranks = [None] * plan.world_size
        torch.distributed.all_gather_object(ranks, me)
    if plan.is_main:
        out.mkdir(parents=True, exist_ok=True)
        runner.save(str(out / "model.pt"))
        summary = {"engine": "rsl_rl-torchrun", "task": exp.task, "seed": exp.seed, "world_size": plan.world_size,
                   "timesteps": iterations * per_iteration, "iterations": iterations, "wall_s": wall,
                   "samples_per_s": iterations * per_iteration / wall, "envs_per_rank": n, "ranks": ranks}
        (out / "summary.json").write_text(json.dumps(summary, indent=1))
        print(f"rsl_rl on {plan.world_size} rank(s) x {n} worlds: {summary['timesteps']} steps in {wall:.1f} s "
              f"({summary['samples_per_s']:.0f} samples/s); {out}/summary.json")
    vec.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
