"""The bundled Quadruped task: model, standing, stability under random actions, DC-motor limits."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap

import gymnasium as gym
import mujoco
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import actuator_gym  # noqa: F401  (registers the ids)
from actuator_gym.tasks.quadruped import (
    DEFAULT_JOINT_POS,
    GO1_EFFORT_LIMIT,
    GO1_SATURATION_EFFORT,
    GO1_VELOCITY_LIMIT,
    JOINT_NAMES,
    LEG_NAMES,
    QuadrupedGeometry,
    QuadrupedObsScales,
    QuadrupedRewardCfg,
    QuadrupedTask,
    actuator_net_cfg,
    go1_dc_motor_cfg,
    ideal_pd_cfg,
    quadruped_mjcf,
    quadruped_observation,
    quadruped_termination,
    trunk_floor_clearance,
)

ID = "actuator_gym/Quadruped-v0"


def _quat_about(axis, angle):
    a = np.asarray(axis, dtype=np.float64)
    a = a / np.linalg.norm(a)
    return np.concatenate([[math.cos(angle / 2)], math.sin(angle / 2) * a])[None]


# -- model -------------------------------------------------------------------------------------
def test_model_dimensions_mass_and_default_pose():
    m = mujoco.MjModel.from_xml_string(quadruped_mjcf())
    g = QuadrupedGeometry()
    assert m.opt.timestep == 0.005
    assert m.body_subtreemass[m.body("trunk").id] == pytest.approx(12.4)
    hinge = [m.joint(i).name for i in range(m.njnt) if m.jnt_type[i] == mujoco.mjtJoint.mjJNT_HINGE]
    assert tuple(hinge) == JOINT_NAMES and len(JOINT_NAMES) == 12
    assert np.allclose(m.geom("trunk").size, (0.19, 0.10, 0.055))
    # feet in the default pose, by hand: hip at (sx 0.19, sy 0.05, 0); abduction a about x; thigh
    # offset 0.08 along y; flexion h and knee k about y (positive h swings the foot backwards)
    d = mujoco.MjData(m)
    d.qpos[2] = 0.5
    d.qpos[7:] = DEFAULT_JOINT_POS
    mujoco.mj_forward(m, d)
    for i, leg in enumerate(LEG_NAMES):
        a, h, k = DEFAULT_JOINT_POS[3 * i : 3 * i + 3]
        sx, sy = (1 if leg[0] == "F" else -1), (1 if leg[1] == "L" else -1)
        x = -g.thigh_length * math.sin(h) - g.calf_length * math.sin(h + k)
        z = -g.thigh_length * math.cos(h) - g.calf_length * math.cos(h + k)
        y0 = sy * g.thigh_offset
        foot = np.array([sx * 0.19 + x, sy * 0.05 + y0 * math.cos(a) - z * math.sin(a), 0.5 + y0 * math.sin(a) + z * math.cos(a)])
        np.testing.assert_allclose(d.site(f"{leg}_foot").xpos, foot, atol=1e-9)
    # robot geoms collide with the floor only
    floor = m.geom("floor").id
    for gi in range(m.ngeom):
        if gi != floor:
            assert m.geom_contype[gi] == 0


def test_check_env_and_unwrapped_attributes():
    env = gym.make(ID)
    check_env(env.unwrapped, skip_render_check=True)
    u = env.unwrapped
    assert isinstance(u.model, mujoco.MjModel) and isinstance(u.data, mujoco.MjData)
    assert u.dt == pytest.approx(0.02)  # 50 Hz policy over 200 Hz physics
    assert env.observation_space.shape == (48,) and env.action_space.shape == (12,)
    obs, info = env.reset(seed=3)
    np.testing.assert_allclose(obs[6:9], (0, 0, -1), atol=1e-6)  # level at reset
    np.testing.assert_allclose(obs[45:48], info["command"] * (2.0, 2.0, 0.25), rtol=1e-6)  # the command scales
    np.testing.assert_allclose(obs[9:21], u.data.qpos[7:] - np.array(DEFAULT_JOINT_POS), atol=1e-6)
    env.close()


def test_vector_entry_point_and_overrides():
    vec = gym.make_vec(ID, num_envs=3, actuators={"legs": ideal_pd_cfg()}, episode_length_s=1.0)
    assert isinstance(vec, QuadrupedTask)
    assert vec.observation_space.shape == (3, 48) and vec.action_space.shape == (3, 12)
    assert type(vec.collection["legs"].cfg).__name__ == "IdealPDActuatorCfg"
    assert vec.max_episode_steps == 50
    obs, _ = vec.reset(seed=0)
    obs, rew, term, trunc, info = vec.step(np.zeros((3, 12)))
    assert rew.shape == (3,) and info["actuator"]["applied_effort"].shape == (3, 12)
    vec.close()
    with pytest.raises(TypeError, match="unexpected keyword argument 'not_a_field'"):
        gym.make_vec(ID, num_envs=1, not_a_field=1)
    single = gym.make(ID, actuators={"legs": go1_dc_motor_cfg(max_delay=0, stiffness=30.0)}, decimation=2)
    legs = single.unwrapped.task.collection["legs"]
    assert legs.parameter("stiffness").numpy().max() == 30.0 and "delay_steps" not in legs.parameters()  # max_delay=0: no Delay part
    assert single.unwrapped.dt == pytest.approx(0.01)
    single.close()


def test_seeded_rollouts_are_identical():
    a, b = QuadrupedTask(num_envs=2, seed=5), QuadrupedTask(num_envs=2, seed=5)
    rng = np.random.default_rng(0)
    oa, _ = a.reset(seed=11)
    ob, _ = b.reset(seed=11)
    for _ in range(20):
        act = rng.uniform(-1, 1, (2, 12))
        oa, ra, *_ = a.step(act)
        ob, rb, *_ = b.step(act)
    np.testing.assert_array_equal(oa, ob)
    np.testing.assert_array_equal(ra, rb)
    assert not np.array_equal(a.commands[0], a.commands[1])


# -- default actuators -----------------------------------------------------------------------------
def test_default_actuators_are_delayed_dc_motors():
    task = QuadrupedTask(num_envs=32, seed=0)
    legs = task.collection["legs"]
    np.testing.assert_allclose(legs.parameter("stiffness").numpy(), 25.0)
    np.testing.assert_allclose(legs.parameter("saturation_effort").numpy(), 2 * 23.7, rtol=1e-6)
    np.testing.assert_allclose(legs.parameter("actuator_effort_limit").numpy(), 23.7, rtol=1e-6)
    np.testing.assert_allclose(legs.parameter("actuator_velocity_limit").numpy(), 30.0)
    lag = legs.parameter("delay_steps").numpy()
    assert set(np.unique(lag)) == {0, 1, 2}  # 32 envs: every lag drawn
    assert (lag == lag[:, :1]).all()  # one lag per env, shared by its joints


def test_actuator_net_preset_runs_the_bundled_learned_net():
    from actuator_gym.configs import preset_dir

    net = str(preset_dir() / "actuators" / "nets" / "dc_motor_mlp.onnx")
    cfg = actuator_net_cfg(net)
    assert cfg.network_file == net and cfg.actuator_effort_limit == GO1_EFFORT_LIMIT
    task = QuadrupedTask(num_envs=2, seed=0, actuators={"legs": cfg})
    task.reset(seed=0)
    for _ in range(5):
        obs, rew, term, trunc, info = task.step(np.zeros((2, 12)))
    tau = info["actuator"]["applied_effort"]
    assert np.isfinite(obs).all() and np.abs(tau).max() <= GO1_EFFORT_LIMIT + 1e-4 and np.abs(tau).max() > 0


# -- physics -----------------------------------------------------------------------------------------
def test_stands_under_default_pd_pose_for_5s():
    task = QuadrupedTask(num_envs=2, seed=0, joint_pos_noise=0.0, episode_length_s=6.0)
    task.reset(seed=0)
    heights, tilts = [], []
    for _ in range(250):  # 5 s at 50 Hz
        obs, rew, term, trunc, info = task.step(np.zeros((2, 12)))
        assert not term.any() and not trunc.any()
        heights.append(info["base_height"].copy())
        tilts.append(np.arccos(np.clip(-obs[:, 8], -1, 1)))
    h = np.array(heights)[25:]  # after 0.5 s of settling
    assert (h > 0.25).all() and (h < 0.32).all()
    assert (h.max(axis=0) - h.min(axis=0) < 0.03).all()
    assert np.max(tilts) < 0.1
    # the feet did not slide away: base xy moved less than 10 cm
    assert np.linalg.norm(task.backend.qpos[:, :2], axis=1).max() < 0.1


def test_random_actions_stay_finite_10k_steps():
    n, steps = 8, 1250  # 10k env steps, 40k physics substeps per env batch
    task = QuadrupedTask(num_envs=n, seed=1)
    task.reset(seed=1)
    rng = np.random.default_rng(1)
    ended = 0
    for _ in range(steps):
        obs, rew, term, trunc, info = task.step(rng.uniform(-4, 4, (n, 12)))
        assert np.isfinite(obs).all() and np.isfinite(rew).all()
        ended += int(term.sum())
    assert np.isfinite(task.backend.qpos).all() and np.isfinite(task.backend.qvel).all()
    assert np.abs(task.backend.qvel).max() < 1e3
    assert ended > 0  # violent random actions do make it fall, and autoreset recovers


def test_dc_motor_limits_hold_at_every_substep():
    """Applied effort vs the torque-speed envelope at the joint velocity the clamp saw, every substep."""
    n = 4
    task = QuadrupedTask(num_envs=n, seed=2, autoreset_mode="disabled", episode_length_s=100.0)
    task.past_end_raises = False  # fallen robots keep stepping: the envelope must hold in any state
    task.reset(seed=2)
    sat, vlim, elim = GO1_SATURATION_EFFORT, GO1_VELOCITY_LIMIT, GO1_EFFORT_LIMIT
    state = {"qd": task.backend.joint_vel(), "records": []}

    def record(t, k):
        tau = t.collection.applied_effort.numpy().astype(np.float64)
        computed = t.collection.computed_effort.numpy().astype(np.float64)
        state["records"].append((state["qd"], tau, computed))
        state["qd"] = t.backend.joint_vel()  # what the next substep's clamp sees

    task.add_substep_callback(record)
    rng = np.random.default_rng(2)
    for i in range(150):
        a = rng.choice([-4.0, 4.0], size=(n, 12)) if i % 10 < 5 else rng.uniform(-4, 4, (n, 12))
        task.step(a)
    qd, tau, computed = (np.array(x) for x in zip(*state["records"]))
    assert len(qd) == 150 * 4
    v = np.clip(qd, -vlim * (1 + elim / sat), vlim * (1 + elim / sat))
    upper = np.minimum(sat * (1 - v / vlim), elim)
    lower = np.maximum(sat * (-1 - v / vlim), -elim)
    assert (tau <= upper + 1e-3).all() and (tau >= lower - 1e-3).all()
    # the test exercised the curve: both the flat limit and the back-EMF slope clipped commands
    clipped = np.abs(computed - tau) > 1e-3
    on_slope = clipped & (np.abs(qd) > vlim * (1 - elim / sat)) & (np.abs(tau) < elim - 1e-3)
    assert clipped.mean() > 0.05 and on_slope.any()
    assert (np.abs(tau) <= elim + 1e-4).all()


# -- pure functions ------------------------------------------------------------------------------------
def test_trunk_clearance_and_termination_by_hand():
    half = (0.19, 0.10, 0.055)
    level = np.array([1.0, 0, 0, 0])[None]
    assert trunk_floor_clearance(np.array([[0, 0, 0.3]]), level, half) == pytest.approx(0.3 - 0.055)
    rolled = _quat_about((1, 0, 0), math.pi / 2)  # on its side: lowest point is y half-width below
    assert trunk_floor_clearance(np.array([[0, 0, 0.3]]), rolled, half) == pytest.approx(0.3 - 0.10)
    pitched = _quat_about((0, 1, 0), 0.3)
    expect = 0.3 - (0.19 * math.sin(0.3) + 0.055 * math.cos(0.3))
    assert trunk_floor_clearance(np.array([[0, 0, 0.3]]), pitched, half) == pytest.approx(expect)
    pos = np.array([[0, 0, 0.28], [0, 0, 0.14], [0, 0, 0.28], [0, 0, 0.06]])
    quat = np.concatenate([level, level, _quat_about((1, 0, 0), 1.2), level])
    out = quadruped_termination(pos, quat, half, min_base_height=0.15, max_tilt=1.0, trunk_contact_margin=0.005)
    np.testing.assert_array_equal(out, [False, True, True, True])


def test_observation_by_hand():
    yaw = _quat_about((0, 0, 1), math.pi / 2)
    obs = quadruped_observation(
        yaw, np.array([[1.0, 0, 0]]), np.array([[0, 0, 0.5]]), np.full((1, 12), 0.3), np.full((1, 12), 2.0),
        np.full(12, 0.1), np.full((1, 12), -1.0), np.array([[0.5, 0, 0.2]]),
    )
    np.testing.assert_allclose(obs[0, 0:3], (0, -2, 0), atol=1e-7)  # world +x is body -y after +90° yaw; x2 [per m/s]
    np.testing.assert_allclose(obs[0, 3:6], (0, 0, 0.125), atol=1e-7)  # x0.25 [per rad/s]
    np.testing.assert_allclose(obs[0, 6:9], (0, 0, -1), atol=1e-7)
    np.testing.assert_allclose(obs[0, 9:21], 0.2, atol=1e-7)
    np.testing.assert_allclose(obs[0, 21:33], 0.1, atol=1e-7)  # 2 rad/s x 0.05
    np.testing.assert_allclose(obs[0, 33:45], -1.0)
    np.testing.assert_allclose(obs[0, 45:48], (1.0, 0.0, 0.05), atol=1e-7)
    unscaled = quadruped_observation(
        yaw, np.array([[1.0, 0, 0]]), np.array([[0, 0, 0.5]]), np.full((1, 12), 0.3), np.full((1, 12), 2.0),
        np.full(12, 0.1), np.full((1, 12), -1.0), np.array([[0.5, 0, 0.2]]), QuadrupedObsScales(1.0, 1.0, 1.0, 1.0),
    )
    np.testing.assert_allclose(unscaled[0, [1, 5, 21, 45, 47]], (-1, 0.5, 2.0, 0.5, 0.2), atol=1e-7)


def test_power_penalty_comes_from_actuator_telemetry():
    task = QuadrupedTask(num_envs=2, seed=0)
    task.reset(seed=0)
    _, _, _, _, info = task.step(np.full((2, 12), 2.0))
    power = info["actuator"]["energy"].sum(axis=1) / task.dt
    assert (power > 0).all()
    np.testing.assert_allclose(task.reward_terms["power"], QuadrupedRewardCfg().power * power * task.dt)


def test_rgb_array_frames():
    """Rendered in a fresh interpreter so that MUJOCO_GL=egl applies; skipped without a GL backend."""
    code = textwrap.dedent(
        """
        import gymnasium as gym, actuator_gym
        from actuator_gym.backends.mujoco_batch import gl_available
        if not gl_available():
            print("NO_GL"); raise SystemExit
        env = gym.make("actuator_gym/Quadruped-v0", render_mode="rgb_array", render_width=64, render_height=48)
        env.reset(seed=0)
        f = env.render()
        v = gym.make_vec("actuator_gym/Quadruped-v0", num_envs=2, render_mode="rgb_array", render_width=32, render_height=24)
        fs = v.render()
        print("SHAPES", f.shape, f.dtype, [x.shape for x in fs], int(f.std() > 0))
        """
    )
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    if "NO_GL" in out.stdout or (out.returncode != 0 and "OpenGL" in out.stderr):
        pytest.skip("no OpenGL backend (MUJOCO_GL=egl/osmesa) available")
    assert out.returncode == 0, out.stderr[-2000:]
    assert "SHAPES (48, 64, 3) uint8 [(24, 32, 3), (24, 32, 3)] 1" in out.stdout
