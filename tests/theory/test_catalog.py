"""The statement table (theory/catalog.py) against the registry and the built statements."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import typing
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


def test_registry_holds_exactly_the_catalog_and_its_paper_gradnorm_joint_and_blocks_routes():
    assert set(BUILDERS) == set(catalog.NAMES) | {f"{name}_{route}" for name in catalog.ROUTED
                                                 for route in ("paper", "gradnorm", "joint",
                                                               "blocks")}


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
    assert imported <= {"__future__", "dataclasses", "typing"}


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
                       match="must be one of tight, paper, gradnorm, joint, blocks, got 'fast'"):
        catalog.route_key("theorem1", "fast")


# ------------------------------------------------------------------------------- proof routes

#: The source tree of the three packages (``boundcalc/``, ``theory/``, ``validators/``).
_ROOT = Path(__file__).resolve().parents[2]
_PACKAGES = ("boundcalc", "theory", "validators")
_NAME = "|".join(catalog.ROUTED)
_ROUTE = "|".join(catalog.ROUTES)
_SLOT = r"\{\w*\}|%s"
#: A registry key written out (``"remark9_paper"``) or a template of one (``"{}_paper"``,
#: ``"theorem1_%s"``, ``"_joint"``): a routed statement, ``_`` and a route, either of the two
#: a placeholder.
_KEY_TEXT = re.compile(rf"(?:{_NAME})_(?:{_ROUTE}|{_SLOT})|(?:{_SLOT})?_(?:{_ROUTE})")


def _sources() -> list[Path]:
    return sorted(p for pkg in _PACKAGES for p in (_ROOT / pkg).rglob("*.py"))


def _route_default_problems(source: str) -> list[str]:
    """Each parameter called ``route`` in ``source`` whose default is neither
    ``DEFAULT_ROUTE`` nor None (no route given, which :func:`route_key` reads as the default);
    a parameter without a default is fine (its caller names the route)."""
    problems = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        args = node.args
        positional = [*args.posonlyargs, *args.args]
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        pairs = [*zip(positional, defaults, strict=True),
                 *zip(args.kwonlyargs, args.kw_defaults, strict=True)]
        for arg, default in pairs:
            if arg.arg != "route" or default is None:
                continue
            name = default.id if isinstance(default, ast.Name) else getattr(default, "attr", None)
            if name == "DEFAULT_ROUTE" or (isinstance(default, ast.Constant)
                                           and default.value is None):
                continue
            problems.append(f"{node.name}(route={ast.unparse(default)}) line {node.lineno}")
    return problems


def _hand_built_keys(source: str) -> list[str]:
    """The registry keys ``source`` writes or formats by hand (docstrings aside): a string or
    an f-string template matching :data:`_KEY_TEXT` whole (``… + "_paper"`` included), or
    ``f"{…}_{…route…}"``."""
    tree = ast.parse(source)
    docs = {id(node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            docs.update(id(v) for v in node.values)
            template = "".join(v.value if isinstance(v, ast.Constant) else "{}"
                               for v in node.values)
            # two placeholders (f"{name}_{route}"): a key when the second is a route
            both = template == "{}_{}" and "route" in ast.unparse(node.values[-1])
            if _KEY_TEXT.fullmatch(template) or both:
                found.append(f"{ast.unparse(node)} line {node.lineno}")
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and id(node) not in docs and _KEY_TEXT.fullmatch(node.value)):
            found.append(f"{node.value!r} line {node.lineno}")
    return found


def test_the_route_type_lists_the_routes_with_the_default_first_and_its_subsets():
    assert typing.get_args(catalog.Route) == catalog.ROUTES == ("tight", "paper", "gradnorm",
                                                                "joint", "blocks")
    assert catalog.DEFAULT_ROUTE == catalog.ROUTES[0] == "tight"
    assert catalog.HEAD_AVERAGE_ROUTES == ("tight", "gradnorm", "joint", "blocks")  # all but E_U's
    assert set(catalog.BLOCKWISE_ROUTES) <= set(catalog.HEAD_AVERAGE_ROUTES)
    assert set(catalog.THIRD_MOMENT_ROUTES) <= set(catalog.BLOCKWISE_ROUTES)
    assert catalog.DEFAULT_ROUTE in catalog.THIRD_MOMENT_ROUTES
    assert set(catalog.MEASURED_ROUTES) <= set(catalog.ROUTES)


def test_every_route_parameter_defaults_to_the_default_route():
    """Read from the sources (no torch): every function of boundcalc/, theory/ and validators/
    with a ``route`` parameter defaults it to DEFAULT_ROUTE, to None (no route given: the
    default's key, checked below) or to nothing."""
    assert _route_default_problems("def f(route='paper'): ...\n"
                                   "def g(a, route: str = 'tight'): ...\n"
                                   "def h(*, route=DEFAULT_ROUTE): ...\n"
                                   "def k(route=None, routes=('paper',)): ...") == [
        "f(route='paper') line 1", "g(route='tight') line 2"]
    problems = {str(path.relative_to(_ROOT)): _route_default_problems(path.read_text("utf-8"))
                for path in _sources()}
    assert {k: v for k, v in problems.items() if v} == {}
    for name in catalog.ROUTED:
        assert route_key(name, None) == route_key(name, catalog.DEFAULT_ROUTE) == name
        assert get_statement(name).route == catalog.DEFAULT_ROUTE


@pytest.mark.parametrize("name", ROUTED)
def test_each_routed_builder_defaults_to_the_default_route(name):
    import inspect

    from boundcalc.theory.aposteriori import theorem1_a_posteriori
    from boundcalc.theory.theorem1 import build_bound

    for function in (BUILDERS[name], build_bound, theorem1_a_posteriori):
        assert inspect.signature(function).parameters["route"].default == catalog.DEFAULT_ROUTE


def test_no_module_builds_a_registry_key_by_hand():
    """Only theory/catalog.py's route_key and base_name join a statement and a route: every
    other module of boundcalc/, theory/ and validators/ calls them."""
    assert _hand_built_keys('"""remark9_paper in a docstring"""\n'
                            'a = f"{stem}_paper"\nb = "remark9_paper"\nc = f"{name}_{route}"\n'
                            'd = name + "_gradnorm"\ne = f"labels_within_Y_{route}_{kind}"\n'
                            'g = f"theorem1_a_posteriori_{route}"\nh = "%s_joint" % name') == [
        "f'{stem}_paper' line 2", "f'{name}_{route}' line 4", "'remark9_paper' line 3",
        "'_gradnorm' line 5", "'%s_joint' line 8"]
    found = {str(path.relative_to(_ROOT)): _hand_built_keys(path.read_text("utf-8"))
             for path in _sources() if path != _ROOT / "theory" / "catalog.py"}
    assert {k: v for k, v in found.items() if v} == {}


@pytest.mark.parametrize("row", catalog.FALSIFIERS, ids=lambda row: row.name)
def test_each_falsifier_row_lists_routes_of_the_registry(row):
    assert len(set(row.routes)) == len(row.routes)
    assert set(row.routes) <= set(catalog.ROUTES)
    for route in row.routes:
        assert route_key(ROUTED[0], route) in BUILDERS
    measured = [s.name for s in ROWS if s.check == row.name and s.routed]
    for name in measured:          # a row that measures a routed statement: its keys exist
        assert row.routes
        for route in row.routes:
            assert get_statement(route_key(name, route)).route == route
