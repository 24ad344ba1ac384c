"""Rotor groups: multirotor thrusters as first-class actuator groups of the substep engine.

A *rotor group* is to rotors what a joint group of an :class:`~actuator_gym.ActuatorCollection` is
to joints: a :class:`~actuator_gym.actuators.thruster.ThrusterCfg` bound to named rotors of a model
and a batch of envs. :class:`RotorGroup` holds the :class:`~actuator_gym.actuators.thruster.Thruster`
(the rotor dynamics), the thrust commands ``(num_envs, num_rotors)`` [N] and a **writer** that
delivers the thrusts to the physics at every substep. :class:`RotorGroups` holds every rotor group
of a model; it is a :class:`~actuator_gym.runtime.substep.SubstepParticipant` of the
:class:`~actuator_gym.runtime.substep.SubstepEngine`, so the rotors run in the same substep loop as the
joints (after the joint groups wrote their efforts, before the physics advances)::

    for each substep k:
        thrust = thruster.compute(target_thrust)        # rotor dynamics, every group
        writer.write(thrust)                            # -> the physics
        power row k = power_model(thrust, rotor_speed)  # accounting

Writers (:class:`RotorWriter`):

* :class:`BodyWrenchWriter` -- allocation matrix -> body-frame wrench -> world frame ->
  ``xfrc_applied`` of one airframe body (the quadrotor task);
* :class:`CtrlWriter` -- the model's own MuJoCo actuators that drive the rotor sites
  (``<motor site="rotor_0" gear="0 0 1 0 0 0"/>``): ``ctrl = thrust / (gain * |gear[:3]|)``
  (a Gymnasium env under :class:`~actuator_gym.wrappers.ActuatorWrapper`);
* :class:`BodyForceWriter` -- rotors that are bodies: the thrust along each rotor body's z axis,
  through ``xfrc_applied`` of that body (no reaction torque).

Action mapping (:func:`action_to_thrust`): a policy action in ``[-1, 1]`` per rotor maps linearly
onto the group's ``thrust_range = (T_min, T_max)``::

    T_cmd = T_min + (clip(a, -1, 1) + 1) / 2 * (T_max - T_min)        [N]

Telemetry (:data:`ROTOR_TELEMETRY`) goes through the engine's telemetry channel into
``info["actuator"]``, over all rotors of all groups in group order (``RotorGroups.rotor_names``);
the group's parameters in force (``k_f``, ``tau_inc``, ``tau_dec``, ``initial_rps``) appear in
``info["actuator"]["parameters"][group]`` after reset, as joint groups' do.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import Any, Callable, Iterator, Protocol, Sequence

import numpy as np
import torch

from ..actuators.batch import as_env_ids
from ..actuators.thruster import Thruster, ThrusterCfg
from ..randomization.streams import derive_seeds, env_seeds
from .telemetry import StepTelemetry

__all__ = [
    "ROTOR_TELEMETRY",
    "AIR_DENSITY",
    "action_to_thrust",
    "thrust_to_action",
    "induced_power",
    "ShaftPower",
    "InducedPower",
    "RotorWriter",
    "BodyWrenchWriter",
    "CtrlWriter",
    "BodyForceWriter",
    "RotorGroup",
    "RotorGroups",
    "rotor_group_seeds",
]

ROTOR_TELEMETRY: dict[str, str] = {
    "target_thrust": "thrust command from the action [N], held over the control step",
    "computed_thrust": "rotor thrust k_f w² of the rotor dynamics [N], last substep",
    "applied_thrust": "computed_thrust clipped to thrust_range, what the physics received [N], last substep",
    "rotor_speed": "rotor speed sqrt(computed_thrust / k_f) [rev/s], last substep",
    "rotor_power": "power drawn by the rotor [W], last substep, from the group's power model (default "
                   ":class:`ShaftPower`: drag torque x angular speed = torque_to_thrust_ratio * T * 2 pi * "
                   "rotor_speed; the quadrotor task: :class:`InducedPower`, ideal induced power T^1.5 / "
                   "sqrt(2 rho A))",
    "rotor_mean_power": "mean of rotor_power over the control step's substeps [W]",
    "rotor_energy": "sum over the control step's substeps of |rotor_power| * physics_dt [J]",
}
"""Every ``info["actuator"]`` key of the rotor groups and its meaning, ``(num_envs, num_rotors)``
over all rotor groups (the single env and the wrapper: ``(num_rotors,)``)."""

AIR_DENSITY = 1.225
"""[kg/m³] at sea level."""


# -- action mapping and power models ---------------------------------------------------------------
def action_to_thrust(action: Any, thrust_range: Sequence[float]) -> np.ndarray:
    """Thrust command [N] from actions in [-1, 1]: ``T_min + (a + 1) / 2 * (T_max - T_min)`` (clipped)."""
    lo, hi = (float(v) for v in thrust_range)
    a = np.clip(np.asarray(action, dtype=np.float64), -1.0, 1.0)
    return lo + (a + 1.0) * 0.5 * (hi - lo)


def thrust_to_action(thrust: Any, thrust_range: Sequence[float]) -> np.ndarray:
    """Inverse of :func:`action_to_thrust` (not clipped): ``2 (T - T_min) / (T_max - T_min) - 1``."""
    lo, hi = (float(v) for v in thrust_range)
    return 2.0 * (np.asarray(thrust, dtype=np.float64) - lo) / (hi - lo) - 1.0


def induced_power(thrust: Any, propeller_radius: float, air_density: float = AIR_DENSITY) -> np.ndarray:
    """Ideal induced power per rotor [W]: ``max(T, 0)^1.5 / sqrt(2 rho pi r²)`` (momentum theory;
    ``propeller_radius`` r [m], ``air_density`` rho [kg/m³])."""
    area = math.pi * propeller_radius**2
    return np.maximum(np.asarray(thrust, dtype=np.float64), 0.0) ** 1.5 / math.sqrt(2.0 * air_density * area)


class ShaftPower:
    """Default power model: the rotor's drag torque times its angular speed [W],
    ``P = torque_to_thrust_ratio * max(T, 0) * 2 pi * rotor_speed`` (the same drag torque the
    allocation matrix applies as yaw reaction; ``rotor_speed`` [rev/s])."""

    uses_speed = True

    def __init__(self, torque_to_thrust_ratio: float):
        self.factor = 2.0 * math.pi * float(torque_to_thrust_ratio)

    def __call__(self, thrust: np.ndarray, rotor_speed: np.ndarray | None) -> np.ndarray:
        return self.factor * np.maximum(thrust.astype(np.float64), 0.0) * rotor_speed


class InducedPower:
    """Power model: ideal induced power :func:`induced_power` of a disc of ``propeller_radius`` [m]."""

    uses_speed = False

    def __init__(self, propeller_radius: float, air_density: float = AIR_DENSITY):
        self.scale = 1.0 / math.sqrt(2.0 * air_density * math.pi * float(propeller_radius) ** 2)

    def __call__(self, thrust: np.ndarray, rotor_speed: np.ndarray | None = None) -> np.ndarray:
        return np.maximum(thrust.astype(np.float64), 0.0) ** 1.5 * self.scale


PowerModel = Callable[[np.ndarray, "np.ndarray | None"], np.ndarray]
"""``power(applied_thrust (N, R) [N], rotor_speed (N, R) [rev/s] or None) -> (N, R) [W]``; a model
with ``uses_speed = False`` gets ``None`` for the speed (it is then not computed every substep)."""


# -- writers -----------------------------------------------------------------------------------------
class RotorWriter(Protocol):
    """Delivers a rotor group's thrusts to the physics, once per substep."""

    needs_derived: bool
    """Whether :meth:`write` reads derived state (body orientations): the batched task then keeps
    the derived fields current after every substep."""

    def write(self, thrust: np.ndarray) -> None:
        """``thrust (num_envs, num_rotors)`` [N]: the applied thrust of this substep."""


def _source(x: Any) -> Callable[[], np.ndarray]:
    return x if callable(x) else (lambda: x)


class BodyWrenchWriter:
    """Thrusts -> ``allocation`` -> body-frame wrench -> world frame -> ``xfrc_applied[:, body]``
    (force [N] and torque [N·m] at the body's centre of mass; give the allocation's rotor positions
    relative to it).

    Args:
        xmat: ``(num_envs, nbody, 9)`` body orientations (row-major), or a callable returning them
            (fetched every substep: a backend's ``lambda: backend.field("xmat")``).
        xfrc: ``(num_envs, nbody, 6)`` applied body wrenches, or a callable returning them.
        body_id: the airframe body.
        allocation: ``(6, num_rotors)`` (:func:`~actuator_gym.actuators.thruster.allocation_matrix`).
    """

    needs_derived = True

    def __init__(self, xmat: Any, xfrc: Any, body_id: int, allocation: Any):
        a = allocation.detach().cpu().numpy() if isinstance(allocation, torch.Tensor) else np.asarray(allocation)
        if a.ndim != 2 or a.shape[0] != 6:
            raise ValueError(f"BodyWrenchWriter: allocation must have shape (6, num_rotors), got {a.shape}")
        self._at = np.ascontiguousarray(a.T, dtype=np.float64)
        self._xmat, self._xfrc = _source(xmat), _source(xfrc)
        self.body_id = int(body_id)

    def write(self, thrust: np.ndarray) -> None:
        n, b = thrust.shape[0], self.body_id
        # body frame force, torque: summed rotor by rotor, so every env's rounding is the same whatever
        # the batch size (a BLAS matmul picks its kernel, and its rounding, by the number of rows)
        wrench = thrust[:, 0, None] * self._at[0]
        for k in range(1, self._at.shape[0]):
            wrench += thrust[:, k, None] * self._at[k]
        wrench = wrench.reshape(n, 2, 3)
        rot = self._xmat()[:, b].reshape(n, 3, 3)
        self._xfrc()[:, b] = np.einsum("nij,nkj->nki", rot, wrench).reshape(n, 6)


class CtrlWriter:
    """Thrusts -> the model's MuJoCo actuators on the rotor sites: ``ctrl[:, acts] = thrust /
    newtons_per_ctrl`` (``newtons_per_ctrl = gain * |gear[:3]|``; a ``gear`` torque component
    gives the yaw reaction, as MuJoCo applies it).

    Args:
        ctrl: ``(num_envs, nu)`` controls (a Gymnasium env's ``data.ctrl[None]``), or a callable.
        actuator_ids: ``(num_rotors,)`` actuator per rotor.
        newtons_per_ctrl: ``(num_rotors,)`` thrust [N] per unit of ctrl.
    """

    needs_derived = False

    def __init__(self, ctrl: Any, actuator_ids: Sequence[int], newtons_per_ctrl: Any):
        self._ctrl = _source(ctrl)
        ids = np.asarray(actuator_ids, dtype=np.intp)
        contiguous = len(ids) and np.array_equal(ids, np.arange(ids[0], ids[0] + len(ids)))
        self._cols: Any = slice(int(ids[0]), int(ids[0]) + len(ids)) if contiguous else ids
        self._inv = 1.0 / np.asarray(newtons_per_ctrl, dtype=np.float64)
        self.actuator_ids = ids

    def write(self, thrust: np.ndarray) -> None:
        self._ctrl()[:, self._cols] = thrust * self._inv


class BodyForceWriter:
    """Thrusts -> ``xfrc_applied`` of each rotor's own body: force ``T * z_body`` (world frame, at
    the body's centre of mass), no reaction torque.

    Args:
        xmat, xfrc: as :class:`BodyWrenchWriter`.
        body_ids: ``(num_rotors,)`` distinct rotor bodies.
    """

    needs_derived = True

    def __init__(self, xmat: Any, xfrc: Any, body_ids: Sequence[int]):
        self.body_ids = np.asarray(body_ids, dtype=np.intp)
        if len(set(self.body_ids.tolist())) != len(self.body_ids):
            raise ValueError(f"BodyForceWriter: rotor bodies must be distinct, got {self.body_ids.tolist()}")
        self._xmat, self._xfrc = _source(xmat), _source(xfrc)

    def write(self, thrust: np.ndarray) -> None:
        z = self._xmat()[:, self.body_ids][:, :, 2::3]  # third column of each rotation: the body's z axis
        self._xfrc()[:, self.body_ids, 0:3] = thrust[:, :, None] * z

    def clear(self) -> None:
        """Zero the rotor bodies' wrenches (when the writer is detached)."""
        self._xfrc()[:, self.body_ids] = 0.0


# -- groups ------------------------------------------------------------------------------------------
ROTOR_STREAM_TAG = 0x7407
"""Tag of the rotor groups' streams (:func:`~actuator_gym.randomization.streams.derive_seeds`), apart from the joint groups'."""


def rotor_group_seeds(seed: Any, n: int, num_envs: int = 1) -> list[np.ndarray]:
    """The per-env seeds of ``n`` rotor groups derived from ``seed`` (None, an int ``s`` -- env ``i``
    gets ``s + i`` -- or one seed per env): group ``k``, env ``i`` from env ``i``'s seed,
    :data:`ROTOR_STREAM_TAG` and ``k`` only (independent of the joint groups' streams)."""
    seeds = env_seeds(seed, num_envs, "rotor groups")
    return [derive_seeds(seeds, ROTOR_STREAM_TAG, k) for k in range(n)]


class RotorGroup:
    """One rotor group: a :class:`Thruster` over ``rotor_names``, its writer, its power model.

    Args:
        name: the group name (``info["actuator"]["parameters"][name]``).
        cfg: the group's :class:`ThrusterCfg`.
        rotor_names: the group's rotors (sites or bodies), in thrust-column order.
        writer: a :class:`RotorWriter` delivering the thrusts to the physics.
        num_envs: envs of the batch.
        physics_dt: [s] the substep; the rotor dynamics integrate once per substep (``cfg.dt``, if
            set to something else, is replaced by it, with a warning).
        initial_rps: [rev/s] rotor speed at construction and after every reset, or
        initial_thrust: [N] the thrust instead, for whatever ``k_f`` is drawn (one of the two; see
            :meth:`ThrusterCfg.build`).
        seed: the thruster's seeds (None, an int ``s``: env ``i`` gets ``s + i``, or one per env).
        power: a :data:`PowerModel` (default :class:`ShaftPower` of the config's ratio).
    """

    def __init__(self, name: str, cfg: ThrusterCfg, rotor_names: Sequence[str], writer: RotorWriter, *,
                 num_envs: int, physics_dt: float, initial_rps: Any = None, initial_thrust: Any = None,
                 seed: Any = None, power: PowerModel | None = None):
        if not isinstance(cfg, ThrusterCfg):
            raise TypeError(f"rotor group '{name}': cfg must be a ThrusterCfg, got {type(cfg).__name__}")
        if cfg.dt is not None and not math.isclose(cfg.dt, physics_dt, rel_tol=1e-9):
            warnings.warn(f"rotor group '{name}': ThrusterCfg.dt={cfg.dt} s is replaced by the physics substep "
                          f"{physics_dt} s (the rotor dynamics integrate once per substep)", stacklevel=3)
        self.name, self.cfg, self.writer = name, cfg, writer
        self.thruster: Thruster = cfg.build(rotor_names=rotor_names, num_envs=num_envs, seed=seed,
                                            initial_rps=initial_rps, initial_thrust=initial_thrust,
                                            dt=float(physics_dt), name=name)
        self.rotor_names = self.thruster.rotor_names
        self.power: PowerModel = power if power is not None else ShaftPower(cfg.torque_to_thrust_ratio)
        self.computed = self.thruster.computed_thrust.numpy()
        """The thruster's computed thrust [N] (a view of its buffer)."""
        self.applied = self.thruster.applied_thrust.numpy()
        """The thruster's applied thrust [N] (a view of its buffer)."""
        self.inv_thrust_const = np.zeros(self.applied.shape)
        """``1 / k_f`` [rps²/N] in force (refreshed at every reset)."""
        self.refresh()

    def refresh(self) -> None:
        """Re-read the parameters in force (after the thruster's reset re-drew them)."""
        self.inv_thrust_const[...] = 1.0 / self.thruster.parameter("thrust_const").numpy()

    def rotor_speed(self) -> np.ndarray:
        """``sqrt(max(computed_thrust, 0) / k_f)`` [rev/s], ``(num_envs, num_rotors)`` (fresh)."""
        return np.sqrt(np.maximum(self.computed, 0.0) * self.inv_thrust_const)


class RotorGroups(Mapping):
    """Every rotor group of a model: a read-only mapping ``group name -> Thruster`` and the engine
    participant that runs them at every substep (:class:`~actuator_gym.runtime.substep.SubstepParticipant`).

    Args:
        groups: the :class:`RotorGroup` s (names unique; rotors claimed by one group each).
        num_substeps: substeps per control step (telemetry rows; :meth:`resize` changes it).
        physics_dt: [s] the substep.

    Attributes: ``rotor_names`` (every rotor, group by group: the telemetry's column order),
    ``target_thrust`` ``(num_envs, num_rotors)`` [N] (the commands, float32; each group's columns
    are a view of it), ``needs_derived`` (some writer reads body orientations).
    """

    def __init__(self, groups: Sequence[RotorGroup], num_substeps: int, physics_dt: float):
        groups = list(groups)
        if not groups:
            raise ValueError("RotorGroups: give at least one rotor group")
        names = [g.name for g in groups]
        if len(set(names)) != len(names):
            raise ValueError(f"RotorGroups: duplicate group names in {names}")
        owner: dict[str, str] = {}
        for g in groups:
            for r in g.rotor_names:
                if r in owner:
                    raise ValueError(f"RotorGroups: rotor '{r}' is claimed by groups '{owner[r]}' and '{g.name}'")
                owner[r] = g.name
        self._groups = {g.name: g for g in groups}
        self.num_envs = groups[0].thruster.num_envs
        self.rotor_names: tuple[str, ...] = tuple(owner)
        self.num_rotors = len(self.rotor_names)
        self.physics_dt = float(physics_dt)
        self.target_thrust = np.zeros((self.num_envs, self.num_rotors), np.float32)
        self._cols: list[tuple[RotorGroup, slice]] = []
        off = 0
        for g in groups:
            k = len(g.rotor_names)
            self._cols.append((g, slice(off, off + k)))
            off += k
        self._targets = [self.target_thrust[:, c] for _, c in self._cols]
        self._speed = [g.power.uses_speed for g in groups]
        self.needs_derived = any(getattr(g.writer, "needs_derived", True) for g in groups)
        self.telemetry_rows = StepTelemetry(np.zeros((self.num_envs, self.num_rotors)), num_substeps, self.physics_dt)
        self._power_row = np.zeros((self.num_envs, self.num_rotors))
        for (g, _), tgt in zip(self._cols, self._targets):  # the rotors hold their initial thrust
            tgt[...] = g.applied

    # -- mapping ----------------------------------------------------------------------------------
    def __getitem__(self, name: str) -> Thruster:
        try:
            return self._groups[name].thruster
        except (KeyError, TypeError):
            raise KeyError(f"unknown rotor group {name!r}; rotor groups are {list(self._groups)}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._groups)

    def __len__(self) -> int:
        return len(self._groups)

    def group(self, name: str) -> RotorGroup:
        """The :class:`RotorGroup` ``name`` (thruster, writer, power model)."""
        self[name]
        return self._groups[name]

    def columns(self, name: str) -> slice:
        """The columns of group ``name`` in :attr:`rotor_names` / the telemetry."""
        self[name]
        return next(c for g, c in self._cols if g.name == name)

    # -- commands -----------------------------------------------------------------------------------
    def set_actions(self, actions: np.ndarray) -> None:
        """Thrust commands from actions ``(num_envs, num_rotors)`` in ``[-1, 1]`` (clipped), mapped
        over each group's ``thrust_range`` (:func:`action_to_thrust`)."""
        for (g, c), tgt in zip(self._cols, self._targets):
            tgt[...] = action_to_thrust(actions[:, c], g.cfg.thrust_range)

    # -- the engine participant -----------------------------------------------------------------
    def begin(self) -> None:
        self.telemetry_rows.begin()

    def resize(self, num_substeps: int) -> None:
        self.telemetry_rows = StepTelemetry(self._power_row, num_substeps, self.physics_dt)

    def substep(self, k: int) -> None:
        """Substep ``k``: every group's rotor dynamics toward its commands, its writer, its power row."""
        row = self._power_row
        for (g, c), tgt, speed in zip(self._cols, self._targets, self._speed):
            g.thruster.compute_arrays(tgt)
            g.writer.write(g.applied)
            row[:, c] = g.power(g.applied, g.rotor_speed() if speed else None)
        self.telemetry_rows.record_power(k, row)

    def telemetry(self) -> dict[str, np.ndarray]:
        """The :data:`ROTOR_TELEMETRY` arrays ``(num_envs, num_rotors)`` of the control step just
        run (fresh host arrays)."""
        power, mean, energy = self.telemetry_rows.reduce()
        groups = [g for g, _ in self._cols]
        cat = np.concatenate
        return {
            "target_thrust": self.target_thrust.copy(),
            "computed_thrust": cat([g.computed for g in groups], axis=1),
            "applied_thrust": cat([g.applied for g in groups], axis=1),
            "rotor_speed": cat([g.rotor_speed() for g in groups], axis=1),
            "rotor_power": power,
            "rotor_mean_power": mean,
            "rotor_energy": energy,
        }

    # -- episodes -----------------------------------------------------------------------------------
    def reset(self, env_ids: Any = None) -> None:
        """Reset ``env_ids`` (None = all) of every group: re-draw its parameters, restart its rotors
        at their initial thrust (:meth:`Thruster.reset`) and hold it as the command; other envs are
        untouched."""
        ids = as_env_ids(env_ids, self.num_envs, torch.device("cpu"))
        rows = slice(None) if ids is None else ids.numpy()
        for (g, c), tgt in zip(self._cols, self._targets):
            g.thruster.reset(ids)
            g.refresh()
            tgt[rows] = g.applied[rows]

    def seed(self, seed: Any) -> None:
        """Re-seed every group's per-env streams (:func:`rotor_group_seeds`): an int ``s`` in
        ``[0, 2**64)`` (env ``i`` gets ``s + i``) or a sequence of ``num_envs`` seeds."""
        seed = env_seeds(seed, self.num_envs, "RotorGroups.seed", allow_none=False)
        for g, s in zip(self._groups.values(), rotor_group_seeds(seed, len(self._groups), self.num_envs)):
            g.thruster.seed(s)

    def parameters(self) -> dict[str, dict[str, torch.Tensor]]:
        """``{group: {parameter: values in force (num_envs, group rotors)}}``."""
        return {name: g.thruster.parameters() for name, g in self._groups.items()}

    def randomized(self) -> list[str]:
        """Groups with a parameter drawn from a range (what a reset re-draws)."""
        return [name for name, g in self._groups.items() if g.thruster.randomized_parameters()]

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}: {list(g.rotor_names)}" for n, g in self._groups.items())
        return f"RotorGroups(num_envs={self.num_envs}, {{{inner}}})"
