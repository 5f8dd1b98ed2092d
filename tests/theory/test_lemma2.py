"""Lemma 2 (theory/lemma2.py): the Lipschitz constant L and smoothness β, and the closed forms they
are built from, against independent numerical computations."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from boundcalc.theory import symbols as S
from boundcalc.theory.activations import TANH
from boundcalc.theory.lemma2 import head_hessian_bound, largest_eigenvalue_2x2


def test_largest_eigenvalue_formula_matches_numpy():
    rng = np.random.default_rng(1)
    for _ in range(20):
        a, b, c = rng.normal(size=3)
        lam = float(largest_eigenvalue_2x2(sp.Float(a), sp.Float(b), sp.Float(c)))
        assert lam == pytest.approx(np.linalg.eigvalsh([[a, b], [b, c]]).max(), rel=1e-12)


def test_head_hessian_bound_dominates_the_quadratic_form_it_encodes():
    # H(u) must dominate sigma2 (cos + u sin)^2 + sigma1 (2 cos sin + 2 u sin^2) over the circle
    phi = np.linspace(0, np.pi / 2, 100_001)
    for u in (0.0, 0.5, 3.0, 40.0):
        h = float(head_hessian_bound(sp.Float(u)).subs({S.sigma1: 1, S.sigma2: TANH.sigma2}))
        s2 = float(TANH.sigma2)
        form = (s2 * (np.cos(phi) + u * np.sin(phi)) ** 2
                + 2 * np.cos(phi) * np.sin(phi) + 2 * u * np.sin(phi) ** 2)
        assert form.max() <= h * (1 + 1e-12)
        assert form.max() == pytest.approx(h, rel=1e-6)
