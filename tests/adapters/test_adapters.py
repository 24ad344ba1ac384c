"""Adapters to RL libraries (actuator_gym.adapters): contracts, autoreset semantics, short training runs.

The autoreset checks use a tiny counter env whose observation [t, episode, u] makes the expected
values exact: env 0 terminates after 2 steps, env 1 is truncated (TimeLimit) after 3, env 2 is both
terminated and truncated after 4; reward = t + action; u is drawn from the env's seeded RNG at reset.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from conftest import skrl_ppo_models
import torch
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from actuator_gym.adapters import SameStepAutoreset, rsl_rl, sb3, skrl
from actuator_gym.adapters._autoreset import env_info

MODES = [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP]
LENGTHS = (2, 3, 4)  # episode length per env
TERMINATES = (True, False, True)  # env 1 only truncates; env 2 terminates and truncates together
TRUNCATES = (False, True, True)
ACTION = 0.5
N_STEPS = 13


class CounterEnv(gym.Env):
    metadata = {"render_modes": []}

    def __init__(self, term_at: int | None, torchrl_info: bool = False):
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (3,), np.float32)
        self.action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
        self.term_at = term_at
        self.torchrl_info = torchrl_info  # torchrl's info reader wants the same keys at reset and step
        self.ep = -1

    def scaled(self, k, *, offset=0):
        return (self.term_at or 0) * k + offset

    def _obs(self):
        return np.array([self.t, self.ep, self.u], dtype=np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.ep += 1
        self.t = 0
        self.u = float(self.np_random.uniform())
        return self._obs(), ({"t": 0} if self.torchrl_info else {"ep": self.ep, "u": self.u})

    def step(self, action):
        self.t += 1
        terminated = self.term_at is not None and self.t >= self.term_at
        return self._obs(), float(self.t + float(action[0])), terminated, False, {"t": self.t}


def counter_vec(mode, **kwargs) -> SyncVectorEnv:
    fns = []
    for length, term in zip(LENGTHS, TERMINATES):
        limit = length if TRUNCATES[len(fns)] else 10 * length
        fns.append(lambda term=term, length=length, limit=limit: gym.wrappers.TimeLimit(
            CounterEnv(length if term else None, **kwargs), max_episode_steps=limit))
    return SyncVectorEnv(fns, autoreset_mode=mode)


def expected_trajectory(n_steps=N_STEPS):
    """Per step: reward, terminated, truncated, done, t and episode after autoreset, (t, episode)
    of the finished episode's last observation (None for running envs), t before autoreset."""
    n = len(LENGTHS)
    t, ep = np.zeros(n, int), np.zeros(n, int)
    out = []
    for _ in range(n_steps):
        t += 1
        reward = t + ACTION
        done = t == np.array(LENGTHS)
        term = done & np.array(TERMINATES)
        trunc = done & np.array(TRUNCATES)
        final = [(int(t[i]), int(ep[i])) if done[i] else None for i in range(n)]
        final_t = t.copy()
        t[done] = 0
        ep[done] += 1
        out.append(dict(reward=reward.astype(np.float32), term=term, trunc=trunc, done=done,
                        t=t.copy(), ep=ep.copy(), final=final, final_t=final_t))
    return out


def actions(n=len(LENGTHS)):
    return np.full((n, 1), ACTION, dtype=np.float32)


def seeded_u(seed: int) -> float:
    return float(gym.utils.seeding.np_random(seed)[0].uniform())


# --------------------------------------------------------------------------------------------
# SameStepAutoreset: the shared NEXT_STEP/DISABLED -> SAME_STEP conversion
# --------------------------------------------------------------------------------------------
def _pendulum_vec(mode, n=3):
    return SyncVectorEnv(
        [lambda i=i: gym.make("Pendulum-v1", max_episode_steps=3 + i) for i in range(n)], autoreset_mode=mode
    )


def _assert_same(a, b, path=""):
    if isinstance(a, dict):
        assert isinstance(b, dict) and sorted(a) == sorted(b), f"keys differ at {path!r}: {a} vs {b}"
        for key in a:
            _assert_same(a[key], b[key], f"{path}/{key}")
    else:
        np.testing.assert_array_equal(a, b, err_msg=path)


def _assert_subset(a, b, path=""):
    """Every entry of ``a`` is in ``b`` with the same value."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) <= set(b), f"keys missing at {path!r}: {sorted(a)} vs {sorted(b)}"
        for key in a:
            _assert_subset(a[key], b[key], f"{path}/{key}")
    else:
        np.testing.assert_array_equal(a, b, err_msg=path)


def _assert_info_equal(a: dict, b: dict, n: int, done_info_subset: bool = False):
    """Same per-env infos (what the ``_key`` masks expose), final_obs / final_info included.
    ``done_info_subset``: for finished envs, ``b``'s main info need only contain ``a``'s."""
    done = np.asarray(a.get("_final_obs", np.zeros(n, bool)))
    for i in range(n):
        ai, bi = env_info(a, i, skip=("final_obs",)), env_info(b, i, skip=("final_obs",))
        if done_info_subset and done[i]:
            _assert_same(ai.pop("final_info"), bi.pop("final_info"), f"env {i}/final_info")
            _assert_subset(bi, ai, f"env {i}")
        else:
            _assert_same(ai, bi, f"env {i}")
    if "final_obs" in a or "final_obs" in b:
        np.testing.assert_array_equal(a["_final_obs"], b["_final_obs"])
        for i in np.flatnonzero(a["_final_obs"]):
            np.testing.assert_array_equal(a["final_obs"][i], b["final_obs"][i])


@pytest.mark.parametrize("source", [AutoresetMode.NEXT_STEP, AutoresetMode.DISABLED])
@pytest.mark.parametrize("make", [counter_vec, _pendulum_vec])
def test_same_step_view_equals_native_same_step(source, make):
    """Converted NEXT_STEP/DISABLED envs give exactly what the env gives natively in SAME_STEP mode:
    observations, rewards, flags, final_obs, final_info and the reset infos of finished envs."""
    native, view = make(AutoresetMode.SAME_STEP), SameStepAutoreset(make(source))
    assert view.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP and view.source_mode == source
    o1, i1 = native.reset(seed=11)
    o2, i2 = view.reset(seed=11)
    np.testing.assert_array_equal(o1, o2)
    _assert_info_equal(i1, i2, native.num_envs)
    rng = np.random.default_rng(0)
    n_final = 0
    for _ in range(N_STEPS):
        act = rng.uniform(-1, 1, (native.num_envs, 1)).astype(np.float32)
        r1, r2 = native.step(act), view.step(act)
        for x, y in zip(r1[:4], r2[:4]):
            np.testing.assert_array_equal(x, y)
        _assert_info_equal(r1[4], r2[4], native.num_envs)
        n_final += int(np.sum(r1[4].get("_final_obs", 0)))
    assert n_final >= 6  # staggered episodes ended along the way


def test_same_step_view_passes_same_step_env_through():
    env = counter_vec(AutoresetMode.SAME_STEP)
    view = SameStepAutoreset(env)
    view.reset(seed=0)
    calls = []
    original = env.reset
    env.reset = lambda **kw: calls.append(kw) or original(**kw)
    for _ in range(N_STEPS):
        view.step(actions())
    assert calls == []  # no partial resets: the env autoresets itself


def test_same_step_view_rejects_bad_mode():
    env = counter_vec(AutoresetMode.NEXT_STEP)
    env.metadata = {**env.metadata, "autoreset_mode": "sometimes"}
    with pytest.raises(ValueError, match="autoreset_mode"):
        SameStepAutoreset(env)


# --------------------------------------------------------------------------------------------
# Stable-Baselines3
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_sb3_autoreset_semantics(mode):
    venv = sb3(counter_vec(mode))
    obs = venv.reset()
    assert obs.shape == (3, 3) and obs.dtype == np.float32
    for i in range(3):
        assert venv.reset_infos[i]["ep"] == 0 and venv.reset_infos[i]["u"] == pytest.approx(obs[i, 2])
    for step in expected_trajectory():
        prev = obs
        obs, rewards, dones, infos = venv.step(actions())
        assert rewards.dtype == np.float32 and dones.dtype == bool and len(infos) == 3
        np.testing.assert_array_equal(rewards, step["reward"])
        np.testing.assert_array_equal(dones, step["done"])
        np.testing.assert_array_equal(obs[:, 0], step["t"])
        np.testing.assert_array_equal(obs[:, 1], step["ep"])
        for i in range(3):
            assert infos[i]["TimeLimit.truncated"] == bool(step["trunc"][i] and not step["term"][i])
            if step["done"][i]:
                t_end, ep_end = step["final"][i]
                # the last observation of the finished episode, same u as the episode's observations
                np.testing.assert_array_equal(infos[i]["terminal_observation"], [t_end, ep_end, prev[i, 2]])
                assert infos[i]["t"] == t_end  # the finishing step's info
                # the returned obs is the fresh reset obs; its reset info is in reset_infos
                assert venv.reset_infos[i]["ep"] == ep_end + 1
                assert venv.reset_infos[i]["u"] == pytest.approx(obs[i, 2])
                assert obs[i, 2] != prev[i, 2]
            else:
                assert "terminal_observation" not in infos[i]
                assert infos[i]["t"] == obs[i, 0]
                assert obs[i, 2] == prev[i, 2]


@pytest.mark.parametrize("mode", MODES)
def test_sb3_seed_and_options(mode):
    venv = sb3(counter_vec(mode))
    assert venv.seed(7) == [7, 8, 9]
    obs = venv.reset()
    np.testing.assert_allclose(obs[:, 2], [seeded_u(7 + i) for i in range(3)], rtol=1e-6)
    again = venv.reset()  # seeds are used once
    assert not np.allclose(again[:, 2], obs[:, 2])
    venv.seed(7)
    np.testing.assert_array_equal(venv.reset(), obs[:, :] * [1, 0, 1] + [0, 2, 0])  # same u, episode 2
    venv.set_options([{"a": 1}, {"a": 2}, {"a": 1}])
    with pytest.raises(ValueError, match="options"):
        venv.reset()


def test_sb3_vecenv_api():
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import VecCheckNan, VecEnv, VecMonitor

    venv = sb3(counter_vec(AutoresetMode.NEXT_STEP))
    assert isinstance(venv, VecEnv) and venv.num_envs == 3
    assert venv.observation_space == gym.spaces.Box(-np.inf, np.inf, (3,), np.float32)
    assert venv.action_space == gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
    assert venv.get_attr("term_at") == [2, None, 4]
    assert venv.get_attr("term_at", indices=[2, 0]) == [4, 2]
    venv.set_attr("term_at", 5, indices=0)
    assert venv.get_attr("term_at") == [5, None, 4]
    assert venv.env_method("scaled", 3, indices=[0, 2], offset=1) == [16, 13]
    assert venv.env_method("scaled", 2) == [10, 0, 8]
    assert venv.env_is_wrapped(gym.wrappers.TimeLimit) == [True, True, True]
    assert venv.env_is_wrapped(Monitor) == [False, False, False]
    with pytest.raises(ValueError, match="indices"):
        venv.get_attr("term_at", indices=[3])
    # SB3's own VecEnv wrappers run on top of it
    checked = VecCheckNan(VecMonitor(venv), raise_exception=True)
    checked.reset()
    episodes = []
    for _ in range(6):
        _, _, _, infos = checked.step(actions())
        episodes += [info["episode"] for info in infos if "episode" in info]
    assert [e["l"] for e in episodes] == [3, 4, 5, 3]  # env 0 now terminates at 5


def test_sb3_check_env_on_single_counter_env():
    from stable_baselines3.common.env_checker import check_env

    check_env(gym.wrappers.TimeLimit(CounterEnv(3), 5), warn=False)


@pytest.mark.parametrize("mode", MODES)
def test_sb3_ppo_trains(mode):
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import VecMonitor

    venv = VecMonitor(sb3(_pendulum_vec_limit(mode, n=4, limit=16)))
    model = PPO("MlpPolicy", venv, n_steps=32, batch_size=64, n_epochs=2, seed=0, device="cpu",
                policy_kwargs={"net_arch": [32, 32]})
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(total_timesteps=256)
    assert model.num_timesteps == 256
    assert [e["l"] for e in model.ep_info_buffer] == [16] * 16  # 4 envs x 4 full episodes
    assert any(not torch.equal(a, b) for a, b in zip(before, model.policy.parameters()))


def _pendulum_vec_limit(mode, n, limit):
    return SyncVectorEnv([lambda: gym.make("Pendulum-v1", max_episode_steps=limit) for _ in range(n)],
                         autoreset_mode=mode)


# --------------------------------------------------------------------------------------------
# rsl_rl
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_rsl_rl_contract_and_autoreset(mode):
    from rsl_rl.env import VecEnv
    from tensordict import TensorDict

    env = rsl_rl(counter_vec(mode), seed=3, max_episode_length=4)
    assert isinstance(env, VecEnv)
    assert (env.num_envs, env.num_actions, env.max_episode_length) == (3, 1, 4)
    assert env.device == torch.device("cpu") and isinstance(env.cfg, dict)
    obs = env.get_observations()
    assert isinstance(obs, TensorDict) and list(obs.keys()) == ["policy"]
    assert obs["policy"].shape == (3, 3) and obs["policy"].dtype == torch.float32
    np.testing.assert_allclose(obs["policy"][:, 2], [seeded_u(3 + i) for i in range(3)], rtol=1e-6)
    assert env.episode_length_buf.dtype == torch.long and env.episode_length_buf.tolist() == [0, 0, 0]
    for step in expected_trajectory():
        prev = obs["policy"].clone()
        obs, rewards, dones, extras = env.step(torch.full((3, 1), ACTION))
        assert obs is env.get_observations()
        assert rewards.shape == (3,) and rewards.dtype == torch.float32
        assert dones.shape == (3,) and dones.dtype == torch.long
        assert extras["time_outs"].dtype == torch.bool and extras["log"] == {}
        np.testing.assert_array_equal(rewards.numpy(), step["reward"])
        np.testing.assert_array_equal(dones.numpy(), step["done"])
        np.testing.assert_array_equal(extras["time_outs"].numpy(), step["trunc"] & ~step["term"])
        np.testing.assert_array_equal(env.episode_length_buf.numpy(), step["t"])
        p = obs["policy"].numpy()
        np.testing.assert_array_equal(p[:, 0], step["t"])  # finished envs: fresh reset obs
        np.testing.assert_array_equal(p[:, 1], step["ep"])
        np.testing.assert_array_equal(p[:, 2] != prev[:, 2].numpy(), step["done"])


def test_rsl_rl_clips_actions_and_validates():
    env = rsl_rl(counter_vec(AutoresetMode.NEXT_STEP), max_episode_length=7)
    assert env.max_episode_length == 7
    _, rewards, _, _ = env.step(torch.full((3, 1), 5.0))
    np.testing.assert_array_equal(rewards.numpy(), [2.0, 2.0, 2.0])  # t=1 + action clipped to 1
    with pytest.raises(ValueError, match="declares no episode limit"):
        rsl_rl(counter_vec(AutoresetMode.NEXT_STEP))
    unclipped = rsl_rl(counter_vec(AutoresetMode.NEXT_STEP), clip_actions=False, max_episode_length=7)
    np.testing.assert_array_equal(unclipped.step(torch.full((3, 1), 5.0))[1].numpy(), [6.0] * 3)
    with pytest.raises(ValueError, match="max_episode_length"):
        rsl_rl(counter_vec(AutoresetMode.NEXT_STEP), max_episode_length=0)
    cartpole = SyncVectorEnv([lambda: gym.make("CartPole-v1")] * 2)
    with pytest.raises(ValueError, match="Box"):
        rsl_rl(cartpole)
    with pytest.raises(ValueError, match="VectorEnv"):
        rsl_rl(gym.make("Pendulum-v1"))


def _rsl_train_cfg():
    mlp = {"class_name": "rsl_rl.models.MLPModel", "hidden_dims": [32, 32], "activation": "elu"}
    return {
        "num_steps_per_env": 16,
        "save_interval": 50,
        "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
        "algorithm": {"class_name": "rsl_rl.algorithms.PPO", "num_learning_epochs": 2, "num_mini_batches": 2},
        "actor": {**mlp, "distribution_cfg": {"class_name": "rsl_rl.modules.GaussianDistribution", "init_std": 1.0}},
        "critic": dict(mlp),
    }


@pytest.mark.parametrize("mode", MODES)
def test_rsl_rl_on_policy_runner_trains(mode):
    from rsl_rl.runners import OnPolicyRunner

    env = rsl_rl(_pendulum_vec_limit(mode, n=4, limit=20), seed=0)
    assert env.max_episode_length == 20  # from the sub-envs' spec (gym.make's TimeLimit)
    runner = OnPolicyRunner(env, _rsl_train_cfg(), log_dir=None, device="cpu")
    before = [p.detach().clone() for p in runner.alg.actor.parameters()]
    runner.learn(num_learning_iterations=2)
    assert runner.current_learning_iteration == 1
    assert any(not torch.equal(a, b) for a, b in zip(before, runner.alg.actor.parameters()))
    # 2 x 16 steps: every env finished exactly one 20-step episode and is 12 steps into the next
    assert env.episode_length_buf.tolist() == [12] * 4


# --------------------------------------------------------------------------------------------
# skrl
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_skrl_wrapper_properties_and_autoreset(mode):
    from skrl.envs.wrappers.torch.gymnasium_envs import GymnasiumWrapper

    env = skrl(counter_vec(mode))
    assert isinstance(env, GymnasiumWrapper) and env._vectorized
    assert env.num_envs == 3 and env.num_agents == 1
    assert env.observation_space == gym.spaces.Box(-np.inf, np.inf, (3,), np.float32)
    assert env.action_space == gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
    assert env.device == torch.device("cpu")
    obs, _ = env.reset()
    assert obs.shape == (3, 3) and obs.dtype == torch.float32
    for step in expected_trajectory():
        prev = obs
        obs, rewards, terminated, truncated, info = env.step(torch.full((3, 1), ACTION))
        assert rewards.shape == terminated.shape == truncated.shape == (3, 1)
        np.testing.assert_array_equal(rewards.numpy()[:, 0], step["reward"])
        np.testing.assert_array_equal(terminated.numpy()[:, 0], step["term"])
        np.testing.assert_array_equal(truncated.numpy()[:, 0], step["trunc"])
        # the trainer feeds this obs to the next act(): finished envs must already be reset
        np.testing.assert_array_equal(obs[:, 0].numpy(), step["t"])
        np.testing.assert_array_equal(obs[:, 1].numpy(), step["ep"])
        for i in np.flatnonzero(step["done"]):
            t_end, ep_end = step["final"][i]
            np.testing.assert_array_equal(info["final_obs"][i], [t_end, ep_end, prev[i, 2].item()])
        assert env.reset()[0] is obs  # a vectorized skrl env reset() returns the current obs


@pytest.mark.parametrize("mode", MODES)
def test_skrl_ppo_trains(mode):
    from skrl.agents.torch.ppo import PPO, PPO_CFG
    from skrl.memories.torch import RandomMemory
    from skrl.trainers.torch import SequentialTrainer

    env = skrl(_pendulum_vec_limit(mode, n=4, limit=20))
    cfg = PPO_CFG(rollouts=16, learning_epochs=2, mini_batches=2)
    cfg.experiment.write_interval = 0
    cfg.experiment.checkpoint_interval = 0
    models = skrl_ppo_models(env, hidden=32)
    agent = PPO(models=models, memory=RandomMemory(memory_size=16, num_envs=4, device="cpu"),
                observation_space=env.observation_space, action_space=env.action_space, device="cpu", cfg=cfg)
    before = [p.detach().clone() for p in models["policy"].parameters()]
    trainer = SequentialTrainer(env=env, agents=agent,
                                cfg={"timesteps": 64, "headless": True, "disable_progressbar": True,
                                     "close_environment_at_exit": False})
    trainer.train()
    assert any(not torch.equal(a, b) for a, b in zip(before, models["policy"].parameters()))
    env.close()


# --------------------------------------------------------------------------------------------
# torchrl: no adapter, its GymWrapper takes a SAME_STEP (or DISABLED) Gymnasium vector env
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("source", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED])
def test_torchrl_gym_wrapper(source):
    from torchrl.envs import GymWrapper
    from torchrl.envs.utils import check_env_specs

    def make():
        venv = counter_vec(source, torchrl_info=True)
        return SameStepAutoreset(venv) if source == AutoresetMode.NEXT_STEP else venv

    if source == AutoresetMode.NEXT_STEP:
        with pytest.raises(RuntimeError, match="SAME_STEP or DISABLED"):
            GymWrapper(counter_vec(source))
    check_env_specs(GymWrapper(make()))
    env = GymWrapper(make())  # fresh: torchrl 0.14.1 returned stale obs on reset after check_env_specs
    td = env.rollout(N_STEPS, policy=lambda td: td.set("action", torch.full((3, 1), ACTION)),
                     break_when_any_done=False)
    assert td.batch_size == (3, N_STEPS)
    obs, nxt = td["observation"].numpy(), td["next", "observation"].numpy()
    np.testing.assert_array_equal(obs[:, 0, 0], [0, 0, 0])
    for k, step in enumerate(expected_trajectory()):
        np.testing.assert_array_equal(td["next", "reward"][:, k, 0].numpy(), step["reward"])
        np.testing.assert_array_equal(td["next", "terminated"][:, k, 0].numpy(), step["term"])
        np.testing.assert_array_equal(td["next", "truncated"][:, k, 0].numpy(), step["trunc"])
        np.testing.assert_array_equal(nxt[:, k, 0], step["final_t"])
        np.testing.assert_array_equal(nxt[:, k, 1:], obs[:, k, 1:])  # same episode id and u
        if k + 1 == N_STEPS:
            break
        np.testing.assert_array_equal(obs[:, k + 1, 0], step["t"])
        new = obs[:, k + 1, 1] != obs[:, k, 1]
        np.testing.assert_array_equal(new, step["done"])  # finished envs start a fresh episode
        np.testing.assert_array_equal(obs[:, k + 1, 2] != obs[:, k, 2], step["done"])
        if source == AutoresetMode.DISABLED:  # torchrl resets exactly the finished envs
            assert np.all(obs[:, k + 1, 1] - obs[:, k, 1] == new)


# --------------------------------------------------------------------------------------------
# actuator_gym/Pendulum-v0, the native batched env (NEXT_STEP by default, SAME_STEP selectable)
# --------------------------------------------------------------------------------------------
PENDULUM = "actuator_gym/Pendulum-v0"
EPISODE = 4  # control steps per episode (dt = 1/60 s)


def pendulum(mode, n=3, episode=EPISODE):
    import actuator_gym  # noqa: F401  (registers the ids)

    return gym.make_vec(PENDULUM, num_envs=n, autoreset_mode=mode, episode_length_s=episode / 60.0)


def _pendulum_actions(steps, n=3):
    return np.random.default_rng(1).uniform(-2, 2, (steps, n, 1)).astype(np.float32)


def test_native_pendulum_single_env_passes_sb3_check_env():
    import actuator_gym  # noqa: F401
    from stable_baselines3.common.env_checker import check_env

    check_env(gym.make(PENDULUM), warn=False)


def test_native_pendulum_same_step_view_equals_native_same_step():
    native, view = pendulum(AutoresetMode.SAME_STEP), SameStepAutoreset(pendulum(AutoresetMode.NEXT_STEP))
    assert view.source_mode == AutoresetMode.NEXT_STEP
    o1, i1 = native.reset(seed=5)
    o2, i2 = view.reset(seed=5)
    np.testing.assert_array_equal(o1, o2)
    _assert_info_equal(i1, i2, 3)
    n_done = 0
    for act in _pendulum_actions(3 * EPISODE + 1):
        r1, r2 = native.step(act), view.step(act)
        for x, y in zip(r1[:4], r2[:4]):
            np.testing.assert_array_equal(x, y)
        # BatchedTask's SAME_STEP main info of a finished env also carries that step's telemetry;
        # the view (like SyncVectorEnv) gives the reset info there, the step's info in final_info.
        _assert_info_equal(r1[4], r2[4], 3, done_info_subset=True)
        n_done += int(np.sum(r1[3]))
    assert n_done == 9  # 3 envs x 3 episodes, all through truncation


@pytest.mark.parametrize("mode", MODES)
def test_native_pendulum_adapters_match_reference(mode):
    """Each adapter over the native env reports what the native SAME_STEP env itself reports."""
    steps = _pendulum_actions(2 * EPISODE + 2)
    ref = pendulum(AutoresetMode.SAME_STEP)
    ref_obs = [ref.reset(seed=9)[0]]
    ref_steps = []
    for act in steps:
        obs, rew, term, trunc, info = ref.step(act)
        ref_obs.append(obs)
        ref_steps.append((rew, term, trunc, info.get("final_obs")))

    venv = sb3(pendulum(mode))
    venv.seed(9)
    np.testing.assert_array_equal(venv.reset(), ref_obs[0])
    for k, act in enumerate(steps):
        obs, rew, dones, infos = venv.step(act)
        rew_ref, term, trunc, final = ref_steps[k]
        np.testing.assert_array_equal(obs, ref_obs[k + 1])
        np.testing.assert_allclose(rew, rew_ref.astype(np.float32))
        np.testing.assert_array_equal(dones, term | trunc)
        for i in range(3):
            assert infos[i]["TimeLimit.truncated"] == bool(trunc[i] and not term[i])
            if dones[i]:
                np.testing.assert_array_equal(infos[i]["terminal_observation"], final[i])
                assert "actuator" in infos[i] and "actuator" in venv.reset_infos[i]
    assert venv.get_attr("max_episode_steps") == [EPISODE] * 3
    assert venv.env_is_wrapped(gym.Wrapper) == [False] * 3
    with pytest.raises(ValueError, match="indices must be None"):
        venv.set_attr("render_env_ids", (0,), indices=[1])

    env = rsl_rl(pendulum(mode), seed=9)
    assert env.max_episode_length == EPISODE and env.num_actions == 1
    np.testing.assert_array_equal(env.get_observations()["policy"].numpy(), ref_obs[0])
    for k, act in enumerate(steps):
        obs, rew, dones, extras = env.step(torch.as_tensor(act))
        rew_ref, term, trunc, _ = ref_steps[k]
        np.testing.assert_array_equal(obs["policy"].numpy(), ref_obs[k + 1])
        np.testing.assert_allclose(rew.numpy(), rew_ref.astype(np.float32))
        np.testing.assert_array_equal(extras["time_outs"].numpy(), trunc & ~term)
        np.testing.assert_array_equal(env.episode_length_buf.numpy(), [(k + 1) % EPISODE] * 3)

    senv = skrl(pendulum(mode))
    senv._seed = 9  # skrl's first reset seeds the env with its global key; use the reference seed
    np.testing.assert_array_equal(senv.reset()[0].numpy(), ref_obs[0])
    for k, act in enumerate(steps):
        obs, rew, term, trunc, info = senv.step(torch.as_tensor(act))
        np.testing.assert_array_equal(obs.numpy(), ref_obs[k + 1])
        np.testing.assert_array_equal(trunc.numpy()[:, 0], ref_steps[k][2])


def test_native_pendulum_trains_with_each_library():
    from rsl_rl.runners import OnPolicyRunner
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import VecMonitor

    model = PPO("MlpPolicy", VecMonitor(sb3(pendulum(AutoresetMode.NEXT_STEP, n=4, episode=16))), n_steps=32,
                batch_size=64, n_epochs=2, seed=0, device="cpu", policy_kwargs={"net_arch": [32, 32]})
    model.learn(total_timesteps=256)
    assert [e["l"] for e in model.ep_info_buffer] == [16] * 16

    env = rsl_rl(pendulum(AutoresetMode.NEXT_STEP, n=4, episode=20), seed=0)
    runner = OnPolicyRunner(env, _rsl_train_cfg(), log_dir=None, device="cpu")
    before = [p.detach().clone() for p in runner.alg.actor.parameters()]
    runner.learn(num_learning_iterations=2)
    assert any(not torch.equal(a, b) for a, b in zip(before, runner.alg.actor.parameters()))
    assert env.episode_length_buf.tolist() == [12] * 4


def test_native_pendulum_torchrl_disabled_autoreset():
    from torchrl.envs import GymWrapper

    env = GymWrapper(pendulum(AutoresetMode.DISABLED, n=2))
    td = env.rollout(2 * EPISODE + 1, break_when_any_done=False)
    assert td.batch_size == (2, 2 * EPISODE + 1)
    trunc = td["next", "truncated"][..., 0]
    expected = [(k + 1) % EPISODE == 0 for k in range(2 * EPISODE + 1)]
    assert trunc.tolist() == [expected, expected]
    # after a truncation torchrl reset those envs: the next root obs differs from the final next obs
    k = EPISODE - 1
    assert not torch.equal(td["observation"][:, k + 1], td["next", "observation"][:, k])
    assert torch.equal(td["observation"][:, 1], td["next", "observation"][:, 0])  # no reset mid-episode


def test_torchrl_gym_wrapper_over_the_view_needs_flat_info():
    """torchrl's GymWrapper reads a SAME_STEP env's info with a reader of flat entries only: over the view of a
    nested-info env it fails while reading the specs; ``SameStepAutoreset(env, flat_info=True)`` flattens the
    view's info (``"actuator/applied_effort"``, ...), and the rollout is that of the native flat SAME_STEP task."""
    from torchrl.envs import GymWrapper

    def make(mode, **kw):
        return gym.make_vec(PENDULUM, num_envs=2, autoreset_mode=mode, episode_length_s=EPISODE / 60.0, seed=3, **kw)

    with pytest.raises(RuntimeError, match="expand_specs"):
        GymWrapper(SameStepAutoreset(make(AutoresetMode.NEXT_STEP)))
    acts = torch.as_tensor(_pendulum_actions(2 * EPISODE + 1, n=2))

    def rollout(venv):
        steps = iter(acts)
        return GymWrapper(venv).rollout(len(acts), policy=lambda td: td.set("action", next(steps)),
                                        break_when_any_done=False)

    view = rollout(SameStepAutoreset(make(AutoresetMode.NEXT_STEP), flat_info=True))
    native = rollout(make(AutoresetMode.SAME_STEP, flat_info=True))
    assert set(view.keys(True, True)) == set(native.keys(True, True))
    assert ("next", "actuator/applied_effort") in view.keys(True, True)
    done = native["next", "done"][..., 0]
    assert done.sum() == 4  # 2 envs x 2 episodes
    for key in ("observation", ("next", "observation"), ("next", "reward"), ("next", "done")):
        torch.testing.assert_close(view[key], native[key], rtol=0, atol=0)
    # the finishing step's telemetry: the native task keeps it in the main info, the view in final_info
    effort = ("next", "actuator/applied_effort")
    torch.testing.assert_close(view[effort][~done], native[effort][~done], rtol=0, atol=0)
    assert native[effort][~done].abs().sum() > 0
    env = SameStepAutoreset(make(AutoresetMode.NEXT_STEP), flat_info=True)
    infos = [env.reset()[1]] + [env.step(a.numpy())[4] for a in acts[:EPISODE]]
    assert infos[-1]["_final_info"].all() and "actuator/applied_effort" in infos[-1]["final_info"]
    for info in infos + [infos[-1]["final_info"]]:
        assert not any(isinstance(v, dict) for k, v in info.items() if k != "final_info")
    with pytest.raises(TypeError, match="SameStepAutoreset: flat_info must be True or False"):
        SameStepAutoreset(env.env, flat_info=1)
