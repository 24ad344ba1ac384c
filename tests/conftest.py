from pathlib import Path

import pytest

import actuator_gym  # noqa: F401  (first: it picks the headless GL backend before a test module imports mujoco)
import numpy as np  # noqa: E402

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


@pytest.fixture(scope="session", autouse=True)
def _temporary_files_inside_pytests_folder(tmp_path_factory):
    """Libraries' own temporary files go under pytest's base temp folder, not the system's: SB3's
    ``learn()`` without a logger creates an ``SB3-<date>`` folder in ``tempfile.gettempdir()`` per
    call (its documented way, which the SB3 tests use), and nothing would remove them."""
    import tempfile

    before = tempfile.tempdir
    tempfile.tempdir = str(tmp_path_factory.mktemp("tempfile"))
    yield
    tempfile.tempdir = before


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


def mix_groups(native_joint, explicit_joint, *, motor=None, remotized=None, thermal=False):
    """Two groups for the per-group "auto" tests: a DC motor with a 0..3 substep delay and
    randomized motor constants and gain on ``native_joint`` (it has a native form), and a remotized
    PD (position-based limit: no native form) with randomized damping on ``explicit_joint``;
    ``motor`` / ``remotized`` override their fields; ``thermal`` adds the winding model (native only)."""
    import actuator_gym as ag
    from actuator_gym.randomization import Uniform

    m = dict(stiffness=30.0, damping=1.0, saturation_effort=8.0, actuator_velocity_limit=6.0, actuator_effort_limit=5.0,
             min_delay=0, max_delay=3, sat_range=(6.0, 10.0))
    m.update(motor or {})
    lo, hi = m.pop("sat_range")
    r = dict(stiffness=20.0, damping=0.8, joint_parameter_lookup=[[-2, 1, 0.4], [2, 1, 1.0]])
    r.update(remotized or {})
    dc = ag.DCMotorCfg(joint_names_expr=[native_joint], **m,
                       randomization={"saturation_effort": Uniform(lo, hi), "actuator_velocity_limit": Uniform(4.0, 8.0),
                                      "stiffness": Uniform(0.5, 1.5, operation="scale")},
                       **({"thermal_resistance": 2.0, "thermal_capacitance": 5.0} if thermal else {}))
    pd = ag.RemotizedPDActuatorCfg(joint_names_expr=[explicit_joint], **r,
                                   randomization={"damping": Uniform(0.5, 1.5, operation="scale")})
    return {"shoulder": dc, "elbow": pd}


def double_pendulum(integrator: str = "Euler") -> str:
    """Two hinges in series (0.6 kg and 0.4 kg point masses on 0.5 m and 0.4 m rods)."""
    return f"""<mujoco model="double_pendulum">
  <option integrator="{integrator}"/>
  <worldbody>
    <body name="upper">
      <joint name="hinge" type="hinge" axis="0 1 0"/>
      <inertial pos="0 0 -0.5" mass="0.6" diaginertia="1e-4 1e-4 1e-4"/>
      <body name="lower" pos="0 0 -0.5">
        <joint name="elbow" type="hinge" axis="0 1 0" damping="0.01"/>
        <inertial pos="0 0 -0.4" mass="0.4" diaginertia="1e-4 1e-4 1e-4"/>
      </body>
    </body>
  </worldbody>
</mujoco>"""


NATIVE_KEYS = ("computed_effort", "applied_effort", "power", "joint_pos", "joint_vel")
"""The telemetry keys :func:`native_rollout_diff` compares."""


def native_rollout_diff(explicit, native, steps, seed=0):
    """Two single-group pendulum tasks (group ``pendulum``), one explicit, one all native, stepped
    with the same random actions: the largest |explicit - native| of the state and of the telemetry
    (:data:`NATIVE_KEYS`) over ``steps`` control steps (autoresets included), the lags each env drew
    at each reset, the saturations seen and the env resets seen. Asserts on the way what must be
    equal: terminations, info keys, ``saturated``, the parameters in force, and the native energy
    rule (the last substep's |power| held over the control step, docs/native.md)."""
    rng = np.random.default_rng(seed)
    worst, lags, saturated, resets = dict.fromkeys(("qpos", "qvel") + NATIVE_KEYS, 0.0), [], 0, 0
    for _ in range(steps):
        a = rng.uniform(-1, 1, (explicit.num_envs, explicit.num_actions))
        _, re_, te, tre, ie = explicit.step(a)
        _, rn, tn, trn, inn = native.step(a)
        assert np.array_equal(te, tn) and np.array_equal(tre, trn)
        ta, tb = ie["actuator"], inn["actuator"]
        assert ta.keys() == tb.keys()
        for k in NATIVE_KEYS:
            worst[k] = max(worst[k], float(np.abs(ta[k] - tb[k]).max()))
        assert np.array_equal(ta["saturated"], tb["saturated"])
        # energy: the last substep's |power| held over the control step (docs/native.md)
        np.testing.assert_allclose(tb["energy"], np.abs(tb["power"]) * native.decimation * native.physics_dt, rtol=1e-6)
        np.testing.assert_array_equal(tb["mean_power"], tb["power"])
        saturated += int(ta["saturated"].sum())
        for f in ("qpos", "qvel"):
            worst[f] = max(worst[f], float(np.abs(getattr(explicit.backend, f) - getattr(native.backend, f)).max()))
        pe, pn = ie["actuator"]["parameters"]["pendulum"], inn["actuator"]["parameters"]["pendulum"]
        assert all(np.array_equal(pe[k], pn[k]) for k in pe)
        mask = ie["actuator"]["_parameters"]
        if mask.any():
            resets += int(mask.sum())
            if "delay_steps" in pe:
                lags.append(pe["delay_steps"][mask].ravel().copy())
    return worst, lags, saturated, resets


def native_pendulum_cfgs(max_delay: int) -> dict:
    """``{name: () -> cfg}``: the pendulum's hinge under IdealPD, DCMotor and DelayedPD (delay 0..
    ``max_delay`` substeps), each randomized per env, with limits that act at many steps (the native
    vs explicit comparisons on MuJoCo and on MuJoCo-Warp)."""
    import actuator_gym as ag
    from actuator_gym.randomization import Uniform

    scale = Uniform(0.5, 1.5, operation="scale")
    return {
        "ideal_pd": lambda: ag.IdealPDActuatorCfg(joint_names_expr=["hinge"], stiffness=20.0, damping=1.0,
                                                  actuator_effort_limit=2.5,
                                                  randomization={"stiffness": scale, "damping": scale}),
        "dc_motor": lambda: ag.DCMotorCfg(joint_names_expr=["hinge"], stiffness=20.0, damping=1.0, saturation_effort=4.0,
                                          actuator_velocity_limit=5.0, actuator_effort_limit=3.0,
                                          randomization={"saturation_effort": Uniform(3.0, 6.0),
                                                         "actuator_velocity_limit": Uniform(3.0, 8.0), "stiffness": scale}),
        "delayed_pd": lambda: ag.DelayedPDActuatorCfg(joint_names_expr=["hinge"], stiffness=20.0, damping=1.0,
                                                      actuator_effort_limit=2.5, min_delay=0, max_delay=max_delay,
                                                      randomization={"stiffness": scale}),
    }
