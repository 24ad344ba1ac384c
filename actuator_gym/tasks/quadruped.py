"""Quadruped locomotion with real motors: a Go1/A1-class robot tracking a velocity command.

The model is written here in Python (:func:`quadruped_mjcf`): a 0.38 x 0.20 x 0.11 m trunk, four
legs with hip abduction, hip flexion and knee hinges (Unitree's names: ``FL_hip_joint, FL_thigh_joint,
FL_calf_joint, FR_..., RL_..., RR_...``), 0.213 m thighs and calves, sphere feet, a flat floor; about
12.4 kg in total.

Physics runs at 200 Hz (``dt = 0.005 s``); the policy acts at 50 Hz (decimation 4). The actuators
are recomputed at every physics substep from the measured joint state:

    target = default_pose + action_scale * action          (action_scale = 1 rad, action in [-1, 1])

The action space is ``Box(-1, 1, (12,))``: ``action_offset`` = the default standing pose
(:data:`DEFAULT_JOINT_POS` [rad]), ``action_scale`` = 1 rad per action unit, so the targets span
+-1 rad around the stance (until this release it was ``0.25 rad * action`` with action bounds +-4: the
same targets; the action-rate weight was rescaled with it, -0.01 / 0.25² = -0.16 per rad²).
``info["action_scale"]`` / ``info["action_offset"]`` report both at every reset.

Observation (48 floats, ``(num_envs, 48)`` in the vector env), scaled as legged_gym does
(:class:`~actuator_gym.tasks.quadruped_terms.QuadrupedObsScales`, field ``obs_scales``)::

    [ 0: 3]  base linear velocity, body frame          x 2.0  [per m/s]
    [ 3: 6]  base angular velocity, body frame         x 0.25 [per rad/s]
    [ 6: 9]  gravity direction in the body frame (unit vector; (0, 0, -1) when level)
    [ 9:21]  joint positions relative to the default pose  x 1.0 [per rad]
    [21:33]  joint velocities                          x 0.05 [per rad/s]
    [33:45]  last action
    [45:48]  velocity command: vx, vy x 2.0 [per m/s], yaw rate x 0.25 [per rad/s]

Commands (vx [m/s], vy [m/s], yaw rate [rad/s]) are drawn uniformly in ``command_ranges`` at reset
and again every ``command_resample_s`` (5 s) of an env's episode; each draw is a standing command
(all zero) with probability ``standing_command_prob`` (0.1); with ``command_ramp_s`` > 0 a command
drawn within an episode is reached linearly over that time (``task.commands`` is the command in
force, which the observation shows and the reward tracks; ``task.command_target`` the drawn one).
All draws come from the env's own stream (env ``i`` of a batch equals a single env seeded ``s + i``).

Feet (:class:`~actuator_gym.tasks.quadruped_terms.FootTracker`, ``task.feet``): the foot centres from
the calves' poses (the ``*_foot`` sites), contact when a foot centre is below ``contact_height``
(2.5 cm) above the floor, air time, touchdowns, planar foot speed, and the planar speed of each
foot's contact point (``slip_speed``: the sphere's material point on the floor, followed with the
calf's rotation, so rolling is not counted as slip); ``info["foot_contact"]``
``(num_envs, 4)`` in :data:`LEG_NAMES` order.

Reward (per policy step, weights per second times ``dt_policy``;
:class:`~actuator_gym.tasks.quadruped_terms.QuadrupedRewardCfg`): exp-kernel tracking of the
commanded planar velocity and yaw rate; penalties on vertical velocity, roll/pitch rates, tilt,
trunk height off its standing value (off by default), action rate, the actuators' mechanical power
``sum |applied_effort * joint_vel|`` (actuator telemetry, averaged over the substeps), squared
torques, joint accelerations and excursions beyond 90 % of the joint ranges; the gait terms of
legged_gym / Isaac Lab: feet air time on touchdown (``t_air - 0.3 s`` per landing foot while the
command moves; ``air_time_max`` caps ``t_air``, off by default), the feet's air-time variance (off
by default), foot slip (planar speed of feet in contact), foot clearance (moving feet below 8 cm),
and a stand-still term (joint deviation from the default pose under a standing command); ``reward_cfg.only_positive_rewards`` clips the sum at 0
before the termination penalty (off by default). Termination: the trunk touches the floor (its lowest
corner, computed from its pose, is within ``trunk_contact_margin`` of the floor), the base drops
below ``min_base_height`` or tilts more than ``max_tilt``.

Episodes: 20 s. ``random_episode_start=True`` (a field of every task config; for training) starts the
envs' first episodes at random points of the time limit so that they do not all time out together.

Default actuators (:func:`go1_dc_motor_cfg`): a DC motor with a linear torque-speed curve plus a
0..2 substep command delay re-drawn per episode. The numbers are chosen for a Go1-class joint module
(source-free rationale):

* ``actuator_effort_limit = 23.7 N·m`` -- the module's peak joint torque, set by its driver's current
  limit;
* ``actuator_velocity_limit = 30 rad/s`` -- the no-load joint speed (back-EMF equals the supply);
* ``saturation_effort = 2 * 23.7 = 47.4 N·m`` -- the stall torque of the linear torque-speed line;
  with it the current limit governs up to half the no-load speed (15 rad/s), above which torque falls
  linearly to zero at 30 rad/s; trotting joint speeds (about 5-10 rad/s) stay on the flat part while
  fast swings reach the sloped part;
* ``stiffness = 25 N·m/rad``, ``damping = 0.5 N·m·s/rad`` -- a compliant position loop: the knee sags
  about 0.15 rad under the robot's weight, the explicit loop is stable at the 5 ms substep with the
  0.01 kg·m² reflected rotor inertia (armature) of the model;
* delay 0..2 substeps (0..10 ms) -- bus and driver latency, re-drawn per env at every reset.

Presets: :func:`ideal_pd_cfg` (no torque-speed curve, no delay) and :func:`actuator_net_cfg` (a
learned actuator network from a file).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from gymnasium.vector import VectorEnv

from .._checks import check_bool, check_interval, check_real
from .._math import quat_rotate_inverse, quat_to_rotmat
from ..actuators.models import DCMotorCfg, IdealPDActuatorCfg
from ..actuators.net_models import ActuatorNetMLPCfg
from .quadruped_model import DEFAULT_JOINT_POS, JOINT_NAMES, JOINT_RANGES, LEG_NAMES, QuadrupedGeometry, quadruped_mjcf
from .quadruped_terms import (
    FootTracker,
    QuadrupedObsScales,
    QuadrupedRewardCfg,
    RewardInputs,
    foot_positions,
    quadruped_mirror,
    quadruped_observation,
    quadruped_reward,
)
from ..envs.task import BatchedTask, TaskCfg
from ..envs.task_cfg import check_nested_cfg, check_real_fields

__all__ = [
    "go1_dc_motor_cfg",
    "ideal_pd_cfg",
    "actuator_net_cfg",
    "QuadrupedCfg",
    "QuadrupedTask",
    "LEG_NAMES",
    "JOINT_NAMES",
    "DEFAULT_JOINT_POS",
    "JOINT_RANGES",
    "QuadrupedGeometry",
    "quadruped_mjcf",
    "quat_to_rotmat",
    "quat_rotate_inverse",
    "trunk_floor_clearance",
    "sample_velocity_command",
    "quadruped_observation",
    "quadruped_mirror",
    "QuadrupedObsScales",
    "QuadrupedRewardCfg",
    "quadruped_reward",
    "sample_commands",
    "quadruped_termination",
]

# ---------------------------------------------------------------------------------------------
# pure vectorized functions (numpy, batch-first)
# ---------------------------------------------------------------------------------------------
def trunk_floor_clearance(base_pos: np.ndarray, base_quat: np.ndarray, half_size) -> np.ndarray:
    """Height [m] of the trunk box's lowest corner above the floor plane z = 0, ``(N,)``.

    For a box with half sizes ``h`` centred at ``p`` with rotation ``R``, the lowest corner is at
    ``p_z - sum_i |R[2, i]| h_i``.
    """
    return _lowest_corner(np.asarray(base_pos, dtype=np.float64), quat_to_rotmat(base_quat), half_size)


def _lowest_corner(pos: np.ndarray, rot: np.ndarray, half_size) -> np.ndarray:
    return pos[:, 2] - np.abs(rot[:, 2, :]) @ np.asarray(half_size, dtype=np.float64)


def sample_velocity_command(rng: Any, n: int, ranges) -> np.ndarray:
    """``(n, 3)`` commands (vx [m/s], vy [m/s], yaw rate [rad/s]) uniform in ``ranges`` (3 (low, high) pairs);
    ``rng``: the task's :class:`~actuator_gym.randomization.streams.EnvRandom` for ``n`` envs (or an ``np.random.Generator``)."""
    r = np.asarray(ranges, dtype=np.float64).reshape(3, 2)
    return rng.uniform(r[:, 0], r[:, 1], size=(n, 3))


def sample_commands(rng: Any, n: int, ranges, standing_prob: float) -> np.ndarray:
    """``(n, 3)`` commands as :func:`sample_velocity_command`, each row then set to zero (a standing
    command) with probability ``standing_prob`` (one more uniform draw per env, after the command's)."""
    cmd = sample_velocity_command(rng, n, ranges)
    cmd[rng.uniform(0.0, 1.0, size=n) < standing_prob] = 0.0
    return cmd


def quadruped_termination(
    base_pos, base_quat, trunk_half_size, min_base_height: float, max_tilt: float, trunk_contact_margin: float
) -> np.ndarray:
    """``(N,)`` bool: trunk on the floor, base below ``min_base_height`` [m], or tilt above ``max_tilt`` [rad].

    Tilt is the angle between the body z axis and the world z axis.
    """
    pos = np.asarray(base_pos, dtype=np.float64)
    rot = quat_to_rotmat(base_quat)
    tilt = np.arccos(np.clip(rot[:, 2, 2], -1.0, 1.0))
    clearance = _lowest_corner(pos, rot, trunk_half_size)
    return (clearance < trunk_contact_margin) | (pos[:, 2] < min_base_height) | (tilt > max_tilt)


# ---------------------------------------------------------------------------------------------
# actuators
# ---------------------------------------------------------------------------------------------
GO1_EFFORT_LIMIT = 23.7
"""[N·m]: peak joint torque of the Go1-class module (driver current limit)."""
GO1_VELOCITY_LIMIT = 30.0
"""[rad/s]: no-load joint speed."""
GO1_SATURATION_EFFORT = 2.0 * GO1_EFFORT_LIMIT
"""[N·m]: stall torque of the linear torque-speed line (the current limit governs up to 15 rad/s)."""
GO1_STIFFNESS = 25.0
"""[N·m/rad]."""
GO1_DAMPING = 0.5
"""[N·m·s/rad]."""


def _go1(gains: bool = True, motor: bool = False) -> dict[str, Any]:
    """The Go1-class fields every preset starts from: all joints, the peak torque, with ``gains``
    the PD gains, with ``motor`` the DC motor's torque-speed line."""
    kw: dict[str, Any] = dict(joint_names_expr=[".*"], actuator_effort_limit=GO1_EFFORT_LIMIT)
    if gains:
        kw.update(stiffness=GO1_STIFFNESS, damping=GO1_DAMPING)
    if motor:
        kw.update(saturation_effort=GO1_SATURATION_EFFORT, actuator_velocity_limit=GO1_VELOCITY_LIMIT)
    return kw


def go1_dc_motor_cfg(min_delay: int = 0, max_delay: int = 2, **overrides: Any) -> DCMotorCfg:
    """The default leg actuators: DC motor with a torque-speed curve and a 0..2 substep delay
    (numbers and rationale in the module docstring); ``overrides`` replace any field."""
    return DCMotorCfg(**{**_go1(motor=True), "min_delay": min_delay, "max_delay": max_delay, **overrides})


def ideal_pd_cfg(**overrides: Any) -> IdealPDActuatorCfg:
    """Preset: ideal PD (same gains, effort clipped at 23.7 N·m, no torque-speed curve, no delay)."""
    return IdealPDActuatorCfg(**{**_go1(), **overrides})


def actuator_net_cfg(network_file: str, **overrides: Any) -> ActuatorNetMLPCfg:
    """Preset: a learned actuator network (``ActuatorNetMLPCfg``, ONNX or -- with
    ``allow_unsafe_checkpoint=True`` -- TorchScript) from ``network_file``, followed by the DC-motor
    clamp with the Go1-class limits (23.7 N·m, 30 rad/s). The bundled example net is
    ``configs/actuators/nets/dc_motor_mlp.onnx`` (preset ``learned_mlp``)."""
    return ActuatorNetMLPCfg(**{**_go1(gains=False, motor=True), "network_file": network_file, **overrides})


# ---------------------------------------------------------------------------------------------
# the task
# ---------------------------------------------------------------------------------------------
@dataclass(kw_only=True)
class QuadrupedCfg(TaskCfg):
    """Quadruped velocity tracking. Fields of :class:`~actuator_gym.envs.task.TaskCfg` plus the ones below."""

    physics_dt: float = 0.005
    decimation: int = 4
    episode_length_s: float = 20.0
    actuators: dict[str, Any] = field(default_factory=lambda: {"legs": go1_dc_motor_cfg()})
    action_modes = ("position",)  # the observation, the stance (action_offset) and the rewards read position targets
    action_mode: str = "position"
    action_joints: list[str] = field(default_factory=lambda: list(JOINT_NAMES))
    action_scale: float = 1.0
    """[rad per action unit]."""
    action_offset: Any = field(default_factory=lambda: list(DEFAULT_JOINT_POS))
    """[rad]: the default standing pose."""
    action_bounds: tuple[float, float] | None = (-1.0, 1.0)
    """Action space ``[-1, 1]`` (targets within ±1 rad of the default pose)."""
    geometry: QuadrupedGeometry = field(default_factory=QuadrupedGeometry)
    """Dimensions and masses of the generated model."""
    command_ranges: tuple = ((-1.0, 1.0), (-0.5, 0.5), (-1.0, 1.0))
    """(low, high) of vx [m/s], vy [m/s], yaw rate [rad/s], sampled uniformly at reset and every
    ``command_resample_s``."""
    command_resample_s: float = 5.0
    """[s]: every env draws a new command after this much of its episode (0: once per episode)."""
    standing_command_prob: float = 0.1
    """Probability that a drawn command is zero (stand still)."""
    command_ramp_s: float = 0.0
    """[s]: a command drawn within an episode is reached linearly over this time from the one in
    force, as a joystick moves (0: at once, legged_gym's way); the episode's first command holds
    from its first step."""
    obs_scales: QuadrupedObsScales = field(default_factory=QuadrupedObsScales)
    """Observation scales (module docstring)."""
    reward_cfg: QuadrupedRewardCfg = field(default_factory=QuadrupedRewardCfg)
    """Reward weights and gait targets."""
    contact_height: float = 0.025
    """[m]: a foot is in contact when its centre is lower than this above the floor (foot radius
    0.02 m + 5 mm)."""
    min_base_height: float = 0.15
    """[m]: terminate below."""
    max_tilt: float = 1.0
    """[rad]: terminate when the trunk's z axis tilts more than this from vertical."""
    trunk_contact_margin: float = 0.005
    """[m]: terminate when the trunk's lowest corner is this close to the floor."""
    joint_pos_noise: float = 0.05
    """[rad]: uniform noise on the default pose at reset."""
    random_yaw: bool = True
    """Draw the heading uniformly at reset."""
    render_camera: int | str = "track"
    """Frames follow the trunk from the side (the model's ``track`` camera)."""

    def model_xml(self) -> str:
        return quadruped_mjcf(self.geometry, self.physics_dt) if not self.mjcf else super().model_xml()

    def validate(self) -> None:
        super().validate()
        name = type(self).__name__
        check_nested_cfg(self, "geometry", QuadrupedGeometry, name)
        check_nested_cfg(self, "reward_cfg", QuadrupedRewardCfg, name, may_be_inf=("air_time_max",))
        check_nested_cfg(self, "obs_scales", QuadrupedObsScales, name)
        rc = self.reward_cfg
        check_real(rc.tracking_sigma, "reward_cfg.tracking_sigma", name, low=0.0, low_open=True)
        check_real(rc.soft_joint_limit, "reward_cfg.soft_joint_limit", name, low=0.0, high=1.0, low_open=True)
        check_bool(rc.only_positive_rewards, "reward_cfg.only_positive_rewards", name)
        for key in ("air_time_target", "air_time_max", "clearance_target", "moving_command", "base_height_target",
                    "air_time_variance_clip"):
            check_real(getattr(rc, key), f"reward_cfg.{key}", name, low=0.0, allow_inf=key == "air_time_max")
        g = self.geometry
        for key in ("trunk_mass", "hip_mass", "thigh_mass", "calf_mass", "foot_mass", "thigh_length", "calf_length",
                    "foot_radius", "init_height"):
            check_real(getattr(g, key), f"geometry.{key}", name, low=0.0, low_open=True)
        for key in ("armature", "joint_damping", "foot_friction", "thigh_offset"):
            check_real(getattr(g, key), f"geometry.{key}", name, low=0.0)
        if len(g.trunk_size) != 3 or len(g.hip_offset) != 2 or min(g.trunk_size) <= 0:
            raise ValueError(f"{name}: geometry.trunk_size must be 3 sizes > 0 and hip_offset 2 values, got "
                             f"{g.trunk_size!r}, {g.hip_offset!r}")
        check_real_fields(self, name, {"min_base_height": {}, "max_tilt": dict(low=0.0), "trunk_contact_margin": {},
                                       "joint_pos_noise": dict(low=0.0), "command_resample_s": dict(low=0.0),
                                       "command_ramp_s": dict(low=0.0), "standing_command_prob": dict(low=0.0, high=1.0),
                                       "contact_height": dict(low=0.0, low_open=True)})
        ranges = self.command_ranges
        if not isinstance(ranges, (list, tuple)) or len(ranges) != 3:
            raise TypeError(f"{name}: command_ranges must be three (low, high) pairs (vx, vy, yaw rate), got {ranges!r}")
        for label, r in zip(("vx [m/s]", "vy [m/s]", "yaw rate [rad/s]"), ranges):
            check_interval(r, f"command_ranges {label}", name)
        check_bool(self.random_yaw, "random_yaw", name)


class QuadrupedTask(BatchedTask, VectorEnv):  # VectorEnv a direct base: skrl's wrap_env(env) detects Gymnasium by those
    """Batched quadruped velocity tracking (see the module docstring)."""

    cfg_cls = QuadrupedCfg

    def setup(self) -> None:
        n = self.num_envs
        self.commands = np.zeros((n, 3))
        """Velocity command in force per env: vx [m/s], vy [m/s], yaw rate [rad/s]."""
        self.command_target = np.zeros((n, 3))
        """The last command drawn per env, which ``commands`` reaches over ``command_ramp_s``."""
        self._command_from = np.zeros((n, 3))
        self._ramp_left = np.zeros(n, dtype=np.int64)  # steps until ``commands`` equals ``command_target``
        self._ramp_steps = max(0, int(round(self.cfg.command_ramp_s / self.dt)))
        self.last_actions = np.zeros((n, self.num_actions))
        """The action of the step before (zero after a reset), moved on once per step after the physics."""
        self._inputs: RewardInputs | None = None  # what the step's reward reads (:meth:`_advance`)
        self.reward_terms: dict[str, np.ndarray] = {}
        self.default_joint_pos = np.asarray(self.cfg.action_offset, dtype=np.float64)
        self._jq = self.backend.joints.qpos_adr
        missing = set(JOINT_NAMES) - set(self.joint_names)
        if missing and not self.cfg.mjcf:
            raise ValueError(f"QuadrupedTask: the model lacks joints {sorted(missing)}")
        self._half = np.asarray(self.cfg.geometry.trunk_size) / 2
        import mujoco

        self._calf_ids = [mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, f"{leg}_calf") for leg in LEG_NAMES]
        if min(self._calf_ids) < 0:
            raise ValueError(f"QuadrupedTask: the model needs the bodies {[f'{leg}_calf' for leg in LEG_NAMES]}")
        self.foot_names = LEG_NAMES
        """Names of the feet in ``feet``' order."""
        self.feet = FootTracker(n, len(LEG_NAMES), self.cfg.contact_height, self.cfg.geometry.foot_radius)
        """Foot contact and air-time bookkeeping (:class:`~actuator_gym.tasks.quadruped_terms.FootTracker`)."""
        self._feet_fresh = np.ones(n, dtype=bool)  # reset since the last foot update: re-measure
        self._last_joint_vel = np.zeros((n, len(self.joint_names)))
        self._joint_range = np.asarray(self.backend.joints.range, dtype=np.float64).reshape(-1, 2)  # (J, 2) [rad]
        steps = round(self.cfg.command_resample_s / self.dt)
        self._resample_steps = int(steps) if steps > 0 else 0

    def sample_reset(self, env_ids, rng):
        k = len(env_ids)
        cfg = self.cfg
        qpos = np.tile(self.model.qpos0, (k, 1))
        qpos[:, 2] = cfg.geometry.init_height
        yaw = rng.uniform(-math.pi, math.pi, size=k) if cfg.random_yaw else np.zeros(k)
        qpos[:, 3] = np.cos(yaw / 2)
        qpos[:, 6] = np.sin(yaw / 2)
        qpos[:, self._jq] = self.default_joint_pos + rng.uniform(-cfg.joint_pos_noise, cfg.joint_pos_noise, (k, len(self._jq)))
        self.commands[env_ids] = sample_commands(rng, k, cfg.command_ranges, cfg.standing_command_prob)
        self.command_target[env_ids] = self.commands[env_ids]
        self._ramp_left[env_ids] = 0
        self.last_actions[env_ids] = 0.0
        self._last_joint_vel[env_ids] = 0.0
        self._feet_fresh[env_ids] = True
        return {"qpos": qpos, "qvel": np.zeros((k, self.model.nv))}

    # state in the body frame
    def _base(self):
        be = self.backend
        return be.qpos[:, 0:3], be.qpos[:, 3:7], be.qvel[:, 0:3], be.qvel[:, 3:6]

    def foot_positions(self) -> np.ndarray:
        """``(num_envs, 4, 3)`` foot centres [m] in :data:`LEG_NAMES` order, from the calves' poses."""
        return self._foot_frames()[0]

    def _foot_frames(self) -> tuple[np.ndarray, np.ndarray]:
        """Foot centres ``(N, 4, 3)`` [m] and the feet's (calves') world rotations ``(N, 4, 3, 3)``."""
        be = self.backend
        mat = be.field("xmat")[:, self._calf_ids]
        pos = foot_positions(be.field("xpos")[:, self._calf_ids], mat, self.cfg.geometry.calf_length)
        return pos, np.asarray(mat, dtype=np.float64).reshape(-1, len(LEG_NAMES), 3, 3)

    def _sync_fresh_feet(self) -> None:
        if self._feet_fresh.any():
            ids = np.flatnonzero(self._feet_fresh)
            pos, rot = self._foot_frames()
            self.feet.reset(ids, pos[ids], rot[ids])
            self._feet_fresh[ids] = False

    def observe(self) -> np.ndarray:
        self._sync_fresh_feet()  # called after every reset: the reset envs' feet re-measured
        pos, quat, v_world, w_body = self._base()
        return quadruped_observation(
            quat, v_world, w_body, self.backend.joint_pos(), self.backend.joint_vel(),
            self.default_joint_pos, self.actions, self.commands, self.cfg.obs_scales,
        )

    def run_substeps(self) -> None:
        """The control step's physics, then the task's own state moved on once (:meth:`_advance`):
        :meth:`reward` and :meth:`terminated` only read, in any order and as often as asked."""
        super().run_substeps()
        self._advance()

    def _advance(self) -> None:
        """After the physics: the feet's contacts and air times, the reward's inputs (the command in
        force and the previous action and joint velocity), then the histories and the command schedule."""
        self._sync_fresh_feet()
        foot_pos, foot_rot = self._foot_frames()
        self.feet.update(foot_pos, self.dt, foot_rot)
        f, jv = self.feet, self.backend.joint_vel()
        pos, quat, v_world, w_body = self._base()
        self._inputs = RewardInputs(
            command=self.commands.copy(), base_lin_vel_body=quat_rotate_inverse(quat, v_world), base_ang_vel_body=w_body,
            gravity_body=-quat_to_rotmat(quat)[:, 2, :], base_height=pos[:, 2], action=self.actions, last_action=self.last_actions,
            power=self.telemetry["energy"].sum(axis=1) / self.dt,  # mean over the substeps [W]
            effort=self.telemetry["applied_effort"], joint_pos=self.backend.joint_pos(), joint_vel=jv,
            last_joint_vel=self._last_joint_vel, default_joint_pos=self.default_joint_pos, joint_range=self._joint_range,
            foot_height=f.height, foot_speed=f.speed, contact=f.contact, touchdown_air_time=f.touchdown_air_time,
            air_time=f.air_time, contact_time=f.contact_time, last_air_time=f.last_air_time,
            last_contact_time=f.last_contact_time, first_contact=f.first_contact, terminated=None,
        )
        self.last_actions = self.actions.copy()
        self._last_joint_vel = jv
        self._resample_commands(self.episode_step + 1)  # the base counts the step once its physics ran

    def reward(self) -> np.ndarray:
        if self._inputs is None:
            raise RuntimeError("QuadrupedTask.reward: no step taken yet (the reward is of the step just taken)")
        rew, self.reward_terms = quadruped_reward(self.cfg.reward_cfg, self.dt, replace(self._inputs, terminated=self.terminated()))
        return rew

    def _resample_commands(self, clock: np.ndarray) -> None:
        """Envs whose episode clock (``clock`` [steps]) reached a multiple of ``command_resample_s``
        draw a new command, in force at once or reached linearly over ``command_ramp_s``."""
        if not self._resample_steps:
            return
        due = (clock > 0) & (clock % self._resample_steps == 0)
        if due.any():
            ids = np.flatnonzero(due)
            cfg = self.cfg
            self.command_target[ids] = sample_commands(self.streams.for_envs(ids), len(ids), cfg.command_ranges,
                                                       cfg.standing_command_prob)
            if self._ramp_steps:
                self._command_from[ids] = self.commands[ids]
                self._ramp_left[ids] = self._ramp_steps
            else:
                self.commands[ids] = self.command_target[ids]
        if self._ramp_steps:
            self._ramp_commands()

    def _ramp_commands(self) -> None:
        """One step of every ramp in progress: ``commands`` moves linearly from the command in force
        at the draw to the drawn one, reaching it after ``command_ramp_s``."""
        moving = self._ramp_left > 0
        if not moving.any():
            return
        ids = np.flatnonzero(moving)
        self._ramp_left[ids] -= 1
        frac = (1.0 - self._ramp_left[ids] / self._ramp_steps)[:, None]
        a, b = self._command_from[ids], self.command_target[ids]
        self.commands[ids] = np.where(self._ramp_left[ids, None] == 0, b, a + (b - a) * frac)

    def terminated(self) -> np.ndarray:
        cfg = self.cfg
        pos, quat, _, _ = self._base()
        return quadruped_termination(pos, quat, self._half, cfg.min_base_height, cfg.max_tilt, cfg.trunk_contact_margin)

    def mirror_spec(self):
        """The left-right reflection of observations and actions
        (:func:`~actuator_gym.tasks.quadruped_terms.quadruped_mirror`); None for a user-supplied model
        (``mjcf``), whose symmetry is not known."""
        return None if self.cfg.mjcf else quadruped_mirror(self.joint_names, self.cfg.action_joints)

    def extra_info(self) -> dict[str, np.ndarray]:
        return {"command": self.commands.copy(), "base_height": np.array(self.backend.qpos[:, 2]),
                "foot_contact": self.feet.contact.copy()}
