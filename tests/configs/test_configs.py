"""YAML presets: safe loading, validation into typed configs, errors naming file, key and range."""

import textwrap

import numpy as np

import pytest

import actuator_gym as ag
from actuator_gym import configs
from actuator_gym.randomization import Uniform


def write(tmp_path, text, name="c.yaml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def test_bundled_presets_load_and_build():
    presets = configs.list_presets()
    assert {"ideal_pd", "go1_dc_motor", "anymal_remotized_knee", "arl_quadrotor"} <= set(presets)
    go1 = configs.load("go1_dc_motor")
    legs = go1.actuators["legs"]
    assert isinstance(legs, ag.DCMotorCfg) and legs.max_delay == 2
    assert isinstance(legs.randomization["stiffness"], Uniform)
    m = legs.build(joint_names=["a", "b"], num_envs=64, seed=0)
    kp = m.parameter("stiffness")
    assert 16.0 <= kp.min() and kp.max() <= 24.0 and len(kp.unique()) > 10
    assert set(m.parameter("delay_steps").unique().tolist()) <= {0, 1, 2}


def test_distribution_and_inf_values(tmp_path):
    p = write(tmp_path, """
        kind: actuators
        groups:
          g:
            model: IdealPD
            stiffness: {dist: log_uniform, low: 1.0, high: 10.0, per_joint: true}
            actuator_effort_limit: {"a.*": 3.0, "b": inf}
    """)
    cfg = configs.load(p).actuators["g"]
    assert isinstance(cfg.stiffness, ag.randomization.LogUniform) and cfg.stiffness.per_joint
    assert cfg.actuator_effort_limit == {"a.*": 3.0, "b": float("inf")}


@pytest.mark.parametrize(
    "body, match",
    [
        ("kind: actuators\ngroups:\n  g: {model: Servo}\n", r"groups.g.model must be one of \[.*'DCMotor'.*got 'Servo'"),
        ("kind: actuators\ngroups:\n  g: {model: IdealPD, stifness: 1}\n", r"unknown key\(s\) \['stifness'\]"),
        ("kind: actuators\ngroups:\n  g: {model: IdealPD, stiffness: -3}\n", r"'kp'.*-3.0.*allowed"),
        ("kind: actuators\ngroups:\n  g: {model: DCMotor, stiffness: 1}\n", "saturation_effort is required"),
        ("kind: actuators\ngroups:\n  g: {model: IdealPD, stiffness: {dist: uniform, low: 2, high: 1}}\n", "high"),
        ("kind: actuators\ngroups:\n  g: {model: IdealPD, stiffness: {dist: beta, a: 1}}\n", r"dist must be one of"),
        ("kind: robots\n", r"'kind' must be one of"),
        ("kind: actuators\ngroups: {g: [1, 2\n", "malformed YAML"),
        ("- a\n- b\n", "top level must be a mapping"),
        ("kind: experiment\ntask: actuator_gym/Pendulum-v0\ntrain: {total_timesteps: -5}\n", r"train.total_timesteps must be a positive integer"),
        ("kind: experiment\ntask: actuator_gym/Pendulum-v0\ntrain: {lr: 1}\n", r"unknown key\(s\) \['train.lr'\]"),
        ("kind: actuators\ngroups:\n  g: !!python/object/apply:os.system ['echo hi']\n", "malformed YAML"),
    ],
)
def test_errors_name_file_key_and_allowed_values(tmp_path, body, match):
    p = write(tmp_path, body)
    with pytest.raises(configs.ConfigError, match=match) as info:
        configs.load(p)
    assert str(p) in str(info.value)


def test_unknown_preset_name():
    with pytest.raises(configs.ConfigError, match=r"unknown preset 'nope'; bundled presets: \["):
        configs.load("nope")


def test_experiment_with_preset_reference(tmp_path):
    p = write(tmp_path, """
        kind: experiment
        task: actuator_gym/Pendulum-v0
        task_kwargs: {episode_length_s: 2.0}
        actuators: ideal_pd
        train: {total_timesteps: 1000, num_envs: 2}
        seed: 3
    """)
    exp = configs.load(p)
    assert exp.task == "actuator_gym/Pendulum-v0" and exp.seed == 3
    assert isinstance(exp.actuators["all"], ag.IdealPDActuatorCfg)
    assert exp.train["total_timesteps"] == 1000 and exp.train["algo"] == "ppo"


def test_thruster_preset():
    t = configs.load("arl_quadrotor")
    assert t.thrusters.thrust_range == [0.1, 10.0] or tuple(t.thrusters.thrust_range) == (0.1, 10.0)


def test_learned_net_preset_resolves_its_network_next_to_the_yaml():
    preset = configs.load("learned_mlp")
    cfg = preset.actuators["all"]
    assert isinstance(cfg, ag.ActuatorNetMLPCfg) and cfg.network_file.endswith("configs/actuators/nets/dc_motor_mlp.onnx")
    m = cfg.build(joint_names=["a", "b"], num_envs=2)
    import numpy as np

    out = m.compute(joint_pos=np.zeros((2, 2)), joint_vel=np.zeros((2, 2)), target_pos=np.full((2, 2), 0.3))
    assert out.shape == (2, 2) and float(out.abs().max()) <= 20.0


def test_effort_mode_in_presets(tmp_path):
    p = write(tmp_path, """
        kind: actuators
        groups:
          legs: {model: DCMotor, stiffness: 2000.0, damping: 20.0, saturation_effort: 30.0,
                 actuator_velocity_limit: 10.0, effort_mode: implicit}
          tail: {model: IdealPD, stiffness: 5.0}
    """)
    acts = configs.load(p).actuators
    assert acts["legs"].effort_mode == "implicit" and acts["tail"].effort_mode == "explicit"
    assert acts["legs"].build(joint_names=["a"]).effort_mode == "implicit"
    bad = write(tmp_path, "kind: actuators\ngroups:\n  g: {model: IdealPD, effort_mode: semi}\n", "bad.yaml")
    with pytest.raises(configs.ConfigError, match=r"groups.g.effort_mode: .*effort_mode must be one of \['explicit', 'implicit'\], got 'semi'"):
        configs.load(bad)


def test_actuators_take_a_preset_name_a_yaml_path_or_what_load_returns_at_every_door(tmp_path):
    """gym.make / gym.make_vec (the task configs) and ActuatorWrapper take actuators= as a bundled
    preset's name, a YAML path or configs.load's result, with the same groups as the mapping itself."""
    import gymnasium as gym

    from actuator_gym.wrappers import ActuatorWrapper

    preset = configs.load("ideal_pd")
    path = tmp_path / "mine.yaml"
    path.write_text((configs.preset_dir() / "actuators" / "ideal_pd.yaml").read_text())
    efforts = []
    for value in (preset.actuators, preset, "ideal_pd", str(path), path):
        env = gym.make_vec("actuator_gym/Pendulum-v0", num_envs=2, actuators=value)
        env.reset(seed=0)
        efforts.append(env.step(np.full((2, 1), 0.5))[4]["actuator"]["applied_effort"])
        env.close()
    for e in efforts[1:]:
        np.testing.assert_array_equal(e, efforts[0])
    single = gym.make("actuator_gym/Pendulum-v0", actuators="ideal_pd")
    single.reset(seed=0)
    np.testing.assert_array_equal(single.step(np.full(1, 0.5))[4]["actuator"]["applied_effort"], efforts[0][0])
    wrapped = ActuatorWrapper(gym.make("Ant-v5"), actuators="go1_dc_motor")
    assert set(wrapped.parameters()) == set(
        configs.load("go1_dc_motor").actuators)
    with pytest.raises(ValueError, match="a bundled preset's name, a YAML preset's path or what actuator_gym.configs.load"):
        gym.make_vec("actuator_gym/Pendulum-v0", num_envs=1, actuators=42)
    with pytest.raises(configs.ConfigError, match="no_such_preset"):
        gym.make_vec("actuator_gym/Pendulum-v0", num_envs=1, actuators="no_such_preset")
