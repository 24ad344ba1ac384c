"""``Actuator``: a recipe of parts (Delay -> Drive -> Clamping[...]) bound to a batch of envs.

Optionally the drive reads the measured state through a :class:`~.backlash.Backlash` (the motor side
of a gear play) and an :class:`~.encoder.Encoder` (a quantized position and its firmware velocity);
the backlash also gates the effort after the clamps (docs/actuators.md, "Backlash, encoders and the
bus"). Both run in the explicit effort mode only.

One calling convention serves every model, composed by hand or built from a named config::

    effort = model.compute(joint_pos=q, joint_vel=qd, target_pos=q_star, target_vel=qd_star,
                           target_effort=tau_ff, dt=substep)   # -> applied effort (num_envs, num_joints)
    model.computed_effort, model.applied_effort                # telemetry of the last compute
    model.reset(env_ids=None)                                  # clear state, re-sample parameters

``compute`` runs once per physics substep. Inputs are torch tensors or numpy arrays of shape
``(num_envs, num_joints)``; a missing target is zero. The returned tensor is a fresh copy; the
``computed_effort`` / ``applied_effort`` attributes are the model's own buffers, overwritten by
the next ``compute`` (``computed_array`` / ``applied_array``: the same memory in the model's array
library, for hot paths). ``parts`` (also ``delay``, ``drive``, ``clamping``) are the bound parts.

"Implicit" has one meaning: the *Stable-PD* effort mode (:mod:`.implicit`; :attr:`Actuator.stable_pd`),
solved by the model itself, which ``effort_mode="implicit"`` selects and
:class:`~actuator_gym.actuators.ImplicitActuatorCfg` always uses (``is_implicit``: built from it).

Non-finite input policy: the runtime does not inspect values in the hot path (that would force a
host sync on GPU). Pass ``check_finite=True`` to have every ``compute`` raise a ``ValueError``
naming the first non-finite input or output element. The wrappers and envs reject non-finite
actions at their own boundary, always.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import torch

from .._array import ops_for
from .batch import BatchModel, as_env_ids
from .._checks import (
    UnsupportedError,
    check_batch,
    check_bool,
    check_device,
    check_dt,
    check_dtype,
    check_int,
    check_names,
    check_num_envs,
    check_str,
)
from .backlash import Backlash
from .clamps import Clamping
from .delay import Delay
from .drives import Drive, DrivePD, DrivePID
from .encoder import Encoder
from .implicit import ImplicitOptions, StablePDSolver, implicit_drive_error, prepare_implicit, run_implicit
from .params import Param, UnknownParameterError
from .part import Part

__all__ = ["Actuator", "as_env_ids"]


class Actuator(BatchModel):
    """A batch of actuators ``(num_envs, num_joints)`` composed from parts.

    Args:
        drive: a :class:`Drive` (``DrivePD``, ``DrivePID``, neural drives).
        delay: optional :class:`Delay` on the commands.
        clamping: clamps applied in order to the drive's output.
        backlash: optional :class:`Backlash`: the drive reads the motor side of a gear play, and
            no effort passes while the target lies inside the play (explicit effort mode only).
        encoder: optional :class:`Encoder`: the drive reads the quantized position (of the motor
            side, with a backlash) and its difference over ``dt`` as the velocity (explicit only).
        num_envs: number of parallel environments.
        num_joints: joints driven (inferred from ``joint_names`` if omitted).
        joint_names: names of the driven joints (needed for ``{regex: value}`` parameters and for
            readable error messages).
        device: torch device of state and outputs. On CPU the math runs in numpy on shared memory.
        dtype: float dtype of state and outputs (float32).
        seed: seeds of the per-env streams that draw randomized parameters and delays: None (fresh
            entropy), an int ``s`` (env ``i`` draws as a one-env model seeded ``s + i``) or one seed
            per env (:mod:`actuator_gym.randomization.streams`).
        randomization: ``{parameter name: Distribution}`` applied on top of the nominal values.
        effort_mode: ``"explicit"`` (drive at the measured state, the default) or ``"implicit"``
            (Stable-PD: drive and clamps solved at the predicted end-of-substep state, see
            :mod:`.implicit`; PD/PID drives only).
        check_finite: raise on the first non-finite input or output (debug mode, off by default).
        array_backend: ``"auto"`` (numpy on CPU, torch elsewhere), ``"numpy"`` or ``"torch"``.
        name: used in error messages.
        aliases: ``{alias: parameter name}`` (named configs map Isaac Lab field names here).
    """

    _dt_checked: Any = ()  # the last dt float that passed check_dt (callers reuse one object)

    def __init__(
        self,
        drive: Drive,
        delay: Delay | None = None,
        clamping: Sequence[Clamping] = (),
        *,
        num_envs: int = 1,
        num_joints: int | None = None,
        joint_names: Sequence[str] | None = None,
        device: str | torch.device = "cpu",
        dtype: torch.dtype = torch.float32,
        seed: Any = None,
        randomization: Mapping[str, Any] | None = None,
        effort_mode: str = "explicit",
        check_finite: bool = False,
        array_backend: str = "auto",
        name: str = "actuator",
        aliases: Mapping[str, str] | None = None,
        backlash: Backlash | None = None,
        encoder: Encoder | None = None,
    ):
        # every argument is checked before anything is built
        name = check_str(name, "name", "Actuator")
        if not isinstance(drive, Drive) or type(drive).compute is Drive.compute:
            raise TypeError(f"{name}: drive must be a Drive (e.g. DrivePD), got {type(drive).__name__}")
        if delay is not None and not isinstance(delay, Delay):
            raise TypeError(f"{name}: delay must be a Delay or None, got {type(delay).__name__}")
        for label, part, cls in (("backlash", backlash, Backlash), ("encoder", encoder, Encoder)):
            if part is not None and not isinstance(part, cls):
                raise TypeError(f"{name}: {label} must be a {cls.__name__} or None, got {type(part).__name__}")
        if clamping is None:
            clamping = ()
        if isinstance(clamping, Clamping):
            clamping = [clamping]
        if not isinstance(clamping, (list, tuple)):
            raise TypeError(f"{name}: clamping must be a Clamping part or a list of them, got {type(clamping).__name__}")
        for c in clamping:
            if not isinstance(c, Clamping) or type(c).apply is Clamping.apply:
                raise TypeError(f"{name}: clamping entries must be Clamping parts (e.g. ClampingMaxEffort), got {type(c).__name__}")
        num_envs = check_num_envs(num_envs, name)
        if joint_names is not None:
            joint_names = check_names(joint_names, name, allow_empty=True)
            if num_joints is None:
                num_joints = len(joint_names)
            elif num_joints != len(joint_names):
                raise ValueError(
                    f"{name}: num_joints={num_joints} but {len(joint_names)} joint_names were given"
                )
        if num_joints is None:
            raise ValueError(f"{name}: give num_joints= or joint_names=")
        num_joints = check_int(num_joints, "num_joints", name, low=1)
        check_batch(num_envs, num_joints, name)
        if effort_mode not in ("explicit", "implicit"):
            raise ValueError(f"{name}: effort_mode must be 'explicit' or 'implicit', got {effort_mode!r}")
        if effort_mode == "implicit" and not isinstance(drive, DrivePD):  # Stable-PD: PD/PID laws only
            raise UnsupportedError(implicit_drive_error(name, drive))
        explicit_only = [f for f, p in (("backlash", backlash), ("encoder_resolution", encoder)) if p is not None]
        if effort_mode == "implicit" and explicit_only:
            raise UnsupportedError(
                f"{name}: {' and '.join(explicit_only)} run(s) on the explicit path only (what the drive reads "
                "at the measured state); effort_mode='implicit' (Stable-PD, ImplicitActuatorCfg) is not supported "
                "with it; use effort_mode='explicit' (an explicit model, e.g. IdealPDActuatorCfg)"
            )
        device = check_device(device, name)
        dtype = check_dtype(dtype, name)
        streams = self.new_generator(seed, num_envs, name)  # validates the seed
        check_finite = check_bool(check_finite, "check_finite", name)
        if randomization is not None and not isinstance(randomization, Mapping):
            raise TypeError(f"{name}: randomization must be a {{parameter name: Distribution}} dict, got {type(randomization).__name__}")
        if aliases is not None and not (
            isinstance(aliases, Mapping) and all(isinstance(k, str) and isinstance(v, str) for k, v in aliases.items())
        ):
            raise TypeError(f"{name}: aliases must be a {{alias: parameter name}} dict of strings, got {aliases!r}")

        self.name = name
        self.num_envs, self.num_joints = int(num_envs), int(num_joints)
        self.joint_names = joint_names
        self.device = torch.device(device)
        self.dtype = dtype
        self.effort_mode = effort_mode
        self.check_finite = check_finite
        self.ops = ops_for(self.device, array_backend)
        self.generator = streams
        self.aliases = dict(aliases or {})
        self._stable_pd = effort_mode == "implicit"
        self._stable_pd_solver: StablePDSolver | None = None
        self.implicit_options: ImplicitOptions | None = None
        """Options of the Stable-PD solve (None: Newton 1.8's defaults); named configs set their
        ``implicit_options`` field here."""
        self.needs_dt = self._stable_pd or isinstance(drive, DrivePID) or encoder is not None
        """Whether ``compute`` needs ``dt=`` (a PID drive, an encoder or the Stable-PD effort mode)."""
        self.explicit_only: tuple[str, ...] = tuple(explicit_only)
        """The config fields of this model that run in the runtime only (``"backlash"``,
        ``"encoder_resolution"``; a collection adds ``"bus"``): no MuJoCo-native form, no Newton export."""
        self.cfg = None  # the named config this model was built from, if any

        ctx = self._bind_context(self.num_joints, joint_names, dtype)
        rand = {self.aliases.get(k, k): v for k, v in dict(randomization or {}).items()}
        stages: list[tuple[str, Any]] = []
        if delay is not None:
            stages.append(("delay", delay))
        if backlash is not None:
            stages.append(("backlash", backlash))
        if encoder is not None:
            stages.append(("encoder", encoder))
        stages.append(("drive", drive))
        stages += [(f"clamping[{i}]", c) for i, c in enumerate(clamping)]
        self._param_index: dict[str, list[tuple[str, Param]]] = {}
        bound = []
        for label, part in stages:
            mine = {}
            for k in list(rand):  # "clamping[1].max_effort" names this stage; "max_effort" the first with it
                pname = k[len(label) + 1 :] if k.startswith(label + ".") else None if k in self._param_index else k
                if pname in part.PARAMS:
                    mine[pname] = rand.pop(k)
            b = part.bind(ctx, mine)
            bound.append(b)
            for pname, p in b.params.items():
                self._param_index.setdefault(pname, []).append((label, p))
                self._param_index.setdefault(f"{label}.{pname}", []).append((label, p))
        if rand:
            raise ValueError(
                f"{name}: randomization names unknown parameter(s) {sorted(rand)}; "
                f"parameters are {sorted(k for k in self._param_index if '.' not in k)}"
            )
        by_label = dict(zip((label for label, _ in stages), bound))
        self.delay: Delay | None = by_label.get("delay")
        self.backlash: Backlash | None = by_label.get("backlash")
        self.encoder: Encoder | None = by_label.get("encoder")
        first = [label for label, _ in stages].index("drive")
        self.drive: Drive = bound[first]
        self.clamping: list[Clamping] = bound[first + 1 :]
        self._parts: tuple[Part, ...] = tuple(bound)

        n, j = self.num_envs, self.num_joints
        self.computed_effort = torch.zeros((n, j), dtype=dtype, device=self.device)
        self.applied_effort = torch.zeros((n, j), dtype=dtype, device=self.device)
        self._computed = self.ops.view(self.computed_effort)
        self._applied = self.ops.view(self.applied_effort)
        self._zeros = self.ops.view(torch.zeros((n, j), dtype=dtype, device=self.device))
        self._shape = (n, j)
        self._np_dtype = np.dtype(np.float32 if dtype == torch.float32 else np.float64)
        # commands after the delay (what the drive used), for output_command telemetry
        self.delayed_command: tuple[Any, Any, Any] = (self._zeros, self._zeros, self._zeros)
        self._numpy = self.ops.name == "numpy"

    def bind_output_buffers(self, computed: torch.Tensor, applied: torch.Tensor) -> None:
        """Write ``computed_effort`` / ``applied_effort`` into the given ``(num_envs, num_joints)``
        tensors (e.g. column views of a collection's buffers) instead of the model's own."""
        for name, t in (("computed", computed), ("applied", applied)):
            if not isinstance(t, torch.Tensor):
                raise TypeError(f"{self.name}: {name} buffer must be a torch.Tensor, got {type(t).__name__}")
            if tuple(t.shape) != self._shape or t.dtype != self.dtype or t.device != self.device:
                raise ValueError(f"{self.name}: {name} buffer must be {self._shape} {self.dtype} on {self.device}")
        computed.copy_(self.computed_effort)
        applied.copy_(self.applied_effort)
        self.computed_effort, self.applied_effort = computed, applied
        self._computed, self._applied = self.ops.view(computed), self.ops.view(applied)

    # -- public read-only views --------------------------------------------------------------
    @property
    def parts(self) -> tuple[Part, ...]:
        """The bound parts in recipe order: ``(delay?, backlash?, encoder?, drive, *clamping)``."""
        return self._parts

    @property
    def computed_array(self) -> Any:
        """``computed_effort`` [N·m or N] in the model's array library (a numpy view on the numpy
        path, the tensor itself otherwise): the drive's raw effort of the last compute. The same
        object every call (no copy) until :meth:`bind_output_buffers`; read it, do not write it."""
        return self._computed

    @property
    def applied_array(self) -> Any:
        """``applied_effort`` [N·m or N] (after the clamps) in the model's array library; as
        :attr:`computed_array`."""
        return self._applied

    @property
    def is_implicit(self) -> bool:
        """Whether the model was built from an ``ImplicitActuatorCfg`` (Isaac Lab's
        ``is_implicit_model``; it then runs the Stable-PD effort mode, :attr:`stable_pd`)."""
        return bool(getattr(self.cfg, "solver_side", False))

    @property
    def stable_pd(self) -> bool:
        """Whether the model runs the Stable-PD effort mode (``effort_mode="implicit"``)."""
        return self._stable_pd

    @property
    def stable_pd_solver(self) -> StablePDSolver:
        """This model's Stable-PD solver (float64 shadow copies of its drive and clamps), built on
        first use and owned by the model."""
        if self._stable_pd_solver is None:
            self._stable_pd_solver = StablePDSolver(self)
        return self._stable_pd_solver

    def store_efforts(self, computed: Any, applied: Any) -> None:
        """Write a solve's ``computed`` / ``applied`` efforts ``(num_envs, num_joints)`` [N·m or N]
        (arrays of the model's array library, any float dtype: rounded to the model's) into the
        model's buffers (what :func:`~.implicit.solve_implicit` does with its result)."""
        self._computed[...] = computed
        self._applied[...] = applied

    # -- parameters -------------------------------------------------------------------------
    def _lookup(self, name: str) -> Param:
        key = self.aliases.get(name, name)
        hits = self._param_index.get(key)
        if not isinstance(name, str):
            raise TypeError(f"{self.name}: parameter names are strings, got {type(name).__name__} {name!r}")
        if not hits:
            raise UnknownParameterError(
                f"{self.name}: unknown parameter {name!r}; known: "
                f"{sorted(set(self.aliases) | {k for k in self._param_index if '.' not in k})}"
            )
        if len(hits) > 1:
            raise UnknownParameterError(
                f"{self.name}: parameter {name!r} is ambiguous; use one of {[f'{l}.{key}' for l, _ in hits]}"
            )
        return hits[0][1]

    def parameter(self, name: str) -> torch.Tensor:
        """Values in force of a parameter, ``(num_envs, num_joints)`` (a copy)."""
        return self._lookup(name).values.clone()

    def _settable(self, name: str):
        param = self._lookup(name)
        part = next(p for p in self._parts if any(q is param for q in p.params.values()))
        pname = next(k for k, q in part.params.items() if q is param)
        return param, part.refresh, part.runtime_bounds(pname)

    def _display_names(self) -> dict[str, str]:
        """Parameter key -> the name users gave it (a config field where exactly one alias maps to it)."""
        targets: dict[str, list[str]] = {}
        for alias, target in self.aliases.items():
            targets.setdefault(target, []).append(alias)
        names = {}
        for key, hits in self._param_index.items():
            if "." in key:
                if len(self._param_index[key.split(".", 1)[1]]) == 1:
                    continue  # the unqualified name is unique: use that
            elif len(hits) > 1:
                continue  # ambiguous: shown under its qualified names
            else:  # unique: aliases may address it qualified too ("clamping[0].max_effort")
                aliases = targets.get(key, []) + targets.get(f"{hits[0][0]}.{key}", [])
                names[key] = aliases[0] if len(aliases) == 1 else key
                continue
            aliases = targets.get(key, [])
            names[key] = aliases[0] if len(aliases) == 1 else key
        return names

    def _parameter_table(self) -> dict[str, Param]:
        """Parameters keyed by the config field name where the model was built from a named config
        (``stiffness``), else the part's parameter name (``kp``, ``delay_steps``); ``parameters()``
        and ``randomized_parameters()`` (:class:`~.batch.BatchModel`) read it."""
        return {shown: self._param_index[key][0][1] for key, shown in self._display_names().items()}

    # -- reset ------------------------------------------------------------------------------
    def reset(self, env_ids: Any = None) -> None:
        """Clear the state of ``env_ids`` (None = all) and re-sample their randomized parameters.

        Other envs' state and parameters are untouched bit for bit.
        """
        ids, nothing = self._reset_ids(env_ids)
        if nothing:
            return
        for part in self._parts:
            if self._resample(part.params.values(), ids):
                part.refresh()
            part.reset(ids)

    # -- compute ----------------------------------------------------------------------------
    def compute(
        self,
        joint_pos: Any,
        joint_vel: Any,
        target_pos: Any = None,
        target_vel: Any = None,
        target_effort: Any = None,
        dt: float | None = None,
        *,
        inverse_mass: Any = None,
        bias_force: Any = None,
    ) -> torch.Tensor:
        """Run one physics substep of the recipe; returns the applied effort ``(num_envs, num_joints)``.

        joint_pos [rad or m], joint_vel [rad/s or m/s]: measured state before the substep.
        target_pos, target_vel, target_effort: commands (zero when omitted).
        dt [s]: the physics substep (needed by PID and the Stable-PD mode; when given, a finite
        number > 0). inverse_mass ``(num_envs, J, J)`` and bias_force ``(num_envs, J)``: the
        Stable-PD mode's mass-matrix terms (see :mod:`.implicit`).
        """
        if dt is not None and dt is not self._dt_checked:
            check_dt(dt, self.name)
            self._dt_checked = dt if type(dt) is float else ()  # floats are immutable: checked once
        # the common case inline (numpy arrays of the model's dtype and shape, targets omitted); the
        # rest converted and checked by _input
        nd, dtype, shape, zeros = (np.ndarray if self._numpy else ()), self._np_dtype, self._shape, self._zeros
        x = joint_pos
        q = x if type(x) is nd and x.dtype == dtype and x.shape == shape else self._input(x, "joint_pos")
        x = joint_vel
        qd = x if type(x) is nd and x.dtype == dtype and x.shape == shape else self._input(x, "joint_vel")
        x = target_pos
        tq = zeros if x is None else x if type(x) is nd and x.dtype == dtype and x.shape == shape else self._input(x, "target_pos")
        x = target_vel
        tqd = zeros if x is None else x if type(x) is nd and x.dtype == dtype and x.shape == shape else self._input(x, "target_vel")
        x = target_effort
        tff = zeros if x is None else x if type(x) is nd and x.dtype == dtype and x.shape == shape else self._input(x, "target_effort")
        self.compute_arrays(q, qd, tq, tqd, tff, dt, inverse_mass, bias_force)
        if self._numpy:  # the fresh copy, without ArrayOps' dispatch
            return torch.from_numpy(self._applied.copy())
        return self._applied.clone()

    def compute_arrays(self, q, qd, tq, tqd, tff, dt=None, inverse_mass=None, bias_force=None) -> None:
        """``compute`` without input conversion or output copy, for callers that already hold
        ``(num_envs, num_joints)`` arrays of the model's array library and dtype (the collection's
        hot path). Results are left in the model's buffers (:attr:`computed_array` /
        :attr:`applied_array`, ``delayed_command``)."""
        if self.needs_dt:  # refused before the delay history or a PID integral moves
            prepared = self._precheck(dt, inverse_mass, bias_force)
        if self.check_finite:
            self._check([("joint_pos", q), ("joint_vel", qd), ("target_pos", tq), ("target_vel", tqd), ("target_effort", tff)])
        if self.delay is not None:
            tq, tqd, tff = self.delay.apply(tq, tqd, tff)
        self.delayed_command = (tq, tqd, tff)
        if self._stable_pd:
            self.store_efforts(*run_implicit(self, q, qd, tq, tqd, tff, prepared))
        else:
            computed, applied = self._computed, self._applied
            q_read, qd_read, backlash = q, qd, self.backlash  # what the drive reads
            if backlash is not None:
                q_read, qd_read = backlash.apply(q, qd, tq, tqd)
            if self.encoder is not None:
                q_read, qd_read = self.encoder.apply(q_read, dt)
            self.drive.compute(q_read, qd_read, tq, tqd, tff, dt, computed)
            clamps = self.clamping
            if not clamps:
                applied[...] = computed
            else:  # the clamps act on the joint's own state (a DC motor's speed, a linkage's angle)
                src = computed
                for c in clamps:
                    c.apply(src, q, qd, applied)
                    src = applied
            if backlash is not None:
                backlash.gate(computed, applied)
        if self.check_finite:
            self._check([("computed_effort", self._computed), ("applied_effort", self._applied)])

    def _precheck(self, dt, inverse_mass, bias_force):
        """The inputs a PID drive / the Stable-PD mode need, checked; the Stable-PD solve's prepared inputs."""
        if dt is None:
            what = ("effort_mode='implicit'" if self._stable_pd else type(self.drive).__name__
                    if isinstance(self.drive, DrivePID) else "encoder_resolution (the velocity it reads)")
            raise ValueError(f"{self.name}: {what} needs dt= (the substep in s, > 0), got None")
        return prepare_implicit(self, dt, inverse_mass, bias_force) if self._stable_pd else None

    def __repr__(self) -> str:
        parts = " -> ".join(repr(p) for p in self._parts)
        return f"Actuator({self.name!r}, num_envs={self.num_envs}, num_joints={self.num_joints}: {parts})"
