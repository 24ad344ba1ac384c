"""The RL libraries' own entry points on the native tasks, used as each library documents them
(no actuator-gym adapter), with the explicit keywords of docs/adapters.md: torchrl's ``GymEnv`` /
``GymWrapper`` / collector (``flat_info=True``), skrl's ``wrap_env`` + PPO + ``SequentialTrainer``
(``autoreset_mode=SAME_STEP``, ``skrl_episode_info=True``); and the ``TypeError`` torchrl's ``GymEnv``
relies on (``frameskip``)."""

from __future__ import annotations

import ast
import builtins
import re
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest
from conftest import skrl_ppo_models
import torch
from gymnasium.vector import AutoresetMode

import actuator_gym  # noqa: F401  (registers the ids)

PENDULUM = "actuator_gym/Pendulum-v0"
EPISODE = 4  # control steps per episode (Pendulum: dt = 1/60 s)
SHORT = {"episode_length_s": EPISODE / 60.0}


def _truncations(k_steps: int, episode: int = EPISODE) -> list[bool]:
    return [(k + 1) % episode == 0 for k in range(k_steps)]


# --------------------------------------------------------------------------------------------
# torchrl
# --------------------------------------------------------------------------------------------
def test_torchrl_gym_env_single_and_num_envs():
    from torchrl.envs import GymEnv
    from torchrl.envs.utils import check_env_specs

    env = GymEnv(PENDULUM, **SHORT)  # torchrl first passes frameskip=..., then retries without it
    assert env.batch_size == torch.Size([])
    check_env_specs(env)
    td = env.rollout(2 * EPISODE + 1, break_when_any_done=False)
    assert td["next", "truncated"][:, 0].tolist() == _truncations(2 * EPISODE + 1)
    env.close()

    # num_envs: torchrl's own AsyncVectorEnv of single envs, in spawned workers, which re-import the
    # main module: pytest's does not import actuator_gym, so here the "module:" prefix registers the
    # ids there; flat_info=True (passed on to every sub-env) gives the flat info torchrl's reader takes
    venv = GymEnv(f"actuator_gym:{PENDULUM}", num_envs=2, flat_info=True, **SHORT)
    assert venv.batch_size == torch.Size([2])
    check_env_specs(venv)
    td = venv.rollout(EPISODE + 1, break_when_any_done=False)
    assert td["next", "truncated"][..., 0].tolist() == [_truncations(EPISODE + 1)] * 2
    assert td["next", "actuator/applied_effort"].shape == (2, EPISODE + 1, 1)
    venv.close()


def test_torchrl_gym_wrapper_same_step_rolls_out_and_collects():
    from torchrl.collectors import Collector
    from torchrl.envs import GymWrapper
    from torchrl.envs.utils import check_env_specs

    def make():
        return gym.make_vec(PENDULUM, num_envs=3, autoreset_mode=AutoresetMode.SAME_STEP, flat_info=True, **SHORT)

    check_env_specs(GymWrapper(make()))
    env = GymWrapper(make())  # fresh (torchrl's check leaves the wrapper mid-episode)
    steps = 2 * EPISODE + 1
    td = env.rollout(steps, break_when_any_done=False)
    assert td.batch_size == (3, steps)
    assert td["next", "truncated"][..., 0].tolist() == [_truncations(steps)] * 3
    # the true last observation of an episode is ("next", "observation"); the next root obs is a reset
    k = EPISODE - 1
    assert not torch.equal(td["observation"][:, k + 1], td["next", "observation"][:, k])
    assert torch.equal(td["observation"][:, 1], td["next", "observation"][:, 0])
    # the step's telemetry: the actuator's applied effort stays within its effort limit
    limit = td["next", "actuator/parameters/pendulum/actuator_effort_limit"]
    assert (td["next", "actuator/applied_effort"].abs() <= limit + 1e-6).all()

    collector = Collector(GymWrapper(make()), policy=None, frames_per_batch=3 * 2 * EPISODE,
                          total_frames=3 * 4 * EPISODE)
    batches = list(collector)
    collector.shutdown()
    assert [b.numel() for b in batches] == [3 * 2 * EPISODE] * 2
    for b in batches:
        assert b["next", "truncated"][..., 0].sum().item() == 3 * 2  # two episodes per env per batch


# --------------------------------------------------------------------------------------------
# unknown keywords: Python's own TypeError (torchrl's GymEnv retries without 'frameskip')
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", sorted(k for k in gym.registry if k.startswith("actuator_gym/")))
def test_unknown_keyword_is_pythons_type_error(env_id):
    with pytest.raises(TypeError, match="unexpected keyword argument 'frameskip'"):
        gym.make(env_id, frameskip=4)
    with pytest.raises(TypeError, match="unexpected keyword argument 'frameskip'"):
        gym.make_vec(env_id, num_envs=2, frameskip=4)


# --------------------------------------------------------------------------------------------
# skrl
# --------------------------------------------------------------------------------------------
def test_skrl_wrap_env_with_the_explicit_keywords_trains_on_same_step_transitions():
    from skrl.agents.torch.ppo import PPO, PPO_CFG
    from skrl.envs.wrappers.torch import wrap_env
    from skrl.envs.wrappers.torch.gymnasium_envs import GymnasiumWrapper
    from skrl.memories.torch import RandomMemory
    from skrl.trainers.torch import SequentialTrainer

    n, episode, timesteps = 4, 5, 200
    venv = gym.make_vec(PENDULUM, num_envs=n, episode_length_s=episode / 60.0,
                        autoreset_mode=AutoresetMode.SAME_STEP, skrl_episode_info=True)  # docs/adapters.md
    env = wrap_env(venv, verbose=False)  # skrl's default "auto": VectorEnv is a direct base of every bundled task
    assert isinstance(env, GymnasiumWrapper) and env._vectorized and env.num_envs == n
    for task in ("actuator_gym/Quadruped-v0", "actuator_gym/Ant-v0", "actuator_gym/Quadrotor-v0"):
        other = gym.make_vec(task, num_envs=1, autoreset_mode=AutoresetMode.SAME_STEP)
        assert isinstance(wrap_env(other, verbose=False), GymnasiumWrapper), task
        other.close()

    cfg = PPO_CFG(rollouts=16, learning_epochs=1, mini_batches=2)
    cfg.experiment.write_interval = 0
    cfg.experiment.checkpoint_interval = 0
    models = skrl_ppo_models(env, hidden=16)
    agent = PPO(models=models, memory=RandomMemory(memory_size=16, num_envs=n, device="cpu"),
                observation_space=env.observation_space, action_space=env.action_space, device="cpu", cfg=cfg)
    recorded = []  # every transition skrl hands its agent
    record = agent.record_transition

    def spy(**kw):
        recorded.append({k: kw[k].clone() for k in ("observations", "next_observations", "rewards", "truncated")})
        return record(**kw)

    agent.record_transition = spy
    tracked = []  # (tag, value) the trainer tracks from infos["episode"] (what reaches TensorBoard)
    track = agent.track_data
    agent.track_data = lambda tag, value: (tracked.append((tag, value)), track(tag, value))[1]
    trainer = SequentialTrainer(env=env, agents=agent, cfg={"timesteps": timesteps, "headless": False,
                                                           "disable_progressbar": True,
                                                           "close_environment_at_exit": False})
    before = [p.detach().clone() for p in models["policy"].parameters()]
    trainer.train()
    assert any(not torch.equal(a, b) for a, b in zip(before, models["policy"].parameters()))

    assert len(recorded) == timesteps
    trunc = torch.stack([r["truncated"][:, 0] for r in recorded])  # (timesteps, n)
    rewards = torch.stack([r["rewards"][:, 0] for r in recorded])
    # every step advances an episode: exactly timesteps / episode episodes per env (NEXT_STEP would
    # spend one step per episode on the reset: timesteps // (episode + 1))
    assert trunc.sum(0).tolist() == [timesteps // episode] * n
    assert trunc.tolist() == [[(k + 1) % episode == 0] * n for k in range(timesteps)]
    # no NEXT_STEP reset transition (final obs -> reset obs, action ignored, reward exactly 0)
    assert (rewards != 0).all()
    # the state skrl acts on next is the obs step() returned: after an episode end, a fresh episode
    for k in range(timesteps - 1):
        assert torch.equal(recorded[k + 1]["observations"], recorded[k]["next_observations"])
    # the actuator statistics reach skrl's tracking without our adapter (skrl_episode_info=True): one
    # value per episode end
    energy = [v for tag, v in tracked if tag == "Episode_Actuator/pendulum/energy"]
    assert len(energy) == timesteps // episode and all(v > 0 for v in energy)
    fraction = [v for tag, v in tracked if tag == "Episode_Actuator/all_joints/saturated_fraction"]
    assert len(fraction) == timesteps // episode and all(0.0 <= v <= 1.0 for v in fraction)
    env.close()


TORCHRL_SCRIPT = """
import actuator_gym  # registers the ids (also in torchrl's spawned workers, which re-import this script)
import gymnasium as gym


def main():
    from torchrl.envs import GymEnv, GymWrapper  # torchrl imported here only, not at the top
    from torchrl.envs.utils import check_env_specs

    env = GymEnv("actuator_gym/Quadruped-v0", num_envs=4, flat_info=True, episode_length_s=0.06)  # 3 steps
    check_env_specs(env)
    td = env.rollout(4, break_when_any_done=False)
    assert td["next", "truncated"][..., 0].tolist() == [[False, False, True, False]] * 4
    assert td["next", "actuator/applied_effort"].shape == (4, 4, 12)
    env.close()
    vec = gym.make_vec("actuator_gym/Quadruped-v0", num_envs=4, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP,
                       flat_info=True)
    check_env_specs(GymWrapper(vec))
    print("torchrl ok")


if __name__ == "__main__":
    main()
"""


def test_torchrl_entry_points_in_a_users_script_importing_torchrl_inside_a_function(tmp_path):
    """The reported failure: a script importing torchrl inside a function, then ``GymEnv(id,
    num_envs=4)`` (torchrl's own AsyncVectorEnv of single envs, in spawned workers that re-import the
    script). With ``flat_info=True``, which torchrl hands to every sub-env, ``check_env_specs`` passes
    whatever the script imports where; ``GymWrapper(make_vec(..., flat_info=True))`` too."""
    script = tmp_path / "train.py"
    script.write_text(TORCHRL_SCRIPT)
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert p.returncode == 0 and "torchrl ok" in p.stdout, p.stderr[-3000:]


def _unbound_names(program: str) -> set[str]:
    """Names a program reads but never binds (imports, assignments, defs, arguments, loop and
    ``as`` targets) and that are not builtins: what running it alone would raise ``NameError`` on."""
    tree = ast.parse(program)
    bound = set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - bound


def test_docs_adapters_python_blocks_are_whole_programs():
    """docs/adapters.md: every python block runs as it stands (imports included); those that start
    worker processes (torchrl's GymEnv(num_envs=N), Ray) under ``if __name__ == "__main__":``."""
    doc = Path(__file__).resolve().parents[2] / "docs" / "adapters.md"
    blocks = re.findall(r"```python\n(.*?)```", doc.read_text(), re.S)
    assert len(blocks) >= 6
    for block in blocks:
        assert _unbound_names(block) == set(), block
        if "num_envs=4, flat_info=True" in block or "PPOConfig" in block:
            assert '\nif __name__ == "__main__":' in block, block
    assert _unbound_names("x = 1\nprint(x, y)") == {"y"}  # the check itself sees a missing name
