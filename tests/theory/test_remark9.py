"""Remark 9 (theory/remark9.py): non-realizable labels add B·ε_mis to Theorem 1."""

from __future__ import annotations

import pytest
import sympy as sp
from boundcalc.theory import get_statement
from boundcalc.theory import symbols as S


@pytest.mark.parametrize("suffix", ["", "_paper"])
@pytest.mark.slow
def test_remark9_reduces_to_theorem1_when_realizable(suffix):
    thm, rem = get_statement(f"theorem1{suffix}"), get_statement(f"remark9{suffix}")
    for key in thm.bound:
        assert sp.simplify(rem.bound[key].subs(S.eps_mis, 0) - thm.bound[key]) == 0, key
    assert "misspecification" in rem.terms
