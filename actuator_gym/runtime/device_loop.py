"""``DeviceLoop``: the substep engine stepping a device backend (MuJoCo-Warp, Newton) on its device."""

from __future__ import annotations

from typing import Any

from .substep import SubstepEngine, TorchJointState, graph_capturable

__all__ = ["DeviceLoop", "graph_capturable"]


class DeviceLoop:
    """The substep loop ``actuators -> effort -> physics`` run entirely on the backend's device:
    the substep engine (:class:`~actuator_gym.runtime.substep.SubstepEngine`, its captured strategy) over
    the backend's torch views (:class:`~actuator_gym.runtime.device.TorchJointState`), advanced by ``backend.step``.

    ``DeviceLoop(backend, collection).run(decimation)`` runs ``decimation`` substeps: each reads
    the joint state through torch views of the engine's arrays, computes every actuator group in
    one ``collection.compute`` and writes the applied effort into the engine's force array, then
    steps the physics. No host copies (on CUDA nothing leaves the GPU); ``telemetry()`` gives the
    last run's effort telemetry.

    CUDA graphs (``graph="auto"``, only on CUDA, never on CPU): the physics substep is captured
    once as a Warp graph and replayed; the actuator part is captured as a torch CUDA graph when
    :func:`graph_capturable` allows it, otherwise it runs eagerly each substep (still on the GPU).
    ``captured`` reports what is captured; ``note`` why the actuator part is not. Capture failures
    fall back to eager and are reported in ``note``. ``graph=False`` never captures.
    """

    def __init__(self, backend, collection, graph: Any = "auto"):
        if collection.device != backend.device:
            raise ValueError(
                f"DeviceLoop: the collection is on {collection.device}, the backend on {backend.device}; "
                "build the collection with device=backend.device"
            )
        if tuple(collection.joint_names) != tuple(backend.joint_names):
            raise ValueError("DeviceLoop: the collection's joint_names must be the backend's joint_names")
        if graph not in ("auto", True, False):
            raise ValueError(f"DeviceLoop: graph must be 'auto', True or False, got {graph!r}")
        self.backend, self.collection = backend, collection
        self.dt = backend.physics_dt
        self.want_graph = graph is not False and backend.device.type == "cuda"
        state = TorchJointState(backend, collection.applied_effort, graph=self.want_graph)
        self.engine = SubstepEngine(collection, state, self.dt, 1, capture="auto" if self.want_graph else False)
        self.captured = {"physics": False, "actuators": False}

    @property
    def note(self) -> str:
        """Why the actuator part is not captured ("" when it is)."""
        return self.engine.note

    def run(self, decimation: int = 1) -> None:
        engine = self.engine
        engine.resize(int(decimation))
        engine.advance()  # the state's backend, one substep per call (no derived pass)
        self.captured = {"physics": bool(getattr(self.backend, "graph_captured", False)), "actuators": engine.captured}

    def telemetry(self) -> dict:
        """The effort telemetry of the last :meth:`run` (:data:`~actuator_gym.runtime.telemetry.TELEMETRY`)."""
        return self.engine.telemetry()
