"""skrl (torch) wrapper over a Gymnasium ``VectorEnv`` (imported only by ``adapters.skrl``)."""

from __future__ import annotations

from skrl.envs.wrappers.torch import wrap_env

from ._autoreset import SameStepAutoreset
from ._skrl_log import SkrlEpisodeInfo


def wrap(vec_env, *, verbose: bool = False):
    # skrl's trainers feed the observation returned by step() straight into the next act() for
    # vectorized envs (observations = next_observations), i.e. they assume SAME_STEP autoreset.
    # The view resets finished envs itself, in whatever mode the env runs. The wrapper is named:
    # skrl's "auto" detection looks only at the env class's direct bases.
    return wrap_env(SkrlEpisodeInfo(SameStepAutoreset(vec_env)), wrapper="gymnasium", verbose=verbose)
