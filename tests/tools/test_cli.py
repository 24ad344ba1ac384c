"""End-to-end tests of the command line on tiny budgets: files written, numbers matching the library."""

import csv
import json
import math
import re

import numpy as np
import pytest

from actuator_gym.tools import analysis
from actuator_gym.tools.cli import main

PNG = b"\x89PNG\r\n\x1a\n"


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def is_png(path):
    return path.is_file() and path.stat().st_size > 1000 and path.read_bytes()[:8] == PNG


def test_demo_writes_plots_and_table_matching_the_library(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path), "--seconds", "1.5"]) == 0
    out = tmp_path / "demo"
    for name in ("step_response.png", "effort.png", "torque_speed.png"):
        assert is_png(out / name), name
    rows = read_csv(out / "summary.csv")
    assert [r["model"] for r in rows] == list(analysis.demo_cases())
    # the CSV numbers are the library's own computation
    cases = analysis.demo_cases()
    rec = analysis.record_pendulum(cases["DC motor"], target=math.radians(70.0), seconds=1.5, label="DC motor")
    want = analysis.step_metrics(rec)
    got = next(r for r in rows if r["model"] == "DC motor")
    assert want.pop("settled") is True and got["settled"] == "yes"
    for k, v in want.items():
        assert float(got[k]) == pytest.approx(v, rel=1e-4, abs=1e-9), k
    # physics visible in the table: the limited PD never exceeds its limit, the delay shows as latency
    limited = next(r for r in rows if r["model"] == "PD, 2 N·m limit")
    assert float(limited["peak_effort_Nm"]) == pytest.approx(2.0)
    ideal = next(r for r in rows if r["model"] == "ideal PD")
    delayed = next(r for r in rows if r["model"] == "PD, 24-substep delay")
    assert float(delayed["response_time_s"]) - float(ideal["response_time_s"]) == pytest.approx(24 / 360, abs=1.5 / 360)
    printed = capsys.readouterr().out
    assert "rise_time_s" in printed
    # the 2 N·m limit cannot hold 70 deg (holding torque 2.94 N·m at 90 deg): it swings, no steady error
    assert limited["settled"] == "no" and limited["steady_error_rad"] == ""
    assert re.search(r"^PD, 2 N·m limit .* no +not settled ", printed, re.M) and "'not settled'" in printed


def test_sweep_effort_limit_stall_angles(tmp_path):
    assert main(["sweep", "effort_limit", "--out", str(tmp_path), "--seconds", "1.0"]) == 0
    rows = read_csv(tmp_path / "sweep" / "sweep_effort_limit.csv")
    assert is_png(tmp_path / "sweep" / "sweep_effort_limit.png")
    assert len(rows) == 5
    assert float(rows[0]["predicted_stall_deg"]) == pytest.approx(math.degrees(math.asin(1.0 / analysis.HOLDING_TORQUE)), abs=1e-3)
    assert math.isnan(float(rows[-1]["predicted_stall_deg"]))


def test_rollout_random_and_zero_policy(tmp_path, capsys):
    assert main(["rollout", "--task", "actuator_gym/Pendulum-v0", "--actuators", "ideal_pd", "--steps", "40",
                 "--out", str(tmp_path), "--seed", "3"]) == 0
    z = np.load(tmp_path / "rollout" / "telemetry.npz")
    assert z["applied_effort"].shape == (40, 1) and z["reward"].shape == (40,)
    assert np.abs(z["applied_effort"]).max() <= 23.7 + 1e-4  # the ideal_pd preset's limit
    rows = read_csv(tmp_path / "rollout" / "telemetry.csv")
    assert list(rows[0]) == ["t", "reward", "joint_pos[hinge]", "applied_effort[hinge]"]  # the pendulum's joint
    assert len(rows) == 40 and float(rows[5]["applied_effort[hinge]"]) == pytest.approx(float(z["applied_effort"][5, 0]), rel=1e-5)
    assert is_png(tmp_path / "rollout" / "applied_effort.png")
    assert not list((tmp_path / "rollout").glob("torque_speed_*"))  # ideal PD: no DC-motor group


def test_train_then_rollout_the_saved_policy(tmp_path, capsys):
    assert main(["train", "--total-timesteps", "256", "--num-envs", "2", "--eval-every", "256", "--out", str(tmp_path)]) == 0
    folder = tmp_path / "train"
    meta = json.loads((folder / "policy.json").read_text())
    assert meta["obs_dim"] == 5 and meta["act_dim"] == 1
    assert is_png(folder / "learning_curve.png") and len(read_csv(folder / "learning_curve.csv")) >= 2
    assert main(["rollout", "--policy", str(folder), "--steps", "20", "--out", str(tmp_path)]) == 0
    from actuator_gym.tools.training import SavedPolicy

    pol = SavedPolicy.load(folder)
    a = pol(np.zeros(5, np.float32))
    assert a.shape == (1,) and np.all(np.abs(a) <= math.pi + 1e-6)
    # Stable-Baselines3's own archive beside it: PPO.load reads it and acts as the safe policy does
    from stable_baselines3 import PPO

    model = PPO.load(folder / "sb3_model.zip", device="cpu")
    obs = np.random.default_rng(0).normal(size=(7, 5)).astype(np.float32)
    want, _ = model.predict(obs, deterministic=True)
    np.testing.assert_allclose(pol(obs), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "argv, match",
    [
        (["rollout", "--task", "actuator_gym/Nope-v0"], "unknown task 'actuator_gym/Nope-v0'"),
        (["rollout", "--actuators", "nope"], "unknown preset 'nope'"),
        (["rollout", "--experiment", "{bad}"], "bad"),
        (["rollout", "--policy", "/nonexistent/folder", "--steps", "2"], "policy.json"),
    ],
)
def test_bad_input_one_line_nonzero(argv, match, tmp_path, capsys):
    assert main(argv + ["--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("actuator-gym: error:") and match in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_malformed_yaml_and_unknown_keys(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: actuators\ngroups:\n  g: {model: IdealPD, stifness: 3}\n")
    assert main(["rollout", "--actuators", str(bad), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "stifness" in err and "Traceback" not in err
    bad.write_text("kind: actuators\ngroups: [unclosed\n")
    assert main(["rollout", "--actuators", str(bad), "--out", str(tmp_path)]) == 2
    assert "malformed YAML" in capsys.readouterr().err
    out_of_range = tmp_path / "neg.yaml"
    out_of_range.write_text("kind: actuators\ngroups:\n  g: {model: IdealPD, damping: -1}\n")
    assert main(["rollout", "--actuators", str(out_of_range), "--out", str(tmp_path)]) == 2
    assert "allowed" in capsys.readouterr().err


def test_list(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "actuator_gym/Pendulum-v0" in out and "DCMotor" in out and "go1_dc_motor" in out


def test_unknown_sweep_parameter_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit) as e:
        main(["sweep", "mass"])
    assert e.value.code == 2


def test_rollout_video_gif(tmp_path):
    """Headless GIF from rgb_array frames, MUJOCO_GL unset (a fresh interpreter: MuJoCo picks its GL
    backend at import, actuator_gym chooses EGL / OSMesa for it)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("MUJOCO_GL", "DISPLAY")}
    r = subprocess.run([sys.executable, "-m", "actuator_gym", "rollout", "--steps", "6", "--video", "gif", "--out", str(tmp_path)],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    import imageio.v2 as imageio

    frames = imageio.mimread(tmp_path / "rollout" / "rollout.gif")
    assert len(frames) == 6 and frames[0].shape[:2] == (480, 480)
    # a later rollout into the same folder without a video: the old video goes, a user's own file stays
    (tmp_path / "rollout" / "notes.txt").write_text("mine")
    assert main(["rollout", "--steps", "3", "--out", str(tmp_path)]) == 0
    left = sorted(p.name for p in (tmp_path / "rollout").iterdir())
    assert "rollout.gif" not in left and "notes.txt" in left and "telemetry.npz" in left, left


def test_fit_synthetic_log_exports_a_loadable_net(tmp_path, capsys):
    data, out = tmp_path / "log.npz", tmp_path / "net"
    assert main(["fit", "--synthetic", "--epochs", "60", str(data), str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["heldout"]["r2"] > 0.9
    import actuator_gym as ag

    m = ag.ActuatorNetMLPCfg(network_file=str(out / "actuator_net.onnx"), saturation_effort=30.0,
                             actuator_effort_limit=20.0, actuator_velocity_limit=15.0).build(joint_names=["j"])
    assert m.compute(joint_pos=[[0.0]], joint_vel=[[0.0]], target_pos=[[0.2]]).shape == (1, 1)
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        main(["fit", "--help"])  # the fit tool's own help, passed through
    assert e.value.code == 0 and "--synthetic" in capsys.readouterr().out


HELP_MUST_SAY = {  # option -> what its help must state (unit or range, and the default)
    "demo": {"--seconds": ["[s]", "default: 3.0"], "--target-deg": ["[deg", "default: 70.0"], "--seed": [">= 0", "default: 0"],
             "--out": ["default: actuator_gym_out"]},
    "sweep": {"--seconds": ["[s]", "default: 3.0"], "--target-deg": ["[deg", "default: 90.0"], "--seed": ["default: 0"]},
    "rollout": {"--steps": [">= 1", "default: 300"], "--seed": [">= 0", "default:"], "--policy": ["default: random"],
                "--task": ["default: actuator_gym/Pendulum-v0"], "--video": ["default: none"]},
    "train": {"--total-timesteps": [">= 1", "else sb3 50000, rsl_rl 1000000"], "--num-envs": ["else sb3 8, rsl_rl 1024"],
              "--eval-every": ["else sb3 10000, rsl_rl 200000"], "--seed": [">= 0"], "--engine": ["default:", "else sb3"]},
    "fit": {"--epochs": [">= 1", "default: 400"], "--lr": ["> 0", "default: 0.003"], "--holdout": ["(0, 1)", "default: 0.2"],
            "--hidden": ["default: 32 32"], "--input-idx": ["[substeps", "default: 0 1 2 3"], "--seed": [">= 0", "default: 0"],
            "--seq-len": ["[substeps]", "default: 64"], "--batch-size": ["default: 4096"]},
    "export": {"--policy": ["policy.json + policy.pt", "bundled"], "--format": ["{onnx,torchscript}"],
               "--experiment": ["default: the policy's task"], "--out": ["default: actuator_gym_out"]},
}


@pytest.mark.parametrize("command", sorted(HELP_MUST_SAY))
def test_help_documents_every_option(command, capsys):
    with pytest.raises(SystemExit) as e:
        main([command, "--help"])
    assert e.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    for option, phrases in HELP_MUST_SAY[command].items():
        assert option in text, option
        at = text.index(option + " ", text.index("options:"))
        nxt = min((text.find(o + " ", at + 1) for o in HELP_MUST_SAY[command] if text.find(o + " ", at + 1) > at), default=len(text))
        for phrase in phrases:
            assert phrase in text[at:max(nxt, at + 400)], f"{command} {option}: {phrase!r} missing"


@pytest.mark.parametrize(
    "argv, match",
    [
        (["demo", "--seconds", "0"], "--seconds: must be a number in (0, 3600]"),
        (["demo", "--seconds", "inf"], "--seconds: must be a number in (0, 3600]"),
        (["demo", "--seed", "-3"], "--seed: must be an integer >= 0, got -3"),
        (["sweep", "delay", "--target-deg", "nan"], "--target-deg: must be a number in [-360, 360]"),
        (["rollout", "--steps", "0"], "--steps: must be an integer >= 1, got 0"),
        (["train", "--num-envs", "0"], "--num-envs: must be an integer >= 1, got 0"),
        (["train", "--total-timesteps", "-5"], "--total-timesteps: must be an integer >= 1"),
        (["train", "--eval-every", "x"], "--eval-every: must be an integer >= 1, got 'x'"),
    ],
)
def test_nonsense_options_one_line(argv, match, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert match in err and len(err.splitlines()) == 1 and err.startswith("actuator-gym")


def test_unsafe_checkpoint_trust_comes_only_from_the_flag(tmp_path, conformance_dir, capsys):
    """A preset naming a TorchScript net is refused unless the command line says so; the YAML file
    cannot say so itself."""
    net = conformance_dir / "isaaclab" / "mlp_net.pt"
    body = (f"kind: actuators\ngroups:\n  p:\n    model: ActuatorNetMLP\n    joint_names_expr: ['.*']\n"
            f"    network_file: {net}\n    pos_scale: -1.5\n    vel_scale: 0.2\n    torque_scale: 20.0\n"
            f"    input_order: pos_vel\n    input_idx: [0, 2, 4]\n    saturation_effort: 50.0\n"
            f"    actuator_effort_limit: 30.0\n    actuator_velocity_limit: 12.0\n")
    preset = tmp_path / "ts.yaml"
    preset.write_text(body)
    argv = ["rollout", "--actuators", str(preset), "--steps", "3", "--out", str(tmp_path)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--allow-unsafe-checkpoint" in err and len(err.strip().splitlines()) == 1
    assert main([*argv, "--allow-unsafe-checkpoint"]) == 0
    sneaky = tmp_path / "sneaky.yaml"
    sneaky.write_text(body + "    allow_unsafe_checkpoint: true\n")
    assert main(["rollout", "--actuators", str(sneaky), "--steps", "3", "--out", str(tmp_path)]) == 2
    assert "cannot come from a data file" in capsys.readouterr().err
    exp = tmp_path / "exp.yaml"
    exp.write_text(f"kind: experiment\ntask: actuator_gym/Pendulum-v0\nactuators: {preset}\n"
                   "train: {total_timesteps: 64, num_envs: 2, n_steps: 32, batch_size: 64, eval_every: 64, eval_episodes: 1}\n")
    assert main(["train", "--experiment", str(exp), "--out", str(tmp_path)]) == 2
    assert "--allow-unsafe-checkpoint" in capsys.readouterr().err
    assert main(["train", "--experiment", str(exp), "--allow-unsafe-checkpoint", "--out", str(tmp_path)]) == 0


@pytest.mark.parametrize("unbuffered", [False, True])
def test_list_into_a_closed_pipe_stops_quietly(unbuffered):
    """`actuator-gym list | head -1`: the reader has gone; no error message, exit status 141 (SIGPIPE's),
    whether stdout is block-buffered (a user's default: the write happens at the final flush) or not
    (``PYTHONUNBUFFERED``, as some CI shells set it)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    r, w = os.pipe()
    os.close(r)  # the reader is gone before anything is written
    try:
        p = subprocess.run([sys.executable, "-m", "actuator_gym", "list"], stdout=w, stderr=subprocess.PIPE, env=env,
                           timeout=120)
    finally:
        os.close(w)
    assert p.returncode == 141, p.stderr
    assert b"error" not in p.stderr.lower(), p.stderr


def test_progress_lines_reach_a_pipe_while_the_command_runs():
    """A long command's lines (train / transfer progress) are readable through a pipe as they are
    printed, not only when the command ends (a pipe is block-buffered by default)."""
    import os
    import select
    import subprocess
    import sys

    script = ("import sys, time\nfrom actuator_gym.tools import cli\n"
              "def slow(args):\n    print('first line')\n    time.sleep(60)\n    return 0\n"
              "cli.cmd_list = slow\nsys.exit(cli.main(['list']))\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, env=env)
    try:
        ready, _, _ = select.select([p.stdout], [], [], 30)
        assert ready and p.stdout.readline() == b"first line\n"
        assert p.poll() is None  # still running
    finally:
        p.kill()
        p.wait()


# -- outputs: never through a link, whole or not at all, no earlier run's file left beside a new one ------
def test_rollout_replaces_planted_links_and_refuses_a_linked_folder(tmp_path, capsys):
    import os

    victims = {name: tmp_path / f"victim_{name}" for name in ("telemetry.csv", "telemetry.npz", "rollout.gif")}
    out = tmp_path / "out" / "rollout"
    out.mkdir(parents=True)
    for name, victim in victims.items():
        victim.write_text("keep me")
        os.symlink(victim, out / name)
    argv = ["rollout", "--actuators", "ideal_pd", "--steps", "5", "--out", str(tmp_path / "out")]
    assert main(argv) == 0
    assert all(v.read_text() == "keep me" for v in victims.values())  # nothing written through a link
    for name in ("telemetry.csv", "telemetry.npz"):  # replaced by the command's own files
        assert not (out / name).is_symlink() and (out / name).is_file()
    assert len(read_csv(out / "telemetry.csv")) == 5 and np.load(out / "telemetry.npz")["reward"].shape == (5,)
    assert not os.path.lexists(out / "rollout.gif")  # an earlier run's output: the link removed, not its target
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]  # no temporary file left
    # OUT/rollout itself a link: refused, naming it, before anything runs or is written
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    linked = tmp_path / "linked"
    linked.mkdir()
    os.symlink(elsewhere, linked / "rollout")
    capsys.readouterr()
    assert main(argv[:-1] + [str(linked)]) == 2
    err = capsys.readouterr().err
    assert f"{linked / 'rollout'} is a symbolic link" in err and len(err.strip().splitlines()) == 1, err
    assert not list(elsewhere.iterdir())


def test_atomic_writer_leaves_the_target_or_the_new_file_never_a_part(tmp_path):
    from actuator_gym._safe_io import atomic_path, write_atomic

    target = tmp_path / "summary.json"
    write_atomic(target, "old")
    with pytest.raises(RuntimeError, match="killed"):
        with atomic_path(target) as tmp:
            tmp.write_text("half of the n")
            raise RuntimeError("killed while writing")
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["summary.json"]
    write_atomic(target, b"new")
    assert target.read_text() == "new" and [p.name for p in tmp_path.iterdir()] == ["summary.json"]


def test_an_interrupted_rerun_leaves_no_summary_beside_its_policy(tmp_path, capsys, monkeypatch):
    """A finished run, then a rerun into the same folder killed after its policy was written: the old
    summary.json (and the old learning curve) must not describe the new policy."""
    from actuator_gym.tools import training

    exp = tmp_path / "tiny.yaml"  # short episodes, one evaluation episode: a run of a second
    exp.write_text("kind: experiment\ntask: actuator_gym/Pendulum-v0\ntask_kwargs: {episode_length_s: 0.5}\n"
                   "train: {total_timesteps: 64, num_envs: 2, n_steps: 32, batch_size: 32, eval_every: 64, eval_episodes: 1}\n")
    argv = ["train", "--experiment", str(exp), "--out", str(tmp_path)]
    assert main(argv) == 0
    folder = tmp_path / "train"
    first = (folder / "policy.pt").read_bytes()
    assert (folder / "summary.json").is_file() and (folder / "learning_curve.csv").is_file()

    def killed(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(training, "write_learning_curve", killed)
    assert main(argv + ["--seed", "1"]) == 130
    assert (folder / "policy.pt").read_bytes() != first  # the new run's policy ...
    assert not (folder / "summary.json").exists() and not (folder / "learning_curve.csv").exists()  # ... alone
    assert not [p.name for p in folder.iterdir() if p.name.startswith(".")]


def test_benchmark_load_needs_the_unsafe_opt_in(tmp_path):
    """benchmarks/train_quadruped_walk.py --load unpickles (rsl_rl's weights_only=False): refused without
    --allow-unsafe-checkpoint, before anything is built or written."""
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "train_quadruped_walk.py"
    ckpt = tmp_path / "model.pt"
    ckpt.write_bytes(b"\x80\x04not loaded")
    r = subprocess.run([sys.executable, str(script), "--load", str(ckpt), "--out", str(tmp_path / "eval")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr[-2000:]
    assert f"--load {ckpt}" in r.stderr and "weights_only=False" in r.stderr and "--allow-unsafe-checkpoint" in r.stderr
    assert not (tmp_path / "eval").exists()


def test_train_and_fit_print_progress_lines_into_a_log(tmp_path, capsys, monkeypatch):
    """Captured stdout is not a terminal: `train` and `fit` print progress lines (steps done / total,
    rate, time left) while they run, before their final report."""
    import re

    from actuator_gym.tools import progress

    monkeypatch.setattr(progress, "PROGRESS_INTERVAL_S", 0.0)
    assert main(["train", "--total-timesteps", "256", "--num-envs", "2", "--eval-every", "256", "--out", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    line = re.compile(r"^PPO actuator_gym/Pendulum-v0: (\d+)/256 steps \(\d+ %\), [0-9.e+]+ steps/s, elapsed \S+, about \S+ left")
    done = [int(m.group(1)) for m in map(line.match, lines) if m]
    end = next(i for i, s in enumerate(lines) if s.startswith("PPO (sb3) on"))
    assert len(done) >= 3 and all(line.match(s) for s in lines[:end]), lines[:5]
    assert done == sorted(done) and 0 < done[0] < 256 and done[-1] == 256
    # rsl_rl: the lines come from inside runner.learn, whose own console log the engine silences
    assert main(["train", "--engine", "rsl_rl", "--total-timesteps", "288", "--num-envs", "4", "--eval-every", "288",
                 "--out", str(tmp_path / "rsl")]) == 0
    lines = capsys.readouterr().out.splitlines()
    end = next(i for i, s in enumerate(lines) if s.startswith("PPO (rsl_rl) on"))
    during = [s for s in lines[:end] if s.startswith("rsl_rl PPO actuator_gym/Pendulum-v0: ")]
    assert [s.split(":")[1].split()[0] for s in during][:3] == ["96/288", "192/288", "288/288"], lines[:end]
    assert main(["fit", "--synthetic", "--epochs", "5", str(tmp_path / "log.npz"), str(tmp_path / "net")]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^fit MLP: 1/5 epochs \(20 %\), .* epochs/s, .* left", out, re.M), out
    assert re.search(r"^fit MLP: 5/5 epochs \(100 %\)", out, re.M), out


def test_step_metrics_give_a_steady_error_only_for_a_settled_response():
    """Settled: within 2 % of the step of the final value over the last 20 % of the window."""
    t = np.arange(1000) / 100.0
    target = 1.0

    def rec(q):
        return analysis.Recording("x", t, q, np.gradient(q, t), q * 0, q * 0, target, 0.01)

    resting = 0.9 * (1 - np.exp(-t))  # rests at 0.9 rad: steady error 0.1 (its last 0.5 s: 0.1 + 0.9 e^-t)
    m = analysis.step_metrics(rec(resting))
    assert analysis.settled(rec(resting)) and m["settled"] is True
    assert m["steady_error_rad"] == pytest.approx(0.1 + 0.9 * np.exp(-t[-50:]).mean(), rel=1e-9)
    swinging = 1.0 - 0.05 * np.cos(2 * np.pi * t)  # +-5 % of the step around the target, to the end
    m = analysis.step_metrics(rec(swinging))
    assert m["settled"] is False and math.isnan(m["steady_error_rad"])
    # +-0.9 % around the target: within 1.8 % of the last value (q(9.99 s) = 1 - 0.009 cos(0.0628)): settled;
    # +-1.1 %: 2.2 % away from it, not
    assert analysis.settled(rec(1.0 - 0.009 * np.cos(2 * np.pi * t)))
    assert not analysis.settled(rec(1.0 - 0.011 * np.cos(2 * np.pi * t)))


def test_rollout_telemetry_by_joint_name_and_the_dc_motor_operating_points(tmp_path, capsys, monkeypatch):
    """The quadruped's telemetry columns and legends carry its joint names; its DC-motor group gets a
    torque-speed figure."""
    from actuator_gym.tools import plots

    legends, envelopes = {}, []
    real_ts, real_tq = plots.timeseries, plots.torque_speed

    def ts(t, series, path, title, ylabel, labels=None):
        legends.update(labels)
        return real_ts(t, series, path, title, ylabel, labels)

    def tq(v, lo, hi, qd, tau, path, title, **kw):
        envelopes.append((v, lo, hi, qd, tau, path))
        return real_tq(v, lo, hi, qd, tau, path, title, **kw)

    monkeypatch.setattr(plots, "timeseries", ts)
    monkeypatch.setattr(plots, "torque_speed", tq)
    assert main(["rollout", "--task", "actuator_gym/Quadruped-v0", "--actuators", "go1_dc_motor", "--steps", "12",
                 "--out", str(tmp_path)]) == 0
    out = tmp_path / "rollout"
    z, rows = np.load(out / "telemetry.npz"), read_csv(out / "telemetry.csv")
    legs = [f"{leg}_{j}_joint" for leg in ("FL", "FR", "RL", "RR") for j in ("hip", "thigh", "calf")]
    assert list(rows[0]) == ["t", "reward"] + [f"{k}[{n}]" for k in ("joint_pos", "applied_effort") for n in legs]
    assert float(rows[7]["joint_pos[FR_calf_joint]"]) == pytest.approx(float(z["joint_pos"][7, 5]), rel=1e-5)
    assert legends == {"applied_effort": legs, "joint_pos": legs}
    (v, lo, hi, qd, tau, path), = envelopes
    assert path == out / "torque_speed_legs.png" and is_png(path)
    np.testing.assert_array_equal(qd, z["joint_vel"].ravel())  # every joint's speed and effort, every step
    np.testing.assert_array_equal(tau, z["applied_effort"].ravel())
    # the go1_dc_motor envelope: 23.7 N·m continuous; stall torque 33.5 N·m x U(0.8, 1.2) (randomized at
    # reset, the same for the 12 joints: one envelope), falling to 0 at 30.1 rad/s; point-symmetric
    assert lo.shape == hi.shape == (1, v.size) and v.max() >= 30.1
    i, j = np.argmin(np.abs(v)), np.argmin(np.abs(v - 20.0))
    assert hi[0, i] == pytest.approx(23.7) and lo[0, i] == pytest.approx(-23.7)
    assert 0.8 * 33.5 <= hi[0, j] / (1 - v[j] / 30.1) <= 1.2 * 33.5
    np.testing.assert_allclose(lo[0], -hi[0][::-1], rtol=1e-5, atol=1e-5)


def test_rollout_telemetry_by_rotor_name(tmp_path, capsys):
    assert main(["rollout", "--task", "actuator_gym/Quadrotor-v0", "--steps", "3", "--out", str(tmp_path)]) == 0
    rows, z = read_csv(tmp_path / "rollout" / "telemetry.csv"), np.load(tmp_path / "rollout" / "telemetry.npz")
    assert list(rows[0]) == ["t", "reward"] + [f"applied_thrust[rotor_{i}]" for i in range(4)]
    assert float(rows[2]["applied_thrust[rotor_3]"]) == pytest.approx(float(z["applied_thrust"][2, 3]), rel=1e-5)
