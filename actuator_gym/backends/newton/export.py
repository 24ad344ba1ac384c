"""``NativeActuators``: an ``ActuatorCollection`` exported to ``newton.actuators`` (the class is moved
here unchanged from the former ``backends/newton.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import torch

if TYPE_CHECKING:
    from .backend import NewtonBackend

__all__ = ["NativeActuators"]


class NativeActuators:
    """An ``ActuatorCollection`` re-expressed as ``newton.actuators.Actuator`` objects (one per group),
    with the per-env parameter values in force at export (re-export after a reset re-draws them).

    ``step(target_pos, target_vel, target_effort)`` zeroes ``control.joint_f``, runs every Newton
    actuator on the backend's current state (Newton accumulates into ``joint_f``) and returns the
    applied efforts ``(num_envs, num_joints)`` as a torch view. Lanes are ``env * nv + dof``.

    Delay semantics differ before a lag's history fills: Newton falls back to the current target,
    ours to the oldest target since the reset; they agree once ``max_delay`` substeps have passed.
    """

    def __init__(self, backend: NewtonBackend, collection):
        from newton import actuators as na

        wp = backend.wp
        if collection.num_envs != backend.num_envs or tuple(collection.joint_names) != tuple(backend.joint_names):
            raise ValueError("NativeActuators: the collection must match the backend's num_envs and joint_names")
        self.backend = backend
        n, nv = backend.num_envs, backend._nv
        self._targets = {k: wp.zeros(n * nv, dtype=wp.float32, device=backend.wp_device) for k in ("q", "qd", "ff")}
        self.actuators, self.states = [], []
        for name, model in collection.items():
            cols = collection.joint_ids(name)
            dofs = np.asarray(backend.joints.dof_adr)[cols]
            lanes = (np.arange(n)[:, None] * nv + dofs[None, :]).reshape(-1).astype(np.uint32)
            idx = wp.array(lanes, dtype=wp.uint32, device=backend.wp_device)

            def arr(part, key):
                v = part.params[key].values.detach().to("cpu", torch.float32).reshape(-1).numpy()
                return wp.array(np.ascontiguousarray(v), dtype=wp.float32, device=backend.wp_device)

            drive, delay, clamps = None, None, []
            if getattr(model, "is_implicit", False):
                raise ValueError(f"NativeActuators: group {name!r} is implicit; only explicit groups are exported")
            for part in model._parts:
                kind = type(part).__name__
                if kind == "DrivePD":
                    drive = na.DrivePD(kp=arr(part, "kp"), kd=arr(part, "kd"), const_effort=arr(part, "const_effort"))
                elif kind == "DrivePID":
                    drive = na.DrivePID(kp=arr(part, "kp"), ki=arr(part, "ki"), kd=arr(part, "kd"),
                                        integral_max=arr(part, "integral_max"), const_effort=arr(part, "const_effort"))
                elif kind == "Delay":
                    steps = part.params["delay_steps"].values.detach().cpu().reshape(-1).numpy().astype(np.int32)
                    if part.max_delay >= 1:
                        delay = na.Delay(delay_steps=wp.array(steps, dtype=wp.int32, device=backend.wp_device),
                                         max_delay=int(part.max_delay))
                elif kind == "ClampingMaxEffort":
                    clamps.append(na.ClampingMaxEffort(max_effort=arr(part, "max_effort")))
                elif kind == "ClampingDCMotor":
                    clamps.append(na.ClampingDCMotor(saturation_effort=arr(part, "saturation_effort"),
                                                     velocity_limit=arr(part, "velocity_limit"),
                                                     max_motor_effort=arr(part, "effort_limit")))
                elif kind == "ClampingPositionBased":
                    clamps.append(na.ClampingPositionBased(lookup_positions=tuple(float(x) for x in part.lookup_positions),
                                                           lookup_efforts=tuple(float(y) for y in part.lookup_efforts)))
                else:
                    raise ValueError(f"NativeActuators: group {name!r} uses {kind}, which has no newton.actuators export")
            if drive is None:
                raise ValueError(f"NativeActuators: group {name!r} has no PD/PID drive")
            act = na.Actuator(indices=idx, drive=drive, delay=delay, clamping=clamps)
            self.actuators.append(act)
            st = act.state()
            self.states.append((st, act.state()) if st is not None else (None, None))
        self._cols = [collection.joint_ids(g) for g in collection]
        self._collection = collection

    def step(self, target_pos: Any = None, target_vel: Any = None, target_effort: Any = None) -> torch.Tensor:
        be, wp = self.backend, self.backend.wp
        n, nv = be.num_envs, be._nv
        dofs = be.joints.dof_adr
        for key, value in (("q", target_pos), ("qd", target_vel), ("ff", target_effort)):
            t = wp.to_torch(self._targets[key]).view(n, nv)
            t.zero_()
            if value is not None:
                t[:, dofs] = torch.as_tensor(value, dtype=torch.float32, device=be.device)
        sim_state = {"joint_q": be.state_0.joint_q, "joint_qd": be.state_0.joint_qd}
        sim_control = {"joint_target_q": self._targets["q"], "joint_target_qd": self._targets["qd"],
                       "joint_act": self._targets["ff"], "joint_f": be.control.joint_f}
        with be._scope():
            be.control.joint_f.zero_()
            for i, act in enumerate(self.actuators):
                cur, nxt = self.states[i]
                act.step(sim_state, sim_control, cur, nxt, dt=be.physics_dt)
                if cur is not None:
                    self.states[i] = (nxt, cur)
        return be.torch_field("joint_f")[:, dofs]
