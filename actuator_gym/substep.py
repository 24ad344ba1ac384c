"""The substep engine: the one place that runs the actuators at every physics substep.

Every consumer -- :class:`~actuator_gym.wrappers.ActuatorWrapper` on a Gymnasium env, the batched
tasks on CPU, the device path on the Warp backends, rotor groups -- runs the same order of
operations for each of the ``S`` physics substeps of a control step::

    q, qd  = state.joint_pos(), state.joint_vel()            # the state the actuators see
    [M^-1, bias = state.mass_matrix_terms(ids)]              # only for effort_mode="implicit" groups
    collection.compute(q, qd, dt, ...)                        # every joint group: Delay -> Drive -> Clamps
    state.set_joint_effort(collection.output_command.effort)  # generalized forces on the joints' DOFs
    [participants: rotor groups (thrust dynamics -> writer), engine servos write their commands]
    telemetry.record(k, applied, qd)
    advance the physics by one substep                        # the consumer's part

Consumers differ only in where the state lives (``state``: a backend, or an adapter) and how the
physics advances (``advance``: ``backend.step``, or the wrapped env's own ``mj_step`` loop, which
calls :meth:`SubstepEngine.substep` as its per-substep hook).

Native execution (``execution="native"``, docs/native.md) is the second way the engine runs the
groups: the groups were compiled into the engine's own actuators (:class:`NativeGroups`, e.g.
:class:`~actuator_gym.backends.mujoco_native.NativeActuators`), so a control step is
:meth:`SubstepEngine.advance_native`: write the targets into the engine's controls once, advance
all ``S`` substeps in one engine call, read the last substep's efforts back. No Python runs per
substep, so the power of the substeps before the last is not seen: ``power`` is exact (the last
substep's ``actuator_force * actuator_velocity``), ``mean_power`` and ``energy`` hold it over the
control step (``energy = |power| * S * physics_dt``, the rectangle rule on the last substep).
A mix (``execution="auto"`` per group: :attr:`SubstepEngine.mixed`) runs the explicit groups
through the same per-substep :meth:`SubstepEngine.run` beside the compiled ones (the collection
skips the native groups; their power is read from the engine after every substep).

Telemetry (:data:`TELEMETRY`) is defined here once; the wrapper, the single task env and the
vector env report the same keys with the same meaning: the instantaneous keys are those of the
**last** substep of the control step, ``energy`` and ``mean_power`` cover **all** its substeps.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, Sequence, runtime_checkable

import numpy as np
import torch

from .lazy_telemetry import LazyTelemetry, StepSnapshot, power_terms

__all__ = ["JointState", "SubstepParticipant", "NativeGroups", "TorchJointState", "StepTelemetry", "StepSnapshot",
           "LazyTelemetry", "SubstepEngine", "TELEMETRY", "graph_capturable"]

TELEMETRY: dict[str, str] = {
    "computed_effort": "drive output before the clamps [N·m or N], last substep",
    "applied_effort": "effort after the clamps, what the joint received [N·m or N], last substep",
    "saturated": "applied_effort != computed_effort (a clamp acted), last substep",
    "power": "applied_effort * joint_vel [W], last substep (signed: negative = braking); joint_vel is "
             "the velocity the actuator read at that substep",
    "mean_power": "mean of applied_effort * joint_vel over the control step's substeps [W] (signed)",
    "energy": "mechanical work over the control step, sum over substeps of |applied_effort * joint_vel| "
              "* physics_dt [J] (regenerative work counted as spent)",
    "joint_pos": "joint position after the control step [rad or m] (what the observation sees)",
    "joint_vel": "joint velocity after the control step [rad/s or m/s]",
}
"""Every ``info["actuator"]`` key of the joint groups and its meaning, ``(num_envs, num_joints)``
(the single env and the wrapper: ``(num_joints,)``)."""


@runtime_checkable
class JointState(Protocol):
    """Where the joint state lives: what the engine reads and writes at each substep.

    Every physics backend satisfies it (:mod:`actuator_gym.backends.protocols`); the device path
    uses :class:`TorchJointState` over a device backend's torch views.
    """

    def joint_pos(self) -> Any:
        """``(num_envs, num_joints)`` [rad or m], valid until the physics advances."""

    def joint_vel(self) -> Any:
        """``(num_envs, num_joints)`` [rad/s or m/s], valid until the physics advances."""

    def set_joint_effort(self, effort: Any) -> None:
        """Generalized force [N·m or N] on each joint's DOF for the coming substep(s)."""

    def mass_matrix_terms(self, joint_ids: Sequence[int]) -> tuple[Any, Any]:
        """``(inverse_mass (N, J, J), bias_force (N, J))`` of the current state (Stable-PD groups)."""


class SubstepParticipant(Protocol):
    """Something besides the joint groups that acts at every substep (rotor groups, engine
    servos): ``substep(k)`` is called after the joint groups computed and wrote their efforts,
    before the physics advances.

    Optional members, used when present: ``begin()`` (the engine's :meth:`SubstepEngine.begin`
    calls it: a control step starts), ``telemetry() -> {key: (num_envs, ...) array}`` (merged into
    :meth:`SubstepEngine.telemetry`: the participant's ``info["actuator"]`` keys, e.g.
    :data:`actuator_gym.rotors.ROTOR_TELEMETRY`) and ``resize(num_substeps)``.
    """

    def substep(self, k: int) -> None: ...


class NativeGroups(Protocol):
    """Joint groups compiled into the physics engine's own actuators (native execution)."""

    def write_commands(self, pos: Any, vel: Any, eff: Any) -> None:
        """The control step's targets ``(num_envs, num_joints)`` (collection order) into the engine's controls."""

    groups: Sequence[str]
    """The native groups (the others run explicitly: a mix)."""
    cols: Any
    """Their collection columns."""

    def telemetry(self, computed: Any, applied: Any, qd: Any, substeps: int, deferred: bool = False) -> None:
        """The last substep's commanded and applied efforts and the velocity the actuators read,
        written into ``(num_envs, num_joints)`` collection-order buffers (``substeps``: in this control
        step; ``deferred``: of a step :meth:`defer_telemetry` counted)."""

    def defer_telemetry(self, substeps: int) -> bool:
        """Whether the step just run may be read later through :meth:`snapshot` (then it is counted)."""

    def snapshot(self, cols: Any, extra_keys: Any, extra: Any, substeps: int, physics_dt: float) -> Any:
        """One env's deferred step as a ``StepSnapshot`` (the values :meth:`telemetry` gives)."""

    def substep_power(self) -> Any:
        """``(num_envs, len(cols))``: the power [W] of the substep that just ran (a mix)."""


class TorchJointState:
    """:class:`JointState` over a device backend's torch views (``torch_joint_pos`` /
    ``torch_joint_vel`` / ``torch_set_joint_effort``), copied into fixed buffers so that the
    actuator part can be replayed from a CUDA graph."""

    def __init__(self, backend: Any, like: torch.Tensor):
        self.backend = backend
        self.q = torch.zeros_like(like)
        """The position buffer the actuators read [rad or m] (fixed storage, graph-replay safe)."""
        self.qd = torch.zeros_like(like)
        """The velocity buffer the actuators read [rad/s or m/s]."""

    def joint_pos(self) -> torch.Tensor:
        self.q.copy_(self.backend.torch_joint_pos())
        return self.q

    def joint_vel(self) -> torch.Tensor:
        self.qd.copy_(self.backend.torch_joint_vel())
        return self.qd

    def set_joint_effort(self, effort: torch.Tensor) -> None:
        self.backend.torch_set_joint_effort(effort)

    def mass_matrix_terms(self, joint_ids):
        return self.backend.mass_matrix_terms(joint_ids)


def graph_capturable(collection) -> tuple[bool, str]:
    """Whether ``collection.compute`` can be recorded once and replayed from a CUDA graph, and why not.

    Each part says so itself (``Part.graph_safe``: the PD / PID drives and the max-effort,
    DC-motor and position-based clamps are pure in-place tensor math; a ``Delay`` is on the torch
    path, where its write index and counters live on the device; neural drives and user parts are
    not). Not capturable either: ``check_finite=True`` (reads values on the host), engine-servo
    groups (``ImplicitActuatorCfg``) and Stable-PD groups (``effort_mode="implicit"``: they need
    the mass matrix from the engine).
    """
    for name, model in collection.items():
        if model.check_finite:
            return False, f"group {name!r}: check_finite=True synchronises with the host"
        if model.engine_servo or model.stable_pd:
            return False, f"group {name!r}: implicit (solver-side or Stable-PD) effort"
        for part in model.parts:
            if not part.graph_safe:
                return False, f"group {name!r}: {part.graph_unsafe_reason}"
    return True, ""


class _SnapshotPlan:
    """What :meth:`StepTelemetry.snapshot` plans once for its inputs (the arrays and ``cols`` /
    ``extra`` objects, compared by identity; the substep count by value): the ``rows`` to concatenate
    (None: gathered at every step) and the ``index`` of the one ``take`` that picks the ``J`` joints
    and the extra values out of them."""

    __slots__ = ("cols", "extra", "computed", "applied", "held", "substeps", "rows", "index", "J")

    def __init__(self, cols, extra, computed, applied, held, substeps: int, rows, index: np.ndarray, J: int):
        self.cols, self.extra, self.computed, self.applied, self.held = cols, extra, computed, applied, held
        self.substeps, self.rows, self.index, self.J = substeps, rows, index, J


class StepTelemetry:
    """The accounting of one control step over ``(num_envs, num_joints)`` joints.

    ``record(k, applied, qd)`` keeps substep ``k``'s ``applied * qd`` (one multiply into a
    preallocated row, numpy or torch alike); :meth:`finish` reduces the rows once per control
    step into the :data:`TELEMETRY` arrays (``power``, ``mean_power``, ``energy``) and takes the
    last substep's efforts. Rows are float64 wherever the efforts are float32.
    """

    def __init__(self, like: Any, num_substeps: int, physics_dt: float):
        self.physics_dt = float(physics_dt)
        shape = (int(num_substeps), *tuple(like.shape))
        if isinstance(like, torch.Tensor):
            self.rows = torch.zeros(shape, dtype=torch.float64, device=like.device)
        else:
            self.rows = np.zeros(shape)
        self._row = [self.rows[k] for k in range(shape[0])]
        self.substeps = 0
        self.held: tuple[Any, Any] | None = None
        self._snap: _SnapshotPlan | None = None

    def begin(self) -> None:
        self.substeps = 0
        self.held = None

    def record_held(self, applied: np.ndarray, qd: np.ndarray, substeps: int) -> None:
        """Native execution: the last substep's power row ``applied * qd`` stands for all
        ``substeps`` (mean = that row, energy = ``|row| * substeps * physics_dt``). ``applied`` and
        ``qd`` are kept (not copied) and multiplied when the telemetry is read: they must hold the
        last substep's values until then."""
        self.substeps, self.held = substeps, (applied, qd)

    def record(self, k: int, applied: Any, qd: Any) -> None:
        """Substep ``k``'s power row ``applied * qd`` (``qd``: the velocity the actuators read)."""
        row = self._row[k]
        if isinstance(row, torch.Tensor):
            torch.mul(applied, qd, out=row)
        else:
            np.multiply(applied, qd, out=row)
        self.substeps += 1

    def record_power(self, k: int, power: Any) -> None:
        """Substep ``k``'s power row given directly [W] (rotor groups: their power model's output)."""
        self._row[k][...] = power
        self.substeps += 1

    def reduce(self, cols: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(power, mean_power, energy)`` as fresh host arrays for the substeps recorded since
        :meth:`begin`: the last row [W], the mean row [W] and ``sum |row| * physics_dt`` [J]
        (zeros before the first substep); over ``cols = (env, ids)`` only when given."""
        s = self.substeps
        rows = self.rows if s == len(self.rows) else self.rows[:s]
        if isinstance(rows, torch.Tensor):  # reduced on the device: three arrays cross to the host
            if s:
                power, mean, energy = rows[s - 1], rows.mean(dim=0), rows.abs().sum(dim=0) * self.physics_dt
            else:
                power = mean = energy = torch.zeros_like(self.rows[0])
            return tuple(_host(x, cols) for x in (power, mean, energy))
        # numpy: gather the selection first (one take), then reduce the small fresh array
        if self.held and s:  # one row held over the control step (native execution)
            applied, qd = self.held
            r = (applied * qd if cols is None else applied[cols[0]][cols[1]] * qd[cols[0]][cols[1]])[None]
        elif s:
            r = rows.copy() if cols is None else rows[:, cols[0]].take(cols[1], axis=1)
        else:
            r = _host(np.zeros(rows.shape[1:]), cols)[None]
        power, mean, energy = power_terms(r, s, self.physics_dt)
        return (power.copy() if len(r) > 1 else power), mean, energy  # (a view of several rows: copied)

    def snapshot(self, computed: np.ndarray, applied: np.ndarray, cols: tuple[int, Any],
                 extra_keys: tuple[str, ...] = (), extra: Sequence[tuple[np.ndarray, Any]] = ()) -> StepSnapshot:
        """One env's step on numpy, ``cols = (env, joint_ids)`` (ids: an index array or a slice), as
        a :class:`StepSnapshot`: the raw rows (commanded and applied efforts; the held velocity or
        the substeps' power rows) and each ``extra`` ``(array, indices)`` (the consumer's state after
        the step, e.g. ``(data.qpos, qpos addresses)``), gathered into one fresh array, nothing
        reduced yet. The rows and the gather index are planned once for the same arrays, ``cols``
        and ``extra`` objects and substep count (then a step is one concatenation and one take)."""
        s = self.substeps
        held = self.held[1] if s and self.held else None
        p = self._snap
        if (p is None or p.cols is not cols or p.extra is not extra or p.computed is not computed
                or p.applied is not applied or p.held is not held or p.substeps != s):
            p = self._snap = _SnapshotPlan(cols, extra, computed, applied, held, s,
                                           *self._snapshot_plan(computed, applied, cols, extra, s, held))
        rows = p.rows
        if rows is None:  # a row is not a view of a fixed buffer (several envs' substep rows): gathered now
            rows = self._snapshot_rows(computed, applied, cols[0], s, held) + [vec for vec, _ in extra]
        return StepSnapshot(np.concatenate(rows).take(p.index), p.J, s, self.physics_dt, held is not None, extra_keys)

    def _snapshot_rows(self, computed: np.ndarray, applied: np.ndarray, env: int, s: int, held: Any) -> list:
        rows = [computed[env], applied[env]]
        if held is not None:
            rows.append(held[env])
        elif s:
            rows.append(self.rows[:s, env].reshape(-1))  # (a view for one env, a copy for several)
        return rows

    def _snapshot_plan(self, computed, applied, cols, extra, s: int, held: Any) -> tuple:
        """``(rows or None, index, J)``: the rows to concatenate (None: not all fixed views) and the
        take index that picks the joints ``cols[1]`` of each and the ``extra`` indices."""
        env, ids = cols
        width = computed.shape[-1]
        ids = np.arange(width)[ids]
        rows = self._snapshot_rows(computed, applied, env, s, held)
        k = 3 if held is not None else 2 + s  # rows of collection width
        index = [r * width + ids for r in range(k)]
        off = k * width
        for vec, at in extra:
            index.append(off + np.arange(len(vec))[at])
            off += len(vec)
        # every row is a view of a buffer that stays (the efforts, the held velocity, the caller's
        # arrays), except several envs' substep rows, which reshape copies: those are gathered per step
        fixed = held is not None or not s or np.shares_memory(rows[2], self.rows)
        rows += [vec for vec, _ in extra]
        return rows if fixed else None, np.concatenate(index), len(ids)

    def finish(self, computed: Any, applied: Any, cols: Any = None) -> dict[str, np.ndarray]:
        """The effort keys of :data:`TELEMETRY` as fresh host arrays for the substeps recorded since
        :meth:`begin` (zero before the first substep): ``(num_envs, num_joints)``, or one env's
        joints ``cols = (env, joint_ids)`` (``(len(joint_ids),)`` arrays). The consumer adds ``joint_pos`` /
        ``joint_vel`` from its state after the step."""
        if cols is not None and type(applied) is np.ndarray:  # one env's columns on numpy (the wrapper)
            c, a = computed[cols[0]][cols[1]], applied[cols[0]][cols[1]]  # (a gather: as _host, faster)
        else:
            c, a = _host(computed, cols), _host(applied, cols)
        power, mean, energy = self.reduce(cols)
        return {"computed_effort": c, "applied_effort": a, "saturated": c != a,
                "power": power, "mean_power": mean, "energy": energy}


def _host(x: Any, cols: Any = None) -> np.ndarray:
    """A fresh host numpy copy of ``x`` (numpy or torch), or of its selection ``cols = (env, ids)``."""
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu().numpy()
    return np.array(x) if cols is None else x[cols[0]].take(cols[1])


class SubstepEngine:
    """Runs an :class:`~actuator_gym.ActuatorCollection` (and its participants) at every substep.

    Args:
        collection: the joint groups (``target_command`` already written for this control step), or
            None for a model actuated by participants only (rotor groups: no joint telemetry).
        state: a :class:`JointState` (a backend, or an adapter over one); unused without joint groups.
        physics_dt: the substep [s].
        num_substeps: substeps per control step (the telemetry's row count; :meth:`resize` changes it).
        participants: rotor groups, engine servos: :class:`SubstepParticipant` called after the
            joint groups at each substep.
        capture: ``"auto"`` replays the actuator part from a CUDA graph when the collection allows
            it (``backends/_warp.py`` ``graph_capturable``) and the state lives on a CUDA device;
            ``False`` never captures (CPU always runs eagerly).
        native: the groups compiled into the engine's own actuators (:class:`NativeGroups`); then a
            control step is :meth:`advance_native` (numpy state, no participants; one world for the
            wrapper, every world of a batch for the tasks).

    ``substep(k)`` is the per-substep work (the wrapper installs it as the env's substep hook);
    ``run(advance)`` is the whole control step for consumers that advance the physics themselves;
    ``begin()`` / ``telemetry()`` bracket a control step.
    """

    def __init__(
        self,
        collection: Any,
        state: JointState,
        physics_dt: float,
        num_substeps: int,
        *,
        participants: Sequence[SubstepParticipant] = (),
        capture: Any = False,
        native: NativeGroups | None = None,
    ):
        self.collection, self.state = collection, state
        self.dt = float(physics_dt)
        self.participants = list(participants)
        self._begins = [p.begin for p in self.participants if callable(getattr(p, "begin", None))]
        self._tels = [p.telemetry for p in self.participants if callable(getattr(p, "telemetry", None))]
        self._substeps = 0
        self._native_deferred = 0  # substeps of a deferred native control step (0: none)
        self.num_substeps = int(num_substeps)
        self.capture_physics = False
        """Whether the consumer replays its physics substep from a graph (device backends)."""
        self._graph = None
        self.captured = False
        if collection is None:  # participants only
            self.mass_ids, self.telemetry_rows, self._capture = None, None, False
            self.note = "no joint groups (nothing to capture)"
            return
        self.mass_ids = np.arange(collection.num_joints) if collection.needs_mass_matrix else None
        self._applied, self._computed = collection.applied_effort, collection.computed_effort
        self._effort = collection.output_command.effort
        if collection.ops.name == "numpy" and not isinstance(state, TorchJointState):  # zero-copy numpy views
            self._applied, self._computed = self._applied.numpy(), self._computed.numpy()
            self._effort = self._effort.numpy()
        self.telemetry_rows = StepTelemetry(self._applied, num_substeps, self.dt)
        self._capture = capture if capture is not False and collection.device.type == "cuda" else False
        self.note = "" if self._capture else "no capture (CPU device or capture=False)"
        self._plain = (not self.participants and self.mass_ids is None and not self._capture
                       and isinstance(self._applied, np.ndarray))
        if self._plain:  # the common CPU case: the same steps, without the branches (hot path)
            self.substep = self._plain_substep()
        self.native = native
        self.mixed = False
        self.defer_native_telemetry = False
        """Native groups, one consumer reading :meth:`snapshot`: leave the step's telemetry to be
        derived on demand where the groups allow it (``NativeGroups.defer_telemetry``); then the
        collection's effort buffers of the native groups are written only when :meth:`telemetry`
        reads the step (the wrapper's hot path, docs/native.md)."""
        if native is not None:
            if self.participants or not isinstance(self._applied, np.ndarray):
                raise ValueError("SubstepEngine: native groups run on numpy state without participants")
            tc = collection.target_command
            self._targets = tuple(x.numpy() for x in (tc.position, tc.velocity, tc.effort))
            self._qd_last = np.zeros(self._applied.shape)  # the velocity the actuators read
            explicit = [g for g in collection if g not in set(native.groups)]
            self.mixed = bool(explicit)
            """Some groups run explicitly beside the native ones (``execution="auto"``, docs/native.md)."""
            self._native_cols = np.asarray(native.cols, dtype=np.intp)
            collection.skip_groups(list(native.groups) if explicit else [])

    def advance_native(self, advance: Callable[[int], None], substeps: int | None = None) -> None:
        """The control step of native groups (module doc): targets into the engine's controls,
        ``advance(num_substeps)`` (all substeps in one engine call), the last substep's efforts
        back; the power row of the last substep stands for all of them. ``substeps``: the substeps
        the caller's env asked for (a wrapped env's ``n_frames``), a ``RuntimeError`` unless
        :attr:`num_substeps`.

        A mix (:attr:`mixed`: some groups explicit, the collection skips the native ones) runs the
        explicit groups through :meth:`run`, one ``advance(1)`` per substep: their efforts are
        written at every substep as on the explicit path, the native columns are zero there (the
        engine's actuators carry them); after each substep the native columns' power row is read
        from the engine (exact per substep, so ``mean_power`` / ``energy`` are the explicit sums)."""
        native, n = self.native, self.num_substeps
        if substeps is not None and substeps != n:
            raise RuntimeError(f"SubstepEngine: the env stepped {substeps} substeps (frames), expected {n} "
                               "(frame_skip changed during the step?)")
        native.write_commands(*self._targets)
        if self.mixed:
            nc = self._native_cols
            self._applied[:, nc] = 0.0  # no generalized force for the native joints (the engine's actuators)
            self._computed[:, nc] = 0.0
            self.run(lambda k: advance(1), after=self._native_power)
            native.telemetry(self._computed, self._applied, self._qd_last, n)
            return
        advance(n)
        self._substeps = n
        if self.defer_native_telemetry and native.defer_telemetry(n):
            self._native_deferred = n  # read on demand: snapshot() / telemetry() (nothing computed now)
            return
        self._read_native(n)

    def _read_native(self, n: int, deferred: bool = False) -> None:
        """The native step's efforts (``n`` substeps) into the collection's buffers, its power row held
        (``deferred``: a step left to be read on demand, read now by an eager reader)."""
        self.native.telemetry(self._computed, self._applied, self._qd_last, n, deferred=deferred)
        self.telemetry_rows.record_held(self._applied, self._qd_last, n)

    def _native_power(self, k: int) -> None:
        """Substep ``k`` of a mix just ran: the native columns of its power row from the engine."""
        self.telemetry_rows.rows[k][:, self._native_cols] = self.native.substep_power()

    def resize(self, num_substeps: int) -> None:
        """Change the substeps per control step (a wrapped env whose ``frame_skip`` changed)."""
        if int(num_substeps) != self.num_substeps:
            self.num_substeps = int(num_substeps)
            if self.collection is not None:
                self.telemetry_rows = StepTelemetry(self._applied, num_substeps, self.dt)
                if self._plain:
                    self.substep = self._plain_substep()
            for p in self.participants:
                if callable(getattr(p, "resize", None)):
                    p.resize(self.num_substeps)

    def _plain_substep(self) -> Callable[[int], None]:
        """:meth:`substep` for explicit joint groups on numpy state and no participants: one closure
        (the order of operations is exactly :meth:`_actuators` + ``record``)."""
        st, tel, dt, coll, engine = self.state, self.telemetry_rows, self.dt, self.collection, self
        effort, applied, rows, mul = self._effort, self._applied, tel.rows, np.multiply

        def substep(k: int) -> None:  # methods looked up per call: a spy or patch on the state still sees them
            qd = st.joint_vel()
            coll.compute(st.joint_pos(), qd, dt)
            st.set_joint_effort(effort)
            mul(applied, qd, out=rows[k])
            tel.substeps += 1
            engine._substeps += 1

        return substep

    # -- one substep ---------------------------------------------------------------------------
    def _actuators(self) -> Any:
        st, coll = self.state, self.collection
        q, qd = st.joint_pos(), st.joint_vel()
        if self.mass_ids is None:
            coll.compute(q, qd, self.dt)
        else:  # Stable-PD groups: M^-1 and bias of the current state, every substep
            inv_mass, bias = st.mass_matrix_terms(self.mass_ids)
            coll.compute(q, qd, self.dt, inverse_mass=inv_mass, bias_force=bias)
        st.set_joint_effort(self._effort)
        return qd

    def substep(self, k: int) -> None:
        """Substep ``k`` of the control step: state -> actuators -> efforts -> participants ->
        telemetry (the physics advances after it returns)."""
        if self.collection is None:
            qd = None
        elif self._graph is not None:
            self._graph.replay()
            qd = self.state.qd  # the buffer the captured graph filled (TorchJointState)
        else:
            qd = self._actuators()
            if self._capture and k == 0 and self._graph is None:
                self._try_capture()
        for p in self.participants:
            p.substep(k)
        if qd is not None:
            self.telemetry_rows.record(k, self._applied, qd)
        self._substeps += 1

    def _try_capture(self) -> None:
        """Record the actuator part as a CUDA graph (after the eager warm-up substep), or say why not."""
        ok, why = graph_capturable(self.collection)
        if not ok or not isinstance(self.state, TorchJointState):
            self._capture, self.note = False, why or "the state is not on a device"
            return
        try:
            torch.cuda.synchronize(self.collection.device)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                self._actuators()
            self._graph, self.captured = g, True
        except Exception as exc:  # eager from now on; say why
            self._capture, self.note = False, f"actuator capture failed: {exc}"

    # -- one control step ------------------------------------------------------------------------
    def begin(self) -> None:
        """Start a control step (the telemetry counts its substeps from here; participants' ``begin``)."""
        self._substeps = 0
        self._native_deferred = 0
        if self.telemetry_rows is not None:
            self.telemetry_rows.begin()
        for begin in self._begins:
            begin()

    def run(self, advance: Callable[[int], None], after: Callable[[int], None] | None = None) -> None:
        """The control step: :meth:`begin`, then for each substep ``k``: :meth:`substep`, ``advance(k)``
        (one physics substep), ``after(k)`` (e.g. the task's substep callbacks)."""
        self.begin()
        for k in range(self.num_substeps):
            self.substep(k)
            advance(k)
            if after is not None:
                after(k)

    @property
    def substeps_run(self) -> int:
        """Substeps recorded since :meth:`begin` (the wrapper checks its env called the hook each time)."""
        return self._substeps

    def snapshot(self, cols: tuple[int, Any], extra_keys: tuple[str, ...] = (),
                 extra: Sequence[np.ndarray] = ()) -> StepSnapshot:
        """The control step just run, one env's joints ``cols = (env, joint_ids)``, as a
        :class:`~actuator_gym.lazy_telemetry.StepSnapshot` (numpy joint groups; the raw rows copied
        once, the :data:`TELEMETRY` values derived from it on demand: the same numbers as
        :meth:`telemetry`); ``extra`` arrays appended under ``extra_keys``."""
        if self._native_deferred:
            return self.native.snapshot(cols, extra_keys, extra, self._native_deferred, self.dt)
        return self.telemetry_rows.snapshot(self._computed, self._applied, cols, extra_keys, extra)

    def telemetry(self, cols: Any = None) -> dict[str, np.ndarray]:
        """The :data:`TELEMETRY` effort keys of the control step just run (fresh host arrays, one
        env's joints ``cols = (env, joint_ids)`` only when given; the consumer adds ``joint_pos`` /
        ``joint_vel`` after the step; none without joint groups), plus the participants' keys
        (rotor groups: :data:`~actuator_gym.rotors.ROTOR_TELEMETRY`)."""
        if self._native_deferred:
            n, self._native_deferred = self._native_deferred, 0
            self._read_native(n, deferred=True)
        out = {} if self.collection is None else self.telemetry_rows.finish(self._computed, self._applied, cols)
        for tel in self._tels:
            out.update(tel())
        return out
