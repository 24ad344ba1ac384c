"""Physics backends. ``base`` and ``protocols`` are importable without any engine; concrete backends
import their engine (mujoco, warp) when they are imported, never at package import.

The contract each kind of backend keeps is written down in :mod:`actuator_gym.backends.protocols`
(``BatchedBackend``, ``DeviceBackend``); :func:`make_backend` builds the
batched ones by name from the registry below (one factory per backend).
"""

from __future__ import annotations

from typing import Any, Callable

from .base import JointInfo, PhysicsBackend
from .protocols import BatchedBackend, DeviceBackend, JointBackend

__all__ = ["PhysicsBackend", "JointInfo", "BACKENDS", "make_backend",
           "JointBackend", "BatchedBackend", "DeviceBackend"]

BackendFactory = Callable[..., PhysicsBackend]
"""``factory(model, num_envs, device, *, mjcf, nthread, given) -> backend`` (``device`` a checked
``torch.device``, ``given`` the caller's spelling for messages); it imports its engine itself."""


def _mujoco(model, num_envs: int, device: Any, *, mjcf: str | None, nthread: int | None, given: Any = None) -> PhysicsBackend:
    if device.type != "cpu":
        raise ValueError(f"backend='mujoco' runs on the CPU only, got device={given!r}; use 'mujoco_warp' or 'newton'")
    from .mujoco_batch import MujocoBatchBackend

    return MujocoBatchBackend(model, num_envs, nthread=nthread)


def _mujoco_warp(model, num_envs: int, device: Any, *, mjcf: str | None, nthread: int | None, given: Any = None) -> PhysicsBackend:
    from .mujoco_warp import MujocoWarpBackend

    return MujocoWarpBackend(model, num_envs, device=device)


def _newton(model, num_envs: int, device: Any, *, mjcf: str | None, nthread: int | None, given: Any = None) -> PhysicsBackend:
    from .newton import NewtonBackend

    if mjcf is None:
        raise ValueError("backend='newton' needs the MJCF text (mjcf=)")
    return NewtonBackend(mjcf, num_envs, device=device, physics_dt=float(model.opt.timestep))


_REGISTRY: dict[str, BackendFactory] = {
    "mujoco": _mujoco,  # mujoco.batch, CPU (the default)
    "mujoco_warp": _mujoco_warp,  # MuJoCo-Warp, Warp's CPU device or CUDA
    "newton": _newton,  # Newton (Featherstone), Warp's CPU device or CUDA
}

BACKENDS = tuple(_REGISTRY)
"""Names accepted by ``backend=``: the batched CPU backend (default), MuJoCo-Warp, Newton."""


def make_backend(name: str, model, num_envs: int, device: Any = "cpu", *, mjcf: str | None = None,
                 nthread: int | None = None) -> PhysicsBackend:
    """The backend ``name`` for ``num_envs`` worlds of ``model`` (an ``MjModel``; Newton also needs
    the ``mjcf`` text) on ``device``; ``nthread`` is the CPU backend's thread count (None: its
    default). Warp is imported only for the Warp backends. ``ValueError`` for an unknown name."""
    from .._checks import check_device

    factory = _REGISTRY.get(name) if isinstance(name, str) else None
    if factory is None:
        raise ValueError(f"backend must be one of {BACKENDS}, got {name!r}")
    given, device = device, check_device(device, f"backend={name!r}", available=False)
    return factory(model, num_envs, device, mjcf=mjcf, nthread=nthread, given=given)
