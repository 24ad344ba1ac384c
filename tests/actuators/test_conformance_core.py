"""Reference traces from Isaac Lab 3.0 and Newton 1.8 (tests/data/conformance) reproduced to 2e-5."""

import json

import numpy as np
import pytest
import torch

import actuator_gym as ag
from conftest import assert_close_rel, build_isaac_case, replay_isaac

ISAAC_CORE = ["ideal_pd", "dc_motor", "delayed_pd", "remotized_pd"]


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("case", ISAAC_CORE)
def test_isaaclab_traces(case, backend, conformance_dir):
    z = np.load(conformance_dir / "isaaclab" / f"{case}.npz")
    _, model = build_isaac_case(case, conformance_dir, backend)
    comp, appl = replay_isaac(model, z)
    assert_close_rel(comp, z["computed_effort"], what=f"{case} computed")
    assert_close_rel(appl, z["applied_effort"], what=f"{case} applied")
    # the trace exercises the clamp (so a missing clamp would fail above)
    assert (z["applied_effort"] != z["computed_effort"]).any()


# ---- Newton: 64 lanes -> 64 envs x 1 joint, per-lane parameters as (64, 1) tensors ----------------
NEWTON_CASES = [
    "pd_delay_maxeffort",
    "pd_delay_dcmotor",
    "pd_delay_reset",
    "pd_dcmotor_maxeffort_stacked",
    "pd_positionbased",
    "pid_delay_maxeffort",
    "pid_nodelay",
    "pid_reset",
]


def _lane(z, key):
    return torch.as_tensor(z[key].astype(np.float64)).reshape(-1, 1)


def newton_model(case, params, z, backend):
    drive_name = params["drive"]
    if drive_name == "DrivePD":
        drive = ag.DrivePD(kp=_lane(z, "param_kp"), kd=_lane(z, "param_kd"), const_effort=_lane(z, "param_const_effort"))
    else:
        drive = ag.DrivePID(
            kp=_lane(z, "param_kp"),
            ki=_lane(z, "param_ki"),
            kd=_lane(z, "param_kd"),
            integral_max=_lane(z, "param_integral_max"),
            const_effort=_lane(z, "param_const_effort"),
        )
    delay = None
    if params.get("delay"):
        d = params["max_delay"]
        # Newton treats a lag above max_delay as max_delay; we reject it, so clamp here
        steps = np.minimum(z["param_delay_steps"].astype(np.int64), d).reshape(-1, 1)
        delay = ag.Delay(delay_steps=torch.as_tensor(steps), max_delay=d)
    clamps = []
    for k, cname in enumerate(params["clamping"]):
        p = f"param_clamp{k}_"
        if cname == "ClampingMaxEffort":
            clamps.append(ag.ClampingMaxEffort(max_effort=_lane(z, p + "max_effort")))
        elif cname == "ClampingDCMotor":
            clamps.append(
                ag.ClampingDCMotor(
                    saturation_effort=_lane(z, p + "saturation_effort"),
                    velocity_limit=_lane(z, p + "velocity_limit"),
                    effort_limit=_lane(z, p + "max_motor_effort"),
                )
            )
        elif cname == "ClampingPositionBased":
            clamps.append(ag.ClampingPositionBased(params["clamp0_lookup_positions"], params["clamp0_lookup_efforts"]))
    n = z["param_kp"].shape[0]
    return ag.Actuator(drive=drive, delay=delay, clamping=clamps, num_envs=n, num_joints=1, seed=0, array_backend=backend)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("case", NEWTON_CASES)
def test_newton_traces(case, backend, conformance_dir):
    manifest = json.loads((conformance_dir / "newton" / "manifest.json").read_text())
    params = manifest["cases"][case]["params"]
    z = np.load(conformance_dir / "newton" / f"{case}.npz")
    model = newton_model(case, params, z, backend)
    steps = z["in_joint_q"].shape[0]
    resets = params.get("resets", {})
    idx = z["indices"].astype(np.int64)
    pos_idx = z["pos_indices"].astype(np.int64)
    tpos_idx = z["target_pos_indices"].astype(np.int64)
    comp, appl, dq, integ = [], [], [], []
    for t in range(steps):
        if str(t) in resets:
            model.reset(env_ids=resets[str(t)])
        col = lambda key, ix: z[key][t][ix].reshape(-1, 1)  # noqa: E731
        ff = col("in_joint_act", idx) if "in_joint_act" in z else None
        applied = model.compute(
            joint_pos=col("in_joint_q", pos_idx),
            joint_vel=col("in_joint_qd", idx),
            target_pos=col("in_joint_target_q", tpos_idx),
            target_vel=col("in_joint_target_qd", idx),
            target_effort=ff,
            dt=manifest["dt"],
        )
        comp.append(model.computed_effort.clone().numpy().ravel())
        appl.append(applied.numpy().ravel())
        if model.delay is not None:
            dq.append(np.asarray(model.delayed_command[0]).ravel().copy())
        if hasattr(model.drive, "integral_t"):
            integ.append(model.drive.integral_t.clone().numpy().ravel())
    assert_close_rel(np.stack(comp), z["out_lane_computed"], what=f"{case} computed")
    assert_close_rel(np.stack(appl), z["out_lane_applied"], what=f"{case} applied")
    if dq:
        keep = z["param_delay_steps"] <= params["max_delay"]  # lanes beyond max_delay differ by design
        assert_close_rel(np.stack(dq)[:, keep], z["out_delayed_target_q"][:, keep], what=f"{case} delayed q*")
    if integ:
        assert_close_rel(np.stack(integ), z["out_pid_integral_after"], what=f"{case} integral")
