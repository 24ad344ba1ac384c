"""actuator_gym/Pendulum-v0: physics checks (effort-limit sweep, delays), Gymnasium contracts."""

from __future__ import annotations

import math
import os
import warnings

import gymnasium as gym
import numpy as np
import pytest
import torch

import actuator_gym  # noqa: F401  (registers the ids)
from actuator_gym import DelayedPDActuatorCfg, IdealPDActuatorCfg
from actuator_gym.tasks.pendulum import HOLDING_TORQUE, PendulumTask

ID = "actuator_gym/Pendulum-v0"


def test_model_numbers():
    task = PendulumTask(num_envs=1, seed=0)
    m = task.model
    assert HOLDING_TORQUE == pytest.approx(2.943)
    assert task.physics_dt == pytest.approx(1 / 360) and task.decimation == 6
    assert task.dt == pytest.approx(1 / 60) and task.max_episode_steps == 300
    assert m.body_mass[1] == pytest.approx(0.6)
    np.testing.assert_allclose(m.body_ipos[1], [0, 0, -0.5])
    assert m.dof_damping[0] == 0 and m.dof_frictionloss[0] == 0 and m.dof_armature[0] == 0
    # static check of the sign convention: at q = pi/2 gravity pulls back with m g L
    task.backend.reset_envs([0], qpos=[[math.pi / 2]])
    d = task.backend.data(0)
    import mujoco

    mujoco.mj_forward(m, d)
    assert d.qfrc_bias[0] == pytest.approx(HOLDING_TORQUE, rel=1e-6)
    # normalized actions: [-1, 1] onto [-pi, pi] (unlimited hinge), onto the joint range when given
    assert task.single_action_space == gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
    np.testing.assert_allclose((task.action_scale, task.action_offset), ([math.pi], [0.0]))
    ranged = PendulumTask(num_envs=1, joint_range=(-1.0, 2.0))
    assert ranged.single_action_space == gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
    np.testing.assert_allclose((ranged.action_scale, ranged.action_offset), ([1.5], [0.5]))
    absolute = PendulumTask(num_envs=1, action_scale=1.0, action_offset=0.0)  # the explicit mapping still works
    np.testing.assert_allclose((absolute.single_action_space.low, absolute.single_action_space.high), ([-math.pi], [math.pi]), rtol=1e-6)


def test_effort_limit_sweep_stalls_at_asin():
    """Stiff PD toward horizontal: limits above m g L reach it, 1 and 2 N·m stall at asin(limit / m g L)."""
    limits = [1.0, 2.0, 4.0, 8.0]
    n = len(limits)
    act = IdealPDActuatorCfg(
        joint_names_expr=["hinge"], stiffness=200.0, damping=5.0,
        actuator_effort_limit=torch.tensor(limits)[:, None],  # one limit per env
    )
    task = PendulumTask(num_envs=n, actuators={"p": act}, joint_damping=0.5,
                        initial_angle_range=(0.0, 0.0), episode_length_s=100.0, seed=0)
    task.reset(seed=0)
    target = np.full((n, 1), 0.5)  # pi / 2 (action_scale pi)
    for _ in range(240):  # 4 s
        _, _, _, _, info = task.step(target)
    q = np.degrees(task.backend.joint_pos()[:, 0])
    expected = [math.degrees(math.asin(min(lim / HOLDING_TORQUE, 1.0))) for lim in limits]
    assert abs(q[0] - expected[0]) < 2.0 and abs(q[1] - expected[1]) < 2.0, (q, expected)
    assert abs(q[2] - 90.0) < 2.0 and abs(q[3] - 90.0) < 2.0, q
    # the stalled ones are saturated at their limit, the others are not
    np.testing.assert_allclose(info["actuator"]["applied_effort"][:2, 0], limits[:2], rtol=1e-6)
    assert info["actuator"]["saturated"][:, 0].tolist() == [True, True, False, False]


@pytest.mark.parametrize("delays", [[0, 6, 12, 24]])
def test_delay_shifts_step_response_by_substeps(delays):
    """Per-substep recording: the first crossing of 0.2 rad comes exactly `delay` substeps later."""
    crossings = []
    for d in delays:
        act = DelayedPDActuatorCfg(joint_names_expr=["hinge"], stiffness=50.0, damping=2.0,
                                   actuator_effort_limit=10.0, min_delay=d, max_delay=d)
        task = PendulumTask(num_envs=1, actuators={"p": act}, initial_angle_range=(0.0, 0.0), seed=0)
        task.reset(seed=0)
        trace = []
        task.add_substep_callback(lambda t, k: trace.append(float(t.backend.qpos[0, 0])))
        for _ in range(3):  # hold the hanging pose: the delay history fills with q* = 0
            task.step(np.zeros((1, 1)))
        assert max(abs(x) for x in trace) == 0.0  # exactly at rest
        start = len(trace)
        for _ in range(10):
            task.step(np.full((1, 1), 0.5))  # target pi / 2
        k = next(i for i, x in enumerate(trace) if x > 0.2)
        crossings.append(k - start)
    shifts = [c - crossings[0] for c in crossings]
    assert shifts == delays, (crossings, delays)


def test_reward_and_observation_by_hand():
    task = PendulumTask(num_envs=3, seed=0)
    obs, info = task.reset(seed=4)
    cmd = info["command"]
    assert np.all(np.abs(cmd) <= math.pi / 2) and len(np.unique(cmd)) == 3
    obs, rew, _, _, info = task.step(np.full((3, 1), 0.3))
    q, qd = info["actuator"]["joint_pos"][:, 0], info["actuator"]["joint_vel"][:, 0]
    err = (q - cmd + math.pi) % (2 * math.pi) - math.pi
    np.testing.assert_allclose(obs, np.stack([np.sin(q), np.cos(q), qd, cmd, err], 1).astype(np.float32), rtol=1e-6)
    tau = info["actuator"]["applied_effort"][:, 0].astype(np.float64)
    np.testing.assert_allclose(rew, -(err**2) - 1e-3 * tau**2, rtol=1e-12)
    # same seed, same commands
    _, info2 = PendulumTask(num_envs=3, seed=9).reset(seed=4)
    np.testing.assert_array_equal(info2["command"], cmd)


def test_gymnasium_make_single_env_and_check_env():
    from gymnasium.utils.env_checker import check_env

    env = gym.make(ID)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env.unwrapped, skip_render_check=True)
    u = env.unwrapped
    assert u.dt == pytest.approx(1 / 60)
    assert u.model.nq == 1
    obs, info = env.reset(seed=0)
    obs, rew, term, trunc, info = env.step(np.array([0.5], dtype=np.float32))
    assert isinstance(rew, float) and type(term) is bool and type(trunc) is bool
    assert u.data.qpos[0] == pytest.approx(info["actuator"]["joint_pos"][0])
    assert math.atan2(obs[0], obs[1]) == pytest.approx(u.data.qpos[0], abs=1e-6)
    assert info["actuator"]["applied_effort"].shape == (1,)
    env.close()


def test_make_vec_uses_native_class_with_overrides():
    kp = 33.0
    envs = gym.make_vec(ID, num_envs=4, actuators={"p": IdealPDActuatorCfg(joint_names_expr=["hinge"], stiffness=kp)},
                        joint_damping=0.2)
    assert isinstance(envs, PendulumTask) and envs.num_envs == 4
    assert envs.metadata["autoreset_mode"] is gym.vector.AutoresetMode.NEXT_STEP
    obs, info = envs.reset(seed=0)
    assert obs.shape == (4, 5)
    np.testing.assert_array_equal(info["actuator"]["parameters"]["p"]["stiffness"], np.full((4, 1), kp, np.float32))
    assert envs.model.dof_damping[0] == pytest.approx(0.2)
    same = gym.make_vec(ID, num_envs=2, autoreset_mode="same_step")
    assert same.metadata["autoreset_mode"] is gym.vector.AutoresetMode.SAME_STEP
    envs.close()


_RENDER_CHECK = """
import gymnasium as gym, numpy as np, actuator_gym
from actuator_gym.backends.mujoco_batch import gl_available
if not gl_available():
    print("NO-GL"); raise SystemExit(0)
env = gym.make("%s", render_mode="rgb_array", render_width=64, render_height=48)
env.reset(seed=0)
frame = env.render()
assert frame.shape == (48, 64, 3) and frame.dtype == np.uint8 and frame.std() > 0, (frame.shape, frame.dtype)
env.close()
envs = gym.make_vec("%s", num_envs=2, render_mode="rgb_array", render_width=32, render_height=32)
envs.reset(seed=0)
frames = envs.render()
assert len(frames) == 2 and all(f.shape == (32, 32, 3) for f in frames)
envs.close()
print("FRAMES-OK")
""" % (ID, ID)


def test_rgb_array_frames():
    """Frames of the right shape where a GL backend exists (MUJOCO_GL is read when mujoco is
    imported, so each backend is tried in a fresh interpreter); skips cleanly without one."""
    import subprocess
    import sys

    tried = []
    backends = [os.environ["MUJOCO_GL"]] if os.environ.get("MUJOCO_GL") else ["egl", "osmesa"]
    for gl in backends:
        r = subprocess.run([sys.executable, "-c", _RENDER_CHECK], env={**os.environ, "MUJOCO_GL": gl},
                           capture_output=True, text=True, timeout=120)
        if "FRAMES-OK" in r.stdout:
            return
        if (r.returncode == 0 and "NO-GL" in r.stdout) or "OpenGL" in r.stderr or "osmesa" in r.stderr:
            tried.append(gl)
            continue
        raise AssertionError(f"rendering with MUJOCO_GL={gl} failed:\n{r.stdout}\n{r.stderr[-3000:]}")
    pytest.skip(f"no OpenGL backend available (tried MUJOCO_GL={tried})")
