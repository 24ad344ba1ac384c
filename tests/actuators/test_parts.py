"""Hand-computed cases for every part: drives, clamps, delay."""

import math

import numpy as np
import pytest
import torch

import actuator_gym as ag

BACKENDS = ["numpy", "torch"]


def act(drive, delay=None, clamping=(), n=1, j=1, backend="numpy", **kw):
    return ag.Actuator(drive=drive, delay=delay, clamping=list(clamping), num_envs=n, num_joints=j, seed=0, array_backend=backend, **kw)


def full(v, n=1, j=1):
    return np.full((n, j), v, dtype=np.float32)


# ---- drives ------------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_pd_law(backend):
    m = act(ag.DrivePD(kp=10.0, kd=2.0, const_effort=0.5), backend=backend)
    out = m.compute(joint_pos=full(0.2), joint_vel=full(-1.0), target_pos=full(1.0), target_vel=full(0.5), target_effort=full(3.0))
    # 10*(1-0.2) + 2*(0.5+1) + 3 + 0.5 = 8 + 3 + 3.5
    assert out.item() == pytest.approx(14.5, rel=1e-6)
    assert m.computed_effort.item() == pytest.approx(14.5, rel=1e-6)


def test_pd_missing_targets_are_zero():
    m = act(ag.DrivePD(kp=4.0, kd=1.0))
    out = m.compute(joint_pos=full(0.5), joint_vel=full(2.0))
    assert out.item() == pytest.approx(-4.0 * 0.5 - 2.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_pid_integral_antiwindup_and_reset(backend):
    m = act(ag.DrivePID(kp=1.0, ki=10.0, kd=0.0, integral_max=0.015), n=2, backend=backend)
    q, tq = full(0.0, 2), full(1.0, 2)
    # step 1: integral = 0.01 -> 1 + 10*0.01 = 1.1
    assert m.compute(joint_pos=q, joint_vel=q, target_pos=tq, dt=0.01)[0, 0].item() == pytest.approx(1.1)
    # step 2: integral = min(0.02, 0.015) -> 1 + 0.15
    assert m.compute(joint_pos=q, joint_vel=q, target_pos=tq, dt=0.01)[0, 0].item() == pytest.approx(1.15)
    m.reset(env_ids=[1])
    out = m.compute(joint_pos=q, joint_vel=q, target_pos=tq, dt=0.01)
    assert out[0, 0].item() == pytest.approx(1.15)  # env 0 keeps its (clamped) integral
    assert out[1, 0].item() == pytest.approx(1.1)  # env 1 starts again


def test_pid_needs_dt():
    m = act(ag.DrivePID(kp=1.0, ki=1.0))
    with pytest.raises(ValueError, match="dt"):
        m.compute(joint_pos=full(0.0), joint_vel=full(0.0))


# ---- clamps ------------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_max_effort(backend):
    m = act(ag.DrivePD(kp=1.0), clamping=[ag.ClampingMaxEffort(max_effort=[2.0, 5.0, 1.0])], j=3, backend=backend)
    out = m.compute(joint_pos=np.zeros((1, 3)), joint_vel=np.zeros((1, 3)), target_pos=np.array([[3.0, -3.0, 0.5]]))
    np.testing.assert_allclose(out.numpy(), [[2.0, -3.0, 0.5]])
    np.testing.assert_allclose(m.computed_effort.numpy(), [[3.0, -3.0, 0.5]])


# the spec's 20-point table: effort_limit 60, saturation 100, velocity_limit 50
DC_TABLE = [
    (30, 10, 30), (70, 10, 60), (80, 40, 20), (30, 40, 20), (-20, 90, -60),
    (-30, 10, -30), (-80, 110, -60), (-80, 50, -60), (-120, 90, -60), (-10, 70, -40),
]
DC_TABLE = DC_TABLE + [(-r, -v, -a) for r, v, a in DC_TABLE]


@pytest.mark.parametrize("backend", BACKENDS)
def test_dc_motor_table(backend):
    n = len(DC_TABLE)
    req = np.array([[r] for r, _, _ in DC_TABLE], np.float32)
    vel = np.array([[v] for _, v, _ in DC_TABLE], np.float32)
    want = np.array([[a] for _, _, a in DC_TABLE], np.float32)
    m = act(ag.DrivePD(), clamping=[ag.ClampingDCMotor(saturation_effort=100.0, velocity_limit=50.0, effort_limit=60.0)], n=n, backend=backend)
    out = m.compute(joint_pos=np.zeros((n, 1)), joint_vel=vel, target_effort=req)
    np.testing.assert_allclose(out.numpy(), want, atol=1e-4)
    np.testing.assert_array_equal(m.parameter("velocity_limit").numpy(), np.full((n, 1), 50.0))


def test_dc_motor_consequences():
    dc = [ag.ClampingDCMotor(saturation_effort=100.0, velocity_limit=50.0, effort_limit=60.0)]
    m = act(ag.DrivePD(), clamping=dc, n=4)
    vel = np.array([[0.0], [0.0], [60.0], [500.0]], np.float32)
    req = np.array([[1e3], [-1e3], [0.0], [1e3]], np.float32)
    out = m.compute(joint_pos=np.zeros((4, 1)), joint_vel=vel, target_effort=req).numpy().ravel()
    assert out[0] == pytest.approx(60.0) and out[1] == pytest.approx(-60.0)  # +-min(sat, limit) at rest
    assert out[2] < 0  # above no-load speed a zero command brakes: 100*(1-60/50) = -20
    assert out[2] == pytest.approx(-20.0)
    assert out[3] == pytest.approx(-60.0)  # beyond v_c pinned at -sign(v)*effort_limit


def test_dc_motor_dead_and_infinite_limit():
    m = act(ag.DrivePD(), clamping=[ag.ClampingDCMotor(saturation_effort=[0.0, 10.0], velocity_limit=5.0, effort_limit=math.inf)], j=2)
    out = m.compute(joint_pos=np.zeros((1, 2)), joint_vel=np.array([[1.0, 20.0]]), target_effort=np.array([[7.0, -100.0]]))
    assert out[0, 0].item() == 0.0  # dead motor
    # effort_limit inf -> v_c inf: at v = 20, tau_min = 10*(-1 - 4) = -50
    assert out[0, 1].item() == pytest.approx(-50.0)
    assert torch.isfinite(out).all()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(saturation_effort=-1.0, velocity_limit=5.0), "saturation_effort"),
        (dict(saturation_effort=1.0, velocity_limit=0.0), "velocity_limit"),
        (dict(saturation_effort=math.inf, velocity_limit=5.0), "saturation_effort"),
        (dict(saturation_effort=1.0, velocity_limit=5.0, effort_limit=0.0), "effort_limit"),
    ],
)
def test_dc_motor_invalid(kwargs, match):
    with pytest.raises(ValueError, match=match):
        act(ag.DrivePD(), clamping=[ag.ClampingDCMotor(**kwargs)])


TABLE_X = [-1.5, -1.0, -0.2, -0.2, 0.3, 1.0, 1.2]
TABLE_Y = [2.0, 10.0, 25.0, 15.0, 30.0, 12.0, 4.0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_position_based_interpolation(backend):
    qs = [-3.0, -1.5, -1.25, -0.6, -0.2, -0.1999, 0.0, 1.1, 1.2, 5.0]
    # hand-computed: hold ends, linear inside, left-continuous at the duplicated -0.2
    want = [2.0, 2.0, 6.0, 17.5, 25.0, 15.0 + 15.0 * 0.0001 / 0.5, 15.0 + 15.0 * 0.2 / 0.5, 8.0, 4.0, 4.0]
    n = len(qs)
    m = act(ag.DrivePD(), clamping=[ag.ClampingPositionBased(TABLE_X, TABLE_Y)], n=n, backend=backend)
    q = np.array(qs, np.float32).reshape(n, 1)
    out = m.compute(joint_pos=q, joint_vel=np.zeros((n, 1)), target_effort=np.full((n, 1), 1e3)).numpy().ravel()
    np.testing.assert_allclose(out, want, rtol=1e-5)
    out = m.compute(joint_pos=q, joint_vel=np.zeros((n, 1)), target_effort=np.full((n, 1), -1e3)).numpy().ravel()
    np.testing.assert_allclose(out, -np.array(want), rtol=1e-5)


def test_position_based_single_entry_and_errors():
    m = act(ag.DrivePD(), clamping=[ag.ClampingPositionBased([0.0], [3.0])], n=2)
    out = m.compute(joint_pos=np.array([[-9.0], [9.0]]), joint_vel=np.zeros((2, 1)), target_effort=np.full((2, 1), 10.0))
    np.testing.assert_allclose(out.numpy(), [[3.0], [3.0]])
    with pytest.raises(ValueError, match="non-decreasing"):
        ag.ClampingPositionBased([0.0, -1.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="equal lengths"):
        ag.ClampingPositionBased([0.0, 1.0], [1.0])
    with pytest.raises(ValueError, match=">= 0"):
        ag.ClampingPositionBased([0.0, 1.0], [1.0, -1.0])
    with pytest.raises(ValueError, match="equal lengths >= 1"):
        ag.ClampingPositionBased([], [])


def test_clamps_apply_in_order():
    # DC motor (at rest: +-50) then max effort 20: the tighter wins either way, but the order is observable
    # through a clamp that depends on the previous output only: MaxEffort(20) then DC motor with v beyond
    # no-load speed turns the 20 into the DC bound
    dc = ag.ClampingDCMotor(saturation_effort=50.0, velocity_limit=10.0, effort_limit=40.0)
    me = ag.ClampingMaxEffort(max_effort=20.0)
    m1 = act(ag.DrivePD(), clamping=[dc, me])
    m2 = act(ag.DrivePD(), clamping=[me, dc])
    args = dict(joint_pos=full(0.0), joint_vel=full(12.0), target_effort=full(-100.0))
    # DC bound at v=12: tau_min = max(50*(-1-1.2), -40) = -40; then max effort -> -20
    assert m1.compute(**args).item() == pytest.approx(-20.0)
    assert m2.compute(**args).item() == pytest.approx(-20.0)
    args["target_effort"] = full(100.0)
    # tau_max = min(50*(1-1.2), 40) = -10: DC last -> -10; max-effort last -> -10 as well (within +-20)
    assert m1.compute(**args).item() == pytest.approx(-10.0)
    assert m2.compute(**args).item() == pytest.approx(-10.0)


# ---- delay -------------------------------------------------------------------------------------
def step_delay(m, value, n=1, j=1, channel="pos"):
    kw = {"joint_pos": np.zeros((n, j)), "joint_vel": np.zeros((n, j))}
    key = {"pos": "target_pos", "vel": "target_vel", "eff": "target_effort"}[channel]
    kw[key] = np.full((n, j), value, np.float32)
    return m.compute(**kw).numpy()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("channel, gain", [("pos", dict(kp=1.0)), ("vel", dict(kd=1.0)), ("eff", {})])
def test_delay_all_channels_and_underfilled_history(backend, channel, gain):
    m = act(ag.DrivePD(**gain), delay=ag.Delay(delay_steps=3, max_delay=3), backend=backend)
    outs = [step_delay(m, v, channel=channel).item() for v in [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]]
    # x[max(0, k - 3)]: oldest since reset until the history fills, never zeros
    assert outs == [1.0, 1.0, 1.0, 1.0, 2.0, 3.0]


def test_delay_zero_passes_through_and_history_len():
    m = act(ag.DrivePD(kp=1.0), delay=ag.Delay(min_delay=0, max_delay=0))
    assert [step_delay(m, v).item() for v in (1.0, 2.0, 3.0)] == [1.0, 2.0, 3.0]
    m = act(ag.DrivePD(kp=1.0), delay=ag.Delay(min_delay=2, max_delay=4))
    assert m.delay.history_len == 5


@pytest.mark.parametrize("backend", BACKENDS)
def test_delay_partial_reset_never_uses_pre_reset_data(backend):
    m = act(ag.DrivePD(kp=1.0), delay=ag.Delay(delay_steps=2, max_delay=2), n=2, backend=backend)
    for v in (1.0, 2.0, 3.0, 4.0):
        out = step_delay(m, v, n=2)
    assert out.ravel().tolist() == [2.0, 2.0]
    m.reset(env_ids=[0])
    out = step_delay(m, 10.0, n=2)
    assert out.ravel().tolist() == [10.0, 3.0]  # env 0: oldest since reset = current; env 1 continues
    out = step_delay(m, 11.0, n=2)
    assert out.ravel().tolist() == [10.0, 4.0]
    out = step_delay(m, 12.0, n=2)
    assert out.ravel().tolist() == [10.0, 10.0]
    out = step_delay(m, 13.0, n=2)
    assert out.ravel().tolist() == [11.0, 11.0]


def test_delay_fixed_per_env_joint_lags():
    lags = torch.tensor([[0, 1], [2, 0]])
    m = act(ag.DrivePD(kp=1.0), delay=ag.Delay(delay_steps=lags, max_delay=2), n=2, j=2)
    outs = [step_delay(m, v, n=2, j=2) for v in (1.0, 2.0, 3.0, 4.0)]
    np.testing.assert_array_equal(outs[-1], [[4.0, 3.0], [2.0, 4.0]])
    np.testing.assert_array_equal(m.parameter("delay_steps").numpy(), lags.numpy())


def test_delay_sampled_in_range_per_env_or_joint():
    m = act(ag.DrivePD(kp=1.0), delay=ag.Delay(min_delay=1, max_delay=4), n=200, j=3)
    lags = m.parameter("delay_steps").numpy()
    assert lags.min() >= 1 and lags.max() <= 4 and len(np.unique(lags)) == 4
    assert (lags == lags[:, :1]).all()  # shared by the joints of an env
    m = act(ag.DrivePD(kp=1.0), delay=ag.Delay(min_delay=1, max_delay=4, per_joint=True), n=200, j=3)
    lags = m.parameter("delay_steps").numpy()
    assert not (lags == lags[:, :1]).all()


@pytest.mark.parametrize(
    "kwargs, match, error",
    [
        (dict(min_delay=3, max_delay=2), "min_delay", ValueError),
        (dict(min_delay=-1, max_delay=2), "min_delay", ValueError),
        (dict(min_delay=0, max_delay=1.5), "max_delay", TypeError),  # a float where an integer is expected
        (dict(delay_steps=torch.tensor([[3]]), max_delay=2), "delay_steps", ValueError),
        (dict(delay_steps=torch.tensor([[1]])), "max_delay", ValueError),
    ],
)
def test_delay_validation(kwargs, match, error):
    with pytest.raises(error, match=match):
        ag.Delay(**kwargs)


def test_delay_state_untouched_by_rejected_input():
    m = act(ag.DrivePD(kp=1.0), delay=ag.Delay(delay_steps=1, max_delay=1))
    step_delay(m, 1.0)
    with pytest.raises(ValueError, match="shape"):
        m.compute(joint_pos=np.zeros((2, 1)), joint_vel=np.zeros((1, 1)), target_pos=full(5.0))
    assert step_delay(m, 2.0).item() == 1.0  # the rejected call left no trace in the history


def test_torch_delay_has_no_python_side_state_per_substep():
    """The torch path (GPU devices) keeps the delay's indices on the device, so a captured CUDA graph
    can replay it: two models fed the same commands agree with the numpy path step for step, and the
    Python-side write index never moves on the torch path."""
    lags = torch.tensor([[0, 1, 3], [2, 3, 1]])
    mk = lambda b: act(ag.DrivePD(kp=1.0, kd=0.5), delay=ag.Delay(delay_steps=lags, max_delay=3), n=2, j=3, backend=b)  # noqa: E731
    mn, mt = mk("numpy"), mk("torch")
    assert mt.delay.graph_safe and not mn.delay.graph_safe
    rng = np.random.default_rng(0)
    for step in range(12):
        if step == 6:
            mn.reset(env_ids=[1])
            mt.reset(env_ids=[1])
        tq, tqd = rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal((2, 3)).astype(np.float32)
        a = mn.compute(joint_pos=np.zeros((2, 3)), joint_vel=np.zeros((2, 3)), target_pos=tq, target_vel=tqd)
        b = mt.compute(joint_pos=np.zeros((2, 3)), joint_vel=np.zeros((2, 3)), target_pos=tq, target_vel=tqd)
        assert torch.equal(a, b), step
    assert mt.delay._write == 0 and int(mt.delay._write_t) == 12 % 4


def test_graph_capturable_accepts_torch_delay_and_position_based_clamp():
    from actuator_gym.runtime.substep import graph_capturable

    cfgs = {"legs": ag.RemotizedPDActuatorCfg(stiffness=10.0, min_delay=0, max_delay=2, joint_parameter_lookup=[[-1, 1, 5], [1, 1, 9]])}
    torch_coll = ag.ActuatorCollection(cfgs, joint_names=["a", "b"], num_envs=2, array_backend="torch")
    numpy_coll = ag.ActuatorCollection(cfgs, joint_names=["a", "b"], num_envs=2)
    assert graph_capturable(torch_coll) == (True, "")
    ok, why = graph_capturable(numpy_coll)
    assert not ok and "numpy path" in why
