"""MuJoCo 4.0's dcmotor extras as the native compiler writes them (:mod:`.mujoco_native`): the values
that switch a feature on at compile time, the per-world write of the values in force, and the
telemetry keys they add (docs/native.md, "Motor physics (native only)"), and the refusal of the
groups that need them on the explicit path."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..actuators.motor_physics import NATIVE_ONLY_FORM

__all__ = ["PLACEHOLDER", "write_physics", "MOTOR_TELEMETRY", "native_only_fields", "refuse_native_only"]


PLACEHOLDER = {"thermal": [1.0, 1.0, 0.0, 0.0, 0.0, 0.0], "inductance": [0.0, 1.0], "cogging": [1.0, 1.0, 0.0],
                "lugre": [1.0, 0.0, 1.0, 1.0, 1.0]}
"""Non-zero ``set_to_dcmotor`` values that switch a feature on (MuJoCo allocates its state at compile
time from them); the values in force are written after compiling (:func:`write_physics`)."""


def write_physics(F: dict[str, np.ndarray], at: tuple, rows: Any, physics: dict[str, Any]) -> None:
    """The motor-physics values in force of ``rows`` into their worlds' dcmotor parameter arrays
    (``F``: the per-world model fields; ``at``: the (rows, actuators) index; MuJoCo 4.0's layout, as
    its compiler fills them): ``dynprm = (L/R, di/dt max, R_th, C_th, T_ambient, sigma0, sigma1,
    ...)``, ``gainprm[2:4] = (alpha, T_ref)``, ``biasprm = (A, N, phi, F_C, F_S, v_S)``. Every value is
    > 0 where MuJoCo reads "> 0" as "feature on" (the domains), so the state layout stays that of
    the compiled model."""
    dyn, gain, bias = F["actuator_dynprm"], F["actuator_gainprm"], F["actuator_biasprm"]

    def put(arr, k, form, name):
        arr[at + (k,)] = form.values(name)[rows]

    f = physics.get("thermal")
    if f is not None:
        put(dyn, 2, f, "rth"), put(dyn, 3, f, "cth"), put(dyn, 4, f, "tamb")
        put(gain, 2, f, "alpha"), put(gain, 3, f, "tref")
    f = physics.get("inductance")
    if f is not None:
        put(dyn, 0, f, "te")
    f = physics.get("cogging")
    if f is not None:
        for k, name in enumerate(("amplitude", "poles", "phase")):
            put(bias, k, f, name)
    f = physics.get("lugre")
    if f is not None:
        put(dyn, 5, f, "sigma0"), put(dyn, 6, f, "sigma1")
        for k, name in enumerate(("coulomb", "static", "stribeck")):
            put(bias, 3 + k, f, name)


MOTOR_TELEMETRY: dict[str, str] = {
    "motor_temperature": "winding temperature after the control step [°C] (native DC motors with the thermal "
                         "model; NaN in the other columns)",
    "motor_current": "winding current at the last substep [A of the engine's K = 1 N·m/A motor: numerically the "
                     "motor torque K i in N·m; a torque constant Kt carries motor_current / Kt amperes] (native DC "
                     "motors with the thermal model or inductance; NaN in the other columns)",
}
"""The ``info["actuator"]`` keys of the native motor physics (present only when a group has them)."""


def native_only_fields(collection: Any) -> dict[str, list[str]]:
    """``{group: fields}`` of the groups whose parts exist only in MuJoCo's native ``dcmotor`` (the
    motor physics: thermal model, inductance, cogging, LuGre friction)."""
    out = {}
    for g in collection:
        names = sorted(n for p in collection[g].parts if p.native_form == NATIVE_ONLY_FORM for n in p.native_only_fields)
        if names:
            out[g] = names
    return out


def refuse_native_only(collection: Any, owner: str, execution: str, why: str = "") -> None:
    """``ValueError`` naming the group and the fields when a group that runs only natively would run
    explicitly (``why``: why native is not possible either, for ``"auto"``)."""
    for g, names in native_only_fields(collection).items():
        raise ValueError(
            f"{owner}: execution={execution!r}: group '{g}' sets {names}, which exist only in MuJoCo's native "
            f"dcmotor (the explicit path has no thermal / inductance / cogging / LuGre model){why}; use "
            "execution='native' (or 'auto'; on a batched task: backend='mujoco' or 'mujoco_warp')"
        )
