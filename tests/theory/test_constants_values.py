"""Closed forms of the constants checked against independent numerical computations."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from boundcalc.theory import symbols as S
from boundcalc.theory.activations import ERF, TANH, get_activation
from boundcalc.theory.event import event_failure_probability, event_radius
from boundcalc.theory.lemma2 import head_hessian_bound, largest_eigenvalue_2x2


def test_tanh_bounds_match_a_dense_grid_maximum():
    x = np.linspace(-10, 10, 2_000_001)
    t = np.tanh(x)
    assert float(TANH.sigma0) == pytest.approx(np.abs(t).max(), rel=1e-6)
    assert float(TANH.sigma1) == pytest.approx((1 - t**2).max(), rel=1e-9)
    assert float(TANH.sigma2) == pytest.approx(np.abs(-2 * t * (1 - t**2)).max(), rel=1e-9)


def test_erf_bounds_match_a_dense_grid_maximum():
    x = np.linspace(-10, 10, 2_000_001)
    d1 = math.sqrt(2 / math.pi) * np.exp(-(x**2) / 2)
    # derivative of erf(x/sqrt(2)) by finite differences, to catch a sqrt(2) slip
    h = 1e-5
    fd = np.array([(math.erf((v + h) / math.sqrt(2)) - math.erf((v - h) / math.sqrt(2))) / (2 * h)
                   for v in (0.0, 0.7, 1.3)])
    assert fd == pytest.approx(math.sqrt(2 / math.pi) * np.exp(-np.array([0, 0.7, 1.3]) ** 2 / 2),
                               rel=1e-8)
    assert float(ERF.sigma1) == pytest.approx(d1.max(), rel=1e-9)
    assert float(ERF.sigma2) == pytest.approx(np.abs(-x * d1).max(), rel=1e-9)


def test_custom_activation_parses_three_bounds():
    act = get_activation("custom:1,0.5,0.25")
    assert (act.sigma0, act.sigma1, act.sigma2) == (1, sp.Rational(1, 2), sp.Rational(1, 4))


@pytest.mark.parametrize("spec", ["relu", "custom:1,2", "custom:a,b,c", "custom:1,-1,0"])
def test_bad_activation_is_rejected(spec):
    with pytest.raises(ValueError):
        get_activation(spec)


def test_event_radius_failure_probability_is_delta():
    prob = sp.simplify(event_failure_probability(event_radius()))
    assert sp.simplify(prob - S.delta) == 0


def test_event_radius_covers_gaussian_maxima_at_the_stated_rate():
    rng = np.random.default_rng(0)
    m, d, delta, trials = 64, 8, 0.2, 4000
    radius = float(event_radius().subs({S.m: m, S.d: d, S.delta: sp.Rational(1, 5)}))
    norms = np.linalg.norm(rng.standard_normal((trials, m // 2, d)), axis=-1).max(axis=1)
    assert np.mean(norms > radius) <= delta


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


def test_mpmath_precision_is_honoured():
    from boundcalc.calc.api import evaluate
    from boundcalc.inputs.params import validate

    inputs = validate(m=512, n=1000, rho="2")
    low = evaluate("theorem1", inputs, precision=15).bound["min_iterate"]
    high = evaluate("theorem1", inputs, precision=50).bound["min_iterate"]
    assert abs(low - high) / high < 1e-13
    with mpmath.workdps(50):
        assert mpmath.mpf(high) != 0
