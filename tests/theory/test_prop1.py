"""Proposition 1 (theory/prop1.py): ProjSGD with minibatch size b, Theorem 1's bound in
expectation: the same numbers as Theorem 1, b only in its condition b ≤ n, probability 1 − 2δ."""

from __future__ import annotations

import pytest
import sympy as sp
from boundcalc.theory import get_statement
from boundcalc.theory import symbols as S
from boundcalc.theory.prop1 import prop1

from boundcalc.calc.api import evaluate
from boundcalc.inputs.params import validate


@pytest.mark.parametrize("suffix", ["", "_paper"])
def test_proposition1_bound_equals_theorem1_bound(suffix):
    thm, prop = get_statement(f"theorem1{suffix}"), get_statement(f"prop1{suffix}")
    for key in thm.bound:
        assert sp.simplify(thm.bound[key] - prop.bound[key]) == 0


@pytest.mark.parametrize("route", ["tight", "paper"])
def test_the_minibatch_size_enters_only_through_its_condition(route):
    statement = prop1(route)
    for key, expr in statement.expressions().items():
        assert S.b not in sp.sympify(expr).free_symbols, key
    assert [c.name for c in statement.conditions if S.b in c.relation.free_symbols] == [
        "batch_le_n"]


@pytest.mark.parametrize(("b", "n", "holds"), [(1, 1000, True), (1000, 1000, True),
                                               (1001, 1000, False)])
def test_a_minibatch_larger_than_the_sample_fails_its_condition_and_the_guarantee(b, n, holds):
    res = evaluate("prop1", validate(m=8192, n=n, batch_size=b, rho="3"))
    by_name = {c.name: c.holds for c in res.conditions}
    assert by_name["batch_le_n"] is holds
    if not holds:
        assert res.verdict == "not_guaranteed"


@pytest.mark.parametrize("route", ["tight", "paper"])
def test_the_probability_is_one_minus_two_delta_over_the_init(route):
    assert prop1(route).probability == 1 - 2 * S.delta


def test_prop1_numbers_are_theorem1_numbers_at_every_input():
    inputs = validate(m=2048, n=10**5, d=16, rho="2,3,4", nu="1,2,3", batch_size=32)
    thm, prop = evaluate("theorem1", inputs), evaluate("prop1", inputs)
    assert prop.constants == thm.constants and prop.terms == thm.terms
    assert prop.bound == thm.bound
