"""BAM servos (actuator_gym/actuators/bam.py): the joint angle follows traces recorded from BAM 1.0.2's own
``MujocoController`` on BAM's pendulum test bench (tests/data/bam, recorded by benchmarks/record_bam_traces.py),
driven through ``ActuatorWrapper`` with absolute position targets, frame_skip 1; and the supply's sag by hand."""

from pathlib import Path

import gymnasium as gym
import mujoco
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
    metadata = {"render_modes": ["rgb_array"], "render_fps": 500}

    def __init__(self, xml_path, **kwargs):
        obs = gym.spaces.Box(-np.inf, np.inf, (2,), np.float64)
        super().__init__(str(xml_path), frame_skip=1, observation_space=obs, **kwargs)

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
])
def test_bad_servo_parameters_name_what_is_wrong(kwargs, match):
    with pytest.raises(ValueError, match=match):
        BAMServoCfg(joint_names_expr=["a"], **kwargs).build(["a"])


def test_parameter_file_is_read_as_data(tmp_path):
    src = DATA.parents[2] / "configs" / "actuators" / "bam" / "xl330_m6.json"
    f = tmp_path / "servo.json"
    f.write_text(src.read_text())
    a = BAMServoCfg(joint_names_expr=["a"], params=str(f)).build(["a"])
    b = BAMServoCfg(joint_names_expr=["a"], motor="xl330", model="m6").build(["a"])
    assert a.parameters().keys() == b.parameters().keys()
    for k, v in a.parameters().items():
        assert np.array_equal(v, b.parameters()[k]), k
