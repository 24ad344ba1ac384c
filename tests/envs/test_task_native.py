"""execution="native" on the batched tasks: MuJoCo's own actuators (per-world fields through
``mujoco.batch.Batch.expand``) give the explicit path's numbers under Euler, batched, with per-env
randomization, across autoresets; every env's parameters sit in its own world; refusals name the
group or the backend; under RK4 / implicitfast the difference has a documented size."""

from __future__ import annotations

import dataclasses
import re

import gymnasium as gym
import numpy as np
import pytest
import torch

import actuator_gym as ag
from conftest import native_pendulum_cfgs, native_rollout_diff
from actuator_gym.tasks.ant import AntCfg, AntTask
from actuator_gym.tasks.pendulum import PendulumTask
from actuator_gym.tasks.quadruped import QuadrupedCfg, QuadrupedTask
from actuator_gym.randomization import Uniform

N = 5


class Pendulum64(PendulumTask):
    """The pendulum task (Euler) with its explicit path in float64."""

    actuator_dtype = torch.float64


CFGS = {**native_pendulum_cfgs(max_delay=5),  # every group randomized per env; the limits act at many steps
    "pid": lambda: ag.ComposedActuatorCfg(
        joint_names_expr=["hinge"], drive=ag.DrivePID(kp=20.0, ki=15.0, kd=1.0, integral_max=0.05),
        clamping=[ag.ClampingMaxEffort(max_effort=Uniform(2.0, 4.0))]),
}


def _pair(cls, cfg, **kw):
    return [cls(num_envs=N, actuators={"pendulum": cfg()}, execution=ex, seed=11, **kw) for ex in ("explicit", "native")]


@pytest.mark.parametrize("name", list(CFGS))
def test_native_equals_explicit_float64_under_euler_with_randomization_across_autoresets(name):
    explicit, native = _pair(Pendulum64, CFGS[name], episode_length_s=1.0)
    assert native.execution == "native" and explicit.execution == "explicit"
    assert int(native.model.opt.integrator) == 0  # the pendulum integrates with Euler
    worst, lags, saturated, resets = native_rollout_diff(explicit, native, steps=200)  # 200 steps: 3 autoresets per env
    assert resets >= 3 * N and saturated > 50
    assert max(worst.values()) < 1e-9, worst
    if name == "delayed_pd":  # lags re-drawn per env at every reset, and they differ
        assert len(np.unique(np.concatenate(lags))) >= 4


def test_float32_explicit_path_agrees_to_float32_round_off_over_a_5s_episode():
    """The tasks' default: the explicit path in float32 (``actuator_dtype``); the native one computes in
    float64 from the same float32 parameters and targets. Drift over one 5 s episode (300 steps)."""
    explicit, native = _pair(PendulumTask, CFGS["dc_motor"])
    assert explicit.collection.applied_effort.dtype == torch.float32
    steps = int(round(5.0 / native.dt))
    worst, _, saturated, _ = native_rollout_diff(explicit, native, steps=steps)
    assert saturated > 50
    assert 1e-9 < worst["qpos"] < 1e-4 and worst["applied_effort"] < 1e-4, worst


def test_every_env_parameters_are_in_its_own_world():
    task = Pendulum64(num_envs=N, actuators={"pendulum": CFGS["delayed_pd"]()}, execution="native", seed=3)
    p = task.actuator_parameters()["pendulum"]
    i = task.model.nactuator - 1  # the native actuator (appended after the model's own: none here)
    assert i == 0 and task.model.nu == 3  # its controls: pos vel ff
    lag = p["delay_steps"][:, 0]
    for e in range(N):
        m = task.backend.world_model(e)
        assert m.actuator_biasprm[i, 1] == -p["stiffness"][e, 0] and m.actuator_biasprm[i, 2] == -p["damping"][e, 0]
        assert m.actuator_forcerange[i, 1] == p["actuator_effort_limit"][e, 0]
        assert m.actuator_delay[i] == pytest.approx((lag[e] - 0.5) * task.physics_dt if lag[e] else 0.0, abs=1e-15)
    assert len(np.unique(p["stiffness"][:, 0])) == N
    # set_actuator_parameter rewrites the worlds asked for, and only those
    task.set_actuator_parameter("pendulum", "stiffness", 7.0, env_ids=[2])
    kp = -task.backend.batch.expanded("actuator_biasprm")[:, i, 1]
    assert kp[2] == 7.0 and np.array_equal(np.delete(kp, 2), np.delete(p["stiffness"][:, 0], 2))


def test_dc_motor_fields_per_world():
    task = Pendulum64(num_envs=N, actuators={"pendulum": CFGS["dc_motor"]()}, execution="native", seed=5)
    p = task.actuator_parameters()["pendulum"]
    g = task.backend.batch.expanded("actuator_gainprm")[:, 0]
    vmax, stall = p["actuator_velocity_limit"][:, 0], p["saturation_effort"][:, 0]
    assert len(np.unique(vmax)) == N and len(np.unique(stall)) == N
    np.testing.assert_array_equal(g[:, 7], vmax)  # Vmax = the no-load speed
    np.testing.assert_allclose(g[:, 0], vmax / stall, rtol=1e-15)  # R = Vmax / stall torque (K = 1)
    np.testing.assert_array_equal(g[:, 4], p["stiffness"][:, 0])
    np.testing.assert_array_equal(task.backend.batch.expanded("actuator_forcerange")[:, 0, 1], p["actuator_effort_limit"][:, 0])


def test_delay_history_prefilled_with_each_envs_first_command():
    """After a reset the delayed read returns the env's first command (our Delay holds it), so the
    first step's effort is the PD of the first command, for every lag."""
    explicit, native = _pair(Pendulum64, CFGS["delayed_pd"])
    a = np.linspace(-1, 1, N).reshape(N, 1)
    ie = explicit.step(a)[4]["actuator"]
    inn = native.step(a)[4]["actuator"]
    assert (ie["parameters"]["pendulum"]["delay_steps"] > 0).any()
    np.testing.assert_allclose(inn["computed_effort"], ie["computed_effort"], atol=1e-12)
    assert np.abs(ie["computed_effort"]).min() > 0.05  # the command acts from the first substep


def test_auto_and_refusals():
    assert PendulumTask(num_envs=1, execution="auto").execution == "native"  # Euler, every group native
    assert AntTask(num_envs=1, execution="auto").execution == "explicit"  # RK4
    with pytest.raises(ValueError, match="group 'pendulum'.*ClampingPositionBased"):
        PendulumTask(num_envs=1, execution="native", actuators={"pendulum": ag.RemotizedPDActuatorCfg(
            joint_names_expr=["hinge"], stiffness=10.0, damping=1.0, max_delay=0, joint_parameter_lookup=[[-3.0, 1.0, 4.0], [3.0, 1.0, 4.0]])})
    with pytest.raises(ValueError, match="execution='native' runs on backend 'mujoco'.*'mujoco_warp' only; backend='newton'"):
        PendulumTask(num_envs=1, execution="native", backend="newton")
    with pytest.raises(ValueError, match="execution must be one of"):
        PendulumTask(num_envs=1, execution="Native")
    with pytest.raises(ValueError, match="rotor group"):
        gym.make_vec("actuator_gym/Quadrotor-v0", num_envs=1, execution="native")
    task = PendulumTask(num_envs=1, execution="native")
    with pytest.raises(ValueError, match="per-substep callbacks need execution='explicit'"):
        task.add_substep_callback(lambda t, k: None)
    env = gym.make("actuator_gym/Pendulum-v0", execution="native")
    assert env.unwrapped.task.execution == "native"
    assert gym.make_vec("actuator_gym/Pendulum-v0", num_envs=2, execution="native").execution == "native"


def _euler(cfg_cls):
    @dataclasses.dataclass
    class Euler(cfg_cls):
        def model_xml(self) -> str:
            return re.sub(r'integrator="\w+"', 'integrator="Euler"', super().model_xml())
    return Euler


@pytest.mark.parametrize("task_cls,cfg_cls,integrator,low,high", [
    (QuadrupedTask, QuadrupedCfg, 3, 0.05, 3.0),  # implicitfast
    (AntTask, AntCfg, 1, 0.02, 3.0),  # RK4
])
def test_rk4_implicitfast_differ_by_a_documented_amount(task_cls, cfg_cls, integrator, low, high):
    """Over 1 s of random actions the trajectories part by physics-sized amounts under the task's own
    integrator (native forces re-evaluated per stage / integrated implicitly) and by float32 round-off
    under Euler (same tasks, contacts amplify it); docs/native.md records the sizes."""
    def gap(cfg):
        envs = [task_cls(num_envs=2, cfg=cfg, execution=ex, seed=0) for ex in ("explicit", "native")]
        rng = np.random.default_rng(0)
        for _ in range(int(round(1.0 / envs[0].dt))):
            a = rng.uniform(-1, 1, (2, envs[0].num_actions))
            for e in envs:
                e.step(a)
        return int(envs[0].model.opt.integrator), float(np.abs(envs[0].backend.qpos - envs[1].backend.qpos).max())

    got, own = gap(cfg_cls())
    assert got == integrator and low < own < high, own
    got, euler = gap(_euler(cfg_cls)())
    assert got == 0 and euler < 1e-4, euler


def test_native_task_reports_motor_temperature_and_current_with_the_same_keys_every_call():
    """A thermal DC motor on a native task: motor_temperature / motor_current in every info (from the
    reset on: torchrl stacks infos), the winding heats under a saturating command, and a reset world
    is back at ambient with no current while the other keeps heating."""
    motor = ag.DCMotorCfg(joint_names_expr=[".*"], stiffness=0.0, damping=0.0, saturation_effort=10.0,
                       actuator_velocity_limit=20.0, thermal_resistance=2.0, thermal_capacitance=5.0,
                       ambient_temperature=30.0)
    env = gym.make_vec("actuator_gym/Pendulum-v0", num_envs=2, execution="native", actuators={"hinge": motor},
                       action_mode="effort", action_scale=100.0, action_offset=0.0, action_bounds=(-1.0, 1.0))
    with pytest.raises(ValueError, match=r"group 'hinge' sets \['ambient_temperature', 'thermal_capacitance', 'thermal_resistance'\].*native"):
        gym.make_vec("actuator_gym/Pendulum-v0", num_envs=2, actuators={"hinge": motor})  # explicit: refused at construction
    _, info = env.reset(seed=0)
    keys = set(info["actuator"])
    assert {"motor_temperature", "motor_current"} <= keys
    np.testing.assert_array_equal(info["actuator"]["motor_temperature"], np.full((2, 1), 30.0))
    temps = []
    for _ in range(6):
        _, _, _, _, info = env.step(np.ones((2, 1), np.float32))  # 10x the stall torque: saturated
        assert set(info["actuator"]) == keys
        temps.append(info["actuator"]["motor_temperature"][:, 0].copy())
        assert (info["actuator"]["motor_current"] > 0).all() and info["actuator"]["saturated"].all()
    assert (np.diff(np.array(temps), axis=0) > 0).all()  # heating, both worlds
    _, info = env.reset(options={"reset_mask": np.array([True, False])})
    assert info["actuator"]["motor_temperature"][0, 0] == 30.0 and info["actuator"]["motor_current"][0, 0] == 0.0
    _, _, _, _, info = env.step(np.ones((2, 1), np.float32))
    t = info["actuator"]["motor_temperature"][:, 0]
    assert 30.0 < t[0] < temps[1][0] and t[1] > temps[-1][1]  # env 0 restarts cold (one step of heat), env 1 keeps heating
