"""Saved policies (policy.json + policy.pt) as untrusted data: schema and shapes checked, errors
name the file, never a raw TypeError / KeyError / RuntimeError from deep inside."""

import json

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
