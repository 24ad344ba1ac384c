"""The quadruped's observation, reward terms and foot bookkeeping: pure numpy functions, batch-first.

Split from :mod:`actuator_gym.tasks.quadruped` (which re-exports every public name). Everything here
takes arrays and returns arrays; the task (:class:`~actuator_gym.tasks.quadruped.QuadrupedTask`)
gathers the state from its backend and calls them, so each term can be checked by hand.

Foot state comes from the physics through body poses only (``xpos`` / ``xmat`` of the calves, which
every backend exposes): the foot centre is the calf frame's point ``(0, 0, -calf_length)``. A foot is
**in contact** when its centre is less than ``contact_height`` above the floor plane z = 0 (flat
floor; the sphere's radius plus a few mm of soft-contact penetration and tolerance). Foot velocities
are the finite difference of the foot positions over the control step ``dt`` (the mean velocity of
the step).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._math import quat_to_rotmat

__all__ = [
    "QuadrupedObsScales",
    "quadruped_observation",
    "quadruped_mirror",
    "QuadrupedRewardCfg",
    "RewardInputs",
    "quadruped_reward",
    "feet_air_time_term",
    "foot_slip_term",
    "air_time_variance_term",
    "foot_clearance_term",
    "joint_limit_term",
    "FootTracker",
    "foot_positions",
]


@dataclass(frozen=True)
class QuadrupedObsScales:
    """Observation scales (legged_gym's): each observed quantity is multiplied by its scale."""

    lin_vel: float = 2.0
    """Base linear velocity [per m/s] (also the vx, vy commands)."""
    ang_vel: float = 0.25
    """Base angular velocity [per rad/s] (also the yaw-rate command)."""
    joint_pos: float = 1.0
    """Joint positions relative to the default pose [per rad]."""
    joint_vel: float = 0.05
    """Joint velocities [per rad/s]."""


OBS_LAYOUT = {"lin_vel": slice(0, 3), "ang_vel": slice(3, 6), "gravity": slice(6, 9), "joint_pos": slice(9, 21),
              "joint_vel": slice(21, 33), "last_action": slice(33, 45), "command": slice(45, 48)}
"""Where each quantity sits in the 48-float observation (written by :func:`quadruped_observation`,
reflected by :func:`quadruped_mirror`)."""


def quadruped_observation(
    base_quat, base_lin_vel_world, base_ang_vel_body, joint_pos, joint_vel, default_pos, last_action, command,
    scales: QuadrupedObsScales | None = None,
) -> np.ndarray:
    """The 48-float observation (layout in :mod:`actuator_gym.tasks.quadruped`), ``(N, 48)`` float32.

    ``base_lin_vel_world`` (N, 3) [m/s] is rotated into the body frame; ``base_ang_vel_body`` (N, 3)
    [rad/s] is already in the body frame (MuJoCo's free-joint angular velocity is). Each quantity is
    multiplied by its entry of ``scales`` (default :class:`QuadrupedObsScales`); the gravity
    direction and the last action are unscaled.
    """
    s = scales or QuadrupedObsScales()
    n = np.asarray(base_quat).shape[0]
    rot = quat_to_rotmat(base_quat)
    lin_b = np.einsum("nji,nj->ni", rot, np.asarray(base_lin_vel_world, dtype=np.float64))
    grav_b = -rot[:, 2, :]  # R^T @ (0, 0, -1)
    cmd = np.asarray(command, dtype=np.float64)
    L = OBS_LAYOUT
    out = np.empty((n, 48), dtype=np.float32)
    out[:, L["lin_vel"]] = lin_b * s.lin_vel
    out[:, L["ang_vel"]] = np.asarray(base_ang_vel_body) * s.ang_vel
    out[:, L["gravity"]] = grav_b
    out[:, L["joint_pos"]] = (np.asarray(joint_pos) - np.asarray(default_pos)) * s.joint_pos
    out[:, L["joint_vel"]] = np.asarray(joint_vel) * s.joint_vel
    out[:, L["last_action"]] = last_action
    c = L["command"].start
    out[:, c:c + 2] = cmd[:, :2] * s.lin_vel
    out[:, c + 2] = cmd[:, 2] * s.ang_vel
    return out


LEFT_RIGHT_SWAP = (("FL_", "FR_"), ("RL_", "RR_"))
"""Leg-name pairs exchanged by the left-right reflection (the plane through the trunk's x and z axes)."""


def quadruped_mirror(joint_names, action_joints) -> "MirrorSpec":
    """The left-right reflection of the 48-float observation and of the actions: a
    :class:`~actuator_gym.envs.symmetry.MirrorSpec`.

    Under the reflection y -> -y the body-frame linear velocity, the gravity direction and the
    commanded velocity keep x and z and flip y; the angular velocity (a pseudovector) and the yaw-rate
    command flip x and z; left and right legs exchange their joints, and the abduction angles (axis x)
    (``*_hip_joint``) change sign while the flexion and knee angles (``*_thigh_joint``, ``*_calf_joint``,
    axis y) do not. ``joint_names``: the observed joints
    in model order; ``action_joints``: the actions' joints (each set must hold every joint's mirror).
    """
    from ..envs.symmetry import MirrorSpec, joint_mirror

    j_idx, j_sign = joint_mirror(joint_names, LEFT_RIGHT_SWAP, ("_hip_joint",))
    a_idx, a_sign = joint_mirror(action_joints, LEFT_RIGHT_SWAP, ("_hip_joint",))
    L = OBS_LAYOUT
    nj, na = len(j_idx), len(a_idx)
    if (nj, nj, na) != tuple(L[k].stop - L[k].start for k in ("joint_pos", "joint_vel", "last_action")):
        raise ValueError(f"quadruped_mirror: {nj} observed and {na} action joints do not make the 48-float observation")
    # per block: the entries it takes its value from, and their signs (y flips for vectors, x and z for
    # the angular velocity, a pseudovector; vx, vy, yaw rate for the command)
    blocks = {"lin_vel": ([0, 1, 2], [1, -1, 1]), "ang_vel": ([0, 1, 2], [-1, 1, -1]),
              "gravity": ([0, 1, 2], [1, -1, 1]), "joint_pos": (j_idx, j_sign), "joint_vel": (j_idx, j_sign),
              "last_action": (a_idx, a_sign), "command": ([0, 1, 2], [1, -1, -1])}
    index, sign = [], []
    for name, (idx, sgn) in blocks.items():
        index += [L[name].start + i for i in idx]
        sign += list(sgn)
    return MirrorSpec(obs_index=tuple(index), obs_sign=tuple(sign), action_index=tuple(a_idx), action_sign=tuple(a_sign))


@dataclass
class QuadrupedRewardCfg:
    """Reward weights (per second of simulated time; the step reward is ``sum(w * term) * dt_policy``)
    and the gait targets. Terms as legged_gym / Isaac Lab use them; 0 switches a term off."""

    tracking_lin_vel: float = 1.0
    """Weight of ``exp(-|v_xy* - v_xy|² / sigma²)`` (body frame)."""
    tracking_ang_vel: float = 0.5
    """Weight of ``exp(-(w_z* - w_z)² / sigma²)``."""
    tracking_sigma: float = 0.5
    """Kernel width sigma [m/s or rad/s] (the exponent divides by sigma²)."""
    lin_vel_z: float = -1.0
    """Weight of ``v_z²`` [(m/s)²] (body frame)."""
    ang_vel_xy: float = -0.02
    """Weight of ``w_x² + w_y²`` [(rad/s)²] (roll and pitch rates)."""
    orientation: float = -1.0
    """Weight of ``g_x² + g_y²`` (the gravity direction in the body frame: 0 when level)."""
    base_height: float = 0.0
    """Weight of ``(h - base_height_target)²`` [m²], ``h`` the trunk centre's height above the floor."""
    base_height_target: float = 0.29
    """[m]: the trunk height of the default pose standing on flat ground (0.287 m measured)."""
    action_rate: float = -0.04
    """Weight of ``|a_t - a_{t-1}|²`` [per (1 rad)² of target change: action units are 1 rad] (was -0.16
    before the gait terms: lowered with the other penalties, see ``only_positive_rewards``)."""
    power: float = -2e-4
    """Weight of the mechanical power ``sum_j |tau_j * qd_j|`` [W] (actuator telemetry)."""
    torques: float = -1e-4
    """Weight of ``sum_j tau_j²`` [(N·m)²] (applied efforts of the step's last substep)."""
    joint_acc: float = -1e-7
    """Weight of ``sum_j ((qd_j - qd_j,prev) / dt)²`` [(rad/s²)²]."""
    joint_limits: float = -10.0
    """Weight of ``sum_j`` (distance [rad] outside the soft joint range, see ``soft_joint_limit``)."""
    soft_joint_limit: float = 0.9
    """Fraction of each hinge's range (about its middle) inside which ``joint_limits`` is 0."""
    feet_air_time: float = 1.0
    """Weight of ``sum_f (t_air,f - air_time_target)`` over the feet touching down in this step [s],
    counted only while the commanded planar speed exceeds ``moving_command``."""
    air_time_target: float = 0.3
    """[s]: swings shorter than this are penalized, longer ones rewarded."""
    air_time_max: float = math.inf
    """[s]: a swing counts at most this long (mjlab's clamp; inf: no cap, the default). With a 0.5 s
    cap the bundled recipe tracked worse (|vx err| 0.26 against 0.11 on the default ranges, one run
    each) and some policies stood on three legs; without it, a stronger slip weight (-0.2) taught a
    two-legged gait (benchmarks/training.md, "Quadruped walk")."""
    foot_slip: float = -0.05
    """Weight of ``sum_f |v_f,xy|`` over the feet in contact [m/s] (planar speed of a foot centre in
    contact; the gait figures measure slip at the contact point instead: ``FootTracker.slip_speed``)."""
    air_time_variance: float = 0.0
    """Weight of the variance over the feet of their air times plus that of their contact times,
    each clipped at ``air_time_variance_clip`` [s²] (Isaac Lab's Spot term): a foot held up, or
    never lifted, while the others step costs. Off by default: at -1 with ``termination`` -10 the
    bundled recipe tracked worse and fell as often (benchmarks/training.md, "Quadruped walk")."""
    air_time_variance_clip: float = 0.5
    """[s]: air and contact times count up to this long in ``air_time_variance``."""
    foot_clearance: float = -0.25
    """Weight of ``sum_f max(0, clearance_target - h_f) * |v_f,xy|`` [m · m/s]: feet that move low."""
    clearance_target: float = 0.08
    """[m]: foot-centre height above the floor a moving foot should reach."""
    stand_still: float = -0.1
    """Weight of ``sum_j |q_j - q_j,default|`` [rad] while the commanded planar speed is below ``moving_command``."""
    moving_command: float = 0.1
    """[m/s]: planar command speed above which the air-time term counts and below which ``stand_still`` does."""
    termination: float = -2.0
    """Added once (not scaled by dt) when an episode terminates (-10 halved the falls but the policy
    learned to sit on its hind legs under some commands: benchmarks/training.md, "Quadruped walk")."""
    only_positive_rewards: bool = False
    """Clip the step reward's sum of terms (all but ``termination``) at 0 before adding the
    termination term (legged_gym's ``only_positive_rewards``). Off by default: with these weights
    the living reward of the initial policy is about -0.2/s, small enough that falling does not pay,
    while the clip would zero most early rewards (docs/tasks.md, "the bundled quadruped")."""


@dataclass
class RewardInputs:
    """The arrays one reward evaluation reads (``N`` envs, ``J`` joints, ``F`` feet)."""

    command: np.ndarray
    """(N, 3) vx [m/s], vy [m/s], yaw rate [rad/s]."""
    base_lin_vel_body: np.ndarray
    """(N, 3) [m/s]."""
    base_ang_vel_body: np.ndarray
    """(N, 3) [rad/s]."""
    gravity_body: np.ndarray
    """(N, 3) gravity direction in the body frame."""
    base_height: np.ndarray
    """(N,) [m] the trunk centre above the floor."""
    action: np.ndarray
    """(N, A) this step's action."""
    last_action: np.ndarray
    """(N, A) the previous step's."""
    power: np.ndarray
    """(N,) [W] mean over the substeps of ``sum_j |applied_effort * joint_vel|``."""
    effort: np.ndarray
    """(N, J) [N·m] applied efforts (last substep)."""
    joint_pos: np.ndarray
    """(N, J) [rad]."""
    joint_vel: np.ndarray
    """(N, J) [rad/s]."""
    last_joint_vel: np.ndarray
    """(N, J) [rad/s] at the previous step."""
    default_joint_pos: np.ndarray
    """(J,) [rad]."""
    joint_range: np.ndarray
    """(J, 2) [rad] the hinges' (low, high)."""
    foot_height: np.ndarray
    """(N, F) [m] foot-centre height above the floor."""
    foot_speed: np.ndarray
    """(N, F) [m/s] planar foot speed."""
    contact: np.ndarray
    """(N, F) bool."""
    air_time: np.ndarray
    """(N, F) [s] the current swing's air time (0 in contact)."""
    contact_time: np.ndarray
    """(N, F) [s] the current stance's contact time (0 in the air)."""
    last_air_time: np.ndarray
    """(N, F) [s] the last completed swing's air time."""
    last_contact_time: np.ndarray
    """(N, F) [s] the last completed stance's contact time."""
    touchdown_air_time: np.ndarray
    """(N, F) [s] the air time of feet touching down in this step, 0 elsewhere (:class:`FootTracker`)."""
    first_contact: np.ndarray
    """(N, F) bool: feet touching down in this step."""
    terminated: np.ndarray
    """(N,) bool."""


def feet_air_time_term(first_contact, touchdown_air_time, target: float, command, moving_command: float,
                       air_time_max: float = np.inf) -> np.ndarray:
    """``(N,)``: ``sum_f (min(t_air,f, air_time_max) - target)`` over touching-down feet, times
    ``|cmd_xy| > moving_command``."""
    fc = np.asarray(first_contact, dtype=np.float64)
    moving = np.linalg.norm(np.asarray(command, dtype=np.float64)[:, :2], axis=1) > moving_command
    return np.sum((np.minimum(np.asarray(touchdown_air_time), air_time_max) - target) * fc, axis=1) * moving


def air_time_variance_term(contact, air_time, contact_time, last_air_time, last_contact_time, clip: float) -> np.ndarray:
    """``(N,)``: ``var_f(min(air_f, clip)) + var_f(min(con_f, clip))`` [s²], where a foot in the air
    counts its current swing (``air_time``) and its last stance, a foot in contact its last swing and
    its current stance (``contact_time``)."""
    c = np.asarray(contact, dtype=bool)
    air = np.minimum(np.where(c, last_air_time, air_time), clip)
    con = np.minimum(np.where(c, contact_time, last_contact_time), clip)
    return np.var(air, axis=1) + np.var(con, axis=1)


def foot_slip_term(contact, foot_speed) -> np.ndarray:
    """``(N,)``: ``sum_f contact_f * |v_f,xy|`` [m/s]."""
    return np.sum(np.asarray(contact, dtype=np.float64) * np.asarray(foot_speed), axis=1)


def foot_clearance_term(foot_height, foot_speed, target: float) -> np.ndarray:
    """``(N,)``: ``sum_f max(0, target - h_f) * |v_f,xy|`` [m · m/s]."""
    return np.sum(np.maximum(0.0, target - np.asarray(foot_height)) * np.asarray(foot_speed), axis=1)


def joint_limit_term(joint_pos, joint_range, soft: float) -> np.ndarray:
    """``(N,)``: ``sum_j`` distance [rad] of ``q_j`` outside the soft range ``mid ± soft * (high - low) / 2``."""
    r = np.asarray(joint_range, dtype=np.float64)
    mid, half = r.mean(axis=1), soft * (r[:, 1] - r[:, 0]) / 2
    q = np.asarray(joint_pos, dtype=np.float64)
    return np.sum(np.maximum(0.0, (mid - half) - q) + np.maximum(0.0, q - (mid + half)), axis=1)


def quadruped_reward(cfg: QuadrupedRewardCfg, dt: float, s: RewardInputs) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Reward ``(N,)`` and its weighted terms ``{name: (N,)}`` (each already times ``dt``, but
    ``termination``): the terms' sum, clipped at 0 with ``only_positive_rewards``, plus ``termination``."""
    cmd = np.asarray(s.command, dtype=np.float64)
    v = np.asarray(s.base_lin_vel_body, dtype=np.float64)
    w = np.asarray(s.base_ang_vel_body, dtype=np.float64)
    s2 = cfg.tracking_sigma**2
    moving = np.linalg.norm(cmd[:, :2], axis=1) > cfg.moving_command
    raw = {
        "tracking_lin_vel": np.exp(-np.sum((cmd[:, :2] - v[:, :2]) ** 2, axis=1) / s2),
        "tracking_ang_vel": np.exp(-((cmd[:, 2] - w[:, 2]) ** 2) / s2),
        "lin_vel_z": v[:, 2] ** 2,
        "ang_vel_xy": np.sum(w[:, :2] ** 2, axis=1),
        "orientation": np.sum(np.asarray(s.gravity_body)[:, :2] ** 2, axis=1),
        "base_height": (np.asarray(s.base_height, dtype=np.float64) - cfg.base_height_target) ** 2,
        "action_rate": np.sum((np.asarray(s.action) - np.asarray(s.last_action)) ** 2, axis=1),
        "power": np.asarray(s.power, dtype=np.float64),
        "torques": np.sum(np.asarray(s.effort, dtype=np.float64) ** 2, axis=1),
        "joint_acc": np.sum(((np.asarray(s.joint_vel) - np.asarray(s.last_joint_vel)) / dt) ** 2, axis=1),
        "joint_limits": joint_limit_term(s.joint_pos, s.joint_range, cfg.soft_joint_limit),
        "feet_air_time": feet_air_time_term(s.first_contact, s.touchdown_air_time, cfg.air_time_target, cmd,
                                            cfg.moving_command, cfg.air_time_max),
        "foot_slip": foot_slip_term(s.contact, s.foot_speed),
        "air_time_variance": air_time_variance_term(s.contact, s.air_time, s.contact_time, s.last_air_time,
                                                    s.last_contact_time, cfg.air_time_variance_clip),
        "foot_clearance": foot_clearance_term(s.foot_height, s.foot_speed, cfg.clearance_target),
        "stand_still": np.sum(np.abs(np.asarray(s.joint_pos) - np.asarray(s.default_joint_pos)), axis=1) * ~moving,
    }
    terms = {k: getattr(cfg, k) * x * dt for k, x in raw.items()}
    total = sum(terms.values())
    if cfg.only_positive_rewards:
        total = np.maximum(total, 0.0)
    terms["termination"] = cfg.termination * np.asarray(s.terminated, dtype=np.float64)
    return total + terms["termination"], terms


def foot_positions(calf_pos, calf_mat, calf_length: float) -> np.ndarray:
    """Foot centres ``(N, F, 3)`` [m]: the calf frames' points ``(0, 0, -calf_length)``, from the calf
    bodies' positions ``(N, F, 3)`` and row-major rotation matrices ``(N, F, 9)`` (``xmat``)."""
    mat = np.asarray(calf_mat, dtype=np.float64).reshape(*np.shape(calf_pos)[:2], 3, 3)
    return np.asarray(calf_pos, dtype=np.float64) - calf_length * mat[..., :, 2]


class FootTracker:
    """Per-env, per-foot contact and air-time bookkeeping, updated once per control step.

    ``update(foot_pos, dt, foot_rot=None)``: ``contact = h < contact_height``; ``first_contact`` = in
    contact now and in the air at the previous update; ``stance`` = in contact now and at the previous
    update (the whole step on the floor); ``touchdown_air_time`` = the air time [s] the touching-down
    feet had accumulated (0 elsewhere); ``air_time`` then restarts at 0 for feet in contact and grows
    by ``dt`` for feet in the air; ``speed`` = planar distance of the foot centre since the previous
    update / ``dt`` [m/s]; ``slip_speed`` = the same for the foot's *contact point*: the material point
    of the sphere that was lowest at the previous update, followed with the foot's rotation
    (``foot_rot``, the foot bodies' ``(N, F, 3, 3)`` world rotations): its displacement is the centre's
    minus ``foot_radius * (R_now R_prev^T - I) z``, so a foot that rolls without sliding has
    ``slip_speed`` 0 while its centre moves (without ``foot_rot`` or with ``foot_radius`` 0 the feet
    are points: ``slip_speed = speed``); ``swing_peak`` = the highest foot height of the current swing
    (reset at touchdown). ``reset(ids, foot_pos, foot_rot=None)`` clears the envs ``ids`` only (other
    envs keep their bookkeeping): their previous foot positions become ``foot_pos`` (no speed across
    a reset), contact is re-measured and the air times are 0.
    """

    def __init__(self, num_envs: int, num_feet: int, contact_height: float, foot_radius: float = 0.0):
        self.contact_height = float(contact_height)
        self.foot_radius = float(foot_radius)
        shape = (num_envs, num_feet)
        self.contact = np.zeros(shape, dtype=bool)
        self.first_contact = np.zeros(shape, dtype=bool)
        self.stance = np.zeros(shape, dtype=bool)
        self.air_time = np.zeros(shape)
        self.contact_time = np.zeros(shape)
        """[s] time since touchdown of the feet in contact (0 in the air)."""
        self.last_air_time = np.zeros(shape)
        """[s] the air time of each foot's last completed swing."""
        self.last_contact_time = np.zeros(shape)
        """[s] the contact time of each foot's last completed stance."""
        self.touchdown_air_time = np.zeros(shape)
        self.last_swing_peak = np.zeros(shape)
        """[m] the peak height of the swing that ended at the last touchdown (per foot)."""
        self.swing_peak = np.zeros(shape)
        self.speed = np.zeros(shape)
        self.slip_speed = np.zeros(shape)
        self.height = np.zeros(shape)
        self.position = np.zeros((*shape, 3))
        self.rotation = np.broadcast_to(np.eye(3), (*shape, 3, 3)).copy()

    def reset(self, ids, foot_pos, foot_rot=None) -> None:
        ids = np.asarray(ids, dtype=np.int64)
        p = np.asarray(foot_pos, dtype=np.float64)
        self.position[ids] = p
        if foot_rot is not None:
            self.rotation[ids] = np.asarray(foot_rot, dtype=np.float64)
        self.height[ids] = p[..., 2]
        self.contact[ids] = p[..., 2] < self.contact_height
        for buf in (self.first_contact, self.stance, self.air_time, self.contact_time, self.last_air_time,
                    self.last_contact_time, self.touchdown_air_time, self.speed,
                    self.slip_speed, self.swing_peak, self.last_swing_peak):
            buf[ids] = 0

    def update(self, foot_pos, dt: float, foot_rot=None) -> None:
        p = np.asarray(foot_pos, dtype=np.float64)
        step = p[..., :2] - self.position[..., :2]
        self.speed = np.linalg.norm(step, axis=-1) / dt
        if foot_rot is not None and self.foot_radius > 0.0:
            rot = np.asarray(foot_rot, dtype=np.float64)
            # the contact point's offset from the centre: -r z at the previous update, -r R_now R_prev^T z now
            turned = np.einsum("...ij,...j->...i", rot, self.rotation[..., 2, :])
            step = step - self.foot_radius * turned[..., :2]  # (the -r z part has no planar component)
            self.slip_speed = np.linalg.norm(step, axis=-1) / dt
            self.rotation = rot.copy()
        else:
            self.slip_speed = self.speed.copy()
        self.position = p.copy()
        self.height = p[..., 2].copy()
        contact = self.height < self.contact_height
        self.first_contact = contact & ~self.contact
        self.stance = contact & self.contact
        self.touchdown_air_time = np.where(self.first_contact, self.air_time, 0.0)
        self.last_air_time = np.where(self.first_contact, self.air_time, self.last_air_time)
        self.last_contact_time = np.where(~contact & self.contact, self.contact_time, self.last_contact_time)
        self.last_swing_peak = np.where(self.first_contact, self.swing_peak, self.last_swing_peak)
        self.air_time = np.where(contact, 0.0, self.air_time + dt)
        self.contact_time = np.where(contact, self.contact_time + dt, 0.0)
        self.swing_peak = np.where(contact, 0.0, np.maximum(self.swing_peak, self.height))
        self.contact = contact
