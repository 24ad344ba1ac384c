"""Present any Gymnasium ``VectorEnv`` with SAME_STEP autoreset semantics.

The RL libraries we adapt to (Stable-Baselines3, skrl, rsl_rl) all expect that the observation
returned by ``step`` for a finished sub-environment is already the first observation of its next
episode. Gymnasium calls this ``AutoresetMode.SAME_STEP`` and reports the last observation of the
finished episode in ``info["final_obs"]`` (and that step's info in ``info["final_info"]``).

:class:`SameStepAutoreset` passes a SAME_STEP env through untouched. For a NEXT_STEP or DISABLED env
it resets the finished sub-environments itself, right after the step, with Gymnasium's partial
reset ``env.reset(options={"reset_mask": done})`` (supported by ``SyncVectorEnv`` /
``AsyncVectorEnv`` since Gymnasium 1.1 and by actuator-gym's ``BatchedTask``). A partial reset clears
the env's pending NEXT_STEP autoreset, so no step is ever wasted on a reset and the resulting
trajectories are identical to the same env run natively in SAME_STEP mode.

Only the RL libraries are optional; this module needs numpy (and torch only when the env returns
torch tensors).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv, VectorWrapper

__all__ = ["SameStepAutoreset", "autoreset_mode", "env_info", "index_obs", "to_numpy"]


def autoreset_mode(env: VectorEnv) -> AutoresetMode:
    """The env's declared ``metadata["autoreset_mode"]`` (Gymnasium's default NEXT_STEP when absent)."""
    mode = env.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
    if isinstance(mode, str):
        try:
            mode = AutoresetMode(mode)
        except ValueError:
            raise ValueError(
                f"env.metadata['autoreset_mode']={mode!r} is not one of "
                f"{[m.value for m in AutoresetMode]}"
            ) from None
    if not isinstance(mode, AutoresetMode):
        raise ValueError(
            f"env.metadata['autoreset_mode'] must be a gymnasium.vector.AutoresetMode, got {mode!r}"
        )
    return mode


def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch")


def to_numpy(x: Any) -> Any:
    """Recursively turn torch tensors (any device) into numpy arrays; dicts and tuples are mapped."""
    if isinstance(x, dict):
        return {k: to_numpy(v) for k, v in x.items()}
    if isinstance(x, tuple):
        return tuple(to_numpy(v) for v in x)
    if _is_torch(x):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def index_obs(obs: Any, i: int) -> Any:
    """Observation of sub-environment ``i`` from a batched observation (a copy, never a view)."""
    if isinstance(obs, dict):
        return {k: index_obs(v, i) for k, v in obs.items()}
    if isinstance(obs, tuple):
        return tuple(index_obs(v, i) for v in obs)
    return obs[i].clone() if _is_torch(obs) else np.array(obs[i], copy=True)


def _select(step_obs: Any, reset_obs: Any, done: np.ndarray) -> Any:
    """``reset_obs`` where ``done`` else ``step_obs`` (fresh object)."""
    if isinstance(step_obs, dict):
        return {k: _select(step_obs[k], reset_obs[k], done) for k in step_obs}
    if isinstance(step_obs, tuple):
        return tuple(_select(s, r, done) for s, r in zip(step_obs, reset_obs))
    if _is_torch(step_obs):
        import torch

        out = step_obs.clone()
        mask = torch.as_tensor(done, device=out.device)
        out[mask] = reset_obs[mask]
        return out
    out = np.array(step_obs, copy=True)
    out[done] = np.asarray(reset_obs)[done]
    return out


def _mask_of(info: dict, key: str, n: int) -> np.ndarray:
    mask = info.get(f"_{key}")
    if mask is None:  # a key without a mask is taken to hold data for every env
        return np.ones(n, dtype=bool)
    return np.asarray(to_numpy(mask), dtype=bool)


def _blank(value: Any, mask: np.ndarray) -> Any:
    """Copy of a batched info entry with the envs outside ``mask`` set to Gymnasium's empty value
    (0 for numeric arrays, None for object arrays)."""
    if _is_torch(value):
        import torch

        out = value.clone()
        out[torch.as_tensor(~mask, device=out.device)] = 0
        return out
    out = np.array(value, copy=True)
    out[~mask] = None if out.dtype == object else 0
    return out


def restrict_info(info: dict, keep: np.ndarray) -> dict:
    """Batched info keeping only the sub-environments in ``keep`` (keys no env keeps are dropped)."""
    out: dict[str, Any] = {}
    for key, value in info.items():
        if key.startswith("_"):
            continue
        mask = _mask_of(info, key, len(keep)) & keep
        if not mask.any():
            continue
        out[key] = restrict_info(value, keep) if isinstance(value, dict) else _blank(value, mask)
        out[f"_{key}"] = mask
    return out


def _overlay_value(base: Any, base_mask: np.ndarray, top: Any, top_mask: np.ndarray) -> Any:
    if isinstance(base, dict) and isinstance(top, dict):
        return overlay_info(base, top, len(base_mask))
    if _is_torch(base) or _is_torch(top):
        base, top = to_numpy(base), to_numpy(top)
    base, top = np.asarray(base), np.asarray(top)
    if base.shape[1:] == top.shape[1:] and base.dtype == top.dtype:
        out = base.copy()
    else:  # differing per-env shapes or dtypes: fall back to an object array
        out = np.empty(len(base_mask), dtype=object)
        for i in np.flatnonzero(base_mask):
            out[i] = base[i]
    out[top_mask] = top[top_mask]
    return out


def overlay_info(base: dict, top: dict, n: int) -> dict:
    """Batched info (``n`` envs) with ``top``'s entries replacing ``base``'s where ``top`` has them."""
    out = dict(base)
    for key, value in top.items():
        if key.startswith("_"):
            continue
        top_mask = _mask_of(top, key, n)
        if key in base:
            base_mask = _mask_of(base, key, n)
            out[key] = _overlay_value(base[key], base_mask, value, top_mask)
            out[f"_{key}"] = base_mask | top_mask
        else:
            out[key] = value
            out[f"_{key}"] = top_mask
    return out


def env_info(info: dict, i: int, skip: tuple[str, ...] = ()) -> dict:
    """The info dict of sub-environment ``i`` from a batched info (Gymnasium's ``_key`` masks)."""
    out: dict[str, Any] = {}
    for key, value in info.items():
        if key.startswith("_") or key in skip:
            continue
        mask = info.get(f"_{key}")
        if mask is not None and not bool(mask[i]):
            continue
        if isinstance(value, dict):
            out[key] = env_info(value, i)
        else:
            item = value[i]
            out[key] = item.clone() if _is_torch(item) else (item.copy() if isinstance(item, np.ndarray) else item)
    return out


class ForwardCalls:
    """``call`` / ``get_attr`` / ``set_attr`` of a Gymnasium ``VectorWrapper``, reaching the base vector
    env's sub-environments (``env.unwrapped``: Gymnasium's ``VectorWrapper`` does not forward them, and
    they act on sub-environments, not on the wrappers between; skrl's trainers ``call("render")``)."""

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        return self.env.unwrapped.call(name, *args, **kwargs)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        return self.env.unwrapped.get_attr(name)

    def set_attr(self, name: str, values: Any) -> None:
        self.env.unwrapped.set_attr(name, values)


class SameStepAutoreset(ForwardCalls, VectorWrapper):
    """View of a vector env with ``AutoresetMode.SAME_STEP`` semantics, whatever the env's own mode.

    After ``step`` the observation of every finished sub-environment (``terminated | truncated``) is
    the first observation of its next episode; ``info["final_obs"]`` (object array, ``None`` for
    running envs) holds the last observation of the finished episode and ``info["final_info"]``
    (batched info) that step's info, both masked by ``info["_final_obs"]`` / ``info["_final_info"]``.
    The main info of a finished env is its reset info, as in Gymnasium's ``SyncVectorEnv``.

    SAME_STEP envs pass through unchanged. NEXT_STEP / DISABLED envs are reset right after the
    step with ``env.reset(options={"reset_mask": done})``; rewards, terminations and truncations
    are those of the step. The wrapped env must implement the partial reset (Gymnasium's contract:
    only the masked envs are reset and their pending autoreset is cleared).

    ``flat_info=True``: the infos of ``reset`` and ``step`` (and ``final_info``) have no nested dicts:
    ``info["actuator"]["applied_effort"]`` becomes ``info["actuator/applied_effort"]``, with its mask,
    as the tasks' own ``flat_info=True`` gives; torchrl's ``GymWrapper`` reads flat entries only.
    """

    def __init__(self, env: VectorEnv, *, flat_info: bool = False):
        from .._checks import check_bool

        super().__init__(env)
        self.source_mode = autoreset_mode(env)
        self.flat_info = check_bool(flat_info, "flat_info", "SameStepAutoreset")
        self.metadata = {**env.metadata, "autoreset_mode": AutoresetMode.SAME_STEP}

    def _flat(self, info: dict) -> dict:
        if not self.flat_info:
            return info
        from ..envs.task_info import flat_info

        finals = {k: info[k] for k in ("final_obs", "_final_obs", "_final_info") if k in info}
        if "final_info" in info:
            finals["final_info"] = flat_info(info["final_info"])
        return {**flat_info({k: v for k, v in info.items() if k not in finals}), **finals}

    def reset(self, *, seed: Any = None, options: dict[str, Any] | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        return obs, self._flat(info)

    @property
    def autoreset_mode(self) -> AutoresetMode:
        """SAME_STEP (also read as an attribute, like ``SyncVectorEnv.autoreset_mode``, by torchrl)."""
        return AutoresetMode.SAME_STEP

    def step(self, actions):
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        done = np.logical_or(to_numpy(terminated), to_numpy(truncated)).astype(bool).reshape(-1)
        if self.source_mode == AutoresetMode.SAME_STEP or not done.any():
            return obs, rewards, terminated, truncated, self._flat(info)
        reset_obs, reset_info = self.env.reset(options={"reset_mask": done.copy()})
        if reset_obs is None:
            raise ValueError(
                "env.reset(options={'reset_mask': ...}) returned no observation: the wrapped env must "
                "support Gymnasium's partial reset to be used with NEXT_STEP or DISABLED autoreset"
            )
        final_obs = np.full(self.num_envs, None, dtype=object)
        for i in np.flatnonzero(done):
            final_obs[i] = index_obs(obs, int(i))
        out_info = overlay_info(restrict_info(info, ~done), reset_info, self.num_envs)
        out_info["final_obs"], out_info["_final_obs"] = final_obs, done.copy()
        out_info["final_info"], out_info["_final_info"] = restrict_info(info, done), done.copy()
        return _select(obs, reset_obs, done), rewards, terminated, truncated, self._flat(out_info)
