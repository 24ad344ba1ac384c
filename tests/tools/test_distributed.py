"""Where each process of a distributed run gets its worlds, seeds and device (no Ray here):
distributed.block_seed / rank_plan, the Ray env runners' envs (ray_env), and a torchrun-style world
of 2 ranks on gloo (the CPU stand-in of the NCCL path)."""

import os
import socket
from types import SimpleNamespace

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.wrappers.vector import DictInfoToList

from actuator_gym import configs
from actuator_gym.tools.distributed import block_seed, rank_plan, world_seeds
from actuator_gym.tools.ray_env import (assign_runner_worlds, find_runner_worlds, make_runner_env,
                                        runner_env_config)

PEND = "actuator_gym/Pendulum-v0"


def test_block_seed_numbers_worlds_over_processes():
    # process p of N worlds: worlds p*N .. p*N+N-1, seeded seed + world index
    assert block_seed(5, 0, 16) == 5
    assert block_seed(5, 1, 16) == 21
    assert block_seed(5, 3, 4) == 17
    assert world_seeds(5, 1, 3) == [8, 9, 10]
    blocks = [world_seeds(0, p, 4) for p in range(3)]
    assert sum(blocks, []) == list(range(12))  # disjoint, together one batch of 12
    assert block_seed(2**64 - 4, 0, 4) == 2**64 - 4  # the last seed 2**64 - 1 is allowed
    for args, name in (((-1, 0, 4), "seed"), ((0, -1, 4), "index"), ((0, 0, 0), "num_envs"), ((0, True, 4), "index"),
                       ((2**64 - 3, 0, 4), "2\\*\\*64")):
        with pytest.raises(ValueError, match=name):
            block_seed(*args)


def test_rank_plan_from_torchrun_variables():
    env = {"RANK": "3", "LOCAL_RANK": "1", "WORLD_SIZE": "4"}
    gpu = rank_plan(10, 8, environ=env, cuda_devices=2)
    assert (gpu.rank, gpu.local_rank, gpu.world_size) == (3, 1, 4)
    assert (gpu.device, gpu.backend) == ("cuda:1", "nccl")
    assert gpu.env_seed == 10 + 3 * 8 and gpu.world_seeds == list(range(34, 42))
    assert gpu.torch_seed == 13 and not gpu.is_main
    cpu = rank_plan(10, 8, environ=env, cuda_devices=0)  # auto: no GPU on this node -> the CPU stand-in
    assert (cpu.device, cpu.backend, cpu.env_seed) == ("cpu", "gloo", 34)
    single = rank_plan(0, 4, environ={}, cuda_devices=0)
    assert (single.rank, single.world_size, single.is_main, single.env_seed) == (0, 1, True, 0)
    bad = [({"WORLD_SIZE": "two"}, "WORLD_SIZE must be an integer"), ({"WORLD_SIZE": "2", "RANK": "2"}, "RANK must be in"),
           ({"WORLD_SIZE": "2", "LOCAL_RANK": "-1"}, "LOCAL_RANK must be in"), ({"WORLD_SIZE": "0"}, "WORLD_SIZE must be >= 1")]
    for environ, msg in bad:
        with pytest.raises(ValueError, match=msg):
            rank_plan(0, 4, environ=environ, cuda_devices=0)
    with pytest.raises(ValueError, match="LOCAL_RANK 1 needs GPU cuda:1, but this node has 1 GPU"):
        rank_plan(0, 4, environ=env, device="cuda", cuda_devices=1)
    with pytest.raises(ValueError, match="device must be one of"):
        rank_plan(0, 4, environ=env, device="gpu", cuda_devices=0)


def _params(vec):
    return vec.unwrapped.actuator_parameters()["legs"]


def test_runner_envs_are_blocks_of_one_batch_actuator_randomization_included():
    """Env runner k's worlds are worlds k*N.. of one make_vec(K*N).reset(seed): the same initial
    states, the same randomized actuator gains and strengths, the same rollout -- whatever seed RLlib
    passes to the runner's reset (it passes seed + worker_index, which would overlap the blocks)."""
    acts = configs.load("go1_dc_motor").actuators  # stiffness / damping / strength randomized per episode
    n, seed = 3, 11
    whole = gym.make_vec(PEND, num_envs=2 * n, vectorization_mode="vector_entry_point", actuators=dict(acts))
    obs_all, _ = whole.reset(seed=seed)
    params_all = _params(whole)
    actions = np.random.default_rng(0).uniform(-1, 1, (5, 2 * n, 1)).astype(np.float32)
    traj_all = [whole.step(a)[0] for a in actions]
    ctx = {**runner_env_config(PEND, seed, n, acts), "num_envs": n}
    for k in (0, 1):
        env = make_runner_env(ctx)
        runner = SimpleNamespace(worker_index=k + 1, env=DictInfoToList(env))  # what RLlib hands the callback
        assign_runner_worlds(env_runner=runner, metrics_logger=None, env=env.unwrapped, env_context=ctx)
        worlds = find_runner_worlds(runner.env)
        assert worlds.runner_index == k and worlds.world_seeds == [seed + k * n + i for i in range(n)]
        obs, _ = runner.env.reset(seed=seed + k + 1)  # RLlib's per-runner seed: replaced by the block
        rows = slice(k * n, (k + 1) * n)
        np.testing.assert_array_equal(obs, obs_all[rows])
        for name, v in _params(env).items():
            np.testing.assert_array_equal(v, params_all[name][rows], err_msg=name)
        for a, want in zip(actions, traj_all):
            np.testing.assert_allclose(env.step(a[rows])[0], want[rows], rtol=0, atol=1e-6)
        env.close()
    a, b = (_params(whole)["stiffness"][i * n:(i + 1) * n] for i in (0, 1))
    assert not np.array_equal(a, b)  # the two runners' worlds are randomized differently
    whole.close()
    with pytest.raises(ValueError, match="VECTOR_ENTRY_POINT"):
        make_runner_env(runner_env_config(PEND, seed, n))
    with pytest.raises(ValueError, match="no RunnerWorlds"):
        find_runner_worlds(whole)


def _rank_main(rank: int, world: int, port: int, seed: int, n: int, out: str) -> None:
    """One torchrun-style rank: its plan from the environment, its own batched env on its device, and a
    collective over gloo (what DDP's gradient all-reduce does on NCCL)."""
    import torch.distributed as dist

    import actuator_gym  # noqa: F401

    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1",
                      MASTER_PORT=str(port))
    plan = rank_plan(seed, n, device="cpu")
    dist.init_process_group(plan.backend, rank=plan.rank, world_size=plan.world_size)
    env = gym.make_vec(PEND, num_envs=n, vectorization_mode="vector_entry_point", device=plan.device)
    obs, _ = env.reset(seed=plan.env_seed)
    mine = torch.as_tensor(np.asarray(obs, dtype=np.float64))
    gathered = [torch.zeros_like(mine) for _ in range(world)]
    dist.all_gather(gathered, mine)
    seeds = [torch.zeros(n, dtype=torch.int64) for _ in range(world)]
    dist.all_gather(seeds, torch.tensor(plan.world_seeds, dtype=torch.int64))
    if plan.is_main:
        np.savez(out, obs=torch.cat(gathered).numpy(), seeds=torch.cat(seeds).numpy(), device=plan.device)
    dist.destroy_process_group()
    env.close()


def test_two_ranks_on_gloo_build_their_own_envs_with_rank_offset_seeds(tmp_path):
    import torch.multiprocessing as mp

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    world, seed, n = 2, 4, 3
    out = str(tmp_path / "ranks.npz")
    mp.spawn(_rank_main, args=(world, port, seed, n, out), nprocs=world, join=True)
    got = np.load(out)
    assert got["seeds"].tolist() == list(range(seed, seed + world * n))  # rank r: seed + r*n + i, disjoint
    assert str(got["device"]) == "cpu"
    whole = gym.make_vec(PEND, num_envs=world * n, vectorization_mode="vector_entry_point")
    want, _ = whole.reset(seed=seed)
    np.testing.assert_array_equal(got["obs"], np.asarray(want, dtype=np.float64))  # the ranks = one batch of 2n
    whole.close()


EXPERIMENT = __import__("pathlib").Path(__file__).resolve().parents[1] / "data" / "ray_pendulum_short.yaml"


@pytest.mark.parametrize("library", ["rsl_rl", "skrl"])
def test_torchrun_launcher_one_process_on_cpu(tmp_path, monkeypatch, library):
    """The torchrun entry point without torchrun: one rank on the CPU, the library's PPO, rank 0's files."""
    import json

    from actuator_gym.tools.torchrun_train import main as torchrun_main

    for var in ("RANK", "LOCAL_RANK", "WORLD_SIZE"):
        monkeypatch.delenv(var, raising=False)
    args = ["--experiment", str(EXPERIMENT), "--device", "cpu", "--library", library]
    assert torchrun_main(args + ["--iterations", "1", "--out", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["engine"] == f"{library}-torchrun" and summary["world_size"] == 1 and summary["iterations"] == 1
    assert summary["timesteps"] == 16 * 32  # num_envs x n_steps of the experiment, one rank
    (rank,) = summary["ranks"]
    assert rank["rank"] == 0 and rank["device"] == "cpu" and rank["pid"] == os.getpid()
    assert rank["world_seeds"] == list(range(7, 23))  # the experiment's seed 7, 16 worlds
    assert (tmp_path / "model.pt").is_file()
    # several ranks on the CPU: rsl_rl's distributed mode is NCCL-only -> a clear refusal, nothing written
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("LOCAL_RANK", "0")
    with pytest.raises(SystemExit, match=f"{library}'s distributed mode needs CUDA"):
        torchrun_main(args + ["--out", str(tmp_path / "two")])
    assert not (tmp_path / "two").exists()
