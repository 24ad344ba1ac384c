"""Reading an ONNX actuator network safely, and running it with torch.

**Reading** (:func:`read_onnx`). The file is parsed with the ``onnx`` package (protobuf only, no
code runs) with ``load_external_data=False``; then, before any tensor is materialized:

* the file size, the node count and every stored tensor's *declared* size (initializer dims,
  ``Constant`` values) are checked against :class:`~.limits.NetworkLimits`;
* a tensor with external data (``data_location = EXTERNAL``) is read by us, and only from a file
  inside the model file's own folder: an absolute ``location`` is refused, and so is one that
  resolves (after ``..`` and symbolic links, ``os.path.realpath``) outside that folder; the
  declared ``offset`` / ``length`` must fit the file and match the tensor's dims;
* string, complex and sparse tensors and segmented tensors are refused, and so are float tensors
  holding NaN or inf (when :class:`OnnxGraph` materializes them; :func:`finite_weights`).

**Sizes of computed tensors** (:meth:`OnnxGraph.check_sizes`). ONNX shape inference
(``onnx.shape_inference``, with data propagation so ``Reshape`` shapes from constants are known)
runs on the graph with the inputs it will be fed, at batches of 1, 2 and 3 rows. Every tensor
the graph computes must have a known shape, grow at most linearly with the batch, and stay within
``max_intermediate_elements`` (batch-independent part) and ``max_elements_per_row``. So an outer
product of two initializers, or a broadcast to billions of elements, is refused before it runs.

**Execution** (:class:`OnnxGraph`). Each node is mapped onto torch operations (see
:mod:`.onnx_ops`); LSTM/GRU nodes become ``torch.nn.LSTM`` / ``torch.nn.GRU`` modules holding the
file's weights (gates re-ordered). An error at compute names the file, the node and its input shapes.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np
import torch
from torch import nn

from .._safe_io import parse_json_object, read_size
from .limits import NetworkLimits
from .onnx_ops import ONNX_OPS

__all__ = ["read_onnx", "onnx_metadata", "read_metadata", "finite_weights", "OnnxGraph", "OnnxMLP", "OnnxRecurrent", "SUPPORTED_OPS"]

SUPPORTED_OPS = tuple(sorted([*ONNX_OPS, "LSTM", "GRU", "Constant"]))
"""ONNX operators an actuator network may use."""

_SHAPE_INPUT_MAX = 64  # int initializers at most this long stay in the shape-inference model (shape operands)
_PROBE_BATCHES = (1, 2, 3)


def _dtypes():
    from onnx import TensorProto as T

    return {
        T.FLOAT: np.float32, T.DOUBLE: np.float64, T.FLOAT16: np.float16, T.INT8: np.int8,
        T.INT16: np.int16, T.INT32: np.int32, T.INT64: np.int64, T.UINT8: np.uint8, T.BOOL: np.bool_,
    }


# ---------------------------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------------------------
def read_onnx(path: str | os.PathLike, limits: NetworkLimits):
    """The ``ModelProto`` of ``path`` with every stored tensor checked and its external data (if
    any) loaded from the model's folder. ``ValueError`` naming the file otherwise."""
    import onnx

    p = Path(path)
    size = read_size(p, "network file")
    if size > limits.max_file_bytes:
        raise ValueError(f"{p}: network file is {size} bytes; allowed: at most {limits.max_file_bytes} (NetworkLimits.max_file_bytes)")
    try:
        model = onnx.load(str(p), load_external_data=False)
    except Exception as exc:  # protobuf DecodeError and friends
        raise ValueError(f"{p}: not a readable ONNX (or other supported) checkpoint ({type(exc).__name__}: {exc})") from None
    g = model.graph
    if len(g.node) == 0:
        raise ValueError(f"{p}: not a readable checkpoint (an ONNX graph without nodes)")
    if len(g.node) > limits.max_nodes:
        raise ValueError(f"{p}: the graph has {len(g.node)} nodes; allowed: at most {limits.max_nodes} (NetworkLimits.max_nodes)")
    if len(g.sparse_initializer):
        raise ValueError(f"{p}: sparse initializers are not supported; allowed: dense initializers")
    tensors = [(f"initializer {t.name!r}", t) for t in g.initializer]
    for k, node in enumerate(g.node):
        for a in node.attribute:
            if a.HasField("t"):
                tensors.append((f"node {k} ({node.op_type}) attribute {a.name!r}", a.t))
            if len(a.tensors) or len(a.sparse_tensors) or a.HasField("sparse_tensor") or a.HasField("g") or len(a.graphs):
                raise ValueError(f"{p}: node {k} ({node.op_type}) has a tensor-list, sparse or subgraph attribute; not supported")
    used, external = 0, [0]
    folder = os.path.realpath(os.path.dirname(os.path.abspath(p)))
    for what, t in tensors:
        used += _check_tensor(t, what, p, limits)
        if used > limits.max_parameters:
            raise ValueError(
                f"{p}: stored tensors declare more than {limits.max_parameters} elements (at {what}); "
                f"allowed: at most {limits.max_parameters} (NetworkLimits.max_parameters)"
            )
        if t.data_location == onnx.TensorProto.EXTERNAL:
            _read_external(t, what, p, folder, limits, external)
    return model


def _check_tensor(t, what: str, p: Path, limits: NetworkLimits) -> int:
    """Declared element count of ``t`` after checking its dims and type."""
    dims = [int(d) for d in t.dims]
    if any(d < 0 for d in dims):
        raise ValueError(f"{p}: {what} declares negative dims {dims}")
    if t.data_type not in _dtypes():
        raise ValueError(f"{p}: {what} has ONNX data type {t.data_type}; allowed: float, double, float16, integer and bool tensors")
    if t.HasField("segment"):
        raise ValueError(f"{p}: {what} is a segmented tensor; not supported")
    n = math.prod(dims)
    if n > limits.max_parameters:
        raise ValueError(
            f"{p}: {what} declares dims {dims} ({n} elements); allowed: at most {limits.max_parameters} "
            f"elements (NetworkLimits.max_parameters)"
        )
    return n


def _read_external(t, what: str, p: Path, folder: str, limits: NetworkLimits, used: list[int]) -> None:
    """Load ``t``'s external data into ``raw_data``, from inside ``folder`` only."""
    from onnx import TensorProto

    info = {e.key: e.value for e in t.external_data}
    loc = info.get("location", "")
    if not loc:
        raise ValueError(f"{p}: {what} has external data without a 'location'")
    if os.path.isabs(loc) or loc.startswith(("/", "\\")) or (len(loc) > 1 and loc[1] == ":"):
        raise ValueError(
            f"{p}: {what} has external data at the absolute path {loc!r}; allowed: a file inside the model's "
            f"folder {folder}, given relative to it"
        )
    target = os.path.realpath(os.path.join(folder, loc))
    if os.path.commonpath([folder, target]) != folder or target == folder:
        raise ValueError(
            f"{p}: {what} has external data at {loc!r}, which resolves to {target}, outside the model's folder "
            f"{folder}; allowed: files inside that folder (after '..' and symbolic links)"
        )
    if not os.path.isfile(target):
        raise ValueError(f"{p}: {what} has external data at {loc!r}, which is not a file in {folder}")
    need = math.prod(int(d) for d in t.dims) * np.dtype(_dtypes()[t.data_type]).itemsize
    try:
        offset = int(info.get("offset", "0"))
        length = int(info["length"]) if "length" in info else need
    except ValueError:
        raise ValueError(f"{p}: {what} has a non-integer external data offset/length {info}") from None
    size = os.path.getsize(target)
    if offset < 0 or length != need or offset + need > size:
        raise ValueError(
            f"{p}: {what} declares external data offset={offset} length={length} in {loc!r} ({size} bytes); "
            f"allowed: length = {need} bytes (its dims and type) and offset + length <= the file size"
        )
    used[0] += need
    if used[0] > limits.max_file_bytes:
        raise ValueError(f"{p}: external data is over {limits.max_file_bytes} bytes; allowed: at most that (NetworkLimits.max_file_bytes)")
    with open(target, "rb") as fh:
        fh.seek(offset)
        t.raw_data = fh.read(need)
    del t.external_data[:]
    t.data_location = TensorProto.DEFAULT


def onnx_metadata(model, path: str | os.PathLike) -> dict:
    """Our metadata JSON object stored under the model property ``metadata`` (``{}`` when absent)."""
    for prop in model.metadata_props:
        if prop.key == "metadata":
            return parse_json_object(prop.value, str(path), "the 'metadata' property")
    return {}


def read_metadata(path: str | os.PathLike, limits: NetworkLimits | None = None) -> dict:
    """The metadata JSON stored in an ONNX file (``{}`` when absent)."""
    from .limits import current_network_limits

    return onnx_metadata(read_onnx(path, limits or current_network_limits()), path)


def _to_tensor(t, what: str, source: str) -> torch.Tensor:
    from onnx import numpy_helper

    try:
        arr = np.array(numpy_helper.to_array(t))
    except Exception as exc:  # data length does not match the dims, and the like
        raise ValueError(f"{source}: {what}: its data does not match its dims {list(t.dims)} ({exc})") from None
    return finite_weights(torch.from_numpy(arr), what, source)


def finite_weights(t: torch.Tensor, what: str, source: str) -> torch.Tensor:
    """``t`` when it holds no NaN / inf (a float tensor of a network's weights), else ``ValueError``
    naming ``source`` (the file) and ``what`` (the tensor): such weights would make every effort NaN."""
    if t.is_floating_point() and not bool(torch.isfinite(t).all()):
        bad = int((~torch.isfinite(t)).sum())
        raise ValueError(f"{source}: {what} holds {bad} non-finite value(s) (NaN or inf); allowed: finite weights")
    return t


# ---------------------------------------------------------------------------------------------
# execution
# ---------------------------------------------------------------------------------------------
class OnnxGraph(nn.Module):
    """Executes a (checked) ONNX graph with torch operations (see the module docstring)."""

    def __init__(self, model, source: str):
        super().__init__()
        import onnx

        self.source = source
        g = model.graph
        consts: dict[str, torch.Tensor] = {}
        for init in g.initializer:
            consts[init.name] = _to_tensor(init, f"initializer {init.name!r}", source)
        init_names = set(consts)
        self.input_names = [i.name for i in g.input if i.name not in init_names]
        self.output_names = [o.name for o in g.output]
        self._consts = consts
        self.rnns = nn.ModuleDict()
        self._program: list[tuple[str, list[str], list[str], dict]] = []
        defined = {"", *init_names, *self.input_names}
        for k, node in enumerate(g.node):
            attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
            op = node.op_type
            missing = [i for i in node.input if i not in defined]
            if missing:
                raise ValueError(f"{source}: node {k} ({op}) reads {missing}, which no earlier node, input or initializer defines")
            defined.update(node.output)
            if op == "Constant":
                v = attrs.get("value")
                if v is None:
                    raise ValueError(f"{source}: Constant node without a tensor 'value' is not supported")
                consts[node.output[0]] = _to_tensor(v, f"node {k} (Constant)", source)
                continue
            if op in ("LSTM", "GRU"):
                attrs["_module"] = f"rnn{k}"
                self.rnns[f"rnn{k}"] = self._recurrent(op, node, attrs, consts)
            elif op not in ONNX_OPS:
                raise ValueError(f"{source}: ONNX operator {op!r} is not supported; supported: {list(SUPPORTED_OPS)}")
            self._program.append((op, list(node.input), list(node.output), attrs))
        undefined = [o for o in self.output_names if o not in defined]
        if undefined:
            raise ValueError(f"{source}: graph outputs {undefined} are computed by no node")
        self._const_keys = {}
        for i, (name, t) in enumerate(consts.items()):
            self.register_buffer(f"const{i}", t, persistent=False)
            self._const_keys[name] = f"const{i}"
        self._shape_model = _shape_model(model, consts)
        self._checked: set[tuple] = set()

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
        gates = 4 if op == "LSTM" else 3
        hidden = attrs.get("hidden_size")
        ok = W.dim() == 3 and W.shape[0] == 1 and isinstance(hidden, int) and hidden >= 1 and W.shape[1] == gates * hidden
        ok = ok and tuple(R.shape) == (1, gates * hidden, hidden) and (B is None or tuple(B.shape) == (1, 2 * gates * hidden))
        if not ok:
            raise ValueError(
                f"{src}: {op} hidden_size={hidden!r} does not match its weights W {tuple(W.shape)}, R {tuple(R.shape)}"
                f"{'' if B is None else f', B {tuple(B.shape)}'}; allowed: W [1, {gates}*H, F], R [1, {gates}*H, H], "
                f"B [1, {2 * gates}*H] with H = hidden_size"
            )
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

    def check_sizes(self, feeds: Callable[[int], Mapping[str, tuple[int, ...]]], limits: NetworkLimits) -> None:
        """Shape-infer the graph fed ``feeds(batch)`` (``{input name: shape}``) at batches 1, 2, 3 and
        refuse any computed tensor of unknown shape or over the limits (see the module docstring)."""
        key = (tuple(tuple(s) for s in feeds(1).values()), limits)
        if key in self._checked:
            return
        sizes = [_inferred_sizes(self._shape_model, feeds(b), self.source) for b in _PROBE_BATCHES]
        for name, s1 in sizes[0].items():
            s2, s3 = sizes[1][name], sizes[2][name]
            per_row, fixed = s2 - s1, 2 * s1 - s2
            if s3 - s2 != per_row:
                raise ValueError(
                    f"{self.source}: tensor {name!r} grows faster than linearly with the batch ({s1}, {s2}, {s3} "
                    f"elements at 1, 2, 3 rows); allowed: sizes linear in the batch"
                )
            if per_row > limits.max_elements_per_row or fixed > limits.max_intermediate_elements:
                raise ValueError(
                    f"{self.source}: tensor {name!r} would hold {fixed} + {per_row} * batch elements; allowed: at most "
                    f"{limits.max_intermediate_elements} + {limits.max_elements_per_row} * batch "
                    f"(NetworkLimits.max_intermediate_elements, max_elements_per_row)"
                )
        self._checked.add(key)

    def forward(self, *inputs):
        env: dict[str, Any] = {n: getattr(self, k) for n, k in self._const_keys.items()}
        env[""] = None
        for name, x in zip(self.input_names, inputs):
            env[name] = x
        for k, (op, ins, outs, attrs) in enumerate(self._program):
            args = [env[i] if i in env else None for i in ins]
            try:
                if op in ("LSTM", "GRU"):
                    res = self._run_rnn(op, self.rnns[attrs["_module"]], args)
                else:
                    res = ONNX_OPS[op](args, attrs)
            except Exception as exc:  # name the file and the node, not torch's internals
                shapes = [tuple(a.shape) if isinstance(a, torch.Tensor) else None for a in args]
                raise ValueError(f"{self.source}: node {k} ({op}) failed on inputs of shapes {shapes} ({type(exc).__name__}: {exc})") from None
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


def _shape_model(model, consts: Mapping[str, torch.Tensor]):
    """A copy of ``model`` for shape inference: nodes and short integer initializers (shape
    operands) only; the other initializers become typed inputs (their dims, without their data)."""
    from onnx import TensorProto, helper

    g = model.graph
    keep, typed = [], []
    for t in g.initializer:
        if t.data_type in (TensorProto.INT64, TensorProto.INT32) and math.prod(t.dims) <= _SHAPE_INPUT_MAX:
            keep.append(t)
        else:
            typed.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    graph = helper.make_graph(list(g.node), "shape_check", typed, [], initializer=keep)
    m = helper.make_model(graph, opset_imports=list(model.opset_import))
    m.ir_version = model.ir_version
    return m


def _inferred_sizes(shape_model, feeds: Mapping[str, tuple[int, ...]], source: str) -> dict[str, int]:
    """``{tensor name: elements}`` of every node output, by ONNX shape inference."""
    import onnx
    from onnx import TensorProto, helper

    m = onnx.ModelProto()
    m.CopyFrom(shape_model)
    g = m.graph
    for name, shape in feeds.items():
        g.input.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)))
    try:
        inferred = onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True, data_prop=True)
    except Exception as exc:  # onnx's InferenceError and friends: the graph is inconsistent
        raise ValueError(f"{source}: ONNX shape inference failed on the graph ({type(exc).__name__}: {str(exc).strip()[:300]})") from None
    known = {}
    for v in inferred.graph.value_info:
        dims = v.type.tensor_type.shape.dim
        if v.type.tensor_type.HasField("shape") and all(d.HasField("dim_value") for d in dims):
            known[v.name] = math.prod(d.dim_value for d in dims)
    sizes = {}
    for k, node in enumerate(g.node):
        for o in node.output:
            if not o or node.op_type == "Constant":
                continue
            if o not in known:
                raise ValueError(
                    f"{source}: cannot bound tensor {o!r} (output of node {k}, {node.op_type}): its shape is not known "
                    f"before running; allowed: shapes that follow from the inputs and the stored tensors"
                )
            sizes[o] = known[o]
    return sizes


# ---------------------------------------------------------------------------------------------
# adapters to our calling convention
# ---------------------------------------------------------------------------------------------
def _declared_dim(graph_input, axis: int) -> int | None:
    dims = graph_input.type.tensor_type.shape.dim
    return dims[axis].dim_value if len(dims) > axis and dims[axis].HasField("dim_value") else None


class OnnxMLP(nn.Module):
    """``net(x (batch, F)) -> (batch, 1)`` over a one-input graph."""

    def __init__(self, graph: OnnxGraph, model=None):
        super().__init__()
        if len(graph.input_names) != 1:
            raise ValueError(f"{graph.source}: an MLP graph needs exactly one input, got {graph.input_names}")
        self.graph = graph
        inputs = {i.name: i for i in model.graph.input} if model is not None else {}
        first = inputs.get(graph.input_names[0])
        self.declared_features = _declared_dim(first, 1) if first is not None else None
        self.feed_names = [graph.input_names[0]]
        self.fetch_names = [graph.output_names[0]]
        """The graph input and output this adapter uses (another engine feeds the same ones)."""

    def check_sizes(self, in_features: int | None, limits: NetworkLimits) -> None:
        """:meth:`OnnxGraph.check_sizes` with ``x (batch, in_features)`` (None: the declared width)."""
        f = in_features if in_features is not None else self.declared_features
        if f is not None:
            self.graph.check_sizes(lambda b: {self.graph.input_names[0]: (b, f)}, limits)

    def forward(self, x):
        return self.graph(x)[0]


class OnnxRecurrent(nn.Module):
    """Adapts a one-step recurrent ONNX graph (inputs ``[1, batch, F]``, state ``[L, batch, H]``)."""

    def __init__(self, graph: OnnxGraph, kind: str, meta: Mapping[str, Any], model=None):
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
            if not isinstance(n, str) or n not in ins:
                raise ValueError(f"{src}: metadata names graph input {n!r}, graph inputs are {ins}")
        for n in names_out:
            if not isinstance(n, str) or n not in outs:
                raise ValueError(f"{src}: metadata names graph output {n!r}, graph outputs are {outs}")
        self._in_pos = [ins.index(n) for n in names_in]
        self._out_pos = [outs.index(n) for n in names_out]
        self.feed_names, self.fetch_names = list(names_in), list(names_out)
        """Graph inputs ``x, h[, c]`` and outputs ``y, h[, c]`` in that order (another engine feeds the same ones)."""
        rnns = list(graph.rnns.values())
        if not rnns:
            raise ValueError(f"{src}: model_type {kind!r} but the graph has no {kind.upper()} node")
        hidden = {r.hidden_size for r in rnns}
        for key, value in (("num_layers", len(rnns)), ("hidden_size", rnns[0].hidden_size)):
            given = meta.get(key, value)
            if len(hidden) != 1 or isinstance(given, bool) or given != value:
                raise ValueError(
                    f"{src}: metadata {key}={given!r} does not match the graph ({len(rnns)} {kind.upper()} node(s) "
                    f"of hidden sizes {sorted(hidden)}); allowed: {value}"
                )
        self.num_layers, self.hidden_size = len(rnns), rnns[0].hidden_size
        inputs = {i.name: i for i in model.graph.input} if model is not None else {}
        first = inputs.get(names_in[0])
        self.declared_features = _declared_dim(first, 2) if first is not None else None

    def check_sizes(self, in_features: int | None, limits: NetworkLimits) -> None:
        """:meth:`OnnxGraph.check_sizes` with ``x [1, batch, F]`` and the state ``[L, batch, H]``."""
        f = in_features if in_features is not None else self.declared_features
        if f is None:
            return
        names = [self.graph.input_names[p] for p in self._in_pos]
        L, H = self.num_layers, self.hidden_size
        self.graph.check_sizes(lambda b: {names[0]: (1, b, f), **{n: (L, b, H) for n in names[1:]}}, limits)

    def forward(self, x, state):
        args: list[Any] = [None] * (1 + self.num_states)
        args[self._in_pos[0]] = x.unsqueeze(0)
        for k, s in enumerate(state):
            args[self._in_pos[k + 1]] = s
        res = self.graph(*args)
        y = res[self._out_pos[0]].reshape(x.shape[0], -1)
        return y, tuple(res[p] for p in self._out_pos[1:])
