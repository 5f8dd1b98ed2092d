"""Proposition 2 (IndRNN, App. B.1): its T-dependence through the cutoff, and compare_rnn."""

from __future__ import annotations

import subprocess
import sys

import pytest
import sympy as sp
from boundcalc.theory import symbols as S
from boundcalc.theory.activations import TANH
from boundcalc.theory.prop2 import (
    DEFAULT_ALPHA,
    alpha,
    geometric_sum,
    prop2,
    recurrent_factor,
)

from boundcalc.calc.compare_rnn import compare_rnn, evaluate_prop2
from boundcalc.calc.evaluator import ARGUMENTS
from boundcalc.inputs.params import InputError, validate

# every symbol but T (and alpha) fixed: m = 64, rho_u / sqrt(m) = 1/4, so lambda = alpha + 1/4
POINT = {S.m: 64, S.n: 1000, S.delta: sp.Rational(1, 20), S.rho_c: 2, S.rho_u: 2, S.rho_w: 2,
         S.nu_c: 1, S.nu_u: 1, S.nu_w: 1, S.sigma0: TANH.sigma0, S.sigma1: TANH.sigma1,
         S.sigma2: TANH.sigma2, S.K: 4000}


def _bound_in_T(alpha_value) -> sp.Expr:
    """min_iterate at the proposition's own step size, as a function of T alone."""
    st = prop2(alpha_value)
    expr = st.bound["min_iterate"].subs(S.eta, st.constants["theorem_step_size"])
    return expr.xreplace({k: sp.sympify(v) for k, v in POINT.items()})


def _exponential_rates(expr: sp.Expr) -> set[sp.Expr]:
    """{b^k : b^(k T + c) occurs in expr}: the per-step growth factors of the T-dependence."""
    rates = set()
    for power in expr.atoms(sp.Pow):
        if S.T in power.exp.free_symbols:
            rates.add(power.base ** sp.Poly(power.exp, S.T).coeff_monomial(S.T))
    return rates


@pytest.mark.parametrize("lam", [sp.Rational(1, 2), sp.Integer(1), sp.Rational(3, 2)])
def test_geometric_sum_is_the_sum_of_powers_in_every_regime(lam):
    for t in range(7):
        assert geometric_sum(lam, t) == sum(lam**s for s in range(t))


def test_bound_is_flat_in_T_below_the_cutoff():
    expr = _bound_in_T(sp.Rational(1, 2))            # lambda = 3/4 < 1
    assert S.T in expr.free_symbols
    # T enters through lambda^T = (3/4)^T and lambda_0^T = (1/2)^T (times polynomials in T)
    assert _exponential_rates(expr) == {sp.Rational(3, 4), sp.Rational(1, 2)}
    f = sp.lambdify(S.T, expr, "mpmath")
    assert f(64) < f(1024) <= f(10**6) < 1.05 * f(64)
    assert abs(f(10**6) / f(1024) - 1) < 1e-9         # saturated: nothing left to grow


def test_bound_grows_linearly_at_the_cutoff():
    expr = _bound_in_T(sp.Rational(3, 4))            # lambda = 3/4 + 1/4 = 1 exactly
    assert _exponential_rates(expr) == {sp.Rational(3, 4)}   # only lambda_0 = alpha decays
    f = sp.lambdify(S.T, expr, "mpmath")
    # P_T = T: G_T ~ T, H_T ~ T^3; the free caps keep F (sqrt(m) c_max sigma0) and eps_lin
    # bounded and eps_cf ~ G_T ~ T (indrnn.md §3.1), so B is bounded and B * eps_cf ~ T
    # dominates (T^4 through B * eps_lin without the caps)
    assert 1.99 < f(2**14) / f(2**13) <= 2


@pytest.mark.slow
def test_bound_grows_exponentially_past_the_cutoff():
    expr = _bound_in_T(DEFAULT_ALPHA)                # lambda = 3/2 + 1/4 = 7/4
    lam = sp.Rational(7, 4)
    assert _exponential_rates(expr) == {lam, DEFAULT_ALPHA}
    f = sp.lambdify(S.T, expr, "mpmath")
    # dominant term B * eps_cf ~ lambda_0^T * lambda^T (B ~ B_0 ~ P_T(lambda_0), eps_cf at its
    # free cap ~ G_T ~ lambda^T): one more step multiplies by lambda * alpha (lambda^3 without
    # the caps)
    ratio = f(401) / f(400)
    assert abs(ratio / float(lam * DEFAULT_ALPHA) - 1) < 1e-6
    assert all(f(t + 1) > f(t) for t in range(1, 60))


def test_cutoff_quantity_is_sigma1_times_alpha_widened_by_the_projection_radius():
    assert sp.simplify(recurrent_factor(alpha) - S.sigma1 * (alpha + S.rho_u / sp.sqrt(S.m))) == 0
    assert recurrent_factor(alpha, at_init=True) == S.sigma1 * alpha


def test_min_iterate_is_the_sum_of_its_named_terms_and_probability_is_one_minus_delta():
    st = prop2(alpha)
    assert set(st.terms) == {"optimization", "linearization", "approximation",
                             "change_of_feature"}
    assert st.bound["min_iterate"] == sp.Add(*st.terms.values())
    assert st.probability == 1 - S.delta
    assert {c.name for c in st.conditions} == {"m_even", "rho_c_ge_nu_c", "rho_u_ge_nu_u",
                                               "rho_w_ge_nu_w"}


def test_default_statement_uses_the_authors_alpha_and_only_calculator_arguments():
    st = prop2()
    assert st.free_symbols() <= set(ARGUMENTS)
    assert sp.simplify(st.constants["recurrent_factor_init"] - S.sigma1 * DEFAULT_ALPHA) == 0


@pytest.mark.slow
def test_evaluate_prop2_matches_the_symbolic_statement():
    inputs = validate(m=64, T=12, rho="2", nu="1", eta="0.001")
    res = evaluate_prop2(inputs, alpha="0.5")
    expr = prop2(sp.Rational(1, 2)).bound["min_iterate"]
    values = {**POINT, S.T: 12, S.eta: sp.Rational(1, 1000)}
    exact = expr.xreplace({k: sp.sympify(v) for k, v in values.items()})
    assert abs(float(res.bound["min_iterate"]) / float(exact) - 1) < 1e-12
    assert res.inputs["alpha"] == 0.5 and res.conditions_hold
    assert res.verdict == "vacuous" and not res.guaranteed  # m = 64 is far below its width


def test_compare_rnn_transformer_identical_for_every_T_and_indrnn_growing_past_cutoff():
    Ts = [2**k for k in range(11)]
    rows = compare_rnn(Ts, m=512, alpha="1.5")
    assert [r["T"] for r in rows] == Ts
    assert len({r["transformer_bound"] for r in rows}) == 1
    values = [r["indrnn_log10_bound"] for r in rows]
    assert all(b > a for a, b in zip(values, values[1:], strict=False))
    assert values[-1] - values[-2] > 100                 # exponential: 512 more steps, > 1e100x
    assert all(r["regime"] == "above cutoff" for r in rows)


def test_compare_rnn_below_cutoff_is_flat_for_both_models():
    rows = compare_rnn([64, 256, 1024], m=512, alpha="0.5")
    assert len({r["transformer_bound"] for r in rows}) == 1
    first = rows[0]["indrnn_bound"]
    assert all(abs(r["indrnn_bound"] / first - 1) < 1e-6 for r in rows)
    assert all(r["regime"] == "below cutoff" for r in rows)


@pytest.mark.parametrize("kwargs, flag", [
    ({"alpha": "0"}, "--alpha"), ({"alpha": "x"}, "--alpha"), ({"m": 3}, "--m"),
])
def test_compare_rnn_bad_input_names_the_flag(kwargs, flag):
    with pytest.raises(InputError) as err:
        compare_rnn([1, 2], **kwargs)
    assert err.value.flag == flag


def test_compare_rnn_rejects_non_positive_sequence_lengths():
    with pytest.raises(InputError) as err:
        compare_rnn([0, 4])
    assert err.value.flag == "--T"


@pytest.mark.slow
def test_compare_rnn_path_never_imports_torch(tmp_path):
    code = ("import sys; from boundcalc.calc.compare_rnn import compare_rnn; "
            "compare_rnn([1, 8], m=64); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "False"
