"""The batched task's ``info`` dicts (Gymnasium's vector format) and their per-env views.

Split from :mod:`actuator_gym.envs.task`: :func:`vector_info` builds a step's or reset's ``info``
from a :class:`~actuator_gym.envs.task.BatchedTask`; :func:`masked_info` and :func:`unbatch_info`
and-mask it / take one env's entries (SAME_STEP's ``final_info``, the single-env ``TaskEnv``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..episode_stats import EPISODE_INFO_KEY

__all__ = ["vector_info", "masked_info", "unbatch_info"]


def vector_info(task: Any, stepped: np.ndarray, reset: np.ndarray, ended: np.ndarray | None = None) -> dict[str, Any]:
    """``info`` of ``task`` after a step / reset: ``stepped`` masks the envs that stepped (the
    telemetry keys), ``reset`` the envs reset in this call (the parameters in force, the drawn
    model fields), ``ended`` the envs whose episode ended in this step (their episode statistics,
    ``info["actuator_episode"]``: :mod:`actuator_gym.episode_stats`, only when some ended). Keys:
    see the :mod:`actuator_gym.envs.task` module docstring."""
    n = task.num_envs
    tel = task.telemetry
    act: dict[str, Any] = {}
    everyone = np.ones(n, bool)
    for key in tel:  # the engine's keys (joints: substep.TELEMETRY; rotors: rotors.ROTOR_TELEMETRY)
        act[key], act["_" + key] = tel[key].copy(), stepped.copy()
    if task.collection is not None:  # joint state after the step / reset
        act["joint_pos"], act["_joint_pos"] = task.backend.joint_pos(), everyone.copy()
        act["joint_vel"], act["_joint_vel"] = task.backend.joint_vel(), everyone.copy()
    for key, value in task.actuator_telemetry().items():
        act[key], act["_" + key] = np.array(value), everyone.copy()
    shown = reset | task.parameters_changed  # reset envs, and envs whose parameters were set
    task.parameters_changed[:] = False
    if shown.any():
        params: dict[str, Any] = {}
        for g, p in task.actuator_parameters().items():
            gd = {}
            for k, v in p.items():
                gd[k], gd["_" + k] = v, shown.copy()
            params[g], params["_" + g] = gd, shown.copy()
        act["parameters"], act["_parameters"] = params, shown.copy()
    info: dict[str, Any] = {"actuator": act, "_actuator": everyone.copy()}
    if ended is not None and ended.any():
        info[EPISODE_INFO_KEY], info["_" + EPISODE_INFO_KEY] = task.episode_stats.record(ended), ended.copy()
    if task._field_rands and reset.any():
        rd = {}
        for fr in task._field_rands:
            rd[fr.label], rd["_" + fr.label] = fr.current(), reset.copy()
        info["randomization"], info["_randomization"] = rd, reset.copy()
    for k, v in task.extra_info().items():
        v = np.asarray(v)
        if v.shape[:1] != (n,):
            raise ValueError(f"{type(task).__name__}.extra_info()[{k!r}] must be (num_envs, ...), got {v.shape}")
        info[k], info["_" + k] = v.copy(), everyone.copy()
    return info


def masked_info(info: dict[str, Any], mask: np.ndarray) -> dict[str, Any]:
    """A copy of a vector info dict whose masks are and-ed with ``mask``."""
    out: dict[str, Any] = {}
    for k, v in info.items():
        if k.startswith("_"):
            out[k] = v & mask
        elif isinstance(v, dict):
            out[k] = masked_info(v, mask)
        else:
            out[k] = v.copy() if isinstance(v, np.ndarray) else v
    return out


def unbatch_info(info: dict[str, Any], i: int) -> dict[str, Any]:
    """Env ``i``'s entries of a vector info dict (entries whose mask is False are left out)."""
    out: dict[str, Any] = {}
    for k, v in info.items():
        if k.startswith("_"):
            continue
        m = info.get("_" + k)
        if m is not None and not m[i]:
            continue
        if isinstance(v, dict):
            out[k] = unbatch_info(v, i)
        else:
            x = v[i]
            out[k] = x.item() if isinstance(x, np.generic) else (x.copy() if isinstance(x, np.ndarray) else x)
    return out
