"""The substep-hook protocol: how a wrapper runs code at every physics substep of an env.

An env that implements :class:`SubstepHookEnv` exposes

* ``model`` / ``data``: its ``mujoco.MjModel`` / ``mujoco.MjData``;
* ``frame_skip``: physics substeps per ``step()``; ``dt``: the control period [s]
  (``model.opt.timestep * frame_skip``);
* ``set_substep_hook(hook)``: install (or with ``None`` remove) one hook.

Contract of the env's ``step()``: it writes its own controls (``data.ctrl``) first, then for each of
its ``frame_skip`` substeps calls ``hook(k)`` (``k = 0 .. frame_skip - 1``) and then advances the
physics by one substep (``mj_step``). The hook may read the state and write ``data.qfrc_applied``
and ``data.ctrl``. Observation, reward and termination are computed by the env as usual after the
substeps. actuator-gym's own tasks implement this protocol publicly.

Gymnasium's ``MujocoEnv`` (InvertedPendulum, Reacher, Hopper, HalfCheetah, Walker2d, Ant, Humanoid,
...) steps all substeps in one C call; :func:`substep_hook_env` adapts it by replacing the private
``_step_mujoco_simulation`` **on the env instance** with a per-substep loop (one ``mj_step`` per
substep, so RK4 models stay RK4) followed by ``mj_rnePostConstraint`` as Gymnasium does. That is a
private method, hence the ``gymnasium>=1.0,<2`` pin; the wrapper checks at every step that the
hook ran ``frame_skip`` times and raises otherwise.

Native execution (docs/native.md) needs two more things of a Gymnasium ``MujocoEnv``, both on the
env instance and undone by :meth:`GymnasiumMujocoAdapter.restore_model`:
:meth:`GymnasiumMujocoAdapter.model_spec` (an ``MjSpec`` of the env's XML file) and
:meth:`GymnasiumMujocoAdapter.install_model` (the env, its renderer and its ``do_simulation`` use
the model with the native actuators appended; the env's own controls keep their addresses, and
``do_simulation`` checks the env's action against their count), with
:meth:`GymnasiumMujocoAdapter.set_step_hook` running all the substeps of a step in one call.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, runtime_checkable

import mujoco
import numpy as np

__all__ = ["SubstepHook", "SubstepHookEnv", "GymnasiumMujocoAdapter", "substep_hook_env"]


@runtime_checkable
class SubstepHook(Protocol):
    """Called with the substep index before every physics substep."""

    def __call__(self, substep: int) -> None: ...


@runtime_checkable
class SubstepHookEnv(Protocol):
    """An env that runs a hook before every physics substep (see the module docstring)."""

    model: Any
    data: Any
    frame_skip: int

    @property
    def dt(self) -> float: ...

    def set_substep_hook(self, hook: SubstepHook | Callable[[int], None] | None) -> None: ...


class GymnasiumMujocoAdapter:
    """:class:`SubstepHookEnv` view of a Gymnasium ``MujocoEnv`` (the env is patched in place).

    ``set_substep_hook(hook)`` replaces the instance's ``_step_mujoco_simulation``; ``None``
    restores the class's method.
    """

    def __init__(self, env: Any):
        self.env = env

    @property
    def model(self):
        return self.env.model

    @property
    def data(self):
        return self.env.data

    @property
    def frame_skip(self) -> int:
        return int(self.env.frame_skip)

    @property
    def dt(self) -> float:
        return float(self.env.dt)

    def has_substep_hook(self) -> bool:
        """Whether a hook (or anything else) already replaced the instance's simulation step."""
        return "_step_mujoco_simulation" in self.env.__dict__

    def set_substep_hook(self, hook) -> None:
        env = self.env
        if hook is None:
            env.__dict__.pop("_step_mujoco_simulation", None)
            return
        model, data = env.model, env.data
        mj_step, rne_post = mujoco.mj_step, mujoco.mj_rnePostConstraint

        def _step_mujoco_simulation(ctrl, n_frames):
            data.ctrl[: len(ctrl)] = ctrl  # the env's own controls (native actuators follow them)
            for k in range(n_frames):
                hook(k)
                mj_step(model, data)
            # as Gymnasium does: cacc/cfrc_int/cfrc_ext for observations (e.g. Ant's cfrc_ext)
            rne_post(model, data)

        env._step_mujoco_simulation = _step_mujoco_simulation

    # -- native execution ----------------------------------------------------------------------
    def model_spec(self) -> Any:
        """An ``MjSpec`` of the env's model file (``fullpath``), to append native actuators to."""
        return mujoco.MjSpec.from_file(self.env.fullpath)

    def install_model(self, model: Any, data: Any, env_controls: int) -> None:
        """Make the env (its simulation, reset, ``set_state``, renderer) use ``model`` / ``data``;
        ``do_simulation`` checks its ``ctrl`` against the env's own ``env_controls`` controls."""
        env = self.env
        if "_actuator_gym_model" not in env.__dict__:
            env._actuator_gym_model = (env.model, env.data)
        env.model, env.data = model, data
        _point_renderer(env, model, data)

        def do_simulation(ctrl, n_frames):
            if (ctrl.shape if type(ctrl) is np.ndarray else np.shape(ctrl)) != (env_controls,):
                raise ValueError(f"Action dimension mismatch. Expected {(env_controls,)}, found {np.shape(ctrl)}")
            env._step_mujoco_simulation(ctrl, n_frames)

        env.do_simulation = do_simulation

    def restore_model(self) -> None:
        """Undo :meth:`install_model` (the env's own model and data again)."""
        env = self.env
        saved = env.__dict__.pop("_actuator_gym_model", None)
        env.__dict__.pop("do_simulation", None)
        if saved is not None:
            env.model, env.data = saved
            _point_renderer(env, *saved)

    def set_step_hook(self, step: Callable[[int], None]) -> None:
        """Replace the whole simulation step: ``step(n_frames)`` advances all substeps itself and
        computes what Gymnasium computes after them (``mj_rnePostConstraint``). The env's action is
        not written into its ``ctrl`` (native execution replaces the env's own actuators: their
        controls stay zero; ``do_simulation`` still checks the action's shape)."""
        def _step_mujoco_simulation(ctrl, n_frames):
            step(n_frames)

        self.env._step_mujoco_simulation = _step_mujoco_simulation


def _point_renderer(env: Any, model: Any, data: Any) -> None:
    """Gymnasium's ``MujocoRenderer`` draws ``model`` / ``data`` from now on: its viewers (built on
    the old model; Gymnasium keeps them in ``_viewers``) are closed and re-created on the next render."""
    renderer = getattr(env, "mujoco_renderer", None)
    if renderer is None:
        return
    renderer.close()
    viewers = getattr(renderer, "_viewers", None)
    if isinstance(viewers, dict):
        viewers.clear()
    renderer.viewer = None
    renderer.model, renderer.data = model, data


def substep_hook_env(env: Any) -> SubstepHookEnv:
    """The :class:`SubstepHookEnv` for ``env`` (its ``unwrapped``): the env itself when it
    implements the protocol, an adapter for Gymnasium's ``MujocoEnv``; else ``TypeError``."""
    base = getattr(env, "unwrapped", env)
    if isinstance(base, SubstepHookEnv) and callable(getattr(base, "set_substep_hook", None)):
        return base
    try:
        from gymnasium.envs.mujoco.mujoco_env import MujocoEnv
    except ImportError:  # pragma: no cover - gymnasium's mujoco extra missing
        MujocoEnv = None
    if MujocoEnv is not None and isinstance(base, MujocoEnv):
        if not callable(getattr(type(base), "_step_mujoco_simulation", None)):
            raise TypeError(
                "this Gymnasium version's MujocoEnv has no _step_mujoco_simulation; actuator-gym supports gymnasium>=1.0,<2"
            )
        return GymnasiumMujocoAdapter(base)
    raise TypeError(
        f"{type(base).__name__} is neither a Gymnasium MujocoEnv nor a SubstepHookEnv "
        "(model, data, frame_skip, dt, set_substep_hook); see actuator_gym.wrappers.protocol"
    )
