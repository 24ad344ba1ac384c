"""The ONNX operators an actuator network may use, each as a torch function ``(args, attrs) -> tensor``.

``args`` are the node's inputs in order (``None`` for an omitted optional input), ``attrs`` its
attributes. The set covers what MLP / LSTM / GRU actuator nets export to (``LSTM`` and ``GRU``
nodes and ``Constant`` are handled by :class:`~.onnx_reader.OnnxGraph` itself); a graph with any
other operator is refused when it is read.
"""

from __future__ import annotations

import torch

__all__ = ["ONNX_OPS"]


def _axes(args, attrs):
    if len(args) > 1 and args[1] is not None:
        return [int(a) for a in args[1].tolist()]
    return list(attrs.get("axes", []))


def _gemm(a, at):
    A, B = a[0], a[1]
    if at.get("transA", 0):
        A = A.transpose(-1, -2)
    if at.get("transB", 0):
        B = B.transpose(-1, -2)
    y = (A @ B) * float(at.get("alpha", 1.0)) if at.get("alpha", 1.0) != 1.0 else A @ B
    if len(a) > 2 and a[2] is not None:
        c = a[2] * float(at.get("beta", 1.0)) if at.get("beta", 1.0) != 1.0 else a[2]
        y = y + c
    return y


def _squeeze(a, at):
    axes = _axes(a, at)
    x = a[0]
    if not axes:
        return x.squeeze()
    for ax in sorted((ax % x.dim() for ax in axes), reverse=True):
        x = x.squeeze(ax)
    return x


def _unsqueeze(a, at):
    x = a[0]
    for ax in sorted(_axes(a, at)):
        x = x.unsqueeze(ax if ax >= 0 else ax + x.dim() + 1)
    return x


def _reshape(a, at):
    shape = [int(s) for s in a[1].tolist()]
    shape = [a[0].shape[i] if s == 0 else s for i, s in enumerate(shape)]
    return a[0].reshape(shape)


def _slice(a, at):
    x = a[0]
    starts, ends = a[1].tolist(), a[2].tolist()
    axes = a[3].tolist() if len(a) > 3 and a[3] is not None else list(range(len(starts)))
    steps = a[4].tolist() if len(a) > 4 and a[4] is not None else [1] * len(starts)
    idx = [slice(None)] * x.dim()
    for s, e, ax, st in zip(starts, ends, axes, steps):
        n = x.shape[ax]
        e = max(min(e, n), -n - 1) if abs(e) < 2**62 else (n if e > 0 else None)
        idx[ax] = slice(s, e, st)
    return x[tuple(idx)]


ONNX_OPS = {
    "Gemm": _gemm,
    "MatMul": lambda a, at: a[0] @ a[1],
    "Add": lambda a, at: a[0] + a[1],
    "Sub": lambda a, at: a[0] - a[1],
    "Mul": lambda a, at: a[0] * a[1],
    "Div": lambda a, at: a[0] / a[1],
    "Neg": lambda a, at: -a[0],
    "Relu": lambda a, at: torch.relu(a[0]),
    "LeakyRelu": lambda a, at: torch.nn.functional.leaky_relu(a[0], float(at.get("alpha", 0.01))),
    "Elu": lambda a, at: torch.nn.functional.elu(a[0], float(at.get("alpha", 1.0))),
    "Selu": lambda a, at: torch.selu(a[0]),
    "Tanh": lambda a, at: torch.tanh(a[0]),
    "Sigmoid": lambda a, at: torch.sigmoid(a[0]),
    "Softsign": lambda a, at: torch.nn.functional.softsign(a[0]),
    "Softplus": lambda a, at: torch.nn.functional.softplus(a[0]),
    "Identity": lambda a, at: a[0],
    "Clip": lambda a, at: torch.clamp(
        a[0],
        a[1] if len(a) > 1 and a[1] is not None else at.get("min"),
        a[2] if len(a) > 2 and a[2] is not None else at.get("max"),
    ),
    "Squeeze": _squeeze,
    "Unsqueeze": _unsqueeze,
    "Reshape": _reshape,
    "Flatten": lambda a, at: a[0].flatten(int(at.get("axis", 1))) if int(at.get("axis", 1)) > 0 else a[0].reshape(1, -1),
    "Concat": lambda a, at: torch.cat([x for x in a if x is not None], dim=int(at["axis"])),
    "Transpose": lambda a, at: a[0].permute(*at["perm"]) if "perm" in at else a[0].permute(*reversed(range(a[0].dim()))),
    "Slice": _slice,
}

