"""The a-posteriori expressions are the a-priori ones at X = Q = Γ = 1 and u0_max = u_inf."""

from __future__ import annotations

import pytest
import sympy as sp
from boundcalc.theory import get_statement
from boundcalc.theory import symbols as S
from boundcalc.theory.aposteriori import evaluate_expressions, theorem1_a_posteriori
from boundcalc.theory.event import event_radius


def test_a_posteriori_reduces_to_a_priori_at_worst_case_geometry():
    prior, post = get_statement("theorem1"), theorem1_a_posteriori()
    subs = {**S.A_PRIORI_GEOMETRY, S.u0_max: event_radius()}
    for group in ("terms", "bound"):
        for key, expr in getattr(prior, group).items():
            assert sp.simplify(getattr(post, group)[key].subs(subs) - expr) == 0, key


def test_a_posteriori_bound_increases_with_every_geometry_parameter():
    post = theorem1_a_posteriori()
    base = {S.m: 64, S.n: 100, S.d: 4, S.delta: 0.05, S.rho_c: 1, S.rho_u: 1, S.rho_w: 1,
            S.nu_c: 1, S.nu_u: 1, S.nu_w: 1, S.sigma0: 1, S.sigma1: 1, S.sigma2: 0.77, S.K: 100,
            S.eta: 1e-3, S.x_max: 0.5, S.q_max: 0.5, S.g_max: 0.25, S.u0_max: 3.0}
    expr = {"b": post.bound["min_iterate"]}
    ref = evaluate_expressions(expr, base)["b"]
    for sym in (S.x_max, S.q_max, S.g_max, S.u0_max):
        bumped = dict(base)
        bumped[sym] = base[sym] * 1.5
        assert evaluate_expressions(expr, bumped)["b"] > ref, sym


def test_evaluate_expressions_names_missing_symbols():
    with pytest.raises(ValueError, match="missing"):
        evaluate_expressions({"x": S.m + S.n}, {S.m: 1.0})
