"""Vector-env throughput: actuator-gym's batched tasks against Gymnasium, envpool and the raw physics.

One run, three comparisons, every variant measured side by side in alternating rounds (medians):

  (a) the bundled quadruped (``actuator_gym/Quadruped-v0``, its default DC motor + 0..2 substep
      delay actuators, 4 substeps per step), native batched (``gymnasium.make_vec``) versus
      Gymnasium's ``SyncVectorEnv`` of N single envs (``gymnasium.make("actuator_gym/Quadruped-v0")``);
  (b) ``actuator_gym/Ant-v0`` (Gymnasium's own ``ant.xml``, Ant-v5 observation/reward/termination
      without contact forces, DC motor + 0..1 substep delay actuators at every one of the 5
      substeps) versus envpool's ``Ant-v5`` (ideal torques) with the same observation
      (``use_contact_force=False``, ``contact_cost_weight=0``) and with its defaults (105-float
      observation, contact cost) -- envpool is an optional peer, skipped cleanly when absent;
  (d) native execution (``execution="native"``: the actuators as MuJoCo's own, one
      ``Batch.step(nstep=decimation)`` per control step) versus the raw physics of the same native
      model and per-world fields, replaying recorded states of a native run (the same contacts and
      actuator work; ``raw native replay``), and versus the explicit task (``[native] / batched``);
  (c) both versus the raw ``mujoco.batch`` physics-only rate of the same model and substeps
      (``Batch.step(nstep=decimation)``: no actuators, no observation, no resets -- the CPU limit),
      plus two references: the same batch stepped one substep per call (the closed loop's call
      pattern) and ``mujoco.rollout``'s persistent 2-thread pool (``nstep=decimation``).

Thread settings (all stated in the output): every tool that takes threads gets 2 -- our tasks'
``mujoco.batch`` pool (``nthread=2``), the raw batch and rollout pools, envpool (``num_threads=2``).
``SyncVectorEnv`` steps its envs one after another in the calling thread (each single env is a
1-world batch, ``nthread=1``). torch runs on 1 thread (``torch.set_num_threads(1)``): on CPU the
actuator math runs in numpy on views of torch buffers, torch only holds them; BLAS/OpenMP pools
are set to 1 thread before numpy loads.

Actions: uniform random in ``[-1, 1]`` per joint, pre-drawn, the same sequence for every variant
of a row (quadruped: ``[-1, 1]`` action units = targets within 1 rad of the default pose; Ant:
``[-1, 1]`` = torque commands up to 150 N·m). Envs reset themselves (NEXT_STEP autoreset) in
every variant that has episodes.

    .venv/bin/python benchmarks/vector_throughput.py                 # full run (~2-3 min on 2 cores)
    .venv/bin/python benchmarks/vector_throughput.py --rounds 3 --quad-n 64 --ant-n 64   # quicker

Prints env steps/s and substeps/s (world-substeps per second), medians over ``--rounds``
alternating rounds of about ``--seconds`` each per variant, the ratios, and which goals are met.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from typing import Callable  # noqa: E402

import gymnasium as gym  # noqa: E402
import mujoco  # noqa: E402
import mujoco.batch  # noqa: E402
import mujoco.rollout  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import actuator_gym  # noqa: E402,F401  (registers the ids)

THREADS = 2
QUAD_ID = "actuator_gym/Quadruped-v0"
ANT_ID = "actuator_gym/Ant-v0"


# -- variants: each is (label, step_fn(i), close_fn) measured in env steps ----------------------
class Variant:
    def __init__(self, label: str, num_envs: int, decimation: int, step: Callable[[int], None], close=None):
        self.label, self.num_envs, self.decimation, self.step, self.close = label, num_envs, decimation, step, close
        self.calls = 1
        self.rates: list[float] = []

    def calibrate(self, seconds: float) -> None:
        self.step(0)  # warm-up
        t = time.perf_counter()
        k = 0
        while time.perf_counter() - t < 0.15 or k < 2:
            self.step(k)
            k += 1
        per_call = (time.perf_counter() - t) / k
        self.calls = max(2, int(seconds / per_call))

    def round(self, offset: int) -> None:
        t = time.perf_counter()
        for i in range(self.calls):
            self.step(offset + i)
        self.rates.append(self.num_envs * self.calls / (time.perf_counter() - t))

    @property
    def median(self) -> float:
        return statistics.median(self.rates)


def measure(variants: list[Variant], rounds: int, seconds: float) -> None:
    for v in variants:
        v.calibrate(seconds)
    for r in range(rounds):
        order = variants if r % 2 == 0 else variants[::-1]  # alternate the order too
        for v in order:
            v.round(r * 1000)


def actions(rng: np.random.Generator, n: int, dim: int, k: int = 32) -> np.ndarray:
    return rng.uniform(-1.0, 1.0, size=(k, n, dim))


def native(task_id: str, n: int, acts: np.ndarray, execution: str = "explicit") -> Variant:
    env = gym.make_vec(task_id, num_envs=n, nthread=THREADS, execution=execution)
    env.reset(seed=0)
    label = "actuator-gym batched" + ("" if execution == "explicit" else " [native]")
    return Variant(label, n, env.decimation, lambda i: env.step(acts[i % len(acts)]), env.close)


REPLAY = ("qpos", "qvel", "act", "history", "ctrl", "qacc_warmstart", "time")
"""The physics state a replay writes back before each step (everything the step reads)."""


def raw_native_replay(task_id: str, n: int, acts: np.ndarray, steps: int = 256, warmup: int = 300) -> Variant:
    """The raw physics of the native task's own batch (its model with the native actuators, its
    per-world fields): a native run with the variant's actions is recorded for ``steps`` control
    steps after ``warmup`` steps (by then the envs have fallen and reset at different times, as in
    the measured rounds: the first steps after a reset, all robots standing, have fewer contacts),
    then every call writes one recorded state back and runs ``Batch.step(nstep=decimation)`` -- the
    same contacts and the same actuator work, without observation, reward, actions or telemetry."""
    env = gym.make_vec(task_id, num_envs=n, nthread=THREADS, execution="native")
    env.reset(seed=0)
    be = env.backend
    views = {f: be.field(f) for f in REPLAY}
    rec = []
    for i in range(warmup):
        env.step(acts[i % len(acts)])
    for i in range(warmup, warmup + steps):
        rec.append({f: np.array(v) for f, v in views.items()})
        env.step(acts[i % len(acts)])
    b, dec = be.batch, env.decimation

    def step(i):
        r = rec[i % steps]
        for f, v in views.items():
            v[...] = r[f]
        b.step(nstep=dec)

    return Variant(f"raw native replay step({dec})", n, dec, step, env.close)


def sync_vector(task_id: str, n: int, acts: np.ndarray) -> Variant:
    env = gym.vector.SyncVectorEnv([lambda: gym.make(task_id) for _ in range(n)])
    env.reset(seed=0)
    dec = env.envs[0].unwrapped.task.decimation
    return Variant("Gymnasium SyncVectorEnv", n, dec, lambda i: env.step(acts[i % len(acts)]), env.close)


def raw_batch(model: mujoco.MjModel, n: int, decimation: int, per_substep: bool) -> Variant:
    b = mujoco.batch.Batch(model, n, nthread=THREADS)
    b.reset()
    if per_substep:
        def step(i):
            for _ in range(decimation):
                b.step(nstep=1)
        label = f"raw mujoco.batch {decimation}x step(1)"
    else:
        def step(i):
            b.step(nstep=decimation)
        label = f"raw mujoco.batch step({decimation})"
    return Variant(label, n, decimation, step)


def raw_rollout(model: mujoco.MjModel, n: int, decimation: int) -> Variant:
    pool = mujoco.rollout.Rollout(nthread=THREADS)
    datas = [mujoco.MjData(model) for _ in range(THREADS)]
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    size = mujoco.mj_stateSize(model, spec)
    state = np.empty((n, size))
    mujoco.mj_getState(model, datas[0], state[0], spec)
    state[:] = state[0]
    out = np.empty((n, decimation, size))
    sens = np.empty((n, decimation, model.nsensordata))
    models = [model] * n

    def step(i):
        pool.rollout(models, datas, state, None, nstep=decimation, skip_checks=True, state=out, sensordata=sens)
        state[:] = out[:, -1]

    return Variant(f"raw mujoco.rollout step({decimation})", n, decimation, step, pool.close)


def envpool_ant(n: int, acts: np.ndarray, matched: bool) -> Variant | None:
    try:
        import envpool
    except ImportError:
        return None
    kw = dict(use_contact_force=False, contact_cost_weight=0.0) if matched else {}
    env = envpool.make("Ant-v5", env_type="gymnasium", num_envs=n, batch_size=n, num_threads=THREADS, seed=0, **kw)
    env.reset()
    label = "envpool Ant-v5 (same obs)" if matched else "envpool Ant-v5 (defaults)"
    return Variant(label, n, 5, lambda i: env.step(acts[i % len(acts)]), env.close)


def fmt(x: float) -> str:
    return f"{x / 1e3:.2f}k"


def table(title: str, rows: list[tuple[int, list[Variant]]], ref_label: str, ratios: list[tuple[str, str]]) -> None:
    print(f"\n{title}")
    labels = [v.label for v in rows[0][1]]
    print("| N | " + " | ".join(labels) + " | " + " | ".join(f"{a} / {b}" for a, b in ratios) + " |")
    print("| --- " * (1 + len(labels) + len(ratios)) + "|")
    for n, vs in rows:
        by = {v.label: v for v in vs}
        cells = [f"{fmt(v.median)} ({fmt(v.median * v.decimation)})" for v in vs]
        rs = [f"{by[a].median / by[b].median:.2f}" if a in by and b in by else "-" for a, b in ratios]
        print(f"| {n} | " + " | ".join(cells) + " | " + " | ".join(rs) + " |")
    print("cells: env steps/s (world-substeps/s), medians;", ref_label)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quad-n", type=int, nargs="*", default=[16, 64, 256], help="batch sizes for (a)")
    p.add_argument("--ant-n", type=int, nargs="*", default=[64, 256], help="batch sizes for (b)")
    p.add_argument("--rounds", type=int, default=7, help="alternating rounds (medians are quoted)")
    p.add_argument("--seconds", type=float, default=0.4, help="approximate length of one round of one variant [s]")
    p.add_argument("--no-envpool", action="store_true", help="skip the envpool peer")
    args = p.parse_args()

    torch.set_num_threads(1)
    try:
        import envpool

        ep_version = envpool.__version__
    except ImportError:
        ep_version = None
    print(
        f"threads: mujoco.batch / rollout / envpool = {THREADS}; SyncVectorEnv = 1 (sequential); "
        f"torch.set_num_threads(1) (numpy actuator path); OMP/OPENBLAS/MKL = {os.environ['OMP_NUM_THREADS']}"
    )
    print(
        f"versions: mujoco {mujoco.__version__}, gymnasium {gym.__version__}, numpy {np.__version__}, "
        f"torch {torch.__version__}, envpool {ep_version or 'not installed (peer skipped)'}; "
        f"cpus {os.cpu_count()}, load average {os.getloadavg()[0]:.1f} at start"
    )
    rng = np.random.default_rng(0)
    goals: list[tuple[str, float, float]] = []

    # (a) quadruped
    quad_rows = []
    from actuator_gym.tasks.quadruped import QuadrupedCfg

    qcfg = QuadrupedCfg()
    qmodel = mujoco.MjModel.from_xml_string(qcfg.model_xml())
    qmodel.opt.timestep = qcfg.physics_dt
    for n in args.quad_n:
        acts = actions(rng, n, 12)
        vs = [native(QUAD_ID, n, acts), sync_vector(QUAD_ID, n, acts), raw_batch(qmodel, n, qcfg.decimation, False),
              native(QUAD_ID, n, acts, "native"), raw_native_replay(QUAD_ID, n, acts)]
        measure(vs, args.rounds, args.seconds)
        quad_rows.append((n, vs))
        for v in vs:
            if v.close:
                v.close()
        print(f"  (a) N={n} done", flush=True)
    nat, syn, raw = "actuator-gym batched", "Gymnasium SyncVectorEnv", f"raw mujoco.batch step({qcfg.decimation})"
    nn, qrep = "actuator-gym batched [native]", f"raw native replay step({qcfg.decimation})"
    table(
        "(a) Quadruped-v0 (DC motor + delay), 4 substeps per env step",
        quad_rows,
        "raw = physics only, same model",
        [(nat, syn), (nat, raw), (nn, qrep), (nn, nat)],
    )
    for n, vs in quad_rows:
        by = {v.label: v for v in vs}
        if n == 64:
            goals.append(("(a) batched >= 3x SyncVectorEnv at N=64", by[nat].median / by[syn].median, 3.0))
        goals.append((f"(d) Quadruped-v0 native >= 0.95x its raw replay at N={n}", by[nn].median / by[qrep].median, 0.95))

    # (b) + (c) Ant
    from actuator_gym.tasks.ant import AntCfg

    acfg = AntCfg()
    amodel = mujoco.MjModel.from_xml_string(acfg.model_xml())
    amodel.opt.timestep = acfg.physics_dt
    ant_rows = []
    for n in args.ant_n:
        acts = actions(rng, n, 8)
        vs = [native(ANT_ID, n, acts), native(ANT_ID, n, acts, "native"), raw_native_replay(ANT_ID, n, acts)]
        if not args.no_envpool and ep_version:
            vs += [envpool_ant(n, acts, True), envpool_ant(n, acts, False)]
        vs += [
            raw_batch(amodel, n, acfg.decimation, False),
            raw_batch(amodel, n, acfg.decimation, True),
            raw_rollout(amodel, n, acfg.decimation),
        ]
        measure(vs, args.rounds, args.seconds)
        ant_rows.append((n, vs))
        for v in vs:
            if v.close:
                v.close()
        print(f"  (b, c) N={n} done", flush=True)
    ep = "envpool Ant-v5 (same obs)"
    araw = f"raw mujoco.batch step({acfg.decimation})"
    rr = f"raw mujoco.rollout step({acfg.decimation})"
    arep = f"raw native replay step({acfg.decimation})"
    table(
        "(b, c) Ant-v0 (DC motor + delay, 5 substeps) vs envpool Ant-v5 (ideal torques) vs raw physics",
        ant_rows,
        "raw = physics only (no actuators, no observation), same model and substeps",
        [(nat, ep), (nat, araw), (nat, rr), (ep, araw), (nn, arep), (nn, nat)],
    )
    for n, vs in ant_rows:
        by = {v.label: v for v in vs}
        if n == 64 and ep in by:
            goals.append(("(b) Ant-v0 >= 0.85x envpool Ant-v5 at N=64", by[nat].median / by[ep].median, 0.85))
        if n == 256:
            goals.append(("(c) Ant-v0 >= 0.7x raw mujoco.batch at N=256", by[nat].median / by[araw].median, 0.7))
        goals.append((f"(d) Ant-v0 native >= 0.95x its raw replay at N={n}", by[nn].median / by[arep].median, 0.95))
    for n, vs in quad_rows:
        if n == 256:
            by = {v.label: v for v in vs}
            goals.append(("(c) Quadruped-v0 >= 0.7x raw mujoco.batch at N=256", by[nat].median / by[raw].median, 0.7))

    print("\ngoals (medians; shared machine, see the load average):")
    for what, got, want in goals:
        print(f"  {what}: {got:.2f} -> {'met' if got >= want else 'MISSED'}")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
