"""Lemma 5 (theory/lemma5.py): the approximation error of the transported parameters θ̄,
recomputed by hand on both Chernoff branches; the branches meet where the regime changes; the
sub-gamma deviation halves the leading variance and is never above the plain bound."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import sympy as sp
from boundcalc.theory import symbols as S
from boundcalc.theory.lemma5 import (
    approximation_error_bound,
    approximation_log_factor,
    sub_gamma_deviation,
)

from boundcalc.calc.api import evaluate
from boundcalc.inputs.params import validate

#: tanh and ν = (3, 3, 3), δ = 0.05: the rest of the Fig. 1 setting.
POINT = {S.sigma0: 1, S.sigma1: 1, S.nu_c: 3, S.nu_u: 3, S.nu_w: 3, S.delta: sp.Rational(1, 20)}


def test_approximation_bound_is_piecewise_in_the_width_regime():
    pw = approximation_error_bound().atoms(sp.Piecewise)
    assert len(pw) == 1


def _hand_eps_app(m: int, n: int, d: int, delta: str, nu: tuple) -> mpmath.mpf:
    """ε_app = 2B₀√(ℓ/m) + s_w, ℓ = log(4n/δ), s_w = 4B_w√(2dℓ/m) if 2ℓ/m ≤ d else
    2B_w(d + 2ℓ/m), B₀ = σ₀ν_c + σ₁ν_u, B_w = σ₁ν_w, tanh (σ₀ = σ₁ = 1): Lemma 5 as its module
    docstring derives it."""
    vc, vu, vw = (mpmath.mpf(x) for x in nu)
    m_, ell = mpmath.mpf(m), mpmath.log(4 * mpmath.mpf(n) / mpmath.mpf(delta))
    bounded, attention = vc + vu, vw
    if 2 * ell / m_ <= d:
        s_w = 4 * attention * mpmath.sqrt(2 * d * ell / m_)
    else:
        s_w = 2 * attention * (d + 2 * ell / m_)
    return 2 * bounded * mpmath.sqrt(ell / m_) + s_w


@pytest.mark.parametrize(("m", "n", "d", "delta", "nu"), [
    (512, 1000, 8, "0.05", (3, 3, 3)),        # sub-Gaussian branch
    (2, 10**6, 1, "0.01", (1, 2, 0.5)),       # 2ℓ/m > d: sub-exponential branch
    (2**40, 7, 64, "0.5", (0, 0.25, 4)),
])
def test_eps_app_matches_a_hand_computation_from_the_paper(m, n, d, delta, nu):
    inputs = validate(m=m, n=n, d=d, delta=delta, nu=",".join(map(str, nu)))
    with mpmath.workdps(40):
        got = evaluate("lemma5", inputs, precision=40)
        assert abs(got.constants["log_factor"] - mpmath.log(4 * n / mpmath.mpf(delta))) <= (
            mpmath.mpf(10) ** -30)
        expected = _hand_eps_app(m, n, d, delta, nu)
        assert abs(got.bound["eps_app"] - expected) <= mpmath.mpf(10) ** -30 * expected


@pytest.mark.parametrize("dof", ["d", "one"])
def test_the_two_attention_branches_meet_where_the_regime_changes(dof):
    """At 2ℓ/m = k both Chernoff branches give 4B_w·k: ε_app is continuous in m."""
    k = S.d if dof == "d" else sp.Integer(1)
    ell = approximation_log_factor()
    pw = next(iter(approximation_error_bound(attention_dof=dof).atoms(sp.Piecewise)))
    (sub_gaussian, _), (sub_exponential, _) = pw.args
    at_switch = {S.m: 2 * ell / k}
    assert sp.simplify(sub_gaussian.subs(at_switch) - sub_exponential.subs(at_switch)) == 0


def test_the_sub_gamma_deviation_halves_the_variance_of_the_sub_gaussian_branch():
    """Its leading term 4B_w√(kℓ/m) against 4B_w√(2kℓ/m): the ratio tends to 1/√2 in m."""
    attention = sp.Symbol("B_w", positive=True)
    ell = approximation_log_factor()
    ratio = sub_gamma_deviation(attention, S.d) / (4 * attention * sp.sqrt(2 * S.d * ell / S.m))
    limit = sp.limit(ratio, S.m, sp.oo)
    assert sp.simplify(sp.expand_log(limit, force=True) - 1 / sp.sqrt(2)) == 0


def test_the_sub_gamma_route_is_never_above_the_plain_bound():
    plain = sp.lambdify((S.m, S.n, S.d), approximation_error_bound().subs(POINT), "numpy")
    gamma = sp.lambdify((S.m, S.n, S.d), approximation_error_bound(sub_gamma=True).subs(POINT),
                        "numpy")
    m, n, d = np.meshgrid(2.0 ** np.arange(1, 50, 3), [10.0, 1e3, 1e9], [1.0, 8.0, 512.0])
    assert np.all(gamma(m, n, d) <= plain(m, n, d) * (1 + 1e-12))
    assert np.any(gamma(m, n, d) < plain(m, n, d) * 0.9)


def test_an_unknown_attention_dof_is_refused_naming_it():
    with pytest.raises(ValueError, match="`attention_dof` must be one of"):
        approximation_error_bound(attention_dof="two")
