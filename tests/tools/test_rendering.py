"""Headless rendering without MUJOCO_GL: the backend choice, and Gymnasium's RecordVideo end to end."""

import os
import subprocess
import sys
import textwrap

import pytest

from actuator_gym.headless_gl import choose_headless_gl, headless_gl_problem


def _libs(*present):
    return lambda name: f"lib{name}.so.1" if name in present else None


@pytest.mark.parametrize(
    "environ, libs, chosen, after",
    [
        ({}, ("EGL", "OSMesa"), "egl", {"MUJOCO_GL": "egl", "PYOPENGL_PLATFORM": "egl"}),
        ({}, ("OSMesa",), "osmesa", {"MUJOCO_GL": "osmesa", "PYOPENGL_PLATFORM": "osmesa"}),
        ({"MUJOCO_GL": "glfw"}, ("EGL",), "glfw", {"MUJOCO_GL": "glfw"}),  # the user's choice wins
        ({"DISPLAY": ":0"}, ("EGL",), None, {"DISPLAY": ":0"}),  # a display: MuJoCo's default (GLFW)
        ({"PYOPENGL_PLATFORM": "egl"}, ("EGL",), "egl", {"MUJOCO_GL": "egl", "PYOPENGL_PLATFORM": "egl"}),
    ],
)
def test_backend_choice(environ, libs, chosen, after):
    env = dict(environ)
    assert choose_headless_gl(env, _libs(*libs)) == chosen
    assert env == after
    assert headless_gl_problem() is None


def test_no_library_says_what_to_install():
    env = {}
    assert choose_headless_gl(env, _libs()) is None
    assert env == {}
    problem = headless_gl_problem()
    assert "libegl1" in problem and "libosmesa6" in problem and "MUJOCO_GL" in problem
    choose_headless_gl({}, _libs("EGL"))  # leave the module state as a real import would
    assert headless_gl_problem() is None


def _run_clean(code: str, tmp_path):
    """Run ``code`` in a fresh interpreter with MUJOCO_GL, PYOPENGL_PLATFORM and DISPLAY unset."""
    env = {k: v for k, v in os.environ.items() if k not in ("MUJOCO_GL", "PYOPENGL_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY")}
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


def test_record_video_headless_on_a_task_and_a_wrapped_env(tmp_path):
    """Gymnasium's RecordVideo (the `video` extra's moviepy) on a bundled task and on a wrapped
    Gymnasium env, with nothing set by the user."""
    out = _run_clean(
        """
        import os
        import gymnasium as gym
        import actuator_gym
        from actuator_gym import IdealPDActuatorCfg
        from actuator_gym.wrappers import ActuatorWrapper

        print("MUJOCO_GL", os.environ["MUJOCO_GL"])
        task = gym.make("actuator_gym/Pendulum-v0", render_mode="rgb_array")
        wrapped = ActuatorWrapper(gym.make("InvertedPendulum-v5", render_mode="rgb_array", width=64, height=48),
                                  actuators={"a": IdealPDActuatorCfg(joint_names_expr=[".*"], stiffness=10.0, damping=1.0)})
        for name, env in (("task", task), ("wrapped", wrapped)):
            env = gym.wrappers.RecordVideo(env, f"videos_{name}", episode_trigger=lambda e: True, disable_logger=True)
            env.reset(seed=0)
            for _ in range(12):
                env.step(env.action_space.sample())
            frame = env.env.render()
            print(name, frame.shape, int(frame.std() > 0))
            env.close()
        """,
        tmp_path,
    )
    assert "MUJOCO_GL egl" in out or "MUJOCO_GL osmesa" in out
    assert "task (480, 480, 3) 1" in out and "wrapped (48, 64, 3) 1" in out
    for name in ("task", "wrapped"):
        videos = list((tmp_path / f"videos_{name}").glob("*.mp4"))
        assert videos and videos[0].stat().st_size > 1000, name


def test_render_camera_follows_the_quadruped_and_is_checked():
    """The quadruped renders from its ``track`` camera (the trunk in view wherever it walks); the
    free camera (-1) is a different view; a bad ``render_camera`` is refused naming the field."""
    import gymnasium as gym
    import numpy as np

    frames = {}
    for cam in ("track", -1):
        env = gym.make("actuator_gym/Quadruped-v0", render_mode="rgb_array", render_width=64, render_height=48,
                       render_camera=cam)
        env.reset(seed=0)
        frames[cam] = env.render()
        env.close()
    assert frames["track"].shape == (48, 64, 3)
    assert np.abs(frames["track"].astype(int) - frames[-1].astype(int)).mean() > 5.0
    with pytest.raises(ValueError, match="render_camera"):
        gym.make("actuator_gym/Quadruped-v0", render_camera=-2)
