"""``ActuatorGroups``: the joint groups and the rotor groups of one model, with one ``reset`` /
``parameters`` / ``seed``.

    groups = ActuatorGroups(joints=collection, rotors=rotor_groups)   # either may be None
    groups.reset(env_ids)        # every group of both kinds
    groups.seed(s)               # env i of every group from s + i (or seed=[s0, s1, ...]: env i from s_i)
    groups.parameters()          # {group: {parameter: (num_envs, group joints or rotors)}}
    groups["legs"], groups["rotors"]   # the Actuator / the Thruster of a group

Joint groups are an :class:`~actuator_gym.ActuatorCollection` over the model's 1-DOF joints; rotor
groups are :class:`~actuator_gym.runtime.rotors.RotorGroups` (``ThrusterCfg`` groups). :func:`split_groups`
tells a ``{group: config}`` mapping apart into the two kinds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Iterator

import torch

from .._checks import UnknownNameError
from ..actuators.thruster import ThrusterCfg
from ..randomization.streams import env_seeds

__all__ = ["ActuatorGroups", "split_groups"]


def split_groups(cfgs: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, ThrusterCfg]]:
    """``(joint group configs, rotor group configs)`` of ``{group: config}``, each in the given order
    (rotor groups: the :class:`ThrusterCfg` entries)."""
    joints = {g: c for g, c in cfgs.items() if not isinstance(c, ThrusterCfg)}
    rotors = {g: c for g, c in cfgs.items() if isinstance(c, ThrusterCfg)}
    return joints, rotors


class ActuatorGroups(Mapping):
    """Read-only mapping ``group name -> model`` (an ``Actuator`` or a ``Thruster``) over both kinds.

    Args:
        joints: the joint groups (an :class:`~actuator_gym.ActuatorCollection`) or None.
        rotors: the rotor groups (:class:`~actuator_gym.runtime.rotors.RotorGroups`) or None.
    """

    def __init__(self, joints: Any = None, rotors: Any = None):
        if joints is None and rotors is None:
            raise ValueError("ActuatorGroups: give joint groups, rotor groups or both")
        both = set(joints or ()) & set(rotors or ())
        if both:
            raise ValueError(f"ActuatorGroups: group names {sorted(both)} are used by joint and rotor groups")
        self.joints = joints
        """The joint groups (:class:`~actuator_gym.ActuatorCollection`), or None."""
        self.rotors = rotors
        """The rotor groups (:class:`~actuator_gym.runtime.rotors.RotorGroups`), or None."""
        self.num_envs = (joints if joints is not None else rotors).num_envs

    def _kinds(self) -> list[Any]:
        return [k for k in (self.joints, self.rotors) if k is not None]

    def __getitem__(self, name: str) -> Any:
        for kind in self._kinds():
            if isinstance(name, str) and name in kind:
                return kind[name]
        raise UnknownNameError(f"unknown actuator group {name!r}; groups are {list(self)}")

    def __iter__(self) -> Iterator[str]:
        for kind in self._kinds():
            yield from kind

    def __len__(self) -> int:
        return sum(len(k) for k in self._kinds())

    def reset(self, env_ids: Any = None) -> None:
        """Reset the listed envs (None = all) of every group of both kinds; other envs are untouched."""
        if self.joints is not None:
            self.joints.reset(env_ids)
        if self.rotors is not None:
            self.rotors.reset(env_ids.cpu() if isinstance(env_ids, torch.Tensor) else env_ids)

    def seed(self, seed: Any) -> None:
        """Re-seed every group (joint groups as :meth:`ActuatorCollection.seed`, rotor groups as
        :meth:`RotorGroups.seed`, both from ``seed``: an integer ``s`` in ``[0, 2**64)``, env ``i``
        getting ``s + i``, or a sequence of ``num_envs`` seeds); validated before anything changes."""
        seed = env_seeds(seed, self.num_envs, "ActuatorGroups.seed", allow_none=False)
        for kind in self._kinds():
            kind.seed(seed)

    def parameters(self) -> dict[str, dict[str, torch.Tensor]]:
        """``{group: {parameter: values in force (num_envs, group joints or rotors)}}``."""
        out: dict[str, dict[str, torch.Tensor]] = {}
        for kind in self._kinds():
            out.update(kind.parameters())
        return out

    def parameters_version(self) -> tuple[int, ...]:
        """Every group's :attr:`~actuator_gym.actuators.batch.BatchModel.parameters_version`: equal keys,
        equal :meth:`parameters`."""
        return tuple(self[g].parameters_version for g in self)

    def set_parameter(self, group: str, name: str, value: Any, env_ids: Any = None, joint_ids: Any = None) -> None:
        """Set parameter ``name`` of group ``group`` now (:meth:`~actuator_gym.actuators.batch.BatchModel.set_parameter`:
        validated, in force at once, the new nominal over later resets); ``joint_ids`` are the
        group's joint / rotor indices or regexes over their names."""
        self[group].set_parameter(name, value, env_ids=env_ids, joint_ids=joint_ids)

    def randomized(self) -> list[str]:
        """Groups with a randomized parameter (what a reset re-draws) or on a bus (draws of its own)."""
        bused = {g for bus in getattr(self.joints, "buses", {}).values() for g in bus.groups}
        out = [g for g in (self.joints or ()) if self.joints[g].randomized_parameters() or g in bused]
        return out + (self.rotors.randomized() if self.rotors is not None else [])

    def __repr__(self) -> str:
        return f"ActuatorGroups(joints={self.joints!r}, rotors={self.rotors!r})"
