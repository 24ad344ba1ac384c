"""The engine a learned drive's network runs on: torch (any module, any device) or onnxruntime
(ONNX checkpoints on the CPU).

**Choice** (``onnx_engine=`` on :class:`~.neural.DriveNeuralMLP` / ``LSTM`` / ``GRU` and on the
network configs, :data:`ONNX_ENGINES`):

* ``"auto"`` (default): onnxruntime when the network came from an ONNX file, the model runs on the
  CPU and ``onnxruntime`` is importable (the ``actuator-gym[onnxruntime]`` extra); torch otherwise
  (a GPU, where the state already lives in torch tensors; TorchScript / ``.pt2`` / ``.npz`` files;
  a module passed as ``network=``). Should onnxruntime refuse a file our reader accepted, ``"auto"``
  warns and falls back to torch.
* ``"onnxruntime"``: always onnxruntime; ``ValueError`` when it is not installed, the network is
  not an ONNX file or the model is not on the CPU.
* ``"torch"``: always the torch interpreter of :mod:`.onnx_reader` (the behaviour before the engine
  existed).

**Threads** (``onnx_threads=``, default :data:`DEFAULT_ONNX_THREADS` = 1): onnxruntime's intra-op
threads. One by default because an actuator runs inside a simulation step, next to MuJoCo (whose
batch runner has its own threads), the policy's torch thread pool and often vector-env worker
processes: a second pool competes with those for the same cores (onnxruntime's workers spin while
waiting), and at one robot (12 rows) a thread hand-off costs more than the network. Raise it for
very large CPU batches on an otherwise idle machine. The torch engine uses torch's own thread
setting (``torch.set_num_threads``).

**Safety** (docs/security.md). onnxruntime is handed the *bytes of the model our reader
validated* (:func:`~.onnx_reader.read_onnx`: sizes checked, external data already read by us from
the model's own folder and inlined), never the file path. Before a session is created the model is
checked again to hold no external or sparse tensor, no local function and only operators of the
default ONNX domain (the same operator set the torch interpreter accepts, no contrib or custom
domain). The session runs on the ``CPUExecutionProvider`` only, registers no custom-op library,
writes no optimized model or profile, and allows released opsets only. So onnxruntime reads no file
and runs no code the reader would refuse, and the size limits of :class:`~.limits.NetworkLimits`
(checked by shape inference at load) hold for the graph it runs.

**Execution.** :class:`OrtRunner` binds preallocated buffers once (``IOBinding``): the input rows,
the output and, for a recurrent net, two sets of state buffers used in turn (the new state is
written into the spare set, which then becomes the current one: no copy per step). :class:`TorchRunner`
calls the module and copies the new state into the current buffers. Both expose the same
``x`` (input rows ``(rows, in_features)``), ``state`` (current state tensors ``(num_layers, rows,
hidden_size)``) and ``run() -> y (rows, 1)`` to the drives, so history, scaling, state and reset
are one mechanism whichever engine runs the network. A graph exported with a fixed batch dimension
runs on any row count on both engines (:func:`_any_batch`: one row per (env, joint), as in Newton).
"""

from __future__ import annotations

import copy
import warnings
from typing import Any, Sequence

import numpy as np
import torch
from torch import nn

__all__ = [
    "ONNX_ENGINES",
    "DEFAULT_ONNX_THREADS",
    "MAX_ONNX_THREADS",
    "onnxruntime_available",
    "check_engine_options",
    "ort_session",
    "prepare_session",
    "bind_runner",
    "TorchRunner",
    "OrtRunner",
]

ONNX_ENGINES = ("auto", "onnxruntime", "torch")
"""Values of ``onnx_engine=``."""

DEFAULT_ONNX_THREADS = 1
"""onnxruntime intra-op threads by default (module docstring: why one)."""

MAX_ONNX_THREADS = 256
"""Largest ``onnx_threads`` accepted."""

_DEFAULT_DOMAINS = ("", "ai.onnx")


def onnxruntime_available() -> bool:
    """Whether ``onnxruntime`` can be imported (the ``actuator-gym[onnxruntime]`` extra)."""
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


def check_engine_options(owner: str, engine: Any, threads: Any) -> tuple[str, int]:
    """``(onnx_engine, onnx_threads)`` checked; ``ValueError`` naming ``owner`` and the allowed values."""
    if not isinstance(engine, str) or engine not in ONNX_ENGINES:
        raise ValueError(f"{owner}: onnx_engine must be one of {list(ONNX_ENGINES)}, got {engine!r}")
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or not 1 <= threads <= MAX_ONNX_THREADS:
        raise ValueError(f"{owner}: onnx_threads must be an integer in [1, {MAX_ONNX_THREADS}], got {threads!r}")
    if engine == "onnxruntime" and not onnxruntime_available():
        raise ValueError(
            f"{owner}: onnx_engine='onnxruntime' but onnxruntime is not installed; install it with "
            f"`pip install actuator-gym[onnxruntime]`, or use onnx_engine='auto' or 'torch'"
        )
    return engine, int(threads)


def _refuse_unvalidated(model, source: str) -> None:
    """What onnxruntime would resolve by itself (external files, functions, other op domains): refused."""
    from onnx import TensorProto

    g = model.graph
    if len(model.functions):
        raise ValueError(f"{source}: the model defines local functions; not supported by the onnxruntime engine")
    if len(g.sparse_initializer):
        raise ValueError(f"{source}: sparse initializers are not supported")
    tensors = list(g.initializer)
    for k, node in enumerate(g.node):
        if node.domain not in _DEFAULT_DOMAINS:
            raise ValueError(f"{source}: node {k} ({node.op_type}) is in domain {node.domain!r}; allowed: the default ONNX domain")
        tensors += [a.t for a in node.attribute if a.HasField("t")]
    for t in tensors:
        if t.data_location == TensorProto.EXTERNAL or len(t.external_data):
            raise ValueError(f"{source}: tensor {t.name!r} still refers to external data; only inlined (validated) data is run")


def ort_session(model, source: str, threads: int):
    """An onnxruntime ``InferenceSession`` over ``model`` (a ``ModelProto`` returned by
    :func:`~.onnx_reader.read_onnx`), built from its bytes with the options of the module docstring."""
    import onnxruntime as ort

    _refuse_unvalidated(model, source)
    so = ort.SessionOptions()
    so.intra_op_num_threads = int(threads)
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.enable_profiling = False
    so.log_severity_level = 3  # errors only: they become our ValueError
    so.add_session_config_entry("session.allow_released_opsets_only", "1")
    try:
        return ort.InferenceSession(model.SerializeToString(), sess_options=so, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime's Fail / InvalidGraph / NotImplemented
        raise ValueError(f"{source}: onnxruntime cannot run the graph ({type(exc).__name__}: {str(exc).strip()[:300]})") from None


# ---------------------------------------------------------------------------------------------
# runners: one interface to the drives
# ---------------------------------------------------------------------------------------------
class TorchRunner:
    """Runs a module in our calling convention (:mod:`.checkpoints`) on ``x`` and the current state."""

    engine = "torch"

    def __init__(self, module: nn.Module, rows: int, in_features: int, state_dims: tuple[int, int, int] | None, device):
        self.module = module
        self.x = torch.zeros((rows, in_features), dtype=torch.float32, device=device)
        self.state = [] if state_dims is None else [
            torch.zeros((state_dims[1], rows, state_dims[2]), dtype=torch.float32, device=device) for _ in range(state_dims[0])
        ]

    def run(self) -> torch.Tensor:
        with torch.inference_mode():
            if not self.state:
                return self.module(self.x)
            y, new = self.module(self.x, tuple(self.state))
            for s, v in zip(self.state, new):
                s.copy_(v)
            return y


class OrtRunner:
    """Runs an onnxruntime session on preallocated, bound buffers (module docstring).

    ``feeds`` / ``fetches``: the graph's input and output names in our order (``x[, h[, c]]``,
    ``y[, h[, c]]``). A recurrent graph takes ``x`` as ``[1, rows, F]``; an MLP as ``[rows, F]``.
    """

    engine = "onnxruntime"

    def __init__(self, session, source: str, feeds: Sequence[str], fetches: Sequence[str], rows: int, in_features: int,
                 state_dims: tuple[int, int, int] | None):
        self.source = source
        recurrent = state_dims is not None
        self._x_full = torch.zeros((1, rows, in_features) if recurrent else (rows, in_features), dtype=torch.float32)
        self.x = self._x_full[0] if recurrent else self._x_full
        shape = () if state_dims is None else (state_dims[1], rows, state_dims[2])
        n_states = 0 if state_dims is None else state_dims[0]
        sets = [[torch.zeros(shape, dtype=torch.float32) for _ in range(n_states)] for _ in range(2 if recurrent else 1)]
        arrays = {"x": self._x_full.numpy()}
        # the output's shape as the graph gives it for these rows (a (rows, 1) or (1, rows, 1) column, checked)
        try:
            probe = session.run([fetches[0]], {feeds[0]: arrays["x"], **{n: s.numpy() for n, s in zip(feeds[1:], sets[0])}})[0]
        except Exception as exc:  # onnxruntime's InvalidArgument / Fail: our ValueError
            raise ValueError(f"{source}: onnxruntime cannot run {rows} rows ({type(exc).__name__}: {str(exc).strip()[:300]})") from None
        if probe.size != rows or (not recurrent and probe.shape != (rows, 1)):
            raise ValueError(
                f"{source}: the network returned shape {probe.shape} for {rows} rows (num_envs * num_joints) on "
                f"onnxruntime; expected ({rows}, 1)"
            )
        if probe.dtype != np.float32:
            raise ValueError(f"{source}: the network returned {probe.dtype} values on onnxruntime; expected float32")
        self._y_full = torch.zeros(probe.shape, dtype=torch.float32)
        self.y = self._y_full.reshape(rows, 1)
        """The output buffer ``(rows, 1)`` every :meth:`run` writes (and returns)."""
        self._sets = sets
        self._bindings = []
        for k in range(len(sets)):  # binding k reads state set k and writes the other one
            io = session.io_binding()
            _bind(io.bind_input, feeds[0], self._x_full)
            _bind(io.bind_output, fetches[0], self._y_full)
            for name, t in zip(feeds[1:], sets[k]):
                _bind(io.bind_input, name, t)
            for name, t in zip(fetches[1:], sets[1 - k] if recurrent else ()):
                _bind(io.bind_output, name, t)
            self._bindings.append(io)
        self._session = session
        self._cur = 0
        self.state = sets[0]

    def run(self) -> torch.Tensor:
        try:
            self._session.run_with_iobinding(self._bindings[self._cur])
        except Exception as exc:
            raise ValueError(f"{self.source}: onnxruntime failed at compute ({type(exc).__name__}: {str(exc).strip()[:300]})") from None
        if len(self._sets) == 2:
            self._cur = 1 - self._cur
            self.state = self._sets[self._cur]
        return self.y


def _state_dims(net) -> tuple[int, int, int] | None:
    """``(num_states, num_layers, hidden_size)`` of a recurrent network, None for an MLP."""
    m = net.module
    return None if net.kind == "mlp" else (m.num_states, m.num_layers, m.hidden_size)


def _ort_runner(net, session, rows: int, in_features: int) -> OrtRunner:
    m = net.module
    return OrtRunner(session, net.source, m.feed_names, m.fetch_names, rows, in_features, _state_dims(net))


def _any_batch(net):
    """``net.onnx_model`` with the batch axis of its graph inputs made symbolic and the declared
    shapes of its outputs and intermediate values dropped (a copy). An export with a fixed batch
    dimension (say, for one robot's joints, or Newton's one row per actuator) then runs on any row
    count, as the torch interpreter (which ignores declared shapes) and Newton run it: every row is
    one (env, joint) element. Each tensor's size stays bounded by the shape check made at load
    (:meth:`~.onnx_reader.OnnxGraph.check_sizes`, which infers shapes from the rows fed)."""
    from onnx import ModelProto

    model = ModelProto()
    model.CopyFrom(net.onnx_model)
    g, axis = model.graph, 0 if net.kind == "mlp" else 1  # x (rows, F); recurrent x [1, rows, F], h/c [L, rows, H]
    for i in g.input:
        dims = i.type.tensor_type.shape.dim
        if i.name in net.module.feed_names and len(dims) > axis:
            dims[axis].Clear()
            dims[axis].dim_param = "rows"
    for o in g.output:
        o.type.tensor_type.ClearField("shape")
    g.ClearField("value_info")
    return model


def prepare_session(net, owner: str, engine: str, threads: int, in_features: int):
    """The onnxruntime session for ``net`` (a :class:`~.checkpoints.LoadedNetwork`) where it may run
    there (an ONNX file, ``engine`` not ``"torch"``, onnxruntime installed or forced), checked on dummy
    batches of 3 and 5 rows; None otherwise. A refusal raises when forced and warns under ``"auto"``."""
    if net.onnx_model is None or engine == "torch" or (engine == "auto" and not onnxruntime_available()):
        return None
    try:
        session = ort_session(_any_batch(net), net.source, threads)
        for rows in (3, 5):
            _ort_runner(net, session, rows, in_features)
    except ValueError as exc:
        if engine == "onnxruntime":
            raise
        warnings.warn(f"{owner}: onnx_engine='auto' runs the network on torch: {exc}", RuntimeWarning, stacklevel=4)
        return None
    return session


def bind_runner(net, session, engine: str, ctx, in_features: int):
    """The runner for one model (``ctx``: its batch and device): onnxruntime on the CPU when a session
    was prepared, else torch (the module copied to the model's device). ``ValueError`` for
    ``engine="onnxruntime"`` on another device."""
    rows, cpu = ctx.num_envs * ctx.num_joints, ctx.device.type == "cpu"
    if engine == "onnxruntime" and not cpu:
        raise ValueError(
            f"{ctx.owner}: onnx_engine='onnxruntime' runs on the CPU; this model is on {ctx.device}; "
            f"use onnx_engine='auto' (torch there) or 'torch'"
        )
    if cpu and session is not None:
        return _ort_runner(net, session, rows, in_features)
    module = net.module if cpu else copy.deepcopy(net.module).to(ctx.device)
    return TorchRunner(module, rows, in_features, _state_dims(net), ctx.device)


def _bind(method, name: str, t: torch.Tensor) -> None:
    method(name, "cpu", 0, np.float32, list(t.shape), t.data_ptr())
