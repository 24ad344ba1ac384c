"""Physics acceptance tests: the bundled tasks and the wrapper's rotor path, built as a user builds
them (``gym.make`` / ``ActuatorWrapper``), each against an expectation computed by hand from the
model's masses and lengths (read from the model, not copied)."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import actuator_gym  # noqa: F401  (registers the ids)
from actuator_gym import IdealPDActuatorCfg, ThrusterCfg
from actuator_gym.wrappers import ActuatorWrapper
from test_rotor_groups import MultirotorEnv, quad_xml  # the Gymnasium MujocoEnv multirotor (1 kg, four site motors)

ARL_KF = (9.26312e-06, 1.826312e-05)  # N/rps²: the ARL-class thrust-constant range, drawn per rotor at every reset


def rotors(thrust_const_range, thrust_range=(0.1, 6.0)) -> ThrusterCfg:
    return ThrusterCfg(thruster_names_expr=["rotor_[0-3]"], thrust_range=thrust_range, thrust_const_range=thrust_const_range,
                       tau_inc_range=(0.05, 0.08), tau_dec_range=(0.005, 0.005), torque_to_thrust_ratio=0.07)


def weight(model, body: int) -> float:
    """[N]: m g of the body's subtree, from the model."""
    return float(model.body_subtreemass[body]) * -float(model.opt.gravity[2])


# ---- hover ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kf", [None, ARL_KF], ids=["default_kf", "random_kf"])
def test_quadrotor_task_hover_action_holds_altitude_2s(kf):
    """Level start, hover_action: four rotors at m g / 4 each carry the weight, for any k_f drawn
    (the rotors start at the hover thrust, not at the hover speed of the range's middle k_f)."""
    kw = {} if kf is None else {"actuators": rotors(kf)}
    env = gym.make("actuator_gym/Quadrotor-v0", max_episode_steps=100000, init_tilt_noise=0.0, **kw)
    u = env.unwrapped
    env.reset(seed=0)
    m, d = u.model, u.data
    frame = m.body("airframe").id
    t_hover = weight(m, frame) / 4  # 1.0 kg * 9.81 / 4 = 2.4525 N
    np.testing.assert_allclose(u.hover_action, 2 * (t_hover - 0.1) / (6.0 - 0.1) - 1, rtol=1e-6)
    p0 = d.qpos[:3].copy()
    for _ in range(round(2.0 / u.dt)):
        _, _, term, _, info = env.step(u.hover_action)
        assert not term and abs(d.qpos[2] - p0[2]) < 0.05, (d.qpos[:3], info["actuator"]["applied_thrust"])
    # still level, not drifting: the four equal thrusts gave no torque
    assert d.xmat[frame][8] > math.cos(0.01) and np.abs(d.qpos[:2] - p0[:2]).max() < 0.01
    np.testing.assert_allclose(info["actuator"]["applied_thrust"], t_hover, rtol=1e-4)
    env.close()


def test_quadrotor_tilted_start_loses_altitude_by_its_tilt_only():
    """The default reset tilts the airframe (init_tilt_noise 0.1 rad on roll and pitch): hover_action
    then gives m g along the body z axis, no torque, so the acceleration is constant,
    a = g (z_body - e_z): after n substeps of h (MuJoCo's semi-implicit Euler: v += a h, x += v h)
    the displacement is a h² n (n + 1) / 2, at t = n h = 2 s a drop of g (1 - R_zz) t² / 2 (1 + 1/n)
    and as much forward with R_xz (seed 0: R_zz = 0.99058, a 0.185 m drop and 2.66 m forward)."""
    env = gym.make("actuator_gym/Quadrotor-v0", max_episode_steps=100000)
    u = env.unwrapped
    env.reset(seed=0)
    d = u.data
    z_body = d.xmat[u.model.body("airframe").id].reshape(3, 3)[:, 2].copy()
    p0, h = d.qpos[:3].copy(), u.model.opt.timestep
    for _ in range(round(2.0 / u.dt)):
        env.step(u.hover_action)
    n, g = round(2.0 / h), -u.model.opt.gravity[2]
    np.testing.assert_allclose(d.qpos[:3] - p0, g * (z_body - [0, 0, 1]) * h**2 * n * (n + 1) / 2, atol=1e-4)
    env.close()


@pytest.mark.parametrize("kf", [(1.376e-5, 1.376e-5), ARL_KF], ids=["constant_kf", "random_kf"])
def test_wrapper_rotor_groups_hover_holds_altitude_2s(tmp_path, kf):
    """ActuatorWrapper rotor groups on a Gymnasium MujocoEnv multirotor, started at the hover thrust
    (initial_thrust = m g / 4) and commanded it: within 5 cm for 2 s, for any k_f drawn."""
    path = tmp_path / "multirotor.xml"
    path.write_text(quad_xml())
    quad = MultirotorEnv(str(path))
    m, d = quad.model, quad.data
    t_hover = weight(m, 1) / 4  # the 1 kg box: 2.4525 N per rotor
    env = ActuatorWrapper(quad, actuators={"rotors": rotors(kf, (0.1, 10.0))}, initial_thrust=t_hover)
    env.reset(seed=0)
    p0 = d.qpos[:3].copy()
    hover = np.full(4, 2 * (t_hover - 0.1) / (10.0 - 0.1) - 1, np.float32)
    for _ in range(round(2.0 / env.unwrapped.dt)):
        _, _, _, _, info = env.step(hover)
        assert abs(d.qpos[2] - p0[2]) < 0.05, (d.qpos[:3], info["actuator"]["applied_thrust"])
    assert d.xmat[1][8] > math.cos(0.01) and np.abs(d.qpos[:2] - p0[:2]).max() < 0.01  # level, not drifting
    np.testing.assert_allclose(info["actuator"]["applied_thrust"], t_hover, rtol=1e-4)
    np.testing.assert_allclose(d.actuator_force, t_hover, rtol=1e-4)  # what the env's motors received
    env.close()


# ---- pendulum ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("limit", [1.0, 2.0])
def test_pendulum_stalls_at_asin_of_effort_limit_over_gravity_torque(limit):
    """Target horizontal (beyond reach: the PD asks for far more than ``limit``), the effort clipped at
    ``limit`` N·m: the pendulum settles where m g l sin q = limit. Joint damping 1 N·m·s/rad settles it
    (the saturated actuator adds none): decay rate b / (2 m l²) = 3.3 /s, 5 s."""
    act = IdealPDActuatorCfg(joint_names_expr=["hinge"], stiffness=20.0, damping=2.0, actuator_effort_limit=limit)
    env = gym.make("actuator_gym/Pendulum-v0", actuators={"p": act}, joint_damping=1.0,
                   initial_angle_range=(0.0, 0.0), episode_length_s=10.0)
    u = env.unwrapped
    env.reset(seed=0)
    m = u.model
    body = m.body("pendulum").id
    mass, length, g = float(m.body_mass[body]), float(np.linalg.norm(m.body_ipos[body])), -float(m.opt.gravity[2])
    target = np.array([0.5], np.float32)  # pi / 2 (action_scale pi)
    for _ in range(round(5.0 / u.dt)):
        _, _, _, _, info = env.step(target)
    q = float(u.data.qpos[0])
    assert q == pytest.approx(math.asin(limit / (mass * g * length)), abs=1e-4)  # 0.6 kg, 0.5 m: 0.344 / 0.748 rad
    assert info["actuator"]["applied_effort"][0] == pytest.approx(limit, rel=1e-6)
    env.close()


# ---- quadruped --------------------------------------------------------------------------------------
def test_quadruped_stands_in_default_pose_under_default_actuators():
    """Zero action (the default pose as target) under the default DC motors (K = 25 N·m/rad): after
    2 s the trunk stands at the pose's height less the knees' sag, and every joint is within the sag
    its gravity load gives.

    By hand, from the model: the default pose puts each foot ``d = (l_t cos h + l_c cos(h + k)) cos a
    - y_t sin|a|`` below its hip (h, k, a: hip flexion, knee, abduction; y_t the thigh's lateral
    offset): 0.302 m front, 0.293 m rear, so the rigid stance holds the trunk at mean(d) + r_foot =
    0.317 m. A foot carries at most half the weight (12.4 kg: 60.8 N, the diagonal pair), the knee
    turns it with the calf's lever l_c sin|h + k| (0.137 m front, 0.102 m rear), so no joint sags more
    than 60.8 N * 0.137 m / 25 = 0.33 rad (the hips' levers are shorter), and the trunk sinks at most
    lever * sag = 0.045 m. It stays: less than 1 cm up and down over the last 0.5 s."""
    env = gym.make("actuator_gym/Quadruped-v0")
    u = env.unwrapped
    env.reset(seed=0)
    m, task = u.model, u.task
    k = float(task.actuators["legs"].parameter("stiffness")[0, 0])
    l_t = float(np.linalg.norm(m.body_pos[m.body("FL_calf").id]))
    l_c = float(np.linalg.norm(m.site_pos[m.site("FL_foot").id]))
    y_t = abs(float(m.body_pos[m.body("FL_thigh").id][1]))
    r_foot = float(m.geom_size[m.geom("FL_foot").id][0])
    q0 = task.default_joint_pos
    depth, lever = [], []
    for leg in ("FL", "RL"):  # front and rear (the right legs mirror them)
        a, h, kn = (q0[task.joint_names.index(f"{leg}_{j}")] for j in ("hip_joint", "thigh_joint", "calf_joint"))
        depth.append((l_t * math.cos(h) + l_c * math.cos(h + kn)) * math.cos(a) - y_t * math.sin(abs(a)))
        lever.append(l_c * math.sin(abs(h + kn)))
    h_rigid = float(np.mean(depth)) + r_foot
    sag = weight(m, 1) / 2 * max(lever) / k
    assert h_rigid == pytest.approx(0.317, abs=1e-3) and sag == pytest.approx(0.33, abs=0.01)
    heights = []
    for _ in range(round(2.0 / u.dt)):
        _, _, term, trunc, info = env.step(np.zeros(12, np.float32))
        assert not term and not trunc
        heights.append(float(info["base_height"]))
    last = np.array(heights[-round(0.5 / u.dt):])
    assert (last <= h_rigid).all() and (last >= h_rigid - max(lever) * sag).all(), (h_rigid, last.min(), last.max())
    assert last.max() - last.min() < 0.01
    dq = task.backend.joint_pos()[0] - q0
    assert np.abs(dq).max() < sag, dq
    env.close()
