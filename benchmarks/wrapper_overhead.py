"""Env steps/s of Gymnasium MuJoCo envs with and without ``ActuatorWrapper``, measured side by side.

    python benchmarks/wrapper_overhead.py [--steps 300] [--rounds 21] [--envs Ant-v5 InvertedPendulum-v5]

MuJoCo's cost depends on what the robot does (an Ant flailing in the air under random torques has
fewer contacts than one standing on PD-held legs), so every wrapped variant is paired with a plain
baseline that produces comparable physics:

* ``same actions``: the wrapper in effort mode with zero gains reproduces the plain env exactly
  (same trajectory), so the ratio is the pure cost of the wrapper and actuator runtime;
* ``replayed torques``: the wrapped variant is rolled out once with random actions and its applied
  efforts are recorded; the plain baseline replays them as ``ctrl = effort / gear`` (clipped to
  ``ctrlrange``), so both envs do similar physics.

Each round runs ``--steps`` steps of the baseline, then of the variant (reset on episode end); the
table shows median steps/s and the median of the per-round ratios wrapped / plain (1.0 = free).

Rows marked ``[native]`` run the same groups with ``execution="native"`` (MuJoCo's own actuators,
one ``mj_step`` call per control step; docs/native.md); their baseline replays their own efforts.

The row ``... [native floor]`` bounds what any wrapper of the delayed native variant can reach: a
bare ``gymnasium.Wrapper`` over the same native model that, per step, writes the controls the
wrapper wrote at that step (recorded: no action mapping, no check), steps the physics in one
``mj_step`` call and copies the native force, velocity and the joint state once (no telemetry
arithmetic, no episode statistics, no delay prefill at reset); its baseline is the wrapper's.
``... [native eager]``: the same wrapper computing the native commanded torque at every step
(``engine.defer_native_telemetry = False``) instead of when ``info["actuator"]`` is read.
The machine's load average is printed first: compare rows of one run only.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

import gymnasium as gym
import mujoco
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from actuator_gym import DCMotorCfg, DelayedPDActuatorCfg, IdealPDActuatorCfg  # noqa: E402
from actuator_gym.wrappers import ActuatorWrapper  # noqa: E402


def dc(expr=".*", **kw):
    return DCMotorCfg(joint_names_expr=[expr], stiffness=60.0, damping=1.5, saturation_effort=150.0,
                      actuator_velocity_limit=15.0, actuator_effort_limit=120.0, **kw)


def zero_gain(e):
    return ActuatorWrapper(e, actuators={"all": IdealPDActuatorCfg()}, action_mode="effort")


def _groups(env_id: str) -> dict:
    """``{name: groups}`` of the wrapped variants that take an ``execution`` (replayed-torque baselines)."""
    if env_id.startswith("Ant"):
        return {
            "DCMotor": lambda: {"legs": dc()},
            "DCMotor + delay U{0..2}": lambda: {"legs": dc(min_delay=0, max_delay=2)},
            "DCMotor hips + DelayedPD ankles U{0..4}": lambda: {
                "hips": dc("hip_.*"),
                "ankles": DelayedPDActuatorCfg(joint_names_expr=["ankle_.*"], stiffness=60.0, damping=1.5,
                                               actuator_effort_limit=120.0, min_delay=0, max_delay=4)},
        }
    return {
        "IdealPD": lambda: {"cart": IdealPDActuatorCfg(stiffness=200.0, damping=10.0, actuator_effort_limit=300.0)},
        "DelayedPD U{0..2}": lambda: {"cart": DelayedPDActuatorCfg(
            stiffness=200.0, damping=10.0, actuator_effort_limit=300.0, min_delay=0, max_delay=2)},
    }


def variants(env_id: str):
    """``{name: (make(env) -> wrapped env, baseline)}``: each group set explicit, then ``[native]``."""
    out = {"IdealPD effort mode, zero gains": (zero_gain, "same actions")}
    for execution, tag in (("explicit", ""), ("native", " [native]")):
        for name, groups in _groups(env_id).items():
            out[name + tag] = (lambda e, g=groups, x=execution: ActuatorWrapper(e, actuators=g(), execution=x),
                               "replayed torques")
    return out


def run(env, actions) -> float:
    env.reset(seed=0)
    t = time.perf_counter()
    for a in actions:
        _, _, term, trunc, _ = env.step(a)
        if term or trunc:
            env.reset()
    return len(actions) / (time.perf_counter() - t)


FLOOR_OF = {"Ant": "DCMotor + delay U{0..2} [native]", "InvertedPendulum": "DelayedPD U{0..2} [native]"}
"""The variant whose floor is measured, per env family."""


class NativeFloor(gym.Wrapper):
    """The least a wrapper of native actuators does per step (module doc): replays ``ctrls`` (the
    controls a native ``ActuatorWrapper`` wrote, one per step of the rollout; ``reset(seed=...)``
    starts them again), one ``mj_step(model, data, frame_skip)``, one copy of the telemetry rows."""

    def __init__(self, native_wrapper, ctrls: list[np.ndarray]):
        super().__init__(native_wrapper.env)
        base = native_wrapper.unwrapped  # its model and data are the native ones (installed by the wrapper)
        m, d = base.model, base.data

        def simulate(ctrl, n_frames):  # (Gymnasium's own method name, set on the instance as the wrapper does)
            mujoco.mj_step(m, d, n_frames)
            mujoco.mj_rnePostConstraint(m, d)

        base._step_mujoco_simulation = simulate
        n = len(native_wrapper.joint_names)
        self._rows = (d.actuator_force[m.nu - n:], d.actuator_velocity[m.nu - n:], d.qpos, d.qvel)
        self._ctrl, self._ctrls, self._i = d.ctrl, ctrls, 0
        self._zero = np.zeros(native_wrapper.action_space.shape)

    def step(self, action):
        self._ctrl[:] = self._ctrls[self._i % len(self._ctrls)]
        self._i += 1
        obs, reward, terminated, truncated, info = self.env.step(self._zero)
        info = dict(info)
        info["actuator"] = np.concatenate(self._rows)
        return obs, reward, terminated, truncated, info

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self._i = 0
        return self.env.reset(seed=seed, options=options)


def recorded(wrapped, actions, read) -> list[np.ndarray]:
    """``read(info)`` after each step of the rollout ``run`` makes of ``wrapped`` (the same resets)."""
    out = []
    wrapped.reset(seed=0)
    for a in actions:
        _, _, term, trunc, info = wrapped.step(a)
        out.append(read(info))
        if term or trunc:
            wrapped.reset()
    return out


def recorded_controls(wrapped, actions) -> list[np.ndarray]:
    """The wrapper's ``data.ctrl`` after each step of the rollout."""
    ctrl = wrapped.unwrapped.data.ctrl
    return recorded(wrapped, actions, lambda info: ctrl.copy())


def replayed_torques(wrapped, actions, plain) -> list[np.ndarray]:
    """Applied efforts of a wrapped rollout, as plain-env ctrl (the env's actuator order)."""
    model = plain.unwrapped.model
    gear = model.actuator_gear[:, 0]
    lo, hi = model.actuator_ctrlrange.T
    return recorded(wrapped, actions,
                    lambda info: np.clip(info["actuator"]["applied_effort"] / gear, lo, hi).astype(np.float32))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--envs", nargs="+", default=["Ant-v5", "InvertedPendulum-v5"])
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    print("load average (1, 5, 15 min): %.2f %.2f %.2f" % os.getloadavg())
    print(f"{'env':20s} {'variant':40s} {'baseline':17s} {'wrapped/s':>9s} {'plain/s':>9s} {'ratio':>6s}")
    for env_id in args.envs:
        plain = gym.make(env_id)
        plain.action_space.seed(0)
        random_actions = [plain.action_space.sample() for _ in range(args.steps)]
        cases = []
        for name, (make, baseline) in variants(env_id).items():
            env = make(gym.make(env_id))
            if baseline == "same actions":
                acts = base_acts = random_actions
            else:
                env.action_space.seed(1)
                acts = [env.action_space.sample() for _ in range(args.steps)]
                base_acts = replayed_torques(env, acts, plain)
            cases.append((name, baseline, env, acts, base_acts))
            if name == FLOOR_OF.get(env_id.split("-")[0]):
                floor_of = make(gym.make(env_id))
                floor = NativeFloor(floor_of, recorded_controls(floor_of, acts))
                cases.append((name.replace("[native]", "[native floor]"), "the same", floor, acts, base_acts))
                eager = make(gym.make(env_id))
                eager.engine.defer_native_telemetry = False  # the law's arithmetic at every step
                cases.append((name.replace("[native]", "[native eager]"), "the same", eager, acts, base_acts))
        for name, baseline, env, acts, base_acts in cases:
            w_rates, p_rates = [], []
            for _ in range(args.rounds):
                p_rates.append(run(plain, base_acts))
                w_rates.append(run(env, acts))
            ratio = statistics.median(w / p for w, p in zip(w_rates, p_rates))
            print(f"{env_id:20s} {name:40s} {baseline:17s} {statistics.median(w_rates):9.0f} "
                  f"{statistics.median(p_rates):9.0f} {ratio:6.2f}")


if __name__ == "__main__":
    main()
