"""The single-env view of a batched task and the Gymnasium registration of tasks."""

from __future__ import annotations

import importlib
from typing import Any

import gymnasium as gym
from gymnasium.vector import AutoresetMode

from .._checks import check_seed, is_int, real_array
from .task import BatchedTask
from .task_conventions import MAX_EPISODE_STEPS, LimitedSpec, TaskLength, check_open
from .task_info import env_info

__all__ = ["TaskEnv", "make_task_env", "make_task_vec", "register_task"]


class TaskEnv(gym.Env):
    """A single-env ``gymnasium.Env`` over a :class:`BatchedTask` built with ``num_envs=1``.

    ``unwrapped.model`` is the task's compiled ``MjModel`` (the nominal model; per-env randomized
    fields live in ``task.backend.model_field(...)``); ``unwrapped.data`` is an ``MjData`` **copy**
    of world 0, refreshed after every ``reset`` and ``step`` (writes to it do not reach the
    simulation); ``unwrapped.dt`` is the control period [s]. Returns python ``float`` rewards and
    ``bool`` flags. A registered id with a default length (``register_task(..., max_episode_steps=)``,
    every bundled id) truncates as Gymnasium's own MuJoCo envs do: through ``gymnasium.make``'s
    ``TimeLimit`` (its ``max_episode_steps``, that default unless given, above it as below), the env
    itself only at ``episode_length_s`` where that is given; otherwise through the task's own
    truncation after ``max_episode_steps`` steps (also ``spec.max_episode_steps``). No autoreset. Like Gymnasium's single envs (and ``TimeLimit``),
    an env stepped on past its end keeps stepping (``truncated`` stays True) until ``reset``.

    ``info`` has the same keys after ``reset`` and after every ``step`` (Gymnasium's vector envs and
    torchrl stack them): the actuator telemetry (zeros after a reset), ``joint_pos`` / ``joint_vel``,
    the actuator ``parameters`` in force and the drawn ``randomization`` values.
    """

    spec = LimitedSpec()  # Gymnasium's EnvSpec, read back with max_episode_steps = the task's limit

    def __init__(self, task: BatchedTask):
        import mujoco

        if not isinstance(task, BatchedTask) or task.num_envs != 1:
            raise ValueError("TaskEnv: task must be a BatchedTask with num_envs=1")
        self.task = task
        task.past_end_raises = False  # the task is DISABLED inside; a single env may be stepped past its end
        self.model = task.model
        self.data = mujoco.MjData(task.model)
        self.dt = task.dt
        self.observation_space = task.single_observation_space
        self.action_space = task.single_action_space
        self.render_mode = task.render_mode
        self.metadata = {"render_modes": ["rgb_array"], "render_fps": task.metadata["render_fps"]}
        self._sync()

    @property
    def max_episode_steps(self) -> int | None:
        """Control steps after which the env itself truncates (the task's: ``episode_length_s`` /
        ``max_episode_steps``); None where ``gymnasium.make``'s ``TimeLimit`` alone ends episodes."""
        return None if self.task.max_episode_steps >= MAX_EPISODE_STEPS - 1 else self.task.max_episode_steps

    def _sync(self) -> None:
        self.task.backend.data(0, self.data)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        check_open(self.task, "reset")
        check_seed(seed, f"{type(self).__name__}.reset")  # before Gymnasium's own seeding sees it
        super().reset(seed=seed)
        obs, info = self.task.reset(seed=seed, options=options)
        self._sync()
        return obs[0].copy(), env_info(info, 0, ended=False)

    def step(self, action: Any):
        check_open(self.task, "step")
        a = real_array(action, "action", "TaskEnv.step")
        if a.shape != self.action_space.shape:
            raise ValueError(f"TaskEnv.step: action must have shape {self.action_space.shape}, got {a.shape}")
        obs, rew, term, trunc, info = self.task.step(a[None])
        self._sync()
        return obs[0].copy(), float(rew[0]), bool(term[0]), bool(trunc[0]), env_info(info, 0, ended=bool(term[0] or trunc[0]))

    def render(self):
        if self.render_mode != "rgb_array":
            return None
        c = self.task.cfg
        return self.task.backend.render(0, c.render_width, c.render_height, c.render_camera)

    def close(self) -> None:
        self.task.close()


# -- registration ----------------------------------------------------------------------------------
def _load(task_cls: type | str) -> type:
    if isinstance(task_cls, str):
        mod, _, name = task_cls.partition(":")
        task_cls = getattr(importlib.import_module(mod), name)
    if not (isinstance(task_cls, type) and issubclass(task_cls, BatchedTask)):
        raise ValueError(f"task_cls must be a BatchedTask subclass or 'module:Class', got {task_cls!r}")
    return task_cls


def make_task_env(task_cls: type | str, env_cls: type | str | None = None, time_limit: bool = False,
                  **kwargs: Any) -> TaskEnv:
    """Single-env entry point: ``env_cls(task_cls(num_envs=1, autoreset_mode=DISABLED, **kwargs))``
    (``env_cls``: :class:`TaskEnv` or a subclass, or a lazy ``"module:Class"`` string). ``gymnasium.make``
    applies its own ``max_episode_steps`` with ``TimeLimit``; given here, it goes to the task.
    ``time_limit``: the registration has a default length, so ``TimeLimit`` ends episodes and the
    task itself only truncates at an ``episode_length_s`` given here."""
    kwargs.setdefault("autoreset_mode", AutoresetMode.DISABLED)
    if time_limit and "episode_length_s" not in kwargs:
        kwargs.setdefault("max_episode_steps", MAX_EPISODE_STEPS - 1)  # no limit of its own
    if env_cls is None:
        env_cls = TaskEnv
    elif isinstance(env_cls, str):
        mod, _, name = env_cls.partition(":")
        env_cls = getattr(importlib.import_module(mod), name)
    if not (isinstance(env_cls, type) and issubclass(env_cls, TaskEnv)):
        raise ValueError(f"env_cls must be a TaskEnv subclass or 'module:Class', got {env_cls!r}")
    return env_cls(_load(task_cls)(num_envs=1, **kwargs))


def make_task_vec(task_cls: type | str, num_envs: int = 1, **kwargs: Any) -> BatchedTask:
    """Vector entry point: ``task_cls(num_envs=num_envs, **kwargs)``; ``gymnasium.make_vec`` passes its
    ``max_episode_steps`` here: the episode length, above or below ``episode_length_s / dt`` (the
    registration's default, a :class:`TaskLength`, means the task's own length)."""
    if isinstance(kwargs.get("max_episode_steps"), TaskLength):
        del kwargs["max_episode_steps"]
    return _load(task_cls)(num_envs=num_envs, **kwargs)


def register_task(id: str, task_cls: type | str, *, env_cls: type | str | None = None,
                  max_episode_steps: int | None = None, **kwargs: Any) -> None:
    """Register ``id`` for ``gymnasium.make`` (single env: :class:`TaskEnv`, or ``env_cls``) and
    ``gymnasium.make_vec`` (the native batched class). ``task_cls`` / ``env_cls`` are classes or
    lazy ``"module:Class"`` strings; ``kwargs`` are default constructor / ``TaskCfg`` overrides.
    ``max_episode_steps``: the task's default episode length [control steps] (``episode_length_s / dt``
    of its defaults); given, ``gymnasium.make(id, max_episode_steps=K)`` honours ``K`` above it as
    below (Gymnasium's ``TimeLimit`` ends a single env's episodes, docs/tasks.md)."""
    import functools

    if max_episode_steps is not None and not (is_int(max_episode_steps) and max_episode_steps >= 1):
        raise ValueError(f"register_task: max_episode_steps must be an int >= 1 or None, got {max_episode_steps!r}")
    gym.register(
        id=id,
        max_episode_steps=None if max_episode_steps is None else TaskLength(max_episode_steps),
        entry_point=functools.partial(make_task_env, task_cls, env_cls, max_episode_steps is not None),
        vector_entry_point=functools.partial(make_task_vec, task_cls),
        kwargs=dict(kwargs),
        disable_env_checker=False,
    )
