"""Proposition 1 (theory/prop1.py): ProjSGD with minibatch size b, Theorem 1's bound in
expectation."""

from __future__ import annotations

import pytest
import sympy as sp
from boundcalc.theory import get_statement


@pytest.mark.parametrize("suffix", ["", "_paper"])
def test_proposition1_bound_equals_theorem1_bound(suffix):
    thm, prop = get_statement(f"theorem1{suffix}"), get_statement(f"prop1{suffix}")
    for key in thm.bound:
        assert sp.simplify(thm.bound[key] - prop.bound[key]) == 0
