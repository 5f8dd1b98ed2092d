"""Quantities of the generalization bound (theory/generalization_quantities.py): the Dudley
bracket is the infimum it claims, found by a numerical search; the hatted quantities (η norms)
are never below the plain ones (ξ norms); A bounds |f| of the encoder on sampled weights; each
of Lemma 4's terms is √(2Φ(θ⁰)/N) exactly where its α-condition is tight."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from boundcalc.theory import generalization_quantities as Q
from boundcalc.theory import generalization_symbols as GS

#: Norms of θ⁰ with every spectral norm at most its Frobenius norm, radii, sizes.
POINT = {GS.N: 50, GS.d_m: 64, GS.d_s: 6, GS.R_X: sp.Rational(3, 2), GS.delta: sp.Rational(1, 20),
         GS.R_Q: sp.Rational(1, 2), GS.R_K: sp.Rational(2, 3), GS.R_V: sp.Rational(3, 4),
         GS.R_O: sp.Rational(1, 5), GS.WQ0_F: 8, GS.WK0_F: 7, GS.WV0_F: 9,
         GS.WQ0_2: sp.Rational(5, 2), GS.WK0_2: 2, GS.WV0_2: 3, GS.WO0_2: sp.Rational(6, 5),
         GS.alpha: sp.Rational(1, 3), GS.Phi0: sp.Rational(1, 7), GS.Y: 1, GS.C_D: 1,
         GS.C_cov: 1, GS.C_O: 1, GS.C_prob: 1, GS.c_hat: 1}


def _value(expr: sp.Expr, point: dict = POINT) -> float:
    return float(expr.subs(point))


@pytest.mark.parametrize(("s", "a"), [(0.3, 2.0), (1.0, 1.0), (2.0, 0.5), (7.0, 0.1)])
def test_the_dudley_bracket_is_the_infimum_over_delta_in_zero_to_a(s, a):
    """inf_{0 < δ ≤ A} δ + s·log(A/δ), by a dense search, against the derived closed form."""
    deltas = np.concatenate([np.geomspace(a * 1e-9, a, 200_001), [a]])
    searched = np.min(deltas + s * np.log(a / deltas))
    closed = float(Q.dudley_form(sp.Float(s), sp.Float(a), as_printed=False))
    assert closed == pytest.approx(searched, rel=1e-9)
    printed = float(Q.dudley_form(sp.Float(s), sp.Float(a), as_printed=True))
    assert printed <= closed + 1e-12                 # the printed form is below once s > A
    assert (printed < 0) is (s > math.e * a)


def test_the_hatted_quantities_are_never_below_the_plain_ones():
    pairs = ((Q.xi_Q(), Q.eta_Q()), (Q.xi_K(), Q.eta_K()), (Q.xi_V(), Q.eta_V()),
             (Q.z(), Q.z_hat()), (Q.M(), Q.M_hat()),
             # M̂ ≥ M: the printed first term (with M̂) is the smaller one
             (Q.lemma4_first_term(as_printed=True), Q.lemma4_first_term(as_printed=False)))
    norms = (GS.WQ0_F, GS.WK0_F, GS.WV0_F, GS.WQ0_2, GS.WK0_2, GS.WV0_2, GS.R_Q, GS.R_K,
             GS.R_V, GS.R_O)
    fixed = {k: v for k, v in POINT.items() if k not in norms}
    rng = np.random.default_rng(3)
    fro = rng.uniform(0.1, 10, (3, 400))
    spectral = fro * rng.uniform(0.05, 1.0, (3, 400))                     # ‖·‖₂ ≤ ‖·‖_F
    radii = rng.uniform(0.01, 3, (4, 400))
    for smaller, larger in pairs:
        values = [sp.lambdify(norms, expr.subs(fixed), "numpy")(*fro, *spectral, *radii)
                  for expr in (smaller, larger)]
        assert np.all(values[0] <= values[1] * (1 + 1e-12))


def _encoder(X, WQ, WK, WV, wO):
    """f(X) = (1/d_s) w_Oᵀ Σ_i ReLU(W_V Xᵀ softmax(X W_Kᵀ W_Q x_i/√d_m)), rows of X the tokens."""
    d_s, d_m = X.shape
    logits = X @ WK.T @ WQ @ X.T / math.sqrt(d_m)            # column i: the scores of token i
    weights = np.exp(logits - logits.max(axis=0))
    weights /= weights.sum(axis=0)
    return float(wO @ np.maximum(WV @ X.T @ weights, 0).sum(axis=1) / d_s)


@pytest.mark.parametrize("seed", range(4))
def test_a_bounds_the_encoder_output_for_every_sampled_weight(seed):
    rng = np.random.default_rng(seed)
    d_m, d_s, r_x = 6, 5, 1.3
    X = rng.standard_normal((d_s, d_m))
    X *= r_x / np.linalg.norm(X, axis=1, keepdims=True)      # every token of norm R_X
    a_bound = sp.lambdify((GS.WO0_2, GS.WV0_F), Q.A().subs({GS.R_O: 0, GS.R_V: 0, GS.d_s: d_s,
                                                           GS.R_X: r_x}))
    largest = 0.0
    for _ in range(200):
        WQ, WK, WV = (rng.standard_normal((d_m, d_m)) * rng.uniform(0.1, 3) for _ in range(3))
        wO = rng.standard_normal(d_m) * rng.uniform(0.1, 3)
        bound = a_bound(np.linalg.norm(wO), np.linalg.norm(WV))
        ratio = abs(_encoder(X, WQ, WK, WV, wO)) / bound
        assert ratio <= 1
        largest = max(largest, ratio)
    assert largest > 0.01                                   # the samples come near the bound


def test_a_is_attained_up_to_root_d_s_by_aligned_weights():
    """Equal tokens x, W_V = v xᵀ/R_X, w_O = v: f = ‖v‖²·R_X = A/√d_s at η = ‖·‖ (R = 0)."""
    d_m, d_s, r_x = 4, 9, 2.0
    x = np.array([r_x, 0, 0, 0])
    v = np.array([0.0, 1.5, 0, 0])
    X = np.tile(x, (d_s, 1))
    WV = np.outer(v, x) / r_x
    f = _encoder(X, np.eye(d_m), np.eye(d_m), WV, v)
    a = _value(Q.A(), {GS.WO0_2: np.linalg.norm(v), GS.R_O: 0, GS.WV0_F: np.linalg.norm(WV),
                       GS.R_V: 0, GS.d_s: d_s, GS.R_X: r_x})
    assert f == pytest.approx(a / math.sqrt(d_s), rel=1e-12)


def test_each_lemma4_term_is_the_phi0_bound_where_its_alpha_condition_is_tight():
    """α² = 8ρM√(2Φ) makes the first term √(2Φ/N); α³ = 32ρ²z√(2Φ)/η_O the second."""
    phi = Q.empirical_loss_phi0_bound()
    first_alpha = sp.sqrt(8 * Q.rho() * Q.M() * sp.sqrt(2 * GS.Phi0))
    second_alpha = sp.cbrt(32 * Q.rho() ** 2 * Q.z() * sp.sqrt(2 * GS.Phi0) / Q.eta_O())
    point = {k: v for k, v in POINT.items() if k is not GS.alpha}
    with mpmath.workdps(40):
        for term, alpha in ((Q.lemma4_first_term(), first_alpha),
                            (Q.lemma4_second_term(), second_alpha)):
            at = {**point, GS.alpha: alpha.subs(point)}
            assert sp.N(term.subs(at) - phi.subs(point), 40) == pytest.approx(0, abs=1e-30)


def test_the_probability_grows_with_the_model_dimension_and_stays_below_one_minus_delta():
    values = [_value(Q.lemma4_probability(), {**POINT, GS.d_m: d_m}) for d_m in (8, 16, 64, 512)]
    assert all(a < b for a, b in zip(values, values[1:], strict=False))
    assert values[-1] < 1 - float(POINT[GS.delta])


def test_rademacher_lemma_other_than_1_or_2_is_refused():
    with pytest.raises(ValueError, match="`lemma` must be 1 or 2"):
        Q.rademacher_bound(as_printed=True, lemma=3)
