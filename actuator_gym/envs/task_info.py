"""The batched task's ``info`` dicts (Gymnasium's vector format) and their per-env views.

:func:`vector_info` builds a step's or reset's ``info`` from a
:class:`~actuator_gym.envs.task.BatchedTask`, :func:`action_info` the action mapping it reports;
:func:`masked_info` and :func:`unbatch_info` and-mask it / take one env's entries (SAME_STEP's
``final_info``, the single-env ``TaskEnv``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..runtime.episode_stats import EPISODE_INFO_KEY

__all__ = ["vector_info", "action_info", "flat_info", "masked_info", "with_finals", "unbatch_info", "env_info"]


def vector_info(task: Any, stepped: np.ndarray, reset: np.ndarray, ended: np.ndarray | None = None) -> dict[str, Any]:
    """``info`` of ``task`` after a step / reset: ``stepped`` masks the envs that stepped (the
    telemetry keys), ``reset`` the envs reset in this call (the parameters in force, the drawn
    model fields), ``ended`` the envs whose episode ended in this step (their episode statistics,
    ``info["actuator_episode"]``: :mod:`actuator_gym.runtime.episode_stats`). Keys: see the
    :mod:`actuator_gym.envs.task` module docstring.

    The same keys, dtypes and shapes come after every reset and every step (only the masks
    change): torchrl's info reader stacks the infos of successive calls and fails on a key set
    that changes. So the parameters, the drawn model fields and the episode statistics are in
    every info (the values in force for every env; zeros where an episode did not end), masked."""
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
    for key, value in task.rig.engine.motor_telemetry.items():  # native DC-motor extras, BAM servos' keys
        act[key], act["_" + key] = value.copy(), everyone.copy()
    shown = task.rig.shown(reset)  # the one rule (the wrapper's too): reset envs, and envs whose parameters were set
    params: dict[str, Any] = {}  # in every info (see above): the values in force, masked
    for g, p in task.rig.parameters().items():
        gd = {}
        for k, v in p.items():
            gd[k], gd["_" + k] = v, shown.copy()
        params[g], params["_" + g] = gd, shown.copy()
    act["parameters"], act["_parameters"] = params, shown.copy()
    info: dict[str, Any] = {"actuator": act, "_actuator": everyone.copy()}
    ended = np.zeros(n, bool) if ended is None else ended
    info[EPISODE_INFO_KEY], info["_" + EPISODE_INFO_KEY] = task.episode_stats.record(ended), ended.copy()
    if task.field_rands:
        rd = {}
        for fr in task.field_rands:
            rd[fr.label], rd["_" + fr.label] = fr.current(), reset.copy()
        info["randomization"], info["_randomization"] = rd, reset.copy()
    info["physics_diverged"], info["_physics_diverged"] = task.physics_diverged.copy(), everyone.copy()
    for k, v in task.extra_info().items():
        v = np.asarray(v)
        if v.shape[:1] != (n,):
            raise ValueError(f"{type(task).__name__}.extra_info()[{k!r}] must be (num_envs, ...), got {v.shape}")
        info[k], info["_" + k] = v.copy(), everyone.copy()
    return flat_info(info) if task.flat_info else info


def flat_info(info: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A vector info dict without nested dicts: ``info["a"]["b"]`` becomes ``info["a/b"]`` (its mask
    ``info["_a/b"]``), for readers that take flat entries only (torchrl's)."""
    out: dict[str, Any] = {}
    for k, v in info.items():
        if k.startswith("_"):
            continue
        if isinstance(v, dict):
            out.update(flat_info(v, f"{prefix}{k}/"))
            continue
        out[prefix + k] = v
        if "_" + k in info:
            out[f"_{prefix}{k}"] = info["_" + k]
    return out


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


def with_finals(info: dict[str, Any], final_obs: np.ndarray, final_info: dict[str, Any], done: np.ndarray) -> dict[str, Any]:
    """SAME_STEP: ``info`` plus ``final_obs`` (object array of the ended envs' last observations,
    rows of ``final_obs``; None elsewhere) and ``final_info``, both masked by ``done``
    (Gymnasium's format)."""
    rows = np.full(len(done), None, dtype=object)
    for i in np.flatnonzero(done):
        rows[i] = np.array(final_obs[i], copy=True)
    info["final_obs"], info["_final_obs"] = rows, done.copy()
    info["final_info"], info["_final_info"] = final_info, done.copy()
    return info


def unbatch_info(info: dict[str, Any], i: int, *, keep_masked: bool = False) -> dict[str, Any]:
    """Env ``i``'s entries of a vector info dict: those whose mask is False are left out, unless
    ``keep_masked`` (then every key is kept, so successive infos have the same keys)."""
    out: dict[str, Any] = {}
    for k, v in info.items():
        if k.startswith("_"):
            continue
        m = info.get("_" + k)
        if m is not None and not m[i] and not keep_masked:
            continue
        if isinstance(v, dict):
            out[k] = unbatch_info(v, i, keep_masked=keep_masked)
        else:
            x = v[i]
            out[k] = x.item() if isinstance(x, np.generic) else (x.copy() if isinstance(x, np.ndarray) else x)
    return out


def env_info(info: dict[str, Any], i: int, ended: bool) -> dict[str, Any]:
    """Env ``i``'s info as the single env (:class:`~actuator_gym.envs.task_env.TaskEnv`) gives it:
    the same keys every call (torchrl stacks them), except the episode statistics of the nested
    format, present only on the step that ends the episode (``ended``; as Gymnasium's
    ``RecordEpisodeStatistics`` puts ``info["episode"]``), so episode loggers (SB3's ``DummyVecEnv``
    of single envs) never read a record of an unfinished episode. The flat format (torchrl) keeps
    their keys, masked, every call. A vector env's own autoreset keys (``final_obs`` /
    ``final_info``) are not the env's and are left out."""
    out = unbatch_info(info, i, keep_masked=True)
    out.pop("final_obs", None), out.pop("final_info", None)
    if not ended:
        out.pop(EPISODE_INFO_KEY, None)
    return out


def action_info(actions: Any, reset: np.ndarray) -> dict[str, Any]:
    """``info["action_scale"]`` / ``info["action_offset"]`` ``(num_envs, num_actions)``: the mapping
    in force, in every info (the same keys every call, as torchrl needs); masks ``_action_scale`` /
    ``_action_offset``: the envs reset in this call."""
    n = len(reset)
    return {"action_scale": np.tile(actions.scale, (n, 1)), "_action_scale": reset.copy(),
            "action_offset": np.tile(actions.offset, (n, 1)), "_action_offset": reset.copy()}
