"""Checkpoint loading: the trust flag, malformed / wrong-shaped networks, formats round-trip."""

import json
import pickle
import warnings

import numpy as np
import pytest
import torch
from torch import nn

import actuator_gym as ag
from actuator_gym.actuators.checkpoints import MLPNet, export_onnx, load_network


def _mlp(n_in=4):
    torch.manual_seed(0)
    return MLPNet([n_in, 8, 1], "elu")


def _ts(module, path, example):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.jit.trace(module, example).save(str(path))


def test_torchscript_needs_the_flag(tmp_path, conformance_dir):
    for f in (conformance_dir / "isaaclab" / "mlp_net.pt", conformance_dir / "isaaclab" / "lstm_net.pt"):
        with pytest.raises(ValueError, match="allow_unsafe_checkpoint=True") as exc:
            ag.DriveNeuralMLP(f, input_order="pos_vel", input_idx=[0, 2, 4])
        assert str(f) in str(exc.value) and "torchscript" in str(exc.value)
    cfg = ag.ActuatorNetLSTMCfg(network_file=str(conformance_dir / "isaaclab" / "lstm_net.pt"), saturation_effort=60.0, actuator_velocity_limit=10.0)
    with pytest.raises(ValueError, match="allow_unsafe_checkpoint=True"):
        cfg.build(joint_names=["a"])


def test_pickle_needs_the_flag_and_never_unpickles_objects(tmp_path):
    sd = tmp_path / "state.pt"
    torch.save(_mlp().state_dict(), sd)
    plain = tmp_path / "net.pkl"
    plain.write_bytes(pickle.dumps({"weights": [1.0, 2.0]}, protocol=2))
    for f in (sd, plain):
        with pytest.raises(ValueError, match="allow_unsafe_checkpoint=True") as exc:
            ag.DriveNeuralMLP(f, input_order="pos_vel", input_idx=[0, 1])
        assert str(f) in str(exc.value) and "pickle" in str(exc.value)
    # with the flag a state dict is read through torch.load(weights_only=True) ...
    d = ag.DriveNeuralMLP(sd, input_order="pos_vel", input_idx=[0, 1], allow_unsafe_checkpoint=True)
    x = torch.randn(5, 4)
    assert torch.allclose(d.net.module(x), _mlp()(x))
    # ... and anything else is refused rather than unpickled
    with pytest.raises(ValueError, match=str(plain)):
        ag.DriveNeuralMLP(plain, input_order="pos_vel", input_idx=[0, 1], allow_unsafe_checkpoint=True)


def test_pt2_needs_the_flag(tmp_path):
    m = _mlp()
    ep = torch.export.export(m, (torch.zeros(3, 4),), dynamic_shapes=({0: torch.export.Dim("batch")},))
    f = tmp_path / "net.pt2"
    torch.export.save(ep, str(f), extra_files={"metadata.json": json.dumps({"input_order": "vel_pos", "input_idx": [0, 1]})})
    with pytest.raises(ValueError, match="allow_unsafe_checkpoint=True"):
        ag.DriveNeuralMLP(f)
    d = ag.DriveNeuralMLP(f, allow_unsafe_checkpoint=True)
    assert d.input_order == "vel_pos" and d.input_idx == [0, 1]


def test_malformed_files_name_the_file(tmp_path):
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x08\x07garbage-not-protobuf" * 3)
    with pytest.raises(ValueError, match=str(junk)):
        ag.DriveNeuralMLP(junk, input_order="pos_vel", input_idx=[0])
    empty = tmp_path / "empty.onnx"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match=str(empty)):
        ag.DriveNeuralLSTM(empty)
    with pytest.raises(ValueError, match="does not exist"):
        ag.DriveNeuralMLP(tmp_path / "missing.onnx", input_order="pos_vel", input_idx=[0])


def test_wrong_shape_fails_at_construction(tmp_path):
    wide = nn.Sequential(nn.Linear(4, 3))  # (batch, 3) instead of (batch, 1)
    f = tmp_path / "wide.onnx"
    export_onnx(wide, f, "mlp", {"input_order": "pos_vel", "input_idx": [0, 1]})
    with pytest.raises(ValueError, match=r"returned shape \(3, 3\)") as exc:
        ag.DriveNeuralMLP(f)
    assert str(f) in str(exc.value)
    # wrong input width: the dummy batch fails, the file is named
    g = tmp_path / "narrow.onnx"
    export_onnx(_mlp(6), g, "mlp", {"input_order": "pos_vel", "input_idx": [0, 1]})
    with pytest.raises(ValueError, match=str(g)):
        ag.DriveNeuralMLP(g)
    ts = tmp_path / "wide.pt"
    _ts(wide, ts, torch.zeros(2, 4))
    with pytest.raises(ValueError, match=r"returned shape \(3, 3\)"):
        ag.DriveNeuralMLP(ts, input_order="pos_vel", input_idx=[0, 1], allow_unsafe_checkpoint=True)


def test_metadata_defaults_and_overrides(tmp_path, conformance_dir):
    f = conformance_dir / "newton" / "nets" / "mlp_a.onnx"
    d = ag.DriveNeuralMLP(f)
    assert (d.input_order, d.input_idx, d.pos_scale, d.vel_scale, d.torque_scale) == ("pos_vel", [0, 1, 2], 2.0, 0.5, 10.0)
    d2 = ag.DriveNeuralMLP(f, torque_scale=3.0, pos_scale=1.0)
    assert (d2.torque_scale, d2.pos_scale, d2.vel_scale) == (3.0, 1.0, 0.5)
    with pytest.raises(ValueError, match="input_order"):
        ag.DriveNeuralMLP(f, input_order="sideways")
    with pytest.raises(ValueError, match="'lstm' drive"):
        ag.DriveNeuralLSTM(f)  # an MLP file for an LSTM drive


def test_npz_weights_are_data(tmp_path):
    m = _mlp()
    f = tmp_path / "w.npz"
    np.savez(f, **{k: v.numpy() for k, v in m.state_dict().items()}, __metadata__=json.dumps({"input_order": "pos_vel", "input_idx": [0, 1]}))
    d = ag.DriveNeuralMLP(f)  # no flag needed
    x = torch.randn(7, 4)
    assert torch.allclose(d.net.module(x), m(x), atol=1e-6)


def test_onnx_export_round_trip_recurrent(tmp_path):
    from actuator_gym.actuators.checkpoints import RecurrentNet

    torch.manual_seed(1)
    for kind, rnn in (("lstm", nn.LSTM(3, 5)), ("gru", nn.GRU(3, 5))):
        net = RecurrentNet(rnn, nn.Sequential(nn.Linear(5, 1)), "tanh", 2.5).eval()
        f = tmp_path / f"{kind}.onnx"
        export_onnx(net, f, kind, {})
        loaded = load_network(f, kind).module
        x = torch.randn(4, 3)
        state = tuple(torch.randn(1, 4, 5) for _ in range(net.num_states))
        y1, s1 = net(x, state)
        y2, s2 = loaded(x, state)
        assert torch.allclose(y1, y2, atol=1e-6) and all(torch.allclose(a, b, atol=1e-6) for a, b in zip(s1, s2))
