"""The fit tool: a net trained on a synthetic log of an analytic actuator reproduces its torques."""

import json

import numpy as np
import torch

import actuator_gym as ag
from actuator_gym.fit import fit_actuator_net, generate_synthetic_log, load_log, main


def test_fit_mlp_reproduces_analytic_actuator_and_exports(tmp_path):
    log = generate_synthetic_log(tmp_path / "log.npz", num_steps=2000, num_sequences=6, seed=1)
    rep = fit_actuator_net(log, tmp_path / "out", "mlp", epochs=150, seed=0)
    h = rep["heldout"]
    # stated accuracy on the held-out 20 %: R^2 > 0.97 and RMSE < 15 % of the torque spread
    assert h["r2"] > 0.97, h
    assert h["rmse"] < 0.15 * h["torque_std"], h
    assert json.loads((tmp_path / "out" / "report.json").read_text())["heldout"] == h

    # the exported ONNX loads through our own loader (metadata included) and matches TorchScript
    seq = load_log(log)[0]
    n = 300
    onnx_model = ag.Actuator(drive=ag.DriveNeuralMLP(rep["onnx"]), num_envs=1, num_joints=1)
    ts_model = ag.Actuator(
        drive=ag.DriveNeuralMLP(rep["torchscript"], allow_unsafe_checkpoint=True, **{k: rep["metadata"][k] for k in ("input_order", "input_idx", "pos_scale", "vel_scale", "torque_scale")}),
        num_envs=1,
        num_joints=1,
    )
    a, b = [], []
    for t in range(len(seq["torque"])):
        kw = dict(joint_pos=[[seq["joint_pos"][t]]], joint_vel=[[seq["joint_vel"][t]]], target_pos=[[seq["target_pos"][t]]])
        a.append(onnx_model.compute(**kw).item())
        if t < n:
            b.append(ts_model.compute(**kw).item())
    np.testing.assert_allclose(a[:n], b, rtol=1e-5, atol=1e-4)
    # run as a drive over a whole logged sequence, it follows the analytic torque
    assert np.sqrt(np.mean((np.array(a) - seq["torque"]) ** 2)) < 0.2 * h["torque_std"]


def test_fit_lstm_and_cli(tmp_path, capsys):
    log = generate_synthetic_log(tmp_path / "log.npz", num_steps=1200, num_sequences=4, seed=2)
    assert main([str(log), str(tmp_path / "o"), "--model", "lstm", "--hidden", "16", "--epochs", "120", "--lr", "1e-2"]) == 0
    assert "held-out" in capsys.readouterr().out
    rep = json.loads((tmp_path / "o" / "report.json").read_text())
    assert rep["heldout"]["r2"] > 0.9
    drive = ag.DriveNeuralLSTM(rep["onnx"])
    assert drive.torque_scale == rep["metadata"]["torque_scale"]
    ts = ag.DriveNeuralLSTM(rep["torchscript"], allow_unsafe_checkpoint=True)
    seq = load_log(log)[0]
    m1, m2 = (ag.Actuator(drive=d, num_envs=1, num_joints=1) for d in (drive, ts))
    for t in range(50):
        kw = dict(joint_pos=[[seq["joint_pos"][t]]], joint_vel=[[seq["joint_vel"][t]]], target_pos=[[seq["target_pos"][t]]])
        assert torch.allclose(m1.compute(**kw), m2.compute(**kw), rtol=1e-4, atol=1e-4)


def test_csv_log_and_bad_columns(tmp_path):
    p = tmp_path / "log.csv"
    p.write_text("target_pos,joint_pos,joint_vel,torque,episode\n" + "\n".join(f"{i*0.01},{i*0.005},0.1,{i*0.2},{i // 5}" for i in range(10)))
    seqs = load_log(p)
    assert len(seqs) == 2 and len(seqs[0]["torque"]) == 5
    bad = tmp_path / "bad.csv"
    bad.write_text("joint_pos,torque\n0,1\n")
    import pytest

    with pytest.raises(ValueError, match="target_pos"):
        load_log(bad)
