"""MuJoCo-Warp backend on Warp's CPU device: equivalence with the batched CPU backend, actuator
efforts, reset isolation, determinism, per-world model fields, and the task layer's backend=."""

import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import warp  # noqa: F401
import mujoco_warp  # noqa: F401

import gymnasium as gym  # noqa: E402
import mujoco  # noqa: E402

import actuator_gym  # noqa: E402,F401
from actuator_gym import ActuatorCollection, DCMotorCfg, IdealPDActuatorCfg  # noqa: E402
from actuator_gym.backends import make_backend  # noqa: E402
from actuator_gym.runtime.device_loop import DeviceLoop, graph_capturable  # noqa: E402
from actuator_gym.backends.mujoco_batch import MujocoBatchBackend  # noqa: E402
from actuator_gym.backends.mujoco_warp import MujocoWarpBackend  # noqa: E402
from actuator_gym.tasks.pendulum import PendulumCfg, pendulum_mjcf  # noqa: E402
from actuator_gym.envs.task import ModelFieldRandomization  # noqa: E402
from actuator_gym.randomization import Uniform  # noqa: E402

# gpu_check.sh runs these tests on CUDA with ACTUATOR_GYM_WARP_DEVICE=cuda:0; CI on Warp's CPU device
DEVICE = os.environ.get("ACTUATOR_GYM_WARP_DEVICE", "cpu")
N = 3
Q0 = np.array([[0.3], [0.1], [-0.2]])
TARGET = torch.tensor([[1.0], [0.5], [0.0]])


@pytest.fixture(scope="module")
def model():
    return mujoco.MjModel.from_xml_string(pendulum_mjcf(PendulumCfg()))


def _pd(joint_names, **kw):
    cfg = IdealPDActuatorCfg(joint_names_expr=["hinge"], stiffness=20.0, damping=2.0, actuator_effort_limit=3.0)
    return ActuatorCollection({"p": cfg}, joint_names=joint_names, num_envs=N, seed=0, **kw)


def _closed_loop(be, steps=100):
    be.reset_envs(None, qpos=Q0)
    coll = _pd(be.joint_names)
    coll.target_command.position[:] = TARGET
    states, efforts = [], []
    for _ in range(steps):
        q, qd = be.joint_pos(), be.joint_vel()
        e = coll.compute(joint_pos=q, joint_vel=qd, dt=be.physics_dt)
        states.append((np.array(q), np.array(qd)))
        efforts.append(e.clone())
        be.set_joint_effort(e)
        be.step(derived=False)
    return be.qpos.copy(), states, torch.stack(efforts)


def test_pendulum_matches_cpu_backend_after_100_substeps(model):
    q_cpu, _, _ = _closed_loop(MujocoBatchBackend(model, N))
    q_wp, _, _ = _closed_loop(MujocoWarpBackend(model, N, device=DEVICE))
    assert np.abs(q_cpu - q_wp).max() < 1e-6
    assert np.abs(q_cpu - Q0).max() > 0.1  # it actually moved


def test_device_loop_efforts_identical_to_cpu_runtime_on_same_states(model):
    be = MujocoWarpBackend(model, N, device=DEVICE)
    be.reset_envs(None, qpos=Q0)
    coll = _pd(be.joint_names, device=be.device)
    coll.target_command.position[:] = TARGET.to(be.device)
    loop = DeviceLoop(be, coll)
    if DEVICE == "cpu":
        assert loop.captured == {"physics": False, "actuators": False}  # never capture on CPU
    ref = _pd(be.joint_names)  # a second runtime, fed the same states from the host
    ref.target_command.position[:] = TARGET
    for _ in range(30):
        q, qd = be.joint_pos().copy(), be.joint_vel().copy()
        loop.run(1)
        expect = ref.compute(joint_pos=q, joint_vel=qd, dt=be.physics_dt)
        assert torch.equal(coll.applied_effort.cpu(), expect)
        assert torch.equal(torch.as_tensor(be.field("qfrc_applied")), expect)  # written into the engine
    assert coll.applied_effort.abs().max() > 0


def test_graph_capturability_rules():
    names = ["a"]
    plain = ActuatorCollection({"g": IdealPDActuatorCfg(joint_names_expr=[".*"], stiffness=1.0, damping=0.1)},
                               joint_names=names, num_envs=2)
    delayed = ActuatorCollection({"g": IdealPDActuatorCfg(joint_names_expr=[".*"], stiffness=1.0, damping=0.1,
                                                          min_delay=0, max_delay=2)}, joint_names=names, num_envs=2)
    assert graph_capturable(plain) == (True, "")
    ok, why = graph_capturable(delayed)
    assert not ok and "Delay" in why


def test_reset_isolation_and_torch_views_share_memory(model):
    be = MujocoWarpBackend(model, N, device=DEVICE)
    be.reset_envs(None, qpos=Q0)
    be.set_joint_effort(np.array([[0.5], [1.0], [-1.0]]))
    be.step(5)
    before_q, before_v = be.qpos.copy(), be.qvel.copy()
    be.reset_envs([1], qpos=np.array([[0.7]]))
    assert np.array_equal(be.qpos[[0, 2]], before_q[[0, 2]]) and np.array_equal(be.qvel[[0, 2]], before_v[[0, 2]])
    assert be.qpos[1, 0] == np.float32(0.7) and be.qvel[1, 0] == 0.0
    assert be.field("qfrc_applied")[1, 0] == 0.0 and be.field("qfrc_applied")[0, 0] == 0.5
    if DEVICE != "cpu":
        return  # the zero-copy numpy view below is a CPU-device property
    t = be.torch_field("qpos")
    be.qpos[2, 0] = 1.25  # a write through the numpy view is visible in the torch view
    assert t[2, 0].item() == 1.25
    with pytest.raises(ValueError, match="env_ids"):
        be.reset_envs([N])
    with pytest.raises(ValueError, match="shape"):
        be.set_joint_effort(np.zeros((N, 2)))


def test_per_world_model_fields_match_cpu_backend(model):
    masses = np.array([0.3, 0.6, 1.2])
    out = []
    for be in (MujocoBatchBackend(model, N), MujocoWarpBackend(model, N, device=DEVICE)):
        be.model_field("body_mass")[:, 1] = masses
        be.set_const()
        be.reset_envs(None, qpos=np.full((N, 1), 0.5))
        be.set_joint_effort(np.ones((N, 1)))
        be.step(40)
        out.append(be.qpos.copy())
    assert np.abs(out[0] - out[1]).max() < 1e-5
    assert len(np.unique(np.round(out[1][:, 0], 5))) == N  # the masses made the worlds differ


def _task(backend, **kw):
    return gym.make_vec("actuator_gym/Pendulum-v0", num_envs=N, backend=backend, device=DEVICE if backend != "mujoco" else "cpu", seed=3, **kw)


def test_task_layer_backend_equivalence_randomization_and_autoreset():
    rand = [ModelFieldRandomization(field="dof_damping", index="hinge", distribution=Uniform(0.0, 0.2, operation="abs"))]
    envs = {b: _task(b, model_randomization=rand, episode_length_s=0.1, autoreset_mode="SameStep")
            for b in ("mujoco", "mujoco_warp")}
    res = {}
    for b, env in envs.items():
        obs, info = env.reset(seed=3)
        rows = [(obs, info)]
        for _ in range(8):  # episodes of 6 control steps: one autoreset inside
            rows.append(env.step(np.full((N, 1), 0.4, np.float32)))
        res[b] = rows
    (o0, i0), (o1, i1) = res["mujoco"][0], res["mujoco_warp"][0]
    # the same draws; MuJoCo-Warp stores model fields in float32
    d0, d1 = i0["randomization"]["dof_damping[hinge]"], i1["randomization"]["dof_damping[hinge]"]
    np.testing.assert_array_equal(d0.astype(np.float32), d1)
    assert len(np.unique(d0)) == N
    np.testing.assert_allclose(o0, o1, atol=1e-5)
    for a, b in zip(res["mujoco"][1:], res["mujoco_warp"][1:]):
        np.testing.assert_allclose(a[0], b[0], atol=2e-5)
        np.testing.assert_allclose(a[1], b[1], atol=1e-4)
        np.testing.assert_array_equal(a[2], b[2])
        np.testing.assert_array_equal(a[3], b[3])
        assert ("final_obs" in a[4]) == ("final_obs" in b[4])
        np.testing.assert_allclose(a[4]["actuator"]["applied_effort"], b[4]["actuator"]["applied_effort"], atol=1e-4)
    assert any(r[3].any() for r in res["mujoco_warp"][1:])  # a truncation happened


def test_task_layer_determinism_and_bad_backend():
    a, b = _task("mujoco_warp"), _task("mujoco_warp")
    for env in (a, b):
        env.reset(seed=11)
    for _ in range(3):
        act = np.full((N, 1), -0.3, np.float32)
        oa, ob = a.step(act)[0], b.step(act)[0]
        np.testing.assert_array_equal(oa, ob)
    with pytest.raises(ValueError, match="backend must be one of"):
        _task("physx")
    with pytest.raises(ValueError, match="CPU only"):
        make_backend("mujoco", mujoco.MjModel.from_xml_string(pendulum_mjcf(PendulumCfg())), 1, device="cuda")


def test_import_actuator_gym_does_not_import_warp():
    code = "import sys, actuator_gym, gymnasium; assert 'warp' not in sys.modules, 'warp imported'; print('ok')"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr
