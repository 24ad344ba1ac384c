"""Training engines (actuator_gym.tools.engines): ``actuator-gym train --engine sb3 | rsl_rl``, the
experiment files' ``engine:`` key, ``summary.json``, the safe policy of an rsl_rl run (normalizer
included) against rsl_rl's own inference policy, seeded determinism, and the errors for a bad engine
or setting (raised before anything is written)."""

from __future__ import annotations

import csv
import inspect
import json
import math

import numpy as np
import pytest
import torch

from actuator_gym import configs
from actuator_gym.runtime.episode_stats import EPISODE_STATS
from actuator_gym.tools.cli import main
from actuator_gym.tools.engines import ENGINES, SUMMARY_KEYS, train_policy
from actuator_gym.tools.training import SavedPolicy, train_ppo
from actuator_gym.tools.train_rsl_rl import RSL_RL_MODEL_FILE, runner_config

PENDULUM = "actuator_gym/Pendulum-v0"
EPISODE = 10  # control steps (1/60 s each): quick evaluations; episodes end in iterations 1 and 2 of 8 steps
SHORT = {"episode_length_s": EPISODE / 60.0}
TINY = {"num_envs": 16, "num_steps_per_env": 8, "eval_episodes": 1, "actor_hidden_dims": [16, 16],
        "critic_hidden_dims": [16, 16]}
PER_ITERATION = 16 * 8


def _tiny(out, seed=0, iterations=3, **extra):
    settings = {**TINY, "total_timesteps": iterations * PER_ITERATION, "eval_every": 2 * PER_ITERATION, **extra}
    return train_policy("rsl_rl", PENDULUM, out, task_kwargs=SHORT, seed=seed, settings=settings, progress=False)


def _curve(folder):
    with open(folder / "learning_curve.csv") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["timesteps", "mean_eval_return"]
    return [(int(s), float(r)) for s, r in rows[1:]]


@pytest.fixture(scope="module")
def rsl_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("rsl") / "run"
    return out, _tiny(out)


def test_rsl_rl_run_writes_every_file_and_its_summary(rsl_run):
    out, report = rsl_run
    assert {p.name for p in out.iterdir()} == {"policy.json", "policy.pt", "learning_curve.csv", "learning_curve.png",
                                              "summary.json", RSL_RL_MODEL_FILE, "logs"}
    summary = json.loads((out / "summary.json").read_text())
    assert set(SUMMARY_KEYS) <= set(summary) and summary == report["summary"]
    assert summary["engine"] == "rsl_rl" and summary["task"] == PENDULUM and summary["seed"] == 0
    assert summary["timesteps"] == 3 * PER_ITERATION and summary["iterations"] == 3
    # evaluations at 0, at eval_every (after 2 iterations) and after the last one; the csv is the summary's curve
    curve = _curve(out)
    assert [s for s, _ in curve] == [0, 2 * PER_ITERATION, 3 * PER_ITERATION]
    assert np.allclose(summary["curve"], curve, rtol=1e-6)
    assert summary["final_eval_return"] == pytest.approx(curve[-1][1], rel=1e-6)
    assert summary["settings"] == {**configs.RSL_RL_TRAIN_KEYS, **TINY, "total_timesteps": 3 * PER_ITERATION,
                                   "eval_every": 2 * PER_ITERATION}
    assert summary["resume_file"] == RSL_RL_MODEL_FILE and summary["log_dir"] == "logs"
    assert 0 < summary["learn_s"] <= summary["wall_s"]
    assert summary["steps_per_s"] == pytest.approx(summary["timesteps"] / summary["learn_s"])
    meta = json.loads((out / "policy.json").read_text())
    assert meta["format"] == "actuator-gym-policy/2" and meta["activation"] == "elu"
    assert meta["obs_normalization"] == {"epsilon": 0.01} and meta["net_arch"] == [16, 16]


def test_rsl_rl_run_logs_one_tensorboard_point_per_iteration_with_actuator_statistics(rsl_run):
    """rsl_rl's own TensorBoard log in logs/ (its model_<it>.pt files replaced by the one resume file):
    a point per iteration, and the actuator statistics of the iterations in which episodes ended."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out, _ = rsl_run
    logs = out / "logs"
    assert not list(logs.glob("model_*.pt")) and not (logs / "git").exists()
    acc = EventAccumulator(str(logs))
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    assert {"Loss/learning_rate", "Perf/total_fps", "Policy/mean_std"} <= tags
    assert [e.step for e in acc.Scalars("Perf/total_fps")] == [0, 1, 2]
    # 10-step episodes, 8 steps per iteration: they end at steps 10 and 20, in iterations 1 and 2
    actuator_tags = {t for t in tags if t.startswith("Episode_Actuator/")}
    assert actuator_tags == {f"Episode_Actuator/{g}/{k}" for g in ("pendulum", "all_joints") for k in EPISODE_STATS}
    for tag in actuator_tags:
        assert [e.step for e in acc.Scalars(tag)] == [1, 2], tag


def test_saved_policy_is_rsl_rl_inference_policy_with_its_normalizer(rsl_run):
    """Same observations -> same actions as rsl_rl's deterministic policy rebuilt from the run's
    own checkpoint (its normalizer has learned: the comparison would fail without it)."""
    from rsl_rl.runners import OnPolicyRunner

    from actuator_gym.adapters import rsl_rl
    from actuator_gym.tools.training import make_vec_env

    out, report = rsl_run
    vec = make_vec_env(PENDULUM, 16, **SHORT)
    env = rsl_rl(vec, seed=0)
    runner = OnPolicyRunner(env, runner_config(report["summary"]["settings"]), log_dir=None, device="cpu")
    runner.load(str(out / RSL_RL_MODEL_FILE))  # our own file: a trusted pickle
    assert runner.current_learning_iteration == 2  # rsl_rl's convention: the index of the last iteration
    inference = runner.get_inference_policy()
    saved = SavedPolicy.load(out)
    norm = inference.obs_normalizer
    assert (norm.mean.abs() > 1e-3).any() and ((norm.std - 1).abs() > 1e-3).any()  # it has learned
    obs = np.random.default_rng(3).normal(0.0, 3.0, size=(64, 5)).astype(np.float32)
    from tensordict import TensorDict

    with torch.inference_mode():
        want = inference(TensorDict({"policy": torch.from_numpy(obs)}, batch_size=[64])).numpy()
    low, high = vec.single_action_space.low, vec.single_action_space.high
    want = np.clip(want, low, high)  # the adapter's clip_actions
    got = saved(obs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    for i in range(3):  # one observation at a time, as evaluate() and rollout feed it
        np.testing.assert_allclose(saved(obs[i]), want[i], rtol=1e-5, atol=1e-6)
    with torch.inference_mode():
        raw = np.clip(inference.mlp(torch.from_numpy(obs)).numpy(), low, high)
    assert np.abs(raw - want).max() > 1e-3  # without the normalizer the actions would differ
    env.close()


def test_same_seed_same_weights_other_seed_other_weights(tmp_path, rsl_run):
    out, report = rsl_run
    again = _tiny(tmp_path / "again")
    a, b = torch.load(out / "policy.pt", weights_only=True), torch.load(tmp_path / "again" / "policy.pt", weights_only=True)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert again["curve"] == report["curve"]
    other = torch.load(_tiny(tmp_path / "other", seed=1)["out_dir"] + "/policy.pt", weights_only=True)
    assert not torch.equal(a["action_net.weight"], other["action_net.weight"])


def test_torch_threads_hold_for_the_run_and_are_restored_after(tmp_path, monkeypatch):
    """``torch_threads``: the run's torch thread count (0: every usable CPU), the caller's count back after."""
    from actuator_gym.tools import train_rsl_rl

    calls, real = [], torch.set_num_threads
    monkeypatch.setattr(torch, "set_num_threads", lambda n: (calls.append(n), real(n)))
    before = torch.get_num_threads()
    _tiny(tmp_path / "two", iterations=1, torch_threads=2)
    _tiny(tmp_path / "all", iterations=1)
    assert calls == [2, before, train_rsl_rl.usable_cpus(), before] and torch.get_num_threads() == before


@pytest.mark.parametrize("engine, settings, during", [("rsl_rl", {"torch_threads": 2}, 2), ("sb3", {}, 1)])
def test_a_failed_run_restores_the_callers_torch_threads(tmp_path, engine, settings, during):
    """The engine's thread count holds only inside the run, also when the run fails in the middle
    (here: the task refuses an unknown keyword when the engine builds its envs)."""
    calls, real = [], torch.set_num_threads
    before = torch.get_num_threads()
    caller = 3 - during  # differs from the engine's count, so a missing restore shows
    real(caller)
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(torch, "set_num_threads", lambda n: (calls.append(n), real(n)))
            with pytest.raises(TypeError, match="no_such_option"):
                train_policy(engine, PENDULUM, tmp_path, task_kwargs={"no_such_option": 1}, seed=0,
                             settings={"total_timesteps": 64, "num_envs": 2, **settings}, progress=False)
        assert calls == [during, caller] and torch.get_num_threads() == caller
    finally:
        real(before)


def test_the_evaluations_do_not_change_what_is_learned(tmp_path, rsl_run):
    """Evaluating (building the saved policy, running episodes) between iterations leaves torch's
    generator alone: evaluating after every iteration or only at the end learns the same weights."""
    out, _ = rsl_run
    _tiny(tmp_path / "every", eval_every=PER_ITERATION)
    _tiny(tmp_path / "end", eval_every=10**6)
    assert [s for s, _ in _curve(tmp_path / "every")] == [0, PER_ITERATION, 2 * PER_ITERATION, 3 * PER_ITERATION]
    assert [s for s, _ in _curve(tmp_path / "end")] == [0, 3 * PER_ITERATION]
    ref = torch.load(out / "policy.pt", weights_only=True)
    for run in ("every", "end"):
        got = torch.load(tmp_path / run / "policy.pt", weights_only=True)
        assert all(torch.equal(ref[k], got[k]) for k in ref), run


def test_cli_trains_both_engines_from_experiment_files_and_rolls_out(tmp_path, capsys):
    exp = tmp_path / "exp.yaml"
    tiny = ", ".join(f"{k}: {v}" for k, v in TINY.items())
    exp.write_text(f"kind: experiment\ntask: {PENDULUM}\ntask_kwargs: {{episode_length_s: 0.5}}\nengine: rsl_rl\n"
                   f"train: {{{tiny}, total_timesteps: 100, eval_every: 100000}}\nseed: 4\n")
    loaded = configs.load(exp)
    assert loaded.engine == "rsl_rl" and loaded.train["num_envs"] == 16 and loaded.train["num_learning_epochs"] == 5
    assert main(["train", "--experiment", str(exp), "--eval-every", "128", "--out", str(tmp_path / "r")]) == 0
    folder = tmp_path / "r" / "train"
    summary = json.loads((folder / "summary.json").read_text())
    # 100 steps round up to one whole iteration; --eval-every overrides the file's
    assert (summary["engine"], summary["seed"], summary["timesteps"], summary["settings"]["eval_every"]) == ("rsl_rl", 4, 128, 128)
    assert [s for s, _ in _curve(folder)] == [0, 128]
    assert "PPO (rsl_rl)" in capsys.readouterr().out
    assert main(["rollout", "--experiment", str(exp), "--policy", str(folder), "--steps", "5", "--out", str(tmp_path / "r")]) == 0

    # --engine sb3 on the same file: the budget and evaluation carry over, the algorithm knobs are sb3's defaults;
    # --seed over the file's
    argv = ["train", "--experiment", str(exp), "--engine", "sb3", "--num-envs", "2", "--total-timesteps", "64",
            "--seed", "5", "--out", str(tmp_path / "s")]
    assert main(argv) == 0
    folder = tmp_path / "s" / "train"
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["engine"] == "sb3" and summary["seed"] == 5 and summary["resume_file"] == "sb3_model.zip"
    assert summary["settings"] == {**configs.TRAIN_KEYS, "num_envs": 2, "total_timesteps": 64, "eval_every": 100000,
                                   "eval_episodes": 1}
    assert summary["log_dir"] == "logs" and (folder / "logs" / "progress.csv").is_file()
    assert summary["final_eval_return"] == pytest.approx(_curve(folder)[-1][1], rel=1e-6)
    assert json.loads((folder / "policy.json").read_text())["format"] == "actuator-gym-policy/1"  # still readable by 1.x
    assert main(["rollout", "--policy", str(folder), "--steps", "5", "--out", str(tmp_path / "s")]) == 0


def test_bad_engine_or_setting_is_refused_before_anything_is_written(tmp_path, capsys):
    out = tmp_path / "never"
    for engine, settings, fragments in (
        ("ray2", {}, ["engine must be one of", "'rsl_rl'", "'sb3'", "'ray2'"]),
        ("rsl_rl", {"n_steps": 8}, ["unknown key(s) ['settings.n_steps'] for engine 'rsl_rl'", "num_steps_per_env"]),
        ("sb3", {"num_steps_per_env": 8}, ["unknown key(s) ['settings.num_steps_per_env'] for engine 'sb3'", "n_steps"]),
        ("rsl_rl", {"activation": "gelu"}, ["settings.activation must be one of ['elu', 'tanh', 'relu']"]),
        ("rsl_rl", {"schedule": "cosine"}, ["settings.schedule must be one of ['adaptive', 'fixed']"]),
        ("rsl_rl", {"desired_kl": 0.0}, ["settings.desired_kl must be a number in (0, 1]"]),
        ("rsl_rl", {"num_envs": 2, "num_steps_per_env": 2, "num_mini_batches": 5}, ["settings.num_mini_batches = 5", "at most"]),
        ("rsl_rl", {"obs_normalization": 1}, ["settings.obs_normalization must be true or false"]),
        ("sb3", {"log_std_init": 5.0}, ["settings.log_std_init must be a number in [-10, 2]"]),
        ("rsl_rl", {"torch_threads": -1}, ["settings.torch_threads must be an integer in [0, 1024] (0: every CPU)"]),
        ("rsl_rl", {"torch_threads": True}, ["settings.torch_threads must be an integer in [0, 1024]"]),
        ("sb3", {"torch_threads": 2}, ["unknown key(s) ['settings.torch_threads'] for engine 'sb3'"]),
        ("rsl_rl", {"symmetry": "left_right"}, ["settings.symmetry must be one of ['none', 'augment', 'mirror_loss', 'both']"]),
        ("rsl_rl", {"mirror_loss_coeff": -1.0}, ["settings.mirror_loss_coeff must be a number in [0, 1000]"]),
        ("rsl_rl", {"symmetry": "augment"}, ["settings.symmetry = 'augment'", "PendulumTask declares no mirror symmetry"]),
    ):
        with pytest.raises(ValueError) as info:
            train_policy(engine, PENDULUM, out, settings=settings, progress=False)
        for fragment in fragments:
            assert fragment in str(info.value), (fragment, str(info.value))
    assert not out.exists()
    exp = tmp_path / "bad.yaml"
    for body, fragments in (
        ("engine: torchrl\n", ["engine must be one of ['rsl_rl', 'sb3'], got 'torchrl'"]),
        ("engine: rsl_rl\ntrain: {n_steps: 8}\n", ["unknown key(s) ['train.n_steps'] for engine 'rsl_rl'"]),
        ("train: {actor_hidden_dims: [8]}\n", ["unknown key(s) ['train.actor_hidden_dims'] for engine 'sb3'"]),
        ("engine: rsl_rl\ntrain: {actor_hidden_dims: []}\n", ["train.actor_hidden_dims must be a list of 1 to 16 integers"]),
    ):
        exp.write_text(f"kind: experiment\ntask: {PENDULUM}\n{body}")
        assert main(["train", "--experiment", str(exp), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert str(exp) in err and len(err.strip().splitlines()) == 1 and all(f in err for f in fragments), err
    with pytest.raises(SystemExit):
        main(["train", "--engine", "nope"])
    assert "--engine: invalid choice: 'nope'" in capsys.readouterr().err
    assert not out.exists()


def test_sb3_defaults_are_one_table_and_log_std_init_reaches_the_policy(tmp_path):
    params = inspect.signature(train_ppo).parameters
    assert {k: (list(params[k].default) if k == "net_arch" else params[k].default) for k in configs.TRAIN_KEYS} == configs.TRAIN_KEYS
    # experiment files name sb3 / rsl_rl; ray takes the file's sb3 settings (ray_engine.TRAIN_TO_RAY)
    assert set(ENGINES) == set(configs.TRAIN_SETTINGS) | {"ray"} == {"sb3", "rsl_rl", "ray"}
    train_policy("sb3", PENDULUM, tmp_path, task_kwargs=SHORT, progress=False,
                 settings={"total_timesteps": 32, "num_envs": 2, "n_steps": 16, "batch_size": 32, "eval_every": 10**6,
                           "eval_episodes": 1, "net_arch": [8], "log_std_init": math.log(0.25)})
    from stable_baselines3 import PPO

    log_std = PPO.load(tmp_path / "sb3_model.zip", device="cpu").policy.log_std.detach()
    # one update of 10 small epochs moves it by well under 0.05 from where it started
    assert torch.allclose(log_std, torch.full_like(log_std, math.log(0.25)), atol=0.05)
    exp = configs.load("quadruped_go1_dc")
    assert exp.engine == "sb3" and math.exp(exp.train["log_std_init"]) == pytest.approx(0.25, rel=1e-3)
