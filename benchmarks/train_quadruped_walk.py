"""Train the quadruped to walk with rsl_rl's PPO (legged_gym-style), then measure its gait.

Top to bottom, CleanRL-style: the settings, the env, the runner, a loop of training chunks with a
deterministic evaluation after each (the learning curve), then the gait figures and the motors'
operating points of the final policy. Run from the repository root:

    PYTHONPATH=$PWD python benchmarks/train_quadruped_walk.py --minutes 10 --out runs/quadruped_walk

Prints one curve row per evaluation and, at the end, the gait table (duty factor, slip, clearance,
steps per foot), |vx error|, distance, falls (also over 256 distinct envs x 20 s), the actuator
saturation fraction and torque-speed operating points; writes ``curve.csv``, ``summary.json`` and
the rsl_rl checkpoint ``model.pt`` into ``--out``. ``--load OUT/train/rsl_rl_model.pt
--allow-unsafe-checkpoint`` evaluates what ``actuator-gym train --experiment quadruped_walk --out OUT``
trained, without training: rsl_rl loads its checkpoints with ``torch.load(weights_only=False)``, which
runs the file's pickled code, so ``--load`` is refused without that flag (only for files you trust).
The recipe is read from the bundled experiment (configs/experiments/quadruped_walk.yaml) and
mapped to rsl_rl's config by the rsl_rl engine's ``runner_config``, so this script and
``actuator-gym train --experiment quadruped_walk`` train the same thing (the engine evaluates on one
env between iterations instead of this script's gait evaluation).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import time

import numpy as np
import torch

import actuator_gym  # noqa: F401  (registers the ids; before mujoco)
import gymnasium as gym
from actuator_gym import configs
from actuator_gym.adapters import rsl_rl
from actuator_gym.tasks.quadruped import LEG_NAMES, QuadrupedGeometry, QuadrupedRewardCfg, go1_dc_motor_cfg
from actuator_gym.tools.gait import GaitRecorder, format_gait
from actuator_gym.tools.train_rsl_rl import runner_config, usable_cpus

# the recipe: the bundled experiment itself (configs/experiments/quadruped_walk.yaml), read as the
# command line reads it, and turned into rsl_rl's train config by the rsl_rl engine's own mapping
EXPERIMENT = configs.load("quadruped_walk")
TASK = EXPERIMENT.task
TASK_KWARGS = dict(EXPERIMENT.task_kwargs)  # the rest: the task's defaults (docs/tasks.md)
SETTINGS = EXPERIMENT.train
TRAIN_CFG = runner_config(SETTINGS)  # rsl-rl-lib 5.5 layout


def evaluate(policy, num_envs: int, steps: int, seed: int, **task_kwargs):
    """Deterministic rollout: the gait figures and the motors' statistics."""
    env = gym.make_vec(TASK, num_envs=num_envs, **{**TASK_KWARGS, "random_episode_start": False, **task_kwargs})
    task = env.unwrapped
    obs, _ = env.reset(seed=seed)
    rec = GaitRecorder(LEG_NAMES)
    eff, vel, sat, ret = [], [], [], np.zeros(num_envs)
    alive = np.ones(num_envs, bool)
    with torch.no_grad():
        for _ in range(steps):
            act = policy(torch.as_tensor(obs)).numpy()
            obs, r, term, trunc, info = env.step(act)
            rec.record(task, term)
            ret += r * alive
            alive &= ~term
            eff.append(np.abs(info["actuator"]["applied_effort"][alive]))
            vel.append(np.abs(info["actuator"]["joint_vel"][alive]))
            sat.append(info["actuator"]["saturated"][alive])
    env.close()
    fig = rec.figures()
    eff, vel, sat = (np.concatenate(x) for x in (eff, vel, sat))
    kinds = {"hip_joint": slice(0, 12, 3), "thigh_joint": slice(1, 12, 3), "calf_joint": slice(2, 12, 3)}  # abduction, flexion, knee
    fig["motors"] = {k: {"saturated_fraction": float(sat[:, s].mean()), "peak_torque": float(eff[:, s].max()),
                         "p99_torque": float(np.percentile(eff[:, s], 99)), "p99_speed": float(np.percentile(vel[:, s], 99)),
                         "peak_speed": float(vel[:, s].max())} for k, s in kinds.items()}
    fig["return"] = float(ret.mean())
    return fig


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--minutes", type=float, default=10.0, help="training wall-clock budget")
    p.add_argument("--timesteps", type=int, default=None,
                   help="stop after this many env steps instead (a busy machine: budget by steps, extrapolate the time)")
    p.add_argument("--num-envs", type=int, default=SETTINGS["num_envs"])
    p.add_argument("--eval-every", type=int, default=25, help="iterations between evaluations")
    p.add_argument("--eval-envs", type=int, default=32)
    p.add_argument("--eval-steps", type=int, default=500)
    p.add_argument("--seed", type=int, default=EXPERIMENT.seed)
    p.add_argument("--out", default="runs/quadruped_walk")
    p.add_argument("--load", default=None, help="skip training: evaluate this rsl_rl checkpoint (model.pt); "
                   "needs --allow-unsafe-checkpoint")
    p.add_argument("--allow-unsafe-checkpoint", action="store_true",
                   help="let --load unpickle the checkpoint (rsl_rl's torch.load(weights_only=False) can run code); "
                        "only for files you trust (default: off)")
    p.add_argument("--reward", nargs="*", default=[], metavar="NAME=VALUE",
                   help="override QuadrupedRewardCfg fields (recipe search), e.g. foot_slip=-0.1")
    p.add_argument("--task-arg", nargs="*", default=[], metavar="NAME=VALUE",
                   help="override a task keyword for training and every evaluation (a Python literal), e.g. "
                        "command_ramp_s=1.0 (evaluate a policy trained with a changed task_kwargs)")
    p.add_argument("--init-std", type=float, default=None, help="override the actor's initial std")
    p.add_argument("--threads", type=int, default=SETTINGS["torch_threads"],
                   help="torch threads (0: every CPU, as the rsl_rl engine)")
    args = p.parse_args()
    if args.load and not args.allow_unsafe_checkpoint:
        p.error(f"--load {args.load}: rsl_rl reads checkpoints with torch.load(weights_only=False), which runs the "
                f"file's pickled code; pass --allow-unsafe-checkpoint to load a file you trust")
    if args.reward:
        kv = dict(x.split("=") for x in args.reward)
        TASK_KWARGS["reward_cfg"] = QuadrupedRewardCfg(**{k: (v.lower() in ("1", "true")) if k == "only_positive_rewards"
                                                           else float(v) for k, v in kv.items()})
    for kv in args.task_arg:
        name, eq, value = kv.partition("=")
        if not (name and eq):
            p.error(f"--task-arg {kv!r}: expected NAME=VALUE, e.g. command_ramp_s=1.0")
        try:
            TASK_KWARGS[name] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            p.error(f"--task-arg {kv!r}: the value must be a Python literal (a number, bool, string, tuple)")
    if args.init_std is not None:
        TRAIN_CFG["actor"]["distribution_cfg"]["init_std"] = args.init_std
    torch.set_num_threads(args.threads or usable_cpus())
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)

    env = rsl_rl(gym.make_vec(TASK, num_envs=args.num_envs, vectorization_mode="vector_entry_point", **TASK_KWARGS),
                 seed=args.seed)
    from rsl_rl.runners import OnPolicyRunner

    runner = OnPolicyRunner(env, TRAIN_CFG, log_dir=None, device="cpu")
    steps_per_iter = args.num_envs * TRAIN_CFG["num_steps_per_env"]
    curve, train_s, t0, iters = [], 0.0, time.time(), 0
    print(f"{'iter':>5} {'steps':>9} {'train_s':>8} {'steps/s':>8} {'|vx err|':>8} {'return':>7} {'falls':>5}")
    def budget_left():
        return iters * steps_per_iter < args.timesteps if args.timesteps else train_s < args.minutes * 60

    if args.load:
        runner.load(args.load)
    while not args.load and budget_left():
        t = time.time()
        runner.learn(num_learning_iterations=args.eval_every)
        train_s += time.time() - t
        iters += args.eval_every
        policy = runner.get_inference_policy().as_jit().eval()
        fig = evaluate(policy, args.eval_envs, args.eval_steps, seed=10_000)
        it = iters
        log = runner.logger
        row = dict(iteration=it, timesteps=it * steps_per_iter, train_s=train_s, vx_error=fig["vx_error"],
                   eval_return=fig["return"], falls=fig["falls"],
                   train_return=float(np.mean(log.rewbuffer)) if log.rewbuffer else float("nan"),
                   train_length=float(np.mean(log.lenbuffer)) if log.lenbuffer else float("nan"))
        curve.append(row)
        print(f"{it:5d} {row['timesteps']:9d} {train_s:8.0f} {row['timesteps'] / train_s:8.0f} "
              f"{fig['vx_error']:8.3f} {fig['return']:7.2f} {fig['falls']:5d}  train return {row['train_return']:.2f}"
              f" length {row['train_length']:.0f}", flush=True)
    if not args.load:
        runner.save(os.path.join(args.out, "model.pt"))
    with open(os.path.join(args.out, "curve.csv"), "w") as fh:
        fh.write("iteration,timesteps,train_s,vx_error,eval_return,falls\n")
        for r in curve:
            fh.write(f"{r['iteration']},{r['timesteps']},{r['train_s']:.1f},{r['vx_error']:.4f},"
                     f"{r['eval_return']:.3f},{r['falls']}\n")

    policy = runner.get_inference_policy().as_jit().eval()
    final = {"default_ranges": evaluate(policy, 64, 1000, seed=20_000)}
    # fixed commands (vx, vy, yaw rate): the gait at one forward speed, and what a policy can miss while the
    # default ranges' mean hides it: standing still (the augmented seed-0 policy fell in 9 of 16 here),
    # backwards, sideways, turning
    fixed = {"vx_0.5": (0.5, 0.0, 0.0), "vx_1.0": (1.0, 0.0, 0.0), "stand": (0.0, 0.0, 0.0),
             "vx_-0.5": (-0.5, 0.0, 0.0), "vy_0.4": (0.0, 0.4, 0.0), "yaw_0.8": (0.0, 0.0, 0.8)}
    for name, command in fixed.items():
        final[name] = evaluate(policy, 16, 500, seed=30_000, command_ranges=tuple((c, c) for c in command),
                               standing_command_prob=0.0)
    # where the motors bind: a 5 kg payload on the trunk (Go1's rated payload), fastest forward command
    final["payload_5kg_vx_1.0"] = evaluate(policy, 16, 500, seed=30_000, geometry=QuadrupedGeometry(trunk_mass=10.0),
                                           command_ranges=((1.0, 1.0), (0.0, 0.0), (0.0, 0.0)), standing_command_prob=0.0)
    # falls over more envs: three more batches of 64 on disjoint reset seeds (env i of a batch is reset
    # with seed + i, so batches seeded 64 apart share no env): 256 distinct envs x 20 s with the first
    batches = [final["default_ranges"]] + [evaluate(policy, 64, 1000, seed=20_000 + 64 * b) for b in (1, 2, 3)]
    falls_256 = {"envs": 256, "falls": sum(f["falls"] for f in batches), "falls_per_batch": [f["falls"] for f in batches],
                 "vx_error": float(np.mean([f["vx_error"] for f in batches]))}
    for name, fig in final.items():
        print(f"\n== {name} ==\n{format_gait(fig)}")
        for k, m in fig["motors"].items():
            print(f"  {k:8s} saturated {100 * m['saturated_fraction']:.2f} %, peak |tau| {m['peak_torque']:.1f} N·m "
                  f"(p99 {m['p99_torque']:.1f}), p99 |qd| {m['p99_speed']:.1f} rad/s (peak {m['peak_speed']:.1f})")
    print(f"\n== default ranges, 256 distinct envs x 20 s (reset seeds 20000 + 64 b) ==\n"
          f"falls {falls_256['falls']} / 256 (per batch of 64: {falls_256['falls_per_batch']}), "
          f"|vx err| {falls_256['vx_error']:.3f} m/s")
    summary = {"task": TASK, "falls_256": falls_256, "task_kwargs": {k: repr(v) for k, v in TASK_KWARGS.items()},
               "train_cfg": TRAIN_CFG, "num_envs": args.num_envs, "seed": args.seed, "train_s": train_s,
               "wall_s": time.time() - t0, "curve": curve, "final": final, "actuators": repr(go1_dc_motor_cfg())}
    with open(os.path.join(args.out, "summary.json"), "w") as fh:
        json.dump(summary, fh, indent=1, default=float)


if __name__ == "__main__":
    main()
