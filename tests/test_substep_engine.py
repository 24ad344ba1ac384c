"""The one substep engine: the wrapper on a Gymnasium env and a batched task report the same
telemetry for the same physics, and the telemetry means what actuator_gym.runtime.substep.TELEMETRY says."""

import dataclasses

import gymnasium as gym
import mujoco
import numpy as np
import torch
from gymnasium.envs.mujoco.mujoco_env import MujocoEnv

from actuator_gym import ActuatorCollection, DCMotorCfg
from actuator_gym.backends.mujoco_batch import MujocoBatchBackend
from actuator_gym.tasks.pendulum import PendulumCfg
from actuator_gym.runtime.substep import TELEMETRY, SubstepEngine
from actuator_gym.wrappers import ActuatorWrapper

CFG = DCMotorCfg(joint_names_expr=["hinge"], stiffness=30.0, damping=1.0, saturation_effort=4.0,
                 actuator_effort_limit=3.0, actuator_velocity_limit=6.0)
TASK = PendulumCfg(actuators={"p": CFG}, action_scale=1.0, action_offset=0.0)


class PendulumMujocoEnv(MujocoEnv):
    """The pendulum task's MJCF as a plain Gymnasium MujocoEnv (Euler, the task's substeps)."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 60}

    def __init__(self, xml_path, **kwargs):
        obs = gym.spaces.Box(-np.inf, np.inf, (2,), np.float64)
        super().__init__(xml_path, frame_skip=TASK.decimation, observation_space=obs, **kwargs)
        self.metadata["render_fps"] = int(round(1.0 / self.dt))

    def step(self, action):
        self.do_simulation(action, self.frame_skip)
        return self._get_obs(), 0.0, False, False, {}

    def reset_model(self):
        return self._get_obs()

    def _get_obs(self):
        return np.concatenate([self.data.qpos, self.data.qvel])


def test_wrapper_and_task_report_the_same_power_and_energy(tmp_path):
    xml = tmp_path / "pendulum.xml"
    xml.write_text(TASK.model_xml())
    task = gym.make_vec("actuator_gym/Pendulum-v0", num_envs=1, actuators={"p": CFG}, action_scale=1.0,
                        action_offset=0.0).unwrapped
    task.reset(seed=0)
    env = PendulumMujocoEnv(str(xml))
    env.model.opt.timestep = TASK.physics_dt
    wrapped = ActuatorWrapper(env, actuators={"p": CFG}, action_scale=1.0, action_offset=0.0, joints=["hinge"])
    wrapped.reset(seed=0)
    q0 = task.backend.qpos[0].copy()
    env.set_state(q0, np.zeros(env.model.nv))
    targets = np.random.default_rng(0).uniform(-2.0, 2.0, 40)
    keys = ("power", "mean_power", "energy", "applied_effort", "computed_effort", "saturated", "joint_pos", "joint_vel")
    saturated = 0
    for t in targets:
        _, _, _, _, ti = task.step(np.array([[t]], np.float32))
        _, _, _, _, wi = wrapped.step(np.array([t]))
        for k in keys:
            a, b = ti["actuator"][k][0], wi["actuator"][k]
            if k == "saturated":
                assert (a == b).all(), k
            else:
                np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-5, err_msg=k)
        saturated += int(wi["actuator"]["saturated"][0])
        # the definitions: energy >= |mean power| * dt (every substep's |P| counted), power is one substep
        assert wi["actuator"]["energy"][0] >= abs(wi["actuator"]["mean_power"][0]) * task.dt - 1e-12
    assert saturated > 0  # the DC motor's limits acted: the comparison covers clamped substeps
    assert set(keys) == set(TELEMETRY)


def test_engine_accounting_by_hand():
    """Two substeps of a constant-effort actuator on a known velocity: power, mean power, energy."""
    xml = """<mujoco><option timestep="0.01"/><worldbody><body><joint name="j" type="hinge" axis="0 1 0"/>
             <geom type="sphere" size="0.1" mass="1"/></body></worldbody></mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    be = MujocoBatchBackend(model, 2)
    from actuator_gym import IdealPDActuatorCfg

    coll = ActuatorCollection({"g": IdealPDActuatorCfg(joint_names_expr=[".*"], stiffness=0.0, damping=0.0)},
                              joint_names=be.joint_names, num_envs=2, dtype=torch.float64)
    coll.target_command.effort[:] = torch.tensor([[2.0], [-1.0]], dtype=torch.float64)
    engine = SubstepEngine(coll, be, 0.01, 2)
    velocities = [be.joint_vel().copy()]
    engine.advance(after=lambda k: velocities.append(be.joint_vel().copy()))  # the backend is the physics
    tel = engine.telemetry()
    # inertia of the sphere about the hinge: 2/5 m r^2 = 0.004 kg m^2; qd(k) = k * dt * tau / I
    inertia = 0.4 * 1.0 * 0.1**2
    tau = np.array([[2.0], [-1.0]])
    qd = [np.zeros((2, 1)), 0.01 * tau / inertia]
    np.testing.assert_allclose(velocities[1], qd[1], rtol=1e-9)
    np.testing.assert_allclose(tel["power"], tau * qd[1], rtol=1e-9)
    np.testing.assert_allclose(tel["mean_power"], (tau * qd[0] + tau * qd[1]) / 2, rtol=1e-9)
    np.testing.assert_allclose(tel["energy"], (np.abs(tau * qd[0]) + np.abs(tau * qd[1])) * 0.01, rtol=1e-9)
    assert not tel["saturated"].any() and (tel["applied_effort"] == tau).all()


def _engine_rollout(groups, execution, steps=40, num_envs=3):
    """A consumer of the engine as the tasks are: targets written, then ``engine.advance()``; the
    states and telemetry of every step, and the strategy the engine chose."""
    from conftest import double_pendulum

    from actuator_gym.backends.native_side import NativeSide

    xml = double_pendulum()
    model = mujoco.MjModel.from_xml_string(xml)
    coll = ActuatorCollection(groups, joint_names=NativeSide.joint_names(model), num_envs=num_envs, seed=[3, 4, 5],
                              dtype=torch.float64)
    side = NativeSide.for_task(coll, None, model, xml, execution, "test")
    be = MujocoBatchBackend(side.model, num_envs)
    if side.active:
        side.attach(be)
    engine = SubstepEngine(coll, be, float(model.opt.timestep), 4, native=side)
    coll.reset(None)
    engine.reset_envs()
    targets = np.random.default_rng(0).uniform(-1.5, 1.5, (steps, num_envs, 2))
    out = []
    for t in targets:
        coll.target_command.position[:] = torch.from_numpy(t)
        engine.advance()
        out.append((be.qpos.copy(), be.qvel.copy(), engine.telemetry()))
    return engine.strategy.name, out


def test_one_advance_runs_every_execution_to_the_same_numbers():
    """The consumer's control step is one ``engine.advance()`` whatever the engine was built to run:
    all native and a mix (per group) give the all-explicit trajectory and telemetry (Euler, float64)
    to round-off, with the limits acting; only ``energy`` / ``mean_power`` of native columns follow
    the native rule (the last substep held)."""
    from conftest import mix_groups

    mix = mix_groups("hinge", "elbow")
    dc = {"shoulder": dataclasses.replace(mix["shoulder"], joint_names_expr=[".*"])}
    for groups, execution, name in ((dc, "native", "native"), (mix, "auto", "mixed")):
        ref_name, ref = _engine_rollout(groups, "explicit")
        got_name, got = _engine_rollout(groups, execution)
        assert (ref_name, got_name) == ("explicit", name)
        saturated = 0
        for (q0, v0, t0), (q1, v1, t1) in zip(ref, got):
            np.testing.assert_allclose(q1, q0, atol=1e-9)
            np.testing.assert_allclose(v1, v0, atol=1e-9)
            assert t0.keys() == t1.keys() == set(TELEMETRY) - {"joint_pos", "joint_vel"}
            for k in ("computed_effort", "applied_effort", "power"):
                np.testing.assert_allclose(t1[k], t0[k], atol=1e-9, err_msg=f"{execution}: {k}")
            assert np.array_equal(t1["saturated"], t0["saturated"])
            saturated += int(t0["saturated"].sum())
            if name == "mixed":  # the native columns' power is read after every substep: the exact sums
                np.testing.assert_allclose(t1["energy"], t0["energy"], atol=1e-9)
        assert saturated > 0
