"""The bundled tasks (task content on the framework of :mod:`actuator_gym.envs`) and their Gymnasium
ids, registered by ``import actuator_gym``; a task's module, and MuJoCo, is imported only when an
env is made."""

from ..envs.task_env import register_task

register_task("actuator_gym/Pendulum-v0", "actuator_gym.tasks.pendulum:PendulumTask")
register_task("actuator_gym/Quadruped-v0", "actuator_gym.tasks.quadruped:QuadrupedTask")
register_task("actuator_gym/Ant-v0", "actuator_gym.tasks.ant:AntTask")  # Ant-v5 physics/reward, DC motors
register_task(
    "actuator_gym/Quadrotor-v0",
    "actuator_gym.tasks.quadrotor:QuadrotorTask",
    env_cls="actuator_gym.tasks.quadrotor:QuadrotorEnv",  # unwrapped.hover_action
)
