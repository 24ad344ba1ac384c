"""Bounded, exception-tidy readers for the data files actuator-gym opens (a leaf module).

Every function here raises ``ValueError`` naming the file, what was wrong and the allowed range
(never ``UnicodeDecodeError``, ``RecursionError``, ``OSError`` or a numpy error from deep inside),
and checks declared sizes **before** allocating:

* :func:`read_bytes` -- a whole file, refused when larger than ``max_bytes``;
* :func:`read_text` -- the same, decoded as UTF-8;
* :func:`parse_json_object` -- a JSON object (not a list or a scalar), nesting bounded;
* :func:`npz_headers` / :func:`load_npz` -- the declared arrays / the arrays of an ``.npz`` archive
  without pickles (``allow_pickle=False``), refusing object arrays and archives whose declared size
  is over a budget;
* :func:`zip_sizes` -- a zip archive's declared uncompressed sizes, checked against a budget before
  anything is inflated.

And the writers of every output the command line produces (never through a symbolic link):

* :func:`output_dir` -- a command's own output folder inside the user's, no component a link;
* :func:`atomic_path` / :func:`write_atomic` -- a file written under a temporary name in its
  folder, then renamed over the target (``os.replace`` replaces a link, never follows it); on an
  exception the temporary file is removed and the target is untouched;
* :func:`clear_outputs` -- an earlier run's outputs removed (a link: the link itself).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import secrets
import zipfile
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np

__all__ = ["read_bytes", "read_text", "parse_json_object", "npz_headers", "load_npz", "zip_sizes", "output_dir", "atomic_path",
           "write_atomic", "clear_outputs", "JSON_MAX_DEPTH", "NPZ_KINDS"]

JSON_MAX_DEPTH = 64
"""Deepest nesting of lists / objects accepted in a JSON document (metadata, ``policy.json``)."""

NPZ_KINDS = "biufU"
"""numpy dtype kinds an ``.npz`` member may have: bool, int, uint, float, unicode text."""
_KIND_NAMES = {"b": "bool", "i": "integer", "u": "unsigned integer", "f": "float", "U": "text"}


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
    object, too deep a nesting, or ``NaN`` / ``Infinity`` values (naming their key)."""

    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{source}: {what} is not UTF-8 text (undecodable byte at offset {exc.start})") from None
    try:
        doc = json.loads(text, parse_constant=_NonFinite)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{source}: {what} is not valid JSON ({exc})") from None
    except RecursionError:
        raise ValueError(f"{source}: {what} nests deeper than Python can parse; allowed: at most {max_depth} levels") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{source}: {what} must be a JSON object ({{...}}), got a JSON {type(doc).__name__}")
    if _depth(doc, max_depth) > max_depth:
        raise ValueError(f"{source}: {what} nests deeper than {max_depth} levels; allowed: at most {max_depth}")
    for key, v in _numbers(doc):
        if isinstance(v, _NonFinite) or not math.isfinite(v):  # 1e400 parses as inf
            held = f"the non-finite value {v}" if isinstance(v, _NonFinite) else "a number that overflows a 64-bit float"
            raise ValueError(f"{source}: {what} holds {held} at key {key!r}; allowed: finite numbers")
    return doc


class _NonFinite(str):
    """A ``NaN`` / ``Infinity`` / ``-Infinity`` token of the JSON text (refused with its key)."""


def _numbers(x: Any):
    """``(key path, value)`` of every float and non-finite token in ``x`` (e.g. ``input_idx[1]``)."""
    stack = [("", x)]
    while stack:
        key, v = stack.pop()
        if isinstance(v, dict):
            stack.extend((f"{key}.{k}" if key else str(k), c) for k, c in v.items())
        elif isinstance(v, list):
            stack.extend((f"{key}[{i}]", c) for i, c in enumerate(v))
        elif isinstance(v, (float, _NonFinite)):
            yield key, v


def zip_sizes(p: Path, max_bytes: int, what: str) -> list[zipfile.ZipInfo]:
    """The members of the zip archive ``p`` (from its central directory, nothing inflated); ``ValueError``
    naming the file when it is not a zip archive or its members declare more than ``max_bytes``
    uncompressed (a small deflated file that would inflate to gigabytes)."""
    try:
        with zipfile.ZipFile(p) as zf:
            infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise ValueError(f"{p}: {what} is not a readable zip archive ({type(exc).__name__}: {exc})") from None
    total = sum(i.file_size for i in infos)
    if total > max_bytes:
        raise ValueError(
            f"{p}: {what} declares {total} bytes uncompressed; allowed: at most {max_bytes} bytes (checked before inflating)"
        )
    return infos


def npz_headers(path: str | os.PathLike, max_bytes: int, what: str = "weights file",
                kinds: str = NPZ_KINDS) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """``{name: (shape, dtype)}`` of an ``.npz`` archive, read from each member's ``.npy`` header
    (nothing allocated): the file, its members' declared uncompressed sizes and the arrays' declared
    sizes (``prod(shape) * itemsize``, together) at most ``max_bytes``; dtype kinds in ``kinds``
    (object and structured arrays need pickle: refused). ``ValueError`` naming the file and the member."""
    p = Path(path)
    size = read_size(p, what)
    if size > max_bytes:
        raise ValueError(f"{p}: {what} is {size} bytes; allowed: at most {max_bytes} bytes")
    total, out = 0, {}
    infos = zip_sizes(p, max_bytes + 2**20, what)  # + the .npy headers
    try:
        with zipfile.ZipFile(p) as zf:
            for info in infos:
                name = info.filename
                if not name.endswith(".npy"):
                    raise ValueError(f"{p}: member {name!r} is not a .npy array; allowed: an archive of .npy arrays")
                with zf.open(info) as fh:
                    shape, dtype = _npy_header(fh, p, name)
                if dtype.kind not in kinds or dtype.fields is not None:
                    raise ValueError(
                        f"{p}: array {name[:-4]!r} has dtype {dtype} (object and structured arrays need pickle "
                        f"and are refused); allowed: {', '.join(_KIND_NAMES[k] for k in kinds)} arrays"
                    )
                total += math.prod(shape) * dtype.itemsize
                if total > max_bytes:
                    raise ValueError(
                        f"{p}: the arrays declare more than {max_bytes} bytes of data (at {name[:-4]!r}); "
                        f"allowed: at most {max_bytes} bytes"
                    )
                out[name[:-4]] = (shape, dtype)
    except (zipfile.BadZipFile, OSError, EOFError, KeyError, RuntimeError, NotImplementedError) as exc:
        raise ValueError(f"{p}: not a readable .npz {what} ({type(exc).__name__}: {exc})") from None
    return out


def load_npz(path: str | os.PathLike, max_bytes: int, what: str = "weights file", kinds: str = NPZ_KINDS) -> dict[str, np.ndarray]:
    """``{name: array}`` of an ``.npz`` archive, read with ``allow_pickle=False`` after
    :func:`npz_headers` checked every declared size against ``max_bytes``. ``ValueError`` naming the
    file and the member."""
    p = Path(path)
    npz_headers(p, max_bytes, what, kinds)
    try:
        with np.load(p, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (ValueError, zipfile.BadZipFile, OSError, EOFError, KeyError, RuntimeError, NotImplementedError) as exc:
        raise ValueError(f"{p}: not a readable .npz {what} ({type(exc).__name__}: {exc})") from None


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


# -- writing outputs -------------------------------------------------------------------------------
def _no_link(p: Path) -> None:
    if p.is_symlink():
        raise ValueError(
            f"{p} is a symbolic link; an output folder of actuator-gym must be a real folder (outputs are never "
            f"written through a link): remove the link or choose another --out"
        )


def output_dir(root: str | os.PathLike, *parts: str, create: bool = True) -> Path:
    """``root / parts...`` created (``root`` too; with ``create=False`` only checked): the folder a
    command owns inside the user's ``root``. Each of ``parts`` that exists must be a folder, not a
    symbolic link (``ValueError`` naming it, before anything is written); ``root`` itself is the
    user's choice and may be one."""
    p = Path(root)
    for part in parts:
        p = p / part
        _no_link(p)
    if not create:
        return p
    try:
        p.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise ValueError(f"{p}: exists and is not a folder; an output folder is needed there") from None
    return p


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """A new temporary file in ``path``'s folder, named ``.<random>.<name>`` (it keeps ``path``'s
    suffix, which writers such as numpy, matplotlib and imageio read), for the block to write; when
    the block ends without an exception it is renamed over ``path`` (``os.replace``: atomic, and a
    symbolic link at ``path`` is replaced, never followed), else removed -- ``path`` is then untouched."""
    target = Path(path)
    for _ in range(100):  # O_EXCL: a new file of ours (never a planted link); mode 0o666 under the umask, as open() gives
        tmp = target.parent / f".{secrets.token_hex(6)}.{target.name}"
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            break
        except FileExistsError:
            continue
    else:  # pragma: no cover - 100 collisions of 48 random bits
        raise FileExistsError(f"{target.parent}: cannot create a temporary file")
    try:
        yield Path(tmp)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_atomic(path: str | os.PathLike, data: str | bytes) -> Path:
    """``data`` (text: UTF-8) written to ``path`` through :func:`atomic_path`; returns ``path``."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return Path(path)


def clear_outputs(folder: str | os.PathLike, names: Iterable[str]) -> None:
    """Remove ``folder / name`` for every name (a glob pattern, e.g. ``logs/events.out.tfevents.*``) that
    is a file or a symbolic link (the link itself, never its target): an earlier run's outputs, removed
    before a new run writes any. Folders and other files are left alone."""
    folder = Path(folder)
    for name in names:
        for p in sorted(folder.glob(name)) if any(c in name for c in "*?[") else [folder / name]:
            if p.is_symlink() or p.is_file():
                p.unlink()
