"""Task configuration: :class:`TaskCfg`, :class:`ModelFieldRandomization` and their validation.

Split from :mod:`actuator_gym.envs.task` (which re-exports every public name). Every field is
checked by :meth:`TaskCfg.validate` before a model is compiled or a backend allocated: wrong
types are a ``TypeError``, bad values a ``ValueError``, each naming the config class, the field
and what is allowed; ``make``/``make_vec`` keyword arguments that are no field are a
``TypeError`` worded as Python's (``got an unexpected keyword argument 'x'``).
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, Sequence

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector import AutoresetMode

from .._checks import (
    check_bool,
    check_int,
    check_interval,
    check_real,
    check_str,
    is_int,
    real_array,
)
from ..runtime.actions import ACTION_MODES, check_action_mode, given_options, use_normalized
from ..configs import actuator_groups
from ..randomization.distributions import Distribution
from ..randomization.streams import EnvStreams

__all__ = ["TaskCfg", "ModelFieldRandomization", "resolve_cfg", "check_real_fields", "check_nested_cfg"]

MAX_DECIMATION = 2**16
"""Largest ``decimation`` [substeps per control step]."""
MAX_NTHREAD = 4096
"""Largest ``nthread`` of the physics batch."""
MAX_RENDER_SIZE = 16384
"""Largest render width / height [px]."""


@dataclass(kw_only=True)
class ModelFieldRandomization:
    """Per-env randomization of one MuJoCo model field, re-drawn at every reset of an env.

    ``field`` is an ``MjModel`` array (``"body_mass"``, ``"geom_friction"``, ``"dof_damping"``,
    ``"dof_armature"``, ``"dof_frictionloss"``, ...; units are MuJoCo's SI units of that field:
    kg, N·m·s/rad, kg·m², N·m, ...). ``index`` selects rows: an object id, a name (resolved by
    the field's prefix: ``body_``, ``geom_``, ``jnt_``, ``dof_`` (by joint name), ``site_``,
    ``actuator_``, ``tendon_``), or a list of them; None = all rows. ``column`` selects a column
    of 2-D fields (``geom_friction`` column 0 = sliding friction); None = all columns.
    ``distribution`` draws the values from the field's nominal (compiled) values, with its
    ``operation`` (``"abs"``, ``"scale"``, ``"add"``); ``per_joint=True`` draws one value per
    selected element, else one per env shared by them.

    Value rules (checked when the task is built, before anything is drawn): the field is a
    floating-point ``MjModel`` array (integer fields such as ``jnt_type`` are refused); every value
    the distribution can give is finite, and ``>= 0`` for the physical quantities that cannot be
    negative (masses, inertias, damping, armature, friction, stiffness, sizes; see
    :data:`NONNEGATIVE_FIELDS`).
    """

    field: str
    distribution: Distribution
    index: int | str | Sequence[int | str] | None = None
    column: int | None = None
    label: str | None = None
    """Key in ``info["randomization"]`` (default: ``field`` plus the index)."""


NONNEGATIVE_FIELDS = ("mass", "inertia", "damping", "armature", "frictionloss", "friction", "stiffness", "size",
                      "margin", "gap")
"""``MjModel`` fields whose name ends in one of these are non-negative (``body_mass``,
``dof_damping``, ``geom_friction``, ...); randomization that could make them negative is refused."""


@dataclass(kw_only=True)
class TaskCfg:
    """Configuration of a batched task. Subclass it to add task fields (and generate the MJCF)."""

    mjcf: str = ""
    """MJCF model: an XML string, or a path to an ``.xml`` file."""
    physics_dt: float = 0.005
    """[s]: physics substep (overrides the model's ``opt.timestep``)."""
    decimation: int = 4
    """[substeps]: physics substeps per control step (control period = ``physics_dt * decimation``)."""
    episode_length_s: float = 10.0
    """[s]: episode length; an episode is truncated after ``round(episode_length_s / dt)`` control steps."""
    random_episode_start: bool = False
    """At a full reset (construction, ``reset()`` without a mask) start every env's episode clock at
    a random step in ``[0, max_episode_steps)`` (drawn from its own stream), so the first episodes
    end at different steps and the envs never all time out together; later episodes run the whole
    limit. For training (legged_gym's ``init_at_random_ep_len``, but inside the env so that the
    truncation moves too); leave False for evaluation (it shortens the first episodes)."""
    actuators: dict[str, Any] = field(default_factory=dict)
    """``{group name: actuator config}`` over the model's 1-DOF joints (see ``ActuatorCollection``)."""
    action_modes: ClassVar[tuple[str, ...]] = ACTION_MODES
    """The action modes the task supports: all of them, unless its observation or reward reads the
    actions as one kind of target (the quadruped: position targets about its stance)."""
    action_mode: str = "position"
    """What an action sets (:data:`~actuator_gym.runtime.actions.ACTION_MODES`, the wrapper's): ``"position"``
    [rad or m], ``"velocity"`` [rad/s or m/s], ``"effort"`` [N·m or N] targets, or
    ``"position_velocity"`` (action ``[positions..., velocities...]``)."""
    action_joints: list[str] = field(default_factory=lambda: [".*"])
    """Regexes (full match) of the joints the policy commands, in model order; must be actuated."""
    normalize_actions: bool | None = None
    """True: the action space is ``Box(-1, 1)``, mapped onto each action joint's reachable targets
    (position: the joint range, unlimited joints ``default pose +- pi rad`` (1 m); velocity / effort:
    ``+-actuator_velocity_limit`` / ``+-actuator_effort_limit``, the explicit default scale below
    where the limit is infinite or randomized). False: ``action_scale``, ``action_offset``,
    ``action_bounds`` below. None (default): True unless one of those is given. The rules are
    :class:`~actuator_gym.runtime.actions.ActionMap`'s, the wrapper's too."""
    action_scale: float | Sequence[float] | None = None
    """[target unit per action unit]: ``target = action_offset + action_scale * action``; scalar, per
    action element or per action joint; None: normalized (above), else the mode's default (position
    0.5 rad (m), velocity 5 rad/s (m/s), effort the model motor's ``gear * max|ctrlrange|``, else 1)."""
    action_offset: float | Sequence[float] | str | None = None
    """[target unit]: scalar, per action element or per action joint; None or ``"default"``: normalized
    (above), else the mode's default (position: the model's default joint pose; velocity, effort: 0)."""
    action_bounds: tuple[float, float] | None = None
    """(low, high) [action units] of the action space; None: normalized (above), else from the joint
    range (position channel; ``offset +- pi`` for unlimited hinges, ``+- 1 m`` for slides) or ``[-1, 1]``.
    Position targets are clipped into the joint range whatever the bounds."""
    clip_actions: bool = True
    """Clip actions to the action space before mapping them to targets."""
    model_randomization: list[ModelFieldRandomization] = field(default_factory=list)
    """Model fields re-drawn per env at every reset."""
    nthread: int | None = None
    """Threads of the physics batch (None: ``min(2, cpu_count)``; 0: all CPUs)."""
    render_width: int = 480
    """[px]: rendered frame width."""
    render_height: int = 480
    """[px]: rendered frame height."""
    render_camera: int | str = -1
    """The camera frames are rendered from: a camera name of the model, its index, or -1 (MuJoCo's
    free camera at the model's default view)."""

    def model_xml(self) -> str:
        """The MJCF text (subclasses may generate it from their fields)."""
        src = self.mjcf
        if not src:
            raise ValueError(f"{type(self).__name__}: mjcf is empty; give an MJCF string or a path to an .xml file")
        if "<mujoco" in src:
            return src
        if not os.path.isfile(src):
            raise ValueError(f"{type(self).__name__}: mjcf is neither MJCF text nor an existing file: {src!r}")
        with open(src, encoding="utf-8") as f:
            return f.read()

    def model_dir(self) -> str | None:
        """Directory for relative asset paths (the MJCF file's directory, if it is a path)."""
        return os.path.dirname(os.path.abspath(self.mjcf)) if self.mjcf and "<mujoco" not in self.mjcf else None

    def __post_init__(self) -> None:
        self.actuators = actuator_groups(self.actuators)  # a preset's name, a YAML path or configs.load(...) too

    def validate(self) -> None:
        """Check every field (``TypeError`` / ``ValueError`` naming the field); subclasses extend it."""
        name = type(self).__name__
        check_str(self.mjcf, "mjcf", name)
        check_real(self.physics_dt, "physics_dt [s]", name, low=0.0, low_open=True)
        check_int(self.decimation, "decimation [substeps]", name, low=1, high=MAX_DECIMATION)
        check_real(self.episode_length_s, "episode_length_s [s]", name, low=0.0, low_open=True)
        check_bool(self.random_episode_start, "random_episode_start", name)
        check_action_mode(self.action_mode, name, self.action_modes)
        if not isinstance(self.actuators, Mapping) or not self.actuators:
            raise ValueError(f"{name}: actuators must be a non-empty {{group: actuator cfg}} mapping, a bundled preset's "
                             f"name, a YAML preset's path or what actuator_gym.configs.load returns; got {self.actuators!r}")
        joints = [self.action_joints] if isinstance(self.action_joints, str) else self.action_joints
        if not isinstance(joints, (list, tuple)) or not all(isinstance(j, str) for j in joints):
            raise TypeError(f"{name}: action_joints must be a list of regex strings, got {self.action_joints!r}")
        for key in ("action_scale", "action_offset"):
            value = getattr(self, key)
            if value is not None and not (key == "action_offset" and isinstance(value, str)):
                arr = real_array(value, key, name)
                if arr.ndim > 1 or not np.isfinite(arr).all():
                    raise ValueError(f"{name}: {key} must be a finite number or a sequence of them (one per action joint), got {value!r}")
        if self.action_bounds is not None:
            check_interval(self.action_bounds, "action_bounds", name, strict=True, allow_inf=True)
        check_bool(self.clip_actions, "clip_actions", name)
        use_normalized(self.normalize_actions, given_options(self.action_scale, self.action_offset, self.action_bounds),
                       name)  # True + a given option: refused
        if not isinstance(self.model_randomization, (list, tuple)) or not all(
            isinstance(m, ModelFieldRandomization) for m in self.model_randomization
        ):
            raise TypeError(f"{name}: model_randomization must be a list of ModelFieldRandomization, got {self.model_randomization!r}")
        if self.nthread is not None:
            check_int(self.nthread, "nthread", name, low=0, high=MAX_NTHREAD)
        for key in ("render_width", "render_height"):
            check_int(getattr(self, key), f"{key} [px]", name, low=1, high=MAX_RENDER_SIZE)
        if not isinstance(self.render_camera, str):
            check_int(self.render_camera, "render_camera", name, low=-1)


def check_real_fields(obj: Any, owner: str, spec: Mapping[str, dict[str, Any]]) -> None:
    """``check_real`` on each field of ``obj`` named in ``spec`` (``{field: check_real keyword
    arguments}``): one line per task config instead of a copy of the checks. Each field is stored
    back as a float (an int beyond int64 would overflow numpy's arithmetic)."""
    for key, kw in spec.items():
        object.__setattr__(obj, key, check_real(getattr(obj, key), key, owner, **kw))


def check_nested_cfg(cfg: Any, name: str, cls: type, owner: str, may_be_inf: Sequence[str] = ()) -> None:
    """The nested config dataclass ``cfg.<name>`` (geometry, reward weights): a ``cls``, or a mapping
    of some of its fields (what experiment files and ``gym.make`` keywords give: the other fields keep
    their defaults), which is made into one and written back; every number field finite (those named
    in ``may_be_inf`` may also be +inf)."""
    value = getattr(cfg, name)
    if isinstance(value, Mapping):
        fields = sorted(f.name for f in dataclasses.fields(cls) if f.init)
        unknown = [k for k in value if k not in fields]
        if unknown:
            raise TypeError(f"{owner}: {name} has no field {unknown[0]!r} (the fields of {cls.__name__}: {fields})")
        value = cls(**value)
        object.__setattr__(cfg, name, value)
    if not isinstance(value, cls):
        raise TypeError(f"{owner}: {name} must be a {cls.__name__} or a mapping of its fields, got "
                        f"{type(value).__name__} {value!r}")
    for f in dataclasses.fields(value):
        v = getattr(value, f.name)
        if isinstance(v, (tuple, list)):
            arr = real_array(v, f"{name}.{f.name}", owner)
            if not np.isfinite(arr).all():
                raise ValueError(f"{owner}: {name}.{f.name} must be finite, got {v!r}")
            object.__setattr__(value, f.name, type(v)(arr.tolist()))
        elif not isinstance(v, bool):
            object.__setattr__(value, f.name, check_real(v, f"{name}.{f.name}", owner, allow_inf=f.name in may_be_inf))


def resolve_cfg(cfg_cls: type, cfg: Any, overrides: Mapping[str, Any]) -> Any:
    """``cfg`` (default ``cfg_cls()``) with ``overrides`` replacing fields, validated."""
    if cfg is None:
        cfg = cfg_cls()
    elif not isinstance(cfg, TaskCfg):
        raise TypeError(f"cfg must be a TaskCfg (e.g. {cfg_cls.__name__}), got {type(cfg).__name__}")
    if overrides:
        names = {f.name for f in dataclasses.fields(cfg) if f.init}
        unknown = sorted(set(overrides) - names)
        if unknown:
            raise TypeError(
                f"{type(cfg).__name__}: got an unexpected keyword argument {unknown[0]!r} (unknown field(s) "
                f"{unknown}; fields are {sorted(names)})"
            )
        cfg = dataclasses.replace(cfg, **overrides)
    cfg.validate()
    return cfg


def autoreset_mode(value: Any, owner: str) -> AutoresetMode:
    """An ``AutoresetMode`` from itself, its value (``"SameStep"``) or name (``"same_step"``)."""
    if isinstance(value, AutoresetMode):
        return value
    key = str(value).replace("_", "").lower()
    for m in AutoresetMode:
        if key in (m.value.lower(), m.name.replace("_", "").lower()):
            return m
    raise ValueError(
        f"{owner}: autoreset_mode must be one of {[m.value for m in AutoresetMode]} (or their names), got {value!r}"
    )


TASK_STREAM, FIELD_STREAM = 0x7A5C, 0xF1E1D
"""Tags (:func:`~actuator_gym.randomization.streams.derive_seeds`) of a task's own streams: ``sample_reset`` and
step draws, and model-field randomization (apart from the actuator groups')."""


def gym_np_random(seed: Any, seeds: np.ndarray) -> tuple[np.random.Generator, int]:
    """``VectorEnv.np_random`` and ``np_random_seed`` as Gymnasium sets them for an int ``seed``
    (per-env seeds: a generator from all of them, and -1). Not used by any per-env draw."""
    if is_int(seed):
        return gym.utils.seeding.np_random(int(seed))
    return np.random.default_rng(seeds), -1


def _obj_type(field_name: str):
    import mujoco

    prefixes = {
        "body_": mujoco.mjtObj.mjOBJ_BODY,
        "geom_": mujoco.mjtObj.mjOBJ_GEOM,
        "jnt_": mujoco.mjtObj.mjOBJ_JOINT,
        "dof_": mujoco.mjtObj.mjOBJ_JOINT,
        "site_": mujoco.mjtObj.mjOBJ_SITE,
        "actuator_": mujoco.mjtObj.mjOBJ_ACTUATOR,
        "tendon_": mujoco.mjtObj.mjOBJ_TENDON,
    }
    for p, t in prefixes.items():
        if field_name.startswith(p):
            return t
    return None


class FieldRand:
    """One resolved ModelFieldRandomization: rows/columns and nominal values (everything is
    checked here, before the backend's per-world fields are touched)."""

    def __init__(self, spec: ModelFieldRandomization, model, backend):
        import mujoco

        where = f"model_randomization[{spec.field!r}]"
        if not isinstance(spec.field, str):
            raise TypeError(f"model_randomization: field must be the name of an MjModel array, got {spec.field!r}")
        if not isinstance(spec.distribution, Distribution):
            raise TypeError(f"{where}: distribution must be a Distribution, got {type(spec.distribution).__name__}")
        if spec.label is not None and not isinstance(spec.label, str):
            raise TypeError(f"{where}: label must be a string, got {spec.label!r}")
        base = getattr(model, spec.field, None) if not spec.field.startswith("_") else None
        if not isinstance(base, np.ndarray):
            raise ValueError(f"model_randomization: unknown MjModel field {spec.field!r}")
        if base.dtype.kind != "f":
            raise ValueError(f"{where}: the field holds {base.dtype} values; only floating-point fields can be randomized")
        if spec.index is None:
            rows: Any = np.arange(base.shape[0])
        elif isinstance(spec.index, (str, bytes)) or is_int(spec.index):
            rows = [spec.index]
        elif isinstance(spec.index, (list, tuple, np.ndarray)):
            rows = list(spec.index)
        else:
            raise TypeError(f"{where}: index must be an id, a name or a list of them, got {spec.index!r}")
        resolved = []
        for r in rows:
            if isinstance(r, str):
                t = _obj_type(spec.field)
                i = -1 if t is None else mujoco.mj_name2id(model, t, r)
                if i < 0:
                    raise ValueError(f"{where}: no object named {r!r} for this field")
                if spec.field.startswith("dof_"):
                    i = int(model.jnt_dofadr[i])
                resolved.append(int(i))
            elif is_int(r):
                i = int(r)
                if not 0 <= i < base.shape[0]:
                    raise ValueError(f"{where}: index {i} out of range [0, {base.shape[0] - 1}]")
                resolved.append(i)
            else:
                raise TypeError(f"{where}: index entries must be integer ids or names, got {type(r).__name__} {r!r}")
        if not resolved:
            raise ValueError(f"{where}: index selects no element")
        self.rows = np.asarray(resolved, dtype=np.int64)
        if spec.column is not None:
            check_int(spec.column, "column", where)
            if base.ndim != 2 or not 0 <= spec.column < base.shape[1]:
                raise ValueError(f"{where}: column {spec.column} invalid for shape {base.shape}")
        self.spec = spec
        self.col = spec.column
        sel = base[self.rows] if self.col is None else base[self.rows, self.col]
        self.elem_shape = sel.shape
        self.nominal = torch.as_tensor(np.array(sel, dtype=np.float64).reshape(1, -1))
        self._check_range(where, spec)
        self.label = spec.label or (spec.field if spec.index is None else f"{spec.field}[{spec.index}]")
        self.values = backend.model_field(spec.field)
        self.needs_const = spec.field in getattr(mujoco.MjModel, "_setconst_inputs", ())

    def _check_range(self, where: str, spec: ModelFieldRandomization) -> None:
        dist = spec.distribution
        lo_n, hi_n = self.nominal.min().item(), self.nominal.max().item()
        lo, hi = dist.value_range(lo_n, hi_n)
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ValueError(f"{where}: {type(dist).__name__} can give values in [{lo}, {hi}]; allowed: finite values")
        if spec.field.endswith(NONNEGATIVE_FIELDS) and lo < 0:
            raise ValueError(
                f"{where}: {type(dist).__name__} with operation={dist.operation!r} can give values in [{lo:g}, {hi:g}] "
                f"(nominal values in [{lo_n:g}, {hi_n:g}]); allowed: finite values >= 0 ({spec.field} cannot be negative)"
            )

    def apply(self, ids: np.ndarray, streams: EnvStreams) -> None:
        """Draw the field's values of ``ids`` from each env's own stream and write them."""
        n = len(ids)
        draw = self.spec.distribution.sample(self.nominal.expand(n, -1), streams.for_envs(ids)).numpy()
        draw = draw.reshape(n, *self.elem_shape)
        if self.col is None:
            self.values[ids[:, None], self.rows[None, :]] = draw
        else:
            self.values[ids[:, None], self.rows[None, :], self.col] = draw

    def current(self) -> np.ndarray:
        sel = self.values[:, self.rows] if self.col is None else self.values[:, self.rows, self.col]
        return np.array(sel, dtype=np.float64).reshape(self.values.shape[0], -1)
