"""The ``actuator-gym`` command line (also ``python -m actuator_gym``).

    actuator-gym list                      tasks, actuator models, presets
    actuator-gym demo                      the pendulum under several actuator models: plots + table
    actuator-gym sweep PARAM               one actuator parameter swept on the pendulum
    actuator-gym rollout --task ID ...     run a task with a preset and a random/zero/saved policy
    actuator-gym train --task ID ...       PPO (--engine sb3 | rsl_rl | ray) with a learning curve and a saved policy
    actuator-gym fit DATA ...              train an actuator network from logged data and export it
    actuator-gym identify LOG ... --mjcf   a motor's physical model from its logs, as a preset (docs/identify.md)
    actuator-gym bench-logs OUT            the worked example's bench and simulated motor logs
    actuator-gym transfer FILE             sim-to-sim transfer benchmark: train x held-out hardware matrix
    actuator-gym export --policy DIR ...   a saved policy as ONNX / TorchScript for a robot, with its layout

Every error ends in one line ``actuator-gym: error: ...`` and exit status 2 (``--debug`` shows the
traceback).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .._safe_io import atomic_path, clear_outputs, output_dir, write_atomic
from .options import OneLineParser, float_in, int_at_least
from . import tables

DEFAULT_OUT = Path("actuator_gym_out")


class CliError(Exception):
    """An error the user can fix: printed as one line."""


# -- helpers -----------------------------------------------------------------------------------
def _progress(iterable, desc: str, total: int | None = None):
    from tqdm import tqdm

    return tqdm(iterable, desc=desc, total=total, leave=False, mininterval=0.5, disable=not sys.stderr.isatty())


def _load_actuators(spec: str | None, allow_unsafe: bool = False):
    if spec is None:
        return None
    from .. import configs

    preset = configs.load(spec, allow_unsafe_checkpoint=allow_unsafe)
    if not isinstance(preset, configs.ActuatorPreset):
        raise CliError(f"{spec}: not an actuator preset (kind: {type(preset).__name__})")
    return preset.actuators


def _known_tasks() -> list[str]:
    import gymnasium as gym

    from .. import tasks  # noqa: F401  (registers the bundled tasks)

    return sorted(k for k in gym.registry if k.startswith("actuator_gym/"))


def _check_task(task: str) -> None:
    import gymnasium as gym

    from .. import tasks  # noqa: F401  (registers the bundled tasks)

    if task not in gym.registry:
        raise CliError(f"unknown task {task!r}; actuator-gym tasks: {_known_tasks()} (or any registered Gymnasium MuJoCo id)")


# -- list ------------------------------------------------------------------------------------
def cmd_list(args) -> int:
    from .. import configs

    print("Tasks:")
    for t in _known_tasks():
        print(f"  {t}")
    print("Actuator models (YAML 'model:'):")
    for m in configs.MODELS:
        print(f"  {m}")
    print("Presets (configs/):")
    for name, path in configs.list_presets().items():
        try:
            doc = configs.load(path)
            desc = " ".join(doc.description.split())[:90]
            kind = type(doc).__name__.replace("Preset", "").replace("TransferExperiment", "Transfer").lower()
        except Exception as exc:  # noqa: BLE001 - report, keep listing
            desc, kind = f"(invalid: {exc})", "?"
        print(f"  {name:<24} {kind:<10} {desc}")
    return 0


# -- demo / sweep ------------------------------------------------------------------------------
def cmd_demo(args) -> int:
    from . import analysis, plots

    out = output_dir(args.out, "demo")
    target = math.radians(args.target_deg)
    t0 = time.perf_counter()
    cases = analysis.demo_cases()
    recs = [analysis.record_pendulum(cfgs, target=target, seconds=args.seconds, label=label, seed=args.seed)
            for label, cfgs in _progress(cases.items(), "pendulum runs", total=len(cases))]
    rows = [tables.settling_cells({"model": r.label, **analysis.step_metrics(r)}) for r in recs]
    files = [
        plots.step_responses(recs, out / "step_response.png", f"Pendulum step to {args.target_deg:g} deg under four actuator models"),
        plots.efforts(recs, out / "effort.png", "Effort over time"),
    ]
    dc = next(r for r in recs if r.label == "DC motor")
    p = analysis.DEMO_DC
    v = np.linspace(-2.5 * p["actuator_velocity_limit"], 2.5 * p["actuator_velocity_limit"], 301)
    lo, hi = analysis.dc_envelope(p["saturation_effort"], p["actuator_velocity_limit"], p["actuator_effort_limit"], v)
    files.append(plots.torque_speed(v, lo, hi, dc.qd, dc.applied_effort, out / "torque_speed.png",
                                    "DC motor: torque-speed envelope and operating points"))
    files.append(tables.write_csv(out / "summary.csv", rows))
    print(f"Pendulum (0.6 kg at 0.5 m, holding torque {analysis.HOLDING_TORQUE:.2f} N·m at horizontal), "
          f"step command 0 -> {args.target_deg:g} deg, {args.seconds:g} s at 360 Hz:\n")
    tables.print_step_table(rows)
    print(f"\nWrote {len(files)} files to {out}/ in {time.perf_counter() - t0:.1f} s:")
    for f in files:
        print(f"  {f}")
    return 0


def cmd_sweep(args) -> int:
    from . import analysis, plots

    cases = analysis.sweep_cases(args.param)
    out = output_dir(args.out, "sweep")
    target = math.radians(args.target_deg)
    recs = [analysis.record_pendulum(acts, target=target, seconds=args.seconds, label=label, seed=args.seed, **kw)
            for label, acts, kw in _progress(cases, f"sweep {args.param}")]
    rows = []
    for (label, _, _), r in zip(cases, recs):
        row = {"case": label, **analysis.step_metrics(r)}
        if args.param == "effort_limit":
            limit = float(label.split("=")[1].split()[0])
            row["predicted_stall_deg"] = math.degrees(analysis.stall_angle(limit)) if limit < analysis.HOLDING_TORQUE else float("nan")
        if args.param == "implicit":  # a diverged run's step metrics are meaningless: nan
            bad = analysis.diverged(r)
            row = {"case": label, "diverged": bad, **{k: (float("nan") if bad else v) for k, v in row.items() if k != "case"}}
        rows.append(tables.settling_cells(row))
    ylim = (min(-10.0, args.target_deg - 100.0), args.target_deg + 100.0) if args.param == "implicit" else None
    if args.param == "implicit":
        recs = [analysis.until_divergence(r) for r in recs]  # a diverged trace stops where it blew up
    png = plots.step_responses(recs, out / f"sweep_{args.param}.png",
                               f"Pendulum: {args.param} sweep (step to {args.target_deg:g} deg)", ylim=ylim)
    csv_path = tables.write_csv(out / f"sweep_{args.param}.csv", rows)
    tables.print_step_table(rows)
    print(f"\nWrote {png} and {csv_path}")
    return 0


# -- rollout -----------------------------------------------------------------------------------
def _policy(spec: str, env, seed: int):
    if spec == "random":
        env.action_space.seed(seed)
        return lambda obs: env.action_space.sample()
    if spec == "zero":
        zero = np.zeros(env.action_space.shape, dtype=env.action_space.dtype)
        return lambda obs: np.clip(zero, env.action_space.low, env.action_space.high)
    from .training import SavedPolicy

    pol = SavedPolicy.load(spec)
    if pol.meta["obs_dim"] != int(np.prod(env.observation_space.shape)) or pol.meta["act_dim"] != int(np.prod(env.action_space.shape)):
        raise CliError(f"policy {spec} was trained for obs {pol.meta['obs_dim']} / act {pol.meta['act_dim']}, "
                       f"but the task has {env.observation_space.shape} / {env.action_space.shape}")
    return pol


def cmd_rollout(args) -> int:
    from . import plots, telemetry
    from .training import make_env

    task, actuators, kwargs, seed = _task_from_args(args, _experiment(args))
    if args.video:
        kwargs["render_mode"] = "rgb_array"
    env = make_env(task, actuators, **kwargs)
    policy = _policy(args.policy, env, seed)
    out = output_dir(args.out, "rollout")  # refused before the run when OUT/rollout is a link
    obs, info = env.reset(seed=seed)
    dt = float(getattr(env.unwrapped, "dt", 1.0))
    from .gait import GaitRecorder, format_gait

    legged = GaitRecorder.legged_task(env)  # legged tasks: gait figures of the first episode
    gait = GaitRecorder(getattr(legged, "foot_names", None)) if legged is not None else None
    log: dict[str, list] = {"reward": [], "action": []}
    frames = []
    episodes = 0
    for _ in _progress(range(args.steps), "rollout"):
        action = policy(obs)
        obs, reward, term, trunc, info = env.step(action)
        log["reward"].append(float(reward))
        log["action"].append(np.asarray(action, dtype=np.float32))
        for k, v in info.get("actuator", {}).items():
            if isinstance(v, np.ndarray) and v.dtype != object:
                log.setdefault(k, []).append(np.asarray(v))
        if args.video:
            frames.append(env.render())
        if gait is not None and episodes == 0:
            gait.record(legged, [bool(term)])
        if term or trunc:
            episodes += 1
            obs, info = env.reset()
    names, dc_groups = telemetry.names(env), telemetry.dc_motor_groups(env)
    env.close()
    steps = len(log["reward"])
    t = np.arange(1, steps + 1) * dt
    arrays = {k: np.stack(v) for k, v in log.items() if len(v) == steps}
    clear_outputs(out, ROLLOUT_OUTPUTS)  # an earlier rollout's files (e.g. its video), before this one writes
    with atomic_path(out / "telemetry.npz") as tmp:
        np.savez_compressed(tmp, t=t, **arrays)
    keys = [k for k in ("joint_pos", "applied_effort", "applied_thrust") if k in arrays]
    columns = {k: telemetry.column_names(k, arrays[k][0].size, names) for k in keys}
    rows = []
    for i in range(steps):
        row: dict[str, Any] = {"t": float(t[i]), "reward": arrays["reward"][i]}
        for key in keys:
            row.update(zip(columns[key], map(float, np.asarray(arrays[key][i]).ravel())))
        rows.append(row)
    files = [out / "telemetry.npz", tables.write_csv(out / "telemetry.csv", rows)]
    for key, ylabel in (("applied_effort", "applied effort [N·m]"), ("applied_thrust", "applied thrust [N]"), ("joint_pos", "joint position [rad]")):
        if key in arrays:
            legend = [c[len(key) + 1:-1] for c in columns[key]]  # the joint / rotor names
            files.append(plots.timeseries(t, {key: arrays[key]}, out / f"{key}.png", f"{task}: {key}", ylabel, {key: legend}))
    if "applied_effort" in arrays and "joint_vel" in arrays:
        files += [plots.dc_operating_points(group, ids, motors, arrays, t, out / f"torque_speed_{plots.file_part(group)}.png")
                  for group, (ids, motors) in dc_groups.items() if ids]
    if args.video:
        files.append(plots.write_video(frames, out / f"rollout.{args.video}", fps=max(1, int(round(1.0 / dt)))))
    if gait is not None:
        import json

        figures = gait.figures()
        files.append(write_atomic(out / "gait.json", json.dumps(figures, indent=1)))
        print(format_gait(figures))
    print(f"{task}: {steps} steps, {episodes} finished episode(s), mean reward {np.mean(arrays['reward']):.4f}")
    for f in files:
        print(f"  {f}")
    return 0


ROLLOUT_OUTPUTS = ("telemetry.npz", "telemetry.csv", "applied_effort.png", "applied_thrust.png", "joint_pos.png",
                   "torque_speed_*.png", "rollout.gif", "rollout.mp4", "gait.json")
"""The files ``rollout`` writes into ``OUT/rollout/``: an earlier rollout's are removed before a rollout
writes (a symbolic link: the link, not its target); no other file there is touched. Every file is
written atomically (``_safe_io.atomic_path``: a link at its name is replaced, never written through)."""


def _experiment(args):
    """The ``--experiment`` file (trust only from ``--allow-unsafe-checkpoint``), or ``None``."""
    from .. import configs

    if not getattr(args, "experiment", None):
        return None
    exp = configs.load(args.experiment, allow_unsafe_checkpoint=args.allow_unsafe_checkpoint)
    if not isinstance(exp, configs.Experiment):
        raise CliError(f"{args.experiment}: not an experiment file")
    return exp


def _task_from_args(args, exp=None):
    """(task id, actuators, task kwargs, seed) from --experiment or --task/--actuators."""
    trust = args.allow_unsafe_checkpoint
    if exp is not None:
        _check_task(exp.task)
        acts = _load_actuators(args.actuators, trust) if args.actuators else exp.actuators
        return exp.task, acts, dict(exp.task_kwargs), exp.seed if args.seed is None else args.seed
    _check_task(args.task)
    return args.task, _load_actuators(args.actuators, trust), {}, 0 if args.seed is None else args.seed


# -- train -------------------------------------------------------------------------------------
ENGINE_NEUTRAL_KEYS = ("total_timesteps", "eval_every", "eval_episodes")
"""The settings an experiment keeps when ``--engine`` names another engine than its own: the
budget and the evaluation, not the algorithm's knobs (those take the other engine's defaults)."""


def train_settings_from_args(args, exp) -> tuple[str, dict[str, Any]]:
    """(engine, settings) of ``train``: ``--engine`` over the experiment's ``engine:`` (default
    ``sb3``), the experiment's ``train:`` settings (only :data:`ENGINE_NEUTRAL_KEYS` of them when the
    engine differs), then ``--total-timesteps`` / ``--num-envs`` / ``--eval-every``."""
    from .. import configs

    own = exp.engine if exp is not None else configs.DEFAULT_ENGINE
    engine = args.engine or own
    settings: dict[str, Any] = {}
    if exp is not None:
        settings = dict(exp.train) if engine == own else {k: exp.train[k] for k in ENGINE_NEUTRAL_KEYS if k in exp.train}
    for key in ("total_timesteps", "num_envs", "eval_every"):
        if getattr(args, key) is not None:
            settings[key] = getattr(args, key)
    return engine, settings


def cmd_train(args) -> int:
    from .. import configs
    from .engines import train_policy

    exp = _experiment(args)
    task, actuators, kwargs, seed = _task_from_args(args, exp)
    engine = args.engine or (exp.engine if exp is not None else configs.DEFAULT_ENGINE)
    if engine == "ray":
        settings = _ray_settings(args, exp)
    else:
        ray_only = [f"--{k.replace('_', '-')}" for k in ("env_runners", "envs_per_runner", "learners", "address")
                    if getattr(args, k) is not None]
        if ray_only:
            raise CliError(f"{', '.join(ray_only)}: only with --engine ray (this run's engine: {engine})")
        engine, settings = train_settings_from_args(args, exp)
    out = output_dir(args.out, "train", create=False)  # a link there is refused before training
    report = train_policy(engine, task, out, actuators=actuators, task_kwargs=kwargs, seed=seed, settings=settings)
    print(f"PPO ({engine}) on {task}: {report['timesteps']} steps in {report['wall_s']:.1f} s")
    for r in report.get("env_runners", ()):  # the ray engine
        print(f"  env runner {r['index']}: pid {r['pid']} on {r['host']}, world seeds {r['world_seeds'][0]}..{r['world_seeds'][-1]}")
    for s, r in report["curve"]:
        print(f"  after {s:>8} steps: mean eval return {r:.2f}")
    print(f"Saved policy to {out}/policy.json + policy.pt (load with `actuator-gym rollout --policy {out}`)")
    if "resume_file" in report:
        print(f"Summary: {out}/summary.json; {engine}'s own resume file (pickle-bearing): {out}/{report['resume_file']}")
    else:
        print(f"Summary: {out}/summary.json")
    if "log_dir" in report:
        print(f"Training log ({engine}'s; actuator statistics under Episode_Actuator/): {report['log_dir']}")
    return 0


def _ray_settings(args, exp) -> dict[str, Any]:
    """``train --engine ray``'s settings: the experiment's training settings mapped to RLlib's
    (``ray_engine.TRAIN_TO_RAY``), then the options."""
    from .ray_engine import settings_from_train

    settings = settings_from_train(exp.train if exp is not None else {})
    for key, opt in (("env_runners", "env_runners"), ("envs_per_runner", "num_envs"), ("envs_per_runner", "envs_per_runner"),
                     ("learners", "learners"), ("address", "address"), ("total_timesteps", "total_timesteps"),
                     ("eval_every", "eval_every")):  # --envs-per-runner wins over --num-envs (each runner's vector env)
        if getattr(args, opt) is not None:
            settings[key] = getattr(args, opt)
    return settings


# -- fit, identify: tools that parse their own options ------------------------------------------
SELF_PARSING = {"fit": ("fit", "the actuator-network fitting tool", "train an actuator network from logged data"),
                "identify": ("identify", "identification (pip install 'actuator-gym[sysid]')",
                             "identify a motor's physical model from its logs, as a preset"),
                "bench-logs": ("motor_bench", "the identification example", "write the identification example's bench and logs")}


def cmd_tool(args) -> int:
    import importlib

    try:
        tool = importlib.import_module(f"actuator_gym.tools.{SELF_PARSING[args.tool][0]}")
    except ImportError as exc:
        raise CliError(f"{SELF_PARSING[args.tool][1]} is not available: {exc}") from None
    rest = list(args.tool_args)
    return int(tool.main(rest[1:] if rest[:1] == ["--"] else rest) or 0)



# -- transfer ----------------------------------------------------------------------------------
def cmd_transfer(args) -> int:
    from . import transfer

    exp = transfer.load_transfer(args.file, args.allow_unsafe_checkpoint)  # checked before anything is written
    out = output_dir(args.out, "transfer", exp.name, create=False)  # a link there is refused before anything runs
    report = transfer.run_transfer(args.file, out, allow_unsafe_checkpoint=args.allow_unsafe_checkpoint, ray_address=args.address)
    print(f"{exp.task}: {len(report['trained'])} polic(ies) trained, {len(report['reused'])} reused, "
          f"{len(report['fitted'])} net(s) fitted, {report['evaluated']} evaluation(s) run in {report['wall_s']:.1f} s")
    keys = ("train_condition", "hardware_condition", "tracking_error", "tracking_error_ci95", "return", "fell", "energy",
            "saturated_fraction", "peak_abs_effort")
    tables.print_table([{k: r[k] for k in keys} for r in report["summary"]])
    for f in report["files"]:
        print(f"  {f}")
    return 0


# -- export ------------------------------------------------------------------------------------
def cmd_export(args) -> int:
    from .export import LAYOUT_FILE, export_for_task

    exp = _experiment(args)
    policy, task, files = export_for_task(args.policy, args.format, output_dir(args.out, "export", create=False), exp)  # a link refused first
    print(f"Exported the deterministic actor of {args.policy} ({task or 'no task recorded'}): input obs (N, "
          f"{policy.meta['obs_dim']}) float32, output actions (N, {policy.meta['act_dim']}); layout in {LAYOUT_FILE}")
    for f in files:
        print(f"  {f}")
    return 0


# -- parser ------------------------------------------------------------------------------------
_SEED = int_at_least(0)
_SECONDS = float_in(0.0, 3600.0, lo_open=True)
_DEGREES = float_in(-360.0, 360.0)


def _add_out(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default=str(DEFAULT_OUT), metavar="DIR",
                   help="output folder; the command writes into a sub-folder named after it (default: %(default)s)")


def _add_step_options(p: argparse.ArgumentParser, target_deg: float, target_note: str = "") -> None:
    """``--out``, ``--target-deg``, ``--seconds``, ``--seed`` of the pendulum step commands (demo, sweep)."""
    _add_out(p)
    p.add_argument("--target-deg", type=_DEGREES, default=target_deg, metavar="DEG",
                   help=f"step target [deg from hanging down], in [-360, 360] (default: %(default)s{target_note})")
    p.add_argument("--seconds", type=_SECONDS, default=3.0, metavar="S",
                   help="simulated time after the step [s], in (0, 3600] (default: %(default)s)")
    p.add_argument("--seed", type=_SEED, default=0, help="reset seed, >= 0 (default: %(default)s)")


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog="actuator-gym",
        description="Realistic actuators for RL simulations: demos, sweeps, rollouts, training, actuator-net fitting.",
        epilog="Run 'actuator-gym COMMAND --help' for a command's options.",
    )
    p.add_argument("--debug", action="store_true", help="show the full traceback on errors (first option only)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)

    sub.add_parser("list", help="list tasks, actuator models and bundled presets",
                   description="List the registered tasks, the actuator models a YAML preset can name, and the "
                               "bundled presets and experiments.").set_defaults(func=cmd_list)

    d = sub.add_parser("demo", help="compare actuator models on the pendulum (plots + table)",
                       description="Step the pendulum under four actuator models (ideal PD, effort-limited PD, "
                                   "delayed PD, DC motor); write plots and summary.csv to OUT/demo.")
    _add_step_options(d, target_deg=70.0)
    d.set_defaults(func=cmd_demo)

    from .analysis import SWEEPS

    s = sub.add_parser("sweep", help="sweep one actuator parameter on the pendulum",
                       description="Run the pendulum step once per value of one actuator parameter; write a plot "
                                   "and a CSV to OUT/sweep.")
    s.add_argument("param", choices=sorted(SWEEPS),
                   help="parameter to sweep; values and units: " + "; ".join(f"{k}: {', '.join(f'{v:g}' for v in vals)} {unit}"
                                                                     for k, (vals, unit) in sorted(SWEEPS.items())))
    _add_step_options(s, target_deg=90.0, target_note=", horizontal")
    s.set_defaults(func=cmd_sweep)

    for name, helptext, desc in (
        ("rollout", "run a task and write telemetry, plots and optionally a video",
         "Run a task with a random, zero or saved policy; write telemetry (npz; csv with columns named "
         "KEY[JOINT] / KEY[ROTOR], e.g. joint_pos[FL_calf_joint]), plots, each DC-motor group's torque-speed "
         "operating points against its envelope (torque_speed_GROUP.png) and optionally a video to OUT/rollout."),
        ("train", "train PPO (Stable-Baselines3 or rsl_rl) on a task",
         "Train PPO on the native vector env of a task with an engine (--engine: sb3 = Stable-Baselines3, "
         "rsl_rl = rsl_rl's OnPolicyRunner, ray = Ray RLlib env runners and learners); write the policy in the safe format (policy.json + policy.pt), the "
         "engine's own resume file (sb3_model.zip for PPO.load, rsl_rl_model.pt for OnPolicyRunner.load), the "
         "learning curve, summary.json and the engine's training log with the actuator statistics "
         "(OUT/train/logs: sb3's progress.csv, TensorBoard events when tensorboard is installed) to OUT/train."),
    ):
        r = sub.add_parser(name, help=helptext, description=desc)
        src = r.add_mutually_exclusive_group()
        src.add_argument("--task", default="actuator_gym/Pendulum-v0", metavar="ID",
                         help="Gymnasium id: a bundled task or any registered MuJoCo env (default: %(default)s)")
        src.add_argument("--experiment", metavar="YAML",
                         help="experiment preset name or YAML file (task, actuators, training settings)")
        r.add_argument("--actuators", metavar="PRESET",
                       help="actuator preset name or YAML file (default: the task's or experiment's own)")
        r.add_argument("--seed", type=_SEED, default=None,
                       help="seed, >= 0 (default: the experiment's seed, else 0)")
        r.add_argument("--allow-unsafe-checkpoint", action="store_true",
                       help="let the --actuators / --experiment files load network formats that can run code "
                            "(TorchScript, pickle, .pt2); only for files you trust (default: off; a YAML file "
                            "cannot switch it on)")
        _add_out(r)
        if name == "rollout":
            r.add_argument("--policy", default="random", metavar="POLICY",
                           help="random | zero | folder holding a saved policy (policy.json + policy.pt) | a bundled "
                                "policy's name (quadruped_walk) (default: %(default)s)")
            r.add_argument("--steps", type=int_at_least(1), default=300,
                           help="env steps (policy decisions; each is the task's substeps), >= 1 (default: %(default)s)")
            r.add_argument("--video", choices=["gif", "mp4"],
                           help="also write a video of rgb_array frames at the env's control rate (default: none)")
            r.set_defaults(func=cmd_rollout)
        else:
            from .engines import ENGINES

            r.add_argument("--engine", choices=sorted(ENGINES), default=None,
                           help="training engine (default: the experiment's 'engine:', else sb3); with an experiment "
                                "of another engine only its total_timesteps / eval_every / eval_episodes carry over")
            r.add_argument("--total-timesteps", type=int_at_least(1), default=None, metavar="N",
                           help=f"env steps to train for, summed over envs, >= 1 (rsl_rl: rounded up to whole "
                                f"iterations) (default: the experiment's, else {configs_default('total_timesteps')})")
            r.add_argument("--num-envs", type=int_at_least(1), default=None, metavar="N",
                           help=f"parallel envs of the native vector env, >= 1 (default: the experiment's, else "
                                f"{configs_default('num_envs')})")
            r.add_argument("--eval-every", type=int_at_least(1), default=None, metavar="N",
                           help=f"env steps between deterministic evaluations, >= 1 (default: the experiment's, "
                                f"else {configs_default('eval_every')})")
            _add_ray_options(r)
            r.set_defaults(func=cmd_train)

    t = sub.add_parser("transfer", help="train under several conditions, evaluate on held-out hardware conditions",
                       description="Run a sim-to-sim transfer benchmark from a transfer file (kind: transfer; see "
                                   "docs/transfer.md): fit its learned-actuator nets, train one policy per training "
                                   "condition and seed, evaluate each deterministically on every hardware condition; "
                                   "write results.csv, summary.csv, summary.md and heatmaps.png to OUT/transfer/NAME. "
                                   "Resumable: policies and nets already there for the same condition are reused.")
    t.add_argument("file", metavar="FILE", help="transfer file: a bundled name (transfer_pendulum, transfer_quadruped) or a YAML path")
    t.add_argument("--allow-unsafe-checkpoint", action="store_true",
                   help="let the file's actuator presets load network formats that can run code (TorchScript, pickle, "
                        ".pt2); only for files you trust (default: off)")
    t.add_argument("--address", default=None, metavar="ADDR",
                   help="the Ray cluster a file with engine: ray trains on ('auto', 'host:6379', 'ray://host:10001'; a file "
                        "cannot name one); default: start a local one")
    _add_out(t)
    t.set_defaults(func=cmd_transfer)

    from .export import EXPORT_FORMATS

    x = sub.add_parser("export", help="write a saved policy as ONNX or TorchScript for a robot",
                       description="Write the deterministic actor of a saved policy, with its observation normalization "
                                   "and action bounds inside, as OUT/export/policy.onnx (--format onnx) or policy.pt "
                                   "(--format torchscript; torch.jit.load), input obs (N, obs_dim) float32, output the "
                                   "actions SavedPolicy gives; and OUT/export/policy_layout.json (observation and action "
                                   "layout, bounds, the task's action scale / offset). See docs/training.md.")
    x.add_argument("--policy", required=True, metavar="NAME|DIR",
                   help="a folder holding a saved policy (policy.json + policy.pt), or a bundled policy's name")
    x.add_argument("--format", required=True, choices=sorted(EXPORT_FORMATS), help="the model file's format")
    x.add_argument("--experiment", metavar="YAML",
                   help="the experiment the policy was trained with (its task settings and actuators give the layout's "
                        "action scale / offset; default: the policy's task with its defaults)")
    x.add_argument("--allow-unsafe-checkpoint", action="store_true",
                   help="let the --experiment file load network formats that can run code (TorchScript, pickle, .pt2); "
                        "only for files you trust (default: off)")
    _add_out(x)
    x.set_defaults(func=cmd_export)

    for tool, (_, _, text) in SELF_PARSING.items():
        f = sub.add_parser(tool, help=f"{text} (see `actuator-gym {tool} --help`)", add_help=False)
        f.add_argument("tool_args", nargs=argparse.REMAINDER)
        f.set_defaults(func=cmd_tool, tool=tool)
    return p


def _add_ray_options(r: argparse.ArgumentParser) -> None:
    """``train``'s Ray RLlib options (docs/distributed.md)."""
    g = r.add_argument_group("Ray RLlib (--engine ray)")
    g.add_argument("--env-runners", type=int_at_least(1), default=None, metavar="K",
                   help="env runner actors (processes, spread over the cluster's nodes), >= 1 (default: 2)")
    g.add_argument("--envs-per-runner", type=int_at_least(1), default=None, metavar="N",
                   help="worlds each env runner steps in one batched env, >= 1 (default: the experiment's num_envs, else 8)")
    g.add_argument("--learners", type=int_at_least(0), default=None, metavar="L",
                   help="learner actors (torch DDP between them; 0: learn in this process), >= 0 (default: 0)")
    g.add_argument("--address", default=None, metavar="ADDR",
                   help="an existing Ray cluster ('auto', 'host:6379', 'ray://host:10001'); default: start a local one")


def configs_default(key: str) -> str:
    """The defaults of a training setting per engine (``configs.TRAIN_SETTINGS``), for help texts."""
    from ..configs import TRAIN_SETTINGS

    return ", ".join(f"{engine} {keys[key]}" for engine, keys in TRAIN_SETTINGS.items() if key in keys)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv[:1]
    rest = argv[1:] if debug else argv
    if rest[:1] and rest[0] in SELF_PARSING:  # these tools parse their own options (incl. --help)
        argv = (["--debug"] if debug else []) + [rest[0], "--", *rest[1:]]
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        reconfigure = getattr(sys.stdout, "reconfigure", None)
        if callable(reconfigure):  # progress lines (train, transfer, fit) reach a pipe or log as they are printed
            reconfigure(line_buffering=True)
        code = args.func(args)
        sys.stdout.flush()  # a reader that left shows here, not in Python's flush at exit (block-buffered pipes)
        return code
    except KeyboardInterrupt:
        print("actuator-gym: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `actuator-gym list | head`: the reader left; as other Unix tools, stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python's flush at exit must not raise again
        return 141
    except Exception as exc:  # noqa: BLE001 - one line for the user, traceback with --debug
        if args.debug:
            raise
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if isinstance(exc, KeyError):
            msg = str(exc.args[0]) if exc.args else msg
        print(f"actuator-gym: error: {msg}", file=sys.stderr)
        return 2
