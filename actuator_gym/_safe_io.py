"""Bounded, exception-tidy readers for the data files actuator-gym opens (a leaf module).

Every function here raises ``ValueError`` naming the file, what was wrong and the allowed range
(never ``UnicodeDecodeError``, ``RecursionError``, ``OSError`` or a numpy error from deep inside),
and checks declared sizes **before** allocating:

* :func:`read_bytes` -- a whole file, refused when larger than ``max_bytes``;
* :func:`read_text` -- the same, decoded as UTF-8;
* :func:`parse_json_object` -- a JSON object (not a list or a scalar), nesting bounded;
* :func:`load_npz` -- the arrays of an ``.npz`` archive without pickles (``allow_pickle=False``),
  refusing object arrays and arrays whose declared size is over a budget.
"""

from __future__ import annotations

import json
import math
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["read_bytes", "read_text", "parse_json_object", "load_npz", "JSON_MAX_DEPTH", "NPZ_KINDS"]

JSON_MAX_DEPTH = 64
"""Deepest nesting of lists / objects accepted in a JSON document (metadata, ``policy.json``)."""

NPZ_KINDS = "biufU"
"""numpy dtype kinds an ``.npz`` member may have: bool, int, uint, float, unicode text."""


def read_bytes(path: str | os.PathLike, max_bytes: int, what: str = "file") -> bytes:
    """The bytes of ``path``; ``ValueError`` if it is missing, unreadable or over ``max_bytes``."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if not p.is_file():
            raise ValueError(f"{p}: {what} is not a regular file")
        if size > max_bytes:
            raise ValueError(f"{p}: {what} is {size} bytes; allowed: at most {max_bytes} bytes")
        with open(p, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except FileNotFoundError:
        raise ValueError(f"{p}: no such {what}") from None
    except OSError as exc:
        raise ValueError(f"{p}: cannot read the {what} ({exc.strerror or exc})") from None
    if len(data) > max_bytes:  # grew while we read it
        raise ValueError(f"{p}: {what} is over {max_bytes} bytes; allowed: at most {max_bytes} bytes")
    return data


def read_text(path: str | os.PathLike, max_bytes: int, what: str = "file") -> str:
    """:func:`read_bytes` decoded as UTF-8 (``ValueError`` naming the byte offset otherwise)."""
    data = read_bytes(path, max_bytes, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{path}: {what} is not UTF-8 text (undecodable byte at offset {exc.start}); allowed: a UTF-8 text file"
        ) from None


def _depth(x: Any, limit: int) -> int:
    """Nesting depth of a parsed JSON value, stopping (iteratively) once past ``limit``."""
    deepest, stack = 0, [(x, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (dict, list)):
            deepest = max(deepest, d)
            if deepest > limit:
                return deepest
            stack.extend((c, d + 1) for c in (v.values() if isinstance(v, dict) else v))
    return deepest


def parse_json_object(text: str | bytes, source: str, what: str = "JSON", max_depth: int = JSON_MAX_DEPTH) -> dict:
    """``text`` parsed as a JSON **object** with nesting at most ``max_depth``, finite numbers only.

    ``ValueError`` naming ``source`` and ``what`` for malformed JSON, a top level that is not an
    object, too deep a nesting, or ``NaN`` / ``Infinity`` values."""

    def no_constants(name: str):
        raise ValueError(name)

    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{source}: {what} is not UTF-8 text (undecodable byte at offset {exc.start})") from None
    try:
        doc = json.loads(text, parse_constant=no_constants)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{source}: {what} is not valid JSON ({exc})") from None
    except RecursionError:
        raise ValueError(f"{source}: {what} nests deeper than Python can parse; allowed: at most {max_depth} levels") from None
    except ValueError as exc:  # parse_constant
        raise ValueError(f"{source}: {what} holds the non-finite value {exc}; allowed: finite numbers") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{source}: {what} must be a JSON object ({{...}}), got a JSON {type(doc).__name__}")
    if _depth(doc, max_depth) > max_depth:
        raise ValueError(f"{source}: {what} nests deeper than {max_depth} levels; allowed: at most {max_depth}")
    for v in _numbers(doc):
        if isinstance(v, float) and not math.isfinite(v):  # 1e400 parses as inf
            raise ValueError(f"{source}: {what} holds a number that overflows a 64-bit float; allowed: finite numbers")
    return doc


def _numbers(x: Any):
    stack = [x]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, float):
            yield v


def load_npz(path: str | os.PathLike, max_bytes: int) -> dict[str, np.ndarray]:
    """``{name: array}`` of an ``.npz`` archive, read with ``allow_pickle=False``.

    Each member's ``.npy`` header is read first: object (pickled) and structured arrays are
    refused, and so is a file, or a total declared array size, over ``max_bytes`` -- before any
    array is allocated. ``ValueError`` naming the file and the member.
    """
    p = Path(path)
    size = read_size(p, "weights file")
    if size > max_bytes:
        raise ValueError(f"{p}: weights file is {size} bytes; allowed: at most {max_bytes} bytes")
    total = 0
    try:
        with zipfile.ZipFile(p) as zf:
            for info in zf.infolist():
                name = info.filename
                if not name.endswith(".npy"):
                    raise ValueError(f"{p}: member {name!r} is not a .npy array; allowed: an archive of .npy arrays")
                with zf.open(info) as fh:
                    shape, dtype = _npy_header(fh, p, name)
                if dtype.kind not in NPZ_KINDS or dtype.fields is not None:
                    raise ValueError(
                        f"{p}: array {name[:-4]!r} has dtype {dtype} (object and structured arrays need pickle "
                        f"and are refused); allowed: bool, integer, float or text arrays"
                    )
                total += math.prod(shape) * dtype.itemsize
                if total > max_bytes:
                    raise ValueError(
                        f"{p}: the arrays declare more than {max_bytes} bytes of data (at {name[:-4]!r}); "
                        f"allowed: at most {max_bytes} bytes"
                    )
            with np.load(p, allow_pickle=False) as z:
                return {k: z[k] for k in z.files}
    except ValueError as exc:
        if str(exc).startswith(str(p)):
            raise
        raise ValueError(f"{p}: not a readable weights .npz ({exc})") from None
    except (zipfile.BadZipFile, OSError, EOFError, KeyError, RuntimeError) as exc:
        raise ValueError(f"{p}: not a readable weights .npz ({type(exc).__name__}: {exc})") from None


def read_size(p: Path, what: str) -> int:
    """Size in bytes of an existing regular file (``ValueError`` naming it otherwise)."""
    try:
        if not p.is_file():
            raise ValueError(f"{p}: no such {what}")
        return p.stat().st_size
    except OSError as exc:
        raise ValueError(f"{p}: cannot read the {what} ({exc.strerror or exc})") from None


def _npy_header(fh, p: Path, name: str) -> tuple[tuple[int, ...], np.dtype]:
    from numpy.lib import format as npf

    try:
        version = npf.read_magic(fh)
        if version == (1, 0):
            shape, _, dtype = npf.read_array_header_1_0(fh)
        else:
            shape, _, dtype = npf.read_array_header_2_0(fh)
    except (ValueError, SyntaxError, EOFError) as exc:
        raise ValueError(f"{p}: member {name!r} has a malformed .npy header ({exc})") from None
    return tuple(int(s) for s in shape), np.dtype(dtype)
