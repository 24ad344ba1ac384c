"""The bundled Quadrotor task: thruster every substep, allocation, hover, asymmetric response, yaw sign."""

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
from actuator_gym import ThrusterCfg
from actuator_gym.tasks.quadrotor import (
    ROTOR_NAMES,
    SPIN_DIRECTIONS,
    QuadrotorEnv,
    QuadrotorTask,
    action_to_thrust,
    quadrotor_mjcf,
    quadrotor_termination,
    quadrotor_thruster_cfg,
    rotor_power,
    thrust_to_action,
)

ID = "actuator_gym/Quadrotor-v0"
STILL = dict(init_pos_noise=0.0, init_tilt_noise=0.0, random_yaw=False)


def _yaw(quat):
    w, x, y, z = quat
    return math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


def test_model_mass_geometry():
    m = mujoco.MjModel.from_xml_string(quadrotor_mjcf())
    bid = m.body("airframe").id
    assert m.body_subtreemass[bid] == pytest.approx(1.0)
    for i, name in enumerate(ROTOR_NAMES):
        p = m.site(name).pos
        assert math.hypot(p[0], p[1]) == pytest.approx(0.15)
        assert np.sign(p[0]) == (1 if i in (0, 3) else -1) and np.sign(p[1]) == (1 if i in (0, 1) else -1)
    assert m.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE


def test_check_env_hover_action_and_telemetry():
    env = gym.make(ID)
    check_env(env.unwrapped, skip_render_check=True)
    u = env.unwrapped
    assert isinstance(u, QuadrotorEnv) and isinstance(u.model, mujoco.MjModel) and u.dt == pytest.approx(0.01)
    assert env.observation_space.shape == (22,) and env.action_space.shape == (4,)
    # hover action by hand: m g / 4 over the thrust range (0.1, 6.0) N
    hover = 1.0 * 9.81 / 4
    np.testing.assert_allclose(u.hover_action, 2 * (hover - 0.1) / 5.9 - 1, rtol=1e-6)
    assert u.hover_action.shape == (4,) and u.hover_action.dtype == np.float32
    obs, info = env.reset(seed=0)
    obs, rew, term, trunc, info = env.step(u.hover_action)
    act = info["actuator"]
    assert act["applied_thrust"].shape == (4,)
    np.testing.assert_allclose(act["applied_thrust"], hover, rtol=1e-5)
    # power proxy by hand: T^1.5 / sqrt(2 rho pi r^2)
    np.testing.assert_allclose(act["rotor_power"], hover**1.5 / math.sqrt(2 * 1.225 * math.pi * 0.0635**2), rtol=1e-5)
    np.testing.assert_allclose(obs[0:3], info["goal"] - u.data.qpos[:3], atol=1e-5)
    np.testing.assert_allclose(obs[3:12], u.data.xmat[u.model.body("airframe").id], atol=1e-6)
    env.close()


def test_vector_env_and_actuator_override():
    cfg = quadrotor_thruster_cfg(thrust_const_range=(1.2e-5, 1.5e-5))
    vec = gym.make_vec(ID, num_envs=3, actuators=cfg)
    assert isinstance(vec, QuadrotorTask)
    assert vec.hover_action.shape == (3, 4)
    kf = vec.thruster.parameter("thrust_const").numpy()
    assert ((kf >= 1.2e-5) & (kf <= 1.5e-5)).all() and np.unique(kf).size > 1
    obs, rew, term, trunc, info = vec.step(vec.hover_action)
    assert obs.shape == (3, 22) and info["actuator"]["applied_thrust"].shape == (3, 4)
    vec.close()
    single = gym.make(ID, actuators=quadrotor_thruster_cfg(tau_inc_range=(0.02, 0.02)), goal_low=(0, 0, 2), goal_high=(0, 0, 2))
    _, info = single.reset(seed=0)
    np.testing.assert_allclose(info["goal"], (0, 0, 2))
    np.testing.assert_allclose(single.unwrapped.task.thruster.parameter("tau_inc").numpy(), 0.02)
    single.close()
    with pytest.raises(ValueError, match="ThrusterCfg"):
        gym.make_vec(ID, num_envs=1, actuators={"a": quadrotor_thruster_cfg(), "b": quadrotor_thruster_cfg()})
    with pytest.raises(ValueError, match="hover thrust"):
        QuadrotorTask(num_envs=1, actuators=quadrotor_thruster_cfg(thrust_range=(0.1, 2.0)))


def test_allocation_from_geometry_and_spins():
    task = QuadrotorTask(num_envs=1, seed=0)
    a = 0.15 / math.sqrt(2)
    x = np.array([a, -a, -a, a])
    y = np.array([a, a, -a, -a])
    zc = task.model.site_pos[task.model.site("rotor_0").id][2] - task.model.body_ipos[task._bid][2]
    A = task.allocation.numpy()
    np.testing.assert_allclose(A[2], 1.0)
    np.testing.assert_allclose(A[3], y, atol=1e-6)  # roll torque  r x z = (y, -x, 0)
    np.testing.assert_allclose(A[4], -x, atol=1e-6)
    np.testing.assert_allclose(A[5], 0.07 * np.array(SPIN_DIRECTIONS), atol=1e-7)
    assert zc > 0 and np.abs(A[:2]).max() == 0


def test_hover_holds_altitude_for_2s():
    task = QuadrotorTask(num_envs=2, seed=0, **STILL)
    task.reset(seed=0)
    start = task.backend.qpos[:, :3].copy()
    for _ in range(200):  # 2 s at 100 Hz
        obs, rew, term, trunc, info = task.step(task.hover_action)
        assert not term.any()
    drift = np.linalg.norm(task.backend.qpos[:, :3] - start, axis=1)
    assert drift.max() < 0.05
    assert np.abs(task.backend.qvel).max() < 0.05


def test_thrust_step_rises_slower_than_it_falls():
    task = QuadrotorTask(num_envs=1, seed=3, **STILL)
    task.reset(seed=3)
    trace = []
    task.add_substep_callback(lambda t, k: trace.append(t.thruster.applied_thrust.numpy()[0].copy()))
    hover, high = task.hover_thrust, 4.0
    up = np.full((1, 4), thrust_to_action(high, (0.1, 6.0)))
    for _ in range(40):  # 0.4 s high
        task.step(up)
    n_up = len(trace)
    for _ in range(20):  # 0.2 s back at hover
        task.step(task.hover_action)
    tr = np.array(trace)
    dt = task.physics_dt

    def time_to_63(seg, start, end):
        frac = (seg - start) / (end - start)
        return (np.argmax(frac >= 0.632, axis=0) + 1) * dt

    rise = time_to_63(tr[:n_up], hover, high)
    fall = time_to_63(tr[n_up:], high, hover)
    assert np.allclose(tr[n_up - 1], high, rtol=1e-2) and np.allclose(tr[-1], hover, rtol=1e-3)
    tau_inc = task.thruster.parameter("tau_inc").numpy()[0]
    assert ((tau_inc >= 0.05) & (tau_inc <= 0.08)).all()
    # by hand: the rotor speed w approaches its target with time constant tau + dt (discrete
    # mixing factor 1 / (dt + tau)); thrust = k_f w², so 63.2 % of the thrust step needs the speed
    # fraction f = (sqrt(T0 + 0.632 (T1 - T0)) - sqrt(T0)) / (sqrt(T1) - sqrt(T0)), reached at
    # t = -(tau + dt) ln(1 - f)
    def expected(t0, t1, tau):
        f = (math.sqrt(t0 + 0.632 * (t1 - t0)) - math.sqrt(t0)) / (math.sqrt(t1) - math.sqrt(t0))
        return -(tau + dt) * math.log(1 - f)

    t_high = tr[n_up - 1]
    exp_rise = np.array([expected(hover, high, t) for t in tau_inc])
    exp_fall = np.array([expected(th, hover, 0.005) for th in t_high])
    assert np.abs(rise - exp_rise).max() <= 1.5 * dt  # measured at substep resolution
    assert np.abs(fall - exp_fall).max() <= 1.5 * dt
    assert (rise > 4 * fall).all()


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_spin_directions_give_predicted_yaw(sign):
    task = QuadrotorTask(num_envs=1, seed=1, **STILL)
    task.reset(seed=1)
    delta = 0.4 * sign * np.array(SPIN_DIRECTIONS)  # more thrust on the +1 rotors for sign = +1
    cmd = thrust_to_action(task.hover_thrust + delta, (0.1, 6.0))[None]
    yaw0 = _yaw(task.backend.qpos[0, 3:7])
    for _ in range(30):  # 0.3 s
        task.step(cmd)
    # predicted: torque 0.07 * sum(s_i T_i) about +z; after the rotors settle it is 0.07 * 4 * 0.4 * sign
    wz = task.backend.qvel[0, 5]
    yaw = _yaw(task.backend.qpos[0, 3:7]) - yaw0
    torque = 0.07 * 4 * 0.4  # N·m
    izz = task.model.body_inertia[task._bid].max()  # yaw is the largest principal axis of the X frame
    # bounds: the full torque from t = 0 (upper); the rotors settle within ~0.1 s (lower)
    assert np.sign(wz) == sign and np.sign(yaw) == sign
    assert abs(wz) <= torque / izz * 0.3 * 1.01
    assert abs(wz) >= 0.5 * torque / izz * 0.3
    assert np.abs(task.backend.qvel[0, 3:5]).max() < 0.2 * abs(wz)  # mostly yaw


def test_min_thrust_crashes_and_terminates():
    task = QuadrotorTask(num_envs=2, seed=0, autoreset_mode="disabled", **STILL)
    task.reset(seed=0)
    ended = np.zeros(2, bool)
    for i in range(100):
        obs, rew, term, trunc, info = task.step(-np.ones((2, 4)))
        ended |= term
        if ended.all():
            break
    assert ended.all()
    assert (task.backend.qpos[:, 2] < 0.1).all()
    assert (rew < -4).all()  # the crash penalty


def test_pure_functions_by_hand():
    np.testing.assert_allclose(action_to_thrust([-1.0, 0.0, 1.0, 3.0], (0.1, 6.0)), [0.1, 3.05, 6.0, 6.0])
    np.testing.assert_allclose(thrust_to_action(action_to_thrust([-0.3, 0.7], (0.1, 6.0)), (0.1, 6.0)), [-0.3, 0.7])
    assert rotor_power([-1.0], 0.1)[0] == 0.0
    assert rotor_power([4.0], 0.1)[0] == pytest.approx(8.0 / math.sqrt(2 * 1.225 * math.pi * 0.01))
    level = np.tile([1.0, 0, 0, 0], (5, 1))
    level[4] = (math.cos(0.8), math.sin(0.8), 0, 0)  # 1.6 rad roll
    pos = np.array([[0, 0, 1.0], [0, 0, 0.05], [3.5, 0, 1.0], [0, 0, 4.5], [0, 0, 1.0]])
    np.testing.assert_array_equal(
        quadrotor_termination(pos, level, min_altitude=0.1, max_altitude=4.0, bounds_xy=3.0, max_tilt=1.5),
        [False, True, True, True, True],
    )


def test_seeded_rollouts_are_identical():
    a = QuadrotorTask(num_envs=2, seed=4, actuators=quadrotor_thruster_cfg(thrust_const_range=(1.2e-5, 1.5e-5)))
    b = QuadrotorTask(num_envs=2, seed=4, actuators=quadrotor_thruster_cfg(thrust_const_range=(1.2e-5, 1.5e-5)))
    oa, _ = a.reset(seed=9)
    ob, _ = b.reset(seed=9)
    rng = np.random.default_rng(0)
    for _ in range(10):
        act = rng.uniform(-1, 1, (2, 4))
        oa, *_ = a.step(act)
        ob, *_ = b.step(act)
    np.testing.assert_array_equal(oa, ob)
    np.testing.assert_array_equal(a.thruster.parameter("tau_inc"), b.thruster.parameter("tau_inc"))


def test_rgb_array_frames():
    """Rendered in a fresh interpreter so that MUJOCO_GL=egl applies; skipped without a GL backend."""
    code = textwrap.dedent(
        """
        import gymnasium as gym, actuator_gym
        from actuator_gym.backends.mujoco_batch import gl_available
        if not gl_available():
            print("NO_GL"); raise SystemExit
        env = gym.make("actuator_gym/Quadrotor-v0", render_mode="rgb_array", render_width=64, render_height=48)
        env.reset(seed=0)
        f = env.render()
        print("SHAPES", f.shape, f.dtype, int(f.std() > 0))
        """
    )
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    if "NO_GL" in out.stdout or (out.returncode != 0 and "OpenGL" in out.stderr):
        pytest.skip("no OpenGL backend (MUJOCO_GL=egl/osmesa) available")
    assert out.returncode == 0, out.stderr[-2000:]
    assert "SHAPES (48, 64, 3) uint8 1" in out.stdout
