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
remotized limit, learned drives, user parts), the Stable-PD effort mode, engine-servo groups
(``ImplicitActuatorCfg`` already runs as MuJoCo's own servo), a PID drive into a DC motor (the
motor's integrator has other anti-windup), a max-effort clamp before the DC-motor clamp, a dead
motor or an unlimited no-load speed (no finite ``R``).

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

__all__ = ["EXECUTIONS", "NativeCompiler", "NativeActuators", "NativeForm", "native_plan", "copy_model_values",
           "native_only_fields", "MOTOR_TELEMETRY"]

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
        """The values in force of native field ``name`` for env 0, ``(num_joints,)`` float64."""
        return self.part.params[self.fields[name]].values[0].detach().cpu().numpy().astype(np.float64)

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


def _plan_group(name: str, model: Any, cols: Sequence[int]) -> tuple[GroupPlan | None, str]:
    """The native plan of one group, or ``(None, reason)``."""
    if getattr(model, "engine_servo", False):
        return None, "it runs as MuJoCo's own position servo already (ImplicitActuatorCfg)"
    if getattr(model, "stable_pd", False):
        return None, "the Stable-PD effort mode (effort_mode='implicit') has no native form"
    compiler = NativeCompiler()
    forms = []
    for part in model.parts:
        f = part.to_mujoco(compiler)
        if f is None:
            return None, f"part {type(part).__name__} has no MuJoCo-native form"
        forms.append(f)
    delay = next((f for f in forms if f.kind == "delay"), None)
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
    return GroupPlan(name, np.asarray(cols, dtype=np.intp), drives[0], motor,
                     [f for f in clamps if f.kind == "forcerange"], delay, physics), ""


def native_plan(collection: Any, model: mujoco.MjModel, execution: str, owner: str) -> dict[str, GroupPlan | None]:
    """``{group: plan}`` (``None``: the group runs explicitly) for ``execution``; ``ValueError`` naming
    the group and the reason when ``execution="native"`` meets a group with no exact native form.

    ``"auto"``: native only when the model integrates with Euler (the only integrator under which
    native and explicit are the same law) and every group has a native form; explicit otherwise
    (one wrapper runs either way: a group mix is not supported yet). A group with native-only motor
    physics (:func:`native_only_fields`) makes ``"explicit"`` a ``ValueError`` naming the fields, and
    ``"auto"`` native whatever the integrator (or the same error when native is not possible)."""
    if execution not in EXECUTIONS:
        raise ValueError(f"{owner}: execution must be one of {EXECUTIONS}, got {execution!r}")
    if execution == "explicit":
        _refuse_native_only(collection, owner, execution)
        return {g: None for g in collection}
    plans, why = {}, {}
    for g in collection:
        plans[g], why[g] = _plan_group(g, collection[g], collection.joint_ids(g))
    if execution == "auto" and native_only_fields(collection):  # explicit cannot run them: native or refuse
        for g, reason in why.items():
            if plans[g] is None:
                _refuse_native_only(collection, owner, execution, f"; and native is not possible: group '{g}' {reason}")
        return plans
    if execution == "native":
        for g, reason in why.items():
            if plans[g] is None:
                raise ValueError(f"{owner}: execution='native': group '{g}' has no exact MuJoCo-native form: {reason}; "
                                 "use execution='explicit' (or 'auto')")
        return plans
    if int(model.opt.integrator) != _EULER or any(p is None for p in plans.values()):
        return {g: None for g in collection}
    return plans


def native_only_fields(collection: Any) -> dict[str, list[str]]:
    """``{group: fields}`` of the groups whose parts exist only in MuJoCo's native ``dcmotor`` (the
    motor physics: thermal model, inductance, cogging, LuGre friction)."""
    out = {}
    for g in collection:
        names = sorted(n for p in collection[g].parts if p.native_form == NATIVE_ONLY_FORM for n in p.native_only_fields)
        if names:
            out[g] = names
    return out


def _refuse_native_only(collection: Any, owner: str, execution: str, why: str = "") -> None:
    """``ValueError`` naming the group and the fields when a group that runs only natively would run
    explicitly (``why``: why native is not possible either, for ``"auto"``)."""
    for g, names in native_only_fields(collection).items():
        raise ValueError(
            f"{owner}: execution={execution!r}: group '{g}' sets {names}, which exist only in MuJoCo's native "
            f"dcmotor (the explicit path has no thermal / inductance / cogging / LuGre model){why}; use "
            "execution='native' (or 'auto') on a Gymnasium MuJoCo env"
        )


def _fl(limits: Sequence[NativeForm], motor: NativeForm | None) -> np.ndarray:
    """The force limit in force per joint: the min of the max-effort clamps and the motor's rated limit."""
    lim = None
    for f in ([motor] if motor is not None else []) + list(limits):
        v = f.values("limit")
        lim = v if lim is None else np.minimum(lim, v)
    return lim


_PLACEHOLDER = {"thermal": [1.0, 1.0, 0.0, 0.0, 0.0, 0.0], "inductance": [0.0, 1.0], "cogging": [1.0, 1.0, 0.0],
                "lugre": [1.0, 0.0, 1.0, 1.0, 1.0]}
"""Non-zero ``set_to_dcmotor`` values that switch a feature on (MuJoCo allocates its state at compile
time from them); the values in force are written after compiling (:func:`_write_physics`)."""


def _write_physics(m: mujoco.MjModel, ids: np.ndarray, physics: dict[str, NativeForm]) -> None:
    """The motor-physics values in force into the dcmotor's parameter arrays (MuJoCo 4.0's layout,
    as its compiler fills them): ``dynprm = (L/R, di/dt max, R_th, C_th, T_ambient, sigma0, sigma1,
    ...)``, ``gainprm[2:4] = (alpha, T_ref)``, ``biasprm = (A, N, phi, F_C, F_S, v_S)``. Every value is
    > 0 where MuJoCo reads "> 0" as "feature on" (the domains), so the state layout stays that of
    the compiled model."""
    f = physics.get("thermal")
    if f is not None:
        m.actuator_dynprm[ids, 2], m.actuator_dynprm[ids, 3] = f.values("rth"), f.values("cth")
        m.actuator_dynprm[ids, 4] = f.values("tamb")
        m.actuator_gainprm[ids, 2], m.actuator_gainprm[ids, 3] = f.values("alpha"), f.values("tref")
    f = physics.get("inductance")
    if f is not None:
        m.actuator_dynprm[ids, 0] = f.values("te")
    f = physics.get("cogging")
    if f is not None:
        for k, name in enumerate(("amplitude", "poles", "phase")):
            m.actuator_biasprm[ids, k] = f.values(name)
    f = physics.get("lugre")
    if f is not None:
        m.actuator_dynprm[ids, 5], m.actuator_dynprm[ids, 6] = f.values("sigma0"), f.values("sigma1")
        for k, name in enumerate(("coulomb", "static", "stribeck")):
            m.actuator_biasprm[ids, 3 + k] = f.values(name)


MOTOR_TELEMETRY: dict[str, str] = {
    "motor_temperature": "winding temperature after the control step [°C] (native DC motors with the thermal "
                         "model; NaN in the other columns)",
    "motor_current": "winding current at the last substep [A of the engine's K = 1 N·m/A motor: numerically the "
                     "motor torque K i in N·m; a torque constant Kt carries motor_current / Kt amperes] (native DC "
                     "motors with the thermal model or inductance; NaN in the other columns)",
}
"""The ``info["actuator"]`` keys of the native motor physics (present only when a group has them)."""


_STRUCTS = ("opt", "vis", "stat")


def copy_model_values(src: mujoco.MjModel, dst: mujoco.MjModel) -> None:
    """Copy what ``src`` holds now into ``dst``, a compilation of the same file with actuators
    appended: every model array of the same shape whose name does not concern actuators or names
    (physical properties edited at run time, randomized fields, the wrapper's joint properties),
    and the ``opt`` / ``vis`` / ``stat`` structs (integrator, timestep, offscreen size, ...)."""
    for name in dir(src):
        if name.startswith("_") or "actuator" in name or name.startswith("name") or name == "names":
            continue
        a = getattr(src, name, None)
        if not isinstance(a, np.ndarray):
            continue
        b = getattr(dst, name, None)
        if isinstance(b, np.ndarray) and b.shape == a.shape and b.dtype == a.dtype and b.flags.writeable:
            b[...] = a
    for struct in _STRUCTS:
        _copy_struct(getattr(src, struct), getattr(dst, struct))


def _copy_struct(a: Any, b: Any) -> None:
    for f in dir(a):
        if f.startswith("_"):
            continue
        v = getattr(a, f)
        if callable(v):
            continue
        if isinstance(v, np.ndarray):
            getattr(b, f)[...] = v
        elif isinstance(v, (int, float)):
            try:
                setattr(b, f, v)
            except (AttributeError, TypeError):  # read-only fields
                pass
        else:
            _copy_struct(v, getattr(b, f))


class NativeActuators:
    """The native groups of one env, compiled into a copy of its model.

    Args:
        spec: the env's ``MjSpec`` (edited: the native actuators are appended after its own).
        joint_names: the collection's joints, in collection order.
        plans: ``{group: GroupPlan}`` (the native ones only).

    After :meth:`compile` gives ``(model, data)``, :meth:`write_parameters` writes the values in
    force into the model fields (at every reset and parameter change), :meth:`write_commands` the
    targets into ``ctrl`` (once per control step; the first after a reset also fills the delay
    history), and :meth:`telemetry` reads the last substep's efforts back from the engine.
    """

    def __init__(self, spec: mujoco.MjSpec, joint_names: Sequence[str], plans: dict[str, GroupPlan]):
        self.spec, self.plans = spec, plans
        self.num_joints = len(joint_names)
        self.first_actuator = len(spec.actuators)
        cols = np.concatenate([p.cols for p in plans.values()])
        self.cols = cols
        """Collection columns of the native joints, in native-actuator order."""
        for plan in plans.values():
            for c in plan.cols:
                self._add(spec, joint_names[c], plan)

    @staticmethod
    def _add(spec: mujoco.MjSpec, joint: str, plan: GroupPlan) -> None:
        a = spec.add_actuator()
        a.name = f"actuator_gym/{plan.name}/{joint}"
        a.target, a.trntype = joint, mujoco.mjtTrn.mjTRN_JOINT
        a.gear[0] = 1.0
        if plan.motor is not None:  # parameters proper are written after compiling
            a.set_to_dcmotor(motorconst=[1.0, 1.0], resistance=1.0, controller=[1.0, 0.0, 1.0, 0.0, 0.0, 1.0],
                             ctrlspec=_POS_VEL_FF, **{k: _PLACEHOLDER[k] for k in plan.physics})
        else:
            a.gaintype, a.biastype = mujoco.mjtGain.mjGAIN_PID, mujoco.mjtBias.mjBIAS_AFFINE
            a.ctrlspec = _POS_VEL_FF
            a.gainprm[0] = 0.0  # ki (written after compiling)
            if "ki" in plan.drive.fields:
                a.dyntype, a.actearly = mujoco.mjtDyn.mjDYN_PID, True
                a.gainprm[0] = 1.0
        a.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE
        if plan.delay is not None and plan.delay.fixed["max_delay"] > 0:
            a.nsample = int(plan.delay.fixed["max_delay"])
            a.delay = (plan.delay.fixed["max_delay"] - 0.5) * spec.option.timestep

    def compile(self) -> tuple[mujoco.MjModel, mujoco.MjData]:
        m = self.spec.compile()
        n = len(self.cols)
        first = self.first_actuator
        if m.nactuator - first != n:  # pragma: no cover - the spec added one per joint
            raise RuntimeError("native actuators: unexpected actuator count after compiling")
        self.model, self.data = m, mujoco.MjData(m)
        self.ids = ids = np.arange(first, first + n)
        self.env_controls = int(m.actuator_ctrladr[first]) if n else m.nu
        """Controls of the model's own actuators (they come first, as in the env's model)."""
        d = self.data
        # zero-copy views: the native actuators are the last ones, 3 controls each (pos vel ff)
        self._u = d.ctrl[self.env_controls:self.env_controls + 3 * n].reshape(n, 3)
        self._force = d.actuator_force[first:first + n]
        self._length = d.actuator_length[first:first + n]
        self._velocity = d.actuator_velocity[first:first + n]
        self.delayed = [int(i) for i in ids if m.actuator_history[i, 0] > 0]
        self._fresh = True
        # the commands of the last control steps (as many as the longest lag can reach back), to
        # report which one the engine's delayed read used at the last substep
        self._commands = np.zeros((int(m.actuator_history[ids, 0].max(initial=0)) + 1, n, 3))
        self._step = 0
        self._rows = np.arange(n)
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
        self._tmp = np.zeros(n), np.zeros(n), np.zeros(n, bool)
        # collection columns as a slice when they are in order (one block copy instead of a scatter)
        self._c = slice(int(self.cols[0]), int(self.cols[0]) + n) if n and np.array_equal(
            self.cols, np.arange(self.cols[0], self.cols[0] + n)) else self.cols
        self._source = (None, None, 0)  # (substeps, per-joint offset of the command a lag reads, max lag)
        return m, self.data

    # -- parameters ---------------------------------------------------------------------------
    def write_parameters(self) -> None:
        """Write the values in force (env 0) of every native group into the model fields, and keep
        them (one array over all native joints each) for the telemetry."""
        m, dt, n = self.model, float(self.model.opt.timestep), len(self.ids)
        kp_all, kd_all, bias_all, ki_all = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
        lim_all, r_all, vmax_all = np.full(n, np.inf), np.zeros(n), np.full(n, np.inf)
        self._lag = np.zeros(n, dtype=np.int64)
        for sl, plan in self._blocks:
            ids = self.ids[sl]
            d = plan.drive
            kp_all[sl], kd_all[sl] = kp, kd = d.values("kp"), d.values("kd")
            lim = _fl(plan.limits, plan.motor)
            if plan.motor is not None:
                vmax = plan.motor.values("noload")
                r = vmax / plan.motor.values("stall")
                r_all[sl], vmax_all[sl] = r, vmax
                g = m.actuator_gainprm[ids]
                g[:, 0], g[:, 4], g[:, 6], g[:, 7] = r, kp, kd, vmax
                m.actuator_gainprm[ids] = g
                _write_physics(m, ids, plan.physics)
            else:
                bias_all[sl] = d.values("bias")
                m.actuator_gainprm[ids] = 0.0
                if "ki" in d.fields:
                    ki_all[sl] = m.actuator_gainprm[ids, 0] = d.values("ki")
                    imax = d.values("imax")
                    fin = np.isfinite(imax)
                    m.actuator_actlimited[ids] = fin
                    m.actuator_actrange[ids[fin], 0] = -imax[fin]
                    m.actuator_actrange[ids[fin], 1] = imax[fin]
                m.actuator_biasprm[ids] = 0.0
                m.actuator_biasprm[ids, 0] = bias_all[sl]
                m.actuator_biasprm[ids, 1] = -kp
                m.actuator_biasprm[ids, 2] = -kd
            if lim is None:
                m.actuator_forcelimited[ids] = 0
            else:
                lim_all[sl] = lim
                fin = np.isfinite(lim)
                m.actuator_forcelimited[ids] = fin
                m.actuator_forcerange[ids[fin], 0] = -lim[fin]
                m.actuator_forcerange[ids[fin], 1] = lim[fin]
            if plan.delay is not None and plan.delay.fixed["max_delay"] > 0:
                lag = plan.delay.values("lag")
                m.actuator_delay[ids] = np.where(lag > 0, (lag - 0.5) * dt, 0.0)
                self._lag[sl] = lag.astype(np.int64)
        self._law = kp_all, kd_all, bias_all, ki_all, lim_all, r_all, vmax_all
        self._source = (None, None, 0)

    def reset(self) -> None:
        """After the env's reset: the next :meth:`write_commands` fills the delay history."""
        self._fresh = True

    # -- one control step ---------------------------------------------------------------------
    def write_commands(self, pos: np.ndarray, vel: np.ndarray, eff: np.ndarray) -> None:
        """``ctrl`` of the native actuators from the collection's targets ``(num_joints,)`` (collection
        order); the first call after a reset fills every delay history with this command (as our
        Delay holds the oldest command since the reset)."""
        u, c = self._u, self.cols
        u[:, 0], u[:, 1], u[:, 2] = pos[c], vel[c], eff[c]
        if self._fresh:
            self._fresh, self._step = False, 0
            m, d, dt = self.model, self.data, float(self.model.opt.timestep)
            for i in self.delayed:
                n = int(m.actuator_history[i, 0])
                times = d.time - dt * np.arange(n, 0, -1, dtype=np.float64)
                values = np.ascontiguousarray(np.tile(u[i - self.first_actuator], (n, 1)))
                mujoco.mj_initCtrlHistory(m, d, i, times.reshape(-1, 1), values)
        if self.delayed:
            self._commands[self._step % len(self._commands)] = u

    def telemetry(self, out_computed: np.ndarray, out_applied: np.ndarray, out_qd: np.ndarray, substeps: int) -> None:
        """The last substep's efforts into ``(num_joints,)`` collection-order buffers: applied =
        ``actuator_force``; computed = the controller's commanded torque ``kp (u_pos - l) + kd (u_vel
        - v) + u_ff + const [+ ki x_I]`` from the controls the engine read at the last substep (a
        delayed group: the command of substep ``k - L`` since the reset, ``substeps`` per control
        step, kept from the last control steps' commands), ``actuator_length`` /
        ``actuator_velocity`` and ``act``; ``out_qd``: the velocity the actuators read
        (``actuator_velocity``, gear 1). Where no limit acted (the force range did not clamp, the
        motor's voltage stayed within ``Vmax``), computed is the engine's force itself, so
        ``saturated`` (computed != applied) means what it means on the explicit path."""
        c, force, vel = self._c, self._force, self._velocity
        out_applied[c] = force
        out_qd[c] = vel
        kp, kd, bias, ki, lim, r, vmax = self._law
        t, e, acted = self._tmp
        step = self._step
        self._step = step + 1
        # a limit can only have acted where the force sits on the force range's bound (it clamps
        # to it exactly) or, for a motor, where R f + v is at +-Vmax (the voltage clip; screened
        # with a 1e-9 margin, then decided on the commanded torque below)
        np.abs(force, out=e)
        np.greater_equal(e, lim, out=acted)
        if self._any_motor:
            acted |= np.abs(r * force + vel) >= vmax * (1.0 - 1e-9)
        if not acted.any() and not self._any_physics:  # no limit acted: the commanded torque is the engine's force
            out_computed[c] = force
            return
        u = self._u
        if self.delayed:
            # the last substep is (step + 1) S - 1 since the reset; its command came from control step
            # max(0, (step + 1) S - 1 - L) // S = step + (S - 1 - L) // S once step S >= L
            if self._source[0] != substeps:
                self._source = (substeps, (substeps - 1 - self._lag) // substeps, int(self._lag.max(initial=0)))
            _, offset, longest = self._source
            if step * substeps >= longest:
                source = offset + step
            else:
                source = np.maximum((step + 1) * substeps - 1 - self._lag, 0) // substeps
            u = self._commands[source % len(self._commands), self._rows]
        np.subtract(u[:, 0], self._length, out=t)
        t *= kp
        np.subtract(u[:, 1], vel, out=e)
        e *= kd
        t += e
        t += u[:, 2]
        t += bias
        if self._any_pid:
            t += ki * self.data.act[self._actadr]
        np.greater_equal(np.abs(force), lim, out=acted)  # the force range clamps to its bound exactly
        if self._any_motor:  # the controller's voltage reached +-Vmax
            acted |= np.abs(r * t + vel) > vmax
        # where no limit acted the engine's force is the commanded torque (to round-off in the
        # engine's order of operations): report it, so that saturated means a limit acted
        if self._any_physics:  # motor physics: the force is not the command even within the limits
            acted |= self._physics
        np.copyto(t, force, where=~acted)
        out_computed[c] = t

    def motor_telemetry(self) -> dict[str, np.ndarray]:
        """The :data:`MOTOR_TELEMETRY` keys, ``(num_joints,)`` in collection order (NaN where a key does
        not apply), after :meth:`telemetry`; ``{}`` when no native group has the thermal model or
        inductance. The temperature is the state after the step (ambient + MuJoCo's rise ``act``);
        the current is the engine's current state (inductance: the value the last substep's force
        used, ``actearly``) or the algebraic ``(V - qd) / R_T`` of the last substep, with ``V =
        clip(R tau* + qd, +-Vmax)`` from the commanded torque and ``R_T`` at the winding temperature
        the substep began with (``act - h act_dot``)."""
        th, ind = self._thermal, self._inductive
        if not (th.any() or ind.any()):
            return {}
        m, d, ids = self.model, self.data, self.ids
        out = {}
        if th.any():
            temp = np.full(self.num_joints, np.nan)
            temp[self.cols[th]] = m.actuator_dynprm[ids[th], 4] + d.act[self._temp_adr]
            out["motor_temperature"] = temp
        cur = np.full(self.num_joints, np.nan)
        cur[self.cols[ind]] = d.act[self._cur_adr]
        alg = th & ~ind
        if alg.any():
            g, rise = m.actuator_gainprm[ids[alg]], d.act[self._temp_adr[alg[th]]]
            rise = rise - float(m.opt.timestep) * d.act_dot[self._temp_adr[alg[th]]]
            r_t = g[:, 0] * (1.0 + g[:, 2] * (rise + m.actuator_dynprm[ids[alg], 4] - g[:, 3]))
            qd = self._velocity[alg]
            v = np.clip(g[:, 0] * self._tmp[0][alg] + qd, -g[:, 7], g[:, 7])
            cur[self.cols[alg]] = (v - qd) / r_t
        out["motor_current"] = cur
        return out
