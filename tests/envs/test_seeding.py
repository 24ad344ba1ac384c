"""Gymnasium's seeding convention, exactly: env ``i`` of ``make_vec(id, num_envs=N).reset(seed=s)``
rolls out as ``make(id).reset(seed=s + i)``, step by step and episode after episode (actuator
parameters and delays, model fields, reset states, telemetry), and ``reset(seed=[s0, s1, ...])``
seeds env ``i`` with ``s_i``."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode

import actuator_gym as ag
from actuator_gym.tasks.pendulum import PendulumTask
from actuator_gym.tasks.quadruped import go1_dc_motor_cfg
from actuator_gym.envs.task_cfg import ModelFieldRandomization
from actuator_gym.envs.task_info import env_info
from actuator_gym.randomization import Gaussian, LogUniform, Uniform

PENDULUM, QUADRUPED, QUADROTOR = "actuator_gym/Pendulum-v0", "actuator_gym/Quadruped-v0", "actuator_gym/Quadrotor-v0"


def _pendulum_kwargs():
    motor = ag.DCMotorCfg(joint_names_expr=[".*"], stiffness=Uniform(20.0, 40.0), damping=Gaussian(2.0, 0.3),
                          saturation_effort=20.0, actuator_effort_limit=15.0, actuator_velocity_limit=20.0,
                          min_delay=0, max_delay=3)
    mass = ModelFieldRandomization(field="body_mass", distribution=Uniform(0.8, 1.2, operation="scale"))
    return dict(actuators={"hinge": motor}, model_randomization=[mass], episode_length_s=0.1)  # 6 control steps


def _quadruped_kwargs():
    legs = go1_dc_motor_cfg(  # the default 0..2 substep delay, plus drawn gains
        randomization={"stiffness": Uniform(0.8, 1.2, operation="scale", per_joint=True)})
    return dict(actuators={"legs": legs}, episode_length_s=0.08)  # 4 control steps


def _quadrotor_kwargs():
    return dict(episode_length_s=0.06)


def assert_same(a, b, where):
    """Exact equality of nested info dicts / arrays / scalars."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), f"{where}: keys {sorted(a)} vs {sorted(b)}"
        for k in a:
            assert_same(a[k], b[k], f"{where}[{k!r}]")
    else:
        assert np.array_equal(np.asarray(a), np.asarray(b)), f"{where}: {a} vs {b}"


def _rollout_check(env_id, kwargs, mode, n=3, seed=11, steps=14, partial_reset_at=2):
    """Native env i against a single env seeded seed + i: every step's obs, reward, flags and info
    (telemetry, parameters drawn at resets, model fields); env 1 is also reset alone once so that
    the envs' episodes end at different steps (env i's draws must not depend on the others')."""
    vec = gym.make_vec(env_id, num_envs=n, autoreset_mode=mode, **kwargs)
    singles = [gym.make(env_id, **kwargs) for _ in range(n)]
    act_rng = np.random.default_rng(0)
    obs, info = vec.reset(seed=seed)
    for i, e in enumerate(singles):
        o, inf = e.reset(seed=seed + i)
        assert_same(obs[i], o, f"env {i} reset obs")
        assert_same(env_info(info, i, ended=False), inf, f"env {i} reset info")
    pending = np.zeros(n, bool)  # NEXT_STEP: the single env resets at the step the native one does
    ends: list[list[int]] = [[] for _ in range(n)]  # steps at which each env's episodes ended
    for t in range(steps):
        a = act_rng.uniform(-0.5, 0.5, size=vec.action_space.shape).astype(np.float32)
        a = np.clip(a, vec.single_action_space.low, vec.single_action_space.high)
        if t == partial_reset_at:
            mask = np.zeros(n, bool)
            mask[1] = True
            obs, info = vec.reset(options={"reset_mask": mask})
            o, inf = singles[1].reset()
            assert_same(obs[1], o, "env 1 partial reset obs")
            assert_same(env_info(info, 1, ended=False)["actuator"]["parameters"], inf["actuator"]["parameters"], "env 1 params")
            pending[1] = False
        obs, rew, term, trunc, info = vec.step(a)
        for i, e in enumerate(singles):
            where = f"step {t} env {i}"
            if pending[i]:  # NEXT_STEP: this step reset env i
                o, inf = e.reset()
                assert_same(obs[i], o, f"{where} autoreset obs")
                assert rew[i] == 0.0 and not term[i] and not trunc[i]
                assert_same(env_info(info, i, ended=False), inf, f"{where} autoreset info")
                pending[i] = False
                continue
            o, r, te, tr, inf = e.step(a[i])
            assert (rew[i], term[i], trunc[i]) == (r, te, tr), where
            if mode == AutoresetMode.SAME_STEP and (te or tr):
                assert_same(info["final_obs"][i], o, f"{where} final obs")
                assert_same(env_info(info["final_info"], i, ended=True), inf, f"{where} final info")
                o, inf = e.reset()
                assert_same(obs[i], o, f"{where} reset obs")
                assert_same(env_info(info, i, ended=False)["actuator"]["parameters"], inf["actuator"]["parameters"], where)
                ends[i].append(t)
                continue
            assert_same(obs[i], o, f"{where} obs")
            assert_same(env_info(info, i, ended=bool(te or tr)), inf, f"{where} info")
            if te or tr:
                ends[i].append(t)
            pending[i] = mode == AutoresetMode.NEXT_STEP and (te or tr)
    # every env went through autoresets, and env 1's episodes ended at other steps than env 0's
    assert all(len(e) >= 2 for e in ends) and ends[1] != ends[0], ends
    return vec, singles


def test_native_env_i_equals_single_env_seeded_s_plus_i_pendulum_next_step():
    vec, _ = _rollout_check(PENDULUM, _pendulum_kwargs(), AutoresetMode.NEXT_STEP, steps=16)
    p = vec.unwrapped.actuator_parameters()["hinge"]
    assert len(set(p["stiffness"][:, 0].tolist())) == 3  # drawn per env: three different gains
    assert p["delay_steps"].min() >= 0 and p["delay_steps"].max() <= 3


def test_native_env_i_equals_single_env_seeded_s_plus_i_quadruped_same_step():
    _rollout_check(QUADRUPED, _quadruped_kwargs(), AutoresetMode.SAME_STEP, n=2, steps=10)


def test_native_env_i_equals_single_env_seeded_s_plus_i_quadrotor_rotor_groups():
    _rollout_check(QUADROTOR, _quadrotor_kwargs(), AutoresetMode.NEXT_STEP, n=2, steps=16)


def test_list_seeds_seed_env_i_with_s_i():
    kw = _pendulum_kwargs()
    vec = gym.make_vec(PENDULUM, num_envs=3, **kw)
    seeds = [40, 3, 2**64 - 1]
    obs, info = vec.reset(seed=seeds)
    again, _ = gym.make_vec(PENDULUM, num_envs=3, **kw).reset(seed=np.array(seeds, dtype=np.uint64))
    assert_same(obs, again, "array seeds")
    for i, s in enumerate(seeds):
        o, inf = gym.make(PENDULUM, **kw).reset(seed=s)
        assert_same(obs[i], o, f"env {i}")
        assert_same(env_info(info, i, ended=False), inf, f"env {i} info")
    assert vec.unwrapped.np_random_seed == -1  # per-env seeds: no single seed of the batch
    # None entries draw fresh entropy for those envs only
    obs2, info2 = vec.reset(seed=[40, None, 2**64 - 1])
    assert_same(obs2[[0, 2]], obs[[0, 2]], "seeded entries")
    assert not np.array_equal(info2["actuator"]["parameters"]["hinge"]["stiffness"][1],
                              info["actuator"]["parameters"]["hinge"]["stiffness"][1])
    vec.reset(seed=5)
    assert vec.unwrapped.np_random_seed == 5


def test_make_vec_seeded_at_construction_equals_reset_seed():
    kw = _pendulum_kwargs()
    a = PendulumTask(num_envs=2, seed=9, **kw)
    b = gym.make(PENDULUM, seed=10, **kw).unwrapped.task
    assert_same(a.actuator_parameters()["hinge"]["stiffness"][1], b.actuator_parameters()["hinge"]["stiffness"][0], "ctor")


# ---- the models, built directly: row i == a one-env model seeded s + i ---------------------------
JOINTS = ["a", "b"]


def _dc():
    """Drawn gains (uniform per joint, truncated normal) and a 0..3 substep delay drawn per env."""
    return ag.DCMotorCfg(joint_names_expr=[".*"], stiffness=Uniform(5.0, 50.0, per_joint=True), damping=Gaussian(1.0, 0.2),
                         saturation_effort=10.0, actuator_effort_limit=8.0, actuator_velocity_limit=30.0,
                         min_delay=0, max_delay=3)


@pytest.mark.parametrize("kind", ["actuator", "collection"])
def test_built_model_row_i_equals_one_env_model_seeded_s_plus_i(kind):
    n, s, steps = 4, 123, 12

    def build(num_envs, seed):
        if kind == "actuator":
            return _dc().build(joint_names=JOINTS, num_envs=num_envs, seed=seed, dtype=torch.float64)
        cfgs = {"first": ag.IdealPDActuatorCfg(joint_names_expr=["a"], stiffness=Uniform(1.0, 9.0), damping=0.5),
                "second": ag.DelayedPDActuatorCfg(joint_names_expr=["b"], stiffness=LogUniform(1.0, 100.0), damping=1.0,
                                                  min_delay=0, max_delay=4)}
        return ag.ActuatorCollection(cfgs, joint_names=JOINTS, num_envs=num_envs, seed=seed, dtype=torch.float64)

    batch = build(n, s)
    rows = [build(1, s + i) for i in range(n)]

    def params(m):
        return m.parameters() if kind == "actuator" else {g: m[g].parameters() for g in m}

    def compute(m, q, qd, tq):
        if kind == "actuator":
            return m.compute(q, qd, target_pos=tq).clone()
        m.target_command.position[:] = torch.as_tensor(tq, dtype=m.target_command.position.dtype)
        return torch.as_tensor(m.compute(joint_pos=q, joint_vel=qd, dt=0.005)).clone()

    gen = torch.Generator().manual_seed(0)
    for t in range(steps):
        if t in (3, 7):  # reset different envs at different times: each row keeps its own stream
            ids = [1, 2] if t == 3 else [2]
            batch.reset(ids)
            for i in ids:
                rows[i].reset()
        q, qd, tq = (torch.rand((n, 2), generator=gen, dtype=torch.float64) for _ in range(3))
        out = compute(batch, q, qd, tq)
        for i in range(n):
            assert torch.equal(out[i:i + 1], compute(rows[i], q[i:i + 1], qd[i:i + 1], tq[i:i + 1])), (t, i)
    pb = params(batch)
    for i in range(n):
        pi = params(rows[i])
        flat_b = pb if kind == "actuator" else {f"{g}.{k}": v for g, d in pb.items() for k, v in d.items()}
        flat_i = pi if kind == "actuator" else {f"{g}.{k}": v for g, d in pi.items() for k, v in d.items()}
        for k in flat_b:
            assert torch.equal(flat_b[k][i:i + 1], flat_i[k]), (i, k)
    # the rows differ (per-env seeds, not one seed shared)
    stiff = pb["stiffness"] if kind == "actuator" else pb["first"]["stiffness"]
    assert len(set(stiff[:, 0].tolist())) == n


def test_thruster_row_i_equals_one_env_thruster_seeded_s_plus_i():
    cfg = ag.ThrusterCfg(thruster_names_expr=[".*"], thrust_range=(0.0, 10.0), thrust_const_range=(0.05, 0.15),
                         tau_inc_range=(0.01, 0.05), tau_dec_range=(0.02, 0.06), torque_to_thrust_ratio=0.07, dt=0.005)
    names = ["r0", "r1", "r2"]
    batch = cfg.build(rotor_names=names, num_envs=3, seed=2**40, initial_rps=3.0)
    for i in range(3):
        one = cfg.build(rotor_names=names, num_envs=1, seed=2**40 + i, initial_rps=3.0)
        for k, v in batch.parameters().items():
            assert torch.equal(v[i:i + 1], one.parameters()[k]), (i, k)


def test_model_seed_methods_take_per_env_seeds_and_refuse_bad_ones():
    m = _dc().build(joint_names=JOINTS, num_envs=3, seed=0)
    m.seed([7, 8, 9])
    m.reset()
    ref = _dc().build(joint_names=JOINTS, num_envs=3, seed=7)
    assert torch.equal(m.parameter("stiffness"), ref.parameter("stiffness"))
    before = m.parameter("stiffness").clone()
    with pytest.raises(ValueError, match="one seed per env is needed: got 2 for num_envs=3"):
        m.seed([1, 2])
    with pytest.raises(TypeError, match=r"seed\[0\] must be an integer"):
        m.seed([1.0, 2, 3])
    with pytest.raises(TypeError, match="got None"):
        m.seed(None)
    with pytest.raises(ValueError, match="passes 2\\*\\*64 - 1"):
        _dc().build(joint_names=JOINTS, num_envs=3, seed=2**64 - 2)
    m.reset()  # the refused seeds changed nothing: the stream goes on as the reference's
    ref.reset()
    assert torch.equal(m.parameter("stiffness"), ref.parameter("stiffness")) and not torch.equal(before, ref.parameter("stiffness"))


def test_sync_vector_env_of_wrapped_envs_seeds_env_i_as_the_wrapped_single_env_seeded_s_plus_i():
    from actuator_gym.wrappers import ActuatorWrapper

    def make():
        cfg = ag.DCMotorCfg(stiffness=Uniform(5.0, 50.0, per_joint=True), damping=1.0, saturation_effort=5.0,
                            actuator_effort_limit=3.0, actuator_velocity_limit=20.0, min_delay=0, max_delay=2)
        return ActuatorWrapper(gym.make("InvertedPendulum-v5"), actuators={"arm": cfg})

    vec = gym.vector.SyncVectorEnv([make, make])
    obs, _ = vec.reset(seed=21)
    for i in range(2):
        one = make()
        o, _ = one.reset(seed=21 + i)
        assert_same(obs[i], o, f"env {i} obs")
        assert_same({g: {k: v.numpy() for k, v in p.items()} for g, p in vec.envs[i].groups.parameters().items()},
                    {g: {k: v.numpy() for k, v in p.items()} for g, p in one.groups.parameters().items()}, f"env {i} parameters")
    assert not torch.equal(vec.envs[0].groups.parameters()["arm"]["stiffness"],
                           vec.envs[1].groups.parameters()["arm"]["stiffness"])
