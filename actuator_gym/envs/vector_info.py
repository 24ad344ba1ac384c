"""Gymnasium's vector ``info`` format: dicts of ``(num_envs, ...)`` arrays with boolean ``_key`` masks."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["masked_info", "unbatch_info"]


def masked_info(info: dict[str, Any], mask: np.ndarray) -> dict[str, Any]:
    """A copy of a vector info dict whose masks are and-ed with ``mask``."""
    out: dict[str, Any] = {}
    for k, v in info.items():
        if k.startswith("_"):
            out[k] = v & mask
        elif isinstance(v, dict):
            out[k] = masked_info(v, mask)
        else:
            out[k] = v.copy() if isinstance(v, np.ndarray) else v
    return out


def unbatch_info(info: dict[str, Any], i: int) -> dict[str, Any]:
    """Env ``i``'s entries of a vector info dict (entries whose mask is False are left out)."""
    out: dict[str, Any] = {}
    for k, v in info.items():
        if k.startswith("_"):
            continue
        m = info.get("_" + k)
        if m is not None and not m[i]:
            continue
        if isinstance(v, dict):
            out[k] = unbatch_info(v, i)
        else:
            x = v[i]
            out[k] = x.item() if isinstance(x, np.generic) else (x.copy() if isinstance(x, np.ndarray) else x)
    return out
