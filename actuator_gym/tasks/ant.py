"""``actuator_gym/Ant-v0``: Gymnasium's Ant-v5 as a batched task, driven through DC motors with delay.

A reusable example of wrapping an existing MuJoCo benchmark with the task layer. The model is the
``ant.xml`` that ships inside the installed Gymnasium package (``gymnasium/envs/mujoco/assets``),
read at run time -- the project does not copy it. Physics, observation, reward and termination
follow Gymnasium's ``Ant-v5`` with ``include_cfrc_ext_in_observation=False`` and
``contact_cost_weight=0`` (no contact forces); the actuators are the project's.

Physics: the model's RK4 integrator, ``physics_dt = 0.01 s``, ``decimation = 5`` (Ant-v5's
``frame_skip``), so the policy acts at 20 Hz (``dt = 0.05 s``); episodes of 1000 steps (50 s).

Action (8, in ``[-1, 1]``): a motor torque command, ``target_effort = 150 N·m * action``
(``action_mode="effort"``, normalized: ``action_scale`` = the actuators' ``actuator_effort_limit``,
150 N·m = Ant's ``gear`` x ``ctrlrange``; ``action_offset`` = 0; both reported in
``info["action_scale"]`` / ``info["action_offset"]``). The map is the wrapper's
(:class:`~actuator_gym.runtime.actions.ActionMap`), so another ``action_mode`` takes that mode's defaults:
``action_mode="position"`` maps ``[-1, 1]`` onto each hinge's range, as ``ActuatorWrapper`` does on
Ant-v5. **Order: the model's joint order**
``hip_1, ankle_1, hip_2, ankle_2, hip_3, ankle_3, hip_4, ankle_4`` -- Ant-v5's action follows the XML
``<actuator>`` list instead (``hip_4, ankle_4, hip_1, ...``); :data:`ANT_V5_ACTION_ORDER` maps
between them (``ours = v5_action[..., ANT_V5_ACTION_ORDER]``). The model's own ``<motor>``
actuators stay at zero control; efforts reach the joints as generalized forces.

Why effort mode rather than position targets: it keeps Ant-v5's action semantics and its control
cost, so Ant-v5 policies, reward scales and hyperparameters carry over and the actuator is the only
change -- a torque-speed curve and a command latency that an ideal-torque Ant-v5 lacks. (A position
mode would be a different control problem with gains to tune.)

Default actuators (:func:`ant_dc_motor_cfg`, per substep, all 8 hinges): ``DCMotorCfg`` with zero
PD gains (the effort command passes through), ``actuator_effort_limit = 150 N·m`` (Ant-v5's torque
limit), ``actuator_velocity_limit = 20 rad/s`` (no-load speed) and ``saturation_effort = 300 N·m``
(stall torque) -- the full 150 N·m up to 10 rad/s, falling linearly to zero at 20 rad/s -- and a
command delay of 0..1 substeps (0..10 ms) re-drawn per env at every reset.

Observation (27): ``qpos[2:]`` (torso z, orientation quaternion, 8 joint angles) and ``qvel``
(14), float32.

Reward: ``healthy_reward * healthy + forward_reward_weight * x_velocity - ctrl_cost_weight *
sum(action²)`` with Ant-v5's weights (1, 1, 0.5). ``x_velocity`` is the torso's x displacement over
the control step divided by ``dt`` (from ``qpos``); Gymnasium's Ant-v5 takes it from
``data.xpos`` after ``mj_step``, which lags the state by one substep -- the two agree to within
that shift. The control cost uses the clipped action (Ant-v5 uses the raw one; identical inside
``[-1, 1]``). ``healthy``: the state is finite and the torso height ``qpos[2]`` lies in
``healthy_z_range`` (0.2 .. 1.0 m); unhealthy envs terminate.

Reset (Ant-v5's): ``qpos = qpos0 + U(-0.1, 0.1)``, ``qvel = 0.1 * N(0, 1)``, from the task's
seeded generator. ``info`` adds ``x_position``, ``y_position``, ``distance_from_origin``,
``x_velocity``, ``y_velocity``, ``reward_forward``, ``reward_ctrl``, ``reward_survive``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from gymnasium.vector import VectorEnv

from .._checks import check_bool, check_interval
from ..actuators.models import DCMotorCfg
from ..envs.task import BatchedTask, TaskCfg
from ..envs.task_cfg import check_real_fields

__all__ = ["AntCfg", "AntTask", "ant_dc_motor_cfg", "gymnasium_ant_xml_path", "ANT_JOINT_NAMES", "ANT_V5_ACTION_ORDER"]

ANT_JOINT_NAMES = ("hip_1", "ankle_1", "hip_2", "ankle_2", "hip_3", "ankle_3", "hip_4", "ankle_4")
"""The 8 hinges in model order (= this task's action order)."""
ANT_V5_ACTION_ORDER = (2, 3, 4, 5, 6, 7, 0, 1)
"""``ours = v5_action[..., ANT_V5_ACTION_ORDER]``: Ant-v5's actuators are ``hip_4, ankle_4, hip_1, ...``."""
ANT_TORQUE_LIMIT = 150.0
"""[N·m]: Ant's ``gear`` (150) x ``ctrlrange`` (1)."""


def gymnasium_ant_xml_path() -> str:
    """Path of the ``ant.xml`` inside the installed Gymnasium package (ValueError if absent)."""
    import gymnasium

    path = os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets", "ant.xml")
    if not os.path.isfile(path):
        raise ValueError(f"AntCfg: Gymnasium's ant.xml is not at {path}; give mjcf= explicitly")
    return path


def ant_dc_motor_cfg(min_delay: int = 0, max_delay: int = 1, **overrides: Any) -> DCMotorCfg:
    """The default Ant actuators (module docstring): effort pass-through DC motor, 150 N·m peak,
    20 rad/s no-load speed, 300 N·m stall torque, 0..1 substep delay; ``overrides`` replace fields."""
    kw = dict(
        joint_names_expr=[".*"],
        stiffness=0.0,
        damping=0.0,
        actuator_effort_limit=ANT_TORQUE_LIMIT,
        actuator_velocity_limit=20.0,
        saturation_effort=2.0 * ANT_TORQUE_LIMIT,
        min_delay=min_delay,
        max_delay=max_delay,
    )
    kw.update(overrides)
    return DCMotorCfg(**kw)


@dataclass(kw_only=True)
class AntCfg(TaskCfg):
    """Ant-v5-equivalent task. ``TaskCfg`` fields plus Ant-v5's reward and reset parameters."""

    mjcf: str = ""
    """MJCF text or path; empty: Gymnasium's ``ant.xml`` (read at run time)."""
    physics_dt: float = 0.01
    """[s]: the model's timestep."""
    decimation: int = 5
    """[substeps]: Ant-v5's ``frame_skip``."""
    episode_length_s: float = 50.0
    """[s]: 1000 control steps."""
    actuators: dict[str, Any] = field(default_factory=lambda: {"legs": ant_dc_motor_cfg()})
    """``{group: actuator cfg}`` over the 8 hinges."""
    action_mode: str = "effort"
    """Actions are torque commands in ``[-1, 1]`` (Ant-v5's ``ctrlrange``), normalized onto
    ``+-actuator_effort_limit`` (see the module docstring)."""
    forward_reward_weight: float = 1.0
    """[per (m/s)]: weight of the torso's x velocity."""
    ctrl_cost_weight: float = 0.5
    """Weight of ``sum(action²)``."""
    healthy_reward: float = 1.0
    """Reward per step while healthy."""
    terminate_when_unhealthy: bool = True
    """End the episode when the torso leaves ``healthy_z_range`` or the state is non-finite."""
    healthy_z_range: tuple[float, float] = (0.2, 1.0)
    """[m]: allowed torso height ``qpos[2]``."""
    reset_noise_scale: float = 0.1
    """Half-width of the uniform ``qpos`` noise [rad or m] and std of the Gaussian ``qvel`` noise [rad/s or m/s]."""

    def model_xml(self) -> str:
        if self.mjcf:
            return super().model_xml()
        with open(gymnasium_ant_xml_path(), encoding="utf-8") as f:
            return f.read()

    def validate(self) -> None:
        super().validate()
        name = type(self).__name__
        check_interval(self.healthy_z_range, "healthy_z_range [m]", name, strict=True)
        check_real_fields(self, name, {"reset_noise_scale": dict(low=0.0), "forward_reward_weight": {},
                                       "ctrl_cost_weight": {}, "healthy_reward": {}})
        check_bool(self.terminate_when_unhealthy, "terminate_when_unhealthy", name)


class AntTask(BatchedTask, VectorEnv):  # VectorEnv a direct base: skrl's wrap_env(env) detects Gymnasium by those
    """Batched Ant-v5 equivalent with DC-motor actuators (see the module docstring)."""

    cfg_cls = AntCfg

    def setup(self) -> None:
        n, m = self.num_envs, self.model
        if m.nq < 7 or m.njnt == 0 or int(m.jnt_type[0]) != 0:  # mjJNT_FREE
            raise ValueError("AntTask: the model's first joint must be the torso's free joint")
        self._xy_prev = np.zeros((n, 2))
        self._obs_dim = m.nq - 2 + m.nv
        self._xy_vel = np.zeros((n, 2))  # the torso's x-y velocity over the last step [m/s]
        self.reward_terms: dict[str, np.ndarray] = {
            k: np.zeros(n) for k in ("x_velocity", "y_velocity", "reward_forward", "reward_ctrl", "reward_survive")
        }
        """The last step's ``x_velocity``, ``y_velocity`` [m/s] and weighted reward terms, ``(num_envs,)`` each."""

    def sample_reset(self, env_ids, rng):
        k, m, s = len(env_ids), self.model, self.cfg.reset_noise_scale
        qpos = m.qpos0 + rng.uniform(-s, s, size=(k, m.nq))
        qvel = s * rng.standard_normal((k, m.nv))
        self._xy_prev[env_ids] = qpos[:, :2]
        for v in self.reward_terms.values():
            v[env_ids] = 0.0
        return {"qpos": qpos, "qvel": qvel}

    def observe(self) -> np.ndarray:
        qpos, qvel = self.backend.qpos, self.backend.qvel
        obs = np.empty((self.num_envs, self._obs_dim), dtype=np.float32)
        nq2 = qpos.shape[1] - 2
        obs[:, :nq2] = qpos[:, 2:]
        obs[:, nq2:] = qvel
        return obs

    def _is_healthy(self) -> np.ndarray:
        qpos, qvel = self.backend.qpos, self.backend.qvel
        lo, hi = self.cfg.healthy_z_range
        z = qpos[:, 2]
        ok = (z >= lo) & (z <= hi)
        if not (np.isfinite(qpos).all() and np.isfinite(qvel).all()):
            ok &= np.isfinite(qpos).all(axis=1) & np.isfinite(qvel).all(axis=1)
        return ok

    def run_substeps(self) -> None:
        """The control step's physics, then the torso's x-y velocity over it: :meth:`reward` and
        :meth:`terminated` only read, in any order and as often as asked."""
        super().run_substeps()
        xy = self.backend.qpos[:, :2]
        self._xy_vel = (xy - self._xy_prev) / self.dt
        self._xy_prev[:] = xy

    def reward(self) -> np.ndarray:
        cfg, t, vel = self.cfg, self.reward_terms, self._xy_vel
        t["x_velocity"] = vel[:, 0]
        t["y_velocity"] = vel[:, 1]
        t["reward_forward"] = cfg.forward_reward_weight * vel[:, 0]
        t["reward_survive"] = cfg.healthy_reward * self._is_healthy()
        t["reward_ctrl"] = -cfg.ctrl_cost_weight * np.einsum("ij,ij->i", self.actions, self.actions)
        return t["reward_forward"] + t["reward_survive"] + t["reward_ctrl"]

    def terminated(self) -> np.ndarray:
        if not self.cfg.terminate_when_unhealthy:
            return np.zeros(self.num_envs, dtype=bool)
        return ~self._is_healthy()

    def extra_info(self) -> dict[str, np.ndarray]:
        xy = self.backend.qpos[:, :2]
        info = {
            "x_position": xy[:, 0].copy(),
            "y_position": xy[:, 1].copy(),
            "distance_from_origin": np.hypot(xy[:, 0], xy[:, 1]),
        }
        info.update({k: v.copy() for k, v in self.reward_terms.items()})
        return info
