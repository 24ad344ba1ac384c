"""`actuator-gym export`: the exported ONNX / TorchScript actor computes what SavedPolicy computes
(normalization and action bounds inside, any batch size), and its layout JSON describes it."""

import json
import warnings

import gymnasium as gym
import numpy as np
import pytest
import torch

from actuator_gym.tools.cli import main
from actuator_gym.tools.training import SavedPolicy, save_policy

QUADRUPED = "actuator_gym/Quadruped-v0"


@pytest.fixture(scope="module")
def rsl_rl_style_policy(tmp_path_factory):
    """A format-2 policy (elu, observation normalizer) for the quadruped's 48 / 12 sizes, with weights
    large enough that many actions hit the [-1, 1] bounds."""
    g = torch.Generator().manual_seed(0)
    obs, act = gym.spaces.Box(-np.inf, np.inf, (48,), np.float32), gym.spaces.Box(-1.0, 1.0, (12,), np.float32)
    state = {"policy_net.0.weight": torch.randn(32, 48, generator=g), "policy_net.0.bias": torch.randn(32, generator=g),
             "policy_net.2.weight": torch.randn(16, 32, generator=g), "policy_net.2.bias": torch.randn(16, generator=g),
             "action_net.weight": torch.randn(12, 16, generator=g), "action_net.bias": torch.randn(12, generator=g),
             "obs_normalizer.mean": torch.randn(48, generator=g), "obs_normalizer.std": torch.rand(48, generator=g) * 2}
    state["obs_normalizer.std"][5] = 0.0  # a constant observation: epsilon alone divides it
    folder = tmp_path_factory.mktemp("policy")
    save_policy(folder, QUADRUPED, obs, act, [32, 16], "elu", state, obs_normalization_epsilon=0.01)
    return folder


def _obs(n, seed=1):
    return (np.random.default_rng(seed).normal(size=(n, 48)) * 3).astype(np.float32)


def test_onnx_export_equals_the_saved_policy_at_any_batch_size(rsl_rl_style_policy, tmp_path, capsys):
    import onnx
    import onnxruntime as ort

    assert main(["export", "--policy", str(rsl_rl_style_policy), "--format", "onnx", "--out", str(tmp_path)]) == 0
    out = tmp_path / "export"
    pol = SavedPolicy.load(rsl_rl_style_policy)
    model = onnx.load(out / "policy.onnx")
    onnx.checker.check_model(model)
    (inp,), (outp,) = model.graph.input, model.graph.output
    assert inp.name == "obs" and outp.name == "actions"
    assert inp.type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    assert [d.dim_param or d.dim_value for d in inp.type.tensor_type.shape.dim] == ["N", 48]  # a dynamic batch
    sess = ort.InferenceSession(str(out / "policy.onnx"), providers=["CPUExecutionProvider"])
    clipped = 0
    for n in (1, 7, 300):
        obs = _obs(n, seed=n)
        got, want = sess.run(["actions"], {"obs": obs})[0], pol(obs)
        assert got.shape == (n, 12) and got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        assert np.all(got >= -1.0) and np.all(got <= 1.0)
        clipped += int(np.sum(np.abs(want) == 1.0))
        np.testing.assert_array_equal(got[np.abs(want) == 1.0], want[np.abs(want) == 1.0])  # the bounds, exactly
    assert clipped > 100  # the bounds were exercised
    # the normalization is inside: another mean changes the output (raw observations go in)
    assert not np.allclose(sess.run(None, {"obs": _obs(4)})[0], pol.action_net(pol.policy_net(torch.as_tensor(_obs(4)))).clip(-1, 1).detach().numpy())
    assert "policy.onnx" in capsys.readouterr().out


def test_torchscript_export_and_the_layout(rsl_rl_style_policy, tmp_path):
    assert main(["export", "--policy", str(rsl_rl_style_policy), "--format", "onnx", "--out", str(tmp_path)]) == 0
    assert main(["export", "--policy", str(rsl_rl_style_policy), "--format", "torchscript", "--out", str(tmp_path)]) == 0
    out = tmp_path / "export"
    assert sorted(p.name for p in out.iterdir()) == ["policy.pt", "policy_layout.json"]  # the earlier export's model removed
    pol = SavedPolicy.load(rsl_rl_style_policy)
    with warnings.catch_warnings():  # torch 2.9+ deprecates TorchScript; 2.13 still loads it
        warnings.simplefilter("ignore", DeprecationWarning)
        ts = torch.jit.load(str(out / "policy.pt"))
    for n in (1, 5, 64):
        obs = _obs(n, seed=10 + n)
        with torch.no_grad():
            got = ts(torch.from_numpy(obs)).numpy()
        np.testing.assert_allclose(got, pol(obs), rtol=1e-6, atol=1e-6)
    doc = json.loads((out / "policy_layout.json").read_text())
    assert doc["model"] == {"file": "policy.pt", "format": "torchscript"} and doc["task"] == QUADRUPED
    assert doc["input"] == {"name": "obs", "shape": ["N", 48], "dtype": "float32"}
    assert doc["output"] == {"name": "actions", "shape": ["N", 12], "dtype": "float32"}
    o, a = doc["observation"], doc["action"]
    assert o["dim"] == 48 and o["normalization"]["epsilon"] == 0.01 and o["normalization"]["inside_the_model"]
    np.testing.assert_array_equal(np.float32(o["normalization"]["std"]), pol.obs_normalizer.std.numpy())
    # the quadruped's layout: its quantities' slices, named by joint where a slice runs over the 12 joints
    assert o["slices"]["joint_pos"] == [9, 21] and o["slices"]["command"] == [45, 48]
    assert o["names"][0] == "lin_vel[0]" and o["names"][9] == "joint_pos[FL_hip_joint]"
    assert o["names"][32] == "joint_vel[RR_calf_joint]" and o["names"][47] == "command[2]"
    assert a["low"] == [-1.0] * 12 and a["high"] == [1.0] * 12 and a["clipped_inside_the_model"]
    assert a["mode"] == "position" and a["names"][2] == "pos command of joint 'FL_calf_joint'"
    from actuator_gym.tools.training import make_env

    env = make_env(QUADRUPED)
    task = env.unwrapped.task
    assert a["scale"] == task.action_scale.tolist() and a["offset"] == task.action_offset.tolist()
    env.close()


def test_export_refuses_bad_input_before_writing(rsl_rl_style_policy, tmp_path, capsys):
    assert main(["export", "--policy", str(tmp_path / "nope"), "--format", "onnx", "--out", str(tmp_path)]) == 2
    assert "policy.json" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["export", "--policy", str(rsl_rl_style_policy), "--format", "tflite", "--out", str(tmp_path)])
    assert "--format" in capsys.readouterr().err
    # an experiment of another task than the policy's
    assert main(["export", "--policy", str(rsl_rl_style_policy), "--format", "onnx", "--experiment", "pendulum_ppo",
                 "--out", str(tmp_path)]) == 2
    assert "is for actuator_gym/Pendulum-v0" in capsys.readouterr().err
    assert not (tmp_path / "export").exists()


def test_export_writes_through_no_link(rsl_rl_style_policy, tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "export").symlink_to(elsewhere)  # OUT/export a link: refused, nothing written
    assert main(["export", "--policy", str(rsl_rl_style_policy), "--format", "onnx", "--out", str(tmp_path / "out")]) == 2
    assert "export" in capsys.readouterr().err and not list(elsewhere.iterdir())
    (tmp_path / "out" / "export").unlink()
    (tmp_path / "out" / "export").mkdir()
    (tmp_path / "out" / "export" / "policy.onnx").symlink_to(elsewhere / "victim")  # a link at an output: replaced
    assert main(["export", "--policy", str(rsl_rl_style_policy), "--format", "onnx", "--out", str(tmp_path / "out")]) == 0
    assert not (tmp_path / "out" / "export" / "policy.onnx").is_symlink() and not list(elsewhere.iterdir())
