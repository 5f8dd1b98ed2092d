"""``boundcalc explain``: title, glossary, every formula (Unicode and LaTeX), every condition."""

from __future__ import annotations

import json

import pytest
from boundcalc.theory.catalog import base_name
from boundcalc.theory.registry import BUILDERS, get_statement


def test_explain_theorem1_mentions_every_term_constant_symbol_and_condition(cli):
    run = cli("explain", "theorem1", "--route", "paper")
    assert run.code == 0
    st = get_statement("theorem1_paper")
    assert st.title in run.out
    for key in (*st.constants, *st.terms, *st.bound):
        assert key in run.out
    for cond in st.conditions:
        assert cond.name in run.out and cond.why in run.out
    for symbol in ("δ", "ρ_c", "ν_w", "σ₂", "η", "K"):
        assert symbol in run.out
    assert "LaTeX:" in run.out and r"\sqrt" in run.out
    assert "= B·ε_lin" in run.out  # the terms are shown in terms of the named constants


@pytest.mark.parametrize("name", sorted(BUILDERS))
@pytest.mark.slow
def test_explain_json_has_a_formula_for_every_quantity(cli, name):
    base, st = base_name(name), get_statement(name)
    route = ("--route", st.route) if base != name else ()
    data = json.loads(cli("explain", base, *route, "--format", "json").out)
    assert data["route"] == (st.route or None)
    for group in ("constants", "terms", "bound"):
        assert set(data["formulas"][group]) == set(getattr(st, group))
        for formula in data["formulas"][group].values():
            assert formula["unicode"] and formula["latex"]
    assert [c["name"] for c in data["conditions"]] == [c.name for c in st.conditions]
    # no Transformer statement depends on the sequence length; the IndRNN's (prop2) must
    assert ("T" in data["symbols"]) == (name == "prop2")


def test_explain_renders_markdown_and_latex(cli):
    assert "### Formulas" in cli("explain", "lemma3", "--format", "markdown").out
    assert r"\begin{align*}" in cli("explain", "lemma3", "--format", "latex").out
