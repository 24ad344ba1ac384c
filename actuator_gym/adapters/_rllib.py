"""Ray RLlib (new API stack): the actuator episode statistics in RLlib's metrics (needs ``ray[rllib]``)."""

from __future__ import annotations

from typing import Any

from ray.rllib.callbacks.callbacks import RLlibCallback

from ..runtime.episode_stats import EPISODE_INFO_KEY, log_values

__all__ = ["ActuatorMetricsCallback"]


class ActuatorMetricsCallback(RLlibCallback):
    """RLlib callback: at each episode's end, logs its actuator statistics (the record the env put
    into the info of the episode's last step, ``info["actuator_episode"]``: :mod:`actuator_gym.runtime.episode_stats`)
    to the env runner's ``MetricsLogger`` under ``"Episode_Actuator/<group>/<stat>"``, averaged over the
    episodes of an iteration (``reduce="mean"``). They reach the result of ``Algorithm.train()`` as
    ``result["env_runners"]["Episode_Actuator/<group>/<stat>"]``, beside RLlib's ``episode_return_mean``.
    ``config.callbacks(ActuatorMetricsCallback)``."""

    def on_episode_end(self, *, episode: Any, metrics_logger: Any = None, **kwargs: Any) -> None:
        if metrics_logger is None:
            return
        info = episode.get_infos(-1)
        record = info.get(EPISODE_INFO_KEY) if isinstance(info, dict) else None
        if not isinstance(record, dict):
            return
        for tag, v in log_values(record).items():
            for x in v.tolist():
                metrics_logger.log_value(tag, float(x), reduce="mean", window=None)
