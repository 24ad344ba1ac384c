"""How a batched task runs its implicit groups, and the check that its backend can.

An ``ImplicitActuatorCfg`` group is Isaac Lab's implicit actuator: a PD evaluated inside the physics
step, clamped at the solver's effort limit (``joint_effort_limit`` / ``effort_limit_sim``). The
bundled tasks' MJCFs have no MuJoCo actuators to act as servos (efforts go through ``qfrc_applied``),
so a task builds these groups with ``implicit_servo="stable_pd"``
(:data:`~actuator_gym.actuators.models.IMPLICIT_SERVOS`): the model's Stable-PD effort mode solves the
same PD at the predicted end-of-substep state with the inverse mass matrix of the current state
(:mod:`actuator_gym.actuators.implicit`), the same mechanism as ``effort_mode="implicit"`` groups,
listed with them in ``collection.stable_pd_groups``. The wrapper runs them as MuJoCo's own servos
instead (:mod:`actuator_gym.wrappers.engine_servo`). docs/tasks.md, "Implicit groups".
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["TASK_IMPLICIT_SERVO", "check_mass_matrix"]

TASK_IMPLICIT_SERVO = "stable_pd"
"""``implicit_servo`` of a task's collection: solver-side groups run in the Stable-PD effort mode."""


def check_mass_matrix(collection: Any, backend: Any, backend_name: str, owner: str) -> None:
    """``ValueError`` naming the groups when some group needs the mass-matrix terms (Stable-PD:
    ``effort_mode="implicit"`` or ``ImplicitActuatorCfg``) and ``backend`` does not provide them."""
    if collection is None or not collection.needs_mass_matrix:
        return
    try:
        backend.mass_matrix_terms(np.arange(collection.num_joints))
    except NotImplementedError as exc:
        groups = collection.stable_pd_groups
        servos = [g for g in groups if getattr(collection[g].cfg, "solver_side", False)]
        modes = [g for g in groups if g not in servos]
        who = [f"groups {modes} use effort_mode='implicit'"] if modes else []
        if servos:
            who.append(f"implicit groups {servos} (ImplicitActuatorCfg: a batched task solves their PD in the "
                       "Stable-PD effort mode)")
        fixes = ["backend='mujoco'"] + (["effort_mode='explicit'"] if modes else []) + (
            ["an explicit model (e.g. IdealPDActuatorCfg) for the implicit groups"] if servos else [])
        raise ValueError(
            f"{owner}: {'; '.join(who)}, which needs the inverse mass matrix from the physics backend; "
            f"backend {backend_name!r} does not provide it ({exc}); use {' or '.join(fixes)}"
        ) from None
