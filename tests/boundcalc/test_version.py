"""The version (boundcalc/version.py): one number, the same in the source, in pyproject.toml and in
the installed package's metadata, in a module that imports nothing, so that every module can
import it without an import cycle."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

import pytest

import boundcalc.version
from boundcalc.version import __version__

ROOT = Path(__file__).resolve().parents[2]


def test_the_version_is_a_pep_440_release_of_three_numbers():
    assert re.fullmatch(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)", __version__), __version__


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is new in Python 3.11")
def test_pyproject_declares_the_version_of_the_source():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["version"] == __version__


def test_the_installed_metadata_carries_the_version_of_the_source():
    assert importlib.metadata.version("boundcalc") == __version__


def test_the_version_module_imports_nothing():
    tree = ast.parse(Path(boundcalc.version.__file__).read_text(encoding="utf-8"))
    assert [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)] == []


def test_version_flag_prints_the_version_of_the_source(cli):
    run = cli("--version")
    assert run.code == 0
    assert run.out == f"boundcalc {__version__}\n"
