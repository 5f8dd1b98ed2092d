"""The paper's symbols (theory/symbols.py): each one named once, positive except ε_mis (which may
be zero), with a display name and a glossary line wherever ``explain`` shows it; the a-priori
geometry substitutes exactly the geometry symbols."""

from __future__ import annotations

import pytest
import sympy as sp
from boundcalc.theory import symbols as S

EVERY = (*S.ALL, *S.GEOMETRY, S.u0_max, S.u0_rms)


def test_every_symbol_has_its_own_name():
    names = [s.name for s in EVERY]
    assert len(set(names)) == len(names)
    for name, value in vars(S).items():
        if isinstance(value, sp.Symbol):
            assert value in EVERY, name


@pytest.mark.parametrize("symbol", EVERY, ids=str)
def test_every_symbol_is_positive_except_the_misspecification_which_may_be_zero(symbol):
    if symbol is S.eps_mis:
        assert symbol.is_nonnegative and symbol.is_positive is None
        assert sp.sqrt(symbol**2) == symbol
    else:
        assert symbol.is_positive


def test_every_symbol_has_a_one_line_glossary_entry():
    assert set(S.GLOSSARY) == set(EVERY)
    assert all(text.strip() and "\n" not in text for text in S.GLOSSARY.values())


def test_every_a_priori_symbol_has_a_distinct_unicode_name():
    assert set(S.UNICODE_NAMES) == set(S.ALL)
    names = list(S.UNICODE_NAMES.values())
    assert len(set(names)) == len(names)


def test_the_a_priori_geometry_sets_each_geometry_symbol_to_one():
    assert dict.fromkeys(S.GEOMETRY, sp.Integer(1)) == S.A_PRIORI_GEOMETRY
    assert not set(S.GEOMETRY) & set(S.ALL)


def test_sympy_simplifies_with_the_declared_signs():
    assert sp.sqrt(S.m**2) == S.m
    assert sp.simplify(sp.log(S.m / (2 * S.delta)) - sp.log(S.m) + sp.log(2 * S.delta)) == 0
    assert sp.limit(S.K / (S.K + 1), S.K, sp.oo) == 1
