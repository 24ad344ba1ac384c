"""Stable-Baselines3 ``VecEnv`` over a Gymnasium ``VectorEnv`` (imported only by ``adapters.sb3``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvObs, VecEnvStepReturn

from ..runtime.episode_stats import EPISODE_INFO_KEY, log_values
from ._autoreset import SameStepAutoreset, env_info, to_numpy

_FINAL_KEYS = ("final_obs", "final_info")


class SB3VecEnv(VecEnv):
    """SB3 view of a Gymnasium vector env (see :func:`actuator_gym.adapters.sb3`)."""

    def __init__(self, vec_env):
        self.vec_env = vec_env  # the env as given
        self.venv = SameStepAutoreset(vec_env)  # SAME_STEP view of it (pass-through when already so)
        self._actions: np.ndarray | None = None
        super().__init__(vec_env.num_envs, vec_env.single_observation_space, vec_env.single_action_space)

    # -- helpers -------------------------------------------------------------------------------
    def _indices(self, indices: VecEnvIndices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, (int, np.integer)):
            indices = [int(indices)]
        out = [int(i) for i in indices]
        bad = [i for i in out if not 0 <= i < self.num_envs]
        if bad:
            raise ValueError(f"indices {bad} out of range: must be in [0, {self.num_envs - 1}]")
        return out

    def _sub_envs(self) -> Sequence[Any] | None:
        """Per-env gymnasium.Env objects when the vector env keeps them (SyncVectorEnv), else None."""
        envs = getattr(self.vec_env.unwrapped, "envs", None)
        return envs if isinstance(envs, (list, tuple)) and len(envs) == self.num_envs else None

    # -- VecEnv API ----------------------------------------------------------------------------
    def reset(self) -> VecEnvObs:
        seeds = self._seeds
        seed: int | list[int | None] | None = None
        if any(s is not None for s in seeds):
            consecutive = all(s is not None for s in seeds) and all(
                s == seeds[0] + i for i, s in enumerate(seeds)
            )
            # VecEnv.seed(s) gives [s, s+1, ...]: Gymnasium's meaning of an int seed.
            seed = int(seeds[0]) if consecutive else list(seeds)
        options = None
        if any(self._options):
            if any(o != self._options[0] for o in self._options):
                raise ValueError(
                    "set_options: a Gymnasium vector env takes one options dict for all envs; "
                    "per-env options must be identical"
                )
            options = dict(self._options[0])
        obs, info = self.venv.reset(seed=seed, options=options)
        self.reset_infos = [env_info(info, i) for i in range(self.num_envs)]
        self._reset_seeds()
        self._reset_options()
        return to_numpy(obs)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self) -> VecEnvStepReturn:
        if self._actions is None:
            raise RuntimeError("step_wait() called without a pending step_async()")
        actions, self._actions = self._actions, None
        obs, rewards, terminated, truncated, info = self.venv.step(actions)
        terminated = to_numpy(terminated).astype(bool).reshape(-1)
        truncated = to_numpy(truncated).astype(bool).reshape(-1)
        dones = terminated | truncated
        final_info = info.get("final_info", {})
        infos: list[dict] = []
        for i in range(self.num_envs):
            if dones[i]:
                # SB3: the done step's info (what the finished episode reported) + terminal obs;
                # the reset info of the new episode goes to reset_infos (as DummyVecEnv does).
                env_i = env_info(final_info, i)
                env_i["terminal_observation"] = to_numpy(info["final_obs"][i])
                self.reset_infos[i] = env_info(info, i, skip=_FINAL_KEYS)
            else:
                env_i = env_info(info, i, skip=_FINAL_KEYS)
            env_i["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
            infos.append(env_i)
        rewards = to_numpy(rewards).astype(np.float32).reshape(-1)
        return to_numpy(obs), rewards, dones, infos

    def close(self) -> None:
        self.venv.close()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        ids = self._indices(indices)
        envs = self._sub_envs()
        if envs is not None:
            return [envs[i].get_wrapper_attr(attr_name) for i in ids]
        if (base := _async_base(self.vec_env)) is not None:
            values = base.get_attr(attr_name)
            return [values[i] for i in ids]
        # A natively batched env is one object shared by all envs.
        value = _shared_attr(self.vec_env, attr_name)
        return [value for _ in ids]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        ids = self._indices(indices)
        envs = self._sub_envs()
        if envs is not None:
            for i in ids:
                envs[i].set_wrapper_attr(attr_name, value)
            return
        if len(ids) != self.num_envs:
            raise ValueError(
                f"set_attr({attr_name!r}): this vector env shares attributes across its envs; "
                f"indices must be None (all {self.num_envs} envs), got {indices!r}"
            )
        if (base := _async_base(self.vec_env)) is not None:
            base.set_attr(attr_name, value)
        else:
            setattr(self.vec_env, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices: VecEnvIndices = None, **method_kwargs) -> list[Any]:
        ids = self._indices(indices)
        envs = self._sub_envs()
        if envs is not None:
            return [envs[i].get_wrapper_attr(method_name)(*method_args, **method_kwargs) for i in ids]
        if len(ids) != self.num_envs:
            raise ValueError(
                f"env_method({method_name!r}): this vector env has no per-env objects; "
                f"indices must be None (all {self.num_envs} envs), got {indices!r}"
            )
        if (base := _async_base(self.vec_env)) is not None:
            return list(base.call(method_name, *method_args, **method_kwargs))
        # Natively batched: one call acts on all envs; every env sees its result.
        result = _shared_attr(self.vec_env, method_name)(*method_args, **method_kwargs)
        return [result for _ in ids]

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        ids = self._indices(indices)
        envs = self._sub_envs()
        if envs is None:  # a natively batched env has no per-env gymnasium wrappers
            return [False for _ in ids]
        from stable_baselines3.common.env_util import is_wrapped

        return [is_wrapped(envs[i], wrapper_class) for i in ids]

    def get_images(self) -> Sequence[np.ndarray | None]:
        frames = self.venv.render()
        return list(frames) if frames is not None else [None] * self.num_envs


def _async_base(vec_env):
    """The AsyncVectorEnv under ``vec_env`` (whose get_attr/set_attr/call reach the workers), else None."""
    from gymnasium.vector import AsyncVectorEnv

    base = vec_env.unwrapped
    return base if isinstance(base, AsyncVectorEnv) else None


def _shared_attr(vec_env, name: str) -> Any:
    """Attribute of a natively batched env: looked up on the outermost wrapper, then the base env."""
    try:
        return getattr(vec_env, name)
    except AttributeError:
        return getattr(vec_env.unwrapped, name)


class ActuatorStatsCallback(BaseCallback):
    """Stable-Baselines3 callback: writes the finished episodes' actuator statistics to the model's logger.

    Every step it collects ``infos[i]["actuator_episode"]`` (the record the actuator-gym envs put into
    the info of an episode's last step: :mod:`actuator_gym.runtime.episode_stats`; through :func:`actuator_gym.adapters.sb3`,
    ``VecMonitor`` and SB3's own ``DummyVecEnv`` alike); at the end of each rollout it records, for
    every ``"Episode_Actuator/<group>/<stat>"``, the mean over the episodes that ended during that
    rollout (``self.logger.record``: TensorBoard, CSV, stdout, whichever the logger writes). A rollout
    in which no episode ended records nothing. ``model.learn(..., callback=ActuatorStatsCallback())``.
    """

    def __init__(self, verbose: int = 0):
        super().__init__(verbose)
        self.values: dict[str, list[float]] = {}
        """``{tag: [one value per finished episode]}`` since the last record."""

    def _on_step(self) -> bool:
        for info in self.locals.get("infos") or ():
            record = info.get(EPISODE_INFO_KEY) if isinstance(info, dict) else None
            if isinstance(record, dict):
                for tag, v in log_values(record).items():
                    self.values.setdefault(tag, []).extend(v.tolist())
        return True

    def _on_rollout_end(self) -> None:
        for tag, v in self.values.items():
            self.logger.record(tag, float(np.mean(v)))
        self.values = {}
