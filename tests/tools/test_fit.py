"""The fit tool: a net trained on a synthetic log of an analytic actuator reproduces its torques."""

import json

import numpy as np
import torch

import actuator_gym as ag
from actuator_gym.tools.fit import fit_actuator_net, generate_synthetic_log, load_log, main


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


# ---- refused logs and options: one line naming the file or option, nothing trained or written ----
import pytest  # noqa: E402

from actuator_gym.tools.cli import main as cli_main  # noqa: E402
from actuator_gym.tools.fit import LogError  # noqa: E402
from actuator_gym.tools import logs  # noqa: E402

HEADER = "target_pos,joint_pos,joint_vel,torque\n"


def _rows(n):
    return "".join(f"{0.01 * i},{0.005 * i},0.1,{0.2 * i}\n" for i in range(n))


@pytest.mark.parametrize(
    "name, content, match",
    [
        ("empty.csv", "", "empty file"),
        ("blank.csv", "\n\n  \n", "empty file"),
        ("header.csv", HEADER, "header only"),
        ("ragged.csv", HEADER + _rows(20) + "1,2,3\n", "line 22 has 3 field"),
        ("text.csv", HEADER + _rows(20) + "a,b,c,d\n", "line 22: every field must be a number"),
        ("tiny.csv", HEADER + _rows(5), "too little data"),
        ("dup.csv", "torque,torque,joint_pos,joint_vel\n" + _rows(20), "duplicate column"),
        ("nan.csv", HEADER + _rows(20) + "nan,0,0,0\n", "non-finite"),
        ("garbage.csv", b"\xff\xfe\x00\x81binary", "not a text CSV"),
        ("garbage.npz", b"PK\x03\x04 not really a zip", "not an NPZ"),
        ("log.txt", "x", "expected a .csv or .npz"),
    ],
)
def test_bad_logs_are_refused_naming_the_file(tmp_path, name, content, match):
    p = tmp_path / name
    p.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(LogError, match=match) as e:
        fit_actuator_net(p, tmp_path / "out", epochs=1)
    assert str(p) in str(e.value) and len(str(e.value).splitlines()) == 1
    assert not (tmp_path / "out").exists()  # checked before anything is written


def test_npz_object_arrays_and_bad_shapes(tmp_path):
    obj = tmp_path / "obj.npz"
    np.savez(obj, target_pos=np.array([{"a": 1}], dtype=object), joint_pos=np.zeros(1), joint_vel=np.zeros(1), torque=np.zeros(1))
    with pytest.raises(LogError, match="obj.npz"):
        load_log(obj)
    cube = tmp_path / "cube.npz"
    np.savez(cube, **{c: np.zeros((4, 2, 2)) for c in ("target_pos", "joint_pos", "joint_vel", "torque")})
    with pytest.raises(LogError, match=r"shape \(4, 2, 2\)"):
        load_log(cube)
    uneven = tmp_path / "uneven.npz"
    np.savez(uneven, target_pos=np.zeros(30), joint_pos=np.zeros(30), joint_vel=np.zeros(29), torque=np.zeros(30))
    with pytest.raises(LogError, match="equal shapes"):
        load_log(uneven)
    with pytest.raises(LogError, match="no such file"):
        load_log(tmp_path / "missing.npz")


def test_lstm_log_shorter_than_seq_len(tmp_path):
    p = tmp_path / "short.csv"
    p.write_text(HEADER + _rows(40))
    with pytest.raises(LogError, match="seq_len=64"):
        fit_actuator_net(p, tmp_path / "o", "lstm", epochs=1)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(epochs=0), "epochs must be an integer >= 1"),
        (dict(hidden=[0]), r"hidden must be an integer in \[1, 4096\]"),
        (dict(hidden=[]), "hidden must list"),
        (dict(hidden=[8] * 17), "hidden must list 1 to 16 layer widths, got 17"),
        (dict(input_idx=[-1]), r"input_idx must be an integer in \[0, 1024\]"),
        (dict(input_idx=[0, 5000]), r"input_idx must be an integer in \[0, 1024\]"),
        (dict(input_idx=[]), "input_idx must list"),
        (dict(input_idx=[1, 1]), "must not repeat"),
        (dict(lr=0.0), "lr must be a finite number > 0"),
        (dict(lr=float("nan")), "lr must be a finite number > 0"),
        (dict(holdout=1.0), r"holdout must be a fraction in \(0, 1\)"),
        (dict(batch_size=0), "batch_size"),
        (dict(seed=-1), "seed"),
        (dict(activation="sigmoidish"), "activation"),
        (dict(model_type="gru"), "model_type"),
        (dict(model_type="lstm", hidden=[16, 16]), "one recurrent layer"),
    ],
)
def test_bad_options_are_refused_before_reading(tmp_path, kwargs, match):
    with pytest.raises(ValueError, match=match):
        fit_actuator_net(tmp_path / "never_read.csv", tmp_path / "out", **kwargs)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--epochs", "0"], "--epochs must be an integer >= 1, got 0"),
        (["--hidden", "0"], "--hidden must be an integer in [1, 4096], got 0"),
        (["--input-idx", "-1"], "--input-idx must be an integer in [0, 1024], got -1"),
        (["--lr", "-1"], "--lr must be a finite number > 0"),
        (["--holdout", "0"], "--holdout must be a fraction in (0, 1)"),
        (["--model", "gru"], "invalid choice: 'gru'"),
        (["--epochs", "many"], "invalid int value: 'many'"),
    ],
)
def test_cli_bad_options_one_line(tmp_path, capsys, argv, match):
    data = tmp_path / "log.npz"
    with pytest.raises(SystemExit) as e:
        cli_main(["fit", "--synthetic", str(data), str(tmp_path / "o"), *argv])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("actuator-gym fit: error:") and match in err and len(err.splitlines()) == 1
    assert not data.exists()  # refused before the synthetic log was written


def test_cli_bad_log_one_line(tmp_path, capsys):
    p = tmp_path / "header.csv"
    p.write_text(HEADER)
    assert cli_main(["fit", str(p), str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"actuator-gym: error: {p}: header only, no data rows"


def test_progress_bar_over_epochs(tmp_path, monkeypatch):
    """tqdm counts the epochs on a terminal; ``progress=False`` turns it off."""
    import tqdm

    from actuator_gym.tools import progress

    seen = []
    real = tqdm.tqdm

    def spy(*a, **kw):
        seen.append((kw.get("desc"), kw.get("unit"), kw.get("total"), kw.get("disable")))
        return real(*a, **{**kw, "disable": True})

    monkeypatch.setattr(tqdm, "tqdm", spy)
    monkeypatch.setattr(progress, "_isatty", lambda stream: True)  # stdout and stderr: a terminal
    log = generate_synthetic_log(tmp_path / "log.npz", num_steps=200, num_sequences=2)
    fit_actuator_net(log, tmp_path / "o", epochs=3)
    fit_actuator_net(log, tmp_path / "o2", epochs=2, progress=False)
    assert seen == [("fit MLP", "epoch", 3, False), ("fit MLP", "epoch", 2, True)]


def _npz_declaring(path, arrays):
    """An .npz whose members are only .npy headers declaring ``{name: (shape, dtype)}``: a few hundred
    bytes that np.load would allocate in full before finding the data missing."""
    import io
    import zipfile

    from numpy.lib import format as npf

    with zipfile.ZipFile(path, "w") as z:
        for name, (shape, dtype) in arrays.items():
            buf = io.BytesIO()
            npf.write_array_header_1_0(buf, {"descr": npf.dtype_to_descr(np.dtype(dtype)), "fortran_order": False, "shape": shape})
            z.writestr(f"{name}.npy", buf.getvalue())
    return path


def test_log_sizes_are_checked_from_headers_before_loading(tmp_path, monkeypatch):
    from actuator_gym.tools import fit

    cols = ("target_pos", "joint_pos", "joint_vel", "torque")
    # 2^22 rows x 8 joints of float32 per column: 512 MiB declared in ~1 KiB, over LOG_MAX_BYTES
    big = _npz_declaring(tmp_path / "big.npz", {c: ((2**22, 8), "<f4") for c in cols})
    with pytest.raises(LogError, match=rf"big.npz: the arrays declare more than {fit.LOG_MAX_BYTES} bytes of data"):
        load_log(big)
    # int8 columns: few bytes, but 2^25 numbers (each becomes a float64): over LOG_MAX_VALUES
    many = _npz_declaring(tmp_path / "many.npz", {c: ((2**23,), "|i1") for c in cols})
    with pytest.raises(LogError, match=rf"many.npz: the log holds {2**25} numbers or more; allowed: at most {fit.LOG_MAX_VALUES}"):
        load_log(many)
    # a deflated member that inflates past the budget: refused from the zip directory
    monkeypatch.setattr(logs, "LOG_MAX_BYTES", 2**20)
    bomb = tmp_path / "bomb.npz"
    np.savez_compressed(bomb, **{c: np.zeros(2**19) for c in cols})  # 4 x 4 MiB of zeros in ~16 KiB
    assert bomb.stat().st_size < 2**20
    with pytest.raises(LogError, match="bomb.npz: log declares .* bytes uncompressed; allowed: at most"):
        load_log(bomb)
    # a CSV: counted while read, line by line
    monkeypatch.setattr(logs, "LOG_MAX_VALUES", 40)
    csv_log = tmp_path / "log.csv"
    csv_log.write_text(HEADER + _rows(20))
    with pytest.raises(LogError, match="log.csv: the log holds 44 numbers or more; allowed: at most 40"):
        load_log(csv_log)
    wide = tmp_path / "wide.csv"
    wide.write_text(HEADER + "0," * fit.LOG_CSV_MAX_LINE + "\n")
    with pytest.raises(LogError, match=f"wide.csv: line 2 is longer than {fit.LOG_CSV_MAX_LINE} characters"):
        load_log(wide)
