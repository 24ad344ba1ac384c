"""Resource limits for actuator-network checkpoints (a small file must not cost large resources).

A checkpoint is data, and data can declare sizes it does not hold: an ONNX initializer with
dims ``[100000, 100000]`` in a 1 KiB file, a ``MatMul`` whose output is billions of elements, a
metadata ``input_idx: [0, 4000000]`` that sizes the history buffers. Each limit below is checked
from *declared* sizes (initializer dims, ONNX shape inference, metadata) **before** anything of
that size is allocated or run; a checkpoint over a limit is a ``ValueError`` naming the file,
the quantity and the limit.

Override in code, for one call or for a block::

    from actuator_gym.actuators.limits import NetworkLimits, network_limits
    load_network("big.onnx", "mlp", limits=NetworkLimits(max_parameters=50_000_000))
    with network_limits(max_parameters=50_000_000):     # everything built inside the block
        cfg.build(joint_names=names, num_envs=4096)
"""

from __future__ import annotations

import contextlib
import dataclasses
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Iterator

__all__ = ["NetworkLimits", "DEFAULT_NETWORK_LIMITS", "network_limits", "current_network_limits"]


@dataclass(frozen=True)
class NetworkLimits:
    """Limits on what a checkpoint may declare. Every field is a positive integer."""

    max_file_bytes: int = 64 * 2**20
    """[bytes]: size of the checkpoint file (and of an ONNX file's external data, all tensors together)."""
    max_nodes: int = 10_000
    """Operator nodes in an ONNX graph."""
    max_parameters: int = 2**24
    """[elements]: all stored tensors together (ONNX initializers and ``Constant`` values, npz arrays);
    2**24 float32 elements are 64 MiB."""
    max_intermediate_elements: int = 2**24
    """[elements]: the batch-independent part of any tensor the graph computes (its size at a batch
    of zero rows, from ONNX shape inference)."""
    max_elements_per_row: int = 2**14
    """[elements per batch row]: how fast any computed tensor, and the recurrent state
    (``num_states * num_layers * hidden_size``), grows with the batch
    (``batch = num_envs * num_joints``); a tensor then takes at most
    ``4 bytes * (max_intermediate_elements + max_elements_per_row * batch)``."""
    max_history_steps: int = 1024
    """[substeps]: history an MLP drive keeps (``max(input_idx) + 1``, and ``len(input_idx)``)."""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"NetworkLimits: {f.name} must be an integer >= 1, got {v!r}")


DEFAULT_NETWORK_LIMITS = NetworkLimits()
"""The limits in force unless overridden (see :func:`network_limits`)."""

_CURRENT: ContextVar[NetworkLimits] = ContextVar("actuator_gym_network_limits", default=DEFAULT_NETWORK_LIMITS)


def current_network_limits() -> NetworkLimits:
    """The limits in force here (the innermost :func:`network_limits` block, else the defaults)."""
    return _CURRENT.get()


@contextlib.contextmanager
def network_limits(limits: NetworkLimits | None = None, **overrides: int) -> Iterator[NetworkLimits]:
    """Use ``limits`` (or the limits in force with ``overrides`` replaced) inside the block."""
    new = dataclasses.replace(limits or _CURRENT.get(), **overrides)
    token = _CURRENT.set(new)
    try:
        yield new
    finally:
        _CURRENT.reset(token)
