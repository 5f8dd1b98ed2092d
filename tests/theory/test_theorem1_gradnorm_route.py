"""The gradnorm route of Theorem 1 (derivations.md §7.9): ‖∇R̂‖² ≤ 4L²R̂ in the drift recursion.

Each test could fail: a min_iterate that is not the smallest of its three forms, a gradient form
below B² where its margin 1 − ηL² is under ε/B (where it is only valid through R̄ ≤ B²), a default
step with ηL² ≥ ½, or a smallest informative width other than the one derivations.md states.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import sympy as sp
from boundcalc.theory import symbols as S
from boundcalc.theory.theorem1 import gradient_norm_form

from boundcalc.calc.api import evaluate
from boundcalc.inputs.params import validate

FIG1 = dict(n=1000, d=8, rho=3, nu=3)




@pytest.mark.slow
def test_gradnorm_min_iterate_is_the_smallest_of_its_three_forms(fig1_grid):
    out = fig1_grid("theorem1_gradnorm", m=2.0 ** np.arange(1, 30))
    forms = np.minimum(np.minimum(out["bound.min_iterate_linear_drift"],
                                  out["bound.min_iterate_cauchy_schwarz"]),
                       out["bound.min_iterate_gradient_cauchy_schwarz"])
    assert np.allclose(out["bound.min_iterate"], forms, rtol=1e-12, atol=0)
    # the gradient form is the active one at large widths
    assert (out["bound.min_iterate_gradient_cauchy_schwarz"][-5:] == forms[-5:]).all()


def test_default_step_keeps_the_step_margin_above_one_half(fig1_grid):
    out = fig1_grid("theorem1_gradnorm", m=2.0 ** np.arange(1, 40), K=np.array([[1.0], [4000.0]]))
    assert (out["constants.step_margin_a"] > 0.5).all()


def test_gradient_form_is_at_least_b_squared_where_the_margin_is_below_eps_over_b():
    # a user step with eta L^2 > 1: the form must fall back to something >= B^2 (R-bar <= B^2)
    ev = evaluate("theorem1_gradnorm", validate(m=4096, eta="1", **FIG1))
    assert ev.constants["step_margin_a"] < 0
    assert ev.bound["min_iterate_gradient_cauchy_schwarz"] >= ev.constants["trivial_bound_B2"]
    tight = evaluate("theorem1", validate(m=4096, eta="1", **FIG1))
    # at this step the tight forms are far above B^2, so the gradient form (R-bar <= B^2) is the min
    assert tight.bound["min_iterate"] > ev.bound["min_iterate_gradient_cauchy_schwarz"]
    assert mpmath.almosteq(ev.bound["min_iterate"],
                           ev.bound["min_iterate_gradient_cauchy_schwarz"], rel_eps=1e-15)


def test_gradient_form_solves_its_quadratic_with_margin_a():
    a, bound = gradient_norm_form(sp.Integer(2), sp.Integer(10), sp.Integer(3),
                                  sp.Rational(1, 8))
    o = sp.Rational(27, 500)                  # ||nu||^2/(4 eta K) at nu = 3, eta = 1/8, K = 1000
    root = sp.sqrt(bound.subs({S.K: 1000, S.nu_c: 3, S.nu_u: 3, S.nu_w: 3}))
    assert a == sp.Rational(1, 2)
    assert sp.simplify(a * root**2 - 3 * root - o) == 0


def test_smallest_informative_width_at_the_figure_1_setting_in_mpmath():
    # derivations.md §7.9: min_iterate < Y^2 = 81 from m = 1444 on the gradnorm route (the tight
    # route's block bounds of §7.10 with §2.2's attention constant plus the gradient-norm form;
    # 1586 with §2.1's 32/27, 4286 before the block bounds)
    def below(m):
        ev = evaluate("theorem1_gradnorm", validate(m=m, **FIG1))
        return mpmath.mpf(ev.bound["min_iterate"]) < mpmath.mpf(ev.constants["initial_loss_bound"])

    assert below(1444) and not below(1442)


def test_proposition1_and_realizable_remark9_share_the_gradnorm_bound(fig1_grid):
    m = 2.0 ** np.arange(1, 30)
    thm = fig1_grid("theorem1_gradnorm", m=m)
    for other in ("prop1_gradnorm", "remark9_gradnorm"):
        out = fig1_grid(other, m=m)
        for key in ("bound.min_iterate", "bound.min_iterate_gradient_cauchy_schwarz",
                    "constants.theorem_step_size"):
            assert np.array_equal(out[key], thm[key]), (other, key)
