"""The encoder (docs/actuators.md, "Backlash, encoders and the bus"): the drive reads the position
rounded to multiples of 2 pi / counts and, as servo firmware computes it, the velocity
(q_read[k] - q_read[k - 1]) / dt, 0 at the first substep after a reset. Recovered here from the
efforts of a kp-only and a kd-only drive (effort = kp (q* - q_read), effort = kd (0 - qd_read))."""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest
import torch

import actuator_gym as ag
from actuator_gym import ActuatorCollection, IdealPDActuatorCfg, configs
from actuator_gym._checks import UnsupportedError

COUNTS, DT = 4096, 0.002
STEP = 2.0 * math.pi / COUNTS


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_the_drive_reads_exact_multiples_of_the_step(backend):
    kp = 2.0  # a power of two: q_read = q* - effort / kp exactly
    m = IdealPDActuatorCfg(stiffness=kp, encoder_resolution=COUNTS).build(
        joint_names=["a", "b", "c"], num_envs=50, dtype=torch.float64, array_backend=backend)
    q = np.random.default_rng(0).uniform(-4.0, 4.0, (50, 3))
    q[0] = [0.5 * STEP, 1.5 * STEP, -2.5 * STEP]  # ties: to the even count (0, 2, -2)
    effort = m.compute(joint_pos=q, joint_vel=np.zeros_like(q), dt=DT).numpy()
    q_read = 0.0 - effort / kp
    counts = q_read / STEP
    assert np.abs(counts - np.round(counts)).max() < 1e-9  # multiples of the step
    np.testing.assert_array_equal(np.round(counts), np.rint(q / STEP))  # the nearest one
    assert np.abs(q_read - q).max() <= STEP / 2 + 1e-12 and np.abs(q_read - q).max() > STEP / 4
    assert np.round(counts[0]).tolist() == [0.0, 2.0, -2.0]
    # without an encoder the drive reads q itself
    ideal = IdealPDActuatorCfg(stiffness=kp).build(joint_names=["a", "b", "c"], num_envs=50, dtype=torch.float64)
    np.testing.assert_array_equal(-ideal.compute(joint_pos=q, joint_vel=np.zeros_like(q)).numpy() / kp, q)


def test_the_velocity_is_the_quantized_difference_over_dt_and_restarts_at_a_reset():
    kd = 1.0  # effort = kd (0 - qd_read): the velocity the drive reads
    coll = ActuatorCollection({"g": IdealPDActuatorCfg(damping=kd, encoder_resolution=COUNTS)}, joint_names=["j"],
                              num_envs=2, dtype=torch.float64)
    rng = np.random.default_rng(1)  # increments of more than a count, either way
    traj = np.cumsum(rng.uniform(0.005, 0.05, (30, 2, 1)) * rng.choice([-1.0, 1.0], (30, 2, 1)), axis=0)
    true_vel = np.full((2, 1), 123.0)  # what the physics says: the drive never reads it
    quant = np.rint(traj / STEP) * STEP
    for k in range(30):
        if k == 12:
            coll.reset([1])  # env 1 only: its next velocity is 0, env 0 differences on
        read = -coll.compute(traj[k], true_vel, dt=DT).numpy() / kd
        want = np.zeros((2, 1)) if k == 0 else (quant[k] - quant[k - 1]) / DT
        if k == 12:
            want[1] = 0.0
        np.testing.assert_allclose(read, want, rtol=1e-12, atol=1e-9)
        assert k == 0 or k == 12 or (read != 0).all()
    with pytest.raises(ValueError, match="encoder_resolution.*needs dt="):
        coll["g"].compute(joint_pos=traj[0], joint_vel=true_vel)


def test_with_backlash_the_encoder_reads_the_motor_side():
    kp, b = 2.0, 0.2
    m = IdealPDActuatorCfg(stiffness=kp, backlash=b, encoder_resolution=64).build(joint_names=["j"], num_envs=2,
                                                                                   dtype=torch.float64)
    q = np.array([[0.0], [1.0]])
    tq = np.array([[0.5], [0.3]])
    effort = m.compute(joint_pos=q, joint_vel=np.zeros_like(q), target_pos=tq, dt=DT).numpy()
    motor = q + np.sign(tq - q) * b / 2  # on the flank: 0.1 and 0.9
    step = 2 * math.pi / 64
    np.testing.assert_allclose(effort, kp * (tq - np.rint(motor / step) * step), rtol=1e-12)
    assert not np.allclose(effort, kp * (tq - motor))  # the quantization shows


def test_encoder_resolution_is_refused_out_of_range_naming_the_field(tmp_path):
    for bad, err in ((1, ValueError), (0, ValueError), (2**31 + 1, ValueError), (2.5, TypeError), (True, TypeError)):
        with pytest.raises(err, match=r"encoder_resolution must be an integer in \[2, 2147483648\]"):
            IdealPDActuatorCfg(encoder_resolution=bad)
    with pytest.raises(UnsupportedError, match="encoder_resolution.*explicit path only"):
        IdealPDActuatorCfg(encoder_resolution=100, effort_mode="implicit")
    with pytest.raises(UnsupportedError, match="encoder_resolution.*ImplicitActuatorCfg"):
        ag.ImplicitActuatorCfg(encoder_resolution=100)
    path = tmp_path / "enc.yaml"
    body = """\
        kind: actuators
        groups:
          legs:
            model: IdealPD
            stiffness: 20.0
            encoder_resolution: {}
    """
    path.write_text(textwrap.dedent(body).format(1))
    with pytest.raises(configs.ConfigError, match=r"groups\.legs\.encoder_resolution: must be an integer \[2, "):
        configs.load(path)
    path.write_text(textwrap.dedent(body).format(4096))
    assert configs.load(path).actuators["legs"].encoder_resolution == 4096
