"""Rotor groups as first-class actuator groups: a Gymnasium multirotor under ActuatorWrapper (hover,
rise/fall times of the rotor dynamics, check_env), the quadrotor task's rotor group (parameters in
info, one reset/seed/parameters over both kinds of group), and the substep engine's rotor telemetry."""

from __future__ import annotations

import math
import warnings

import gymnasium as gym
import mujoco
import numpy as np
import pytest
import torch
from gymnasium.envs.mujoco.mujoco_env import MujocoEnv
from gymnasium.utils.env_checker import check_env

import actuator_gym  # noqa: F401  (registers the ids)
from actuator_gym import DCMotorCfg, ThrusterCfg
from actuator_gym.tasks.quadrotor import QuadrotorTask, quadrotor_thruster_cfg
from actuator_gym.runtime.groups import ActuatorGroups
from actuator_gym.runtime.rotors import (
    ROTOR_TELEMETRY,
    BodyWrenchWriter,
    CtrlWriter,
    RotorGroup,
    RotorGroups,
    ShaftPower,
    action_to_thrust,
    thrust_to_action,
)
from actuator_gym.wrappers import ActuatorWrapper

MASS = 1.0  # kg, the whole multirotor (one box)
HOVER = MASS * 9.81 / 4  # N per rotor
RANGE = (0.1, 6.0)  # N
KF = 1.376e-5  # N/rps²
TAU_INC, TAU_DEC = 0.05, 0.005  # s
SPIN = (1, -1, 1, -1)
YAW = 0.01  # m: reaction torque per newton, in the motors' gear


def quad_xml(timestep: float = 0.005, ctrlrange: str = "0 10") -> str:
    """A free-flying 1 kg box with four rotor sites and four site motors (thrust along +z, yaw
    reaction in the gear's torque component)."""
    sites, motors = [], []
    for i, (x, y) in enumerate([(0.1, 0.1), (-0.1, 0.1), (-0.1, -0.1), (0.1, -0.1)]):
        sites.append(f'<site name="rotor_{i}" pos="{x} {y} 0.02" size="0.01"/>')
        motors.append(f'<motor name="m{i}" site="rotor_{i}" gear="0 0 1 0 0 {SPIN[i] * YAW}" ctrlrange="{ctrlrange}"/>')
    return f"""<mujoco model="multirotor">
  <option timestep="{timestep}" integrator="RK4"/>
  <worldbody>
    <body name="frame" pos="0 0 1">
      <freejoint name="root"/>
      <geom type="box" size="0.12 0.12 0.02" mass="{MASS}"/>
      {''.join(sites)}
    </body>
  </worldbody>
  <actuator>{''.join(motors)}</actuator>
</mujoco>"""


class MultirotorEnv(MujocoEnv):
    """A plain Gymnasium MujocoEnv around :func:`quad_xml`: observation qpos + qvel, reward 0."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 100}

    def __init__(self, xml_path: str, frame_skip: int = 2, timestep: float = 0.005, **kwargs):
        self.metadata = {**type(self).metadata, "render_fps": int(round(1.0 / (timestep * frame_skip)))}
        obs = gym.spaces.Box(-np.inf, np.inf, (13,), np.float64)
        super().__init__(xml_path, frame_skip=frame_skip, observation_space=obs, **kwargs)

    def step(self, action):
        self.do_simulation(action, self.frame_skip)
        return self._get_obs(), 0.0, False, False, {}

    def reset_model(self):
        self.set_state(self.init_qpos, self.init_qvel)
        return self._get_obs()

    def _get_obs(self):
        return np.concatenate([self.data.qpos, self.data.qvel])


def rotors_cfg(**kw) -> ThrusterCfg:
    base = dict(thruster_names_expr=["rotor_[0-3]"], thrust_range=RANGE, thrust_const_range=(KF, KF),
                tau_inc_range=(TAU_INC, TAU_INC), tau_dec_range=(TAU_DEC, TAU_DEC), torque_to_thrust_ratio=YAW)
    base.update(kw)
    return ThrusterCfg(**base)


@pytest.fixture()
def xml_file(tmp_path):
    def make(**kw):
        p = tmp_path / "multirotor.xml"
        p.write_text(quad_xml(**kw))
        return str(p)
    return make


def wrapped_quad(xml_path, frame_skip=2, cfg=None, timestep=0.005, **kw):
    env = MultirotorEnv(xml_path, frame_skip=frame_skip, timestep=timestep)
    return ActuatorWrapper(env, actuators={"rotors": cfg or rotors_cfg()}, **kw)


# ---- the Gymnasium multirotor --------------------------------------------------------------
def test_hover_holds_altitude_for_2s(xml_file):
    env = wrapped_quad(xml_file(), initial_thrust=HOVER)
    assert env.action_space.shape == (4,) and env.rotor_names == ("rotor_0", "rotor_1", "rotor_2", "rotor_3")
    obs, info = env.reset(seed=0)
    z0 = obs[2]
    hover = np.full(4, thrust_to_action(HOVER, RANGE), np.float32)
    for _ in range(200):  # 2 s at 100 Hz
        obs, _, _, _, info = env.step(hover)
    assert abs(obs[2] - z0) < 0.01 and np.abs(obs[:2]).max() < 1e-3
    assert np.abs(obs[7:]).max() < 0.01  # no drift in velocity, no spin
    act = info["actuator"]
    assert set(act) == set(ROTOR_TELEMETRY)
    np.testing.assert_allclose(act["applied_thrust"], HOVER, rtol=1e-5)
    np.testing.assert_allclose(act["target_thrust"], HOVER, rtol=1e-5)
    np.testing.assert_allclose(act["rotor_speed"], math.sqrt(HOVER / KF), rtol=1e-5)
    # default power model, by hand: drag torque (ratio * T) times angular speed (2 pi rps)
    p = YAW * HOVER * 2 * math.pi * math.sqrt(HOVER / KF)
    np.testing.assert_allclose(act["rotor_power"], p, rtol=1e-5)
    np.testing.assert_allclose(act["rotor_mean_power"], p, rtol=1e-5)
    np.testing.assert_allclose(act["rotor_energy"], p * env.unwrapped.dt, rtol=1e-5)  # 2 substeps of dt/2
    # what the env received: MuJoCo's actuator force (gain * ctrl) times the gear's force part (1)
    np.testing.assert_allclose(env.unwrapped.data.actuator_force, act["applied_thrust"], rtol=1e-6)
    env.close()


def test_idle_start_falls_and_hover_needs_the_hover_thrust(xml_file):
    env = wrapped_quad(xml_file())  # initial_thrust=None: idle at thrust_range low
    obs, info = env.reset(seed=0)
    assert info["actuator"]["parameters"]["rotors"]["initial_rps"] == pytest.approx(math.sqrt(RANGE[0] / KF))
    hover = np.full(4, thrust_to_action(HOVER, RANGE), np.float32)
    z0 = obs[2]
    for _ in range(50):
        obs, *_ = env.step(hover)
    assert obs[2] < z0 - 0.05  # the rotors spun up from idle: the weight was not carried at first


def _time_to_63(trace, t0, t1, dt):
    frac = (trace - t0) / (t1 - t0)
    return (np.argmax(frac >= 0.632, axis=0) + 1) * dt


def _steps_to_63(t0, t1, tau, dt):
    """By hand: the rotor speed w = sqrt(T / k_f) closes its gap by the RK4 factor p(h) per step,
    h = dt / (dt + tau) (discrete mixing factor); 63.2 % of the *thrust* step is the speed fraction
    f = (sqrt(T0 + 0.632 (T1 - T0)) - sqrt(T0)) / (sqrt(T1) - sqrt(T0))."""
    f = (math.sqrt(t0 + 0.632 * (t1 - t0)) - math.sqrt(t0)) / (math.sqrt(t1) - math.sqrt(t0))
    h = dt / (dt + tau)
    p = 1 - h + h**2 / 2 - h**3 / 6 + h**4 / 24
    return math.ceil(math.log(1 - f) / math.log(p)), -(tau + dt) * math.log(1 - f)


def test_thrust_step_shows_rise_and_fall_times(xml_file):
    dt = 0.005
    env = wrapped_quad(xml_file(timestep=dt), frame_skip=1, timestep=dt, initial_thrust=HOVER)  # one substep per step
    env.reset(seed=1)
    high = 4.0
    up, hover = np.full(4, thrust_to_action(high, RANGE)), np.full(4, thrust_to_action(HOVER, RANGE))
    trace, forces = [], []
    for a in [up] * 80 + [hover] * 40:  # 0.4 s high, 0.2 s back at hover
        _, _, _, _, info = env.step(a)
        trace.append(info["actuator"]["applied_thrust"])
        forces.append(env.unwrapped.data.actuator_force.copy())
    tr = np.array(trace)
    np.testing.assert_allclose(np.array(forces), tr, rtol=1e-6)  # the env received the rotor dynamics' thrust
    n_up = 80
    assert np.allclose(tr[n_up - 1], high, rtol=1e-3) and np.allclose(tr[-1], HOVER, rtol=1e-3)
    rise = _time_to_63(tr[:n_up], HOVER, high, dt)
    fall = _time_to_63(tr[n_up:], tr[n_up - 1], HOVER, dt)
    steps_rise, tau_rise = _steps_to_63(HOVER, high, TAU_INC, dt)
    steps_fall, tau_fall = _steps_to_63(float(tr[n_up - 1, 0]), HOVER, TAU_DEC, dt)
    np.testing.assert_allclose(rise, steps_rise * dt, atol=1e-12)  # the exact discrete step
    np.testing.assert_allclose(fall, steps_fall * dt, atol=1e-12)
    assert np.abs(rise - tau_rise).max() <= 1.5 * dt  # ~ the time constants tau + dt
    assert np.abs(fall - tau_fall).max() <= 1.5 * dt
    assert (rise > 4 * fall).all()


def test_check_env_passes(xml_file):
    env = wrapped_quad(xml_file(), initial_thrust=HOVER)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Box bounds of the plain obs space
        check_env(env, skip_render_check=True)
    env.close()


def test_randomized_parameters_reach_info_and_reproduce(xml_file):
    cfg = rotors_cfg(tau_inc_range=(0.03, 0.08), thrust_const_range=(1.2e-5, 1.5e-5))
    a, b = (wrapped_quad(xml_file(), cfg=cfg, initial_thrust=HOVER) for _ in range(2))
    _, ia = a.reset(seed=3)
    _, ib = b.reset(seed=3)
    pa, pb = ia["actuator"]["parameters"]["rotors"], ib["actuator"]["parameters"]["rotors"]
    assert set(pa) == {"thrust_const", "tau_inc", "tau_dec", "initial_rps"}
    assert pa["tau_inc"].shape == (4,) and ((pa["tau_inc"] >= 0.03) & (pa["tau_inc"] <= 0.08)).all()
    for k in pa:
        np.testing.assert_array_equal(pa[k], pb[k])
    np.testing.assert_array_equal(pa["tau_inc"], a.rotors["rotors"].parameter("tau_inc")[0].numpy())
    _, ic = a.reset(seed=4)
    assert not np.array_equal(ic["actuator"]["parameters"]["rotors"]["tau_inc"], pa["tau_inc"])


def test_wrapper_refusals(xml_file, tmp_path):
    with pytest.raises(ValueError, match="either joint groups or rotor groups"):
        ActuatorWrapper(MultirotorEnv(xml_file()), actuators={
            "rotors": rotors_cfg(), "legs": DCMotorCfg(joint_names_expr=[".*"], stiffness=1.0, damping=0.1,
                                                       saturation_effort=1.0, actuator_velocity_limit=1.0,
                                                       actuator_effort_limit=1.0)})
    with pytest.raises(ValueError, match="action_scale.*joint groups"):
        wrapped_quad(xml_file(), action_scale=2.0)
    with pytest.raises(ValueError, match="ctrlrange.*thrust_range"):
        wrapped_quad(xml_file(ctrlrange="0 5"))  # 5 N < the 6 N of thrust_range
    with pytest.raises(ValueError, match="matches none of the sites"):
        wrapped_quad(xml_file(), cfg=rotors_cfg(thruster_names_expr=["prop_.*"]))
    env = wrapped_quad(xml_file())
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action\[2\] \(thrust command of rotor 'rotor_2'\)"):
        env.step(np.array([0.0, 0.0, np.nan, 0.0]))
    with pytest.raises(ValueError, match=r"shape \(4,\).*rotors"):
        env.step(np.zeros(3))


def test_rotor_bodies_get_their_thrust_through_xfrc_applied(tmp_path):
    xml = quad_xml().replace('<site name="rotor_0"', '<body name="prop_0" pos="0.1 0.1 0.02"><geom size="0.01" mass="0.001"/></body><site name="r0"')
    xml = xml.replace('site="rotor_0"', 'site="r0"')
    p = tmp_path / "props.xml"
    p.write_text(xml)
    env = ActuatorWrapper(MultirotorEnv(str(p)), actuators={"props": rotors_cfg(thruster_names_expr=["prop_0"])},
                          initial_thrust=1.0)
    env.reset(seed=0)
    _, _, _, _, info = env.step(np.array([thrust_to_action(1.0, RANGE)]))
    d = env.unwrapped.data
    bid = env.unwrapped.model.body("prop_0").id
    force, thrust = d.xfrc_applied[bid, :3], info["actuator"]["applied_thrust"][0]
    assert np.linalg.norm(force) == pytest.approx(thrust, rel=1e-6)  # the thrust, along the body's z axis
    assert force @ d.xmat[bid].reshape(3, 3)[:, 2] == pytest.approx(thrust, rel=1e-4)  # (of the substep: ~ now)
    assert d.xfrc_applied[env.unwrapped.model.body("frame").id].sum() == 0
    env.close()
    assert not d.xfrc_applied.any()  # detached: the rotor body's wrench is cleared


# ---- the quadrotor task's rotor group -----------------------------------------------------------
def test_quadrotor_reset_info_holds_thrust_parameters_per_env():
    cfg = quadrotor_thruster_cfg(thrust_const_range=(1.2e-5, 1.5e-5))
    vec = gym.make_vec("actuator_gym/Quadrotor-v0", num_envs=3, actuators=cfg)
    _, info = vec.reset(seed=0)
    params = info["actuator"]["parameters"]["rotors"]
    assert info["actuator"]["_parameters"].all() and info["actuator"]["parameters"]["_rotors"].all()
    assert set(params) >= {"thrust_const", "tau_inc", "tau_dec", "initial_rps"}
    for k in ("thrust_const", "tau_inc", "tau_dec"):
        assert params[k].shape == (3, 4)
        np.testing.assert_array_equal(params[k], vec.unwrapped.thruster.parameter(k).numpy())
    assert np.unique(params["thrust_const"]).size > 1 and ((params["tau_inc"] >= 0.05) & (params["tau_inc"] <= 0.08)).all()
    # a partial reset reports (and re-draws) only the reset envs
    _, info2 = vec.reset(options={"reset_mask": np.array([False, True, False])})
    np.testing.assert_array_equal(info2["actuator"]["parameters"]["rotors"]["_tau_inc"], [False, True, False])
    new = info2["actuator"]["parameters"]["rotors"]["tau_inc"]
    np.testing.assert_array_equal(new[[0, 2]], params["tau_inc"][[0, 2]])
    assert not np.array_equal(new[1], params["tau_inc"][1])
    # the single env: (4,) per parameter
    single = gym.make("actuator_gym/Quadrotor-v0")
    _, info = single.reset(seed=0)
    assert info["actuator"]["parameters"]["rotors"]["tau_inc"].shape == (4,)
    vec.close()
    single.close()


def test_quadrotor_has_no_stand_in_joints_and_reports_rotor_telemetry():
    task = QuadrotorTask(num_envs=2, seed=0)
    m = task.model
    assert m.njnt == 1 and m.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE and m.nu == 0
    assert task.collection is None and isinstance(task.actuators, ActuatorGroups) and list(task.actuators) == ["rotors"]
    assert task.actuators["rotors"] is task.thruster and task.num_actions == 4
    task.reset(seed=0)
    _, _, _, _, info = task.step(task.hover_action)
    act = info["actuator"]
    # no joint keys (no joints); the parameters in force are in every info, masked: none reset this step
    assert set(k for k in act if not k.startswith("_")) == set(ROTOR_TELEMETRY) | {"parameters"}
    assert not act["_parameters"].any()
    assert act["rotor_power"].shape == (2, 4) and act["_rotor_power"].all()
    np.testing.assert_allclose(act["applied_thrust"], task.hover_thrust, rtol=1e-5)
    # seed(s) re-seeds the rotor group through the one ActuatorGroups.seed
    other = QuadrotorTask(num_envs=2, seed=5, actuators=quadrotor_thruster_cfg(tau_inc_range=(0.03, 0.09)))
    again = QuadrotorTask(num_envs=2, seed=6, actuators=quadrotor_thruster_cfg(tau_inc_range=(0.03, 0.09)))
    other.reset(seed=11)
    again.reset(seed=11)
    torch.testing.assert_close(other.thruster.parameter("tau_inc"), again.thruster.parameter("tau_inc"))


def test_non_finite_rotor_action_names_the_rotor():
    task = QuadrotorTask(num_envs=2, seed=0)
    a = np.array(task.hover_action)
    a[1, 3] = np.inf
    with pytest.raises(ValueError, match=r"actions\[1, 3\] \(thrust command of rotor 'rotor_3'\)"):
        task.step(a)


# ---- the pieces ----------------------------------------------------------------------------
def test_rotor_groups_participant_by_hand():
    """Two groups on one body: action mapping per group, the writers' outputs, the power model,
    and the telemetry over both groups in group order."""
    ctrl = np.zeros((2, 3))
    xmat = np.tile(np.eye(3).reshape(1, 1, 9), (2, 2, 1))
    xfrc = np.zeros((2, 2, 6))
    a_cfg = rotors_cfg(thruster_names_expr=["a"], thrust_range=(0.0, 2.0))
    b_cfg = rotors_cfg(thruster_names_expr=["b.*"], thrust_range=(1.0, 5.0))
    alloc = np.zeros((6, 2))
    alloc[2] = 1.0
    alloc[5] = [0.1, -0.1]
    ga = RotorGroup("ga", a_cfg, ["a"], CtrlWriter(ctrl, [1], [2.0]), num_envs=2, physics_dt=0.01, initial_rps=0.0, seed=0)
    gb = RotorGroup("gb", b_cfg, ["b0", "b1"], BodyWrenchWriter(xmat, xfrc, 1, alloc), num_envs=2, physics_dt=0.01,
                    initial_rps=math.sqrt(1.0 / KF), seed=1)
    groups = RotorGroups([ga, gb], num_substeps=2, physics_dt=0.01)
    assert groups.rotor_names == ("a", "b0", "b1") and list(groups) == ["ga", "gb"]
    actions = np.array([[1.0, -1.0, 1.0], [0.0, 0.5, 3.0]])
    groups.set_actions(actions)
    np.testing.assert_allclose(groups.target_thrust, [[2.0, 1.0, 5.0], [1.0, 4.0, 5.0]])
    np.testing.assert_allclose(groups.target_thrust[:, 1:], action_to_thrust(actions[:, 1:], (1.0, 5.0)))
    groups.begin()
    for k in range(2):
        groups.substep(k)
    tel = groups.telemetry()
    assert set(tel) == set(ROTOR_TELEMETRY) and all(v.shape == (2, 3) for v in tel.values())
    np.testing.assert_allclose(ctrl[:, 1], tel["applied_thrust"][:, 0] / 2.0, rtol=1e-6)
    tb = tel["applied_thrust"][:, 1:].astype(np.float64)
    np.testing.assert_allclose(xfrc[:, 1, 2], tb.sum(axis=1), rtol=1e-6)  # identity rotation: body = world
    np.testing.assert_allclose(xfrc[:, 1, 5], 0.1 * (tb[:, 0] - tb[:, 1]), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(tel["rotor_power"], ShaftPower(YAW)(tel["applied_thrust"], tel["rotor_speed"]), rtol=1e-6)
    assert (tel["rotor_energy"] > 0).all()
    up = groups.target_thrust > tel["applied_thrust"] + 1e-3  # rotors still spinning up: power rose over the step
    assert up.sum() == 5 and (tel["rotor_mean_power"][up] < tel["rotor_power"][up]).all()
    params = groups.parameters()
    assert set(params) == {"ga", "gb"} and params["gb"]["tau_inc"].shape == (2, 2)
    groups.reset([1])
    np.testing.assert_allclose(groups.target_thrust[1], groups.telemetry()["applied_thrust"][1])  # holds its start
    with pytest.raises(ValueError, match="claimed by groups"):
        RotorGroups([ga, RotorGroup("gc", a_cfg, ["a"], CtrlWriter(ctrl, [0], [1.0]), num_envs=2, physics_dt=0.01,
                                    initial_rps=0.0)], 2, 0.01)


# ---- a batched task with both kinds of group ------------------------------------------------------
from actuator_gym import IdealPDActuatorCfg  # noqa: E402
from actuator_gym.actuators import allocation_matrix  # noqa: E402
from actuator_gym.envs.task import BatchedTask, TaskCfg  # noqa: E402


class GimbalQuadTask(BatchedTask):
    """The multirotor box with a camera arm panning on a vertical hinge: a joint group (the arm) and a rotor group."""

    def rotor_group(self, name, cfg, seed):
        m, be = self.model, self.backend
        bid = m.body("frame").id
        sites = [m.site(f"rotor_{i}").id for i in range(4)]
        alloc = allocation_matrix(m.site_pos[sites] - m.body_ipos[bid], SPIN, cfg.torque_to_thrust_ratio)
        writer = BodyWrenchWriter(lambda: be.field("xmat"), lambda: be.xfrc_applied, bid, alloc)
        self.hover = float(m.body_subtreemass[bid]) * 9.81 / 4
        return RotorGroup(name, cfg, [f"rotor_{i}" for i in range(4)], writer, num_envs=self.num_envs,
                          physics_dt=self.physics_dt, initial_rps=math.sqrt(self.hover / KF), seed=seed)

    def observe(self):
        return np.concatenate([self.backend.qpos, self.backend.qvel], axis=1)

    def reward(self):
        return np.zeros(self.num_envs)


def gimbal_xml():
    arm = '<body name="arm" pos="0 0 -0.05"><joint name="tilt" type="hinge" axis="0 0 1"/>' \
          '<geom type="capsule" fromto="0 0 0 0.05 0 0" size="0.005" mass="0.02"/></body>'
    xml = quad_xml().replace("</body>\n  </worldbody>", arm + "</body>\n  </worldbody>")
    return xml.split("<actuator>")[0] + "</mujoco>"  # the task's writer applies the thrust: no MJCF motors


def test_batched_task_with_joint_and_rotor_groups():
    cfg = TaskCfg(mjcf=gimbal_xml(), physics_dt=0.005, decimation=2, action_mode="position", action_joints=["tilt"],
                  actuators={"arm": IdealPDActuatorCfg(joint_names_expr=["tilt"], stiffness=0.01, damping=0.001,
                                                       actuator_effort_limit=1.0),
                             "rotors": rotors_cfg(tau_inc_range=(0.04, 0.06))})
    task = GimbalQuadTask(num_envs=3, cfg=cfg, seed=0)
    assert task.collection is not None and task.rotors is not None and list(task.actuators) == ["arm", "rotors"]
    assert task.num_actions == 5 and task.single_action_space.shape == (5,)
    _, info = task.reset(seed=1)
    params = info["actuator"]["parameters"]
    assert params["arm"]["stiffness"].shape == (3, 1) and params["rotors"]["tau_inc"].shape == (3, 4)
    z0 = task.backend.qpos[:, 2].copy()
    a = np.zeros((3, 5))
    a[:, 0] = 0.3 / math.pi  # arm target 0.3 rad (normalized: an unlimited hinge spans +-pi rad)
    a[:, 1:] = thrust_to_action(task.hover, RANGE)
    for _ in range(50):
        _, _, _, _, info = task.step(a)
    act = info["actuator"]
    assert act["applied_effort"].shape == (3, 1) and act["applied_thrust"].shape == (3, 4)
    assert set(ROTOR_TELEMETRY) <= set(act) and {"joint_pos", "power", "energy"} <= set(act)
    np.testing.assert_allclose(act["joint_pos"][:, 0], 0.3, atol=0.05)  # the arm went to its target
    assert np.abs(task.backend.qpos[:, 2] - z0).max() < 0.05  # and the rotors carried the weight
    with pytest.raises(ValueError, match=r"rotor_group\(name, cfg, seed\)"):
        class NoHook(GimbalQuadTask):
            rotor_group = BatchedTask.rotor_group
        NoHook(num_envs=1, cfg=cfg)
