"""The env of a Ray RLlib env runner: one native batched env of N worlds, seeded by runner index.

RLlib builds an env runner's env with ``gymnasium.make_vec(..., vectorization_mode=
VECTOR_ENTRY_POINT)`` from the creator registered in Ray's env registry (``register_env(RUNNER_ENV_ID,
make_runner_env)``, ``config.environment(env=RUNNER_ENV_ID)``): :func:`make_runner_env` is a
module-level callable, so every env runner process imports
``actuator_gym`` (which registers the tasks) by unpickling it -- a bare ``"actuator_gym/..."`` id
fails there with ``NamespaceNotFound`` unless something else in the config imports ``actuator_gym``
(RLlib then reports ``IndexError: list index out of range``; docs/adapters.md). One env runner then steps its N worlds in one batched
backend (``make_vec`` of our tasks: the native :class:`~actuator_gym.envs.BatchedTask`; other
Gymnasium MuJoCo ids: a ``SyncVectorEnv`` of :class:`~actuator_gym.wrappers.ActuatorWrapper` envs).

Seeds: RLlib resets env runner ``k`` (1-based ``worker_index``) with ``seed + k``, so neighbouring
runners of N > 1 worlds would share N - 1 world seeds. :class:`RunnerWorlds` replaces that seed by
the runner's block (:func:`~actuator_gym.tools.distributed.block_seed`, process index ``k - 1``):
world ``i`` of runner ``k`` is seeded ``seed + (k - 1) * N + i``, so the K runners together roll out
the worlds of one ``make_vec(task, num_envs=K*N).reset(seed=seed)``, actuator randomization included
(the task draws it from the same per-env seeds). This module needs no Ray.
"""

from __future__ import annotations

import time
from typing import Any, Mapping

import gymnasium as gym

from .distributed import block_seed

__all__ = ["RunnerWorlds", "make_runner_env", "assign_runner_worlds", "runner_env_config", "find_runner_worlds", "RUNNER_ENV_ID"]

RUNNER_ENV_ID = "actuator_gym_runner_env"
"""The name :func:`make_runner_env` is registered under in Ray's env registry (``ray.tune.register_env``)."""


class RunnerWorlds(gym.vector.VectorWrapper):
    """A vector env whose seeded resets use its runner's world block.

    The first ``reset`` always seeds with :attr:`base_seed` (env ``i``: ``base_seed + i``); a later
    ``reset(seed=...)`` (RLlib passes ``seed + worker_index``) re-seeds with :attr:`base_seed` too; a
    ``reset()`` without a seed continues the streams, as Gymnasium's envs do."""

    def __init__(self, env: gym.vector.VectorEnv, base_seed: int, runner_index: int, *, run_seed: int | None = None):
        super().__init__(env)
        self.base_seed = int(base_seed)
        self.runner_index = int(runner_index)
        self.run_seed = int(base_seed if run_seed is None else run_seed)
        """The run's seed: :meth:`assign` derives the block from it."""
        self._seeded = False
        self.env_steps = 0
        """Env steps taken (summed over the worlds)."""
        self.step_seconds = 0.0
        """Wall time [s] spent in ``step`` (the batched physics and actuators, not the policy)."""

    def assign(self, runner_index: int) -> None:
        """Make this the env of process ``runner_index``: :attr:`base_seed` = ``block_seed(run_seed,
        runner_index, num_envs)``; the next reset seeds with it."""
        self.base_seed = block_seed(self.run_seed, runner_index, self.num_envs)
        self.runner_index = int(runner_index)
        self._seeded = False

    @property
    def world_seeds(self) -> list[int]:
        """The seed of each of this runner's worlds, in env order."""
        return [self.base_seed + i for i in range(self.num_envs)]

    def step(self, actions: Any):
        t = time.perf_counter()
        out = self.env.step(actions)
        self.step_seconds += time.perf_counter() - t
        self.env_steps += self.num_envs
        return out

    def reset(self, *, seed: Any = None, options: dict[str, Any] | None = None):
        if seed is not None or not self._seeded:
            seed, self._seeded = self.base_seed, True
        return self.env.reset(seed=seed, options=options)


def runner_env_config(task: str, seed: int, envs_per_runner: int, actuators: Mapping[str, Any] | None = None,
                      task_kwargs: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``env_config`` RLlib hands :func:`make_runner_env` (with ``worker_index`` / ``num_envs``)."""
    return {"task": task, "seed": int(seed), "envs_per_runner": int(envs_per_runner),
            "actuators": None if actuators is None else dict(actuators), "task_kwargs": dict(task_kwargs or {})}


def make_runner_env(ctx: Mapping[str, Any]) -> gym.vector.VectorEnv:
    """RLlib's env creator: ``ctx`` is :func:`runner_env_config`'s dict plus ``num_envs`` (RLlib's
    ``num_envs_per_env_runner``). Returns a :class:`RunnerWorlds` of runner index 0; RLlib hands the
    creator a plain dict (no ``worker_index``), so :func:`assign_runner_worlds`, RLlib's
    ``on_environment_created`` callback, moves it to its env runner's block before the first reset."""
    from .training import make_vec_env

    if "num_envs" not in ctx:
        raise ValueError("make_runner_env: RLlib must build the env runners' envs with "
                         "gym_env_vectorize_mode=VECTOR_ENTRY_POINT (the creator got no num_envs)")
    n = int(ctx["num_envs"])
    vec = make_vec_env(ctx["task"], n, ctx.get("actuators"), **dict(ctx.get("task_kwargs") or {}))
    return RunnerWorlds(vec, block_seed(int(ctx["seed"]), 0, n), 0, run_seed=int(ctx["seed"]))


def assign_runner_worlds(*, env_runner: Any, **kwargs: Any) -> None:
    """RLlib's ``on_environment_created`` callback (``config.callbacks(on_environment_created=...)``):
    gives the env runner's :class:`RunnerWorlds` its block, process index ``worker_index - 1`` (remote
    env runners are numbered from 1; the driver's, 0, gets block 0)."""
    find_runner_worlds(env_runner.env).assign(max(int(env_runner.worker_index or 0) - 1, 0))  # its env: unwrapped


def find_runner_worlds(env: Any) -> RunnerWorlds:
    """The :class:`RunnerWorlds` inside an env runner's (wrapped) env."""
    e = env
    while e is not None:
        if isinstance(e, RunnerWorlds):
            return e
        e = getattr(e, "env", None)
    raise ValueError(f"no RunnerWorlds inside {type(env).__name__}: was the env built by make_runner_env?")
