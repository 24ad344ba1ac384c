"""The bundled tasks (task content on the framework of :mod:`actuator_gym.envs`) and their Gymnasium
ids, registered by ``import actuator_gym``; a task's module, and MuJoCo, is imported only when an
env is made. ``max_episode_steps``: each task's default episode length in control steps
(``episode_length_s / dt``; tests/envs/test_gym_conventions.py checks it), which a single env's
``TimeLimit`` applies unless ``gymnasium.make(id, max_episode_steps=K)`` says otherwise."""

from ..envs.task_env import register_task

register_task("actuator_gym/Pendulum-v0", "actuator_gym.tasks.pendulum:PendulumTask", max_episode_steps=300)
register_task("actuator_gym/Quadruped-v0", "actuator_gym.tasks.quadruped:QuadrupedTask", max_episode_steps=1000)
register_task("actuator_gym/Ant-v0", "actuator_gym.tasks.ant:AntTask", max_episode_steps=1000)  # Ant-v5 physics/reward, DC motors
register_task(
    "actuator_gym/Quadrotor-v0",
    "actuator_gym.tasks.quadrotor:QuadrotorTask",
    env_cls="actuator_gym.tasks.quadrotor:QuadrotorEnv",  # unwrapped.hover_action
    max_episode_steps=1000,
)
