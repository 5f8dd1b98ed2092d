"""Lemma 3 (theory/lemma3.py): the linearization error ε_lin recomputed by hand from the paper's
formulas and compared with the calculator; never above the generic smoothness bound β‖ρ‖²/2;
the Taylor remainder ε_tay exceeds it by exactly ρ_c r² H/(3m); the block forms never exceed
the joint ones."""

from __future__ import annotations

import itertools

import mpmath
import numpy as np
import pytest
import sympy as sp
from boundcalc.theory import symbols as S
from boundcalc.theory.activations import TANH
from boundcalc.theory.lemma2 import head_bounds, smoothness_constant
from boundcalc.theory.lemma3 import (
    attention_ffn_radius,
    linearization_error_block_bound,
    linearization_error_bound,
    taylor_remainder_block_bound,
    taylor_remainder_bound,
)

from boundcalc.calc.api import evaluate
from boundcalc.inputs.params import validate

TANH_SIGMAS = {S.sigma0: TANH.sigma0, S.sigma1: TANH.sigma1, S.sigma2: TANH.sigma2}
#: A grid of (m, d, δ, ρ_c, ρ_u, ρ_w): small to huge widths, unequal radii.
GRID = list(itertools.product((2, 16, 512, 2**20), (1, 8, 64), (0.05, 0.5),
                              (0.5, 3.0), (0.1, 3.0), (1.0, 10.0)))


def _hand_eps_lin(m: int, d: int, delta: str, rho: tuple[int, int, int]) -> mpmath.mpf:
    """ε_lin = min(m^{-1/2}(G ρ_c r + ½ H r²), c_max·min(G r, 2√m σ₀) + G(u_∞) r) for tanh,
    written from Definition 1, Lemma 2 and Lemma 3 of the paper (module docstrings)."""
    s0, s1 = mpmath.mpf(1), mpmath.mpf(1)
    s2 = 4 / (3 * mpmath.sqrt(3))                          # max |tanh''|
    rc, ru, rw = (mpmath.mpf(x) for x in rho)
    m_ = mpmath.mpf(m)
    u_inf = mpmath.sqrt(d) + mpmath.sqrt(2 * mpmath.log(m_ / (2 * mpmath.mpf(delta))))
    u_max = u_inf + ru / mpmath.sqrt(m_)
    grad = s1 * mpmath.sqrt(1 + u_max**2)
    a, b, c = s2, s2 * u_max + s1, s2 * u_max**2 + 2 * s1 * u_max
    hess = (a + c + mpmath.sqrt((a - c) ** 2 + 4 * b**2)) / 2     # λ_max of M(u_max)
    r = mpmath.sqrt(ru**2 + rw**2)
    lemma = (grad * rc * r + hess * r**2 / 2) / mpmath.sqrt(m_)
    c_max = 1 + rc / mpmath.sqrt(m_)
    cap = c_max * min(grad * r, 2 * mpmath.sqrt(m_) * s0) + s1 * mpmath.sqrt(1 + u_inf**2) * r
    return min(lemma, cap)


@pytest.mark.parametrize(("m", "d", "delta", "rho"), [
    (512, 8, "0.05", (3, 3, 3)),      # the Fig. 1 setting: the lemma binds
    (4, 8, "0.05", (3, 3, 3)),        # small width: the cap binds
    (2**30, 1, "0.2", (1, 2, 5)),
])
def test_eps_lin_matches_a_hand_computation_from_the_paper(m, d, delta, rho):
    inputs = validate(m=m, d=d, delta=delta, rho=",".join(map(str, rho)))
    with mpmath.workdps(40):
        got = evaluate("lemma3", inputs, precision=40).bound["eps_lin"]
        expected = _hand_eps_lin(m, d, delta, rho)
        assert abs(got - expected) <= mpmath.mpf(10) ** -30 * expected


def _numeric(expr: sp.Expr):
    symbols = (S.m, S.d, S.delta, S.rho_c, S.rho_u, S.rho_w)
    return sp.lambdify(symbols, expr.subs(TANH_SIGMAS), "numpy")


def test_eps_lin_is_never_above_the_smoothness_bound_times_half_the_squared_radius():
    """β‖ρ‖²/2 ≥ m^{-1/2}(G ρ_c r + c_max H r²/2) (λ_max against the unit vector (ρ_c, r)/‖ρ‖),
    and c_max ≥ 1 = |c_i(0)|: the per-head form is the sharper one (module docstring)."""
    eps = _numeric(linearization_error_bound())
    generic = _numeric(smoothness_constant() * (S.rho_c**2 + S.rho_u**2 + S.rho_w**2) / 2)
    args = np.array(GRID, dtype=float).T
    assert np.all(eps(*args) <= generic(*args) * (1 + 1e-12))


@pytest.mark.parametrize("event", ["max", "average"])
def test_the_taylor_remainder_exceeds_eps_lin_by_rho_c_r_squared_h_over_3m(event):
    _, hess = head_bounds(True, event)
    r = attention_ffn_radius()
    gap = (taylor_remainder_bound(event=event) - linearization_error_bound(event=event)
           - S.rho_c * r**2 * hess / (3 * S.m))
    assert sp.simplify(gap) == 0


@pytest.mark.parametrize(("block", "joint"), [
    (linearization_error_block_bound, lambda: linearization_error_bound(event="average")),
    (taylor_remainder_block_bound, lambda: taylor_remainder_bound(event="average")),
])
def test_the_block_forms_are_never_above_the_joint_forms_on_a_grid(block, joint):
    args = np.array(GRID, dtype=float).T
    assert np.all(_numeric(block())(*args) <= _numeric(joint())(*args) * (1 + 1e-12))


def test_eps_lin_grows_with_every_radius_and_shrinks_with_the_width():
    eps = _numeric(linearization_error_bound())
    base = np.array([512.0, 8.0, 0.05, 3.0, 3.0, 3.0])
    for k in (3, 4, 5):                                     # ρ_c, ρ_u, ρ_w
        larger = base.copy()
        larger[k] *= 1.5
        assert eps(*larger) > eps(*base)
    widths = 2.0 ** np.arange(1, 60)
    values = eps(widths, 8.0, 0.05, 3.0, 3.0, 3.0)
    assert np.all(np.diff(values) < 0)
