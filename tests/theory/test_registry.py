"""Structural properties of the symbolic statements (no numbers involved)."""

from __future__ import annotations

import pytest
import sympy as sp
from boundcalc.theory import BUILDERS, get_statement
from boundcalc.theory import symbols as S
from boundcalc.theory.lemma5 import approximation_log_factor

ALL_STATEMENTS = sorted(BUILDERS)
#: The IndRNN statement (Proposition 2) depends on T by design (its cutoff); every other one is a
#: Transformer statement and must not (Remark 3).
TRANSFORMER_STATEMENTS = [name for name in ALL_STATEMENTS if name != "prop2"]


@pytest.mark.parametrize("name", TRANSFORMER_STATEMENTS)
@pytest.mark.slow
def test_no_transformer_expression_contains_sequence_length(name):
    statement = get_statement(name)
    assert S.T not in statement.free_symbols()
    for key, expr in statement.expressions().items():
        assert S.T not in sp.sympify(expr).free_symbols, key


@pytest.mark.parametrize("name", ALL_STATEMENTS)
def test_free_symbols_are_named_paper_symbols(name):
    assert get_statement(name).free_symbols() <= set(S.ALL)


@pytest.mark.parametrize("name", ["theorem1", "prop1", "remark9", "lemma5"])
def test_sample_size_enters_only_through_the_union_bound_logarithm(name):
    ell = sp.Symbol("ell", positive=True)
    for key, expr in get_statement(name).expressions().items():
        replaced = sp.sympify(expr).subs(approximation_log_factor(), ell)
        assert S.n not in replaced.free_symbols, key
