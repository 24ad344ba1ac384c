"""A bounded YAML reader for presets: plain data only, sizes checked before anything is built.

:func:`load_yaml` parses with a ``yaml.SafeLoader`` subclass (no Python objects can be constructed)
that, before constructing anything:

* refuses nesting deeper than ``max_depth`` while composing (so deep documents cannot exhaust the
  Python stack);
* measures the document **after alias expansion** -- memoized, so a "billion laughs" costs
  microseconds to refuse -- and refuses more than ``max_nodes`` nodes, an expanded depth over
  ``max_depth`` and recursive aliases (``&a [*a]``);
* accepts only the core tags (mappings, lists, strings, integers, floats, booleans, null and merge
  keys ``<<``); ``!!python/...``, ``!!binary``, ``!!set``, timestamps and custom tags are refused.

A float literal that overflows (``1.0e+400``) is constructed as an :class:`Overflow` marker, not
``inf``, so the caller can name its key; ``.inf`` stays ``float('inf')``. A refused limit is a
:class:`YamlRefused` (a ``ValueError``), a refused tag a :class:`DisallowedTag` (a
``yaml.YAMLError``, like any malformed YAML); both messages start with ``line N:``.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

__all__ = ["load_yaml", "YamlRefused", "DisallowedTag", "Overflow", "ALLOWED_TAGS"]

_CORE = "tag:yaml.org,2002:"
ALLOWED_TAGS = {_CORE + t for t in ("str", "int", "float", "bool", "null", "seq", "map", "merge")}
"""The only YAML tags a preset may use (explicitly or by implicit resolution)."""

_INF = re.compile(r"[-+]?\.(inf|Inf|INF)")


class YamlRefused(ValueError):
    """The document is over a limit or uses a construct presets do not allow."""


class DisallowedTag(yaml.YAMLError):
    """The document uses a tag presets do not allow (``!!python/...``, ``!!binary``, custom tags)."""


class Overflow:
    """A float literal too large for a 64-bit float (constructed instead of ``inf``)."""

    def __init__(self, text: str, line: int):
        self.text, self.line = text, line

    def __repr__(self) -> str:
        return self.text


def _line(node_or_mark: Any) -> int:
    mark = getattr(node_or_mark, "start_mark", node_or_mark)
    return getattr(mark, "line", -1) + 1


class _BoundedLoader(yaml.SafeLoader):
    max_depth = 32
    max_nodes = 100_000

    def __init__(self, stream: str):
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent, index):  # noqa: D401 - PyYAML hook
        self._depth += 1
        try:
            if self._depth > self.max_depth:
                raise YamlRefused(f"line {_line(self.peek_event())}: nested deeper than {self.max_depth} levels; allowed: at most {self.max_depth}")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def compose_document(self):
        node = super().compose_document()
        _measure(node, self.max_nodes, self.max_depth)
        return node

    def construct_yaml_float(self, node):
        value = super().construct_yaml_float(node)
        if value in (float("inf"), float("-inf")) and not _INF.fullmatch(str(node.value).strip()):
            return Overflow(str(node.value), _line(node))
        return value


_BoundedLoader.add_constructor(_CORE + "float", _BoundedLoader.construct_yaml_float)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [x for pair in node.value for x in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _measure(root: yaml.Node | None, max_nodes: int, max_depth: int) -> None:
    """Expanded node count and depth of the composed document, iteratively and memoized by node."""
    if root is None:
        return
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        k = id(node)
        if done:
            kids = _children(node)
            size[k] = 1 + sum(size[id(c)] for c in kids)
            depth[k] = 1 + max((depth[id(c)] for c in kids), default=0)
            path.discard(k)
            if size[k] > max_nodes:
                raise YamlRefused(
                    f"line {_line(node)}: expands (aliases included) to more than {max_nodes} nodes; "
                    f"allowed: at most {max_nodes} (ConfigLimits.max_nodes)"
                )
            if depth[k] > max_depth:
                raise YamlRefused(
                    f"line {_line(node)}: nested (aliases included) deeper than {max_depth} levels; "
                    f"allowed: at most {max_depth} (ConfigLimits.max_depth)"
                )
            continue
        if k in size:
            continue
        if node.tag not in ALLOWED_TAGS:
            raise DisallowedTag(
                f"line {_line(node)}: YAML tag {node.tag.replace(_CORE, '!!')!r} is not allowed; allowed: plain data "
                f"(mappings, lists, strings, numbers, booleans, null){' -- quote the value to make it a string' if node.tag == _CORE + 'timestamp' else ''}"
            )
        path.add(k)
        stack.append((node, True))
        for c in _children(node):
            if id(c) in path:
                raise YamlRefused(f"line {_line(c)}: a recursive alias (a node that contains itself); not allowed")
            if id(c) not in size:
                stack.append((c, False))


def load_yaml(text: str, max_depth: int, max_nodes: int) -> Any:
    """Parse one YAML document with the bounds above. ``YamlRefused`` over a limit; ``yaml.YAMLError``
    for malformed YAML."""
    loader_cls = type("_Loader", (_BoundedLoader,), {"max_depth": int(max_depth), "max_nodes": int(max_nodes)})
    loader = loader_cls(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()
