"""Property-based tests of the runtime's value rules (docs/runtime.md, "Value rules").

For any input -- valid values, NaN, +-inf, values beyond float32, negative values, wrong types,
wrong shapes, distributions with any arguments -- a named config, a part or a distribution
either refuses it with a one-line ``ValueError`` / ``TypeError``, or builds a model whose efforts,
on random finite states and across resets, are never NaN, stay finite (for parameters of a
physical magnitude) and stay within the documented bounds: ``|applied| <= max_effort``, the
DC-motor torque-speed envelope, the position-based limit, delays of ``x[max(0, k - L)]`` with
``L`` in ``[min_delay, max_delay]``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import actuator_gym as ag  # noqa: E402
from actuator_gym import randomization as rnd  # noqa: E402
from actuator_gym.randomization.streams import EnvStreams  # noqa: E402

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
MANY = settings(SETTINGS, max_examples=150)
JOINTS = ["j0", "j1", "j2"]
N = 3
PHYSICAL = 1e6
"""Parameters up to this magnitude are 'physical': with states up to 1e3 every product fits float32."""
F32_MAX = float(np.finfo(np.float32).max)

# ---- strategies --------------------------------------------------------------------------------
def rarely(draw) -> bool:
    """True about one time in ten (hypothesis favours the first element of a sampled_from)."""
    return draw(st.sampled_from([False] * 9 + [True]))


physical = st.floats(min_value=0.0, max_value=PHYSICAL, allow_nan=False, allow_infinity=False)
special = st.sampled_from([math.inf, -math.inf, math.nan, 1e39, 3e38, -1.0, -1e-9, 0.0, 1e-50, 2**1100])
any_float = st.one_of(physical, physical, physical, special, st.floats())
wrong_type = st.sampled_from(["1.0", True, 1 + 2j, object(), {"j0": "x"}, np.array(["a", "b", "c"]), np.array([1 + 1j, 0, 0]),
                              [1.0, 2.0], [[1.0]], torch.ones(3, dtype=torch.complex64)])


@st.composite
def distributions(draw):
    """Any distribution arguments (mostly sensible ones, some not)."""
    cls = draw(st.sampled_from([rnd.Uniform, rnd.LogUniform, rnd.Gaussian, rnd.IntUniform, rnd.IntGaussian]))
    if not (rarely(draw) or rarely(draw)):
        a, b = draw(st.floats(0.1, 2.0)), draw(st.floats(2.0, 4.0))
        if cls in (rnd.IntUniform, rnd.IntGaussian):
            a, b = draw(st.integers(0, 2)), draw(st.integers(2, 4))
        elif cls is rnd.Gaussian:
            a, b = draw(st.floats(5.0, 10.0)), draw(st.floats(0.0, 1.0))
        op = draw(st.sampled_from(["abs", "scale", "add"]))
        return lambda: cls(a, b, operation=op, per_joint=draw(st.booleans()))
    a = draw(st.one_of(st.floats(min_value=-10, max_value=10), special, st.integers(-5, 5)))
    b = draw(st.one_of(st.floats(min_value=0, max_value=20), special, st.integers(0, 8)))
    op = draw(st.sampled_from(["abs", "abs", "scale", "add", "mul"]))
    per_joint = draw(st.sampled_from([False, True, "yes"]))
    nominal = draw(st.one_of(st.none(), physical, special))
    return lambda: cls(a, b, operation=op, per_joint=per_joint, nominal=nominal)


def values(draw, limit=False, positive=False):
    """A raw parameter value, as a factory (so refusals at construction are caught where expected):
    mostly valid (a physical number, +inf for a limit, a per-joint list, a dict, a distribution),
    sometimes not (NaN, +-inf, 1e39, negative, huge ints, wrong types and shapes, bad distributions)."""
    kind = "bad" if rarely(draw) else draw(st.sampled_from(["number"] * 8 + ["inf"] * (2 if limit else 0) + ["list", "dict", "dist"]))
    number = st.floats(min_value=1e-3, max_value=PHYSICAL) if positive else physical
    if kind == "number":
        v = draw(number)
        return lambda: v
    if kind == "inf":
        return lambda: math.inf
    if kind == "list":
        v = draw(st.lists(number, min_size=len(JOINTS), max_size=len(JOINTS)))
        return lambda: list(v)
    if kind == "dict":
        v, w = draw(number), draw(number)
        return lambda: {"j0|j1": v, "j2": w}
    if kind == "dist":
        return draw(distributions())
    bad = draw(st.sampled_from(["special", "float", "wrong", "list"]))
    if bad == "special":
        v = draw(special)
    elif bad == "float":
        v = draw(st.floats())
    elif bad == "wrong":
        v = draw(wrong_type)
    else:
        v = draw(st.lists(any_float, min_size=1, max_size=4))
    return lambda: v


# ---- checks ------------------------------------------------------------------------------------
def attempt(factory):
    """``factory()``, or None when it refused with a one-line ValueError / TypeError."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return factory()
    except (ValueError, TypeError) as exc:
        msg = str(exc)
        assert msg and "\n" not in msg, f"refusal message must be one non-empty line: {msg!r}"
        assert type(exc).__module__ in ("builtins", "actuator_gym._checks", "actuator_gym.actuators.params"), type(exc)
        return None


def physical_model(model) -> bool:
    """All values in force are of physical magnitude (limits may be +inf)."""
    for p in model.parameters().values():
        p = p.double()
        if not bool(((p.abs() <= PHYSICAL) | (p == math.inf)).all()):
            return False
    return True


def states(rng, scale):
    return rng.uniform(-scale, scale, (N, len(JOINTS))).astype(np.float32)


def dc_envelope(sat, vel, el, qd):
    """(tau_min, tau_max) of the DC-motor clamp in float64 (the class docstring's law)."""
    alive = sat > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        vc = np.where(alive, vel * (1 + el / np.where(alive, sat, 1.0)), vel)
        v = np.clip(qd, -vc, vc)
        slope = np.where(np.isinf(vel), 0.0, sat / vel)
    return np.maximum(sat * -1.0 - slope * v, -el), np.minimum(sat - slope * v, el)


def check_bounds(model, q, qd, applied):
    """The last clamp's documented bound holds for ``applied`` (float32 rounding tolerated). In
    ``effort_mode="implicit"`` the clamps act at the predicted end-of-substep state, so only the
    state-independent bounds are checked there."""
    explicit = model.effort_mode == "explicit"
    a = applied.double().numpy()
    assert not np.isnan(a).any(), "NaN effort from finite inputs"
    if not model.clamping:
        return
    clamp = model.clamping[-1]
    tol = lambda b: 1e-5 * (1.0 + np.abs(np.where(np.isfinite(b), b, 0.0)))  # noqa: E731
    if isinstance(clamp, ag.ClampingMaxEffort):
        lim = clamp.params["max_effort"].values.double().numpy()
        assert (np.abs(a) <= lim + tol(lim)).all()
    elif isinstance(clamp, ag.ClampingDCMotor):
        sat, vel, el = (clamp.params[k].values.double().numpy() for k in ("saturation_effort", "velocity_limit", "effort_limit"))
        if not explicit:
            assert (np.abs(a) <= el + tol(el + sat)).all()
            return
        lo, hi = dc_envelope(sat, vel, el, qd.astype(np.float64))
        # the envelope is computed in the model's dtype: exact up to rounding of its own magnitude
        # (saturation_effort * (1 + |v| / velocity_limit)), documented in ClampingDCMotor
        span = np.abs(sat) * (1 + np.abs(qd) / np.where(np.isinf(vel), 1.0, vel)) + np.where(np.isfinite(el), el, 0.0)
        assert (a >= lo - tol(span)).all() and (a <= hi + tol(span)).all()
        assert (np.abs(a) <= el + tol(span)).all()
    elif isinstance(clamp, ag.ClampingPositionBased):
        xs, ys = clamp.lookup_positions, clamp.lookup_efforts
        assert (np.abs(a) <= ys.max() * (1 + 1e-6) + 1e-6).all()
        if explicit and np.all(np.diff(xs) > 1e-3):
            lim = np.interp(q.astype(np.float64), xs, ys)
            assert (np.abs(a) <= lim + 1e-4 * (1 + lim)).all()


def exercise(model, seed, dt=0.005, steps=6):
    """Random finite states, commands and resets; every output checked."""
    rng = np.random.default_rng(seed)
    scale = float(rng.choice([1.0, 1e3]))
    with np.errstate(all="ignore"):  # non-physical accepted values may overflow (inf), never NaN
        _exercise(model, rng, scale, dt, steps)


def _exercise(model, rng, scale, dt, steps):
    for k in range(steps):
        q, qd = states(rng, scale), states(rng, scale)
        kw = dict(joint_pos=q, joint_vel=qd, target_pos=states(rng, scale), target_vel=states(rng, scale),
                  target_effort=states(rng, scale), dt=dt)
        if model.effort_mode == "implicit":
            kw["inverse_mass"] = np.tile(np.eye(len(JOINTS)) * rng.uniform(0.1, 10.0), (N, 1, 1))
        out = model.compute(**kw)
        check_bounds(model, q, qd, out)
        if physical_model(model) and not (model.effort_mode == "implicit"):
            assert torch.isfinite(out).all(), "non-finite effort from physical parameters and finite states"
        if k == 2:
            model.reset(env_ids=[1])
        if k == 4:
            model.reset()
    # parameters in force after resets stay inside their domains
    for name, p in model.parameters().items():
        assert not torch.isnan(p.double()).any(), name


# ---- parts -------------------------------------------------------------------------------------
@st.composite
def drives(draw):
    kind = draw(st.sampled_from(["pd", "pid"]))
    kp, kd, c = values(draw), values(draw), values(draw)
    if kind == "pd":
        return lambda: ag.DrivePD(kp=kp(), kd=kd(), const_effort=c())
    ki, imax = values(draw), values(draw, limit=True)
    return lambda: ag.DrivePID(kp=kp(), ki=ki(), kd=kd(), integral_max=imax(), const_effort=c())


@st.composite
def clamps(draw):
    kind = draw(st.sampled_from(["max", "dc", "dc", "dc", "pos"]))
    if kind == "max":
        v = values(draw, limit=True)
        return lambda: ag.ClampingMaxEffort(max_effort=v())
    if kind == "dc":
        s, v, e = values(draw), values(draw, limit=True, positive=True), values(draw, limit=True, positive=True)
        return lambda: ag.ClampingDCMotor(saturation_effort=s(), velocity_limit=v(), effort_limit=e())
    xs, ys = lookup_tables(draw)
    return lambda: ag.ClampingPositionBased(xs, ys)


def lookup_tables(draw):
    """Position-based tables: mostly valid (sorted, >= 0, equal lengths), sometimes one entry or
    the order or the lengths broken."""
    k = draw(st.integers(1, 5))
    xs = sorted(draw(st.lists(st.floats(-3, 3), min_size=k, max_size=k)))
    ys = draw(st.lists(st.floats(0, 100), min_size=k, max_size=k))
    broken = draw(st.sampled_from(["x", "y", "order", "length"])) if rarely(draw) else "none"
    if broken == "x":
        xs[draw(st.integers(0, k - 1))] = draw(special)
    elif broken == "y":
        ys[draw(st.integers(0, k - 1))] = draw(special)
    elif broken == "order":
        xs = xs[::-1]
    elif broken == "length":
        ys = ys + [1.0]
    return xs, ys


@st.composite
def delays(draw):
    if draw(st.booleans()):
        return None
    lo = draw(st.sampled_from([-1, 1.5, True, 2**40, 3])) if rarely(draw) else draw(st.integers(0, 2))
    hi = draw(st.sampled_from([-1, 2.0, 2**40, 0])) if rarely(draw) else draw(st.integers(2, 4))
    per_joint = "no" if rarely(draw) else draw(st.booleans())
    return lambda: ag.Delay(min_delay=lo, max_delay=hi, per_joint=per_joint)


@MANY
@given(drive=drives(), clamp=st.one_of(st.lists(clamps(), min_size=1, max_size=1), st.lists(clamps(), max_size=2)), delay=delays(), dtype=st.sampled_from([torch.float32, torch.float64]),
       seed=st.integers(0, 2**32 - 1))
def test_parts_refuse_or_stay_bounded(drive, clamp, delay, dtype, seed):
    def build():
        return ag.Actuator(drive=drive(), delay=delay() if delay else None, clamping=[c() for c in clamp], num_envs=N,
                           joint_names=JOINTS, dtype=dtype, seed=seed % 1000)

    model = attempt(build)
    if model is not None:
        exercise(model, seed)


@SETTINGS
@given(lo=st.integers(0, 3), extra=st.integers(0, 3), per_joint=st.booleans(), seed=st.integers(0, 1000))
def test_delay_law(lo, extra, per_joint, seed):
    """The delayed command at substep k since reset is x[max(0, k - L)], L in [min_delay, max_delay]."""
    hi = lo + extra
    m = ag.Actuator(drive=ag.DrivePD(kp=1.0), delay=ag.Delay(min_delay=lo, max_delay=hi, per_joint=per_joint),
                    num_envs=N, joint_names=JOINTS, seed=seed)
    lags = m.parameter("delay_steps").numpy()
    assert ((lags >= lo) & (lags <= hi)).all()
    z = np.zeros((N, len(JOINTS)), np.float32)
    history = []
    for k in range(hi + 4):
        x = np.full_like(z, float(k + 1))
        history.append(x)
        out = m.compute(joint_pos=z, joint_vel=z, target_pos=x).numpy()
        expect = np.maximum(0, k - lags) + 1.0
        np.testing.assert_array_equal(out, expect)


# ---- named configs -----------------------------------------------------------------------------
@st.composite
def named_configs(draw):
    cls = draw(st.sampled_from([ag.IdealPDActuatorCfg, ag.DCMotorCfg, ag.DCMotorCfg, ag.DelayedPDActuatorCfg,
                                ag.RemotizedPDActuatorCfg, ag.ImplicitActuatorCfg]))
    fields = {"stiffness": values(draw), "damping": values(draw), "actuator_effort_limit": values(draw, limit=True, positive=True)}
    if cls is ag.DCMotorCfg:
        fields["saturation_effort"] = values(draw)
        fields["actuator_velocity_limit"] = values(draw, positive=True)
    if cls is ag.RemotizedPDActuatorCfg:
        xs, ys = lookup_tables(draw)
        rows = draw(st.sampled_from([[], "rows", [[1, 2]]])) if rarely(draw) else [[x, 1.0, y] for x, y in zip(xs, ys)]
        fields["joint_parameter_lookup"] = lambda: rows
    if draw(st.booleans()):
        lo = draw(st.sampled_from([-1, 1.5, 3])) if rarely(draw) else draw(st.integers(0, 2))
        hi = draw(st.sampled_from([-2, True, 0])) if rarely(draw) else draw(st.integers(2, 3))
        fields["min_delay"], fields["max_delay"] = (lambda: lo), (lambda: hi)
    if draw(st.booleans()):
        key = "unknown_field" if rarely(draw) else draw(st.sampled_from(["stiffness", "damping", "actuator_effort_limit"]))
        dist = draw(distributions())
        fields["randomization"] = lambda: {key: dist()}
    mode = draw(st.sampled_from(["explicit", "explicit", "explicit", "implicit"]))
    return lambda: cls(**{k: f() for k, f in fields.items()}, effort_mode=mode)


@MANY
@given(cfg=named_configs(), seed=st.integers(0, 2**32 - 1), joints=st.sampled_from([JOINTS] * 12 + ["j0", JOINTS + ["j0"], [0, 1]]))
def test_named_configs_refuse_or_stay_bounded(cfg, seed, joints):
    model = attempt(lambda: cfg().build(joint_names=joints, num_envs=N, seed=seed % 1000))
    if model is not None:
        assert model.joint_names == tuple(JOINTS)
        exercise(model, seed, dt=0.01)


# ---- distributions -------------------------------------------------------------------------------
@SETTINGS
@given(dist=distributions(), lo=st.floats(-1e3, 1e3), width=st.floats(0, 1e3), seed=st.integers(0, 1000))
def test_distributions_refuse_or_sample_within_their_range(dist, lo, width, seed):
    d = attempt(dist)
    if d is None:
        return
    b_lo, b_hi = d.bounds()
    assert math.isfinite(b_lo) and math.isfinite(b_hi) and b_lo <= b_hi
    nominal = torch.tensor([[lo, lo + width, lo + width / 2]] * 4, dtype=torch.float64)
    r_lo, r_hi = d.value_range(lo, lo + width)
    streams = EnvStreams(4, seed)
    for _ in range(3):
        s = d.sample(nominal, streams.for_envs())
        assert torch.isfinite(s).all()
        assert bool((s >= r_lo - 1e-9 * (1 + abs(r_lo))).all() and (s <= r_hi + 1e-9 * (1 + abs(r_hi))).all())
        if d.integer and d.operation == "abs":
            assert torch.equal(s, torch.round(s))


@SETTINGS
@given(dist=distributions(), clamp=st.sampled_from(["max_effort", "kp", "velocity_limit"]), seed=st.integers(0, 1000))
def test_distributed_parameters_stay_in_their_domain(dist, clamp, seed):
    def build():
        d = dist()
        if clamp == "max_effort":
            return ag.Actuator(drive=ag.DrivePD(kp=1.0), clamping=[ag.ClampingMaxEffort(max_effort=d)], num_envs=N, joint_names=JOINTS, seed=seed)
        if clamp == "kp":
            return ag.Actuator(drive=ag.DrivePD(kp=d), num_envs=N, joint_names=JOINTS, seed=seed)
        return ag.Actuator(drive=ag.DrivePD(kp=1.0), clamping=[ag.ClampingDCMotor(saturation_effort=5.0, velocity_limit=d)],
                           num_envs=N, joint_names=JOINTS, seed=seed)

    model = attempt(build)
    if model is None:
        return
    name = {"max_effort": "max_effort", "kp": "kp", "velocity_limit": "velocity_limit"}[clamp]
    for _ in range(4):
        p = model.parameter(name).double()
        assert not torch.isnan(p).any()
        assert (p >= 0).all() if name != "velocity_limit" else (p > 0).all()
        if name == "kp":
            assert torch.isfinite(p).all()
        model.reset()
    exercise(model, seed)


# ---- clamps over the full float range ---------------------------------------------------------------
@SETTINGS
@given(limit=st.one_of(physical, st.floats(0, F32_MAX), st.just(math.inf)),
       sat=st.one_of(physical, st.floats(0, 1e30)), vel=st.one_of(st.floats(1e-3, 1e6), st.just(math.inf)),
       el=st.one_of(st.floats(1e-3, 1e30), st.just(math.inf)),
       effort=st.floats(allow_nan=False, width=32), qd=st.floats(-1e4, 1e4, width=32))
def test_clamps_never_produce_nan_from_non_nan_inputs(limit, sat, vel, el, effort, qd):
    """Clamps over the whole representable range, with infinite incoming efforts too."""
    for clamp in (ag.ClampingMaxEffort(max_effort=limit), ag.ClampingDCMotor(saturation_effort=sat, velocity_limit=vel, effort_limit=el)):
        m = attempt(lambda: ag.Actuator(drive=ag.DrivePD(), clamping=[clamp], num_joints=1, seed=0))
        if m is None:
            continue
        out = m.compute(joint_pos=[[0.0]], joint_vel=[[qd]], target_effort=[[effort]])
        assert not torch.isnan(out).any()
        check_bounds(m, np.float32([[0.0]]), np.float32([[qd]]), out)
