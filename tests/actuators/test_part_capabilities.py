"""Parts declare what they can do (graph capture, state, Newton export, MuJoCo-native form), the
Actuator's public read-only accessors, the two meanings of "implicit", and the import paths."""

import math

import numpy as np
import pytest
import torch

import actuator_gym as ag
from actuator_gym import actuators
from actuator_gym.actuators import clamps, delay, drives, parts
from actuator_gym.actuators.checkpoints import RecurrentNet
from actuator_gym.actuators.models import DELAY_ALIASES
from actuator_gym.actuators.part import CAPABILITIES, Part


def _mlp():
    net = torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    return ag.DriveNeuralMLP(network=net, input_order="pos_vel", input_idx=[0])


def _gru():
    net = RecurrentNet(torch.nn.GRU(2, 4), torch.nn.Sequential(torch.nn.Linear(4, 1)))
    return ag.DriveNeuralGRU(network=net, input_columns=["position_error", "velocity"], sample_dt_s=0.005)


BUILT_IN = {
    # class: (GRAPH_SAFE, STATEFUL)
    ag.DrivePD: (True, False),
    ag.DrivePID: (True, True),
    ag.ClampingMaxEffort: (True, False),
    ag.ClampingDCMotor: (True, False),
    ag.ClampingPositionBased: (True, False),
    ag.Delay: (True, True),
    ag.DriveNeuralMLP: (False, True),
    ag.DriveNeuralLSTM: (False, True),
    ag.DriveNeuralGRU: (False, True),
}


@pytest.mark.parametrize("cls", list(BUILT_IN), ids=lambda c: c.__name__)
def test_every_built_in_part_declares_its_capabilities_in_its_own_class(cls):
    graph_safe, stateful = BUILT_IN[cls]
    for name in CAPABILITIES:
        assert name in vars(cls), f"{cls.__name__} does not declare {name}"
    assert cls.GRAPH_SAFE is graph_safe and cls.STATEFUL is stateful
    native = {ag.DrivePD: "pid", ag.DrivePID: "pid", ag.ClampingMaxEffort: "forcerange",
              ag.ClampingDCMotor: "dcmotor", ag.Delay: "delay"}
    assert cls.NATIVE_FORM == native.get(cls, "none")
    assert (cls.to_mujoco is not Part.to_mujoco) is (cls in native)
    exports = cls not in (ag.DriveNeuralMLP, ag.DriveNeuralLSTM, ag.DriveNeuralGRU)
    assert (cls.to_newton is not Part.to_newton) is exports


def test_capabilities_are_not_inherited():
    """A subclass may change the law, so it starts from the conservative defaults."""

    class MyPD(ag.DrivePD):
        def compute(self, q, qd, tq, tqd, tff, dt, out):
            super().compute(q, qd, tq, tqd, tff, dt, out)

    class MyClamp(ag.ClampingMaxEffort):
        GRAPH_SAFE = True  # re-declared: kept

    assert (MyPD.GRAPH_SAFE, MyPD.STATEFUL, MyPD.NATIVE_FORM) == (False, True, "none")
    assert MyPD.to_newton is Part.to_newton and MyPD.to_mujoco is Part.to_mujoco
    assert MyClamp.GRAPH_SAFE and MyClamp.to_newton is Part.to_newton
    m = ag.Actuator(drive=MyPD(kp=1.0), clamping=[MyClamp(max_effort=1.0)], num_joints=1)
    pd, clamp = m.parts
    assert not pd.graph_safe and "MyPD" in pd.graph_unsafe_reason
    assert clamp.graph_safe and clamp.graph_unsafe_reason == ""
    with pytest.raises(NotImplementedError, match="MyPD has no newton.actuators export"):
        pd.to_newton(None)
    assert pd.to_mujoco(None) is None and pd.native_form == "none"
    # the law itself is inherited as before
    assert m.compute(joint_pos=[[0.0]], joint_vel=[[0.0]], target_pos=[[0.5]]).item() == pytest.approx(0.5)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_delay_is_graph_safe_only_on_the_torch_path(backend):
    m = ag.Actuator(drive=ag.DrivePD(kp=1.0), delay=ag.Delay(0, 2), num_joints=2, array_backend=backend)
    assert m.delay.graph_safe is (backend == "torch") and m.delay.stateful
    assert ("numpy path" in m.delay.graph_unsafe_reason) is (backend == "numpy")


def test_neural_drives_are_stateful_and_never_graph_safe_or_exported():
    for drive in (_mlp(), _gru()):
        m = ag.Actuator(drive=drive, clamping=[ag.ClampingMaxEffort(max_effort=1.0)], num_envs=2, num_joints=1)
        assert not m.drive.graph_safe and m.drive.stateful
        assert type(m.drive).__name__ in m.drive.graph_unsafe_reason
        with pytest.raises(NotImplementedError):
            m.drive.to_newton(None)


# -- public accessors ----------------------------------------------------------------------------
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_actuator_parts_and_effort_views_are_public_and_no_copies(backend):
    d, pd, c1, c2 = ag.Delay(0, 1), ag.DrivePD(kp=2.0), ag.ClampingMaxEffort(max_effort=0.5), ag.ClampingMaxEffort(max_effort=0.3)
    m = ag.Actuator(drive=pd, delay=d, clamping=[c1, c2], num_envs=2, num_joints=3, array_backend=backend)
    assert isinstance(m.parts, tuple) and m.parts == (m.delay, m.drive, *m.clamping)
    assert [type(p) for p in m.parts] == [ag.Delay, ag.DrivePD, ag.ClampingMaxEffort, ag.ClampingMaxEffort]
    assert m.drive is not pd  # bound copies; the given parts stay reusable
    computed, applied = m.computed_array, m.applied_array
    m.compute(joint_pos=np.zeros((2, 3)), joint_vel=np.zeros((2, 3)), target_pos=np.ones((2, 3)))
    assert m.computed_array is computed and m.applied_array is applied  # the same views every substep
    lib = np if backend == "numpy" else torch
    assert isinstance(applied, np.ndarray if lib is np else torch.Tensor)
    assert np.shares_memory(np.asarray(applied), m.applied_effort.numpy())
    assert float(applied.max()) == pytest.approx(0.3) and float(computed.max()) == pytest.approx(2.0)
    with pytest.raises(AttributeError):
        m.parts = ()
    # a solver's result goes in through store_efforts (rounded to the model's dtype)
    m.store_efforts(lib.full((2, 3), 1.5, dtype=lib.float64), lib.full((2, 3), 0.25, dtype=lib.float64))
    assert m.computed_effort.eq(1.5).all() and m.applied_effort.eq(0.25).all()


def test_collection_buffers_stay_the_models_views():
    cfgs = {"a": ag.IdealPDActuatorCfg(joint_names_expr=["j0", "j2"], stiffness=1.0, actuator_effort_limit=0.4),
            "b": ag.ImplicitActuatorCfg(joint_names_expr=["j1"], stiffness=3.0)}
    coll = ag.ActuatorCollection(cfgs, joint_names=["j0", "j1", "j2"], num_envs=2)
    coll.target_command.position[:] = 1.0
    mass = np.zeros((2, 3, 3))  # M^-1 = 0 (infinite inertia): the Stable-PD solve is the explicit PD
    out = coll.compute(joint_pos=np.zeros((2, 3), np.float32), joint_vel=np.zeros((2, 3), np.float32), dt=0.01,
                       inverse_mass=mass)
    assert torch.allclose(out, torch.tensor([[0.4, 3.0, 0.4]] * 2))
    assert np.array_equal(coll["a"].applied_array, out[:, [0, 2]].numpy())
    assert coll.output_command.effort is coll.applied_effort  # the effort sent is the effort applied


def test_raw_values_are_read_only_and_copies_replace_them():
    pd = ag.DrivePD(kp={"hip": 1.0, "knee": 2.0}, kd=0.5)
    assert pd.raw_values["kd"] == 0.5
    with pytest.raises(TypeError):
        pd.raw_values["kd"] = 1.0
    q = pd.with_raw_values(kp=2.0)
    assert q.raw_values["kp"] == 2.0 and q.raw_values["kd"] == 0.5 and isinstance(pd.raw_values["kp"], dict)
    assert type(q) is ag.DrivePD


def test_config_delay_part_and_delay_aliases():
    cfg = ag.IdealPDActuatorCfg(min_delay=1, max_delay=3, per_joint_delay=True)
    d = cfg.delay_part()
    assert isinstance(d, ag.Delay) and (d.min_delay, d.max_delay) == (1, 3)
    assert set(DELAY_ALIASES) == {"min_delay", "max_delay", "delay"} and set(DELAY_ALIASES.values()) == {"delay_steps"}
    m = cfg.build(joint_names=["a", "b"], num_envs=3, seed=0)
    assert m.parameter("max_delay").shape == (3, 2)  # addressed through the aliases


# -- one meaning of "implicit": the Stable-PD solve ----------------------------------------------
def test_implicit_config_and_implicit_effort_mode_are_both_the_stable_pd_solve():
    servo = ag.ImplicitActuatorCfg(stiffness=10.0).build(joint_names=["j"])
    stable = ag.IdealPDActuatorCfg(stiffness=10.0, effort_mode="implicit").build(joint_names=["j"])
    plain = ag.IdealPDActuatorCfg(stiffness=10.0).build(joint_names=["j"])
    assert (servo.is_implicit, servo.stable_pd) == (True, True)  # is_implicit: built from ImplicitActuatorCfg
    assert (stable.is_implicit, stable.stable_pd) == (False, True)
    assert (plain.is_implicit, plain.stable_pd, plain.implicit_options) == (False, False, None)
    with pytest.raises(TypeError, match="implicit_servo"):  # the old per-consumer choice is gone
        ag.ImplicitActuatorCfg(stiffness=10.0).build(joint_names=["j"], implicit_servo="engine")
    cfgs = {"servo": ag.ImplicitActuatorCfg(joint_names_expr=["a"], stiffness=1.0),
            "stable": ag.IdealPDActuatorCfg(joint_names_expr=["b"], stiffness=1.0, effort_mode="implicit"),
            "plain": ag.IdealPDActuatorCfg(joint_names_expr=["c"], stiffness=1.0)}
    coll = ag.ActuatorCollection(cfgs, joint_names=["a", "b", "c"])
    assert coll.stable_pd_groups == ["servo", "stable"]
    assert coll.needs_mass_matrix


def test_the_stable_pd_solver_is_owned_by_the_model():
    m = ag.Actuator(drive=ag.DrivePD(kp=100.0, kd=1.0), num_joints=1, effort_mode="implicit")
    solver = m.stable_pd_solver
    assert m.stable_pd_solver is solver
    m.compute(joint_pos=[[0.0]], joint_vel=[[0.0]], target_pos=[[1.0]], dt=0.01, inverse_mass=[[[2.0]]])
    assert m.stable_pd_solver is solver
    # closed form for one joint: tau = kp e / (1 + h (h kp + kd) A)
    assert m.applied_effort.item() == pytest.approx(100.0 / (1 + 0.01 * (0.01 * 100.0 + 1.0) * 2.0), rel=1e-6)


# -- import paths --------------------------------------------------------------------------------
def test_parts_module_re_exports_the_split_modules():
    for name in parts.__all__:
        assert getattr(parts, name) is getattr(actuators, name) is getattr(ag, name)
    assert parts.DrivePD is drives.DrivePD and parts.ClampingDCMotor is clamps.ClampingDCMotor
    assert parts.Delay is delay.Delay and parts.Part is Part
    assert ag.ImplicitOptions is actuators.ImplicitOptions
    assert "ImplicitOptions" in actuators.__all__ and "ImplicitOptions" in ag.__all__
    assert math.isinf(ag.ClampingMaxEffort().raw_values["max_effort"])


# -- Newton export (each part builds its own newton.actuators object) ----------------------------
def test_newton_export_is_generic_and_names_parts_without_one():
    pytest.importorskip("newton")
    from actuator_gym.backends.newton import NewtonBackend
    from actuator_gym.tasks.pendulum import PendulumCfg, pendulum_mjcf

    n = 3
    be = NewtonBackend(pendulum_mjcf(PendulumCfg()), n, device="cpu")

    class MyClamp(ag.ClampingMaxEffort):
        pass

    def coll(cfg):
        return ag.ActuatorCollection({"p": cfg}, joint_names=be.joint_names, num_envs=n, seed=0)

    with pytest.raises(ValueError, match="group 'p' uses MyClamp, which has no newton.actuators export"):
        be.native_actuators(coll(ag.ComposedActuatorCfg(drive=ag.DrivePD(kp=1.0), clamping=[MyClamp(max_effort=1.0)])))
    with pytest.raises(ValueError, match="uses DriveNeuralMLP, which has no newton.actuators export"):
        be.native_actuators(coll(ag.ComposedActuatorCfg(drive=_mlp())))
    # the position-based clamp (with a delay) exports and agrees once the lag's history is full
    cfg = ag.RemotizedPDActuatorCfg(joint_names_expr=["hinge"], stiffness=8.0, damping=0.5, min_delay=1, max_delay=1,
                                    joint_parameter_lookup=[[-1.0, 1.0, 0.5], [0.0, 1.0, 2.0], [1.0, 1.0, 1.0]])
    c = coll(cfg)
    be.reset_envs(None, qpos=np.array([[0.3], [-0.4], [1.5]]))
    nat = be.native_actuators(c)
    for k in range(8):
        tgt = torch.full((n, 1), 0.2 * k - 0.5)
        c.target_command.position[:] = tgt
        q, qd = be.joint_pos().copy(), be.joint_vel().copy()
        ours = c.compute(joint_pos=q, joint_vel=qd, dt=be.physics_dt).clone()
        theirs = nat.step(target_pos=tgt).clone()
        if k >= 2:
            torch.testing.assert_close(ours, theirs, atol=2e-5, rtol=2e-5)
            assert ours.abs().max() <= 2.0 + 1e-6  # the lookup limit acts
        be.step()
