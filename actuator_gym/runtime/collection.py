"""``ActuatorCollection``: the actuator groups of one articulation, in articulation joint order.

    coll = ActuatorCollection({"legs": DCMotorCfg(joint_names_expr=[".*_(hip|thigh)"], ...),
                               "knees": RemotizedPDActuatorCfg(joint_names_expr=[".*_calf"], ...)},
                              joint_names=model_joint_names, num_envs=64, device="cpu", seed=0)
    coll.target_command.set_position_index(value=q_star)        # (num_envs, num_joints)
    effort = coll.compute(joint_pos=q, joint_vel=qd, dt=0.005)    # (num_envs, num_joints)

Every tensor here is ``(num_envs, num_joints)`` over the articulation's joints in its own order.
Joints in no group are passive: zero effort, reported once as a warning.

Seeding: env ``i`` of a collection (or of any model) built with ``num_envs=N, seed=s`` draws its
randomized parameters and delays exactly as a ``num_envs=1`` one seeded ``s + i``
(:mod:`actuator_gym.randomization.streams`).

Buses (:mod:`actuator_gym.runtime.bus`): groups whose configs name a ``bus`` (or set a bus field)
receive their commands through it, one frame per env and control step; :meth:`ActuatorCollection.begin_step`
starts a control step (the :class:`~actuator_gym.runtime.substep.SubstepEngine` calls it).

*Stable-PD* groups (``effort_mode="implicit"``, and every ``ImplicitActuatorCfg``:
:attr:`ActuatorCollection.stable_pd_groups`) solve their drive at the predicted state and need the
mass-matrix terms in :meth:`ActuatorCollection.compute`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, Iterator, Sequence

import numpy as np
import torch

from .._array import ops_for
from .._checks import (
    UnknownNameError,
    check_bool,
    check_device,
    check_dt,
    check_dtype,
    check_names,
    check_num_envs,
    env_index,
    real_array,
)
from ..actuators.actuator import Actuator, as_env_ids
from ..actuators.models import bus_plan
from ..actuators.bam import check_supplies, share_supplies
from ..actuators.params import match_names
from ..randomization.streams import derive_seeds, env_seeds
from .bus import Bus

__all__ = ["ActuatorCollection", "CommandBuffer", "OutputCommand"]


def _index(ids: Any, size: int, what: str) -> torch.Tensor:
    if ids is None:
        return torch.arange(size)
    if isinstance(ids, np.ndarray) and ids.dtype == np.bool_ or isinstance(ids, torch.Tensor) and ids.dtype == torch.bool:
        raise ValueError(f"{what}: use the *_mask setter for boolean masks")
    return torch.from_numpy(env_index(ids, size, what, allow_mask=False, unique=True))


class CommandBuffer:
    """Articulation-ordered command buffers ``position``, ``velocity``, ``effort`` (num_envs, num_joints).

    Setters take keyword arguments only:

    * ``set_position_index(value=, joint_ids=None, env_ids=None, full_data=False)``: ``value`` has
      shape ``(len(env_ids), len(joint_ids))``; with ``full_data=True`` it is full-size
      ``(num_envs, num_joints)`` and only the indexed elements are taken from it.
    * ``set_position_mask(value=, joint_mask=None, env_mask=None)``: ``value`` is full-size;
      elements where ``env_mask[e] and joint_mask[j]`` are written.

    Likewise ``set_velocity_*`` and ``set_effort_*``.
    """

    def __init__(self, num_envs: int, num_joints: int, device: torch.device, dtype: torch.dtype):
        self.num_envs, self.num_joints = num_envs, num_joints
        self.position = torch.zeros((num_envs, num_joints), dtype=dtype, device=device)
        self.velocity = torch.zeros_like(self.position)
        self.effort = torch.zeros_like(self.position)

    def _value(self, value: Any, shape: tuple[int, int], what: str) -> torch.Tensor:
        if not (isinstance(value, torch.Tensor) and not (value.is_complex() or value.dtype == torch.bool)):
            value = real_array(value, "value", what)
        v = torch.as_tensor(value, dtype=self.position.dtype, device=self.position.device)
        if v.ndim == 0:
            return v.expand(shape)
        if tuple(v.shape) != shape:
            raise ValueError(f"{what}: value must have shape {shape}, got {tuple(v.shape)}")
        return v

    def _set_index(self, buf, channel, value, joint_ids, env_ids, full_data):
        what = f"target_command.set_{channel}_index"
        full_data = check_bool(full_data, "full_data", what)
        j = _index(joint_ids, self.num_joints, f"{what} joint_ids").to(buf.device)
        e = _index(env_ids, self.num_envs, f"{what} env_ids").to(buf.device)
        if full_data:
            v = self._value(value, (self.num_envs, self.num_joints), what)[e[:, None], j[None, :]]
        else:
            v = self._value(value, (e.numel(), j.numel()), what)
        buf[e[:, None], j[None, :]] = v

    def _set_mask(self, buf, channel, value, joint_mask, env_mask):
        what = f"target_command.set_{channel}_mask"
        v = self._value(value, (self.num_envs, self.num_joints), what)
        mask = torch.ones((self.num_envs, self.num_joints), dtype=torch.bool, device=buf.device)
        for m, n, axis in ((env_mask, self.num_envs, "env_mask"), (joint_mask, self.num_joints, "joint_mask")):
            if m is None:
                continue
            mt = m if isinstance(m, torch.Tensor) else torch.from_numpy(np.asarray(m)) if np.asarray(m).dtype.kind != "U" else None
            if mt is None or mt.dtype != torch.bool or tuple(mt.shape) != (n,):
                got = f"{tuple(mt.shape)} {mt.dtype}" if mt is not None else repr(m)
                raise ValueError(f"{what}: {axis} must be a boolean array of shape ({n},), got {got}")
            mt = mt.to(buf.device)
            mask &= mt[:, None] if axis == "env_mask" else mt[None, :]
        torch.where(mask, v, buf, out=buf)

    def set_position_index(self, *, value, joint_ids=None, env_ids=None, full_data=False):
        self._set_index(self.position, "position", value, joint_ids, env_ids, full_data)

    def set_velocity_index(self, *, value, joint_ids=None, env_ids=None, full_data=False):
        self._set_index(self.velocity, "velocity", value, joint_ids, env_ids, full_data)

    def set_effort_index(self, *, value, joint_ids=None, env_ids=None, full_data=False):
        self._set_index(self.effort, "effort", value, joint_ids, env_ids, full_data)

    def set_position_mask(self, *, value, joint_mask=None, env_mask=None):
        self._set_mask(self.position, "position", value, joint_mask, env_mask)

    def set_velocity_mask(self, *, value, joint_mask=None, env_mask=None):
        self._set_mask(self.velocity, "velocity", value, joint_mask, env_mask)

    def set_effort_mask(self, *, value, joint_mask=None, env_mask=None):
        self._set_mask(self.effort, "effort", value, joint_mask, env_mask)


class OutputCommand:
    """What is sent to the physics backend after the last ``compute`` (num_envs, num_joints):
    ``position`` / ``velocity``: the commands the drives used (after any delay); ``effort``: the
    applied effort (the same tensor as the collection's ``applied_effort``)."""

    def __init__(self, applied: torch.Tensor):
        self.position = torch.zeros_like(applied)
        self.velocity = torch.zeros_like(applied)
        self.effort = applied


_NO_KW: dict[str, Any] = {}
_BUS_STREAM = 0xB05
"""The tag of the buses' per-env streams (bus ``b``: ``derive_seeds(seeds, _BUS_STREAM, b)``)."""


class _Group:
    __slots__ = ("name", "model", "ids", "cols", "views", "stable_pd", "src")

    def __init__(self, name: str, model: Actuator, ids: list[int]):
        self.name, self.model = name, model
        self.ids = ids
        contiguous = ids == list(range(ids[0], ids[0] + len(ids)))
        self.cols = slice(ids[0], ids[-1] + 1) if contiguous else np.asarray(ids)
        self.views = None  # cached column views of the collection's buffers (contiguous groups)
        self.stable_pd = model.stable_pd  # effort_mode="implicit": needs the mass-matrix terms
        self.src = None  # the (position, velocity, effort) commands it reads: the targets, or its bus's


class ActuatorCollection(Mapping):
    """Read-only mapping ``group name -> model`` over one articulation.

    Args:
        cfgs: ``{group name: actuator config}``; each config's ``joint_names_expr`` is full-matched
            against ``joint_names``.
        joint_names: the articulation's joint names, in its order.
        num_envs: number of parallel environments.
        device: torch device.
        seed: None (fresh entropy), an int ``s`` (env ``i`` gets ``s + i``) or one seed per env; group
            ``k``'s streams derive from each env's seed and ``k``, so env ``i`` of a collection seeded
            ``s`` draws exactly what a one-env collection seeded ``s + i`` draws
            (:mod:`actuator_gym.randomization.streams`).
        asset: where config fields left None take their values (an
            :class:`~actuator_gym.actuators.asset.AssetJoints`, e.g. the MJCF's
            :class:`~actuator_gym.backends.mujoco_asset.MjcfJoints`); None: no asset (unset limits
            +inf, ``stiffness=None`` / ``damping=None`` refused).
        **model_kwargs: passed to each config's ``build`` (``dtype``, ``check_finite``, ...).
    """

    _dt_checked: Any = ()  # the last dt float that passed check_dt (callers reuse one object)

    def __init__(
        self,
        cfgs: Mapping[str, Any],
        joint_names: Sequence[str],
        num_envs: int = 1,
        device: str | torch.device = "cpu",
        seed: int | None = None,
        asset: Any = None,
        **model_kwargs: Any,
    ):
        what = "ActuatorCollection"
        if not isinstance(cfgs, Mapping) or not cfgs:
            raise ValueError(f"{what}: cfgs must be a non-empty {{group name: config}} mapping")
        for gname, cfg in cfgs.items():
            if not isinstance(gname, str):
                raise TypeError(f"{what}: group names must be strings, got {type(gname).__name__} {gname!r}")
            if not hasattr(cfg, "joint_names_expr") or not hasattr(cfg, "build"):
                raise ValueError(f"{what}: group '{gname}' is not an actuator config ({type(cfg).__name__})")
        self.joint_names = check_names(joint_names, what, allow_empty=True, unique=False)
        if len(set(self.joint_names)) != len(self.joint_names):
            raise ValueError(f"{what}: duplicate joint names in {list(self.joint_names)}")
        self.num_envs, self.num_joints = check_num_envs(num_envs, what), len(self.joint_names)
        self.device = check_device(device, what)
        seeds = env_seeds(seed, self.num_envs, what)
        dtype = check_dtype(model_kwargs.get("dtype", torch.float32), what)
        self.ops = ops_for(self.device, model_kwargs.get("array_backend", "auto"))

        owner: dict[int, str] = {}
        selections: dict[str, list[int]] = {}
        for gname, cfg in cfgs.items():
            ids = match_names(cfg.joint_names_expr, self.joint_names, f"group '{gname}'")
            if not ids:
                raise ValueError(
                    f"ActuatorCollection: group '{gname}' (joint_names_expr={list(cfg.joint_names_expr)}) "
                    f"matches no joint; available joints: {list(self.joint_names)}"
                )
            for i in ids:
                if i in owner:
                    raise ValueError(
                        f"ActuatorCollection: joint '{self.joint_names[i]}' is claimed by groups "
                        f"'{owner[i]}' and '{gname}'"
                    )
                owner[i] = gname
            selections[gname] = ids
        on_bus = bus_plan(cfgs, what)  # checked before any group is built
        check_supplies(cfgs)  # the BAM groups of one supply give it the same values

        self._groups: dict[str, _Group] = {}
        for (gname, cfg), s in zip(cfgs.items(), self._group_seeds(seeds, len(cfgs))):
            ids = selections[gname]
            model = cfg.build(
                joint_names=[self.joint_names[i] for i in ids],
                num_envs=self.num_envs,
                device=self.device,
                seed=s,
                **({} if asset is None else {"asset": asset}),
                **{"name": gname, **model_kwargs},
            )
            self._groups[gname] = _Group(gname, model, ids)

        share_supplies(grp.model.drive for grp in self._groups.values())  # BAM servos naming one supply
        self._needs_mass = any(grp.stable_pd for grp in self._groups.values())
        self._needs_dt = any(grp.model.needs_dt for grp in self._groups.values())
        self.passive_joints = tuple(n for i, n in enumerate(self.joint_names) if i not in owner)
        if self.passive_joints:
            warnings.warn(
                f"ActuatorCollection: joints {list(self.passive_joints)} are in no group and stay passive (zero effort)",
                stacklevel=2,
            )
        n, j = self.num_envs, self.num_joints
        self.target_command = CommandBuffer(n, j, self.device, dtype)
        self.computed_effort = torch.zeros((n, j), dtype=dtype, device=self.device)
        self.applied_effort = torch.zeros((n, j), dtype=dtype, device=self.device)
        self.output_command = OutputCommand(self.applied_effort)  # the effort sent is the applied effort
        self._shape = (n, j)
        self._np_dtype = np.dtype(np.float32 if dtype == torch.float32 else np.float64)
        # the buses: one per name, over its groups' columns; their groups read the delivered commands
        self._buses: dict[str, Bus] = {}
        for b, (bname, (groups, spec)) in enumerate(on_bus.items()):
            cols = [i for g in groups for i in selections[g]]
            self._buses[bname] = Bus(bname, groups, cols, n, *spec, derive_seeds(seeds, _BUS_STREAM, b), self.device, dtype)
        self._targets = (self.target_command.position, self.target_command.velocity, self.target_command.effort)
        self._delivered = tuple(torch.zeros_like(t) for t in self._targets)
        for bus in self._buses.values():
            bus.bind(self._delivered)
        # Zero-copy outputs where the semantics allow it: with no delay, no bus and no passive joint
        # the position/velocity sent are the targets themselves.
        self._alias_command = not self.passive_joints and not self._buses and all(
            grp.model.delay is None for grp in self._groups.values())
        if self._alias_command:
            self.output_command.position = self.target_command.position
            self.output_command.velocity = self.target_command.velocity
        v = self.ops.view
        self._views = dict(
            pos=v(self.target_command.position),
            vel=v(self.target_command.velocity),
            eff=v(self.target_command.effort),
            computed=v(self.computed_effort),
            applied=v(self.applied_effort),
            out_pos=v(self.output_command.position),
            out_vel=v(self.output_command.velocity),
            bus_pos=v(self._delivered[0]),
            bus_vel=v(self._delivered[1]),
            bus_eff=v(self._delivered[2]),
        )
        bused = {g for bus in self._buses.values() for g in bus.groups}
        for grp in self._groups.values():
            keys = ("bus_pos", "bus_vel", "bus_eff") if grp.name in bused else ("pos", "vel", "eff")
            grp.src = tuple(self._views[k] for k in keys)
            keys += ("out_pos", "out_vel")
            if isinstance(grp.cols, slice):
                # contiguous group: the model writes its efforts straight into the collection's
                # buffers (column views), and reads its targets from views
                grp.model.bind_output_buffers(self.computed_effort[:, grp.cols], self.applied_effort[:, grp.cols])
                grp.views = tuple(self._views[k][:, grp.cols] for k in keys)
        only = next(iter(self._groups.values()))
        self._fast = None
        self._skipped: frozenset[str] = frozenset()
        if (
            len(self._groups) == 1
            and only.cols == slice(0, self.num_joints)
            and self.ops.name == "numpy"
            and not only.stable_pd
            and not self._buses
        ):
            self._fast = only
            self._fast_targets = (self._views["pos"], self._views["vel"], self._views["eff"])
        self._fast_group = self._fast
        self._cast_in = ((np.empty(self._shape, np.float32), np.empty(self._shape, np.float32))
                         if self.ops.name == "numpy" and self._np_dtype == np.float32 else None)
        """float32 buffers the float64 state of a MuJoCo backend is cast into once per substep (numpy path)."""

    @staticmethod
    def _group_seeds(seeds: np.ndarray, n: int) -> list[np.ndarray]:
        """Group ``k``'s per-env seeds: env ``i``'s from env ``i``'s seed and ``k`` only."""
        return [derive_seeds(seeds, k) for k in range(n)]

    # -- read-only mapping ------------------------------------------------------------------
    def __getitem__(self, name: str) -> Actuator:
        try:
            return self._groups[name].model
        except (KeyError, TypeError):  # TypeError: an unhashable key
            raise UnknownNameError(f"unknown actuator group {name!r}; groups are {list(self._groups)}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._groups)

    def __len__(self) -> int:
        return len(self._groups)

    def __setitem__(self, key, value):
        raise TypeError("ActuatorCollection is read-only; build a new one to change groups")

    def __delitem__(self, key):
        raise TypeError("ActuatorCollection is read-only; build a new one to change groups")

    def joint_ids(self, group: str) -> list[int]:
        """Articulation indices of a group's joints."""
        self[group]
        return list(self._groups[group].ids)

    @property
    def buses(self) -> Mapping[str, Bus]:
        """``{bus name: Bus}`` (:mod:`actuator_gym.runtime.bus`): each bus's groups, this control
        step's ``outcome`` and ``delay`` and the per-env ``frames`` / ``holds`` / ``drops`` counts."""
        return dict(self._buses)

    def begin_step(self) -> None:
        """A control step starts (the :class:`~actuator_gym.runtime.substep.SubstepEngine` calls it in
        ``begin()``): each bus draws this step's frame per env; the frame carries the
        ``target_command`` of the step's first :meth:`compute`. Nothing happens without buses."""
        for bus in self._buses.values():
            bus.begin()

    def reset_commands(self, env_ids: Any = None) -> None:
        """The servos on a bus of ``env_ids`` (None: all) now execute ``target_command`` (the reset
        targets, written after :meth:`reset`; :class:`~actuator_gym.runtime.ActuatorRig` calls it). Without
        this call after a reset, the first command after it. Nothing happens without buses."""
        if not self._buses:
            return
        ids = as_env_ids(env_ids, self.num_envs, self.device)
        ids = None if ids is None else ids.cpu().numpy()
        for bus in self._buses.values():
            bus.latch_commands(self._targets, self._delivered, ids)

    @property
    def stable_pd_groups(self) -> list[str]:
        """Groups in the Stable-PD effort mode (``effort_mode="implicit"``, and every
        ``ImplicitActuatorCfg``; they need the mass-matrix terms)."""
        return [g for g, grp in self._groups.items() if grp.stable_pd]

    @property
    def needs_mass_matrix(self) -> bool:
        """Whether some group is in the Stable-PD mode (``effort_mode="implicit"``): then every
        ``compute`` needs ``inverse_mass=`` (and optionally ``bias_force=``) over the collection's
        joints, e.g. from ``backend.mass_matrix_terms(range(collection.num_joints))``."""
        return self._needs_mass

    def skip_groups(self, names: Sequence[str]) -> None:
        """Leave the groups ``names`` out of :meth:`compute` from now on (native execution runs them in
        the physics engine; docs/native.md): their columns of ``computed_effort`` / ``applied_effort``
        and the output command are the consumer's to write. ``()`` computes every group again."""
        for n in names:
            self[n]  # unknown names: the usual error
        self._skipped = frozenset(names)
        self._fast = None if self._skipped else self._fast_group
        # skipped columns stay at what the consumer wrote (zero after this call)
        for n in self._skipped:
            c = self._groups[n].cols
            self._views["computed"][:, c] = 0
            self._views["applied"][:, c] = 0

    # -- runtime ----------------------------------------------------------------------------
    def _view_in(self, x: Any, name: str):
        if type(x) is np.ndarray and x.dtype == self._np_dtype and x.shape == self._shape and self.ops.name == "numpy":
            return x  # the common case (a backend's own arrays): no conversion
        if isinstance(x, torch.Tensor) and not (x.is_complex() or x.dtype == torch.bool):
            if tuple(x.shape) != (self.num_envs, self.num_joints):
                raise ValueError(
                    f"ActuatorCollection: {name} must have shape ({self.num_envs}, {self.num_joints}) "
                    f"(num_envs, num_joints), got {tuple(x.shape)}"
                )
            return x.detach().to(self.device, self.computed_effort.dtype)
        arr = real_array(x, name, "ActuatorCollection", self._np_dtype)
        if arr.shape != (self.num_envs, self.num_joints):
            raise ValueError(
                f"ActuatorCollection: {name} must have shape ({self.num_envs}, {self.num_joints}) "
                f"(num_envs, num_joints), got {arr.shape}"
            )
        return torch.from_numpy(arr).to(self.device) if self.ops.name == "torch" else arr

    def compute(
        self,
        joint_pos: Any,
        joint_vel: Any,
        dt: float | None = None,
        inverse_mass: Any = None,
        bias_force: Any = None,
    ) -> torch.Tensor:
        """Run every group for one physics substep on the current ``target_command``.

        joint_pos [rad or m], joint_vel [rad/s or m/s]: ``(num_envs, num_joints)``. Returns the
        applied effort ``(num_envs, num_joints)`` (the collection's buffer; copy it to keep it).

        inverse_mass ``(num_envs, num_joints, num_joints)`` [1/kg, rad²/(kg·m²)] and bias_force
        ``(num_envs, num_joints)`` [N·m or N] are the articulation's inverse joint-space mass
        matrix and bias force (Coriolis + gravity) over the collection's joints, needed when
        :attr:`needs_mass_matrix` (some Stable-PD group, ``effort_mode="implicit"``): each such group
        gets the rows and columns of its joints; explicit groups get nothing (and without Stable-PD
        groups both arguments are ignored). ``dt`` [s], when given, is a finite number > 0.
        """
        if dt is not self._dt_checked:
            if dt is None:
                if self._needs_dt:  # refused before any group moves its state
                    raise ValueError(
                        f"ActuatorCollection: groups {[g for g, grp in self._groups.items() if grp.model.needs_dt]} "
                        "need dt= (the substep in s, > 0), got None"
                    )
            else:
                check_dt(dt, "ActuatorCollection")
                self._dt_checked = dt if type(dt) is float else ()  # floats are immutable: checked once
        for bus in self._buses.values():  # the servos' commands of this substep
            if not bus.begun:
                raise RuntimeError(
                    f"ActuatorCollection: groups {list(bus.groups)} are on bus '{bus.name}': call begin_step() at the "
                    "start of every control step, after writing target_command (a SubstepEngine does)"
                )
            bus.substep(self._targets, self._delivered)
        if self._cast_in is not None:  # a backend's float64 state cast once into the model's float32 buffers
            q_in, qd_in = self._cast_in
            if type(joint_pos) is np.ndarray and joint_pos.dtype == np.float64 and joint_pos.shape == self._shape:
                np.copyto(q_in, joint_pos, casting="same_kind")
                joint_pos = q_in
            if type(joint_vel) is np.ndarray and joint_vel.dtype == np.float64 and joint_vel.shape == self._shape:
                np.copyto(qd_in, joint_vel, casting="same_kind")
                joint_vel = qd_in
        fast = self._fast
        if (
            fast is not None
            and type(joint_pos) is np.ndarray
            and type(joint_vel) is np.ndarray
            and joint_pos.shape == self._shape
            and joint_vel.shape == self._shape
            and joint_pos.dtype == self._np_dtype
            and joint_vel.dtype == self._np_dtype
        ):
            # one explicit group over all joints: nothing to gather; efforts land in place
            model = fast.model
            model.compute_arrays(joint_pos, joint_vel, *self._fast_targets, dt)
            if not self._alias_command:
                dq, dqd, _ = model.delayed_command
                self._views["out_pos"][...] = dq
                self._views["out_vel"][...] = dqd
            return self.applied_effort
        q, qd = self._view_in(joint_pos, "joint_pos"), self._view_in(joint_vel, "joint_vel")
        if self.ops.name == "numpy":
            q = q.numpy() if isinstance(q, torch.Tensor) else q
            qd = qd.numpy() if isinstance(qd, torch.Tensor) else qd
        mass = self._mass_terms(inverse_mass, bias_force) if self._needs_mass else None
        v = self._views
        skipped = self._skipped
        for grp in self._groups.values():
            if skipped and grp.name in skipped:
                continue
            c, m = grp.cols, grp.model
            kw = _NO_KW if mass is None else mass.get(grp.name, _NO_KW)
            if grp.views is not None:  # hot path: cached views, outputs written in place
                pos, vel, eff, out_pos, out_vel = grp.views
                m.compute_arrays(q[:, c], qd[:, c], pos, vel, eff, dt, **kw)
                if not self._alias_command:
                    dq, dqd, _ = m.delayed_command
                    out_pos[...] = dq
                    out_vel[...] = dqd
                continue
            src = grp.src
            m.compute_arrays(q[:, c], qd[:, c], src[0][:, c], src[1][:, c], src[2][:, c], dt, **kw)
            applied = m.applied_array
            v["computed"][:, c] = m.computed_array
            v["applied"][:, c] = applied
            if not self._alias_command:
                dq, dqd, _ = m.delayed_command
                v["out_pos"][:, c] = dq
                v["out_vel"][:, c] = dqd
        return self.applied_effort

    def _mass_terms(self, inverse_mass: Any, bias_force: Any) -> dict[str, dict[str, Any]]:
        """``{group: {inverse_mass: (N, Jg, Jg), bias_force: (N, Jg) | None}}`` for the Stable-PD groups."""
        n, j = self.num_envs, self.num_joints
        if inverse_mass is None:
            raise ValueError(
                f"ActuatorCollection: groups {self.stable_pd_groups} use effort_mode='implicit' and need "
                f"inverse_mass= ({n}, {j}, {j}) (num_envs, num_joints, num_joints): the inverse joint-space mass "
                f"matrix over the collection's joints (e.g. backend.mass_matrix_terms(range({j})))"
            )
        A = inverse_mass if isinstance(inverse_mass, (np.ndarray, torch.Tensor)) else np.asarray(inverse_mass, dtype=np.float64)
        if tuple(A.shape) != (n, j, j):
            raise ValueError(
                f"ActuatorCollection: inverse_mass must have shape ({n}, {j}, {j}) (num_envs, num_joints, "
                f"num_joints), got {tuple(A.shape)}"
            )
        b = bias_force
        if b is not None:
            b = b if isinstance(b, (np.ndarray, torch.Tensor)) else np.asarray(b, dtype=np.float64)
            if tuple(b.shape) != (n, j):
                raise ValueError(
                    f"ActuatorCollection: bias_force must have shape ({n}, {j}) (num_envs, num_joints), got {tuple(b.shape)}"
                )
        out = {}
        for grp in self._groups.values():
            if not grp.stable_pd:
                continue
            c = grp.cols
            if isinstance(c, slice):
                block = A[:, c, c]
            else:
                idx = c if isinstance(A, np.ndarray) else torch.as_tensor(c, device=A.device)
                block = A[:, idx][:, :, idx]
            out[grp.name] = {"inverse_mass": block, "bias_force": None if b is None else b[:, c]}
        return out

    def reset(self, env_ids: Any = None) -> None:
        """Reset the listed envs (None = all) of every group; other envs are untouched."""
        ids = as_env_ids(env_ids, self.num_envs, self.device)
        for grp in self._groups.values():
            grp.model.reset(ids)
        for bus in self._buses.values():
            bus.reset(None if ids is None else ids.cpu().numpy())

    def seed(self, seed: Any) -> None:
        """Re-seed every group's per-env streams (derived from ``seed`` as at construction): an
        integer ``s`` in ``[0, 2**64)`` (env ``i`` gets ``s + i``) or a sequence of ``num_envs`` seeds."""
        seeds = env_seeds(seed, self.num_envs, "ActuatorCollection.seed", allow_none=False)
        for grp, s in zip(self._groups.values(), self._group_seeds(seeds, len(self._groups))):
            grp.model.seed(s)
        for b, bus in enumerate(self._buses.values()):
            bus.seed(derive_seeds(seeds, _BUS_STREAM, b))

    def set_parameter(self, group: str, name: str, value: Any, env_ids: Any = None, joint_ids: Any = None) -> None:
        """Set parameter ``name`` of ``group`` for ``env_ids`` (None = all) and the group's joints
        ``joint_ids`` (None = all; indices into the group's joints, or regexes over their names) now:
        :meth:`~actuator_gym.actuators.batch.BatchModel.set_parameter` (validated; the new nominal)."""
        self[group].set_parameter(name, value, env_ids=env_ids, joint_ids=joint_ids)

    def parameters(self) -> dict[str, dict[str, torch.Tensor]]:
        """``{group: {parameter: values in force (num_envs, group joints)}}``."""
        return {g: grp.model.parameters() for g, grp in self._groups.items()}

    def __repr__(self) -> str:
        groups = ", ".join(f"{g}: {type(grp.model.cfg).__name__}{grp.ids}" for g, grp in self._groups.items())
        return f"ActuatorCollection(num_envs={self.num_envs}, joints={len(self.joint_names)}, {{{groups}}})"
