"""Quadrotor: hover and reach a goal with four rotors driven by a thruster model (rotors, not joints).

The model is written here in Python (:func:`quadrotor_mjcf`): a 1.0 kg X-configuration airframe
(arms 0.15 m from the centre to each rotor), a free joint, four rotor sites ``rotor_0..rotor_3``
and a floor; each propeller is a 5 g disc fixed to the airframe. The model has no actuated joints:
the rotors are a rotor group (``ThrusterCfg``, :mod:`actuator_gym.runtime.rotors`) of the task layer.
Rotor layout, seen from above (x forward, y left), counter-clockwise from front-left::

    rotor_0 (+x, +y)  spin +1        rotor_3 (+x, -y)  spin -1
    rotor_1 (-x, +y)  spin -1        rotor_2 (-x, -y)  spin +1

Spin ``+1`` is a rotor turning clockwise seen from above; its drag yaws the airframe
counter-clockwise (+z) by ``torque_to_thrust_ratio * T`` (the convention of
:func:`actuator_gym.actuators.thruster.allocation_matrix`). Diagonal rotors share a direction,
so equal thrusts give no net yaw torque.

Action: per-rotor thrust commands in ``[-1, 1]``, mapped linearly over the thruster's
``thrust_range = (T_min, T_max)``::

    T_cmd = T_min + (action + 1) / 2 * (T_max - T_min)        [N]

that is ``action_offset = (T_min + T_max) / 2`` and ``action_scale = (T_max - T_min) / 2`` [N] per
rotor, reported in ``info["action_scale"]`` / ``info["action_offset"]`` at reset.
``hover_action`` is the action whose thrust carries the airframe's weight:
``2 * (m g / 4 - T_min) / (T_max - T_min) - 1`` (about -0.203 with the defaults). It holds altitude
from a level start; the default reset tilts the airframe (``init_tilt_noise``, up to 0.1 rad in roll
and in pitch), where the same thrust ``m g`` along the tilted body axis accelerates it at
``g (z_body - e_z)``: it sinks by ``g (1 - cos(tilt)) t² / 2`` and drifts sideways
(``init_tilt_noise=0`` starts level).

Every physics substep the substep engine runs the rotor group: the thruster advances its rotor
dynamics toward ``T_cmd``; its writer (:class:`~actuator_gym.runtime.rotors.BodyWrenchWriter`) sends the
thrusts through the allocation matrix (built from the rotor sites' positions relative to the centre
of mass, the spin directions and ``torque_to_thrust_ratio``) to a body-frame wrench, rotates it into
the world frame and writes it to ``xfrc_applied`` (applied at the centre of mass).

Observation (22 floats): goal minus position (world) [m] (3), body-to-world rotation matrix,
row-major (9), linear velocity, world frame [m/s] (3), angular velocity, body frame [rad/s] (3),
last action (4).

Reward (per second, times ``dt_policy``): ``distance * (1 - tanh(|e| / distance_scale))`` +
``upright * R_zz`` - ``ang_vel * |w|²`` - ``action_rate * |a - a_prev|²`` - ``power * P`` (``P``:
the total rotor power, mean over the step's substeps), plus ``crash`` once on termination.

Rotor power (``info["actuator"]["rotor_power"]``, last substep, and ``["rotor_mean_power"]``, W per
rotor): ideal induced power from momentum theory, ``P = T^1.5 / sqrt(2 rho A)`` with air density
``rho = 1.225 kg/m³`` and disc area ``A = pi r²`` (``r = 0.0635 m``, a 5-inch propeller); about 22 W
per rotor at hover. ``info["actuator"]`` holds the rotor keys of
:data:`~actuator_gym.runtime.rotors.ROTOR_TELEMETRY` (``(num_envs, 4)``) and, after a reset,
``["parameters"]["rotors"]``: ``thrust_const``, ``tau_inc``, ``tau_dec``, ``initial_rps`` in force.

Termination: crash (base below ``min_altitude``, or tilted more than ``max_tilt``), or out of
bounds (``|x|, |y| > bounds_xy`` or ``z > max_altitude``).

Default thruster (:func:`quadrotor_thruster_cfg`): the ARL-class rotor time constants (rise
0.05-0.08 s, fall 0.005 s, re-drawn per env and rotor at every reset) and torque-to-thrust ratio
0.07 m (kept: they describe the motor-propeller unit, not the airframe); thrust range scaled to the
1 kg airframe, (0.1, 6.0) N per rotor (thrust-to-weight 2.45); the thrust constant fixed at the middle
of the ARL range, 1.376e-5 N/rps² (about 422 rps at hover). Every reset starts the rotors at the
hover thrust ``m g / 4`` (speed ``sqrt(m g / 4 / k_f)``, ``initial_rps`` in force), also when a
``ThrusterCfg`` with a ``thrust_const_range`` randomizes ``k_f``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np
from gymnasium.vector import VectorEnv

from .._checks import check_bool, check_real, real_array
from .._math import quat_to_rotmat
from ..actuators.thruster import ThrusterCfg, allocation_matrix
from ..runtime.rotors import AIR_DENSITY, BodyWrenchWriter, InducedPower, RotorGroup, induced_power
from ..runtime.rotors import action_to_thrust, thrust_to_action  # noqa: F401  (re-exported: the task's action mapping)
from ..envs.task import BatchedTask, TaskCfg
from ..envs.task_env import TaskEnv
from ..envs.task_cfg import check_nested_cfg, check_real_fields

__all__ = [
    "quadrotor_thruster_cfg",
    "QuadrotorCfg",
    "QuadrotorTask",
    "QuadrotorEnv",
    "ROTOR_NAMES",
    "SPIN_DIRECTIONS",
    "QuadrotorGeometry",
    "quadrotor_mjcf",
    "action_to_thrust",
    "thrust_to_action",
    "rotor_power",
    "quadrotor_observation",
    "QuadrotorRewardCfg",
    "quadrotor_reward",
    "quadrotor_termination",
    "sample_goal",
]

ROTOR_NAMES = ("rotor_0", "rotor_1", "rotor_2", "rotor_3")
SPIN_DIRECTIONS = (1.0, -1.0, 1.0, -1.0)
"""Per rotor: ``+1`` clockwise seen from above (reaction torque +z on the airframe), ``-1`` counter-clockwise."""
_ROTOR_ANGLES = (45.0, 135.0, 225.0, 315.0)  # degrees from +x, counter-clockwise


@dataclass(frozen=True)
class QuadrotorGeometry:
    """Dimensions [m] and masses [kg] of the generated airframe."""

    arm_length: float = 0.15
    """Centre to rotor axis [m]."""
    body_size: tuple[float, float, float] = (0.10, 0.10, 0.04)
    """Full size of the central box [m]."""
    body_mass: float = 0.6
    """[kg]: battery, electronics, frame centre."""
    arm_mass: float = 0.05
    """[kg] per arm."""
    motor_mass: float = 0.045
    """[kg] per motor."""
    propeller_mass: float = 0.005
    """[kg] per propeller (a disc fixed to the airframe at the rotor)."""
    rotor_height: float = 0.025
    """Height of the rotor discs above the centre [m]."""
    propeller_radius: float = 0.0635
    """[m]: radius of the rotor disc (visual; used by the power proxy)."""
    init_height: float = 1.0
    """Altitude of the airframe at reset [m]."""

    @property
    def total_mass(self) -> float:
        return self.body_mass + 4 * (self.arm_mass + self.motor_mass + self.propeller_mass)

    def rotor_positions(self) -> np.ndarray:
        """``(4, 3)`` rotor-disc centres in the body frame [m]."""
        a = np.deg2rad(_ROTOR_ANGLES)
        return np.stack(
            [self.arm_length * np.cos(a), self.arm_length * np.sin(a), np.full(4, self.rotor_height)], axis=1
        )


def quadrotor_mjcf(geometry: QuadrotorGeometry | None = None, timestep: float = 0.005) -> str:
    """MJCF of the airframe above a floor (a string for ``mujoco.MjModel.from_xml_string``).

    The rotor discs do not collide; the airframe's box and motors collide with the floor. The
    model has no MJCF actuators and no joint besides the free joint: thrust arrives as ``xfrc_applied``.
    """
    g = geometry or QuadrotorGeometry()
    hx, hy, hz = (s / 2 for s in g.body_size)
    pos = g.rotor_positions()
    parts = []
    for i, (x, y, z) in enumerate(pos):
        spin_rgba = "0.85 0.3 0.25 0.5" if SPIN_DIRECTIONS[i] > 0 else "0.25 0.45 0.85 0.5"
        parts.append(
            f"""
      <geom name="arm_{i}" type="capsule" fromto="0 0 0 {x:.9f} {y:.9f} 0" size="0.008" mass="{g.arm_mass}" material="frame"/>
      <geom name="motor_{i}" type="cylinder" pos="{x:.9f} {y:.9f} {z / 2:.9f}" size="0.014 {z / 2:.9f}" mass="{g.motor_mass}" material="motor"/>
      <site name="{ROTOR_NAMES[i]}" pos="{x:.9f} {y:.9f} {z:.9f}" size="0.01"/>
      <geom name="prop_{i}" type="cylinder" pos="{x:.9f} {y:.9f} {z:.9f}" size="{g.propeller_radius} 0.002"
            mass="{g.propeller_mass}" contype="0" conaffinity="0" rgba="{spin_rgba}"/>"""
        )
    return f"""<mujoco model="actuator_gym_quadrotor">
  <compiler angle="radian" autolimits="true"/>
  <option timestep="{timestep}"/>
  <visual>
    <global offwidth="640" offheight="480"/>
    <headlight ambient="0.4 0.4 0.4" diffuse="0.6 0.6 0.6"/>
  </visual>
  <default>
    <geom contype="0" conaffinity="1" condim="3"/>
  </default>
  <asset>
    <texture name="grid" type="2d" builtin="checker" rgb1="0.25 0.3 0.35" rgb2="0.35 0.4 0.45" width="256" height="256"/>
    <material name="grid" texture="grid" texrepeat="8 8" reflectance="0.1"/>
    <material name="frame" rgba="0.2 0.2 0.22 1"/>
    <material name="motor" rgba="0.6 0.6 0.65 1"/>
  </asset>
  <worldbody>
    <light name="sun" pos="0 0 5" dir="0 0 -1" directional="true"/>
    <geom name="floor" type="plane" size="0 0 0.05" contype="1" conaffinity="0" material="grid"/>
    <site name="goal" pos="0 0 {g.init_height}" size="0.03" rgba="0.1 0.9 0.2 0.6" group="2"/>
    <body name="airframe" pos="0 0 {g.init_height}">
      <freejoint name="root"/>
      <camera name="track" mode="trackcom" pos="0 -1.2 0.5" xyaxes="1 0 0 0 0.4 1"/>
      <geom name="body" type="box" size="{hx:.4f} {hy:.4f} {hz:.4f}" mass="{g.body_mass}" material="frame"/>{''.join(parts)}
    </body>
  </worldbody>
</mujoco>
"""


# ---------------------------------------------------------------------------------------------
# pure vectorized functions (numpy, batch-first)
# ---------------------------------------------------------------------------------------------
def rotor_power(thrust, propeller_radius: float) -> np.ndarray:
    """Ideal induced power per rotor [W]: ``max(T, 0)^1.5 / sqrt(2 rho pi r²)`` (momentum theory;
    :func:`actuator_gym.runtime.rotors.induced_power` at sea-level air density)."""
    return induced_power(thrust, propeller_radius, AIR_DENSITY)


def sample_goal(rng: Any, n: int, low, high) -> np.ndarray:
    """``(n, 3)`` goal positions [m], uniform in the box ``[low, high]`` (``rng``: the task's
    :class:`~actuator_gym.randomization.streams.EnvRandom` for ``n`` envs, or any ``np.random.Generator``)."""
    return rng.uniform(np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64), size=(n, 3))


def quadrotor_observation(pos, quat, lin_vel_world, ang_vel_body, goal, last_action) -> np.ndarray:
    """The 22-float observation (layout in the module docstring), ``(N, 22)`` float32."""
    n = np.asarray(pos).shape[0]
    out = np.empty((n, 22), dtype=np.float32)
    out[:, 0:3] = np.asarray(goal) - np.asarray(pos)
    out[:, 3:12] = quat_to_rotmat(quat).reshape(n, 9)
    out[:, 12:15] = lin_vel_world
    out[:, 15:18] = ang_vel_body
    out[:, 18:22] = last_action
    return out


@dataclass
class QuadrotorRewardCfg:
    """Reward weights (per second of simulated time; the step reward is ``sum(w * term) * dt_policy``)."""

    distance: float = 2.0
    """Weight of ``1 - tanh(|goal - pos| / distance_scale)``."""
    distance_scale: float = 0.8
    """[m]."""
    upright: float = 0.5
    """Weight of ``R_zz`` (cosine of the tilt)."""
    ang_vel: float = -0.05
    """Weight of ``|w|²`` [(rad/s)²]."""
    action_rate: float = -0.1
    """Weight of ``|a_t - a_{t-1}|²``."""
    power: float = -1e-3
    """Weight of the total rotor power proxy [W]."""
    crash: float = -5.0
    """Added once (not scaled by dt) when an episode terminates."""


def quadrotor_reward(cfg: QuadrotorRewardCfg, dt: float, pos, quat, ang_vel_body, goal, action, last_action, power, terminated):
    """Reward ``(N,)`` and its weighted terms ``{name: (N,)}``; ``power`` (N,) [W] is the total rotor power."""
    dist = np.linalg.norm(np.asarray(goal, dtype=np.float64) - np.asarray(pos, dtype=np.float64), axis=1)
    rzz = quat_to_rotmat(quat)[:, 2, 2]
    w = np.asarray(ang_vel_body, dtype=np.float64)
    terms = {
        "distance": cfg.distance * (1.0 - np.tanh(dist / cfg.distance_scale)) * dt,
        "upright": cfg.upright * rzz * dt,
        "ang_vel": cfg.ang_vel * np.sum(w**2, axis=1) * dt,
        "action_rate": cfg.action_rate * np.sum((np.asarray(action) - np.asarray(last_action)) ** 2, axis=1) * dt,
        "power": cfg.power * np.asarray(power, dtype=np.float64) * dt,
        "crash": cfg.crash * np.asarray(terminated, dtype=np.float64),
    }
    return sum(terms.values()), terms


def quadrotor_termination(pos, quat, min_altitude: float, max_altitude: float, bounds_xy: float, max_tilt: float):
    """``(N,)`` bool: crash (z < ``min_altitude`` [m] or tilt > ``max_tilt`` [rad]) or out of bounds
    (``|x|`` or ``|y|`` > ``bounds_xy`` [m], or z > ``max_altitude`` [m])."""
    p = np.asarray(pos, dtype=np.float64)
    tilt = np.arccos(np.clip(quat_to_rotmat(quat)[:, 2, 2], -1.0, 1.0))
    crash = (p[:, 2] < min_altitude) | (tilt > max_tilt)
    oob = (np.abs(p[:, 0]) > bounds_xy) | (np.abs(p[:, 1]) > bounds_xy) | (p[:, 2] > max_altitude)
    return crash | oob


# ---------------------------------------------------------------------------------------------
# thruster and task
# ---------------------------------------------------------------------------------------------
ARL_THRUST_CONST = 0.5 * (9.26312e-06 + 1.826312e-05)
"""[N/rps²]: middle of the ARL-class thrust-constant range."""


def quadrotor_thruster_cfg(**overrides: Any) -> ThrusterCfg:
    """The default rotors (numbers and rationale in the module docstring); ``overrides`` replace fields."""
    kw = dict(
        thruster_names_expr=["rotor_[0-3]"],
        thrust_range=(0.1, 6.0),
        thrust_const_range=(ARL_THRUST_CONST, ARL_THRUST_CONST),
        tau_inc_range=(0.05, 0.08),
        tau_dec_range=(0.005, 0.005),
        torque_to_thrust_ratio=0.07,
    )
    kw.update(overrides)
    return ThrusterCfg(**kw)


@dataclass(kw_only=True)
class QuadrotorCfg(TaskCfg):
    """Quadrotor goal reaching. Fields of :class:`~actuator_gym.envs.task.TaskCfg` plus the ones below.

    ``actuators`` takes a :class:`~actuator_gym.actuators.thruster.ThrusterCfg`, or
    ``{group: ThrusterCfg}`` with one group, matching the four rotor sites (the task's one rotor
    group; actions: one per rotor in ``[-1, 1]``, the task layer's rotor mapping).
    """

    physics_dt: float = 0.005
    decimation: int = 2
    episode_length_s: float = 10.0
    actuators: Any = field(default_factory=lambda: {"rotors": quadrotor_thruster_cfg()})
    geometry: QuadrotorGeometry = field(default_factory=QuadrotorGeometry)
    """Dimensions and masses of the generated airframe."""
    goal_low: tuple[float, float, float] = (-1.0, -1.0, 0.5)
    """[m]: lower corner of the goal box."""
    goal_high: tuple[float, float, float] = (1.0, 1.0, 1.5)
    """[m]: upper corner of the goal box."""
    init_pos_noise: float = 0.1
    """[m]: uniform noise on the start position (around (0, 0, init_height))."""
    init_tilt_noise: float = 0.1
    """[rad]: uniform noise on the start roll and pitch."""
    random_yaw: bool = True
    """Draw the start heading uniformly."""
    reward_cfg: QuadrotorRewardCfg = field(default_factory=QuadrotorRewardCfg)
    """Reward weights."""
    min_altitude: float = 0.1
    """[m]: crash below."""
    max_altitude: float = 4.0
    """[m]: out of bounds above."""
    bounds_xy: float = 3.0
    """[m]: out of bounds beyond ``|x|`` or ``|y|``."""
    max_tilt: float = 1.5
    """[rad]: crash when tilted more than this."""

    def __post_init__(self):
        super().__post_init__()
        if isinstance(self.actuators, ThrusterCfg):  # actuators=ThrusterCfg(...) is {"rotors": it}
            self.actuators = {"rotors": self.actuators}

    def model_xml(self) -> str:
        return quadrotor_mjcf(self.geometry, self.physics_dt) if not self.mjcf else super().model_xml()

    def validate(self) -> None:
        super().validate()
        name = type(self).__name__
        _thruster_of(self.actuators)
        check_nested_cfg(self, "geometry", QuadrotorGeometry, name)
        check_nested_cfg(self, "reward_cfg", QuadrotorRewardCfg, name)
        check_real(self.reward_cfg.distance_scale, "reward_cfg.distance_scale", name, low=0.0, low_open=True)
        g = self.geometry
        for key in ("arm_length", "body_mass", "arm_mass", "motor_mass", "propeller_mass", "propeller_radius", "init_height"):
            check_real(getattr(g, key), f"geometry.{key}", name, low=0.0, low_open=True)
        if len(g.body_size) != 3 or min(g.body_size) <= 0:
            raise ValueError(f"{name}: geometry.body_size must be 3 sizes > 0, got {g.body_size!r}")
        for key in ("goal_low", "goal_high"):
            v = real_array(getattr(self, key), key, name)
            if v.shape != (3,) or not np.isfinite(v).all():
                raise ValueError(f"{name}: {key} must be 3 finite numbers (x, y, z) [m], got {getattr(self, key)!r}")
        if (np.asarray(self.goal_low, dtype=float) > np.asarray(self.goal_high, dtype=float)).any():
            raise ValueError(f"{name}: goal_low must be <= goal_high, got {self.goal_low!r} and {self.goal_high!r}")
        check_real_fields(self, name, {"init_pos_noise": dict(low=0.0), "init_tilt_noise": dict(low=0.0),
                                       "min_altitude": {}, "max_altitude": {}, "bounds_xy": dict(low=0.0),
                                       "max_tilt": dict(low=0.0)})
        check_bool(self.random_yaw, "random_yaw", name)


def _thruster_of(actuators: Any) -> ThrusterCfg:
    if isinstance(actuators, ThrusterCfg):
        return actuators
    if isinstance(actuators, Mapping) and len(actuators) == 1:
        (cfg,) = actuators.values()
        if isinstance(cfg, ThrusterCfg):
            return cfg
    raise ValueError(
        f"QuadrotorCfg: actuators must be a ThrusterCfg or {{group: ThrusterCfg}} with one group, got {actuators!r}"
    )


class QuadrotorTask(BatchedTask, VectorEnv):  # VectorEnv a direct base: skrl's wrap_env(env) detects Gymnasium by those
    """Batched quadrotor goal reaching (see the module docstring).

    Attributes: ``thruster`` (the rotor group's :class:`~actuator_gym.actuators.thruster.Thruster`),
    ``rotors`` (:class:`~actuator_gym.runtime.rotors.RotorGroups`: ``target_thrust``, ...), ``allocation``
    ``(6, 4)``, ``hover_thrust`` [N per rotor], ``hover_action`` ``(num_envs, 4)``, ``goals``
    ``(num_envs, 3)`` [m].

    The rotors are the task's one rotor group: :meth:`rotor_group` gives the task layer its thruster
    and writer (allocation -> body wrench -> ``xfrc_applied``); the substep engine runs it at every
    substep and reports its telemetry (:data:`~actuator_gym.runtime.rotors.ROTOR_TELEMETRY`).
    """

    cfg_cls = QuadrotorCfg

    def rotor_group(self, name: str, cfg: ThrusterCfg, seed: int | None) -> RotorGroup:
        import mujoco

        m, be = self.model, self.backend
        self._bid = bid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "airframe")
        if bid < 0:
            raise ValueError("QuadrotorTask: the model has no body named 'airframe'")
        sites = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, r) for r in ROTOR_NAMES]
        if min(sites) < 0:
            raise ValueError(f"QuadrotorTask: the model needs sites {list(ROTOR_NAMES)}")
        rotors = cfg.select_rotors(ROTOR_NAMES)
        if list(rotors) != list(ROTOR_NAMES):
            raise ValueError(f"QuadrotorTask: the ThrusterCfg must drive all rotors {list(ROTOR_NAMES)}, it matches {rotors}")
        self.mass = float(m.body_subtreemass[bid])
        self.hover_thrust = self.mass * float(-m.opt.gravity[2]) / len(ROTOR_NAMES)
        lo, hi = cfg.thrust_range
        if not lo < self.hover_thrust < hi:
            raise ValueError(
                f"QuadrotorTask: the hover thrust {self.hover_thrust:.4f} N per rotor lies outside thrust_range {cfg.thrust_range}"
            )
        # rotor positions relative to the centre of mass, in the body frame
        self.allocation = allocation_matrix(m.site_pos[sites] - m.body_ipos[bid], SPIN_DIRECTIONS, cfg.torque_to_thrust_ratio)
        writer = BodyWrenchWriter(lambda: be.field("xmat"), lambda: be.xfrc_applied, bid, self.allocation)
        self._rotor_group_name = name
        return RotorGroup(name, cfg, ROTOR_NAMES, writer, num_envs=self.num_envs, physics_dt=self.physics_dt,
                          initial_thrust=self.hover_thrust, seed=seed, power=InducedPower(self.cfg.geometry.propeller_radius))

    @property
    def thruster(self):
        """The rotor group's :class:`~actuator_gym.actuators.thruster.Thruster`."""
        return self.rotors[self._rotor_group_name]

    def setup(self) -> None:
        import mujoco

        n, m = self.num_envs, self.model
        tc = self.rotors.group(self._rotor_group_name).cfg
        self.hover_action = np.tile(thrust_to_action(self.hover_thrust, tc.thrust_range), (n, len(ROTOR_NAMES))).astype(np.float32)
        self.goals = np.zeros((n, 3))
        self.last_actions = np.zeros((n, len(ROTOR_NAMES)))
        """The last action applied (zero after a reset), moved on once per step after the physics."""
        self._previous = self.last_actions  # the action before the step just taken (the reward reads it)
        self.reward_terms: dict[str, np.ndarray] = {}
        self._goal_site = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, "goal")
        self._site_pos = self.backend.model_field("site_pos") if self._goal_site >= 0 else None

    def sample_reset(self, env_ids, rng):
        k, cfg = len(env_ids), self.cfg
        self.goals[env_ids] = sample_goal(rng, k, cfg.goal_low, cfg.goal_high)
        if self._site_pos is not None:
            self._site_pos[env_ids, self._goal_site] = self.goals[env_ids]
        self.last_actions[env_ids] = 0.0
        qpos = np.tile(self.model.qpos0, (k, 1))
        qpos[:, 0:3] = (0.0, 0.0, cfg.geometry.init_height)
        qpos[:, 0:3] += rng.uniform(-cfg.init_pos_noise, cfg.init_pos_noise, (k, 3))
        roll, pitch = rng.uniform(-cfg.init_tilt_noise, cfg.init_tilt_noise, (k, 2)).T  # env axis first
        yaw = rng.uniform(-math.pi, math.pi, k) if cfg.random_yaw else np.zeros(k)
        qpos[:, 3:7] = _quat_from_euler(roll, pitch, yaw)
        return {"qpos": qpos, "qvel": np.zeros((k, self.model.nv))}

    # -- task functions --------------------------------------------------------------------------
    def _base(self):
        be = self.backend
        return be.qpos[:, 0:3], be.qpos[:, 3:7], be.qvel[:, 0:3], be.qvel[:, 3:6]

    def observe(self) -> np.ndarray:
        pos, quat, v, w = self._base()
        return quadrotor_observation(pos, quat, v, w, self.goals, self.actions)

    def run_substeps(self) -> None:
        """The control step's physics, then the action history moved on once: :meth:`reward` and
        :meth:`terminated` only read, in any order and as often as asked."""
        super().run_substeps()
        self._previous, self.last_actions = self.last_actions, self.actions.copy()

    def reward(self) -> np.ndarray:
        pos, quat, v, w = self._base()
        rew, self.reward_terms = quadrotor_reward(
            self.cfg.reward_cfg, self.dt, pos, quat, w, self.goals, self.actions, self._previous,
            self.telemetry["rotor_mean_power"].sum(axis=1), self.terminated(),
        )
        return rew

    def terminated(self) -> np.ndarray:
        cfg = self.cfg
        pos, quat, _, _ = self._base()
        return quadrotor_termination(pos, quat, cfg.min_altitude, cfg.max_altitude, cfg.bounds_xy, cfg.max_tilt)

    def extra_info(self) -> dict[str, np.ndarray]:
        return {"goal": self.goals.copy(), "distance": np.linalg.norm(self.goals - self.backend.qpos[:, 0:3], axis=1)}


def _quat_from_euler(roll, pitch, yaw) -> np.ndarray:
    """``(N, 4)`` (w, x, y, z) of the intrinsic z-y-x rotation (yaw, then pitch, then roll)."""
    cr, sr = np.cos(roll / 2), np.sin(roll / 2)
    cp, sp = np.cos(pitch / 2), np.sin(pitch / 2)
    cy, sy = np.cos(yaw / 2), np.sin(yaw / 2)
    return np.stack(
        [cr * cp * cy + sr * sp * sy, sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy],
        axis=1,
    )


class QuadrotorEnv(TaskEnv):
    """Single-env quadrotor: :class:`~actuator_gym.envs.task_env.TaskEnv` plus ``hover_action`` ``(4,)``."""

    @property
    def hover_action(self) -> np.ndarray:
        """The action whose thrust carries the airframe's weight, ``(4,)`` float32."""
        return self.task.hover_action[0].copy()

    @property
    def hover_thrust(self) -> float:
        """[N] per rotor."""
        return self.task.hover_thrust
