"""rsl_rl 5.x ``VecEnv`` over a Gymnasium ``VectorEnv`` (imported only by ``adapters.rsl_rl``)."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import torch
from rsl_rl.env import VecEnv
from tensordict import TensorDict

from ..envs.symmetry import MirrorSpec, task_mirror
from ..runtime.episode_stats import episode_record, log_values
from ._autoreset import SameStepAutoreset, _is_torch, to_numpy


def _max_episode_length(vec_env) -> int:
    for obj in (vec_env, vec_env.unwrapped):
        for name in ("max_episode_length", "max_episode_steps"):  # rsl_rl's name, BatchedTask's name
            value = getattr(obj, name, None)
            if value is not None:
                return int(value)
    spec = getattr(vec_env, "spec", None)
    if spec is not None and spec.max_episode_steps is not None:
        return int(spec.max_episode_steps)
    envs = getattr(vec_env.unwrapped, "envs", None)  # SyncVectorEnv: the sub-envs' TimeLimit
    if envs:
        spec = getattr(envs[0], "spec", None)
        if spec is not None and spec.max_episode_steps is not None:
            return int(spec.max_episode_steps)
    raise ValueError(
        "max_episode_length: the env declares no episode limit (no max_episode_length / "
        "max_episode_steps attribute, no spec.max_episode_steps); pass max_episode_length= (steps, > 0)"
    )


class RslRlVecEnv(VecEnv):
    """rsl_rl view of a Gymnasium vector env (see :func:`actuator_gym.adapters.rsl_rl`)."""

    def __init__(
        self,
        vec_env,
        *,
        max_episode_length: int | None = None,
        device: str | torch.device | None = None,
        clip_actions: bool = True,
        seed: int | None = None,
        cfg: dict | object | None = None,
    ):
        act_space = vec_env.single_action_space
        if not isinstance(act_space, gymnasium.spaces.Box):
            raise ValueError(
                f"rsl_rl needs a continuous (Box) action space, got single_action_space={act_space}"
            )
        obs_space = vec_env.single_observation_space
        if isinstance(obs_space, gymnasium.spaces.Dict):
            if "policy" not in obs_space.spaces:
                raise ValueError(
                    f"a Dict observation space must have a 'policy' group for rsl_rl, got groups "
                    f"{list(obs_space.spaces)}"
                )
            bad = [k for k, s in obs_space.spaces.items() if not isinstance(s, gymnasium.spaces.Box)]
            if bad:
                raise ValueError(f"observation groups {bad} must be Box spaces for rsl_rl")
        elif not isinstance(obs_space, gymnasium.spaces.Box):
            raise ValueError(
                f"rsl_rl needs a Box or Dict-of-Box observation space, got single_observation_space={obs_space}"
            )
        if max_episode_length is not None and int(max_episode_length) <= 0:
            raise ValueError(f"max_episode_length must be > 0 steps, got {max_episode_length}")

        self.vec_env = vec_env
        self.env = SameStepAutoreset(vec_env)
        self.num_envs = int(vec_env.num_envs)
        self.num_actions = int(np.prod(act_space.shape))
        self.max_episode_length = (
            int(max_episode_length) if max_episode_length is not None else _max_episode_length(vec_env)
        )
        if device is None:
            device = getattr(vec_env.unwrapped, "device", None) or "cpu"
        self.device = torch.device(device)
        env_cfg = getattr(vec_env.unwrapped, "cfg", None)
        self.cfg = cfg if cfg is not None else (env_cfg if env_cfg is not None else {})
        self.clip_actions = bool(clip_actions)
        self._act_low = torch.as_tensor(act_space.low, dtype=torch.float32, device=self.device).reshape(-1)
        self._act_high = torch.as_tensor(act_space.high, dtype=torch.float32, device=self.device).reshape(-1)
        self._act_shape = act_space.shape
        self.episode_length_buf = torch.zeros(self.num_envs, dtype=torch.long, device=self.device)
        self._mirror: MirrorSpec | None = None
        # The runner never calls reset(): start the episodes now.
        self._obs, _ = self.reset(seed=seed)

    def _to_tensor(self, x: Any, dtype=torch.float32) -> torch.Tensor:
        if _is_torch(x):
            return x.to(device=self.device, dtype=dtype)
        return torch.as_tensor(np.asarray(x), dtype=dtype, device=self.device)

    def _obs_dict(self, obs: Any) -> TensorDict:
        groups = obs if isinstance(obs, dict) else {"policy": obs}
        data = {k: self._to_tensor(v).reshape(self.num_envs, -1) for k, v in groups.items()}
        return TensorDict(data, batch_size=[self.num_envs], device=self.device)

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[TensorDict, dict]:
        """Reset every env (the runner never calls this; construction already did)."""
        obs, info = self.env.reset(seed=seed, options=options)
        self._obs = self._obs_dict(obs)
        self.episode_length_buf.zero_()
        return self._obs, {"observations": self._obs}

    def get_observations(self) -> TensorDict:
        return self._obs

    def step(self, actions: torch.Tensor) -> tuple[TensorDict, torch.Tensor, torch.Tensor, dict]:
        actions = actions.to(device=self.device, dtype=torch.float32).reshape(self.num_envs, self.num_actions)
        if self.clip_actions:
            actions = torch.clamp(actions, self._act_low, self._act_high)
        actions = actions.reshape(self.num_envs, *self._act_shape)
        # Gymnasium's contract is numpy actions; an env may declare metadata["array_type"] = "torch".
        env_actions = actions if _torch_native(self.vec_env) else actions.detach().cpu().numpy()
        obs, rewards, terminated, truncated, info = self.env.step(env_actions)
        terminated = self._to_tensor(terminated, torch.bool).reshape(-1)
        truncated = self._to_tensor(truncated, torch.bool).reshape(-1)
        dones = terminated | truncated
        self._obs = self._obs_dict(obs)
        self.episode_length_buf += 1
        self.episode_length_buf[dones] = 0
        log = _log_scalars(info.get("log"))
        record, ended = episode_record(info)  # the finished episodes' actuator statistics
        if record is not None:  # one value per finished episode: the runner averages over all of them
            for tag, values in log_values(record, ended).items():
                log[tag] = torch.as_tensor(values, dtype=torch.float32, device=self.device)
        extras = {
            # bootstrap only true time-outs, never an episode that also terminated
            "time_outs": truncated & ~terminated,
            "log": log,
        }
        rewards = self._to_tensor(rewards).reshape(-1)
        return self._obs, rewards, dones.to(torch.long), extras

    def mirror_spec(self) -> MirrorSpec:
        """The wrapped task's left-right reflection (:func:`actuator_gym.envs.symmetry.task_mirror`:
        ``ValueError`` when it declares none), found once."""
        if self._mirror is None:
            self._mirror = task_mirror(self.vec_env)
        return self._mirror

    def close(self) -> None:
        self.env.close()


def rsl_rl_mirror(env, obs: TensorDict | None = None, actions: torch.Tensor | None = None):
    """rsl_rl's symmetry ``data_augmentation_func`` (see :func:`actuator_gym.adapters.rsl_rl_mirror`)."""
    spec = task_mirror(env)
    if obs is not None:
        width = len(spec.obs_index)
        bad = [k for k, v in obs.items() if v.shape[-1] != width]
        if bad:
            raise ValueError(f"rsl_rl_mirror: observation groups {bad} are not {width} wide: the task's mirror covers "
                             f"its {width}-float observation only")
        mirrored = TensorDict({k: spec.mirror_obs(v) for k, v in obs.items()}, batch_size=obs.batch_size, device=obs.device)
        obs = torch.cat([obs, mirrored], dim=0)
    if actions is not None:
        actions = torch.cat([actions, spec.mirror_actions(actions)], dim=0)
    return obs, actions


def _log_scalars(log: Any) -> dict[str, float | torch.Tensor]:
    """The env's ``info["log"]`` (if a dict) as rsl_rl log entries: tensors kept, arrays averaged
    over the envs that report them (Gymnasium ``_key`` masks)."""
    if not isinstance(log, dict):
        return {}
    out: dict[str, float | torch.Tensor] = {}
    for key, value in log.items():
        if key.startswith("_") or isinstance(value, dict):
            continue
        if _is_torch(value):
            out[key] = value
            continue
        value = np.asarray(to_numpy(value), dtype=np.float64)
        mask = log.get(f"_{key}")
        if mask is not None:
            value = value[np.asarray(to_numpy(mask), dtype=bool)]
        if value.size:
            out[key] = float(value.mean())
    return out


def _torch_native(vec_env) -> bool:
    """Whether the env takes torch actions (declared by ``metadata['array_type'] == 'torch'``)."""
    return vec_env.metadata.get("array_type") == "torch"
