"""The batched task's joint properties: Isaac Lab-style config fields written into its MuJoCo model.

One mechanism with :class:`~actuator_gym.wrappers.ActuatorWrapper`
(:mod:`actuator_gym.backends.mujoco_asset`): ``armature``, ``friction``, ``dynamic_friction``,
``viscous_friction`` of each joint group are written into the task's ``MjModel`` before the
batched backend is built from it, so every world starts from them (and ``model_randomization``
of ``dof_armature`` etc. randomizes around them); fields left None keep the MJCF's values.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..actuators.asset import JOINT_PROPERTY_FIELDS
from ..backends.mujoco import one_dof_joint_names
from ..backends.mujoco_asset import MjcfJoints, apply_joint_properties, plan_joint_properties

__all__ = ["MjcfJoints", "write_joint_properties"]

_FROM_MJCF_TEXT = ("newton",)
"""Backends built from the MJCF text, not from the task's MjModel (they would not see the writes)."""


def write_joint_properties(model: Any, joint_cfgs: Mapping[str, Any], backend: str, owner: str) -> None:
    """Check and write the joint groups' joint properties into ``model`` (nothing is written when a
    check fails); ``ValueError`` on a backend that builds its worlds from the MJCF text."""
    writes = plan_joint_properties(model, joint_cfgs, one_dof_joint_names(model), owner)
    if writes and backend in _FROM_MJCF_TEXT:
        groups = [g for g, c in joint_cfgs.items()
                  if any(getattr(c, f, None) is not None for f in JOINT_PROPERTY_FIELDS)]
        raise ValueError(
            f"{owner}: groups {groups} set joint properties ({' / '.join(JOINT_PROPERTY_FIELDS)}), "
            f"which backend={backend!r} does not take from the task's model (it builds its worlds from the MJCF text); "
            "set them in the MJCF, or use backend='mujoco' or 'mujoco_warp'"
        )
    apply_joint_properties(writes)
