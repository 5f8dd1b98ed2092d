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


def test_sample_size_appears_in_the_theorem_bound():
    assert S.n in get_statement("theorem1").bound["min_iterate"].free_symbols


@pytest.mark.parametrize("suffix", ["", "_paper"])
def test_proposition1_bound_equals_theorem1_bound(suffix):
    thm, prop = get_statement(f"theorem1{suffix}"), get_statement(f"prop1{suffix}")
    for key in thm.bound:
        assert sp.simplify(thm.bound[key] - prop.bound[key]) == 0


@pytest.mark.parametrize("suffix", ["", "_paper"])
@pytest.mark.slow
def test_remark9_reduces_to_theorem1_when_realizable(suffix):
    thm, rem = get_statement(f"theorem1{suffix}"), get_statement(f"remark9{suffix}")
    for key in thm.bound:
        assert sp.simplify(rem.bound[key].subs(S.eps_mis, 0) - thm.bound[key]) == 0, key
    assert "misspecification" in rem.terms


@pytest.mark.parametrize(("name", "linear_key"), [("theorem1_paper", "min_iterate"),
                                                   ("theorem1", "min_iterate_linear_drift")])
def test_theorem1_linear_drift_bound_is_the_sum_of_its_named_terms(name, linear_key):
    thm = get_statement(name)
    assert set(thm.terms) == {"optimization", "linearization", "approximation",
                              "change_of_feature"}
    assert sp.simplify(thm.bound[linear_key] - sp.Add(*thm.terms.values())) == 0


def test_tight_min_iterate_is_the_minimum_of_its_two_drift_bounds():
    bound = get_statement("theorem1").bound
    assert bound["min_iterate"] == sp.Min(bound["min_iterate_linear_drift"],
                                          bound["min_iterate_cauchy_schwarz"])


def test_approximation_bound_is_piecewise_in_the_width_regime():
    pw = approximation_error_bound().atoms(sp.Piecewise)
    assert len(pw) == 1


def test_theorem_conditions_include_symmetric_init_and_rho_ge_nu():
    names = {c.name for c in get_statement("theorem1").conditions}
    assert {"m_even", "rho_c_ge_nu_c", "rho_u_ge_nu_u", "rho_w_ge_nu_w"} <= names


def test_theorem1_reports_the_trivial_bound_b_squared_next_to_its_bound():
    """R̂ ≤ B² holds on Ω_ρ for free (|f − y| ≤ B); reported so that a vacuous bound shows."""
    from boundcalc.theory.lemma6 import residual_envelope

    for name, tight, blockwise in (("theorem1", True, True), ("theorem1_joint", True, False),
                                   ("theorem1_paper", False, False)):
        st = get_statement(name)
        expected = residual_envelope(tight=tight, blockwise=blockwise) ** 2
        assert st.constants["trivial_bound_B2"] == expected
