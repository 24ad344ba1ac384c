"""Saved policies (policy.json + policy.pt) as untrusted data: schema and shapes checked, errors
name the file, never a raw TypeError / KeyError / RuntimeError from deep inside."""

import json
import math

import numpy as np
import pytest
import torch

from actuator_gym.tools.training import SavedPolicy

META = {
    "format": "actuator-gym-policy/1",
    "task": "actuator_gym/Pendulum-v0",
    "obs_dim": 3,
    "act_dim": 2,
    "net_arch": [8],
    "activation": "tanh",
    "action_low": [-1.0, -1.0],
    "action_high": [1.0, 1.0],
}


def _state(obs=3, hidden=8, act=2):
    torch.manual_seed(0)
    return {
        "policy_net.0.weight": torch.randn(hidden, obs), "policy_net.0.bias": torch.randn(hidden),
        "action_net.weight": torch.randn(act, hidden), "action_net.bias": torch.randn(act),
    }


def _write(folder, meta=META, state=None, raw_json=None):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "policy.json").write_text(raw_json if raw_json is not None else json.dumps(meta))
    torch.save(_state() if state is None else state, folder / "policy.pt")
    return folder


def test_a_valid_policy_loads_and_acts(tmp_path):
    pol = SavedPolicy.load(_write(tmp_path / "p"))
    a = pol(np.zeros(3, np.float32))
    assert a.shape == (2,) and np.all(np.abs(a) <= 1.0)


@pytest.mark.parametrize("raw, fragment", [
    ("[1, 2, 3]", "must be a JSON object"),
    ("{oops", "not valid JSON"),
    ("[" * 50_000 + "]" * 50_000, "deeper"),
    (json.dumps({**META, "obs_dim": "3"}), "obs_dim must be an integer"),
    (json.dumps({**META, "obs_dim": 10**9}), "obs_dim must be an integer in [1, 65536]"),
    (json.dumps({**META, "net_arch": [10**9]}), "net_arch[0] must be an integer"),
    (json.dumps({**META, "net_arch": "64,64"}), "net_arch must be a list"),
    (json.dumps({**META, "action_low": [-1.0]}), "action_low must be a list of 2 (act_dim) finite numbers"),
    (json.dumps({**META, "action_high": [1.0, 1e400]}), "non-finite"),
    (json.dumps({**META, "action_low": [2.0, 2.0]}), "action_low must be <= action_high"),
    (json.dumps({**META, "action_high": [1.0, 1e39]}), "action_high must be a list of 2 (act_dim) finite numbers of magnitude at most 3.402823e+38 (float32)"),
    (json.dumps({**META, "activation": "gelu"}), "activation must be one of"),
    (json.dumps({**META, "format": "other/9"}), "format must be"),
    (json.dumps({k: v for k, v in META.items() if k != "act_dim"}), "missing key(s) ['act_dim']"),
])
def test_bad_policy_json_names_the_file(tmp_path, raw, fragment):
    folder = _write(tmp_path / "p", raw_json=raw)
    with pytest.raises(ValueError) as info:
        SavedPolicy.load(folder)
    msg = str(info.value)
    assert str(folder / "policy.json") in msg and fragment in msg and "\n" not in msg, msg


@pytest.mark.parametrize("state, fragment", [
    ([1, 2, 3], "must hold a {name: tensor} dict"),
    ({"policy_net.0.weight": torch.zeros(8, 3)}, "does not match"),
    ({**_state(), "action_net.weight": torch.zeros(5, 8)}, "does not match"),
    ({**_state(), "action_net.bias": torch.full((2,), float("nan"))}, "non-finite"),
])
def test_weights_that_do_not_match_name_the_file(tmp_path, state, fragment):
    folder = _write(tmp_path / "p", state=state)
    with pytest.raises(ValueError) as info:
        SavedPolicy.load(folder)
    msg = str(info.value)
    assert str(folder / "policy.pt") in msg and fragment in msg, msg


def test_missing_or_unreadable_files(tmp_path):
    with pytest.raises(ValueError, match="policy.json not found"):
        SavedPolicy.load(tmp_path)
    folder = _write(tmp_path / "p")
    (folder / "policy.pt").write_bytes(b"\x80\x04garbage")
    with pytest.raises(ValueError, match="not a weights-only tensor file") as info:
        SavedPolicy.load(folder)
    assert str(folder / "policy.pt") in str(info.value)


# -- format 2: the ELU activation and the observation normalizer (rsl_rl runs) -----------------
META_V2 = {**META, "format": "actuator-gym-policy/2", "obs_dim": 2, "net_arch": [2], "activation": "elu",
           "action_low": [-5.0, -5.0], "action_high": [5.0, 5.0], "obs_normalization": {"epsilon": 0.5}}


def _state_v2(std=(1.0, 3.0)):
    eye = torch.eye(2)
    return {"policy_net.0.weight": eye.clone(), "policy_net.0.bias": torch.zeros(2), "action_net.weight": eye.clone(),
            "action_net.bias": torch.tensor([0.0, 1.0]),
            "obs_normalizer.mean": torch.tensor([1.0, -1.0]), "obs_normalizer.std": torch.tensor(std)}


def test_format_2_normalizes_then_runs_the_elu_mlp(tmp_path):
    """Identity layers: action = elu((obs - mean) / (std + epsilon)) + bias, by hand."""
    pol = SavedPolicy.load(_write(tmp_path / "p", META_V2, _state_v2()))
    # obs [2, 2]: ((2-1)/1.5, (2+1)/3.5) = (2/3, 6/7), positive: elu is the identity
    np.testing.assert_allclose(pol(np.array([2.0, 2.0], np.float32)), [2 / 3, 6 / 7 + 1.0], rtol=1e-6)
    # obs [0, -1]: (-1/1.5, 0): elu(-2/3) = exp(-2/3) - 1
    np.testing.assert_allclose(pol(np.array([0.0, -1.0], np.float32)), [math.exp(-2 / 3) - 1.0, 1.0], rtol=1e-6)
    # a format-1 file still loads and acts as before (no normalizer, tanh)
    assert SavedPolicy.load(_write(tmp_path / "v1")).meta["format"] == "actuator-gym-policy/1"


@pytest.mark.parametrize("meta, state, fragment", [
    ({**META_V2, "format": "actuator-gym-policy/1", "obs_normalization": None}, None, "activation must be one of ['relu', 'tanh'] in format"),
    ({**META_V2, "format": "actuator-gym-policy/1", "activation": "tanh"}, None, "obs_normalization needs format 'actuator-gym-policy/2'"),
    ({**META_V2, "obs_normalization": {"epsilon": 0}}, None, "obs_normalization must be null or"),
    ({**META_V2, "obs_normalization": {"epsilon": 0.1, "clip": 5}}, None, "obs_normalization must be null or"),
    ({**META_V2, "obs_normalization": {"epsilon": 1e-300}}, None, 'obs_normalization must be null or {"epsilon": a number in [1e-08, 1e+08]}'),
    ({**META_V2, "obs_normalization": "yes"}, None, "obs_normalization must be null or"),
    (META_V2, {k: v for k, v in _state_v2().items() if k != "obs_normalizer.std"}, "does not match"),
    ({**META_V2, "obs_normalization": None}, _state_v2(), "does not match"),
    (META_V2, _state_v2(std=(1.0, -2.0)), "'obs_normalizer.std' holds negative values"),
    (META_V2, {**_state_v2(), "obs_normalizer.mean": torch.tensor([0.0, math.inf])}, "non-finite"),
])
def test_bad_format_2_files_name_the_file(tmp_path, meta, state, fragment):
    folder = _write(tmp_path / "p", meta, _state_v2() if state is None else state)
    with pytest.raises(ValueError) as info:
        SavedPolicy.load(folder)
    msg = str(info.value)
    assert str(folder) in msg and fragment in msg and "\n" not in msg, msg


def test_the_smallest_epsilon_keeps_actions_finite_for_a_constant_observation(tmp_path):
    """std 0 (an observation that never varied in training): (obs - mean) / epsilon stays finite."""
    from actuator_gym.tools.training import POLICY_EPSILON_RANGE

    meta = {**META_V2, "obs_normalization": {"epsilon": POLICY_EPSILON_RANGE[0]}}
    pol = SavedPolicy.load(_write(tmp_path / "p", meta, _state_v2(std=(0.0, 0.0))))
    assert np.isfinite(pol(np.array([1e3, -1e3], np.float32))).all()
    with pytest.raises(ValueError, match="epsilon"):
        SavedPolicy.load(_write(tmp_path / "q", {**meta, "obs_normalization": {"epsilon": POLICY_EPSILON_RANGE[0] / 2}},
                                _state_v2()))


def _rezip(src, dst, compression, extra=None):
    """``src``'s zip members copied to ``dst`` with ``compression``, plus ``extra`` {name: bytes}."""
    import zipfile

    with zipfile.ZipFile(src) as zi, zipfile.ZipFile(dst, "w", compression) as zo:
        prefix = zi.namelist()[0].split("/")[0]
        for info in zi.infolist():
            zo.writestr(info.filename, zi.read(info.filename))
        for name, data in (extra or {}).items():
            zo.writestr(f"{prefix}/{name}", data)


def test_declared_sizes_are_bounded_before_torch_inflates_anything(tmp_path):
    """policy.json (3 -> 8 -> 2: 50 parameters) bounds policy.pt: at most 8 bytes per parameter plus
    POLICY_ARCHIVE_SLACK_BYTES, in the file and in what its zip directory declares uncompressed."""
    import zipfile

    from actuator_gym.tools.training import POLICY_ARCHIVE_SLACK_BYTES

    folder = _write(tmp_path / "p")
    src = tmp_path / "plain.pt"
    (folder / "policy.pt").rename(src)
    budget = 8 * 50 + POLICY_ARCHIVE_SLACK_BYTES
    # a deflated bomb: 16 MiB of zeros in a few KiB, refused from the zip directory
    _rezip(src, folder / "policy.pt", zipfile.ZIP_DEFLATED, {"data/99": bytes(16 * 2**20)})
    assert (folder / "policy.pt").stat().st_size < 64 * 2**10
    with pytest.raises(ValueError) as info:
        SavedPolicy.load(folder)
    msg = str(info.value)
    assert str(folder / "policy.pt") in msg and f"uncompressed; allowed: at most {budget} bytes" in msg, msg
    # the same bytes stored: the file itself is over the budget
    _rezip(src, folder / "policy.pt", zipfile.ZIP_STORED, {"data/99": bytes(2 * 2**20)})
    with pytest.raises(ValueError, match=rf"is \d+ bytes; allowed: at most {budget} \(8 bytes per parameter"):
        SavedPolicy.load(folder)
    # deflated, within the budget: still read (torch.load inflates it)
    _rezip(src, folder / "policy.pt", zipfile.ZIP_DEFLATED)
    assert SavedPolicy.load(folder)(np.zeros(3, np.float32)).shape == (2,)
    # torch's legacy (non-zip) format declares its sizes in a pickle only: refused
    torch.save(_state(), folder / "policy.pt", _use_new_zipfile_serialization=False)
    with pytest.raises(ValueError, match="allowed: a torch.save zip archive"):
        SavedPolicy.load(folder)
