"""H's attention constant κ = 4/(3√3) (derivations.md §2.2): each step of its proof, and the route.

|UᵀD²a[h_W, k_W]| = |T(h_W q, k_W q, U)| with T the third central moment tensor of the tokens under
the softmax weights. The steps: (i) for fixed U, T(·, ·, U) is a symmetric matrix, so its bilinear
sup is its quadratic sup; (ii) T(v, v, U) ≤ √(p(0)² + p'(0)²/9) ≤ max |p| for the binary cubic
p(θ) = T(x_θ, x_θ, x_θ) on span{v, U} (van der Corput–Schaake); (iii) T(x, x, x) is the third
central moment of a variable in [−X, X], at most κX³ by a two-line majorant. Every test here could
fail: a constant below a reachable value, a majorant that some distribution beats, or a route
that is looser than the one it refines.
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
    attention_third_moment_bound,
    coupled_third_moment_factor,
    head_hessian_block_bound,
)

from boundcalc.calc.api import evaluate
from boundcalc.inputs.params import validate

KAPPA = 4 / (3 * math.sqrt(3))
FIG1 = {"n": 1000, "d": 8, "rho": "3", "nu": "3", "delta": "0.05", "steps": 4000}
U_GRID = np.concatenate([np.linspace(0.0, 3.0, 61), np.geomspace(3.0, 1e3, 40)])
T_GRID = np.linspace(0.0, 1.0, 201)
BLOCKS = [(1.0, 0.0), (0.0, 1.0), (1.0, 1.0), (3.0, 3.0), (0.5, 2.0), (2.0, 0.5)]


def _third_central(z: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Third central moment of the discrete distributions with atoms z and weights w (rows)."""
    mean = (w * z).sum(-1, keepdims=True)
    return (w * (z - mean) ** 3).sum(-1)


def test_kappa_is_the_largest_two_point_third_moment_on_the_unit_interval():
    # two atoms ±1, weights p and 1 - p: the third central moment is 8p(1 - p)(1 - 2p)
    p = sp.Symbol("p", nonnegative=True)
    poly = 8 * p * (1 - p) * (1 - 2 * p)
    values = [poly.subs(p, c) for c in sp.solve(sp.diff(poly, p), p) if 0 <= c <= 1]
    assert sp.simplify(max(values, key=float) - attention_third_moment_bound()) == 0
    assert attention_third_moment_bound() < coupled_third_moment_factor()


def test_two_line_majorant_holds_for_every_centred_variable_and_peaks_at_kappa():
    # Y = Z - EZ in [a, b] = [-1 - mu, 1 - mu], V = EY^2: EY^3 <= min(bV, (2a + b)V + a^2 b)
    gen = np.random.default_rng(0)
    for atoms in (2, 3, 5):
        z = gen.uniform(-1, 1, (20000, atoms))
        z[:, 0], z[:, 1] = -1.0, 1.0                   # the extreme atoms present half the time
        z[::2] = gen.uniform(-1, 1, z[::2].shape)
        w = gen.dirichlet(np.full(atoms, 0.4), 20000)
        mu = (w * z).sum(-1)
        y = z - mu[:, None]
        third, var = (w * y**3).sum(-1), (w * y**2).sum(-1)
        a, b = -1 - mu, 1 - mu
        assert np.all(third <= np.minimum(b * var, (2 * a + b) * var + a**2 * b) + 1e-12)
        assert np.all(np.abs(third) <= KAPPA + 1e-12)
    # the majorant's maximum over V in [0, -ab] and mu in [-1, 1], in closed form per branch
    mu_s = sp.Symbol("mu", real=True)
    branch_1 = -2 * mu_s * (1 - mu_s**2)               # 2a + b >= 0 (mu <= -1/3): V = -ab
    crit = [c for c in sp.solve(sp.diff(branch_1, mu_s), mu_s) if c <= -sp.Rational(1, 3)]
    assert [sp.simplify(branch_1.subs(mu_s, c)) for c in crit] == [attention_third_moment_bound()]
    branch_2 = (1 + mu_s) * (1 - mu_s) ** 2 / 2         # mu > -1/3: the lines cross at V = -ab/2
    assert sp.diff(branch_2, mu_s).subs(mu_s, -sp.Rational(1, 3)) == 0
    assert branch_2.subs(mu_s, -sp.Rational(1, 3)) == sp.Rational(16, 27)
    assert sp.Rational(16, 27) < attention_third_moment_bound()


def test_binary_cubics_satisfy_the_van_der_corput_schaake_inequality():
    # p(θ)^2 + p'(θ)^2/9 <= max |p|^2 for p(θ) = T(x_θ, x_θ, x_θ), T symmetric on R^2
    gen = np.random.default_rng(1)
    theta = np.linspace(0.0, 2 * np.pi, 20001)
    c, s = np.cos(theta), np.sin(theta)
    for _ in range(300):
        t0, t1, t2, t3 = gen.standard_normal(4)        # T_111, T_112, T_122, T_222
        p = t0 * c**3 + 3 * t1 * c**2 * s + 3 * t2 * c * s**2 + t3 * s**3
        dp = 3 * (-t0 * c**2 * s + t1 * (c**3 - 2 * c * s**2) + t2 * (2 * c**2 * s - s**3)
                  + t3 * s**2 * c)
        assert np.max(p**2 + dp**2 / 9) <= np.max(np.abs(p)) ** 2 * (1 + 1e-6)


@pytest.mark.parametrize("d", [2, 3, 6])
def test_the_trilinear_attention_term_never_exceeds_kappa_per_unit_norms(d):
    gen = np.random.default_rng(d)
    S_, T = 4000, 4
    x = gen.standard_normal((S_, T, d))
    x /= np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1.0)
    x[::2] /= np.linalg.norm(x[::2], axis=-1, keepdims=True)       # tokens on the sphere
    s = gen.dirichlet(np.full(T, 0.5), S_)
    y = x - np.einsum("st,std->sd", s, x)[:, None, :]
    w, w2, u = (gen.standard_normal((S_, d)) for _ in range(3))
    w2[::3] = w[::3]                                   # aligned pairs too
    u[::5] = w[::5]
    value = np.einsum("st,st,st,st->s", s, np.einsum("std,sd->st", y, w),
                      np.einsum("std,sd->st", y, w2), np.einsum("std,sd->st", y, u))
    norms = np.linalg.norm(w, axis=1) * np.linalg.norm(w2, axis=1) * np.linalg.norm(u, axis=1)
    assert np.all(np.abs(value) <= KAPPA * norms * (1 + 1e-12))


def test_kappa_is_attained_by_two_tokens():
    # tokens ±e, weights (1 - 1/√3)/2 on +e: third central moment of Z = eᵀx is exactly κ
    p = (1 - 1 / math.sqrt(3)) / 2
    third = _third_central(np.array([[1.0, -1.0]]), np.array([[p, 1 - p]]))
    assert third[0] == pytest.approx(KAPPA, rel=1e-14)


@pytest.mark.parametrize(("sig1", "sig2"), [(1.0, KAPPA), (0.3, 2.0)])
def test_default_hessian_bound_dominates_the_coupled_form_with_kappa_and_is_below_the_blocks_one(
        sig1, sig2):
    # |D²g[h, k]| <= sig2 |Dz[h]||Dz[k]| + sig1 ((1 - t^2)(a_U b_W + a_W b_U) + κ u a_W b_W)
    u = sp.Symbol("u", nonnegative=True)
    t, uu = T_GRID[:, None], U_GRID[None, :]
    values = {S.sigma1: sig1, S.sigma2: sig2}
    for a in BLOCKS:
        for b in BLOCKS:
            new = sp.lambdify(u, head_hessian_block_bound(u, a, b).subs(values))(U_GRID)
            old = sp.lambdify(u, head_hessian_block_bound(u, a, b, third_moment=False)
                              .subs(values))(U_GRID)
            dz_a = t * a[0] + (1 - t**2) * uu * a[1]
            dz_b = t * b[0] + (1 - t**2) * uu * b[1]
            coupled = sig2 * dz_a * dz_b + sig1 * ((1 - t**2) * (a[0] * b[1] + a[1] * b[0])
                                                   + KAPPA * uu * a[1] * b[1])
            assert np.all(coupled.max(axis=0) <= new * (1 + 1e-12)), (a, b)
            assert np.all(new <= old * (1 + 1e-12)), (a, b)


@pytest.mark.parametrize("m", [2, 64, 1576, 8192])
def test_default_route_is_never_looser_than_the_blocks_route(m):
    tight = evaluate("theorem1", validate(m=m, **FIG1))
    blocks = evaluate(route_key("theorem1", "blocks"), validate(m=m, **FIG1))
    assert blocks.statement.route == "blocks"
    for key in ("eps_taylor", "eps_cf", "eps_lin", "eps_app", "output_envelope_F"):
        assert mpmath.mpf(tight.constants[key]) <= mpmath.mpf(blocks.constants[key])
    assert mpmath.mpf(tight.bound["min_iterate"]) <= mpmath.mpf(blocks.bound["min_iterate"])


def test_default_route_is_informative_from_m_1576_at_the_figure_1_setting_in_mpmath():
    # derivations.md §2.2, §7.10: min_iterate < Y^2 = 81 from m = 1576 (1730 on the blocks route)
    def below(m: int) -> bool:
        ev = evaluate("theorem1", validate(m=m, **FIG1))
        return mpmath.mpf(ev.bound["min_iterate"]) < mpmath.mpf(ev.constants["initial_loss_bound"])

    assert below(1576) and not below(1574)
