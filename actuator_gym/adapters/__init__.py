"""Adapters from a Gymnasium ``VectorEnv`` (e.g. ``gymnasium.make_vec("actuator_gym/Pendulum-v0")``)
to RL libraries: Stable-Baselines3, rsl_rl and skrl. See docs/adapters.md.

Every library is imported inside its function, so ``import actuator_gym`` never needs them.
All adapters present the env with SAME_STEP autoreset semantics (what these libraries expect):
an env in NEXT_STEP or DISABLED mode is reset right after the step that finished an episode,
through Gymnasium's partial reset ``env.reset(options={"reset_mask": done})``; a SAME_STEP env
is used as is. See :class:`SameStepAutoreset`.

Per-episode actuator statistics (:mod:`actuator_gym.runtime.episode_stats`: ``info["actuator_episode"]``)
reach each library's log as ``"Episode_Actuator/<group>/<stat>"``: rsl_rl's ``extras["log"]``, SB3's
``infos[i]["actuator_episode"]`` plus :class:`ActuatorStatsCallback` (the logger), skrl's
``infos["episode"]`` (tracked by its trainers), Ray RLlib's metrics through :class:`ActuatorMetricsCallback`
(the env runners' ``MetricsLogger``). See docs/adapters.md.
"""

from __future__ import annotations

from ._autoreset import SameStepAutoreset

# ActuatorStatsCallback (public, a Stable-Baselines3 class) and ActuatorMetricsCallback (public, a Ray RLlib
# class) are resolved on first use by __getattr__, and are not in __all__: a star import must need neither library
__all__ = ["SameStepAutoreset", "rsl_rl", "rsl_rl_mirror", "sb3", "skrl"]


def __getattr__(name: str):
    if name == "ActuatorStatsCallback":
        try:
            from ._sb3 import ActuatorStatsCallback
        except ImportError as exc:
            raise ImportError(f"ActuatorStatsCallback needs Stable-Baselines3 (pip install 'actuator-gym[sb3]'): {exc}") from None
        return ActuatorStatsCallback
    if name == "ActuatorMetricsCallback":
        try:
            from ._rllib import ActuatorMetricsCallback
        except ImportError as exc:
            raise ImportError(f"ActuatorMetricsCallback needs Ray RLlib (pip install 'actuator-gym[ray]'): {exc}") from None
        return ActuatorMetricsCallback
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _check_vector_env(vec_env, fn: str) -> None:
    from gymnasium.vector import VectorEnv

    if not isinstance(vec_env, VectorEnv):
        raise ValueError(
            f"{fn}(vec_env): expected a gymnasium.vector.VectorEnv (e.g. gymnasium.make_vec(...)), "
            f"got {type(vec_env).__name__}"
        )


def sb3(vec_env):
    """Stable-Baselines3 ``VecEnv`` over ``vec_env`` (needs ``stable-baselines3``).

    ``step_wait`` returns ``(obs, rewards, dones, infos)``: ``dones = terminated | truncated``;
    for a finished env the returned obs is the first obs of its next episode,
    ``infos[i]["terminal_observation"]`` the last obs of the finished one, ``infos[i]`` otherwise the
    finishing step's info, and the new episode's reset info is in ``reset_infos[i]``;
    ``infos[i]["TimeLimit.truncated"] = truncated and not terminated``. Spaces are the single-env
    spaces. ``seed(s)`` applies at the next ``reset()`` as ``vec_env.reset(seed=s)`` (env ``i`` gets
    ``s + i``). ``get_attr`` / ``set_attr`` / ``env_method`` / ``env_is_wrapped`` act on the
    sub-environments of a ``SyncVectorEnv`` (``AsyncVectorEnv``: all envs only); a natively batched
    env is one object, so every index sees the same attribute / call result and
    ``set_attr`` / ``env_method`` need ``indices=None``. A finished episode's actuator statistics are in
    ``infos[i]["actuator_episode"]`` (``{group: {stat: value}}``); :class:`ActuatorStatsCallback` logs them.
    """
    _check_vector_env(vec_env, "sb3")
    from ._sb3 import SB3VecEnv

    return SB3VecEnv(vec_env)


def rsl_rl(vec_env, *, max_episode_length=None, device=None, clip_actions=True, seed=None, cfg=None):
    """rsl_rl 5.x ``VecEnv`` over ``vec_env`` (needs ``rsl-rl-lib`` and ``tensordict``).

    Resets ``vec_env`` (with ``seed``) on construction: the runner never calls ``reset()``.
    ``get_observations()`` / ``step()`` observations are a ``TensorDict`` with group ``"policy"``
    (a ``Dict`` observation space maps each key to a group and must contain ``"policy"``).
    ``step(actions)`` -> ``(obs, rewards (num_envs,) float32, dones (num_envs,) long, extras)`` with
    ``extras["time_outs"] = truncated & ~terminated`` (bool) and ``extras["log"]`` (the env's
    ``info["log"]`` averaged to scalars, plus, in a step where episodes ended, their actuator
    statistics ``"Episode_Actuator/<group>/<stat>"``: a ``(finished episodes,)`` tensor each, which the
    runner averages over every episode of the iteration). Actions are clipped to the action space when
    ``clip_actions``. ``max_episode_length`` (steps) defaults to the env's ``max_episode_length`` or
    ``spec.max_episode_steps``; ``episode_length_buf`` counts steps since each env's reset (writing it,
    e.g. ``init_at_random_ep_len=True``, does not move the env's own time limit).
    """
    _check_vector_env(vec_env, "rsl_rl")
    from ._rsl_rl import RslRlVecEnv

    return RslRlVecEnv(
        vec_env, max_episode_length=max_episode_length, device=device, clip_actions=clip_actions, seed=seed, cfg=cfg
    )


def rsl_rl_mirror(env, obs=None, actions=None):
    """rsl_rl's symmetry augmentation function for a task that declares its mirror symmetry
    (:mod:`actuator_gym.envs.symmetry`; the quadruped's left-right reflection).

    Name it in the PPO config as rsl_rl's documentation does::

        "algorithm": {"class_name": "PPO", ...,
                      "symmetry_cfg": {"use_data_augmentation": True, "use_mirror_loss": False,
                                       "data_augmentation_func": "actuator_gym.adapters:rsl_rl_mirror"}}

    rsl_rl calls it with ``env`` (the :func:`rsl_rl` adapter), the observations (a ``TensorDict``
    of ``(B, obs_dim)`` groups) and / or the actions ``(B, action_dim)``; it returns both (None where
    not given) with the mirrored rows appended: ``(2B, ...)``, the originals first. A task without a
    mirror (or a user-supplied model) raises ``ValueError``.
    """
    from ._rsl_rl import rsl_rl_mirror as mirror

    return mirror(env, obs, actions)


def skrl(vec_env, *, verbose=False):
    """skrl (torch) env over ``vec_env`` (needs ``skrl``): ``wrap_env(..., wrapper="gymnasium")``
    around a SAME_STEP view of ``vec_env``, so skrl's trainers (which feed ``step``'s observation
    straight into the next action) never see a finished episode's last obs as a new state. In a step
    where episodes ended, ``infos["episode"]["Episode_Actuator/<group>/<stat>"]`` holds their mean actuator
    statistics (scalar tensors: what skrl's trainers track and write to TensorBoard). Any Gymnasium
    vector env, in any autoreset mode; skrl's own ``wrap_env`` on a native task needs the keywords
    ``autoreset_mode=SAME_STEP``, ``skrl_episode_info=True`` and ``wrapper="gymnasium"`` instead
    (docs/adapters.md).
    """
    _check_vector_env(vec_env, "skrl")
    from ._skrl import wrap

    return wrap(vec_env, verbose=verbose)
