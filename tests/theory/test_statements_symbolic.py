"""Structural properties of the symbolic statements (no numbers involved)."""

from __future__ import annotations

import pytest
import sympy as sp
from boundcalc.theory import BUILDERS, get_statement
from boundcalc.theory import symbols as S
from boundcalc.theory.lemma5 import approximation_error_bound, approximation_log_factor

ALL_STATEMENTS = sorted(BUILDERS)
#: The IndRNN statement (Proposition 2) depends on T by design (its cutoff); every other one is a
#: Transformer statement and must not (Remark 3).
TRANSFORMER_STATEMENTS = [name for name in ALL_STATEMENTS if name != "prop2"]


@pytest.mark.parametrize("name", TRANSFORMER_STATEMENTS)
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


def test_sample_size_appears_in_the_theorem_bound():
    assert S.n in get_statement("theorem1").bound["min_iterate"].free_symbols


def test_proposition1_bound_equals_theorem1_bound():
    thm, prop = get_statement("theorem1"), get_statement("prop1")
    for key in thm.bound:
        assert sp.simplify(thm.bound[key] - prop.bound[key]) == 0


def test_remark9_reduces_to_theorem1_when_realizable():
    thm, rem = get_statement("theorem1"), get_statement("remark9")
    diff = rem.bound["min_iterate"].subs(S.eps_mis, 0) - thm.bound["min_iterate"]
    assert sp.simplify(diff) == 0
    assert "misspecification" in rem.terms


def test_theorem1_min_iterate_is_the_sum_of_its_named_terms():
    thm = get_statement("theorem1")
    assert set(thm.terms) == {"optimization", "linearization", "approximation",
                              "change_of_feature"}
    assert sp.simplify(thm.bound["min_iterate"] - sp.Add(*thm.terms.values())) == 0


def test_approximation_bound_is_piecewise_in_the_width_regime():
    pw = approximation_error_bound().atoms(sp.Piecewise)
    assert len(pw) == 1


def test_theorem_conditions_include_symmetric_init_and_rho_ge_nu():
    names = {c.name for c in get_statement("theorem1").conditions}
    assert {"m_even", "rho_c_ge_nu_c", "rho_u_ge_nu_u", "rho_w_ge_nu_w"} <= names


def test_theorem1_reports_the_trivial_bound_b_squared_next_to_its_bound():
    """R̂ ≤ B² holds on Ω_ρ for free (|f − y| ≤ B); reported so that a vacuous bound shows."""
    from boundcalc.theory.lemma6 import residual_envelope

    st = get_statement("theorem1")
    assert sp.simplify(st.constants["trivial_bound_B2"] - residual_envelope() ** 2) == 0
