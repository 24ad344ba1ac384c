"""``actuator-gym export``: a saved policy's deterministic actor as one ONNX or TorchScript file for a
robot's onboard computer, plus ``policy_layout.json`` describing what goes in and comes out.

The exported model is :class:`~actuator_gym.tools.training.SavedPolicy`'s computation, whole::

    actions = min(max(action_net(policy_net((obs - mean) / (std + epsilon))), action_low), action_high)

(the normalization only when the policy has one): input ``obs`` ``(N, obs_dim)`` float32 with a
dynamic batch dimension ``N``, output ``actions`` ``(N, act_dim)`` float32 -- what ``SavedPolicy``
returns for the same observations (docs/training.md, "Running an exported policy on a robot").
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .._safe_io import atomic_path, clear_outputs, write_atomic

__all__ = ["EXPORT_FORMATS", "LAYOUT_FILE", "LAYOUT_FORMAT", "ExportedActor", "export_for_task", "export_policy", "layout", "load_policy"]

EXPORT_FORMATS = {"onnx": "policy.onnx", "torchscript": "policy.pt"}
"""``--format``: the file each writes into ``OUT/export``."""
LAYOUT_FILE = "policy_layout.json"
LAYOUT_FORMAT = "actuator-gym-policy-layout/1"
ONNX_OPSET = 17
"""The ONNX opset of exported policies (onnxruntime >= 1.12 runs it)."""
EXPORT_OUTPUTS = (*EXPORT_FORMATS.values(), LAYOUT_FILE)
"""What ``export`` writes into ``OUT/export``: an earlier export's files are removed first (an ONNX
export leaves no older ``policy.pt`` beside its layout)."""

OBS_LAYOUTS = {"actuator_gym/Quadruped-v0": ("actuator_gym.tasks.quadruped_terms", "OBS_LAYOUT")}
"""``{task: (module, attribute)}``: where a task keeps its observation layout (``{quantity: slice}``)."""


def load_policy(spec: str | Path):
    """The :class:`~actuator_gym.tools.training.SavedPolicy` named by ``spec``: a bundled policy's name
    (:func:`actuator_gym.configs.bundled_policies`) or a folder holding ``policy.json`` + ``policy.pt``."""
    from .training import SavedPolicy

    return SavedPolicy.load(spec)


class ExportedActor(torch.nn.Module):
    """A saved policy's deterministic actor as one module: normalizer, MLP, action bounds."""

    def __init__(self, policy: Any):
        super().__init__()
        self.obs_normalizer, self.policy_net, self.action_net = policy.obs_normalizer, policy.policy_net, policy.action_net
        self.register_buffer("action_low", torch.as_tensor(policy.low, dtype=torch.float32))
        self.register_buffer("action_high", torch.as_tensor(policy.high, dtype=torch.float32))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        a = self.action_net(self.policy_net(self.obs_normalizer(obs)))
        return torch.minimum(torch.maximum(a, self.action_low), self.action_high)  # np.clip (low <= high)


def _names(n: int, layout_slices: dict[str, slice] | None, joints: tuple[str, ...]) -> list[str] | None:
    """Per-element names from ``{quantity: slice}``: ``quantity[joint]`` for a slice as long as the joints,
    ``quantity[i]`` otherwise."""
    if not layout_slices:
        return None
    names = [""] * n
    for q, s in layout_slices.items():
        idx = range(n)[s]
        for k, i in enumerate(idx):
            names[i] = f"{q}[{joints[k]}]" if len(idx) == len(joints) else f"{q}[{k}]"
    return names if all(names) else None


def layout(policy: Any, env: Any | None = None) -> dict[str, Any]:
    """``policy_layout.json``'s content: the input and output tensors, the observation (dim, per-element
    names and the quantities' slices where the task provides them, the normalization the model applies)
    and the action (dim, bounds, names, and the task's map from actions to actuator targets:
    ``target = offset + scale * action``) of ``env`` (None: sizes and bounds only)."""
    meta = policy.meta
    obs_dim, act_dim = meta["obs_dim"], meta["act_dim"]
    norm = meta.get("obs_normalization")
    observation: dict[str, Any] = {"dim": obs_dim, "dtype": "float32", "names": None, "slices": None,
                                   "normalization": None if norm is None else {
                                       "inside_the_model": True, "formula": "(obs - mean) / (std + epsilon)",
                                       "epsilon": norm["epsilon"],
                                       "mean": policy.obs_normalizer.mean.tolist(), "std": policy.obs_normalizer.std.tolist()}}
    action: dict[str, Any] = {"dim": act_dim, "dtype": "float32", "low": policy.low.tolist(), "high": policy.high.tolist(),
                              "clipped_inside_the_model": True, "names": None, "mode": None, "scale": None, "offset": None}
    task = meta.get("task")
    if env is not None:
        t = env.unwrapped.task if hasattr(env.unwrapped, "task") else None
        joints = tuple(getattr(t, "joint_names", ()) or ())
        where = OBS_LAYOUTS.get(task)
        if where is not None:
            import importlib

            slices = getattr(importlib.import_module(where[0]), where[1])
            observation["slices"] = {q: [s.start, s.stop] for q, s in slices.items()}
            observation["names"] = _names(obs_dim, slices, joints)
        amap = getattr(t, "action_map", None)
        if amap is not None:
            action.update(names=list(amap.labels), mode=amap.mode, normalized=bool(amap.normalized),
                          scale=np.asarray(t.action_scale, dtype=float).tolist(),
                          offset=np.asarray(t.action_offset, dtype=float).tolist(),
                          target="offset + scale * action (the actuators' targets: position [rad], velocity "
                                 "[rad/s], effort [N·m] or rotor thrust [N], per mode)")
    return {"format": LAYOUT_FORMAT, "task": task, "policy_format": meta.get("format"),
            "input": {"name": "obs", "shape": ["N", obs_dim], "dtype": "float32"},
            "output": {"name": "actions", "shape": ["N", act_dim], "dtype": "float32"},
            "observation": observation, "action": action}


def export_policy(policy: Any, fmt: str, out: Path, env: Any | None = None) -> list[Path]:
    """Write ``policy`` (a ``SavedPolicy``) as ``fmt`` (:data:`EXPORT_FORMATS`) and ``policy_layout.json``
    into the folder ``out`` (an earlier export's files removed first, each file written atomically,
    the layout last). Returns the files."""
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"export: format must be one of {sorted(EXPORT_FORMATS)}, got {fmt!r}")
    doc = layout(policy, env)
    model = ExportedActor(policy).eval()
    example = torch.zeros(2, policy.meta["obs_dim"], dtype=torch.float32)
    out.mkdir(parents=True, exist_ok=True)
    clear_outputs(out, EXPORT_OUTPUTS)
    path = out / EXPORT_FORMATS[fmt]
    with atomic_path(path) as tmp, torch.no_grad(), warnings.catch_warnings():
        # TorchScript and the TorchScript-based ONNX exporter (deprecated in torch 2.9+, still shipped): offline,
        # no onnxscript needed, and what torch.jit.load / every onnxruntime reads
        warnings.simplefilter("ignore", DeprecationWarning)
        if fmt == "onnx":
            torch.onnx.export(model, (example,), str(tmp), input_names=["obs"], output_names=["actions"],
                              dynamic_axes={"obs": {0: "N"}, "actions": {0: "N"}}, opset_version=ONNX_OPSET, dynamo=False)
        else:
            torch.jit.script(model).save(str(tmp))
    doc["model"] = {"file": path.name, "format": fmt, **({"opset": ONNX_OPSET} if fmt == "onnx" else {})}
    return [path, write_atomic(out / LAYOUT_FILE, json.dumps(doc, indent=1, ensure_ascii=False))]


def export_for_task(spec: str | Path, fmt: str, out: Path, experiment: Any = None) -> tuple[Any, str | None, list[Path]]:
    """``actuator-gym export``: the policy ``spec`` (:func:`load_policy`) exported into ``out`` (an
    output folder already checked) with the layout of its task -- built as the experiment builds it
    (its actuators and task keywords: the action map trained with) where ``experiment`` is given, else
    from the task recorded in the policy. ``ValueError`` (before anything is written) for an
    experiment of another task or a task whose sizes differ from the policy's. Returns the policy, the
    task and the files written."""
    import gymnasium as gym

    from .training import make_env

    policy = load_policy(spec)
    task = policy.meta.get("task")
    if experiment is not None and task not in (None, experiment.task):
        raise ValueError(f"the experiment is for {experiment.task}, the policy {spec} for {task}")
    task = experiment.task if experiment is not None else task
    env = None
    if task is not None and task in gym.registry:  # the task's names and action map go into the layout
        acts, kwargs = (experiment.actuators, dict(experiment.task_kwargs)) if experiment is not None else (None, {})
        env = make_env(task, acts, **kwargs)
        dims = int(np.prod(env.observation_space.shape)), int(np.prod(env.action_space.shape))
        if dims != (policy.meta["obs_dim"], policy.meta["act_dim"]):
            env.close()
            raise ValueError(f"policy {spec} has obs {policy.meta['obs_dim']} / act {policy.meta['act_dim']}, "
                             f"but {task} has obs {dims[0]} / act {dims[1]}")
    try:
        return policy, task, export_policy(policy, fmt, out, env)
    finally:
        if env is not None:
            env.close()
