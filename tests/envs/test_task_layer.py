"""The batched task layer (actuator_gym.envs.task) on the worked example of docs/tasks.md."""

from __future__ import annotations

import pathlib
import re
import warnings

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode

from actuator_gym import DelayedPDActuatorCfg, IdealPDActuatorCfg
from actuator_gym.envs import BatchedTask, TaskEnv

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "tasks.md"


def _doc_blocks() -> list[str]:
    return re.findall(r"```python[^\n]*\n(.*?)```", DOC.read_text(), re.S)


@pytest.fixture(scope="module")
def example():
    ns: dict = {}
    exec(compile(_doc_blocks()[0], str(DOC), "exec"), ns)
    return ns


@pytest.fixture(scope="module")
def ArmTask(example):
    return example["ArmTask"]


def _snapshot(task: BatchedTask, env: int) -> dict[str, np.ndarray]:
    be = task.backend
    snap = {
        "qpos": be.qpos[env].copy(),
        "qvel": be.qvel[env].copy(),
        "act": be.act[env].copy(),
        "time": np.array(be.time[env]),
        "warmstart": be.field("qacc_warmstart")[env].copy(),
        "qfrc_applied": be.qfrc_applied[env].copy(),
        "xpos": be.field("xpos")[env].copy(),
        "body_mass": be.model_field("body_mass")[env].copy(),
        "goal": task.goal[env].copy(),
        "episode_step": np.array(task.episode_step[env]),
        "target": task.collection.target_command.position[env].numpy().copy(),
    }
    for g, params in task.actuator_parameters().items():
        for k, v in params.items():
            snap[f"{g}.{k}"] = v[env].copy()
    return snap


def _assert_bitwise(a: dict, b: dict, what: str) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert np.array_equal(a[k], b[k]), f"{what}: {k} differs: {a[k]} vs {b[k]}"


def _actions(task, steps, seed=123, scale=0.3):
    """Random position targets within ``scale`` of the joint ranges (gentle: no terminations)."""
    rng = np.random.default_rng(seed)
    lo, hi = scale * task.single_action_space.low, scale * task.single_action_space.high
    return [rng.uniform(lo, hi, size=(task.num_envs, task.num_actions)) for _ in range(steps)]


def test_doc_usage_block_runs(example):
    ns = dict(example)
    exec(compile(_doc_blocks()[1], str(DOC), "exec"), ns)
    assert ns["obs"].shape == (64, 8)
    assert ns["info"]["actuator"]["applied_effort"].shape == (64, 2)


def test_spaces_and_metadata(ArmTask):
    task = ArmTask(num_envs=3, seed=0)
    assert task.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    assert task.single_observation_space.shape == (8,)
    assert task.observation_space.shape == (3, 8)
    # normalized by default: Box(-1, 1) onto the joint ranges (-2, 2) and (-2.5, 2.5)
    assert task.single_action_space == gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    np.testing.assert_allclose((task.action_scale, task.action_offset), ([2.0, 2.5], [0.0, 0.0]))
    # an explicit mapping: the bounds are the joint ranges in action units (scale 1, offset 0)
    explicit = ArmTask(num_envs=1, action_scale=1.0)
    np.testing.assert_allclose(explicit.single_action_space.low, [-2.0, -2.5])
    np.testing.assert_allclose(explicit.single_action_space.high, [2.0, 2.5])
    assert task.action_space.shape == (3, 2)
    assert task.dt == pytest.approx(0.02)
    assert task.max_episode_steps == 200
    obs, info = task.reset(seed=1)
    assert obs.dtype == np.float32 and task.observation_space.contains(obs)
    same = ArmTask(num_envs=3, seed=0, autoreset_mode="same_step")
    assert same.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP


def test_info_vector_format(ArmTask):
    n = 4
    task = ArmTask(num_envs=n, seed=0)
    _, info = task.reset(seed=0)
    # reset info: parameters (all envs reset), no step telemetry
    assert info["_actuator"].dtype == bool and info["_actuator"].all()
    params = info["actuator"]["parameters"]["arm"]
    assert info["actuator"]["_parameters"].all()
    assert params["stiffness"].shape == (n, 2) and params["_stiffness"].all()
    assert not info["actuator"]["_applied_effort"].any()
    assert info["randomization"]["body_mass[lower]"].shape == (n, 1)
    _, _, _, _, info = task.step(np.zeros((n, 2)))
    act = info["actuator"]
    for key in ("computed_effort", "applied_effort", "joint_pos", "joint_vel", "power", "energy", "saturated"):
        assert act[key].shape == (n, 2), key
        assert act["_" + key].dtype == bool and act["_" + key].shape == (n,) and act["_" + key].all(), key
    assert act["saturated"].dtype == bool
    # the same keys as at reset (torchrl stacks the infos): parameters in force, masked as not just drawn
    assert not act["_parameters"].any() and not act["parameters"]["arm"]["_stiffness"].any()
    np.testing.assert_array_equal(act["parameters"]["arm"]["stiffness"], params["stiffness"])
    assert not info["_randomization"].any() and info["randomization"]["body_mass[lower]"].shape == (n, 1)
    # telemetry invariants: the clamp, and energy = sum_k |P_k| dt_phys >= |mean power| * control period
    # and >= the last substep's |power| * dt_phys
    lim = 15.0
    np.testing.assert_allclose(act["applied_effort"], np.clip(act["computed_effort"], -lim, lim))
    assert np.all(act["energy"] >= np.abs(act["mean_power"]) * task.dt - 1e-9)
    assert np.all(act["energy"] >= np.abs(act["power"]) * task.physics_dt - 1e-9)
    np.testing.assert_array_equal(act["joint_pos"], task.backend.joint_pos())


def test_randomized_parameters_differ_between_envs_and_seeds(ArmTask):
    task = ArmTask(num_envs=8, seed=0)
    _, info = task.reset(seed=3)
    kp = info["actuator"]["parameters"]["arm"]["stiffness"][:, 0]
    mass = info["randomization"]["body_mass[lower]"][:, 0]
    assert len(np.unique(kp)) == 8 and len(np.unique(mass)) == 8
    assert np.all((kp >= 0.8 * 40 - 1e-4) & (kp <= 1.2 * 40 + 1e-4))
    assert np.all((mass >= 0.8 * 0.5 - 1e-12) & (mass <= 1.2 * 0.5 + 1e-12))
    # the values are in force: the backend's per-world masses and the collection's gains
    np.testing.assert_array_equal(task.backend.model_field("body_mass")[:, 2], mass)
    np.testing.assert_array_equal(task.collection["arm"].parameter("stiffness").numpy()[:, 0], kp)
    _, info2 = task.reset(seed=4)
    assert not np.array_equal(info2["actuator"]["parameters"]["arm"]["stiffness"], info["actuator"]["parameters"]["arm"]["stiffness"])
    assert not np.array_equal(info2["randomization"]["body_mass[lower]"], info["randomization"]["body_mass[lower]"])


def test_same_seed_identical_batched_rollouts(ArmTask):
    a = ArmTask(num_envs=4, seed=11)
    b = ArmTask(num_envs=4, seed=99)  # construction seed differs; reset(seed=) decides
    oa, ia = a.reset(seed=5)
    ob, ib = b.reset(seed=5)
    np.testing.assert_array_equal(oa, ob)
    for act in _actions(a, 30):
        ra = a.step(act)
        rb = b.step(act)
        for x, y in zip(ra[:4], rb[:4]):
            np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(ra[4]["actuator"]["applied_effort"], rb[4]["actuator"]["applied_effort"])
    c = ArmTask(num_envs=4, seed=11)
    oc, _ = c.reset(seed=6)
    assert not np.array_equal(oa, oc)


def test_reset_isolation_bitwise(ArmTask):
    a = ArmTask(num_envs=4, seed=0)
    b = ArmTask(num_envs=4, seed=0)
    a.reset(seed=2)
    b.reset(seed=2)
    acts = _actions(a, 20)
    for act in acts[:10]:
        a.step(act)
        b.step(act)
    before = [_snapshot(a, j) for j in range(4)]
    mask = np.array([False, True, False, False])
    obs, info = a.reset(options={"reset_mask": mask})
    assert info["actuator"]["_parameters"].tolist() == mask.tolist()
    assert a.episode_step[1] == 0 and a.episode_step[0] == 10
    for j in (0, 2, 3):
        _assert_bitwise(_snapshot(a, j), before[j], f"env {j} after resetting env 1")
    # env 1 really was reset (new goal / mass / state)
    assert not np.array_equal(_snapshot(a, 1)["qpos"], before[1]["qpos"])
    # ... and the other envs keep evolving exactly as in the twin that never reset env 1
    for act in acts[10:]:
        oa = a.step(act)[0]
        ob = b.step(act)[0]
        np.testing.assert_array_equal(oa[[0, 2, 3]], ob[[0, 2, 3]])
    for j in (0, 2, 3):
        _assert_bitwise(_snapshot(a, j), _snapshot(b, j), f"env {j} vs twin")


def test_batched_equals_single_env_rollouts(ArmTask):
    """N envs stepped together == N one-env tasks given the same parameters and state (1e-5)."""
    n, steps = 3, 40
    batch = ArmTask(num_envs=n, seed=0)
    batch.reset(seed=7)
    params = batch.actuator_parameters()["arm"]
    masses = batch.backend.model_field("body_mass").copy()
    singles = []
    for i in range(n):
        d = int(params["delay_steps"][i, 0])
        cfg = DelayedPDActuatorCfg(
            stiffness=torch.tensor(params["stiffness"][i : i + 1]),
            damping=2.0,
            actuator_effort_limit=15.0,
            min_delay=d,
            max_delay=d,
        )
        s = ArmTask(num_envs=1, seed=0, actuators={"arm": cfg}, model_randomization=[])
        s.reset(seed=0)
        s.backend.model_field("body_mass")[0] = masses[i]
        s.backend.set_const([0])
        s.backend.reset_envs([0], qpos=batch.backend.qpos[i : i + 1], qvel=batch.backend.qvel[i : i + 1])
        s.goal[0] = batch.goal[i]
        singles.append(s)
    moved = 0.0
    for act in _actions(batch, steps, seed=5):
        ob, rb, tb, _, ib = batch.step(act)
        moved = max(moved, float(np.abs(ob[:, 2:4]).max()))
        for i, s in enumerate(singles):
            os_, rs, ts, _, is_ = s.step(act[i : i + 1])
            np.testing.assert_allclose(os_[0], ob[i], rtol=0, atol=1e-5)
            np.testing.assert_allclose(rs[0], rb[i], rtol=0, atol=1e-5)
            np.testing.assert_allclose(
                is_["actuator"]["applied_effort"][0], ib["actuator"]["applied_effort"][i], rtol=0, atol=1e-5
            )
    assert moved > 1.0  # the rollouts were not trivial: joint speeds above 1 rad/s


def _desync(task):
    """Reset with seed, step once, reset env 0 only: env 0 then ends one step after the others."""
    task.reset(seed=1)
    task.step(np.zeros((task.num_envs, 2)))
    task.reset(options={"reset_mask": np.array([True, False, False])})


def test_autoreset_next_step(ArmTask):
    task = ArmTask(num_envs=3, seed=0, episode_length_s=0.06)  # 3 control steps
    assert task.max_episode_steps == 3
    _desync(task)
    a = np.zeros((3, 2))
    for _ in range(1):
        _, _, term, trunc, _ = task.step(a)
        assert not (term | trunc).any()
    _, _, _, trunc, _ = task.step(a)  # envs 1, 2 at step 3: truncated; env 0 at step 2
    assert trunc.tolist() == [False, True, True]
    obs, rew, term, trunc, info = task.step(a)  # envs 1, 2 reset (action ignored); env 0 ends
    assert trunc.tolist() == [True, False, False] and not term.any()
    assert rew[1] == 0.0 and rew[2] == 0.0
    assert task.episode_step.tolist() == [3, 0, 0]
    assert info["actuator"]["_parameters"].tolist() == [False, True, True]
    assert info["actuator"]["_applied_effort"].tolist() == [True, False, False]
    np.testing.assert_array_equal(obs[1:], task._observe_checked()[1:])
    np.testing.assert_array_equal(obs[1:, 4:6], task.goal[1:].astype(np.float32))  # fresh goals
    obs, rew, term, trunc, info = task.step(a)
    assert info["actuator"]["_parameters"].tolist() == [True, False, False]
    assert task.episode_step.tolist() == [0, 1, 1]


def test_autoreset_same_step_matches_next_step(ArmTask):
    nxt = ArmTask(num_envs=3, seed=0, episode_length_s=0.06)
    same = ArmTask(num_envs=3, seed=0, episode_length_s=0.06, autoreset_mode=AutoresetMode.SAME_STEP)
    _desync(nxt)
    _desync(same)
    a = np.zeros((3, 2))
    nxt.step(a)
    same.step(a)
    on, _, _, trn, infn = nxt.step(a)
    os_, _, _, trs, infs = same.step(a)
    assert trn.tolist() == trs.tolist() == [False, True, True]
    assert infs["_final_obs"].tolist() == [False, True, True]
    assert infs["final_obs"][0] is None
    for i in (1, 2):
        np.testing.assert_array_equal(infs["final_obs"][i], on[i])
    fi = infs["final_info"]
    assert fi["_actuator"].tolist() == [False, True, True]
    np.testing.assert_array_equal(fi["actuator"]["applied_effort"][1:], infn["actuator"]["applied_effort"][1:])
    # SAME_STEP already returns the reset obs; NEXT_STEP returns it one step later
    on2, rn2, *_ = nxt.step(a)
    np.testing.assert_array_equal(os_[1:], on2[1:])
    assert same.episode_step.tolist() == [2, 0, 0]
    assert infs["actuator"]["_parameters"].tolist() == [False, True, True]
    info = same.step(a)[4]  # env 0 (reset one step later) ends now
    assert info["_final_obs"].tolist() == [True, False, False]
    assert "final_obs" not in same.step(a)[4]


@pytest.mark.parametrize("execution, mode", [("explicit", "next_step"), ("native", "same_step")])
def test_diverged_physics_ends_that_episode_only(execution, mode):
    """stiffness=1e30 (finite, accepted) on env 1: every step MuJoCo flags a huge qacc and resets world
    1. Its episode truncates with info["physics_diverged"]; envs 0 and 2 roll out bit for bit as in a
    twin batch without that parameter; the key is in every info (False when nothing diverged)."""
    pd = {"p": IdealPDActuatorCfg(joint_names_expr=["hinge"], stiffness=20.0, damping=2.0)}
    bad, twin = (gym.make_vec("actuator_gym/Pendulum-v0", num_envs=3, execution=execution, autoreset_mode=mode,
                              actuators=pd) for _ in range(2))
    (_, ib), (_, it) = bad.reset(seed=3), twin.reset(seed=3)
    for info in (ib, it):
        assert info["physics_diverged"].tolist() == [False] * 3 and info["_physics_diverged"].all()
    bad.unwrapped.set_actuator_parameter("p", "stiffness", 1e30, env_ids=[1])  # the nominal over resets too
    ends = []
    for k in range(4):
        a = np.full((3, 1), 0.5 - 0.2 * k)
        (ob, rb, tb, trb, ib), (ot, rt, tt, trt, it) = bad.step(a), twin.step(a)
        for x, y in ((ob, ot), (rb, rt), (tb, tt), (trb, trt)):
            np.testing.assert_array_equal(x[[0, 2]], y[[0, 2]])
        assert not trt.any() and it["physics_diverged"].tolist() == [False] * 3 and it["_physics_diverged"].all()
        assert trb[1] and not tb[1] and np.all(np.isfinite(ob))
        if mode == "same_step":  # the ended step's flag in final_info; the main info is the new episode's
            assert ib["final_info"]["physics_diverged"].tolist() == [False, True, False]
            assert ib["final_info"]["_physics_diverged"].tolist() == [False, True, False]
            assert ib["physics_diverged"].tolist() == [False] * 3
        ends.append(trb[1] and ib.get("final_info", ib)["physics_diverged"][1])
        if mode == "next_step":  # a diverged step, then the autoreset step (reward 0, not ended)
            assert ib["physics_diverged"].tolist() == [False, True, False]
            ob, rb, tb, trb, ib = bad.step(a)
            twin.step(a)
            assert not trb[1] and rb[1] == 0.0 and ib["physics_diverged"].tolist() == [False] * 3
    assert ends == [True] * 4
    # the single env (gym.make): a bool, True on the step that diverged, which truncates
    env = gym.make("actuator_gym/Pendulum-v0", execution=execution, actuators={
        "p": IdealPDActuatorCfg(joint_names_expr=["hinge"], stiffness=1e30, damping=2.0)})
    assert env.reset(seed=0)[1]["physics_diverged"] is False
    _, _, term, trunc, info = env.step(np.array([0.5]))
    assert info["physics_diverged"] is True and trunc is True and term is False
    assert "actuator_episode" in info  # the episode's statistics, as at any end


def test_bad_actions_raise_and_leave_state_untouched(ArmTask):
    task = ArmTask(num_envs=2, seed=0)
    task.reset(seed=0)
    task.step(np.zeros((2, 2)))
    before = [_snapshot(task, j) for j in range(2)]
    bad = np.zeros((2, 2))
    bad[1, 0] = np.nan
    with pytest.raises(ValueError, match=r"actions\[1, 0\].*shoulder.*non-finite"):
        task.step(bad)
    bad[1, 0] = np.inf
    with pytest.raises(ValueError, match="non-finite"):
        task.step(bad)
    with pytest.raises(ValueError, match=r"shape \(2, 2\)"):
        task.step(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="shape"):
        task.step(np.zeros(2))
    for j in range(2):
        _assert_bitwise(_snapshot(task, j), before[j], f"env {j} after a rejected action")


def test_config_errors(ArmTask):
    with pytest.raises(TypeError, match="unexpected keyword argument 'stifness'.*unknown field"):
        ArmTask(num_envs=1, stifness=3.0)
    with pytest.raises(ValueError, match="decimation"):
        ArmTask(num_envs=1, decimation=0)
    with pytest.raises(ValueError, match="action_mode"):
        ArmTask(num_envs=1, action_mode="torque")
    with pytest.raises(ValueError, match="autoreset_mode"):
        ArmTask(num_envs=1, autoreset_mode="sometimes")
    with pytest.raises(ValueError, match="reset_mask"):
        ArmTask(num_envs=2).reset(options={"reset_mask": np.array([1, 0])})


def test_substep_callback_and_held_targets(ArmTask):
    task = ArmTask(num_envs=2, seed=0, actuators={"arm": DelayedPDActuatorCfg(stiffness=40.0, damping=2.0)})
    task.reset(seed=0)
    seen = []
    task.add_substep_callback(lambda t, k: seen.append((k, t.collection.target_command.position.numpy().copy())))
    act = np.array([[0.5, -0.5], [1.0, 0.2]])
    task.step(act)
    assert [k for k, _ in seen] == list(range(task.decimation))
    for _, tgt in seen:  # normalized: target = 0 + (half the joint range: 2, 2.5 rad) * action
        np.testing.assert_array_equal(tgt, (act * [2.0, 2.5]).astype(np.float32))


def test_task_env_single(ArmTask):
    from gymnasium.utils.env_checker import check_env

    env = TaskEnv(ArmTask(num_envs=1, autoreset_mode=AutoresetMode.DISABLED))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env, skip_render_check=True)
    obs, info = env.reset(seed=0)
    obs2, rew, term, trunc, info = env.step(env.action_space.sample())
    assert isinstance(rew, float) and isinstance(term, bool) and isinstance(trunc, bool)
    assert info["actuator"]["applied_effort"].shape == (2,)
    np.testing.assert_array_equal(env.unwrapped.data.qpos, env.task.backend.qpos[0])
    assert env.unwrapped.dt == pytest.approx(0.02)
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros(3))


# -- the batched backend under the layer ------------------------------------------------------------
def _arm_backend(example, n):
    import mujoco

    from actuator_gym.backends.mujoco_batch import MujocoBatchBackend

    m = mujoco.MjModel.from_xml_string(example["ARM_XML"])
    return m, MujocoBatchBackend(m, n)


def test_backend_matches_mj_step_loop_bitwise(example):
    import mujoco

    m, be = _arm_backend(example, 3)
    assert be.joint_names == ("shoulder", "elbow")
    q0 = np.array([[0.1, -0.2], [0.3, 0.0], [-0.4, 0.5]])
    be.reset_envs(None, qpos=q0)
    datas = [mujoco.MjData(m) for _ in range(3)]
    for i, d in enumerate(datas):
        d.qpos[:] = q0[i]
    rng = np.random.default_rng(0)
    for k in range(25):
        tau = rng.uniform(-2, 2, size=(3, 2))
        be.set_joint_effort(tau)
        be.step(derived=k % 5 == 4)
        for i, d in enumerate(datas):
            d.qfrc_applied[:] = tau[i]
            mujoco.mj_step(m, d)
    for i, d in enumerate(datas):
        np.testing.assert_array_equal(be.qpos[i], d.qpos)
        np.testing.assert_array_equal(be.qvel[i], d.qvel)
        mujoco.mj_forward(m, d)
        np.testing.assert_allclose(be.field("xpos")[i], d.xpos, rtol=0, atol=1e-12)  # current after derived step
    np.testing.assert_array_equal(be.joint_pos(), be.qpos[:, :2])
    np.testing.assert_allclose(be.time, 25 * m.opt.timestep)


def test_backend_partial_reset_and_per_world_fields(example):
    m, be = _arm_backend(example, 3)
    be.set_joint_effort(np.ones((3, 2)))
    for _ in range(5):
        be.step()
    keep = be.qpos[[0, 2]].copy(), be.qvel[[0, 2]].copy(), be.time[[0, 2]].copy()
    be.reset_envs([1], qpos=[[0.5, 0.5]])
    assert be.qpos[1].tolist() == [0.5, 0.5] and be.qvel[1].tolist() == [0.0, 0.0] and be.time[1] == 0.0
    assert be.qfrc_applied[1].tolist() == [0.0, 0.0]
    for a, b in zip(keep, (be.qpos[[0, 2]], be.qvel[[0, 2]], be.time[[0, 2]])):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match=r"qpos must have shape \(1, 2\)"):
        be.reset_envs([1], qpos=np.zeros((1, 3)))
    with pytest.raises(ValueError, match="ids must lie in"):
        be.reset_envs([3])
    with pytest.raises(ValueError, match=r"effort must have shape \(3, 2\)"):
        be.set_joint_effort(np.zeros((3, 1)))
    # a heavier lower link in world 2 only changes world 2's motion
    be.reset_envs(None, qpos=np.tile([[0.0, 1.0]], (3, 1)))
    be.model_field("body_mass")[2, 2] *= 3.0
    be.set_const([2])
    for _ in range(50):
        be.set_joint_effort(np.zeros((3, 2)))
        be.step()
    np.testing.assert_array_equal(be.qpos[0], be.qpos[1])
    assert not np.allclose(be.qpos[0], be.qpos[2])
    assert be.data(2).qpos.tolist() == be.qpos[2].tolist()


def _upside_down(qpos):
    qpos[1, 3:7] = (0.0, 1.0, 0.0, 0.0)


@pytest.mark.parametrize("task_id, kwargs, moving_term, break_state, broken", [
    # the Ant: a torso lifted out of the healthy range is terminal at once
    ("actuator_gym/Ant-v0", {}, ("x_velocity", lambda v: np.abs(v).min() > 0), lambda q: q.__setitem__((0, 2), 1.3), [True, False]),
    # the quadrotor: moved below the floor; the previous action is in the reward (action_rate)
    ("actuator_gym/Quadrotor-v0", dict(init_pos_noise=0.0, init_tilt_noise=0.0, random_yaw=False), ("action_rate", lambda v: v.min() < 0),
     lambda q: q.__setitem__((0, 2), 0.01), [True, False]),
    # the quadruped: a trunk turned over is terminal without a reward call
    ("actuator_gym/Quadruped-v0", {}, ("action_rate", lambda v: v.min() < 0), _upside_down, [False, True]),
])
def test_reward_and_termination_only_read_the_step(task_id, kwargs, moving_term, break_state, broken):
    """reward() and terminated() change nothing: asked again, or terminated() first, they give the
    step's numbers and reward terms; terminated() reads the state (broken by hand: terminal at once)."""
    task = gym.make_vec(task_id, num_envs=2, seed=0, **kwargs).unwrapped
    task.reset(seed=0)
    rng = np.random.default_rng(1)
    task.step(rng.uniform(-1, 1, (2, task.num_actions)))
    _, rew, term, _, _ = task.step(rng.uniform(-1, 1, (2, task.num_actions)))
    terms = {k: np.array(v, copy=True) for k, v in task.reward_terms.items()}
    name, moved = moving_term
    assert moved(terms[name]), (name, terms[name])  # the step moved it (the velocity; the previous action's penalty)
    for _ in range(2):
        np.testing.assert_array_equal(task.terminated(), term)
        np.testing.assert_array_equal(task.reward(), rew)
        for k, v in task.reward_terms.items():
            np.testing.assert_array_equal(v, terms[k], err_msg=k)
    assert not term.any()
    break_state(task.backend.qpos)
    np.testing.assert_array_equal(task.terminated(), broken)
    task.close()

