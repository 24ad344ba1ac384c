"""The task framework: :class:`BatchedTask` (a native batched Gymnasium ``VectorEnv`` around an
actuator rig), its config :class:`TaskCfg`, its single-env view :class:`TaskEnv` and
:func:`register_task`. The bundled tasks are in :mod:`actuator_gym.tasks`; ``import actuator_gym``
registers their ids (lazily: MuJoCo is imported only when an env is made). ``gymnasium.make(id)``
gives a single env (``TaskEnv``); ``gymnasium.make_vec(id, num_envs=N)`` the native batched
``VectorEnv``.
"""

from .task import BatchedTask, ModelFieldRandomization, TaskCfg
from .task_env import TaskEnv, register_task

__all__ = ["BatchedTask", "TaskCfg", "TaskEnv", "ModelFieldRandomization", "register_task"]
