"""Isaac Lab's example actuator configs, field for field, on our tasks and on Gymnasium envs.

The constants below are written as in ``isaaclab_assets`` (ANYdrive DC motor, Unitree A1 and Go2 DC
motors, Franka's implicit shoulder group, the Go1 MLP net). The Unitree ones run verbatim on the
quadruped (it has Unitree's joint names); elsewhere only ``joint_names_expr`` is re-pointed at the
host model's joints (:func:`on`), and the Go1 net file (not downloadable) is a TorchScript MLP of
the same architecture built here. An implicit group is the engine servo in the wrapper and the
Stable-PD solve of the same PD on a task (hand-checked on the Pendulum). Also: None = "from the
asset", the two effort limits, joint properties, and run-time parameter changes.
"""

import dataclasses
import math
import re
import textwrap
import warnings

import gymnasium as gym
import mujoco
import numpy as np
import pytest
import torch
from torch import nn

import actuator_gym as ag
from actuator_gym import configs
from actuator_gym.backends.base import PhysicsBackend
from actuator_gym.backends.mujoco_asset import MjcfJoints
from actuator_gym.backends.mujoco_batch import MujocoBatchBackend
from actuator_gym.tasks.pendulum import PendulumTask
from actuator_gym.tasks.quadruped import JOINT_RANGES
from actuator_gym.backends.mujoco_asset import write_joint_properties
from actuator_gym.randomization import Uniform
from actuator_gym.wrappers import ActuatorWrapper

QUADRUPED = "actuator_gym/Quadruped-v0"


def isaaclab(factory):
    """Build a config as Isaac Lab users write it (its deprecated names warn, as in Isaac Lab 3.0)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return factory()


ANYDRIVE_3_SIMPLE_ACTUATOR_CFG = isaaclab(lambda: ag.DCMotorCfg(
    joint_names_expr=[".*HAA", ".*HFE", ".*KFE"],
    saturation_effort=120.0,
    effort_limit=80.0,
    velocity_limit=7.5,
    stiffness={".*": 40.0},
    damping={".*": 5.0},
))
UNITREE_A1_LEGS = isaaclab(lambda: ag.DCMotorCfg(
    joint_names_expr=[".*_hip_joint", ".*_thigh_joint", ".*_calf_joint"],
    effort_limit=33.5,
    saturation_effort=33.5,
    velocity_limit=21.0,
    stiffness=25.0,
    damping=0.5,
    friction=0.0,
))
FRANKA_PANDA_SHOULDER = isaaclab(lambda: ag.ImplicitActuatorCfg(
    joint_names_expr=["panda_joint[1-4]"],
    effort_limit_sim=87.0,
    velocity_limit_sim=2.175,
    stiffness=80.0,
    damping=4.0,
))


QUADRUPED_IMPLICIT_LEGS = isaaclab(lambda: ag.ImplicitActuatorCfg(  # a quadruped-style implicit group
    joint_names_expr=[".*"], stiffness=25.0, damping=0.5, effort_limit_sim=33.5))


def go1_actuator_cfg(network_file):
    return isaaclab(lambda: ag.ActuatorNetMLPCfg(
        joint_names_expr=[".*_hip_joint", ".*_thigh_joint", ".*_calf_joint"],
        network_file=network_file,
        pos_scale=-1.0,
        vel_scale=1.0,
        torque_scale=1.0,
        input_order="pos_vel",
        input_idx=[0, 1, 2],
        effort_limit=23.7,  # taken from spec sheet
        velocity_limit=30.0,  # taken from spec sheet
        saturation_effort=23.7,  # same as effort limit
        allow_unsafe_checkpoint=True,  # ours: TorchScript runs code; the one field Isaac Lab lacks
    ))


def on(cfg, *exprs):
    """The same config over another model's joints."""
    return dataclasses.replace(cfg, joint_names_expr=list(exprs))


def quadruped(actuators, n=2):
    return gym.make_vec(QUADRUPED, num_envs=n, actuators=actuators).unwrapped


def run(env_or_task, steps=3):
    """Step with zero actions; observations and efforts must stay finite. Returns the last info."""
    env_or_task.reset(seed=0)
    for _ in range(steps):
        a = np.zeros(env_or_task.action_space.shape, np.float32)
        obs, _, _, _, info = env_or_task.step(a)
        assert np.isfinite(obs).all() and np.isfinite(info["actuator"]["applied_effort"]).all()
    return info


def const(model, name):
    """A parameter that is one value over every env and joint, as a float."""
    v = model.parameter(name)
    assert torch.all(v == v.flatten()[0]), (name, v)
    return float(v.flatten()[0])


# -- the example configs --------------------------------------------------------------------------
def test_anydrive_dc_motor_on_the_quadruped_task():
    task = quadruped({"legs": on(ANYDRIVE_3_SIMPLE_ACTUATOR_CFG, ".*_hip_joint", ".*_thigh_joint", ".*_calf_joint")})
    m = task.collection["legs"]
    got = {k: const(m, k) for k in ("stiffness", "damping", "saturation_effort", "actuator_effort_limit", "actuator_velocity_limit")}
    assert got == {"stiffness": 40.0, "damping": 5.0, "saturation_effort": 120.0, "actuator_effort_limit": 80.0,
                   "actuator_velocity_limit": 7.5}
    info = run(task, steps=5)
    assert (np.abs(info["actuator"]["applied_effort"]) <= 80.0 + 1e-6).all()


def test_unitree_dc_motor_on_the_quadruped_task_and_on_ant():
    task = quadruped({"legs": UNITREE_A1_LEGS})  # verbatim: Unitree's joint names
    m = task.collection["legs"]
    assert [const(m, k) for k in ("stiffness", "damping", "saturation_effort", "actuator_effort_limit",
                                  "actuator_velocity_limit")] == [25.0, 0.5, 33.5, 33.5, 21.0]
    assert task.model.dof_frictionloss[6:].tolist() == [0.0] * 12  # friction=0.0 written (static friction)
    run(task)
    env = ActuatorWrapper(gym.make("Ant-v5"), actuators={"legs": on(UNITREE_A1_LEGS, r"hip_\d", r"ankle_\d")})
    assert env.parameters()["legs"]["actuator_velocity_limit"].tolist() == [21.0] * 8
    run(env)


def test_unitree_go2_dc_motor_runs_verbatim_on_the_quadruped_within_its_envelope():
    """Isaac Lab's Go2 legs, field for field, through ``gym.make_vec``: they cover the 12 joints, and the
    first substep's effort of every step is the DC-motor clamp of the PD at the step's start state,
    computed here by hand: ``clip(25 (q* - q) - 0.5 qd, 23.5 (-1 - qd/30), 23.5 (1 - qd/30))`` within
    +-23.5 N·m, with ``q*`` the default pose + action clipped into the joint's range."""
    go2 = isaaclab(lambda: ag.DCMotorCfg(
        joint_names_expr=[".*_hip_joint", ".*_thigh_joint", ".*_calf_joint"], effort_limit=23.5,
        saturation_effort=23.5, velocity_limit=30.0, stiffness=25.0, damping=0.5, friction=0.0))
    env = gym.make_vec(QUADRUPED, num_envs=2, actuators={"base_legs": go2})
    task = env.unwrapped
    assert task.collection["base_legs"].joint_names == task.joint_names and len(task.joint_names) == 12
    p = task.actuator_parameters()["base_legs"]
    assert {k: np.unique(p[k]).tolist() for k in ("stiffness", "damping", "saturation_effort", "actuator_effort_limit",
                                                  "actuator_velocity_limit")} == {
        "stiffness": [25.0], "damping": [0.5], "saturation_effort": [23.5], "actuator_effort_limit": [23.5],
        "actuator_velocity_limit": [30.0]}
    first = []
    task.add_substep_callback(lambda t, k: first.append(t.collection.applied_effort.numpy().copy()) if k == 0 else None)
    env.reset(seed=0)
    lo, hi = (np.array([JOINT_RANGES[n.split("_", 1)[1]][i] for n in task.joint_names]) for i in (0, 1))
    saturated = 0
    for i in range(6):  # full-scale actions of alternating sign: the clamp binds
        q, qd = task.backend.joint_pos().copy(), task.backend.joint_vel().copy()
        action = np.full((2, 12), (-1.0) ** i, np.float32)
        _, _, _, _, info = env.step(action)
        pd = 25.0 * (np.clip(task.default_joint_pos + action, lo, hi) - q) - 0.5 * qd
        envelope = np.clip(23.5 * (-1 - qd / 30.0), -23.5, 0.0), np.clip(23.5 * (1 - qd / 30.0), 0.0, 23.5)
        np.testing.assert_allclose(first[-1], np.clip(pd, *envelope), rtol=1e-5, atol=1e-4)
        assert (np.abs(info["actuator"]["applied_effort"]) <= 23.5 + 1e-5).all()
        saturated += int((np.abs(pd) > 23.5).sum())
    assert saturated > 0
    env.close()


def test_a_gain_map_that_leaves_joints_of_the_group_uncovered_is_refused_on_the_quadruped():
    """Isaac Lab would leave the thigh and calf joints at stiffness 0 (limp legs): refused before the task
    is built, naming the field as written, the group and the 8 joints no key matches."""
    cfg = dataclasses.replace(UNITREE_A1_LEGS, stiffness={".*_hip_joint": 20.0})
    uncovered = [f"{leg}_{j}_joint" for leg in ("FL", "FR", "RL", "RR") for j in ("thigh", "calf")]
    with pytest.raises(ValueError, match=r"DCMotorCfg \(group 'base_legs'\): 'stiffness' = .*\['\.\*_hip_joint'\] leaves "
                                         rf"joints {re.escape(str(uncovered))} of the group matched by no key"):
        gym.make_vec(QUADRUPED, num_envs=2, actuators={"base_legs": cfg})
    full = dataclasses.replace(cfg, stiffness={".*_hip_joint": 20.0, ".*_(thigh|calf)_joint": 30.0})
    k = quadruped({"base_legs": full}).actuator_parameters()["base_legs"]["stiffness"]
    assert k[:, 0::3].tolist() == [[20.0] * 4] * 2 and (np.delete(k, np.s_[0::3], axis=1) == 30.0).all()


def test_franka_implicit_group_on_ant_is_the_stable_pd_solve_with_the_solver_limit():
    with pytest.warns(UserWarning, match="joint_velocity_limit is not enforced on MuJoCo"):
        env = ActuatorWrapper(gym.make("Ant-v5"), actuators={
            "shoulder": on(FRANKA_PANDA_SHOULDER, "hip_[1-4]"),
            "rest": ag.IdealPDActuatorCfg(joint_names_expr=["ankle_.*"], stiffness=10.0, damping=1.0)})
    p = env.parameters()["shoulder"]
    assert p["joint_effort_limit"].tolist() == [87.0] * 4  # effort_limit_sim: the solver's limit
    assert p["actuator_effort_limit"].tolist() == [math.inf] * 4  # no rated limit given
    assert p["stiffness"].tolist() == [80.0] * 4 and p["damping"].tolist() == [4.0] * 4
    assert env.collection.stable_pd_groups == ["shoulder"]  # one meaning: the Stable-PD solve, as in the tasks
    np.testing.assert_array_equal(env.unwrapped.model.actuator_gainprm, gym.make("Ant-v5").unwrapped.model.actuator_gainprm)
    run(env)
    hips = [env.joint_names.index(f"hip_{i}") for i in range(1, 5)]
    for _ in range(3):  # targets far away: the hips' PD (80 N·m/rad) clamped at the solver limit
        tel = env.step(np.full(env.action_space.shape, 100.0, np.float32))[4]["actuator"]
    assert np.abs(tel["applied_effort"][hips]).max() <= 87.0 and tel["saturated"][hips].any()


def test_implicit_effort_limit_aliases_map_as_in_isaac_lab_3():
    """Isaac Lab 3.0: ``effort_limit`` is the rated limit (actuator_effort_limit) and ``effort_limit_sim``
    the solver's (joint_effort_limit); both given and different is legal (deprecated); a lone
    ``effort_limit`` reaches the solver too. A canonical field given beside its alias must agree."""
    with pytest.warns(DeprecationWarning) as record:
        cfg = ag.ImplicitActuatorCfg(stiffness=1000.0, effort_limit=87.0, effort_limit_sim=870.0)
    assert sorted(str(w.message).split("'")[1] for w in record) == ["effort_limit", "effort_limit_sim"]
    assert (cfg.actuator_effort_limit, cfg.joint_effort_limit) == (87.0, 870.0)
    m = cfg.build(joint_names=["a"])
    assert m.parameter("actuator_effort_limit").item() == 87.0 and m.parameter("joint_effort_limit").item() == 870.0
    still = dict(dt=0.005, inverse_mass=np.zeros((1, 1, 1)))  # M^-1 = 0: the Stable-PD solve is the plain PD
    assert m.compute(joint_pos=[[0.0]], joint_vel=[[0.0]], target_pos=[[1.0]], **still).item() == 87.0  # 1000 N·m clipped by both
    with pytest.warns(DeprecationWarning):
        lone = ag.ImplicitActuatorCfg(stiffness=1000.0, effort_limit=12.0)
    assert (lone.actuator_effort_limit, lone.joint_effort_limit) == (12.0, 12.0)
    with pytest.warns(DeprecationWarning):
        assert ag.ImplicitActuatorCfg(effort_limit=12.0, joint_effort_limit=50.0).joint_effort_limit == 50.0
    for kw in (dict(effort_limit=87.0, actuator_effort_limit=50.0), dict(effort_limit_sim=870.0, joint_effort_limit=50.0)):
        with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="conflicts with"):
            ag.ImplicitActuatorCfg(**kw)


# -- an implicit group on a batched task: the Stable-PD solve of the same PD ------------------------
def _rollout(task, steps=4):
    """Observations and telemetry of a few steps toward the largest targets (obs, [tel, ...])."""
    obs, _ = task.reset(seed=3)
    out = [obs]
    for _ in range(steps):
        o, _, _, _, info = task.step(np.ones(task.action_space.shape, np.float32))
        out.append(o)
        out += [info["actuator"][k] for k in ("computed_effort", "applied_effort", "saturated", "power", "energy")]
    return out


def test_franka_implicit_group_on_the_quadruped_task_is_the_stable_pd_of_the_same_pd():
    with pytest.warns(UserWarning, match="joint_velocity_limit is not enforced on MuJoCo"):
        task = quadruped({"shoulder": on(FRANKA_PANDA_SHOULDER, ".*_hip_joint"), "rest": on(QUADRUPED_IMPLICIT_LEGS, ".*_(thigh|calf)_joint")})
    c = task.collection
    assert (c.stable_pd_groups, c.needs_mass_matrix) == (["shoulder", "rest"], True)
    p = task.actuator_parameters()
    assert (p["shoulder"]["joint_effort_limit"] == 87.0).all() and (p["shoulder"]["actuator_effort_limit"] == math.inf).all()
    assert (p["rest"]["joint_effort_limit"] == 33.5).all() and (p["rest"]["stiffness"] == 25.0).all()
    # the same PD and solver limit written as an explicit model in the Stable-PD effort mode: bit for bit
    twin = quadruped({"shoulder": ag.IdealPDActuatorCfg(joint_names_expr=[".*_hip_joint"], stiffness=80.0, damping=4.0,
                                                        joint_effort_limit=87.0, effort_mode="implicit"),
                      "rest": ag.IdealPDActuatorCfg(joint_names_expr=[".*_(thigh|calf)_joint"], stiffness=25.0, damping=0.5,
                                                    joint_effort_limit=33.5, effort_mode="implicit")})
    ours, ref = _rollout(task), _rollout(twin)
    assert all(np.array_equal(a, b) for a, b in zip(ours, ref))
    explicit = quadruped({"legs": ag.IdealPDActuatorCfg(stiffness=25.0, damping=0.5, joint_effort_limit=33.5)})
    assert not np.array_equal(_rollout(quadruped({"legs": QUADRUPED_IMPLICIT_LEGS}))[-4], _rollout(explicit)[-4])


def test_implicit_group_on_the_pendulum_solves_the_stable_pd_equation_per_env_at_the_solver_limit():
    rand = {"stiffness": Uniform(0.5, 1.5, operation="scale"), "damping": Uniform(0.5, 1.5, operation="scale"),
            "joint_effort_limit": Uniform(0.5, 1.0, operation="scale")}
    cfg = isaaclab(lambda: ag.ImplicitActuatorCfg(joint_names_expr=["hinge"], stiffness=400.0, damping=8.0,
                                                  effort_limit_sim=12.0, actuator_effort_limit=1e3, randomization=rand))
    task = PendulumTask(num_envs=3, actuators={"p": cfg}, action_scale=1.0, action_offset=0.0)
    first = []
    task.add_substep_callback(lambda t, k: first.append(t.collection.applied_effort.numpy().copy()) if k == 0 else None)
    task.reset(seed=5)
    par = {k: v[:, 0].astype(np.float64) for k, v in task.actuator_parameters()["p"].items()}
    assert len(set(par["stiffness"])) == 3 and len(set(par["joint_effort_limit"])) == 3  # drawn per env
    assert (par["actuator_effort_limit"] == 1e3).all()  # the rated limit is a parameter apart
    h = task.physics_dt
    for step in (0.005, 1.0):  # inside the limit, then saturated at each env's joint_effort_limit
        first.clear()
        q, qd = task.backend.joint_pos()[:, 0].copy(), task.backend.joint_vel()[:, 0].copy()
        A, b = task.backend.mass_matrix_terms([0])
        A, b = A[:, 0, 0], b[:, 0]
        action = (q + step).astype(np.float32)[:, None]  # absolute targets: q* = action
        target = action[:, 0].astype(np.float64)
        _, _, _, _, info = task.step(action)
        # one substep of Stable-PD for a linear PD: p = h (kp (q* - q(p)) - kd qd(p)), qd(p) = qd - h A b + A p,
        # q(p) = q + h qd(p), solved for p; then the clamp at the solver's limit
        kp, kd, lim = par["stiffness"], par["damping"], par["joint_effort_limit"]
        v0 = qd - h * A * b
        tau = (kp * (target - q) - (kp * h + kd) * v0) / (1 + h * A * (kp * h + kd))
        expected = np.clip(tau, -lim, lim)
        assert (np.abs(tau) < lim).all() if step < 0.5 else (tau > lim).all()
        np.testing.assert_allclose(first[0][:, 0], expected, rtol=1e-5, atol=1e-6)
        if step > 0.5:
            tel = info["actuator"]
            np.testing.assert_allclose(tel["applied_effort"][:, 0], lim, rtol=1e-6)  # clamped at effort_limit_sim
            assert tel["saturated"].all() and (tel["computed_effort"][:, 0] > lim).all()


def test_implicit_group_on_a_task_without_the_mass_matrix_names_the_group(monkeypatch):
    import warp  # noqa: F401  (the Warp backend must be installed: the refusal is what is tested)

    cfg = ag.ImplicitActuatorCfg(joint_names_expr=["hinge"], stiffness=20.0, joint_effort_limit=3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=r"implicit groups \['servo'\] \(ImplicitActuatorCfg: their PD is solved "
                                             r"in the Stable-PD effort mode\).*backend 'mujoco_warp' does not provide"):
            PendulumTask(num_envs=2, backend="mujoco_warp", actuators={"servo": cfg})
    monkeypatch.setattr(MujocoBatchBackend, "mass_matrix_terms", PhysicsBackend.mass_matrix_terms)
    with pytest.raises(ValueError, match=r"groups \['pd'\] use effort_mode='implicit'; implicit groups \['servo'\].*"
                                         r"use backend='mujoco' or effort_mode='explicit' or an explicit model"):
        quadruped({"servo": on(cfg, ".*_calf_joint"), "pd": ag.IdealPDActuatorCfg(joint_names_expr=[".*_(hip|thigh)_joint"], stiffness=5.0, effort_mode="implicit")}, n=1)


def _go1_net(path):
    """A TorchScript MLP of the Go1 actuator net's architecture (6 -> 32 -> 32 -> 32 -> 1, softsign)."""
    torch.manual_seed(3)
    net = nn.Sequential(nn.Linear(6, 32), nn.Softsign(), nn.Linear(32, 32), nn.Softsign(),
                        nn.Linear(32, 32), nn.Softsign(), nn.Linear(32, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.jit.trace(net, torch.zeros(2, 6)).save(str(path))
    return net


def test_go1_mlp_net_inputs_scales_and_envelope(tmp_path):
    net = _go1_net(tmp_path / "unitree_go1.pt")
    cfg = go1_actuator_cfg(str(tmp_path / "unitree_go1.pt"))
    m = cfg.build(joint_names=["FL_hip_joint", "FL_thigh_joint"])
    assert [const(m, k) for k in ("saturation_effort", "actuator_effort_limit", "actuator_velocity_limit")] == pytest.approx([23.7, 23.7, 30.0])
    err, vel = np.array([[0.05, -0.02]]), np.array([[0.3, -0.1]])
    for _ in range(3):  # fill the history: inputs [pos_scale * err x3, vel_scale * vel x3] per joint
        out = m.compute(joint_pos=-err, joint_vel=vel, target_pos=np.zeros((1, 2)))
    x = torch.tensor([[-e] * 3 + [v] * 3 for e, v in zip(err[0], vel[0])], dtype=torch.float32)
    expected = net(x).detach()[:, 0]
    assert torch.all(expected.abs() < 23.7 * (1 - 0.3 / 30))  # inside the DC envelope: not clipped
    torch.testing.assert_close(out[0], expected, rtol=1e-5, atol=1e-6)


def test_go1_mlp_net_runs_on_the_quadruped_task_and_on_ant(tmp_path):
    _go1_net(tmp_path / "net.pt")
    cfg = go1_actuator_cfg(str(tmp_path / "net.pt"))
    task = quadruped({"legs": cfg})  # verbatim
    run(task)
    np.testing.assert_allclose(task.actuator_parameters()["legs"]["saturation_effort"], 23.7, rtol=1e-7)
    run(ActuatorWrapper(gym.make("Ant-v5"), actuators={"legs": on(cfg, r"hip_\d", r"ankle_\d")}))


# -- None = from the asset ------------------------------------------------------------------------
SERVO_XML = """
<mujoco><worldbody><body><joint name="a" type="hinge"/><joint name="b" type="hinge" actuatorfrcrange="-3 3"
  actuatorfrclimited="true"/><geom size=".1" mass="1"/></body></worldbody>
  <actuator><position joint="a" kp="30" kv="2" gear="2" forcerange="-5 5"/><motor joint="b" gear="4" ctrlrange="-1 1"/></actuator>
</mujoco>"""


def test_mjcf_values_fill_the_none_fields_and_the_users_cfg_is_unchanged():
    asset = MjcfJoints(mujoco.MjModel.from_xml_string(SERVO_XML))
    # hand-read: joint a's servo in joint space: gear² kp = 4 * 30, gear² kv = 4 * 2; its limit gear * 5;
    # joint b: actuatorfrcrange 3 beats gear * ctrlrange = 4; b has no servo
    assert asset.joint_values("stiffness", ["a", "b"]) == [120.0, None]
    assert asset.joint_values("damping", ["a", "b"]) == [8.0, None]
    assert asset.joint_values("effort_limit", ["a", "b"]) == [10.0, 3.0]
    cfg = ag.IdealPDActuatorCfg(joint_names_expr=["a"], stiffness=None, damping=None, actuator_effort_limit=None)
    m = cfg.build(joint_names=["a", "b"], asset=asset)
    assert [const(m, k) for k in ("stiffness", "damping", "actuator_effort_limit")] == [120.0, 8.0, 10.0]
    assert m.cfg is cfg and cfg.stiffness is None and m.resolved_cfg.stiffness == [120.0]
    with pytest.raises(ValueError, match=r"stiffness=None .*the MJCF has no stiffness for joints \['b'\]"):
        ag.IdealPDActuatorCfg(joint_names_expr=["b"], stiffness=None).build(joint_names=["a", "b"], asset=asset)
    # without an asset: unset limits are +inf, None gains are refused (not a limp 0)
    assert const(ag.IdealPDActuatorCfg(stiffness=1.0, actuator_effort_limit=None).build(joint_names=["j"]), "actuator_effort_limit") == math.inf
    with pytest.raises(ValueError, match=r"damping=None .*built without one.*\['j'\]"):
        ag.IdealPDActuatorCfg(damping=None).build(joint_names=["j"])


def test_none_limits_on_gymnasium_motors_are_gear_times_ctrlrange():
    env = ActuatorWrapper(gym.make("Ant-v5"), actuators={"legs": ag.IdealPDActuatorCfg(stiffness=10.0, actuator_effort_limit=None)})
    assert env.parameters()["legs"]["actuator_effort_limit"].tolist() == [150.0] * 8  # gear 150 x ctrlrange 1
    with pytest.raises(ValueError, match=r"stiffness=None .*no stiffness for joints \['hip_1', 'ankle_1', 'hip_2'"):
        ActuatorWrapper(gym.make("Ant-v5"), actuators={"legs": ag.IdealPDActuatorCfg(stiffness=None)})
    # an implicit group's solver limit left None is the env's own (Reacher: gear 200 x ctrlrange 1)
    reacher = ActuatorWrapper(gym.make("Reacher-v5"), actuators={"arm": ag.ImplicitActuatorCfg(stiffness=5.0, damping=1.0)})
    assert reacher.parameters()["arm"]["joint_effort_limit"].tolist() == [200.0, 200.0]
    with pytest.raises(ValueError, match=r"actuator_effort_limit=None .*\['FL_hip_joint'"):
        quadruped({"legs": ag.IdealPDActuatorCfg(stiffness=1.0, actuator_effort_limit=None)}, n=1)


# -- the rated and the solver effort limit are two parameters -------------------------------------
def test_actuator_and_joint_effort_limits_are_separate_parameters():
    m = ag.ImplicitActuatorCfg(stiffness=1000.0, actuator_effort_limit=87.0, joint_effort_limit=870.0,
                               randomization={"actuator_effort_limit": Uniform(0.5, 0.6, operation="scale")}
                               ).build(joint_names=["j"], num_envs=4, seed=1)
    rated = m.parameter("actuator_effort_limit")
    assert torch.all((rated >= 43.5) & (rated <= 52.2)) and torch.all(m.parameter("joint_effort_limit") == 870.0)
    assert set(m.parameters()) == {"stiffness", "damping", "const_effort", "actuator_effort_limit", "joint_effort_limit"}
    pd = ag.IdealPDActuatorCfg(stiffness=100.0, actuator_effort_limit=80.0, joint_effort_limit=50.0).build(joint_names=["j"])
    assert const(pd, "actuator_effort_limit") == 80.0 and const(pd, "joint_effort_limit") == 50.0
    assert pd.compute(joint_pos=[[0.0]], joint_vel=[[0.0]], target_pos=[[1.0]]).item() == 50.0  # the solver clamp last
    assert pd.compute(joint_pos=[[0.0]], joint_vel=[[0.0]], target_pos=[[-0.3]]).item() == pytest.approx(-30.0)


# -- joint properties -------------------------------------------------------------------------------
def test_joint_properties_are_written_into_the_task_model_and_its_worlds():
    task = quadruped({
        "hips": ag.DCMotorCfg(joint_names_expr=[".*_(hip|thigh)_joint"], stiffness=20.0, saturation_effort=30.0, actuator_velocity_limit=20.0,
                              armature={".*_hip_joint": 0.02, ".*_thigh_joint": 0.03}, friction=0.3, viscous_friction=0.7),
        "knees": ag.IdealPDActuatorCfg(joint_names_expr=[".*_calf_joint"], stiffness=20.0, dynamic_friction=0.4)})
    dof = {n: int(task.model.jnt_dofadr[mujoco.mj_name2id(task.model, mujoco.mjtObj.mjOBJ_JOINT, n)]) for n in task.joint_names}
    world = task.backend.world_model(1)
    for m in (task.model, world):
        assert m.dof_armature[dof["FL_hip_joint"]] == 0.02 and m.dof_armature[dof["RR_thigh_joint"]] == 0.03
        assert m.dof_armature[dof["FL_calf_joint"]] == pytest.approx(0.01)  # the MJCF's, untouched
        assert m.dof_frictionloss[dof["FR_thigh_joint"]] == 0.3 and m.dof_damping[dof["FR_thigh_joint"]] == 0.7
        assert m.dof_frictionloss[dof["RL_calf_joint"]] == 0.4  # dynamic friction alone: MuJoCo's one dry level
    run(task)
    with pytest.warns(UserWarning, match="one dry-friction level"):
        quadruped({"legs": ag.IdealPDActuatorCfg(stiffness=1.0, friction=0.5, dynamic_friction=0.2)}, n=1)
    model = mujoco.MjModel.from_xml_string(SERVO_XML)
    with pytest.raises(ValueError, match=r"groups \['g'\] set joint properties.*backend='newton'"):
        write_joint_properties(model, {"g": ag.IdealPDActuatorCfg(armature=0.1)}, "newton", "T")
    assert model.dof_armature.tolist() == [0.0, 0.0]


def test_wrapper_writes_dict_joint_properties_and_class_type_is_checked():
    env = ActuatorWrapper(gym.make("Ant-v5"), actuators={"legs": ag.IdealPDActuatorCfg(
        stiffness=5.0, viscous_friction={"hip_.*": 0.25}, class_type="isaaclab.actuators.actuator_pd:IdealPDActuator")})
    m = env.unwrapped.model
    hip1, ankle1 = (int(m.jnt_dofadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, n)]) for n in ("hip_1", "ankle_1"))
    assert m.dof_damping[hip1] == 0.25 and m.dof_damping[ankle1] == 1.0  # Ant's default damping kept
    assert ag.DCMotorCfg(class_type=type("DCMotor", (), {}), saturation_effort=1.0, actuator_velocity_limit=1.0).class_type.__name__ == "DCMotor"
    with pytest.raises(ValueError, match=r"class_type 'ImplicitActuator'.*allowed: 'IdealPDActuator'"):
        ag.IdealPDActuatorCfg(class_type="ImplicitActuator")
    with pytest.raises(TypeError, match="class_type must be a class"):
        ag.IdealPDActuatorCfg(class_type=3)


def test_yaml_takes_isaaclab_field_names(tmp_path):
    p = tmp_path / "a.yaml"
    p.write_text(textwrap.dedent("""\
        kind: actuators
        groups:
          legs: {model: DCMotor, class_type: DCMotor, saturation_effort: 120.0, effort_limit: 80.0, velocity_limit: 7.5,
                 stiffness: 40.0, damping: 5.0, friction: 0.01, dynamic_friction: 0.005, viscous_friction: 0.1, armature: 0.02}
        """))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        cfg = configs.load(p).actuators["legs"]
    assert (cfg.actuator_effort_limit, cfg.dynamic_friction, cfg.viscous_friction, cfg.class_type) == (80.0, 0.005, 0.1, "DCMotor")
    p.write_text("kind: actuators\ngroups:\n  g: {model: IdealPD, viscous_friction: -1.0}\n")
    with pytest.raises(configs.ConfigError, match="groups.g.viscous_friction"):
        configs.load(p)


# -- run-time parameter changes -------------------------------------------------------------------
def test_set_parameter_is_validated_immediate_and_the_new_nominal():
    m = ag.DelayedPDActuatorCfg(stiffness=10.0, max_delay=2,
                                randomization={"damping": Uniform(0.5, 1.0, operation="scale")}, damping=2.0
                                ).build(joint_names=["a", "b"], num_envs=3, seed=0, dtype=torch.float64)
    m.set_parameter("stiffness", 7.0, env_ids=[1], joint_ids="b")
    expected = torch.full((3, 2), 10.0, dtype=torch.float64)
    expected[1, 1] = 7.0
    assert torch.equal(m.parameter("stiffness"), expected)
    m.reset()
    assert torch.equal(m.parameter("stiffness"), expected)  # holds over resets
    m.set_parameter("damping", 20.0)  # a randomized parameter: the new nominal, re-drawn around it
    assert torch.all(m.parameter("damping") == 20.0)
    m.reset()
    d = m.parameter("damping")
    assert torch.all((d >= 10.0) & (d <= 20.0)) and not torch.all(d == 20.0)
    before = m.parameters()
    with pytest.raises(ValueError, match=r"set_parameter\('stiffness'\).*joint 'a' \(env 0\) has value -1.0; allowed: finite values >= 0"):
        m.set_parameter("stiffness", [-1.0, 3.0])
    with pytest.raises(ValueError, match=r"set_parameter\('delay'\).*outside the range.*allowed: \[0, 2\]"):
        m.set_parameter("delay", 3)
    with pytest.raises(ValueError, match="does not broadcast"):
        m.set_parameter("stiffness", [1.0, 2.0, 3.0])
    after = m.parameters()
    assert all(torch.equal(before[k], after[k]) for k in before)  # nothing changed on error


def test_task_and_wrapper_set_actuator_parameter():
    task = quadruped({"legs": UNITREE_A1_LEGS})
    task.reset(seed=0)
    task.set_actuator_parameter("legs", "stiffness", 40.0, env_ids=[1], joints=".*_calf_joint")
    k = task.actuator_parameters()["legs"]["stiffness"]
    knees = [i for i, n in enumerate(task.joint_names) if n.endswith("_calf_joint")]
    assert (k[1, knees] == 40.0).all() and (np.delete(k[1], knees) == 25.0).all() and (k[0] == 25.0).all()
    _, _, _, _, info = task.step(np.zeros(task.action_space.shape, np.float32))
    shown = info["actuator"]["parameters"]["legs"]
    assert shown["_stiffness"].tolist() == [False, True] and shown["stiffness"][1, knees].tolist() == [40.0] * 4
    task.reset(options={"reset_mask": np.array([False, True])})
    assert (task.actuator_parameters()["legs"]["stiffness"][1, knees] == 40.0).all()
    with pytest.raises(ValueError, match="legs"):
        task.set_actuator_parameter("legs", "saturation_effort", math.nan)
    env = ActuatorWrapper(gym.make("Reacher-v5"), actuators={"arm": ag.ImplicitActuatorCfg(stiffness=5.0, damping=1.0)})
    env.set_actuator_parameter("arm", "stiffness", 9.0, joints="joint1")
    assert env.parameters()["arm"]["stiffness"].tolist() == [5.0, 9.0]
    twin = ActuatorWrapper(gym.make("Reacher-v5"), actuators={"arm": ag.ImplicitActuatorCfg(
        stiffness={"joint0": 5.0, "joint1": 9.0}, damping=1.0)})
    for e in (env, twin):
        e.reset(seed=0)
    a = np.array([0.4, -0.3], np.float32)
    np.testing.assert_array_equal(env.step(a)[4]["actuator"]["applied_effort"], twin.step(a)[4]["actuator"]["applied_effort"])
