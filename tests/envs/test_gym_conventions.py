"""Gymnasium's vector conventions on the native tasks: ``max_episode_steps``, the DISABLED
past-end error; the RL libraries' settings as explicit keywords (``autoreset_mode``, ``flat_info``,
``skrl_episode_info``), never inferred from the caller."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode, VectorEnv

import actuator_gym  # noqa: F401  (registers the ids)
from actuator_gym.adapters import SameStepAutoreset
from actuator_gym.envs import BatchedTask, register_task
from actuator_gym.tasks.pendulum import PendulumTask

PENDULUM = "actuator_gym/Pendulum-v0"
DT = 1 / 60  # Pendulum's control period [s]


def _trunc_steps(env, steps):
    """Indices (1-based) of the steps at which env 0 was truncated."""
    out = []
    for k in range(1, steps + 1):
        *_, trunc, _ = env.step(np.zeros(env.action_space.shape, np.float32))
        if np.asarray(trunc).reshape(-1)[0]:
            out.append(k)
            if env.metadata.get("autoreset_mode") == AutoresetMode.DISABLED:
                env.reset(options={"reset_mask": np.asarray(trunc).reshape(-1).astype(bool)})
    return out


@pytest.mark.parametrize("mode", list(AutoresetMode))
def test_make_vec_max_episode_steps_is_honoured(mode):
    env = gym.make_vec(PENDULUM, num_envs=2, autoreset_mode=mode, max_episode_steps=3)
    assert env.max_episode_steps == 3 and env.spec.max_episode_steps == 3
    assert env.spec.kwargs["max_episode_steps"] == 3
    env.reset(seed=0)
    # NEXT_STEP spends one step on the reset of each episode
    expected = [3, 7, 11] if mode == AutoresetMode.NEXT_STEP else [3, 6, 9, 12]
    assert _trunc_steps(env, 12) == expected


def test_make_vec_max_episode_steps_is_the_episode_length_above_the_tasks_own_too():
    """Gymnasium's keyword is the episode length, above the task's ``episode_length_s`` as below it."""
    long = gym.make_vec(PENDULUM, num_envs=2, episode_length_s=5 * DT, max_episode_steps=8)
    assert long.max_episode_steps == 8 and long.spec.max_episode_steps == 8
    long.reset(seed=0)
    assert _trunc_steps(long, 8) == [8]  # not at 5
    k = gym.make_vec(PENDULUM, num_envs=1).max_episode_steps + 2  # the registered task's own length and 2 more
    above = gym.make_vec(PENDULUM, num_envs=1, max_episode_steps=k)
    assert above.max_episode_steps == k and above.spec.max_episode_steps == k
    above.reset(seed=0)
    assert _trunc_steps(above, k) == [k]
    plain = gym.make_vec(PENDULUM, num_envs=1, episode_length_s=5 * DT)
    assert plain.max_episode_steps == 5 and plain.spec.max_episode_steps == 5  # the spec tells the truth
    no_limit = gym.make_vec(PENDULUM, num_envs=1, max_episode_steps=-1)  # -1: as gymnasium.make, none
    assert no_limit.max_episode_steps == round(no_limit.cfg.episode_length_s / DT)
    for bad in (0, -2, 2.5, True, "3"):
        with pytest.raises(ValueError, match=r"max_episode_steps must be an int in \[1, 2\*\*62\)"):
            gym.make_vec(PENDULUM, num_envs=1, max_episode_steps=bad)


def test_make_max_episode_steps_single_env():
    env = gym.make(PENDULUM, max_episode_steps=3)  # Gymnasium's TimeLimit
    assert env.spec.max_episode_steps == 3
    env.reset(seed=0)
    assert _trunc_steps(env, 3) == [3]
    short = gym.make(PENDULUM, episode_length_s=2 * DT, max_episode_steps=3)  # the task's own limit is smaller
    short.reset(seed=0)
    assert _trunc_steps(short, 2) == [2] and short.unwrapped.max_episode_steps == 2


@pytest.mark.parametrize("task", ["Pendulum-v0", "Quadruped-v0", "Ant-v0", "Quadrotor-v0"])
def test_make_honours_max_episode_steps_above_the_tasks_default(task):
    """As for Gymnasium's own MuJoCo envs: the registered default is the task's own length, applied by
    TimeLimit; a K given to gymnasium.make replaces it, above it as below (issue 33)."""
    tid = f"actuator_gym/{task}"
    own = gym.make_vec(tid, num_envs=1)
    default = round(own.cfg.episode_length_s / own.dt)
    assert gym.spec(tid).max_episode_steps == default == own.max_episode_steps == own.spec.max_episode_steps
    plain = gym.make(tid)
    assert plain.spec.max_episode_steps == default and plain.unwrapped.max_episode_steps is None
    if task == "Pendulum-v0":  # (a pendulum never terminates: the step count is the truncation's alone)
        long = gym.make(tid, max_episode_steps=default + 5)
        assert long.spec.max_episode_steps == default + 5
        long.reset(seed=0)
        assert _trunc_steps(long, default + 5) == [default + 5]
        endless = gym.make(tid, max_episode_steps=-1)  # -1: no TimeLimit, as gymnasium.make says
        endless.reset(seed=0)
        assert _trunc_steps(endless, default + 5) == []


def test_disabled_step_past_episode_end_raises_and_steps_nothing():
    env = gym.make_vec(PENDULUM, num_envs=3, autoreset_mode=AutoresetMode.DISABLED, max_episode_steps=2)
    env.reset(seed=1)
    a = np.full((3, 1), 0.3, np.float32)
    env.step(a)
    *_, trunc, _ = env.step(a)
    assert trunc.tolist() == [True] * 3
    before = (env.backend.qpos.copy(), env.backend.qvel.copy(), env.episode_step.copy())
    with pytest.raises(AssertionError, match=r"envs \[0, 1, 2\] ended their episode .* nothing was stepped"):
        env.step(a)
    np.testing.assert_array_equal(env.backend.qpos, before[0])
    np.testing.assert_array_equal(env.backend.qvel, before[1])
    np.testing.assert_array_equal(env.episode_step, before[2])
    env.reset(options={"reset_mask": np.array([True, False, True])})
    with pytest.raises(AssertionError, match=r"envs \[1\] ended"):
        env.step(a)
    env.reset(options={"reset_mask": np.array([False, True, False])})
    assert env.step(a)[3].tolist() == [False] * 3
    # the adapters' SAME_STEP view resets ended envs itself: it never steps past an end
    view = SameStepAutoreset(gym.make_vec(PENDULUM, num_envs=2, autoreset_mode="Disabled", max_episode_steps=2))
    view.reset(seed=0)
    dones = [view.step(np.zeros((2, 1), np.float32))[3].tolist() for _ in range(5)]
    assert dones == [[False] * 2, [True] * 2, [False] * 2, [True] * 2, [False] * 2]


def test_single_env_stepped_past_its_end_keeps_stepping_like_gymnasium():
    env = gym.make(PENDULUM, episode_length_s=2 * DT)
    env.reset(seed=0)
    truncs = [env.step(np.zeros(1, np.float32))[3] for _ in range(4)]
    assert truncs == [False, True, True, True]  # as Gymnasium's TimeLimit: truncated stays True
    ref = gym.make("Pendulum-v1", max_episode_steps=2)
    ref.reset(seed=0)
    assert [ref.step(np.zeros(1, np.float32))[3] for _ in range(4)] == truncs


def test_a_user_task_registered_like_the_bundled_ones_is_what_make_vec_builds():
    class MyPendulum(PendulumTask):  # a user task, registered like the bundled ones
        pass

    register_task("test_conventions/MyPendulum-v0", MyPendulum)
    try:
        env = gym.make_vec("test_conventions/MyPendulum-v0", num_envs=2)
        assert type(env) is MyPendulum and isinstance(env, (PendulumTask, BatchedTask, VectorEnv))
        assert MyPendulum.__bases__ == (PendulumTask,)  # the class as written: nothing added to it
        assert MyPendulum.__mro__[:4] == (MyPendulum, PendulumTask, BatchedTask, VectorEnv)
    finally:
        del gym.registry["test_conventions/MyPendulum-v0"]


def test_the_package_never_inspects_its_caller_nor_rewrites_classes():
    """Behaviour is chosen by keywords: no stack inspection, no class base rewriting (issue 32)."""
    package = Path(actuator_gym.__file__).parent
    banned = re.compile(r"_getframe|currentframe|inspect\.stack|\bf_back\b|__bases__\s*=(?!=)|__class__\s*=(?!=)")
    hits = [f"{f.relative_to(package)}:{n}: {line.strip()}" for f in sorted(package.rglob("*.py"))
            for n, line in enumerate(f.read_text().splitlines(), 1) if banned.search(line)]
    assert hits == []


def _pendulum_same_step(**kwargs):
    return gym.make_vec(PENDULUM, num_envs=3, autoreset_mode=AutoresetMode.SAME_STEP, max_episode_steps=2, **kwargs)


def test_skrl_episode_info_adds_the_finished_episodes_mean_statistics_as_scalar_tensors():
    env, plain = _pendulum_same_step(skrl_episode_info=True), _pendulum_same_step()
    a = np.full((3, 1), 0.5, np.float32)
    for e in (env, plain):
        e.reset(seed=4)
    *_, info = env.step(a)
    assert "episode" not in info and "episode" not in plain.step(a)[-1]  # no episode ended yet
    *_, trunc, info = env.step(a)
    *_, plain_info = plain.step(a)
    assert trunc.tolist() == [True] * 3 and "episode" not in plain_info  # the keyword alone adds it
    record = info["final_info"]["actuator_episode"]
    for group, stat in (("pendulum", "energy"), ("all_joints", "peak_abs_effort")):
        value = info["episode"][f"Episode_Actuator/{group}/{stat}"]
        assert isinstance(value, torch.Tensor) and value.shape == ()  # what skrl's trainers track
        assert value.item() == pytest.approx(record[group][stat].mean()) and value.item() > 0


def test_library_keywords_are_checked_before_anything_is_built():
    for mode in (AutoresetMode.NEXT_STEP, AutoresetMode.DISABLED):
        with pytest.raises(ValueError, match=r"skrl_episode_info=True .* autoreset_mode=AutoresetMode.SAME_STEP .* "
                                             f"got autoreset_mode={mode.name}"):
            gym.make_vec(PENDULUM, num_envs=2, autoreset_mode=mode, skrl_episode_info=True)
    with pytest.raises(ValueError, match="skrl_episode_info=True"):
        gym.make(PENDULUM, skrl_episode_info=True)  # a single env: no vector autoreset
    for key in ("flat_info", "skrl_episode_info"):
        with pytest.raises(TypeError, match=f"{key} must be True or False, got int 1"):
            _pendulum_same_step(**{key: 1})


def test_what_a_library_does_with_the_env_changes_nothing_in_it():
    """Formerly the task read its caller's frame: reset by skrl's wrapper it switched to SAME_STEP,
    reset by torchrl it made its info flat. Now each stays what its keywords say."""
    from skrl.envs.wrappers.torch import wrap_env
    from torchrl.envs import GymWrapper

    venv = gym.make_vec(PENDULUM, num_envs=2, max_episode_steps=2)
    skrl_env = wrap_env(venv, wrapper="gymnasium", verbose=False)
    skrl_env.reset()
    for _ in range(3):
        *_, info = skrl_env.step(torch.zeros(2, 1))
    assert venv.autoreset_mode == AutoresetMode.NEXT_STEP and venv.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert "episode" not in info and "final_obs" not in info

    nested = gym.make_vec(PENDULUM, num_envs=2, autoreset_mode=AutoresetMode.DISABLED)  # torchrl reads no info
    GymWrapper(nested).reset()
    assert not nested.flat_info and "applied_effort" in nested.step(np.zeros((2, 1), np.float32))[-1]["actuator"]
    # sub-envs built by Gymnasium's AsyncVectorEnv in a process where torchrl is loaded: nested too
    workers = gym.vector.AsyncVectorEnv([functools.partial(gym.make, PENDULUM)] * 2, context="fork")
    try:
        assert "applied_effort" in workers.reset(seed=0)[1]["actuator"]
    finally:
        workers.close()


def test_call_get_attr_set_attr_as_sync_vector_env():
    """skrl's trainers call env.call("render") every step; Gymnasium's SyncVectorEnv answers one result
    per sub-env. The batch is one object: other names give its one attribute to every env."""
    task = gym.make_vec("actuator_gym/Pendulum-v0", num_envs=3)
    assert task.call("render") == (None, None, None)  # no render_mode
    assert task.get_attr("dt") == (task.unwrapped.dt,) * 3
    params = task.call("actuator_parameters")
    assert len(params) == 3 and params[0] is params[2]
    task.set_attr("render_env_ids", [(1,), (1,), (1,)])
    assert task.unwrapped.render_env_ids == (1,)
    with pytest.raises(ValueError, match="one object"):
        task.set_attr("render_env_ids", [(0,), (1,), (2,)])
    assert task.unwrapped.render_env_ids == (1,)  # nothing changed
    shown = gym.make_vec("actuator_gym/Pendulum-v0", num_envs=2, render_mode="rgb_array", render_width=32, render_height=24)
    frames = shown.call("render")
    assert len(frames) == 2 and all(f.shape == (24, 32, 3) for f in frames)


@pytest.mark.parametrize("make", [functools.partial(gym.make_vec, PENDULUM, num_envs=2), functools.partial(gym.make, PENDULUM)])
def test_deepcopy_is_refused_saying_how_to_get_an_independent_env(make):
    import copy

    env = make(episode_length_s=0.5)
    env.reset(seed=3)
    with pytest.raises(TypeError, match=r"cannot be deep-copied.*MuJoCo batch.*gymnasium.make_vec\(env.spec, "
                                        r"num_envs=env.num_envs\).*gymnasium.make\(env.spec\)"):
        copy.deepcopy(env)
    # what the message says gives an independent env: same spec (the user's keywords), same seed, same rollout
    other = gym.make_vec(env.spec, num_envs=env.num_envs) if isinstance(env, VectorEnv) else gym.make(env.spec)
    assert other.unwrapped.max_episode_steps == env.unwrapped.max_episode_steps == 30
    a, b = env.reset(seed=5)[0], other.reset(seed=5)[0]
    np.testing.assert_array_equal(a, b)
    act = np.full(env.action_space.shape, 0.5, np.float32)
    np.testing.assert_array_equal(env.step(act)[0], other.step(act)[0])
    env.close(), other.close()
