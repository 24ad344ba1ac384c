"""The hot paths of the per-substep runtime keep the laws' numbers bit for bit: the fused DC-motor
clamp, the one-call clip, the MLP drive's scaled history and gather, and the onnxruntime output
scale (``benchmarks/actuator_step.py`` times them)."""

import math

import numpy as np
import pytest
import torch

import actuator_gym as ag
from actuator_gym.actuators.checkpoints import MLPNet, export_onnx, load_network
from actuator_gym._array import np_clip
from actuator_gym.actuators.clamps import CLIP_UFUNC_MAX, clip_for
from actuator_gym.actuators.onnx_engine import ort_session
from actuator_gym.randomization import Uniform

INF = math.inf


def _same(a, b):
    """Equal element by element (``-0 == 0``), NaN where the other has NaN, and nothing else."""
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


# ---- the clip of both array libraries --------------------------------------------------------------
@pytest.mark.parametrize("lib, size", [("numpy", 1), ("numpy", CLIP_UFUNC_MAX + 1), ("torch", 1)])
def test_clip_is_min_of_max_including_nan_inf_and_crossed_bounds(lib, size):
    """Both forms (numpy's clip ufunc for small outputs, maximum then minimum for large ones and for
    torch) are the reference clamp, element by element, on every combination of special values."""
    vals = np.array([np.nan, -INF, -3.0, -0.0, 0.0, 2.5, INF], np.float32)
    x, lo, hi = (a.ravel() for a in np.meshgrid(vals, vals, vals, indexing="ij"))
    ref = np.minimum(np.maximum(x, lo), hi)  # the reference implementations' clamp (hi where lo > hi)
    assert (lo > hi).any() and np.isnan(ref).any()
    if lib == "numpy":
        out = np.empty_like(x)
        clip = clip_for(np, size)
        assert (clip is np_clip) == (size <= CLIP_UFUNC_MAX)
        clip(x, lo, hi, out)
    else:
        t = torch.empty(x.shape)
        clip_for(torch, size)(*(torch.from_numpy(a) for a in (x, lo, hi)), t)
        out = t.numpy()
    assert _same(out, ref)


# ---- ClampingDCMotor: the fused evaluation equals the formula evaluated operation by operation -----
def _dc_reference(effort, qd, sat, vel, el, dtype):
    """The docstring's formula, one numpy operation at a time in ``dtype``."""
    effort, qd, sat, vel, el = (np.asarray(a, dtype) for a in (effort, qd, sat, vel, el))
    one = dtype(1.0)
    safe = np.where(sat > 0, sat, one)
    vc = np.where(sat > 0, vel * (one + el / safe), vel)
    v = np.minimum(np.maximum(qd, -vc), vc)
    s = (sat / vel) * v
    tau_max = np.minimum(sat - s, el)
    tau_min = np.maximum(-sat - s, -el)
    return np.minimum(np.maximum(effort, tau_min), tau_max)


def _dc_states(rng, n, sat, vel, el, dtype):
    """``(effort, qd)`` ``(n, J)``: random spreads plus the envelope's edges (|qd| = v_c exactly, just
    inside and beyond it, zero of both signs, the no-load speed; efforts at +-effort_limit and the
    stall torque)."""
    j = sat.size
    with np.errstate(divide="ignore", invalid="ignore"):
        vc = np.where(sat > 0, vel * (1 + el / np.where(sat > 0, sat, 1)), vel).astype(dtype)
    span = np.where(np.isfinite(vc), vc, 50.0)
    qd = (rng.uniform(-3, 3, (n, j)) * span).astype(dtype)
    edges_q = np.stack([vc, -vc, np.nextafter(vc, 0), np.nextafter(-vc, 0), np.nextafter(vc, np.inf),
                        np.zeros(j), -np.zeros(j), vel, -vel]).astype(dtype)
    qd[: edges_q.shape[0]] = np.where(np.isfinite(edges_q), edges_q, 1e6)
    lim = np.where(np.isfinite(el), el, 0) + sat
    effort = (rng.uniform(-2, 2, (n, j)) * np.maximum(lim, 1.0)).astype(dtype)
    edges_e = np.stack([el, -el, sat, -sat, np.zeros(j)]).astype(dtype)
    effort[-edges_e.shape[0]:] = np.where(np.isfinite(edges_e), edges_e, 1e9)
    return effort, qd


@pytest.mark.parametrize("n", [16, 64])  # 2 * n * 6 envelope elements: below / above CLIP_UFUNC_MAX
@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_dc_motor_clamp_is_the_formula_bit_for_bit(backend, dtype, n):
    # per joint: a dead motor, an infinite no-load speed, no current limit, a limit below / above the stall torque
    sat = np.array([0.0, 12.0, 33.5, 120.0, 5.0, 3e3])
    vel = np.array([7.5, INF, 21.0, 7.5, 0.3, 40.0])
    el = np.array([4.0, 10.0, INF, 80.0, 9.0, 2.5])
    assert 2 * 16 * sat.size <= CLIP_UFUNC_MAX < 2 * 64 * sat.size
    npdt = np.float32 if dtype == torch.float32 else np.float64
    m = ag.Actuator(drive=ag.DrivePD(kp=0.0, kd=0.0),
                    clamping=[ag.ClampingDCMotor(saturation_effort=list(sat), velocity_limit=list(vel), effort_limit=list(el))],
                    num_envs=n, num_joints=sat.size, dtype=dtype, array_backend=backend, seed=0)
    rng = np.random.default_rng(1)
    for _ in range(3):
        effort, qd = _dc_states(rng, n, sat, vel, el, npdt)
        q = np.zeros_like(qd)
        with np.errstate(over="ignore"):  # |qd| up to the dtype's max (an infinite v_c's neighbour)
            out = m.compute(joint_pos=q, joint_vel=qd, target_effort=effort).numpy()  # kp = kd = 0: computed = effort
            ref = _dc_reference(effort, qd, sat, vel, el, npdt)
        assert _same(m.computed_effort.numpy(), effort)
        assert _same(out, ref) and not np.isnan(out).any()
    assert (out != effort).any() and (out == effort).any()  # the envelope cuts some efforts and passes others


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_dc_motor_clamp_follows_resampled_and_set_parameters(backend):
    """The fused clamp keeps copies of the limits: they follow every re-draw at reset and every
    set_parameter (a stale copy would clamp with old limits)."""
    n, j = 16, 3
    m = ag.Actuator(
        drive=ag.DrivePD(kp=0.0, kd=0.0),
        clamping=[ag.ClampingDCMotor(saturation_effort=30.0, velocity_limit=8.0, effort_limit=20.0)],
        num_envs=n, num_joints=j, seed=3, array_backend=backend,
        randomization={"effort_limit": Uniform(5.0, 25.0), "saturation_effort": Uniform(10.0, 40.0)},
    )
    rng = np.random.default_rng(2)

    def check():
        sat, vel, el = (m.parameter(k).numpy().astype(np.float64) for k in ("saturation_effort", "velocity_limit", "effort_limit"))
        effort, qd = _dc_states(rng, n, sat[0], vel[0], el[0], np.float32)
        effort = (effort * rng.uniform(0.5, 1.5, (n, j))).astype(np.float32)
        out = m.compute(joint_pos=np.zeros_like(qd), joint_vel=qd, target_effort=effort).numpy()
        assert _same(out, _dc_reference(effort, qd, sat, vel, el, np.float32))
        return el

    el0 = check()
    m.reset(torch.tensor([1, 4]))
    el1 = check()
    assert (el1[[1, 4]] != el0[[1, 4]]).all() and (np.delete(el1, [1, 4], 0) == np.delete(el0, [1, 4], 0)).all()
    m.set_parameter("effort_limit", 3.0)
    assert (check() == np.float32(3.0)).all()


# ---- the MLP drive: scaled history, one-take gather, the output scale ------------------------------
def _mlp_file(tmp_path, order, idx):
    torch.manual_seed(0)
    path = tmp_path / f"mlp_{order}_{len(idx)}.onnx"
    export_onnx(MLPNet([2 * len(idx), 16, 16, 1], "softsign"), path, "mlp", {"input_order": order, "input_idx": list(idx)})
    return path


def _mlp_reference(path, rows):
    """The bare network on onnxruntime (one thread) for ``rows`` input rows."""
    net = load_network(path, "mlp")
    session = ort_session(net.onnx_model, str(path), 1)
    feed, fetch = net.module.feed_names[0], net.module.fetch_names[0]
    return lambda x: session.run([fetch], {feed: x})[0]


@pytest.mark.parametrize(
    "order, idx, scales, n",
    [
        ("pos_vel", (0, 2, 4), (1.0, 0.1, 20.0), 2),  # small batch: the indexed one-take gather; pos_scale 1
        ("vel_pos", (0, 1, 3), (0.7, 1.0, 3.0), 2),  # vel_scale 1, the velocity block first
        ("pos_vel", (0, 2, 4), (1.3, 0.05, 7.0), 200),  # 2400 rows: the column-by-column path
    ],
)
def test_mlp_drive_feeds_the_network_the_scaled_history_bit_for_bit(tmp_path, order, idx, scales, n):
    """Every substep the network sees ``[e(t-i) * pos_scale ...] + [qd(t-i) * vel_scale ...]`` in the
    layout's order (zeros before the start and after a reset of that env) and the drive returns its
    output times torque_scale: the actuator's computed effort equals the bare network on rows built
    by hand here, exactly (the same onnxruntime kernels on the same rows)."""
    j = 3
    ps, vs, ts = scales
    path = _mlp_file(tmp_path, order, idx)
    m = ag.Actuator(drive=ag.DriveNeuralMLP(path, pos_scale=ps, vel_scale=vs, torque_scale=ts, onnx_engine="onnxruntime"),
                    num_envs=n, num_joints=j, seed=0)
    assert m.drive.engine == "onnxruntime"
    net = _mlp_reference(path, n * j)
    f32 = np.float32
    h = max(idx) + 1
    hist_e, hist_v = np.zeros((h, n, j), f32), np.zeros((h, n, j), f32)  # newest first
    rng = np.random.default_rng(5)
    for step in range(2 * h + 2):
        if step == h + 1:
            m.reset(torch.tensor([1]))
            hist_e[:, 1] = 0.0
            hist_v[:, 1] = 0.0
        q, qd, tq = (rng.standard_normal((n, j)).astype(f32) for _ in range(3))
        hist_e = np.roll(hist_e, 1, axis=0)
        hist_v = np.roll(hist_v, 1, axis=0)
        hist_e[0], hist_v[0] = tq - q, qd
        e_cols = [(hist_e[i] * f32(ps)).reshape(-1) for i in idx]
        v_cols = [(hist_v[i] * f32(vs)).reshape(-1) for i in idx]
        x = np.stack(e_cols + v_cols if order == "pos_vel" else v_cols + e_cols, axis=1)
        want = net(x).reshape(n, j) * f32(ts)
        got = m.compute(joint_pos=q, joint_vel=qd, target_pos=tq).numpy()
        assert got.dtype == np.float32 and np.array_equal(got, want), f"step {step}"
