"""What a config leaves to the asset: ``None`` means "take the value from the asset", as in Isaac Lab.

A named config's field set to ``None`` (``stiffness=None``, ``actuator_effort_limit=None``, ...)
is filled per joint from the asset the model is built on -- an :class:`AssetJoints`, which the
wrapper and the batched tasks make from their MuJoCo model
(:class:`~actuator_gym.backends.mujoco_asset.MjcfJoints`). :func:`resolve_cfg` returns a resolved
copy; the user's config is never changed (``model.cfg`` is it, ``model.resolved_cfg`` the copy).

=========================  ==================  ===================================================
field (None)               asset quantity       where the asset has none
=========================  ==================  ===================================================
``stiffness``              ``"stiffness"``      ``ValueError`` naming the joints
``damping``                ``"damping"``        ``ValueError`` naming the joints
``actuator_effort_limit``  ``"effort_limit"``   ``ValueError`` naming the joints
``joint_effort_limit``     ``"effort_limit"``   +inf (no solver limit; ImplicitActuatorCfg only)
``actuator_velocity_limit`` ``"velocity_limit"`` +inf (MJCF has no velocity limit)
=========================  ==================  ===================================================

Without an asset (``cfg.build(joint_names=...)``) unset limits are +inf, and ``stiffness=None`` /
``damping=None`` are a ``ValueError`` (a gain of 0 would be a limp joint, silently).
Which fields a config resolves is its ``_ASSET_FIELDS`` (learned nets: the limits only).
"""

from __future__ import annotations

import copy
import math
import re
from typing import Any, Protocol, Sequence, runtime_checkable

__all__ = ["AssetJoints", "JOINT_PROPERTY_FIELDS", "resolve_cfg", "check_class_type"]

JOINT_PROPERTY_FIELDS = ("armature", "friction", "dynamic_friction", "viscous_friction")
"""Config fields written into the physics model per joint (not part parameters)."""

_QUANTITY = {
    "stiffness": ("stiffness", True),
    "damping": ("damping", True),
    "actuator_effort_limit": ("effort_limit", True),
    "joint_effort_limit": ("effort_limit", False),
    "actuator_velocity_limit": ("velocity_limit", False),
}
"""Field -> (asset quantity, required: whether a joint without it is an error)."""


@runtime_checkable
class AssetJoints(Protocol):
    """The per-joint values an asset authors (e.g. an MJCF)."""

    name: str
    """How messages name the asset (e.g. "the MJCF")."""

    def joint_values(self, quantity: str, joint_names: Sequence[str]) -> list[float | None]:
        """``quantity`` (``"stiffness"`` [N·m/rad], ``"damping"`` [N·m·s/rad], ``"effort_limit"``
        [N·m], ``"velocity_limit"`` [rad/s]) of each joint, None where the asset has none."""
        ...


def resolve_cfg(cfg: Any, joint_names: Sequence[str], asset: AssetJoints | None) -> Any:
    """``cfg`` with its None fields of ``cfg._ASSET_FIELDS`` filled per joint of ``joint_names``
    from ``asset`` (a shallow copy; ``cfg`` itself when nothing is None)."""
    owner = type(cfg).__name__
    todo = [f for f in getattr(cfg, "_ASSET_FIELDS", ()) if getattr(cfg, f, 0.0) is None]
    if not todo:
        return cfg
    if asset is not None and not isinstance(asset, AssetJoints):
        raise TypeError(f"{owner}: asset must provide joint_values(quantity, joint_names), got {type(asset).__name__}")
    out = copy.copy(cfg)
    for f in todo:
        quantity, required = _QUANTITY[f]
        if asset is None:
            if required and quantity != "effort_limit":
                raise ValueError(
                    f"{owner}: {f}=None takes the value from the asset, and this model is built without one "
                    f"(cfg.build(joint_names=...)); give {f} for joints {list(joint_names)}"
                )
            setattr(out, f, math.inf)
            continue
        values = list(asset.joint_values(quantity, list(joint_names)))
        missing = [n for n, v in zip(joint_names, values) if v is None]
        if missing and required:
            raise ValueError(
                f"{owner}: {f}=None takes the value from the asset, and {asset.name} has no {quantity} for "
                f"joints {missing}; give {f} for them"
            )
        setattr(out, f, [math.inf if v is None else float(v) for v in values])
    return out


def check_class_type(cfg: Any) -> None:
    """``class_type`` (Isaac Lab's actuator class): None, a class or a ``"module:Class"`` /
    ``"module.Class"`` string whose class name is the config's name without ``Cfg``
    (``DCMotorCfg`` -> ``DCMotor``); else a ``ValueError`` (``TypeError`` for other types)."""
    ct = cfg.class_type
    if ct is None:
        return
    owner = type(cfg).__name__
    expected = owner[:-3] if owner.endswith("Cfg") else owner
    if isinstance(ct, str):
        name = re.split(r"[.:]", ct.strip())[-1]
    elif isinstance(ct, type):
        name = ct.__name__
    else:
        raise TypeError(f"{owner}: class_type must be a class or a 'module:Class' string, got {type(ct).__name__} {ct!r}")
    if name != expected:
        raise ValueError(
            f"{owner}: class_type {ct!r} names the actuator class {name!r}, which is not this config's model; "
            f"allowed: {expected!r} (or None)"
        )
