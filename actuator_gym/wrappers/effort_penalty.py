"""``EffortPenalty``: charge the policy for the effort the actuators actually applied.

Behind an :class:`~actuator_gym.wrappers.ActuatorWrapper` the env's own control cost is computed on
the action, which is now a target (a position, a velocity), not a torque. The recipe is to switch
the env's control cost off and penalize the telemetry instead::

    env = gym.make("Ant-v5", ctrl_cost_weight=0.0)
    env = ActuatorWrapper(env, actuators={...})
    env = EffortPenalty(env, effort_weight=1e-4, energy_weight=0.0)

``reward -= effort_weight * sum(applied_effort**2) + energy_weight * sum(energy)`` per step, from
``info["actuator"]`` (applied effort [N·m or N] of the last substep; energy [J] over the control
step). The terms are reported in ``info["effort_penalty"]``.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np

__all__ = ["EffortPenalty"]


class EffortPenalty(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Subtract ``effort_weight * sum(applied_effort^2) + energy_weight * sum(energy)`` from the reward.

    Args:
        env: an env whose ``step`` info carries ``info["actuator"]`` (an ``ActuatorWrapper`` inside).
        effort_weight: [1 / (N·m)^2] weight of the squared applied effort (>= 0).
        energy_weight: [1 / J] weight of the mechanical energy spent over the control step (>= 0).
    """

    def __init__(self, env: gym.Env, effort_weight: float = 1e-3, energy_weight: float = 0.0):
        gym.utils.RecordConstructorArgs.__init__(self, effort_weight=effort_weight, energy_weight=energy_weight)
        gym.Wrapper.__init__(self, env)
        for name, w in (("effort_weight", effort_weight), ("energy_weight", energy_weight)):
            if isinstance(w, bool) or not isinstance(w, (int, float, np.integer, np.floating)) or not math.isfinite(w) or w < 0:
                raise ValueError(f"EffortPenalty: {name} must be a finite number >= 0, got {w!r}")
        self.effort_weight, self.energy_weight = float(effort_weight), float(energy_weight)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        tel = info.get("actuator")
        if tel is None or "applied_effort" not in tel:
            raise ValueError(
                "EffortPenalty needs info['actuator']['applied_effort'] from the env's step; wrap the env in "
                "ActuatorWrapper first (or use an actuator_gym task)"
            )
        effort = self.effort_weight * float(np.sum(np.square(tel["applied_effort"])))
        energy = self.energy_weight * float(np.sum(tel["energy"]))
        info = dict(info)
        info["effort_penalty"] = {"effort": effort, "energy": energy}
        return obs, float(reward) - effort - energy, terminated, truncated, info
