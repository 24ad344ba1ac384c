"""Gymnasium's vector conventions and the RL libraries' expectations, kept by :class:`BatchedTask`.

Split from :mod:`actuator_gym.envs.task` (one mechanism each, used by the task and its single-env
view):

* :func:`episode_limit`: the episode length in control steps, from ``episode_length_s`` and
  Gymnasium's ``max_episode_steps`` (``make_vec(id, max_episode_steps=K)``): the smaller wins.
* :class:`LimitedSpec`: the env's ``spec`` (which ``gymnasium.make`` / ``make_vec`` assign) read
  back with ``max_episode_steps`` set to the limit the env really applies.
* :func:`check_not_ended`: in ``AutoresetMode.DISABLED`` a sub-environment whose episode ended must
  be reset before it is stepped again; stepping it raises ``AssertionError`` as Gymnasium's
  ``SyncVectorEnv`` / ``AsyncVectorEnv`` do, before anything is stepped.
* :func:`list_vector_env_base`: every task class lists ``gymnasium.vector.VectorEnv`` among its
  direct bases, so libraries that detect Gymnasium envs by their class's direct bases (skrl's
  ``wrap_env``) find it; the MRO is unchanged.
* :func:`built_for_torchrl_workers`: a single env built by Gymnasium's ``AsyncVectorEnv`` in a
  process where torchrl is loaded is one of torchrl's ``GymEnv(id, num_envs=N)`` sub-envs (torchrl
  builds its own ``AsyncVectorEnv``, in spawned workers that re-import the user's script): its info
  is made flat (``flat_info=True``, logged), as torchrl's reader needs.
* :class:`SubEnvCalls`: ``call`` / ``get_attr`` / ``set_attr`` answered as ``SyncVectorEnv`` does
  (skrl's trainers ``call("render")`` every step).
* :func:`adopt_caller_conventions`: what the library resetting the task expects, detected from the
  caller of ``reset`` (logged once per env):

  - skrl's Gymnasium wrapper resets a vector env once and then feeds the observation of every
    ``step`` straight into the next action (SAME_STEP semantics): the task switches itself to
    ``AutoresetMode.SAME_STEP``, and adds the finished episodes' actuator statistics to
    ``info["episode"]`` as the scalar tensors skrl's trainers track
    (:func:`~actuator_gym.episode_stats.with_episode_scalars`).
  - torchrl's ``GymWrapper`` reads a vector env's info with a reader that takes only flat entries
    (a nested dict becomes a leaf spec and its check fails): the task's info becomes flat, one
    ``"actuator/computed_effort"``-style key (with its ``"_..."`` mask) per nested entry
    (:func:`~actuator_gym.envs.task_info.flat_info`).
"""

from __future__ import annotations

import dataclasses
import logging
import sys
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

from .._checks import is_int

__all__ = ["episode_limit", "random_episode_clocks", "LimitedSpec", "check_not_ended", "list_vector_env_base", "adopt_caller_conventions",
           "SubEnvCalls", "built_for_torchrl_workers"]

MAX_EPISODE_STEPS = 2**62
"""Largest episode length [control steps]."""

SKRL_GYMNASIUM_WRAPPERS = ("skrl.envs.wrappers.torch.gymnasium_envs", "skrl.envs.wrappers.jax.gymnasium_envs")
"""Modules of skrl's Gymnasium wrappers (torch and jax): a reset called from them switches a task to SAME_STEP."""
GYMNASIUM_ASYNC = "gymnasium.vector.async_vector_env"
"""Module of Gymnasium's ``AsyncVectorEnv`` (its dummy env and its workers build the sub-envs there)."""
TORCHRL_GYM_LIKE = "torchrl.envs.gym_like"
"""Module of torchrl's ``GymLikeEnv`` (``GymWrapper`` / ``GymEnv``): a reset called from it makes a task's info flat."""

logger = logging.getLogger(__name__)


def episode_limit(episode_length_s: float, dt: float, max_episode_steps: Any, owner: str) -> int:
    """Control steps per episode: ``round(episode_length_s / dt)`` (at least 1), or
    ``max_episode_steps`` where that is smaller (Gymnasium's keyword: a maximum; None or -1: none,
    as ``gymnasium.make`` reads -1)."""
    steps = episode_length_s / dt
    if not steps < MAX_EPISODE_STEPS:
        raise ValueError(
            f"{owner}: episode_length_s={episode_length_s} s is {steps:g} control steps of {dt} s; "
            f"allowed: a finite length below 2**62 steps"
        )
    limit = max(1, int(round(steps)))
    if max_episode_steps is None or (is_int(max_episode_steps) and int(max_episode_steps) == -1):
        return limit
    if not is_int(max_episode_steps) or not 1 <= int(max_episode_steps) < MAX_EPISODE_STEPS:
        raise ValueError(
            f"{owner}: max_episode_steps must be an int in [1, 2**62) (or None / -1: no limit besides "
            f"episode_length_s), got {max_episode_steps!r}"
        )
    return min(limit, int(max_episode_steps))


def random_episode_clocks(streams: Any, ids: Any, limit: int) -> Any:
    """``TaskCfg.random_episode_start``: episode clocks [control steps] for the envs ``ids``, uniform
    in ``[0, limit)``, one draw from each env's own stream (``streams``, the task's ``EnvStreams``)."""
    u = streams.for_envs(ids).uniform(0.0, 1.0, size=len(ids))
    return np.minimum((u * limit).astype(np.int64), int(limit) - 1)


class LimitedSpec:
    """Descriptor for ``spec``: stores what Gymnasium assigns; reads it back (an ``EnvSpec`` or
    None) with ``max_episode_steps`` = the owner's ``max_episode_steps``."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.key = "_" + name

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if obj is None:
            return None
        spec = obj.__dict__.get(self.key)
        if spec is None or spec.max_episode_steps == obj.max_episode_steps:
            return spec
        return dataclasses.replace(spec, max_episode_steps=int(obj.max_episode_steps))

    def __set__(self, obj: Any, spec: Any) -> None:
        obj.__dict__[self.key] = spec


def check_not_ended(ended: np.ndarray, owner: str) -> None:
    """DISABLED autoreset: refuse to step while envs whose episode ended (``ended``, (num_envs,)
    bool) are not reset -- ``AssertionError``, as Gymnasium's vector envs assert."""
    if ended.any():
        ids = np.flatnonzero(ended).tolist()
        raise AssertionError(
            f"{owner}: envs {ids} ended their episode (terminated or truncated) and were not reset; with "
            "autoreset_mode=DISABLED reset them first with reset(options={'reset_mask': mask}) "
            f"(Gymnasium's SyncVectorEnv asserts the same: self._autoreset_envs={ended!r}); nothing was stepped"
        )


def list_vector_env_base(cls: type) -> None:
    """Put ``gymnasium.vector.VectorEnv`` among ``cls``'s direct bases (last), where it is not;
    ``cls`` already derives from it, so the MRO and ``isinstance`` stay what they were."""
    if VectorEnv not in cls.__bases__:
        cls.__bases__ = (*cls.__bases__, VectorEnv)


def adopt_caller_conventions(task: Any) -> None:
    """Adapt ``task`` to the library whose code called its ``reset`` (the first frame up that is not
    a method of ``task``, so overrides calling ``super().reset`` count too): skrl's Gymnasium
    wrapper -> SAME_STEP; torchrl's ``GymLikeEnv`` -> flat info. Only a direct call counts: a
    Gymnasium vector wrapper between them (or actuator-gym's ``SameStepAutoreset``) keeps its own
    view of the env. Each switch happens (and is logged) once."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_locals.get("self") is task:
        frame = frame.f_back
    caller = frame.f_globals.get("__name__") if frame is not None else None
    if caller in SKRL_GYMNASIUM_WRAPPERS:
        task.skrl_episode_info = True  # the episode statistics as skrl's trainers track them
    if caller in SKRL_GYMNASIUM_WRAPPERS and task.autoreset_mode != AutoresetMode.SAME_STEP:
        logger.warning(
            "%s: reset by skrl's GymnasiumWrapper, which feeds step()'s observation straight into the next "
            "action; switching autoreset_mode %s -> SAME_STEP (finished episodes' last observations are in "
            "info['final_obs'])", type(task).__name__, task.autoreset_mode.name,
        )
        task.autoreset_mode = AutoresetMode.SAME_STEP
        task.metadata["autoreset_mode"] = AutoresetMode.SAME_STEP
    elif caller == TORCHRL_GYM_LIKE and not task.flat_info:
        logger.warning(
            "%s: reset by torchrl, whose info reader takes flat entries only; info is now flat "
            "('actuator/computed_effort', ...)", type(task).__name__,
        )
        task.flat_info = True


class SubEnvCalls:
    """Gymnasium's per-sub-env access of a natively batched env (mixed into ``BatchedTask``)."""

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Gymnasium's ``VectorEnv.call`` (as ``SyncVectorEnv``'s): one result per sub-env.
        ``"render"``: each env's frame (None without ``render_mode="rgb_array"``). Any other name: the
        batch is one object, so its attribute ``name`` (called with the arguments if callable) is
        every env's result. skrl's trainers call ``call("render")`` every step."""
        if name == "render":
            c = self.cfg
            if self.render_mode != "rgb_array":
                return (None,) * self.num_envs
            return tuple(self.backend.render(i, c.render_width, c.render_height) for i in range(self.num_envs))
        value = getattr(self, name)
        result = value(*args, **kwargs) if callable(value) else value
        return (result,) * self.num_envs

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """``call(name)``, as ``SyncVectorEnv.get_attr``."""
        return self.call(name)

    def set_attr(self, name: str, values: Any) -> None:
        """Set attribute ``name`` of the batch (one object): ``values`` one value, or a list / tuple of
        ``num_envs`` equal values (``SyncVectorEnv``'s form); different values per env are refused."""
        if isinstance(values, (list, tuple)):
            if len(values) != self.num_envs or any(v is not values[0] and v != values[0] for v in values):
                raise ValueError(
                    f"{type(self).__name__}.set_attr({name!r}): a natively batched env is one object; give one "
                    f"value or {self.num_envs} equal ones, got {len(values)} values"
                )
            values = values[0]
        setattr(self, name, values)


def built_for_torchrl_workers() -> bool:
    """Whether the env being built is a sub-env of Gymnasium's ``AsyncVectorEnv`` (a frame of its
    module up the stack: its dummy env or a worker) in a process where torchrl is loaded: torchrl's
    ``GymEnv(id, num_envs=N)`` (module doc). Then ``make_task_env`` gives the env flat info unless
    the user set ``flat_info`` (``flat_info=False`` keeps the nested format in such a process)."""
    if "torchrl" not in sys.modules:
        return False
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__") == GYMNASIUM_ASYNC:
            return True
        frame = frame.f_back
    return False
