"""Batched actuator-gym tasks and their Gymnasium registrations.

``import actuator_gym`` registers the ids below (lazily: the task modules, and MuJoCo, are imported
only when an env is made). ``gymnasium.make(id)`` gives a single env (``TaskEnv``);
``gymnasium.make_vec(id, num_envs=N)`` the native batched ``VectorEnv``.
"""

from .task import BatchedTask, ModelFieldRandomization, TaskCfg
from .task_env import TaskEnv, register_task

__all__ = ["BatchedTask", "TaskCfg", "TaskEnv", "ModelFieldRandomization", "register_task"]

register_task("actuator_gym/Pendulum-v0", "actuator_gym.envs.pendulum:PendulumTask")
register_task("actuator_gym/Quadruped-v0", "actuator_gym.envs.quadruped:QuadrupedTask")
register_task("actuator_gym/Ant-v0", "actuator_gym.envs.ant:AntTask")  # Ant-v5 physics/reward, DC motors
register_task(
    "actuator_gym/Quadrotor-v0",
    "actuator_gym.envs.quadrotor:QuadrotorTask",
    env_cls="actuator_gym.envs.quadrotor:QuadrotorEnv",  # unwrapped.hover_action
)
