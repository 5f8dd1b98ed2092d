"""The tight route of Theorem 1 (derivations.md §1.1, §2, §5.1, §6.1, §7.7): each fact it uses.

Every test here could fail: a wrong radius, a non-concave per-head bound, a degree-of-freedom count
that is not dominated, or a route that is looser than the paper's would each be caught.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from boundcalc.theory import get_statement
from boundcalc.theory import symbols as S
from boundcalc.theory.event import head_average_log_factor, head_average_radius
from boundcalc.theory.lemma2 import (
    concave_unit_floor,
    head_gradient_bound,
    head_gradient_concave_bound,
    head_hessian_bound,
    head_hessian_concave_bound,
)
from boundcalc.theory.lemma3 import linearization_error_bound, taylor_remainder_bound
from boundcalc.theory.lemma5 import approximation_error_bound

TANH = {S.sigma0: 1, S.sigma1: 1, S.sigma2: 4 / (3 * sp.sqrt(3))}


def test_head_average_radius_is_the_laurent_massart_quantile_per_head():
    k = S.d * S.m / 2
    x = head_average_log_factor()
    quantile = (k + 2 * sp.sqrt(k * x) + 2 * x) * 2 / S.m
    assert sp.simplify(head_average_radius() ** 2 - quantile) == 0


@pytest.mark.parametrize(("m", "d", "delta"), [(2, 1, 0.05), (16, 8, 0.05), (256, 8, 0.2),
                                               (64, 2, 0.3)])
def test_head_average_event_fails_at_most_delta_of_the_time(m, d, delta):
    rng = np.random.default_rng(1234)
    draws = 200_000
    # (1/m) sum_i ||U_i(0)||^2 under the symmetric init: twice the sum over the m/2 free heads / m
    mean_sq = 2.0 * rng.chisquare(d * m // 2, size=draws) / m
    radius_sq = float(head_average_radius().subs({S.m: m, S.d: d, S.delta: delta}) ** 2)
    rate = float(np.mean(mean_sq > radius_sq))
    # the binomial standard error at 2e5 draws is below 0.002 for rates <= 0.3
    assert rate <= delta
    # and the radius is not absurdly loose: the event fails with visible probability
    assert rate > delta / 50


def test_concave_hessian_bound_dominates_the_exact_eigenvalue():
    u = np.concatenate([np.linspace(0, 3, 301), np.geomspace(3, 1e4, 200)])
    for sig2 in (0.0, 0.5, 0.7698, 2.0):
        for sig1 in (0.0, 0.3, 1.0):
            values = {S.sigma1: sig1, S.sigma2: sig2}
            exact = sp.lambdify(S.u0_max, head_hessian_bound(S.u0_max).subs(values), "numpy")
            tilde = sp.lambdify(S.u0_max, head_hessian_concave_bound(S.u0_max).subs(values),
                                "numpy")
            assert np.all(tilde(u) >= exact(u) * (1 - 1e-15))


def _pieces(expr: sp.Expr) -> list[sp.Expr]:
    pieces = expr.atoms(sp.Piecewise)
    if not pieces:
        return [expr]
    (pw,) = pieces
    return [expr.subs(pw, branch) for branch, _ in pw.args]


@pytest.mark.parametrize("a_priori", [True, False])
def test_per_head_bounds_are_concave_and_nondecreasing_in_the_squared_radius(a_priori):
    s = sp.Symbol("s", positive=True)
    for bound in (head_gradient_bound(sp.sqrt(s), a_priori),
                  head_gradient_concave_bound(sp.sqrt(s), a_priori),
                  head_hessian_concave_bound(sp.sqrt(s), a_priori)):
        for piece in _pieces(bound):
            assert sp.diff(piece, s).is_nonnegative
            assert sp.diff(piece, s, 2).is_nonpositive


def test_concave_unit_floor_is_a_concave_majorant_of_max_one_sqrt():
    s = sp.Symbol("s", positive=True)
    low, high = _pieces(concave_unit_floor(s))
    # the two pieces meet with the same value and slope at s = 4 (so the whole is concave)
    assert low.subs(s, 4) == high.subs(s, 4)
    assert sp.diff(low, s).subs(s, 4) == sp.diff(high, s).subs(s, 4)
    floor = sp.lambdify(s, concave_unit_floor(s), "numpy")
    grid = np.concatenate([np.linspace(0, 10, 2001), np.geomspace(10, 1e8, 200)])
    assert np.all(floor(grid) >= np.maximum(1.0, np.sqrt(grid)))
    uniform = np.linspace(0, 20, 4001)
    assert np.all(np.diff(floor(uniform), 2) <= 1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_sharper_gradient_bound_dominates_the_gradient_norm_over_token_convex_hulls(seed):
    # ||grad g||^2 = sigma'^2 (||a||^2 + ||G U q^T||^2) <= max(1, u^2) for every softmax weight s,
    # tokens in the unit ball, ||q|| <= 1; checked on random configurations with sigma' = 1
    rng = np.random.default_rng(seed)
    for _ in range(300):
        d, T = int(rng.integers(1, 6)), int(rng.integers(1, 8))
        x = rng.normal(size=(T, d))
        x /= np.maximum(1.0, np.linalg.norm(x, axis=1, keepdims=True)) * rng.uniform(1, 2)
        w = rng.dirichlet(np.full(T, rng.uniform(0.05, 3)))
        a = w @ x
        g = (x.T * w) @ x - np.outer(a, a)
        u = rng.normal(size=d) * rng.uniform(0, 5)
        q = rng.normal(size=d)
        q /= max(1.0, np.linalg.norm(q))
        grad_sq = a @ a + np.linalg.norm(g @ u) ** 2 * (q @ q)
        assert grad_sq <= max(1.0, u @ u) * (1 + 1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_attention_quadratic_form_is_dominated_by_one_chi_square_degree(seed):
    # E exp(t ||G U||^2) = prod_k (1 - 2 t lambda_k^2)^(-1/2) <= (1 - 2t)^(-1/2) when tr G <= 1
    rng = np.random.default_rng(seed)
    d = int(rng.integers(1, 12))
    a = rng.normal(size=(d, d))
    g = a @ a.T
    g /= np.trace(g) * rng.uniform(1.0, 3.0)  # PSD with tr G <= 1
    lam_sq = np.linalg.eigvalsh(g) ** 2
    for t in np.linspace(0.01, 0.49, 25):
        mgf = np.prod((1 - 2 * t * lam_sq) ** -0.5)
        assert mgf <= (1 - 2 * t) ** -0.5


def test_d_free_approximation_bound_is_the_d_bound_at_d_equal_one():
    free = approximation_error_bound(attention_dof="one")
    assert S.d not in free.free_symbols
    assert sp.simplify(free - approximation_error_bound().subs(S.d, 1)) == 0


def test_taylor_remainder_replaces_more_than_it_costs():
    # eps_tay <= eps_lin + the theta_k - theta(0) half of the paper's change of feature, with the
    # same per-head bounds; the extra rho_c/(3 sqrt m) of eps_tay is paid for by 2 rho_c r G + H r^2
    grad, hess = sp.symbols("G H", positive=True)
    r = sp.sqrt(S.rho_u**2 + S.rho_w**2)
    merged = (S.rho_c * r * grad
              + (sp.Rational(1, 2) + S.rho_c / (3 * sp.sqrt(S.m))) * r**2 * hess) / sp.sqrt(S.m)
    paper = (grad * S.rho_c * r + hess * r**2 / 2 + grad * r * S.rho_c
             + (S.rho_c * grad + hess * r) * r) / sp.sqrt(S.m)
    difference = sp.expand((paper - merged) * sp.sqrt(S.m))
    # 2 rho_c r G + r^2 H (1 - rho_c / (3 sqrt m)) >= 0 whenever rho_c <= 3 sqrt(m) ...
    assert sp.simplify(difference - (2 * S.rho_c * r * grad
                                     + r**2 * hess * (1 - S.rho_c / (3 * sp.sqrt(S.m))))) == 0
    # ... and the Taylor bound has the same structure as Lemma 3's at rho_c = 0
    at_zero = {S.rho_c: 0}
    assert sp.simplify(taylor_remainder_bound().subs(at_zero)
                       - linearization_error_bound(event="average").subs(at_zero)) == 0




@pytest.mark.parametrize("statement", ["theorem1", "prop1", "remark9"])
def test_tight_route_is_never_looser_than_the_paper_route_on_a_grid(statement, route_pairs):
    for label, tight, paper in route_pairs(statement, "tight", "paper"):
        for key in ("bound.min_iterate", "constants.residual_envelope_B",
                    "constants.lipschitz_L", "constants.eps_app"):
            assert np.all(tight[key] <= paper[key]), (*label, key)


def test_joint_route_meets_the_targets_at_the_figure_1_setting(fig1_grid):
    # derivations.md §7.7 (the tight route before §7.10's block bounds, now ``--route joint``):
    # m = 256 at most 1/5 of the paper route, below B^2 from m = 610
    out = fig1_grid("theorem1_joint", m=np.array([256.0, 608.0, 610.0, 4096.0]))
    paper = fig1_grid("theorem1_paper", m=256.0)
    bound, trivial = out["bound.min_iterate"], out["constants.trivial_bound_B2"]
    assert bound[0] <= paper["bound.min_iterate"] / 5
    assert list(bound < trivial) == [False, False, True, True]
    # the paper route with F's free cap sqrt(m) c_max sigma0 = 19 < 32.9 (derivations.md §6)
    assert math.isclose(paper["bound.min_iterate"], 6302.3, rel_tol=1e-4)


def test_min_iterate_is_the_smaller_of_the_two_drift_bounds(fig1_grid):
    out = fig1_grid("theorem1", m=2.0 ** np.arange(1, 30))
    both = np.minimum(out["bound.min_iterate_linear_drift"],
                      out["bound.min_iterate_cauchy_schwarz"])
    assert np.array_equal(out["bound.min_iterate"], both)
    # each form is active somewhere on this range
    linear_active = out["bound.min_iterate_linear_drift"] < out["bound.min_iterate_cauchy_schwarz"]
    assert linear_active.any() and not linear_active.all()


def test_tight_route_has_no_event_logarithm_in_its_width_rate():
    eps = get_statement("theorem1").constants["eps_drift"]
    values = {S.n: 1000, S.d: 8, S.delta: sp.Rational(1, 20), S.rho_c: 3, S.rho_u: 3, S.rho_w: 3,
              S.nu_c: 3, S.nu_u: 3, S.nu_w: 3, **TANH}
    scaled = (eps * sp.sqrt(S.m)).subs(values)
    # large m: each constant is its lemma's bound, not its free cap (the smaller argument of
    # each Min at m = 1e9, the cap growing or flat in m), and the branch of each Piecewise
    # (eps_app's sub-Gaussian one, the gradient bound's sqrt(s) one) that holds at m = 1e9 holds
    # for every larger m
    def smaller_argument(low: sp.Min) -> sp.Expr:
        return min(low.args, key=lambda a: float(a.subs(S.m, 10**9)))

    def active_branch(pw: sp.Piecewise) -> sp.Expr:
        return next(branch for branch, cond in pw.args if bool(cond.subs(S.m, 10**9)))

    # nested (eps_app's sub-Gaussian / sub-gamma Min inside its cap's Min): innermost first
    while scaled.atoms(sp.Min) or scaled.atoms(sp.Piecewise):
        scaled = scaled.replace(lambda e: isinstance(e, sp.Piecewise)
                                and not e.args[0][0].atoms(sp.Min, sp.Piecewise), active_branch)
        scaled = scaled.replace(lambda e: isinstance(e, sp.Min)
                                and not any(a.atoms(sp.Min, sp.Piecewise) for a in e.args),
                                smaller_argument)
    limit = sp.limit(scaled, S.m, sp.oo)
    assert limit.is_finite and limit > 0
