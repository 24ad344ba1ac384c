"""Execution strategies: how the substep engine runs one control step, chosen once when the engine is
built (:func:`strategy_for`), so that a consumer calls ``engine.advance(...)`` whatever runs (an env that
drives the substeps itself, the wrapped Gymnasium env, installs the engine once instead: ``install``).

============ ===================================================================================
``Explicit`` every substep in Python: state -> ``collection.compute`` (Delay -> Drive -> Clamps) ->
             efforts -> participants -> power row; the physics one substep per call, with the derived
             pass where it is read (every substep for Stable-PD groups and rotor writers that read body
             orientations; the last one for the observation)
``Captured`` state and physics on a device: as ``Explicit``, the actuator part replayed from a CUDA
             graph where the collection allows it (``capture="auto"`` on CUDA); the derived pass only
             where it is read at every substep
``Native``   every joint group compiled into the engine's own actuators (docs/native.md): targets into
             its controls, all substeps in one engine call, the last substep's efforts read back
``Mixed``    some groups native, the others explicit beside them: one physics substep per call
============ ===================================================================================

The physics a strategy advances offers ``step(nstep, derived)`` and (native strategies)
``refresh_derived()``: every batched backend, :class:`~actuator_gym.runtime.device.TorchJointState`,
:class:`~actuator_gym.backends.native_side.OneWorld` (one ``MjData``).
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable

import numpy as np
import torch

from .device import TorchJointState, graph_capturable

__all__ = ["Execution", "Explicit", "Captured", "Native", "Mixed", "strategy_for", "substep_closure"]


class Execution:
    """What every strategy offers; the defaults are a strategy's without a native side."""

    name = ""
    captured = False  # whether the actuator part replays a CUDA graph (Captured)
    note = ""  # why it does not
    defer = False  # one consumer reads snapshot(): a native step may leave its telemetry to be derived then
    motor_telemetry: dict = {}  # the native motor physics' keys of the last control step

    def __init__(self, engine: Any):
        self.engine = engine
        self.substeps = 0  # run since the control step began

    def begin(self) -> None:
        self.substeps = 0

    def resize(self) -> None:  # the engine's substep count (and telemetry rows) changed
        pass

    def settle(self) -> None:  # the step's efforts into the engine's buffers, where it left them to be read
        pass

    def snapshot(self, cols: Any, extra_keys: Any, extra: Any) -> Any:
        e = self.engine
        return e.telemetry_rows.snapshot(e.computed, e.applied, cols, extra_keys, extra)

    def reset_envs(self, env_ids: Any = None) -> None:
        pass

    def parameters_changed(self, env_ids: Any = None) -> None:
        pass

    def uninstall(self, sim: Any) -> None:
        sim.set_substep_hook(None)


def substep_closure(engine: Any, counter: Any, parts: Any, actuators: Any = None, record: bool = True):
    """One substep as one closure over ``engine``'s buffers (the hot path; the state's and the
    collection's methods are looked up per call, so a spy or patch on them still sees them): the
    actuator part -- state -> every joint group's Delay -> Drive -> Clamps -> efforts into the state,
    or ``actuators()`` where given (a replayed CUDA graph returning the velocity it read) -- then the
    participants ``parts``, then (``record``) the substep's power row and ``counter.substeps``.
    Returns the velocity the actuators read."""
    st, coll, dt, effort, mass, applied, tel = (engine.state, engine.collection, engine.dt, engine.effort,
                                                 engine.mass_ids, engine.applied, engine.telemetry_rows)
    rows = tel.rows
    mul = torch.mul if isinstance(rows, torch.Tensor) else np.multiply

    def substep(k: int) -> Any:
        if actuators is not None:
            qd = actuators()
        else:
            qd = st.joint_vel()
            if mass is None:
                coll.compute(st.joint_pos(), qd, dt)
            else:  # Stable-PD groups: M^-1 and bias of the current state, every substep
                inverse_mass, bias = st.mass_matrix_terms(mass)
                coll.compute(st.joint_pos(), qd, dt, inverse_mass=inverse_mass, bias_force=bias)
            st.set_joint_effort(effort)
        for p in parts:
            p(k)
        if record:
            mul(applied, qd, out=rows[k])
            tel.substeps += 1
            counter.substeps += 1
        return qd

    return substep


class Explicit(Execution):
    """Every substep in Python (module doc). :attr:`substep` is the per-substep work: one closure
    (:func:`substep_closure`), rebuilt when the substep count changes."""

    name = "explicit"
    derive_last = True
    replay: Callable[[], Any] | None = None  # the actuator part as a replayed CUDA graph (Captured)

    def __init__(self, engine: Any):
        super().__init__(engine)
        self.note = ("no joint groups (nothing to capture)" if engine.collection is None
                     else "no capture (CPU device or capture=False)")
        self.resize()

    def resize(self) -> None:
        e, counter = self.engine, self
        parts = [p.substep for p in e.participants]
        if e.collection is not None:
            self.substep = substep_closure(e, self, parts, self.replay)
            return

        def substep(k: int) -> None:  # participants only (rotor groups)
            for p in parts:
                p(k)
            counter.substeps += 1

        self.substep = substep

    def advance(self, physics: Any, after: Callable[[int], None] | None = None, substeps: Any = None) -> None:
        n, substep, step, every = self.engine.num_substeps, self.substep, physics.step, self.engine.derive_every
        last = n - 1 if self.derive_last else -1
        for k in range(n):
            substep(k)
            step(1, every or k == last)
            if after is not None:
                after(k)

    def install(self, sim: Any, ctrl: np.ndarray) -> None:
        """An env that runs the substeps itself (a wrapped Gymnasium env) calls :attr:`substep`
        before each; the env's own controls ``ctrl`` are zeroed at the first (its actuators are
        replaced; participants write theirs)."""
        def hook(k: int) -> None:
            if k == 0:
                ctrl.fill(0.0)
            self.substep(k)

        sim.set_substep_hook(hook)


class Captured(Explicit):
    """:class:`Explicit` on a device (module doc): with ``capture="auto"`` and the collection on CUDA,
    the first substep runs eagerly and records the actuator part as a CUDA graph, replayed from
    then on; where that is not possible, :attr:`note` says why and every substep runs eagerly."""

    name = "captured"
    derive_last = False

    def __init__(self, engine: Any, capture: Any):
        super().__init__(engine)
        coll = engine.collection
        if capture is not False and coll is not None and coll.device.type == "cuda":
            self.note = ""
            self.replay = self.first
            self.resize()

    def first(self) -> Any:
        """The eager warm-up substep's actuator part, then the same recorded as a CUDA graph (or why not)."""
        e = self.engine
        actuators = substep_closure(e, None, (), record=False)
        qd = actuators(0)
        self.replay = None
        ok, why = graph_capturable(e.collection)
        if not ok or not isinstance(e.state, TorchJointState):
            self.note = why or "the state is not on a device"
        else:
            try:
                torch.cuda.synchronize(e.collection.device)
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    actuators(0)
                qd_buffer = e.state.qd  # the buffer the captured graph fills

                def replay() -> Any:
                    graph.replay()
                    return qd_buffer

                self.replay, self.captured = replay, True
            except Exception as exc:  # eager from now on; say why
                self.note = f"actuator capture failed: {exc}"
        self.resize()
        return qd


class Native(Execution):
    """Every joint group compiled into the physics engine's own actuators (``side``: the
    :class:`~actuator_gym.backends.native_side.NativeSide`). No Python runs per substep: ``power`` is exact
    (the last substep's ``actuator_force * actuator_velocity``), ``mean_power`` and ``energy`` hold it
    over the control step (``energy = |power| * S * physics_dt``)."""

    name = "native"

    def __init__(self, engine: Any, side: Any):
        super().__init__(engine)
        if engine.participants or not isinstance(engine.applied, np.ndarray):
            raise ValueError("SubstepEngine: native groups run on numpy state without participants")
        self.side, self.groups = side, side.actuators
        tc = engine.collection.target_command
        side.actuators.bind_commands(*(x.numpy() for x in (tc.position, tc.velocity, tc.effort)))
        self.qd = np.zeros(engine.applied.shape)  # the velocity the actuators read
        self.deferred = 0  # substeps of a control step left to be read on demand (0: none)
        engine.collection.skip_groups([])

    @property
    def motor_telemetry(self) -> dict:
        return self.side.motor_telemetry

    def begin(self) -> None:
        self.substeps = self.deferred = 0

    def substep_count(self, substeps: Any) -> int:
        """The engine's substeps; ``substeps`` (a wrapped env's ``n_frames``) must equal them."""
        n = self.engine.num_substeps
        if substeps is not None and substeps != n:
            raise _frames_changed(substeps, n)
        return n

    def advance(self, physics: Any, after: Any = None, substeps: Any = None) -> None:
        """Targets into the engine's controls, all substeps in one ``physics.step`` call, the last
        substep's efforts back (or, where :attr:`defer` and the groups allow it, left to be derived
        when read), the motor telemetry, then the derived fields."""
        n = self.engine.num_substeps  # (substep_count's check, inline: the wrapper's every step)
        if substeps is not None and substeps != n:
            raise _frames_changed(substeps, n)
        self.groups.write_commands()
        physics.step(n, False)
        self.substeps = n
        if self.defer and self.groups.defer_telemetry(n):
            self.deferred = n  # read on demand: snapshot() / settle() (nothing computed now)
        else:
            self.read(n)
        self.finish(physics)

    def finish(self, physics: Any) -> None:
        if self.side.has_motor_telemetry:
            self.side.after_step()  # before the derived pass rewrites the outputs (act_dot)
        physics.refresh_derived()

    def read(self, n: int, deferred: bool = False) -> None:
        """The step's efforts (``n`` substeps) into the engine's buffers, the power row held."""
        e = self.engine
        self.groups.telemetry(e.computed, e.applied, self.qd, n, deferred=deferred)
        e.telemetry_rows.record_held(e.applied, self.qd, n)

    def settle(self) -> None:
        if self.deferred:
            n, self.deferred = self.deferred, 0
            self.read(n, deferred=True)

    def snapshot(self, cols: Any, extra_keys: Any, extra: Any) -> Any:
        if self.deferred:
            return self.groups.snapshot(cols, extra_keys, extra, self.deferred, self.engine.dt)
        return super().snapshot(cols, extra_keys, extra)

    def reset_envs(self, env_ids: Any = None) -> None:
        self.side.reset(env_ids)

    def parameters_changed(self, env_ids: Any = None) -> None:
        self.side.parameters_changed(env_ids)

    def install(self, sim: Any, ctrl: np.ndarray) -> None:
        """The wrapped env runs the native model; its simulation step is this control step."""
        self.side.install(sim)
        sim.set_step_hook(partial(self.advance, self.side.world, None))  # advance(world, None, n_frames)

    def uninstall(self, sim: Any) -> None:
        sim.set_substep_hook(None)
        self.side.uninstall(sim)


class Mixed(Native):
    """Some groups native, the others explicit (``execution="auto"`` per group): the explicit groups'
    efforts at every substep (zero on the native joints, which the engine's actuators carry), one
    physics substep per call; the native columns' power row read from the engine after each substep
    (so ``mean_power`` / ``energy`` are the explicit sums)."""

    name = "mixed"

    def __init__(self, engine: Any, side: Any):
        super().__init__(engine, side)
        self.cols = np.asarray(self.groups.cols, dtype=np.intp)
        engine.collection.skip_groups(list(self.groups.groups))
        self.explicit = Explicit(engine)

    def resize(self) -> None:
        self.explicit.resize()

    def advance(self, physics: Any, after: Any = None, substeps: Any = None) -> None:
        n, e, nc = self.substep_count(substeps), self.engine, self.cols
        self.groups.write_commands()
        e.applied[:, nc] = 0.0  # no generalized force for the native joints (the engine's actuators)
        e.computed[:, nc] = 0.0
        rows, substep, power = e.telemetry_rows.rows, self.explicit.substep, self.groups.substep_power
        for k in range(n):
            substep(k)
            physics.step(1, False)
            rows[k][:, nc] = power()
        self.substeps = n
        self.groups.telemetry(e.computed, e.applied, self.qd, n)
        self.finish(physics)


def _frames_changed(substeps: Any, n: int) -> RuntimeError:
    return RuntimeError(f"SubstepEngine: the env stepped {substeps} substeps (frames), expected {n} "
                        "(frame_skip changed during the step?)")


def strategy_for(engine: Any, capture: Any, native: Any) -> Execution:
    """The strategy of ``engine``: :class:`Native` / :class:`Mixed` with an active native side, else
    :class:`Captured` when ``capture`` is given (``False`` or ``"auto"``: the physics is on a device),
    else :class:`Explicit`."""
    if native is not None and native.active:
        compiled = set(native.actuators.groups)
        return Mixed(engine, native) if any(g not in compiled for g in engine.collection) else Native(engine, native)
    return Explicit(engine) if capture is None else Captured(engine, capture)
