"""The onnxruntime engine (actuators/onnx_engine.py): the same numbers as the torch interpreter step
by step (history, recurrent state, partial resets, scaling), the engine choice and its options, and
the loader's safety rules holding for what onnxruntime is given."""

import json

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

import actuator_gym as ag
from actuator_gym.actuators.checkpoints import RecurrentNet, load_network
from actuator_gym.actuators.onnx_engine import ONNX_ENGINES, ort_session
from conftest import assert_close_rel

NETS = {"mlp": "mlp_b.onnx", "lstm": "lstm.onnx", "gru": "gru.onnx"}  # mlp_b: history [0, 3], vel_pos
DRIVES = {"mlp": ag.DriveNeuralMLP, "lstm": ag.DriveNeuralLSTM, "gru": ag.DriveNeuralGRU}


def _model(kind, engine, backend, conformance_dir, n=5, j=3):
    drive = DRIVES[kind](conformance_dir / "newton" / "nets" / NETS[kind], onnx_engine=engine)
    return ag.Actuator(drive=drive, delay=ag.Delay(delay_steps=1), num_envs=n, num_joints=j, array_backend=backend,
                       clamping=[ag.ClampingDCMotor(saturation_effort=4.0, velocity_limit=6.0)])


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("kind", ["mlp", "lstm", "gru"])
def test_engines_agree_step_by_step_with_partial_resets(kind, backend, conformance_dir):
    n, j, steps, resets = 5, 3, 14, {5: [1, 3], 9: [0], 11: None}
    ort, ref, twin = (_model(kind, e, backend, conformance_dir) for e in ("onnxruntime", "torch", "onnxruntime"))
    assert (ort.drive.engine, ref.drive.engine) == ("onnxruntime", "torch")
    rng = np.random.default_rng(3)
    diverged = False
    for t in range(steps):
        if t in resets:
            ort.reset(env_ids=resets[t])
            ref.reset(env_ids=resets[t])
        q, qd, tq, tqd = (rng.standard_normal((n, j)) for _ in range(4))
        outs = [m.compute(joint_pos=q, joint_vel=qd * 3, target_pos=tq, target_vel=tqd, dt=0.005).clone() for m in (ort, ref, twin)]
        assert_close_rel(ort.computed_effort, ref.computed_effort, tol=1e-5, what=f"{kind} computed, step {t}")
        assert_close_rel(outs[0], outs[1], tol=1e-5, what=f"{kind} applied, step {t}")
        if kind != "mlp":
            for a, b in zip(ort.drive.hidden_state, ref.drive.hidden_state):
                assert a.shape == (1, n * j, b.shape[2])
                assert_close_rel(a, b, tol=1e-5, what=f"{kind} state, step {t}")
        if t >= 5:  # the resets took effect: the never-reset twin differs for the reset envs only
            same = torch.isclose(outs[0], outs[2], atol=1e-6).all(dim=1)
            assert same[[2, 4]].all() if t < 11 else True
            diverged |= not bool(same[[1, 3]].all())
    assert diverged


def test_auto_picks_onnxruntime_for_onnx_files_on_the_cpu_and_torch_otherwise(conformance_dir, tmp_path):
    f = conformance_dir / "newton" / "nets" / "lstm.onnx"
    assert ag.DriveNeuralLSTM(f).onnx_engine == "auto"
    m = ag.Actuator(drive=ag.DriveNeuralLSTM(f), num_envs=2, num_joints=1)
    assert m.drive.engine == "onnxruntime"
    forced = ag.Actuator(drive=ag.DriveNeuralLSTM(f, onnx_engine="torch"), num_envs=2, num_joints=1)
    assert forced.drive.engine == "torch"
    torch.manual_seed(0)
    module = RecurrentNet(torch.nn.LSTM(2, 4), torch.nn.Sequential(torch.nn.Linear(4, 1)))
    assert ag.Actuator(drive=ag.DriveNeuralLSTM(network=module), num_envs=2, num_joints=1).drive.engine == "torch"
    with pytest.raises(ValueError, match="onnx_engine='onnxruntime' runs ONNX checkpoints only"):
        ag.DriveNeuralLSTM(network=module, onnx_engine="onnxruntime")
    # the network configs carry the options through to the drive
    cfg = ag.ActuatorNetLSTMCfg(network_file=str(f), saturation_effort=5.0, actuator_velocity_limit=5.0, onnx_engine="torch")
    assert cfg.build(joint_names=["a"], num_envs=1).drive.engine == "torch"
    cfg = ag.ActuatorNetLSTMCfg(network_file=str(f), saturation_effort=5.0, actuator_velocity_limit=5.0, onnx_threads=2)
    built = cfg.build(joint_names=["a"], num_envs=1)
    assert built.drive.engine == "onnxruntime" and built.drive.onnx_threads == 2


@pytest.mark.parametrize("engine, threads, fragment", [
    ("ort", 1, "onnx_engine must be one of"),
    (None, 1, "onnx_engine must be one of"),
    ("auto", 0, r"onnx_threads must be an integer in \[1, 256\]"),
    ("auto", 1.5, "onnx_threads"),
    ("auto", True, "onnx_threads"),
    ("auto", 257, "onnx_threads"),
])
def test_bad_engine_options_are_refused(engine, threads, fragment, conformance_dir):
    with pytest.raises(ValueError, match=fragment):
        ag.DriveNeuralMLP(conformance_dir / "newton" / "nets" / "mlp_a.onnx", onnx_engine=engine, onnx_threads=threads)
    assert set(ONNX_ENGINES) == {"auto", "onnxruntime", "torch"}


def test_session_options_threads_and_provider(conformance_dir):
    f = conformance_dir / "newton" / "nets" / "mlp_a.onnx"
    net = load_network(f, "mlp")
    for threads in (1, 3):
        s = ort_session(net.onnx_model, str(f), threads)
        assert s.get_session_options().intra_op_num_threads == threads
        assert s.get_providers() == ["CPUExecutionProvider"]


def _save(path, nodes, inits, opsets=(("", 17),)):
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 2])],
                          [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["batch", 1])], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    helper.set_model_props(m, {"metadata": json.dumps({"model_type": "mlp", "input_idx": [0]})})
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(m, str(path))
    return path


def test_onnxruntime_gets_the_validated_bytes_not_the_external_files(tmp_path, monkeypatch):
    """External data inside the model's folder is read by our reader and inlined: onnxruntime runs
    the same weights from any working directory, and a model still pointing at external data is
    never handed to it."""
    models = tmp_path / "models"
    (models / "sub").mkdir(parents=True)
    (models / "sub" / "w.bin").write_bytes(np.array([2.0, -1.0], np.float32).tobytes())
    w = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[2, 1])
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "sub/w.bin"), ("offset", "0"), ("length", "8")):
        e = w.external_data.add()
        e.key, e.value = k, v
    f = _save(models / "net.onnx", [helper.make_node("MatMul", ["input", "W"], ["output"])], [w])
    (tmp_path / "elsewhere" / "sub").mkdir(parents=True)
    (tmp_path / "elsewhere" / "sub" / "w.bin").write_bytes(np.array([100.0, 100.0], np.float32).tobytes())
    monkeypatch.chdir(tmp_path / "elsewhere")  # a same-named file relative to the cwd must not be read
    m = ag.Actuator(drive=ag.DriveNeuralMLP(f, onnx_engine="onnxruntime"), num_envs=2, num_joints=1)
    out = m.compute(joint_pos=[[0.0], [0.0]], joint_vel=[[1.0], [1.0]], target_pos=[[1.0], [3.0]])
    assert torch.allclose(out, torch.tensor([[1.0], [5.0]]))  # 2 e - qd with W = (2, -1)
    raw = onnx.load(str(f), load_external_data=False)
    with pytest.raises(ValueError, match="external data"):
        ort_session(raw, str(f), 1)


def test_other_operator_domains_never_reach_onnxruntime(tmp_path):
    """A node of another domain (onnxruntime's contrib domain has a Relu-named op here) is refused by the
    reader for both engines, and the engine's own check refuses it should a model get that far."""
    w = numpy_helper.from_array(np.ones((2, 1), np.float32), "W")
    f = _save(tmp_path / "contrib.onnx", [helper.make_node("MatMul", ["input", "W"], ["y"]),
                                          helper.make_node("Relu", ["y"], ["output"], domain="com.microsoft")],
              [w], opsets=(("", 17), ("com.microsoft", 1)))
    for engine in ONNX_ENGINES:
        with pytest.raises(ValueError, match=str(f)):
            ag.DriveNeuralMLP(f, onnx_engine=engine)
    with pytest.raises(ValueError, match="node 1 \\(Relu\\) is in domain 'com.microsoft'"):
        ort_session(onnx.load(str(f)), str(f), 1)


def test_auto_falls_back_to_torch_with_a_warning_when_onnxruntime_refuses(tmp_path):
    """A model with a local function (the reader runs none, onnxruntime would): forced onnxruntime is a
    ValueError naming the file; "auto" warns and runs the torch interpreter, with the same numbers."""
    w = numpy_helper.from_array(np.array([[2.0], [-1.0]], np.float32), "W")
    f = _save(tmp_path / "fn.onnx", [helper.make_node("MatMul", ["input", "W"], ["output"])], [w])
    m = onnx.load(str(f))
    m.functions.append(helper.make_function("local", "Unused", ["a"], ["b"], [helper.make_node("Relu", ["a"], ["b"])],
                                            [helper.make_opsetid("", 17)]))
    onnx.save(m, str(f))
    with pytest.raises(ValueError) as info:
        ag.DriveNeuralMLP(f, onnx_engine="onnxruntime")
    assert str(f) in str(info.value) and "local functions" in str(info.value)
    with pytest.warns(RuntimeWarning, match="onnx_engine='auto' runs the network on torch"):
        d = ag.DriveNeuralMLP(f)
    model = ag.Actuator(drive=d, num_envs=1, num_joints=1)
    assert model.drive.engine == "torch"
    assert torch.allclose(model.compute(joint_pos=[[0.0]], joint_vel=[[1.0]], target_pos=[[3.0]]), torch.tensor([[5.0]]))


def _mlp(path, rows, weights):
    """An MLP ``x (rows, 2) -> (rows, 1)``: ``Gemm`` layers (``weights``: ``[(W, b), ...]``, ``Tanh``
    between them) with the batch dimension ``rows`` (an int: exported for that many rows; a string:
    dynamic)."""
    inits, nodes, x = [], [], "input"
    for k, (w, b) in enumerate(weights):
        inits += [numpy_helper.from_array(np.asarray(w, np.float32), f"W{k}"), numpy_helper.from_array(np.asarray(b, np.float32), f"b{k}")]
        y = "output" if k == len(weights) - 1 else f"h{k}"
        nodes.append(helper.make_node("Gemm", [x, f"W{k}", f"b{k}"], [y]))
        if y != "output":
            nodes.append(helper.make_node("Tanh", [y], [f"t{k}"]))
            x = f"t{k}"
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [rows, 2])],
                          [helper.make_tensor_value_info("output", TensorProto.FLOAT, [rows, 1])], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    helper.set_model_props(m, {"metadata": json.dumps({"model_type": "mlp", "input_idx": [0], "torque_scale": 2.0})})
    onnx.save(m, str(path))
    return path


def test_a_fixed_batch_mlp_runs_on_any_row_count_in_both_engines(tmp_path):
    """Newton's test_neural_mlp_fixed_batch_onnx_with_multiple_actuators: an MLP exported with a fixed batch
    dimension runs one row per (env, joint) whatever the model's row count, on onnxruntime as on torch.
    The one-row export of ``2 e + 1`` on 3 joints gives 2 (2 e + 1) = 6, 10, 14 for e = 1, 2, 3 (hand
    computed); a two-layer net exported for 4 rows gives the dynamic export's numbers on 6 rows (2 envs x
    3 joints, not a multiple of 4), 1 row and 12 rows."""
    f = _mlp(tmp_path / "fixed1.onnx", 1, [([[2.0], [0.0]], [1.0])])
    for engine in ("onnxruntime", "torch"):
        m = ag.Actuator(drive=ag.DriveNeuralMLP(f, onnx_engine=engine), num_envs=1, num_joints=3)
        assert m.drive.engine == engine
        out = m.compute(joint_pos=np.zeros((1, 3)), joint_vel=np.ones((1, 3)), target_pos=[[1.0, 2.0, 3.0]])
        assert torch.equal(out, torch.tensor([[6.0, 10.0, 14.0]]))
    rng = np.random.default_rng(0)
    layers = [(rng.standard_normal((2, 5)), rng.standard_normal(5)), (rng.standard_normal((5, 1)), rng.standard_normal(1))]
    dynamic, fixed = _mlp(tmp_path / "dynamic.onnx", "batch", layers), _mlp(tmp_path / "fixed4.onnx", 4, layers)
    for n, j in ((2, 3), (1, 1), (3, 4)):
        q, qd, tq = (rng.standard_normal((n, j)) for _ in range(3))
        outs = []
        for path in (dynamic, fixed):
            for engine in ("onnxruntime", "torch"):
                m = ag.Actuator(drive=ag.DriveNeuralMLP(path, onnx_engine=engine), num_envs=n, num_joints=j)
                outs.append(m.compute(joint_pos=q, joint_vel=qd, target_pos=tq).clone())
        x = np.stack([tq - q, qd], axis=-1).reshape(-1, 2)
        ref = 2.0 * (np.tanh(x @ layers[0][0] + layers[0][1]) @ layers[1][0] + layers[1][1]).reshape(n, j)
        for out in outs:
            np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-5)
