"""DC-motor physics that exist only in MuJoCo's native dcmotor (actuators/motor_physics.py): the
thermal demonstration (a saturating duty cycle heats the winding and the torque falls as MuJoCo's
documented thermal law predicts, hand-computed step by step), the other features' laws, the
refusals of the explicit path, randomization at reset, and the telemetry keys."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.mujoco.mujoco_env import MujocoEnv

import actuator_gym as ag
from actuator_gym.randomization import Uniform
from actuator_gym.wrappers import ActuatorWrapper

ROTOR = """<mujoco model="rotor">
  <option timestep="{dt}" integrator="Euler" gravity="0 0 0"/>
  <worldbody>
    <body name="rotor">
      <joint name="shaft" type="hinge" axis="0 0 1" armature="{armature}"/>
      <geom type="cylinder" size="0.05 0.02" mass="0.2"/>
    </body>
  </worldbody>
  <actuator><motor joint="shaft" ctrlrange="-1 1"/></actuator>
</mujoco>"""

DT = 0.01


class RotorEnv(MujocoEnv):
    """One motor shaft, no gravity, one physics step per control step (frame_skip 1)."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 100}

    def __init__(self, path, **kw):
        obs = gym.spaces.Box(-np.inf, np.inf, (2,), np.float64)
        MujocoEnv.__init__(self, str(path), 1, observation_space=obs, **kw)

    def step(self, action):
        self.do_simulation(action, self.frame_skip)
        return self._get_obs(), 0.0, False, False, {}

    def _get_obs(self):
        return np.concatenate([self.data.qpos, self.data.qvel])

    def reset_model(self):
        self.set_state(self.init_qpos, self.init_qvel)
        return self._get_obs()


@pytest.fixture
def rotor(tmp_path):
    def make(cfg, armature=50.0, **kw):
        p = tmp_path / "rotor.xml"
        p.write_text(ROTOR.format(dt=DT, armature=armature))
        return ActuatorWrapper(RotorEnv(p), {"motor": cfg}, **kw)

    return make


STALL, NOLOAD = 10.0, 20.0  # [N·m], [rad/s]: R = 2 (K = 1)
THERMAL = dict(thermal_resistance=2.0, thermal_capacitance=20.0, temperature_coefficient=3.93e-3,
               reference_temperature=25.0, ambient_temperature=25.0)


def motor(**kw):
    return ag.DCMotorCfg(joint_names_expr=["shaft"], stiffness=0.0, damping=0.0, saturation_effort=STALL,
                         actuator_velocity_limit=NOLOAD, **kw)


def duty_cycle(n, period=100, on=50, command=1.0):
    """A saturating square wave: +command for ``on`` steps, 0 (no current) for the rest of the
    period, the sign alternating every period (so the shaft's speed stays small)."""
    k = np.arange(n)
    sign = np.where((k // period) % 2 == 0, 1.0, -1.0)
    return np.where(k % period < on, sign * command, 0.0)


def test_thermal_demonstration_matches_the_hand_computed_law(rotor):
    """Feed-forward 1000 N·m (far beyond the 10 N·m stall torque: the drive voltage saturates at
    Vmax) at a 50 % duty cycle for 10 s. Predict in numpy, step by step from MuJoCo's documented
    law, the winding temperature and the torque, from the speed the shaft had at each step:
    R_T = R (1 + alpha (T - T_ref)), V = clip(R tau* + qd, +-Vmax), i = (V - qd) / R_T, torque = i,
    T += h (R_T i^2 - (T - T_amb) / R_th) / C_th."""
    env = rotor(motor(**THERMAL), action_mode="effort", action_scale=1000.0, execution="native")
    env.reset(seed=0)
    n = 1000
    u = duty_cycle(n)
    r, vmax = NOLOAD / STALL, NOLOAD
    rth, cth, alpha, tref, tamb = (THERMAL[k] for k in ("thermal_resistance", "thermal_capacitance",
                                                        "temperature_coefficient", "reference_temperature",
                                                        "ambient_temperature"))
    temp, qd = tamb, 0.0
    got_t, got_f, want_t, want_f, want_i, got_i, stall_t = [], [], [], [], [], [], []
    for k in range(n):
        _, _, _, _, info = env.step(np.array([u[k]]))
        a = info["actuator"]
        r_t = r * (1.0 + alpha * (temp - tref))
        v = np.clip(r * 1000.0 * u[k] + qd, -vmax, vmax)
        i = (v - qd) / r_t
        want_i.append(i)
        want_f.append(i)  # K = 1: torque = current
        stall_t.append(vmax / r_t)  # the stall torque at the temperature the step began with
        temp = temp + DT * (r_t * i * i - (temp - tamb) / rth) / cth
        want_t.append(temp)
        got_t.append(a["motor_temperature"][0])
        got_f.append(a["applied_effort"][0])
        got_i.append(a["motor_current"][0])
        qd = a["joint_vel"][0]
    got_t, want_t, got_f, want_f = map(np.asarray, (got_t, want_t, got_f, want_f))
    np.testing.assert_allclose(got_t, want_t, rtol=0, atol=1e-9)
    np.testing.assert_allclose(got_f, want_f, rtol=0, atol=1e-9)
    np.testing.assert_allclose(got_i, want_i, rtol=0, atol=1e-9)
    # the winding heated (by tens of kelvin) and the torque at saturation fell by the predicted ratio
    on = u != 0
    assert want_t[-1] - tamb > 30.0
    first, last = np.flatnonzero(on)[0], np.flatnonzero(on)[-1]
    ratio = stall_t[last] / stall_t[first]
    hot = want_t[last - 1]
    assert ratio == pytest.approx(1.0 / (1.0 + alpha * (hot - tref)), rel=1e-12)
    assert ratio < 0.88
    # cooling: in the off phases no current flows and the winding cools toward ambient
    off = ~on
    steps = np.flatnonzero(off[1:] & off[:-1]) + 1
    assert (np.diff(want_t)[steps - 1] < 0).all()
    assert np.all(np.asarray(got_i)[off] == 0.0)
    env.close()



def test_explicit_refuses_the_native_only_fields_and_auto_runs_them_natively(rotor, tmp_path):
    cfg = motor(**THERMAL, cogging_amplitude=0.1, cogging_poles=4)
    with pytest.raises(ValueError, match=r"group 'motor' sets .*'cogging_amplitude'.*'thermal_resistance'.*only in MuJoCo's native dcmotor"):
        rotor(cfg, execution="explicit")
    env = rotor(cfg, execution="auto")  # RK4 or Euler alike: explicit cannot run them
    assert env.execution == "native"
    env.close()
    model = cfg.build(["shaft"])  # the parts have no explicit step either
    z = np.zeros((1, 1))
    with pytest.raises(RuntimeError, match="thermal_resistance.*only in MuJoCo's native dcmotor"):
        model.compute(joint_pos=z, joint_vel=z, target_pos=z, dt=DT)
    with pytest.raises(ValueError, match=r"the thermal model needs \['thermal_capacitance'\]"):
        motor(thermal_resistance=2.0).build(["shaft"])
    with pytest.raises(ValueError, match="cogging_poles must be one integer >= 1"):
        motor(cogging_amplitude=0.1, cogging_poles=2.5).build(["shaft"])
    with pytest.raises(ValueError, match="cogging_poles is an integer count and cannot be randomized"):
        motor(cogging_amplitude=0.1, cogging_poles=2, randomization={"cogging_poles": Uniform(1.0, 3.0)}).build(["shaft"])


def test_inductance_cogging_and_lugre_follow_their_laws(rotor):
    te, amp, poles, phase = 0.05, 0.3, 4, 0.2
    env = rotor(motor(electrical_time_constant=te, cogging_amplitude=amp, cogging_poles=poles, cogging_phase=phase),
                action_mode="effort", action_scale=5.0, armature=0.5, execution="native")
    env.reset(seed=0)
    d = env.unwrapped.data
    i, r = 0.0, NOLOAD / STALL
    for k in range(40):
        q, qd = float(d.qpos[0]), float(d.qvel[0])
        cmd = 5.0 * (1.0 if k < 20 else -0.5)
        i_inf = (np.clip(r * cmd + qd, -NOLOAD, NOLOAD) - qd) / r
        i = i + (i_inf - i) * (1.0 - np.exp(-DT / te))  # exact filter; actearly: the force uses the new current
        a = env.step(np.array([cmd / 5.0]))[4]["actuator"]
        assert a["motor_current"][0] == pytest.approx(i, abs=1e-12)
        assert a["applied_effort"][0] == pytest.approx(i + amp * np.sin(poles * q + phase), abs=1e-12)
        assert "motor_temperature" not in a
    env.close()
    sigma0, sigma1 = 100.0, 0.5
    env = rotor(motor(lugre_stiffness=sigma0, lugre_damping=sigma1, lugre_coulomb=0.2, lugre_static=0.3,
                      lugre_stribeck_velocity=0.1), action_mode="effort", armature=0.5, execution="native")
    env.reset(seed=0)
    d = env.unwrapped.data
    d.qvel[0] = 2.0
    a = env.step(np.zeros(1))[4]["actuator"]  # bristle z = 0: the friction is -sigma1 dz/dt = -sigma1 qd
    assert a["applied_effort"][0] == pytest.approx(-sigma1 * 2.0, abs=1e-12)
    assert "motor_current" not in a and "motor_temperature" not in a
    for _ in range(700):  # no command: the friction (~F_C = 0.2 N·m at steady sliding) stops the shaft in ~5 s
        env.step(np.zeros(1))
    assert abs(d.qvel[0]) < 1e-2
    env.close()


def test_randomized_thermal_values_are_written_at_every_reset(rotor):
    cfg = motor(**{**THERMAL, "randomization": {"thermal_resistance": Uniform(1.0, 3.0),
                                                "ambient_temperature": Uniform(-5.0, 5.0, operation="add")}})
    env = rotor(cfg, execution="native")
    m, seen = env.unwrapped.model, set()
    aid = m.nactuator - 1  # the native actuator comes after the env's own
    for seed in range(3):
        info = env.reset(seed=seed)[1]
        p = info["actuator"]["parameters"]["motor"]
        assert m.actuator_dynprm[aid, 2] == p["thermal_resistance"][0]
        assert m.actuator_dynprm[aid, 4] == p["ambient_temperature"][0]
        a = env.step(np.zeros(1))[4]["actuator"]  # no current at rest: the winding sits at ambient
        assert a["motor_temperature"][0] == p["ambient_temperature"][0]
        seen.add(float(p["thermal_resistance"][0]))
    assert len(seen) == 3 and all(1.0 <= s <= 3.0 for s in seen)
    env.close()


def test_plain_native_dc_motor_has_no_motor_telemetry(rotor):
    env = rotor(motor(), execution="native")
    env.reset(seed=0)
    a = env.step(np.zeros(1))[4]["actuator"]
    assert "motor_temperature" not in a and "motor_current" not in a
    env.close()
