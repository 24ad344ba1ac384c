"""Validation of the actuator and thruster sections of a YAML preset (used by :mod:`.configs`).

:class:`GroupChecker` turns one group body (``{model: ..., <fields>}``) into a config and checks it
fully without an asset:

1. every field by its declared type (the config dataclass annotations): numbers, per-joint lists,
   ``{regex: value}`` mappings (each regex compiled), distributions, integers in range, booleans,
   regex lists, ``implicit_options``, lookup tables; relative ``network_file`` paths are resolved
   next to the YAML file;
2. the config is constructed and its recipe of parts built (a learned drive loads its network);
3. every part parameter is checked on its own against its domain, with and without its
   ``randomization`` entry, so the error names the YAML key (``groups.legs.stiffness`` or
   ``groups.legs.randomization.stiffness``) and the allowed range;
4. the whole recipe is bound to a one-env batch (``{regex: value}`` entries one at a time), which
   runs the parts' cross-parameter checks (delays, DC-motor envelope, network buffers).
"""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path
from typing import Any

import torch

from . import randomization as rnd
from ._array import NUMPY_OPS
from ._checks import is_real
from ._config_checks import TRUST_KEY, ConfigError, key_path, mapping
from .randomization.streams import EnvStreams
from .actuators.actuator import Actuator
from .actuators.asset import JOINT_PROPERTY_FIELDS
from .actuators.bam import check_supplies
from .actuators.backlash import Backlash
from .actuators.delay import Delay
from .actuators.drives import Drive
from .actuators.encoder import MAX_ENCODER_COUNTS
from .actuators.implicit import ImplicitOptions
from .actuators.models import DELAY_ALIASES, bus_plan
from .actuators.params import NONNEG, BindContext, Param

__all__ = ["GroupChecker", "MODEL_FIELDS"]


_DISTS = {
    "uniform": (rnd.Uniform, ("low", "high")),
    "log_uniform": (rnd.LogUniform, ("low", "high")),
    "gaussian": (rnd.Gaussian, ("mean", "std")),
    "int_uniform": (rnd.IntUniform, ("low", "high")),
    "int_gaussian": (rnd.IntGaussian, ("mean", "std")),
}
_DIST_OPTIONAL = ("operation", "per_joint", "nominal")
_INF_TEXT = ("inf", "+inf", ".inf", "+.inf")
MODEL_FIELDS = (*JOINT_PROPERTY_FIELDS, "joint_effort_limit", "joint_velocity_limit")
"""Config fields written to the physics model rather than to a part; each must be >= 0."""


def _stage_labels(stages: list) -> list[str]:
    """The labels :class:`~actuator_gym.actuators.Actuator` gives a recipe's stages: ``delay``,
    ``backlash``, ``drive``, ``clamping[i]`` (qualified parameter names such as ``clamping[1].max_effort``)."""
    out, k = [], 0
    for p in stages:
        if isinstance(p, Delay):
            out.append("delay")
        elif isinstance(p, Backlash):
            out.append("backlash")
        elif isinstance(p, Drive):
            out.append("drive")
        else:
            out.append(f"clamping[{k}]")
            k += 1
    return out


def _blame(key: str, body: dict, message: str) -> str:
    """The key path of the field a constructor's error names first (else the group's own path)."""
    hits = [(m.start(), k) for k in body if (m := re.search(rf"\b{re.escape(str(k))}\b", message))]
    return key_path(key, min(hits)[1]) if hits else key


def _trust_hint(message: str) -> str:
    """A checkpoint-trust refusal, with where the opt-in comes from for a YAML file."""
    if TRUST_KEY + "=True" in message:
        message += "; for a YAML file: configs.load(path, allow_unsafe_checkpoint=True) or --allow-unsafe-checkpoint"
    return message


def _kind(t: Any) -> str:
    return t if isinstance(t, str) else getattr(t, "__name__", str(t))


class GroupChecker:
    """Validates the groups of one file (``where``); ``folder`` resolves relative ``network_file``."""

    def __init__(self, where: str, folder: Path | None, allow_unsafe: bool, limits: Any, unlimited: tuple[str, ...]):
        self.where, self.folder, self.allow_unsafe, self.limits, self.unlimited = where, folder, allow_unsafe, limits, unlimited

    def err(self, kp: str, msg: Any) -> ConfigError:
        return ConfigError(f"{self.where}: {kp}: {msg}")

    def mapping(self, x: Any, kp: str) -> dict:
        return mapping(x, self.where, kp)

    # -- groups ------------------------------------------------------------------------------
    def groups(self, x: Any, key: str, table: dict[str, type]) -> dict[str, Any]:
        """``{group name: config}`` of a ``groups:`` (or inline ``actuators:``) mapping."""
        groups = self.mapping(x, key)
        if not groups:
            raise ConfigError(f"{self.where}: '{key}' must define at least one group")
        out = {}
        for gname, body in groups.items():
            gk = key_path(key, gname)
            body = dict(self.mapping(body, gk))
            model = body.pop("model", None)
            if model not in table:
                raise ConfigError(f"{self.where}: {gk}.model must be one of {sorted(table)}, got {model!r}")
            for alias, name in getattr(table[model], "YAML_ALIASES", {}).items():  # BAMServo: friction_model -> model
                if alias in body:
                    body[name] = body.pop(alias)
            out[gname] = self.build(table[model], body, gk)
        try:
            bus_plan(out)  # the groups of one bus give it the same fields
            check_supplies(out)  # and those of one battery the same supply
        except ValueError as exc:
            raise ConfigError(f"{self.where}: {key}: {exc}") from None
        return out

    def build(self, cls: type, body: dict, key: str) -> Any:
        """A validated ``cls`` from ``body`` (see the module docstring)."""
        types = {f.name: _kind(f.type) for f in dataclasses.fields(cls) if f.init}
        unknown = sorted(set(body) - set(types))
        if unknown:
            aliases = getattr(cls, "YAML_ALIASES", {})  # BAMServo: friction_model (its model field)
            allowed = sorted((set(types) - {TRUST_KEY} - set(aliases.values())) | set(aliases))
            raise ConfigError(f"{self.where}: {key}: unknown key(s) {unknown} for {cls.__name__}; allowed: {allowed}")
        kwargs = {k: self.field(k, types[k], v, key_path(key, k)) for k, v in body.items()}
        if self.allow_unsafe and TRUST_KEY in types:
            kwargs[TRUST_KEY] = True
        try:
            cfg = cls(**kwargs)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{self.where}: {_blame(key, body, str(exc))}: {exc}") from None
        if hasattr(cfg, "recipe"):
            self._check_built(cfg, kwargs, key)
        return cfg

    # -- fields ------------------------------------------------------------------------------
    def field(self, name: str, kind: str, v: Any, kp: str) -> Any:
        """``v`` checked against the field's declared type (``kind``, the annotation)."""
        if kind == "ParamValue":
            return self.value(v, kp, name in self.unlimited)
        if name == "randomization":
            return {rk: self.dist(self.mapping(rv, key_path(kp, rk)), key_path(kp, rk)) for rk, rv in self.mapping(v, kp).items()}
        if name == "implicit_options":
            return self.implicit_options(v, kp)
        if name == "params":  # a BAM parameter set, inline only: a data file reads no other file
            if not isinstance(v, dict):
                raise self.err(kp, f"must be the parameter set inline ({{kt: ..., R: ..., armature: ..., model: m1, "
                                   f"actuator: mx64, ...}}), got {type(v).__name__} {v!r}: a data file reads no other file")
            doc = self.mapping(v, kp)
            return {k: x if k in ("model", "actuator") else self.number(x, key_path(kp, k)) for k, x in doc.items()}
        if kind.endswith("| None") and v is None:
            return None
        base = kind.replace("| None", "").strip()
        if name == "encoder_resolution":
            return self.integer(v, kp, 2, MAX_ENCODER_COUNTS, "counts per revolution")
        if base == "int":
            return self.integer(v, kp, 0, self.limits.max_delay_steps, "substeps (ConfigLimits.max_delay_steps)")
        if base == "bool":
            if not isinstance(v, bool):
                raise self.err(kp, f"must be true or false, got {v!r}")
            return v
        if base == "str":
            if not isinstance(v, str):
                raise self.err(kp, f"must be a string, got {type(v).__name__}")
            if name == "network_file" and self.folder is not None and not Path(v).is_absolute():
                return str(self.folder / v)  # relative to the YAML file
            return v
        if base == "float":
            return self.number(v, kp)
        if base == "list[str]":
            items = [v] if isinstance(v, str) else v
            if not isinstance(items, list) or not items:
                raise self.err(kp, f"must be a regular expression or a non-empty list of them, got {type(v).__name__}")
            for i, p in enumerate(items):
                self.regex(p, key_path(kp, i) if isinstance(v, list) else kp)
            return list(items)
        if base == "list[int]":
            if not isinstance(v, list) or not v:
                raise self.err(kp, f"must be a non-empty list of integers, got {type(v).__name__}")
            return [self.integer(x, key_path(kp, i), 0, None, "") for i, x in enumerate(v)]
        if base == "list[list[float]]":
            if not isinstance(v, list) or not v or not all(isinstance(r, list) for r in v):
                raise self.err(kp, f"must be a non-empty list of rows (lists of numbers), got {type(v).__name__}")
            rows = [[self.number(x, key_path(key_path(kp, i), j)) for j, x in enumerate(r)] for i, r in enumerate(v)]
            if name == "joint_parameter_lookup":
                self._lookup_slopes(rows, kp)
            return rows
        if base == "tuple[float, float]":
            if not isinstance(v, list) or len(v) != 2:
                raise self.err(kp, f"must be a list [low, high] of two numbers, got {v!r}")
            return [self.number(x, key_path(kp, i)) for i, x in enumerate(v)]
        return v

    def _lookup_slopes(self, rows: list[list[float]], kp: str) -> None:
        """Between distinct breakpoints ``(angle, ratio, max_effort)`` the limit's slope must stay
        within ``max_abs_value`` [N·m/rad] (a near-duplicate angle would overflow float32)."""
        for i in range(1, len(rows)):
            if len(rows[i]) == 3 == len(rows[i - 1]):
                dx, dy = rows[i][0] - rows[i - 1][0], rows[i][2] - rows[i - 1][2]
                if dx > 0 and abs(dy) > self.limits.max_abs_value * dx:
                    raise self.err(
                        key_path(kp, i),
                        f"the effort limit changes by {dy:g} over {dx:g} rad from row {i - 1}; allowed: slopes up to "
                        f"{self.limits.max_abs_value:g} N·m/rad (ConfigLimits.max_abs_value; repeat the angle for a step)",
                    )

    def number(self, v: Any, kp: str) -> float:
        if not is_real(v):
            raise self.err(kp, f"must be a number, got {v!r}")
        return v

    def integer(self, v: Any, kp: str, lo: int, hi: int | None, unit: str) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or v < lo or (hi is not None and v > hi):
            rng = f"[{lo}, {hi}] {unit}".rstrip() if hi is not None else f">= {lo}"
            raise self.err(kp, f"must be an integer {rng}, got {v!r}")
        return v

    def regex(self, p: Any, kp: str) -> None:
        if not isinstance(p, str):
            raise self.err(kp, f"must be a regular expression (a string), got {p!r}")
        try:
            re.compile(p)
        except re.error as exc:
            raise self.err(kp, f"invalid regular expression {p!r}: {exc}") from None

    def value(self, x: Any, kp: str, unlimited: bool, nested: bool = False) -> Any:
        """A numeric field: number, per-joint list, ``{regex: value}`` mapping or a distribution."""
        if isinstance(x, dict) and "dist" in x:
            return self.dist(x, kp)
        if isinstance(x, dict) and not nested:
            if not x:
                raise self.err(kp, "an empty {regex: value} mapping; give at least one entry")
            for k in x:
                self.regex(k, key_path(kp, k))
            return {k: self.value(v, key_path(kp, k), unlimited, nested=True) for k, v in x.items()}
        if isinstance(x, list) and not nested:
            if not x:
                raise self.err(kp, "an empty list; give one value per joint")
            return [self.scalar(v, key_path(kp, i), unlimited, "a number") for i, v in enumerate(x)]
        what = "a number or a distribution" if nested else (
            "a number, a list of numbers (one per joint), a {regex: value} mapping or a distribution {dist: ...}"
        )
        return self.scalar(x, kp, unlimited, what)

    def scalar(self, x: Any, kp: str, unlimited: bool, what: str) -> float:
        if isinstance(x, str) and x.strip().lower() in _INF_TEXT:
            if unlimited:
                return math.inf
            raise self.err(kp, f"{x!r} (infinity) is not allowed here; allowed: finite numbers")
        if not is_real(x):
            raise self.err(kp, f"must be {what}{' (or .inf: no limit)' if unlimited else ''}, got {type(x).__name__} {x!r}"[:300])
        return x

    def dist(self, x: dict, kp: str) -> rnd.Distribution:
        kind = x.get("dist")
        if kind not in _DISTS:
            raise ConfigError(f"{self.where}: {kp}.dist must be one of {sorted(_DISTS)}, got {kind!r}")
        cls, required = _DISTS[kind]
        allowed = {"dist", *required, *_DIST_OPTIONAL}
        unknown = sorted(set(x) - allowed)
        if unknown:
            raise ConfigError(f"{self.where}: unknown key(s) {[f'{kp}.{k}' for k in unknown]}; allowed: {sorted(allowed)}")
        missing = [r for r in required if r not in x]
        if missing:
            raise self.err(kp, f"a {kind} distribution needs {list(required)}; missing {missing}")
        for k in (*required, "nominal"):
            if k in x and not (is_real(x[k]) or (k == "nominal" and x[k] is None)):
                raise self.err(key_path(kp, k), f"must be a number, got {x[k]!r}")
        if "per_joint" in x and not isinstance(x["per_joint"], bool):
            raise self.err(key_path(kp, "per_joint"), f"must be true or false, got {x['per_joint']!r}")
        try:
            return cls(**{k: x[k] for k in (*required, *_DIST_OPTIONAL) if k in x})
        except (TypeError, ValueError) as exc:
            raise self.err(kp, exc) from None

    def implicit_options(self, v: Any, kp: str) -> dict | None:
        if v is None:
            return None
        opts = self.mapping(v, kp)
        names = {f.name for f in dataclasses.fields(ImplicitOptions)}
        unknown = sorted(set(opts) - names)
        if unknown:
            raise self.err(kp, f"unknown option(s) {unknown}; allowed: {sorted(names)}")
        for k in ("max_iters", "ls_iterations"):
            if k in opts:
                self.integer(opts[k], key_path(kp, k), 0, self.limits.max_solver_iterations, "(ConfigLimits.max_solver_iterations)")
        try:
            ImplicitOptions(**opts)
        except (TypeError, ValueError) as exc:
            raise self.err(kp, exc) from None
        return dict(opts)

    # -- build check -------------------------------------------------------------------------
    def _check_built(self, cfg: Any, kwargs: dict, key: str) -> None:
        try:
            cfg.validate()
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{self.where}: {_blame(key, kwargs, str(exc))}: {_trust_hint(str(exc))}") from None
        if cfg.min_delay > cfg.max_delay:
            raise self.err(key_path(key, "min_delay"), f"min_delay ({cfg.min_delay}) must be <= max_delay ({cfg.max_delay}) [substeps]")
        try:
            recipe = cfg.recipe()
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{self.where}: {key}: {_trust_hint(str(exc))}") from None
        aliases = dict(recipe.get("aliases", {}))
        delay = recipe.get("delay")
        if delay is None and cfg.max_delay > 0:  # as ActuatorBaseCfg.build
            delay = cfg.delay_part()
        if delay is not None:
            aliases.update(DELAY_ALIASES)
        backlash = cfg.backlash_part() if hasattr(cfg, "backlash_part") else None  # as ActuatorBaseCfg.build
        stages = [p for p in (delay, backlash, recipe["drive"], *recipe.get("clamping", [])) if p is not None]
        joints = max([len(v) for p in stages for v in p.raw_values.values() if isinstance(v, (list, tuple))] or [1])
        self._check_params(cfg, stages, aliases, kwargs, key, joints)
        self._probe(cfg, stages, delay, backlash, aliases, key, joints)

    def _check_params(self, cfg, stages, aliases, kwargs, key, joints) -> None:
        """Each part parameter alone (then with its randomization), blaming the YAML key that set it."""
        owner = type(cfg).__name__
        ctx = BindContext(1, joints, None, torch.device("cpu"), torch.float64, NUMPY_OPS, EnvStreams(1, 0), owner)
        rand = {aliases.get(k, k): (k, d) for k, d in cfg.randomization.items()}
        # (raw, name, the names that address it: unqualified and "clamping[1].max_effort", default, domain)
        params = [(p.raw_values.get(n), n, {n, f"{lab}.{n}"}, default, domain)
                  for lab, p in zip(_stage_labels(stages), stages) for n, (default, domain) in p.PARAMS.items()]
        known = {a for _, n, names, _, _ in params for a, t in [*aliases.items(), (n, n)] if t in names}
        for raw, pname, names, default, domain in params:
            setters = [k for k in kwargs if aliases.get(k, k) in names]
            src = next((k for k in setters if kwargs[k] is raw), setters[0] if setters else None)
            rk, dist = next((rand.pop(n) for n in sorted(names, key=len, reverse=True) if n in rand), (None, None))
            checks = [(None, key_path(key, src) if src else key)]
            if dist is not None:
                checks.append((dist, key_path(key_path(key, "randomization"), rk)))
            self._check_values(pname, raw, default, domain, checks, ctx)
        # fields written to the physics model (not part parameters) are >= 0 wherever they apply
        for k in MODEL_FIELDS:
            if kwargs.get(k) is not None and k not in known:
                self._check_values(k, kwargs[k], 0.0, NONNEG, [(None, key_path(key, k))], ctx)
        if rand:
            rk = next(iter(rand.values()))[0]
            raise self.err(
                key_path(key_path(key, "randomization"), rk), f"{rk!r} is not a randomizable parameter of {owner}; allowed: {sorted(known)}"
            )

    def _check_values(self, pname, raw, default, domain, checks, ctx) -> None:
        entries = raw.items() if isinstance(raw, dict) else [(None, raw)]
        for k, v in entries:
            for dist, blame in checks:
                try:
                    Param(pname, v, ctx, default=default, domain=domain, randomization=dist)
                except ValueError as exc:
                    raise self.err(blame if k is None or dist is not None else key_path(blame, k), exc) from None

    def _probe(self, cfg, stages, delay, backlash, aliases, key, joints) -> None:
        """Bind the recipe to a one-env batch, once per ``{regex: value}`` entry."""
        dicts = [len(v) for p in stages for v in p.raw_values.values() if isinstance(v, dict)]
        encoder = cfg.encoder_part() if hasattr(cfg, "encoder_part") else None
        for i in range(max(dicts or [1])):
            variants = [
                p.with_raw_values(**{k: list(v.values())[i % len(v)] for k, v in p.raw_values.items() if isinstance(v, dict)})
                for p in stages
            ]
            d = variants.pop(0) if delay is not None else None
            b = variants.pop(0) if backlash is not None else None
            try:
                Actuator(drive=variants[0], delay=d, backlash=b, encoder=encoder, clamping=variants[1:], num_envs=1, num_joints=joints,
                         randomization=dict(cfg.randomization), aliases=aliases, effort_mode=cfg.effort_mode,
                         name=type(cfg).__name__)
            except (TypeError, ValueError) as exc:
                raise ConfigError(f"{self.where}: {key}: {exc}") from None
