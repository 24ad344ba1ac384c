"""Native execution on MuJoCo: actuator groups compiled into MuJoCo 4's own actuators.

A group whose parts all declare a MuJoCo-native form (``Part.NATIVE_FORM`` / ``Part.to_mujoco``)
runs inside ``mj_step`` instead of in the runtime. Each part says what it is; this module (the
compiler the parts are handed) turns the declarations of one group into one MuJoCo actuator per
joint, appended after the model's own actuators through ``MjSpec``:

============================ =============================================================================
parts (recipe order)         MuJoCo actuator (gear 1, joint transmission, ``input="pos vel ff"``)
============================ =============================================================================
DrivePD [+ ClampingMaxEffort] ``general`` ``gaintype="pid" biastype="affine"``, ``gainprm = 0``,
                             ``biasprm = (const_effort, -kp, -kd)``, ``forcerange = ±min(max_effort)``
DrivePID [+ ClampingMaxEffort] as above with ``dyntype="pid"``, ``gainprm = ki``, ``actearly``,
                             ``actrange = ±integral_max`` (our anti-windup; not the ``pid`` shortcut's)
DrivePD + ClampingDCMotor    ``dcmotor`` with ``K = 1`` (``motorconst="1 1"``), ``Vmax = velocity_limit``,
  [+ ClampingMaxEffort]      ``R = Vmax / saturation_effort``, ``controller = (kp, 0, kd, 0, 0, Vmax)``,
                             ``saturation = min(effort_limit, max_effort)``
Motor{Thermal,Inductance,    the motor's ``thermal`` / ``inductance`` / ``cogging`` / ``lugre`` values
  Cogging,LuGre}             (native only: explicit refuses them; :mod:`~actuator_gym.actuators.motor_physics`)
Delay (any of the above)     ``nsample = max_delay``, ``delay = (L - 0.5) * timestep`` per joint (0 for
                             ``L = 0``), history prefilled with the first command after every reset
============================ =============================================================================

Refused, naming the group and the reason: a part without a native form (the position-based /
remotized limit, learned drives, user parts), ``backlash``, ``encoder_resolution`` and ``bus``
(``Actuator.explicit_only``: they run in the runtime), the Stable-PD effort mode
(``effort_mode="implicit"``, ``ImplicitActuatorCfg``), a PID drive into a DC motor (the
motor's integrator has other anti-windup), a max-effort clamp before the DC-motor clamp, a dead
motor or an unlimited no-load speed (no finite ``R``), a delay longer than :data:`MAX_NATIVE_DELAY`.

MuJoCo-Warp 4.0 (:data:`ENGINES`) has no ``pid`` gain: there a PD drive is the ``dcmotor`` controller
(``K = R = 1``, ``Vmax = 0``) and a PID drive or ``const_effort`` is refused.

Exactness: under the Euler integrator a native group gives the explicit path's trajectory to
round-off (docs/native.md); under RK4 / implicit / implicitfast the engine re-evaluates the forces at
every stage and integrates their velocity terms implicitly, so the numbers differ.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import mujoco
import numpy as np

from ..actuators.motor_physics import NATIVE_ONLY_FORM
from .mujoco_model_copy import copy_model_values
from .mujoco_native_history import HistoryPrefill
from .mujoco_native_telemetry import LAW_ROWS, RawSnapshots, drive_torque, limit_acted, screen_limits
from .mujoco_motor_physics import MOTOR_TELEMETRY, PLACEHOLDER, native_only_fields, refuse_native_only, write_physics

__all__ = ["EXECUTIONS", "MAX_NATIVE_DELAY", "NativeCompiler", "NativeActuators", "NativeForm", "native_plan",
           "copy_model_values", "native_only_fields", "refuse_native_only", "MOTOR_TELEMETRY"]

ENGINES = ("mujoco", "mujoco_warp")
"""The engines native groups compile for: MuJoCo (C, ``mj_step`` / ``mujoco.batch``) and MuJoCo-Warp 4.0,
which has ``dcmotor`` and delays but no ``pid`` gain or dynamics: there a PD drive is the dcmotor's
controller (:attr:`GroupPlan.dc_pd`) and a PID drive or a ``const_effort`` has no native form."""

MAX_NATIVE_DELAY = 1000
"""Largest ``max_delay`` [substeps] of a group that runs natively. MuJoCo keeps ``max_delay``
timestamped samples of each delayed actuator's controls in every world's state (``data.history``,
copied as the worlds step): at 100000 substeps 16 worlds took 44 s to build and 18 ms a step
(explicit: 0.07 s, 0.56 ms); the 16-env pendulum task at 1000: 0.02 s and 0.64 ms (at 10: 0.53 ms).
A longer delay has no native form: it runs explicitly under ``execution="auto"`` and is refused
under ``"native"``, naming this bound."""

EXECUTIONS = ("explicit", "native", "auto")
"""The ``execution=`` values: the runtime's substep loop, MuJoCo's own actuators, or native where
exact for the model's integrator (Euler) and explicit elsewhere."""

_EULER = int(mujoco.mjtIntegrator.mjINT_EULER)
_POS_VEL_FF = int(mujoco.mjtCtrlInput.mjINPUT_POS | mujoco.mjtCtrlInput.mjINPUT_VEL | mujoco.mjtCtrlInput.mjINPUT_FF)


@dataclass
class NativeForm:
    """What a part declared: its ``kind`` (``"pid"``, ``"forcerange"``, ``"dcmotor"``, ``"delay"``),
    the part, and which of its parameters fill which native field (``fields``: native name ->
    parameter name), plus fixed values (``fixed``: e.g. the delay's ``max_delay``)."""

    kind: str
    part: Any
    fields: dict[str, str]
    fixed: dict[str, Any] = field(default_factory=dict)

    def values(self, name: str) -> np.ndarray:
        """The values in force of native field ``name`` for every env, ``(num_envs, num_joints)`` float64."""
        return self.part.params[self.fields[name]].values.detach().cpu().numpy().astype(np.float64)

    def bound(self, name: str) -> tuple[float, float]:
        """The range the field's parameter can take (nominal and every randomization)."""
        p = self.part.params[self.fields[name]]
        lo, hi = p.bounds()
        return float(lo), float(hi)


class NativeCompiler:
    """The object parts get in ``to_mujoco(compiler)``: :meth:`form` records their declaration."""

    def form(self, kind: str, part: Any, fixed: dict[str, Any] | None = None, **fields: str) -> NativeForm:
        return NativeForm(kind, part, dict(fields), dict(fixed or {}))


@dataclass
class GroupPlan:
    """How one group runs natively: its drive form, its limit forms, its delay form (or None)."""

    name: str
    cols: np.ndarray
    drive: NativeForm
    motor: NativeForm | None
    limits: list[NativeForm]
    delay: NativeForm | None
    physics: dict[str, NativeForm] = field(default_factory=dict)
    """The motor-physics declarations (``feature`` -> form; :mod:`~actuator_gym.actuators.motor_physics`)."""
    dc_pd: bool = False
    """The PD drive (no motor) runs as the ``dcmotor`` controller with ``K = R = 1`` and no voltage clip
    (``Vmax = 0``): MuJoCo-Warp 4.0 has no ``pid`` gain (:data:`ENGINES`)."""


def _plan_group(name: str, model: Any, cols: Sequence[int], engine: str = "mujoco") -> tuple[GroupPlan | None, str]:
    """The native plan of one group on ``engine`` (:data:`ENGINES`), or ``(None, reason)``."""
    if getattr(model, "stable_pd", False):
        return None, "the Stable-PD effort mode (effort_mode='implicit', ImplicitActuatorCfg) has no native form"
    runtime_only = tuple(getattr(model, "explicit_only", ()))  # backlash, encoder_resolution, bus
    if runtime_only:
        return None, f"{', '.join(runtime_only)} run(s) in the runtime only (no MuJoCo-native form)"
    compiler = NativeCompiler()
    forms = []
    for part in model.parts:
        f = part.to_mujoco(compiler)
        if f is None:
            return None, f"part {type(part).__name__} has no MuJoCo-native form"
        forms.append(f)
    delay = next((f for f in forms if f.kind == "delay"), None)
    if delay is not None and delay.fixed["max_delay"] > MAX_NATIVE_DELAY:
        return None, (f"max_delay={delay.fixed['max_delay']} substeps is over the native delay bound; allowed: "
                      f"max_delay <= {MAX_NATIVE_DELAY} (MAX_NATIVE_DELAY: MuJoCo keeps the history in every world's state)")
    drives = [f for f in forms if f.kind == "pid"]
    clamps = [f for f in forms if f.kind in ("forcerange", "dcmotor")]
    if len(drives) != 1:
        return None, "it has no drive with a native form"
    motors = [f for f in clamps if f.kind == "dcmotor"]
    if len(motors) > 1:
        return None, "two DC-motor clamps in series have no native form"
    motor = motors[0] if motors else None
    physics = {f.fixed["feature"]: f for f in forms if f.kind == NATIVE_ONLY_FORM}
    if physics and motor is None:
        return None, f"{sorted(physics)} need a DC-motor clamp (ClampingDCMotor) to act on"
    if motor is not None:
        if "ki" in drives[0].fields:
            return None, "a PID drive into a DC motor: the motor's own integrator has another anti-windup"
        if clamps.index(motor) != 0:
            return None, "a max-effort clamp before the DC-motor clamp has no native form (the motor clips first)"
        lo, _ = motor.bound("stall")
        if not lo > 0:
            return None, "saturation_effort can be 0 (a dead motor: no finite resistance)"
        _, hi = motor.bound("noload")
        if not math.isfinite(hi):
            return None, "velocity_limit can be +inf (no finite resistance)"
        if drives[0].bound("bias") != (0.0, 0.0):
            return None, "const_effort into a DC motor has no native form"
    warp = engine == "mujoco_warp"
    if warp and "ki" in drives[0].fields:
        return None, "MuJoCo-Warp 4.0 has no pid actuator (no PID gain or dynamics type); a PID drive runs explicitly there"
    if warp and drives[0].bound("bias") != (0.0, 0.0):
        return None, ("const_effort has no native form on MuJoCo-Warp (its PD is the dcmotor controller, "
                      "which has no constant term)")
    return GroupPlan(name, np.asarray(cols, dtype=np.intp), drives[0], motor,
                     [f for f in clamps if f.kind == "forcerange"], delay, physics, warp and motor is None), ""


def native_plan(collection: Any, model: mujoco.MjModel, execution: str, owner: str,
                engine: str = "mujoco") -> dict[str, GroupPlan | None]:
    """``{group: plan}`` (``None``: the group runs explicitly) for ``execution`` on ``engine``
    (:data:`ENGINES`); ``ValueError`` naming the group and the reason when ``execution="native"`` meets
    a group with no exact native form there.

    ``"auto"`` decides **per group**: under Euler (the only integrator under which native and explicit
    are the same law) each group with a native form runs natively and the others explicitly (a mix:
    the explicit groups run per substep beside the compiled ones); under another integrator every
    group runs explicitly. A group with native-only motor physics (:func:`native_only_fields`) makes
    ``"explicit"`` a ``ValueError`` naming the fields, and runs natively under ``"auto"`` whatever the
    integrator (the same error when it has no native plan); the other groups then follow the rule
    above."""
    if execution not in EXECUTIONS:
        raise ValueError(f"{owner}: execution must be one of {EXECUTIONS}, got {execution!r}")
    if execution == "explicit":
        refuse_native_only(collection, owner, execution)
        return {g: None for g in collection}
    plans, why = {}, {}
    for g in collection:
        plans[g], why[g] = _plan_group(g, collection[g], collection.joint_ids(g), engine)
    if execution == "native":
        for g, reason in why.items():
            if plans[g] is None:
                raise ValueError(f"{owner}: execution='native': group '{g}' has no exact MuJoCo-native form: {reason}; "
                                 "use execution='explicit' (or 'auto')")
        return plans
    only = native_only_fields(collection)  # "auto" from here on
    for g in only:
        if plans[g] is None:  # explicit cannot run it: native or refuse
            refuse_native_only(collection, owner, execution, f"; and native is not possible: group '{g}' {why[g]}")
    euler = int(model.opt.integrator) == _EULER
    return {g: plans[g] if (euler or g in only) else None for g in collection}


def _fl(limits: Sequence[NativeForm], motor: NativeForm | None) -> np.ndarray:
    """The force limit in force per joint: the min of the max-effort clamps and the motor's rated limit."""
    lim = None
    for f in ([motor] if motor is not None else []) + list(limits):
        v = f.values("limit")
        lim = v if lim is None else np.minimum(lim, v)
    return lim


def _ix(rows: Any, ids: np.ndarray) -> tuple:
    """Index of ``rows`` (a slice or env ids) x actuator ``ids`` into a ``(num_envs, nu, ...)`` field."""
    if isinstance(rows, slice):
        return rows, ids
    return rows[:, None], ids[None, :]


class NativeActuators:
    """The native groups of one model, compiled into a copy of it; one mechanism for one world (the
    wrapper) and for a batch of worlds (the batched tasks, per-world fields through ``Batch.expand``).

    Args:
        spec: the model's ``MjSpec`` (edited: the native actuators are appended after its own).
        joint_names: the collection's joints, in collection order.
        plans: ``{group: GroupPlan}`` (the native ones only).

    :meth:`compile_model` gives the model; :meth:`attach` binds the worlds it runs in (one ``MjData``
    seen as a batch of one, :class:`~actuator_gym.backends.native_side.OneWorld`, or the batched backend). Then
    :meth:`write_parameters` writes every env's values in force into its world's model fields (at
    every reset and parameter change), :meth:`write_commands` the targets into ``ctrl`` (once per
    control step; the first after an env's reset also fills its delay history), and
    :meth:`telemetry` reads the last substep's efforts back from the engine. Every array is
    ``(num_envs, ...)``.
    """

    def __init__(self, spec: mujoco.MjSpec, joint_names: Sequence[str], plans: dict[str, GroupPlan]):
        self.spec, self.plans = spec, plans
        self.num_joints = len(joint_names)
        self.first_actuator = len(spec.actuators)
        cols = np.concatenate([p.cols for p in plans.values()])
        self.cols = cols
        """Collection columns of the native joints, in native-actuator order."""
        self.groups = tuple(plans)
        """The native groups (the collection's other groups run explicitly beside them: a mix)."""
        for plan in plans.values():
            for c in plan.cols:
                self._add(spec, joint_names[c], plan)

    @staticmethod
    def _add(spec: mujoco.MjSpec, joint: str, plan: GroupPlan) -> None:
        a = spec.add_actuator()
        a.name = f"actuator_gym/{plan.name}/{joint}"
        a.target, a.trntype = joint, mujoco.mjtTrn.mjTRN_JOINT
        a.gear[0] = 1.0
        if plan.motor is not None or plan.dc_pd:  # parameters proper are written after compiling
            a.set_to_dcmotor(motorconst=[1.0, 1.0], resistance=1.0, controller=[1.0, 0.0, 1.0, 0.0, 0.0, 1.0],
                             ctrlspec=_POS_VEL_FF, **{k: PLACEHOLDER[k] for k in plan.physics})
        else:
            a.gaintype, a.biastype = mujoco.mjtGain.mjGAIN_PID, mujoco.mjtBias.mjBIAS_AFFINE
            a.ctrlspec = _POS_VEL_FF
            a.gainprm[0] = 0.0  # ki (written after compiling)
            if "ki" in plan.drive.fields:
                a.dyntype, a.actearly = mujoco.mjtDyn.mjDYN_PID, True
                a.gainprm[0] = 1.0
        a.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE
        if plan.motor is not None or plan.limits:  # limited in every world (+-inf where a limit is infinite)
            a.forcelimited, a.forcerange = mujoco.mjtLimited.mjLIMITED_TRUE, [-1.0, 1.0]
        else:
            a.forcelimited = mujoco.mjtLimited.mjLIMITED_FALSE
        if plan.delay is not None and plan.delay.fixed["max_delay"] > 0:
            a.nsample = int(plan.delay.fixed["max_delay"])
            a.delay = (plan.delay.fixed["max_delay"] - 0.5) * spec.option.timestep

    def compile_model(self) -> mujoco.MjModel:
        """The model with the native actuators appended (the model's own keep ids and controls)."""
        m = self.spec.compile()
        n = len(self.cols)
        first = self.first_actuator
        if m.nactuator - first != n:  # pragma: no cover - the spec added one per joint
            raise RuntimeError("native actuators: unexpected actuator count after compiling")
        self.model = m
        self.ids = ids = np.arange(first, first + n)
        self.env_controls = int(m.actuator_ctrladr[first]) if n else m.nu
        """Controls of the model's own actuators (they come first, as in the env's model)."""
        self.delayed = np.asarray([int(i) for i in ids if m.actuator_history[i, 0] > 0], dtype=np.intp)
        self._blocks: list[tuple[slice, GroupPlan]] = []
        off = 0
        for plan in self.plans.values():
            self._blocks.append((slice(off, off + len(plan.cols)), plan))
            off += len(plan.cols)
        self._pid = np.zeros(n, bool)
        self._motor = np.zeros(n, bool)
        for sl, plan in self._blocks:
            self._pid[sl] = "ki" in plan.drive.fields
            self._motor[sl] = plan.motor is not None
        self._actadr = np.where(self._pid, m.actuator_actadr[ids], 0).astype(np.intp)
        # motor physics: the dcmotor's states are (temperature, bristle, current) in that order, those
        # switched on (no slew limit, no integrator: the controller has ki = 0 and slewmax = 0)
        self._physics, self._thermal, self._inductive = (np.zeros(n, bool) for _ in range(3))
        for sl, plan in self._blocks:
            self._physics[sl] = bool(plan.physics)
            self._thermal[sl] = "thermal" in plan.physics
            self._inductive[sl] = "inductance" in plan.physics
        self._any_physics = bool(self._physics.any())
        self._temp_adr = m.actuator_actadr[ids[self._thermal]].astype(np.intp)
        self._cur_adr = (m.actuator_actadr[ids] + m.actuator_actnum[ids] - 1)[self._inductive].astype(np.intp)
        self._any_pid, self._any_motor = bool(self._pid.any()), bool(self._motor.any())
        # collection columns as a slice when they are in order (one block copy instead of a scatter)
        self._c = slice(int(self.cols[0]), int(self.cols[0]) + n) if n and np.array_equal(
            self.cols, np.arange(self.cols[0], self.cols[0] + n)) else self.cols
        return m

    def attach(self, worlds: Any) -> None:
        """Run in ``worlds`` (one world or the batched backend: ``model_field(name)`` /
        ``field(name)`` / ``output(name)`` give live ``(num_envs, ...)`` arrays)."""
        m, n, first = self.model, len(self.ids), self.first_actuator
        self.worlds = worlds
        self._mirrored = hasattr(worlds, "push_model_fields")
        """Whether the worlds' arrays are host mirrors of a device (fetched fresh before writing)."""
        self._fields = {name: worlds.model_field(name) for name in _FIELDS + (_PID_FIELDS if self._any_pid else ())}
        ctrl = worlds.field("ctrl")
        self.num_envs = N = ctrl.shape[0]
        # zero-copy views: the native actuators are the last ones, 3 controls each (pos vel ff)
        self._u = ctrl[:, self.env_controls:self.env_controls + 3 * n].reshape(N, n, 3)
        if n and not np.shares_memory(self._u, ctrl):  # pragma: no cover - a split of the last axis is a view
            raise RuntimeError("native actuators: the control view is a copy")
        self._force = worlds.output("actuator_force")[:, first:first + n]
        self._length = worlds.output("actuator_length")[:, first:first + n]
        self._velocity = worlds.output("actuator_velocity")[:, first:first + n]
        self._act = worlds.field("act") if self._any_pid else None
        self._fresh = np.ones(N, bool)
        self._any_fresh = True
        self.step_channels: tuple[int, ...] | None = None
        """The target channels (0 position, 1 velocity, 2 effort) the consumer changes between
        resets, or None (all): :meth:`write_commands` copies only those, except at the first command
        after a reset (every channel; ``mj_resetData`` zeroes the controls). The wrapper sets its
        action's channels."""
        # the commands of the last control steps (as many as the longest lag can reach back), in a
        # ring indexed by the control steps since attach (``_clock``; one slice write per step for
        # every env), to report which one the engine's delayed read used at the last substep;
        # ``_start``: the clock at each env's first command since its reset
        longest = int(m.actuator_history[self.ids, 0].max(initial=0))  # the longest lag any reset can draw
        self._commands = np.zeros((longest + 1, N, n, 3))
        self._ring = longest > 0  # whether a lag can reach past the control step (set from its substeps)
        self._noted = 0  # the substeps of the control steps _ring was set for (0: none yet)
        self._clock = 0
        self._start = np.zeros(N, dtype=np.int64)
        self._envs = np.arange(N)
        self._tmp = np.zeros((N, n)), np.zeros((N, n)), np.zeros((N, n), bool)
        self._lag = np.zeros((N, n), dtype=np.int64)
        self._longest_lag = 0
        law = np.zeros((N, len(LAW_ROWS), n))  # one array (a raw snapshot gathers it in one piece)
        law[:, [LAW_ROWS.index(k) for k in ("limit", "vmax", "vscreen")]] = np.inf
        self._law = tuple(law[:, k] for k in range(len(LAW_ROWS) - 1))
        self._vscreen = law[:, -1]  # vmax (1 - 1e-9): the voltage-clip screen of telemetry()
        pos = np.full(self.num_joints, -1, dtype=np.intp)
        pos[self.cols] = np.arange(n)
        self.raw = RawSnapshots(lambda env: (self._force[env], self._velocity[env], self._length[env],
                                             self._u[env].reshape(-1), law[env].reshape(-1)), pos, self._any_motor)
        """One env's step as a raw snapshot (:meth:`snapshot`, after :meth:`defer_telemetry`)."""
        self._prefill = HistoryPrefill(m, self.delayed, first) if len(self.delayed) else None

    # -- parameters ---------------------------------------------------------------------------
    def write_parameters(self, env_ids: Any = None) -> None:
        """Write the values in force of ``env_ids`` (None = every env) into their worlds' model
        fields, and keep them (``(num_envs, native joints)`` arrays) for the telemetry."""
        F, dt = self._fields, float(self.model.opt.timestep)
        rows = slice(None) if env_ids is None else np.asarray(env_ids, dtype=np.intp).reshape(-1)
        kp_all, kd_all, bias_all, ki_all, lim_all, r_all, vmax_all = self._law
        gain, bias = F["actuator_gainprm"], F["actuator_biasprm"]
        for sl, plan in self._blocks:
            ids = self.ids[sl]
            at = _ix(rows, ids)
            d = plan.drive
            kp, kd = d.values("kp")[rows], d.values("kd")[rows]
            kp_all[rows, sl], kd_all[rows, sl] = kp, kd
            lim = _fl(plan.limits, plan.motor)
            if plan.motor is not None or plan.dc_pd:
                if plan.motor is not None:
                    vmax = plan.motor.values("noload")[rows]
                    r = vmax / plan.motor.values("stall")[rows]
                    r_all[rows, sl], vmax_all[rows, sl] = r, vmax
                else:  # the PD as the dcmotor's controller: K = R = 1, Vmax = 0 (no voltage clip)
                    r, vmax = 1.0, 0.0
                for k, v in ((0, r), (4, kp), (6, kd), (7, vmax)):
                    gain[at + (k,)] = v
                write_physics(F, at, rows, plan.physics)
            else:
                b = d.values("bias")[rows]
                bias_all[rows, sl] = b
                gain[at] = 0.0
                if "ki" in d.fields:
                    ki = d.values("ki")[rows]
                    ki_all[rows, sl] = ki
                    gain[at + (0,)] = ki
                    imax = d.values("imax")[rows]
                    fin = np.isfinite(imax)
                    F["actuator_actlimited"][at] = fin
                    F["actuator_actrange"][at + (0,)] = np.where(fin, -imax, 0.0)
                    F["actuator_actrange"][at + (1,)] = np.where(fin, imax, 0.0)
                bias[at] = 0.0
                bias[at + (0,)], bias[at + (1,)], bias[at + (2,)] = b, -kp, -kd
            if lim is not None:  # forcelimited at compile time; +-inf where the limit is infinite
                lim = lim[rows]
                lim_all[rows, sl] = lim
                F["actuator_forcerange"][at + (0,)] = -lim
                F["actuator_forcerange"][at + (1,)] = lim
            if plan.delay is not None and plan.delay.fixed["max_delay"] > 0:
                lag = plan.delay.values("lag")[rows]
                F["actuator_delay"][at] = np.where(lag > 0, (lag - 0.5) * dt, 0.0)
                self._lag[rows, sl] = lag.astype(np.int64)
        np.multiply(vmax_all, 1.0 - 1e-9, out=self._vscreen)
        self._longest_lag = int(self._lag.max(initial=0))
        push = getattr(self.worlds, "push_model_fields", None)  # a device backend's host mirrors (MuJoCo-Warp on CUDA)
        if push is not None:
            push()

    def reset(self, env_ids: Any = None) -> None:
        """After the reset of ``env_ids`` (None = all): their next :meth:`write_commands` fills their
        delay histories and restarts their step count."""
        self._fresh[slice(None) if env_ids is None else np.asarray(env_ids, dtype=np.intp)] = True
        self._any_fresh = True

    # -- one control step ---------------------------------------------------------------------
    def bind_commands(self, pos: np.ndarray, vel: np.ndarray, eff: np.ndarray) -> None:
        """The targets ``(num_envs, num_joints)`` (collection order: the collection's
        ``target_command``) that :meth:`write_commands` copies into ``ctrl`` from now on."""
        u, c = self._u, self._c  # (a slice where the columns are in order: views, no gather)
        self._gather = None if isinstance(c, slice) else c
        self._copies = tuple((u[:, :, k], src if self._gather is not None else src[:, c])
                             for k, src in enumerate((pos, vel, eff)))

    def write_commands(self) -> None:
        """``ctrl`` of the native actuators from the bound targets (:meth:`bind_commands`); the first
        call after an env's reset fills its delay histories with this command
        (``mj_initCtrlHistory``, as our Delay holds the oldest command since the reset)."""
        if self._mirrored:
            self.worlds.field("ctrl")  # current, and to be pushed (a device backend's host mirror)
        copies, g = self._copies, self._gather
        for k in range(3) if self._any_fresh or self.step_channels is None else self.step_channels:
            dst, src = copies[k]
            dst[...] = src if g is None else src[:, g]
        if self._any_fresh:
            fresh = self._fresh
            envs = np.flatnonzero(fresh)
            self._start[envs] = self._clock
            fresh[:] = False
            self._any_fresh = False
            if len(self.delayed):
                self._prefill.fill(self.worlds, envs, self._u.reshape(len(self._u), -1))
        if self._ring:
            self._commands[self._clock % len(self._commands)] = self._u

    def _reads_ring(self, substeps: int) -> bool:
        """Whether a lag in force reaches past the control step of ``substeps`` substeps (then the
        command the last substep read is an earlier step's, from the ring)."""
        return bool(len(self.delayed)) and self._longest_lag >= substeps

    def _note_substeps(self, substeps: int) -> None:
        """A control step of ``substeps`` ran: the ring is written from now on only where a lag any
        reset can draw reaches past such a step."""
        self._ring = len(self._commands) - 1 >= substeps
        self._noted = substeps

    def defer_telemetry(self, substeps: int) -> bool:
        """The control step just ran ``substeps`` substeps; whether its telemetry may be read later
        from a raw snapshot (:meth:`snapshot`; module :mod:`~actuator_gym.backends.mujoco_native_telemetry`:
        no PID integrator or motor physics, no lag reaching past the control step). True counts
        the step; then :meth:`telemetry` of it takes ``deferred=True``; False: call :meth:`telemetry`."""
        if substeps != self._noted:
            self._note_substeps(substeps)
        if self._any_pid or self._any_physics or self._reads_ring(substeps):
            return False
        self._clock += 1
        return True

    def snapshot(self, cols: tuple[int, Any], extra_keys: tuple[str, ...], extra: Any, substeps: int,
                 physics_dt: float):
        """The deferred step of env ``cols[0]``, joints ``cols[1]`` (collection columns), as a
        :class:`~actuator_gym.runtime.lazy_telemetry.StepSnapshot` with the same values :meth:`telemetry`
        gives (its commanded torque derived on first read)."""
        return self.raw.snapshot(cols, extra_keys, extra, substeps, physics_dt)

    def telemetry(self, out_computed: np.ndarray, out_applied: np.ndarray, out_qd: np.ndarray, substeps: int,
                  deferred: bool = False) -> None:
        """The last substep's efforts into ``(num_envs, num_joints)`` collection-order buffers: applied
        = ``actuator_force``; computed = the controller's commanded torque ``kp (u_pos - l) + kd (u_vel
        - v) + u_ff + const [+ ki x_I]`` from the controls the engine read at the last substep (a
        delayed group: the command of substep ``k - L`` since the env's reset, ``substeps`` per
        control step, kept from the last control steps' commands), ``actuator_length`` /
        ``actuator_velocity`` and ``act``; ``out_qd``: the velocity the actuators read
        (``actuator_velocity``, gear 1). Where no limit acted (the force range did not clamp, the
        motor's voltage stayed within ``Vmax``), computed is the engine's force itself, so
        ``saturated`` (computed != applied) means what it means on the explicit path.
        ``deferred``: the step was counted by :meth:`defer_telemetry` already."""
        if substeps != self._noted:
            self._note_substeps(substeps)
        c, force, vel = self._c, self._force, self._velocity
        out_applied[:, c] = force
        out_qd[:, c] = vel
        kp, kd, bias, ki, lim, r, vmax = self._law
        t, e, acted = self._tmp
        screen_limits(force, vel, lim, r, self._vscreen, self._any_motor, e, acted)
        clock = self._clock - 1 if deferred else self._clock
        self._clock = clock + 1
        if not self._any_physics and not acted.any():  # no limit acted: the commanded torque is the engine's force
            out_computed[:, c] = force
            return
        u = self._u
        if self._reads_ring(substeps):
            # the env's control step since its reset is clock - start; its last substep is
            # (step + 1) S - 1 since the reset, whose command came from control step
            # max(0, (step + 1) S - 1 - L) // S (in the ring at start + that; this step's u where L < S)
            step = (clock - self._start)[:, None]
            source = np.maximum((step + 1) * substeps - 1 - self._lag, 0) // substeps
            source += self._start[:, None]
            u = self._commands[source % len(self._commands), self._envs[:, None], np.arange(len(self.ids))[None, :]]
        drive_torque(u[..., 0], u[..., 1], u[..., 2], self._length, vel, kp, kd, bias, t, e)
        if self._any_pid:
            t += ki * self._act[:, self._actadr]
        limit_acted(force, t, vel, lim, r, vmax, self._any_motor, acted)
        # where no limit acted the engine's force is the commanded torque (to round-off in the
        # engine's order of operations): report it, so that saturated means a limit acted
        if self._any_physics:  # motor physics: the force is not the command even within the limits
            acted |= self._physics
        np.copyto(t, force, where=~acted)
        out_computed[:, c] = t

    def substep_power(self) -> np.ndarray:
        """``actuator_force * actuator_velocity`` [W] of the substep just run, ``(num_envs, native joints)``
        in :attr:`cols` order (a mix reads it after every substep)."""
        return self._force * self._velocity

    def motor_telemetry(self) -> dict[str, np.ndarray]:
        """The :data:`MOTOR_TELEMETRY` keys, ``(num_envs, num_joints)`` in collection order (NaN where a
        key does not apply), after :meth:`telemetry`; ``{}`` when no native group has the thermal model
        or inductance. The temperature is the state after the step (ambient + MuJoCo's rise ``act``);
        the current is the engine's current state (inductance: the value the last substep's force
        used, ``actearly``) or the algebraic ``(V - qd) / R_T`` of the last substep, with ``V =
        clip(R tau* + qd, +-Vmax)`` from the commanded torque and ``R_T`` at the winding temperature
        the substep began with (``act - h act_dot``)."""
        th, ind = self._thermal, self._inductive
        if not (th.any() or ind.any()):
            return {}
        F, ids, N = self._fields, self.ids, self.num_envs
        act = self.worlds.field("act")
        out = {}
        if th.any():
            temp = np.full((N, self.num_joints), np.nan)
            temp[:, self.cols[th]] = F["actuator_dynprm"][:, ids[th], 4] + act[:, self._temp_adr]
            out["motor_temperature"] = temp
        cur = np.full((N, self.num_joints), np.nan)
        cur[:, self.cols[ind]] = act[:, self._cur_adr]
        alg = th & ~ind
        if alg.any():
            adr = self._temp_adr[alg[th]]
            g = F["actuator_gainprm"][:, ids[alg]]
            rise = act[:, adr] - float(self.model.opt.timestep) * self.worlds.output("act_dot")[:, adr]
            r_t = g[..., 0] * (1.0 + g[..., 2] * (rise + F["actuator_dynprm"][:, ids[alg], 4] - g[..., 3]))
            qd = self._velocity[:, alg]
            v = np.clip(g[..., 0] * self._tmp[0][:, alg] + qd, -g[..., 7], g[..., 7])
            cur[:, self.cols[alg]] = (v - qd) / r_t
        out["motor_current"] = cur
        return out


_FIELDS = ("actuator_gainprm", "actuator_biasprm", "actuator_dynprm", "actuator_forcerange", "actuator_delay")
"""The model fields the native groups write per world (``Batch.expand`` on a batch; MuJoCo-Warp batches
them too). ``forcelimited`` is not among them (MuJoCo-Warp keeps it per model): it is set at compile
time for the actuators with a limit, whose infinite limits are written as ``forcerange = +-inf``."""

_PID_FIELDS = ("actuator_actrange", "actuator_actlimited")
"""The PID groups' integrator limits, per world (MuJoCo only: MuJoCo-Warp has no PID)."""
