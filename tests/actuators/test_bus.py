"""The command bus (actuator_gym.runtime.bus; docs/actuators.md, "Backlash, encoders and the bus"):
per env and control step one frame, held with p_hold, dropped with p_drop, else delivered
U{0..bus_jitter} substeps into the step; one draw per env for every group on a bus; per-env streams.
A kp = 1 drive at q = 0 makes every effort the command its servo executes."""

from __future__ import annotations

import textwrap

import gymnasium as gym
import mujoco
import numpy as np
import pytest
import torch

from actuator_gym import ActuatorCollection, IdealPDActuatorCfg, configs
from actuator_gym.backends.mujoco_batch import MujocoBatchBackend
from actuator_gym.backends.mujoco_native import native_plan
from actuator_gym.runtime.bus import DELIVERED, DROPPED, HELD
from actuator_gym.runtime.substep import SubstepEngine, graph_capturable

Z999 = 3.2905  # two-sided 99.9 % normal quantile


def _cfg(joint, **bus):
    return IdealPDActuatorCfg(joint_names_expr=[joint], stiffness=1.0, **bus)


def _coll(cfgs, num_envs, seed, joints=None):
    joints = joints or [f"j{i}" for i in range(len(cfgs))]
    coll = ActuatorCollection(cfgs, joint_names=joints, num_envs=num_envs, seed=seed, dtype=torch.float64)
    coll.reset()
    coll.reset_commands()  # the reset targets: 0 everywhere
    return coll


def _run(coll, steps, substeps, resets=None):
    """Command ``t + 1`` at control step ``t``; the efforts ``(steps, substeps, envs, joints)`` and every
    bus's ``(outcome, delay)`` per step. ``resets``: ``{step: env ids}`` reset (targets -1) before it."""
    n, j = coll.num_envs, coll.num_joints
    q = np.zeros((n, j))
    efforts = np.zeros((steps, substeps, n, j))
    draws = {b: (np.zeros((steps, n), np.int8), np.zeros((steps, n), np.int64)) for b in coll.buses}
    for t in range(steps):
        if resets and t in resets:
            ids = resets[t]
            coll.reset(ids)
            coll.target_command.position[ids] = -1.0
            coll.reset_commands(ids)
        coll.target_command.position[:] = t + 1.0
        coll.begin_step()
        for b, bus in coll.buses.items():
            draws[b][0][t], draws[b][1][t] = bus.outcome, bus.delay
        for k in range(substeps):
            efforts[t, k] = coll.compute(q, q, dt=0.001).numpy()
    return efforts, draws


def _interval(p, n):
    half = Z999 * np.sqrt(p * (1 - p) / n)
    return p - half, p + half


def test_held_and_dropped_frames_occur_at_their_probabilities():
    hold, drop, n, steps = 0.2, 0.1, 64, 200
    coll = _coll({"g": _cfg("j0", bus_hold_probability=hold, bus_drop_probability=drop)}, n, seed=0)
    eff, draws = _run(coll, steps, 1)
    cmd = np.arange(1, steps + 1, dtype=float)[:, None]
    repeated = eff[:, 0, :, 0] != cmd  # the servo did not execute this step's command
    frames = n * steps
    lo, hi = _interval(hold + drop, frames)
    assert lo < repeated.mean() < hi, repeated.mean()
    outcome = draws["g"][0]
    np.testing.assert_array_equal(repeated, outcome != DELIVERED)  # the efforts show exactly the drawn frames
    # a repeated step executes the last delivered command (the previous step's effort; 0 at the start)
    prev = np.vstack([np.zeros((1, n)), eff[:-1, 0, :, 0]])
    np.testing.assert_array_equal(eff[:, 0, :, 0][repeated], prev[repeated])
    bus = coll.buses["g"]  # counted apart
    assert bus.frames.tolist() == [steps] * n
    for count, p, code in ((bus.holds, hold, HELD), (bus.drops, drop, DROPPED)):
        lo, hi = _interval(p, frames)
        assert lo < count.sum() / frames < hi
        np.testing.assert_array_equal(count, (outcome == code).sum(axis=0))


def test_groups_on_one_bus_hold_together_and_another_bus_draws_apart():
    spec = dict(bus_hold_probability=0.3, bus_drop_probability=0.2)
    cfgs = {"a": _cfg("j0", bus="can", **spec), "b": _cfg("j1", bus="can", **spec), "c": _cfg("j2", bus="uart", **spec),
            "free": _cfg("j3")}
    coll = _coll(cfgs, 16, seed=4)
    assert {b: bus.groups for b, bus in coll.buses.items()} == {"can": ("a", "b"), "uart": ("c",)}
    eff, _ = _run(coll, 100, 2)
    cmd = np.arange(1, 101, dtype=float)[:, None]
    repeated = eff[:, 0] != cmd[:, :, None]  # (steps, envs, joints)
    np.testing.assert_array_equal(repeated[..., 0], repeated[..., 1])  # one frame per env and step
    assert (repeated[..., 0] != repeated[..., 2]).mean() > 0.2  # an independent bus
    assert not repeated[..., 3].any()  # no bus: every command executed at once
    for joint in (0, 2):
        lo, hi = _interval(0.5, repeated[..., joint].size)
        assert lo < repeated[..., joint].mean() < hi


def test_env_i_of_a_batch_draws_as_a_single_env_seeded_s_plus_i_across_resets():
    cfgs = {"a": _cfg("j0", bus="can", bus_jitter=2, bus_hold_probability=0.25, bus_drop_probability=0.25),
            "b": _cfg("j1", bus="can", bus_jitter=2, bus_hold_probability=0.25, bus_drop_probability=0.25)}
    batch, _ = _run(_coll(cfgs, 4, seed=11), 40, 3, resets={20: [1]})  # env 1 alone reset mid-run
    for i in range(4):
        single, _ = _run(_coll(cfgs, 1, seed=11 + i), 40, 3, resets={20: [0]} if i == 1 else None)
        np.testing.assert_array_equal(batch[:, :, i], single[:, :, 0])
    assert set(batch[20, :, 1].ravel()) <= {-1.0, 21.0}  # after the reset: its reset target, then the new command
    reseeded = _coll(cfgs, 4, seed=99)
    reseeded.seed(11)  # re-keys the buses' streams as a construction with that seed does
    np.testing.assert_array_equal(_run(reseeded, 40, 3, resets={20: [1]})[0], batch)


def test_jitter_delays_the_arrival_by_the_drawn_substeps_and_a_late_frame_lands_at_the_next_step():
    substeps, steps, n = 4, 60, 8
    coll = _coll({"g": _cfg("j0", bus_jitter=3)}, n, seed=2)
    eff, draws = _run(coll, steps, substeps)
    delay = draws["g"][1]
    assert set(np.unique(delay)) == {0, 1, 2, 3}
    cmd = np.arange(1, steps + 1, dtype=float)
    for t in range(steps):
        for k in range(substeps):
            want = np.where(k >= delay[t], cmd[t], cmd[t - 1] if t else 0.0)
            np.testing.assert_array_equal(eff[t, k, :, 0], want)
    # jitter past the step (6 > 4 substeps): such a frame arrives at the next step's start
    coll = _coll({"g": _cfg("j0", bus_jitter=6, bus_hold_probability=0.5)}, n, seed=3)
    eff, draws = _run(coll, steps, substeps)
    outcome, delay = draws["g"]
    late = (outcome[:-1] == DELIVERED) & (delay[:-1] >= substeps)
    late_then_kept = late & ((outcome[1:] != DELIVERED) | (delay[1:] > 0))
    assert late_then_kept.sum() > 5
    t, e = np.nonzero(late_then_kept)
    np.testing.assert_array_equal(eff[t + 1, 0, e, 0], cmd[t])  # the late frame, at the next step's start
    assert (eff[t, substeps - 1, e, 0] != cmd[t]).all()  # not within its own step


def test_a_reset_restores_the_reset_targets_as_the_servos_command():
    coll = _coll({"g": _cfg("j0", bus_hold_probability=1.0)}, 2, seed=0)  # every frame held: commands never change
    eff, _ = _run(coll, 3, 1)
    assert (eff == 0.0).all()  # the reset targets (0), whatever is commanded
    coll.reset([0])
    coll.target_command.position[0] = -5.0
    coll.reset_commands([0])
    coll.target_command.position[:] = 9.0
    coll.begin_step()
    assert coll.compute(np.zeros((2, 1)), np.zeros((2, 1)), dt=0.001)[:, 0].tolist() == [-5.0, 0.0]
    coll.reset([1])  # without reset_commands(): the first command after the reset
    coll.begin_step()
    assert coll.compute(np.zeros((2, 1)), np.zeros((2, 1)), dt=0.001)[:, 0].tolist() == [-5.0, 9.0]


def test_the_engine_starts_one_frame_per_control_step_and_a_task_holds_its_reset_targets():
    model = mujoco.MjModel.from_xml_string(
        '<mujoco><worldbody><body><joint name="j0" type="hinge"/><geom size="0.1" mass="1"/></body></worldbody></mujoco>')
    be = MujocoBatchBackend(model, 3)
    coll = ActuatorCollection({"g": _cfg("j0", bus_hold_probability=0.5)}, joint_names=be.joint_names, num_envs=3,
                              seed=0)
    with pytest.raises(RuntimeError, match="bus 'g': call begin_step"):
        coll.compute(np.zeros((3, 1)), np.zeros((3, 1)), dt=0.002)
    engine = SubstepEngine(coll, be, 0.002, 5)
    for _ in range(3):
        engine.advance()
    assert coll.buses["g"].frames.tolist() == [3, 3, 3]  # per control step, not per substep
    ok, why = graph_capturable(coll)
    assert not ok and "bus 'g'" in why
    # a task: every frame held, so the servos keep the reset targets whatever the policy does
    cfg = IdealPDActuatorCfg(joint_names_expr=["hinge"], stiffness=5.0, damping=0.5, bus_hold_probability=1.0)
    runs = []
    for actions in (0, 1):
        task = gym.make_vec("actuator_gym/Pendulum-v0", num_envs=2, actuators={"p": cfg}).unwrapped
        task.reset(seed=3)
        rng = np.random.default_rng(actions)
        runs.append([task.step(rng.uniform(-1, 1, (2, 1)).astype(np.float32))[4]["actuator"]["joint_pos"].copy()
                     for _ in range(10)])
    np.testing.assert_array_equal(runs[0], runs[1])
    assert np.abs(np.diff(np.asarray(runs[0]), axis=0)).max() > 0  # the joint does move (toward the reset pose)


def test_bad_bus_fields_are_refused_naming_the_field_the_group_and_the_range(tmp_path):
    with pytest.raises(ValueError, match=r"bus_hold_probability must be a finite number >= 0 and <= 1, got 1.5"):
        IdealPDActuatorCfg(bus_hold_probability=1.5)
    with pytest.raises(ValueError, match=r"bus_drop_probability must be a finite number >= 0 and <= 1"):
        IdealPDActuatorCfg(bus_drop_probability=-0.1)
    with pytest.raises(ValueError, match=r"bus_hold_probability \(0.6\) \+ bus_drop_probability \(0.5\) must be <= 1"):
        IdealPDActuatorCfg(bus_hold_probability=0.6, bus_drop_probability=0.5)
    with pytest.raises(ValueError, match=r"bus_jitter \[physics substeps\] must be an integer in \[0, 1048576\]"):
        IdealPDActuatorCfg(bus_jitter=-1)
    with pytest.raises(TypeError, match="bus must be a bus name"):
        IdealPDActuatorCfg(bus="")
    with pytest.raises(ValueError, match=r"groups 'a' and 'b' are on bus 'can' with different"):
        ActuatorCollection({"a": _cfg("j0", bus="can", bus_jitter=1), "b": _cfg("j1", bus="can")},
                           joint_names=["j0", "j1"])
    path = tmp_path / "bus.yaml"
    path.write_text(textwrap.dedent("""\
        kind: actuators
        groups:
          a: {model: IdealPD, joint_names_expr: [j0], bus: can, bus_hold_probability: 0.1}
          b: {model: IdealPD, joint_names_expr: [j1], bus: can, bus_hold_probability: 0.2}
    """))
    with pytest.raises(configs.ConfigError, match=r"groups: .*groups 'a' and 'b' are on bus 'can'"):
        configs.load(path)
    path.write_text(path.read_text().replace("0.2}", "0.1, bus_drop_probability: 0.95}"))
    with pytest.raises(configs.ConfigError, match=r"groups\.b\.bus_hold_probability: .*\+ bus_drop_probability"):
        configs.load(path)
    path.write_text(path.read_text().replace(", bus_drop_probability: 0.95", ", bus_jitter: 2").replace(
        "0.1}", "0.1, bus_jitter: 2}", 1))
    assert configs.load(path).actuators["b"].bus_jitter == 2
    # a bus runs in the runtime: no native execution
    model = mujoco.MjModel.from_xml_string(
        '<mujoco><option integrator="Euler"/><worldbody><body><joint name="j0" type="hinge"/><geom size="0.1" mass="1"/>'
        '</body></worldbody></mujoco>')
    coll = ActuatorCollection({"g": _cfg("j0", bus="can")}, joint_names=["j0"])
    with pytest.raises(ValueError, match="group 'g' has no exact MuJoCo-native form: bus run"):
        native_plan(coll, model, "native", "test")
    assert native_plan(coll, model, "auto", "test") == {"g": None}
