"""Closed-loop batched MuJoCo stepping on CPU: which engine call should MujocoBatchBackend use?

Every variant runs the same closed loop per substep for N worlds: read qpos/qvel, compute a PD
effort for all worlds in one numpy expression, write it as qfrc_applied, advance one substep.

  batch-1 / batch-2   mujoco.batch.Batch(persistent=False, nthread=1 / 2), step() (the backend's
                      intermediate substeps; the last substep of a control step adds stage=VEL)
  batch-1p            Batch(persistent=True, nthread=1), step(stage=VEL) every substep
  rollout-2           mujoco.rollout.Rollout(nthread=2) (persistent pool), rollout(nstep=1)
  loop                Python loop of mj_step over per-world MjData
  backend             MujocoBatchBackend + ActuatorCollection (IdealPD), i.e. what tasks run

Prints substeps/s (world-substeps per second, summed over worlds), medians of --repeats, and each
variant's ratio to the fastest, measured side by side in one run.

    .venv/bin/python benchmarks/batched_backend.py [--models pendulum ant] [--num-envs 1 16 64 256]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import mujoco
import mujoco.batch
import mujoco.rollout
import numpy as np


def load(name: str) -> mujoco.MjModel:
    if name == "pendulum":
        from actuator_gym.tasks.pendulum import PendulumCfg, pendulum_mjcf

        return mujoco.MjModel.from_xml_string(pendulum_mjcf(PendulumCfg()))
    import gymnasium

    path = os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets", f"{name}.xml")
    return mujoco.MjModel.from_xml_path(path)


def hinge_adr(m):
    j = [i for i in range(m.njnt) if int(m.jnt_type[i]) in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))]
    return np.array([m.jnt_qposadr[i] for i in j], dtype=int), np.array([m.jnt_dofadr[i] for i in j], dtype=int)


def pd(q, qd):
    return np.clip(20.0 * (0.3 - q) - 1.0 * qd, -5.0, 5.0)


def run_batch(m, n, steps, nthread, persistent=False):
    qa, da = hinge_adr(m)
    b = mujoco.batch.Batch(m, n, nthread=nthread, persistent=persistent)
    qpos, qvel, f = b.bind("qpos"), b.bind("qvel"), b.bind("qfrc_applied")
    stage = int(mujoco.mjtStage.mjSTAGE_VEL) if persistent else 0
    b.reset(stage=stage)
    t = time.perf_counter()
    for _ in range(steps):
        f[:, da] = pd(qpos[:, qa], qvel[:, da])
        b.step(stage=stage)
    return n * steps / (time.perf_counter() - t)


def run_rollout(m, n, steps, nthread=2):
    qa, da = hinge_adr(m)
    d = [mujoco.MjData(m) for _ in range(nthread)]
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    size = mujoco.mj_stateSize(m, spec)
    state = np.empty((n, size))
    mujoco.mj_getState(m, d[0], state[0], spec)
    state[:] = state[0]
    qoff = 1  # time first, then qpos, qvel
    voff = 1 + m.nq
    nctl = mujoco.mj_stateSize(m, mujoco.mjtState.mjSTATE_QFRC_APPLIED)
    ctrl = np.zeros((n, 1, nctl))
    out = np.empty((n, 1, size))
    sens = np.empty((n, 1, m.nsensordata))
    models = [m] * n  # skip_checks wants one model per world
    spec_ctl = int(mujoco.mjtState.mjSTATE_QFRC_APPLIED)
    with mujoco.rollout.Rollout(nthread=nthread) as r:
        t = time.perf_counter()
        for _ in range(steps):
            ctrl[:, 0, da] = pd(state[:, qoff + qa], state[:, voff + da])
            r.rollout(models, d, state, ctrl, control_spec=spec_ctl, nstep=1,
                      state=out, sensordata=sens, skip_checks=True)
            state[:] = out[:, 0]
        return n * steps / (time.perf_counter() - t)


def run_loop(m, n, steps):
    qa, da = hinge_adr(m)
    ds = [mujoco.MjData(m) for _ in range(n)]
    qpos, qvel = np.zeros((n, m.nq)), np.zeros((n, m.nv))
    t = time.perf_counter()
    for _ in range(steps):
        for i, d in enumerate(ds):
            qpos[i], qvel[i] = d.qpos, d.qvel
        f = pd(qpos[:, qa], qvel[:, da])
        for i, d in enumerate(ds):
            d.qfrc_applied[da] = f[i]
            mujoco.mj_step(m, d)
    return n * steps / (time.perf_counter() - t)


def run_backend(m, n, steps):
    from actuator_gym import ActuatorCollection, IdealPDActuatorCfg
    from actuator_gym.backends.mujoco_batch import MujocoBatchBackend

    be = MujocoBatchBackend(m, n)
    coll = ActuatorCollection({"all": IdealPDActuatorCfg(stiffness=20.0, damping=1.0, actuator_effort_limit=5.0)},
                              joint_names=be.joint_names, num_envs=n, seed=0)
    coll.target_command.set_position_index(value=0.3)
    applied = coll.applied_effort.numpy()
    t = time.perf_counter()
    for _ in range(steps):
        coll.compute(joint_pos=be.joint_pos(), joint_vel=be.joint_vel(), dt=be.physics_dt)
        be.set_joint_effort(applied)
        be.step()
    return n * steps / (time.perf_counter() - t)


VARIANTS = {
    "batch-1": lambda m, n, s: run_batch(m, n, s, 1),
    "batch-2": lambda m, n, s: run_batch(m, n, s, 2),
    "batch-1p": lambda m, n, s: run_batch(m, n, s, 1, persistent=True),
    "rollout-2": lambda m, n, s: run_rollout(m, n, s, 2),
    "loop": run_loop,
    "backend": run_backend,
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=["pendulum", "ant"])
    ap.add_argument("--num-envs", nargs="+", type=int, default=[1, 16, 64, 256])
    ap.add_argument("--world-substeps", type=int, default=60_000, help="world-substeps per measurement")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    print(f"mujoco {mujoco.__version__}, {os.cpu_count()} CPUs; substeps/s (median of {args.repeats}); ratio to best")
    for name in args.models:
        m = load(name)
        for n in args.num_envs:
            steps = max(20, args.world_substeps // n)
            res = {}
            for _ in range(args.repeats):  # interleaved repeats
                for v, fn in VARIANTS.items():
                    res.setdefault(v, []).append(fn(m, n, steps))
            med = {v: statistics.median(x) for v, x in res.items()}
            best = max(med.values())
            row = "  ".join(f"{v} {med[v] / 1e3:7.1f}k ({med[v] / best:.2f})" for v in VARIANTS)
            print(f"{name:9s} N={n:4d}  {row}")


if __name__ == "__main__":
    main()
