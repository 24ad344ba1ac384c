"""How well a saved quadruped policy walks, measured from the physics: the bundled ``quadruped_walk``
policy's acceptance check (tests and the installed wheel's smoke test run it; so can a user, on a
policy of their own).

:func:`walk_figures` runs the policy deterministically on the ``quadruped_walk`` experiment's task
with one forward command for every env (no standing draws, no resampling to another command) and
returns :func:`~actuator_gym.tools.gait.gait_figures` of the first episode plus the mean forward
speed [m/s] and each foot's airborne fraction of the time.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["walk_figures"]


def walk_figures(policy: Any = "quadruped_walk", vx: float = 0.6, num_envs: int = 16, seconds: float = 10.0,
                 seed: int = 0) -> dict[str, Any]:
    """Gait figures of ``policy`` (a ``SavedPolicy``, a folder or a bundled name) commanded ``vx``
    [m/s] straight ahead on ``num_envs`` envs for ``seconds`` [s] of simulated time (episodes start at
    clock 0). Adds ``vx_mean`` [m/s] (the body-frame forward speed over every env and step after the
    first second) and ``airborne`` (per foot: the fraction of the steps it is off the floor)."""
    import gymnasium as gym

    from .. import configs
    from .gait import GaitRecorder
    from .training import SavedPolicy

    pol = policy if isinstance(policy, SavedPolicy) else SavedPolicy.load(policy)
    exp = configs.load("quadruped_walk")
    kwargs = {**exp.task_kwargs, "random_episode_start": False, "standing_command_prob": 0.0,
              "command_ranges": ((vx, vx), (0.0, 0.0), (0.0, 0.0))}
    if exp.actuators:
        kwargs["actuators"] = exp.actuators
    env = gym.make_vec(exp.task, num_envs=num_envs, **kwargs)
    task = GaitRecorder.legged_task(env)
    rec = GaitRecorder(getattr(task, "foot_names", None))
    obs, _ = env.reset(seed=seed)
    steps = int(round(seconds / task.dt))
    for _ in range(steps):
        obs, _, terminated, _, _ = env.step(pol(obs))
        rec.record(task, terminated)
    env.close()
    fig = rec.figures()
    settle = int(round(1.0 / task.dt))
    fig["vx_mean"] = float(np.stack(rec.rows["vx"])[settle:].mean())
    contact = np.stack(rec.rows["contact"])  # (T, N, F)
    fig["airborne"] = dict(zip(fig["duty_factor"], (1.0 - contact.mean(axis=(0, 1))).tolist()))
    return fig
