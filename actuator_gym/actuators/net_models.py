"""The actuator-network configs, each a recipe of our parts: Isaac Lab's :class:`ActuatorNetMLPCfg`
and :class:`ActuatorNetLSTMCfg` (network + DC-motor clamp) and Isaac Lab 3.0's GRU net,
:class:`ActuatorNetGRUCfg`; all share :class:`NetworkFileFields` (the checkpoint and its opt-in).

GRU:

    cfg = ActuatorNetGRUCfg(joint_names_expr=[".*_knee"], network_file="gru.pt", allow_unsafe_checkpoint=True,
                            pos_error_normalization=(0.0, 0.2), vel_normalization=(0.0, 8.0),
                            output_normalization=(0.0, 30.0), actuator_effort_limit=40.0)

Recipe: :class:`~.neural.DriveNeuralGRU` over the input columns ``position``, ``position_error``,
``velocity`` (Isaac Lab's fixed ``[q, q* - q, qd]``), each normalized ``(x - mean) / std``, output
``y * std + mean`` [N·m], then ``ClampingMaxEffort(actuator_effort_limit)`` (Isaac Lab derives it
from ``IdealPDActuator``: a symmetric ``+-effort_limit``, no DC-motor envelope). ``stiffness`` and
``damping`` are unused. The hidden state is per ``(env, joint)``, starts at zero and is zeroed only
for the envs being reset (the LSTM's mechanism, :class:`~.neural._RecurrentDrive`).

Checkpoints: TorchScript (Isaac Lab's format: a ``.gru`` submodule, ``forward(x (batch, 1, 3), h)
-> (effort, h)``) and torch.export (same convention) with ``allow_unsafe_checkpoint=True``; ONNX
(a ``GRU`` node, inputs ``input [1, batch, 3]``, ``h_in``) and weights ``.npz`` always. A checkpoint
whose metadata declares other ``input_columns`` is refused (a network runs only on the layout it was
trained with).

Differences from Isaac Lab (docs/runtime.md): a non-finite network output is not replaced by 0
(it propagates, so a broken network is seen); a std below ``GRU_STD_FLOOR`` is floored with a
warning as in Isaac Lab, and a negative std is a ``ValueError``.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Sequence

from .models import _PD_ALIASES, DCMotorCfg, IdealPDActuatorCfg
from .neural import DriveNeuralGRU, DriveNeuralLSTM, DriveNeuralMLP
from .onnx_engine import DEFAULT_ONNX_THREADS

__all__ = ["NetworkFileFields", "ActuatorNetMLPCfg", "ActuatorNetLSTMCfg", "ActuatorNetGRUCfg", "GRU_STD_FLOOR", "GRU_INPUTS"]

GRU_STD_FLOOR = 1e-8
"""Smallest normalization std (Isaac Lab's ``_GRU_STD_FLOOR``); smaller ones are raised to it, with a warning."""

GRU_INPUTS = ("position", "position_error", "velocity")
"""The network's input columns, in order (:data:`~.neural.GRU_INPUT_COLUMNS` names)."""

_INPUT_FIELDS = ("position_normalization", "pos_error_normalization", "vel_normalization")

NormStats = Sequence[float]
"""``(mean, std)``; ``None``: the checkpoint's normalization metadata (Newton's GRU keys), else the identity ``(0, 1)``."""


@dataclass(kw_only=True)
class NetworkFileFields:
    """The checkpoint fields of every actuator-network config (MLP, LSTM, GRU)."""

    _no_stable_pd = "a learned actuator network has no implicit (Stable-PD) form"
    network_file: str | None = None
    """Path of the checkpoint (ONNX with metadata, weights .npz; TorchScript / .pt2 / pickle only with
    ``allow_unsafe_checkpoint=True``)."""
    allow_unsafe_checkpoint: bool = False
    """Allow checkpoint formats that can execute code when loaded (TorchScript, torch.export, pickle).
    Set it only for files you trust."""
    onnx_engine: str = "auto"
    """What runs an ONNX checkpoint: ``"auto"`` (onnxruntime on the CPU when installed, else torch),
    ``"onnxruntime"`` or ``"torch"`` (:mod:`~actuator_gym.actuators.onnx_engine`)."""
    onnx_threads: int = DEFAULT_ONNX_THREADS
    """onnxruntime intra-op threads, in [1, 256] (default 1: the actuator shares the cores with the physics
    and the policy; :mod:`~actuator_gym.actuators.onnx_engine`)."""

    def _network_kw(self) -> dict:
        """The keywords every learned drive takes from these fields."""
        return {"allow_unsafe_checkpoint": self.allow_unsafe_checkpoint, "onnx_engine": self.onnx_engine, "onnx_threads": self.onnx_threads}


@dataclass(kw_only=True)
class _ActuatorNetCfg(NetworkFileFields, DCMotorCfg):
    _ASSET_FIELDS = ("actuator_effort_limit", "actuator_velocity_limit")  # stiffness / damping: unused

    def _drive(self):  # pragma: no cover - interface
        raise NotImplementedError

    def recipe(self):
        if self.network_file is None:
            raise ValueError(f"{type(self).__name__}: network_file is required (path of the actuator network)")
        r = super().recipe()
        r["drive"] = self._drive()
        r["aliases"] = {k: v for k, v in r["aliases"].items() if k not in _PD_ALIASES}
        return r


@dataclass(kw_only=True)
class ActuatorNetMLPCfg(_ActuatorNetCfg):
    """MLP over a joint history (``DriveNeuralMLP``) followed by the DC-motor clamp
    (``saturation_effort``, ``actuator_velocity_limit``, ``actuator_effort_limit``; current qd).
    ``stiffness`` / ``damping`` are unused. Fields left ``None`` come from the checkpoint's metadata."""

    pos_scale: float | None = None
    """[1/rad]: scale of the position-error inputs (default 1)."""
    vel_scale: float | None = None
    """[s/rad]: scale of the velocity inputs (default 1)."""
    torque_scale: float | None = None
    """[N·m]: scale of the network output (default 1)."""
    input_order: str | None = None
    """``"pos_vel"`` or ``"vel_pos"``: which block comes first in the input row."""
    input_idx: list[int] | None = None
    """[substeps]: history indices, 0 = current substep (e.g. ``[0, 2, 4]``)."""

    def _drive(self):
        return DriveNeuralMLP(
            self.network_file,
            input_order=self.input_order,
            input_idx=self.input_idx,
            pos_scale=self.pos_scale,
            vel_scale=self.vel_scale,
            torque_scale=self.torque_scale,
            **self._network_kw(),
        )


@dataclass(kw_only=True)
class ActuatorNetLSTMCfg(_ActuatorNetCfg):
    """LSTM actuator net (``DriveNeuralLSTM``, inputs ``[q* - q, qd]``) followed by the DC-motor clamp
    with the current qd. ``stiffness`` / ``damping`` are unused."""

    def _drive(self):
        return DriveNeuralLSTM(self.network_file, **self._network_kw())


@dataclass(kw_only=True)
class ActuatorNetGRUCfg(NetworkFileFields, IdealPDActuatorCfg):
    """GRU actuator net predicting the total joint effort (Isaac Lab's ``ActuatorNetGRUCfg``),
    clipped to ``+-actuator_effort_limit`` (module doc). Fields as Isaac Lab's; ``network_file`` /
    ``allow_unsafe_checkpoint`` as every network config's (:class:`NetworkFileFields`)."""
    position_normalization: NormStats | None = None
    """``(mean, std)`` [rad] of the joint-position input, ``(q - mean) / std``; None: identity (or the checkpoint's metadata)."""
    pos_error_normalization: NormStats | None = None
    """``(mean, std)`` [rad] of the position-error input ``q* - q``; None: identity (or the checkpoint's metadata)."""
    vel_normalization: NormStats | None = None
    """``(mean, std)`` [rad/s] of the joint-velocity input; None: identity (or the checkpoint's metadata)."""
    output_normalization: NormStats | None = None
    """``(mean, std)`` [N·m] of the output: effort ``= y * std + mean``; None: identity (or the checkpoint's metadata)."""

    def normalization(self, name: str) -> tuple[float, float]:
        """``(mean, std)`` of field ``name`` checked: two finite numbers, std >= 0 (floored at
        :data:`GRU_STD_FLOOR` with a warning); ``(0.0, 1.0)`` for None."""
        me = f"{type(self).__name__}.{name}"
        v = getattr(self, name)
        if v is None:
            return 0.0, 1.0
        if isinstance(v, (str, bytes)) or not isinstance(v, Sequence) or len(v) != 2:
            raise ValueError(f"{me} must be (mean, std), two numbers, or None (identity); got {v!r}")
        out = []
        for part, x in zip(("mean", "std"), v):
            if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
                raise ValueError(f"{me}: {part} must be a finite number, got {x!r}")
            out.append(float(x))
        mean, std = out
        if std < 0.0:
            raise ValueError(f"{me}: std must be >= 0 (check the (mean, std) order), got {std}")
        if std < GRU_STD_FLOOR:
            warnings.warn(f"{me}: std {std} is below {GRU_STD_FLOOR}; using {GRU_STD_FLOOR} (as Isaac Lab)", stacklevel=2)
            std = GRU_STD_FLOOR
        return mean, std

    def recipe(self):
        if self.network_file is None:
            raise ValueError(f"{type(self).__name__}: network_file is required (path of the actuator network)")
        given = {c: self.normalization(n) for c, n in zip(GRU_INPUTS, _INPUT_FIELDS) if getattr(self, n) is not None}
        out = self.normalization("output_normalization") if self.output_normalization is not None else (None, None)
        r = super().recipe()
        r["drive"] = DriveNeuralGRU(  # fields left None: the checkpoint's normalization metadata, else identity
            self.network_file,
            input_columns=list(GRU_INPUTS),
            input_mean={c: m for c, (m, _) in given.items()},
            input_std={c: s for c, (_, s) in given.items()},
            torque_mean=out[0],
            torque_std=out[1],
            **self._network_kw(),
        )
        r["aliases"] = {k: v for k, v in r["aliases"].items() if k not in ("stiffness", "damping")}
        return r
