"""Engine servos: ``ImplicitActuatorCfg`` groups run by MuJoCo's own position servos.

"Implicit" here means *solver-side* (Isaac Lab's implicit actuator: the physics engine integrates
the PD law itself), not the Stable-PD effort mode (``effort_mode="implicit"``, which computes an
explicit effort from the mass matrix). On a Gymnasium MuJoCo env the wrapper turns each such
group's MuJoCo actuators into position servos with the gains in force, and :class:`EngineServos`
takes part in every substep of the substep engine (:mod:`actuator_gym.substep`): it writes the
servo commands after the joint groups computed, and accounts the servo's own force (MuJoCo's
``actuator_force``) for the telemetry, since MuJoCo, not our runtime, applies it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["EngineServos"]


class EngineServos:
    """The wrapper's solver-side servo groups (a :class:`~actuator_gym.substep.SubstepParticipant`).

    Construction only checks (nothing is written into the model): :meth:`configure` writes the
    servos once every check of the wrapper passed; :meth:`apply_gains` rewrites the gains in force
    (after a reset re-drew them).

    Args:
        collection: the wrapper's collection (its ``engine_servo_groups`` are the servo groups).
        backend: the wrapper's :class:`~actuator_gym.backends.mujoco.MujocoBackend`.
        action_order: collection columns of the driven joints, in action order.
        position_mode: whether actions are joint-position targets (then the servo's ctrl is the
            target, clipped to the joint range).
    """

    def __init__(self, collection: Any, backend: Any, action_order: np.ndarray, position_mode: bool):
        self.collection, self.backend = collection, backend
        self.model, self.data = backend.model, backend.data
        self.position_mode = position_mode
        self.groups = []  # (group, collection cols, actuator ids)
        for g in collection.engine_servo_groups:
            ids = collection.joint_ids(g)
            try:
                acts = backend.joint_actuators(ids)
            except ValueError as exc:
                raise ValueError(f"ActuatorWrapper: implicit group '{g}' needs one MuJoCo actuator per joint: {exc}") from None
            backend.check_position_servos(acts)
            self.groups.append((g, np.asarray(ids, dtype=np.intp), acts))
        self.cols = np.concatenate([i for _, i, _ in self.groups])
        self.acts = np.concatenate([a for _, _, a in self.groups])
        order = list(action_order)
        self.selected = np.asarray([i for i, c in enumerate(self.cols) if c in order], dtype=np.intp)
        """Servo columns that are driven, as indices into :attr:`cols`."""
        self.action_pos = np.asarray([order.index(self.cols[i]) for i in self.selected], dtype=np.intp)
        """Their positions in the action (and telemetry) order."""
        self._a = np.zeros((1, len(self.cols)))
        self._b = np.zeros((1, len(self.cols)))
        self._out_pos = collection.output_command.position.numpy()
        self._out_vel = collection.output_command.velocity.numpy()
        self._ctrl = self.data.ctrl
        self._qd = np.zeros(len(self.cols))
        self._abs_work = np.zeros(len(self.cols))
        self._work = np.zeros(len(self.cols))
        self._substeps = 0

    # -- writing the model -------------------------------------------------------------------------
    def configure(self) -> None:
        """Turn the groups' MuJoCo actuators into position servos with the gains in force."""
        self.backend.configure_position_servos(self.acts, 1.0, 0.0, np.inf, None)
        self.apply_gains()

    def apply_gains(self) -> None:
        """Write the gains in force (kp, kd, limit) into the MuJoCo actuators.

        MuJoCo's servo is ``gain * ctrl - kp q - kd qd``; with ``gain = kp`` (``kd`` where kp = 0)
        the servo gets ``ctrl = (kp q* + kd qd*) / gain``, which is ``q*`` in position mode."""
        off = 0
        ranges = self.backend.joints.range
        m = self.model
        for g, ids, acts in self.groups:
            model = self.collection[g]
            kp = model.parameter("stiffness")[0].numpy().astype(np.float64)
            kd = model.parameter("damping")[0].numpy().astype(np.float64)
            lim = model.parameter("joint_effort_limit")[0].numpy().astype(np.float64)  # the solver's limit
            gain = np.where(kp > 0, kp, kd)
            safe = np.where(gain > 0, gain, 1.0)
            self.backend.set_servo_gains(acts, gain, kd, lim)
            m.actuator_biasprm[acts, 1] = -kp
            k = len(ids)
            self._a[0, off : off + k] = np.where(gain > 0, kp / safe, 0.0)
            self._b[0, off : off + k] = np.where(gain > 0, kd / safe, 0.0)
            # ctrl == q* (clipped to the joint range) only in position mode with kp > 0
            cr = ranges[ids].copy()
            if not self.position_mode:
                cr[:] = np.inf
            cr[kp <= 0] = np.inf
            lim_ok = np.isfinite(cr).all(axis=1)
            m.actuator_ctrllimited[acts] = lim_ok.astype(m.actuator_ctrllimited.dtype)
            m.actuator_ctrlrange[acts[lim_ok]] = cr[lim_ok]
            off += k

    # -- every substep ---------------------------------------------------------------------------
    def begin(self) -> None:
        self._abs_work.fill(0.0)
        self._work.fill(0.0)
        self._substeps = 0

    def _account(self) -> np.ndarray:
        """Add the servo work of the substep just stepped (engine force x the velocity it started at)."""
        force = self.data.actuator_force[self.acts]
        p = force * self._qd
        self._work += p
        self._abs_work += np.abs(p)
        return force

    def substep(self, k: int) -> None:
        if k > 0:
            self._account()
        c = self.cols
        self._ctrl[self.acts] = (self._a * self._out_pos[:, c] + self._b * self._out_vel[:, c])[0]
        self._qd[:] = self.backend.joint_vel()[0, c]
        self._substeps += 1

    def finish(self, tel: dict[str, np.ndarray], physics_dt: float) -> None:
        """Replace the servo columns of the wrapper's telemetry ``tel`` (action order, ``(J,)``) by
        the engine's force: what MuJoCo applied, its power and work over the control step."""
        force = self._account()[self.selected]
        pos, sel = self.action_pos, self.selected
        tel["computed_effort"][pos] = tel["applied_effort"][pos] = force
        tel["power"][pos] = force * self._qd[sel]
        tel["mean_power"][pos] = self._work[sel] / max(self._substeps, 1)
        tel["energy"][pos] = self._abs_work[sel] * physics_dt
        m, acts = self.model, self.acts[sel]
        limited = m.actuator_forcelimited[acts].astype(bool)
        tel["saturated"][pos] = limited & (np.abs(force) >= m.actuator_forcerange[acts, 1] * (1 - 1e-9))
