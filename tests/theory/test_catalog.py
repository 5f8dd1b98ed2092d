"""The statement table (theory/catalog.py) against the registry and the built statements."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from boundcalc.theory import catalog
from boundcalc.theory.catalog import route_key
from boundcalc.theory.registry import BUILDERS, ROUTED, get_statement

ROWS = catalog.STATEMENTS


def test_catalog_lists_the_statements_in_cli_order():
    assert catalog.NAMES == ("event", "lemma2", "lemma3", "lemma5", "lemma6", "theorem1",
                             "prop1", "remark9", "prop2")
    assert tuple(catalog.BY_NAME) == catalog.NAMES
    assert catalog.ROUTED == ROUTED == ("theorem1", "prop1", "remark9")


def test_registry_holds_exactly_the_catalog_and_its_paper_gradnorm_and_joint_routes():
    assert set(BUILDERS) == set(catalog.NAMES) | {f"{name}_{route}" for name in catalog.ROUTED
                                                 for route in ("paper", "gradnorm", "joint")}


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
        assert get_statement(route_key(row.name, "paper")).route == "paper"
    else:
        assert get_statement(row.name).route == ""
        with pytest.raises(ValueError, match="has one proof route"):
            route_key(row.name, "paper")


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.name)
def test_uses_step_size_matches_the_statement_constants(row):
    for route in ("tight", "paper"):
        statement = get_statement(route_key(row.name, route if row.routed else None))
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

    from boundcalc.inputs.params import ARGUMENT_NAMES

    assert sorted(ARGUMENT_NAMES) == sorted(s.name for s in S.ALL)
    assert len(set(ARGUMENT_NAMES)) == len(ARGUMENT_NAMES)


def test_every_statement_names_a_falsifier_row_or_none():
    for row in ROWS:
        assert row.check is None or row.check in catalog.FALSIFIER, row.name
    assert catalog.BY_NAME["remark9"].check == "theorem1"  # its bound is measured in that run
    assert tuple(catalog.FALSIFIER) == tuple(f.name for f in catalog.FALSIFIERS)


def _validators_folder() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("boundcalc.validators")  # the package, not its torch modules
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations)))


@pytest.mark.parametrize("row", catalog.FALSIFIERS, ids=lambda row: row.name)
def test_each_falsifier_names_a_function_of_settings_and_seed_in_its_module(row):
    """Read from the source (no torch): the module of :mod:`boundcalc.validators` the row names
    defines the row's function with the parameters (settings, seed)."""
    path = _validators_folder().joinpath(*row.module.split(".")).with_suffix(".py")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert row.function in functions, f"{path} defines no {row.function}"
    assert [a.arg for a in functions[row.function].args.args] == ["settings", "seed"]
    exported = next(node for node in tree.body if isinstance(node, ast.Assign)
                    and getattr(node.targets[0], "id", None) == "__all__")
    assert row.function in ast.literal_eval(exported.value)
    assert row.measures and "\n" not in row.measures


def test_route_key_is_the_inverse_of_base_name_and_refuses_an_unknown_route():
    for name in catalog.ROUTED:
        for route in catalog.ROUTES:
            assert catalog.base_name(catalog.route_key(name, route)) == name
    with pytest.raises(ValueError,
                       match="must be one of tight, paper, gradnorm, joint, got 'fast'"):
        catalog.route_key("theorem1", "fast")
