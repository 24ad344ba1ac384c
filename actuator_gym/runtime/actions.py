"""The action map: one :class:`ActionMap` turns actions into actuator targets for
:class:`~actuator_gym.wrappers.ActuatorWrapper` and for every batched task alike -- the same modes
(:data:`ACTION_MODES`), defaults, normalization, clipping and target writes.

``target = offset + scale * action`` per action element (the joint actions, channel by channel,
then one thrust command per rotor). Two ways to choose ``scale`` and ``offset``:

* **normalized** (the default): the action space is ``Box(-1, 1)`` and ``[-1, 1]`` maps onto each
  element's reachable target interval -- a **position** channel onto the joint's range (``offset``
  its middle, ``scale`` its half-width; an unlimited joint: ``offset`` its default pose, ``scale``
  :data:`UNLIMITED_HALF_SPAN`), a **velocity** channel onto ``+-actuator_velocity_limit``, an
  **effort** channel onto ``+-actuator_effort_limit``. Where that limit is infinite (or randomized:
  not one value in every env), the channel keeps its default scale (below; the space stays
  ``[-1, 1]``).
* **explicit** (the user's ``action_scale`` / ``action_offset`` / ``action_bounds``, or
  ``normalize_actions=False``): defaults per channel -- position :data:`DEFAULT_POSITION_SCALE`
  around the default pose, velocity :data:`DEFAULT_VELOCITY_SCALE` around 0, effort the model
  motor's peak ``gear * max|ctrlrange|`` (:func:`motor_peaks`; 1 where there is none) around 0.
  Bounds of a **position** channel are the joint's range in action units, ``(range - offset) /
  scale`` (an unlimited joint: ``offset +- UNLIMITED_HALF_SPAN[kind]``); velocity and effort
  channels ``[-1, 1]``; ``action_bounds=(lo, hi)`` replaces them all.

In every mapping position targets are clipped into the joint range; at a reset every target of the
env is 0 except the action joints' position targets, which hold the default pose (clipped into the
range): in velocity and effort modes the gains keep acting on it. Rotor actions are thrust commands
in ``[-1, 1]`` onto each group's ``thrust_range`` (``offset`` / ``scale`` its middle / half-width).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import torch

from .._checks import check_interval, real_array

__all__ = ["ACTION_MODES", "DEFAULT_POSITION_SCALE", "DEFAULT_VELOCITY_SCALE", "UNLIMITED_HALF_SPAN", "ActionMap",
           "check_action_mode", "given_options", "use_normalized"]

ACTION_MODES = ("position", "velocity", "effort", "position_velocity")
"""What an action sets: joint position targets [rad or m], velocity targets [rad/s or m/s], feed-forward
efforts [N·m or N], or both targets (action ``[positions..., velocities...]``)."""
CHANNELS = {"position": ("position",), "velocity": ("velocity",), "effort": ("effort",),
            "position_velocity": ("position", "velocity")}
"""The target channels (``CommandBuffer`` fields) each mode writes, in action order."""
DEFAULT_POSITION_SCALE = 0.5
"""[rad or m per action unit]: the explicit mapping's default scale of a position channel."""
DEFAULT_VELOCITY_SCALE = 5.0
"""[rad/s or m/s per action unit]: the default scale of a velocity channel (explicit, or normalized
where the velocity limit is infinite or randomized)."""
UNLIMITED_HALF_SPAN = {"hinge": np.pi, "slide": 1.0}
"""Half-width [rad or m] of the position target interval around the offset for unlimited joints."""
_LIMIT = {"velocity": "actuator_velocity_limit", "effort": "actuator_effort_limit"}
_SHORT = {"position": "pos", "velocity": "vel", "effort": "eff"}


def check_action_mode(mode: Any, owner: str, modes: Sequence[str] = ACTION_MODES) -> str:
    """``mode`` if it is one of ``modes`` (a task may support fewer than :data:`ACTION_MODES`), else a
    ``ValueError`` naming ``owner``."""
    if not isinstance(mode, str) or mode not in modes:
        raise ValueError(f"{owner}: action_mode must be one of {tuple(modes)}, got {mode!r}")
    return mode


def given_options(scale: Any, offset: Any, bounds: Any) -> dict[str, bool]:
    """``{option: given}`` of the explicit options (``offset`` None or ``"default"``: not given)."""
    default_offset = offset is None or isinstance(offset, str) and offset == "default"
    return {"action_scale": scale is not None, "action_offset": not default_offset, "action_bounds": bounds is not None}


def use_normalized(normalize: Any, given: Mapping[str, bool], owner: str) -> bool:
    """Whether the mapping is normalized: ``normalize`` True / False, or None (normalized unless one
    of ``given`` -- ``{option name: given by the user}`` -- is set). True together with a given
    option is a ``ValueError`` naming it."""
    if normalize is not None and not isinstance(normalize, (bool, np.bool_)):
        raise TypeError(f"{owner}: normalize_actions must be True, False or None (auto), got {normalize!r}")
    named = [k for k, v in given.items() if v]
    if normalize is None:
        return not named
    if normalize and named:
        raise ValueError(
            f"{owner}: normalize_actions=True computes the action scale and offset from the joints' limits; "
            f"{named} cannot be given with it (set normalize_actions=False to choose them yourself)"
        )
    return bool(normalize)


def _joint_limits(collection: Any, joint_ids: np.ndarray, name: str) -> np.ndarray:
    """``(J,)`` parameter ``name`` in force for each joint of ``joint_ids`` (collection columns):
    NaN where the joint's group has no such parameter or its values differ between envs (randomized),
    ``inf`` where unlimited."""
    out = np.full(len(joint_ids), np.nan)
    pos = {int(j): k for k, j in enumerate(joint_ids)}
    for g in collection:
        cols = [(pos[j], c) for c, j in enumerate(collection.joint_ids(g)) if j in pos]
        if not cols:
            continue
        try:
            values = collection[g].parameter(name).cpu().numpy()
        except KeyError:  # the group's model has no such parameter: no limit to normalize by
            continue
        for k, c in cols:
            col = values[:, c]
            if np.all(col == col[0]):
                out[k] = col[0]
    return out


class ActionMap:
    """Actions to targets (module doc), resolved once when the consumer is built.

    Args:
        mode: one of :data:`ACTION_MODES`.
        joints: the backend's :class:`~actuator_gym.backends.base.JointInfo` (columns = the collection's).
        cols: the action joints' columns, in action order.
        collection: the joint groups (their velocity / effort limits), or None (rotors only).
        peaks: ``(len(cols),)`` the effort channel's default scale (:func:`motor_peaks`; None: 1).
        normalize, scale, offset, bounds: ``normalize_actions``, ``action_scale`` (a number, one per
            action element, or one per action joint: applied to each channel), ``action_offset`` (the
            same, or ``"default"`` / None: the channel's default), ``action_bounds`` (``(lo, hi)``).
        rotors: the rotor groups (:class:`~actuator_gym.runtime.rotors.RotorGroups`) whose thrust commands
            follow the joint actions, or None.
        owner: the consumer's name, for messages.

    Every check raises before anything is written. :meth:`bind` attaches the target buffers;
    :meth:`write` and :meth:`reset` then write them.
    """

    def __init__(self, mode: str, joints: Any = None, cols: Sequence[int] = (), collection: Any = None, *,
                 peaks: Any = None, normalize: Any = None, scale: Any = None, offset: Any = None, bounds: Any = None,
                 rotors: Any = None, owner: str):
        self.mode = check_action_mode(mode, owner)
        self.normalized = use_normalized(normalize, given_options(scale, offset, bounds), owner)
        """True: scale and offset come from the joints' limits."""
        self.joint_ids = np.asarray(cols, dtype=np.intp)
        """The action joints' columns (collection and backend), in action order."""
        J = len(self.joint_ids)
        self.channels = CHANNELS[mode] if collection is not None else ()
        self.joint_names = tuple(joints.names[i] for i in self.joint_ids) if J else ()
        self.num_joint_actions = nj = J * len(self.channels)
        rng = joints.range[self.joint_ids].astype(np.float64) if J else np.zeros((0, 2))
        self.lo, self.hi = rng[:, 0].copy(), rng[:, 1].copy()
        kinds = [joints.kind[i] for i in self.joint_ids]
        pose = joints.default_pos[self.joint_ids].astype(np.float64) if J else np.zeros(0)
        self.rest = np.clip(pose, self.lo, self.hi)
        """``(J,)`` the position targets at a reset: the default pose clipped into the range."""
        default_scale = {"position": np.full(J, DEFAULT_POSITION_SCALE), "velocity": np.full(J, DEFAULT_VELOCITY_SCALE),
                         "effort": np.ones(J) if peaks is None else np.asarray(peaks, dtype=np.float64)}
        if self.normalized:
            parts = [self._normalized(ch, collection, default_scale[ch], kinds) for ch in self.channels]
            s, o = (np.concatenate([p[i] for p in parts]) if parts else np.zeros(0) for i in (0, 1))
            low, high = -np.ones(nj), np.ones(nj)
        else:
            default_offset = {"position": pose, "velocity": np.zeros(J), "effort": np.zeros(J)}
            s = self._explicit(scale, default_scale, J, "action_scale", owner)
            if np.any(s == 0):
                raise ValueError(f"{owner}: action_scale must be non-zero, got {s.tolist()}")
            if isinstance(offset, str) and offset != "default":
                raise ValueError(f"{owner}: action_offset must be 'default', a number or an array, got {offset!r}")
            o = self._explicit(None if isinstance(offset, str) else offset, default_offset, J, "action_offset", owner)
            low, high = -np.ones(nj), np.ones(nj)
            if bounds is not None:
                lo, hi = check_interval(bounds, "action_bounds", owner, strict=True, allow_inf=True)
                low, high = np.full(nj, lo), np.full(nj, hi)
            elif "position" in self.channels:
                low[:J], high[:J] = self._position_bounds(kinds, s[:J], o[:J])
        self.labels = [f"{_SHORT[ch]} command of joint '{n}'" for ch in self.channels for n in self.joint_names]
        """Per action element: what it commands (error messages)."""
        self.rotors = rotors
        if rotors is not None:
            r_scale, r_offset = np.zeros(rotors.num_rotors), np.zeros(rotors.num_rotors)
            for g in rotors:
                t_lo, t_hi = (float(v) for v in rotors.group(g).cfg.thrust_range)
                r_scale[rotors.columns(g)], r_offset[rotors.columns(g)] = (t_hi - t_lo) / 2.0, (t_hi + t_lo) / 2.0
            s, o = np.concatenate([s, r_scale]), np.concatenate([o, r_offset])
            low, high = np.concatenate([low, -np.ones(rotors.num_rotors)]), np.concatenate([high, np.ones(rotors.num_rotors)])
            self.labels += [f"thrust command of rotor '{n}'" for n in rotors.rotor_names]
        self.scale, self.offset = s, o
        """``(num_actions,)`` target units per action unit, and the target of action 0, per action element."""
        self.low, self.high = low.astype(np.float32), high.astype(np.float32)
        """``(num_actions,)`` float32 bounds of the action space."""
        self.num_actions = len(s)
        self._plan: list = []
        self._single, self._dest = False, None
        self._host: dict[str, np.ndarray] = {}
        self._pushes: dict[str, tuple[torch.Tensor, np.ndarray]] = {}

    def _normalized(self, ch: str, collection: Any, default_scale: np.ndarray, kinds: list) -> tuple[np.ndarray, np.ndarray]:
        if ch != "position":  # +-the actuator's limit; where it is infinite or randomized, the default scale
            lim = _joint_limits(collection, self.joint_ids, _LIMIT[ch])
            return np.where(np.isfinite(lim) & (lim > 0), lim, default_scale), np.zeros(len(lim))
        half = np.array([UNLIMITED_HALF_SPAN[k] for k in kinds])
        limited = np.isfinite(self.lo) & np.isfinite(self.hi)
        lo, hi = np.where(limited, self.lo, 0.0), np.where(limited, self.hi, 0.0)
        return np.where(limited, (hi - lo) / 2.0, half), np.where(limited, (hi + lo) / 2.0, self.rest)

    def _explicit(self, value: Any, defaults: dict[str, np.ndarray], J: int, what: str, owner: str) -> np.ndarray:
        """``value`` (None: the channels' defaults) as ``(num_joint_actions,)``; one per joint is tiled over the channels."""
        if value is None:
            return np.concatenate([defaults[ch] for ch in self.channels]) if self.channels else np.zeros(0)
        n = self.num_joint_actions
        if isinstance(value, (str, bytes)):
            raise TypeError(f"{owner}: {what} must be a number or a sequence of {n} numbers, got {value!r}")
        arr = real_array(value, what, owner)
        if arr.shape == (J,) and n != J:
            arr = np.tile(arr, len(self.channels))
        elif arr.ndim == 0:
            arr = np.full(n, float(arr))
        if arr.shape != (n,):
            raise ValueError(f"{owner}: {what} must be a number or have shape ({n},) (or ({J},): one value per action "
                             f"joint), got shape {arr.shape}")
        if not np.isfinite(arr).all():
            raise ValueError(f"{owner}: {what} must be finite, got {arr.tolist()}")
        return arr

    def _position_bounds(self, kinds: list, scale: np.ndarray, offset: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Action bounds of position targets ``offset + scale * action`` within the joint ranges."""
        half = np.array([UNLIMITED_HALF_SPAN[k] for k in kinds])
        limited = np.isfinite(self.lo) & np.isfinite(self.hi)
        a1 = (np.where(limited, self.lo, offset - half) - offset) / scale
        a2 = (np.where(limited, self.hi, offset + half) - offset) / scale
        return np.minimum(a1, a2), np.maximum(a1, a2)

    # -- the target buffers ----------------------------------------------------------------------
    def bind(self, command: Any, env: int | None = None) -> None:
        """Write into ``command`` (the collection's ``target_command``; None: rotors only) from now
        on: every env's row (actions ``(num_envs, num_actions)``), or the row ``env`` alone
        (actions ``(num_actions,)``, the wrapper). Device buffers are written through host copies."""
        self._single = env is not None
        self._host, self._pushes, self._plan = {}, {}, []
        if command is None:
            return
        for ch in ("position", "velocity", "effort"):
            t = getattr(command, ch)
            host = t.numpy() if t.device.type == "cpu" else t.cpu().numpy()
            if t.device.type != "cpu":
                self._pushes[ch] = (t, host)
            self._host[ch] = host if env is None else host[env]
        J, cols = len(self.joint_ids), self.joint_ids
        order = np.argsort(cols, kind="stable")  # the columns written in increasing order (a view where contiguous)
        dest = cols[order]
        self._dest = dest
        contiguous = J and np.array_equal(dest, np.arange(dest[0], dest[0] + J))
        for k, ch in enumerate(self.channels):
            idx = k * J + order
            gather = None if np.array_equal(idx, np.arange(self.num_actions)) else idx
            buf = self._host[ch]
            view = buf[..., dest[0]:dest[0] + J] if contiguous else None
            bounds = (self.lo[order], self.hi[order]) if ch == "position" else None
            in_place = gather is None and view is not None and view.dtype == np.float64  # (float32: one rounding, at the end)
            self._plan.append((in_place, gather, self.scale[idx], self.offset[idx], bounds, buf, view, self._pushes.get(ch)))
        self._rest = self.rest[order]

    def write(self, actions: np.ndarray) -> None:
        """Targets ``offset + scale * actions`` (float64 actions, checked by the consumer) into the
        bound buffers, position targets clipped into the joint range; rotor thrust commands to the
        rotor groups."""
        dest, single = self._dest, self._single
        for in_place, gather, scale, offset, bounds, buf, view, push in self._plan:
            if in_place:  # the actions in order into a contiguous float64 block
                np.multiply(scale, actions, out=view)
                np.add(view, offset, out=view)  # offset + scale * action
                if bounds is not None:  # position targets clipped into the joint range
                    view.clip(*bounds, out=view)
            else:
                if gather is None:
                    t = scale * actions
                else:  # a copy, scaled in place (a[g] and take: several times faster than a[..., g] / a[:, g])
                    t = actions[gather] if single else actions.take(gather, axis=1)
                    t *= scale
                t += offset
                if bounds is not None:
                    t.clip(*bounds, out=t if view is None else view)
                if view is None:
                    buf[(dest,) if single else (slice(None), dest)] = t
                elif bounds is None:
                    view[...] = t
            if push is not None:  # a device buffer: its host copy pushed
                push[0].copy_(torch.from_numpy(push[1]))
        if self.rotors is not None:
            self.rotors.set_actions(actions[None] if single else actions[:, self.num_joint_actions:])

    def reset(self, rows: Any = None) -> None:
        """The reset targets of env ``rows`` (None: every env, or the bound env): every target 0,
        the action joints' position targets the default pose clipped into the range."""
        if not self._host:
            return
        sel = slice(None) if rows is None or self._single else np.asarray(rows, dtype=np.intp)
        for buf in self._host.values():
            buf[sel] = 0.0
        where = sel if self._single or rows is None else sel[:, None]  # (rows x the action joints' columns)
        self._host["position"][(self._dest,) if self._single else (where, self._dest)] = self._rest
        for tensor, host in self._pushes.values():
            tensor.copy_(torch.from_numpy(host))
