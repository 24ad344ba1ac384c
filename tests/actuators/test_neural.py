"""Learned drives: Isaac Lab and Newton reference traces, batching, reset isolation, GRU inputs."""

import json
import time

import numpy as np
import pytest
import torch

import actuator_gym as ag
from actuator_gym.actuators.checkpoints import network_from_state_dict
from conftest import assert_close_rel, build_isaac_case, replay_isaac

JOINTS = ["leg0_hip", "leg0_knee", "leg1_hip", "leg1_knee"]


# ---- Isaac Lab: ActuatorNetMLP / ActuatorNetLSTM (TorchScript, trusted test data) -------------
@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("case", ["actuator_net_mlp", "actuator_net_lstm"])
def test_isaaclab_neural_traces(case, backend, conformance_dir):
    z = np.load(conformance_dir / "isaaclab" / f"{case}.npz")
    _, model = build_isaac_case(case, conformance_dir, backend)
    comp, appl = replay_isaac(model, z)
    assert z["reset_before_step"][1:].any()  # the trace exercises per-env resets
    assert_close_rel(comp, z["computed_effort"], what=f"{case} computed")
    assert_close_rel(appl, z["applied_effort"], what=f"{case} applied")
    assert (z["applied_effort"] != z["computed_effort"]).any()  # the DC-motor clamp is active


# ---- Newton: 64 lanes -> 64 envs x 1 joint ------------------------------------------------------
def _manifest(conformance_dir):
    return json.loads((conformance_dir / "newton" / "manifest.json").read_text())


def _newton_drive(case, conformance_dir, z, engine="auto"):
    man = _manifest(conformance_dir)
    params = man["cases"][case]["params"]
    nets = conformance_dir / "newton" / "nets"
    name = case.rsplit("_", 1)[0]  # mlp_a, mlp_b, lstm, gru
    cls = {"mlp": ag.DriveNeuralMLP, "lstm": ag.DriveNeuralLSTM, "gru": ag.DriveNeuralGRU}[name.split("_")[0]]
    if params["backend"] == "onnx":
        drive = cls(network_file=nets / f"{name}.onnx", onnx_engine=engine)
        assert drive.onnx_engine == engine
        return params, drive
    # *_pt2: the same weights as the ONNX twin, replayed from the raw tensors in the trace
    sd = {k[len("net_"):]: z[k] for k in z.files if k.startswith("net_")}
    kind = name.split("_")[0]
    net = network_from_state_dict(sd, kind, {"activation": "elu"})
    meta = dict(params["metadata"])
    meta.pop("model_type", None)
    if kind == "mlp":
        return params, cls(network=net, **{k: meta[k] for k in ("input_order", "input_idx", "pos_scale", "vel_scale")}, effort_scale=meta["effort_scale"])
    return params, cls(network=net, pos_scale=meta["pos_scale"], vel_scale=meta["vel_scale"], effort_scale=meta["effort_scale"])


NEWTON_ONNX = ["mlp_a_onnx", "mlp_b_onnx", "lstm_onnx", "gru_onnx"]
NEWTON_NEURAL = [(c, e) for c in NEWTON_ONNX for e in ("onnxruntime", "torch")] + [("mlp_a_pt2", "torch"), ("lstm_pt2", "torch")]


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("case, engine", NEWTON_NEURAL)
def test_newton_neural_traces(case, engine, backend, conformance_dir):
    """Every ONNX trace on both engines (onnxruntime, the torch interpreter); the .pt2 twins on torch."""
    z = np.load(conformance_dir / "newton" / f"{case}.npz")
    params, drive = _newton_drive(case, conformance_dir, z, engine if case.endswith("_onnx") else "auto")
    n = z["in_joint_q"].shape[1]
    model = ag.Actuator(drive=drive, num_envs=n, num_joints=1, seed=0, array_backend=backend)
    assert model.drive.engine == engine
    resets = params.get("resets", {})
    idx = z["indices"].astype(np.int64)
    comp, appl, hidden = [], [], []
    for t in range(z["in_joint_q"].shape[0]):
        if str(t) in resets:
            model.reset(env_ids=resets[str(t)])
        col = lambda key: z[key][t][idx].reshape(-1, 1)  # noqa: E731
        out = model.compute(
            joint_pos=col("in_joint_q"),
            joint_vel=col("in_joint_qd"),
            target_pos=col("in_joint_target_q"),
            target_vel=col("in_joint_target_qd"),
            dt=params["dt"],
        )
        comp.append(model.computed_effort.clone().numpy().ravel())
        appl.append(out.numpy().ravel())
        if hasattr(model.drive, "hidden_state"):
            hidden.append(model.drive.hidden_state[0][-1].clone().numpy())
    assert_close_rel(np.stack(comp), z["out_lane_computed"], what=f"{case} computed")
    assert_close_rel(np.stack(appl), z["out_lane_applied"], what=f"{case} applied")
    key = "out_lstm_hidden_after" if "lstm" in case else "out_gru_hidden_after"
    if key in z.files:
        assert_close_rel(np.stack(hidden), z[key], what=f"{case} hidden")


# ---- behaviour ------------------------------------------------------------------------------------
def test_batched_4096x12_cpu_and_reset_isolation(conformance_dir):
    n, j = 4096, 12
    for drive in (ag.DriveNeuralMLP(conformance_dir / "newton" / "nets" / "mlp_b.onnx"), ag.DriveNeuralLSTM(conformance_dir / "newton" / "nets" / "lstm.onnx")):
        m = ag.Actuator(drive=drive, num_envs=n, num_joints=j, clamping=[ag.ClampingMaxEffort(max_effort=5.0)])
        g = torch.Generator().manual_seed(0)
        q, qd, tq = (torch.randn(n, j, generator=g) for _ in range(3))
        t0 = time.perf_counter()
        for _ in range(3):
            out = m.compute(joint_pos=q, joint_vel=qd, target_pos=tq)
        assert out.shape == (n, j) and torch.isfinite(out).all() and out.abs().max() <= 5.0
        assert time.perf_counter() - t0 < 5.0  # batched: no per-element Python loops
        # rows are env-major and elements independent: env 7 alone gives the same row
        single = ag.Actuator(drive=drive, num_envs=1, num_joints=j, clamping=[ag.ClampingMaxEffort(max_effort=5.0)])
        for _ in range(3):
            one = single.compute(joint_pos=q[7:8], joint_vel=qd[7:8], target_pos=tq[7:8])
        assert torch.allclose(one[0], out[7], atol=1e-5)
        # resetting env 3 clears only env 3's history/state: env 3 restarts like a fresh model,
        # every other env continues exactly like a twin that saw no reset
        twin = ag.Actuator(drive=drive, num_envs=n, num_joints=j, clamping=[ag.ClampingMaxEffort(max_effort=5.0)])
        for _ in range(3):
            twin.compute(joint_pos=q, joint_vel=qd, target_pos=tq)
        m.reset(env_ids=[3])
        m.compute(joint_pos=q, joint_vel=qd, target_pos=tq)
        twin.compute(joint_pos=q, joint_vel=qd, target_pos=tq)
        fresh = ag.Actuator(drive=drive, num_envs=1, num_joints=j)
        fresh.compute(joint_pos=q[3:4], joint_vel=qd[3:4], target_pos=tq[3:4])
        assert torch.allclose(m.computed_effort[3], fresh.computed_effort[0], atol=1e-5)
        assert not torch.allclose(m.computed_effort[3], twin.computed_effort[3], atol=1e-5)
        keep = torch.arange(n) != 3
        assert torch.equal(m.computed_effort[keep], twin.computed_effort[keep])


def test_composes_with_delay_and_dc_clamp(conformance_dir):
    f = conformance_dir / "newton" / "nets" / "mlp_a.onnx"
    delayed = ag.Actuator(drive=ag.DriveNeuralMLP(f), delay=ag.Delay(delay_steps=2), num_envs=2, num_joints=1,
                          clamping=[ag.ClampingDCMotor(saturation_effort=3.0, velocity_limit=5.0)])
    plain = ag.Actuator(drive=ag.DriveNeuralMLP(f), num_envs=2, num_joints=1)
    targets = [0.5, -0.3, 0.8, 0.1, 0.0]
    outs_d, outs_p = [], []
    for k, t in enumerate(targets):
        outs_d.append(delayed.compute(joint_pos=[[0.0], [0.0]], joint_vel=[[0.1], [0.1]], target_pos=[[t], [t]]).clone())
        plain.compute(joint_pos=[[0.0], [0.0]], joint_vel=[[0.1], [0.1]], target_pos=[[targets[max(0, k - 2)]]] * 2)
        outs_p.append(plain.computed_effort.clone())
    for a, b in zip(outs_d, outs_p):
        assert torch.allclose(a, torch.clamp(b, -3.0 * (1 + 0.1 / 5.0), 3.0 * (1 - 0.1 / 5.0)), atol=1e-5)


def _gru_drive(**kw):
    from actuator_gym.actuators.checkpoints import RecurrentNet

    torch.manual_seed(0)
    net = RecurrentNet(torch.nn.GRU(3, 4), torch.nn.Sequential(torch.nn.Linear(4, 1)))
    return ag.DriveNeuralGRU(network=net, input_columns=["position_error", "velocity", "motor_temp"],
                             input_mean={"motor_temp": 40.0}, input_std={"motor_temp": 10.0}, torque_std=2.0, sample_dt_s=0.005, **kw)


def test_gru_custom_column_and_sample_dt():
    m = ag.Actuator(drive=_gru_drive(), num_envs=2, num_joints=3)
    kw = dict(joint_pos=np.zeros((2, 3)), joint_vel=np.zeros((2, 3)), target_pos=np.full((2, 3), 0.2), dt=0.005)
    with pytest.raises(ValueError, match="set_custom_input"):
        m.compute(**kw)
    m.drive.set_custom_input(np.full((2, 3), 40.0))
    a = m.compute(**kw).clone()
    with pytest.raises(ValueError, match="set_custom_input"):  # consumed by the compute
        m.compute(**kw)
    m.reset()
    m.drive.set_custom_input(np.array([[40.0] * 3, [90.0] * 3]))
    b = m.compute(**kw)
    assert torch.allclose(a[0], b[0]) and not torch.allclose(a[1], b[1])
    with pytest.raises(ValueError, match="sample_dt_s=0.005"):
        m.drive.set_custom_input(np.zeros((2, 3)))
        m.compute(**{**kw, "dt": 0.01})
    with pytest.raises(ValueError, match=r"shape \(2, 3\)"):
        m.drive.set_custom_input(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="at most one custom"):
        ag.DriveNeuralGRU(network=torch.nn.Linear(1, 1), input_columns=["a", "b"])
