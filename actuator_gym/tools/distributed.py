"""Where each process of a distributed run gets its worlds, seeds and device.

One rule for every engine that splits a run over processes (Ray RLlib env runners,
``torchrun`` ranks of rsl_rl / skrl): the run's worlds are numbered ``0 .. P*N - 1`` over its ``P``
processes of ``N`` worlds each, process ``p`` steps worlds ``p*N .. p*N + N - 1``, and world ``j`` is
seeded ``seed + j`` (:func:`block_seed`). A process's batched env is therefore built and reset with
``seed + p*N`` (env ``i`` of it gets ``seed + p*N + i``, the per-env rule of :mod:`actuator_gym.randomization.streams`),
so the ``P`` processes together roll out exactly the worlds of one
``gymnasium.make_vec(task, num_envs=P*N).reset(seed=seed)`` -- the same initial states, the same
actuator randomization (which the task draws from the same per-env seeds), whatever ``P``. No two
processes share a world seed, and a process restarted with the same index gets the same worlds.

``torchrun`` (:func:`rank_plan`): the rank, local rank and world size come from the environment
variables torchrun sets (``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``); rank ``r`` builds its own batched
env on its own device -- ``cuda:<LOCAL_RANK>`` on a GPU node (NCCL), ``cpu`` otherwise (gloo, the CPU
stand-in the tests use) -- seeded by :func:`block_seed` with process index ``r``, and seeds its torch
generator with ``seed + r`` (what rsl_rl's and skrl's distributed runners do themselves).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping

from .._checks import SEED_LIMIT

__all__ = ["block_seed", "world_seeds", "RankPlan", "rank_plan"]


def _index(v, name: str, hi: int | None = None) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 0 or (hi is not None and v >= hi):
        rng = f"[0, {hi})" if hi is not None else ">= 0"
        raise ValueError(f"{name} must be an integer {rng}, got {v!r}")
    return v


def block_seed(seed: int, index: int, num_envs: int) -> int:
    """The base seed of process ``index``'s ``num_envs`` worlds: ``seed + index * num_envs`` (its env
    ``i`` is world ``index * num_envs + i``, seeded ``seed + index * num_envs + i``). ``ValueError``
    naming the argument for a negative or non-integer one, or when the last world's seed would reach
    2**64 (the seed range of :func:`actuator_gym.randomization.streams.env_seeds`)."""
    _index(seed, "seed", SEED_LIMIT)
    _index(index, "index")
    if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
        raise ValueError(f"num_envs must be an integer >= 1, got {num_envs!r}")
    base = seed + index * num_envs
    if base + num_envs - 1 >= SEED_LIMIT:
        raise ValueError(f"seed {seed} + index {index} * num_envs {num_envs}: the last world's seed reaches 2**64; "
                         f"allowed: seed + (index + 1) * num_envs - 1 < 2**64")
    return base


def world_seeds(seed: int, index: int, num_envs: int) -> list[int]:
    """Every world seed of process ``index``: ``[block_seed + i for i in range(num_envs)]``."""
    base = block_seed(seed, index, num_envs)
    return [base + i for i in range(num_envs)]


@dataclass(frozen=True)
class RankPlan:
    """One ``torchrun`` rank's share of a run."""

    rank: int
    """Global rank, ``[0, world_size)``: the process index of :func:`block_seed`."""
    local_rank: int
    """Rank on this node: the CUDA device index."""
    world_size: int
    device: str
    """``"cuda:<local_rank>"`` or ``"cpu"``."""
    backend: str
    """``torch.distributed`` backend: ``"nccl"`` on CUDA, ``"gloo"`` on the CPU."""
    env_seed: int
    """Seed of this rank's batched env (:func:`block_seed` of the run seed, rank, num_envs)."""
    torch_seed: int
    """``seed + rank``: this rank's torch seed (exploration noise differs per rank)."""
    num_envs: int

    @property
    def world_seeds(self) -> list[int]:
        return [self.env_seed + i for i in range(self.num_envs)]

    @property
    def is_main(self) -> bool:
        """Rank 0 writes the run's files."""
        return self.rank == 0


def rank_plan(seed: int, num_envs: int, *, device: str = "auto", environ: Mapping[str, str] | None = None,
              cuda_devices: int | None = None) -> RankPlan:
    """This process's :class:`RankPlan` from torchrun's ``RANK`` / ``LOCAL_RANK`` / ``WORLD_SIZE``
    (absent: a single process, rank 0 of 1). ``device``: ``"auto"`` (``cuda`` when this node has
    GPUs, else ``cpu``), ``"cuda"`` or ``"cpu"``; ``cuda_devices``: this node's GPU count (default:
    ``torch.cuda.device_count()``). ``ValueError`` naming the variable for a malformed one, a rank
    outside ``[0, WORLD_SIZE)``, or a ``LOCAL_RANK`` without its GPU."""
    env = os.environ if environ is None else environ

    def var(name: str, default: int) -> int:
        text = env.get(name)
        if text is None:
            return default
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"environment variable {name} must be an integer, got {text!r}") from None

    world = var("WORLD_SIZE", 1)
    if world < 1:
        raise ValueError(f"environment variable WORLD_SIZE must be >= 1, got {world}")
    rank, local = var("RANK", 0), var("LOCAL_RANK", 0)
    for name, v in (("RANK", rank), ("LOCAL_RANK", local)):
        if not 0 <= v < world:
            raise ValueError(f"environment variable {name} must be in [0, WORLD_SIZE={world}), got {v}")
    if device not in ("auto", "cuda", "cpu"):
        raise ValueError(f"device must be one of ['auto', 'cuda', 'cpu'], got {device!r}")
    if cuda_devices is None:
        import torch

        cuda_devices = torch.cuda.device_count() if torch.cuda.is_available() else 0
    kind = ("cuda" if cuda_devices > 0 else "cpu") if device == "auto" else device
    if kind == "cuda" and local >= cuda_devices:
        raise ValueError(f"LOCAL_RANK {local} needs GPU cuda:{local}, but this node has {cuda_devices} GPU(s); "
                         f"allowed: torchrun --nproc-per-node at most {cuda_devices}, or device='cpu'")
    return RankPlan(
        rank=rank, local_rank=local, world_size=world,
        device=f"cuda:{local}" if kind == "cuda" else "cpu", backend="nccl" if kind == "cuda" else "gloo",
        env_seed=block_seed(seed, rank, num_envs), torch_seed=_index(seed, "seed", SEED_LIMIT) + rank, num_envs=num_envs,
    )
