"""Record reference traces from BAM 1.0.2's own MuJoCo pendulum test bench into test data.

BAM ("Better Actuator Models", Rhoban, Apache-2.0) is not a dependency of this project; the traces
are recorded once, offline, and stored as ``.npz`` files under ``tests/data/bam/``. To re-record:

    pip download --no-deps --ignore-requires-python better-actuator-models==1.0.2 -d DIR
    cd DIR && python -m zipfile -e better_actuator_models-1.0.2-py3-none-any.whl src
    cd /path/to/actuator-gym
    PYTHONPATH=DIR/src python benchmarks/record_bam_traces.py --out tests/data/bam

(the wheel declares Python >= 3.12, but the modules used here run on 3.11; they need numpy, mujoco
and colorama, nothing else). ``--check-repeat`` runs every case twice and asserts that the two
traces are bit-identical.

Each case builds ``bam.testbench_mujoco.Pendulum(load).build_spec("pendulum")``, compiles it, sets
``opt.timestep = 0.002`` and drives it with ``bam.mujoco.MujocoController`` exactly as
``bam.mujoco.Simulator.reset`` / ``step`` do (controller built before the initial state is set),
with the goal trajectory of :func:`goal_trajectory`. Per step ``k`` it stores the state read before
``controller.update()`` (``q[k]``, ``dq[k]``), what the update wrote (``torque[k] = ctrl[0]``,
``frictionloss[k]``, ``damping[k]``) and the supply voltage the update used (``vin_eff[k]``,
recomputed the way ``MujocoController.update`` computes it); ``q`` has one more entry, the final
position after the last ``mj_step``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import mujoco
import numpy as np

import bam.model
import bam.mujoco
import bam.testbench_mujoco

BAM_VERSION = "1.0.2"
TIMESTEP = 0.002
DURATION = 4.0
N_STEPS = int(round(DURATION / TIMESTEP))  # 2000
Q0 = 0.0

# Test-bench loads (point mass at the tip of an arm), one per servo.
LOADS = {
    "mx64": {"mass": 0.6, "arm_mass": 0.1, "length": 0.15},
    "mx106": {"mass": 1.0, "arm_mass": 0.1, "length": 0.15},
    "xl320": {"mass": 0.1, "arm_mass": 0.02, "length": 0.1},
    "xl330": {"mass": 0.15, "arm_mass": 0.02, "length": 0.1},
}

# (motor, model, vin_drop_resistance [Ohm] or None, vin_min [V] or None)
CASES = [
    ("mx64", "m1", None, None),
    ("mx64", "m6", None, None),
    ("mx106", "m4", None, None),
    ("xl320", "m2", None, None),
    ("xl320", "m6", None, None),
    ("xl330", "m3", None, None),
    ("xl330", "m6", None, None),
    ("mx64", "m6", 1.0, 12.0),
    ("xl330", "m6", 0.8, 6.0),
]

# The load whose compiled BAM pendulum is dumped as MJCF.
REFERENCE_XML_LOAD = "mx64"


def goal_trajectory(n_steps: int = N_STEPS, dt: float = TIMESTEP) -> np.ndarray:
    """Goal position [rad] at t = k * dt, k = 0 .. n_steps - 1.

    0 until 0.2 s; +1.0 rad until 1.2 s; -0.5 rad until 2.0 s; 0.6 sin(2 pi 1 Hz (t - 2)) until
    3.2 s; then a linear ramp from the sine's value at 3.2 s (0.6 sin(0.4 pi) = 0.571 rad) down to
    0 at 4.0 s. Segment boundaries are taken on the integer step index, so no float rounding decides
    which side of a step a sample falls on.
    """
    k = np.arange(n_steps)
    t = k * dt
    k_step1, k_step2, k_sine, k_ramp, k_end = (
        int(round(b / dt)) for b in (0.2, 1.2, 2.0, 3.2, 4.0)
    )
    goal = np.zeros(n_steps)
    goal[(k >= k_step1) & (k < k_step2)] = 1.0
    goal[(k >= k_step2) & (k < k_sine)] = -0.5
    sine = (k >= k_sine) & (k < k_ramp)
    goal[sine] = 0.6 * np.sin(2.0 * np.pi * 1.0 * (t[sine] - 2.0))
    ramp = k >= k_ramp
    start = 0.6 * np.sin(2.0 * np.pi * 1.0 * (k_ramp * dt - 2.0))
    goal[ramp] = start * (k_end - k[ramp]) / (k_end - k_ramp)
    return goal


def effective_vin(controller, data: mujoco.MjData) -> float:
    """The supply voltage ``MujocoController.update`` uses, computed the same way.

    It reads ``qfrc_actuator``, i.e. the torque applied during the *previous* ``mj_step``.
    """
    act = controller.model.actuator
    if controller.vin_drop_resistance is None:
        return float(act.vin)
    load_torque = np.sum(np.abs(data.qfrc_actuator[controller.dof_indexes]))
    current = load_torque / controller.model.kt.value
    vin_eff = act.vin - controller.vin_drop_resistance * current
    if controller.vin_min is not None:
        vin_eff = max(vin_eff, controller.vin_min)
    return float(vin_eff)


def build_bench(load: dict) -> tuple[mujoco.MjSpec, mujoco.MjModel]:
    spec = bam.testbench_mujoco.Pendulum(load).build_spec("pendulum")
    model = spec.compile()
    model.opt.timestep = TIMESTEP
    return spec, model


def record_case(motor: str, model_name: str, r_drop, vin_min) -> dict:
    load = LOADS[motor]
    _, m = build_bench(load)
    d = mujoco.MjData(m)
    bam_model = bam.model.load_model(motor_name=motor, model=model_name)
    controller = bam.mujoco.MujocoController(
        bam_model, "pendulum", m, d, vin_drop_resistance=r_drop, vin_min=vin_min
    )
    d.qpos[0] = Q0
    d.qvel[0] = 0.0
    mujoco.mj_forward(m, d)

    goal = goal_trajectory()
    q = np.empty(N_STEPS + 1)
    dq = np.empty(N_STEPS)
    torque = np.empty(N_STEPS)
    frictionloss = np.empty(N_STEPS)
    damping = np.empty(N_STEPS)
    vin_eff = np.empty(N_STEPS)
    act = bam_model.actuator

    for k in range(N_STEPS):
        q[k] = d.qpos[0]
        dq[k] = d.qvel[0]
        vin_eff[k] = effective_vin(controller, d)

        controller.set_q_target("pendulum", goal[k])
        controller.update()

        torque[k] = d.ctrl[0]
        frictionloss[k] = m.dof_frictionloss[0]
        damping[k] = m.dof_damping[0]

        # Cross-check vin_eff: the torque BAM applied must follow from it bit for bit.
        vin_orig = act.vin
        act.vin = vin_eff[k]
        control = act.compute_control(controller.q_target, q[k : k + 1], dq[k : k + 1], TIMESTEP)
        expected = act.compute_torque(control, True, q[k : k + 1], dq[k : k + 1])[0]
        act.vin = vin_orig
        assert expected == torque[k], (motor, model_name, k, expected, torque[k])

        mujoco.mj_step(m, d)
    q[N_STEPS] = d.qpos[0]

    nan = float("nan")
    return {
        "goal": goal,
        "q": q,
        "dq": dq,
        "torque": torque,
        "frictionloss": frictionloss,
        "damping": damping,
        "vin_eff": vin_eff,
        "timestep": np.float64(TIMESTEP),
        "mass": np.float64(load["mass"]),
        "arm_mass": np.float64(load["arm_mass"]),
        "length": np.float64(load["length"]),
        "q0": np.float64(Q0),
        "vin_drop_resistance": np.float64(nan if r_drop is None else r_drop),
        "vin_min": np.float64(nan if vin_min is None else vin_min),
        "motor": np.array(motor),
        "model": np.array(model_name),
        "bam_version": np.array(BAM_VERSION),
    }


def case_filename(motor: str, model_name: str, r_drop) -> str:
    return f"{motor}_{model_name}{'' if r_drop is None else '_drop'}.npz"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("tests/data/bam"))
    parser.add_argument(
        "--check-repeat", action="store_true", help="run each case twice, assert identical"
    )
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    print(f"{'file':<20} {'max|q|':>7} {'min vin':>8} {'max|tau|':>8} "
          f"{'fl min':>7} {'fl max':>7} {'damping':>8}")
    for motor, model_name, r_drop, vin_min in CASES:
        trace = record_case(motor, model_name, r_drop, vin_min)
        if args.check_repeat:
            again = record_case(motor, model_name, r_drop, vin_min)
            for key, value in trace.items():
                assert np.array_equal(value, again[key], equal_nan=value.dtype.kind == "f"), key
        name = case_filename(motor, model_name, r_drop)
        np.savez_compressed(args.out / name, **trace)
        print(f"{name:<20} {np.max(np.abs(trace['q'])):7.3f} {trace['vin_eff'].min():8.3f} "
              f"{np.max(np.abs(trace['torque'])):8.3f} {trace['frictionloss'].min():7.4f} "
              f"{trace['frictionloss'].max():7.4f} {trace['damping'].max():8.5f}")

    # BAM's generated MJCF of the bench (as built by build_spec; the controller later adds the
    # motor armature and rewrites frictionloss/damping at run time, none of which is in here).
    spec, _ = build_bench(LOADS[REFERENCE_XML_LOAD])
    (args.out / "pendulum_reference.xml").write_text(spec.to_xml())


if __name__ == "__main__":
    main()
