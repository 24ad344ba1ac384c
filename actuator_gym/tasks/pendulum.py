"""``actuator_gym/Pendulum-v0``: reach and hold a commanded angle with one actuated hinge.

Model (MJCF generated here): a 0.6 kg point mass on a massless 0.5 m rod, one hinge about the
world y axis. ``q = 0`` hangs straight down; ``q > 0`` swings toward horizontal (``q = pi/2``),
where gravity (g = 9.81 m/s²) needs a holding torque ``m g L = 2.943 N·m``. Joint damping,
dry friction and armature are zero unless given. Physics at 360 Hz, policy at 60 Hz
(``decimation = 6``), 5 s episodes.

Action (1, in ``[-1, 1]``): the hinge's position target ``q* = action_offset + action_scale * a``
[rad], normalized (``TaskCfg.normalize_actions``): unlimited (default) ``action_scale = pi``,
``action_offset = 0`` (targets ``[-pi, pi]``); with ``joint_range = (lo, hi)``, ``[-1, 1]`` maps onto
it (``action_offset = (lo + hi) / 2``, ``action_scale = (hi - lo) / 2``). ``info["action_scale"]`` /
``info["action_offset"]`` report them at reset. (Until this release the action was the target itself,
bounds ``[-pi, pi]``; ``action_scale=1.0, action_offset=0.0`` restores that.)
Command: an angle drawn per episode, uniformly in ``command_range``, from the task's seeded
generator. Observation (5): ``[sin q, cos q, qd, command, wrap(q - command)]``.
Reward: ``-wrap(q - command)^2 - effort_cost * applied_effort^2``.

Default actuator: ``IdealPDActuatorCfg(stiffness=20 N·m/rad, damping=2 N·m·s/rad,
actuator_effort_limit=5 N·m)`` (natural frequency 11.5 rad/s, damping ratio 0.58 on the 0.15
kg·m² pendulum; steady-state sag at horizontal 2.943/20 = 0.147 rad, which the policy learns to
offset).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from gymnasium.vector import VectorEnv

from .._checks import check_interval
from ..actuators.models import IdealPDActuatorCfg
from ..envs.task import BatchedTask, TaskCfg
from ..envs.task_cfg import check_real_fields

__all__ = ["PendulumCfg", "PendulumTask", "pendulum_mjcf", "HOLDING_TORQUE"]

GRAVITY = 9.81
"""[m/s²]"""


def _default_actuators() -> dict[str, Any]:
    return {"pendulum": IdealPDActuatorCfg(joint_names_expr=["hinge"], stiffness=20.0, damping=2.0, actuator_effort_limit=5.0)}


@dataclass(kw_only=True)
class PendulumCfg(TaskCfg):
    """Pendulum task configuration (``TaskCfg`` fields plus the model's parameters)."""

    physics_dt: float = 1.0 / 360.0
    """[s]: physics substep."""
    decimation: int = 6
    """[substeps]: 6 substeps per control step (policy at 60 Hz)."""
    episode_length_s: float = 5.0
    """[s]: episode length (300 control steps)."""
    actuators: dict[str, Any] = field(default_factory=_default_actuators)
    """``{group: actuator cfg}`` for the joint ``"hinge"``."""
    mass: float = 0.6
    """[kg]: point mass at the tip."""
    length: float = 0.5
    """[m]: rod length (massless rod)."""
    joint_damping: float = 0.0
    """[N·m·s/rad]: viscous joint damping (MuJoCo ``damping``)."""
    joint_friction: float = 0.0
    """[N·m]: dry joint friction (MuJoCo ``frictionloss``)."""
    armature: float = 0.0
    """[kg·m²]: reflected rotor inertia (MuJoCo ``armature``)."""
    joint_range: tuple[float, float] | None = None
    """[rad]: joint limits; None = unlimited."""
    command_range: tuple[float, float] = (-math.pi / 2, math.pi / 2)
    """[rad]: range of the commanded angle, drawn uniformly per episode."""
    initial_angle_range: tuple[float, float] = (-0.1, 0.1)
    """[rad]: range of the initial angle (initial velocity 0)."""
    effort_cost: float = 1e-3
    """[1/(N·m)²]: weight of the squared applied effort in the reward."""

    def model_xml(self) -> str:
        if self.mjcf:
            return super().model_xml()
        return pendulum_mjcf(self)

    def validate(self) -> None:
        super().validate()
        name = type(self).__name__
        positive, nonneg = dict(low=0.0, low_open=True), dict(low=0.0)
        check_real_fields(self, name, {"mass": positive, "length": positive, "joint_damping": nonneg,
                                       "joint_friction": nonneg, "armature": nonneg, "effort_cost": nonneg})
        for key in ("command_range", "initial_angle_range") + (("joint_range",) if self.joint_range is not None else ()):
            check_interval(getattr(self, key), f"{key} [rad]", name)


HOLDING_TORQUE = 0.6 * GRAVITY * 0.5
"""[N·m]: gravity torque of the default pendulum at horizontal (2.943)."""


def pendulum_mjcf(cfg: PendulumCfg) -> str:
    """The pendulum's MJCF text for ``cfg``."""
    L, m = float(cfg.length), float(cfg.mass)
    rng = ""
    if cfg.joint_range is not None:
        rng = f' limited="true" range="{cfg.joint_range[0]!r} {cfg.joint_range[1]!r}"'
    return f"""<mujoco model="actuator_gym_pendulum">
  <compiler angle="radian"/>
  <option timestep="{cfg.physics_dt!r}" gravity="0 0 {-GRAVITY!r}"/>
  <visual><global offwidth="{cfg.render_width}" offheight="{cfg.render_height}"/></visual>
  <worldbody>
    <light pos="0 -1 1.5" dir="0 0.5 -1"/>
    <camera name="side" pos="0 -2.0 -0.2" xyaxes="1 0 0 0 0 1"/>
    <geom name="mount" type="box" size="0.04 0.04 0.04" rgba="0.3 0.3 0.3 1" contype="0" conaffinity="0"/>
    <body name="pendulum">
      <joint name="hinge" type="hinge" axis="0 1 0" damping="{cfg.joint_damping!r}" frictionloss="{cfg.joint_friction!r}" armature="{cfg.armature!r}"{rng}/>
      <inertial pos="0 0 {-L!r}" mass="{m!r}" diaginertia="1e-9 1e-9 1e-9"/>
      <geom name="rod" type="capsule" fromto="0 0 0 0 0 {-L!r}" size="0.01" rgba="0.7 0.7 0.7 1" contype="0" conaffinity="0"/>
      <geom name="bob" type="sphere" pos="0 0 {-L!r}" size="0.04" rgba="0.8 0.2 0.2 1" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
</mujoco>
"""


def _wrap(x: np.ndarray) -> np.ndarray:
    return (x + np.pi) % (2 * np.pi) - np.pi


class PendulumTask(BatchedTask, VectorEnv):  # VectorEnv a direct base: skrl's wrap_env(env) detects Gymnasium by those
    """Batched pendulum angle-tracking task (see the module doc). ``PendulumTask(num_envs=N,
    joint_damping=0.1, actuators={...})``: keyword arguments override ``PendulumCfg`` fields."""

    cfg_cls = PendulumCfg

    def setup(self) -> None:
        self.command = np.zeros(self.num_envs)
        self._q_adr = int(self.backend.joints.qpos_adr[0])

    def sample_reset(self, env_ids, rng):
        c = self.cfg
        n = len(env_ids)
        self.command[env_ids] = rng.uniform(*c.command_range, size=n)
        qpos = np.broadcast_to(self.model.qpos0, (n, self.model.nq)).copy()
        qpos[:, self._q_adr] = rng.uniform(*c.initial_angle_range, size=n)
        return {"qpos": qpos, "qvel": np.zeros((n, self.model.nv))}

    def angle_error(self) -> np.ndarray:
        """``wrap(q - command)`` [rad], ``(num_envs,)``."""
        return _wrap(self.backend.joint_pos()[:, 0] - self.command)

    def observe(self) -> np.ndarray:
        q = self.backend.joint_pos()[:, 0]
        qd = self.backend.joint_vel()[:, 0]
        return np.stack([np.sin(q), np.cos(q), qd, self.command, _wrap(q - self.command)], axis=1)

    def reward(self) -> np.ndarray:
        tau = self.telemetry["applied_effort"][:, 0].astype(np.float64)
        return -self.angle_error() ** 2 - self.cfg.effort_cost * tau**2

    def extra_info(self) -> dict[str, np.ndarray]:
        return {"command": self.command.copy()}
