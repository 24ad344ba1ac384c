"""``NewtonBackend``: ``num_envs`` worlds built from the same MJCF by Newton's importer, stepped by a
core Newton solver (Featherstone by default, or XPBD), efforts applied through ``control.joint_f``.

Modules: :mod:`.backend` (:class:`NewtonBackend`: construction, stepping, state views, body fields,
joint-limit and contact gains), :mod:`.contacts` (:class:`NewtonContactCfg`), :mod:`.state`
(:class:`StateConverter`, MuJoCo <-> Newton generalized state), :mod:`.fields` (per-world model
fields), :mod:`.export` (:class:`NativeActuators`, the ``newton.actuators`` export). Importing the
package imports neither Warp nor Newton; constructing a backend does.

Install: ``pip install newton==1.8.0`` (the core package; it needs only ``warp-lang``). Do **not**
install ``newton[sim]``: it pins ``mujoco~=3.17`` / ``mujoco-warp~=3.17``, which conflicts with
MuJoCo 4 used by the rest of actuator-gym. The core MJCF importer needs nothing else for our
models (it would need ``mujoco`` only for ``<dcmotor>`` actuator elements, which we do not emit).

State in MuJoCo's convention. The task layer reads and writes MuJoCo-layout state; Newton's
generalized coordinates differ for free and ball joints (as read from the Newton 1.8 source):

* quaternions: Newton stores ``(x, y, z, w)``, MuJoCo ``(w, x, y, z)``;
* free joint velocity: Newton's ``joint_qd`` is ``(v_com, omega)``, the velocity of the child
  body's **centre of mass** and its angular velocity, both in the joint's parent frame (the world
  for a floating base); MuJoCo's ``qvel`` is ``(v_origin, omega_body)``, the velocity of the body
  frame's **origin** in the world frame and the angular velocity in the **body** frame;
* ball joint velocity: Newton's is the angular velocity in the parent anchor frame, MuJoCo's in
  the child (body) frame.

:attr:`NewtonBackend.qpos` / :attr:`~NewtonBackend.qvel` convert Newton -> MuJoCo
(``v_origin = v_com - omega x (R c)``, ``omega_body = R^T omega``, ``c`` the body-frame centre of
mass); :meth:`~NewtonBackend.reset_envs` converts MuJoCo -> Newton (quaternions normalized on
write). Hinge and slide coordinates are identical in both layouts. For models with free or ball
joints ``qpos``/``qvel`` are read-only float64 mirrors refreshed on access (write state through
``reset_envs``); for hinge/slide-only models they are zero-copy float32 views as before. Supported
floating bases: free joints whose parent is the world, with no joint frame offset (MuJoCo's
``<freejoint>``); anything else raises ``ValueError``.

Bodies: Newton body ``k`` of a world is MuJoCo body ``k + 1`` (checked by name at construction).
:attr:`~NewtonBackend.xfrc_applied` ``(num_envs, nbody, 6)`` (force, torque, world frame, at the
centre of mass: MuJoCo's and Newton's ``body_f`` convention alike) is written to ``state.body_f``
before every substep; :meth:`~NewtonBackend.field` gives live ``xpos`` / ``xquat`` (wxyz) /
``xmat`` / ``xipos`` refreshed after every ``step``/``reset_envs``.

Contacts (on by default): Newton's ``CollisionPipeline`` runs before every solver step and the
solver applies penalty contact forces with per-shape gains scaled by the carrying body's mass and
the step (:class:`NewtonContactCfg`; ``contacts=False`` turns them off). Limited joints get
critically damped limit springs from MuJoCo's ``solreflimit`` (Newton's imported ``limit_ke = 1e4``
diverges on light links at 5 ms). Physics differ from MuJoCo in any case (another integrator and
contact model); see ``docs/backends.md`` for the measured differences.

Per-world model fields: :meth:`NewtonBackend.model_field` gives MuJoCo-layout ``(num_envs, ...)``
arrays of ``body_mass``, ``body_inertia``, ``dof_damping``, ``dof_armature`` (Featherstone) and
``geom_friction`` column 0, written to Newton's replicated model arrays (``body_mass`` /
``body_inv_mass``, ``body_inertia`` / ``body_inv_inertia``, ``joint_damping``, ``joint_armature``,
``shape_material_mu``) for the worlds given to ``set_const`` / ``reset_envs``, so the task layer's
``model_randomization`` works as on the MuJoCo backends for these fields; others raise ``ValueError``.

Native actuators: :meth:`NewtonBackend.native_actuators` exports an ``ActuatorCollection``'s
recipes (PD, PID, delay, max-effort, DC-motor and position-based clamps, with the per-env values
in force) to ``newton.actuators.Actuator`` objects, so Newton's kernels compute the efforts.
Neural drives and implicit groups are not exported (``ValueError`` naming the group).
"""

from .backend import NewtonBackend
from .contacts import NewtonContactCfg
from .export import NativeActuators
from .state import StateConverter

__all__ = ["NewtonBackend", "NewtonContactCfg", "NativeActuators", "StateConverter"]
