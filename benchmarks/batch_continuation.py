"""What the derived pass costs a batched task, and whether MuJoCo 4's step continuation removes it.

After a control step the tasks need the position- and velocity-dependent fields (``xpos``,
``xmat``, ...) at the new state: ``MujocoBatchBackend`` (non-persistent ``mujoco.batch.Batch``)
runs that pass inside the last substep's call (``stage=VEL``, the explicit path) or as a
``forward(stage=VEL)`` after the native path's single ``step(nstep=S)`` (whose last substep's
actuator outputs the native telemetry reads first). A persistent batch (``persistent=True``)
continues its next step from a ``step(..., stage=VEL)`` with ``mj_step2``, so the pass is free
there -- but each world then keeps its own ``MjData``.

Every variant replays the same recorded states of the task (a native run under random actions,
so the contacts are those of the task), one control step of S substeps per call, in one process,
rounds alternating the batch order; ms per control step (all worlds), medians, and the ratio to
the raw physics (non-persistent ``step(nstep=S)``, no derived pass: what ``vector_throughput.py``
calls the raw native replay):

  raw                  step(nstep=S)
  native (backend)     step(nstep=S); forward(stage=VEL)
  native, one call     step(nstep=S, stage=VEL)  (overwrites the last substep's actuator_length / _velocity)
  native, two calls    step(nstep=S - 1); step(nstep=1, stage=VEL)  (the last substep's lengths readable in between)
  explicit (backend)   S - 1 x step(nstep=1); step(nstep=1, stage=VEL)  (our efforts written before each)

It also checks that the persistent two-call pattern gives the backend's states bit for bit.

    .venv/bin/python benchmarks/batch_continuation.py --task actuator_gym/Quadruped-v0 --num-envs 256 1024
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings

import gymnasium as gym
import mujoco
import mujoco.batch
import numpy as np

import actuator_gym  # noqa: F401  (registers the tasks)

STATE = ("qpos", "qvel", "act", "ctrl", "history", "time", "qacc_warmstart", "qfrc_applied")
"""What a replay writes back before each call (everything a step reads)."""
VEL = int(mujoco.mjtStage.mjSTAGE_VEL)


def patterns(S: int) -> dict:
    return {
        "raw": lambda b: b.step(nstep=S),
        "native (backend)": lambda b: (b.step(nstep=S), b.forward(stage=VEL)),
        "native, one call": lambda b: b.step(nstep=S, stage=VEL),
        "native, two calls": lambda b: (b.step(nstep=S - 1), b.step(nstep=1, stage=VEL)),
        "explicit (backend)": lambda b: ([b.step(nstep=1) for _ in range(S - 1)], b.step(nstep=1, stage=VEL)),
    }


def recorded_states(task: str, n: int, steps: int = 60):
    env = gym.make_vec(task, num_envs=n, vectorization_mode="vector_entry_point", execution="native")
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    be = env.unwrapped.backend
    for _ in range(steps):
        env.step(rng.uniform(-0.4, 0.4, env.action_space.shape).astype(np.float32))
    state = {f: be.batch.bind(f).copy() for f in STATE}
    return be.model, be.batch.nthread, env.unwrapped.decimation, state


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="actuator_gym/Quadruped-v0")
    ap.add_argument("--num-envs", type=int, nargs="+", default=[256, 1024])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=10, help="control steps per timed round")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    print("load average (1, 5, 15 min): %.2f %.2f %.2f" % os.getloadavg())
    for n in args.num_envs:
        model, nthread, S, state = recorded_states(args.task, n)
        batches = {"non-persistent": mujoco.batch.Batch(model, n, nthread=nthread),
                   "persistent": mujoco.batch.Batch(model, n, nthread=nthread, persistent=True)}
        for b in batches.values():
            for f in ("xpos", "xmat", "actuator_length", "actuator_velocity", "actuator_force"):
                b.bind(f)  # derived fields bound, as a task binds them (an unbound field is not computed)

        def load(b):
            for f in STATE:
                b.bind(f)[...] = state[f]
            b.forward(stage=VEL)

        times: dict[tuple[str, str], list[float]] = {}
        for r in range(args.rounds):
            order = list(batches.items()) if r % 2 == 0 else list(batches.items())[::-1]
            for kind, b in order:
                for name, call in patterns(S).items():
                    load(b)
                    t = time.perf_counter()
                    for _ in range(args.calls):
                        call(b)
                    times.setdefault((kind, name), []).append((time.perf_counter() - t) / args.calls * 1e3)
        raw = statistics.median(times[("non-persistent", "raw")])
        print(f"\n{args.task}, N={n}, S={S} substeps, nthread={nthread}: ms per control step (ratio raw / variant)")
        print(f"{'pattern':22s} {'non-persistent':>20s} {'persistent':>20s}")
        for name in patterns(S):
            cells = [statistics.median(times[(k, name)]) for k in batches]
            print(f"{name:22s} " + " ".join(f"{c:12.2f} ({raw / c:4.2f})" for c in cells))
        a, p = batches["non-persistent"], batches["persistent"]
        load(a), load(p)
        backend_native, two_calls = patterns(S)["native (backend)"], patterns(S)["native, two calls"]
        for _ in range(5):
            backend_native(a), two_calls(p)
        same = all(np.array_equal(a.bind(f), p.bind(f)) for f in ("qpos", "qvel", "xpos", "xmat"))
        print(f"persistent two calls = the backend's native pattern bit for bit (qpos, qvel, xpos, xmat): {same}")
    print("load average (1, 5, 15 min): %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
