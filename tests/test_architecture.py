"""The structure docs/architecture.md describes: adding a statement takes a theory module and a
catalog row, a flag reaches its formula through its parameter row, the calculator path
imports neither torch nor the validators, and no module imports another module's private
(underscore) names."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from boundcalc.theory.catalog import STATEMENTS

from boundcalc.inputs.params import ARGUMENT_NAMES, PARAMS

#: The end of both toy scripts below: the module ``toy`` (defining ``toy()``) becomes the theory
#: module of a catalog row, then the CLI runs with the script's arguments.
_REGISTER_TOY_AND_RUN = """
module.toy = toy
sys.modules["boundcalc.theory.toy"] = module
row = catalog.StatementInfo(name="toy", module="toy", routed=False, what="Toy (a test)",
                            help="Toy (a test).", uses_step_size=False)
catalog.STATEMENTS += (row,)
catalog.NAMES += ("toy",)
catalog.BY_NAME["toy"] = row

from boundcalc.cli import main
sys.exit(main(sys.argv[1:]))
"""

#: A toy statement added the documented way (a module with a builder named like the command, a
#: catalog row), in a fresh process; then its command runs.
_ADD_A_STATEMENT = """
import sys, types
import sympy as sp
from boundcalc.theory import catalog
from boundcalc.theory import symbols as S
from boundcalc.theory.statement import Condition, Statement

module = types.ModuleType("boundcalc.theory.toy")
def toy():
    width_term = S.rho_c / sp.sqrt(S.m)
    return Statement(
        name="toy", title="Toy bound", summary="rho_c / sqrt(m), doubled.",
        constants={"width_term": width_term}, terms={}, bound={"doubled": 2 * width_term},
        probability=1 - S.delta,
        conditions=(Condition("m_even", sp.Eq(sp.Mod(S.m, 2), 0), "m even", "symmetric init"),),
        descriptions={"width_term": "rho_c / sqrt(m)", "doubled": "twice that"})
""" + _REGISTER_TOY_AND_RUN


#: A toy input added the documented way (its sympy symbol, one row in the table of params.py:
#: the module is run from its source with the row added, before anything imports it), in a
#: fresh process; a toy statement using it is added as above, then its commands run.
_ADD_AN_INPUT = """
import importlib.util, sys, types
import sympy as sp
import boundcalc
from boundcalc.theory import catalog
from boundcalc.theory import symbols as S
from boundcalc.theory.statement import Statement

S.gamma = sp.Symbol("gamma", positive=True)
S.ALL = (*S.ALL, S.gamma)

assert "boundcalc.inputs.params" not in sys.modules
spec = importlib.util.find_spec("boundcalc.inputs.params")
source = open(spec.origin, encoding="utf-8").read()
end_of_table = "\\n)\\n\\n#: Names of the sympy symbols"
assert source.count(end_of_table) == 1
row = ('\\n    Param("gamma", "--gamma", ("gamma",), ("gamma",), "1", "positive", "G", '
       '"a toy scale (> 0)", commands=("toy",), example="3"),')
params = importlib.util.module_from_spec(spec)
sys.modules["boundcalc.inputs.params"] = params
boundcalc.inputs.params = params
exec(compile(source.replace(end_of_table, row + end_of_table), spec.origin, "exec"),
     params.__dict__)

module = types.ModuleType("boundcalc.theory.toy")
def toy():
    scaled = S.gamma * S.rho_c / sp.sqrt(S.m)
    return Statement(
        name="toy", title="Toy bound", summary="gamma rho_c / sqrt(m).", constants={},
        terms={}, bound={"scaled": scaled}, probability=1 - S.delta, conditions=(),
        descriptions={"scaled": "gamma rho_c / sqrt(m)"})
""" + _REGISTER_TOY_AND_RUN


def _run(*args: str, script: str = _ADD_A_STATEMENT) -> subprocess.CompletedProcess:
    env = {**os.environ, "BOUNDCALC_NO_CACHE": "1"}
    return subprocess.run([sys.executable, "-c", script, *args], capture_output=True,
                          text=True, env=env, cwd=tempfile.gettempdir(), timeout=300)


@pytest.mark.slow
def test_a_statement_added_as_documented_gets_its_command_sweep_and_explain():
    point = _run("toy", "--m", "16", "--rho", "2", "--format", "json")
    assert point.returncode == 0, point.stderr
    data = json.loads(point.stdout)
    assert data["statement"]["title"] == "Toy bound"
    assert data["bound"]["doubled"] == 1.0  # 2 * 2 / sqrt(16)
    assert data["conditions"] == [
        {"name": "m_even", "holds": True, "detail": "m even holds (m = 16)"}]
    sweep = _run("sweep", "toy", "--m", "4,16", "--format", "csv", "--columns", "m,doubled")
    assert sweep.returncode == 0, sweep.stderr
    assert sweep.stdout.split() == ["m,bound.doubled", "4,2.0", "16,1.0"]
    explain = _run("explain", "toy")
    assert explain.returncode == 0 and "rho_c / sqrt(m)" in explain.stdout
    listing = _run("--help")
    assert "toy" in listing.stdout and "Toy (a test)." in listing.stdout


@pytest.mark.slow
def test_every_flag_names_symbols_of_the_theory_and_every_statement_a_module():
    from importlib import import_module

    from boundcalc.theory import symbols as S

    names = {s.name for s in S.ALL}
    for param in PARAMS.values():
        assert param.flag.startswith("--") and set(param.symbols) <= names, param
    assert set(ARGUMENT_NAMES) == names
    for row in STATEMENTS:
        builder = getattr(import_module(f"boundcalc.theory.{row.module}"), row.name)
        assert builder().name == row.name


@pytest.mark.slow
def test_the_calculator_imports_neither_torch_nor_the_validators():
    code = ("import sys; from boundcalc.cli import main; "
            "main(['theorem1', '--output', '/dev/null']); main(['sweep', 'theorem1', '--m', "
            "'8,16', '--output', '/dev/null']); main(['explain', 'lemma2', '--output', "
            "'/dev/null']); print(sorted(m for m in sys.modules if m == 'torch' or "
            "m.startswith('boundcalc.validators')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tempfile.gettempdir(), timeout=300, check=True)
    assert proc.stdout.split("\n")[-2] == "[]"


def test_an_input_added_as_a_parameter_row_and_its_symbol_reaches_every_command():
    point = _run("toy", "--m", "16", "--rho", "2", "--gamma", "3", "--format", "json",
                 script=_ADD_AN_INPUT)
    assert point.returncode == 0, point.stderr
    data = json.loads(point.stdout)
    assert data["bound"]["scaled"] == 1.5  # 3 * 2 / sqrt(16)
    assert data["inputs"]["gamma"] == 3.0
    default = _run("toy", "--m", "16", "--rho", "2", "--format", "json", script=_ADD_AN_INPUT)
    assert json.loads(default.stdout)["bound"]["scaled"] == 0.5  # the row's default, 1
    bad = _run("toy", "--gamma", "-1", script=_ADD_AN_INPUT)
    assert (bad.returncode, bad.stderr) == (2, "error: --gamma must be > 0, got '-1'\n")
    sweep = _run("sweep", "toy", "--m", "16", "--gamma", "1,3", "--format", "csv",
                 "--columns", "gamma,scaled", script=_ADD_AN_INPUT)
    assert sweep.returncode == 0, sweep.stderr
    assert sweep.stdout.split() == ["gamma,bound.scaled", "1.0,0.5", "3.0,1.5"]
    listing = _run("toy", "--help", script=_ADD_AN_INPUT)
    assert "--gamma" in listing.stdout and "a toy scale" in listing.stdout


def _package_sources() -> dict[str, tuple[str, str]]:
    """Every module of the installed ``boundcalc``, ``boundcalc.theory`` and
    ``boundcalc.validators`` (``theory/`` and ``validators/`` in the source tree): dotted name →
    (path, source). Nothing is imported but the top package, so no torch is needed."""
    out: dict[str, tuple[str, str]] = {}
    for package in ("boundcalc", "boundcalc.theory", "boundcalc.validators"):
        root = Path(importlib.util.find_spec(package).origin).parent
        for path in sorted(root.rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if package == "boundcalc" and parts[0] in ("theory", "validators"):
                continue  # a non-editable install holds them inside boundcalc/: their own roots
            name = ".".join((package, *parts)).removesuffix(".__init__")
            out[name] = (str(path), path.read_text(encoding="utf-8"))
    return out


def private_imports(sources: dict[str, tuple[str, str]]) -> list[str]:
    """``"path: module.name"`` for every ``from M import _name`` (also inside functions,
    relative imports resolved) where M is another module of ``sources`` (dotted name →
    (path, source)); dunder names are not private."""
    found = []
    for name, (path, source) in sources.items():
        package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(source, path)):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            if module in sources and module != name:
                found += [f"{path}: {module}.{alias.name}" for alias in node.names
                          if alias.name.startswith("_") and not alias.name.startswith("__")]
    return found


def test_no_module_imports_another_modules_private_names():
    sources = _package_sources()
    assert {"boundcalc.cli.app", "boundcalc.theory.catalog"} <= set(sources)
    assert any(name.startswith("boundcalc.validators.checks.") for name in sources)
    assert private_imports(sources) == []


def test_private_imports_names_the_file_and_the_name():
    sources = {
        "boundcalc.a": ("boundcalc/a.py", "def _f(): pass\n_G = 1\n"),
        "boundcalc.sub": ("boundcalc/sub/__init__.py", ""),
        "boundcalc.sub.b": ("boundcalc/sub/b.py",
                            "from ..a import _f\nfrom boundcalc.a import __doc__, public\n"
                            "from os import _exit\nfrom . import _c\ndef g():\n"
                            "    from boundcalc import a\n    from boundcalc.a import _G\n"),
        "boundcalc.sub.c": ("boundcalc/sub/c.py", "from .c import _own\n"),
    }
    assert private_imports(sources) == [
        "boundcalc/sub/b.py: boundcalc.a._f", "boundcalc/sub/b.py: boundcalc.sub._c",
        "boundcalc/sub/b.py: boundcalc.a._G"]


#: ``boundcalc``'s floors, top to bottom (docs/architecture.md draws the same table): a package
#: imports only packages on lower floors, never one on its own floor or above (imports inside
#: functions count). ``face`` is the public face (``boundcalc/__init__.py``, ``__main__.py``,
#: ``notebook.py``, ``experiment_api.py``); ``base`` the leaves every floor may use
#: (``errors.py``, ``version.py``, ``files.py``); ``theory`` the sympy statements.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("face",),
    ("cli",),
    ("checking",),
    ("validation",),
    ("execution", "generalization"),
    ("runs",),
    ("calc", "experiments"),
    ("inputs",),
    ("render",),
    ("base", "theory"),
)
#: The top-level modules of ``base``; every other top-level module is the face.
BASE_MODULES = ("boundcalc.errors", "boundcalc.version", "boundcalc.files")
#: The packages that may import ``boundcalc.validators`` (torch), and only inside a function:
#: the validators are found by name when a check, a validation or an experiment runs.
VALIDATOR_USERS = ("face", "cli", "checking", "validation")


def package_of(module: str) -> str:
    """The room of a dotted module name of ``boundcalc``: its subpackage, ``theory``,
    ``validators``, ``base`` or ``face``.

    Example:
        >>> package_of("boundcalc.calc.api"), package_of("boundcalc.errors")
        ('calc', 'base')
    """
    parts = module.split(".")
    if len(parts) == 1 or (len(parts) == 2 and module not in BASE_MODULES
                           and parts[1] not in ("theory", "validators", *_subpackages())):
        return "face"
    return "base" if module in BASE_MODULES else parts[1]


def _subpackages() -> tuple[str, ...]:
    return tuple(room for floor in FLOORS for room in floor if room not in ("face", "base"))


def floor_violations(sources: dict[str, tuple[str, str]]) -> list[str]:
    """``"path: importer -> imported"`` for every import (also inside functions, relative ones
    resolved) that goes to the importer's own floor or above, or to the validators from a room
    not in :data:`VALIDATOR_USERS` or at a module's top level; and for every import of the
    face or the CLI from the validators."""
    floor = {room: k for k, rooms in enumerate(FLOORS) for room in rooms}
    found = []
    for name, (path, source) in sources.items():
        here = package_of(name)
        package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
        tree = ast.parse(source, path)
        top_level = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    targets = [f"{base}.{node.module}" if node.module else base]
                else:
                    targets = [node.module or ""]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                continue
            for target in targets:
                if not target.startswith("boundcalc"):
                    continue
                there = package_of(target)
                if there == here or target == "boundcalc":
                    continue
                if there == "validators":
                    if here not in VALIDATOR_USERS or id(node) in top_level:
                        found.append(f"{path}: {name} -> {target}")
                elif here == "validators":
                    if there in ("face", "cli"):
                        found.append(f"{path}: {name} -> {target}")
                elif here == "theory" or floor[there] <= floor[here]:
                    found.append(f"{path}: {name} -> {target}")
    return found


def test_every_package_imports_only_lower_floors():
    sources = _package_sources()
    rooms = {package_of(name) for name in sources}
    assert rooms == {room for floor in FLOORS for room in floor} | {"validators"}
    assert floor_violations(sources) == []


def test_floor_violations_names_an_import_up_a_sideways_and_a_top_level_torch_import():
    sources = {
        "boundcalc.render.latex": ("boundcalc/render/latex.py",
                                   "from boundcalc.calc import api\n"),
        "boundcalc.calc.api": ("boundcalc/calc/api.py",
                               "from boundcalc.errors import InputError\n"
                               "def f():\n    from ..render import latex\n"),
        "boundcalc.execution.executors": ("boundcalc/execution/executors.py",
                                          "import boundcalc.generalization.bound\n"),
        "boundcalc.checking.runcheck": ("boundcalc/checking/runcheck.py",
                                        "import boundcalc.validators.model\n"
                                        "def g():\n    import boundcalc.validators.checks\n"),
    }
    assert floor_violations(sources) == [
        "boundcalc/render/latex.py: boundcalc.render.latex -> boundcalc.calc",
        "boundcalc/execution/executors.py: boundcalc.execution.executors -> "
        "boundcalc.generalization.bound",
        "boundcalc/checking/runcheck.py: boundcalc.checking.runcheck -> "
        "boundcalc.validators.model"]
