"""The free caps on the error constants (derivations.md §4.1, §5.2, §6, §7.3.1, §7.7 item 2;
indrnn.md §3.1): each capped constant is the smaller of its lemma's bound and a cap that holds
without the second-order expansion or the concentration step; the cap binds at small widths
(where the lemma's bound was above it) and is inactive at large ones."""

from __future__ import annotations

import math

import pytest
import sympy as sp
from boundcalc.theory import get_statement
from boundcalc.theory import symbols as S
from boundcalc.theory.activations import get_activation
from boundcalc.theory.catalog import route_key
from boundcalc.theory.lemma2 import feedforward_rms, head_bounds, head_gradient_block_bound
from boundcalc.theory.lemma3 import (
    attention_ffn_radius,
    linearization_error_block_bound,
    linearization_error_bound,
    taylor_remainder_block_bound,
    taylor_remainder_bound,
)
from boundcalc.theory.lemma5 import approximation_error_bound
from boundcalc.theory.prop2 import prop2
from boundcalc.theory.theorem1 import change_of_feature_error_bound

TANH = get_activation("tanh")

#: The Figure 1 setting of derivations.md §7.8 (ρ = ν = 3, d = 8, n = 1000, δ = 0.05, tanh).
FIGURE1 = {S.n: 1000, S.d: 8, S.delta: sp.Rational(1, 20), S.rho_c: 3, S.rho_u: 3, S.rho_w: 3,
           S.nu_c: 3, S.nu_u: 3, S.nu_w: 3, S.sigma0: TANH.sigma0, S.sigma1: TANH.sigma1,
           S.sigma2: TANH.sigma2, S.K: 4000}


def _uncapped(route: str) -> dict[str, sp.Expr]:
    """The lemmas' own bounds, before the cap, of every capped constant on ``route``."""
    if route == "tight":            # the block bounds of derivations.md §7.10
        return {
            "eps_lin": linearization_error_block_bound(),
            "eps_app": approximation_error_bound(attention_dof="one", sub_gamma=True),
            "eps_cf": change_of_feature_error_bound(route="tight"),
            "output_envelope_F": S.sigma0 * S.rho_c + head_gradient_block_bound(
                feedforward_rms(), S.rho_u, S.rho_w),
            "eps_taylor": taylor_remainder_block_bound(),
        }
    event = "average" if route == "joint" else "max"
    grad, _ = head_bounds(True, event)
    out = {
        "eps_lin": linearization_error_bound(event=event),
        "eps_app": approximation_error_bound(attention_dof="one" if route == "joint" else "d"),
        "eps_cf": change_of_feature_error_bound(route=route),
        "output_envelope_F": S.sigma0 * S.rho_c + grad * attention_ffn_radius(),
    }
    if route == "joint":
        out["eps_taylor"] = taylor_remainder_bound()
    return out


def _at(expr: sp.Expr, m: int, point: dict | None = None) -> float:
    return float(sp.N(sp.sympify(expr).xreplace({**(point or FIGURE1), S.m: sp.Integer(m)}), 30))


@pytest.mark.parametrize("route", ["tight", "joint", "paper"])
def test_every_capped_constant_is_the_smaller_of_its_lemma_bound_and_its_free_cap(route):
    constants = get_statement(route_key("theorem1", route)).constants
    for key, lemma in _uncapped(route).items():
        assert constants[key] == sp.Min(lemma, constants[f"{key}_cap"]), key


@pytest.mark.parametrize("name", ["theorem1", "theorem1_paper", "theorem1_joint", "prop1",
                                  "remark9", "prop2", "lemma3", "lemma6"])
def test_every_cap_is_reported_beside_its_constant_with_a_meaning_line(name):
    st = get_statement(name)
    caps = [k for k in st.constants if k.endswith("_cap")]
    assert caps
    for cap in caps:
        key = cap.removesuffix("_cap")
        assert key in st.constants or key in st.bound
        assert "free cap" in st.descriptions[cap]
        assert st.latex_names.get(cap)


def test_lemma5_statement_keeps_lemma5_uncapped_and_says_so():
    # the cap on eps_app holds on the U(0)-event Theorem 1 assumes; Lemma 5 itself needs none
    st = get_statement("lemma5")
    assert st.bound["eps_app"] == approximation_error_bound()
    assert not any(k.endswith("_cap") for k in st.constants)
    assert "cap" not in st.descriptions["eps_app"]


@pytest.mark.parametrize(("m", "lemma", "capped"), [
    (8, {"eps_lin": 113.239, "eps_taylor": 177.863, "eps_app": 37.190, "eps_cf": 226.477},
     {"eps_lin": 27.753, "eps_taylor": 48.098, "eps_app": 26.382, "eps_cf": 64.537}),
    (16, {"eps_lin": 65.801, "eps_taylor": 91.949, "eps_app": 24.547, "eps_cf": 131.602},
     {"eps_lin": 28.825, "eps_taylor": 39.513, "eps_app": 24.547, "eps_cf": 52.338}),
])
def test_free_caps_bind_at_small_width_on_the_figure_1_setting(m, lemma, capped):
    # the joint route (the tight route before the block bounds of derivations.md §7.10)
    constants = get_statement("theorem1_joint").constants
    uncapped = _uncapped("joint")
    for key, value in lemma.items():
        exact = _at(uncapped[key], m)
        assert exact == pytest.approx(value, rel=1e-4), key
        assert _at(constants[key], m) == pytest.approx(capped[key], rel=1e-4), key
        assert _at(constants[key], m) == min(exact, _at(constants[f"{key}_cap"], m)), key
    # eps_app's cap is Y + sigma0 nu_c + sigma1 nu_u + sigma1 nu_w u_bar (all = 3 here, Y = 9)
    u_bar = _at(constants["u_bar"], m)
    assert _at(constants["eps_app_cap"], m) == pytest.approx(9 + 3 + 3 + 3 * u_bar, rel=1e-12)


def test_the_paper_route_output_envelope_is_capped_by_the_bounded_activation():
    # m = 256 on the figure 1 setting: sigma0 rho_c + G(u_max) r = 32.9 > sqrt(m) c_max sigma0 = 19
    constants = get_statement("theorem1_paper").constants
    assert _at(_uncapped("paper")["output_envelope_F"], 256) == pytest.approx(32.92, rel=1e-3)
    assert _at(constants["output_envelope_F"], 256) == pytest.approx(19.0, rel=1e-12)
    residual = 19 + 3 + 3 + 3 * math.sqrt(8)                     # F + Y, Y keeps its sqrt(d)
    assert _at(constants["residual_envelope_B"], 256) == pytest.approx(residual, rel=1e-12)


@pytest.mark.parametrize("route", ["tight", "joint", "paper"])
@pytest.mark.parametrize("m", [4096, 2**20, 2**40])
def test_free_caps_are_inactive_at_large_width(route, m):
    constants = get_statement(route_key("theorem1", route)).constants
    for key, lemma in _uncapped(route).items():
        value, cap = _at(constants[key], m), _at(constants[f"{key}_cap"], m)
        assert value == pytest.approx(_at(lemma, m), rel=1e-15) and value < cap, key


@pytest.mark.slow
def test_capped_constants_lower_the_bound_at_small_width_and_keep_the_informative_width():
    st = get_statement("theorem1_joint")
    bound = st.bound["min_iterate"].subs(S.eta, st.constants["theorem_step_size"])
    # m = 8: 6559.7 with the lemmas' bounds alone (B eps_taylor 2637, B eps_cf 3358)
    assert _at(bound, 8) == pytest.approx(2074.0, rel=1e-3)
    # the caps are inactive where the bound crosses Y^2 = 81: m = 4768 still the first width below
    assert _at(bound, 4766) > 81 > _at(bound, 4768)


# --- Proposition 2 (the IndRNN) ------------------------------------------------------------------

#: The setting of `boundcalc validate prop2` (docs/indrnn.md §6): m = 16, rho = 2, nu = 1, n = 8.
VALIDATE_PROP2 = {S.n: 8, S.d: 4, S.delta: sp.Rational(1, 20), S.rho_c: 2, S.rho_u: 2, S.rho_w: 2,
                  S.nu_c: 1, S.nu_u: 1, S.nu_w: 1, S.sigma0: TANH.sigma0, S.sigma1: TANH.sigma1,
                  S.sigma2: TANH.sigma2, S.K: 4000}


@pytest.mark.parametrize(("T", "alpha", "eps_lin_lemma"), [
    (4, sp.Rational(3, 2), 908.0), (8, sp.Rational(3, 2), 5.64e5), (8, sp.Rational(1, 2), 637.0),
    (32, sp.Rational(9, 10), 6.63e11),
])
@pytest.mark.slow
def test_indrnn_caps_bind_at_the_validation_setting(T, alpha, eps_lin_lemma):
    st = prop2(alpha)
    point = {**VALIDATE_PROP2, S.T: T}
    c = {k: _at(v, 16, point) for k, v in st.constants.items()}
    # F: sqrt(m) c_max sigma0 = 4 * 1.5 = 6 (48.8 for sigma0 rho_c + G_T r at T = 4, alpha = 3/2)
    assert c["output_envelope_F_cap"] == pytest.approx(6.0, rel=1e-12)
    assert c["output_envelope_F"] == c["output_envelope_F_cap"]
    assert c["eps_lin"] == c["eps_lin_cap"] < eps_lin_lemma / 10
    assert c["eps_cf"] == c["eps_cf_cap"]
    assert c["residual_envelope_B"] == pytest.approx(6.0 + c["label_envelope_Y"], rel=1e-12)


def test_indrnn_caps_at_T_4_are_the_derived_closed_forms():
    c = {k: _at(v, 16, {**VALIDATE_PROP2, S.T: 4}) for k, v in prop2().constants.items()}
    g, c_max, r = c["unit_gradient_G"], 1.5, 2 * math.sqrt(2)
    g0 = math.hypot(1 + 1.5 + 1.5**2 + 1.5**3, 1 + 1.5 + 1.5**2)          # G_4(lambda_0 = 3/2)
    assert c["eps_lin_cap"] == pytest.approx(c_max * min(g * r, 8.0) + g0 * r, rel=1e-12)
    assert c["eps_app_cap"] == pytest.approx(2 * c["label_envelope_Y"], rel=1e-12)
    assert c["eps_cf_cap"] == pytest.approx(3 * min(g * r / 4, 2.0)
                                            + (r + math.sqrt(2)) * (c_max * g + g0), rel=1e-12)


def test_indrnn_caps_are_inactive_at_large_width_below_the_cutoff():
    st = prop2(sp.Rational(1, 2))
    point = {**VALIDATE_PROP2, S.T: 4}
    for key in ("eps_lin", "eps_cf", "output_envelope_F"):
        assert _at(st.constants[key], 2**30, point) < _at(st.constants[f"{key}_cap"], 2**30, point)
