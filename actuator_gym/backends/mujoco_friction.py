"""The joint loads and friction writes of friction-budget groups (BAM servos,
:mod:`actuator_gym.actuators.bam`) on the two MuJoCo backends.

The external torque on a joint is what the load applies to the gearbox: gravity, Coriolis and the
constraint forces other than the joint's own dry friction, ``-qfrc_bias + qfrc_constraint -
f_friction``, of the last forward (the substep just run, or the reset), as BAM's ``MujocoController``
reads it. One ``MjData`` (the wrapper) has the friction rows' forces (``efc_force`` of the
``mjCNSTR_FRICTION_DOF`` rows, keyed by DOF id). A ``mujoco.batch.Batch`` cannot bind the constraint
arrays (their size changes every step), so :class:`BatchFrictionForce` recomputes each row's force
from MuJoCo's soft-constraint law at the solution -- ``f = clip(-(qacc - aref) / R, -frictionloss,
+frictionloss)`` with ``aref = -b qvel``, ``R = (1 - imp) / imp * dof_invweight0``, ``imp`` and
``b`` from the joint's ``solimp`` / ``solref`` (position 0) -- exact to the solver's tolerance for
MuJoCo's Newton and CG solvers without noslip (checked against ``efc_force`` in
tests/backends/test_joint_friction.py); a model with ``noslip_iterations > 0`` is refused there.
"""

from __future__ import annotations

import mujoco
import numpy as np

__all__ = ["single_joint_loads", "BatchFrictionForce"]

_FRICTION_DOF = int(mujoco.mjtConstraint.mjCNSTR_FRICTION_DOF)
_MINVAL, _MINIMP, _MAXIMP = 1e-15, 1e-4, 0.9999  # MuJoCo's mjMINVAL, mjMINIMP, mjMAXIMP


def single_joint_loads(model: mujoco.MjModel, data: mujoco.MjData, dofs: np.ndarray) -> np.ndarray:
    """``(1, J)`` external torques [N·m or N] on ``dofs`` of one ``MjData`` (module doc)."""
    load = data.qfrc_constraint[dofs] - data.qfrc_bias[dofs]
    rows = np.flatnonzero(data.efc_type == _FRICTION_DOF)
    if len(rows):
        friction = np.zeros(model.nv)
        np.add.at(friction, data.efc_id[rows], data.efc_force[rows])
        load -= friction[dofs]
    return load[None]


class BatchFrictionForce:
    """The dry-friction force of ``dofs`` in every world of a batch at its last forward, from MuJoCo's
    constraint law (module doc). ``model``: the batch's model (``solref`` / ``solimp`` / timestep);
    ``invweight0``: the per-world ``dof_invweight0`` array (or the model's)."""

    def __init__(self, model: mujoco.MjModel, dofs: np.ndarray, owner: str):
        if model.opt.noslip_iterations > 0:
            raise ValueError(
                f"{owner}: the model has noslip_iterations={model.opt.noslip_iterations}; on the batched MuJoCo backend "
                "a friction-budget group (BAM servo) reads the joints' dry-friction force from MuJoCo's constraint law, "
                "which noslip changes; set noslip_iterations=0 or run it through ActuatorWrapper"
            )
        self.dofs = dofs
        solimp, solref = model.dof_solimp[dofs], model.dof_solref[dofs]
        d0, dmax = np.clip(solimp[:, 0], _MINIMP, _MAXIMP), np.clip(solimp[:, 1], _MINIMP, _MAXIMP)
        flat = (solimp[:, 0] == solimp[:, 1]) | (solimp[:, 2] <= _MINVAL)
        imp = np.where(flat, 0.5 * (d0 + dmax), d0)  # getimpedance at distance 0
        timeconst = solref[:, 0]
        if not model.opt.disableflags & int(mujoco.mjtDisableBit.mjDSBL_REFSAFE):
            timeconst = np.maximum(timeconst, 2 * model.opt.timestep)
        self.b = np.where(solref[:, 0] > 0, 2.0 / (dmax * timeconst), -solref[:, 1] / dmax)
        self.r_per_weight = (1.0 - imp) / imp

    def __call__(self, qacc: np.ndarray, qvel: np.ndarray, frictionloss: np.ndarray, invweight0: np.ndarray) -> np.ndarray:
        """``(num_envs, J)`` forces [N·m or N]: ``qacc`` / ``qvel`` ``(num_envs, J)`` of the last forward
        (the velocity it read), ``frictionloss`` / ``invweight0`` ``(num_envs, J)`` in force then."""
        R = np.maximum(_MINVAL, self.r_per_weight * invweight0)
        return np.clip(-(qacc + self.b * qvel) / R, -frictionloss, frictionloss)
