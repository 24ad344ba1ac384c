"""Golden rollouts: every bundled task (explicit and native execution) and the Ant-v5 wrapper, for
fixed seeds and seeded actions, replayed against trajectories recorded in ``tests/data/golden/``.

They pin the observable behaviour (observations, rewards, terminations, applied efforts) so that a
restructuring of the runtime (one rig under the wrapper and the tasks) must reproduce it. Recorded
on this project's CI machine kind; the test compares bit for bit (``np.array_equal``), and the
recorder prints where a fresh rollout first differs.

Re-record only when a change of behaviour is intended, and say which in the commit::

    .venv/bin/python tests/test_golden_rollouts.py --record      # writes tests/data/golden/*.npz
    .venv/bin/python tests/test_golden_rollouts.py --check       # compares, prints the first difference
"""

from __future__ import annotations

import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import actuator_gym  # noqa: F401  (registers the ids)
from actuator_gym import DCMotorCfg
from actuator_gym.wrappers import ActuatorWrapper

GOLDEN = Path(__file__).resolve().parent / "data" / "golden"
NUM_ENVS, STEPS = 3, 100

TASKS = {
    "pendulum": "actuator_gym/Pendulum-v0",
    "quadruped": "actuator_gym/Quadruped-v0",
    "ant": "actuator_gym/Ant-v0",
    "quadrotor": "actuator_gym/Quadrotor-v0",
}
# The quadrotor's rotor groups run explicitly whatever execution says, so it is recorded once.
CASES = [f"{t}-{ex}" for t in TASKS for ex in ("explicit", "native") if (t, ex) != ("quadrotor", "native")]
CASES += ["ant_v5_wrapper-explicit", "ant_v5_wrapper-native"]


def _wrapper_rollout(execution: str) -> dict[str, np.ndarray]:
    legs = DCMotorCfg(joint_names_expr=[".*"], stiffness=40.0, damping=1.0, saturation_effort=120.0,
                      actuator_effort_limit=80.0, actuator_velocity_limit=12.0, min_delay=0, max_delay=2)
    env = ActuatorWrapper(gym.make("Ant-v5"), actuators={"legs": legs}, action_mode="position", execution=execution)
    env.action_space.seed(7)
    obs, _ = env.reset(seed=5)
    rows = {"obs": [obs], "reward": [], "terminated": [], "truncated": [], "applied_effort": []}
    for _ in range(STEPS):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        for k, v in (("obs", obs), ("reward", reward), ("terminated", terminated), ("truncated", truncated),
                     ("applied_effort", info["actuator"]["applied_effort"])):
            rows[k].append(np.asarray(v))
        if terminated or truncated:
            obs, _ = env.reset()
    env.close()
    return {k: np.stack(v) for k, v in rows.items()}


def _task_rollout(task: str, execution: str) -> dict[str, np.ndarray]:
    env = gym.make_vec(TASKS[task], num_envs=NUM_ENVS, execution=execution)
    env.action_space.seed(7)
    obs, _ = env.reset(seed=5)
    rows = {"obs": [obs], "reward": [], "terminated": [], "truncated": [], "applied_effort": []}
    for _ in range(STEPS):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        effort = info["actuator"].get("applied_effort", info["actuator"].get("applied_thrust"))  # joints or rotors
        for k, v in (("obs", obs), ("reward", reward), ("terminated", terminated), ("truncated", truncated),
                     ("applied_effort", effort)):
            rows[k].append(np.asarray(v))
    env.close()
    return {k: np.stack(v) for k, v in rows.items()}


def rollout(case: str) -> dict[str, np.ndarray]:
    name, execution = case.rsplit("-", 1)
    return _wrapper_rollout(execution) if name == "ant_v5_wrapper" else _task_rollout(name, execution)


def first_difference(case: str) -> str | None:
    """``None`` when a fresh rollout equals the recording bit for bit, else where it first differs."""
    with np.load(GOLDEN / f"{case}.npz", allow_pickle=False) as recorded:
        fresh = rollout(case)
        for key in recorded.files:
            a, b = recorded[key], fresh[key]
            if a.shape != b.shape:
                return f"{case}: {key} shape {b.shape}, recorded {a.shape}"
            if not np.array_equal(a, b):
                step = int(np.argwhere(a != b)[0][0])
                return f"{case}: {key} first differs at step {step} (max |diff| {np.max(np.abs(a - b)):.3g})"
    return None


@pytest.mark.parametrize("case", CASES)
def test_rollout_equals_the_recording(case):
    assert first_difference(case) is None


if __name__ == "__main__":
    if "--record" in sys.argv:
        GOLDEN.mkdir(parents=True, exist_ok=True)
        for c in CASES:
            np.savez_compressed(GOLDEN / f"{c}.npz", **rollout(c))
            print("recorded", c)
    else:
        for c in CASES:
            print(first_difference(c) or f"{c}: identical")
