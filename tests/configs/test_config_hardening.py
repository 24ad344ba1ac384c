"""YAML presets as untrusted data: bounded parsing, no trust from the file, full validation at load.
Every error is one line, a ConfigError (ValueError) naming the file, the key path and the range."""

import textwrap
import time
import tracemalloc

import pytest

import actuator_gym as ag
from actuator_gym import configs
from actuator_gym.configs import ConfigError, ConfigLimits


def write(tmp_path, text, name="c.yaml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def refused(p, *fragments, **load_kw):
    with pytest.raises(ConfigError) as info:
        configs.load(p, **load_kw)
    msg = str(info.value)
    assert "\n" not in msg, msg
    assert str(p) in msg, msg
    for f in fragments:
        assert f in msg, (f, msg)
    return msg


def group(body: str) -> str:
    return f"kind: actuators\ngroups:\n  g: {body}\n"


# ---------------------------------------------------------------------------------------------
# bounded parsing
# ---------------------------------------------------------------------------------------------
def test_billion_laughs_is_refused_fast_and_small(tmp_path):
    lines = ["kind: actuators", 'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    lines.append("groups: {g: {model: IdealPD, joint_names_expr: *a9}}")
    p = tmp_path / "lol.yaml"
    p.write_text("\n".join(lines) + "\n")
    assert p.stat().st_size < 700
    tracemalloc.start()
    t0 = time.perf_counter()
    refused(p, "expands (aliases included) to more than 100000 nodes", "ConfigLimits.max_nodes")
    elapsed, (_, peak) = time.perf_counter() - t0, tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert elapsed < 0.5 and peak < 20 * 2**20


def test_small_aliases_are_fine_and_the_node_limit_is_overridable(tmp_path):
    p = write(tmp_path, """
        kind: actuators
        groups:
          hips: &pd {model: IdealPD, stiffness: 20.0, damping: 0.5}
          knees: {<<: *pd, stiffness: 30.0}
    """)
    acts = configs.load(p).actuators
    assert acts["hips"].stiffness == 20.0 and acts["knees"].stiffness == 30.0 and acts["knees"].damping == 0.5
    refused(p, "max_nodes", limits=ConfigLimits(max_nodes=5))


@pytest.mark.parametrize("text, fragment", [
    ("kind: actuators\ngroups: " + "[" * 5000 + "]" * 5000 + "\n", "nested deeper than 32 levels"),
    ("kind: actuators\ngroups:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(60)) + "  " * 61 + "x: 1\n",
     "nested deeper than 32 levels"),
    ("kind: actuators\ngroups: &g {g: *g}\n", "recursive alias"),
])
def test_deep_nesting_and_recursive_aliases(tmp_path, text, fragment):
    p = tmp_path / "deep.yaml"
    p.write_text(text)
    refused(p, fragment)


@pytest.mark.parametrize("tag", [
    "!!python/object/apply:os.system ['touch {marker}']",
    "!!python/object/new:os.system ['touch {marker}']",
    "!!python/name:os.system",
    "!!binary aGVsbG8=",
    "!!set {{a, b}}",
    "!custom 3",
])
def test_tags_that_are_not_plain_data_are_refused(tmp_path, tag):
    marker = tmp_path / "pwned"
    p = write(tmp_path, "kind: actuators\ndescription: " + tag.format(marker=marker) + "\ngroups: {g: {model: IdealPD}}\n")
    refused(p, "malformed YAML", "is not allowed", "plain data")
    assert not marker.exists()
    date = write(tmp_path, "kind: actuators\ndescription: 2024-01-01\ngroups: {g: {model: IdealPD}}\n", "date.yaml")
    refused(date, "timestamp", "quote the value")


@pytest.mark.parametrize("data, fragment", [
    (bytes(range(256)) * 8, "not UTF-8 text"),
    (b"kind: actuators\x00\ngroups: {}\n", "NUL bytes"),
    (b"\xff\xfe\x00k\x00i", "not UTF-8 text"),
])
def test_binary_garbage(tmp_path, data, fragment):
    p = tmp_path / "bin.yaml"
    p.write_bytes(data)
    refused(p, fragment)


def test_file_size_limit(tmp_path):
    p = write(tmp_path, group("{model: IdealPD, stiffness: 1.0}"))
    refused(p, "allowed: at most 10 bytes", limits=ConfigLimits(max_file_bytes=10))
    with pytest.raises(ValueError, match="max_nodes must be a number >= 1"):
        ConfigLimits(max_nodes=0)


def test_self_referencing_experiments(tmp_path):
    me = write(tmp_path, "kind: experiment\ntask: actuator_gym/Pendulum-v0\nactuators: self.yaml\n", "self.yaml")
    refused(me, "references itself", "self.yaml -> ")
    write(tmp_path, "kind: experiment\ntask: actuator_gym/Pendulum-v0\nactuators: b.yaml\n", "a.yaml")
    b = write(tmp_path, "kind: experiment\ntask: actuator_gym/Pendulum-v0\nactuators: a.yaml\n", "b.yaml")
    refused(b, "references itself")


def test_experiment_resolves_a_relative_preset_next_to_itself(tmp_path, monkeypatch):
    sub = tmp_path / "exp"
    sub.mkdir()
    write(sub, group("{model: IdealPD, stiffness: 7.0}"), "acts.yaml")
    e = write(sub, "kind: experiment\ntask: actuator_gym/Pendulum-v0\nactuators: acts.yaml\n", "e.yaml")
    monkeypatch.chdir(tmp_path)  # not the experiment's folder
    assert configs.load(e).actuators["g"].stiffness == 7.0


# ---------------------------------------------------------------------------------------------
# trust comes from code, never from the file
# ---------------------------------------------------------------------------------------------
def _ts_preset(tmp_path, conformance_dir, extra=""):
    net = conformance_dir / "isaaclab" / "mlp_net.pt"
    return write(tmp_path, f"""
        kind: actuators
        groups:
          legs:
            model: ActuatorNetMLP
            network_file: {net}
            input_order: pos_vel
            input_idx: [0, 2, 4]
            pos_scale: -1.5
            vel_scale: 0.2
            torque_scale: 20.0
            saturation_effort: 50.0
            actuator_effort_limit: 30.0
            actuator_velocity_limit: 12.0
            {extra}
    """)


def test_a_preset_cannot_switch_trust_on(tmp_path, conformance_dir):
    p = _ts_preset(tmp_path, conformance_dir, "allow_unsafe_checkpoint: true")
    for kw in ({}, {"allow_unsafe_checkpoint": True}):
        refused(p, "groups.legs.allow_unsafe_checkpoint", "cannot come from a data file",
                "configs.load(path, allow_unsafe_checkpoint=True)", "--allow-unsafe-checkpoint", **kw)
    # anywhere in the document, not only in a group
    q = write(tmp_path, "kind: experiment\ntask: actuator_gym/Pendulum-v0\ntask_kwargs: {allow_unsafe_checkpoint: true}\n", "e.yaml")
    refused(q, "task_kwargs.allow_unsafe_checkpoint", "cannot come from a data file")


def test_the_opt_in_comes_from_code(tmp_path, conformance_dir):
    p = _ts_preset(tmp_path, conformance_dir)
    refused(p, "torchscript", "allow_unsafe_checkpoint=True", "--allow-unsafe-checkpoint")
    cfg = configs.load(p, allow_unsafe_checkpoint=True).actuators["legs"]
    assert cfg.allow_unsafe_checkpoint is True
    model = cfg.build(joint_names=["a", "b"], num_envs=2)
    assert model.compute(joint_pos=[[0.0, 0.0]] * 2, joint_vel=[[0.0, 0.0]] * 2, target_pos=[[0.1, 0.1]] * 2).shape == (2, 2)
    # an ONNX preset needs no opt-in, and a plain load leaves the flag off
    assert configs.load("learned_mlp").actuators["all"].allow_unsafe_checkpoint is False


# ---------------------------------------------------------------------------------------------
# numbers: infinities, overflow, NaN, magnitudes
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value, key, fragment", [
    (".inf", "groups.g.stiffness", "inf is not allowed"),
    ("-.inf", "groups.g.stiffness", "-inf is not allowed"),
    ("inf", "groups.g.stiffness", "'inf' (infinity) is not allowed"),
    ("1.0e+400", "groups.g.stiffness", "1.0e+400 (line 3) overflows a 64-bit float"),
    ("-2.5e+999", "groups.g.stiffness", "overflows a 64-bit float"),
    (".nan", "groups.g.stiffness", "NaN is not allowed"),
    ("[1.0, .inf]", "groups.g.stiffness[1]", "inf is not allowed"),
    ("{'a.*': 1.0e+400}", "groups.g.stiffness['a.*']", "overflows"),
    ("{dist: uniform, low: 1.0, high: .inf}", "groups.g.stiffness.high", "inf is not allowed"),
    ("2.0e+12", "groups.g.stiffness", "allowed: |value| <= 1e+09"),
    ("1" + "0" * 40, "groups.g.stiffness", "is too large"),
])
def test_infinite_overflowing_and_huge_numbers_are_refused(tmp_path, value, key, fragment):
    p = write(tmp_path, group(f"{{model: IdealPD, stiffness: {value}}}"))
    msg = refused(p, key + ":", fragment, "allowed")
    assert len(msg) < 400


def test_inf_means_no_limit_only_in_limit_fields(tmp_path):
    ok = write(tmp_path, group("{model: IdealPD, stiffness: 1.0, actuator_effort_limit: .inf, joint_effort_limit: inf}"))
    cfg = configs.load(ok).actuators["g"]
    assert cfg.actuator_effort_limit == float("inf") and cfg.joint_effort_limit == float("inf")
    bad = write(tmp_path, group("{model: IdealPD, actuator_effort_limit: 1.0e+400}"), "bad.yaml")
    refused(bad, "groups.g.actuator_effort_limit", "overflows", ".inf means 'no limit'")
    neg = write(tmp_path, group("{model: IdealPD, actuator_effort_limit: -.inf}"), "neg.yaml")
    refused(neg, "groups.g.actuator_effort_limit", "-inf is not allowed")


def test_overflow_elsewhere_in_the_file_names_its_key(tmp_path):
    p = write(tmp_path, "kind: experiment\ntask: actuator_gym/Pendulum-v0\ntask_kwargs: {episode_length_s: 1.0e+400}\n")
    refused(p, "task_kwargs.episode_length_s", "overflows")
    t = write(tmp_path, "kind: experiment\ntask: actuator_gym/Pendulum-v0\ntrain: {gamma: .nan}\n", "t.yaml")
    refused(t, "train.gamma", "NaN")


# ---------------------------------------------------------------------------------------------
# the ten kinds of bad values that used to pass load
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("body, key, fragment", [
    # bad delays
    ("{model: IdealPD, min_delay: 3, max_delay: 2}", "groups.g.min_delay", "must be <= max_delay (2)"),
    ("{model: IdealPD, min_delay: -1, max_delay: 2}", "groups.g.min_delay", "integer [0, 1000]"),
    ("{model: IdealPD, max_delay: 1.5}", "groups.g.max_delay", "integer [0, 1000]"),
    ("{model: IdealPD, max_delay: 100000000}", "groups.g.max_delay", "ConfigLimits.max_delay_steps"),
    # bad regexes
    ("{model: IdealPD, joint_names_expr: ['(']}", "groups.g.joint_names_expr[0]", "invalid regular expression"),
    ("{model: IdealPD, stiffness: {'[a-': 1.0}}", "groups.g.stiffness['[a-']", "invalid regular expression"),
    # wrong types
    ("{model: IdealPD, joint_names_expr: 5}", "groups.g.joint_names_expr", "regular expression"),
    ("{model: IdealPD, per_joint_delay: 'yes please'}", "groups.g.per_joint_delay", "true or false"),
    ("{model: IdealPD, effort_mode: 3}", "groups.g.effort_mode", "must be a string"),
    ("{model: IdealPD, friction: abc}", "groups.g.friction", "must be a number"),
    ("{model: IdealPD, stiffness: [[1.0, 2.0]]}", "groups.g.stiffness[0]", "must be a number"),
    ("{model: RemotizedPD, joint_parameter_lookup: [[0.0, 1.0, x]]}", "groups.g.joint_parameter_lookup[0][2]", "must be a number"),
    ("{model: IdealPD, stiffness: {dist: uniform, low: true, high: 2.0}}", "groups.g.stiffness.low", "must be a number"),
    ("{model: IdealPD, stiffness: {dist: uniform, low: 1.0, high: 2.0, per_joint: maybe}}", "groups.g.stiffness.per_joint", "true or false"),
    # negative implicit options and unknown ones
    ("{model: IdealPD, implicit_options: {max_iters: -1}}", "groups.g.implicit_options.max_iters", "integer [0, 1000]"),
    ("{model: IdealPD, implicit_options: {fd_epsilon: -1.0}}", "groups.g.implicit_options", "fd_epsilon"),
    ("{model: IdealPD, implicit_options: {tolerance: 1.0}}", "groups.g.implicit_options", "unknown option(s) ['tolerance']"),
    # distributions that can make a gain negative
    ("{model: IdealPD, stiffness: 1.0, randomization: {stiffness: {dist: uniform, low: -5.0, high: 1.0, operation: add}}}",
     "groups.g.randomization.stiffness", "can give values in [-4.0, 2.0]; allowed: finite values >= 0"),
    ("{model: IdealPD, stiffness: {dist: gaussian, mean: 1.0, std: 1.0}}", "groups.g.stiffness", "allowed: finite values >= 0"),
    ("{model: IdealPD, stiffness: {'a.*': {dist: uniform, low: -1.0, high: 1.0}}}", "groups.g.stiffness['a.*']", "allowed: finite values >= 0"),
    # fields written to the physics model
    ("{model: IdealPD, armature: -0.1}", "groups.g.armature", "armature must be >= 0 and finite"),
    ("{model: DCMotor, saturation_effort: 1.0, actuator_velocity_limit: 1.0, joint_effort_limit: -1.0}", "groups.g.joint_effort_limit", "allowed"),
    # randomization of something that is not a parameter
    ("{model: IdealPD, armature: 0.1, randomization: {armature: {dist: uniform, low: 0.5, high: 1.5, operation: scale}}}",
     "groups.g.randomization.armature", "not a randomizable parameter"),
    # effort modes a model does not support
    ("{model: Implicit, effort_mode: implicit}", "groups.g.effort_mode", "not supported"),
    # DC motor: a zero no-load speed
    ("{model: DCMotor, saturation_effort: 1.0, actuator_velocity_limit: 0.0}", "groups.g.actuator_velocity_limit", "allowed: values > 0 or +inf"),
    # non-string keys and group names
    ("{model: IdealPD, stiffness: {1: 2.0}}", "groups.g.stiffness", "key 1 (int) must be a string"),
])
def test_bad_values_fail_at_load_naming_the_key(tmp_path, body, key, fragment):
    p = write(tmp_path, group(body))
    refused(p, key, fragment)


def test_learned_actuator_values_fail_at_load(tmp_path):
    net = configs.preset_dir() / "actuators" / "nets" / "dc_motor_mlp.onnx"
    base = f"{{model: ActuatorNetMLP, network_file: {net}, saturation_effort: 1.0, actuator_velocity_limit: 1.0"
    for extra, fragment in ((", torque_scale: 0}", "torque_scale must be finite and non-zero"),
                            (", input_idx: [0, 4000000]}", "max_history_steps"),
                            (", input_idx: [0, 1, 2, 3], input_order: sideways}", "input_order"),
                            (", effort_mode: implicit}", "effort_mode")):
        p = write(tmp_path, group(base + extra))
        refused(p, "groups.g", fragment, str(net) if "effort_mode" not in extra else "")
    missing = write(tmp_path, group("{model: ActuatorNetMLP, network_file: nets/none.onnx, saturation_effort: 1.0, actuator_velocity_limit: 1.0}"), "m.yaml")
    refused(missing, "groups.g", str(tmp_path / "nets" / "none.onnx"), "does not exist")


def test_training_settings_are_bounded(tmp_path):
    for train, fragment in (("{net_arch: [100000000]}", "train.net_arch"),
                            ("{num_envs: 10000000}", "train.num_envs"),
                            ("{n_steps: 1000000, num_envs: 1000}", "ConfigLimits.max_rollout_steps"),
                            ("{total_timesteps: true}", "train.total_timesteps")):
        p = write(tmp_path, f"kind: experiment\ntask: actuator_gym/Pendulum-v0\ntrain: {train}\n")
        refused(p, fragment)
    for doc, fragment in (("kind: experiment\ntask: 7\n", "'task' must be a Gymnasium id"),
                          ("kind: experiment\ntask: actuator_gym/Pendulum-v0\nseed: -1\n", "seed"),
                          ("kind: experiment\ntask: actuator_gym/Pendulum-v0\ntask_kwargs: {actuators: {}}\n", "task_kwargs.actuators"),
                          ("kind: actuators\nname: [1]\ngroups: {g: {model: IdealPD}}\n", "'name' must be a string")):
        refused(write(tmp_path, doc, "x.yaml"), fragment)


def test_a_data_file_cannot_choose_a_ray_cluster(tmp_path):
    """The cluster address comes from the command line (--address) or code, never from a file: refused at
    load in any kind and at any depth, naming the key (an experiment's train: would otherwise reach
    `train --engine ray`, a transfer file's the ray engine)."""
    for text, key in (("kind: experiment\ntask: actuator_gym/Pendulum-v0\ntrain: {address: 'ray://host:10001'}\n", "train.address"),
                      ("kind: experiment\ntask: actuator_gym/Pendulum-v0\ntask_kwargs: {address: auto}\n", "task_kwargs.address"),
                      ("kind: transfer\ntask: actuator_gym/Pendulum-v0\nengine: ray\ntrain: {address: 'ray://h:1'}\n", "train.address"),
                      (group("{model: IdealPD, address: auto}"), "groups.g.address")):
        refused(write(tmp_path, text, "a.yaml"), key, "a data file cannot choose a Ray cluster", "--address")


@pytest.mark.parametrize("engine, train, fragment", [
    ("sb3", "{eval_episodes: 1000000000}", "train.eval_episodes must be a positive integer (at most 10000, ConfigLimits.max_eval_episodes)"),
    ("rsl_rl", "{num_learning_epochs: 1000000}", "train.num_learning_epochs must be a positive integer (at most 1000, ConfigLimits.max_epochs)"),
])
def test_every_numeric_training_setting_has_a_documented_bound(tmp_path, engine, train, fragment):
    refused(write(tmp_path, f"kind: experiment\ntask: actuator_gym/Pendulum-v0\nengine: {engine}\ntrain: {train}\n"), fragment)


def test_valid_presets_still_load_and_build():
    for name in ("ideal_pd", "go1_dc_motor", "anymal_remotized_knee", "learned_mlp", "arl_quadrotor", "pendulum_ppo", "quadruped_go1_dc"):
        configs.load(name)
    acts = configs.load("anymal_remotized_knee").actuators
    m = acts["knees"].build(joint_names=["LF_KFE", "RF_KFE"], num_envs=3, seed=0)
    assert m.compute(joint_pos=[[0.0, 0.0]] * 3, joint_vel=[[0.0, 0.0]] * 3, target_pos=[[5.0, -5.0]] * 3).abs().max() <= 90.0
    assert isinstance(acts["hips"], ag.DCMotorCfg)
