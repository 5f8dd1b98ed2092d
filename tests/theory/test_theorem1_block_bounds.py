"""The tight route's block bounds (derivations.md §2.1, §5.3, §7.10): each step they add.

Every test here could fail: a separation of the α-coupled bound that drops a term, a constant
below the maximum it replaces, a block bound that is not concave in s = u² (Jensen over the heads
would then go the wrong way), a sub-gamma tail that the exact Chernoff bound contradicts, or a route
that ends up looser than the one it refines.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from boundcalc.theory import symbols as S
from boundcalc.theory.catalog import route_key
from boundcalc.theory.lemma2 import (
    head_gradient_block_bound,
    head_gradient_concave_bound,
    head_hessian_block_bound,
    head_hessian_concave_bound,
)
from boundcalc.theory.lemma5 import sub_gamma_deviation

from boundcalc.calc.api import evaluate
from boundcalc.inputs.params import validate

FIG1 = {"n": 1000, "d": 8, "rho": "3", "nu": "3", "delta": "0.05", "steps": 4000}

U_GRID = np.concatenate([np.linspace(0.0, 3.0, 61), np.geomspace(3.0, 1e3, 40)])
T_GRID = np.linspace(0.0, 1.0, 201)
BLOCKS = [(1.0, 0.0), (0.0, 1.0), (1.0, 1.0), (3.0, 3.0), (0.5, 2.0), (2.0, 0.5)]


def _numeric(expr: sp.Expr, *symbols: sp.Symbol):
    return sp.lambdify(symbols, expr, "numpy")


@pytest.mark.parametrize(("x", "q"), [(1.0, 1.0), (0.7, 1.3)])
def test_block_gradient_bound_dominates_the_coupled_form_it_separates(x, q):
    # |Dg[h]| <= sigma1 x (t a_U + (1 - t^2) q x u a_W), t = ||a||/x in [0, 1] (derivations §2.1)
    u, au, aw = sp.symbols("u a_U a_W", nonnegative=True)
    phi = _numeric(head_gradient_block_bound(u, au, aw, a_priori=False).subs(
        {S.sigma1: 1, S.x_max: x, S.q_max: q}), u, au, aw)
    t = T_GRID[:, None]
    for a_u, a_w in BLOCKS:
        coupled = x * (t * a_u + (1 - t**2) * q * x * U_GRID[None, :] * a_w)
        assert np.all(coupled.max(axis=0) <= phi(U_GRID, a_u, a_w) * (1 + 1e-12))


def test_block_gradient_bound_is_never_above_the_joint_bound_times_the_radius():
    u, au, aw = sp.symbols("u a_U a_W", nonnegative=True)
    phi = _numeric(head_gradient_block_bound(u, au, aw).subs(S.sigma1, 1), u, au, aw)
    joint = _numeric(head_gradient_concave_bound(u).subs(S.sigma1, 1), u)
    for a_u, a_w in BLOCKS:
        assert np.all(phi(U_GRID, a_u, a_w) <= joint(U_GRID) * math.hypot(a_u, a_w) * (1 + 1e-12))


@pytest.mark.parametrize(("sig1", "sig2"), [(1.0, 4 / (3 * math.sqrt(3))), (0.3, 2.0)])
def test_block_hessian_bound_dominates_the_coupled_form_for_every_norm_of_a(sig1, sig2):
    # the alpha-coupled bound of derivations.md §2.1 before its terms are maximised separately:
    # sig2 |Dz[h]||Dz[k]| + sig1 (1 - t^2)(a_U b_W + a_W b_U + u (1 + t) a_W b_W)
    u = sp.Symbol("u", nonnegative=True)
    t = T_GRID[:, None]
    uu = U_GRID[None, :]
    for a in BLOCKS:
        for b in BLOCKS:
            # §2.1's separation, kept as the blocks route (32/27); the default route's H
            # (§2.2) has its own tests in test_attention_third_moment.py
            bound = _numeric(head_hessian_block_bound(u, a, b, third_moment=False).subs(
                {S.sigma1: sig1, S.sigma2: sig2}), u)(U_GRID)
            dz_a = t * a[0] + (1 - t**2) * uu * a[1]
            dz_b = t * b[0] + (1 - t**2) * uu * b[1]
            coupled = sig2 * dz_a * dz_b + sig1 * (1 - t**2) * (
                a[0] * b[1] + a[1] * b[0] + uu * (1 + t) * a[1] * b[1])
            assert np.all(coupled.max(axis=0) <= bound * (1 + 1e-12)), (a, b)


def test_the_third_moment_factor_is_the_maximum_of_its_polynomial():
    t = sp.Symbol("t", nonnegative=True)
    poly = (1 + t) ** 2 * (1 - t)
    critical = sp.solve(sp.diff(poly, t), t)
    assert max(poly.subs(t, c) for c in [*critical, 0, 1] if 0 <= c <= 1) == sp.Rational(32, 27)


def test_block_hessian_bound_is_at_most_the_joint_operator_bound_times_the_radii():
    u = sp.Symbol("u", nonnegative=True)
    tilde = _numeric(head_hessian_concave_bound(u).subs(
        {S.sigma1: 1, S.sigma2: 4 / (3 * math.sqrt(3))}), u)(U_GRID)
    for a in BLOCKS:
        for b in BLOCKS:
            block = _numeric(head_hessian_block_bound(u, a, b).subs(
                {S.sigma1: 1, S.sigma2: 4 / (3 * math.sqrt(3))}), u)(U_GRID)
            assert np.all(block <= tilde * math.hypot(*a) * math.hypot(*b) * (1 + 1e-12))


@pytest.mark.parametrize("a", BLOCKS)
@pytest.mark.parametrize("b", BLOCKS[2:4])
def test_block_bounds_are_concave_and_non_decreasing_in_the_squared_radius(a, b):
    # Jensen over the heads (derivations.md §7.7 item 1) needs both, as functions of s = u^2
    s = sp.Symbol("s", positive=True)
    values = {S.sigma1: 1, S.sigma2: sp.Rational(3, 4), S.x_max: 1, S.q_max: 1}
    for expr in (head_gradient_block_bound(sp.sqrt(s), *a, a_priori=False),
                 head_hessian_block_bound(sp.sqrt(s), a, b, a_priori=False)):
        expr = expr.subs(values)
        first = _numeric(sp.diff(expr, s), s)
        second = _numeric(sp.diff(expr, s, 2), s)
        grid = np.geomspace(1e-4, 1e6, 400)
        assert np.all(np.asarray(first(grid) + 0 * grid) >= -1e-15)
        assert np.all(np.asarray(second(grid) + 0 * grid) <= 1e-15)


def test_sub_gamma_log_mgf_majorant_holds():
    # -log(1 - 2 l^2 B^2) <= 2 B^2 l^2 / (1 - sqrt(2) B l) for 0 <= sqrt(2) B l < 1
    c = np.linspace(0.0, 0.999, 2000)                # c = sqrt(2) B lambda
    assert np.all(-np.log1p(-c**2) <= c**2 / (1 - c) + 1e-15)


@pytest.mark.parametrize(("pairs", "ell"), [(8, 3.0), (64, 11.3), (1024, 11.3), (4, 40.0)])
def test_sub_gamma_deviation_is_not_contradicted_by_the_exact_chernoff_bound(pairs, ell):
    # the mean of N pair averages with log-mgf psi(l) = -log(1 - 2 l^2 B^2) (B = 1) exceeds s with
    # probability <= exp(-N sup_l (l s - psi(l))); at s = the stated deviation that is <= e^{-ell}
    m = 2 * pairs
    s = float(sub_gamma_deviation(sp.Integer(1)).subs(
        {S.m: m, S.n: 1, S.delta: 4 * math.exp(-ell)}))
    lam = np.linspace(0.0, 1 / math.sqrt(2), 200_001)[:-1]
    rate = np.max(lam * s + np.log1p(-2 * lam**2))
    assert pairs * rate >= ell * (1 - 1e-9)


@pytest.mark.parametrize("statement", ["theorem1", "prop1", "remark9"])
def test_tight_route_is_never_looser_than_the_joint_route_on_a_grid(statement, route_pairs):
    for label, tight, joint in route_pairs(statement, "tight", "joint"):
        for key in ("bound.min_iterate", "constants.residual_envelope_B",
                    "constants.eps_taylor", "constants.eps_cf", "constants.eps_app",
                    "constants.eps_lin", "constants.output_envelope_F"):
            assert np.all(tight[key] <= joint[key] * (1 + 1e-12)), (*label, key)


def test_blocks_route_is_informative_from_m_1730_at_the_figure_1_setting_in_mpmath():
    # derivations.md §7.10: min_iterate < Y^2 = 81 from m = 1730 with §2.1's 32/27 (the blocks
    # route, the default before §2.2; 4768 on the joint route, 1576 on the default route)
    def below(m: int, route: str = "blocks") -> bool:
        ev = evaluate(route_key("theorem1", route), validate(m=m, **FIG1))
        return mpmath.mpf(ev.bound["min_iterate"]) < mpmath.mpf(ev.constants["initial_loss_bound"])

    assert below(1730) and not below(1728)
    assert below(4768, "joint") and not below(4766, "joint")
    assert below(1576, "tight") and not below(1574, "tight")
