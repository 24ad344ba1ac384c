"""The cost of a BAM servo group on the batched quadruped, against the DC-motor group, side by side.

    python benchmarks/bam_servo.py [--envs 64 256] [--steps 100] [--rounds 9]

Two ``actuator_gym/Quadruped-v0`` vector envs of ``--envs`` worlds each: every leg joint in one
``BAMServoCfg(motor="mx106", model="m6")`` group (BAM's richest friction model, the supply sagging
through 0.05 ohm of wiring shared by the 12 servos), or in one ``DCMotorCfg`` group of the same motor without BAM's firmware, friction
and battery: the PD and the torque-speed line the MX-106 has at full supply (stiffness ``kt vin kp
error_gain / R``, damping ``kt^2 / R``, stall ``kt vin max_pwm / R``, no-load ``vin max_pwm / kt``), so
both robots carry their weight alike (a Go1-class DC motor stands where the weaker MX-106 sags onto
more contacts, which would time the physics, not the model). Each round runs ``--steps`` control
steps of each, the order alternating, with the same seeded random actions (resets as the episodes
end); the table shows the median time per control step and the median of the per-round ratios
BAM / DC motor (the issue's bound: 1.5). The ratio includes the physics of the friction constraints
BAM's budgets add. The machine's load average is printed first: compare rows of one run only.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import gymnasium as gym
import numpy as np

from actuator_gym import BAMServoCfg, DCMotorCfg
from actuator_gym.actuators.bam import BAM_MOTORS, bam_parameters


def same_motor_dc(motor: str = "mx106") -> DCMotorCfg:
    """The DC motor with a BAM servo's PD and torque-speed line at full supply (module doc)."""
    c, p = BAM_MOTORS[motor], bam_parameters(motor, "m6")
    kt, R = p["kt"], p["R"]
    return DCMotorCfg(joint_names_expr=[".*"], stiffness=kt * c.vin * c.kp * c.error_gain / R, damping=kt**2 / R,
                      saturation_effort=kt * c.vin * c.max_pwm / R, actuator_velocity_limit=c.vin * c.max_pwm / kt)


def make(kind: str, n: int):
    cfg = (BAMServoCfg(joint_names_expr=[".*"], motor="mx106", model="m6", vin_drop_resistance=0.05, vin_min=12.0)
           if kind == "bam" else same_motor_dc())
    env = gym.make_vec("actuator_gym/Quadruped-v0", num_envs=n, actuators={"legs": cfg})
    env.reset(seed=0)
    return env


def run(env, actions) -> float:
    t = time.perf_counter()
    for a in actions:
        env.step(a)
    return (time.perf_counter() - t) / len(actions)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--envs", type=int, nargs="+", default=[64, 256])
    ap.add_argument("--steps", type=int, default=100)  # long rounds: what the robots do (stand, fall) averages out
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print("| worlds | DC motor [ms/step] | BAM servo [ms/step] | BAM / DC (median of rounds) |")
    print("| --- | --- | --- | --- |")
    for n in args.envs:
        envs = {k: make(k, n) for k in ("dc", "bam")}
        rng = np.random.default_rng(0)
        shape = envs["dc"].action_space.shape
        times = {k: [] for k in envs}
        for r in range(args.rounds + 1):  # round 0 warms up
            actions = rng.uniform(-1, 1, (args.steps, *shape)).astype(np.float32)
            for k in (("dc", "bam") if r % 2 else ("bam", "dc")):
                t = run(envs[k], actions)
                if r:
                    times[k].append(t)
        ratios = [b / d for b, d in zip(times["bam"], times["dc"])]
        print(f"| {n} | {statistics.median(times['dc']) * 1e3:.2f} | {statistics.median(times['bam']) * 1e3:.2f} | "
              f"{statistics.median(ratios):.2f} |")
        for e in envs.values():
            e.close()


if __name__ == "__main__":
    main()
