"""Theorem 1 (theory/theorem1.py): the bound assembled from Lemmas 2–6, its named terms, its
conditions and the trivial bound B² reported beside it."""

from __future__ import annotations

import pytest
import sympy as sp
from boundcalc.theory import get_statement
from boundcalc.theory import symbols as S


def test_sample_size_appears_in_the_theorem_bound():
    assert S.n in get_statement("theorem1").bound["min_iterate"].free_symbols


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
