"""The shared label tables (theory/labels.py): complete, and where the lemmas take them from."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from boundcalc.theory import labels
from boundcalc.theory.registry import BUILDERS, get_statement

THEORY = Path(labels.__file__).parent


@pytest.mark.parametrize("name", sorted(BUILDERS))
@pytest.mark.slow
def test_every_key_of_every_statement_has_a_description(name):
    statement = get_statement(name)
    keys = {*statement.constants, *statement.terms, *statement.bound}
    assert keys <= set(statement.descriptions)


@pytest.mark.parametrize("module", ["event", "lemma2", "lemma3", "lemma5", "lemma6"])
def test_lemma_modules_never_import_theorem1(module):
    tree = ast.parse((THEORY / f"{module}.py").read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "theorem1" not in imported and not any(m and m.endswith(".theorem1") for m in imported)


def test_label_tables_are_pure_data():
    tree = ast.parse(Path(labels.__file__).read_text(encoding="utf-8"))
    imports = [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)]
    assert all(isinstance(node, ast.ImportFrom) and node.module == "__future__" for node in imports)
