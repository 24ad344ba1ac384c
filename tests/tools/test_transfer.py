"""`actuator-gym transfer`: the pipeline end to end at toy size, its schema, its evaluation and statistics."""

from __future__ import annotations

import math
import statistics
import textwrap

import numpy as np
import pytest

import actuator_gym  # noqa: F401  (registers the tasks; before mujoco)
from actuator_gym import configs
from actuator_gym.tools import transfer, transfer_report
from actuator_gym.tools.cli import main as cli_main
from actuator_gym.tools.training import evaluate, make_env, make_vec_env

DC = ("{model: DCMotor, joint_names_expr: [hinge], stiffness: 20.0, damping: 2.0, saturation_effort: 6.0, "
      "actuator_effort_limit: 4.5, actuator_velocity_limit: 8.0, min_delay: %d, max_delay: %d}")


def toy_file(tmp_path, dc_delay=(1, 3), name="toy.yaml", seeds="2", conditions=("ideal", "dc")):
    """2 training conditions x 2 seeds x 2 hardware conditions (one a fitted net) on 0.5 s pendulum episodes."""
    train = {"ideal": "{p: {model: IdealPD, joint_names_expr: [hinge], stiffness: 20.0, damping: 2.0}}",
             "dc": "{p: %s}" % (DC % dc_delay)}
    conds = "".join(f"\n          {c}:\n            actuators: {train[c]}" for c in conditions)
    text = textwrap.dedent(f"""
        kind: transfer
        task: actuator_gym/Pendulum-v0
        task_kwargs: {{episode_length_s: 0.5}}
        engine: sb3
        train: {{total_timesteps: 512, num_envs: 4, n_steps: 128, batch_size: 256, eval_every: 100000,
                 eval_episodes: 1, net_arch: [16]}}
        seeds: {seeds}
        evaluation: {{episodes: 3, seed: 7}}
        train_conditions:{conds}
        hardware_conditions:
          slow_friction:
            actuators: {{p: {DC % (18, 24)}}}
            task_kwargs: {{joint_friction: 0.3}}
          net:
            fitted_net:
              group: p
              joint_names_expr: [hinge]
              motor: {{stiffness: 16.0, kd: 1.5, saturation_effort: 5.0, effort_limit: 3.8, velocity_limit: 6.0,
                       delay_steps: 2, inertia: 0.15, damping: 0.0, dt: 0.002777777777777778}}
              log: {{num_steps: 400, num_sequences: 2}}
              fit: {{epochs: 5, hidden: [8]}}
    """)
    p = tmp_path / name
    p.write_text(text)
    return p


def run(path, out, progress=False):
    return transfer.run_transfer(path, out, progress=progress, log=lambda _msg: None)


def test_pipeline_end_to_end_resumable_and_deterministic(tmp_path, capsys, monkeypatch):
    from actuator_gym.tools import progress

    monkeypatch.setattr(progress, "PROGRESS_INTERVAL_S", 0.0)
    path = toy_file(tmp_path)
    out = tmp_path / "cli" / "transfer" / "toy"  # where the command line writes (OUT/transfer/<name>)
    a = run(path, out, progress=True)
    # stdout is not a terminal: progress lines while it runs (issue 33), the evaluation's among them
    evaluating = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("evaluating on 4 condition(s): ")]
    assert evaluating and evaluating[-1].startswith("evaluating on 4 condition(s): 16/16 evaluations (100 %)"), evaluating
    assert sorted(a["trained"]) == sorted((c, s) for c in ("ideal", "dc") for s in (0, 1)) and a["reused"] == []
    # the table: every (condition, seed) on both training conditions and both hardware conditions
    cols = ("train:ideal", "train:dc", "slow_friction", "net")
    assert a["fitted"] == ["net"] and a["evaluated"] == 2 * 2 * len(cols)
    assert len(a["rows"]) == 2 * 2 * len(cols)
    assert {(r["train_condition"], r["seed"], r["hardware_condition"]) for r in a["rows"]} == {
        (c, s, h) for c in ("ideal", "dc") for s in (0, 1) for h in cols}
    for r in a["rows"]:
        assert r["fell"] == 0.0  # the pendulum never terminates
        assert r["tracking_error"] > 0 and r["return"] < 0 and r["energy"] > 0 and r["peak_abs_effort"] > 0
        assert 0.0 <= r["saturated_fraction"] <= 1.0
    assert len(a["summary"]) == 2 * len(cols) and all(s["seeds"] == 2 for s in a["summary"])
    header = (out / "results.csv").read_text().splitlines()[0].split(",")
    assert header == ["train_condition", "seed", "hardware_condition", *transfer.METRICS]
    assert len((out / "summary.csv").read_text().splitlines()) == 1 + 2 * len(cols)
    md = (out / "summary.md").read_text()
    assert "| train \\ hardware | train:ideal | train:dc | slow_friction | net |" in md
    assert (out / "heatmaps.png").stat().st_size > 0 and (out / "nets" / "net" / "actuator_net.onnx").is_file()
    first = (out / "results.csv").read_bytes()

    # resumable: a second run (the command line) trains and fits nothing and evaluates to the same bytes
    assert cli_main(["transfer", str(path), "--out", str(tmp_path / "cli")]) == 0
    assert "0 polic(ies) trained, 4 reused, 0 net(s) fitted, 0 evaluation(s) run" in capsys.readouterr().out
    assert (out / "results.csv").read_bytes() == first

    # deterministic: a fresh folder (one of the policies, the net fitted again) gives the same rows
    d = run(toy_file(tmp_path, name="one.yaml", seeds="[1]", conditions=("ideal",)), tmp_path / "fresh")
    assert d["trained"] == [("ideal", 1)] and d["fitted"] == ["net"]
    assert d["rows"] == [r for r in a["rows"] if r["train_condition"] == "ideal" and r["seed"] == 1
                         and r["hardware_condition"] != "train:dc"]

    # a changed training condition is trained again (its recorded condition no longer matches)
    c = run(toy_file(tmp_path, dc_delay=(2, 4), name="toy2.yaml", seeds="[0]", conditions=("dc",)), out)
    assert c["trained"] == [("dc", 0)] and c["reused"] == [] and c["fitted"] == [] and c["evaluated"] == 3
    # only the pairs not seen yet are evaluated: the ideal policy on the changed dc condition, the new dc
    # policy on the ideal condition; the other 6 of the 8 are read back
    e = run(toy_file(tmp_path, dc_delay=(2, 4), name="toy2.yaml", seeds="[0]", conditions=("ideal", "dc")), out)
    assert e["trained"] == [] and e["evaluated"] == 2 and len(e["rows"]) == 8


def test_evaluation_matches_single_env_rollouts():
    """Batched env i, reset with seed + i, is the single env reset with seed + i: the same return."""
    task, kwargs = "actuator_gym/Pendulum-v0", {"episode_length_s": 0.5}
    acts = configs.parse({"kind": "actuators", "groups": {"p": {"model": "DCMotor", "joint_names_expr": ["hinge"],
                          "stiffness": 20.0, "damping": 2.0, "saturation_effort": 3.0, "actuator_effort_limit": 2.5,
                          "actuator_velocity_limit": 4.0, "min_delay": 0, "max_delay": 6}}}).actuators

    def policy(obs):  # a fixed feedback law: push toward the command
        return np.clip(np.asarray(obs)[..., 3:4] - 2.0 * np.asarray(obs)[..., 4:5], -1.0, 1.0).astype(np.float32)

    m = transfer.evaluate_policy(policy, task, acts, kwargs, episodes=3, seed=11)
    env = make_env(task, acts, **kwargs)
    for i in range(3):
        assert m["return"][i] == pytest.approx(evaluate(policy, env, 1, seed=11 + i), rel=1e-9, abs=1e-12)
    env.close()
    assert (m["saturated_fraction"] > 0).all()  # the weak motor binds under this law
    assert np.all(m["fell"] == 0)
    # a sensor that does nothing changes nothing; a laggy one changes what the policy does
    idle = transfer.evaluate_policy(policy, task, acts, kwargs, 3, 11, sensor={"columns": [2, 4]})
    assert all(np.array_equal(idle[k], m[k]) for k in transfer.METRICS)
    laggy = transfer.evaluate_policy(policy, task, acts, kwargs, 3, 11, sensor={"columns": [2, 4], "min_delay": 3, "max_delay": 3})
    assert not np.array_equal(laggy["return"], m["return"])
    # a training-time random episode start does not reach the evaluation: whole first episodes
    whole = transfer.evaluate_policy(policy, task, acts, {**kwargs, "random_episode_start": True}, 3, 11)
    assert all(np.array_equal(whole[k], m[k]) for k in transfer.METRICS)


def test_quadruped_tracking_error_is_the_body_frame_vx_error():
    vec = make_vec_env("actuator_gym/Quadruped-v0", 3)
    obs, _ = vec.reset(seed=3)
    for _ in range(5):
        obs, *_ = vec.step(np.zeros((3, 12), dtype=np.float32))
    err = transfer.tracking_error("actuator_gym/Quadruped-v0", vec.unwrapped)
    # observation layout (tasks/quadruped.py): [0:3] body-frame base velocity, [45:48] the command, the
    # velocities and the vx command both observed x obs_scales.lin_vel
    scale = vec.unwrapped.cfg.obs_scales.lin_vel
    assert scale != 1.0  # (the test sees the scaling)
    np.testing.assert_allclose(err, np.abs(obs[:, 0] - obs[:, 45]) / scale, rtol=1e-5, atol=1e-6)
    assert err.max() > 0
    vec.close()


def test_t_quantile_closed_forms():
    p = 0.975
    assert transfer_report.t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-5)  # Cauchy
    a = 2 * p - 1
    assert transfer_report.t_quantile(p, 2) == pytest.approx(a * math.sqrt(2 / (1 - a * a)), rel=1e-5)
    assert transfer_report.t_quantile(p, 2000) == pytest.approx(statistics.NormalDist().inv_cdf(p), rel=1e-3)
    with pytest.raises(ValueError, match="p must be in"):
        transfer_report.t_quantile(0.3, 2)


def test_summary_mean_and_confidence_interval():
    rows = [{"train_condition": "t", "hardware_condition": "h", "seed": s, **{m: float(v) for m in transfer.METRICS}}
            for s, v in enumerate((1.0, 2.0, 6.0))]
    (row,) = transfer_report.summarize(rows)
    sd = statistics.stdev([1.0, 2.0, 6.0])
    assert row["seeds"] == 3 and row["return"] == pytest.approx(3.0)
    assert row["return_ci95"] == pytest.approx(transfer_report.t_quantile(0.975, 2) * sd / math.sqrt(3))
    (one,) = transfer_report.summarize(rows[:1])
    assert one["return_ci95"] == 0.0


def test_summary_change_is_paired_by_seed_against_the_own_condition():
    """``<metric>_change``: each seed's value minus the same seed's value on ``train:<condition>``."""
    def row(t, h, s, v):
        return {"train_condition": t, "hardware_condition": h, "seed": s, **{m: float(v) for m in transfer.METRICS}}

    own, hw = (1.0, 2.0, 6.0), (0.5, 2.5, 4.0)  # differences -0.5, 0.5, -2.0: a spread level, a consistent drop
    rows = [row("t", transfer.train_column("t"), s, v) for s, v in enumerate(own)]
    rows += [row("t", "h", s, v) for s, v in reversed(list(enumerate(hw)))]  # (order does not matter)
    rows += [row("u", "h", 0, 3.0)]  # no own column for u: no change
    cells = {(r["train_condition"], r["hardware_condition"]): r for r in transfer_report.summarize(rows)}
    d = [-0.5, 0.5, -2.0]
    c = cells["t", "h"]
    assert c["return_change"] == pytest.approx(-2.0 / 3.0)
    assert c["return_change_ci95"] == pytest.approx(transfer_report.t_quantile(0.975, 2) * statistics.stdev(d) / math.sqrt(3))
    assert cells["t", "train:t"]["fell_change"] == 0.0 and cells["t", "train:t"]["fell_change_ci95"] == 0.0
    assert math.isnan(cells["u", "h"]["energy_change"]) and math.isnan(cells["u", "h"]["energy_change_ci95"])


def _doc(**changes):
    doc = {
        "kind": "transfer", "task": "actuator_gym/Pendulum-v0", "seeds": 2,
        "train_conditions": {"a": {"actuators": {"p": {"model": "IdealPD", "stiffness": 20.0}}}},
        "hardware_conditions": {"b": {"actuators": {"p": {"model": "IdealPD", "stiffness": 10.0}}}},
    }
    doc.update(changes)
    return doc


NET = {"group": "p", "motor": {"stiffness": 16.0, "kd": 1.5, "saturation_effort": 5.0, "effort_limit": 3.8,
                               "velocity_limit": 6.0, "delay_steps": 2, "inertia": 0.15, "damping": 0.0, "dt": 0.005}}


@pytest.mark.parametrize("changes, match", [
    (dict(engine="tf_agents"), r"engine must be one of \['sb3', 'rsl_rl', 'ray'\], got 'tf_agents'"),
    (dict(seeds=0), r"seeds must be an integer in \[1, 64\], got 0"),
    (dict(seeds=[1, 1]), r"seeds must not repeat a seed"),
    (dict(colour="red"), r"unknown key\(s\) \['colour'\]"),
    (dict(train={"total_timesteps": -5}), r"train.total_timesteps must be a positive integer"),
    (dict(evaluation={"episodes": 0}), r"evaluation.episodes must be an integer in \[1, 4096\]"),
    (dict(hardware_conditions={}), r"'hardware_conditions' must define 1 to 64 conditions"),
    (dict(hardware_conditions={"b": {"actuators": {"p": {"model": "IdealPD", "stiffness": 20.0}}}}),
     r"hardware_conditions.b equals train_conditions.a; a hardware condition must be held out"),
    (dict(hardware_conditions={"b/../x": {}}), r"condition names must be letters, digits"),
    (dict(hardware_conditions={"b": {"fitted_net": {**NET, "motor": {"stiffness": 1.0}}}}),
     r"hardware_conditions.b.fitted_net.motor: missing key\(s\) \['damping', 'delay_steps'"),
    (dict(hardware_conditions={"b": {"fitted_net": {**NET, "motor": {**NET["motor"], "inertia": 0.0}}}}),
     r"fitted_net.motor.inertia must be a finite number > 0 \[kg·m²\], got 0.0"),
    (dict(hardware_conditions={"b": {"fitted_net": {**NET, "fit": {"epochs": 0}}}}), r"fitted_net.fit.epochs must be an integer in \[1, 100000\]"),
    (dict(train_conditions={"a": {"fitted_net": NET}}), r"train_conditions.a: unknown key\(s\) \['fitted_net'\]"),
    (dict(hardware_conditions={"b": {"sensor": {"columns": [0], "min_delay": 2, "max_delay": 1}}}),
     r"hardware_conditions.b.sensor: min_delay \(2\) must be <= max_delay \(1\) \[control steps\]"),
    (dict(hardware_conditions={"b": {"sensor": {"columns": [0, 1], "noise_std": [0.1, 0.1, 0.1]}}}),
     r"hardware_conditions.b.sensor.noise_std must be a number in \[0, 1e\+06\] \(SENSOR_MAX_STD\) or 2 of them"),
    (dict(hardware_conditions={"b": {"sensor": {"columns": [0], "noise_std": 1e300}}}),
     r"hardware_conditions.b.sensor.noise_std must be a number in \[0, 1e\+06\]"),
    (dict(train_conditions={"a": {"actuators": {"p": {"model": "Servo"}}}}), r"train_conditions.a.actuators.p.model must be one of"),
])
def test_bad_transfer_files_are_refused(changes, match):
    with pytest.raises(configs.ConfigError, match=match):
        configs.parse(_doc(**changes), "exp.yaml")


def test_cli_refuses_a_bad_file_before_writing(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: transfer\ntask: actuator_gym/Pendulum-v0\nseeds: -1\n")
    assert cli_main(["transfer", str(bad), "--out", str(tmp_path / "out")]) == 2
    assert "seeds must be an integer in [1, 64], got -1" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    other = tmp_path / "other.yaml"
    other.write_text(textwrap.dedent("""
        kind: transfer
        task: actuator_gym/Ant-v0
        train_conditions: {a: {}}
        hardware_conditions: {b: {task_kwargs: {episode_length_s: 1.0}}}
    """))
    assert cli_main(["transfer", str(other), "--out", str(tmp_path / "out")]) == 2
    assert "has no tracking-error definition; supported: ['actuator_gym/Pendulum-v0', 'actuator_gym/Quadruped-v0']" in capsys.readouterr().err
    unknown = tmp_path / "engine.yaml"
    unknown.write_text(other.read_text().replace("Ant-v0", "Pendulum-v0") + "engine: rsl_rl\ntrain: {n_steps: 64}\n")
    assert cli_main(["transfer", str(unknown), "--out", str(tmp_path / "out")]) == 2
    assert "unknown key(s) ['train.n_steps'] for engine 'rsl_rl'; allowed: " in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["transfer_pendulum", "transfer_quadruped"])
def test_bundled_transfer_files_hold_out_every_hardware_condition(name):
    exp = transfer.load_transfer(name)
    assert len(exp.seeds) >= 3 and len(exp.train_conditions) >= 3 and exp.engine in ("sb3", "rsl_rl")
    assert any(c.fitted_net is not None for c in exp.hardware_conditions.values())
    transfer.check_transfer(exp, exp.train)  # every condition builds against the task (what run_transfer checks first)


# -- what a transfer file may ask for: refused at load or before anything runs -----------------------
RAY_TRAIN = {"env_runners": 2, "envs_per_runner": 4, "total_timesteps": 1024}


@pytest.mark.parametrize("changes, match", [
    # the name becomes the output folder: the condition-name rule, whatever it is
    (dict(name="../../x"), r"'name' must be letters, digits, '_' or '-' \(it names the output folder\), got '../../x'"),
    (dict(name=".."), r"'name' must be letters, digits"),
    (dict(name="a/b"), r"'name' must be letters, digits"),
    # the cluster comes from the command line or code, never from the file
    (dict(engine="ray", train={**RAY_TRAIN, "address": "ray://host:10001"}),
     r"train.address: a data file cannot choose a Ray cluster; give it on the command line \(--address\) or in code"),
    # every numeric training setting has a documented bound
    (dict(engine="ray", train={"env_runners": 5000}), r"train.env_runners must be a positive integer \(at most 1024, ConfigLimits.max_env_runners\), got 5000"),
    (dict(engine="ray", train={"num_cpus": 100000}), r"train.num_cpus must be a positive integer \(at most 1024, ConfigLimits.max_cpus\)"),
    (dict(engine="ray", train={"envs_per_runner": 10**8}), r"train.envs_per_runner must be a positive integer \(at most 65536, ConfigLimits.max_num_envs\)"),
    (dict(engine="ray", train={"iterations": 10**12}), r"train.iterations must be a positive integer \(at most 10000000, ConfigLimits.max_iterations\)"),
    (dict(engine="ray", train={"iterations": "1e12"}), r"train.iterations must be a positive integer"),
    (dict(engine="ray", train={"learners": 2000}), r"train.learners must be an integer in \[0, 1024\] \(ConfigLimits.max_env_runners\)"),
    (dict(engine="ray", train={"cpus_per_learner": 1e6}), r"train.cpus_per_learner must be a number in \[0.01, 1024\]"),
    (dict(engine="ray", train={"env_runners": 1024, "envs_per_runner": 1024}),
     r"train.env_runners \* train.envs_per_runner \* train.rollout_fragment_length = 67108864; allowed: at most 16777216"),
    (dict(engine="ray", train={"colour": 1}), r"unknown key\(s\) \['train.colour'\] for engine 'ray'"),
    (dict(train={"eval_episodes": 10**9}), r"train.eval_episodes must be a positive integer \(at most 10000, ConfigLimits.max_eval_episodes\)"),
    # the fitted net's log and layers: sizes bounded before anything is allocated
    (dict(hardware_conditions={"b": {"fitted_net": {**NET, "log": {"num_steps": 10**6, "num_sequences": 1024}}}}),
     r"hardware_conditions.b.fitted_net.log: num_steps \* num_sequences = 1024000000 samples; allowed: at most 1048576"),
    (dict(hardware_conditions={"b": {"fitted_net": {**NET, "log": {"num_steps": 10**5, "num_sequences": 10},
                                                     "fit": {"input_idx": list(range(20))}}}}),
     r"hardware_conditions.b.fitted_net: num_steps \* num_sequences \* 2 \* len\(fit.input_idx\) = 40000000 input values; allowed: at most 16777216"),
    (dict(hardware_conditions={"b": {"fitted_net": {**NET, "fit": {"hidden": [8] * 17}}}}),
     r"hardware_conditions.b.fitted_net.fit.hidden must list 1 to 16 layer widths, got 17"),
])
def test_transfer_files_cannot_escape_pick_a_cluster_or_ask_unbounded_sizes(changes, match):
    with pytest.raises(configs.ConfigError, match=match):
        configs.parse(_doc(**changes), "exp.yaml")


def test_a_ray_transfer_file_within_bounds_loads_with_every_setting_checked():
    exp = configs.parse(_doc(engine="ray", train=RAY_TRAIN), "exp.yaml")
    assert exp.train["env_runners"] == 2 and exp.train["envs_per_runner"] == 4 and exp.train["address"] is None
    assert exp.train["learners"] == 0 and exp.train["rollout_fragment_length"] == 64  # the engine's defaults, filled in


def test_the_name_cannot_put_outputs_outside_out(tmp_path, capsys):
    victim = tmp_path / "x"
    victim.mkdir()
    (victim / "results.csv").write_text("keep me")
    bad = toy_file(tmp_path)
    bad.write_text("name: ../../x\n" + bad.read_text())
    assert cli_main(["transfer", str(bad), "--out", str(tmp_path / "out")]) == 2
    assert "'name' must be letters, digits, '_' or '-'" in capsys.readouterr().err
    assert (victim / "results.csv").read_text() == "keep me" and not (tmp_path / "out").exists()


class _Ran(Exception):
    """Raised by the stand-ins for fitting and training: the pipeline got past its checks."""


@pytest.fixture
def nothing_runs(monkeypatch):
    """Fitting and training replaced by stand-ins that record their calls and stop the run."""
    from actuator_gym.tools import fit

    calls = []

    def stop(what):
        def f(*args, **kwargs):
            calls.append((what, args, kwargs))
            raise _Ran(what)
        return f

    monkeypatch.setattr(transfer, "_train_condition", stop("train"))
    monkeypatch.setattr(fit, "generate_synthetic_log", stop("fit"))
    return calls


@pytest.mark.parametrize("edit, match", [
    # the last condition's task keyword is unknown to the task
    (lambda t: t + "  bad:\n    task_kwargs: {episode_length_s: 0.5, bogus_keyword: 1}\n",
     r"hardware_conditions.bad: .*unexpected keyword argument 'bogus_keyword'"),
    # the sensor reads a column the task does not observe (the pendulum observes 5)
    (lambda t: t + "  laggy:\n    sensor: {columns: [0, 7]}\n", r"hardware_conditions.laggy.sensor: .*columns must be distinct observation indices in \[0, 4\]"),
    # an actuator group whose regex matches no joint of the task
    (lambda t: t + "  nojoint:\n    actuators: {p: {model: IdealPD, joint_names_expr: [elbow], stiffness: 5.0}}\n",
     r"hardware_conditions.nojoint: .*elbow"),
    # the net's motor steps at another rate than the physics (its history counts substeps)
    (lambda t: t.replace("dt: 0.002777777777777778", "dt: 0.5"),
     r"hardware_conditions.net.fitted_net.motor.dt must be the task's physics substep 0.002777777777777778 s .*got 0.5"),
    # the net's group binds no joint of the task
    (lambda t: t.replace("joint_names_expr: [hinge]\n", "joint_names_expr: [knee]\n"),
     r"hardware_conditions.net.fitted_net: .*knee"),
])
def test_the_whole_file_is_checked_before_anything_is_fitted_or_trained(tmp_path, nothing_runs, edit, match):
    path = toy_file(tmp_path)
    path.write_text(edit(path.read_text()))
    configs.load(path)  # valid as data: what is wrong shows only against the task
    with pytest.raises(configs.ConfigError, match=match):
        run(path, tmp_path / "out")
    assert nothing_runs == [] and not (tmp_path / "out").exists()
    # the unchanged file passes the checks and reaches the fit, the first thing that runs
    with pytest.raises(_Ran, match="fit"):
        run(toy_file(tmp_path, name="ok.yaml"), tmp_path / "ok")


def test_the_ray_address_comes_from_the_command_line_or_code(tmp_path, nothing_runs, capsys):
    path = toy_file(tmp_path)
    text = path.read_text().replace("engine: sb3", "engine: ray")
    text = text[:text.index("train: {")] + "train: {env_runners: 1, envs_per_runner: 4, total_timesteps: 256}\nseeds" + \
        text[text.index("seeds:") + len("seeds"):]
    text = text[:text.index("  net:\n")]  # no net to fit: the first thing that runs is the training
    path.write_text(text)
    with pytest.raises(_Ran, match="train"):
        transfer.run_transfer(path, tmp_path / "out", ray_address="ray://head:10001", progress=False, log=lambda _m: None)
    (what, args, kwargs), = nothing_runs
    assert kwargs["settings"]["address"] == "ray://head:10001" and kwargs["settings"]["env_runners"] == 1
    nothing_runs.clear()
    assert cli_main(["transfer", str(path), "--address", "auto", "--out", str(tmp_path / "cli")]) == 2  # (stopped at training)
    assert nothing_runs[0][2]["settings"]["address"] == "auto"
    nothing_runs.clear()
    with pytest.raises(_Ran, match="train"):  # none given: a local cluster
        run(path, tmp_path / "out")
    assert nothing_runs[0][2]["settings"]["address"] is None
    # an address for a file that does not train on Ray is refused before anything runs
    nothing_runs.clear()
    with pytest.raises(ValueError, match="ray_address: only for a file with engine: ray; .* trains with 'sb3'"):
        transfer.run_transfer(toy_file(tmp_path, name="sb3.yaml"), tmp_path / "sb3", ray_address="auto", progress=False)
    assert nothing_runs == []
