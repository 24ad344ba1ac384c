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

__all__ = ["import_warp", "resolve_device", "HostArray"]


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

