"""Learned drives: an MLP over a short history, an LSTM, a GRU over named input columns.

Each is a :class:`~actuator_gym.actuators.drives.Drive`, so it composes with a :class:`Delay` and any
clamp chain::

    Actuator(drive=DriveNeuralMLP(network_file="net.onnx"), delay=Delay(0, 2),
             clamping=[ClampingDCMotor(...)], num_envs=4096, joint_names=[...])

One network is shared by all joints: every ``(env, joint)`` element is one row of the batch,
rows ordered env-major (``row = env * num_joints + joint``). Inputs are the position error
``q* - q`` (the delayed ``q*`` when a delay is present) and the raw measured velocity ``qd``.
History and recurrent state are per element, start at zero and are zeroed only for the envs
being reset. The drive fills the input rows ``(rows, in_features)`` (float32) in place and the
network's engine runs on them (:mod:`.onnx_engine`, ``onnx_engine="auto" | "onnxruntime" | "torch"``,
``onnx_threads``): onnxruntime for ONNX files on the CPU when it is installed, else torch under
``torch.inference_mode`` on the model's device; the result is written into the drive's ``out`` array.
The MLP keeps its history scaled (position errors times ``pos_scale``, velocities times ``vel_scale``)
in a ``(2, history, env, joint)`` buffer and gathers the input columns from it in one ``take``.

Parameters come from the checkpoint's metadata where present (ONNX, ``.npz``, and the
``metadata.json`` extra file of TorchScript / ``.pt2`` archives, see :mod:`.checkpoints`).
``metadata=`` adds to and overrides the file's keys; keywords override both for scales and
normalization, while a layout key (``input_order``, ``input_idx``, ``input_columns``) given as a
keyword must agree with the metadata (a network runs only on the layout it was trained with).
Every scale the metadata declares is checked, even when overridden. An MLP with neither keyword nor
metadata takes Newton's defaults ``input_order="pos_vel"``, ``input_idx=[0]``. An invalid value is a
``ValueError`` naming the drive, the checkpoint file (and for metadata values the key and where it
came from) and the allowed range. Formats that can carry code (TorchScript,
torch.export, pickle) load only with ``allow_unsafe_checkpoint=True``. What a checkpoint may
declare (sizes, the MLP's history length) is bounded by ``limits=`` (default:
:func:`~.limits.current_network_limits`, see :class:`~.limits.NetworkLimits`).

Capabilities (:class:`~.part.Part`): every learned drive is stateful (an input history or a
recurrent state), not graph-safe (the network runs under ``torch.inference_mode`` and may be any
module, so it is never captured in a CUDA graph) and has no ``newton.actuators`` export or
MuJoCo-native form. The Stable-PD effort mode (``effort_mode="implicit"``) does not support learned
drives (at construction an ``UnsupportedError``: both a ``ValueError`` and, as Newton's, a
``NotImplementedError``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import torch
from torch import nn

from .checkpoints import LoadedNetwork, load_network, validate_network
from .drives import Drive
from .limits import NetworkLimits, current_network_limits
from .neural_meta import SCALE_KEYS, as_mapping, finite_scale, history_steps, meta_value, short_repr
from .onnx_engine import DEFAULT_ONNX_THREADS, bind_runner, check_engine_options, prepare_session

__all__ = ["DriveNeuralMLP", "DriveNeuralLSTM", "DriveNeuralGRU", "GRU_INPUT_COLUMNS"]

GRU_INPUT_COLUMNS = (
    "position",
    "target_position",
    "position_error",
    "velocity",
    "target_velocity",
    "velocity_error",
)
"""Input columns a GRU drive computes itself; one more name is a caller-supplied custom column."""


_CACHED_INDEX_ELEMENTS = 1 << 16
"""An MLP's gather indices are kept per history slot up to this many elements (small batches);
above it they are computed each substep (one add) to bound the memory."""


class _NeuralDrive(Drive):
    """Shared plumbing: load + validate the network, move it to the model's device, run it."""

    KIND = "mlp"
    PARAMS: dict = {}

    def __init__(
        self,
        network_file: str | Path | None = None,
        *,
        network: nn.Module | LoadedNetwork | None = None,
        allow_unsafe_checkpoint: bool = False,
        metadata: Mapping[str, Any] | None = None,
        limits: NetworkLimits | None = None,
        onnx_engine: str = "auto",
        onnx_threads: int = DEFAULT_ONNX_THREADS,
    ):
        """The network's source and how it is loaded and run: the keywords every learned drive
        takes (``**source`` of the subclasses; :class:`DriveNeuralMLP` documents them)."""
        super().__init__()
        name = type(self).__name__
        self.limits = limits or current_network_limits()
        if not isinstance(self.limits, NetworkLimits):
            raise TypeError(f"{name}: limits must be a NetworkLimits, got {type(limits).__name__}")
        self.onnx_engine, self.onnx_threads = check_engine_options(name, onnx_engine, onnx_threads)
        if (network_file is None) == (network is None):
            raise ValueError(f"{name}: give exactly one of network_file= (a checkpoint path) or network= (a module)")
        if network_file is not None:
            self.net = load_network(
                network_file, self.KIND, allow_unsafe_checkpoint=bool(allow_unsafe_checkpoint), metadata=metadata,
                limits=self.limits,
            )
            self._raw = {"network_file": str(network_file)}
        elif isinstance(network, LoadedNetwork):
            self.net = network
            self._raw = {"network": network.source}
        else:
            if not isinstance(network, nn.Module):
                raise ValueError(f"{name}: network= must be a torch.nn.Module, got {type(network).__name__}")
            network.eval()  # our convention: inference only
            self.net = LoadedNetwork(module=network, kind=self.KIND, metadata={}, source=f"<{type(network).__name__}>")
            self._raw = {"network": self.net.source}
        self._arg_metadata = dict(as_mapping(f"{name} ({self.net.source})", "metadata", metadata))
        self.metadata = {**self.net.metadata, **self._arg_metadata}
        self._owner = f"{name} ({self.net.source})"
        """Names the drive and its checkpoint in error messages."""
        if self.onnx_engine == "onnxruntime" and self.net.onnx_model is None:
            raise ValueError(
                f"{self._owner}: onnx_engine='onnxruntime' runs ONNX checkpoints only; this network is a "
                f"{self.net.format}; use onnx_engine='auto' or 'torch'"
            )
        self._session = None  # onnxruntime's, built at validation where it may run the net; shared by the bound copies
        self.engine: str | None = None
        """The engine running the network once bound to a model: ``"onnxruntime"`` or ``"torch"`` (:mod:`.onnx_engine`)."""

    def _origin(self, key: str) -> str:
        """Where metadata ``key`` came from, for error messages."""
        return "the metadata= argument" if key in self._arg_metadata else f"the metadata of {self.net.source}"

    def _layout(self, key: str, given: Any) -> Any:
        """A layout key (what the network was trained on: ``input_order``, ``input_idx``,
        ``input_columns``): the keyword, else the metadata's; both given and different is a
        ``ValueError`` (a network cannot be fed another layout than it was trained with)."""
        m = self.metadata
        if given is not None and key in m:
            norm = lambda x: [v for v in x] if isinstance(x, (list, tuple, np.ndarray, torch.Tensor)) else x  # noqa: E731
            if norm(given) != norm(m[key]):
                raise ValueError(
                    f"{self._owner}: {key}={short_repr(given)} disagrees with {key}={short_repr(m[key])} in {self._origin(key)}; "
                    f"the input layout a network was trained with cannot be overridden (omit {key}= to use it)"
                )
        return given if given is not None else m.get(key)

    def _io_scales(self, pos_scale, vel_scale, torque_scale, effort_scale) -> tuple[float, float, float]:
        """``(pos_scale, vel_scale, torque_scale)``: keyword, else metadata, else 1; each finite and
        non-zero. ``effort_scale`` is Newton's name for ``torque_scale`` (keyword or metadata key);
        both given with different values is an error. Every scale the metadata declares is checked,
        also when a keyword overrides it (a bad value in a file is an error naming the file)."""
        me, m = self._owner, self.metadata
        stored = {k: finite_scale(me, f"{k} in {self._origin(k)}", m[k], nonzero=True) for k in SCALE_KEYS if k in m}
        given = {
            k: finite_scale(me, k, v, nonzero=True)
            for k, v in zip(SCALE_KEYS, (pos_scale, vel_scale, torque_scale, effort_scale))
            if v is not None
        }
        for src, where in ((stored, "in the metadata"), (given, "as keywords")):
            if "torque_scale" in src and "effort_scale" in src and src["torque_scale"] != src["effort_scale"]:
                raise ValueError(
                    f"{me}: torque_scale ({src['torque_scale']}) and effort_scale ({src['effort_scale']}) disagree "
                    f"{where}; they are one scale (effort_scale is Newton's name): give one"
                )

        def pick(*keys):
            for src in (given, stored):
                for k in keys:
                    if k in src:
                        return src[k]
            return 1.0

        return pick("pos_scale"), pick("vel_scale"), pick("torque_scale", "effort_scale")


    def _validate(self, in_features: int) -> None:
        validate_network(self.net, in_features, limits=self.limits)
        self.validated_features = in_features
        self._session = prepare_session(self.net, self._owner, self.onnx_engine, self.onnx_threads, in_features)

    def _bind_runner(self, ctx, out_scale: float, out_offset: float) -> None:
        """The engine for this model (``self._runner``: input rows ``x``, recurrent ``state``, ``run()``;
        :func:`~.onnx_engine.bind_runner`), ``self._x`` (the input rows in the model's array library)
        and ``self._y_fixed`` (onnxruntime's bound output as ``(num_envs, num_joints)``, else None);
        the output is ``y * out_scale + out_offset`` (:meth:`_run`)."""
        self._runner = bind_runner(self.net, self._session, self.onnx_engine, ctx, self.validated_features)
        self.engine = self._runner.engine
        self._x = ctx.ops.view(self._runner.x)
        fixed = getattr(self._runner, "y", None)
        self._y_fixed = None if fixed is None else ctx.ops.view(fixed.reshape(ctx.num_envs, ctx.num_joints))
        self._out_scale, self._out_offset = out_scale, out_offset
        if fixed is not None:  # 0-d arrays (a Python float costs a conversion per call) in the dtypes the
            # floats would take: the output's for the scale, the model's for the offset (NEP 50)
            self._out_scale_a = ctx.ops.view(torch.tensor(out_scale, dtype=fixed.dtype))
            self._out_offset_a = ctx.ops.view(torch.tensor(out_offset, dtype=ctx.dtype))

    def _run(self, out) -> None:
        """The network on the input rows, ``out = y.reshape(num_envs, num_joints) * out_scale +
        out_offset`` (in the model's array library; the scale and offset given to
        :meth:`_bind_runner`); any failure of the network is a ``ValueError`` naming the checkpoint."""
        try:
            y = self._runner.run()
        except ValueError:
            raise
        except Exception as exc:
            raise ValueError(f"{self._ctx.owner}: the network {self.net.source} failed at compute ({type(exc).__name__}: {exc})") from None
        ctx = self._ctx
        xp = ctx.ops.xp
        if self._y_fixed is not None:  # onnxruntime's bound output buffer, its shape checked at bind
            xp.multiply(self._y_fixed, self._out_scale_a, out=out)
            if self._out_offset != 0.0:
                xp.add(out, self._out_offset_a, out=out)
            return
        rows = ctx.num_envs * ctx.num_joints
        if tuple(y.shape) != (rows, 1):
            raise ValueError(
                f"{ctx.owner}: the network {self.net.source} returned shape {tuple(y.shape)} for {rows} rows "
                f"(num_envs * num_joints); expected ({rows}, 1)"
            )
        y = y.reshape(ctx.num_envs, ctx.num_joints)
        if ctx.ops.name == "numpy":
            y = y.numpy()
        xp.multiply(y, self._out_scale, out=out)
        if self._out_offset != 0.0:
            xp.add(out, self._out_offset, out=out)


# ---------------------------------------------------------------------------------------------
class DriveNeuralMLP(_NeuralDrive):
    """MLP over a history of position errors and velocities (Hwangbo et al. 2019).

    Input row per element: ``[e(t-i) * pos_scale for i in input_idx] + [qd(t-i) * vel_scale for i in
    input_idx]`` (``input_order="pos_vel"``; ``"vel_pos"`` puts the velocity block first), where
    ``i`` counts substeps back (0 = now). Output ``net(x)[:, 0] * torque_scale`` [N·m].

    Args:
        network_file: checkpoint path (ONNX with metadata, weights .npz, or -- trusted only --
            TorchScript / torch.export / pickled state dict).
        network: alternatively an ``nn.Module`` mapping ``(batch, 2 * len(input_idx)) -> (batch, 1)``.
        input_order: ``"pos_vel"`` or ``"vel_pos"`` (default: the metadata's, else ``"pos_vel"``).
        input_idx: history indices [substeps], e.g. ``[0, 2, 4]`` (default: the metadata's, else ``[0]``).
        pos_scale [1/rad], vel_scale [s/rad]: input scales (default 1).
        torque_scale [N·m]: output scale (default 1); ``effort_scale`` is Newton's name for it.
        allow_unsafe_checkpoint: allow formats that can execute code (TorchScript, pickle, .pt2).
        metadata: extra metadata for files that carry none.
        limits: what the checkpoint may declare (default: the limits in force).
        onnx_engine: ``"auto"`` (default), ``"onnxruntime"`` or ``"torch"``: what runs an ONNX
            network (:mod:`.onnx_engine`; the LSTM and GRU drives take it too).
        onnx_threads: onnxruntime intra-op threads, 1..256 (default 1).
        (``network`` and the last five: ``**source``, the keywords every learned drive takes.)
    """

    KIND = "mlp"
    GRAPH_SAFE = False  # any network, under inference_mode: never captured
    STATEFUL = True  # the input history

    def __init__(self, network_file: str | Path | None = None, *, input_order: str | None = None,
                 input_idx: Sequence[int] | None = None, pos_scale: float | None = None, vel_scale: float | None = None,
                 torque_scale: float | None = None, effort_scale: float | None = None, **source: Any):
        super().__init__(network_file, **source)
        me = self._owner
        if input_order is not None and input_order not in ("pos_vel", "vel_pos"):
            raise ValueError(f"{me}: input_order must be 'pos_vel' or 'vel_pos', got {input_order!r}")
        if input_idx is not None:  # the keyword's range first, then its agreement with the metadata
            input_idx = history_steps(me, input_idx, self.limits)
        order = self._layout("input_order", input_order)
        idx = self._layout("input_idx", input_idx)
        defaulted = [k for k, v in (("input_order", order), ("input_idx", idx)) if v is None]
        order = "pos_vel" if order is None else order  # Newton's defaults
        idx = [0] if idx is None else idx
        if order not in ("pos_vel", "vel_pos"):
            raise ValueError(f"{me}: input_order must be 'pos_vel' or 'vel_pos', got {order!r}")
        idx = history_steps(me, idx, self.limits)
        self.input_order = order
        self.input_idx = idx
        self.history_length = max(idx) + 1
        self.pos_scale, self.vel_scale, self.torque_scale = self._io_scales(pos_scale, vel_scale, torque_scale, effort_scale)
        try:
            self._validate(2 * len(idx))
        except ValueError as exc:
            if not defaulted:
                raise
            raise ValueError(
                f"{exc} -- {' and '.join(defaulted)} came from neither a keyword nor the checkpoint's metadata, so Newton's "
                f"defaults were used (input_order='pos_vel', input_idx=[0]: {2 * len(idx)} inputs); pass the ones the "
                f"network was trained with"
            ) from None

    def _setup(self, ctx):
        n, j, h, k = ctx.num_envs, ctx.num_joints, self.history_length, len(self.input_idx)
        rows = n * j
        self._bind_runner(ctx, self.torque_scale, 0.0)
        # history [0]: position errors * pos_scale, [1]: velocities * vel_scale, each (slot, env, joint):
        # stored scaled, so the gather needs no multiply (the same roundings: each value is scaled once,
        # by the scale rounded to the model's dtype, whether before or after the gather). Column c of the
        # input rows reads block b_c at slot (w - i_c) % h. Small batches gather all columns in one take
        # (flat index b_c * h * rows + slot * rows + row, one table per slot); large ones (where the index
        # would cost more than it saves) copy column by column.
        self._hist_t, self._hist = self._buffer(ctx, shape=(2, h, n, j))
        self._slot_views = [(self._hist[0, w], self._hist[1, w]) for w in range(h)]
        self._scale_in = tuple(  # (is 1, 0-d array in the model's dtype) of pos_scale, vel_scale
            (sc == 1.0, ctx.ops.view(torch.tensor(sc, dtype=ctx.dtype, device=ctx.device))) for sc in (self.pos_scale, self.vel_scale)
        )
        blocks = (0, 1) if self.input_order == "pos_vel" else (1, 0)
        self._cols = [(b, i) for b in blocks for i in self.input_idx]
        self._indices = None
        if h * rows * 2 * k <= _CACHED_INDEX_ELEMENTS and ctx.dtype == torch.float32:
            dev = ctx.device
            base = torch.arange(rows, dtype=torch.int64, device=dev)[:, None]
            self._indices = [ctx.ops.view(base + torch.tensor([b * h * rows + ((w - i) % h) * rows for b, i in self._cols],
                                                               dtype=torch.int64, device=dev)) for w in range(h)]
            self._flat = self._hist.reshape(-1)
        self._slot = h - 1  # the first compute writes slot 0

    def reset(self, env_ids):
        if env_ids is None:
            self._hist_t.zero_()
        else:
            self._hist_t[:, :, env_ids] = 0.0

    def compute(self, q, qd, tq, tqd, tff, dt, out):
        ops = self._ctx.ops
        xp = ops.xp
        w = self._slot = (self._slot + 1) % self.history_length
        e, v = self._slot_views[w]
        (p_one, ps), (v_one, vs) = self._scale_in
        xp.subtract(tq, q, out=e)
        if not p_one:
            xp.multiply(e, ps, out=e)
        if v_one:
            v[...] = qd
        else:
            xp.multiply(qd, vs, out=v)
        x = self._x
        if self._indices is not None:
            ops.take_flat(self._flat, self._indices[w], x)
        else:
            h, hist = self.history_length, self._hist
            for c, (b, i) in enumerate(self._cols):
                x[:, c] = hist[b, (w - i) % h].reshape(-1)
        self._run(out)


# ---------------------------------------------------------------------------------------------
class _RecurrentDrive(_NeuralDrive):
    @property
    def hidden_state(self) -> tuple[torch.Tensor, ...]:
        """The recurrent state, each ``(num_layers, num_envs * num_joints, hidden_size)`` (LSTM: ``(h, c)``);
        the buffers in force until the next compute (copy to keep them)."""
        return tuple(self._runner.state)

    def reset(self, env_ids):
        ctx = self._ctx
        for s in self._runner.state:
            if env_ids is None:
                s.zero_()
            else:
                s.view(s.shape[0], ctx.num_envs, ctx.num_joints, s.shape[2])[:, env_ids] = 0.0


class DriveNeuralLSTM(_RecurrentDrive):
    """LSTM actuator net (Rudin et al. 2022): input ``[e * pos_scale, qd * vel_scale]`` per element,
    hidden and cell state ``(num_layers, num_envs * num_joints, hidden_size)``; output
    ``net(...) * torque_scale`` [N·m]. Scales default to 1 (Isaac Lab's ActuatorNetLSTM has none).

    TorchScript files follow Isaac Lab's convention: module attribute ``lstm`` (batch-first
    ``nn.LSTM``) and ``forward(x (batch, 1, 2), (h, c)) -> (effort, (h, c))``. ONNX files take
    ``input [1, batch, 2]``, ``h_in``, ``c_in`` (names from the metadata keys ``input_name``,
    ``hidden_in_name``, ... when given). ``**source``: ``network``, ``allow_unsafe_checkpoint``,
    ``metadata``, ``limits``, ``onnx_engine``, ``onnx_threads``, as :class:`DriveNeuralMLP`.
    """

    KIND = "lstm"
    GRAPH_SAFE = False  # any network, under inference_mode: never captured
    STATEFUL = True  # hidden and cell state

    def __init__(self, network_file: str | Path | None = None, *, pos_scale: float | None = None,
                 vel_scale: float | None = None, torque_scale: float | None = None, effort_scale: float | None = None,
                 **source: Any):
        super().__init__(network_file, **source)
        self.pos_scale, self.vel_scale, self.torque_scale = self._io_scales(pos_scale, vel_scale, torque_scale, effort_scale)
        _check_recurrent(self.net, 2)
        self._validate(2)

    def _setup(self, ctx):
        self._bind_runner(ctx, self.torque_scale, 0.0)

    def compute(self, q, qd, tq, tqd, tff, dt, out):
        xp, x = self._ctx.ops.xp, self._x
        e = x[:, 0].reshape(q.shape)
        xp.subtract(tq, q, out=e)
        if self.pos_scale != 1.0:
            xp.multiply(e, self.pos_scale, out=e)
        xp.multiply(qd.reshape(-1), self.vel_scale, out=x[:, 1])
        self._run(out)


def _check_recurrent(net: LoadedNetwork, _in: int) -> None:
    m = net.module
    for attr in ("num_layers", "hidden_size", "num_states"):
        if not hasattr(m, attr):
            raise ValueError(
                f"{net.source}: a recurrent network needs attributes num_layers, hidden_size, num_states "
                f"(see actuator_gym.actuators.checkpoints); missing {attr!r}"
            )


# ---------------------------------------------------------------------------------------------
class DriveNeuralGRU(_RecurrentDrive):
    """GRU over named, normalized input columns (Newton's ``DriveNeuralGRU``).

    Columns are drawn from :data:`GRU_INPUT_COLUMNS` plus at most one caller-supplied custom column
    (any other name, e.g. ``"dynamic_bias"``). Each is normalized ``(x - mean) / std``; the output
    is ``net(...) * torque_std + torque_mean`` [N·m] (a tanh / scale head lives inside the network).
    ``dt`` must equal the training sample period ``sample_dt_s`` (``ValueError`` otherwise).

    **Custom column.** Before every ``compute``, supply its values ``(num_envs, num_joints)`` with
    ``model.drive.set_custom_input(values)``; a compute without fresh values raises ``ValueError``
    (stale inputs would silently corrupt the recurrent state).

    Metadata keys: ``input_columns``, ``sample_dt_s``, ``normalization = {"inputs": {"mean": {col: v},
    "std": {col: v}}, "targets": {"mean": {"torque": v}, "std": {"torque": v}}}``; keywords override.
    ``**source``: ``network``, ``allow_unsafe_checkpoint``, ``metadata``, ``limits``, ``onnx_engine``,
    ``onnx_threads``, as :class:`DriveNeuralMLP`.
    """

    KIND = "gru"
    GRAPH_SAFE = False  # any network, under inference_mode: never captured
    STATEFUL = True  # the hidden state

    def __init__(
        self,
        network_file: str | Path | None = None,
        *,
        input_columns: Sequence[str] | None = None,
        input_mean: Mapping[str, float] | Sequence[float] | None = None,
        input_std: Mapping[str, float] | Sequence[float] | None = None,
        torque_mean: float | None = None,
        torque_std: float | None = None,
        sample_dt_s: float | None = None,
        **source: Any,
    ):
        super().__init__(network_file, **source)
        me, m = self._owner, self.metadata
        cols = self._layout("input_columns", input_columns)
        if not cols:
            raise ValueError(f"{me}: input_columns is required (not in {self.net.source}); known: {list(GRU_INPUT_COLUMNS)}")
        if not isinstance(cols, (list, tuple)) or not all(isinstance(c, str) for c in cols):
            raise ValueError(f"{me}: input_columns must be a list of column names, got {short_repr(cols)}; known: {list(GRU_INPUT_COLUMNS)}")
        cols = [str(c) for c in cols]
        custom = [c for c in cols if c not in GRU_INPUT_COLUMNS]
        if len(custom) > 1:
            raise ValueError(
                f"{me}: at most one custom input column is allowed, got {custom}; built-in columns are {list(GRU_INPUT_COLUMNS)}"
            )
        if len(set(cols)) != len(cols):
            raise ValueError(f"{me}: input_columns has duplicates: {cols}")
        self.input_columns = cols
        self.custom_column = custom[0] if custom else None
        norm = as_mapping(me, "normalization", m.get("normalization"))
        inp, tgt = as_mapping(me, "normalization.inputs", norm.get("inputs")), as_mapping(me, "normalization.targets", norm.get("targets"))

        def per_col(given, stored, default, what):
            if given is None:
                given = stored
            if isinstance(given, Mapping):  # a column not given: the metadata's value, else the default
                vals = [given[c] if c in given else stored.get(c, default) if isinstance(stored, Mapping) else default for c in cols]
            else:
                if not isinstance(given, (list, tuple, np.ndarray, torch.Tensor)):
                    raise ValueError(f"{me}: {what} must be a {{column: value}} mapping or a list, got {short_repr(given)}")
                vals = list(given)
                if len(vals) != len(cols):
                    raise ValueError(f"{me}: {what} needs {len(cols)} values (one per input column), got {len(vals)}")
            return [finite_scale(me, f"{what}[{c}]", v) for c, v in zip(cols, vals)]

        self.input_mean = per_col(input_mean, inp.get("mean", {}), 0.0, "input_mean")
        self.input_std = per_col(input_std, inp.get("std", {}), 1.0, "input_std")
        for c, s in zip(cols, self.input_std):
            if s <= 0:
                raise ValueError(f"{me}: input_std for column {c!r} must be > 0, got {s}")
        tm = torque_mean if torque_mean is not None else as_mapping(me, "normalization.targets.mean", tgt.get("mean")).get("torque", 0.0)
        tsd = torque_std if torque_std is not None else as_mapping(me, "normalization.targets.std", tgt.get("std")).get("torque", 1.0)
        self.torque_mean = finite_scale(me, "torque_mean", tm)
        self.torque_std = finite_scale(me, "torque_std", tsd, nonzero=True)
        dt_s = meta_value("sample_dt_s", sample_dt_s, m, None)
        self.sample_dt_s = None if dt_s is None else finite_scale(me, "sample_dt_s", dt_s)
        if self.sample_dt_s is not None and self.sample_dt_s <= 0:
            raise ValueError(f"{me}: sample_dt_s must be > 0 s, got {self.sample_dt_s}")
        _check_recurrent(self.net, len(cols))
        self._validate(len(cols))

    def _setup(self, ctx):
        self._bind_runner(ctx, self.torque_std, self.torque_mean)
        self._tmp_t, self._tmp = self._buffer(ctx)
        self._custom_t, self._custom = self._buffer(ctx)
        self._custom_fresh = False

    def set_custom_input(self, values: Any) -> None:
        """Values of the custom input column for the next ``compute``, ``(num_envs, num_joints)``."""
        ctx = self._ctx
        if self.custom_column is None:
            raise ValueError(f"{ctx.owner}: this GRU has no custom input column (columns: {self.input_columns})")
        t = torch.as_tensor(values.cpu() if isinstance(values, torch.Tensor) and ctx.device.type == "cpu" else values)
        if tuple(t.shape) != (ctx.num_envs, ctx.num_joints):
            raise ValueError(
                f"{ctx.owner}: custom input {self.custom_column!r} must have shape "
                f"{(ctx.num_envs, ctx.num_joints)} (num_envs, num_joints), got {tuple(t.shape)}"
            )
        self._custom_t.copy_(t.to(self._custom_t.device, self._custom_t.dtype))
        self._custom_fresh = True

    def compute(self, q, qd, tq, tqd, tff, dt, out):
        ctx = self._ctx
        xp, x, tmp = ctx.ops.xp, self._x, self._tmp
        if self.sample_dt_s is not None:
            if dt is None or not math.isclose(float(dt), self.sample_dt_s, rel_tol=1e-6, abs_tol=1e-12):
                raise ValueError(
                    f"{ctx.owner}: DriveNeuralGRU was trained at sample_dt_s={self.sample_dt_s} s; compute got dt={dt} "
                    f"(the substep must equal the training sample period)"
                )
        if self.custom_column is not None and not self._custom_fresh:
            raise ValueError(
                f"{ctx.owner}: the GRU input column {self.custom_column!r} is caller-supplied; call "
                f"model.drive.set_custom_input(values) before every compute"
            )
        for r, (col, mean, std) in enumerate(zip(self.input_columns, self.input_mean, self.input_std)):
            row = x[:, r].reshape(q.shape)
            if col == "position":
                src = q
            elif col == "target_position":
                src = tq
            elif col == "position_error":
                src = xp.subtract(tq, q, out=tmp)
            elif col == "velocity":
                src = qd
            elif col == "target_velocity":
                src = tqd
            elif col == "velocity_error":
                src = xp.subtract(tqd, qd, out=tmp)
            else:
                src = self._custom
            xp.subtract(src, mean, out=row)
            xp.divide(row, std, out=row)
        self._custom_fresh = False
        self._run(out)
