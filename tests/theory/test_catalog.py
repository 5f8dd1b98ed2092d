"""The statement table (theory/catalog.py) against the registry and the built statements."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from boundcalc.theory import catalog
from boundcalc.theory.registry import BUILDERS, ROUTED, get_statement, routed_name

ROWS = catalog.STATEMENTS


def test_catalog_lists_the_statements_in_cli_order():
    assert catalog.NAMES == ("event", "lemma2", "lemma3", "lemma5", "lemma6", "theorem1",
                             "prop1", "remark9", "prop2")
    assert tuple(catalog.BY_NAME) == catalog.NAMES
    assert catalog.ROUTED == ROUTED == ("theorem1", "prop1", "remark9")


def test_registry_holds_exactly_the_catalog_and_its_paper_and_gradnorm_routes():
    assert set(BUILDERS) == set(catalog.NAMES) | {f"{name}_{route}" for name in catalog.ROUTED
                                                 for route in ("paper", "gradnorm")}


def test_base_name_strips_only_a_route_suffix_of_a_routed_statement():
    assert [catalog.base_name(k) for k in ("theorem1_paper", "remark9_gradnorm", "prop2",
                                           "lemma2_paper")] == ["theorem1", "remark9", "prop2",
                                                                "lemma2_paper"]


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.name)
def test_builder_is_the_function_named_like_the_command_in_its_module(row):
    builder = BUILDERS[row.name]
    assert builder.__module__ == f"boundcalc.theory.{row.module}"
    assert builder.__name__ == row.name
    assert get_statement(row.name).name == row.name


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.name)
def test_routed_flag_matches_the_statement_route(row):
    if row.routed:
        assert get_statement(row.name).route == "tight"
        assert get_statement(routed_name(row.name, "paper")).route == "paper"
    else:
        assert get_statement(row.name).route == ""
        assert routed_name(row.name, "paper") == row.name


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.name)
def test_uses_step_size_matches_the_statement_constants(row):
    for route in ("tight", "paper"):
        statement = get_statement(routed_name(row.name, route))
        assert ("theorem_step_size" in statement.constants) is row.uses_step_size, route


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.name)
def test_help_texts_are_one_line(row):
    assert row.what and row.help and "\n" not in row.what + row.help
    assert row.help.endswith(".")


def test_catalog_is_pure_data():
    tree = ast.parse(Path(catalog.__file__).read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module or "." for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported <= {"__future__", "dataclasses"}


def test_importing_the_catalog_imports_no_sympy_and_no_other_theory_module(tmp_path):
    code = ("import sys; import boundcalc.theory.catalog; "
            "print(sorted(m for m in sys.modules if m == 'sympy' or "
            "m.startswith('boundcalc.theory.')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "['boundcalc.theory.catalog']"


def test_activation_names_are_the_presets_of_the_theory():
    from boundcalc.theory.activations import PRESETS
    from boundcalc.theory.catalog import ACTIVATIONS

    assert tuple(PRESETS) == ACTIVATIONS


def test_the_parameter_table_sets_every_symbol_a_statement_may_contain():
    from boundcalc.theory import symbols as S

    from boundcalc.params import ARGUMENT_NAMES

    assert sorted(ARGUMENT_NAMES) == sorted(s.name for s in S.ALL)
    assert len(set(ARGUMENT_NAMES)) == len(ARGUMENT_NAMES)
