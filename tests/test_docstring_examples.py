"""Every example in every docstring of the installed package runs and prints what it shows.

The modules are collected from the installed ``boundcalc`` package (``pkgutil.walk_packages``),
so a new module's examples run without being listed anywhere; a module that needs torch is
skipped, saying so, where torch is not installed (the calculator's lowest-pins CI step). Each
module's examples run in a fresh copy of its globals, as ``python -m doctest`` would.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil

import boundcalc.theory
import boundcalc.validators
import pytest

import boundcalc


def _modules() -> list[str]:
    """Every module of the package and of its mapped subpackages (an editable install maps
    ``theory/`` and ``validators/`` by name, outside ``boundcalc.__path__``)."""
    names = {"boundcalc"}
    for package in (boundcalc, boundcalc.theory, boundcalc.validators):
        names.add(package.__name__)
        names.update(info.name for info in pkgutil.walk_packages(package.__path__,
                                                                  f"{package.__name__}."))
    return sorted(names)


MODULES = _modules()

#: Modules whose examples need a module that may be absent (the ``validators`` and ``gpu``
#: extras).
OPTIONAL = ("torch", "matplotlib", "triton")

#: Modules that import without it but whose examples use an optional engine (the ``dask`` extra;
#: CI installs it, a machine without it skips these examples, saying so).
EXAMPLES_NEED = {"boundcalc.execution.engines": "dask"}


def test_every_module_is_collected():
    names = set(MODULES)
    assert {"boundcalc.calc.api", "boundcalc.cli", "boundcalc.cli.point",
            "boundcalc.calc.evaluator", "boundcalc.inputs.params", "boundcalc.theory.theorem1",
            "boundcalc.theory.catalog"} <= names
    assert any(name.startswith("boundcalc.validators.") for name in names)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name in OPTIONAL or importlib.util.find_spec(OPTIONAL[0]) is None:
            pytest.skip(f"{name} needs {exc.name}, which is not installed")
        raise
    needed = EXAMPLES_NEED.get(name)
    if needed is not None and importlib.util.find_spec(needed) is None:
        pytest.skip(f"the examples of {name} need {needed}, which is not installed")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} failed"
