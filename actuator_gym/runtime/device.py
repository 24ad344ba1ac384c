"""The joint state and physics on a device (MuJoCo-Warp, Newton): :class:`TorchJointState`, and what
of a collection can be replayed from a CUDA graph (:func:`graph_capturable`), for the captured
execution strategy (:class:`~actuator_gym.runtime.execution.Captured`)."""

from __future__ import annotations

import torch

__all__ = ["TorchJointState", "graph_capturable"]


class TorchJointState:
    """:class:`~actuator_gym.runtime.substep.JointState` over a device backend's torch views
    (``torch_joint_pos`` / ``torch_joint_vel`` / ``torch_set_joint_effort``), copied into fixed
    buffers so that the actuator part can be replayed from a CUDA graph; also the physics the
    engine advances (``step(nstep, derived)``: the backend's, its substep replayed from a Warp graph
    when ``graph`` and on CUDA)."""

    def __init__(self, backend, like: torch.Tensor, graph: bool = True):
        self.backend = backend
        self.graph = bool(graph)
        self.q = torch.zeros_like(like)
        """The position buffer the actuators read [rad or m] (fixed storage, graph-replay safe)."""
        self.qd = torch.zeros_like(like)
        """The velocity buffer the actuators read [rad/s or m/s]."""

    def joint_pos(self) -> torch.Tensor:
        self.q.copy_(self.backend.torch_joint_pos())
        return self.q

    def joint_vel(self) -> torch.Tensor:
        self.qd.copy_(self.backend.torch_joint_vel())
        return self.qd

    def set_joint_effort(self, effort: torch.Tensor) -> None:
        self.backend.torch_set_joint_effort(effort)

    def mass_matrix_terms(self, joint_ids):
        return self.backend.mass_matrix_terms(joint_ids)

    def step(self, nstep: int, derived: bool) -> None:
        self.backend.step(nstep=nstep, derived=derived, graph=self.graph)


def graph_capturable(collection) -> tuple[bool, str]:
    """Whether ``collection.compute`` can be recorded once and replayed from a CUDA graph, and why not.

    Each part says so itself (``Part.graph_safe``: the PD / PID drives and the max-effort,
    DC-motor and position-based clamps are pure in-place tensor math; a ``Delay`` is on the torch
    path, where its write index and counters live on the device; neural drives and user parts are
    not). Not capturable either: ``check_finite=True`` (reads values on the host), Stable-PD groups
    (``effort_mode="implicit"``, ``ImplicitActuatorCfg``: they need the mass matrix from the engine)
    and buses (their frames arrive on substeps drawn on the host, :mod:`actuator_gym.runtime.bus`).
    """
    bus = next(iter(getattr(collection, "buses", {}).values()), None)
    if bus is not None:
        return False, f"groups {list(bus.groups)}: bus {bus.name!r} delivers its frames on substeps drawn on the host"
    for name, model in collection.items():
        if model.check_finite:
            return False, f"group {name!r}: check_finite=True synchronises with the host"
        if model.stable_pd:
            return False, f"group {name!r}: Stable-PD effort (effort_mode='implicit' or ImplicitActuatorCfg)"
        for part in model.parts:
            if not part.graph_safe:
                return False, f"group {name!r}: {part.graph_unsafe_reason}"
    return True, ""
