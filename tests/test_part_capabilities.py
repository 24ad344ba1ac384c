"""Parts declare what they can do (graph capture, state, Newton export, MuJoCo-native form), and
the graph-capture decision and the Newton export ask them."""


import numpy as np
import pytest
import torch

import actuator_gym as ag
from actuator_gym.actuators.checkpoints import RecurrentNet
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
    assert cls.NATIVE_FORM == "none"  # the MuJoCo-native forms come with the next issue
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


# -- Newton export (each part builds its own newton.actuators object) ----------------------------
def test_newton_export_is_generic_and_names_parts_without_one():
    pytest.importorskip("newton")
    from actuator_gym.backends.newton import NewtonBackend
    from actuator_gym.envs.pendulum import PendulumCfg, pendulum_mjcf

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
