"""Lemma 6 (theory/lemma6.py): the envelopes F, Y, B, L and 2LB recomputed by hand from the paper's
formulas and compared with the calculator; the tight route's envelopes never above the paper's;
ε_mis enters B and Y additively; ``blockwise`` needs ``tight``."""

from __future__ import annotations

import itertools

import mpmath
import numpy as np
import pytest
import sympy as sp
from boundcalc.theory import symbols as S
from boundcalc.theory.activations import TANH
from boundcalc.theory.lemma2 import lipschitz_constant
from boundcalc.theory.lemma6 import (
    label_envelope,
    loss_gradient_envelope,
    output_envelope,
    residual_envelope,
)

from boundcalc.calc.api import evaluate
from boundcalc.inputs.params import validate

TANH_SIGMAS = {S.sigma0: TANH.sigma0, S.sigma1: TANH.sigma1, S.sigma2: TANH.sigma2}
ARGS = (S.m, S.d, S.delta, S.rho_c, S.rho_u, S.rho_w, S.nu_c, S.nu_u, S.nu_w)
GRID = np.array(list(itertools.product((2, 16, 512, 2**20), (1, 8, 64), (0.05, 0.5), (0.5, 3.0),
                                       (0.1, 3.0), (1.0, 10.0), (0.0, 1.0), (2.0,), (0.5, 3.0))),
                dtype=float).T


def _hand_envelopes(m: int, d: int, delta: str, rho: tuple, nu: tuple) -> dict[str, mpmath.mpf]:
    """F, Y, B, L, 2LB for tanh (σ₀ = σ₁ = 1) on the paper route, from Definition 1, Lemma 2 and
    Lemma 6 as the module docstrings state them."""
    rc, ru, rw = (mpmath.mpf(x) for x in rho)
    vc, vu, vw = (mpmath.mpf(x) for x in nu)
    m_ = mpmath.mpf(m)
    u_inf = mpmath.sqrt(d) + mpmath.sqrt(2 * mpmath.log(m_ / (2 * mpmath.mpf(delta))))
    u_max = u_inf + ru / mpmath.sqrt(m_)
    c_max = 1 + rc / mpmath.sqrt(m_)
    grad = mpmath.sqrt(1 + u_max**2)
    f_env = min(rc + grad * mpmath.sqrt(ru**2 + rw**2), mpmath.sqrt(m_) * c_max)
    y_env = vc + vu + vw * mpmath.sqrt(d)
    lip = mpmath.sqrt(1 + c_max**2 * grad**2)
    return {"output_envelope_F": f_env, "label_envelope_Y": y_env,
            "residual_envelope_B": f_env + y_env, "lipschitz_L": lip,
            "loss_gradient_envelope": 2 * lip * (f_env + y_env)}


@pytest.mark.parametrize(("m", "d", "delta", "rho", "nu"), [
    (512, 8, "0.05", (3, 3, 3), (3, 3, 3)),     # the Fig. 1 setting: F is its cap √m·c_max·σ₀
    (2, 8, "0.05", (3, 3, 3), (1, 2, 3)),
    (2**40, 64, "0.3", (0.5, 1, 7), (0, 0.25, 4)),  # F is σ₀ρ_c + G(u_max)·r
])
def test_every_envelope_matches_a_hand_computation_from_the_paper(m, d, delta, rho, nu):
    inputs = validate(m=m, d=d, delta=delta, rho=",".join(map(str, rho)),
                      nu=",".join(map(str, nu)))
    with mpmath.workdps(40):
        got = evaluate("lemma6", inputs, precision=40).bound
        for key, expected in _hand_envelopes(m, d, delta, rho, nu).items():
            assert abs(got[key] - expected) <= mpmath.mpf(10) ** -30 * expected, key


def test_the_output_cap_binds_up_to_the_fig1_width_and_not_at_a_million_heads():
    for m, binds in ((2, True), (512, True), (2**20, False)):
        res = evaluate("lemma6", validate(m=m, rho="3"))
        assert (res.bound["output_envelope_F"] == res.constants["output_envelope_F_cap"]) is binds


def _numeric(expr: sp.Expr):
    return sp.lambdify(ARGS, expr.subs(TANH_SIGMAS), "numpy")


@pytest.mark.parametrize("envelope", [output_envelope, label_envelope, residual_envelope])
def test_the_tight_route_envelope_is_never_above_the_papers(envelope):
    """ū ≤ u_∞ and Ĝ ≤ G, so F shrinks; Y loses its √d ≥ 1."""
    paper = _numeric(envelope())(*GRID)
    tight = _numeric(envelope(tight=True))(*GRID)
    assert np.all(tight <= paper * (1 + 1e-12))
    assert np.any(tight < paper * (1 - 1e-3))


def test_the_blockwise_output_envelope_is_never_above_the_tight_one():
    tight = _numeric(output_envelope(tight=True))(*GRID)
    assert np.all(_numeric(output_envelope(tight=True, blockwise=True))(*GRID)
                  <= tight * (1 + 1e-12))


def test_blockwise_without_tight_is_refused_naming_it():
    with pytest.raises(ValueError, match="`blockwise` needs `tight`"):
        output_envelope(blockwise=True)


@pytest.mark.parametrize("tight", [False, True])
def test_misspecification_adds_exactly_eps_mis_to_y_and_to_b(tight):
    for envelope in (label_envelope, residual_envelope):
        assert sp.simplify(envelope(S.eps_mis, tight=tight) - envelope(tight=tight)
                           - S.eps_mis) == 0


@pytest.mark.parametrize("tight", [False, True])
def test_the_loss_gradient_envelope_is_twice_l_times_b(tight):
    lip = lipschitz_constant(True, "average" if tight else "max")
    assert sp.simplify(loss_gradient_envelope(S.eps_mis, tight=tight)
                       - 2 * lip * residual_envelope(S.eps_mis, tight=tight)) == 0


def test_every_envelope_is_non_decreasing_in_every_radius_and_budget():
    bounds = [_numeric(f()) for f in (output_envelope, label_envelope, residual_envelope,
                                      loss_gradient_envelope)]
    base = np.array([512.0, 8.0, 0.05, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0])
    for k in range(3, 9):
        larger = base.copy()
        larger[k] *= 1.5
        for bound in bounds:
            assert bound(*larger) >= bound(*base)
