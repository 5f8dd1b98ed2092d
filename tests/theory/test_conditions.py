"""Shared hypotheses (theory/conditions.py): one m_even and one rho >= nu for every statement."""

from __future__ import annotations

import pytest
import sympy as sp
from boundcalc.theory import symbols as S
from boundcalc.theory.conditions import m_even_condition, rho_ge_nu_conditions
from boundcalc.theory.registry import BUILDERS, get_statement

BOUNDS = ["theorem1", "theorem1_paper", "prop1", "prop1_paper", "remark9", "remark9_paper",
          "prop2"]


@pytest.mark.parametrize("name", sorted(BUILDERS))
@pytest.mark.slow
def test_every_statement_states_the_shared_m_even(name):
    by_name = {c.name: c for c in get_statement(name).conditions}
    expected = m_even_condition("unit", "eq. 51") if name == "prop2" else m_even_condition()
    assert by_name["m_even"] == expected


@pytest.mark.parametrize("name", BOUNDS)
def test_every_bound_states_rho_ge_nu(name):
    conditions = get_statement(name).conditions
    for condition in rho_ge_nu_conditions():
        assert condition in conditions


def test_m_even_holds_exactly_for_even_widths():
    relation = m_even_condition().relation
    assert relation.subs(S.m, 4) is sp.true
    assert relation.subs(S.m, 5) is sp.false
