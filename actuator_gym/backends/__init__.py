"""Physics backends. ``base`` is importable without any engine; concrete backends import their
engine (mujoco, warp) when they are imported, never at package import."""

from typing import Any

from .base import JointInfo, PhysicsBackend

__all__ = ["PhysicsBackend", "JointInfo", "BACKENDS", "make_backend"]

BACKENDS = ("mujoco", "mujoco_warp", "newton")
"""Names accepted by ``backend=``: the batched CPU backend (default), MuJoCo-Warp, Newton."""


def make_backend(name: str, model, num_envs: int, device: Any = "cpu", *, mjcf: str | None = None,
                 nthread: int | None = None) -> PhysicsBackend:
    """The backend ``name`` for ``num_envs`` worlds of ``model`` (an ``MjModel``; Newton also needs
    the ``mjcf`` text) on ``device``. Warp is imported only for the Warp backends."""
    from .._checks import check_device

    if not isinstance(name, str) or name not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {name!r}")
    given, device = device, check_device(device, f"backend={name!r}", available=False)
    if name == "mujoco":
        if device.type != "cpu":
            raise ValueError(f"backend='mujoco' runs on the CPU only, got device={given!r}; use 'mujoco_warp' or 'newton'")
        from .mujoco_batch import MujocoBatchBackend

        return MujocoBatchBackend(model, num_envs, nthread=nthread)
    if name == "mujoco_warp":
        from .mujoco_warp import MujocoWarpBackend

        return MujocoWarpBackend(model, num_envs, device=device)
    from .newton import NewtonBackend

    if mjcf is None:
        raise ValueError("backend='newton' needs the MJCF text (mjcf=)")
    return NewtonBackend(mjcf, num_envs, device=device, physics_dt=float(model.opt.timestep))
