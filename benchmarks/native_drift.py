"""Drift of native execution from the explicit path over one episode of the pendulum task (Euler).

Two tasks side by side, the same seed, the same random actions: ``execution="explicit"`` and
``"native"`` on one backend; prints the largest |explicit - native| of ``qpos`` / ``qvel`` and of
the efforts over the episode (randomized gains and limits, so the limits act). On ``mujoco_warp``
both paths run in float32 (MuJoCo-Warp's precision); on ``mujoco`` the native path is float64 and the
explicit one runs in the task's ``actuator_dtype`` (float32 by default).

    python benchmarks/native_drift.py --backend mujoco_warp --device cpu --seconds 5
"""

from __future__ import annotations

import argparse

import numpy as np

import actuator_gym as ag
from actuator_gym.tasks.pendulum import PendulumTask
from actuator_gym.randomization import Uniform

MODELS = {
    "ideal_pd": lambda: ag.IdealPDActuatorCfg(joint_names_expr=["hinge"], stiffness=20.0, damping=1.0,
                                              actuator_effort_limit=2.5,
                                              randomization={"stiffness": Uniform(0.5, 1.5, operation="scale")}),
    "dc_motor": lambda: ag.DCMotorCfg(joint_names_expr=["hinge"], stiffness=20.0, damping=1.0, saturation_effort=4.0,
                                      actuator_velocity_limit=5.0, actuator_effort_limit=3.0,
                                      randomization={"saturation_effort": Uniform(3.0, 6.0),
                                                     "actuator_velocity_limit": Uniform(3.0, 8.0)}),
    "delayed_pd": lambda: ag.DelayedPDActuatorCfg(joint_names_expr=["hinge"], stiffness=20.0, damping=1.0,
                                                  actuator_effort_limit=2.5, min_delay=0, max_delay=5),
}


def drift(model: str, backend: str, device: str, seconds: float, num_envs: int) -> dict:
    tasks = [PendulumTask(num_envs=num_envs, actuators={"pendulum": MODELS[model]()}, backend=backend, device=device,
                          execution=ex, seed=11, episode_length_s=seconds) for ex in ("explicit", "native")]
    rng = np.random.default_rng(0)
    worst = dict.fromkeys(("qpos", "qvel", "applied_effort", "computed_effort"), 0.0)
    steps = int(round(seconds / tasks[0].dt))
    for _ in range(steps):
        a = rng.uniform(-1, 1, (num_envs, 1))
        (*_, ie), (*_, inn) = (t.step(a) for t in tasks)
        for k in ("applied_effort", "computed_effort"):
            worst[k] = max(worst[k], float(np.abs(ie["actuator"][k] - inn["actuator"][k]).max()))
        for f in ("qpos", "qvel"):
            worst[f] = max(worst[f], float(np.abs(getattr(tasks[0].backend, f) - getattr(tasks[1].backend, f)).max()))
    return {"steps": steps, **worst}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="mujoco_warp", choices=("mujoco", "mujoco_warp"))
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--seconds", type=float, default=5.0, help="episode length [s] (one episode, no reset)")
    ap.add_argument("--envs", type=int, default=4)
    ap.add_argument("--models", default=",".join(MODELS))
    args = ap.parse_args(argv)
    print(f"backend {args.backend} ({args.device}), {args.envs} envs, one {args.seconds} s episode; max |explicit - native|")
    print(f"{'model':12s} {'steps':>5s} {'qpos [rad]':>11s} {'qvel [rad/s]':>13s} {'applied [N·m]':>14s} {'computed [N·m]':>15s}")
    for m in args.models.split(","):
        r = drift(m, args.backend, args.device, args.seconds, args.envs)
        print(f"{m:12s} {r['steps']:5d} {r['qpos']:11.2e} {r['qvel']:13.2e} {r['applied_effort']:14.2e} {r['computed_effort']:15.2e}")


if __name__ == "__main__":
    main()
