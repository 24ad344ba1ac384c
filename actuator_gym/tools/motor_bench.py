"""A motor's test bench in our own runtime: the mechanics of an MJCF, one joint driven by an actuator
group, many worlds at once (``mujoco.batch``), each with its own actuator parameters, joint
properties and log to replay. ``actuator-gym identify`` fits its models with it
(:mod:`actuator_gym.tools.identify`); :func:`write_example_logs` simulates a known motor on a
bundled pendulum bench for the tests and the worked example in docs/identify.md.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Sequence

import mujoco
import numpy as np
import torch

from .._safe_io import output_dir, read_text, write_atomic
from ..backends.mujoco_batch import MujocoBatchBackend
from ..runtime.collection import ActuatorCollection
from .motor_logs import MotorLog

__all__ = ["Bench", "JOINT_FIELDS", "EXAMPLE_BENCH", "EXAMPLE_TRUTH", "write_example_logs", "MJCF_MAX_BYTES", "main"]

MJCF_MAX_BYTES = 16 * 2**20
"""[bytes]: largest bench MJCF read."""
JOINT_FIELDS = {"friction": "dof_frictionloss", "viscous_friction": "dof_damping", "armature": "dof_armature"}
"""The joint properties a bench fits: config field -> the MuJoCo DOF field it is written into."""


class Bench:
    """The bench ``mjcf`` (a path, or MJCF text) with joint ``joint`` driven by our runtime.

    The MJCF's own actuators are removed (the effort is the actuator group's, through
    ``qfrc_applied``) and its armature, friction and damping of ``joint`` are replaced by each
    world's values. ``ValueError`` names the file and the joints when ``joint`` is not one of its
    hinge or slide joints."""

    def __init__(self, mjcf: str | Path, joint: str):
        text, where = (mjcf, "the bench MJCF") if "<mujoco" in str(mjcf) else (read_text(mjcf, MJCF_MAX_BYTES, "bench MJCF"), str(mjcf))
        try:
            spec = mujoco.MjSpec.from_string(text)
            for act in list(spec.actuators):
                spec.delete(act)
            self.model = spec.compile()
        except (ValueError, mujoco.FatalError) as exc:
            raise ValueError(f"{where}: not a MuJoCo model: {exc}") from None
        names = [mujoco.mj_id2name(self.model, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(self.model.njnt)
                 if int(self.model.jnt_type[j]) in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))]
        if joint not in names:
            raise ValueError(f"{where}: has no hinge or slide joint {joint!r}; its joints: {names}")
        self.joint, self.where = joint, where
        self.dt = float(self.model.opt.timestep)
        jid = self.model.joint(joint).id
        self.qadr, self.dadr = int(self.model.jnt_qposadr[jid]), int(self.model.jnt_dofadr[jid])
        self._backends: dict[int, MujocoBatchBackend] = {}

    def _backend(self, worlds: int) -> MujocoBatchBackend:
        if worlds not in self._backends:
            self._backends[worlds] = MujocoBatchBackend(self.model, worlds, nthread=2 if worlds >= 8 else 1)
        return self._backends[worlds]

    def simulate(self, cfg: Any, params: dict[str, np.ndarray], logs: Sequence[MotorLog]) -> dict[str, np.ndarray]:
        """Replay ``logs`` on ``W = k * len(logs)`` worlds: world ``j * L + l`` runs log ``l`` with the
        ``j``-th values of ``params`` (``{field: (k,)}``: the config's parameters and
        :data:`JOINT_FIELDS`), from the log's first state (:func:`_initial`: the measurement noise
        averaged out), its commands sample by sample.
        Returns ``joint_pos``, ``joint_vel`` ``(W, T)`` (sample 0: the log's) and ``effort`` ``(W, T)``
        (the applied effort during each sample's step; the last repeats), ``T`` the longest log."""
        L = len(logs)
        k = len(next(iter(params.values())))
        W, T = k * L, max(lg.num_samples for lg in logs)
        be = self._backend(W)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the bench's other joints stay passive
            coll = ActuatorCollection({"motor": cfg}, joint_names=be.joint_names, num_envs=W, seed=0, dtype=torch.float64)
        col = list(be.joint_names).index(self.joint)
        for name, values in params.items():
            v = np.repeat(np.asarray(values, dtype=np.float64), L)
            if name in JOINT_FIELDS:
                be.model_field(JOINT_FIELDS[name])[:, self.dadr] = v
            else:
                coll.set_parameter("motor", name, v[:, None])
        be.set_const()
        pad = lambda a: np.concatenate([a, np.full(T - len(a), a[-1])])  # noqa: E731
        target = np.tile(np.stack([pad(lg.target_pos) for lg in logs]), (k, 1))
        qpos = np.tile(self.model.qpos0, (W, 1))
        qpos[:, self.qadr] = np.tile([_initial(lg.joint_pos) for lg in logs], k)
        qvel = np.zeros((W, self.model.nv))
        qvel[:, self.dadr] = np.tile([_initial(lg.joint_vel) for lg in logs], k)
        be.reset_envs(None, qpos=qpos, qvel=qvel)
        coll.reset()
        out = {key: np.empty((W, T)) for key in ("joint_pos", "joint_vel", "effort")}
        out["joint_pos"][:, 0], out["joint_vel"][:, 0] = qpos[:, self.qadr], qvel[:, self.dadr]
        pos_cmd = coll.target_command.position.numpy()
        applied = coll.applied_effort.numpy()  # the numpy view the backend takes as is (no tensor conversion)
        compute, state_pos, state_vel, set_effort, step, dt = (coll.compute, be.joint_pos, be.joint_vel,
                                                                be.set_joint_effort, be.step, self.dt)
        qpos_j, qvel_j = be.qpos[:, self.qadr], be.qvel[:, self.dadr]  # live views of the motor's joint
        for t in range(T - 1):
            pos_cmd[:, col] = target[:, t]
            compute(state_pos(), state_vel(), dt)
            set_effort(applied)
            step()
            out["effort"][:, t] = applied[:, col]
            out["joint_pos"][:, t + 1] = qpos_j
            out["joint_vel"][:, t + 1] = qvel_j
        out["effort"][:, T - 1] = out["effort"][:, T - 2]
        return out


def _initial(x: np.ndarray, samples: int = 10) -> float:
    """A log's state at its first sample: the straight line fitted through its first ``samples``
    measurements, at sample 0 (encoder noise averaged over them, a steady motion followed)."""
    y = x[:samples]
    if len(y) < 3:
        return float(x[0])
    slope, intercept = np.polyfit(np.arange(len(y)), y, 1)
    return float(intercept)


# -- the worked example: a pendulum on a position-controlled DC motor ---------------------------------
EXAMPLE_BENCH = """<mujoco model="motor_bench">
  <option timestep="{timestep}" integrator="Euler"/>
  <worldbody>
    <body name="arm" pos="0 0 0.5">
      <joint name="hinge" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.01" mass="0"/>
      <body name="load" pos="0.2 0 0"><geom type="sphere" size="0.03" mass="0.5"/></body>
    </body>
  </worldbody>
</mujoco>
"""
"""A 0.5 kg point load 0.2 m from a horizontal hinge (the motor's joint ``hinge``, as the bundled
pendulum's), Euler at ``{timestep}`` s (:func:`write_example_logs`: 500 Hz by default)."""

EXAMPLE_TRUTH = dict(stiffness=12.0, damping=0.25, saturation_effort=1.6, actuator_effort_limit=1.2,
                     actuator_velocity_limit=9.0, friction=0.03, viscous_friction=0.01, armature=0.004, delay=2)
"""The example motor [SI units; ``delay``: physics substeps]: a hobby-servo-sized DC motor."""


def _example_commands(rng: np.random.Generator, seconds: float, dt: float, kind: int) -> np.ndarray:
    """Position commands [rad]: steps of random size and hold time (even logs), or a chirp of random
    amplitude, offset and sweep (odd)."""
    t = np.arange(int(round(seconds / dt))) * dt
    if kind % 2 == 0:
        out, now = np.empty_like(t), 0.0
        edges = np.cumsum(rng.uniform(0.4, 1.2, size=64))
        for k, e in enumerate(np.r_[0.0, edges]):
            now = rng.uniform(-1.4, 1.4) if k else 0.0
            out[t >= e] = now
        return out
    f = rng.uniform(0.1, 0.4) + rng.uniform(1.5, 3.0) * t / t[-1]
    return rng.uniform(0.3, 1.0) * np.sin(2 * np.pi * np.cumsum(f) * dt) + rng.uniform(-0.5, 0.5)


def write_example_logs(out: str | Path, units: int = 1, logs_per_unit: int = 4, seconds: float = 8.0,
                       seed: int = 0, unit_spread: float = 0.1, pos_noise: float = 1e-3, vel_noise: float = 0.02,
                       effort_noise: float = 0.01, truth: dict | None = None, timestep: float = 0.002) -> dict[str, Any]:
    """Simulate the example motor (:data:`EXAMPLE_TRUTH`, or ``truth``) on :data:`EXAMPLE_BENCH` and
    write ``out/bench.xml`` and ``out/<unit>/log_<k>.csv`` (``time, target_pos, joint_pos, joint_vel,
    effort``, at the bench's ``timestep``, 500 Hz by default), with Gaussian encoder noise ``pos_noise`` [rad] and
    ``vel_noise`` [rad/s] and current-sensing noise ``effort_noise`` [N·m] on the measurements. Several units differ by up to ``unit_spread`` (a
    fraction, uniform) in every parameter but the delay. Returns ``{unit: truth}``."""
    from ..actuators.models import DCMotorCfg

    truth = dict(EXAMPLE_TRUTH if truth is None else truth)
    root = output_dir(out)
    text = EXAMPLE_BENCH.format(timestep=float(timestep))
    write_atomic(root / "bench.xml", text)
    bench = Bench(text, "hinge")
    rng = np.random.default_rng(seed)
    units_truth = {}
    for u in range(units):
        name = f"unit_{u}"
        scale = 1.0 + (rng.uniform(-unit_spread, unit_spread, size=len(truth)) if units > 1 else np.zeros(len(truth)))
        t_u = {k: (v if k == "delay" else float(v * s)) for (k, v), s in zip(truth.items(), scale)}
        units_truth[name] = t_u
        cfg = DCMotorCfg(joint_names_expr=["hinge"], stiffness=1.0, damping=0.0, saturation_effort=1.0,
                         actuator_effort_limit=1.0, actuator_velocity_limit=1.0, min_delay=t_u["delay"], max_delay=t_u["delay"])
        folder = output_dir(root, name)
        for k in range(logs_per_unit):
            cmd = _example_commands(rng, seconds, bench.dt, k)
            log = MotorLog(folder, name, bench.dt, cmd, np.zeros_like(cmd), np.zeros_like(cmd), None)
            sim = bench.simulate(cfg, {p: [v] for p, v in t_u.items() if p != "delay"}, [log])
            n = len(cmd)
            table = np.column_stack([np.arange(n) * bench.dt, cmd, sim["joint_pos"][0] + rng.normal(0, pos_noise, n),
                                     sim["joint_vel"][0] + rng.normal(0, vel_noise, n), sim["effort"][0] + rng.normal(0, effort_noise, n)])
            lines = ["time,target_pos,joint_pos,joint_vel,effort"] + [",".join(f"{x:.9g}" for x in row) for row in table]
            write_atomic(folder / f"log_{k}.csv", "\n".join(lines) + "\n")
    return units_truth


def main(argv: Sequence[str] | None = None) -> int:
    """``actuator-gym bench-logs OUT [--units N]``: :func:`write_example_logs`."""
    from .options import OneLineParser

    p = OneLineParser(prog="actuator-gym bench-logs", description=(
        "Write the identification example (docs/identify.md): OUT/bench.xml and OUT/unit_<k>/log_<j>.csv, "
        "4 logs of 8 s each per unit, simulated from the motor EXAMPLE_TRUTH with encoder noise."))
    p.add_argument("out", help="output folder")
    p.add_argument("--units", type=int, default=1, help="motor units, 1..16 (each its own folder; default 1)")
    p.add_argument("--seed", type=int, default=0, help="the noise, command and unit-spread seed (default 0)")
    args = p.parse_args(argv)
    if not 1 <= args.units <= 16:
        p.error(f"--units must be in 1..16, got {args.units}")
    truth = write_example_logs(args.out, units=args.units, seed=args.seed)
    print(f"wrote {Path(args.out) / 'bench.xml'} and {len(truth)} unit folder(s) of logs; the motor: {truth}")
    return 0
