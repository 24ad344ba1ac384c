"""BAM servos (actuator_gym/actuators/bam.py): the joint angle follows traces recorded from BAM 1.0.2's own
``MujocoController`` on BAM's pendulum test bench (tests/data/bam, recorded by benchmarks/record_bam_traces.py),
driven through ``ActuatorWrapper`` with absolute position targets, frame_skip 1; and the supply's sag by hand."""

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.mujoco.mujoco_env import MujocoEnv

from actuator_gym import ActuatorCollection, BAMServoCfg
from actuator_gym.actuators.bam import BAM_MOTORS, bam_parameters
from actuator_gym.wrappers import ActuatorWrapper

DATA = Path(__file__).resolve().parents[1] / "data" / "bam"
TRACES = sorted(p.stem for p in DATA.glob("*.npz"))
G = 9.80665


def bench_mjcf(mass: float, arm_mass: float, length: float, timestep: float) -> str:
    """BAM's pendulum test bench (bam.testbench_mujoco.Pendulum), written here: a point mass at the tip of a
    uniform arm on a hinge about x, inertia about the pivot m l^2 + m_a l^2 / 3, one noslip iteration."""
    total = mass + arm_mass
    com = -(mass * length + arm_mass * length / 2.0) / total
    inertia = max(mass * length**2 + arm_mass / 3.0 * length**2 - total * com**2, 1e-9)
    return f"""<mujoco><compiler inertiafromgeom="false"/>
  <option timestep="{timestep!r}" gravity="0 0 {-G!r}" noslip_iterations="1"/>
  <worldbody><body name="pendulum">
    <inertial pos="0 0 {com!r}" mass="{total!r}" diaginertia="{inertia!r} {inertia!r} {inertia!r}"/>
    <joint name="pendulum" axis="1 0 0"/>
    <geom type="capsule" fromto="0 0 0 0 0 {-length!r}" size="0.004" mass="0" contype="0" conaffinity="0"/>
  </body></worldbody>
  <actuator><motor name="pendulum" joint="pendulum"/></actuator>
</mujoco>"""


class BenchEnv(MujocoEnv):
    metadata = {"render_modes": ["rgb_array"]}  # no render_fps: Gymnasium checks it against dt

    def __init__(self, xml_path, frame_skip=1, **kwargs):
        obs = gym.spaces.Box(-np.inf, np.inf, (2,), np.float64)
        super().__init__(str(xml_path), frame_skip=frame_skip, observation_space=obs, **kwargs)

    def step(self, action):
        self.do_simulation(action, self.frame_skip)
        return self._obs(), 0.0, False, False, {}

    def reset_model(self):
        self.set_state(self.init_qpos, self.init_qvel)
        return self._obs()

    def _obs(self):
        return np.concatenate([self.data.qpos, self.data.qvel])


def _trace(name):
    with np.load(DATA / f"{name}.npz", allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def _bench(tmp_path, t, **cfg):
    xml = tmp_path / "bench.xml"
    xml.write_text(bench_mjcf(float(t["mass"]), float(t["arm_mass"]), float(t["length"]), float(t["timestep"])))
    env = BenchEnv(xml)
    servo = BAMServoCfg(joint_names_expr=["pendulum"], motor=str(t["motor"]), model=str(t["model"]), **cfg)
    return ActuatorWrapper(env, actuators={"servo": servo}, action_scale=1.0, action_offset=0.0)


@pytest.mark.parametrize("name", TRACES)
def test_joint_angle_follows_bam_1_0_2(tmp_path, name):
    t = _trace(name)
    drop = {} if np.isnan(t["vin_drop_resistance"]) else dict(vin_drop_resistance=float(t["vin_drop_resistance"]),
                                                              vin_min=float(t["vin_min"]))
    env = _bench(tmp_path, t, **drop)
    env.reset(seed=0)
    q, torque, supply = [env.unwrapped.data.qpos[0]], [], []
    for goal in t["goal"]:
        _, _, _, _, info = env.step(np.array([goal]))
        q.append(env.unwrapped.data.qpos[0])
        torque.append(info["actuator"]["applied_effort"][0])
        supply.append(info["actuator"]["supply_voltage"][0])
    q = np.array(q)
    assert np.abs(q - t["q"]).max() < 1e-3, (name, np.abs(q - t["q"]).max())
    assert np.abs(np.array(supply) - t["vin_eff"]).max() < 1e-3 * float(t["vin_eff"].max())
    assert np.abs(t["q"]).max() > 0.5  # the trace moves (not a test of a joint at rest)
    if drop:
        assert t["vin_eff"].min() < BAM_MOTORS[str(t["motor"])].vin - 0.5  # the battery sags in the reference


def test_two_joints_on_one_supply_draw_it_down_together():
    """Two groups on supply "battery" (R = 2 ohm): at the second substep each joint's torque is what the
    hand-computed voltage V = vin - R (|t1| + |t2|) / kt gives; on separate supplies each sags on its own."""
    p = bam_parameters("mx64", "m1")
    motor = BAM_MOTORS["mx64"]
    kt, R = p["kt"], p["R"]
    names = ["a", "b"]

    def run(supply_a, supply_b):
        cfg = dict(motor="mx64", model="m1", vin_drop_resistance=2.0, vin_min=5.0)
        coll = ActuatorCollection({"A": BAMServoCfg(joint_names_expr=["a"], supply=supply_a, **cfg),
                                   "B": BAMServoCfg(joint_names_expr=["b"], supply=supply_b, **cfg)},
                                  joint_names=names, dtype=__import__("torch").float64)
        coll.target_command.set_position_index(value=np.array([[0.3, -0.2]]))
        q, qd = np.zeros((1, 2)), np.array([[0.5, -1.0]])
        first = coll.compute(q, qd, dt=0.002).numpy().copy()
        second = coll.compute(q, qd, dt=0.002).numpy().copy()
        return first, second

    def torque(V, err, v):
        duty = np.clip(err * motor.kp * motor.error_gain, -motor.max_pwm, motor.max_pwm)
        return kt * (V * duty) / R - kt**2 * v / R

    first, second = run("battery", "battery")
    t1 = torque(motor.vin, np.array([0.3, -0.2]), np.array([0.5, -1.0]))  # no current drawn yet: full voltage
    np.testing.assert_allclose(first[0], t1, rtol=1e-12)
    V = max(motor.vin - 2.0 * np.abs(t1).sum() / kt, 5.0)
    assert V < motor.vin - 1.0
    np.testing.assert_allclose(second[0], torque(V, np.array([0.3, -0.2]), np.array([0.5, -1.0])), rtol=1e-12)
    _, alone = run(None, None)
    for j in range(2):
        Vj = max(motor.vin - 2.0 * abs(t1[j]) / kt, 5.0)
        np.testing.assert_allclose(alone[0, j], torque(Vj, np.array([0.3, -0.2])[j], np.array([0.5, -1.0])[j]), rtol=1e-12)
    assert abs(second[0, 0]) < abs(alone[0, 0])  # sharing the battery costs torque


def test_supplies_with_different_voltages_are_refused():
    cfg = dict(motor="mx64", model="m1", supply="battery")
    with pytest.raises(ValueError, match="supply 'battery'.*'vin'"):
        ActuatorCollection({"A": BAMServoCfg(joint_names_expr=["a"], vin=12.0, **cfg),
                            "B": BAMServoCfg(joint_names_expr=["b"], **cfg)}, joint_names=["a", "b"])


@pytest.mark.parametrize("kwargs, match", [
    (dict(motor="mx28", model="m1"), "motor='mx28'.*allowed"),
    (dict(motor="mx64", model="m7"), "model='m7'.*allowed"),
    (dict(motor="mx64", model="m1", stiffness=10.0), "stiffness.*do not apply"),
    (dict(params={"kt": 1.0, "R": 2.0, "armature": 0.01, "model": "m1", "actuator": "mx64", "bogus": 1}), "unknown key.*bogus"),
    (dict(params={"kt": 1.0, "armature": 0.01, "model": "m1", "actuator": "mx64"}), "missing \\['R'\\]"),
    (dict(motor="mx64"), "model=None is required.*friction_model"),
    (dict(motor="mx64", model="m1", vin_min=20.0), "vin_min \\(20 V\\) must be <= vin \\(15 V\\)"),
    (dict(motor="mx64", model="m1", kt=-1.0), "parameter 'kt'.*-1.0; allowed: finite values > 0"),
])
def test_bad_servo_parameters_name_what_is_wrong(kwargs, match):
    with pytest.raises(ValueError, match=match):  # when the config is made, before anything is built
        BAMServoCfg(joint_names_expr=["a"], **kwargs)


def test_parameter_file_is_read_as_data(tmp_path):
    src = DATA.parents[2] / "configs" / "actuators" / "bam" / "xl330_m6.json"
    f = tmp_path / "servo.json"
    f.write_text(src.read_text())
    a = BAMServoCfg(joint_names_expr=["a"], params=str(f)).build(["a"])
    b = BAMServoCfg(joint_names_expr=["a"], motor="xl330", model="m6").build(["a"])
    assert a.parameters().keys() == b.parameters().keys()
    for k, v in a.parameters().items():
        assert np.array_equal(v, b.parameters()[k]), k



def test_the_wrapper_and_the_batched_task_run_one_bam_servo(tmp_path):
    """One rig: the pendulum task's BAM group (the batched backend, where the joints' dry-friction force comes
    from MuJoCo's constraint law; float32 parameters) and the wrapper on the task's MJCF (one MjData, efc_force;
    float64) follow the same trajectory, and report the same servo telemetry."""
    from actuator_gym.tasks.pendulum import PendulumCfg

    servo = BAMServoCfg(joint_names_expr=["hinge"], motor="mx106", model="m6", vin_drop_resistance=0.5)
    cfg = PendulumCfg(actuators={"p": servo}, action_scale=1.0, action_offset=0.0)
    task = gym.make_vec("actuator_gym/Pendulum-v0", num_envs=2, actuators={"p": servo}, action_scale=1.0,
                        action_offset=0.0).unwrapped
    task.reset(seed=0)
    xml = tmp_path / "pendulum.xml"
    xml.write_text(cfg.model_xml())
    env = BenchEnv(xml, frame_skip=cfg.decimation)
    env.model.opt.timestep = cfg.physics_dt
    wrapped = ActuatorWrapper(env, actuators={"p": servo}, action_scale=1.0, action_offset=0.0, joints=["hinge"])
    wrapped.reset(seed=0)
    env.set_state(task.backend.qpos[0].copy(), np.zeros(env.model.nv))
    worst = 0.0
    for target in np.random.default_rng(0).uniform(-2.0, 2.0, 60):
        _, _, _, _, ti = task.step(np.array([[target], [target]], np.float32))
        _, _, _, _, wi = wrapped.step(np.array([target]))
        worst = max(worst, abs(ti["actuator"]["joint_pos"][0, 0] - wi["actuator"]["joint_pos"][0]))
        for key in ("supply_voltage", "duty_cycle", "motor_current"):
            np.testing.assert_allclose(ti["actuator"][key][0], wi["actuator"][key], rtol=1e-3, atol=1e-3, err_msg=key)
    assert worst < 1e-3, worst


def test_yaml_presets_of_the_published_servos(tmp_path):
    """``model: BAMServo`` in YAML; BAM's friction model is ``friction_model:`` there (``model:`` names the
    config); a parameter set is given inline only (a data file reads no other file)."""
    from actuator_gym import configs

    for motor in BAM_MOTORS:
        cfg = configs.load(f"bam_{motor}").actuators["servos"]
        assert isinstance(cfg, BAMServoCfg) and (cfg.motor, cfg.model) == (motor, "m6")
        assert cfg.build(["hip", "knee"]).drive.params["kt"].nominal[0, 0].item() == pytest.approx(
            bam_parameters(motor, "m6")["kt"], rel=1e-6)
    body = "kind: actuators\ngroups:\n  s:\n    model: BAMServo\n    joint_names_expr: ['.*']\n    params: {}\n"
    inline = tmp_path / "inline.yaml"
    inline.write_text(body.replace("{}", "{kt: 1.5, R: 2.0, armature: 0.01, model: m1, actuator: mx64}"))
    assert configs.load(inline).actuators["s"].build(["a"]).drive.params["R"].nominal[0, 0].item() == 2.0
    path = tmp_path / "path.yaml"
    path.write_text(body.replace("{}", "servo.json"))
    with pytest.raises(configs.ConfigError, match="params.*inline.*reads no other file"):
        configs.load(path)
    typo = tmp_path / "typo.yaml"
    typo.write_text(body.replace("params: {}", "motor: mx64\n    frictionmodel: m1"))
    with pytest.raises(configs.ConfigError, match="unknown key.*frictionmodel.*'friction_model'") as err:
        configs.load(typo)
    assert "'model'" not in str(err.value).split("allowed:")[1]
    two = tmp_path / "two.yaml"
    group = "  {g}:\n    model: BAMServo\n    joint_names_expr: ['{g}']\n    motor: mx64\n    friction_model: m1\n" \
            "    supply: battery\n    vin_drop_resistance: {r}\n"
    two.write_text("kind: actuators\ngroups:\n" + group.format(g="a", r=0.1) + group.format(g="b", r=0.2))
    with pytest.raises(configs.ConfigError, match="supply 'battery': groups 'a' and 'b' give different 'vin_drop_resistance'"):
        configs.load(two)  # at load, before any env is made


def test_servo_parameters_are_redrawn_per_env_at_reset():
    """kt, the supply and the armature randomized at reset: each env's values in force drive its torque, and each
    world of the batched task gets its own armature in dof_armature."""
    from actuator_gym.randomization import Uniform

    servo = BAMServoCfg(joint_names_expr=["hinge"], motor="xl330", model="m3",
                        randomization={"kt": Uniform(0.8, 1.2, operation="scale"), "vin": Uniform(6.5, 7.5),
                                       "armature": Uniform(0.5, 2.0, operation="scale")})
    task = gym.make_vec("actuator_gym/Pendulum-v0", num_envs=4, actuators={"p": servo}).unwrapped
    task.reset(seed=3)
    params = task.rig.parameters()["p"]
    assert len(set(params["kt"][:, 0])) == 4 and len(set(params["vin"][:, 0])) == 4
    dof = task.backend.joints.dof_adr[0]
    np.testing.assert_allclose(task.backend.model_field("dof_armature")[:, dof], params["armature"][:, 0], rtol=1e-6)
    _, _, _, _, info = task.step(np.zeros((4, 1), np.float32))
    np.testing.assert_allclose(info["actuator"]["supply_voltage"][:, 0], params["vin"][:, 0], rtol=1e-6)  # no sag set
    again = gym.make_vec("actuator_gym/Pendulum-v0", num_envs=4, actuators={"p": servo}).unwrapped
    again.reset(seed=3)
    np.testing.assert_array_equal(again.rig.parameters()["p"]["kt"], params["kt"])  # determinism under a seed


@pytest.mark.parametrize("motor, mass, length, viscous", [("mx64", 5.0, 0.3, 1.0), ("xl330", 0.5, 0.2, 0.05)])
def test_acceptance_a_servo_stalls_where_its_torque_limit_meets_gravity(tmp_path, motor, mass, length, viscous):
    """Physics acceptance: a point mass m at l, commanded far past horizontal, comes to rest where the servo's
    most torque holds gravity, q = asin(tau_max / (m g l)); tau_max = kt vin max_pwm / R where the PWM limits
    (MX-64), kt max_current where the firmware's current limiter does (XL-330). No dry friction, a full supply;
    viscous friction (which holds no torque at rest) damps the approach: at the current limit the servo's torque
    no longer falls with speed, so without it the XL-330 would swing around the stall angle for ever."""
    p, c = bam_parameters(motor, "m1"), BAM_MOTORS[motor]
    tau_max = min(p["kt"] * c.vin * c.max_pwm / p["R"], p["kt"] * c.max_current)
    assert (motor == "xl330") == (p["kt"] * c.max_current < p["kt"] * c.vin * c.max_pwm / p["R"])
    expected = np.arcsin(tau_max / (mass * G * length))
    xml = tmp_path / "bench.xml"
    xml.write_text(bench_mjcf(mass, 0.0, length, 0.002))
    servo = BAMServoCfg(joint_names_expr=["pendulum"], motor=motor, model="m1", friction_base=0.0,
                        friction_viscous=viscous)
    env = ActuatorWrapper(BenchEnv(xml), actuators={"servo": servo}, action_scale=1.0, action_offset=0.0)
    env.reset(seed=0)
    for _ in range(5000):  # 10 s
        _, _, _, _, info = env.step(np.array([np.pi / 2 + 1.0]))
    q, qd = env.unwrapped.data.qpos[0], env.unwrapped.data.qvel[0]
    assert abs(qd) < 1e-3 and abs(q - expected) < 1e-4, (q, expected, qd)  # the other limit's angle: 0.07 rad off
    assert abs(info["actuator"]["applied_effort"][0] - tau_max) < 1e-4 * tau_max
