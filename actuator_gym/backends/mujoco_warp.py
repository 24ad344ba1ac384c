"""``MujocoWarpBackend``: ``num_envs`` worlds of one ``MjModel`` stepped by MuJoCo-Warp (``nworld = num_envs``).

Same MJCF, same semantics and the same methods as
:class:`~actuator_gym.backends.mujoco_batch.MujocoBatchBackend` (the batched CPU backend), so the
task layer, wrappers and actuator models run unchanged; on Warp's CPU device the results agree
with the CPU backend to float32 precision (MuJoCo-Warp computes in float32).

    backend = MujocoWarpBackend(model, num_envs=4096, device="cuda:0")
    q = backend.torch_joint_pos()                 # torch view of the engine's qpos (no copy)
    backend.torch_set_joint_effort(effort)        # -> qfrc_applied, on the device
    backend.step()                                # one substep of every world (a replayed CUDA graph on CUDA)
    backend.model_field("body_mass")[3, 1] = 0.7  # per-world model fields

State sharing. ``torch_field(name)`` / ``torch_joint_pos()`` are ``wp.to_torch`` views of the
engine's arrays on the same device (shared memory). The numpy accessors the task layer uses
(``qpos``, ``qvel``, ``xfrc_applied``, ``field``, ``model_field``, ``joint_pos()``) are
zero-copy views on the CPU device; on CUDA they are host mirrors: state and derived fields are
pulled after every ``step``/``reset_envs`` on first access, ``xfrc_applied`` is pushed before
every ``step``, and model fields are pushed by ``set_const``/``reset_envs``/``push_model_fields``.

CUDA graphs (CUDA only; never on CPU): with ``graph=True`` (the :class:`DeviceLoop` default on
CUDA) the first substep runs eagerly (it compiles and loads the kernels) and the second captures
``mujoco_warp.step`` into a Warp graph that every later substep replays. Swapping in a per-world
model field (the first ``model_field(name)`` call) drops the graph, which is re-captured.

Randomization: ``model_field(name)`` replaces the engine's shared ``(1, ...)`` array of that field
by a per-world ``(num_envs, ...)`` copy (MuJoCo-Warp indexes model fields by ``world % rows``).

Native execution (``execution="native"``, docs/native.md): the task's groups compiled into MuJoCo
actuators of the model run in MuJoCo-Warp's own actuator kernels; the compiler
(:class:`~actuator_gym.backends.mujoco_native.NativeActuators`) writes their per-world values through
``model_field``, their controls and delay histories through ``field("ctrl")`` / ``field("history")``,
and reads the last substep's ``output("actuator_force")`` (no derived pass; :meth:`refresh_derived`
after it), as on the CPU batch.
"""

from __future__ import annotations

import copy
from typing import Any

import mujoco
import numpy as np
import torch

from ._warp import HostArray, import_extra
from .base import check_num_envs, env_index
from .mujoco import joint_info
from .warp_common import WarpBackend

__all__ = ["MujocoWarpBackend"]

_STATE = frozenset(("qpos", "qvel", "act", "time", "ctrl", "history", "qfrc_applied", "xfrc_applied"))
"""``mjw.Data`` fields that are state (binding one asks for no derived pass)."""
_HOST_INPUTS = ("xfrc_applied", "ctrl", "history")
"""State the host writes through its mirrors (on CUDA pushed before every ``step`` when fetched since the
last one: a mirror not fetched again is stale and would overwrite the device's newer values)."""


def _import_mjw():
    return import_extra("mujoco_warp", "backend='mujoco_warp' needs mujoco-warp: pip install 'actuator-gym[warp]'")


def _data_field(name: str, doc: str) -> property:
    """A property: the host view of ``mjw.Data`` field ``name`` (``MujocoWarpBackend._hostview``)."""
    return property(lambda self: self._hostview(name), doc=doc)


class MujocoWarpBackend(WarpBackend):
    """``num_envs`` worlds of ``model`` in MuJoCo-Warp on ``device``. Device, graph capture, the
    joint-state accessors, ``render`` and ``close`` come from
    :class:`~actuator_gym.backends.warp_common.WarpBackend`.

    Args:
        model: the compiled model (its ``opt.timestep`` is the substep ``physics_dt`` [s]).
        num_envs: number of worlds (``nworld``).
        device: ``"cpu"`` (Warp's CPU device), ``"cuda"`` or ``"cuda:N"``.
        nconmax: contacts allocated per world (None: MuJoCo-Warp's default for the model).
        njmax: constraint rows allocated per world (None: MuJoCo-Warp's default).
        graph: capture the physics substep in a CUDA graph on CUDA devices (ignored on CPU).
    """

    _POS_ARRAY, _VEL_ARRAY, _EFFORT_ARRAY = "qpos", "qvel", "qfrc_applied"

    def __init__(
        self,
        model: mujoco.MjModel,
        num_envs: int,
        device: Any = "cpu",
        nconmax: int | None = None,
        njmax: int | None = None,
        graph: bool = True,
    ):
        self.num_envs = check_num_envs("MujocoWarpBackend", num_envs)
        self._init_warp(device, graph)
        self.mjw = mjw = _import_mjw()
        self.model = model
        self.physics_dt = float(model.opt.timestep)
        self._init_joints(joint_info(model))
        with self.scope():
            self.m = mjw.put_model(model)
            self.d = mjw.make_data(model, nworld=self.num_envs, nconmax=nconmax, njmax=njmax)
        self._derived: set[str] = set()
        self._model_fields: dict[str, HostArray] = {}
        self._torch: dict[str, torch.Tensor] = {}
        self._outputs: set[str] = set()
        self.reset_envs(None)

    # -- helpers ---------------------------------------------------------------------------------
    def _warp_field(self, name: str):
        arr = getattr(self.d, name, None)
        if arr is None or not hasattr(arr, "numpy"):
            raise ValueError(f"MujocoWarpBackend: unknown data field {name!r}")
        return arr

    def _hostview(self, name: str) -> np.ndarray:
        """``(num_envs, ...)`` host view (CPU device) / pulled mirror (CUDA) of an ``mjw.Data`` field."""
        h = self._host.get(name)
        if h is None:
            h = self._host[name] = HostArray(self._warp_field(name))
        return h.pull()

    # -- torch views (shared memory, on the device) -----------------------------------------------
    def torch_field(self, name: str) -> torch.Tensor:
        """``wp.to_torch`` view ``(num_envs, ...)`` of an ``mjw.Data`` field (shared memory)."""
        t = self._torch.get(name)
        if t is None:
            t = self._torch[name] = self.wp.to_torch(self._warp_field(name))
        return t

    # -- MuJoCo-layout state (BatchedBackend) -------------------------------------------------------
    qpos = _data_field("qpos", "``(num_envs, nq)`` float32: a view (CPU device) or a host mirror (CUDA).")
    qvel = _data_field("qvel", "``(num_envs, nv)`` float32, as :attr:`qpos`.")
    act = _data_field("act", "``(num_envs, na)`` float32, as :attr:`qpos`.")
    time = _data_field("time", "``(num_envs,)`` simulated time [s], as :attr:`qpos`.")
    xfrc_applied = _data_field("xfrc_applied", "``(num_envs, nbody, 6)`` body wrenches [N, N·m], writable (pushed "
                               "before each ``step`` on CUDA).")

    # -- substeps -----------------------------------------------------------------------------------
    def _substep(self) -> None:
        """One ``mujoco_warp.step`` of every world (what a CUDA graph captures)."""
        self.mjw.step(self.m, self.d)

    def step(self, nstep: int = 1, derived: bool = True, graph: bool = True) -> None:
        """Advance every world by ``nstep`` substeps (a replayed CUDA graph on CUDA when ``graph``);
        ``derived=True`` recomputes the position and velocity stages at the new state when a
        derived field was requested (as the CPU backend)."""
        mjw = self.mjw
        if self._cuda:  # the host-written inputs to the device
            for name in _HOST_INPUTS:
                h = self._host.get(name)
                if h is not None and not h.stale:  # read (pulled) since the last step: maybe written
                    h.push()
        with self.scope():
            self._run_substeps(nstep, graph)
            if derived and self._derived:
                mjw.fwd_position(self.m, self.d)
                mjw.fwd_velocity(self.m, self.d)
        self._mark_stale()
        for name in self._outputs:  # CUDA: the mirrors output() handed out, current again (held by the caller)
            self._host[name].pull()

    # -- state access ------------------------------------------------------------------------------
    def field(self, name: str) -> np.ndarray:
        """A ``(num_envs, ...)`` numpy view (CPU) / host mirror (CUDA) of an ``mjw.Data`` field. State
        fields (``qpos``, ``ctrl``, ``history``, ...) are writable: on CUDA ``ctrl``, ``history`` and
        ``xfrc_applied`` are pushed before every ``step``; other fields are derived and make every
        ``step(derived=True)`` recompute the position and velocity stages."""
        if name not in self._host and name not in _STATE:
            self._derived.add(name)
            with self.scope():
                self.mjw.fwd_position(self.m, self.d)
                self.mjw.fwd_velocity(self.m, self.d)
            self._mark_stale()
        return self._hostview(name)

    def output(self, name: str) -> np.ndarray:
        """A ``(num_envs, ...)`` numpy view (CPU) / host mirror (CUDA, pulled after every ``step``) of an
        output every substep computes (``actuator_force``, ``actuator_length``, ``actuator_velocity``,
        ``act_dot``): the **last substep's** values after a ``step(derived=False)``, as on
        :class:`~actuator_gym.backends.mujoco_batch.MujocoBatchBackend`; asks for no derived pass
        (native execution reads the actuators' outputs this way, then calls :meth:`refresh_derived`)."""
        h = self._hostview(name)
        if self._cuda:
            self._outputs.add(name)
        return h

    def refresh_derived(self) -> None:
        """Make the fields bound through :meth:`field` describe the current state (after a
        ``step(derived=False)``); nothing when none is bound. Read :meth:`output` views first."""
        if self._derived:
            with self.scope():
                self.mjw.fwd_position(self.m, self.d)
                self.mjw.fwd_velocity(self.m, self.d)
            self._mark_stale()

    def _model_array(self, name: str):
        owner, attr = (self.m.opt, name[4:]) if name.startswith("opt.") else (self.m, name)
        arr = getattr(owner, attr, None)
        if arr is None or not hasattr(arr, "numpy"):
            raise ValueError(f"MujocoWarpBackend.model_field: {name!r} is not an array field of mujoco_warp.Model")
        return owner, attr, arr

    def model_field(self, name: str) -> np.ndarray:
        """Per-world values ``(num_envs, ...)`` of a model field (``body_mass``, ``geom_friction``,
        ``dof_damping``, ``opt.gravity``, ...), writable. After writing a field that ``set_const``
        reads (``body_mass``, ``body_inertia``, ``dof_armature``, ...) call :meth:`set_const`."""
        h = self._model_fields.get(name)
        if h is None:
            owner, attr, arr = self._model_array(name)
            if arr.ndim == 0 or arr.shape[0] != self.num_envs:
                vals = arr.numpy()
                if vals.shape[0] != 1:
                    raise ValueError(
                        f"MujocoWarpBackend.model_field: {name!r} is not a per-world field (leading size {vals.shape[0]})"
                    )
                tiled = np.ascontiguousarray(np.repeat(vals, self.num_envs, axis=0))
                arr = self.wp.array(tiled, dtype=arr.dtype, device=self.wp_device)
                setattr(owner, attr, arr)
                self._graph = None  # the captured graph holds the old pointer
            h = self._model_fields[name] = HostArray(arr)
        return h.np

    def push_model_fields(self) -> None:
        """Copy the host mirrors of per-world model fields to the device (CUDA; no-op on CPU)."""
        for h in self._model_fields.values():
            h.push()

    def set_const(self, env_ids: Any = None) -> None:
        """Recompute the constants derived from model fields (all worlds; unchanged worlds get the
        same values back)."""
        self.push_model_fields()
        with self.scope():
            self.mjw.set_const(self.m, self.d)
        self._mark_stale()

    def reset_envs(self, env_ids: Any = None, qpos: Any = None, qvel: Any = None, act: Any = None, time: Any = None) -> None:
        """Reset ``env_ids`` (None = all) to the model defaults, then set ``qpos (n, nq)``,
        ``qvel (n, nv)``, ``act (n, na)``, ``time (n,)`` where given; other worlds' state is untouched."""
        ids = self._ids(env_ids)
        n = self.num_envs if ids is None else len(ids)
        if n == 0:
            return
        self.push_model_fields()
        mask = np.zeros(self.num_envs, dtype=bool)
        mask[slice(None) if ids is None else ids] = True
        sizes = {"qpos": self.model.nq, "qvel": self.model.nv, "act": self.model.na}
        values = {}
        for name, value in (("qpos", qpos), ("qvel", qvel), ("act", act)):
            if value is None:
                continue
            v = np.asarray(value.detach().cpu() if isinstance(value, torch.Tensor) else value, dtype=np.float64)
            if v.shape != (n, sizes[name]):
                raise ValueError(f"MujocoWarpBackend.reset_envs: {name} must have shape {(n, sizes[name])}, got {v.shape}")
            values[name] = v
        if time is not None:
            values["time"] = np.broadcast_to(np.asarray(time, dtype=np.float64), (n,))
        with self.scope():
            self.mjw.reset_data(self.m, self.d, reset=self.wp.array(mask, dtype=bool, device=self.wp_device))
            rows = torch.as_tensor(np.flatnonzero(mask), device=self.device)
            for name, v in values.items():
                self.torch_field(name)[rows] = torch.as_tensor(v, dtype=torch.float32, device=self.device)
            self.mjw.fwd_position(self.m, self.d)
            self.mjw.fwd_velocity(self.m, self.d)
        self._mark_stale()

    def _ids(self, env_ids: Any):
        return env_index(env_ids, self.num_envs, np.int64)

    def world_model(self, world_id: int = 0) -> mujoco.MjModel:
        """World ``world_id``'s ``MjModel`` with its per-world fields (a copy)."""
        m = copy.copy(self.model)
        for name, h in self._model_fields.items():
            vals = np.asarray(h.np[int(world_id)], dtype=np.float64)
            if name.startswith("opt."):
                setattr(m.opt, name[4:], vals)
            else:
                target = getattr(m, name)
                target[...] = vals.reshape(target.shape)
        return m

    def data(self, world_id: int = 0, data: mujoco.MjData | None = None, forward: bool = True) -> mujoco.MjData:
        """World ``world_id`` as an ``MjData`` (a copy), derived fields recomputed when ``forward``."""
        w = self._world_id(world_id, "data")
        d = data if data is not None else mujoco.MjData(self.model)
        for name in ("qpos", "qvel", "act", "ctrl", "qfrc_applied", "xfrc_applied"):
            dst = getattr(d, name)
            if dst.size:
                dst[...] = self._hostview(name)[w].reshape(dst.shape)
        d.time = float(self._hostview("time")[w])
        if forward:
            mujoco.mj_forward(self.world_model(w) if self._model_fields else self.model, d)
        return d
