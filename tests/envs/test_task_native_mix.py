"""execution="auto" per group on the batched tasks (as on the wrapper): under Euler the groups with an
exact native form run as MuJoCo's own actuators and the others explicitly, per substep beside them
(one engine loop, ``SubstepEngine.mixed``), with the all-explicit numbers (float64, to round-off),
per-env randomization and autoresets included, and the same telemetry; under RK4 "auto" is explicit
except for groups that run only natively (the DC-motor extras)."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
import torch

from conftest import double_pendulum, mix_groups
from actuator_gym.tasks.pendulum import PendulumTask

N = 4


class DoublePendulum64(PendulumTask):
    """The pendulum task on a two-hinge model, its explicit path in float64."""

    actuator_dtype = torch.float64


def _groups(thermal=False):
    return mix_groups("hinge", "elbow", thermal=thermal,
                      motor=dict(stiffness=25.0, saturation_effort=6.0, actuator_effort_limit=4.0, sat_range=(4.0, 8.0)),
                      remotized=dict(stiffness=15.0, damping=0.5, joint_parameter_lookup=[[-2, 1, 0.3], [2, 1, 0.8]]))


def _task(execution, integrator="Euler", thermal=False, cls=DoublePendulum64):
    return cls(num_envs=N, mjcf=double_pendulum(integrator), actuators=_groups(thermal), execution=execution,
               seed=7, episode_length_s=0.5)


def test_auto_mixes_per_group_under_euler_and_equals_explicit_across_autoresets():
    explicit, mixed = _task("explicit"), _task("auto")
    assert mixed.execution == "mixed" and explicit.execution == "explicit"
    assert mixed.group_execution == {"shoulder": "native", "elbow": "explicit"}
    assert explicit.group_execution == {"shoulder": "explicit", "elbow": "explicit"}
    m = mixed.model  # the shoulder's motor is a MuJoCo actuator, the elbow's is not
    assert [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_ACTUATOR, i) for i in range(m.nu // 3)] == ["actuator_gym/shoulder/hinge"]
    dofs = [int(m.jnt_dofadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, j)]) for j in ("hinge", "elbow")]
    force = mixed.backend.output("actuator_force")
    rng = np.random.default_rng(3)
    worst, saturated, resets, draws, rect = 0.0, np.zeros(2, int), 0, [], np.zeros(2, int)
    explicit.reset(seed=1), mixed.reset(seed=1)
    for _ in range(120):  # 4 episodes of 30 steps per env
        a = rng.uniform(-1, 1, (N, 2))
        oe, re_, te, tre, ie = explicit.step(a)
        om, rm, tm, trm, im = mixed.step(a)
        assert np.array_equal(te, tm) and np.array_equal(tre, trm)
        ta, tb = ie["actuator"], im["actuator"]
        assert ta.keys() == tb.keys()
        for k in ("computed_effort", "applied_effort", "power", "mean_power", "energy", "joint_pos", "joint_vel"):
            worst = max(worst, float(np.abs(ta[k] - tb[k]).max()))
        worst = max(worst, float(np.abs(oe - om).max()), float(np.abs(re_ - rm).max()),
                    float(np.abs(explicit.backend.qpos - mixed.backend.qpos).max()),
                    float(np.abs(explicit.backend.qvel - mixed.backend.qvel).max()))
        assert np.array_equal(ta["saturated"], tb["saturated"])
        saturated += ta["saturated"].sum(axis=0)
        # the native group's effort is the engine's actuator force of the last substep; the explicit
        # group's is the generalized force written before it, zero on the native joint
        assert np.array_equal(tb["applied_effort"][:, 0], force[:, 0])
        assert np.array_equal(mixed.backend.qfrc_applied[:, dofs[1]], tb["applied_effort"][:, 1])
        assert not mixed.backend.qfrc_applied[:, dofs[0]].any()
        # the native energy is the per-substep sum, not the last substep's power held (the rectangle
        # rule of the all-native path): equal to explicit above, and the two rules differ here
        live = tb["power"][:, 0] != 0  # (a world reset at this step reports zeros)
        rect += int((np.abs(tb["energy"][live, 0] - np.abs(tb["power"][live, 0]) * mixed.dt) > 1e-6).sum()), int(live.sum())
        mask = im["actuator"]["_parameters"]
        if mask.any():
            resets += int(mask.sum())
            draws.append(im["actuator"]["parameters"]["shoulder"]["saturation_effort"][mask, 0])
    assert worst < 1e-9, worst
    assert resets >= 3 * N and len(np.unique(np.concatenate(draws))) >= 3 * N  # re-drawn per env at every reset
    assert saturated.min() > 0, saturated  # both groups' limits acted: the comparison covers them
    assert rect[0] > 0.9 * rect[1], rect


def test_auto_under_rk4_is_explicit_except_native_only_groups():
    task = _task("auto", integrator="RK4")
    assert task.execution == "explicit" and set(task.group_execution.values()) == {"explicit"}
    # the thermal model exists only natively: that group runs natively, the other explicitly beside it
    task = _task("auto", integrator="RK4", thermal=True)
    assert task.execution == "mixed" and task.group_execution == {"shoulder": "native", "elbow": "explicit"}
    task.reset(seed=0)
    for _ in range(10):
        info = task.step(np.ones((N, 2)))[4]["actuator"]
        assert np.isnan(info["motor_temperature"][:, 1]).all() and (info["motor_temperature"][:, 0] > 25.0).all()
        assert np.array_equal(info["applied_effort"][:, 1], task.backend.qfrc_applied[:, 1])


def test_native_stays_all_native_and_callbacks_are_refused_on_a_mix():
    with pytest.raises(ValueError, match="group 'elbow' has no exact MuJoCo-native form"):
        _task("native")
    with pytest.raises(ValueError, match="execution='mixed'.*per-substep callbacks need execution='explicit'"):
        _task("auto", cls=PendulumTask).add_substep_callback(lambda t, k: None)
