"""Formulas as a reader sees them (boundcalc/calc/symbolic.py): every abbreviated formula, read
back and with each named quantity replaced by its expression, is the statement's expression
again, and names only quantities listed before it; ``explain`` lists exactly the symbols a
statement uses, each with its meaning; its JSON is the data, its LaTeX ASCII."""

from __future__ import annotations

import json
import re

import pytest
import sympy as sp
from boundcalc.theory import symbols as S
from boundcalc.theory.registry import get_statement

from boundcalc.calc.symbolic import (
    QUANTITY_UNICODE,
    explain_data,
    explain_text,
    formula_tables,
    symbolic_block,
)

#: A point where every symbol has a value that separates the formulas (no 0, no 1), as 40-digit
#: floats (exact rationals would make sympy decide every Min and Piecewise exactly, slowly).
POINT = {symbol: sp.Float(value, 40) for symbol, value in {
    S.m: "64", S.n: "1000", S.d: "8", S.T: "16", S.K: "100", S.b: "4", S.delta: "0.05",
    S.rho_c: "1.5", S.rho_u: "2.3", S.rho_w: "2.5", S.nu_c: "1.2", S.nu_u: "2.25",
    S.nu_w: "1.3", S.sigma0: "1.1", S.sigma1: "0.9", S.sigma2: "0.7", S.eta: "0.001",
    S.eps_mis: "0.02", S.x_max: "1", S.q_max: "1", S.g_max: "1"}.items()}

FAST = ["event", "lemma2", "lemma3", "lemma5", "lemma6"]
SLOW = [pytest.param(name, marks=pytest.mark.slow)
        for name in ("theorem1", "theorem1_paper", "prop2")]


def _ordered(statement_name: str) -> list[tuple[str, str, sp.Expr]]:
    st = get_statement(statement_name)
    groups = [("constants", st.constants), ("terms", st.terms), ("bound", st.bound),
              ("probability", {"probability": st.probability})]
    return [(group, key, sp.sympify(expr)) for group, exprs in groups
            for key, expr in exprs.items()]


def _read_back(text: str, names: dict[str, sp.Symbol]) -> tuple[sp.Expr, set[str]]:
    """The sympy expression a Unicode formula writes, with each display name as its symbol, and
    the names it uses."""
    placeholders = {}
    for i, name in enumerate(sorted(names, key=len, reverse=True)):   # longest first: B² then B
        pattern = rf"(?<!\w){re.escape(name)}(?!\w)"
        if re.search(pattern, text):
            placeholders[f"Q{i}"] = name
            text = re.sub(pattern, f"Q{i}", text)
    text = (text.replace("·", "*").replace("^", "**").replace("√(", "sqrt(")
            .replace("piecewise(", "Piecewise("))
    local = {q: sp.Symbol(q) for q in placeholders}
    expr = sp.sympify(text, locals={**local, "Min": sp.Min, "Max": sp.Max, "log": sp.log,
                                    "sqrt": sp.sqrt, "exp": sp.exp, "Piecewise": sp.Piecewise})
    return expr.xreplace({local[q]: names[n] for q, n in placeholders.items()}), set(
        placeholders.values())


@pytest.mark.parametrize("statement", [*FAST, *SLOW])
def test_every_abbreviated_formula_expands_back_to_its_expression(statement):
    tables = formula_tables(statement)
    paper = {S.UNICODE_NAMES.get(s, s.name): s for s in S.ALL}
    paper.update({s.name: s for s in (*S.GEOMETRY, S.u0_max)})
    ordered = _ordered(statement)
    quantity_names = {QUANTITY_UNICODE.get(key, key) for _, key, _ in ordered}
    stand_ins = {name: sp.Symbol(f"quantity {name}") for name in quantity_names - set(paper)}
    earlier: dict[sp.Symbol, sp.Expr] = {}
    for group, key, expr in ordered:
        read, used = _read_back(tables[group][key]["unicode"], {**paper, **stand_ins})
        named = used - set(paper)
        assert {stand_ins[n] for n in named} <= set(earlier), (key, named)   # earlier only
        expanded = read.xreplace(earlier)
        if expr.is_Boolean or expr.is_number:
            assert sp.simplify(expanded - expr) == 0, key
        else:
            difference = sp.N((expanded - expr).subs(POINT), 40)
            assert abs(difference) <= 1e-30 * (1 + abs(sp.N(expr.subs(POINT), 40))), key
        name = QUANTITY_UNICODE.get(key, key)
        if not expr.is_Atom and name in stand_ins:
            earlier.setdefault(stand_ins[name], expr)


def test_a_later_bound_is_written_in_terms_of_the_earlier_quantities():
    bound = formula_tables("lemma6")["bound"]["loss_gradient_envelope"]["unicode"]
    assert bound.replace(" ", "") in ("2·L·B", "2·B·L")


@pytest.mark.parametrize("statement", [*FAST, "lemma3", "theorem1_paper"])
def test_explain_lists_exactly_the_symbols_the_statement_uses_each_with_its_meaning(statement):
    info = explain_data(statement)
    used = get_statement(statement).free_symbols()
    assert set(info["symbols"]) == {s.name for s in used}
    assert all(entry["meaning"] for entry in info["symbols"].values())


@pytest.mark.parametrize("statement", ["lemma2", "prop1_paper"])
def test_explain_json_is_the_explain_data(statement):
    info = explain_data(statement)
    assert json.loads(explain_text(info, "json")) == info


@pytest.mark.parametrize("statement", ["lemma2", "lemma5"])
def test_the_latex_of_explain_and_symbolic_is_ascii_with_one_row_per_formula(statement):
    info = explain_data(statement)
    n_formulas = sum(len(items) for items in info["formulas"].values())
    text = explain_text(info, "latex")
    assert text.isascii()
    body = text.split(r"\begin{align*}")[1].split(r"\end{align*}")[0]
    assert body.count(" \\\\\n") == n_formulas + len(info["conditions"]) - 1
    block = symbolic_block(statement, "latex")
    assert block.isascii()
    assert block.count(" \\\\\n") == n_formulas - 1


def test_the_markdown_block_shows_each_formula_once_in_unicode_and_latex():
    tables = formula_tables("lemma5")
    block = symbolic_block("lemma5", "markdown")
    for items in tables.values():
        for key, formula in items.items():
            assert block.count(f"- `{key}` = `{formula['unicode']}`") == 1
            assert f"$${formula['latex']}$$" in block


def test_explain_names_the_route_only_where_there_is_one():
    assert explain_data("theorem1_paper")["route"] == "paper"
    assert explain_data("lemma2")["route"] is None
    assert "route:" not in explain_text(explain_data("lemma2"), "table")
