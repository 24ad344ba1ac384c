"""Headless OpenGL for MuJoCo's renderers, chosen before MuJoCo is imported.

MuJoCo picks its OpenGL backend once, when ``mujoco`` is first imported, from ``MUJOCO_GL``; without
it, it uses GLFW, which needs a display. So that ``render()`` works on a server or in CI without the
user setting anything, importing ``actuator_gym`` chooses for them when all of these hold:

- ``MUJOCO_GL`` is not set (a user's choice always wins, including ``glfw``),
- there is no display (``DISPLAY`` / ``WAYLAND_DISPLAY`` unset),

and then sets ``MUJOCO_GL`` to ``egl`` when ``libEGL`` is installed, else ``osmesa`` when
``libOSMesa`` is, else leaves it unset and records why (:func:`headless_gl_problem`), which the
renderers put in their error. ``PYOPENGL_PLATFORM`` is set to match unless already set.

If ``mujoco`` was imported before ``actuator_gym``, its choice is already made; the variables are
still set, which Gymnasium's own ``MujocoEnv`` renderer reads when it is created.
"""

from __future__ import annotations

import ctypes.util
import os

__all__ = ["choose_headless_gl", "headless_gl_problem"]

_BACKENDS = (("egl", "EGL"), ("osmesa", "OSMesa"))  # (MUJOCO_GL value, library), in order of preference
_problem: str | None = None


def choose_headless_gl(environ=os.environ, find_library=ctypes.util.find_library) -> str | None:
    """Set ``MUJOCO_GL`` (and ``PYOPENGL_PLATFORM``) for headless rendering where needed.

    Returns the backend in force (``None``: MuJoCo's own default, GLFW). ``environ`` and
    ``find_library`` are parameters for tests.
    """
    global _problem
    _problem = None
    if environ.get("MUJOCO_GL"):
        return environ["MUJOCO_GL"]
    if environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"):
        return None
    for backend, library in _BACKENDS:
        if find_library(library):
            environ["MUJOCO_GL"] = backend
            environ.setdefault("PYOPENGL_PLATFORM", backend)
            return backend
    _problem = ("no display and no headless OpenGL library: install EGL (Debian/Ubuntu: apt-get install "
                "libegl1) or OSMesa (apt-get install libosmesa6), or set MUJOCO_GL")
    return None


def headless_gl_problem() -> str | None:
    """Why no headless backend could be chosen at import, or ``None``."""
    return _problem
