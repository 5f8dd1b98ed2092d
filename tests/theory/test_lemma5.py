"""Lemma 5 (theory/lemma5.py): the approximation error of the transported parameters θ̄."""

from __future__ import annotations

import sympy as sp
from boundcalc.theory.lemma5 import approximation_error_bound


def test_approximation_bound_is_piecewise_in_the_width_regime():
    pw = approximation_error_bound().atoms(sp.Piecewise)
    assert len(pw) == 1
