"""Loading (and writing) actuator-network checkpoints, safely.

Formats, recognised by content (not by file extension):

=================  ==========================================  =====================================
format             what it is                                  trust
=================  ==========================================  =====================================
ONNX (``.onnx``)   protobuf graph + weights; our metadata is   data: always loads
                   one JSON string under the model property
                   ``metadata``
weights ``.npz``   raw tensors named like a torch state dict   data: always loads
                   (+ optional ``__metadata__`` JSON string)
TorchScript        zip with ``code/`` and ``constants.pkl``    carries code: needs
(``.pt``)          (published actuator nets, Isaac Lab)        ``allow_unsafe_checkpoint=True``
torch.export       zip with ``archive_format`` / ``models/``   carries code: needs the flag
(``.pt2``)
pickle             ``torch.save`` files and plain pickles      carries code: needs the flag; even
                                                               then read with
                                                               ``torch.load(weights_only=True)``
                                                               (a state dict only)
=================  ==========================================  =====================================

**How ONNX graphs are executed.** The file is parsed with the ``onnx`` package (protobuf only, no
code is run) and each node is mapped onto torch operations; recurrent nodes (LSTM, GRU) become
``torch.nn.LSTM`` / ``torch.nn.GRU`` modules holding the file's weights (gates re-ordered). So the
network runs through the same torch code on CPU and GPU, batched with the rest of the model, with
no onnxruntime dependency and no host round trip on GPU. The supported operator set covers what
MLP / LSTM / GRU actuator nets export to; anything else is a ``ValueError`` naming the file and
the operator.

Every network handed to a drive has one calling convention (``batch = num_envs * num_joints`` rows,
env-major):

* feed-forward: ``net(x: (batch, in_features)) -> (batch, 1)``;
* recurrent: ``net(x: (batch, in_features), state: tuple[(num_layers, batch, hidden), ...])
  -> ((batch, 1), state)`` with attributes ``num_layers``, ``hidden_size``, ``num_states``
  (2 for LSTM: ``(h, c)``; 1 for GRU: ``(h,)``).

:func:`validate_network` runs a dummy batch and raises ``ValueError`` naming the file and the
shape returned when the output is not ``(batch, 1)``.
"""

from __future__ import annotations

import json
import os
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import torch
from torch import nn

__all__ = [
    "LoadedNetwork",
    "load_network",
    "network_from_state_dict",
    "validate_network",
    "read_metadata",
    "export_onnx",
    "MLPNet",
    "RecurrentNet",
]

UNSAFE_FORMATS = ("torchscript", "torch.export", "pickle")


@dataclass
class LoadedNetwork:
    """A network in our calling convention plus what the file said about it."""

    module: nn.Module
    kind: str  # "mlp", "lstm" or "gru"
    metadata: dict = field(default_factory=dict)
    source: str = "<module>"
    format: str = "module"


# ---------------------------------------------------------------------------------------------
# Our own modules (the target of ONNX/state-dict conversion and of the fit tool)
# ---------------------------------------------------------------------------------------------
_ACTIVATIONS = {
    "elu": nn.ELU,
    "relu": nn.ReLU,
    "tanh": nn.Tanh,
    "softsign": nn.Softsign,
    "sigmoid": nn.Sigmoid,
    "leaky_relu": nn.LeakyReLU,
    "identity": nn.Identity,
}


def _activation(name: str, where: str) -> nn.Module:
    try:
        return _ACTIVATIONS[str(name).lower()]()
    except KeyError:
        raise ValueError(f"{where}: unknown activation {name!r}; known: {sorted(_ACTIVATIONS)}") from None


class MLPNet(nn.Sequential):
    """``Linear -> act -> ... -> Linear`` (the last layer has one output)."""

    def __init__(self, sizes: Sequence[int], activation: str = "elu"):
        layers: list[nn.Module] = []
        for i in range(len(sizes) - 1):
            layers.append(nn.Linear(sizes[i], sizes[i + 1]))
            if i < len(sizes) - 2:
                layers.append(_activation(activation, "MLPNet"))
        super().__init__(*layers)
        self.activation = activation


class RecurrentNet(nn.Module):
    """One-step LSTM/GRU followed by a head: ``head(rnn(x, state)) [-> tanh] [* scale]``."""

    def __init__(self, rnn: nn.Module, head: nn.Module, head_activation: str | None = None, scale: float | None = None):
        super().__init__()
        self.rnn = rnn
        self.head = head
        self.out_act = _activation(head_activation, "RecurrentNet") if head_activation else None
        self.scale = None if scale is None else float(scale)
        self.num_layers = rnn.num_layers
        self.hidden_size = rnn.hidden_size
        self.num_states = 2 if isinstance(rnn, nn.LSTM) else 1

    def forward(self, x: torch.Tensor, state: tuple):
        y, new = self.rnn(x.unsqueeze(0), state if self.num_states == 2 else state[0])
        out = self.head(y[0])
        if self.out_act is not None:
            out = self.out_act(out)
        if self.scale is not None:
            out = out * self.scale
        return out, (tuple(new) if self.num_states == 2 else (new,))


# ---------------------------------------------------------------------------------------------
# State dicts (plain tensors: data)
# ---------------------------------------------------------------------------------------------
def _linear_stack(sd: Mapping[str, torch.Tensor], prefixes: list[str], activation: str, where: str) -> nn.Sequential:
    layers: list[nn.Module] = []
    for k, p in enumerate(prefixes):
        w = sd[p + "weight"]
        lin = nn.Linear(w.shape[1], w.shape[0], bias=(p + "bias") in sd)
        with torch.no_grad():
            lin.weight.copy_(w)
            if lin.bias is not None:
                lin.bias.copy_(sd[p + "bias"])
        layers.append(lin)
        if k < len(prefixes) - 1:
            layers.append(_activation(activation, where))
    for a, b in zip(layers[::2], layers[2::2]):
        if a.out_features != b.in_features:
            raise ValueError(f"{where}: layer sizes do not chain ({a.out_features} -> {b.in_features})")
    return nn.Sequential(*layers)


def network_from_state_dict(
    state_dict: Mapping[str, Any], kind: str, metadata: Mapping[str, Any] | None = None, source: str = "<state dict>"
) -> nn.Module:
    """Build a network in our calling convention from raw weights (torch state-dict names).

    ``kind="mlp"``: every 2-D ``*.weight`` is a Linear layer, in the order given, with
    ``metadata["activation"]`` (default ``"elu"``) between layers. ``kind="lstm"``/``"gru"``: the
    keys ``<p>.weight_ih_l0 ...`` define the recurrent cell; the remaining Linear layers form the
    head; an optional scalar ``scale`` tensor and ``metadata["head_activation"]`` (e.g. ``"tanh"``)
    finish the head (Newton's GRU: ``tanh(head(h)) * scale``).
    """
    meta = dict(metadata or {})
    sd = {str(k): torch.as_tensor(np.asarray(v) if not isinstance(v, torch.Tensor) else v).float() for k, v in state_dict.items()}
    where = str(source)
    activation = meta.get("activation", "elu")
    rnn_prefix = None
    if kind in ("lstm", "gru"):
        cands = [k[: -len("weight_ih_l0")] for k in sd if k.endswith("weight_ih_l0")]
        if len(cands) != 1:
            raise ValueError(f"{where}: expected one recurrent layer (keys '*weight_ih_l0'), found {len(cands)}")
        rnn_prefix = cands[0]
    lin_prefixes = [
        k[: -len("weight")]
        for k in sd
        if k.endswith("weight") and sd[k].dim() == 2 and (rnn_prefix is None or not k.startswith(rnn_prefix))
    ]
    if not lin_prefixes:
        raise ValueError(f"{where}: no Linear layers ('*.weight' 2-D tensors) in the weights")
    head = _linear_stack(sd, lin_prefixes, activation, where)
    if kind == "mlp":
        return head
    if kind not in ("lstm", "gru"):
        raise ValueError(f"{where}: kind must be 'mlp', 'lstm' or 'gru', got {kind!r}")
    gates = 4 if kind == "lstm" else 3
    w0 = sd[rnn_prefix + "weight_ih_l0"]
    hidden = w0.shape[0] // gates
    layers = 0
    while rnn_prefix + f"weight_ih_l{layers}" in sd:
        layers += 1
    rnn = (nn.LSTM if kind == "lstm" else nn.GRU)(w0.shape[1], hidden, num_layers=layers)
    with torch.no_grad():
        for name, p in rnn.named_parameters():
            key = rnn_prefix + name
            if key not in sd:
                raise ValueError(f"{where}: missing recurrent weight {key!r}")
            if tuple(sd[key].shape) != tuple(p.shape):
                raise ValueError(f"{where}: {key!r} has shape {tuple(sd[key].shape)}, expected {tuple(p.shape)}")
            p.copy_(sd[key])
    scale = None
    for k in ("scale", "net_scale"):
        if k in sd and sd[k].numel() == 1:
            scale = float(sd[k])
    if "output_scale" in meta:
        scale = float(meta["output_scale"])
    return RecurrentNet(rnn, head, meta.get("head_activation"), scale)


# ---------------------------------------------------------------------------------------------
# ONNX -> torch
# ---------------------------------------------------------------------------------------------
class OnnxGraph(nn.Module):
    """Executes an ONNX graph with torch operations (see the module docstring)."""

    def __init__(self, model, source: str):
        super().__init__()
        import onnx
        from onnx import numpy_helper

        self.source = source
        g = model.graph
        consts: dict[str, torch.Tensor] = {}
        for init in g.initializer:
            consts[init.name] = torch.from_numpy(np.array(numpy_helper.to_array(init)))
        init_names = set(consts)
        self.input_names = [i.name for i in g.input if i.name not in init_names]
        self.output_names = [o.name for o in g.output]
        self._consts = consts
        self.rnns = nn.ModuleDict()
        self._program: list[tuple[str, list[str], list[str], dict]] = []
        for k, node in enumerate(g.node):
            attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
            op = node.op_type
            if op == "Constant":
                v = attrs.get("value")
                if v is None:
                    raise ValueError(f"{source}: Constant node without a tensor 'value' is not supported")
                consts[node.output[0]] = torch.from_numpy(np.array(numpy_helper.to_array(v)))
                continue
            if op in ("LSTM", "GRU"):
                attrs["_module"] = f"rnn{k}"
                self.rnns[f"rnn{k}"] = self._recurrent(op, node, attrs, consts)
            elif op not in _ONNX_OPS:
                raise ValueError(
                    f"{source}: ONNX operator {op!r} is not supported; supported: {sorted([*_ONNX_OPS, 'LSTM', 'GRU', 'Constant'])}"
                )
            self._program.append((op, list(node.input), list(node.output), attrs))
        self._const_keys = {}
        for i, (name, t) in enumerate(consts.items()):
            self.register_buffer(f"const{i}", t, persistent=False)
            self._const_keys[name] = f"const{i}"

    def _recurrent(self, op, node, attrs, consts):
        src = self.source
        if attrs.get("direction", b"forward") not in (b"forward", "forward"):
            raise ValueError(f"{src}: {op} direction {attrs['direction']!r} is not supported (forward only)")
        for bad in ("clip", "activations", "input_forget"):
            if bad in attrs and attrs[bad]:
                raise ValueError(f"{src}: {op} attribute {bad!r} is not supported")
        if attrs.get("layout", 0) != 0:
            raise ValueError(f"{src}: {op} layout=1 is not supported")
        if op == "GRU" and attrs.get("linear_before_reset", 0) != 1:
            raise ValueError(f"{src}: GRU with linear_before_reset=0 is not supported (torch's GRU applies it)")
        if op == "LSTM" and len(node.input) > 7 and node.input[7]:
            raise ValueError(f"{src}: LSTM peepholes are not supported")
        try:
            W, R = consts[node.input[1]], consts[node.input[2]]
        except KeyError:
            raise ValueError(f"{src}: {op} weights must be initializers") from None
        B = consts.get(node.input[3]) if len(node.input) > 3 and node.input[3] else None
        hidden = int(attrs["hidden_size"])
        gates = 4 if op == "LSTM" else 3
        order = [0, 2, 3, 1] if op == "LSTM" else [1, 0, 2]  # onnx iofc -> torch ifgo; zrh -> rzn

        def reorder(t):
            blocks = t.reshape(gates, hidden, *t.shape[1:])
            return blocks[order].reshape(gates * hidden, *t.shape[1:])

        rnn = (nn.LSTM if op == "LSTM" else nn.GRU)(W.shape[2], hidden)
        with torch.no_grad():
            rnn.weight_ih_l0.copy_(reorder(W[0]))
            rnn.weight_hh_l0.copy_(reorder(R[0]))
            if B is None:
                rnn.bias_ih_l0.zero_()
                rnn.bias_hh_l0.zero_()
            else:
                rnn.bias_ih_l0.copy_(reorder(B[0, : gates * hidden]))
                rnn.bias_hh_l0.copy_(reorder(B[0, gates * hidden :]))
        return rnn

    def forward(self, *inputs):
        env: dict[str, Any] = {n: getattr(self, k) for n, k in self._const_keys.items()}
        env[""] = None
        for name, x in zip(self.input_names, inputs):
            env[name] = x
        for op, ins, outs, attrs in self._program:
            args = [env[i] if i in env else None for i in ins]
            if op in ("LSTM", "GRU"):
                res = self._run_rnn(op, self.rnns[attrs["_module"]], args)
            else:
                res = _ONNX_OPS[op](args, attrs)
            if not isinstance(res, tuple):
                res = (res,)
            for o, v in zip(outs, res):
                if o:
                    env[o] = v
        return tuple(env[o] for o in self.output_names)

    @staticmethod
    def _run_rnn(op, rnn, args):
        x = args[0]
        h0 = args[5] if len(args) > 5 else None
        if op == "LSTM":
            c0 = args[6] if len(args) > 6 else None
            if h0 is None:
                h0 = x.new_zeros(1, x.shape[1], rnn.hidden_size)
            if c0 is None:
                c0 = x.new_zeros(1, x.shape[1], rnn.hidden_size)
            y, (h, c) = rnn(x, (h0, c0))
            return y.unsqueeze(1), h, c
        if h0 is None:
            h0 = x.new_zeros(1, x.shape[1], rnn.hidden_size)
        y, h = rnn(x, h0)
        return y.unsqueeze(1), h


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


_ONNX_OPS = {
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


class _OnnxMLP(nn.Module):
    def __init__(self, graph: OnnxGraph):
        super().__init__()
        self.graph = graph

    def forward(self, x):
        return self.graph(x)[0]


class _OnnxRecurrent(nn.Module):
    """Adapts a one-step recurrent ONNX graph (inputs ``[1, batch, F]``, state ``[L, batch, H]``)."""

    def __init__(self, graph: OnnxGraph, kind: str, meta: Mapping[str, Any]):
        super().__init__()
        self.graph = graph
        self.num_states = 2 if kind == "lstm" else 1
        src = graph.source
        ins, outs = graph.input_names, graph.output_names
        in_keys = ("input_name", "hidden_in_name", "cell_in_name")[: 1 + self.num_states]
        out_keys = ("output_name", "hidden_out_name", "cell_out_name")[: 1 + self.num_states]
        if len(ins) != 1 + self.num_states or len(outs) != 1 + self.num_states:
            raise ValueError(
                f"{src}: a {kind} graph needs {1 + self.num_states} inputs and outputs "
                f"(x{', h, c' if kind == 'lstm' else ', h'}), got inputs {ins} and outputs {outs}"
            )
        names_in = [meta.get(k, ins[i]) for i, k in enumerate(in_keys)]
        names_out = [meta.get(k, outs[i]) for i, k in enumerate(out_keys)]
        for n in names_in:
            if n not in ins:
                raise ValueError(f"{src}: metadata names graph input {n!r}, graph inputs are {ins}")
        for n in names_out:
            if n not in outs:
                raise ValueError(f"{src}: metadata names graph output {n!r}, graph outputs are {outs}")
        self._in_pos = [ins.index(n) for n in names_in]
        self._out_pos = [outs.index(n) for n in names_out]
        rnns = list(graph.rnns.values())
        if not rnns:
            raise ValueError(f"{src}: model_type {kind!r} but the graph has no {kind.upper()} node")
        self.num_layers = int(meta.get("num_layers", len(rnns)))
        self.hidden_size = int(meta.get("hidden_size", rnns[0].hidden_size))

    def forward(self, x, state):
        args: list[Any] = [None] * (1 + self.num_states)
        args[self._in_pos[0]] = x.unsqueeze(0)
        for k, s in enumerate(state):
            args[self._in_pos[k + 1]] = s
        res = self.graph(*args)
        y = res[self._out_pos[0]].reshape(x.shape[0], -1)
        return y, tuple(res[p] for p in self._out_pos[1:])


# ---------------------------------------------------------------------------------------------
# TorchScript / torch.export adapters (trusted files only)
# ---------------------------------------------------------------------------------------------
class _BatchFirstRecurrent(nn.Module):
    """Isaac Lab's convention: ``net(x (batch, 1, F), (h, c)) -> (effort, (h, c))`` (GRU: ``h``)."""

    def __init__(self, module, kind: str, meta: Mapping[str, Any], source: str):
        super().__init__()
        self.inner = module
        self.num_states = 2 if kind == "lstm" else 1
        rnn = getattr(module, "lstm" if kind == "lstm" else "gru", None)
        try:
            self.num_layers = int(meta.get("num_layers", rnn.num_layers if rnn is not None else None))
            self.hidden_size = int(meta.get("hidden_size", rnn.hidden_size if rnn is not None else None))
        except (TypeError, AttributeError):
            raise ValueError(
                f"{source}: cannot tell the {kind.upper()} size: the module has no attribute "
                f"'{'lstm' if kind == 'lstm' else 'gru'}' and the metadata gives no num_layers/hidden_size"
            ) from None

    def forward(self, x, state):
        if self.num_states == 2:
            y, (h, c) = self.inner(x.unsqueeze(1), (state[0], state[1]))
            return y.reshape(x.shape[0], -1), (h, c)
        y, h = self.inner(x.unsqueeze(1), state[0])
        return y.reshape(x.shape[0], -1), (h,)


# ---------------------------------------------------------------------------------------------
# loading
# ---------------------------------------------------------------------------------------------
def _sniff(path: Path) -> str:
    with open(path, "rb") as fh:
        head = fh.read(4)
    if head[:2] == b"PK":
        try:
            names = zipfile.ZipFile(path).namelist()
        except zipfile.BadZipFile:
            return "unknown"
        if names and all(n.endswith(".npy") for n in names):
            return "npz"
        if any(n.endswith("archive_format") or "/models/" in n for n in names):
            return "torch.export"
        if any("/code/" in n for n in names) or any(n.endswith("constants.pkl") for n in names):
            return "torchscript"
        if any(n.endswith("data.pkl") for n in names):
            return "pickle"
        return "unknown"
    if head[:1] == b"\x80":
        return "pickle"
    return "onnx"


def _unsafe_error(path: Path, fmt: str) -> ValueError:
    return ValueError(
        f"{path}: this is a {fmt} checkpoint, a format that can execute code when loaded; it is loaded "
        f"only with allow_unsafe_checkpoint=True (pass it only for files you trust), or export the "
        f"network to ONNX instead"
    )


def read_metadata(path: str | os.PathLike) -> dict:
    """The metadata JSON stored in an ONNX file (``{}`` when absent)."""
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    return _onnx_metadata(model, Path(path))


def _onnx_metadata(model, path: Path) -> dict:
    for p in model.metadata_props:
        if p.key == "metadata":
            try:
                meta = json.loads(p.value)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}: the 'metadata' property is not valid JSON ({exc})") from None
            if not isinstance(meta, dict):
                raise ValueError(f"{path}: the 'metadata' property must be a JSON object")
            return meta
    return {}


def load_network(
    path: str | os.PathLike,
    kind: str,
    *,
    allow_unsafe_checkpoint: bool = False,
    metadata: Mapping[str, Any] | None = None,
) -> LoadedNetwork:
    """Load a checkpoint as a network in our calling convention (CPU, eval mode).

    ``kind`` is the drive's model type (``"mlp"``, ``"lstm"``, ``"gru"``); an ONNX file whose
    metadata names another ``model_type`` is a ``ValueError``. ``metadata`` supplements the file's
    own (used for formats without metadata, e.g. TorchScript or a pickled state dict).
    """
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"network_file {str(p)!r} does not exist")
    fmt = _sniff(p)
    if fmt in UNSAFE_FORMATS and not allow_unsafe_checkpoint:
        raise _unsafe_error(p, fmt)
    meta: dict = {}
    try:
        if fmt == "onnx":
            import onnx

            try:
                model = onnx.load(str(p), load_external_data=False)
            except Exception as exc:  # protobuf DecodeError and friends
                raise ValueError(f"{p}: not a readable ONNX (or other supported) checkpoint ({exc})") from None
            if len(model.graph.node) == 0:
                raise ValueError(f"{p}: not a readable checkpoint (an ONNX graph without nodes)")
            meta = _onnx_metadata(model, p)
            _check_kind(meta, kind, p)
            graph = OnnxGraph(model, str(p))
            module: nn.Module = _OnnxMLP(graph) if kind == "mlp" else _OnnxRecurrent(graph, kind, {**meta, **(metadata or {})})
        elif fmt == "npz":
            with np.load(p, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
            raw = arrays.pop("__metadata__", None)
            if raw is not None:
                meta = json.loads(str(raw))
            module = network_from_state_dict(arrays, kind, {**meta, **(metadata or {})}, str(p))
        elif fmt == "torchscript":
            with warnings.catch_warnings():  # torch marks TorchScript deprecated; the format is still what is published
                warnings.simplefilter("ignore", DeprecationWarning)
                module = torch.jit.load(str(p), map_location="cpu")
            if kind != "mlp":
                module = _BatchFirstRecurrent(module, kind, dict(metadata or {}), str(p))
        elif fmt == "torch.export":
            extra = {"metadata.json": ""}
            program = torch.export.load(str(p), extra_files=extra)
            if extra["metadata.json"]:
                meta = json.loads(extra["metadata.json"])
            module = program.module()
            if kind != "mlp":
                module = _BatchFirstRecurrent(module, kind, {**meta, **(metadata or {})}, str(p))
        elif fmt == "pickle":
            obj = torch.load(str(p), map_location="cpu", weights_only=True)
            if not isinstance(obj, Mapping) or not all(isinstance(v, torch.Tensor) for v in obj.values()):
                raise ValueError(
                    f"{p}: a pickled checkpoint is read as a state dict only (torch.load(weights_only=True)); "
                    f"got {type(obj).__name__}. Save a state dict, or export to ONNX"
                )
            module = network_from_state_dict(obj, kind, dict(metadata or {}), str(p))
        else:
            raise ValueError(f"{p}: not a recognised checkpoint (ONNX, weights .npz, TorchScript, torch.export)")
    except ValueError:
        raise
    except Exception as exc:  # malformed archive, unsupported content
        raise ValueError(f"{p}: could not load the {fmt} checkpoint ({type(exc).__name__}: {exc})") from None
    _check_kind(meta, kind, p)
    try:
        module.eval()
    except NotImplementedError:  # torch.export modules have no train/eval switch
        pass
    return LoadedNetwork(module=module, kind=kind, metadata=meta, source=str(p), format=fmt)


def _check_kind(meta: Mapping[str, Any], kind: str, p: Path) -> None:
    mt = meta.get("model_type")
    if mt is not None and mt != kind:
        raise ValueError(f"{p}: metadata model_type is {mt!r} but a {kind!r} drive was asked for")


def validate_network(net: LoadedNetwork, in_features: int, batch: int = 3) -> None:
    """Run a dummy batch; ``ValueError`` naming the file and the shape returned unless ``(batch, 1)``."""
    x = torch.zeros(batch, in_features)
    try:
        with torch.inference_mode():
            if net.kind == "mlp":
                y = net.module(x)
            else:
                m = net.module
                state = tuple(torch.zeros(m.num_layers, batch, m.hidden_size) for _ in range(m.num_states))
                y, new = m(x, state)
                for s in new:
                    if tuple(s.shape) != (m.num_layers, batch, m.hidden_size):
                        raise ValueError(
                            f"{net.source}: recurrent state came back with shape {tuple(s.shape)}, expected "
                            f"{(m.num_layers, batch, m.hidden_size)}"
                        )
    except ValueError:
        raise
    except Exception as exc:
        raise ValueError(
            f"{net.source}: the network failed on a dummy batch of shape {(batch, in_features)} "
            f"({type(exc).__name__}: {exc})"
        ) from None
    shape = tuple(getattr(y, "shape", ()))
    if shape != (batch, 1):
        raise ValueError(
            f"{net.source}: the network returned shape {shape} for a dummy batch of shape "
            f"{(batch, in_features)}; expected ({batch}, 1)"
        )


# ---------------------------------------------------------------------------------------------
# writing ONNX (used by the fit tool)
# ---------------------------------------------------------------------------------------------
def export_onnx(module: nn.Module, path: str | os.PathLike, kind: str, metadata: Mapping[str, Any]) -> None:
    """Write ``module`` (an :class:`MLPNet` / ``nn.Sequential`` of Linear + activations, or a
    :class:`RecurrentNet`) as an ONNX graph with ``metadata`` (JSON) under the property ``metadata``.

    Built with the ``onnx`` helper API (no exporter dependency). Inputs have a dynamic ``batch``
    axis; recurrent graphs take ``input [1, batch, F]``, ``h_in`` (and ``c_in``) ``[1, batch, H]``.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes, inits = [], []

    def const(name, t):
        inits.append(numpy_helper.from_array(np.ascontiguousarray(t.detach().cpu().numpy().astype(np.float32)), name))
        return name

    def seq(layers, x, prefix):
        mods = [m for m in layers if not isinstance(m, nn.Identity)]
        for k, m in enumerate(mods):
            out = f"{prefix}_{k}"
            if isinstance(m, nn.Linear):
                args = [x, const(f"{prefix}{k}.weight", m.weight)]
                if m.bias is not None:
                    args.append(const(f"{prefix}{k}.bias", m.bias))
                nodes.append(helper.make_node("Gemm", args, [out], transB=1))
            else:
                op = {nn.ELU: "Elu", nn.ReLU: "Relu", nn.Tanh: "Tanh", nn.Softsign: "Softsign", nn.Sigmoid: "Sigmoid", nn.LeakyReLU: "LeakyRelu"}.get(type(m))
                if op is None:
                    raise ValueError(f"export_onnx: layer {type(m).__name__} is not supported")
                kw = {"alpha": float(m.alpha)} if isinstance(m, nn.ELU) else {}
                if isinstance(m, nn.LeakyReLU):
                    kw = {"alpha": float(m.negative_slope)}
                nodes.append(helper.make_node(op, [x], [out], **kw))
            x = out
        return x

    batch = "batch"
    if kind == "mlp":
        first = next(m for m in module.modules() if isinstance(m, nn.Linear))
        inputs = [helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, first.in_features])]
        y = seq(list(module), "input", "l")
        nodes.append(helper.make_node("Identity", [y], ["output"]))
        outputs = [helper.make_tensor_value_info("output", TensorProto.FLOAT, [batch, 1])]
    else:
        if not isinstance(module, RecurrentNet) or module.num_layers != 1:
            raise ValueError("export_onnx: recurrent export needs a one-layer RecurrentNet")
        rnn, H = module.rnn, module.hidden_size
        lstm = isinstance(rnn, nn.LSTM)
        gates = 4 if lstm else 3
        order = [0, 3, 1, 2] if lstm else [1, 0, 2]  # torch ifgo -> onnx iofc; rzn -> zrh

        def reorder(t):
            return t.reshape(gates, H, *t.shape[1:])[order].reshape(gates * H, *t.shape[1:])

        F = rnn.input_size
        W = const("W", reorder(rnn.weight_ih_l0).unsqueeze(0))
        R = const("R", reorder(rnn.weight_hh_l0).unsqueeze(0))
        B = const("B", torch.cat([reorder(rnn.bias_ih_l0), reorder(rnn.bias_hh_l0)]).unsqueeze(0))
        inputs = [
            helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, batch, F]),
            helper.make_tensor_value_info("h_in", TensorProto.FLOAT, [1, batch, H]),
        ]
        outs = ["y_seq", "h_out"]
        ins = ["input", W, R, B, "", "h_in"]
        if lstm:
            inputs.append(helper.make_tensor_value_info("c_in", TensorProto.FLOAT, [1, batch, H]))
            ins.append("c_in")
            outs.append("c_out")
        kw = {"hidden_size": H}
        if not lstm:
            kw["linear_before_reset"] = 1
        nodes.append(helper.make_node("LSTM" if lstm else "GRU", ins, outs, **kw))
        inits.append(numpy_helper.from_array(np.array([0, 1], dtype=np.int64), "sq_axes"))
        nodes.append(helper.make_node("Squeeze", ["y_seq", "sq_axes"], ["y_h"]))
        y = seq(list(module.head), "y_h", "head")
        if module.out_act is not None:
            y = seq([module.out_act], y, "act")
        if module.scale is not None:
            inits.append(numpy_helper.from_array(np.array(module.scale, dtype=np.float32), "out_scale"))
            nodes.append(helper.make_node("Mul", [y, "out_scale"], ["scaled"]))
            y = "scaled"
        nodes.append(helper.make_node("Identity", [y], ["output"]))
        outputs = [
            helper.make_tensor_value_info("output", TensorProto.FLOAT, [batch, 1]),
            helper.make_tensor_value_info("h_out", TensorProto.FLOAT, [1, batch, H]),
        ]
        if lstm:
            outputs.append(helper.make_tensor_value_info("c_out", TensorProto.FLOAT, [1, batch, H]))
    graph = helper.make_graph(nodes, "actuator_net", inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="actuator-gym")
    meta = {"model_type": kind, **dict(metadata)}
    helper.set_model_props(model, {"metadata": json.dumps(meta)})
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
