"""The a-posteriori expressions are the a-priori ones at X = Q = Γ = 1, u0_max = u_inf and
u0_rms = u_bar, on both proof routes."""

from __future__ import annotations

import mpmath
import pytest
import sympy as sp
from boundcalc.theory import get_statement
from boundcalc.theory import symbols as S
from boundcalc.theory.aposteriori import theorem1_a_posteriori
from boundcalc.theory.event import event_radius, head_average_radius

from boundcalc.calc.evaluator import compile_function, evaluate_expressions


@pytest.mark.parametrize("route", ["paper", "tight"])
@pytest.mark.slow
def test_a_posteriori_reduces_to_a_priori_at_worst_case_geometry(route):
    prior = get_statement("theorem1_paper" if route == "paper" else "theorem1")
    post = theorem1_a_posteriori(route)
    radii = {S.u0_max: event_radius(), S.u0_rms: head_average_radius()}
    subs = {**S.A_PRIORI_GEOMETRY, **radii}
    points = [{S.m: m, S.n: 1000.0, S.d: d, S.delta: 0.05, S.rho_c: rho, S.rho_u: rho,
               S.rho_w: 0.5, S.nu_c: 1.0, S.nu_u: 2.0, S.nu_w: 1.0, S.sigma0: 1.0, S.sigma1: 1.0,
               S.sigma2: 0.77, S.K: 4000.0, S.eta: 1e-3, S.T: 16.0}
              for m, d, rho in ((2.0, 1.0, 3.0), (64.0, 8.0, 2.0), (4096.0, 3.0, 0.25))]
    piecewise = {}
    for group in ("terms", "bound"):
        for key, expr in getattr(prior, group).items():
            form = getattr(post, group)[key]
            if not (form.has(sp.Piecewise) or expr.has(sp.Piecewise)):
                assert sp.simplify(form.subs(subs) - expr) == 0, key
            else:
                piecewise[key] = (form, expr)
    # Piecewise forms (the tight route's concave gradient bound) keep sqrt(x**2) where the
    # a-priori form has x, which simplify cannot cancel in reasonable time, and substituting into
    # their Min / Max alone takes sympy a minute: compare both at 50 digits (mpmath) instead, the
    # a-posteriori form at X = Q = Γ = 1 and at the radii's values at the point (the same number
    # as the substituted form's), all keys in one compiled function
    if not piecewise:
        return
    keys = list(piecewise)
    forms = tuple(piecewise[k][0] for k in keys) + tuple(piecewise[k][1] for k in keys)
    inputs = tuple(radii) + tuple(sorted(set(points[0]), key=lambda s: s.name))
    assert set().union(*(f.free_symbols for f in forms)) <= set(inputs) | set(subs)
    radius_values = compile_function(tuple(radii.values()), inputs[len(radii):])
    values = compile_function(forms, (*S.A_PRIORI_GEOMETRY, *inputs))
    for point in points:
        with mpmath.workdps(50):
            args = [mpmath.mpf(point[s]) for s in inputs[len(radii):]]
            out = values(*(mpmath.mpf(v) for v in S.A_PRIORI_GEOMETRY.values()),
                         *radius_values(*args), *args)
        for k, reduced, expected in zip(keys, out[:len(keys)], out[len(keys):], strict=True):
            assert float(reduced) == pytest.approx(float(expected), rel=1e-14), (k, point)


@pytest.mark.parametrize(("route", "radius"), [("paper", S.u0_max), ("tight", S.u0_rms)])
@pytest.mark.slow
def test_a_posteriori_bound_increases_with_every_geometry_parameter(route, radius):
    post = theorem1_a_posteriori(route)
    base = {S.m: 64, S.n: 100, S.d: 4, S.delta: 0.05, S.rho_c: 1, S.rho_u: 1, S.rho_w: 1,
            S.nu_c: 1, S.nu_u: 1, S.nu_w: 1, S.sigma0: 1, S.sigma1: 1, S.sigma2: 0.77, S.K: 100,
            S.eta: 1e-3, S.x_max: 0.5, S.q_max: 0.5, S.g_max: 0.25, S.u0_max: 3.0,
            S.u0_rms: 2.0}
    expr = {"b": post.bound["min_iterate"]}
    ref = evaluate_expressions(expr, base)["b"]
    for sym in (S.x_max, S.q_max, S.g_max, radius):
        bumped = dict(base)
        bumped[sym] = base[sym] * 1.5
        assert evaluate_expressions(expr, bumped)["b"] > ref, sym


def test_evaluate_expressions_names_missing_symbols():
    with pytest.raises(ValueError, match="missing"):
        evaluate_expressions({"x": S.m + S.n}, {S.m: 1.0})
