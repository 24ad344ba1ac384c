"""The finished episodes' actuator statistics in the form skrl's trainers track (used by ``adapters.skrl``).

skrl's trainers track every entry of ``infos["episode"]`` that is a one-element torch tensor
(``agent.track_data(tag, value)``, averaged over the write interval and written to TensorBoard); a
Gymnasium vector info holds ``(num_envs,)`` numpy arrays instead. :class:`SkrlEpisodeInfo` adds, in a
step where episodes ended, the mean of each ``"Episode_Actuator/<group>/<stat>"`` over those episodes
to ``infos["episode"]`` as a scalar tensor (the record itself stays in ``info["final_info"]``).
"""

from __future__ import annotations

from gymnasium.vector import VectorWrapper

from ..runtime.episode_stats import with_episode_scalars
from ._autoreset import ForwardCalls


class SkrlEpisodeInfo(ForwardCalls, VectorWrapper):
    """``infos["episode"][tag]``: scalar tensors of the mean actuator statistics of the episodes that
    ended in this step (module doc); everything else passes through."""

    def step(self, actions):
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        return obs, rewards, terminated, truncated, with_episode_scalars(info)
