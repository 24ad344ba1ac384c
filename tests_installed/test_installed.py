"""Smoke test of the installed wheel, run by ``make test`` (``make wheel-test``).

The Makefile builds the wheel, installs it into a fresh virtual environment and runs this file with
that environment's Python from a temporary working directory, so ``actuator_gym`` can only come
from the installed package. ``ACTUATOR_GYM_REPO`` names the checkout, used only to compare the
list of bundled files against ``configs/`` and to replay one recorded BAM trace (``tests/data/bam`` and
the repository's trace test, run on the installed package); nothing else is imported or read from it.
"""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import actuator_gym
from actuator_gym import configs
from actuator_gym.tools.training import make_env

REPO = Path(os.environ["ACTUATOR_GYM_REPO"]).resolve()
CLI = Path(sys.executable).parent / "actuator-gym"
TASKS = ["actuator_gym/Ant-v0", "actuator_gym/Pendulum-v0", "actuator_gym/Quadrotor-v0", "actuator_gym/Quadruped-v0"]


def test_the_package_is_the_installed_one():
    here = Path(actuator_gym.__file__).resolve()
    assert here.is_relative_to(Path(sys.prefix).resolve()) and "site-packages" in here.parts, here
    assert not here.is_relative_to(REPO / "actuator_gym"), here
    assert str(REPO) not in sys.path and "" not in sys.path[1:]
    assert not Path.cwd().resolve().is_relative_to(REPO)
    assert configs.preset_dir() == here.parent / "presets"


def test_every_bundled_file_is_installed():
    want = sorted(str(p.relative_to(REPO / "configs")) for p in (REPO / "configs").rglob("*") if p.is_file())
    have = sorted(str(p.relative_to(configs.preset_dir())) for p in configs.preset_dir().rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts)
    assert have == want
    assert set(configs.list_presets()) == {Path(f).stem for f in want if f.endswith(".yaml")}


def _steps(env, n=5, seed=0):
    obs, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    infos = []
    for _ in range(n):
        obs, reward, term, trunc, info = env.step(env.action_space.sample())
        assert np.all(np.isfinite(obs)) and np.isfinite(reward)
        infos.append(info)
    env.close()
    return infos


@pytest.mark.parametrize("name", sorted(configs.list_presets()))
def test_every_preset_loads_builds_and_steps(name):
    preset = configs.load(name)
    if isinstance(preset, configs.ActuatorPreset):
        infos = _steps(gym.make("actuator_gym/Quadruped-v0", actuators=preset.actuators))
    elif isinstance(preset, configs.ThrusterPreset):
        infos = _steps(gym.make("actuator_gym/Quadrotor-v0", actuators=preset.thrusters))
    elif isinstance(preset, configs.TransferExperiment):  # every condition with actuators of its own
        conds = [c for c in (*preset.train_conditions.values(), *preset.hardware_conditions.values()) if c.fitted_net is None]
        assert conds
        for c in conds:
            infos = _steps(make_env(preset.task, c.actuators, **{**preset.task_kwargs, **c.task_kwargs}), n=2)
    else:
        kwargs = dict(preset.task_kwargs)
        if kwargs.get("backend") in ("mujoco_warp", "newton") and importlib.util.find_spec("warp") is None:
            kwargs.pop("backend")  # the wheel is installed without the [warp] extra: the GPU preset steps on the CPU backend
        infos = _steps(make_env(preset.task, preset.actuators, **kwargs))
    assert "actuator" in infos[-1]


def test_learned_preset_drives_the_quadruped():
    preset = configs.load("learned_mlp")
    net = Path(preset.actuators["all"].network_file)
    assert net.is_file() and net.is_relative_to(configs.preset_dir())
    infos = _steps(gym.make("actuator_gym/Quadruped-v0", actuators=preset.actuators), n=40)
    effort = np.stack([i["actuator"]["applied_effort"] for i in infos])
    assert effort.shape == (40, 12) and np.isfinite(effort).all()
    assert 0 < np.abs(effort).max() <= 20.0 + 1e-4  # the preset's continuous limit [N·m]


@pytest.mark.parametrize("task", TASKS)
def test_each_bundled_task_steps(task):
    assert task in gym.registry
    _steps(gym.make(task))
    vec = gym.make_vec(task, num_envs=2)
    vec.reset(seed=0)
    vec.step(np.stack([vec.single_action_space.sample() for _ in range(2)]))
    vec.close()


def test_render_headless_without_mujoco_gl():
    env = {k: v for k, v in os.environ.items() if k not in ("MUJOCO_GL", "PYOPENGL_PLATFORM", "DISPLAY")}
    code = ("import gymnasium as gym, actuator_gym; e = gym.make('actuator_gym/Pendulum-v0', render_mode='rgb_array');"
            "e.reset(seed=0); f = e.render(); print(f.shape, int(f.std() > 0))")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "(480, 480, 3) 1", r.stderr[-1500:]


def test_cli_list_and_demo(tmp_path):
    r = subprocess.run([str(CLI), "list"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    for name in configs.list_presets():
        assert name in r.stdout
    assert "(invalid" not in r.stdout
    for task in TASKS:
        assert task in r.stdout
    r = subprocess.run([str(CLI), "demo", "--seconds", "0.5", "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    for f in ("step_response.png", "effort.png", "torque_speed.png", "summary.csv"):
        assert (tmp_path / "demo" / f).stat().st_size > 100, f


def test_cli_train_without_an_engine_library_names_its_extra(tmp_path):
    """The wheel is installed without the training extras (Makefile: [onnx,onnxruntime,test]): each
    engine says which extra it needs, in one line, before writing anything."""
    import importlib.util

    for engine, module, extra in (("sb3", "stable_baselines3", "actuator-gym[sb3]"), ("rsl_rl", "rsl_rl", "actuator-gym[rsl-rl]"),
                                  ("ray", "ray", "actuator-gym[ray]")):
        assert importlib.util.find_spec(module) is None, f"{module} is installed: this test needs the wheel without it"
        r = subprocess.run([str(CLI), "train", "--engine", engine, "--out", str(tmp_path)], capture_output=True, text=True, timeout=120)
        assert r.returncode == 2 and extra in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "train").exists()
    r = subprocess.run([str(CLI), "train", "--help"], capture_output=True, text=True, timeout=120)
    choices = r.stdout.split("--engine {", 1)[1].split("}", 1)[0].split(",")
    assert r.returncode == 0 and {"rsl_rl", "sb3", "ray"} == set(choices), r.stdout


def test_the_quadrotor_hovers_from_a_level_start():
    """hover_action (four rotors at m g / 4) holds altitude within 5 cm over 2 s from a level start."""
    env = gym.make("actuator_gym/Quadrotor-v0", max_episode_steps=100000, init_tilt_noise=0.0)
    env.reset(seed=0)
    u = env.unwrapped
    z0 = float(u.data.qpos[2])
    for _ in range(round(2.0 / u.dt)):
        env.step(u.hover_action)
    assert abs(float(u.data.qpos[2]) - z0) < 0.05
    env.close()


def test_a_diverged_world_ends_its_episode_alone():
    """stiffness=1e30 on env 1 (finite: accepted): MuJoCo resets that world; its episode truncates with
    info["physics_diverged"] True, env 0 goes on."""
    pd = {"p": actuator_gym.IdealPDActuatorCfg(joint_names_expr=["hinge"], stiffness=20.0, damping=2.0)}
    env = gym.make_vec("actuator_gym/Pendulum-v0", num_envs=2, actuators=pd)
    env.reset(seed=0)
    env.unwrapped.set_actuator_parameter("p", "stiffness", 1e30, env_ids=[1])
    _, _, terminated, truncated, info = env.step(np.full((2, 1), 0.5))
    assert info["physics_diverged"].tolist() == [False, True] and truncated.tolist() == [False, True]
    env.close()


def test_the_bundled_walking_policy_walks_from_the_wheel():
    """SavedPolicy.load("quadruped_walk") from the installed package data, commanded 0.6 m/s on 8 envs
    x 6 s: no fall, the forward speed within 0.1 m/s, every foot in the air 15-70 % of the time."""
    from actuator_gym.tools.walk_check import walk_figures

    assert "site-packages" in str(configs.bundled_policies()["quadruped_walk"])
    fig = walk_figures("quadruped_walk", vx=0.6, num_envs=8, seconds=6.0)
    assert fig["falls"] == 0 and abs(fig["vx_mean"] - 0.6) < 0.1, fig
    assert all(0.15 < a < 0.7 for a in fig["airborne"].values()), fig


def test_identify_from_the_wheel(tmp_path):
    """The sysid extra's identification, from the installed CLI: the example motor's bench and one
    short log, the DC-motor class with its delay found (docs/identify.md)."""
    from actuator_gym.tools.motor_bench import EXAMPLE_TRUTH, write_example_logs

    write_example_logs(tmp_path / "logs", logs_per_unit=1, seconds=1.5, seed=3)
    r = subprocess.run([str(CLI), "identify", str(tmp_path / "logs" / "unit_0"), "--mjcf", str(tmp_path / "logs" / "bench.xml"),
                        "--joint", "hinge", "--max-delay", "3", "--out", str(tmp_path / "out")],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    preset = configs.load(str(tmp_path / "out" / "identify" / "actuator.yaml")).actuators["motor"]
    assert preset.min_delay == preset.max_delay == EXAMPLE_TRUTH["delay"]
    assert abs(preset.actuator_effort_limit - EXAMPLE_TRUTH["actuator_effort_limit"]) < 0.05 * EXAMPLE_TRUTH["actuator_effort_limit"]


def test_a_bam_servo_from_the_wheel_follows_bam(tmp_path):
    """The servo parameters are package data: the installed package's XL-330 on a sagging battery follows
    BAM 1.0.2's recorded trace (the repository's test, run on the wheel)."""
    spec = importlib.util.spec_from_file_location("bam_traces", REPO / "tests" / "actuators" / "test_bam.py")
    traces = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(traces)
    assert configs.preset_dir().name == "presets"  # the parameter files are the wheel's package data, not configs/
    traces.test_joint_angle_follows_bam_1_0_2(tmp_path, "xl330_m6_drop")
