"""Refused input and life-cycle misuse at the env boundary (ActuatorWrapper, the bundled tasks,
their vector envs): one-line ValueError / TypeError naming what happened, nothing changed, and
every object stays usable -- the next valid call behaves exactly as on a twin that never saw the
bad input."""

from __future__ import annotations

import math

import gymnasium as gym
import mujoco
import numpy as np
import pytest
import torch

import actuator_gym as ag  # noqa: F401  (registers the task ids)
from actuator_gym import DCMotorCfg, IdealPDActuatorCfg, ImplicitActuatorCfg
from actuator_gym.envs import ModelFieldRandomization
from actuator_gym.randomization import Uniform
from actuator_gym.wrappers import ActuatorWrapper

PENDULUM = "actuator_gym/Pendulum-v0"


def refused(error, match, fn, *args, **kwargs):
    with pytest.raises(error, match=match) as info:
        fn(*args, **kwargs)
    assert "\n" not in str(info.value), f"message is not one line: {info.value}"
    assert type(info.value).__module__ == "builtins", type(info.value)


def model_snapshot(model: mujoco.MjModel) -> dict[str, np.ndarray]:
    """Every array field of an MjModel (a copy)."""
    out = {}
    for name in dir(model):
        if name.startswith("_"):
            continue
        v = getattr(model, name, None)
        if isinstance(v, np.ndarray):
            out[name] = v.copy()
    return out


def assert_same_model(a, b):
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=f"MjModel.{k} changed")


# ---- ActuatorWrapper ---------------------------------------------------------------------------
REFUSED_WRAPPERS = {
    # an implicit group (would reconfigure MuJoCo actuators, write armature) and a group refused later
    "implicit then dynamic_friction above friction": lambda: dict(actuators={
        "a": ImplicitActuatorCfg(joint_names_expr=["joint0"], stiffness=5.0, damping=1.0, armature=0.3, friction=0.2),
        "b": IdealPDActuatorCfg(joint_names_expr=["joint1"], friction=0.1, dynamic_friction=0.2)}),
    "armature then bad action_scale": lambda: dict(
        actuators={"a": IdealPDActuatorCfg(stiffness=5.0, armature=0.5, friction=[0.1, 0.2])}, action_scale=[1.0, 0.0]),
    "implicit then bad action_offset": lambda: dict(
        actuators={"a": ImplicitActuatorCfg(stiffness=5.0, damping=1.0, armature=0.5)}, action_offset=[0.0, math.inf]),
    "implicit then complex action_scale": lambda: dict(
        actuators={"a": ImplicitActuatorCfg(stiffness=5.0, damping=1.0)}, action_scale=[1.0, 1j]),
    "infinite gain": lambda: dict(actuators={"a": IdealPDActuatorCfg(stiffness=math.inf, armature=0.5)}),
}


@pytest.mark.parametrize("case", sorted(REFUSED_WRAPPERS))
def test_a_refused_wrapper_leaves_the_env_model_bit_for_bit_unchanged(case):
    env = gym.make("Reacher-v5")
    base = env.unwrapped
    before = model_snapshot(base.model)
    with pytest.raises((ValueError, TypeError)):
        ActuatorWrapper(env, **REFUSED_WRAPPERS[case]())
    assert_same_model(before, model_snapshot(base.model))
    assert "_step_mujoco_simulation" not in base.__dict__  # no hook left behind
    # the env still takes a wrapper, which behaves like one on a fresh env
    cfg = lambda: {"arm": ImplicitActuatorCfg(stiffness=5.0, damping=1.0, armature=0.1)}  # noqa: E731
    w, twin = ActuatorWrapper(env, cfg()), ActuatorWrapper(gym.make("Reacher-v5"), cfg())
    for e in (w, twin):
        e.reset(seed=3)
    for _ in range(3):
        o1, *_ = w.step(np.array([0.2, -0.1]))
        o2, *_ = twin.step(np.array([0.2, -0.1]))
        np.testing.assert_array_equal(o1, o2)


def test_wrapping_an_actuator_wrapper_again_is_refused():
    inner = ActuatorWrapper(gym.make("Reacher-v5"), {"arm": IdealPDActuatorCfg(stiffness=5.0)})
    before = model_snapshot(inner.unwrapped.model)
    refused(TypeError, r"already wrapped in an ActuatorWrapper \(groups \['arm'\]\)", ActuatorWrapper, inner,
            {"x": IdealPDActuatorCfg(stiffness=1.0)})
    refused(TypeError, "already wrapped", ActuatorWrapper, gym.wrappers.ClipAction(inner), {"x": IdealPDActuatorCfg()})
    assert_same_model(before, model_snapshot(inner.unwrapped.model))
    inner.reset(seed=0)
    _, _, _, _, info = inner.step(np.zeros(2))  # the inner wrapper's hook is still the one installed
    assert "actuator" in info


def test_a_second_wrapper_on_the_same_env_is_refused():
    env = gym.make("Reacher-v5")
    first = ActuatorWrapper(env, {"arm": IdealPDActuatorCfg(stiffness=5.0)})
    refused(ValueError, "already has a substep hook installed", ActuatorWrapper, env, {"x": IdealPDActuatorCfg()})
    first.reset(seed=0)
    first.step(np.zeros(2))


def test_step_and_reset_after_close_say_so():
    env = ActuatorWrapper(gym.make("Reacher-v5"), {"arm": IdealPDActuatorCfg(stiffness=5.0)})
    env.reset(seed=0)
    env.close()
    refused(ValueError, r"step\(\) called after close\(\)", env.step, np.zeros(2))
    refused(ValueError, r"reset\(\) called after close\(\)", env.reset)
    env.close()  # idempotent


def test_effort_penalty_without_telemetry_says_what_is_missing():
    from actuator_gym.wrappers import EffortPenalty

    env = EffortPenalty(gym.make("Reacher-v5"))
    env.reset(seed=0)
    refused(ValueError, "needs info\\['actuator'\\].*wrap the env in ActuatorWrapper", env.step, np.zeros(2))


def test_wrapper_reset_options_must_be_a_dict():
    env = ActuatorWrapper(gym.make("Reacher-v5"), {"arm": IdealPDActuatorCfg(stiffness=5.0)})
    refused(TypeError, "options must be a dict", env.reset, options="x")


@pytest.mark.parametrize("seed, error", [(-3, ValueError), (1.5, TypeError), ("x", TypeError), (True, TypeError), (2**70, ValueError)])
def test_wrapper_reset_with_a_bad_seed_changes_nothing(seed, error):
    make = lambda: ActuatorWrapper(gym.make("Reacher-v5"), {"arm": IdealPDActuatorCfg(stiffness=5.0, damping=0.5)})  # noqa: E731
    env, twin = make(), make()
    env.reset(seed=1), twin.reset(seed=1)
    env.step(np.array([0.1, 0.1])), twin.step(np.array([0.1, 0.1]))
    refused(error, "ActuatorWrapper.reset: seed", env.reset, seed=seed)
    np.testing.assert_array_equal(env.step(np.array([0.3, 0.0]))[0], twin.step(np.array([0.3, 0.0]))[0])


# ---- bundled tasks: gym.make(..., **kwargs) ----------------------------------------------------
BAD_TASK_KWARGS = [
    (PENDULUM, dict(episode_length_s=math.inf), ValueError, "episode_length_s"),
    (PENDULUM, dict(episode_length_s="10"), TypeError, "episode_length_s"),
    (PENDULUM, dict(physics_dt=True), TypeError, "physics_dt"),
    (PENDULUM, dict(decimation=2.0), TypeError, "decimation"),
    (PENDULUM, dict(mass="1"), TypeError, "mass"),
    (PENDULUM, dict(command_range=(-math.inf, 0.0)), ValueError, "command_range"),
    (PENDULUM, dict(command_range=(0.0, 1.0, 2.0)), TypeError, "command_range"),
    (PENDULUM, dict(action_bounds=("a", "b")), TypeError, "action_bounds"),
    (PENDULUM, dict(action_scale=1j), TypeError, "action_scale"),
    (PENDULUM, dict(clip_actions="no"), TypeError, "clip_actions"),
    (PENDULUM, dict(nthread=1.5), TypeError, "nthread"),
    (PENDULUM, dict(nthread=2**70), ValueError, "nthread"),
    (PENDULUM, dict(mjcf=5), TypeError, "mjcf"),
    (PENDULUM, dict(seed=-3), ValueError, "seed"),
    (PENDULUM, dict(device="banana"), ValueError, "device"),
    (PENDULUM, dict(model_randomization=[5]), TypeError, "model_randomization"),
    (PENDULUM, dict(actuators={"pendulum": IdealPDActuatorCfg(joint_names_expr=["hinge"], armature={"nope": 0.1})}), ValueError,
     "group 'pendulum' armature: key 'nope' matches no joint"),
    (PENDULUM, dict(not_a_field=1), TypeError, "got an unexpected keyword argument 'not_a_field'"),
    ("actuator_gym/Quadruped-v0", dict(max_tilt=float("nan")), ValueError, "max_tilt"),
    ("actuator_gym/Quadruped-v0", dict(joint_pos_noise=math.inf), ValueError, "joint_pos_noise"),
    ("actuator_gym/Quadruped-v0", dict(command_ranges=((0, 1),)), TypeError, "command_ranges"),
    ("actuator_gym/Quadruped-v0", dict(random_yaw="yes"), TypeError, "random_yaw"),
    ("actuator_gym/Quadruped-v0", dict(geometry=5), TypeError, "geometry"),
    ("actuator_gym/Quadrotor-v0", dict(max_tilt=float("nan")), ValueError, "max_tilt"),
    ("actuator_gym/Quadrotor-v0", dict(goal_low=(2.0, 2.0, 2.0)), ValueError, "goal_low must be <= goal_high"),
    ("actuator_gym/Quadrotor-v0", dict(init_pos_noise=math.inf), ValueError, "init_pos_noise"),
    ("actuator_gym/Ant-v0", dict(reset_noise_scale=math.inf), ValueError, "reset_noise_scale"),
    ("actuator_gym/Ant-v0", dict(healthy_z_range="ab"), TypeError, "healthy_z_range"),
    ("actuator_gym/Ant-v0", dict(actuators={"legs": DCMotorCfg(saturation_effort=math.inf, actuator_velocity_limit=20.0)}),
     ValueError, "saturation_effort"),
]


@pytest.mark.parametrize("env_id, kwargs, error, match", BAD_TASK_KWARGS, ids=[f"{i.split('/')[1]}-{next(iter(k))}" for i, k, *_ in BAD_TASK_KWARGS])
def test_bundled_task_kwargs_are_checked(env_id, kwargs, error, match):
    refused(error, match, gym.make_vec, env_id, num_envs=1, **kwargs)


@pytest.mark.parametrize("num_envs, error", [(0, ValueError), (1.5, TypeError), (True, TypeError), (2**40, ValueError)])
def test_num_envs(num_envs, error):
    refused(error, "num_envs", gym.make_vec, PENDULUM, num_envs=num_envs)


# ---- vector env: reset / step ---------------------------------------------------------------------
def _twins(**kw):
    a, b = (gym.make_vec(PENDULUM, num_envs=3, **kw) for _ in range(2))
    for v in (a, b):
        v.reset(seed=5)
        v.step(np.full((3, 1), 0.3))
    return a, b


def _same_future(a, b):
    for act in (np.full((3, 1), -0.2), np.array([[0.1], [0.5], [-1.0]])):
        oa, ra, *_ = a.step(act)
        ob, rb, *_ = b.step(act)
        np.testing.assert_array_equal(oa, ob)
        np.testing.assert_array_equal(ra, rb)


BAD_RESETS = [
    (dict(seed=-3), ValueError, "seed"),
    (dict(seed=1.5), TypeError, "seed"),
    (dict(seed=True), TypeError, "seed"),
    (dict(seed=[1, 2]), ValueError, "one seed per env is needed: got 2 for num_envs=3"),
    (dict(seed=[1, 2.5, 3]), TypeError, r"seed\[1\] must be an integer in \[0, 2\*\*64\) or None"),
    (dict(seed=[1, -2, 3]), ValueError, r"seed\[1\]"),
    (dict(seed=[1, True, 3]), TypeError, r"seed\[1\]"),
    (dict(seed=2**64 - 2), ValueError, r"passes 2\*\*64 - 1 for num_envs=3"),
    (dict(options="reset"), TypeError, "options must be a dict"),
    (dict(seed=7, options={"reset_mask": np.array([1, 0, 1])}), ValueError, "reset_mask"),  # seed not applied either
]


@pytest.mark.parametrize("kwargs, error, match", BAD_RESETS)
def test_vector_reset_with_bad_arguments_changes_nothing(kwargs, error, match):
    a, b = _twins()
    refused(error, match, a.reset, **kwargs)
    _same_future(a, b)


BAD_ACTIONS = [
    (np.full((3, 1), 0.1 + 1j), TypeError, "complex"),
    (torch.zeros((3, 1), dtype=torch.complex64), TypeError, "complex"),
    (np.zeros((3, 1), bool), TypeError, "booleans"),
    ("left", TypeError, "actions"),
    (None, TypeError, "actions"),
    (np.zeros((3, 2)), ValueError, "shape"),
    (np.array([[0.0], [np.nan], [0.0]]), ValueError, "non-finite"),
]


@pytest.mark.parametrize("actions, error, match", BAD_ACTIONS)
def test_vector_step_with_bad_actions_changes_nothing(actions, error, match):
    a, b = _twins()
    refused(error, match, a.step, actions)
    _same_future(a, b)


def test_single_env_refuses_complex_actions_and_bad_seeds():
    env, twin = gym.make(PENDULUM), gym.make(PENDULUM)
    for e in (env, twin):
        e.reset(seed=2)
    refused(TypeError, "complex", env.step, np.array([0.5 + 1j]))
    refused(ValueError, "TaskEnv.reset: seed", env.reset, seed=-3)
    refused(TypeError, "TaskEnv.reset: seed", env.reset, seed="3")
    for _ in range(2):
        np.testing.assert_array_equal(env.step(np.array([0.5]))[0], twin.step(np.array([0.5]))[0])


def test_quadrotor_bad_seed_does_not_reseed_the_thruster():
    a, b = (gym.make_vec("actuator_gym/Quadrotor-v0", num_envs=2) for _ in range(2))
    for v in (a, b):
        v.reset(seed=1)
    refused(ValueError, "seed", a.reset, seed=-1)
    a.reset(options={"reset_mask": np.array([True, False])})
    b.reset(options={"reset_mask": np.array([True, False])})
    np.testing.assert_array_equal(a.unwrapped.thruster.parameter("tau_inc"), b.unwrapped.thruster.parameter("tau_inc"))


def test_vector_and_single_env_after_close():
    v = gym.make_vec(PENDULUM, num_envs=2)
    v.reset(seed=0)
    v.close()
    refused(ValueError, r"step\(\) called after close\(\)", v.step, np.zeros((2, 1)))
    refused(ValueError, r"reset\(\) called after close\(\)", v.reset)
    e = gym.make(PENDULUM)
    e.reset(seed=0)
    e.close()
    refused(ValueError, "after close", e.step, np.zeros(1))


# ---- model-field randomization -------------------------------------------------------------------
BAD_FIELDS = [
    (dict(field="body_mass", distribution=Uniform(-2.0, 0.0, operation="add")), ValueError, "body_mass cannot be negative"),
    (dict(field="body_mass", distribution=Uniform(-1.0, 1.0)), ValueError, "body_mass cannot be negative"),
    (dict(field="dof_damping", distribution=Uniform(-1.0, 1.0, operation="scale")), ValueError, "dof_damping cannot be negative"),
    (dict(field="geom_friction", distribution=Uniform(-1.0, 0.5), column=0), ValueError, "geom_friction cannot be negative"),
    (dict(field="jnt_type", distribution=Uniform(0.0, 1.0)), ValueError, "only floating-point fields"),  # crashed the process
    (dict(field="body_mass", distribution=Uniform(0.5, 1.5, operation="scale"), index=1.5), TypeError, "index"),
    (dict(field="body_mass", distribution=Uniform(0.5, 1.5, operation="scale"), index=True), TypeError, "index"),
    (dict(field="body_mass", distribution=Uniform(0.5, 1.5, operation="scale"), index=[]), ValueError, "selects no element"),
    (dict(field="geom_friction", distribution=Uniform(0.5, 1.5, operation="scale"), column=True), TypeError, "column"),
    (dict(field="body_mass", distribution=Uniform(0.5, 1.5, operation="scale"), label=5), TypeError, "label"),
    (dict(field=5, distribution=Uniform(0.5, 1.5)), TypeError, "field"),
    (dict(field="body_mass", distribution=1.0), TypeError, "distribution"),
]


@pytest.mark.parametrize("spec, error, match", BAD_FIELDS)
def test_model_field_randomization_is_checked(spec, error, match):
    refused(error, match, gym.make_vec, PENDULUM, num_envs=2, joint_damping=0.1, model_randomization=[ModelFieldRandomization(**spec)])


def test_accepted_model_field_randomization_stays_admissible():
    spec = ModelFieldRandomization(field="dof_damping", distribution=Uniform(0.0, 2.0, operation="scale"))
    v = gym.make_vec(PENDULUM, num_envs=4, joint_damping=0.1, model_randomization=[spec])
    _, info = v.reset(seed=0)
    d = info["randomization"]["dof_damping"]
    assert (d >= 0).all() and (d <= 0.2).all()


@pytest.mark.parametrize("joints, error", [([], ValueError), (5, TypeError), ([1], TypeError)])
def test_joints_must_be_a_non_empty_list_of_patterns(joints, error):
    """``joints=`` of the wrapper: a non-empty list of regex strings (or None); the error names it."""
    cfg = IdealPDActuatorCfg(joint_names_expr=[".*"], stiffness=10.0, damping=1.0)
    with pytest.raises(error, match=r"ActuatorWrapper: joints must be a non-empty list of regex strings \(or None"):
        ActuatorWrapper(gym.make("InvertedPendulum-v5"), {"p": cfg}, joints=joints)
