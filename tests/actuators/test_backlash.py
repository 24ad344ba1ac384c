"""Backlash (docs/actuators.md, "Backlash, encoders and the bus"): a play of width b between a
massless motor side and the joint, the encoder on the motor side. Inside the play no torque passes;
on a flank the drive reads m = q + sign(q* - q) b/2. Checked by hand on the law and on a 1-DOF hinge
in MuJoCo; explicit only (no Stable-PD, no native form)."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
import torch

import actuator_gym as ag
from actuator_gym import ActuatorCollection, IdealPDActuatorCfg, ImplicitActuatorCfg
from actuator_gym._checks import UnsupportedError
from actuator_gym.backends.mujoco_batch import MujocoBatchBackend
from actuator_gym.backends.mujoco_native import native_plan
from actuator_gym.randomization import Uniform
from actuator_gym.runtime.substep import SubstepEngine

HINGE = """<mujoco><option timestep="0.002" gravity="0 0 0" integrator="Euler"/>
<worldbody><body><joint name="hinge" type="hinge" axis="0 0 1" damping="0.2"/>
<geom type="sphere" size="0.05" pos="0.2 0 0" mass="1"/></body></worldbody></mujoco>"""


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_the_law_by_hand(backend):
    b, kp, kd = 0.2, 10.0, 2.0
    m = IdealPDActuatorCfg(stiffness=kp, damping=kd, backlash=b).build(
        joint_names=["j"], num_envs=5, dtype=torch.float64, array_backend=backend)
    q = np.array([[0.0], [0.0], [0.0], [0.3], [0.3]])
    qd = np.array([[0.5], [0.5], [0.5], [-1.0], [-1.0]])
    tq = np.array([[0.05], [0.15], [-0.35], [0.25], [0.1]])
    tqd = np.full((5, 1), 0.25)
    tff = np.full((5, 1), 3.0)  # a feed-forward passes only with the drive's effort
    out = m.compute(joint_pos=q, joint_vel=qd, target_pos=tq, target_vel=tqd, target_effort=tff).numpy()
    flank = q + np.sign(tq - q) * b / 2  # the motor side on its flank
    want = kp * (tq - flank) + kd * (tqd - qd) + tff
    inside = np.abs(tq - q) < b / 2  # rows 0 and 3: inside the play
    assert inside[:, 0].tolist() == [True, False, False, True, False]
    want[inside] = 0.0
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=0.0)
    assert (out[inside] == 0.0).all() and (m.computed_effort.numpy()[inside] == 0.0).all()
    assert (m.applied_effort.numpy()[~inside] != 0.0).all()
    # b = 0 passes everything through, bit for bit (a config's 0 or None adds no part at all)
    plain = ag.Actuator(drive=ag.DrivePD(kp=kp, kd=kd), num_joints=1, num_envs=5, dtype=torch.float64)
    zero = ag.Actuator(drive=ag.DrivePD(kp=kp, kd=kd), backlash=ag.Backlash(0.0), num_joints=1, num_envs=5,
                       dtype=torch.float64)
    assert isinstance(zero.parts[0], ag.Backlash) and zero.backlash is zero.parts[0]
    args = dict(joint_pos=q, joint_vel=qd, target_pos=tq, target_vel=tqd, target_effort=tff)
    assert torch.equal(plain.compute(**args), zero.compute(**args))
    for off in (None, 0.0, [0.0], {"j": 0}):
        assert IdealPDActuatorCfg(backlash=off).build(joint_names=["j"]).backlash is None
    # the effort is gated after the clamps: a clamp acting does not let a torque through the play
    clamped = IdealPDActuatorCfg(stiffness=kp, backlash=b, actuator_effort_limit=0.5).build(joint_names=["j"], num_envs=5)
    eff = clamped.compute(joint_pos=q, joint_vel=qd, target_pos=tq).numpy()
    assert (eff[inside] == 0.0).all() and (np.abs(eff[~inside]) == np.float32(0.5)).all()


def test_a_hinge_gets_no_torque_after_a_reversal_until_the_target_travelled_the_play_back():
    """Env 0 has a play of b = 0.2 rad, env 1 none. Ramp the target to Q, hold (the joint settles
    b/2 short of it: the steady-state offset), bring the joint to rest, then ramp the target back:
    env 0's joint stays bit for bit where it is, with exactly zero effort, until the target has
    travelled b back; env 1's moves at once."""
    b, Q, rate, substeps = 0.2, 0.6, 0.01, 5
    model = mujoco.MjModel.from_xml_string(HINGE)
    be = MujocoBatchBackend(model, 2)
    cfg = IdealPDActuatorCfg(stiffness=10.0, damping=2.0, backlash=torch.tensor([[b], [0.0]], dtype=torch.float64))
    coll = ActuatorCollection({"arm": cfg}, joint_names=be.joint_names, num_envs=2, dtype=torch.float64)
    engine = SubstepEngine(coll, be, float(model.opt.timestep), substeps)
    np.testing.assert_array_equal(coll["arm"].parameter("backlash").numpy(), [[b], [0.0]])

    def step(target):
        coll.target_command.position[:] = target
        engine.advance()
        return be.joint_pos()[:, 0].copy(), engine.telemetry()

    for n in range(1, 61):  # the ramp out
        step(min(n * rate, Q))
    for _ in range(300):  # hold: the joint settles on the flank, b/2 short of the target
        q, tel = step(Q)
    np.testing.assert_allclose(q, [Q - b / 2, Q], atol=1e-6)
    assert np.abs(be.joint_vel()).max() < 1e-6
    be.reset_envs(None, qpos=be.qpos.copy(), qvel=np.zeros((2, 1)))  # the joint brought to rest
    rest = be.joint_pos()[:, 0].copy()
    for n in range(1, 20):  # the target travels back less than b: inside the play all along
        q, tel = step(Q - n * rate)
        assert q[0] == rest[0], n  # bit for bit
        assert tel["applied_effort"][0, 0] == 0.0 and tel["computed_effort"][0, 0] == 0.0
        assert q[1] != rest[1] and tel["applied_effort"][1, 0] != 0.0  # no play: it follows at once
    step(Q - 20 * rate)
    q, tel = step(Q - 21 * rate)  # past b: the flank is reached, torque passes, the joint moves
    assert q[0] < rest[0] and tel["applied_effort"][0, 0] < 0.0


def test_backlash_is_a_parameter_randomized_per_env_from_each_envs_stream():
    cfg = IdealPDActuatorCfg(stiffness=1.0, randomization={"backlash": Uniform(0.0, 0.1, operation="abs")})
    many = cfg.build(joint_names=["a", "b"], num_envs=4, seed=7).parameter("backlash")
    assert (many >= 0).all() and (many <= 0.1).all() and len(set(many[:, 0].tolist())) == 4
    for i in range(4):
        one = cfg.build(joint_names=["a", "b"], num_envs=1, seed=7 + i).parameter("backlash")
        assert torch.equal(one[0], many[i])
    m = IdealPDActuatorCfg(stiffness=1.0, backlash={"a": 0.1, "b": 0.3}).build(joint_names=["a", "b"])
    m.set_parameter("backlash", 0.05, joint_ids="b")
    assert m.parameter("backlash")[0].tolist() == pytest.approx([0.1, 0.05])
    with pytest.raises(ValueError, match="backlash"):
        m.set_parameter("backlash", -0.1)


def test_backlash_values_are_refused_naming_the_field_and_the_range():
    with pytest.raises(ValueError, match=r"'backlash'.*>= 0"):
        IdealPDActuatorCfg(backlash=-0.01)
    with pytest.raises(ValueError, match=r"'backlash'.*finite"):
        IdealPDActuatorCfg(backlash=float("inf"))
    with pytest.raises(ValueError, match=r"group 'legs'.*'backlash'.*leaves joints \['b'\]"):
        ActuatorCollection({"legs": IdealPDActuatorCfg(backlash={"a": 0.1})}, joint_names=["a", "b"])


def test_backlash_runs_on_the_explicit_path_only():
    with pytest.raises(UnsupportedError, match="backlash.*explicit path only.*effort_mode='implicit'"):
        IdealPDActuatorCfg(stiffness=1.0, backlash=0.1, effort_mode="implicit")
    with pytest.raises(UnsupportedError, match=r"group 'legs'.*backlash.*explicit path only"):
        IdealPDActuatorCfg(stiffness=1.0, backlash=0.1).build(joint_names=["a"], name="legs", effort_mode="implicit")
    with pytest.raises(UnsupportedError, match="backlash.*ImplicitActuatorCfg"):
        ImplicitActuatorCfg(stiffness=1.0, backlash=0.1)
    with pytest.raises(UnsupportedError, match="backlash"):
        ag.Actuator(drive=ag.DrivePD(kp=1.0), backlash=ag.Backlash(0.1), num_joints=1, effort_mode="implicit")
    # native execution: refused under "native" naming the field, explicit under "auto"
    model = mujoco.MjModel.from_xml_string(HINGE)
    coll = ActuatorCollection({"arm": IdealPDActuatorCfg(stiffness=1.0, backlash=0.1)}, joint_names=["hinge"])
    with pytest.raises(ValueError, match="group 'arm' has no exact MuJoCo-native form: backlash run"):
        native_plan(coll, model, "native", "test")
    assert native_plan(coll, model, "auto", "test") == {"arm": None}
    off = ActuatorCollection({"arm": IdealPDActuatorCfg(stiffness=1.0, backlash=0.0)}, joint_names=["hinge"])
    assert native_plan(off, model, "native", "test")["arm"] is not None  # 0: no backlash, native as before
