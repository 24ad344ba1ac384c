"""``NativeActuators``: an ``ActuatorCollection`` exported to ``newton.actuators``.

The export is generic: each part builds its own Newton object (``Part.to_newton(exporter)``, in the
part's own file) from the :class:`NewtonExporter` it is given; a part without a Newton form raises
``NotImplementedError`` there, reported here naming the group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ...actuators.part import Part

if TYPE_CHECKING:
    from .backend import NewtonBackend

__all__ = ["NativeActuators", "NewtonExporter"]


class NewtonExporter:
    """What ``Part.to_newton`` is given: the ``newton.actuators`` module and per-lane Warp arrays of a
    bound part's values in force (one lane per env and joint, env-major, as the group's indices)."""

    def __init__(self, newton_actuators: Any, wp: Any, device: Any):
        self.newton_actuators = newton_actuators
        """The ``newton.actuators`` module."""
        self._wp, self._device = wp, device

    def floats(self, part: Any, name: str) -> Any:
        """Parameter ``name`` of ``part`` as a float32 Warp array ``(num_envs * num_joints,)``."""
        v = part.params[name].values.detach().to("cpu", torch.float32).reshape(-1).numpy()
        return self._wp.array(np.ascontiguousarray(v), dtype=self._wp.float32, device=self._device)

    def ints(self, part: Any, name: str) -> Any:
        """Parameter ``name`` of ``part`` as an int32 Warp array ``(num_envs * num_joints,)``."""
        v = part.params[name].values.detach().cpu().reshape(-1).numpy().astype(np.int32)
        return self._wp.array(v, dtype=self._wp.int32, device=self._device)

    def export(self, part: Part, group: str) -> Any:
        """``part.to_newton(self)``; a part with no Newton form is a ``ValueError`` naming ``group``."""
        try:
            return part.to_newton(self)
        except NotImplementedError:
            raise ValueError(
                f"NativeActuators: group {group!r} uses {type(part).__name__}, which has no newton.actuators export"
            ) from None


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
        n, nv = backend.num_envs, backend.model.nv
        self._targets = {k: wp.zeros(n * nv, dtype=wp.float32, device=backend.wp_device) for k in ("q", "qd", "ff")}
        exporter = NewtonExporter(na, wp, backend.wp_device)
        self.actuators, self.states = [], []
        for name, model in collection.items():
            cols = collection.joint_ids(name)
            dofs = np.asarray(backend.joints.dof_adr)[cols]
            lanes = (np.arange(n)[:, None] * nv + dofs[None, :]).reshape(-1).astype(np.uint32)
            idx = wp.array(lanes, dtype=wp.uint32, device=backend.wp_device)

            if model.stable_pd:  # Stable-PD (ImplicitActuatorCfg, effort_mode="implicit"): no Newton form
                raise ValueError(f"NativeActuators: group {name!r} is implicit (Stable-PD); only explicit groups are exported")
            if getattr(model, "explicit_only", ()):  # backlash, encoder_resolution, bus: the runtime's only
                raise ValueError(f"NativeActuators: group {name!r} uses {', '.join(model.explicit_only)}, which has no "
                                 "newton.actuators form; run it on the explicit path")
            delay = exporter.export(model.delay, name) if model.delay is not None else None
            drive = exporter.export(model.drive, name)
            clamps = [exporter.export(c, name) for c in model.clamping]
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
        n, nv = be.num_envs, be.model.nv
        dofs = be.joints.dof_adr
        for key, value in (("q", target_pos), ("qd", target_vel), ("ff", target_effort)):
            t = wp.to_torch(self._targets[key]).view(n, nv)
            t.zero_()
            if value is not None:
                t[:, dofs] = torch.as_tensor(value, dtype=torch.float32, device=be.device)
        sim_state = {"joint_q": be.state_0.joint_q, "joint_qd": be.state_0.joint_qd}
        sim_control = {"joint_target_q": self._targets["q"], "joint_target_qd": self._targets["qd"],
                       "joint_act": self._targets["ff"], "joint_f": be.control.joint_f}
        with be.scope():
            be.control.joint_f.zero_()
            for i, act in enumerate(self.actuators):
                cur, nxt = self.states[i]
                act.step(sim_state, sim_control, cur, nxt, dt=be.physics_dt)
                if cur is not None:
                    self.states[i] = (nxt, cur)
        return be.torch_field("joint_f")[:, dofs]
