"""Gymnasium's vector conventions and the RL libraries' expectations, kept by :class:`BatchedTask`.

One mechanism each, used by the task and its single-env view:

* :func:`episode_limit`: the episode length in control steps: Gymnasium's ``max_episode_steps``
  (``make_vec(id, max_episode_steps=K)``) where given, above or below the task's own
  ``episode_length_s``, else that length.
* :class:`LimitedSpec`: the env's ``spec`` (which ``gymnasium.make`` / ``make_vec`` assign) read
  back with ``max_episode_steps`` set to the limit the env really applies.
* :func:`check_not_ended`: in ``AutoresetMode.DISABLED`` a sub-environment whose episode ended must
  be reset before it is stepped again; stepping it raises ``AssertionError`` as Gymnasium's
  ``SyncVectorEnv`` / ``AsyncVectorEnv`` do, before anything is stepped.
* :class:`SubEnvCalls`: ``call`` / ``get_attr`` / ``set_attr`` answered as ``SyncVectorEnv`` does
  (skrl's trainers ``call("render")`` every step).
* :func:`check_open`: ``reset`` / ``step`` after ``close`` refused.
* :func:`library_conventions`: the keywords an RL library needs, explicit and checked; nothing is
  inferred from who builds, resets or steps the env (docs/adapters.md):

  - ``autoreset_mode=SAME_STEP`` (Gymnasium's keyword): what skrl's vectorized wrapper assumes (it
    feeds the observation of every ``step`` straight into the next action);
    ``skrl_episode_info=True`` (needs SAME_STEP) adds the finished episodes' actuator statistics to
    ``info["episode"]`` as the scalar tensors skrl's trainers track
    (:func:`~actuator_gym.runtime.episode_stats.with_episode_scalars`).
  - ``flat_info=True``: flat ``"actuator/computed_effort"``-style keys (with their ``"_..."`` masks)
    instead of nested dicts, which torchrl's info reader needs
    (:func:`~actuator_gym.envs.task_info.flat_info`); torchrl's ``GymEnv(id, num_envs=N,
    flat_info=True)`` hands the keyword to every sub-env it builds.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from .._checks import check_bool, is_int

__all__ = ["episode_limit", "TaskLength", "random_episode_clocks", "LimitedSpec", "check_not_ended", "check_open", "library_conventions",
           "SubEnvCalls"]

MAX_EPISODE_STEPS = 2**62
"""Largest episode length [control steps]."""


def episode_limit(episode_length_s: float, dt: float, max_episode_steps: Any, owner: str) -> int:
    """Control steps per episode: ``max_episode_steps`` where given (Gymnasium's keyword: the episode
    length, above or below the task's own), else ``round(episode_length_s / dt)`` (at least 1; also
    for None or -1, as ``gymnasium.make`` reads -1: no limit besides the task's)."""
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
    return int(max_episode_steps)


class TaskLength(int):
    """A registered id's ``max_episode_steps`` (:func:`~actuator_gym.envs.task_env.register_task`): the
    task's own default episode length [control steps], which ``gymnasium.make`` applies with its
    ``TimeLimit`` (as for Gymnasium's own MuJoCo envs) and which ``gymnasium.make_vec`` hands back to
    the vector entry point, where it means "the task's own length" (``episode_length_s`` included),
    not a length the user chose."""


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
        if spec is None or obj.max_episode_steps is None or spec.max_episode_steps == obj.max_episode_steps:
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


def check_open(env: Any, what: str) -> None:
    """Refuse ``what()`` (``"reset"``, ``"step"``) on ``env`` (a task) after its ``close()``."""
    if env.closed:
        raise ValueError(f"{type(env).__name__}: {what}() called after close(); make a new env")


def library_conventions(flat_info: Any, skrl_episode_info: Any, mode: AutoresetMode, owner: str) -> tuple[bool, bool]:
    """``(flat_info, skrl_episode_info)`` checked (module doc): bools; ``skrl_episode_info=True``
    needs ``autoreset_mode`` (``mode``) SAME_STEP, the semantics skrl's trainers assume."""
    flat, skrl = check_bool(flat_info, "flat_info", owner), check_bool(skrl_episode_info, "skrl_episode_info", owner)
    if skrl and mode != AutoresetMode.SAME_STEP:
        raise ValueError(
            f"{owner}: skrl_episode_info=True is for skrl's trainers, which feed step()'s observation straight into "
            f"the next action (SAME_STEP semantics); pass autoreset_mode=AutoresetMode.SAME_STEP with it, got "
            f"autoreset_mode={mode.name}"
        )
    return flat, skrl


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

