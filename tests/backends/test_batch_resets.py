"""Resets of a few worlds on the batched MuJoCo backend run world by world on the caller's thread
(``SERIAL_WORLDS``): the state and the derived fields after the reset are those of one pooled call,
bit for bit, and the other worlds are untouched."""

import numpy as np
import pytest

import actuator_gym  # noqa: F401  (first: chooses MUJOCO_GL before mujoco is imported)
import mujoco  # noqa: E402

from actuator_gym.backends import mujoco_batch  # noqa: E402
from actuator_gym.backends.mujoco_batch import SERIAL_WORLDS, MujocoBatchBackend  # noqa: E402

XML = """<mujoco>
  <option timestep="0.005"/>
  <worldbody>
    <geom type="plane" size="5 5 0.1"/>
    <body name="ball" pos="0 0 0.3"><freejoint/><geom type="sphere" size="0.1" mass="1"/></body>
    <body name="arm" pos="1 0 1">
      <joint name="swing" type="hinge" axis="0 1 0" damping="0.1"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.03" mass="2"/>
    </body>
  </worldbody>
</mujoco>"""
N = 12
FIELDS = ("qpos", "qvel", "act", "qacc_warmstart", "time", "xpos", "xquat", "cvel")


def _stepped_backend():
    be = MujocoBatchBackend(mujoco.MjModel.from_xml_string(XML), N, nthread=2)
    for f in ("xpos", "xquat", "cvel"):
        be.field(f)  # bound: the reset's derived pass fills them
    rng = np.random.default_rng(0)
    be.qvel[:] = rng.normal(0, 1, be.qvel.shape)
    for _ in range(20):
        be.step()
    return be


@pytest.mark.parametrize("ids", [[4], [1, 3, 5], list(range(SERIAL_WORLDS))])
def test_a_few_worlds_reset_one_by_one_equal_one_pooled_reset(ids, monkeypatch):
    assert 1 < SERIAL_WORLDS < N
    m = mujoco.MjModel.from_xml_string(XML)
    rng = np.random.default_rng(1)
    qpos = np.tile(m.qpos0, (len(ids), 1)) + rng.normal(0, 0.1, (len(ids), m.nq))
    qvel = rng.normal(0, 0.5, (len(ids), m.nv))
    serial = _stepped_backend()
    before = {f: np.array(serial.field(f)) for f in FIELDS}
    serial.reset_envs(ids, qpos=qpos, qvel=qvel)
    monkeypatch.setattr(mujoco_batch, "SERIAL_WORLDS", 0)  # every reset in one call of the pool
    pooled = _stepped_backend()
    pooled.reset_envs(ids, qpos=qpos, qvel=qvel)
    others = np.setdiff1d(np.arange(N), ids)
    for f in FIELDS:
        a, b = np.array(serial.field(f)), np.array(pooled.field(f))
        assert np.array_equal(a, b), f
        assert np.array_equal(a[others], before[f][others]), f  # the other worlds untouched
    assert not np.array_equal(np.array(serial.field("xpos"))[ids], before["xpos"][ids])  # the reset took effect
    np.testing.assert_array_equal(np.array(serial.qpos)[ids], qpos)
