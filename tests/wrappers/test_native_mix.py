"""execution="auto" per group on ActuatorWrapper: under Euler the groups with an exact native form
run as MuJoCo's own actuators and the others explicitly, per substep beside them (one engine loop),
with the all-explicit numbers (float64, to round-off) and the same telemetry; under RK4 "auto"
stays explicit except for groups that run only natively (the DC-motor extras)."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from actuator_gym.wrappers import ActuatorWrapper

from conftest import mix_groups
from test_native import TELEMETRY_COMPARED, ArmEnv, arm_path, rollout_diff  # noqa: F401  (the arm, its fixture, the lockstep)


def _groups(thermal=False):
    return mix_groups("shoulder", "elbow", thermal=thermal)


def test_auto_mixes_per_group_under_euler_and_equals_explicit_across_resets(arm_path):
    explicit = ActuatorWrapper(ArmEnv(arm_path("Euler")), _groups(), execution="explicit")
    mixed = ActuatorWrapper(ArmEnv(arm_path("Euler")), _groups(), execution="auto")
    assert mixed.execution == "mixed" and explicit.execution == "explicit"
    assert mixed.group_execution == {"shoulder": "native", "elbow": "explicit"}
    assert explicit.group_execution == {"shoulder": "explicit", "elbow": "explicit"}
    model = mixed.unwrapped.model  # the shoulder's motor is a MuJoCo actuator, the elbow's is not
    names = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, i) for i in range(model.nu)]
    assert [n for n in names if n and n.startswith("actuator_gym/")] == ["actuator_gym/shoulder/shoulder"]
    keys = TELEMETRY_COMPARED + ("mean_power", "energy")
    worst, _, saturated, tb = rollout_diff(explicit, mixed, steps=120, seed=5, keys=keys)
    assert max(worst.values()) < 1e-9, worst
    assert saturated.min() > 0, saturated  # both groups' limits acted: the comparison covers them
    # the explicit group really ran per substep beside the native one: its effort is in qfrc_applied
    d = mixed.unwrapped.data
    dof = model.jnt_dofadr[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, "elbow")]
    dof_s = model.jnt_dofadr[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, "shoulder")]
    assert d.qfrc_applied[dof] == tb["applied_effort"][1] != 0.0 and d.qfrc_applied[dof_s] == 0.0
    explicit.close(), mixed.close()


def test_native_stays_all_native_and_refuses_the_explicit_group(arm_path):
    with pytest.raises(ValueError, match="group 'elbow' has no exact MuJoCo-native form"):
        ActuatorWrapper(ArmEnv(arm_path("Euler")), _groups(), execution="native")


def test_auto_under_rk4_is_explicit_except_native_only_groups(arm_path):
    env = ActuatorWrapper(ArmEnv(arm_path("RK4")), _groups(), execution="auto")
    assert env.execution == "explicit" and set(env.group_execution.values()) == {"explicit"}
    env.close()
    # the thermal model exists only natively: that group runs natively, the other explicitly beside it
    env = ActuatorWrapper(ArmEnv(arm_path("RK4")), _groups(thermal=True), execution="auto")
    assert env.execution == "mixed" and env.group_execution == {"shoulder": "native", "elbow": "explicit"}
    env.reset(seed=0)
    model, d = env.unwrapped.model, env.unwrapped.data
    native_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, "actuator_gym/shoulder/shoulder")
    dofs = [model.jnt_dofadr[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, j)] for j in ("shoulder", "elbow")]
    for _ in range(20):
        _, _, _, _, info = env.step(np.ones(2))
        t = info["actuator"]
        assert set(t) >= {"computed_effort", "applied_effort", "energy", "motor_temperature", "motor_current"}
        assert np.isnan(t["motor_temperature"][1]) and np.isnan(t["motor_current"][1])
        assert t["motor_temperature"][0] > 25.0 and np.isfinite(t["motor_current"][0])  # the winding heats
        # the native group's effort is MuJoCo's actuator force, the explicit group's a generalized force
        assert t["applied_effort"][0] == d.actuator_force[native_id] and d.qfrc_applied[dofs[0]] == 0.0
        assert t["applied_effort"][1] == d.qfrc_applied[dofs[1]]
    env.close()
