"""Learned drives: .pt2 LSTM sizes, TorchScript metadata.json, MLP defaults, scale / metadata errors,
and Isaac Lab's ActuatorNetGRUCfg against a torch.nn.GRU reference."""

import json

import numpy as np
import pytest
import torch
from torch import nn

import actuator_gym as ag
from actuator_gym import configs
from actuator_gym.actuators.checkpoints import METADATA_MAX_BYTES, RecurrentNet, export_onnx


def _inputs(g, steps, n, j):
    return [tuple(torch.randn(n, j, generator=g) for _ in range(3)) for _ in range(steps)]  # q, qd, q*


# --- .pt2 LSTM ------------------------------------------------------------------------------
class _LSTMNet(nn.Module):  # Isaac Lab's / Newton's convention: batch-first, forward(x, (h, c))
    def __init__(self, hidden=5):
        super().__init__()
        self.lstm = nn.LSTM(2, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x, hc):
        y, (h, c) = self.lstm(x, hc)
        return self.head(y[:, -1]), (h, c)


def test_pt2_lstm_sizes_from_metadata_and_outputs_match_the_module(tmp_path):
    torch.manual_seed(0)
    net, H = _LSTMNet().eval(), 5
    B = torch.export.Dim("batch")
    z = (torch.zeros(3, 1, 2), (torch.zeros(1, 3, H), torch.zeros(1, 3, H)))
    ep = torch.export.export(net, z, dynamic_shapes=({0: B}, ({1: B}, {1: B})))
    f = tmp_path / "lstm.pt2"
    meta = {"num_layers": 1, "hidden_size": H, "pos_scale": 2.0, "vel_scale": 0.5, "effort_scale": 10.0}
    torch.export.save(ep, str(f), extra_files={"metadata.json": json.dumps(meta)})
    n, j = 2, 3
    m = ag.Actuator(drive=ag.DriveNeuralLSTM(f, allow_unsafe_checkpoint=True), num_envs=n, num_joints=j)
    assert (m.drive.pos_scale, m.drive.vel_scale, m.drive.torque_scale) == (2.0, 0.5, 10.0)
    h = c = torch.zeros(1, n * j, H)
    for q, qd, tq in _inputs(torch.Generator().manual_seed(1), 3, n, j):
        out = m.compute(joint_pos=q, joint_vel=qd, target_pos=tq)
        x = torch.stack([((tq - q) * 2.0).reshape(-1), (qd * 0.5).reshape(-1)], 1).unsqueeze(1)
        with torch.no_grad():
            y, (h, c) = net(x, (h, c))
        np.testing.assert_allclose(np.asarray(out), (y.reshape(n, j) * 10.0).numpy(), rtol=1e-5, atol=1e-6)


def test_pt2_lstm_without_sizes_names_the_file(tmp_path):
    net = _LSTMNet().eval()
    B = torch.export.Dim("batch")
    ep = torch.export.export(net, (torch.zeros(3, 1, 2), (torch.zeros(1, 3, 5), torch.zeros(1, 3, 5))),
                             dynamic_shapes=({0: B}, ({1: B}, {1: B})))
    f = tmp_path / "nosize.pt2"
    torch.export.save(ep, str(f))
    with pytest.raises(ValueError, match=r"nosize\.pt2.*cannot tell the LSTM size.*metadata gives no num_layers"):
        ag.DriveNeuralLSTM(f, allow_unsafe_checkpoint=True)


# --- TorchScript metadata.json ----------------------------------------------------------------
def _scripted_mlp(path, meta, n_in=4, raw=None):
    torch.manual_seed(2)
    net = nn.Sequential(nn.Linear(n_in, 8), nn.Tanh(), nn.Linear(8, 1)).eval()
    extra = {"metadata.json": raw if raw is not None else json.dumps(meta)}
    torch.jit.save(torch.jit.script(net), str(path), _extra_files=extra)
    return net


def test_torchscript_metadata_json_sets_layout_and_scales(tmp_path):
    f = tmp_path / "mlp.pt"
    meta = {"input_order": "vel_pos", "input_idx": [0, 2], "pos_scale": 3.0, "vel_scale": 0.25, "effort_scale": 7.0}
    net = _scripted_mlp(f, meta)
    d = ag.DriveNeuralMLP(f, allow_unsafe_checkpoint=True)
    assert (d.input_order, d.input_idx, d.pos_scale, d.vel_scale, d.torque_scale) == ("vel_pos", [0, 2], 3.0, 0.25, 7.0)
    m = ag.Actuator(drive=d, num_envs=2, num_joints=1)
    e_hist, v_hist = [], []
    for q, qd, tq in _inputs(torch.Generator().manual_seed(3), 4, 2, 1):
        out = m.compute(joint_pos=q, joint_vel=qd, target_pos=tq)
        e_hist.insert(0, (tq - q).reshape(-1))
        v_hist.insert(0, qd.reshape(-1))
        back = lambda h, i: h[i] if i < len(h) else torch.zeros(2)  # noqa: E731  history starts at zero
        x = torch.stack([back(v_hist, 0) * 0.25, back(v_hist, 2) * 0.25, back(e_hist, 0) * 3.0, back(e_hist, 2) * 3.0], 1)
        with torch.no_grad():
            np.testing.assert_allclose(np.asarray(out).reshape(-1), (net(x)[:, 0] * 7.0).numpy(), rtol=1e-5, atol=1e-6)
    # keywords override scales; a layout key that disagrees with the file is refused
    assert ag.DriveNeuralMLP(f, allow_unsafe_checkpoint=True, torque_scale=2.0).torque_scale == 2.0
    with pytest.raises(ValueError, match=r"input_idx=\[0, 1\] disagrees with input_idx=\[0, 2\] in the metadata of .*mlp\.pt"):
        ag.DriveNeuralMLP(f, allow_unsafe_checkpoint=True, input_idx=[0, 1])


def test_torchscript_metadata_json_is_bounded_and_checked(tmp_path):
    f = tmp_path / "bad.pt"
    _scripted_mlp(f, None, n_in=2, raw="[1, 2]")
    with pytest.raises(ValueError, match=r"bad\.pt.*metadata\.json.*JSON object"):
        ag.DriveNeuralMLP(f, allow_unsafe_checkpoint=True)
    big = tmp_path / "big.pt"
    _scripted_mlp(big, None, n_in=2, raw=json.dumps({"pad": "x" * METADATA_MAX_BYTES}))
    with pytest.raises(ValueError, match=rf"big\.pt: the extra file 'metadata.json' is \d+ bytes; allowed: at most {METADATA_MAX_BYTES}"):
        ag.DriveNeuralMLP(big, allow_unsafe_checkpoint=True)
    kind = tmp_path / "kind.pt"
    _scripted_mlp(kind, {"model_type": "lstm"}, n_in=2)
    with pytest.raises(ValueError, match=r"kind\.pt: metadata model_type is 'lstm' but a 'mlp' drive"):
        ag.DriveNeuralMLP(kind, allow_unsafe_checkpoint=True)
    with pytest.raises(ValueError, match="allow_unsafe_checkpoint=True"):  # the flag is still needed to read it
        ag.DriveNeuralMLP(kind)


# --- MLP defaults, scales ---------------------------------------------------------------------
def test_mlp_without_metadata_uses_newtons_defaults():
    torch.manual_seed(4)
    net = nn.Linear(2, 1)
    d = ag.DriveNeuralMLP(network=net)
    assert (d.input_order, d.input_idx, d.history_length) == ("pos_vel", [0], 1)
    m = ag.Actuator(drive=d, num_envs=3, num_joints=1)
    q, qd, tq = _inputs(torch.Generator().manual_seed(5), 1, 3, 1)[0]
    out = m.compute(joint_pos=q, joint_vel=qd, target_pos=tq)
    with torch.no_grad():
        ref = net(torch.cat([tq - q, qd], 1))
    np.testing.assert_allclose(np.asarray(out), ref.numpy(), rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match=r"input_order and input_idx came from neither a keyword nor the checkpoint"):
        ag.DriveNeuralMLP(network=nn.Sequential(nn.Linear(6, 1)))


@pytest.mark.parametrize("kw, fragment", [
    (dict(effort_scale=0), "effort_scale must be finite and non-zero, got 0.0"),
    (dict(metadata={"effort_scale": 0, "torque_scale": 2.0}), "effort_scale in the metadata= argument must be finite and non-zero"),
    (dict(torque_scale=2.0, metadata={"effort_scale": 0}), "effort_scale in the metadata= argument"),
    (dict(metadata={"effort_scale": 3.0, "torque_scale": 2.0}), "disagree in the metadata"),
])
def test_effort_scale_zero_and_conflicts_are_refused(kw, fragment):
    with pytest.raises(ValueError, match=fragment):
        ag.DriveNeuralMLP(network=nn.Linear(2, 1), **kw)


def test_zero_effort_scale_in_a_file_names_the_file_even_when_overridden(tmp_path):
    f = tmp_path / "zero.pt"
    _scripted_mlp(f, {"effort_scale": 0}, n_in=2)
    with pytest.raises(ValueError, match=r"effort_scale in the metadata of .*zero\.pt must be finite and non-zero"):
        ag.DriveNeuralMLP(f, allow_unsafe_checkpoint=True, torque_scale=1.0)


# --- ActuatorNetGRUCfg --------------------------------------------------------------------------
class _GRUNet(nn.Module):  # Isaac Lab's convention: a .gru submodule, forward(x (batch, 1, 3), h)
    def __init__(self, hidden=6, layers=2):
        super().__init__()
        self.gru = nn.GRU(3, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x, h):
        y, h = self.gru(x, h)
        return self.head(y[:, -1]), h


NORM = dict(position_normalization=(0.1, 2.0), pos_error_normalization=(-0.05, 0.5), vel_normalization=(0.2, 4.0),
            output_normalization=(1.5, 20.0))


def _gru_reference(net, steps, n, j, limit, resets, layers=2, hidden=6):
    """Isaac Lab's ActuatorNetGRU computed with the torch module: the efforts per step."""
    h = torch.zeros(layers, n * j, hidden)
    outs = []
    for t, (q, qd, tq) in enumerate(steps):
        if t in resets:
            h.view(layers, n, j, hidden)[:, resets[t]] = 0.0
        (pm, ps), (em, es), (vm, vs), (om, os_) = (NORM[k] for k in NORM)
        x = torch.stack([((q - pm) / ps).reshape(-1), ((tq - q - em) / es).reshape(-1), ((qd - vm) / vs).reshape(-1)], 1)
        with torch.no_grad():
            y, h = net(x.unsqueeze(1), h)
        outs.append(torch.clamp(y.reshape(n, j) * os_ + om, -limit, limit))
    return outs, h


@pytest.mark.parametrize("fmt", ["torchscript", "onnx"])
def test_gru_cfg_matches_torch_gru_step_by_step_with_per_env_reset(tmp_path, fmt):
    torch.manual_seed(6)
    n, j = 3, 2
    if fmt == "torchscript":
        net, layers = _GRUNet().eval(), 2
        f = tmp_path / "gru.pt"
        torch.jit.save(torch.jit.script(net), str(f))
    else:  # our ONNX writer: one layer, seq-first GRU + head
        layers = 1
        net_rn = RecurrentNet(nn.GRU(3, 6), nn.Sequential(nn.Linear(6, 1))).eval()
        f = tmp_path / "gru.onnx"
        export_onnx(net_rn, f, "gru", {})
        net = _Adapter(net_rn)
    steps = [(q * 2, qd * 5, tq * 2) for q, qd, tq in _inputs(torch.Generator().manual_seed(7), 5, n, j)]
    resets = {3: [1]}
    free, _ = _gru_reference(net, steps, n, j, float("inf"), resets, layers=layers)
    limit = 0.5 * max(float(r.abs().max()) for r in free)  # so that the clamp acts on some elements
    ref, h_ref = _gru_reference(net, steps, n, j, limit, resets, layers=layers)
    cfg = ag.ActuatorNetGRUCfg(joint_names_expr=[".*"], network_file=str(f), allow_unsafe_checkpoint=fmt == "torchscript",
                               actuator_effort_limit=limit, **NORM)
    m = cfg.build(joint_names=["a", "b"], num_envs=n)
    for t, (q, qd, tq) in enumerate(steps):
        if t in resets:
            m.reset(env_ids=resets[t])
        out = m.compute(joint_pos=q, joint_vel=qd, target_pos=tq)
        np.testing.assert_allclose(np.asarray(out), ref[t].numpy(), rtol=1e-5, atol=1e-5)
    assert any((r.abs() >= limit).any() for r in ref) and not all((r.abs() >= limit).all() for r in ref)  # clamp acts, not always
    np.testing.assert_allclose(m.drive.hidden_state[0].numpy(), h_ref.numpy(), rtol=1e-5, atol=1e-6)
    # a reset zeroes only the reset env's hidden state
    before = m.drive.hidden_state[0].clone().view(layers, n, j, -1)
    m.reset(env_ids=[2])
    after = m.drive.hidden_state[0].view(layers, n, j, -1)
    assert (after[:, 2] == 0).all() and torch.equal(after[:, :2], before[:, :2]) and before[:, 2].abs().sum() > 0


class _Adapter(nn.Module):
    """A seq-first RecurrentNet called with Isaac Lab's ``(x (batch, 1, F), h) -> (y, h)``."""

    def __init__(self, rn):
        super().__init__()
        self.rn = rn

    def forward(self, x, h):
        y, (h,) = self.rn(x[:, 0], (h,))
        return y, h


def test_gru_cfg_normalization_rules(tmp_path):
    f = tmp_path / "gru.pt"
    torch.jit.save(torch.jit.script(_GRUNet().eval()), str(f))
    base = dict(network_file=str(f), allow_unsafe_checkpoint=True)
    with pytest.raises(ValueError, match=r"ActuatorNetGRUCfg.vel_normalization: std must be >= 0"):
        ag.ActuatorNetGRUCfg(**base, vel_normalization=(0.0, -1.0)).build(joint_names=["a"])
    with pytest.raises(ValueError, match=r"ActuatorNetGRUCfg.output_normalization must be \(mean, std\)"):
        ag.ActuatorNetGRUCfg(**base, output_normalization=(1.0, 2.0, 3.0)).build(joint_names=["a"])
    with pytest.warns(UserWarning, match=r"position_normalization: std 0.0 is below 1e-08"):
        m = ag.ActuatorNetGRUCfg(**base, position_normalization=(0.0, 0.0)).build(joint_names=["a"])
    assert m.drive.input_std[0] == 1e-8 and m.drive.input_columns == ["position", "position_error", "velocity"]
    with pytest.raises(ValueError, match=r"network_file is required"):
        ag.ActuatorNetGRUCfg().build(joint_names=["a"])
    with pytest.raises(ValueError, match="allow_unsafe_checkpoint=True"):
        ag.ActuatorNetGRUCfg(network_file=str(f)).build(joint_names=["a"])


def test_gru_cfg_refuses_a_checkpoint_with_other_input_columns(tmp_path):
    f = tmp_path / "cols.onnx"
    export_onnx(RecurrentNet(nn.GRU(3, 4), nn.Sequential(nn.Linear(4, 1))).eval(), f, "gru",
                {"input_columns": ["position_error", "velocity", "target_velocity"]})
    with pytest.raises(ValueError, match=r"cols\.onnx.*input_columns=.*disagrees.*cannot be overridden"):
        ag.ActuatorNetGRUCfg(network_file=str(f)).build(joint_names=["a"])


def test_gru_cfg_from_yaml_in_a_task(tmp_path):
    from actuator_gym.tasks.pendulum import PendulumTask

    torch.manual_seed(8)
    f = tmp_path / "gru.onnx"
    export_onnx(RecurrentNet(nn.GRU(3, 4), nn.Sequential(nn.Linear(4, 1))).eval(), f, "gru", {})
    y = tmp_path / "gru.yaml"
    y.write_text("kind: actuators\ngroups:\n  p:\n    model: ActuatorNetGRU\n    joint_names_expr: [hinge]\n"
                 "    network_file: gru.onnx\n    actuator_effort_limit: 2.0\n    vel_normalization: [0.0, 5.0]\n")
    preset = configs.load(y)
    cfg = preset.actuators["p"]
    assert isinstance(cfg, ag.ActuatorNetGRUCfg) and cfg.vel_normalization == [0.0, 5.0]
    task = PendulumTask(num_envs=2, actuators=preset.actuators, seed=0)
    task.reset(seed=0)
    model = task.collection["p"]
    for _ in range(3):
        _, _, _, _, info = task.step(np.full((2, 1), 0.5, np.float32))
    eff = np.asarray(info["actuator"]["applied_effort"])
    assert np.isfinite(eff).all() and (np.abs(eff) <= 2.0 + 1e-6).all() and np.abs(eff).max() > 0
    h = model.drive.hidden_state[0]
    assert h.abs().sum() > 0
    task.collection.reset(env_ids=[0])
    assert (h.view(1, 2, 1, -1)[:, 0] == 0).all() and h.view(1, 2, 1, -1)[:, 1].abs().sum() > 0
