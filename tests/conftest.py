from pathlib import Path

import pytest

import actuator_gym  # noqa: F401  (first: it picks the headless GL backend before a test module imports mujoco)

CONFORMANCE = Path(__file__).resolve().parent / "data" / "conformance"
"""Reference traces and networks recorded from Isaac Lab 3.0 and Newton 1.8 (see its README.md)."""


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: longer tests (still run by make test)")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A skipped test fails: the suite runs every test (a skip would hide a missing dependency,
    GL library or data file behind a green run)."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"{item.nodeid} was skipped ({report.longrepr}); the suite allows no skips"


@pytest.fixture(scope="session")
def conformance_dir():
    if not CONFORMANCE.is_dir():
        pytest.fail(f"reference traces not found at {CONFORMANCE} (they are part of the repository)")
    return CONFORMANCE


def assert_close_rel(ours, ref, tol=2e-5, what=""):
    import numpy as np

    ours = np.asarray(ours, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    assert ours.shape == ref.shape, f"{what}: shape {ours.shape} != {ref.shape}"
    err = np.abs(ours - ref) / np.maximum(np.abs(ref), 1.0)
    worst = np.unravel_index(np.argmax(err), err.shape)
    assert err.max() <= tol, f"{what}: max rel error {err.max():.3g} at {worst}: ours {ours[worst]} ref {ref[worst]}"


def build_isaac_case(case, conformance_dir, array_backend="auto"):
    """``(spec, model)`` for an Isaac Lab case of cases.json (network files resolved next to the
    traces; the TorchScript nets there are trusted test data)."""
    import json

    import actuator_gym as ag

    spec = json.loads((conformance_dir / "isaaclab" / "cases.json").read_text())[case]
    cfg = dict(spec["config"])
    if "network_file" in cfg:
        cfg["network_file"] = str(conformance_dir / "isaaclab" / cfg["network_file"])
        cfg["allow_unsafe_checkpoint"] = True
    model = getattr(ag, spec["config_class"])(**cfg).build(
        joint_names=spec["joint_names"], num_envs=spec["num_envs"], seed=0, array_backend=array_backend
    )
    return spec, model


def replay_isaac(model, z):
    """Replay an Isaac Lab trace (README protocol: reset all, then per step the listed resets and
    one compute); returns the stacked ``(computed, applied)`` efforts."""
    import numpy as np

    model.reset()
    comp, appl = [], []
    for t in range(z["joint_pos"].shape[0]):
        ids = np.nonzero(z["reset_before_step"][t])[0]
        if ids.size:
            model.reset(env_ids=ids)
        applied = model.compute(
            joint_pos=z["joint_pos"][t],
            joint_vel=z["joint_vel"][t],
            target_pos=z["target_pos"][t],
            target_vel=z["target_vel"][t],
            target_effort=z["target_effort"][t],
            dt=0.005,
        )
        comp.append(model.computed_effort.clone().numpy())
        appl.append(applied.numpy())
    return np.stack(comp), np.stack(appl)


def skrl_ppo_models(env, hidden=None):
    """skrl's documented PPO pair for ``env`` (a wrapped skrl env): a Gaussian policy with a
    state-independent log std and a value net; ``hidden`` units in one tanh layer (None: linear)."""
    import torch
    import torch.nn as nn
    from skrl.models.torch import DeterministicMixin, GaussianMixin, Model

    def net(n_in, n_out):
        return nn.Linear(n_in, n_out) if hidden is None else nn.Sequential(
            nn.Linear(n_in, hidden), nn.Tanh(), nn.Linear(hidden, n_out))

    class Policy(GaussianMixin, Model):
        def __init__(self):
            Model.__init__(self, observation_space=env.observation_space, action_space=env.action_space, device="cpu")
            GaussianMixin.__init__(self, clip_actions=True)
            self.net = net(self.num_observations, self.num_actions)
            self.log_std = nn.Parameter(torch.zeros(self.num_actions))

        def compute(self, inputs, role):
            return self.net(inputs["observations"]), {"log_std": self.log_std}

    class Value(DeterministicMixin, Model):
        def __init__(self):
            Model.__init__(self, observation_space=env.observation_space, action_space=env.action_space, device="cpu")
            DeterministicMixin.__init__(self)
            self.net = net(self.num_observations, 1)

        def compute(self, inputs, role):
            return self.net(inputs["observations"]), {}

    return {"policy": Policy(), "value": Value()}
