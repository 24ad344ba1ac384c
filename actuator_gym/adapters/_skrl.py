"""skrl (torch) wrapper over a Gymnasium ``VectorEnv`` (imported only by ``adapters.skrl``)."""

from __future__ import annotations

from skrl.envs.wrappers.torch import wrap_env

from ._autoreset import SameStepAutoreset
from ._skrl_log import SkrlEpisodeInfo


def wrap(vec_env, *, verbose: bool = False):
    # skrl's trainers feed the observation returned by step() straight into the next act() for
    # vectorized envs (observations = next_observations), i.e. they assume SAME_STEP autoreset.
    # The view resets finished envs itself; a native task called through it (not by skrl directly)
    # keeps its own mode. The wrapper is named: nothing is left to skrl's class-name detection.
    return wrap_env(SkrlEpisodeInfo(SameStepAutoreset(vec_env)), wrapper="gymnasium", verbose=verbose)
