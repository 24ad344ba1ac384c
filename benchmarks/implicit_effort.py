"""Cost of the implicit (Stable-PD) effort mode against the explicit one, measured side by side.

    python benchmarks/implicit_effort.py [--rounds 5] [--envs 1 64]

For the pendulum and Ant batched tasks (``num_envs`` from ``--envs``) and for ``ActuatorWrapper`` on
Reacher-v5 and Ant-v5, each round times the same IdealPD group (kp 20, kd 2) in explicit and in
implicit effort mode, one after the other; the table shows median microseconds per physics substep
and the median of the per-round ratios implicit / explicit. The last rows time the batched MuJoCo
backend's ``mass_matrix_terms`` (Ant, all 8 hinges) on top of a plain ``step``.

Measured numbers and their history: docs/neural.md ("Cost").
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from actuator_gym import IdealPDActuatorCfg  # noqa: E402
from actuator_gym.tasks.ant import AntTask  # noqa: E402
from actuator_gym.tasks.pendulum import PendulumTask  # noqa: E402
from actuator_gym.wrappers import ActuatorWrapper  # noqa: E402


def pd(mode: str) -> IdealPDActuatorCfg:
    return IdealPDActuatorCfg(joint_names_expr=[".*"], stiffness=20.0, damping=2.0, effort_mode=mode)


def task_timer(cls, n: int, mode: str, steps: int):
    t = cls(num_envs=n, seed=0, actuators={"all": pd(mode)})
    t.reset(seed=0)
    a = np.zeros((n, t.num_actions), np.float32)
    t.step(a)

    def run() -> float:
        t0 = time.perf_counter()
        for _ in range(steps):
            t.step(a)
        return (time.perf_counter() - t0) / (steps * t.decimation) * 1e6

    return run


def wrapper_timer(env_id: str, mode: str, steps: int):
    env = ActuatorWrapper(gym.make(env_id), actuators={"all": pd(mode)})
    env.reset(seed=0)
    a = np.zeros(env.action_space.shape, np.float32)

    def run() -> float:
        t0 = time.perf_counter()
        for _ in range(steps):
            _, _, term, trunc, _ = env.step(a)
            if term or trunc:
                env.reset(seed=0)
        return (time.perf_counter() - t0) / (steps * env.unwrapped.frame_skip) * 1e6

    return run


def backend_timer(n: int, with_terms: bool, steps: int = 50):
    t = AntTask(num_envs=n, seed=0, actuators={"all": pd("implicit")})
    be, ids = t.backend, np.arange(len(t.backend.joints))

    def run() -> float:
        t0 = time.perf_counter()
        for _ in range(steps):
            be.step(derived=with_terms)
            if with_terms:
                be.mass_matrix_terms(ids)
        return (time.perf_counter() - t0) / steps * 1e6

    return run


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--envs", type=int, nargs="+", default=[1, 64])
    args = p.parse_args()
    warnings.simplefilter("ignore")
    pairs = []
    for n in args.envs:
        for cls, steps in ((PendulumTask, 20), (AntTask, 10 if n < 64 else 4)):
            pairs.append((f"{cls.__name__} N={n}", task_timer(cls, n, "explicit", steps), task_timer(cls, n, "implicit", steps)))
    for env_id in ("Reacher-v5", "Ant-v5"):
        pairs.append((f"wrapper {env_id}", wrapper_timer(env_id, "explicit", 20), wrapper_timer(env_id, "implicit", 20)))
    for n in args.envs:
        pairs.append((f"Ant batch step N={n} (+terms)", backend_timer(n, False), backend_timer(n, True)))
    print(f"{'case':<32} {'explicit us':>12} {'implicit us':>12} {'ratio':>7}   (per substep, medians of {args.rounds})")
    for label, a, b in pairs:
        ta, tb, ratio = [], [], []
        for _ in range(args.rounds):
            x, y = a(), b()
            ta.append(x), tb.append(y), ratio.append(y / x)
        print(f"{label:<32} {statistics.median(ta):12.0f} {statistics.median(tb):12.0f} {statistics.median(ratio):7.2f}")


if __name__ == "__main__":
    main()
