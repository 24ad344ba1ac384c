"""``Bus``: the command bus between the host and a set of servos (one sync-write frame per control step).

Per env and per **control step** (not per substep) the host sends one frame with the step's
commands of every group on the bus (:meth:`ActuatorCollection.begin_step
<actuator_gym.runtime.collection.ActuatorCollection.begin_step>` starts the step; the frame holds the
``target_command`` the step's first substep sees). One draw per env decides for all the bus's groups:

* with probability ``bus_hold_probability`` the frame **repeats** the previous one: the servos keep
  executing the command they have (``holds`` counts it);
* with probability ``bus_drop_probability`` the frame is **lost**: the servos keep their last command
  (``drops`` counts it). For servos that hold their last target both have the same effect on the
  joint; they are counted apart;
* otherwise it is **delivered** ``U{0..bus_jitter}`` substeps into the step (the previous command
  applies until then). A delay of the step's substeps or more arrives at the next step's start (it is
  clamped there, before that step's own frame).

After a reset of env ``i`` its servos' command is the reset targets (what ``target_command`` holds when
:meth:`~actuator_gym.runtime.collection.ActuatorCollection.reset_commands` is called, as
:class:`~actuator_gym.runtime.ActuatorRig` does after writing them; without that call, the first
command after the reset), and nothing is in flight.

Draws: two uniform words per env and control step from a per-env stream of the bus
(:mod:`actuator_gym.randomization.streams`), whatever the outcome, so env ``i`` of a collection seeded
``s`` draws exactly what a one-env collection seeded ``s + i`` draws, the streams run on across resets
and a reset of one env changes no other env's draws.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from ..randomization.streams import EnvStreams

__all__ = ["Bus", "DELIVERED", "HELD", "DROPPED"]

DELIVERED, HELD, DROPPED = 0, 1, 2
"""The outcomes of a frame (:attr:`Bus.outcome`)."""


class Bus:
    """One bus (module doc) over the collection columns ``cols`` of its ``groups``.

    Args:
        name: the bus's name (messages, ``collection.buses``).
        groups: the groups on it.
        cols: their columns in the collection.
        num_envs: envs.
        jitter: ``bus_jitter`` [substeps]; hold, drop: the probabilities.
        seeds: ``(num_envs,)`` the bus's per-env seeds.
        device: where the collection's command buffers live.
    """

    def __init__(self, name: str, groups: Sequence[str], cols: Sequence[int], num_envs: int, jitter: int,
                 hold: float, drop: float, seeds: np.ndarray, device: torch.device, dtype: torch.dtype):
        self.name, self.groups = name, tuple(groups)
        self.jitter, self.hold_probability, self.drop_probability = int(jitter), float(hold), float(drop)
        self.num_envs = int(num_envs)
        self.cols = torch.as_tensor(np.asarray(cols, dtype=np.int64), device=device)
        self.streams = EnvStreams(self.num_envs, seeds, owner=f"bus '{name}'")
        self.device = device
        self.pending = torch.zeros((3, self.num_envs, len(cols)), dtype=dtype, device=device)
        """The frames in flight (position, velocity, effort commands of the bus's columns)."""
        n = self.num_envs
        self.outcome = np.zeros(n, dtype=np.int8)
        """This control step's frame per env: :data:`DELIVERED`, :data:`HELD` or :data:`DROPPED`."""
        self.delay = np.zeros(n, dtype=np.int64)
        """This control step's arrival substep per env (drawn whatever the outcome)."""
        self.frames = np.zeros(n, dtype=np.int64)
        """Frames sent per env since its last reset (control steps)."""
        self.holds = np.zeros(n, dtype=np.int64)
        """Frames that repeated the previous one, per env since its last reset."""
        self.drops = np.zeros(n, dtype=np.int64)
        """Frames lost, per env since its last reset."""
        self._in_flight = np.zeros(n, dtype=bool)  # a delivered frame that has not arrived
        self._fresh = np.ones(n, dtype=bool)  # built or reset, the reset targets not latched yet
        self._latch: np.ndarray | None = None  # envs whose frame is taken at the next substep
        self._schedule: list[tuple[int, np.ndarray]] = []  # (substep, envs) arrivals of this step
        self._k = 0  # substeps since begin()
        self.begun = False

    # -- one control step ------------------------------------------------------------------------
    def begin(self) -> None:
        """A control step starts: frames still in flight arrive now; this step's frame is drawn."""
        if self._in_flight.any():
            self._arrive(None, np.flatnonzero(self._in_flight))
        u = self.streams.for_envs().random((self.num_envs, 2))
        hold, drop = self.hold_probability, self.drop_probability
        self.outcome[:] = np.where(u[:, 0] < hold, HELD, np.where(u[:, 0] < hold + drop, DROPPED, DELIVERED))
        self.delay[:] = np.minimum((u[:, 1] * (self.jitter + 1)).astype(np.int64), self.jitter)
        self.frames += 1
        self.holds += self.outcome == HELD
        self.drops += self.outcome == DROPPED
        sent = np.flatnonzero(self.outcome == DELIVERED)
        self._latch = sent
        self._schedule = [(int(k), sent[self.delay[sent] == k]) for k in np.unique(self.delay[sent])]
        self._k = 0
        self.begun = True

    def substep(self, targets: Sequence[torch.Tensor], delivered: Sequence[torch.Tensor]) -> None:
        """Before the groups compute a substep: the servos' commands ``delivered`` (the collection's
        ``(num_envs, num_joints)`` buffers, written in the bus's columns) from the ``targets``."""
        if self._fresh.any():  # reset without reset_commands(): the first command after the reset
            self.latch_commands(targets, delivered, np.flatnonzero(self._fresh))
        if self._latch is not None:
            ids = self._latch
            self._latch = None
            if ids.size:
                e = torch.as_tensor(ids, device=self.device)
                for ch, src in enumerate(targets):
                    self.pending[ch, e] = src[e[:, None], self.cols[None, :]]
                self._in_flight[ids] = True
        k = self._k
        while self._schedule and self._schedule[0][0] <= k:
            _, ids = self._schedule.pop(0)
            self._arrive(delivered, ids)
        self._k = k + 1

    def _arrive(self, delivered: Sequence[torch.Tensor] | None, ids: np.ndarray) -> None:
        ids = ids[self._in_flight[ids]]  # (a reset since cancelled them)
        if not ids.size:
            return
        if delivered is None:
            delivered = self._delivered
        e = torch.as_tensor(ids, device=self.device)
        for ch, dst in enumerate(delivered):
            dst[e[:, None], self.cols[None, :]] = self.pending[ch, e]
        self._in_flight[ids] = False

    def bind(self, delivered: Sequence[torch.Tensor]) -> None:
        """The collection's delivered-command buffers (position, velocity, effort)."""
        self._delivered = tuple(delivered)

    # -- resets ----------------------------------------------------------------------------------
    def reset(self, env_ids: np.ndarray | None) -> None:
        """Envs ``env_ids`` (None: all) were reset: nothing in flight, counters cleared, their
        servos' command the reset targets (:meth:`latch_commands`, or the first command after it)."""
        ids = slice(None) if env_ids is None else env_ids
        self._in_flight[ids] = False
        self._fresh[ids] = True
        for c in (self.frames, self.holds, self.drops):
            c[ids] = 0

    def latch_commands(self, targets: Sequence[torch.Tensor], delivered: Sequence[torch.Tensor],
                       env_ids: np.ndarray | None) -> None:
        """The servos' commands of ``env_ids`` (None: all) := ``targets`` now (the reset targets)."""
        ids = np.arange(self.num_envs) if env_ids is None else np.asarray(env_ids, dtype=np.int64).reshape(-1)
        if not ids.size:
            return
        e = torch.as_tensor(ids, device=self.device)
        for src, dst in zip(targets, delivered):
            dst[e[:, None], self.cols[None, :]] = src[e[:, None], self.cols[None, :]]
        self._fresh[ids] = False

    def seed(self, seeds: np.ndarray) -> None:
        """Re-key the per-env streams (the counters restart)."""
        self.streams.seed(seeds)

    def __repr__(self) -> str:
        return (f"Bus({self.name!r}, groups={list(self.groups)}, jitter={self.jitter}, "
                f"hold={self.hold_probability:g}, drop={self.drop_probability:g})")
