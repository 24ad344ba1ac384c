"""Shared plumbing of the Warp backends (MuJoCo-Warp, Newton): lazy imports, device mapping,
host views of device arrays, and the device-side substep loop with optional CUDA-graph capture.

Nothing here imports Warp at module import; :func:`import_warp` does, on first use.

Devices. ``device="cpu"`` is Warp's CPU device (kernels compiled for the host); every Warp array
then lives in host memory and ``array.numpy()`` / ``wp.to_torch(array)`` are zero-copy views, so
the task layer's numpy code reads and writes the engine's state directly. ``device="cuda"`` /
``"cuda:N"`` keeps the state on the GPU; torch views (``wp.to_torch``) still share memory, and the
numpy views the task layer uses are host mirrors (see :class:`HostArray`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

__all__ = ["import_warp", "resolve_device", "HostArray", "graph_capturable", "DeviceLoop"]


def import_warp():
    """``warp`` (imported on first use, quietly), or an ``ImportError`` naming the extra."""
    try:
        import warp as wp
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            "the Warp backends need warp-lang: pip install 'actuator-gym[warp]' "
            "(warp-lang==1.19.0, mujoco-warp==4.0.0, newton==1.8.0)"
        ) from exc
    wp.config.quiet = True
    return wp


def import_extra(module: str, hint: str):
    """Import ``module`` of a Warp-based backend (warp first), or an ``ImportError`` with ``hint``."""
    import importlib

    import_warp()
    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(hint) from exc


def resolve_device(device: Any) -> tuple[str, torch.device]:
    """``(warp device name, torch device)`` for ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or a torch device."""
    from .._checks import check_device

    d = check_device(device)
    if d.type == "cpu":
        return "cpu", torch.device("cpu")
    if d.type == "cuda":
        idx = 0 if d.index is None else int(d.index)
        wp = import_warp()
        if not wp.is_cuda_available():
            raise ValueError(f"device={device!r}: Warp sees no CUDA device here; use device='cpu'")
        return f"cuda:{idx}", torch.device("cuda", idx)
    raise ValueError(f"device must be 'cpu', 'cuda' or 'cuda:N', got {device!r}")


class HostArray:
    """A numpy view of a Warp array for the (numpy) task layer.

    On the CPU device ``np`` *is* the Warp array's memory (zero copy; writes reach the engine, and
    ``pull``/``push`` do nothing). On CUDA ``np`` is a host mirror: ``pull()`` copies device ->
    host, ``push()`` host -> device; the backends call them at the documented points.
    """

    __slots__ = ("arr", "np", "on_host", "stale")

    def __init__(self, arr):
        self.arr = arr
        self.on_host = arr.device.is_cpu
        self.np = arr.numpy()  # a view on CPU, a copy on CUDA
        self.stale = False

    def pull(self) -> np.ndarray:
        if not self.on_host and self.stale:
            self.np[...] = self.arr.numpy()
        self.stale = False
        return self.np

    def push(self) -> None:
        if not self.on_host:
            self.arr.assign(self.np)


def graph_capturable(collection) -> tuple[bool, str]:
    """Whether ``collection.compute`` can be recorded once and replayed from a CUDA graph, and why not.

    Each part says so itself (``Part.graph_safe``: the PD / PID drives and the max-effort,
    DC-motor and position-based clamps are pure in-place tensor math; a ``Delay`` is on the torch
    path, where its write index and counters live on the device; neural drives and user parts are
    not). Not capturable either: ``check_finite=True`` (reads values on the host), engine-servo
    groups (``ImplicitActuatorCfg``) and Stable-PD groups (``effort_mode="implicit"``: they need
    the mass matrix from the engine).
    """
    for name, model in collection.items():
        if model.check_finite:
            return False, f"group {name!r}: check_finite=True synchronises with the host"
        if model.engine_servo or model.stable_pd:
            return False, f"group {name!r}: implicit (solver-side or Stable-PD) effort"
        for part in model.parts:
            if not part.graph_safe:
                return False, f"group {name!r}: {part.graph_unsafe_reason}"
    return True, ""


class DeviceLoop:
    """The substep loop ``actuators -> effort -> physics`` run entirely on the backend's device:
    the substep engine (:class:`~actuator_gym.substep.SubstepEngine`) over the backend's torch
    views (:class:`~actuator_gym.substep.TorchJointState`), advanced by ``backend.step``.

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
        from ..substep import SubstepEngine, TorchJointState

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
        self.engine = SubstepEngine(collection, TorchJointState(backend, collection.applied_effort), self.dt, 1,
                                    capture="auto" if self.want_graph else False)
        self.captured = {"physics": False, "actuators": False}

    @property
    def note(self) -> str:
        """Why the actuator part is not captured ("" when it is)."""
        return self.engine.note

    def run(self, decimation: int = 1) -> None:
        be, engine = self.backend, self.engine
        engine.resize(int(decimation))
        engine.run(lambda k: be.step(derived=False, graph=self.want_graph))
        self.captured = {"physics": bool(getattr(be, "graph_captured", False)), "actuators": engine.captured}

    def telemetry(self) -> dict:
        """The effort telemetry of the last :meth:`run` (:data:`~actuator_gym.substep.TELEMETRY`)."""
        return self.engine.telemetry()
