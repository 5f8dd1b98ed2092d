"""Remark 9 (theory/remark9.py): non-realizable labels add B·ε_mis to Theorem 1: Theorem 1's
numbers when ε_mis = 0, a term B·ε_mis, Y raised by ε_mis, every bound growing with it."""

from __future__ import annotations

import pytest
import sympy as sp
from boundcalc.theory import get_statement
from boundcalc.theory import symbols as S
from boundcalc.theory.remark9 import remark9

from boundcalc.calc.api import evaluate
from boundcalc.inputs.params import validate


@pytest.mark.parametrize("suffix", ["", "_paper"])
@pytest.mark.slow
def test_remark9_reduces_to_theorem1_when_realizable(suffix):
    thm, rem = get_statement(f"theorem1{suffix}"), get_statement(f"remark9{suffix}")
    for key in thm.bound:
        assert sp.simplify(rem.bound[key].subs(S.eps_mis, 0) - thm.bound[key]) == 0, key
    assert "misspecification" in rem.terms


@pytest.mark.parametrize("route", ["tight", "paper"])
def test_realizable_remark9_numbers_are_theorem1_numbers(route):
    inputs = validate(m=2048, n=10**4, rho="3", misspecification="0")
    thm = evaluate("theorem1" if route == "tight" else "theorem1_paper", inputs)
    rem = evaluate("remark9" if route == "tight" else "remark9_paper", inputs)
    assert rem.bound == thm.bound
    assert {k: v for k, v in rem.terms.items() if k != "misspecification"} == thm.terms
    assert rem.terms["misspecification"] == 0


@pytest.mark.parametrize("route", ["tight", "paper"])
def test_the_misspecification_term_is_b_times_eps_mis(route):
    statement = remark9(route)
    assert sp.simplify(statement.terms["misspecification"]
                       - statement.constants["residual_envelope_B"] * S.eps_mis) == 0


@pytest.mark.parametrize("route", ["tight", "paper"])
def test_eps_mis_raises_the_label_envelope_by_itself(route):
    y = remark9(route).constants["label_envelope_Y"]
    assert sp.simplify(y - y.subs(S.eps_mis, 0) - S.eps_mis) == 0


@pytest.mark.parametrize("key", ["min_iterate", "average_iterate"])
def test_every_bound_grows_with_the_misspecification(key):
    values = [evaluate("remark9", validate(m=2**20, n=1000, rho="3", misspecification=eps)
                       ).bound[key] for eps in ("0", "1e-4", "0.01", "0.1", "1")]
    assert all(a < b for a, b in zip(values, values[1:], strict=False))
