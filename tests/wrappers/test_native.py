"""execution="native" on ActuatorWrapper: MuJoCo's own actuators give the explicit path's numbers
under Euler (float64, to round-off), refusals name the group and the reason, the env keeps its
own model semantics, and RK4 differs by a documented amount."""

from __future__ import annotations

import gymnasium as gym
import mujoco
import numpy as np
import pytest
from gymnasium.envs.mujoco.mujoco_env import MujocoEnv

import actuator_gym as ag
from actuator_gym.backends.mujoco_native import MAX_NATIVE_DELAY
from actuator_gym.randomization import Uniform
from actuator_gym.wrappers import ActuatorWrapper

ARM = """<mujoco model="arm">
  <option timestep="0.005" integrator="{integrator}"/>
  <worldbody>
    <body name="upper" pos="0 0 1">
      <joint name="shoulder" type="hinge" axis="0 1 0" damping="0.05"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.04" mass="1"/>
      <body name="lower" pos="0.4 0 0">
        <joint name="elbow" type="hinge" axis="0 1 0" range="-2 2" limited="true"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" mass="0.5"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor joint="shoulder" gear="2" ctrlrange="-1 1"/>
    <motor joint="elbow" gear="2" ctrlrange="-1 1"/>
  </actuator>
</mujoco>"""

FRAME_SKIP = 4  # control period 0.02 s: 250 steps = a 5 s episode


class ArmEnv(MujocoEnv):
    """A two-hinge arm under gravity, no contacts and no termination (a MujocoEnv like Gymnasium's)."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 50}

    def __init__(self, path, **kw):
        obs = gym.spaces.Box(-np.inf, np.inf, (4,), np.float64)
        MujocoEnv.__init__(self, str(path), FRAME_SKIP, observation_space=obs, **kw)

    def step(self, action):
        self.do_simulation(action, self.frame_skip)
        return self._get_obs(), -float(np.square(self.data.qpos).sum()), False, False, {}

    def _get_obs(self):
        return np.concatenate([self.data.qpos, self.data.qvel])

    def reset_model(self):
        q = self.init_qpos + self.np_random.uniform(-0.3, 0.3, self.model.nq)
        self.set_state(q, self.init_qvel + self.np_random.uniform(-0.5, 0.5, self.model.nv))
        return self._get_obs()


@pytest.fixture
def arm_path(tmp_path):
    def write(integrator="Euler"):
        p = tmp_path / f"arm_{integrator}.xml"
        p.write_text(ARM.format(integrator=integrator))
        return p

    return write


PD = dict(joint_names_expr=[".*"], stiffness=30.0, damping=1.0,
          randomization={"stiffness": Uniform(0.5, 1.5, operation="scale"), "damping": Uniform(0.5, 1.5, operation="scale")})
CFGS = {
    "ideal_pd": lambda: ag.IdealPDActuatorCfg(**PD, actuator_effort_limit=4.0),
    "dc_motor": lambda: ag.DCMotorCfg(
        joint_names_expr=[".*"], stiffness=30.0, damping=1.0, saturation_effort=8.0, actuator_velocity_limit=6.0,
        actuator_effort_limit=5.0,
        randomization={"saturation_effort": Uniform(6.0, 10.0), "actuator_velocity_limit": Uniform(4.0, 8.0),
                       "stiffness": Uniform(0.5, 1.5, operation="scale")}),
    "delayed_pd": lambda: ag.DelayedPDActuatorCfg(**PD, actuator_effort_limit=4.0, min_delay=0, max_delay=5,
                                                  per_joint_delay=True),
    # every lag under the control step's FRAME_SKIP substeps: the last substep reads this step's command
    "delayed_pd_short": lambda: ag.DelayedPDActuatorCfg(**PD, actuator_effort_limit=4.0, min_delay=0,
                                                        max_delay=FRAME_SKIP - 1, per_joint_delay=True),
    "pid": lambda: ag.ComposedActuatorCfg(
        joint_names_expr=[".*"], drive=ag.DrivePID(kp=30.0, ki=20.0, kd=1.0, integral_max=0.05),
        clamping=[ag.ClampingMaxEffort(max_effort=Uniform(3.0, 5.0))]),
}


def _pair(arm_path, cfg, integrator="Euler", **kw):
    envs = [ActuatorWrapper(ArmEnv(arm_path(integrator)), {"arm": cfg()}, execution=ex, **kw)
            for ex in ("explicit", "native")]
    return envs


TELEMETRY_COMPARED = ("computed_effort", "applied_effort", "power", "joint_pos", "joint_vel")


def rollout_diff(explicit, other, episodes=3, steps=250, seed=3, keys=TELEMETRY_COMPARED):
    """Two wrappers stepped in lockstep with the same random actions over ``episodes`` resets
    (``steps`` in the first, 40 in the others): the largest |explicit - other| over observations,
    rewards and the telemetry ``keys`` (the key sets and ``saturated`` must be equal), the
    parameters each episode drew (``{group: {name: values}}``, equal on both sides), the count of
    saturated steps per joint column, and the last step's telemetry of ``other``."""
    rng = np.random.default_rng(seed)
    worst, params, saturated, last = {}, [], 0, None
    for ep in range(episodes):
        oe, ie = explicit.reset(seed=ep)
        on, inn = other.reset(seed=ep)
        worst["obs"] = max(worst.get("obs", 0.0), np.abs(oe - on).max())
        pe, pn = ie["actuator"]["parameters"], inn["actuator"]["parameters"]
        assert pe.keys() == pn.keys() and all(np.array_equal(pe[g][k], pn[g][k]) for g in pe for k in pe[g])
        params.append(pe)
        for _ in range(steps if ep == 0 else 40):
            a = rng.uniform(-1, 1, explicit.action_space.shape)
            oe, re, *_, te = explicit.step(a)
            on, rn, *_, tn = other.step(a)
            ta, last = te["actuator"], tn["actuator"]
            assert ta.keys() == last.keys()
            worst["obs"] = max(worst["obs"], np.abs(oe - on).max(), abs(re - rn))
            for k in keys:
                worst[k] = max(worst.get(k, 0.0), np.abs(ta[k] - last[k]).max())
            assert np.array_equal(ta["saturated"], last["saturated"])
            saturated = saturated + ta["saturated"].astype(int)
    return worst, params, saturated, last


@pytest.mark.parametrize("name", list(CFGS))
def test_native_equals_explicit_under_euler_with_randomization_across_resets(arm_path, name):
    explicit, native = _pair(arm_path, CFGS[name])
    assert (explicit.execution, native.execution) == ("explicit", "native")
    worst, params, saturated, _ = rollout_diff(explicit, native)
    params, saturated = [p["arm"] for p in params], int(saturated.sum())
    assert max(worst.values()) < 1e-9, worst  # float64 explicit path: round-off only over a 5 s episode
    assert saturated > 0  # the limits acted, so the clamps' native forms were exercised
    drawn = {k: {tuple(np.round(p[k], 12)) for p in params} for k in params[0]}
    randomized = [k for k in drawn if len(drawn[k]) > 1]
    assert randomized  # the parameters were re-drawn at every reset
    if name.startswith("delayed_pd"):
        assert len(drawn["delay_steps"]) > 1  # the lags too, per joint


def test_native_writes_the_parameters_in_force_into_the_model(arm_path):
    native = ActuatorWrapper(ArmEnv(arm_path()), {"arm": CFGS["dc_motor"]()}, execution="native")
    native.reset(seed=1)
    m = native.unwrapped.model
    ids = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_ACTUATOR, f"actuator_gym/arm/{j}") for j in ("shoulder", "elbow")]
    p = native.parameters()["arm"]
    vmax, stall = p["actuator_velocity_limit"], p["saturation_effort"]
    np.testing.assert_array_equal(m.actuator_gainprm[ids, 0], vmax / stall)  # R = Vmax / stall torque (K = 1)
    np.testing.assert_array_equal(m.actuator_gainprm[ids, 7], vmax)
    np.testing.assert_array_equal(m.actuator_gainprm[ids, 4], p["stiffness"])
    np.testing.assert_array_equal(m.actuator_forcerange[ids, 1], p["actuator_effort_limit"])
    native.set_actuator_parameter("arm", "stiffness", 12.5)
    np.testing.assert_array_equal(m.actuator_gainprm[ids, 4], [12.5, 12.5])


def test_native_energy_holds_the_last_substep_power_over_the_control_step(arm_path):
    native = ActuatorWrapper(ArmEnv(arm_path()), {"arm": CFGS["ideal_pd"]()}, execution="native")
    native.reset(seed=0)
    for _ in range(5):
        tel = native.step(np.full(2, 0.7))[4]["actuator"]
        p = tel["applied_effort"] * tel["joint_vel"]
        np.testing.assert_array_equal(tel["mean_power"], tel["power"])
        np.testing.assert_allclose(tel["energy"], np.abs(tel["power"]) * FRAME_SKIP * 0.005, rtol=1e-12)
        assert np.all(np.isfinite(p))


def test_the_env_keeps_its_own_controls_and_gets_its_model_back_on_close(arm_path):
    env = ArmEnv(arm_path())
    own = env.model
    native = ActuatorWrapper(env, {"arm": CFGS["ideal_pd"]()}, execution="native")
    m = env.model
    assert m is not own and m.nactuator == own.nactuator + 2 and m.nu == own.nu + 6  # pos vel ff per joint
    assert [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_ACTUATOR, i) for i in range(2)] == [None, None]
    np.testing.assert_array_equal(m.actuator_ctrlrange[:2], own.actuator_ctrlrange)  # its own actuators kept
    assert native.action_space.shape == (2,) and env.action_space.shape == (2,)
    native.reset(seed=0)
    native.step(np.zeros(2))
    assert np.all(env.data.ctrl[:2] == 0.0)  # replaced, as on the explicit path
    with pytest.raises(ValueError, match=r"Action dimension mismatch. Expected \(2,\)"):
        env.do_simulation(np.zeros(3), 1)
    # a simulation of another number of frames than the control step's substeps is refused, unstepped
    t = env.data.time
    with pytest.raises(RuntimeError, match=rf"stepped {FRAME_SKIP + 1} substeps \(frames\), expected {FRAME_SKIP}"):
        env.do_simulation(np.zeros(2), FRAME_SKIP + 1)
    assert env.data.time == t
    native.close()
    assert env.model is own and "do_simulation" not in vars(env) and "_step_mujoco_simulation" not in vars(env)


@pytest.mark.parametrize("cfg, reason", [
    (lambda: ag.RemotizedPDActuatorCfg(joint_names_expr=[".*"], stiffness=5.0, damping=0.5, max_delay=0,
                                       joint_parameter_lookup=[[-3.0, 1.0, 4.0], [3.0, 1.0, 4.0]]),
     "part ClampingPositionBased has no MuJoCo-native form"),
    (lambda: ag.IdealPDActuatorCfg(joint_names_expr=[".*"], stiffness=5.0, damping=0.5, effort_mode="implicit"),
     "Stable-PD effort mode"),
    (lambda: ag.ComposedActuatorCfg(joint_names_expr=[".*"], drive=ag.DrivePID(kp=5.0, ki=1.0),
                                    clamping=[ag.ClampingDCMotor(saturation_effort=5.0, velocity_limit=3.0)]),
     "PID drive into a DC motor"),
    (lambda: ag.ComposedActuatorCfg(joint_names_expr=[".*"], drive=ag.DrivePD(kp=5.0),
                                    clamping=[ag.ClampingDCMotor(saturation_effort=0.0, velocity_limit=3.0)]),
     "saturation_effort can be 0"),
    # a native delay history is part of every world's state: 100000 substeps took 44 s to build, 18 ms a step
    (lambda: ag.DelayedPDActuatorCfg(joint_names_expr=[".*"], stiffness=5.0, damping=0.5, max_delay=MAX_NATIVE_DELAY + 1),
     rf"max_delay={MAX_NATIVE_DELAY + 1} substeps is over the native delay bound; allowed: max_delay <= {MAX_NATIVE_DELAY}"),
])
def test_native_refuses_what_has_no_exact_form_naming_group_and_reason(arm_path, cfg, reason):
    env = ArmEnv(arm_path())
    own = env.model
    with pytest.raises(ValueError, match=rf"group 'arm' has no exact MuJoCo-native form: .*{reason}"):
        ActuatorWrapper(env, {"arm": cfg()}, execution="native")
    assert env.model is own and "_step_mujoco_simulation" not in vars(env)  # untouched
    auto = ActuatorWrapper(env, {"arm": cfg()}, execution="auto")
    assert auto.execution == "explicit"


def test_auto_is_native_under_euler_only_and_bad_values_are_refused(arm_path):
    assert ActuatorWrapper(ArmEnv(arm_path()), {"arm": CFGS["pid"]()}, execution="auto").execution == "native"
    assert ActuatorWrapper(ArmEnv(arm_path("RK4")), {"arm": CFGS["pid"]()}, execution="auto").execution == "explicit"
    with pytest.raises(ValueError, match=r"execution must be one of \('explicit', 'native', 'auto'\), got 'fast'"):
        ActuatorWrapper(ArmEnv(arm_path()), {"arm": CFGS["pid"]()}, execution="fast")


def _joint_gap(explicit, native, steps, seed=0):
    rng = np.random.default_rng(seed)
    explicit.reset(seed=seed)
    native.reset(seed=seed)
    gap = 0.0
    for _ in range(steps):
        a = rng.uniform(-1, 1, explicit.action_space.shape)
        qe = explicit.step(a)[4]["actuator"]["joint_pos"]
        qn = native.step(a)[4]["actuator"]["joint_pos"]
        gap = max(gap, np.abs(qe - qn).max())
    return gap


def test_rk4_native_differs_from_explicit_by_the_documented_amount(arm_path):
    """Under RK4 the engine re-evaluates the native forces at every stage: not the explicit numbers,
    but close (docs/native.md records the sizes: 1e-2 .. 7e-2 rad on this arm over 5 s)."""
    explicit, native = _pair(arm_path, CFGS["dc_motor"], integrator="RK4")
    assert 1e-4 < _joint_gap(explicit, native, 250) < 5e-2


def test_ant_v5_rk4_native_dc_motor_stays_within_the_documented_gap():
    """Gymnasium's Ant-v5 (RK4, contacts): the native DC motor departs from the explicit one by
    ~1e-2 rad within 1 s (docs/native.md: 0.12 rad over 5 s); under Euler they agree to ~1e-8."""
    def cfg():
        return ag.DCMotorCfg(joint_names_expr=[".*"], stiffness=60.0, damping=1.5, saturation_effort=150.0,
                             actuator_velocity_limit=15.0, actuator_effort_limit=120.0)

    rk4 = [ActuatorWrapper(gym.make("Ant-v5"), {"legs": cfg()}, execution=ex) for ex in ("explicit", "native")]
    assert 1e-4 < _joint_gap(*rk4, 20) < 0.2
    euler = []
    for ex in ("explicit", "native"):
        env = gym.make("Ant-v5")
        env.unwrapped.model.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
        euler.append(ActuatorWrapper(env, {"legs": cfg()}, execution=ex))
    assert _joint_gap(*euler, 20) < 1e-9


@pytest.mark.parametrize("mode", ["velocity", "effort", "position_velocity"])
def test_native_equals_explicit_in_every_action_mode(arm_path, mode):
    def cfg():
        return ag.DCMotorCfg(joint_names_expr=[".*"], stiffness=20.0, damping=2.0, saturation_effort=8.0,
                             actuator_velocity_limit=6.0, actuator_effort_limit=5.0, min_delay=0, max_delay=3)

    explicit, native = (ActuatorWrapper(ArmEnv(arm_path()), {"arm": cfg()}, action_mode=mode, execution=ex)
                        for ex in ("explicit", "native"))
    rng = np.random.default_rng(1)
    for ep in range(2):
        oe, _ = explicit.reset(seed=ep)
        on, _ = native.reset(seed=ep)
        for _ in range(60):
            a = rng.uniform(-1, 1, explicit.action_space.shape)
            oe, _, _, _, ie = explicit.step(a)
            on, _, _, _, inn = native.step(a)
            assert np.abs(oe - on).max() < 1e-9
            np.testing.assert_allclose(ie["actuator"]["computed_effort"], inn["actuator"]["computed_effort"], atol=1e-9)
            assert np.array_equal(ie["actuator"]["saturated"], inn["actuator"]["saturated"])


def test_the_refusal_names_the_group_that_has_no_native_form(arm_path):
    groups = {"shoulder": ag.IdealPDActuatorCfg(joint_names_expr=["shoulder"], stiffness=5.0, damping=0.5),
              "elbow": ag.RemotizedPDActuatorCfg(joint_names_expr=["elbow"], stiffness=5.0, damping=0.5, max_delay=0,
                                                 joint_parameter_lookup=[[-3.0, 1.0, 4.0], [3.0, 1.0, 4.0]])}
    with pytest.raises(ValueError, match=r"group 'elbow' has no exact MuJoCo-native form: part ClampingPositionBased"):
        ActuatorWrapper(ArmEnv(arm_path()), groups, execution="native")
    with pytest.raises(ValueError, match=r"execution='native' applies to joint groups"):
        ActuatorWrapper(ArmEnv(arm_path()), {"rotors": ag.ThrusterCfg(
            thruster_names_expr=[".*"], thrust_range=(0.0, 1.0), thrust_const_range=(1e-5, 1e-5), tau_inc_range=(0.01, 0.01),
            tau_dec_range=(0.01, 0.01), torque_to_thrust_ratio=0.01)}, execution="native")


class HookArm(gym.Env):
    """The arm as a SubstepHookEnv (no model file): native needs a MujocoEnv, auto falls back."""

    def __init__(self):
        self.model = mujoco.MjModel.from_xml_string(ARM.format(integrator="Euler"))
        self.data = mujoco.MjData(self.model)
        self.frame_skip, self._hook = 2, None
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (2,), np.float64)
        self.action_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)

    @property
    def dt(self):
        return self.model.opt.timestep * self.frame_skip

    def set_substep_hook(self, hook):
        self._hook = hook

    def step(self, action):
        for k in range(self.frame_skip):
            self._hook(k)
            mujoco.mj_step(self.model, self.data)
        return self.data.qpos.copy(), 0.0, False, False, {}


def test_a_protocol_env_without_a_model_file_runs_auto_explicitly_and_refuses_native():
    with pytest.raises(ValueError, match=r"execution='native' needs a Gymnasium MujocoEnv .* HookArm has no model_spec"):
        ActuatorWrapper(HookArm(), {"arm": CFGS["ideal_pd"]()}, execution="native")
    assert ActuatorWrapper(HookArm(), {"arm": CFGS["ideal_pd"]()}, execution="auto").execution == "explicit"
