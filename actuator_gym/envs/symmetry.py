"""Mirror symmetry of a task: how its observations and actions map under a reflection of the world.

A legged robot that is left-right symmetric, on a floor that is, gets the mirrored observation when
its mirrored state is stepped with the mirrored action, and the same reward. Training can use that
(rsl_rl's symmetry extension: mirrored samples added to every mini-batch, or a loss that makes the
policy agree with itself; Mittal et al., ICRA 2024). A task declares its reflection as a
:class:`MirrorSpec` (:meth:`Mirrorable.mirror_spec`); :func:`actuator_gym.adapters.rsl_rl_mirror` is
the augmentation function rsl_rl calls.

Example::

    >>> from actuator_gym.envs.symmetry import MirrorSpec
    >>> spec = MirrorSpec(obs_index=(1, 0, 2), obs_sign=(1, 1, -1), action_index=(1, 0), action_sign=(-1, -1))
    >>> spec.mirror_obs([[1.0, 2.0, 3.0]]).tolist()
    [[2.0, 1.0, -3.0]]
    >>> spec.mirror_obs(spec.mirror_obs([[1.0, 2.0, 3.0]])).tolist()
    [[1.0, 2.0, 3.0]]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np

__all__ = ["MirrorSpec", "Mirrorable", "joint_mirror", "task_mirror"]


def _check_reflection(index: tuple, sign: tuple, what: str) -> None:
    n = len(index)
    if len(sign) != n:
        raise ValueError(f"MirrorSpec: {what}_index has {n} entries but {what}_sign has {len(sign)}")
    if sorted(index) != list(range(n)):
        raise ValueError(f"MirrorSpec: {what}_index must be a permutation of 0..{n - 1}, got {list(index)}")
    if any(s not in (-1.0, 1.0) for s in sign):
        raise ValueError(f"MirrorSpec: {what}_sign entries must be +1 or -1, got {list(sign)}")
    for i in range(n):  # a reflection applied twice is the identity
        j = index[i]
        if index[j] != i or sign[i] != sign[j]:
            raise ValueError(f"MirrorSpec: {what}_index / {what}_sign is not an involution at entry {i} "
                             f"(maps to {j}, which maps to {index[j]}; signs {sign[i]:+g}, {sign[j]:+g})")


@dataclass(frozen=True)
class MirrorSpec:
    """A reflection of flat observations and actions: ``mirrored[..., i] = sign[i] * x[..., index[i]]``.

    Checked at construction: each index is a permutation and, with its signs, an involution (mirroring
    twice gives back the input exactly)."""

    obs_index: tuple[int, ...]
    """Observation entry that entry ``i`` of the mirrored observation takes."""
    obs_sign: tuple[float, ...]
    """+1 or -1 per observation entry (-1: the quantity changes sign under the reflection)."""
    action_index: tuple[int, ...]
    """Action entry that entry ``i`` of the mirrored action takes."""
    action_sign: tuple[float, ...]
    """+1 or -1 per action entry."""
    _torch: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for what in ("obs", "action"):
            index = tuple(int(i) for i in getattr(self, f"{what}_index"))
            sign = tuple(float(s) for s in getattr(self, f"{what}_sign"))
            _check_reflection(index, sign, what)
            object.__setattr__(self, f"{what}_index", index)
            object.__setattr__(self, f"{what}_sign", sign)

    def mirror_obs(self, obs: Any) -> Any:
        """``obs`` (``(..., obs_dim)``, numpy or torch) mirrored; a new array of the same type."""
        return self._apply(obs, self.obs_index, self.obs_sign, "obs")

    def mirror_actions(self, actions: Any) -> Any:
        """``actions`` (``(..., action_dim)``, numpy or torch) mirrored; a new array of the same type."""
        return self._apply(actions, self.action_index, self.action_sign, "action")

    def _apply(self, x: Any, index: tuple, sign: tuple, what: str) -> Any:
        if type(x).__module__.startswith("torch"):
            key = (what, x.device, x.dtype)
            if key not in self._torch:
                import torch

                self._torch[key] = (torch.as_tensor(index, device=x.device),
                                    torch.as_tensor(sign, dtype=x.dtype, device=x.device))
            idx, sgn = self._torch[key]
        else:
            x = np.asarray(x)
            idx, sgn = np.asarray(index), np.asarray(sign, dtype=x.dtype if x.dtype.kind == "f" else np.float64)
        if x.shape[-1] != len(index):
            raise ValueError(f"MirrorSpec: {what} has {x.shape[-1]} entries in its last axis, the spec {len(index)}")
        return x[..., idx] * sgn


def joint_mirror(joint_names: Sequence[str], swap: Sequence[tuple[str, str]], negate: Sequence[str]) -> tuple[list[int], list[float]]:
    """Index and sign of a per-joint block: joint names with the substrings of each ``swap`` pair
    exchanged (e.g. ``("FL_", "FR_")``) name the mirrored joint; joints containing a substring of
    ``negate`` (e.g. ``"_hip_joint"``) change sign. Raises ``ValueError`` naming a joint whose mirror
    is not in ``joint_names``."""
    names = list(joint_names)
    index, sign = [], []
    for name in names:
        other = name
        for a, b in swap:
            if a in name:
                other = name.replace(a, b)
                break
            if b in name:
                other = name.replace(b, a)
                break
        if other not in names:
            raise ValueError(f"joint_mirror: the mirror of joint {name!r} would be {other!r}, which is not among {names}")
        index.append(names.index(other))
        sign.append(-1.0 if any(s in name for s in negate) else 1.0)
    return index, sign


@runtime_checkable
class Mirrorable(Protocol):
    """A task that knows its mirror symmetry."""

    def mirror_spec(self) -> MirrorSpec | None:
        """The reflection of this task's observations and actions, or None when its current
        configuration has none (e.g. a user-supplied model that may not be symmetric)."""


def task_mirror(env: Any) -> MirrorSpec:
    """The :class:`MirrorSpec` of ``env`` (a task, or a Gymnasium env / vector env around one);
    ``ValueError`` when the task declares none."""
    task = getattr(env, "unwrapped", env)
    task = getattr(task, "task", task)  # a single TaskEnv holds its one-env task
    spec = task.mirror_spec() if isinstance(task, Mirrorable) else None
    if spec is None:
        raise ValueError(f"{type(task).__name__} declares no mirror symmetry (mirror_spec): symmetry training needs one")
    return spec
