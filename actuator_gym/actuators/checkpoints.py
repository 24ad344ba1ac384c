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
(``.pt``)          (published actuator nets, Isaac Lab);       ``allow_unsafe_checkpoint=True``
                   optional extra file ``metadata.json``
torch.export       zip with ``archive_format`` / ``models/``;  carries code: needs the flag
(``.pt2``)         optional extra file ``metadata.json``
pickle             ``torch.save`` files and plain pickles      carries code: needs the flag; even
                                                               then read with
                                                               ``torch.load(weights_only=True)``
                                                               (a state dict only)
=================  ==========================================  =====================================

**Metadata.** ONNX: one JSON object under the model property ``metadata``; ``.npz``: the
``__metadata__`` array; TorchScript and torch.export: the extra file ``metadata.json`` (written by
``torch.jit.save(..., _extra_files=...)`` / ``torch.export.save(..., extra_files=...)``; Newton reads
it from ``.pt2``). Archive metadata is read with :mod:`zipfile` before the archive's code is loaded
(at most :data:`METADATA_MAX_BYTES`, UTF-8, a JSON object nested at most
``_safe_io.JSON_MAX_DEPTH``, finite numbers): it is data, never executed. The keys are Newton's
(``input_order``, ``input_idx``, ``pos_scale``, ``vel_scale``, ``effort_scale`` / ``torque_scale``,
``num_layers``, ``hidden_size``, ``model_type``, GRU ``input_columns`` / ``normalization`` /
``sample_dt_s``); ``metadata=`` supplements and overrides the file's keys, and the drives' keywords
override both (rules in :mod:`.neural`).

**How ONNX graphs are read and executed** (:mod:`.onnx_reader`). The file is parsed with the
``onnx`` package (protobuf only, no code is run), its declared sizes are checked against
:class:`~.limits.NetworkLimits` before any tensor is materialized, external data is read only from
inside the model's folder, and each node is mapped onto torch operations; recurrent nodes (LSTM,
GRU) become ``torch.nn.LSTM`` / ``torch.nn.GRU`` modules holding the file's weights (gates
re-ordered): the torch engine, the same code on CPU and GPU. The validated ``ModelProto`` is kept in
:attr:`LoadedNetwork.onnx_model`; on the CPU a drive may run it on onnxruntime instead
(:mod:`.onnx_engine`, ``onnx_engine=``), fed those validated bytes. The supported operator set covers
what MLP / LSTM / GRU actuator nets export to; anything else is a ``ValueError`` naming the file and
the operator.

Every network handed to a drive has one calling convention (``batch = num_envs * num_joints`` rows,
env-major):

* feed-forward: ``net(x: (batch, in_features)) -> (batch, 1)``;
* recurrent: ``net(x: (batch, in_features), state: tuple[(num_layers, batch, hidden), ...])
  -> ((batch, 1), state)`` with attributes ``num_layers``, ``hidden_size``, ``num_states``
  (2 for LSTM: ``(h, c)``; 1 for GRU: ``(h,)``).

:func:`validate_network` bounds an ONNX graph's computed tensor sizes (shape inference), then runs
dummy batches of two sizes and raises ``ValueError`` naming the file and the shape returned when
the output is not ``(batch, 1)``. Weights holding NaN or inf (ONNX initializers and constants,
``.npz`` / state-dict tensors, a trusted archive's parameters and buffers) are refused at load,
naming the file and the tensor. Every error of this module is a ``ValueError`` naming the file.
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

from .._safe_io import load_npz, parse_json_object, read_size
from .limits import NetworkLimits, current_network_limits
from .onnx_reader import OnnxGraph, OnnxMLP, OnnxRecurrent, finite_weights, onnx_metadata, read_metadata, read_onnx

__all__ = [
    "LoadedNetwork",
    "load_network",
    "network_from_state_dict",
    "validate_network",
    "read_metadata",
    "export_onnx",
    "MLPNet",
    "RecurrentNet",
    "OnnxGraph",
    "NetworkLimits",
]

KINDS = ("mlp", "lstm", "gru")

UNSAFE_FORMATS = ("torchscript", "torch.export", "pickle")


@dataclass
class LoadedNetwork:
    """A network in our calling convention plus what the file said about it."""

    module: nn.Module
    kind: str  # "mlp", "lstm" or "gru"
    metadata: dict = field(default_factory=dict)
    source: str = "<module>"
    format: str = "module"
    onnx_model: Any = None
    """For an ONNX file: the ``ModelProto`` as :func:`~.onnx_reader.read_onnx` validated it (external
    data inlined); what the onnxruntime engine (:mod:`.onnx_engine`) is built from. None otherwise."""


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
    where = str(source)
    sd = {str(k): torch.as_tensor(np.asarray(v) if not isinstance(v, torch.Tensor) else v).float() for k, v in state_dict.items()}
    for k, t in sd.items():
        finite_weights(t, f"weight {k!r}", where)
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
# TorchScript / torch.export adapters (trusted files only)
# ---------------------------------------------------------------------------------------------
class _BatchFirstRecurrent(nn.Module):
    """Isaac Lab's (and Newton's ``.pt2``) convention: ``net(x (batch, 1, F), (h, c)) -> (effort, (h, c))``
    (GRU: ``h``). The state size comes from the metadata's ``num_layers`` / ``hidden_size`` where
    given, else from the module's ``lstm`` / ``gru`` submodule (a torch.export module keeps the
    submodule but not its attributes, so there the metadata is needed)."""

    def __init__(self, module, kind: str, meta: Mapping[str, Any], source: str):
        super().__init__()
        self.inner = module
        self.num_states = 2 if kind == "lstm" else 1
        attr = "lstm" if kind == "lstm" else "gru"
        rnn = getattr(module, attr, None)
        for name in ("num_layers", "hidden_size"):
            if name in meta:  # the metadata first: the submodule is read only when the key is absent
                v, where = meta[name], "the metadata"
            else:
                v, where = getattr(rnn, name, None), f"the module's '{attr}' submodule"
            if v is None:
                raise ValueError(
                    f"{source}: cannot tell the {kind.upper()} size: the metadata gives no {name} and the module has "
                    f"no '{attr}' submodule with that attribute; add num_layers and hidden_size to the checkpoint's "
                    f"metadata.json (or pass metadata=)"
                )
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not float(v).is_integer() or v < 1:
                raise ValueError(f"{source}: {name} in {where} must be an integer >= 1, got {v!r}")
            setattr(self, name, int(v))

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
            with zipfile.ZipFile(path) as zf:
                names = zf.namelist()
        except (zipfile.BadZipFile, OSError, ValueError, EOFError):
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


METADATA_MAX_BYTES = 1 << 20
"""Largest ``metadata.json`` read from a TorchScript / torch.export archive (bytes)."""


def _archive_metadata(path: Path) -> dict:
    """The JSON object in a TorchScript / torch.export archive's extra file ``metadata.json``
    (``{}`` when absent), read with :mod:`zipfile` -- never through the archive's loader: its declared
    and actual size at most :data:`METADATA_MAX_BYTES`, then :func:`parse_json_object`."""
    with zipfile.ZipFile(path) as zf:
        entries = [i for i in zf.infolist() if i.filename.split("/", 1)[-1] in ("extra/metadata.json", "extra_files/metadata.json")]
        if not entries:
            return {}
        if len(entries) > 1:
            raise ValueError(f"{path}: the archive holds {len(entries)} 'metadata.json' extra files; allowed: one")
        info = entries[0]
        if info.file_size > METADATA_MAX_BYTES:
            raise ValueError(
                f"{path}: the extra file 'metadata.json' is {info.file_size} bytes; allowed: at most {METADATA_MAX_BYTES}"
            )
        with zf.open(info) as fh:
            raw = fh.read(METADATA_MAX_BYTES + 1)
    if len(raw) > METADATA_MAX_BYTES:
        raise ValueError(f"{path}: the extra file 'metadata.json' is over {METADATA_MAX_BYTES} bytes; allowed: at most that")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: the extra file 'metadata.json' is not UTF-8 text") from None
    return parse_json_object(text, str(path), "the extra file 'metadata.json'") if text.strip() else {}


def _unsafe_error(path: Path, fmt: str) -> ValueError:
    return ValueError(
        f"{path}: this is a {fmt} checkpoint, a format that can execute code when loaded; it is loaded "
        f"only with allow_unsafe_checkpoint=True (pass it only for files you trust), or export the "
        f"network to ONNX instead"
    )


def load_network(
    path: str | os.PathLike,
    kind: str,
    *,
    allow_unsafe_checkpoint: bool = False,
    metadata: Mapping[str, Any] | None = None,
    limits: NetworkLimits | None = None,
) -> LoadedNetwork:
    """Load a checkpoint as a network in our calling convention (CPU, eval mode).

    ``kind`` is the drive's model type (``"mlp"``, ``"lstm"``, ``"gru"``); an ONNX file whose
    metadata names another ``model_type`` is a ``ValueError``. ``metadata`` supplements the file's
    own (used for formats without metadata, e.g. TorchScript or a pickled state dict). ``limits``
    (default: :func:`~.limits.current_network_limits`) bounds what the file may declare.
    """
    if kind not in KINDS:
        raise ValueError(f"load_network: kind must be one of {list(KINDS)}, got {kind!r}")
    lim = limits or current_network_limits()
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"network_file {str(p)!r} does not exist")
    size = read_size(p, "network file")
    if size > lim.max_file_bytes:
        raise ValueError(f"{p}: network file is {size} bytes; allowed: at most {lim.max_file_bytes} (NetworkLimits.max_file_bytes)")
    fmt = _sniff(p)
    if fmt in UNSAFE_FORMATS and not allow_unsafe_checkpoint:
        raise _unsafe_error(p, fmt)
    meta: dict = {}
    extra_meta = dict(metadata or {})
    model = None
    try:
        if fmt == "onnx":
            model = read_onnx(p, lim)
            meta = onnx_metadata(model, p)
            _check_kind(meta, kind, p)
            graph = OnnxGraph(model, str(p))
            module: nn.Module = OnnxMLP(graph, model) if kind == "mlp" else OnnxRecurrent(graph, kind, {**meta, **extra_meta}, model)
            module.check_sizes(None, lim)
        elif fmt == "npz":
            arrays = load_npz(p, lim.max_file_bytes)
            raw = arrays.pop("__metadata__", None)
            if raw is not None:
                meta = parse_json_object(str(raw), str(p), "the '__metadata__' array")
            module = network_from_state_dict(arrays, kind, {**meta, **extra_meta}, str(p))
        elif fmt in ("torchscript", "torch.export"):
            meta = _archive_metadata(p)  # before the archive's code is loaded
            _check_kind(meta, kind, p)
            if fmt == "torchscript":
                with warnings.catch_warnings():  # torch marks TorchScript deprecated; the format is still what is published
                    warnings.simplefilter("ignore", DeprecationWarning)
                    module = torch.jit.load(str(p), map_location="cpu")
            else:
                module = torch.export.load(str(p)).module()
            for name, t in [*module.named_parameters(), *module.named_buffers()]:
                finite_weights(t.detach(), f"tensor {name!r}", str(p))
            if kind != "mlp":
                module = _BatchFirstRecurrent(module, kind, {**meta, **extra_meta}, str(p))
        elif fmt == "pickle":
            obj = torch.load(str(p), map_location="cpu", weights_only=True)
            if not isinstance(obj, Mapping) or not all(isinstance(v, torch.Tensor) for v in obj.values()):
                raise ValueError(
                    f"{p}: a pickled checkpoint is read as a state dict only (torch.load(weights_only=True)); "
                    f"got {type(obj).__name__}. Save a state dict, or export to ONNX"
                )
            module = network_from_state_dict(obj, kind, extra_meta, str(p))
        else:
            raise ValueError(f"{p}: not a recognised checkpoint (ONNX, weights .npz, TorchScript, torch.export)")
    except ValueError as exc:
        if str(p) in str(exc):
            raise
        raise ValueError(f"{p}: {exc}") from None
    except Exception as exc:  # malformed archive, unsupported content
        raise ValueError(f"{p}: could not load the {fmt} checkpoint ({type(exc).__name__}: {exc})") from None
    _check_kind(meta, kind, p)
    try:
        module.eval()
    except NotImplementedError:  # torch.export modules have no train/eval switch
        pass
    return LoadedNetwork(module=module, kind=kind, metadata=meta, source=str(p), format=fmt, onnx_model=model)


def _check_kind(meta: Mapping[str, Any], kind: str, p: Path) -> None:
    mt = meta.get("model_type")
    if mt is not None and mt != kind:
        raise ValueError(f"{p}: metadata model_type is {mt!r} but a {kind!r} drive was asked for")


def _state_size(net: LoadedNetwork, limits: NetworkLimits) -> tuple[int, int, int]:
    """``(num_states, num_layers, hidden_size)`` of a recurrent network, checked against the limits."""
    m = net.module
    dims = tuple(getattr(m, a, None) for a in ("num_states", "num_layers", "hidden_size"))
    if any(isinstance(d, bool) or not isinstance(d, int) or d < 1 for d in dims):
        raise ValueError(
            f"{net.source}: a recurrent network needs integer attributes num_states, num_layers, hidden_size >= 1 "
            f"(see actuator_gym.actuators.checkpoints), got {dims}"
        )
    per_row = dims[0] * dims[1] * dims[2]
    if per_row > limits.max_elements_per_row:
        raise ValueError(
            f"{net.source}: the recurrent state needs {dims[0]} x {dims[1]} x {dims[2]} = {per_row} elements per batch "
            f"row (num_states x num_layers x hidden_size); allowed: at most {limits.max_elements_per_row} "
            f"(NetworkLimits.max_elements_per_row)"
        )
    return dims


def validate_network(net: LoadedNetwork, in_features: int, batch: int = 3, limits: NetworkLimits | None = None) -> None:
    """Check ``net`` before it is used: for an ONNX graph, the sizes of every tensor it computes
    (shape inference, see :mod:`.onnx_reader`), for a recurrent net the size of its state; then run
    dummy batches of ``batch`` and ``batch + 2`` rows. ``ValueError`` naming the file and the shape
    returned unless ``(rows, 1)`` (and the state's shape unless ``(num_layers, rows, hidden_size)``)."""
    lim = limits or current_network_limits()
    m = net.module
    if hasattr(m, "check_sizes"):
        m.check_sizes(in_features, lim)
    state_dims = _state_size(net, lim) if net.kind != "mlp" else None
    for rows in (batch, batch + 2):
        x = torch.zeros(rows, in_features)
        try:
            with torch.inference_mode():
                if state_dims is None:
                    y = m(x)
                else:
                    ns, nl, hs = state_dims
                    y, new = m(x, tuple(torch.zeros(nl, rows, hs) for _ in range(ns)))
                    for s in new:
                        if tuple(s.shape) != (nl, rows, hs):
                            raise ValueError(
                                f"{net.source}: recurrent state came back with shape {tuple(s.shape)}, expected {(nl, rows, hs)}"
                            )
        except ValueError:
            raise
        except Exception as exc:
            raise ValueError(
                f"{net.source}: the network failed on a dummy batch of shape {(rows, in_features)} "
                f"({type(exc).__name__}: {exc})"
            ) from None
        shape = tuple(getattr(y, "shape", ()))
        if shape != (rows, 1):
            raise ValueError(
                f"{net.source}: the network returned shape {shape} for a dummy batch of shape "
                f"{(rows, in_features)}; expected ({rows}, 1)"
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
