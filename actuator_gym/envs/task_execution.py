"""The batched tasks' ``execution=`` option (``gym.make(id, execution=...)``, ``gym.make_vec(id, ...,
execution=...)``, ``BatchedTask(execution=...)``): ``"explicit"`` (the runtime's substep loop);
``"native"`` is not there yet and is refused; ``"auto"`` resolves to ``"explicit"``. The wrapper has
native execution (``ActuatorWrapper(..., execution="native")``, docs/native.md)."""

from __future__ import annotations

from typing import Any

__all__ = ["task_execution"]


def task_execution(execution: Any, owner: str) -> str:
    """The tasks' ``execution=`` in force: ``"explicit"`` (the runtime's substep loop), also for
    ``"auto"`` (native where exact, explicit elsewhere: on the tasks that is everywhere, for now);
    ``"native"`` is a ``ValueError`` until the batched backends compile native groups."""
    if execution == "native":
        raise ValueError(
            f"{owner}: execution='native' is not yet supported on the batched tasks (per-world native actuators "
            "through mujoco.batch are to come); use execution='explicit' or 'auto' (explicit here), or "
            "ActuatorWrapper(..., execution='native') on a Gymnasium MuJoCo env"
        )
    if execution not in ("explicit", "auto"):
        raise ValueError(f"{owner}: execution must be one of ('explicit', 'native', 'auto'), got {execution!r}")
    return "explicit"
