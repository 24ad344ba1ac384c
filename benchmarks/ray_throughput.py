"""Ray RLlib engine: samples/s of 1 vs 2 env runners, side by side in one run (one local cluster).

    .venv/bin/python benchmarks/ray_throughput.py [--task actuator_gym/Quadruped-v0] [--envs-per-runner 16]
        [--iterations 4] [--rounds 2] [--cpus N]

Alternates 1-runner and 2-runner PPO runs (``train_ray``, ``learners=0``: the learner in the driver)
(one epoch, one minibatch: the iteration is mostly sampling) for ``--rounds`` rounds on one local Ray cluster of ``--cpus`` CPUs (default: this machine's), and
prints, per configuration, the median over rounds of the throughput (env steps / wall time of
RLlib's ``train()`` calls: parallel sampling + learning), in total and per env runner, and of each
runner's batched env alone (env steps / time inside its ``step``, ``RunnerWorlds.step_seconds``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import actuator_gym  # noqa: E402,F401
from actuator_gym.tools.ray_engine import train_ray  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--task", default="actuator_gym/Quadruped-v0")
    p.add_argument("--envs-per-runner", type=int, default=16)
    p.add_argument("--fragment", type=int, default=32, help="env steps per world per iteration")
    p.add_argument("--iterations", type=int, default=4)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--cpus", type=int, default=os.cpu_count())
    args = p.parse_args(argv)
    import ray

    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"OMP_NUM_THREADS": "1"}})
    results: dict[int, list[dict]] = {1: [], 2: []}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for r in range(args.rounds):
                for k in (1, 2):
                    s = train_ray(args.task, Path(tmp) / f"k{k}_r{r}", seed=r, progress=False, settings={
                        "env_runners": k, "envs_per_runner": args.envs_per_runner, "learners": 0,
                        "iterations": args.iterations, "rollout_fragment_length": args.fragment,
                        "eval_every": 10**9, "eval_episodes": 1, "net_arch": [128, 128],
                        "num_epochs": 1, "minibatch_size": 10**6})  # one cheap update: the iteration is mostly sampling
                    step_rate = statistics.median(e["env_step_samples_per_s"] for e in s["env_runners"])
                    results[k].append({"whole": s["samples_per_s"], "env": step_rate, "pids": [e["pid"] for e in s["env_runners"]]})
                    print(f"round {r} runners {k}: {s['samples_per_s']:.0f} samples/s ({s['samples_per_s_per_runner']:.0f} "
                          f"per runner); inside each runner's batched env {step_rate:.0f} samples/s; pids "
                          f"{results[k][-1]['pids']}", flush=True)
    finally:
        ray.shutdown()
    print(f"\n{args.task}, {args.envs_per_runner} worlds per runner, {args.fragment} steps each per iteration, "
          f"{args.cpus} CPUs (median of {args.rounds} rounds x {args.iterations} iterations)")
    print("| env runners | samples/s (iteration: sampling + learning) | per runner | env.step only, per runner |")
    print("| --- | --- | --- | --- |")
    med = {k: {m: statistics.median(x[m] for x in v) for m in ("whole", "env")} for k, v in results.items()}
    for k in (1, 2):
        print(f"| {k} | {med[k]['whole']:.0f} | {med[k]['whole'] / k:.0f} | {med[k]['env']:.0f} |")
    print(f"2 runners / 1 runner: {med[2]['whole'] / med[1]['whole']:.2f}x samples/s")

if __name__ == "__main__":
    main()
