"""Domain randomization: per-env draws at reset, isolation, non-cumulative, seeded, validated."""

import math

import numpy as np
import pytest
import torch

import actuator_gym as ag
from actuator_gym.randomization import Gaussian, IntUniform, LogUniform, Uniform

JOINTS = ["a", "b", "c"]


def build(seed=0, n=64, **fields):
    return ag.DCMotorCfg(saturation_effort=20.0, actuator_velocity_limit=10.0, **fields).build(joint_names=JOINTS, num_envs=n, seed=seed)


def test_scale_is_non_cumulative_and_bounded():
    m = build(stiffness=50.0, randomization={"stiffness": Uniform(0.8, 1.2, operation="scale")})
    for _ in range(20):
        m.reset()
        kp = m.parameter("stiffness")
        assert kp.min() >= 40.0 - 1e-4 and kp.max() <= 60.0 + 1e-4  # from nominal 50 each time
    assert (kp == kp[:, :1]).all()  # per env by default
    assert len(torch.unique(kp[:, 0])) > 50


def test_add_abs_loguniform_gaussian_bounds():
    m = build(
        stiffness=Uniform(10.0, 20.0, per_joint=True),
        damping=LogUniform(0.1, 10.0),
        actuator_effort_limit=15.0,
        randomization={"actuator_effort_limit": Uniform(-5.0, 5.0, operation="add"), "saturation_effort": Gaussian(1.0, 0.1, operation="scale")},
    )
    for _ in range(5):
        m.reset()
        kp, kd = m.parameter("stiffness"), m.parameter("damping")
        el, sat = m.parameter("actuator_effort_limit"), m.parameter("saturation_effort")
        assert 10.0 <= kp.min() and kp.max() <= 20.0 and not (kp == kp[:, :1]).all()
        assert 0.1 - 1e-6 <= kd.min() and kd.max() <= 10.0 + 1e-5
        assert 10.0 <= el.min() and el.max() <= 20.0
        assert 20.0 * 0.7 - 1e-4 <= sat.min() and sat.max() <= 20.0 * 1.3 + 1e-4  # truncated at 3 std


def test_only_reset_envs_change_bitwise():
    m = build(stiffness=50.0, randomization={"stiffness": Uniform(0.5, 1.5, operation="scale")},
              actuator_effort_limit=Uniform(5.0, 15.0))
    before = {k: v.clone() for k, v in m.parameters().items()}
    m.reset(env_ids=[3, 7])
    after = m.parameters()
    mask = torch.zeros(64, dtype=torch.bool)
    mask[[3, 7]] = True
    for k in ("stiffness", "actuator_effort_limit"):
        assert torch.equal(before[k][~mask], after[k][~mask])
        assert not torch.equal(before[k][mask], after[k][mask])
    # derived DC-motor quantities follow the new values (corner velocity), and only for the reset envs' values
    m.reset(env_ids=torch.tensor([True] + [False] * 63))
    assert torch.equal(m.parameters()["stiffness"][1:], after["stiffness"][1:])


def test_same_seed_same_values_different_seed_different():
    cfg = dict(stiffness=Uniform(1.0, 2.0), randomization={"damping": Uniform(0.0, 1.0, operation="add")}, min_delay=0)
    a, b, c = (ag.DelayedPDActuatorCfg(**cfg, max_delay=3).build(joint_names=JOINTS, num_envs=16, seed=s) for s in (5, 5, 6))
    for m in (a, b, c):
        m.reset()
        m.reset(env_ids=[0, 1])
    for name in ("stiffness", "damping", "delay_steps"):
        assert torch.equal(a.parameter(name), b.parameter(name))
    assert not torch.equal(a.parameter("stiffness"), c.parameter("stiffness"))
    a.seed(9)
    b.seed(9)
    a.reset()
    b.reset()
    assert torch.equal(a.parameter("stiffness"), b.parameter("stiffness"))


def test_delay_randomization_via_distribution():
    d = ag.Delay(delay_steps=IntUniform(1, 3, per_joint=True), max_delay=3)
    m = ag.Actuator(drive=ag.DrivePD(kp=1.0), delay=d, num_envs=100, num_joints=2, seed=0)
    lags = m.parameter("delay_steps")
    assert lags.dtype == torch.int64 and set(lags.unique().tolist()) == {1, 2, 3}
    with pytest.raises(ValueError, match="max_delay"):
        ag.Actuator(drive=ag.DrivePD(), delay=ag.Delay(delay_steps=IntUniform(1, 5), max_delay=3), num_envs=2, num_joints=1)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: Uniform(2.0, 1.0), "high"),
        (lambda: Uniform(0.0, math.inf), "finite"),
        (lambda: LogUniform(0.0, 1.0), "low must be > 0"),
        (lambda: Gaussian(1.0, -0.1), "std"),
        (lambda: Uniform(0.0, 1.0, operation="mul"), "operation"),
        (lambda: IntUniform(0.5, 2), "integer"),
    ],
)
def test_distribution_validation(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_scale_that_can_make_gain_negative_is_rejected():
    with pytest.raises(ValueError, match=r"'kp'.*can give values in \[-10.0"):
        build(stiffness=10.0, randomization={"stiffness": Uniform(-1.0, 1.0, operation="scale")})
    with pytest.raises(ValueError, match="'kd'"):
        build(damping=1.0, randomization={"damping": Gaussian(0.0, 1.0, operation="add")})
    with pytest.raises(ValueError, match="unknown field"):
        ag.IdealPDActuatorCfg(randomization={"stifness": Uniform(0.0, 1.0)})


def test_dict_value_distribution_per_regex():
    m = ag.IdealPDActuatorCfg(stiffness={"a": Uniform(1.0, 2.0), "[bc]": 7.0}).build(joint_names=JOINTS, num_envs=32, seed=0)
    kp = m.parameter("stiffness")
    assert (kp[:, 1:] == 7.0).all() and kp[:, 0].min() >= 1.0 and kp[:, 0].max() <= 2.0
    assert len(kp[:, 0].unique()) > 20


def test_randomized_parameters_are_used_by_compute():
    m = ag.IdealPDActuatorCfg(stiffness=Uniform(1.0, 2.0)).build(joint_names=["j"], num_envs=8, seed=0)
    out = m.compute(joint_pos=np.zeros((8, 1)), joint_vel=np.zeros((8, 1)), target_pos=np.ones((8, 1)))
    assert torch.equal(out, m.parameter("stiffness").float())
