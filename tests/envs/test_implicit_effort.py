"""Implicit (Stable-PD) effort mode end to end: backend mass-matrix terms, the batched task, the
wrapper on Gymnasium MuJoCo envs, and the ``sweep implicit`` command."""

from __future__ import annotations

import importlib
import csv
import warnings

import gymnasium as gym
import mujoco
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from actuator_gym import DCMotorCfg, IdealPDActuatorCfg
from actuator_gym.backends.base import PhysicsBackend
from actuator_gym.backends.mujoco import MujocoBackend
from actuator_gym.backends.mujoco_batch import MujocoBatchBackend
from actuator_gym.tasks.pendulum import PendulumTask
from actuator_gym.tools.cli import main
from actuator_gym.wrappers import ActuatorWrapper

# a floating base with a hinge chain and a slide: the block of M^-1 keeps the coupling through the
# base; armature and gravity make A and the bias non-trivial
FLOATING = """
<mujoco>
  <option timestep="0.002" gravity="0 0 -9.81"/>
  <worldbody>
    <body name="base" pos="0 0 1">
      <freejoint/>
      <geom type="box" size="0.2 0.1 0.05" mass="3"/>
      <body name="l1" pos="0.2 0 0">
        <joint name="h1" type="hinge" axis="0 1 0" armature="0.02"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" mass="0.7"/>
        <body name="l2" pos="0.3 0 0">
          <joint name="h2" type="hinge" axis="0 0 1" armature="0.01"/>
          <geom type="capsule" fromto="0 0 0 0.25 0 0" size="0.03" mass="0.4"/>
          <body name="s" pos="0.25 0 0">
            <joint name="s1" type="slide" axis="1 0 0" armature="0.05"/>
            <geom type="sphere" size="0.04" mass="0.3"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def _reference(model, qpos, qvel, dofs):
    d = mujoco.MjData(model)
    d.qpos[:], d.qvel[:] = qpos, qvel
    mujoco.mj_forward(model, d)
    M = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, d, M)
    return np.linalg.inv(M)[np.ix_(dofs, dofs)], d.qfrc_bias[dofs].copy()


def test_batch_backend_terms_are_those_of_the_current_state():
    model = mujoco.MjModel.from_xml_string(FLOATING)
    be = MujocoBatchBackend(model, num_envs=3)
    rng = np.random.default_rng(0)
    qpos = np.tile(model.qpos0, (3, 1))
    qpos[:, 7:] += rng.normal(size=(3, 3)) * 0.5
    be.reset_envs(qpos=qpos, qvel=rng.normal(size=(3, model.nv)))
    ids = [2, 0]  # s1, h1 (indices into be.joints), in that order
    dofs = be.joints.dof_adr[ids]
    for derived in (False, True, False):  # stale derived fields (after derived=False) are recomputed
        be.set_joint_effort(rng.normal(size=(3, 3)))
        be.step(derived=derived)
        A, b = be.mass_matrix_terms(ids)
        assert A.shape == (3, 2, 2) and b.shape == (3, 2)
        for w in range(3):
            A_ref, b_ref = _reference(model, be.qpos[w], be.qvel[w], dofs)
            np.testing.assert_allclose(A[w], A_ref, rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(b[w], b_ref, rtol=1e-9, atol=1e-12)
    # the block of the inverse, not the inverse of the block: the free base makes them differ
    d = be.data(0)
    M = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, d, M)
    assert not np.allclose(A[0], np.linalg.inv(M[np.ix_(dofs, dofs)]), rtol=1e-3)
    # per-world model fields: a heavier link in world 1 after set_const changes only world 1's terms
    before = be.mass_matrix_terms(ids)[0]
    be.model_field("body_mass")[1, model.body("s").id] = 3.0
    be.set_const([1])
    after = be.mass_matrix_terms(ids)[0]
    np.testing.assert_array_equal(after[[0, 2]], before[[0, 2]])
    assert after[1, 0, 0] < 0.5 * before[1, 0, 0]  # the slide's inverse mass dropped
    with pytest.raises(ValueError, match=r"joint_ids must lie in \[0, 2\]"):
        be.mass_matrix_terms([3])


def test_single_data_backend_terms_follow_mj_step():
    model = mujoco.MjModel.from_xml_string(FLOATING)
    data = mujoco.MjData(model)
    data.qvel[:] = np.linspace(-1, 1, model.nv)
    be = MujocoBackend(model, data, ["h1", "h2"])
    for _ in range(3):
        mujoco.mj_step(model, data)  # data.M / qfrc_bias now describe the state before this step
        A, b = be.mass_matrix_terms([0, 1])
        A_ref, b_ref = _reference(model, data.qpos, data.qvel, be.joints.dof_adr)
        np.testing.assert_allclose(A[0], A_ref, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(b[0], b_ref, rtol=1e-9, atol=1e-12)


def _pendulum(mode, n=2):
    # kd / I h = 200 / 0.15 / 360 = 3.7 > 2: explicit PD (semi-implicit Euler) is unstable at 1/360 s
    cfg = IdealPDActuatorCfg(joint_names_expr=["hinge"], stiffness=2e4, damping=200.0, effort_mode=mode)
    return PendulumTask(num_envs=n, actuators={"p": cfg}, action_scale=1.0, action_offset=0.0, seed=0)  # absolute targets


def _run(task, control_steps=30):
    peak = [0.0]
    task.add_substep_callback(lambda t, k: peak.__setitem__(0, max(peak[0], float(np.abs(t.backend.joint_vel()).max()))))
    task.reset(seed=0)
    target = np.full((task.num_envs, 1), 1.0, np.float32)
    for _ in range(control_steps):
        obs, rew, term, trunc, info = task.step(target)
    return peak[0], task.backend.joint_pos().copy(), info


def test_stiff_pendulum_task_explicit_diverges_implicit_is_stable():
    peak_e, _, _ = _run(_pendulum("explicit"))
    assert peak_e > 1e4  # explicit PD blew up (MuJoCo warns and resets the world)
    task = _pendulum("implicit")
    assert task.collection.needs_mass_matrix
    peak_i, q, info = _run(task)
    assert peak_i < 200.0  # the step response's peak speed, no blow-up
    np.testing.assert_allclose(q, 1.0, atol=1e-3)  # settled on the target in 0.5 s
    applied = info["actuator"]["applied_effort"]
    assert np.isfinite(applied).all() and np.abs(applied).max() < 50.0  # holding torque ~ m g L sin(1) = 2.5 N·m


def test_task_rejects_implicit_effort_on_a_backend_without_mass_terms(monkeypatch):
    monkeypatch.setattr(MujocoBatchBackend, "mass_matrix_terms", PhysicsBackend.mass_matrix_terms)
    with pytest.raises(ValueError, match=r"groups \['p'\] use effort_mode='implicit'.*backend 'mujoco' does not provide"):
        _pendulum("implicit")
    _pendulum("explicit")  # explicit groups never ask for the terms


@pytest.mark.parametrize("backend, module", [("mujoco_warp", "mujoco_warp"), ("newton", "newton")])
def test_gpu_backends_reject_implicit_effort_at_construction(backend, module):
    import warp  # noqa: F401
    importlib.import_module(module)
    cfg = IdealPDActuatorCfg(joint_names_expr=["hinge"], stiffness=20.0, effort_mode="implicit")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=rf"use effort_mode='implicit'.*backend '{backend}' does not provide it"):
            PendulumTask(num_envs=2, backend=backend, actuators={"p": cfg})


STIFF = dict(stiffness=3000.0, damping=300.0)  # h kd / M = 0.01 * 300 / 1 = 3 on Reacher: explicit diverges


def _reacher(mode, model="pd"):
    if model == "pd":
        cfg = IdealPDActuatorCfg(effort_mode=mode, **STIFF)
    else:
        cfg = DCMotorCfg(effort_mode=mode, saturation_effort=200.0, actuator_velocity_limit=30.0,
                         actuator_effort_limit=150.0, **STIFF)
    return ActuatorWrapper(gym.make("Reacher-v5"), actuators={"arm": cfg}, action_scale=0.5)  # qpos0 + 0.5 rad * a


def _hold(env, steps=40):
    env.reset(seed=0)
    a = np.full(env.action_space.shape, 0.5, np.float32)  # target 0.25 rad on both joints
    peak = 0.0
    for _ in range(steps):
        _, _, _, _, info = env.step(a)
        peak = max(peak, float(np.abs(env.unwrapped.data.qvel).max()))
    return peak, info["actuator"]


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_wrapper_implicit_effort_on_reacher_is_stable_where_explicit_diverges():
    peak, _ = _hold(_reacher("explicit"))
    assert peak > 1e3
    for model in ("pd", "dc"):
        env = _reacher("implicit", model)
        peak, tel = _hold(env)
        assert peak < 10.0, model
        np.testing.assert_allclose(tel["joint_pos"], 0.25, atol=1e-3)
        if model == "dc":  # the DC-motor envelope still bounds the applied effort
            assert np.abs(tel["applied_effort"]).max() <= 150.0


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("env_id, cfg", [
    ("InvertedPendulum-v5", IdealPDActuatorCfg(stiffness=200.0, damping=20.0, effort_mode="implicit")),
    ("Reacher-v5", DCMotorCfg(saturation_effort=200.0, actuator_velocity_limit=30.0, actuator_effort_limit=150.0,
                              effort_mode="implicit", **STIFF)),
])
def test_check_env_passes_with_implicit_effort_groups(env_id, cfg):
    env = ActuatorWrapper(gym.make(env_id), actuators={"arm": cfg})
    assert env.collection.needs_mass_matrix
    check_env(env, skip_render_check=True)
    env.close()


def test_sweep_implicit_cli_flags_the_diverged_run(tmp_path):
    assert main(["sweep", "implicit", "--out", str(tmp_path), "--seconds", "1.0"]) == 0
    with open(tmp_path / "sweep" / "sweep_implicit.csv") as f:
        rows = {r["case"]: r for r in csv.DictReader(f)}
    assert (tmp_path / "sweep" / "sweep_implicit.png").stat().st_size > 1000
    assert len(rows) == 6
    for kp in ("200", "2000", "20000"):
        assert rows[f"implicit, stiffness = {kp} N·m/rad"]["diverged"] == "False"
        assert abs(float(rows[f"implicit, stiffness = {kp} N·m/rad"]["final_angle_deg"]) - 90.0) < 2.0
    assert rows["explicit, stiffness = 20000 N·m/rad"]["diverged"] == "True"
    assert rows["explicit, stiffness = 20000 N·m/rad"]["overshoot_pct"] == "nan"
    assert rows["explicit, stiffness = 200 N·m/rad"]["diverged"] == "False"
