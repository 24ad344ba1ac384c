"""The package's layout keeps the rules docs/architecture.md states: imports point one way (no circle,
an import inside a function counts, only ``if TYPE_CHECKING:`` is exempt) and no module reads another
module's private fields. Both are read from the source with ``ast`` (nothing is imported). And the
page itself names only repository paths that exist."""

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "actuator_gym"


def _modules() -> dict[str, tuple[Path, ast.Module]]:
    out = {}
    for p in sorted(PACKAGE.rglob("*.py")):
        parts = list(p.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = (p, ast.parse(p.read_text(), str(p)))
    return out


def _type_checking(node: ast.AST) -> bool:
    t = node.test if isinstance(node, ast.If) else None
    return isinstance(t, ast.Name) and t.id == "TYPE_CHECKING" or isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"


def _walk(node: ast.AST):
    """Every node below ``node``, anywhere (functions too), except the body of ``if TYPE_CHECKING:``."""
    for child in ast.iter_child_nodes(node):
        if _type_checking(child):
            for n in child.orelse:
                yield n
                yield from _walk(n)
            continue
        yield child
        yield from _walk(child)


def _imports(mod: str, path: Path, tree: ast.Module) -> list[tuple[str, str]]:
    """``(bound name, imported module or attribute's dotted path)`` of every import of ``mod``."""
    pkg = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    out = []
    for n in _walk(tree):
        if isinstance(n, ast.Import):
            out += [(a.asname or a.name.split(".")[0], a.name) for a in n.names]
        elif isinstance(n, ast.ImportFrom):
            base = n.module or ""
            if n.level:
                up = pkg.split(".")[: len(pkg.split(".")) - n.level + 1]
                base = ".".join(up + ([n.module] if n.module else []))
            out += [(a.asname or a.name, f"{base}.{a.name}") for a in n.names]
    return out


def import_graph(modules) -> dict[str, set[str]]:
    """``{module: the package modules it imports}``; ``from pkg import name`` points at ``pkg.name``
    when that is a module, else at ``pkg``."""
    graph = {}
    for mod, (path, tree) in modules.items():
        targets = {t if t in modules else t.rpartition(".")[0] for _, t in _imports(mod, path, tree)}
        graph[mod] = {t for t in targets if t in modules and t != mod}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circles():
    """No circle in the package; the checker finds one closed by an import inside a function and
    skips one under ``if TYPE_CHECKING:`` (a synthetic package first)."""
    src = {
        "p.a": "from . import b\n",
        "p.b": "def f():\n    from .c import x\n",
        "p.c": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import f\nfrom .a import y\n",
        "p.d": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .e import g\n",
        "p.e": "from .d import h\n",
    }
    modules = {m: (Path(m.replace(".", "/") + ".py"), ast.parse(s)) for m, s in src.items()}
    assert cycles(import_graph(modules)) == [["p.a", "p.b", "p.c"]]
    found = cycles(import_graph(_modules()))
    assert not found, f"import circles (an import inside a function counts): {found}"


# The layers of docs/architecture.md's layout table, lowest first: a package imports only from its own
# layer's packages or lower ones (an import inside a function counts; ``if TYPE_CHECKING:`` is exempt).
LAYERS = (
    ("helpers",),  # _checks, _array, _math, _safe_io, _safe_yaml, headless_gl
    ("randomization",),
    ("actuators",),
    ("configs",),  # configs.py and _config_*.py
    ("runtime",),
    ("backends",),
    ("envs", "wrappers"),
    ("tasks", "adapters"),
    ("tools",),
    ("actuator_gym",),  # __init__.py, __main__.py
)


def layer_of(mod: str) -> str:
    part = (mod.split(".") + [""])[1]
    if part in ("", "__main__"):
        return "actuator_gym"
    if part == "configs" or part.startswith("_config"):
        return "configs"
    if part.startswith("_") or part == "headless_gl":
        return "helpers"
    return part


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    rank = {name: k for k, names in enumerate(LAYERS) for name in names}
    return sorted(f"{m} -> {t}" for m, ts in graph.items() for t in ts
                  if rank[layer_of(t)] > rank[layer_of(m)])


def test_packages_import_only_their_layer_or_lower_ones():
    """docs/architecture.md's layout: helpers < randomization < actuators < configs < runtime < backends
    < (envs, wrappers) < (tasks, adapters) < tools; the checker finds an upward import in a function."""
    fake = {"actuator_gym.runtime.x": (Path("x.py"), ast.parse("def f():\n    from ..backends import y\n")),
            "actuator_gym.backends": (Path("backends/__init__.py"), ast.parse("from ..runtime import x\n"))}
    assert upward_imports(import_graph(fake)) == ["actuator_gym.runtime.x -> actuator_gym.backends"]
    modules = _modules()
    assert {layer_of(m) for m in modules} <= {n for names in LAYERS for n in names}, "a package outside LAYERS"
    assert not upward_imports(import_graph(modules)), upward_imports(import_graph(modules))


def _private_reads(modules) -> list[tuple[str, int, str]]:
    """``(module, line, 'obj._name')`` for each read of a single-underscore attribute ``_name`` on
    something other than ``self``/``cls``/``super()``/an imported module alias, where ``_name`` is
    defined (assigned, a ``def`` or a class) by another module of the package and not by the reading one."""
    defined: dict[str, set[str]] = {}
    for mod, (_, tree) in modules.items():
        names = set()
        for n in ast.walk(tree):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(n.name)
            elif isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del)):
                names.add(n.attr)
            elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                names.add(n.id)
        defined[mod] = names
    out = []
    for mod, (path, tree) in modules.items():
        aliases = {name for name, target in _imports(mod, path, tree)
                   if target in modules or not target.startswith(PACKAGE.name)}  # modules (ours or not)
        for n in ast.walk(tree):
            if not (isinstance(n, ast.Attribute) and n.attr.startswith("_") and not n.attr.startswith("__")):
                continue
            v = n.value
            if isinstance(v, ast.Name) and v.id in ("self", "cls", *aliases):
                continue
            if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "super":
                continue
            if n.attr in defined[mod] or not any(n.attr in names for m, names in defined.items() if m != mod):
                continue
            out.append((mod, n.lineno, ast.unparse(n)))
    return out


ALLOWED_PRIVATE_READS: set[tuple[str, str]] = set()


def test_no_module_reads_another_modules_private_fields():
    """No module reads another's private fields (the checker first sees one in a synthetic package)."""
    src = {
        "p.a": "class A:\n    def __init__(self):\n        self._x = 1\n        self._y = 2\n",
        "p.b": "from . import a\ndef f(obj, other):\n    return obj._x + a._y + other._unknown\n",
    }
    modules = {m: (Path(m.replace(".", "/") + ".py"), ast.parse(s)) for m, s in src.items()}
    assert _private_reads(modules) == [("p.b", 3, "obj._x")]
    reads = _private_reads(_modules())
    found = [(m, line, expr) for m, line, expr in reads if (m, expr) not in ALLOWED_PRIVATE_READS]
    assert not found, f"reads of another module's private fields (give the owner a public name): {found}"
    stale = ALLOWED_PRIVATE_READS - {(m, expr) for m, _, expr in reads}
    assert not stale, f"allowed reads that no longer occur (remove them from ALLOWED_PRIVATE_READS): {stale}"


ROOT = PACKAGE.parent
_PATH = r"[\w*-][\w.*-]*(?:/[\w.*-]*)+(?:::\w+)?|[\w*-]+\.py(?!\w)(?:::\w+)?"


def _defines(path: Path, name: str) -> bool:
    return re.search(rf"^(?:\s*def |\s*class )?{re.escape(name)}\b", path.read_text(), re.M) is not None


def doc_paths_missing(text: str) -> list[str]:
    """The repository paths ``text`` names (in backticks, or anywhere in a fenced block) that are no
    file or folder: a token of path characters with a ``/`` or ending in ``.py``, resolved against the
    repository root or the package (``*`` globs). ``file.py::test_x`` also needs ``def test_x`` in
    the file, ``pkg/module.Name`` a top-level ``Name`` in ``pkg/module.py``."""
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", text, re.M | re.S)
    tokens = [t for t in re.findall(r"`([^`\n]+)`", re.sub(r"^```.*?^```", "", text, flags=re.M | re.S))
              if re.fullmatch(_PATH, t)]
    tokens += [t.rstrip(".") for b in blocks for t in re.findall(_PATH, b)]
    missing = []
    for token in tokens:
        path, _, name = token.partition("::")
        hits = [p for base in (ROOT, PACKAGE) for p in base.glob(path.rstrip("/")) if p.exists()]
        if not hits and "." in path.rpartition("/")[2] and not path.endswith(".py"):
            module, _, name = path.rpartition(".")
            hits = [p for base in (ROOT, PACKAGE) for p in [base / f"{module}.py"] if p.is_file()]
        if not hits or name and not any(_defines(p, name) for p in hits):
            missing.append(token)
    return missing


def test_architecture_doc_names_only_existing_paths():
    """docs/architecture.md names only files and folders (and tests) that exist; the checker first
    flags a deleted module, a bare name outside the package's top level and a renamed test."""
    text = ("`runtime/rig.py` `actuator_gym/runtime/` `tests/test_layout.py::test_no_import_circles` `tasks/quadruped*.py` "
            "`wrappers/sensor.ObservationSensor` `wrappers/native_execution.py` `mujoco_batch.py` "
            "`tests/test_layout.py::test_gone` `runtime/rig.Gone` `info[\"x\"]` `a.b` `a / b`\n"
            "```\nActuatorRig (runtime/rig.py) -> engine (envs/task_execution.py).\n```\n")
    assert doc_paths_missing(text) == ["wrappers/native_execution.py", "mujoco_batch.py",
                                       "tests/test_layout.py::test_gone", "runtime/rig.Gone", "envs/task_execution.py"]
    missing = doc_paths_missing((ROOT / "docs" / "architecture.md").read_text())
    assert not missing, f"docs/architecture.md names paths that do not exist: {missing}"
