"""The repository and the wheel stand on their own: packaging covers every package and preset folder,
and nothing reads a path outside the repository."""

import tomllib
from pathlib import Path

import actuator_gym
from actuator_gym import configs

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _setuptools():
    return PYPROJECT["tool"]["setuptools"]


def test_every_python_package_is_in_the_wheel():
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "actuator_gym").rglob("__init__.py")}
    listed = set(_setuptools()["packages"])
    assert found <= listed, f"packages missing from pyproject [tool.setuptools].packages: {sorted(found - listed)}"


def test_every_preset_file_is_package_data():
    """configs/ is mapped to actuator_gym.presets; each of its files must match a package-data glob."""
    st = _setuptools()
    assert st["package-dir"]["actuator_gym.presets"] == "configs"
    data = st["package-data"]
    missing = []
    for f in (ROOT / "configs").rglob("*"):
        if not f.is_file():
            continue
        pkg = ".".join(("actuator_gym", "presets", *f.parent.relative_to(ROOT / "configs").parts))
        if pkg not in st["packages"] or not any(f.match(g) for g in data.get(pkg, [])):
            missing.append(str(f.relative_to(ROOT)))
    assert not missing, f"files of configs/ the wheel would not ship: {missing}"


def test_presets_come_from_configs_in_a_checkout():
    assert configs.preset_dir() == ROOT / "configs"
    names = configs.list_presets()
    assert {p.stem for p in (ROOT / "configs").rglob("*.yaml")} == set(names)
    for name in names:  # every bundled file validates
        configs.load(name)


def test_no_path_outside_the_repository():
    """Neither the package nor the tests name the sibling shared/ folder or its variable."""
    offenders = []
    for folder in (ROOT / "actuator_gym", ROOT / "tests", ROOT / "benchmarks"):
        for f in folder.rglob("*.py"):
            if f.resolve() == Path(__file__).resolve():
                continue
            text = f.read_text()
            if "ACTUATOR_GYM_SHARED" in text or "../shared" in text or '"shared"' in text:
                offenders.append(str(f.relative_to(ROOT)))
    assert not offenders, offenders
    assert Path(actuator_gym.__file__).resolve().is_relative_to(ROOT)


def test_the_dependency_ranges_are_what_ci_runs():
    """Every requirement of the wheel (core and extras) admits the version CI pins in
    requirements-ci.txt, starts there, and torch / MuJoCo / Gymnasium stop before a release CI has not run."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
    from packaging.version import Version

    pins = {}
    for line in (ROOT / "requirements-ci.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if "==" in line:
            name, version = line.split("==")
            pins[canonicalize_name(name)] = Version(version)
    project = PYPROJECT["project"]
    reqs = [Requirement(r) for r in project["dependencies"]]
    reqs += [Requirement(r) for extra in project["optional-dependencies"].values() for r in extra if "actuator-gym" not in r]
    checked = 0
    for r in reqs:
        pin = pins.get(canonicalize_name(r.name))
        if pin is None:
            continue
        assert pin in r.specifier, f"{r}: CI runs {r.name}=={pin}"
        lows = [Version(s.version) for s in r.specifier if s.operator == ">="]
        assert lows and max(lows).release[:2] == pin.release[:2], f"{r}: the range starts below the {pin} CI runs"
        checked += 1
    assert checked >= 20
    core = {canonicalize_name(r.name): r.specifier for r in map(Requirement, project["dependencies"])}
    for name in ("torch", "mujoco", "gymnasium"):
        nxt = pins[name].release
        assert Version(f"{nxt[0]}.{nxt[1] + 1}") not in core[name], f"{name} {core[name]} admits the next minor release"
    assert Version("4.0.1") not in core["mujoco"]  # CI runs 4.0.0 only
