"""``BatchModel``: what every batched actuator model shares (:class:`~.actuator.Actuator`, the
joints' recipe, and :class:`~.thruster.Thruster`, the rotors' dynamics).

A batched model holds ``(num_envs, width)`` state, ``width`` being its joints or rotors. Both models
check their arguments with the same :mod:`actuator_gym._checks` helpers; this base holds the rest
they would otherwise each re-implement:

* the per-env random streams (:meth:`BatchModel.new_generator`, :meth:`BatchModel.seed`): env ``i``
  of a model seeded ``s`` draws exactly what a one-env model seeded ``s + i`` draws
  (:mod:`actuator_gym.randomization.streams`);
* the input conversion of ``compute`` (:meth:`BatchModel._input`: torch tensors and numpy arrays of
  shape ``(num_envs, width)``, converted to the model's device, dtype and array library);
* the debug check of ``check_finite=True`` (:meth:`BatchModel._check`, naming env and joint/rotor);
* reset's env selection and re-draw of randomized parameters (:meth:`BatchModel._reset_ids`,
  :meth:`BatchModel._resample`);
* ``parameters()`` / ``randomized_parameters()`` over the model's named parameter table
  (:meth:`BatchModel._parameter_table`).

A subclass sets ``name``, ``num_envs``, ``device``, ``dtype``, ``ops``, ``generator``, ``_shape`` and
``_np_dtype`` in its constructor, and the class attributes :attr:`BatchModel.AXIS` /
:attr:`BatchModel.ITEM` / :attr:`BatchModel.ITEM_NAMES` that word its messages.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

import numpy as np
import torch

from .._checks import env_index, real_array
from ..randomization.streams import EnvStreams, env_seeds
from .params import BindContext, Param, match_names

__all__ = ["BatchModel", "as_env_ids"]


def as_env_ids(env_ids: Any, num_envs: int, device: torch.device) -> torch.Tensor | None:
    """Validate env ids (None, int, sequence, array or tensor; bool masks too) into a long tensor
    (:func:`actuator_gym._checks.env_index`: floats and strings are a ``TypeError``, ids outside
    ``[0, num_envs)`` a ``ValueError``)."""
    if env_ids is None:
        return None
    return torch.from_numpy(env_index(env_ids, num_envs, "env_ids")).to(device)


class BatchModel:
    """Base of the batched models: seeding, input conversion, finite checks, reset, parameters."""

    AXIS = "num_joints"
    """How messages name the second axis of a ``(num_envs, width)`` input."""
    ITEM = "joint"
    """How messages name one column."""
    ITEM_NAMES = "joint_names"
    """The attribute holding the column names (None: columns are named by index)."""

    name: str
    num_envs: int
    device: torch.device
    dtype: torch.dtype
    generator: EnvStreams
    _shape: tuple[int, int]
    _np_dtype: np.dtype

    def _bind_context(self, width: int, names: Sequence[str] | None, dtype: torch.dtype) -> BindContext:
        """The :class:`~.params.BindContext` of this model's parts and parameters (kept as ``_ctx``):
        its envs, device, array library and streams, ``width`` columns named ``names``."""
        self._ctx = BindContext(self.num_envs, width, names, self.device, dtype, self.ops, self.generator, self.name)
        return self._ctx

    # -- seeding ----------------------------------------------------------------------------------
    @staticmethod
    def new_generator(seed: Any, num_envs: int, owner: str) -> EnvStreams:
        """The per-env streams that draw a model's randomized parameters (and delays): env ``i`` from
        its own seed (``s + i`` for an int ``s``, fresh entropy for None; one seed per env also
        accepted); a bad seed is a ``TypeError`` / ``ValueError`` naming ``owner``."""
        return EnvStreams(num_envs, seed, owner=owner)

    def seed(self, seed: Any) -> None:
        """Re-seed every env's stream for later resets: an integer ``s`` in ``[0, 2**64)`` (env ``i``
        gets ``s + i``) or a sequence of ``num_envs`` seeds; draws restart as in a model built with it."""
        self.generator.seed(env_seeds(seed, self.num_envs, self.name, allow_none=False))

    # -- inputs -----------------------------------------------------------------------------------
    def _input(self, x: Any, name: str, required: bool = True) -> Any:
        """``x`` as a ``(num_envs, width)`` array of the model's library, device and dtype; None is
        the model's zeros (``_zeros``) unless ``required``."""
        if x is None:
            if required:
                raise ValueError(f"{self.name}: {name} is required")
            return self._zeros
        if type(x) is np.ndarray and x.dtype == self._np_dtype and x.shape == self._shape and self.ops.name == "numpy":
            return x  # the common case: no conversion
        if isinstance(x, torch.Tensor) and not (x.is_complex() or x.dtype == torch.bool):
            if tuple(x.shape) != self._shape:
                raise ValueError(
                    f"{self.name}: {name} must have shape {self._shape} (num_envs, {self.AXIS}), got {tuple(x.shape)}"
                )
            if x.device != self.device or x.dtype != self.dtype:
                x = x.to(self.device, self.dtype)
            return x.detach().numpy() if self.ops.name == "numpy" else x.detach()
        arr = real_array(x, name, self.name, self._np_dtype)
        if arr.shape != self._shape:
            raise ValueError(f"{self.name}: {name} must have shape {self._shape} (num_envs, {self.AXIS}), got {arr.shape}")
        return arr if self.ops.name == "numpy" else torch.as_tensor(arr, device=self.device)

    def _check(self, arrays: Sequence[tuple[str, Any]]) -> None:
        """``ValueError`` naming the first non-finite element ``label[env e, joint/rotor 'name']``."""
        names = getattr(self, self.ITEM_NAMES, None)
        for label, a in arrays:
            t = torch.as_tensor(a)
            bad = ~torch.isfinite(t)
            if bool(bad.any()):
                env, j = bad.nonzero()[0].tolist()
                col = f"'{names[j]}'" if names else str(j)
                raise ValueError(f"{self.name}: {label}[env {env}, {self.ITEM} {col}] is {t[env, j].item()} (non-finite)")

    # -- reset ------------------------------------------------------------------------------------
    def _reset_ids(self, env_ids: Any) -> tuple[torch.Tensor | None, bool]:
        """``(ids, nothing_to_do)``: the validated env ids (None = all) and whether they are empty."""
        ids = as_env_ids(env_ids, self.num_envs, self.device)
        return ids, ids is not None and ids.numel() == 0

    parameters_version: int = 0
    """Counts the changes of the values in force (re-draws at reset, :meth:`set_parameter`): equal
    counts mean equal values (consumers key their copies on it)."""

    def _resample(self, params: Iterable[Param], ids: torch.Tensor | None) -> bool:
        """Re-draw the randomized ``params`` for ``ids`` from each env's stream; whether any was."""
        changed = False
        for p in params:
            if p.randomized:
                p.resample(ids, self.generator)
                changed = True
        if changed:
            self.parameters_version += 1
        return changed

    # -- parameters -------------------------------------------------------------------------------
    def _parameter_table(self) -> dict[str, Param]:
        """``{name shown to users: Param}`` of every parameter (subclasses)."""
        raise NotImplementedError

    def parameters(self) -> dict[str, torch.Tensor]:
        """Every parameter's values in force ``(num_envs, width)`` (copies), by name."""
        return {k: p.values.clone() for k, p in self._parameter_table().items()}

    def randomized_parameters(self) -> dict[str, torch.Tensor]:
        """Only the parameters drawn from distributions (what changes from episode to episode)."""
        return {k: p.values.clone() for k, p in self._parameter_table().items() if p.randomized}

    # -- runtime changes --------------------------------------------------------------------------
    def _settable(self, name: str) -> tuple[Param, Callable[[], None], tuple[float, float] | None]:
        """``(param, refresh, runtime bounds or None)`` of a parameter :meth:`set_parameter` may change
        (subclasses)."""
        raise TypeError(f"{self.name}: set_parameter is not supported by {type(self).__name__}")

    def _columns(self, joint_ids: Any) -> torch.Tensor:
        """Columns of ``joint_ids``: None (all), ints / a sequence of ints (indices), or strings /
        a sequence of strings (regexes full-matched against the column names)."""
        width = self._shape[1]
        if joint_ids is None:
            return torch.arange(width)
        items = [joint_ids] if isinstance(joint_ids, (str, int, np.integer)) else list(joint_ids)
        if items and all(isinstance(i, str) for i in items):
            names = getattr(self, self.ITEM_NAMES, None) or [str(i) for i in range(width)]
            cols = match_names(items, names, f"{self.name}: set_parameter {self.ITEM}s")
            if not cols:
                raise ValueError(f"{self.name}: set_parameter: {items} match none of the {self.ITEM}s {list(names)}")
            return torch.tensor(cols, dtype=torch.long)
        return torch.from_numpy(env_index(items, width, f"{self.name}: set_parameter {self.ITEM}_ids", allow_mask=False, unique=True))

    def set_parameter(self, name: str, value: Any, env_ids: Any = None, joint_ids: Any = None) -> None:
        """Set parameter ``name`` of envs ``env_ids`` (None = all) and columns ``joint_ids`` (None =
        all; indices, or regexes full-matched against the joint / rotor names) to ``value`` now.

        ``value`` is a number or an array broadcastable to ``(len(env_ids), len(joint_ids))``. It is
        validated with the parameter's own domain (``ValueError`` naming the parameter, the joint
        and the allowed values; nothing changes on error), is in force at once (``parameter(name)``,
        the next ``compute``) and becomes the parameter's nominal value for those envs and columns:
        it holds over later resets. A randomized parameter keeps its distribution, re-drawn at the
        next reset around the new nominal (``operation="scale"`` / ``"add"``); an ``"abs"``
        distribution ignores the nominal, so there the set value holds until the next reset.
        """
        param, refresh, bounds = self._settable(name)
        ids = as_env_ids(env_ids, self.num_envs, torch.device("cpu"))
        cols = self._columns(joint_ids)
        try:
            param.assign(value, ids, cols, bounds)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{self.name}: set_parameter({name!r}): {str(exc).removeprefix(self.name + ': ')}") from None
        refresh()
        self.parameters_version += 1
