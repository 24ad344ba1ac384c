"""Crafted, malicious checkpoints: external data escaping the model's folder, small files declaring
large resources, metadata sizing huge buffers, graphs that pass one batch and fail another.
Every refusal must be a one-line ValueError naming the file, and happen before allocating."""

import json
import os
import resource
import time
import zipfile

import numpy as np
import pytest
import torch

import actuator_gym as ag
from actuator_gym.configs import preset_dir
from actuator_gym.actuators.checkpoints import export_onnx, load_network
from actuator_gym.actuators.limits import DEFAULT_NETWORK_LIMITS, NetworkLimits, network_limits

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

MLP_META = {"model_type": "mlp", "input_order": "pos_vel", "input_idx": [0]}
DC_MOTOR_NET = preset_dir() / "actuators" / "nets" / "dc_motor_mlp.onnx"


def _save(path, nodes, inits, inputs=None, outputs=None, meta=MLP_META):
    inputs = inputs or [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 2])]
    outputs = outputs or [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["batch", 1])]
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    helper.set_model_props(m, {"metadata": json.dumps(meta)})
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(m, str(path))
    return path


def _external_mlp(path, location, length=8):
    """``output = input @ W`` with W (2, 1) float32 stored as external data at ``location``."""
    w = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[2, 1])
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", "0"), ("length", str(length))):
        e = w.external_data.add()
        e.key, e.value = k, v
    return _save(path, [helper.make_node("MatMul", ["input", "W"], ["output"])], [w])


def _weights(path, inits_extra=(), nodes_extra=(), out="y"):
    """An MLP graph ``y = input @ W`` plus extra nodes producing ``output``."""
    w = numpy_helper.from_array(np.ones((2, 1), np.float32), "W")
    nodes = [helper.make_node("MatMul", ["input", "W"], [out]), *nodes_extra]
    return _save(path, nodes, [w, *inits_extra])


def _one_line_value_error(exc_info, *fragments):
    msg = str(exc_info.value)
    assert exc_info.type is ValueError or issubclass(exc_info.type, ValueError)
    assert "\n" not in msg, msg
    for f in fragments:
        assert str(f) in msg, (f, msg)
    return msg


def _rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


# ---------------------------------------------------------------------------------------------
# external data
# ---------------------------------------------------------------------------------------------
@pytest.fixture
def secret(tmp_path):
    """A readable file outside the model's folder (8 bytes: two float32)."""
    s = tmp_path / "secret.bin"
    s.write_bytes(np.array([7.0, 9.0], np.float32).tobytes())
    return s


@pytest.mark.parametrize("kind", ["dotdot", "deep_dotdot", "absolute", "symlink", "symlinked_dir"])
def test_external_data_outside_the_model_folder_is_refused(tmp_path, secret, kind):
    models = tmp_path / "models"
    models.mkdir()
    if kind == "dotdot":
        loc = "../secret.bin"
    elif kind == "deep_dotdot":
        loc = "../" * 30 + str(secret).lstrip("/")
    elif kind == "absolute":
        loc = str(secret)
    elif kind == "symlink":
        (models / "w.bin").symlink_to(secret)
        loc = "w.bin"
    else:
        (models / "data").symlink_to(tmp_path)
        loc = "data/secret.bin"
    f = _external_mlp(models / "net.onnx", loc)
    with pytest.raises(ValueError) as info:
        ag.DriveNeuralMLP(f)
    msg = _one_line_value_error(info, f, "external data")
    assert ("absolute path" in msg) if kind == "absolute" else ("outside the model's folder" in msg)


def test_external_data_is_not_resolved_against_the_working_directory(tmp_path, monkeypatch):
    """The reported attack: a relative location like 'etc/passwd' with cwd '/'."""
    monkeypatch.chdir("/")
    f = _external_mlp(tmp_path / "m" / "net.onnx", "etc/passwd", length=8)
    with pytest.raises(ValueError) as info:
        ag.DriveNeuralMLP(f)
    _one_line_value_error(info, f, "not a file in")


def test_external_data_inside_the_folder_loads_and_is_checked(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    (models / "sub").mkdir()
    (models / "sub" / "w.bin").write_bytes(np.array([2.0, -1.0], np.float32).tobytes())
    d = ag.DriveNeuralMLP(_external_mlp(models / "net.onnx", "sub/w.bin"))
    assert torch.allclose(d.net.module(torch.tensor([[1.0, 1.0], [3.0, 1.0]])), torch.tensor([[1.0], [5.0]]))
    # a declared length that disagrees with the dims, or data past the end of the file
    for length in (4, 16):
        with pytest.raises(ValueError) as info:
            ag.DriveNeuralMLP(_external_mlp(models / f"bad{length}.onnx", "sub/w.bin", length=length))
        _one_line_value_error(info, "length", "allowed")


# ---------------------------------------------------------------------------------------------
# small files, large resources
# ---------------------------------------------------------------------------------------------
def test_huge_initializer_dims_in_a_tiny_file_are_refused_before_allocating(tmp_path):
    big = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[2, 10**6, 10**6])  # 8 PB declared, no data
    f = _save(tmp_path / "dims.onnx", [helper.make_node("MatMul", ["input", "W"], ["output"])], [big])
    assert f.stat().st_size < 1000
    t0, rss0 = time.perf_counter(), _rss_mb()
    with pytest.raises(ValueError) as info:
        ag.DriveNeuralMLP(f)
    assert time.perf_counter() - t0 < 2.0 and _rss_mb() - rss0 < 200
    _one_line_value_error(info, f, "initializer 'W'", "max_parameters")


def test_huge_intermediate_is_refused_before_running(tmp_path):
    """The reported 125 KiB file that ran at 1.27 GB: an outer product of two initializers."""
    n = 16_000
    a = numpy_helper.from_array(np.ones((n, 1), np.float32), "A")
    b = numpy_helper.from_array(np.ones((1, n), np.float32), "B")
    s0 = numpy_helper.from_array(np.array([0, 0], np.int64), "s0")
    s1 = numpy_helper.from_array(np.array([1, 1], np.int64), "s1")
    extra = [
        helper.make_node("MatMul", ["A", "B"], ["AB"]),  # 256e6 elements, 1 GB
        helper.make_node("Slice", ["AB", "s0", "s1"], ["ABs"]),
        helper.make_node("Add", ["y", "ABs"], ["output"]),
    ]
    f = _weights(tmp_path / "outer.onnx", [a, b, s0, s1], extra)
    assert f.stat().st_size < 200_000
    t0, rss0 = time.perf_counter(), _rss_mb()
    with pytest.raises(ValueError) as info:
        ag.DriveNeuralMLP(f)
    assert time.perf_counter() - t0 < 5.0 and _rss_mb() - rss0 < 300
    _one_line_value_error(info, f, "'AB'", "256000000", "max_intermediate_elements")


def test_broadcast_bomb_and_batch_scaling_are_refused(tmp_path):
    n = 20_000
    col = numpy_helper.from_array(np.ones((n, 1), np.float32), "C")
    row = numpy_helper.from_array(np.ones((1, n), np.float32), "R")
    f = _weights(tmp_path / "bcast.onnx", [col, row], [helper.make_node("Add", ["C", "R"], ["output"])])
    with pytest.raises(ValueError) as info:
        ag.DriveNeuralMLP(f)
    _one_line_value_error(info, f, "max_intermediate_elements")
    # 100k elements per batch row: small at the probe batch, 4 GB at 4096 envs x 12 joints
    wide = numpy_helper.from_array(np.ones((1, 100_000), np.float32), "Wide")
    f2 = _weights(tmp_path / "rows.onnx", [wide], [helper.make_node("MatMul", ["y", "Wide"], ["output"])])
    with pytest.raises(ValueError) as info:
        ag.DriveNeuralMLP(f2)
    _one_line_value_error(info, f2, "100000 * batch", "max_elements_per_row")
    # (batch, batch): grows quadratically
    f3 = _weights(tmp_path / "square.onnx", [], [
        helper.make_node("Transpose", ["y"], ["yT"], perm=[1, 0]),
        helper.make_node("MatMul", ["y", "yT"], ["output"]),
    ])
    with pytest.raises(ValueError) as info:
        ag.DriveNeuralMLP(f3)
    _one_line_value_error(info, f3, "faster than linearly")


@pytest.mark.parametrize("op, inputs, attrs", [
    ("ConstantOfShape", ["shape"], {}),
    ("Expand", ["y", "shape"], {}),
    ("Tile", ["y", "shape"], {}),
])
def test_expanding_operators_to_billions_of_elements_are_refused(tmp_path, op, inputs, attrs):
    shape = numpy_helper.from_array(np.array([100_000, 100_000], np.int64), "shape")
    f = _weights(tmp_path / f"{op}.onnx", [shape], [helper.make_node(op, inputs, ["output"], **attrs)])
    t0 = time.perf_counter()
    with pytest.raises(ValueError) as info:
        ag.DriveNeuralMLP(f)
    assert time.perf_counter() - t0 < 2.0
    _one_line_value_error(info, f, op, "not supported")


def test_oversized_file_and_too_many_nodes(tmp_path):
    f = export_onnx_mlp(tmp_path / "ok.onnx")
    with pytest.raises(ValueError) as info:
        load_network(f, "mlp", limits=NetworkLimits(max_file_bytes=100))
    _one_line_value_error(info, f, "max_file_bytes")
    with pytest.raises(ValueError) as info:
        load_network(f, "mlp", limits=NetworkLimits(max_nodes=2))
    _one_line_value_error(info, f, "max_nodes")


def export_onnx_mlp(path, n_in=2, meta=None):
    from actuator_gym.actuators.checkpoints import MLPNet

    torch.manual_seed(0)
    export_onnx(MLPNet([n_in, 8, 1], "elu"), path, "mlp", {"input_order": "pos_vel", "input_idx": [0], **(meta or {})})
    return path


def test_history_from_metadata_is_bounded_before_allocating(tmp_path):
    f = export_onnx_mlp(tmp_path / "hist.onnx", n_in=4, meta={"input_idx": [0, 4_000_000]})
    t0, rss0 = time.perf_counter(), _rss_mb()
    with pytest.raises(ValueError) as info:
        ag.DriveNeuralMLP(f)
    assert time.perf_counter() - t0 < 2.0 and _rss_mb() - rss0 < 200
    _one_line_value_error(info, f, "input_idx", "max_history_steps", "[0, 1023]")
    long = export_onnx_mlp(tmp_path / "long.onnx", n_in=2 * 2000, meta={"input_idx": list(range(2000))})
    with pytest.raises(ValueError, match="at most 1024"):
        ag.DriveNeuralMLP(long)
    # the limit is overridable in code, per drive or for a block
    g = export_onnx_mlp(tmp_path / "h20.onnx", n_in=4, meta={"input_idx": [0, 20]})
    assert ag.DriveNeuralMLP(g).history_length == 21
    with pytest.raises(ValueError, match="max_history_steps"):
        ag.DriveNeuralMLP(g, limits=NetworkLimits(max_history_steps=16))
    with network_limits(max_history_steps=16):
        with pytest.raises(ValueError, match=r"\[0, 15\]"):
            ag.DriveNeuralMLP(g)
    assert ag.DriveNeuralMLP(g).history_length == 21  # the block's limits are gone


def test_recurrent_sizes_must_match_the_graph(tmp_path, conformance_dir):
    lstm = conformance_dir / "newton" / "nets" / "lstm.onnx"
    with pytest.raises(ValueError) as info:
        ag.DriveNeuralLSTM(lstm, metadata={"hidden_size": 10**9})
    _one_line_value_error(info, lstm, "hidden_size", "allowed: 8")
    with pytest.raises(ValueError) as info:
        ag.DriveNeuralLSTM(lstm, metadata={"num_layers": 4096})
    _one_line_value_error(info, lstm, "num_layers", "allowed: 1")
    # an LSTM node whose hidden_size attribute disagrees with its weights (would size the module)
    m = onnx.load(str(lstm))
    for node in m.graph.node:
        if node.op_type == "LSTM":
            for a in node.attribute:
                if a.name == "hidden_size":
                    a.i = 10**6
    bad = tmp_path / "lstm_bad.onnx"
    onnx.save(m, str(bad))
    with pytest.raises(ValueError) as info:
        ag.DriveNeuralLSTM(bad)
    _one_line_value_error(info, bad, "hidden_size=1000000", "does not match its weights")


# ---------------------------------------------------------------------------------------------
# normal networks still load, with the default limits, quickly
# ---------------------------------------------------------------------------------------------
def test_normal_networks_load_under_the_default_limits(conformance_dir):
    nets = conformance_dir / "newton" / "nets"
    t0 = time.perf_counter()
    for f in ("mlp_a.onnx", "mlp_b.onnx"):
        d = ag.DriveNeuralMLP(nets / f)
        assert d.net.format == "onnx"
    ag.DriveNeuralLSTM(nets / "lstm.onnx")
    ag.DriveNeuralGRU(nets / "gru.onnx")
    d = ag.DriveNeuralMLP(DC_MOTOR_NET)
    assert d.input_idx == [0, 1, 2, 3]
    assert time.perf_counter() - t0 < 10.0
    assert DEFAULT_NETWORK_LIMITS == NetworkLimits()
    cfg = ag.ActuatorNetMLPCfg(network_file=str(DC_MOTOR_NET),
                               saturation_effort=30.0, actuator_velocity_limit=15.0, actuator_effort_limit=20.0)
    model = cfg.build(joint_names=["a", "b", "c"], num_envs=64)
    out = model.compute(joint_pos=np.zeros((64, 3)), joint_vel=np.zeros((64, 3)), target_pos=np.full((64, 3), 0.2))
    assert torch.isfinite(out).all() and float(out.abs().max()) <= 20.0


def test_limits_are_validated_and_overridable():
    with pytest.raises(ValueError, match="max_nodes must be an integer >= 1"):
        NetworkLimits(max_nodes=0)
    with network_limits(max_parameters=10) as lim:
        assert lim.max_parameters == 10
        with pytest.raises(ValueError, match="max_parameters"):
            ag.DriveNeuralMLP(DC_MOTOR_NET)


# ---------------------------------------------------------------------------------------------
# graphs that pass one batch and fail another; errors at compute name the file
# ---------------------------------------------------------------------------------------------
def test_reshape_fixed_to_the_probe_batch_fails_at_construction(tmp_path):
    shape = numpy_helper.from_array(np.array([3, 1], np.int64), "S")
    f = _weights(tmp_path / "reshape3.onnx", [shape], [helper.make_node("Reshape", ["y", "S"], ["output"])])
    with pytest.raises(ValueError) as info:
        ag.DriveNeuralMLP(f)
    _one_line_value_error(info, f)


def test_graph_that_breaks_at_a_larger_batch_names_the_file_at_compute(tmp_path):
    # Slice the batch to at most 5 rows: fine for the construction batches (3 and 5), wrong at 8
    st = numpy_helper.from_array(np.array([0], np.int64), "st")
    en = numpy_helper.from_array(np.array([5], np.int64), "en")
    f = _weights(tmp_path / "slice5.onnx", [st, en], [helper.make_node("Slice", ["y", "st", "en"], ["output"])])
    # torch finds it at the first compute; onnxruntime when its buffers are bound (the model's build)
    for engine in ("torch", "onnxruntime"):
        cfg = ag.ActuatorNetMLPCfg(network_file=str(f), saturation_effort=10.0, actuator_velocity_limit=10.0, onnx_engine=engine)
        with pytest.raises(ValueError) as info:
            model = cfg.build(joint_names=["a", "b"], num_envs=4)
            assert model.drive.engine == "torch"
            model.compute(joint_pos=np.zeros((4, 2)), joint_vel=np.zeros((4, 2)), target_pos=np.zeros((4, 2)))
        _one_line_value_error(info, f, "returned shape (5, 1)", "expected (8, 1)")


def test_node_errors_at_compute_name_the_file_and_node(tmp_path):
    f = export_onnx_mlp(tmp_path / "ok.onnx")
    net = load_network(f, "mlp")
    with pytest.raises(ValueError) as info:
        net.module(torch.zeros(3, 7))  # wrong width
    _one_line_value_error(info, f, "node 0 (Gemm)", "(3, 7)")


def test_undefined_tensor_reference_is_refused(tmp_path):
    f = _save(tmp_path / "undef.onnx", [helper.make_node("Add", ["input", "ghost"], ["output"])], [])
    with pytest.raises(ValueError) as info:
        ag.DriveNeuralMLP(f)
    _one_line_value_error(info, f, "'ghost'")


# ---------------------------------------------------------------------------------------------
# metadata, scales, npz
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("raw, fragment", [
    ("[1, 2]", "JSON object"),
    ("{not json", "not valid JSON"),
    ("[" * 100_000 + "]" * 100_000, "deeper"),
    ('{"input_idx": [0], "x": NaN}', "non-finite"),
    ('{"input_idx": [0], "vel_scale": NaN}', "non-finite value NaN at key 'vel_scale'"),  # the key, not only the property
    ('{"input_idx": [0], "vel_scale": -Infinity}', "non-finite value -Infinity at key 'vel_scale'"),
    ('{"input_idx": [0], "pos_scale": 1e400}', "overflows a 64-bit float at key 'pos_scale'"),
    ('{"input_idx": [0, NaN]}', "at key 'input_idx[1]'"),
    ('{"norm": {"std": [1.0, Infinity]}}', "at key 'norm.std[1]'"),
])
def test_bad_metadata_json_names_the_file(tmp_path, raw, fragment):
    f = export_onnx_mlp(tmp_path / "m.onnx")
    m = onnx.load(str(f))
    for p in m.metadata_props:
        if p.key == "metadata":
            p.value = raw
    onnx.save(m, str(f))
    with pytest.raises(ValueError) as info:
        ag.DriveNeuralMLP(f, input_order="pos_vel", input_idx=[0])
    _one_line_value_error(info, f, fragment)


@pytest.mark.parametrize("meta, fragment", [
    ({"effort_scale": 0}, "effort_scale in the metadata of"),
    ({"torque_scale": 0.0}, "torque_scale in the metadata of"),
    ({"pos_scale": 0}, "pos_scale in the metadata of"),
    ({"vel_scale": "fast"}, "must be a number"),
    ({"input_idx": "abc"}, "input_idx must be a non-empty list"),
    ({"input_idx": [0, "x"]}, "input_idx must be a non-empty list"),
    ({"input_idx": [0.5]}, "input_idx must be a non-empty list"),
    ({"input_order": 3}, "input_order must be"),
])
def test_checkpoint_metadata_errors_name_the_file(tmp_path, meta, fragment):
    f = export_onnx_mlp(tmp_path / "m.onnx", meta=meta)
    with pytest.raises(ValueError) as info:
        ag.DriveNeuralMLP(f)
    _one_line_value_error(info, f, fragment)


def test_scales_given_in_code_are_checked_too():
    f = DC_MOTOR_NET
    for kw in ({"torque_scale": 0.0}, {"effort_scale": float("inf")}, {"pos_scale": float("nan")}):
        with pytest.raises(ValueError, match="finite and non-zero"):
            ag.DriveNeuralMLP(f, **kw)
    assert ag.DriveNeuralMLP(f, pos_scale=-1.5).pos_scale == -1.5  # a sign flip is a legitimate convention


def test_gru_metadata_of_the_wrong_shape_names_the_file(tmp_path, conformance_dir):
    gru = conformance_dir / "newton" / "nets" / "gru.onnx"
    for meta, fragment in (({"normalization": [1, 2]}, "normalization must be a mapping"),
                           ({"input_columns": "position"}, "input_columns must be a list"),
                           ({"normalization": {"targets": {"std": {"torque": 0}}}}, "torque_std must be finite and non-zero")):
        with pytest.raises(ValueError) as info:
            ag.DriveNeuralGRU(gru, metadata=meta)
        _one_line_value_error(info, gru, fragment)


def test_npz_object_arrays_are_refused_with_the_file_named(tmp_path):
    f = tmp_path / "obj.npz"
    np.savez(f, **{"0.weight": np.ones((1, 2), np.float32)}, evil=np.array([{"a": 1}], dtype=object))
    with pytest.raises(ValueError) as info:
        ag.DriveNeuralMLP(f, input_order="pos_vel", input_idx=[0])
    _one_line_value_error(info, f, "'evil'", "object")


def test_npz_declaring_a_huge_array_is_refused_before_allocating(tmp_path):
    from numpy.lib import format as npf

    f = tmp_path / "huge.npz"
    header = {"descr": "<f4", "fortran_order": False, "shape": (10**6, 10**6)}
    with zipfile.ZipFile(f, "w") as zf, zf.open("0.weight.npy", "w") as fh:
        npf.write_array_header_1_0(fh, header)
        fh.write(b"\0" * 64)
    t0, rss0 = time.perf_counter(), _rss_mb()
    with pytest.raises(ValueError) as info:
        ag.DriveNeuralMLP(f, input_order="pos_vel", input_idx=[0])
    assert time.perf_counter() - t0 < 2.0 and _rss_mb() - rss0 < 200
    _one_line_value_error(info, f, "'0.weight'", "bytes")


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_non_finite_weights_are_refused_at_load_naming_file_and_tensor(tmp_path, bad):
    """NaN / inf weights would make every effort NaN: refused at load for both engines, naming the
    file and the tensor (an ONNX initializer or Constant, an .npz array)."""
    w = numpy_helper.from_array(np.array([[1.0], [bad]], np.float32), "W")
    init = _save(tmp_path / "init.onnx", [helper.make_node("MatMul", ["input", "W"], ["output"])], [w])
    const = _weights(tmp_path / "const.onnx", nodes_extra=[
        helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(np.array([bad], np.float32))),
        helper.make_node("Add", ["y", "k"], ["output"])])
    npz = tmp_path / "w.npz"
    np.savez(npz, **{"0.weight": np.array([[1.0, bad]], np.float32), "0.bias": np.zeros(1, np.float32)})
    for f, tensor in ((init, "initializer 'W'"), (const, "node 1 (Constant)"), (npz, "weight '0.weight'")):
        for engine in ("torch", "onnxruntime") if f.suffix == ".onnx" else ("auto",):
            with pytest.raises(ValueError) as info:
                ag.DriveNeuralMLP(f, input_order="pos_vel", input_idx=[0], onnx_engine=engine)
            _one_line_value_error(info, f, tensor, "1 non-finite value(s)", "allowed: finite weights")


def test_npz_bad_metadata_names_the_file(tmp_path):
    f = tmp_path / "w.npz"
    np.savez(f, **{"0.weight": np.ones((1, 2), np.float32)}, __metadata__="[1, 2]")
    with pytest.raises(ValueError) as info:
        ag.DriveNeuralMLP(f, input_order="pos_vel", input_idx=[0])
    _one_line_value_error(info, f, "__metadata__", "JSON object")


def test_errors_are_never_raw_library_exceptions(tmp_path):
    """Truncated / garbage files of every recognised kind give ValueError naming the file."""
    good = export_onnx_mlp(tmp_path / "good.onnx").read_bytes()
    cases = {
        "trunc.onnx": good[: len(good) // 2],
        "zip.npz": b"PK\x03\x04" + os.urandom(64),
        "pickle.pt": b"\x80\x04" + os.urandom(32),
        "noise.onnx": os.urandom(256),
    }
    for name, data in cases.items():
        f = tmp_path / name
        f.write_bytes(data)
        with pytest.raises(ValueError) as info:
            ag.DriveNeuralMLP(f, input_order="pos_vel", input_idx=[0], allow_unsafe_checkpoint=True)
        assert str(f) in str(info.value)
