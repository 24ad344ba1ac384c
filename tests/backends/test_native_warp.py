"""execution="native" on backend "mujoco_warp" (Warp's CPU device here; ``ACTUATOR_GYM_WARP_DEVICE``
picks another): the groups compiled into MuJoCo-Warp's own actuators agree with the explicit path on
Warp to float32 round-off under Euler, batched, with per-env randomization across autoresets; every
env's values sit in its own world's batched model fields; no effort of ours reaches the joints; a PID
group is refused by "native" and runs explicitly under "auto" (per group).

Kept small for Warp's CPU device (every ``mujoco_warp.step`` is a few hundred kernel launches): 4 worlds,
2 substeps per control step, 0.1 s episodes."""

from __future__ import annotations

import os

import numpy as np
import pytest

import warp  # noqa: F401
import mujoco_warp  # noqa: F401

import actuator_gym as ag  # noqa: E402
from actuator_gym.tasks.pendulum import PendulumTask  # noqa: E402
from actuator_gym.randomization import Uniform  # noqa: E402

from conftest import double_pendulum, native_pendulum_cfgs, native_rollout_diff  # noqa: E402

DEVICE = os.environ.get("ACTUATOR_GYM_WARP_DEVICE", "cpu")  # as test_backend_warp.py (gpu_check.sh: cuda:0)

N = 4
SMALL = dict(decimation=2, episode_length_s=0.1)  # 18 control steps an episode
CFGS = native_pendulum_cfgs(max_delay=4)  # randomized per env; the limits act at many steps
PID = lambda: ag.ComposedActuatorCfg(  # noqa: E731
    joint_names_expr=["hinge"], drive=ag.DrivePID(kp=20.0, ki=15.0, kd=1.0, integral_max=0.05),
    clamping=[ag.ClampingMaxEffort(max_effort=3.0)])
TOL = {"qpos": 1e-5, "qvel": 1e-4, "computed_effort": 1e-4, "applied_effort": 1e-4, "power": 1e-4,
       "joint_pos": 1e-5, "joint_vel": 1e-4}
"""float32 round-off over these episodes (measured worst: ~1e-7 rad, ~2e-6 N·m, docs/native.md)."""


def _task(execution, actuators, **kw):
    return PendulumTask(num_envs=N, actuators=actuators, backend="mujoco_warp", device=DEVICE, execution=execution,
                        seed=11, **{**SMALL, **kw})


@pytest.mark.parametrize("name", list(CFGS))
def test_native_on_warp_equals_explicit_on_warp_to_float32_round_off_across_autoresets(name):
    explicit, native = _task("explicit", {"pendulum": CFGS[name]()}), _task("native", {"pendulum": CFGS[name]()})
    assert native.execution == "native" and native.group_execution == {"pendulum": "native"}
    assert int(native.model.opt.integrator) == 0  # Euler
    worst, lags, saturated, resets = native_rollout_diff(explicit, native, steps=40)  # 2 autoresets per env
    assert resets >= 2 * N and saturated > 10
    assert all(worst[k] < TOL[k] for k in TOL), worst
    if name == "delayed_pd":  # lags re-drawn per env at every reset, and they differ
        assert len(np.unique(np.concatenate(lags))) >= 3


def test_no_effort_of_ours_reaches_the_joints_and_the_collection_never_computes(monkeypatch):
    """The native groups run in MuJoCo-Warp's actuators only: qfrc_applied stays zero, the
    collection's compute is never called, and the force is the engine's actuator_force."""
    task = _task("native", {"pendulum": CFGS["dc_motor"]()})
    monkeypatch.setattr(task.collection, "compute", lambda *a, **k: pytest.fail("the collection computed an effort"))
    task.reset(seed=1)
    for _ in range(3):
        info = task.step(np.full((N, 1), 0.7))[4]["actuator"]
    assert np.all(task.backend.field("qfrc_applied") == 0.0)
    force = task.backend.output("actuator_force")[:, task.model.nu // 3 - 1]
    np.testing.assert_array_equal(info["applied_effort"][:, 0], force)
    assert np.abs(force).min() > 0.1


def test_every_env_parameters_are_in_its_own_worlds_batched_fields():
    task = _task("native", {"pendulum": CFGS["delayed_pd"]()})
    be = task.backend
    p = task.actuator_parameters()["pendulum"]
    kp, kd, lim, lag = (p[k][:, 0] for k in ("stiffness", "damping", "actuator_effort_limit", "delay_steps"))
    assert len(np.unique(kp)) == N and len(np.unique(lag)) >= 2
    gain, frc, delay = (be.model_field(f)[:, 0] for f in ("actuator_gainprm", "actuator_forcerange", "actuator_delay"))
    # the PD is the dcmotor controller on MuJoCo-Warp: R = K = 1, (kp, ki, kd) in gainprm[4:7], no voltage clip
    np.testing.assert_array_equal(gain[:, 4], kp.astype(np.float32))
    np.testing.assert_array_equal(gain[:, 6], kd.astype(np.float32))
    np.testing.assert_array_equal(gain[:, [0, 1, 5, 7]], np.tile([1.0, 1.0, 0.0, 0.0], (N, 1)))
    np.testing.assert_array_equal(frc[:, 1], lim.astype(np.float32))
    np.testing.assert_allclose(delay, np.where(lag > 0, (lag - 0.5) * task.physics_dt, 0.0), rtol=1e-6)
    task.set_actuator_parameter("pendulum", "stiffness", 7.0, env_ids=[2])  # that world only
    kp_now = be.model_field("actuator_gainprm")[:, 0, 4]
    assert kp_now[2] == 7.0 and np.array_equal(np.delete(kp_now, 2), np.delete(kp, 2).astype(np.float32))


def test_delay_history_prefilled_with_each_envs_first_command():
    """After a reset the delayed read returns the env's first command (our Delay holds it): the first
    step's effort is the PD of the first command for every lag, as on the explicit path."""
    explicit, native = _task("explicit", {"pendulum": CFGS["delayed_pd"]()}), _task("native", {"pendulum": CFGS["delayed_pd"]()})
    a = np.linspace(-1, 1, N).reshape(N, 1)
    ie, inn = explicit.step(a)[4]["actuator"], native.step(a)[4]["actuator"]
    assert (ie["parameters"]["pendulum"]["delay_steps"] > 0).any()
    np.testing.assert_allclose(inn["computed_effort"], ie["computed_effort"], atol=1e-5)
    assert np.abs(ie["computed_effort"]).min() > 0.05  # the command acts from the first substep


def test_pid_is_refused_by_native_and_runs_explicitly_under_auto():
    with pytest.raises(ValueError, match="execution='native': group 'pendulum'.*MuJoCo-Warp 4.0 has no pid"):
        _task("native", {"pendulum": PID()})
    with pytest.raises(ValueError, match="group 'pendulum'.*const_effort has no native form on MuJoCo-Warp"):
        _task("native", {"pendulum": ag.ComposedActuatorCfg(joint_names_expr=["hinge"],
                                                            drive=ag.DrivePD(kp=5.0, kd=1.0, const_effort=0.3))})
    auto = _task("auto", {"pendulum": PID()})
    assert auto.execution == "explicit" and auto.group_execution == {"pendulum": "explicit"}
    assert auto.model.nu == 0  # nothing compiled
    on_cpu = PendulumTask(num_envs=1, actuators={"pendulum": PID()}, execution="auto")
    assert on_cpu.execution == "native"  # MuJoCo (C) has the pid actuator


def test_auto_mixes_per_group_on_warp_and_agrees_with_explicit():
    def groups():
        return {"shoulder": ag.DCMotorCfg(joint_names_expr=["hinge"], stiffness=25.0, damping=1.0, saturation_effort=6.0,
                                          actuator_velocity_limit=6.0, actuator_effort_limit=4.0, min_delay=0, max_delay=3,
                                          randomization={"stiffness": Uniform(0.5, 1.5, operation="scale")}),
                "elbow": ag.ComposedActuatorCfg(joint_names_expr=["elbow"], drive=ag.DrivePID(kp=15.0, ki=5.0, kd=0.5),
                                                clamping=[ag.ClampingMaxEffort(max_effort=2.0)])}

    tasks = [PendulumTask(num_envs=N, mjcf=double_pendulum(), actuators=groups(), backend="mujoco_warp", device=DEVICE,
                          execution=ex, seed=7, **SMALL) for ex in ("explicit", "auto")]
    explicit, mixed = tasks
    assert mixed.execution == "mixed" and mixed.group_execution == {"shoulder": "native", "elbow": "explicit"}
    rng = np.random.default_rng(3)
    worst = 0.0
    for _ in range(20):
        a = rng.uniform(-1, 1, (N, 2))
        ie, im = explicit.step(a)[4]["actuator"], mixed.step(a)[4]["actuator"]
        for k in ("applied_effort", "energy", "joint_pos"):  # a mix reads every substep's power: exact energy
            worst = max(worst, float(np.abs(ie[k] - im[k]).max()))
    assert worst < 1e-4
    assert np.abs(mixed.backend.qpos).max() > 0.05  # it moved


def test_thermal_motor_on_warp_heats_as_on_mujoco():
    """MuJoCo-Warp runs the dcmotor's thermal model (native only) as MuJoCo (C) does: the same winding
    temperature, current and torque under a saturating command, to float32 round-off."""
    def motor():
        return ag.DCMotorCfg(joint_names_expr=[".*"], stiffness=0.0, damping=0.0, saturation_effort=10.0,
                             actuator_velocity_limit=20.0, thermal_resistance=2.0, thermal_capacitance=5.0,
                             ambient_temperature=30.0)

    tasks = [PendulumTask(num_envs=2, actuators={"hinge": motor()}, backend=b, device=DEVICE if b != "mujoco" else "cpu",
                          execution="native", action_mode="effort", action_scale=100.0, action_offset=0.0,
                          action_bounds=(-1.0, 1.0), seed=0, **SMALL) for b in ("mujoco", "mujoco_warp")]
    temps = []
    for _ in range(5):
        cpu, wrp = (t.step(np.ones((2, 1)))[4]["actuator"] for t in tasks)
        for k in ("motor_temperature", "motor_current", "applied_effort"):
            np.testing.assert_allclose(wrp[k], cpu[k], rtol=2e-6, err_msg=k)
        temps.append(wrp["motor_temperature"][:, 0])
    assert (np.diff(np.array(temps), axis=0) > 0).all() and wrp["saturated"].all()  # heating, saturated
    assert (wrp["applied_effort"] < 9.5).all()  # the hot winding's resistance lowers the stall torque (10 N·m cold)


def test_quadruped_native_on_warp_matches_native_on_mujoco():
    """The bundled quadruped (12 DC motors with a 0..2 substep delay, contacts, implicitfast) compiled
    natively runs on MuJoCo-Warp as on MuJoCo (C): the same observations and efforts to float32 over a
    few control steps (the same compiled model, the same per-world values)."""
    import gymnasium as gym

    envs = [gym.make_vec("actuator_gym/Quadruped-v0", num_envs=2, backend=b, device=DEVICE if b != "mujoco" else "cpu",
                         execution="native", seed=3) for b in ("mujoco", "mujoco_warp")]
    assert all(e.unwrapped.execution == "native" for e in envs)
    o = [e.reset(seed=3)[0] for e in envs]
    np.testing.assert_allclose(o[1], o[0], atol=1e-5)
    rng = np.random.default_rng(0)
    for _ in range(3):
        a = rng.uniform(-1, 1, envs[0].action_space.shape)
        (oc, *_, ic), (ow, *_, iw) = (e.step(a) for e in envs)
        np.testing.assert_allclose(ow, oc, atol=5e-5)
        for k in ("applied_effort", "computed_effort"):
            np.testing.assert_allclose(iw["actuator"][k], ic["actuator"][k], atol=1e-4, err_msg=k)
        lags = [i["actuator"]["parameters"]["legs"]["delay_steps"] for i in (ic, iw)]
        assert np.array_equal(*lags)
    assert np.abs(ic["actuator"]["applied_effort"]).max() > 1.0  # the motors work


def test_an_infinite_limit_is_an_unlimited_force_range_in_that_world_only():
    """``forcelimited`` is per model on MuJoCo-Warp, so it is compiled on and an infinite limit is written
    as ``forcerange = +-inf`` in that world: no clamp there, the others still clamp, as explicitly."""
    explicit, native = (_task(ex, {"pendulum": CFGS["ideal_pd"]()}) for ex in ("explicit", "native"))
    for t in (explicit, native):
        t.set_actuator_parameter("pendulum", "actuator_effort_limit", np.inf, env_ids=[1])
    assert native.model.actuator_forcelimited[0] == 1
    frc = native.backend.model_field("actuator_forcerange")[:, 0]
    assert np.isposinf(frc[1, 1]) and np.isneginf(frc[1, 0]) and np.isfinite(np.delete(frc, 1, axis=0)).all()
    peak = np.zeros(N)
    for _ in range(8):  # within the first episode (no re-draw)
        a = np.ones((N, 1))
        ie, inn = explicit.step(a)[4]["actuator"], native.step(a)[4]["actuator"]
        np.testing.assert_allclose(inn["applied_effort"], ie["applied_effort"], atol=1e-4)
        assert np.array_equal(inn["saturated"], ie["saturated"])
        peak = np.maximum(peak, np.abs(inn["applied_effort"][:, 0]))
    assert peak[1] > 2.5 and np.all(np.delete(peak, 1) == 2.5)  # unlimited in world 1 only; the others at their limit
