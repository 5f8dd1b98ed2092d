"""Activation presets (theory/activations.py): the closed-form bounds (σ₀, σ₁, σ₂) against dense
numerical maxima, and the parsing of ``custom:σ₀,σ₁,σ₂``."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from boundcalc.theory.activations import ERF, TANH, get_activation


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
