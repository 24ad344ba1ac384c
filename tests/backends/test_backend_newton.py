"""Newton backend on Warp's CPU device: native newton.actuators export vs our runtime on the same
states, the pendulum's own invariants (Newton integrates differently from MuJoCo), resets, the
task layer's backend="newton", and the MuJoCo <-> Newton state conversion of free and ball joints
(checked against MuJoCo on contact-free motion), floor contacts and joint-limit stability."""

import math
import os

import numpy as np
import pytest
import torch

import warp  # noqa: F401
import newton  # noqa: F401

import gymnasium as gym  # noqa: E402

import actuator_gym  # noqa: E402,F401
from actuator_gym import ActuatorCollection, DCMotorCfg, IdealPDActuatorCfg  # noqa: E402
from actuator_gym.actuators import ClampingMaxEffort, ComposedActuatorCfg, DrivePID  # noqa: E402
from actuator_gym.backends.newton import NewtonBackend, NewtonContactCfg  # noqa: E402
from actuator_gym.tasks.pendulum import GRAVITY, PendulumCfg, pendulum_mjcf  # noqa: E402

# gpu_check.sh runs these tests on CUDA with ACTUATOR_GYM_WARP_DEVICE=cuda:0; CI on Warp's CPU device
DEVICE = os.environ.get("ACTUATOR_GYM_WARP_DEVICE", "cpu")
N = 4
TARGET = torch.tensor([[1.0], [0.5], [0.0], [-2.0]])


@pytest.fixture(scope="module")
def backend():
    return NewtonBackend(pendulum_mjcf(PendulumCfg()), N, device=DEVICE)


def _run_both(be, coll, steps=40):
    be.reset_envs(None, qpos=np.array([[0.3], [0.1], [-0.2], [0.05]]))
    coll.target_command.position[:] = TARGET
    nat = be.native_actuators(coll)
    worst, moved = 0.0, 0.0
    for _ in range(steps):
        q, qd = be.joint_pos().copy(), be.joint_vel().copy()
        ours = coll.compute(joint_pos=q, joint_vel=qd, dt=be.physics_dt).clone()
        theirs = nat.step(target_pos=TARGET).clone()
        worst = max(worst, float((ours - theirs).abs().max() / max(1.0, float(ours.abs().max()))))
        be.set_joint_effort(ours)
        be.step()
        moved = max(moved, float(np.abs(qd).max()))
    return worst, moved


def test_native_dc_motor_pd_matches_ours(backend):
    cfg = DCMotorCfg(joint_names_expr=["hinge"], stiffness=20.0, damping=2.0, saturation_effort=4.0,
                     actuator_velocity_limit=5.0, actuator_effort_limit=3.0)
    coll = ActuatorCollection({"p": cfg}, joint_names=backend.joint_names, num_envs=N, seed=0)
    worst, moved = _run_both(backend, coll)
    assert worst <= 2e-5 and moved > 0.5


def test_native_pid_with_clamp_matches_ours(backend):
    pid = ComposedActuatorCfg(joint_names_expr=["hinge"], drive=DrivePID(kp=15.0, ki=4.0, kd=1.0, integral_max=0.5),
                              clamping=[ClampingMaxEffort(max_effort=2.5)])
    coll = ActuatorCollection({"p": pid}, joint_names=backend.joint_names, num_envs=N)
    worst, _ = _run_both(backend, coll, steps=60)
    assert worst <= 2e-5


def test_native_delay_agrees_after_warmup(backend):
    cfg = IdealPDActuatorCfg(joint_names_expr=["hinge"], stiffness=10.0, damping=1.0, min_delay=2, max_delay=2)
    coll = ActuatorCollection({"p": cfg}, joint_names=backend.joint_names, num_envs=N, seed=0)
    backend.reset_envs(None)
    nat = backend.native_actuators(coll)
    for k in range(12):
        tgt = torch.full((N, 1), 0.1 * k)  # changing targets: the lag matters
        coll.target_command.position[:] = tgt
        q, qd = backend.joint_pos().copy(), backend.joint_vel().copy()
        ours = coll.compute(joint_pos=q, joint_vel=qd, dt=backend.physics_dt).clone()
        theirs = nat.step(target_pos=tgt).clone()
        if k >= 3:  # once the 2-substep history is full the two delay conventions coincide
            torch.testing.assert_close(ours, theirs, atol=2e-5, rtol=2e-5)
        backend.step()


def test_pendulum_invariants_energy_and_small_angle_period():
    cfg = PendulumCfg()
    be = NewtonBackend(pendulum_mjcf(cfg), 2, device=DEVICE, physics_dt=1e-3)
    amp = np.array([[0.05], [0.2]])
    be.reset_envs(None, qpos=amp)
    L, m = cfg.length, cfg.mass

    def energy():
        q, qd = be.joint_pos()[:, 0].astype(np.float64), be.joint_vel()[:, 0].astype(np.float64)
        return 0.5 * m * L**2 * qd**2 + m * GRAVITY * L * (1 - np.cos(q))

    e0 = energy()
    crossings, prev, t = [], be.joint_pos()[0, 0], 0.0
    for _ in range(1500):
        be.step()
        t += be.physics_dt
        cur = be.joint_pos()[0, 0]
        if (prev > 0) != (cur > 0):  # zero crossing of world 0 (twice per period)
            crossings.append(t)
        prev = cur
    period = 2 * (crossings[1] - crossings[0])
    analytic = 2 * math.pi * math.sqrt(L / GRAVITY)
    assert abs(period - analytic) / analytic < 0.01
    assert np.all(np.abs(energy() - e0) / e0 < 0.02)  # semi-implicit Euler: bounded drift


def test_reset_isolation(backend):
    backend.reset_envs(None, qpos=np.full((N, 1), 0.4))
    backend.set_joint_effort(np.ones((N, 1)))
    backend.step(3)
    before = backend.qpos.copy(), backend.qvel.copy()
    backend.reset_envs([2], qpos=np.array([[-0.1]]))
    keep = [0, 1, 3]
    assert np.array_equal(backend.qpos[keep], before[0][keep]) and np.array_equal(backend.qvel[keep], before[1][keep])
    assert backend.qpos[2, 0] == np.float32(-0.1) and backend.qvel[2, 0] == 0.0
    with pytest.raises(ValueError, match="qpos must have shape"):
        backend.reset_envs([0, 1], qpos=np.zeros((1, 1)))
    with pytest.raises(ValueError, match="env_ids"):
        backend.reset_envs([N])


# A free body whose centre of mass is off the body origin and whose inertia is not diagonal in the
# body frame: every term of the free-joint conversion (quaternion order, CoM vs origin velocity,
# world vs body angular velocity) shows up in the motion.
FREE_BODY = """<mujoco><option timestep="0.001"/>
<worldbody><body name="b" pos="0 0 1"><freejoint name="root"/>
<geom type="box" size="0.2 0.1 0.05" pos="0.1 -0.05 0.03" euler="0.3 0.2 0.1" mass="1.5"/>
<geom type="sphere" size="0.05" pos="-0.2 0.1 0" mass="0.4"/>
</body></worldbody></mujoco>"""
# A ball joint (offset anchor, rotated body frame) on a welded base, then a hinge.
BALL_CHAIN = """<mujoco><option timestep="0.001"/>
<worldbody><body name="base" pos="0 0 1"><geom type="box" size="0.05 0.05 0.05" mass="1"/>
<body name="arm" pos="0.1 0 0" quat="0.9 0.2 0.3 0.1"><joint name="ball" type="ball" pos="0 0.02 0"/>
<geom type="box" size="0.2 0.05 0.03" pos="0.2 0 -0.05" mass="0.8"/>
<body name="tip" pos="0.4 0 0"><joint name="h" type="hinge" axis="0 1 0"/>
<geom type="sphere" size="0.03" pos="0.05 0 0" mass="0.2"/></body></body></body></worldbody></mujoco>"""


def _unit_quat(*q):
    q = np.array(q, dtype=np.float64)
    return q / np.linalg.norm(q)


def _both(xml, qpos, qvel):
    import mujoco

    from actuator_gym.backends.mujoco_batch import MujocoBatchBackend

    nb = NewtonBackend(xml, len(qpos), device=DEVICE)
    mb = MujocoBatchBackend(mujoco.MjModel.from_xml_string(xml), len(qpos))
    for b in (nb, mb):
        b.reset_envs(None, qpos=qpos, qvel=qvel)
    return nb, mb


def test_free_body_matches_mujoco():
    """MuJoCo-convention qpos/qvel in, MuJoCo-convention state out: right after the reset the
    conversion round trip and the body poses agree to float32 precision; after 0.2 s of free flight
    (gravity, tumbling, 200 substeps of 1 ms, no contacts) qpos agrees within 1e-3 and qvel within
    5e-3 (measured 2.4e-4 / 1.7e-3: semi-implicit Euler on different coordinates, O(dt): the gap
    halves with dt). A wrong quaternion order or velocity frame gives O(1) errors."""
    qpos = np.array([[0.1, -0.2, 1.0, *_unit_quat(0.9, 0.1, -0.3, 0.2)], [0, 0, 2.0, 1, 0, 0, 0]])
    qvel = np.array([[0.5, 0.2, 1.0, 3.0, -2.0, 5.0], [0, 0, 0, 0, 0, 8.0]])
    nb, mb = _both(FREE_BODY, qpos, qvel)
    np.testing.assert_allclose(nb.qpos, mb.qpos, atol=1e-6)
    np.testing.assert_allclose(nb.qvel, mb.qvel, atol=1e-6)
    for name in ("xpos", "xquat", "xmat", "xipos"):
        np.testing.assert_allclose(nb.field(name), mb.field(name), atol=1e-6, err_msg=name)
    xmat = nb.field("xmat")  # a live array: refreshed in place by step()
    for _ in range(200):
        nb.step()
        mb.step()
    assert np.abs(nb.qpos - mb.qpos).max() < 1e-3
    assert np.abs(nb.qvel - mb.qvel).max() < 5e-3
    assert np.abs(nb.qvel[:, 3:] - mb.qvel[:, 3:]).max() < 1e-4  # body-frame angular velocity
    np.testing.assert_allclose(xmat, mb.field("xmat"), atol=1e-4)
    assert abs(nb.qpos[1, 2] - 2.0) > 0.15  # it moved (fell and spun)
    np.testing.assert_allclose(np.linalg.norm(nb.qpos[:, 3:7], axis=1), 1.0, atol=1e-6)
    with pytest.raises(ValueError):  # a read-only mirror: write through reset_envs
        nb.qpos[0, 0] = 1.0


def test_ball_joint_matches_mujoco():
    qpos = np.array([[*_unit_quat(0.8, 0.3, -0.2, 0.4), 0.3]])
    qvel = np.array([[1.0, -2.0, 3.0, 0.5]])
    nb, mb = _both(BALL_CHAIN, qpos, qvel)
    np.testing.assert_allclose(nb.qvel, mb.qvel, atol=1e-5)
    np.testing.assert_allclose(nb.field("xpos"), mb.field("xpos"), atol=1e-6)
    for _ in range(200):
        nb.step()
        mb.step()
    np.testing.assert_allclose(nb.qpos, mb.qpos, atol=1e-4)  # measured 1.2e-5
    np.testing.assert_allclose(nb.qvel, mb.qvel, atol=5e-4)  # measured 6.3e-5, |qvel| up to 17.5
    np.testing.assert_array_equal(nb.joint_vel(), nb.qvel[:, [3]].astype(np.float32))


def test_body_wrench_matches_mujoco():
    """xfrc_applied (world-frame force and torque at the centre of mass) held over substeps, zeroed
    by a reset of that world only."""
    qpos = np.tile([0.0, 0.0, 1.0, *_unit_quat(0.9, 0.2, 0.1, -0.3)], (2, 1))
    nb, mb = _both(FREE_BODY, qpos, np.zeros((2, 6)))
    for b in (nb, mb):
        b.xfrc_applied[:, 1] = [[3.0, -1.0, 40.0, 0.2, 0.4, -0.3], [0, 0, 0, 0, 0, 0]]
    for _ in range(150):
        nb.step()
        mb.step()
    assert nb.qpos[0, 2] > 1.08 and nb.qpos[1, 2] < 0.95  # pushed up vs falling
    np.testing.assert_allclose(nb.qpos, mb.qpos, atol=1e-3)
    np.testing.assert_allclose(nb.qvel, mb.qvel, atol=5e-3)
    nb.reset_envs([0])
    assert not nb.xfrc_applied[0].any() and nb.xfrc_applied[1].sum() == 0.0
    d = nb.data(1)  # MuJoCo copy in MuJoCo's convention
    np.testing.assert_allclose(d.qpos, nb.qpos[1]) and np.testing.assert_allclose(d.xmat[1], nb.field("xmat")[1, 1], atol=1e-6)


def test_unsupported_fields_say_so():
    nb = NewtonBackend(FREE_BODY, 1, device=DEVICE)
    with pytest.raises(ValueError, match="cvel"):
        nb.field("cvel")
    with pytest.raises(ValueError, match=r"'dof_frictionloss'.*supported: \['body_mass'"):
        nb.model_field("dof_frictionloss")  # Newton's solvers ignore joint_friction
    site = nb.model_field("site_pos")
    assert site.shape == (1, 0, 3)
    nb.model_field("dof_damping")[0, 2] = 0.5  # a free-joint DOF: Featherstone applies no damping there
    with pytest.raises(ValueError, match=r"'dof_damping' entry \(2,\) of world 0 .*free-joint"):
        nb.set_const()
    nb.model_field("dof_damping")[0, 2] = 0.0
    nb.model_field("body_mass")[0, 0] = 1.0  # MuJoCo's world body
    with pytest.raises(ValueError, match="world body"):
        nb.reset_envs([0])
    xpbd = NewtonBackend(FREE_BODY, 1, device=DEVICE, solver="xpbd")
    with pytest.raises(ValueError, match=r"'dof_armature'.*xpbd"):
        xpbd.model_field("dof_armature")


def test_quadrotor_on_newton_matches_mujoco():
    """The quadrotor task (field('xmat') + xfrc_applied, site_pos for the goal marker) on Newton
    follows MuJoCo while airborne: 10 control steps of asymmetric thrust, observations within 1e-3
    (measured 8e-5 after 1.9 units of motion)."""
    obs = {}
    for b in ("mujoco", "newton"):
        env = gym.make_vec("actuator_gym/Quadrotor-v0", num_envs=2, backend=b, device="cpu" if b == "mujoco" else DEVICE, seed=3)
        traj = [env.reset(seed=3)[0]]
        for _ in range(10):
            a = env.unwrapped.hover_action.copy()
            a[:, 0] += 0.3
            a[:, 2] -= 0.1
            traj.append(env.step(a)[0])
        obs[b] = np.array(traj)
        env.close()
    assert np.abs(obs["mujoco"][-1] - obs["mujoco"][0]).max() > 0.5
    np.testing.assert_allclose(obs["newton"], obs["mujoco"], atol=1e-3)


@pytest.mark.parametrize("task_id", ["actuator_gym/Quadruped-v0", "actuator_gym/Ant-v0"])
def test_floating_base_tasks_run_on_newton(task_id):
    """Reset states are converted exactly (the first observation equals MuJoCo's for the same seed;
    Ant's reset noise un-normalizes the quaternion, which Newton stores normalized); a few control
    steps give finite observations. The contact models differ, so the trajectories then differ."""
    first = {}
    for b in ("mujoco", "newton"):
        env = gym.make_vec(task_id, num_envs=3, backend=b, device="cpu" if b == "mujoco" else DEVICE, seed=2)
        first[b] = env.reset(seed=2)[0]
        if b == "newton":
            be = env.unwrapped.backend
            np.testing.assert_allclose(np.linalg.norm(be.qpos[:, 3:7], axis=1), 1.0, atol=1e-6)
            for _ in range(3):
                o, r, term, trunc, info = env.step(np.zeros(env.action_space.shape, np.float32))
                assert o.shape == first[b].shape and np.isfinite(o).all() and np.isfinite(r).all()
            np.testing.assert_array_equal(info["actuator"]["joint_pos"], be.joint_pos())
        env.close()
    quat = slice(1, 5) if "Ant" in task_id else slice(3, 7)  # obs columns holding the quaternion (Ant)
    keep = np.ones(first["mujoco"].shape[1], bool)
    if "Ant" in task_id:
        keep[quat] = False
    np.testing.assert_allclose(first["newton"][:, keep], first["mujoco"][:, keep], atol=2e-5)


def test_task_layer_newton_close_to_mujoco_and_deterministic():
    obs = {}
    for b in ("mujoco", "newton", "newton"):
        env = gym.make_vec("actuator_gym/Pendulum-v0", num_envs=2, backend=b, device=DEVICE if b != "mujoco" else "cpu", seed=5)
        o, _ = env.reset(seed=5)
        for _ in range(10):
            o = env.step(np.full((2, 1), 0.6, np.float32))[0]
        obs.setdefault(b, []).append(o)
    np.testing.assert_array_equal(obs["newton"][0], obs["newton"][1])
    np.testing.assert_allclose(obs["newton"][0], obs["mujoco"][0], atol=1e-4)  # same integrator family


def test_xpbd_generalized_state_follows_the_bodies():
    """XPBD integrates bodies, not joint coordinates: the backend recovers joint_q/joint_qd after
    every substep (they stayed at the reset values before), so the free body matches MuJoCo too."""
    import mujoco

    from actuator_gym.backends.mujoco_batch import MujocoBatchBackend

    qpos = np.array([[0.1, -0.2, 1.0, *_unit_quat(0.9, 0.1, -0.3, 0.2)]])
    qvel = np.array([[0.5, 0.2, 1.0, 3.0, -2.0, 5.0]])
    nb = NewtonBackend(FREE_BODY, 1, device=DEVICE, solver="xpbd")
    mb = MujocoBatchBackend(mujoco.MjModel.from_xml_string(FREE_BODY), 1)
    for b in (nb, mb):
        b.reset_envs(None, qpos=qpos, qvel=qvel)
    for _ in range(200):
        nb.step()
        mb.step()
    assert np.abs(nb.qpos - qpos).max() > 0.1
    np.testing.assert_allclose(nb.qpos, mb.qpos, atol=1e-3)  # measured 2.4e-4
    np.testing.assert_allclose(nb.qvel, mb.qvel, atol=5e-3)  # measured 1.7e-3


def _quadruped_heights(backend, steps, num_envs=1, **kw):
    env = gym.make_vec("actuator_gym/Quadruped-v0", num_envs=num_envs, backend=backend,
                       device="cpu" if backend == "mujoco" else DEVICE, seed=0, **kw)
    env.reset(seed=0)
    h = []
    for _ in range(steps):  # zero action: the PD targets are the default standing pose
        o, _, term, _, _ = env.step(np.zeros(env.action_space.shape, np.float32))
        assert np.isfinite(o).all() and not term.any()
        h.append(env.unwrapped.backend.qpos[:, 2].copy())
    env.close()
    return np.array(h)


def test_quadruped_stands_on_newton_contacts():
    """Floor contacts: the quadruped stands under its default PD pose for 2 s (100 control steps of
    4 x 5 ms) at MuJoCo's height (measured 1.0 cm lower at 2 s: penalty contacts penetrate a few mm
    and the feet creep slightly); without contacts it would drop below 0.2 m within 0.3 s."""
    h_nw = _quadruped_heights("newton", 100)
    h_mj = _quadruped_heights("mujoco", 100)
    assert h_nw[-1, 0] > 0.24 and h_nw.min() > 0.24
    assert abs(h_nw[-1, 0] - h_mj[-1, 0]) < 0.02
    assert abs(h_nw[-20:].mean() - h_mj[-20:].mean()) < 0.02  # the last 0.4 s, not one sample


# the quadruped's actions are drawn in +-0.25 (targets +-0.25 rad around the stance; its action unit is 1 rad)
@pytest.mark.parametrize("task_id,max_terms,amplitude", [("actuator_gym/Quadruped-v0", 0, 0.25), ("actuator_gym/Ant-v0", 12, 1.0)])
def test_floating_base_tasks_survive_random_actions_on_newton(task_id, max_terms, amplitude):
    """4 worlds, 100 control steps of seeded uniform random actions: finite observations and few
    terminations (measured 0 quadruped / 6 ant; MuJoCo 0 / 1; Newton without contacts 36 / 47)."""
    env = gym.make_vec(task_id, num_envs=4, backend="newton", device=DEVICE, seed=0)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    terms = 0
    for _ in range(100):
        a = (amplitude * rng.uniform(-1, 1, env.action_space.shape)).astype(np.float32)
        o, r, term, _, _ = env.step(a)
        assert np.isfinite(o).all() and np.isfinite(r).all()
        terms += int(term.sum())
    env.close()
    assert terms <= max_terms


def test_joint_limit_violation_is_stable():
    """The NaN root cause: Newton's importer gives limited joints limit_ke = 1e4, limit_kd = 10, which
    explicit integration at 5 ms cannot hold on a 0.015 kg·m² knee. The bare quadruped at qpos0 has
    its knees at 0, 0.9 rad past their upper limit (-0.9): with the backend's gains the limit pushes
    them back, finite, with and without contacts (Newton's defaults diverge in the first substep)."""
    from actuator_gym.tasks.quadruped import quadruped_mjcf

    for contacts in (True, False):
        be = NewtonBackend(quadruped_mjcf(), 1, device=DEVICE, contacts=contacts)
        knees = [i for i, n in enumerate(be.joint_names) if n.endswith("_calf_joint")]
        assert len(knees) == 4
        for _ in range(60):
            be.step()
            assert np.isfinite(be.qpos).all() and np.abs(be.qvel).max() < 50.0
        assert np.all(be.joint_pos()[0, knees] < -0.5)  # back towards the range [-2.7, -0.9]
        if contacts:
            assert be.qpos[0, 2] > 0.05  # held by the floor (no contacts: falls through)
        else:
            assert be.qpos[0, 2] < 0.0  # 0.3 s of free fall from 0.33 m


def test_contact_cfg_gains_and_validation():
    """Per-shape gains from the body mass and the contact step; the floor carries none."""
    from actuator_gym.tasks.quadruped import quadruped_mjcf

    cfg = NewtonContactCfg(ke_scale=0.5, kd_scale=0.25, kf_scale=2.0, mu=0.7, substeps=2)
    be = NewtonBackend(quadruped_mjcf(), 2, device=DEVICE, contacts=cfg)
    nm = be.nmodel
    body, mass = nm.shape_body.numpy(), nm.body_mass.numpy()
    h = be.physics_dt / 2
    dyn = body >= 0
    np.testing.assert_allclose(nm.shape_material_ke.numpy()[dyn], 2 * 0.5 * mass[body[dyn]] / h**2, rtol=1e-6)
    np.testing.assert_allclose(nm.shape_material_kd.numpy()[dyn], 2 * 0.25 * mass[body[dyn]] / h, rtol=1e-6)
    np.testing.assert_allclose(nm.shape_material_kf.numpy()[dyn], 2 * 2.0 * mass[body[dyn]] / h, rtol=1e-6)
    assert (~dyn).sum() == 2 and not nm.shape_material_ke.numpy()[~dyn].any()  # one floor per world
    np.testing.assert_allclose(nm.shape_material_mu.numpy(), 0.7)
    for bad in (dict(ke_scale=-1.0), dict(kd_scale=float("nan")), dict(substeps=0), dict(mu=-0.1)):
        with pytest.raises(ValueError, match=next(iter(bad))):
            NewtonBackend(FREE_BODY, 1, device=DEVICE, contacts=NewtonContactCfg(**bad))
    with pytest.raises(ValueError, match="contacts"):
        NewtonBackend(FREE_BODY, 1, device=DEVICE, contacts="yes")


# --- per-world model fields (model_randomization) -----------------------------------------------------

def _pendulum_env(backend, n, rand, seed):
    return gym.make_vec("actuator_gym/Pendulum-v0", num_envs=n, backend=backend, seed=seed, model_randomization=rand,
                        device=DEVICE if backend == "newton" else "cpu", action_scale=1.0, action_offset=0.0)  # targets [rad]


def test_body_mass_randomization_follows_mujoco():
    """model_randomization of the bob's mass on backend="newton": the same draws as on MuJoCo for the
    same seed (bitwise, float64), written to Newton's body_mass / body_inv_mass of each world; a
    constant position target 0.8 rad settles where kp (0.8 - q) = m g L sin q (heavier bobs sag
    more; within 5e-4 rad, measured 3e-5 after 2.5 s), and the observations follow MuJoCo's within
    1e-4 (measured 9e-6, float32 physics); a partial reset
    re-draws only the reset envs, the others keep their masses and state bitwise."""
    from actuator_gym.envs import ModelFieldRandomization
    from actuator_gym.randomization import Uniform

    n, key = 4, "body_mass[pendulum]"
    rand = [ModelFieldRandomization(field="body_mass", index="pendulum", distribution=Uniform(0.5, 2.0, operation="scale"))]
    envs = {b: _pendulum_env(b, n, rand, 7) for b in ("mujoco", "newton")}
    draws, traj = {}, {}
    for b, env in envs.items():
        obs, info = env.reset(seed=7)
        draws[b] = info["randomization"][key]
        rows = [obs]
        for _ in range(150):  # 2.5 s: the slowest (heaviest) env settles to < 1e-3 rad
            rows.append(env.step(np.full((n, 1), 0.8, np.float32))[0])
        traj[b] = np.array(rows)
    np.testing.assert_array_equal(draws["newton"], draws["mujoco"])
    m = draws["newton"][:, 0]
    assert draws["newton"].shape == (n, 1) and len(np.unique(m)) == n and np.all((m >= 0.3) & (m <= 1.2))
    be = envs["newton"].unwrapped.backend
    np.testing.assert_array_equal(be.nmodel.body_mass.numpy(), m.astype(np.float32))  # one body per world
    np.testing.assert_allclose(be.nmodel.body_inv_mass.numpy(), 1.0 / m, rtol=1e-6)
    np.testing.assert_allclose(traj["newton"], traj["mujoco"], atol=1e-4)
    q = np.arctan2(traj["newton"][-1, :, 0], traj["newton"][-1, :, 1])
    q_eq = np.full(n, 0.8)
    for _ in range(50):  # Newton iterations on kp (0.8 - q) - m g L sin q = 0
        f = 20.0 * (0.8 - q_eq) - m * GRAVITY * 0.5 * np.sin(q_eq)
        q_eq -= f / (-20.0 - m * GRAVITY * 0.5 * np.cos(q_eq))
    np.testing.assert_allclose(q, q_eq, atol=5e-4)
    assert np.array_equal(np.argsort(0.8 - q), np.argsort(m))

    mask = np.array([True, False, True, False])
    field = be.model_field("body_mass")
    before = field.copy(), be.nmodel.body_mass.numpy().copy(), be.qpos.copy(), be.qvel.copy()
    new = {}
    for b, env in envs.items():
        new[b] = env.reset(options={"reset_mask": mask})[1]["randomization"][key]
    np.testing.assert_array_equal(new["newton"], new["mujoco"])
    keep = ~mask
    assert np.array_equal(field[keep], before[0][keep]) and np.array_equal(be.qpos[keep], before[2][keep])
    assert np.array_equal(be.nmodel.body_mass.numpy()[keep], before[1][keep]) and np.array_equal(be.qvel[keep], before[3][keep])
    assert np.all(field[mask, 1] != before[0][mask, 1])
    np.testing.assert_array_equal(be.nmodel.body_mass.numpy()[mask], field[mask, 1].astype(np.float32))
    for env in envs.values():
        env.close()


def test_dof_fields_and_friction_match_mujoco_per_world():
    """dof_damping / dof_armature -> joint_damping / joint_armature of the written worlds only; the
    motion follows MuJoCo's with the same values (MuJoCo integrates damping implicitly, Featherstone
    explicitly: MuJoCo runs here with mjDSBL_EULERDAMP, its explicit damping, and agrees within
    1e-5, measured 7e-7); geom_friction column 0 ->
    shape_material_mu of the geom's shape in that world; the other columns have no equivalent."""
    import mujoco

    from actuator_gym.backends.mujoco_batch import MujocoBatchBackend

    xml = pendulum_mjcf(PendulumCfg())
    damping, armature = np.array([0.0, 0.2, 0.5]), np.array([0.0, 0.05, 0.01])
    out = []
    mj = mujoco.MjModel.from_xml_string(xml)
    mj.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_EULERDAMP)
    for be in (MujocoBatchBackend(mj, 3), NewtonBackend(xml, 3, device=DEVICE)):
        be.model_field("dof_damping")[:, 0] = damping
        be.model_field("dof_armature")[:, 0] = armature
        be.set_const()
        be.reset_envs(None, qpos=np.full((3, 1), 0.5))
        be.step(60)
        out.append(np.concatenate([be.qpos, be.qvel], axis=1).astype(np.float64))
    nb = be
    np.testing.assert_allclose(out[1], out[0], atol=1e-5)
    assert len(np.unique(np.round(out[1][:, 0], 4))) == 3  # the fields made the worlds differ
    np.testing.assert_array_equal(nb.nmodel.joint_damping.numpy(), damping.astype(np.float32))
    np.testing.assert_array_equal(nb.nmodel.joint_armature.numpy(), armature.astype(np.float32))

    fr = nb.model_field("geom_friction")
    bob = mujoco.mj_name2id(nb.model, mujoco.mjtObj.mjOBJ_GEOM, "bob")
    mu0 = nb.nmodel.shape_material_mu.numpy().copy()
    fr[1, bob, 0] = 0.25
    fr[2, bob, 0] = 0.75  # not pushed: world 2 keeps Newton's value
    nb.set_const([1])
    mu = nb.nmodel.shape_material_mu.numpy()
    labels = [lab.rsplit("/", 1)[-1] for lab in nb.nmodel.shape_label]
    hit = [i for i, lab in enumerate(labels) if lab == "bob" and nb.nmodel.shape_world.numpy()[i] == 1]
    assert len(hit) == 1 and mu[hit[0]] == np.float32(0.25)
    assert np.array_equal(np.delete(mu, hit), np.delete(mu0, hit))
    fr[1, bob, 1] = 0.1  # torsional friction
    with pytest.raises(ValueError, match=r"'geom_friction' entry \(2, 1\) of world 1.*column 0"):
        nb.set_const([1])


def test_mass_randomization_rescales_limit_and_contact_gains():
    """Gains derived from masses follow each world's randomized values: the joint-limit springs
    (ke = M0 / tc^2 with that world's MuJoCo dof_M0) and the contact gains of the body's shapes
    (ke = 2 m / h^2); other worlds keep theirs."""
    import copy

    import mujoco

    from actuator_gym.tasks.quadruped import quadruped_mjcf

    be = NewtonBackend(quadruped_mjcf(), 2, device=DEVICE)
    nm, nv, nb, limits = be.nmodel, be.model.nv, be.model.nbody - 1, be._physical.limits
    ke0, ske0 = nm.joint_limit_ke.numpy().copy(), nm.shape_material_ke.numpy().copy()
    be.model_field("body_mass")[1, 1:] *= 1.5
    be.model_field("dof_armature")[1] += 0.01
    be.set_const([1])
    m = copy.copy(be.model)
    m.body_mass[:] = be.model_field("body_mass")[1]
    m.dof_armature[:] = be.model_field("dof_armature")[1]
    mujoco.mj_setConst(m, mujoco.MjData(m))
    for d, tc in limits:
        assert nm.joint_limit_ke.numpy()[nv + d] == pytest.approx(m.dof_M0[d] / tc**2, rel=1e-5)
        assert nm.joint_limit_ke.numpy()[d] == ke0[d]
    assert limits and not np.array_equal(nm.joint_limit_ke.numpy()[nv:], ke0[nv:])
    body, world = nm.shape_body.numpy(), nm.shape_world.numpy()
    dyn1 = (body >= 0) & (world == 1)
    np.testing.assert_allclose(nm.shape_material_ke.numpy()[dyn1], 1.5 * ske0[dyn1], rtol=1e-6)
    np.testing.assert_array_equal(nm.shape_material_ke.numpy()[world == 0], ske0[world == 0])
    np.testing.assert_array_equal(nm.body_mass.numpy()[:nb], be.model.body_mass[1:].astype(np.float32))
    for _ in range(20):  # still stable
        be.step()
    assert np.isfinite(be.qpos).all()
