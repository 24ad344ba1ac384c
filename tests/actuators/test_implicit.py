"""Implicit (Stable-PD) effort mode: closed form, Newton traces, options, PID, errors, MuJoCo stability."""

import json

import numpy as np
import pytest
import torch

import actuator_gym as ag
from actuator_gym.actuators.implicit import ImplicitOptions
from actuator_gym.actuators.implicit_la import NumpyLA, TorchLA
from conftest import assert_close_rel


def _pd(kp, kd, n=1, j=1, clamps=(), **kw):
    return ag.Actuator(drive=ag.DrivePD(kp=kp, kd=kd), clamping=list(clamps), num_envs=n, num_joints=j, effort_mode="implicit", **kw)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_closed_form_scalar(backend):
    # spec: kp 1e4, kd 10, A 3.846 (= 1/0.26), e 1, q = qd = 0, h 0.01 -> 1911.76
    m = _pd(1e4, 10.0, array_backend=backend)
    out = m.compute(joint_pos=[[0.0]], joint_vel=[[0.0]], target_pos=[[1.0]], dt=0.01, inverse_mass=[[[1 / 0.26]]])
    assert out.item() == pytest.approx(1911.76, abs=0.01)
    # explicit would give kp * e = 1e4; the computed (law at the predicted state) equals applied without clamps
    assert m.computed_effort.item() == pytest.approx(out.item(), rel=1e-6)


def test_closed_form_coupled_matches_linear_solve():
    g = torch.Generator().manual_seed(3)
    n, j, h = 5, 3, 0.005
    L = torch.randn(n, j, j, generator=g, dtype=torch.float64)
    A = L @ L.transpose(1, 2) + 0.5 * torch.eye(j, dtype=torch.float64)
    kp, kd = torch.rand(n, j, generator=g, dtype=torch.float64) * 3000, torch.rand(n, j, generator=g, dtype=torch.float64) * 20
    q, qd, tq, tqd, ff, b = (torch.randn(n, j, generator=g, dtype=torch.float64) for _ in range(6))
    m = ag.Actuator(drive=ag.DrivePD(kp=kp, kd=kd), num_envs=n, num_joints=j, effort_mode="implicit", dtype=torch.float64)
    out = m.compute(joint_pos=q, joint_vel=qd, target_pos=tq, target_vel=tqd, target_effort=ff, dt=h, inverse_mass=A, bias_force=b)
    v0 = qd - h * (A @ b.unsqueeze(-1)).squeeze(-1)
    f0 = kp * (tq - q - h * v0) + kd * (tqd - v0) + ff
    M = torch.eye(j, dtype=torch.float64) + h * (h * kp + kd).unsqueeze(-1) * A
    expect = torch.linalg.solve(M, f0.unsqueeze(-1)).squeeze(-1)
    assert torch.allclose(out, expect, rtol=1e-9, atol=1e-9)


def _newton_model(z, backend):
    lane = lambda k: torch.as_tensor(z[k].astype(np.float64)).reshape(16, 4)  # noqa: E731
    drive = ag.DrivePD(kp=lane("param_kp"), kd=lane("param_kd"), const_effort=lane("param_const_effort"))
    if "param_clamp0_max_effort" in z.files:
        clamps = [ag.ClampingMaxEffort(max_effort=lane("param_clamp0_max_effort"))]
    else:
        clamps = [
            ag.ClampingDCMotor(
                saturation_effort=lane("param_clamp0_saturation_effort"),
                velocity_limit=lane("param_clamp0_velocity_limit"),
                effort_limit=lane("param_clamp0_max_motor_effort"),
            )
        ]
    return ag.Actuator(drive=drive, clamping=clamps, num_envs=16, num_joints=4, effort_mode="implicit", array_backend=backend)


def _replay(case, conformance_dir, backend, dt=0.005, options=None):
    z = np.load(conformance_dir / "newton" / f"{case}.npz")
    m = _newton_model(z, backend)
    if options is not None:
        m.implicit_options = options
    comp, appl = [], []
    for t in range(z["in_joint_q"].shape[0]):
        g = lambda k: z[k][t].reshape(16, 4)  # noqa: E731  world a, DOF i -> env a, joint i
        out = m.compute(
            joint_pos=g("in_joint_q"),
            joint_vel=g("in_joint_qd"),
            target_pos=g("in_joint_target_q"),
            target_vel=g("in_joint_target_qd"),
            target_effort=g("in_joint_act"),
            dt=dt,
            inverse_mass=z["in_inverse_blocks"][t],
            bias_force=g("in_bias_force") if "in_bias_force" in z.files else None,
        )
        comp.append(m.computed_effort.clone().numpy().ravel())
        appl.append(out.numpy().ravel())
    return z, np.stack(comp), np.stack(appl)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_newton_implicit_maxeffort_chain(backend, conformance_dir):
    z, comp, appl = _replay("implicit_pd_maxeffort_chain", conformance_dir, backend)
    assert_close_rel(comp, z["out_lane_computed"], what="computed")
    assert_close_rel(appl, z["out_lane_applied"], what="applied")
    # implicit differs from explicit on the same inputs (the mode matters in this trace)
    assert np.abs(appl - z["ref_explicit_applied_same_inputs"]).max() > 1.0


def _residual(z, comp):
    """|p/h - g(p)| per (step, world) for a solution given by its computed effort: the PD law at the
    predicted state is affine in qd(p), so qd(p) and p are recovered from it; g = DC-motor clamp
    (spec formula) of the law at the predicted state. Zero when the solve converged."""
    f = lambda k: z[k].astype(np.float64)  # noqa: E731
    kp, kd, ce, h = f("param_kp"), f("param_kd"), f("param_const_effort"), 0.005
    q, qd, tq, tqd, ff = (f(k) for k in ("in_joint_q", "in_joint_qd", "in_joint_target_q", "in_joint_target_qd", "in_joint_act"))
    comp = comp.astype(np.float64)
    v = (kp * (tq - q) + kd * tqd + ff + ce - comp) / (kp * h + kd)
    A, T = f("in_inverse_blocks"), q.shape[0]
    v0 = qd.reshape(T, 16, 4) - h * np.einsum("tnij,tnj->tni", A, f("in_bias_force").reshape(T, 16, 4))
    p = np.linalg.solve(A, (v.reshape(T, 16, 4) - v0)[..., None])[..., 0].reshape(T, 64)
    sat, vl, el = f("param_clamp0_saturation_effort"), f("param_clamp0_velocity_limit"), f("param_clamp0_max_motor_effort")
    vc = vl * (1 + el / sat)
    vv = np.clip(v, -vc, vc)
    g = np.minimum(np.maximum(comp, np.maximum(sat * (-1 - vv / vl), -el)), np.minimum(sat * (1 - vv / vl), el))
    return np.abs(p / h - g).reshape(T, 16, 4).max(-1)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_newton_implicit_dcmotor_bias_chain(backend, conformance_dir):
    """Every one of the 3200 (step, world) solves, computed and applied, to 2e-5 -- including the 21
    where Newton stops at its 8-iteration cap unconverged (its output violates r(p) = 0 there by up
    to ~140 N·m): we run the same algorithm (ImplicitOptions defaults), so we stop at the same
    iterate. The remaining ~2e-6 is Newton rounding h and the tolerances to float32 (next test)."""
    z, comp, appl = _replay("implicit_pd_dcmotor_bias_chain", conformance_dir, backend)
    assert comp.shape == appl.shape == (200, 64)
    assert_close_rel(comp, z["out_lane_computed"], what="computed")
    assert_close_rel(appl, z["out_lane_applied"], what="applied")
    ref_unconverged = _residual(z, z["out_lane_computed"]) > 0.05  # [N·m]; float32 outputs
    assert 15 <= ref_unconverged.sum() <= 30  # the trace exercises the cap
    assert np.array_equal(_residual(z, comp) > 0.05, ref_unconverged)  # unconverged exactly where Newton is
    assert (np.abs(z["out_lane_applied"] - z["out_lane_computed"]) > 1).mean() > 0.5  # clamp mostly active


def test_newton_implicit_dcmotor_bias_chain_float32_constants(conformance_dir):
    """Newton's kernel takes h, the tolerances and fd_epsilon as float32 arguments (then widens them
    to float64). Given those rounded values, our solve reproduces all 3200 solves to one float32 ulp
    (computed: bit for bit): the algorithm -- slopes, pivots, stop tests, line search, cap -- is the
    same step for step. (One applied value is -5.6e-15 where Newton has 0: a DC-motor limit that is 0
    in exact arithmetic; ours evaluates it as sat - (sat / vl) v, Newton as sat (1 - v / vl).)"""
    f32 = lambda x: float(np.float32(x))  # noqa: E731
    opts = ImplicitOptions(residual_tol=f32(1e-5), update_tol=f32(1e-5), fd_epsilon=f32(1e-4))
    z, comp, appl = _replay("implicit_pd_dcmotor_bias_chain", conformance_dir, "numpy", dt=f32(0.005), options=opts)
    for ours, key in ((comp, "out_lane_computed"), (appl, "out_lane_applied")):
        ref = z[key]
        assert (np.abs(ours.astype(np.float64) - ref) <= np.maximum(np.spacing(np.abs(ref)), 1e-12)).all(), key
    assert np.array_equal(comp, z["out_lane_computed"])


def test_implicit_options_defaults_match_newton_manifest(conformance_dir):
    manifest = json.loads((conformance_dir / "newton" / "manifest.json").read_text())
    for case in ("implicit_pd_dcmotor_bias_chain", "implicit_pd_maxeffort_chain"):
        newton = manifest["cases"][case]["params"]["implicit_options"]
        ours = ImplicitOptions()
        assert {k: getattr(ours, k) for k in newton} == newton


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(max_iters=-1), "max_iters must be an integer >= 0"),
        (dict(max_iters=2.5), "max_iters"),
        (dict(ls_iterations=-2), "ls_iterations must be an integer >= 0"),
        (dict(residual_tol=-1e-3), "residual_tol must be a finite number >= 0"),
        (dict(update_tol=float("nan")), "update_tol"),
        (dict(fd_epsilon=0.0), "fd_epsilon must be a finite number > 0"),
        (dict(derivative_floor=0.0), "derivative_floor must be a finite number > 0"),
        (dict(warm_start="implicit"), "warm_start must be one of"),
    ],
)
def test_implicit_options_validation(kw, match):
    with pytest.raises(ValueError, match=match):
        ImplicitOptions(**kw)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_implicit_options_change_the_solve(backend):
    h, A, kp, kd = 0.01, 1 / 0.26, 1e4, 10.0
    kw = dict(joint_pos=[[0.0]], joint_vel=[[0.0]], target_pos=[[1.0]], dt=h, inverse_mass=[[[A]]])
    # max_iters 0: the warm start, i.e. the explicit impulse; computed = law at its predicted state
    m = _pd(kp, kd, array_backend=backend)
    m.implicit_options = ImplicitOptions(max_iters=0)
    assert m.compute(**kw).item() == pytest.approx(kp)
    v = A * h * kp
    assert m.computed_effort.item() == pytest.approx(kp * (1 - h * v) - kd * v, rel=1e-6)
    # zero warm start: a linear law still converges to the closed form in one step
    m = _pd(kp, kd, array_backend=backend)
    m.implicit_options = ImplicitOptions(warm_start="zero")
    assert m.compute(**kw).item() == pytest.approx(1911.76, abs=0.01)
    with pytest.raises(TypeError, match="ImplicitOptions"):
        m.implicit_options = {"max_iters": 3}
        m.compute(**kw)


@pytest.mark.parametrize("la_cls", [NumpyLA, TorchLA])
def test_newton_step_floors_pivots_without_row_exchanges(la_cls):
    """Jacobian I - h diag(s) A = [[0, 1], [0, 1]] (h 1, s 1, A = [[1, -1], [0, 0]]): exactly singular.
    Elimination without exchanges floors pivot 0 to 1e-8: dp1 = -r1, dp0 = (r1 - r0) / 1e-8."""
    la = la_cls(1, 2, torch.device("cpu"))
    lib = torch if la_cls is TorchLA else np
    conv = lambda x: lib.asarray(x, dtype=lib.float64)  # noqa: E731
    A, s, r = conv([[[1.0, -1.0], [0.0, 0.0]]]), conv([[1.0, 1.0]]), conv([[1.0, 0.5]])
    dp = la.eliminate(A, s, r, 1.0, 1e-8)
    assert np.allclose(np.asarray(dp), [[-0.5e8, -0.5]], rtol=1e-12)
    assert not la.sync(la.positive_definite(A))[0]  # so the solve never takes the library path here
    if la_cls is NumpyLA:
        assert np.allclose(la.newton_step(A, s, r, 1.0, 1e-8, False)[0], [[-0.5e8, -0.5]], rtol=1e-12)
        # one joint: 1 - h s A = -1e-12 -> pivot -1e-8 (sign kept)
        one = NumpyLA(1, 1, torch.device("cpu"))
        dp1, _ = one.newton_step(np.array([[1.0]]), np.array([[1.0 + 1e-12]]), np.array([[2.0]]), 1.0, 1e-8, False)
        assert dp1.item() == pytest.approx(2e8)


def test_library_solve_equals_elimination_when_pivots_are_safe():
    """A + A^T positive definite (A itself not symmetric) and slopes <= 0: every pivot without row
    exchanges is >= 1 (proof in the module doc), so the library solve is the same step."""
    rng = np.random.default_rng(7)
    n, j = 50, 6
    L = rng.standard_normal((n, j, j))
    K = rng.standard_normal((n, j, j))
    A = L @ L.transpose(0, 2, 1) + 0.1 * np.eye(j) + (K - K.transpose(0, 2, 1))
    s = -rng.random((n, j)) * 10.0 ** rng.uniform(-2, 5, (n, j))
    r = rng.standard_normal((n, j))
    la = NumpyLA(n, j, torch.device("cpu"))
    assert la.positive_definite(A)
    fast, _ = la.newton_step(A, s, r, 0.005, 1e-8, True)
    slow = la.eliminate(A, s, r, 0.005, 1e-8)
    assert np.allclose(fast, slow, rtol=1e-9, atol=1e-12)
    jac = np.eye(j) - 0.005 * s[:, :, None] * A
    assert np.allclose(np.einsum("nij,nj->ni", jac, slow), -r, atol=1e-9)


def _pid_steps(options, backend="numpy", **gains):
    """Two substeps of a one-joint implicit PID: ``(outputs, computed, integrals)``."""
    m = ag.Actuator(drive=ag.DrivePID(**gains), num_envs=1, num_joints=1, effort_mode="implicit", array_backend=backend)
    if options is not None:
        m.implicit_options = options
    outs, comps, integ = [], [], []
    for q, qd in ((0.0, 0.0), (0.1, 0.5)):
        outs.append(m.compute(joint_pos=[[q]], joint_vel=[[qd]], target_pos=[[1.0]], dt=0.01, inverse_mass=[[[2.0]]]).item())
        comps.append(m.computed_effort.item())
        integ.append(m.drive.integral_t.item())
    return outs, comps, integ


@pytest.mark.parametrize("options,backend", [(None, "numpy"), (ImplicitOptions(pid_integral_error="current"), "torch")])
def test_pid_implicit_newton_holds_ki_integral_advanced_with_current_error(options, backend):
    # Newton 1.8 DrivePID.prepare_implicit: I = clip(I + (q* - q) h, +-integral_max) before the solve,
    # then the PD solve with const = ki I held: tau = (kp (e - h qd) - kd qd + ki I) / (1 + (kp h + kd) A h)
    h, A, kp, ki, kd, imax = 0.01, 2.0, 500.0, 100.0, 5.0, 0.015
    outs, comps, integ = _pid_steps(options, backend, kp=kp, ki=ki, kd=kd, integral_max=imax)
    i1 = 1.0 * h  # step 1: e = 1
    i2 = min(i1 + 0.9 * h, imax)  # step 2: e = 0.9; 0.019 clamps at 0.015
    assert integ == pytest.approx([i1, i2], rel=1e-6)
    for k, (q, qd, i) in enumerate(((0.0, 0.0, i1), (0.1, 0.5, i2))):
        tau = (kp * (1.0 - q - h * qd) - kd * qd + ki * i) / (1 + (kp * h + kd) * A * h)
        assert outs[k] == pytest.approx(tau, rel=1e-5)
        assert comps[k] == pytest.approx(tau, rel=1e-5)  # no clamp: the law at the solution


def test_pid_implicit_predicted_error_option():
    # the integral advances inside the solve with e' = q* - q - h v(p), v(p) = qd + A p:
    # tau = (kp (e - h qd) - kd qd + ki (I0 + (e - h qd) h)) / (1 + (kp h + kd + ki h^2) A h)
    h, A, kp, ki, kd = 0.01, 2.0, 500.0, 100.0, 5.0
    outs, comps, integ = _pid_steps(ImplicitOptions(pid_integral_error="predicted"), kp=kp, ki=ki, kd=kd)
    i0 = 0.0
    for k, (q, qd) in enumerate(((0.0, 0.0), (0.1, 0.5))):
        e = 1.0 - q - h * qd
        tau = (kp * e - kd * qd + ki * (i0 + e * h)) / (1 + (kp * h + kd + ki * h * h) * A * h)
        assert outs[k] == pytest.approx(tau, rel=1e-5)
        assert comps[k] == pytest.approx(tau, rel=1e-5)
        i0 += (e - h * A * h * tau) * h  # the integral at the predicted state
        assert integ[k] == pytest.approx(i0, rel=1e-5)
    newton, _, newton_integ = _pid_steps(None, kp=kp, ki=ki, kd=kd)
    assert outs[0] != pytest.approx(newton[0], rel=1e-4)  # the two modes differ (by ki h^2 A h / ...: 1.7e-4)
    assert newton_integ[0] == pytest.approx(h, rel=1e-6)


def test_pid_integral_error_option_validation():
    with pytest.raises(ValueError, match="pid_integral_error must be one of"):
        ImplicitOptions(pid_integral_error="next")


def test_clamp_chain_and_reset_isolation():
    m = _pd(1e4, 10.0, n=2, clamps=[ag.ClampingMaxEffort(max_effort=50.0)])
    out = m.compute(joint_pos=[[0.0], [0.0]], joint_vel=[[0.0], [0.0]], target_pos=[[1.0], [0.001]], dt=0.01, inverse_mass=np.full((2, 1, 1), 1 / 0.26))
    assert out[0].item() == pytest.approx(50.0)  # saturated: applied = clamp, computed > 50
    assert m.computed_effort[0].item() > 50.0
    assert abs(out[1].item()) < 50.0


def test_errors():
    m = _pd(100.0, 1.0)
    with pytest.raises(ValueError, match="inverse_mass"):
        m.compute(joint_pos=[[0.0]], joint_vel=[[0.0]], dt=0.01)
    with pytest.raises(ValueError, match="dt"):
        m.compute(joint_pos=[[0.0]], joint_vel=[[0.0]], inverse_mass=[[[1.0]]])
    with pytest.raises(ValueError, match=r"inverse_mass must have shape \(1, 1, 1\)"):
        m.compute(joint_pos=[[0.0]], joint_vel=[[0.0]], dt=0.01, inverse_mass=np.ones((2, 1, 1)))
    net = torch.nn.Sequential(torch.nn.Linear(2, 1))
    for error in (ValueError, NotImplementedError):  # ours and Newton's type: ported code catches either
        with pytest.raises(error, match="implicit"):  # refused at construction, not at the first compute
            ag.Actuator(drive=ag.DriveNeuralMLP(network=net, input_order="pos_vel", input_idx=[0]), num_joints=1, effort_mode="implicit")


PENDULUM = """
<mujoco model="stiff_pendulum">
  <option timestep="0.01" gravity="0 0 -9.81" integrator="Euler"/>
  <worldbody>
    <body name="link" pos="0 0 1">
      <joint name="hinge" type="hinge" axis="0 1 0" armature="0.01"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.02" mass="1"/>
    </body>
  </worldbody>
</mujoco>
"""


def _run_pendulum(mode, steps=300):
    import mujoco
    from actuator_gym.backends.mujoco_dynamics import joint_space_dynamics

    model = mujoco.MjModel.from_xml_string(PENDULUM)
    data = mujoco.MjData(model)
    h = model.opt.timestep
    act = ag.Actuator(drive=ag.DrivePD(kp=2e5, kd=20.0), effort_mode=mode, joint_names=["hinge"])
    worst = 0.0
    for _ in range(steps):
        mujoco.mj_forward(model, data)
        kw = {}
        if mode == "implicit":
            A, b = joint_space_dynamics(model, data, ["hinge"])
            kw = dict(inverse_mass=A[None], bias_force=b[None])
        tau = act.compute(joint_pos=data.qpos[None, :1], joint_vel=data.qvel[None, :1], target_pos=[[0.5]], dt=h, **kw)
        data.qfrc_applied[0] = float(tau)
        mujoco.mj_step(model, data)
        worst = max(worst, abs(float(data.qpos[0])))
        if not np.isfinite(worst) or worst > 100:
            return float("inf"), float(data.qpos[0])
    return worst, float(data.qpos[0])


def test_mujoco_stiff_pendulum_explicit_diverges_implicit_stable():
    # omega * h = sqrt(2e5 / 0.093) * 0.01 ~ 14.7 >> 2: explicit PD is unstable at this substep
    worst_exp, _ = _run_pendulum("explicit")
    worst_imp, final = _run_pendulum("implicit")
    assert worst_exp == float("inf")
    assert worst_imp < 0.6 and final == pytest.approx(0.5, abs=1e-3)


def test_implicit_options_from_a_config_field_and_yaml_style_dict():
    import actuator_gym as ag
    from actuator_gym.actuators.implicit import ImplicitOptions

    cfg = ag.IdealPDActuatorCfg(stiffness=1e4, damping=10.0, effort_mode="implicit", implicit_options={"max_iters": 0})
    m = cfg.build(joint_names=["j"])
    assert m.implicit_options == ImplicitOptions(max_iters=0)
    # max_iters=0 returns the (clamped) explicit warm start: kp * e = 1e4
    out = m.compute(joint_pos=[[0.0]], joint_vel=[[0.0]], target_pos=[[1.0]], dt=0.01, inverse_mass=np.full((1, 1, 1), 3.846))
    assert out.item() == pytest.approx(1e4, rel=1e-6)
    default = ag.IdealPDActuatorCfg(stiffness=1e4, damping=10.0, effort_mode="implicit").build(joint_names=["j"])
    out = default.compute(joint_pos=[[0.0]], joint_vel=[[0.0]], target_pos=[[1.0]], dt=0.01, inverse_mass=np.full((1, 1, 1), 1 / 0.26))
    assert out.item() == pytest.approx(1911.76, abs=0.01)
    with pytest.raises(TypeError, match="implicit_options.*unexpected keyword argument 'max_iter'"):
        ag.IdealPDActuatorCfg(effort_mode="implicit", implicit_options={"max_iter": 3}).build(joint_names=["j"])
    with pytest.raises(ValueError, match="max_iters"):
        ag.IdealPDActuatorCfg(effort_mode="implicit", implicit_options={"max_iters": -1}).build(joint_names=["j"])
