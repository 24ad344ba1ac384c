"""Physics backends. ``base`` is importable without any engine; concrete backends import their
engine (mujoco, warp) when they are imported, never at package import."""

from .base import JointInfo, PhysicsBackend

__all__ = ["PhysicsBackend", "JointInfo"]
