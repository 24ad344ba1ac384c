"""The quadruped's model: joint names, default pose, geometry and the generated MJCF.

Split from :mod:`actuator_gym.tasks.quadruped` (which re-exports every public name); the model is
described in that module's docstring.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LEG_NAMES", "JOINT_NAMES", "DEFAULT_JOINT_POS", "JOINT_RANGES", "QuadrupedGeometry", "quadruped_mjcf"]

LEG_NAMES = ("FL", "FR", "RL", "RR")
"""Front-left, front-right, rear-left, rear-right."""
_JOINT_SUFFIXES = ("hip_joint", "thigh_joint", "calf_joint")
JOINT_NAMES = tuple(f"{leg}_{s}" for leg in LEG_NAMES for s in _JOINT_SUFFIXES)
"""The 12 actuated joints in model order, Unitree's names: ``FL_hip_joint`` (abduction), ``FL_thigh_joint``
(hip flexion), ``FL_calf_joint`` (knee), ``FR_hip_joint``, ...; Isaac Lab's Unitree configs match them."""



def _default_angle(leg: str, suffix: str) -> float:
    # abduction +0.1 rad outward on the left, -0.1 on the right (axis +x); hip flexion positive
    # swings the foot backwards (axis +y): 0.8 front, 1.0 rear (rear feet further back, which keeps
    # the compliant stance from sitting back); knee -1.5 folds the calf forward (knees point back).
    if suffix == "hip_joint":
        return 0.1 if leg[1] == "L" else -0.1
    if suffix == "thigh_joint":
        return 0.8 if leg[0] == "F" else 1.0
    return -1.5


DEFAULT_JOINT_POS = tuple(_default_angle(leg, s) for leg in LEG_NAMES for s in _JOINT_SUFFIXES)
"""Default standing pose [rad], ``(12,)`` in :data:`JOINT_NAMES` order."""

JOINT_RANGES = {"hip_joint": (-0.80, 0.80), "thigh_joint": (-1.05, 3.50), "calf_joint": (-2.70, -0.90)}
"""Hinge limits [rad] by joint kind (the joint name after ``FL_``; the model's ``range``): abduction, hip
flexion, knee."""


@dataclass(frozen=True)
class QuadrupedGeometry:
    """Dimensions [m] and masses [kg] of the generated model (Go1/A1 class)."""

    trunk_size: tuple[float, float, float] = (0.38, 0.20, 0.11)
    """Full length, width, height of the trunk box [m]."""
    trunk_mass: float = 5.0
    """[kg]."""
    hip_offset: tuple[float, float] = (0.19, 0.05)
    """|x|, |y| of the hip abduction axes from the trunk centre [m]."""
    thigh_offset: float = 0.08
    """Lateral offset of the hip flexion joint from the abduction joint [m]."""
    thigh_length: float = 0.213
    """[m]."""
    calf_length: float = 0.213
    """[m] from the knee to the foot centre."""
    foot_radius: float = 0.02
    """[m]."""
    hip_mass: float = 0.6
    """Abduction motor housing [kg]."""
    thigh_mass: float = 1.0
    """Thigh with the flexion and knee motors [kg]."""
    calf_mass: float = 0.2
    """[kg]."""
    foot_mass: float = 0.05
    """[kg]."""
    armature: float = 0.01
    """Reflected rotor inertia of every joint [kg·m²]."""
    joint_damping: float = 0.01
    """Passive viscous friction of every joint [N·m·s/rad]."""
    foot_friction: float = 1.0
    """Sliding friction coefficient of feet (and the floor)."""
    init_height: float = 0.33
    """Base height at reset [m] (feet about 1 cm above the floor in the default pose)."""

    @property
    def total_mass(self) -> float:
        return self.trunk_mass + 4 * (self.hip_mass + self.thigh_mass + self.calf_mass + self.foot_mass)


def quadruped_mjcf(geometry: QuadrupedGeometry | None = None, timestep: float = 0.005) -> str:
    """MJCF of the quadruped on a flat floor (a string for ``mujoco.MjModel.from_xml_string``).

    Collisions: only robot-vs-floor (robot geoms ``contype=0 conaffinity=1``, floor ``contype=1
    conaffinity=0``), so legs never collide with each other or the trunk. Joints carry the
    ``armature`` and a small passive damping; there are no MJCF actuators -- efforts are written as
    generalized forces by the actuator models.
    """
    g = geometry or QuadrupedGeometry()
    hx, hy, hz = (s / 2 for s in g.trunk_size)
    legs = []
    for leg in LEG_NAMES:
        sx = 1.0 if leg[0] == "F" else -1.0
        sy = 1.0 if leg[1] == "L" else -1.0
        r = {k: JOINT_RANGES[k] for k in JOINT_RANGES}
        legs.append(
            f"""
      <body name="{leg}_hip" pos="{sx * g.hip_offset[0]:.4f} {sy * g.hip_offset[1]:.4f} 0">
        <joint name="{leg}_hip_joint" axis="1 0 0" range="{r['hip_joint'][0]} {r['hip_joint'][1]}"/>
        <geom name="{leg}_hip" type="cylinder" size="0.04 0.025" pos="0 {sy * 0.035:.4f} 0"
              zaxis="0 1 0" mass="{g.hip_mass}" contype="0" conaffinity="0" material="motor"/>
        <body name="{leg}_thigh" pos="0 {sy * g.thigh_offset:.4f} 0">
          <joint name="{leg}_thigh_joint" axis="0 1 0" range="{r['thigh_joint'][0]} {r['thigh_joint'][1]}"/>
          <geom name="{leg}_thigh" type="capsule" fromto="0 0 0 0 0 {-g.thigh_length:.4f}" size="0.022"
                mass="{g.thigh_mass}" material="limb"/>
          <body name="{leg}_calf" pos="0 0 {-g.thigh_length:.4f}">
            <joint name="{leg}_calf_joint" axis="0 1 0" range="{r['calf_joint'][0]} {r['calf_joint'][1]}"/>
            <geom name="{leg}_calf" type="capsule" fromto="0 0 0 0 0 {-g.calf_length + g.foot_radius:.4f}"
                  size="0.013" mass="{g.calf_mass}" material="limb"/>
            <geom name="{leg}_foot" type="sphere" pos="0 0 {-g.calf_length:.4f}" size="{g.foot_radius}"
                  mass="{g.foot_mass}" friction="{g.foot_friction} 0.005 0.0001" material="foot"/>
            <site name="{leg}_foot" pos="0 0 {-g.calf_length:.4f}" size="0.01"/>
          </body>
        </body>
      </body>"""
        )
    return f"""<mujoco model="actuator_gym_quadruped">
  <compiler angle="radian" autolimits="true"/>
  <option timestep="{timestep}" integrator="implicitfast"/>
  <size memory="2M"/>
  <visual>
    <global offwidth="640" offheight="480"/>
    <headlight ambient="0.4 0.4 0.4" diffuse="0.6 0.6 0.6"/>
  </visual>
  <default>
    <joint damping="{g.joint_damping}" armature="{g.armature}" limited="true"/>
    <geom contype="0" conaffinity="1" condim="3" friction="{g.foot_friction} 0.005 0.0001"/>
  </default>
  <asset>
    <texture name="grid" type="2d" builtin="checker" rgb1="0.25 0.3 0.35" rgb2="0.35 0.4 0.45"
             width="256" height="256"/>
    <material name="grid" texture="grid" texrepeat="8 8" reflectance="0.1"/>
    <material name="trunk" rgba="0.75 0.75 0.8 1"/>
    <material name="motor" rgba="0.2 0.2 0.25 1"/>
    <material name="limb" rgba="0.55 0.55 0.6 1"/>
    <material name="foot" rgba="0.1 0.1 0.1 1"/>
  </asset>
  <worldbody>
    <light name="sun" pos="0 0 4" dir="0 0 -1" directional="true"/>
    <geom name="floor" type="plane" size="0 0 0.05" contype="1" conaffinity="0" material="grid"/>
    <body name="trunk" pos="0 0 {g.init_height}">
      <freejoint name="root"/>
      <camera name="track" mode="trackcom" pos="0.0 -1.4 0.45" xyaxes="1 0 0 0 0.3 1"/>
      <geom name="trunk" type="box" size="{hx:.4f} {hy:.4f} {hz:.4f}" mass="{g.trunk_mass}" material="trunk"/>
      <site name="imu" pos="0 0 0" size="0.01"/>{''.join(legs)}
    </body>
  </worldbody>
</mujoco>
"""
