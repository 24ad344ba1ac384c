"""Rotor thrust model (ThrusterCfg / Thruster) and the allocation to a body wrench."""

import json
import math

import numpy as np
import pytest
import torch

import actuator_gym as ag
from actuator_gym.actuators import Thruster, ThrusterCfg, allocation_matrix, body_wrench
from conftest import assert_close_rel

BACKENDS = ["numpy", "torch"]
CASES = ["thruster_euler_discrete", "thruster_euler_continuous", "thruster_rk4_discrete", "thruster_rk4_continuous"]


def cfg(**kw):
    base = dict(
        thruster_names_expr=["rotor_.*"],
        thrust_range=(0.0, 10.0),
        thrust_const_range=(0.1, 0.1),
        tau_inc_range=(0.02, 0.02),
        tau_dec_range=(0.005, 0.005),
        torque_to_thrust_ratio=0.07,
        dt=0.01,
    )
    base.update(kw)
    return ThrusterCfg(**base)


ROTORS = ["rotor_0", "rotor_1", "rotor_2", "rotor_3"]


# ---- conformance ----------------------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES)
def test_isaaclab_thruster_traces(case, backend, conformance_dir):
    spec = json.loads((conformance_dir / "isaaclab" / "cases.json").read_text())[case]
    z = np.load(conformance_dir / "isaaclab" / f"{case}.npz")
    model = getattr(ag, spec["config_class"])(**spec["config"]).build(
        rotor_names=spec["rotor_names"], num_envs=spec["num_envs"], seed=0,
        initial_rps=spec["initial_rps"], array_backend=backend,
    )
    model.reset()
    out = [model.compute(target_thrust=z["target_thrust"][t]).numpy() for t in range(spec["steps"])]
    assert_close_rel(np.stack(out), z["applied_thrust"], what=f"{case} applied")
    # the traces command outside thrust_range, so the clip of the command is exercised
    lo, hi = spec["config"]["thrust_range"]
    assert (z["target_thrust"] < lo).any() and (z["target_thrust"] > hi).any()


# ---- hand-computed one step -----------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "scheme,discrete,expected",
    [("euler", True, 0.544444), ("euler", False, 0.9), ("rk4", True, 0.455287), ("rk4", False, 0.66199)],
)
def test_one_step_hand_values(scheme, discrete, expected, backend):
    # k_f 0.1, T 0.1 (w = 1 rps), T_des 2.5 (w_des = 5), tau_inc 0.02, dt 0.01
    m = cfg(integration_scheme=scheme, use_discrete_approximation=discrete).build(
        rotor_names=["rotor_0"], num_envs=1, seed=0, initial_rps=1.0, array_backend=backend
    )
    assert m.computed_thrust.item() == pytest.approx(0.1, rel=1e-6)
    out = m.compute(target_thrust=[[2.5]])
    assert out.item() == pytest.approx(expected, abs=6e-6)
    # closed forms: h = dt * m
    h = 0.01 / (0.01 + 0.02) if discrete else 0.01 / 0.02
    gain = h if scheme == "euler" else 1 - (1 - h + h**2 / 2 - h**3 / 6 + h**4 / 24)
    assert out.item() == pytest.approx(0.1 * (1 + gain * 4) ** 2, rel=1e-6)
    assert m.computed_thrust.item() == out.item() == m.applied_thrust.item()


def test_compute_returns_fresh_tensor_and_clips_output():
    m = cfg(thrust_range=(0.0, 1.0)).build(rotor_names=ROTORS, num_envs=2, seed=0, initial_rps=1.0)
    out = m.compute(target_thrust=torch.full((2, 4), 5.0))
    out.fill_(-1.0)
    assert (m.applied_thrust >= 0).all()
    for _ in range(40):
        out = m.compute(target_thrust=torch.full((2, 4), 5.0))
    # the command is clipped to 1 N, so the rotor converges to 1 N and never above
    assert torch.allclose(out, torch.ones(2, 4), atol=1e-4) and (out <= 1.0).all()


# ---- behaviour ------------------------------------------------------------------------------
def _step_response(tau_inc, tau_dec, backend):
    """env 0 steps up 1 N -> 4 N, env 1 steps down 4 N -> 1 N; fraction of the speed gap after 3 steps."""
    k_f = 0.1
    rps_lo, rps_hi = math.sqrt(1.0 / k_f), math.sqrt(4.0 / k_f)
    m = cfg(tau_inc_range=(tau_inc, tau_inc), tau_dec_range=(tau_dec, tau_dec), dt=0.005).build(
        rotor_names=["rotor_0"], num_envs=2, seed=0, initial_rps=torch.tensor([[rps_lo], [rps_hi]]),
        array_backend=backend,
    )
    for _ in range(3):
        out = m.compute(target_thrust=[[4.0], [1.0]])
    w = torch.sqrt(out[:, 0] / k_f)
    up = (w[0] - rps_lo) / (rps_hi - rps_lo)
    down = (rps_hi - w[1]) / (rps_hi - rps_lo)
    return up.item(), down.item()


@pytest.mark.parametrize("backend", BACKENDS)
def test_asymmetric_response(backend):
    up, down = _step_response(0.05, 0.005, backend)
    assert 0 < up < 0.3 and down > 0.7  # rise is slow (tau_inc), fall is fast (tau_dec)

    # in rotor-speed space the gap shrinks by the RK4 factor p(h) per step, h = dt / (dt + tau)
    def frac(tau):
        h = 0.005 / (0.005 + tau)
        return 1 - (1 - h + h**2 / 2 - h**3 / 6 + h**4 / 24) ** 3

    assert up == pytest.approx(frac(0.05), rel=1e-4) and down == pytest.approx(frac(0.005), rel=1e-4)
    up2, down2 = _step_response(0.005, 0.05, backend)  # swapped constants swap the behaviour
    assert up2 == pytest.approx(down, rel=1e-4) and down2 == pytest.approx(up, rel=1e-4)


@pytest.mark.parametrize("backend", BACKENDS)
def test_start_from_zero_thrust_uses_tau_inc(backend):
    # T == 0 gives s = 0, which is not a fall: tau_inc (0.02), not tau_dec (0.005)
    m = cfg(integration_scheme="euler").build(
        rotor_names=["rotor_0"], num_envs=1, seed=0, initial_rps=0.0, array_backend=backend
    )
    out = m.compute(target_thrust=[[2.5]])  # w 0 -> 5 * dt / (dt + tau_inc) = 5/3 rps
    assert out.item() == pytest.approx(0.1 * (5 / 3) ** 2, rel=1e-6)


@pytest.mark.parametrize("scheme", ["euler", "rk4"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_rate_clamp(scheme, backend):
    # max_thrust_rate acts on the rotor speed: at most 10 rps/s * 0.01 s = 0.1 rps per step
    m = cfg(integration_scheme=scheme, max_thrust_rate=10.0).build(
        rotor_names=ROTORS, num_envs=3, seed=0, initial_rps=2.0, array_backend=backend
    )
    w_prev = torch.full((3, 4), 2.0)
    for _ in range(5):
        out = m.compute(target_thrust=torch.full((3, 4), 9.0))
        w = torch.sqrt(out / 0.1)
        assert torch.allclose(w - w_prev, torch.full((3, 4), 0.1), atol=2e-5)
        w_prev = w
    # and down again, with the same clamp
    out = m.compute(target_thrust=torch.zeros(3, 4))
    assert torch.allclose(w_prev - torch.sqrt(out / 0.1), torch.full((3, 4), 0.1), atol=2e-5)


RANDOM = dict(
    thrust_range=(0.0, 10.0),
    thrust_const_range=(0.05, 0.15),
    tau_inc_range=(0.03, 0.08),
    tau_dec_range=(0.004, 0.01),
)


@pytest.mark.parametrize("backend", BACKENDS)
def test_reset_isolation(backend):
    m = cfg(**RANDOM).build(rotor_names=ROTORS, num_envs=5, seed=3, initial_rps=4.0, array_backend=backend)
    gen = torch.Generator().manual_seed(0)
    for _ in range(7):
        m.compute(target_thrust=torch.rand((5, 4), generator=gen) * 10)
    before = {k: v.clone() for k, v in m.parameters().items()}
    comp, appl = m.computed_thrust.clone(), m.applied_thrust.clone()
    m.reset(env_ids=[2])
    others = [0, 1, 3, 4]
    for k, v in m.parameters().items():
        assert torch.equal(v[others], before[k][others]), k
    assert torch.equal(m.computed_thrust[others], comp[others])
    assert torch.equal(m.applied_thrust[others], appl[others])
    # env 2 re-drew its parameters and restarted at k_f * rps0^2
    for k in ("thrust_const", "tau_inc", "tau_dec"):
        assert not torch.equal(m.parameter(k)[2], before[k][2]), k
    assert torch.allclose(m.computed_thrust[2], m.parameter("thrust_const")[2] * 16.0)
    # the next step of the untouched envs is what it would have been without the reset
    ref = cfg(**RANDOM).build(rotor_names=ROTORS, num_envs=5, seed=3, initial_rps=4.0, array_backend=backend)
    gen = torch.Generator().manual_seed(0)
    for _ in range(7):
        ref.compute(target_thrust=torch.rand((5, 4), generator=gen) * 10)
    x = torch.rand((5, 4), generator=gen) * 10
    assert torch.equal(m.compute(target_thrust=x)[others], ref.compute(target_thrust=x)[others])


def test_sampling_ranges_and_seeded_determinism():
    def run(seed, reseed=None):
        m = cfg(**RANDOM).build(rotor_names=ROTORS, num_envs=64, seed=seed, initial_rps=4.0)
        if reseed is not None:
            m.seed(reseed)
            m.reset()
        gen = torch.Generator().manual_seed(1)
        outs = [m.compute(target_thrust=torch.rand((64, 4), generator=gen) * 10) for _ in range(5)]
        m.reset(env_ids=[0, 5])
        return m, torch.stack(outs)

    a, oa = run(11)
    b, ob = run(11)
    c, oc = run(12)
    for k in ("thrust_const", "tau_inc", "tau_dec"):
        assert torch.equal(a.parameter(k), b.parameter(k))
        assert not torch.equal(a.parameter(k), c.parameter(k))
        v = a.parameter(k)
        assert v.shape == (64, 4)
        lo, hi = RANDOM[k.replace("thrust_const", "thrust_const_range").replace("tau_inc", "tau_inc_range")
                         .replace("tau_dec", "tau_dec_range")]
        assert (v >= lo - 1e-7).all() and (v <= hi + 1e-7).all()
        assert v.std() > 0.2 * (hi - lo) / math.sqrt(12)  # drawn per env and rotor, not constant
        assert not torch.equal(v[:, 0], v[:, 1])
    assert torch.equal(oa, ob) and not torch.equal(oa, oc)
    # seed(s) then reset() fixes everything after it, whatever the construction seed was
    d, od = run(99, reseed=12)
    e, oe = run(5, reseed=12)
    assert torch.equal(od, oe) and not torch.equal(od, oc)
    assert torch.equal(d.parameter("tau_inc"), e.parameter("tau_inc"))


def test_degenerate_ranges_are_constants():
    m = cfg().build(rotor_names=ROTORS, num_envs=3, seed=0, initial_rps=2.0)
    m.reset()
    assert torch.equal(m.parameter("thrust_const"), torch.full((3, 4), 0.1))
    assert torch.equal(m.parameter("tau_dec"), torch.full((3, 4), 0.005))
    with pytest.raises(KeyError, match="thrust_const"):
        m.parameter("kp")


def test_initial_rps_honoured_at_construction_and_reset():
    rps = [1.0, 2.0, 3.0, 4.0]
    m = cfg().build(rotor_names=ROTORS, num_envs=2, seed=0, initial_rps=rps)
    expected = 0.1 * torch.tensor(rps) ** 2
    assert torch.allclose(m.computed_thrust, expected.expand(2, 4))
    assert torch.allclose(m.applied_thrust, expected.expand(2, 4))
    m.compute(target_thrust=torch.full((2, 4), 8.0))
    m.reset()
    assert torch.allclose(m.computed_thrust, expected.expand(2, 4))


def test_initial_thrust_holds_for_every_k_f_drawn():
    """initial_thrust: every rotor starts at that thrust whatever k_f is drawn (initial_rps would give
    k_f * rps², off by the draw); the speed in force is sqrt(T0 / k_f); holding T0 stays at T0."""
    m = cfg(thrust_const_range=(0.05, 0.2)).build(rotor_names=ROTORS, num_envs=3, seed=0, initial_thrust=2.5)
    for _ in range(2):
        kf = m.parameter("thrust_const")
        assert torch.equal(m.computed_thrust, torch.full((3, 4), 2.5)) and torch.equal(m.applied_thrust, m.computed_thrust)
        torch.testing.assert_close(m.parameter("initial_rps"), torch.sqrt(2.5 / kf))
        torch.testing.assert_close(m.compute(torch.full((3, 4), 2.5)), torch.full((3, 4), 2.5))
        m.compute(torch.full((3, 4), 8.0))
        m.reset([0, 2])  # re-drawn k_f, the thrust back at 2.5; env 1 keeps its state
        assert m.computed_thrust[1].gt(2.5).all()
        m.reset()
    with pytest.raises(ValueError, match="one of initial_rps"):
        cfg().build(rotor_names=ROTORS, initial_rps=1.0, initial_thrust=1.0)
    with pytest.raises(ValueError, match="one of initial_rps"):
        cfg().build(rotor_names=ROTORS)
    with pytest.raises(ValueError, match=r"initial_thrust takes values in \[12.0, 12.0\].*thrust_range"):
        cfg().build(rotor_names=ROTORS, initial_thrust=12.0)
    with pytest.raises(ValueError, match="initial_thrust"):
        cfg().build(rotor_names=ROTORS, initial_thrust=-1.0)
    with pytest.raises(ValueError, match="initial_rps follows initial_thrust"):
        m.set_parameter("initial_rps", 3.0)


# ---- robustness -----------------------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_negative_thrust_range_and_kf_range_containing_zero_are_finite(backend):
    m = cfg(thrust_range=(-2.0, 5.0), thrust_const_range=(-0.05, 0.1), tau_inc_range=(0.02, 0.05),
            tau_dec_range=(0.0, 0.01)).build(
        rotor_names=ROTORS, num_envs=16, seed=0, initial_rps=0.0, array_backend=backend
    )
    gen = torch.Generator().manual_seed(2)
    for step in range(60):
        out = m.compute(target_thrust=torch.rand((16, 4), generator=gen) * 12 - 6)
        assert torch.isfinite(out).all() and torch.isfinite(m.computed_thrust).all()
        assert (out >= -2.0).all() and (out <= 5.0).all()
        if step % 10 == 9:
            m.reset(env_ids=torch.arange(0, 16, 2))
            kf = m.parameter("thrust_const")
            assert (kf >= 1e-6).all()
    assert (m.parameter("thrust_const") == np.float32(1e-6)).any()  # the clamp did act


def test_check_finite_names_the_rotor():
    m = cfg().build(rotor_names=ROTORS, num_envs=2, seed=0, initial_rps=1.0, check_finite=True)
    x = torch.ones(2, 4)
    x[1, 2] = float("nan")
    with pytest.raises(ValueError, match="rotor_2"):
        m.compute(target_thrust=x)


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(integration_scheme="rk2"), r"integration_scheme.*rk4.*euler"),
        (dict(thrust_range=(5.0, 1.0)), "thrust_range.*high >= low"),
        (dict(thrust_range=(0.0, math.inf)), "thrust_range.*finite"),
        (dict(tau_inc_range=(float("nan"), 0.1)), "tau_inc_range.*finite"),
        (dict(tau_dec_range=(-0.01, 0.01)), "tau_dec_range.*low >= 0"),
        (dict(tau_inc_range=(0.0, 0.1), use_discrete_approximation=False), "tau_inc_range.*low > 0"),
        (dict(thrust_const_range=(-1.0, 0.0)), "thrust_const_range.*high > 0"),
        (dict(max_thrust_rate=0.0), "max_thrust_rate.*> 0"),
        (dict(torque_to_thrust_ratio=-0.1), "torque_to_thrust_ratio.*>= 0"),
        (dict(dt=0.0), "dt.*> 0"),
        (dict(thruster_names_expr=[]), "thruster_names_expr"),
    ],
)
def test_config_validation(kw, match):
    with pytest.raises(ValueError, match=match):
        cfg(**kw)


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(thrust_const_range=0.1), "thrust_const_range.*pair"),
        (dict(torque_to_thrust_ratio=True), "torque_to_thrust_ratio.*bool"),
        (dict(use_discrete_approximation="yes"), "use_discrete_approximation.*True or False"),
        (dict(thruster_names_expr=[1]), "thruster_names_expr"),
    ],
)
def test_config_type_errors(kw, match):
    with pytest.raises(TypeError, match=match):
        cfg(**kw)


def test_build_validation():
    with pytest.raises(ValueError, match="initial thrust.*thrust_range"):
        cfg(thrust_range=(0.5, 10.0)).build(rotor_names=ROTORS, initial_rps=1.0)  # 0.1 N < 0.5 N
    with pytest.raises(ValueError, match="initial thrust.*thrust_range"):
        cfg(thrust_range=(-5.0, -1.0)).build(rotor_names=ROTORS, initial_rps=0.0)
    with pytest.raises(ValueError, match="initial_rps"):
        cfg().build(rotor_names=ROTORS, initial_rps=-1.0)
    with pytest.raises(ValueError, match="dt"):
        cfg(dt=None).build(rotor_names=ROTORS, initial_rps=1.0)
    with pytest.raises(ValueError, match="matches none"):
        cfg().build(rotor_names=["prop_a"], initial_rps=1.0)
    m = cfg(dt=None).build(rotor_names=ROTORS + ["camera"], num_envs=2, initial_rps=1.0, dt=0.01)
    assert m.rotor_names == tuple(ROTORS) and m.dt == 0.01
    with pytest.raises(ValueError, match=r"target_thrust.*\(2, 4\)"):
        m.compute(target_thrust=torch.zeros(2, 3))
    with pytest.raises(ValueError, match="env_ids"):
        m.reset(env_ids=[5])


# ---- allocation -----------------------------------------------------------------------------
def test_yaw_torque_sign_from_spin_direction():
    ratio = 0.07
    for spin in (1.0, -1.0):
        a = allocation_matrix([[0.0, 0.0, 0.0]], [spin], ratio)
        w = body_wrench(a, torch.tensor([[2.0]]))
        # +1: clockwise rotor seen from above -> counter-clockwise (positive) yaw on the airframe
        assert w[0, 5].item() == pytest.approx(spin * ratio * 2.0)
        assert w[0, :5].tolist() == pytest.approx([0.0, 0.0, 2.0, 0.0, 0.0])


def test_quad_x_allocation():
    l, ratio = 0.2, 0.05
    pos = [[l, l, 0], [-l, -l, 0], [l, -l, 0], [-l, l, 0]]
    spin = [1, 1, -1, -1]  # diagonal pairs share a spin direction
    A = allocation_matrix(pos, spin, ratio)
    assert A.shape == (6, 4) and A.dtype == torch.float32
    # column by column: force a = +z; torque r x z = (y, -x, 0) plus s * ratio * z
    expected = torch.tensor([
        [0, 0, 0, 0], [0, 0, 0, 0], [1, 1, 1, 1],
        [l, -l, -l, l], [-l, l, -l, l], [ratio, ratio, -ratio, -ratio],
    ], dtype=torch.float32)
    assert torch.allclose(A, expected)
    thrust = torch.tensor([[1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 1.0, 1.0], [1.0, 1.0, 1.0, 3.0]])
    w = body_wrench(A, thrust)
    assert w.shape == (3, 6)
    assert torch.allclose(w[0], torch.tensor([0, 0, 4.0, 0, 0, 0]))  # hover: pure lift
    assert w[1, 5] > 0 and torch.allclose(w[1, 3:5], torch.zeros(2))  # spin +1 pair faster -> +yaw
    # rotor at (-l, +l) pushing harder: roll +, pitch +, yaw - (its spin is -1)
    assert w[2, 3] > 0 and w[2, 4] > 0 and w[2, 5] < 0
    assert torch.allclose(w, thrust @ expected.T)


def test_allocation_axes_and_validation():
    A = allocation_matrix([[0.0, 0.5, 0.0]], [1], 0.1, axes=[[2.0, 0.0, 0.0]], dtype=torch.float64)
    # axis normalized to +x; r x a = (0, 0.5, 0) x (1, 0, 0) = (0, 0, -0.5); reaction 0.1 along +x
    assert A[:, 0].tolist() == pytest.approx([1.0, 0.0, 0.0, 0.1, 0.0, -0.5])
    with pytest.raises(ValueError, match="spin_directions.*\\+1 or -1"):
        allocation_matrix([[0, 0, 0]], [0.5], 0.1)
    with pytest.raises(ValueError, match="positions"):
        allocation_matrix([[0, 0]], [1], 0.1)
    with pytest.raises(ValueError, match="axes"):
        allocation_matrix([[0, 0, 0]], [1], 0.1, axes=[[0, 0, 0]])
    with pytest.raises(ValueError, match="body_wrench: thrust"):
        body_wrench(torch.zeros(6, 4), torch.zeros(2, 3))
