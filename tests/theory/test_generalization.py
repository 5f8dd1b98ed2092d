"""Facts the paper-003 bound must satisfy whatever the constants: monotonicity in the radii and in
N, the relations between the derived and printed forms, the symbolic bookkeeping."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from boundcalc.theory import generalization as G
from boundcalc.theory import generalization_symbols as GS

from boundcalc.generalization import bound_inputs as GEN
from boundcalc.generalization.bound import evaluate_generalization
from boundcalc.generalization.bound_inputs import spectral_norm

NORMS = {"WQ0_F": 8.1, "WK0_F": 7.9, "WV0_F": 8.0, "WQ0_2": 2.0, "WK0_2": 1.9, "WV0_2": 2.05,
         "WO0_2": 0.95}
BASE = {"N": 10000, "d_m": 64, "d_s": 13, "R_X": 1.0, "radii": (1.0, 1.0, 1.0, 1.0),
        "delta": 0.05, "alpha": 0.5, "Phi0": 100.0, "init_norms": NORMS}
# small norms, many samples: sqrt(P/N) < A, the interior (non-clamped) Dudley regime
SMALL = {**BASE, "N": 200000, "d_m": 4, "d_s": 3, "R_X": 0.9, "radii": (0.05, 0.07, 0.11, 0.13),
         "init_norms": {"WQ0_F": 0.31, "WK0_F": 0.29, "WV0_F": 0.33, "WQ0_2": 0.2,
                        "WK0_2": 0.21, "WV0_2": 0.22, "WO0_2": 0.4}}


def ev(point: dict, **change) -> dict:
    return evaluate_generalization(**{**point, **change})


def _bumped(point: dict, index: int, factor: float) -> tuple:
    radii = list(point["radii"])
    radii[index] *= factor
    return tuple(radii)


@pytest.mark.parametrize("point", [BASE, SMALL], ids=["clamped", "interior"])
@pytest.mark.parametrize("index", range(4), ids=["R_Q", "R_K", "R_V", "R_O"])
def test_generalization_gap_terms_increase_with_each_radius(point, index):
    lo = ev(point)
    hi = ev(point, radii=_bumped(point, index, 3.0))
    gap_lo = lo["terms"]["rademacher"] + lo["terms"]["confidence"]
    gap_hi = hi["terms"]["rademacher"] + hi["terms"]["confidence"]
    assert gap_hi > gap_lo
    for key in ("z", "z_hat", "A", "P"):
        assert hi["quantities"][key] >= lo["quantities"][key], key


def test_true_loss_bound_increases_with_all_radii_when_the_gap_dominates():
    lo, hi = ev(BASE), ev(BASE, radii=(2.0, 2.0, 2.0, 2.0))
    assert hi["bound"]["true_loss"] > lo["bound"]["true_loss"]


def test_empirical_term_is_not_monotone_in_the_radii():
    # M carries 1/R_O: a larger R_O can shrink M and so enlarge alpha^2/(8 rho M sqrt N);
    # documented in docs/generalization.md (the bound as a whole is not monotone in the radii)
    lo = ev(BASE, Phi0=0.0, radii=(1.0, 1.0, 1.0, 0.01))
    hi = ev(BASE, Phi0=0.0, radii=(1.0, 1.0, 1.0, 0.1))
    assert hi["quantities"]["M"] < lo["quantities"]["M"]
    assert hi["quantities"]["lemma4_first"] > lo["quantities"]["lemma4_first"]


@pytest.mark.parametrize("point", [BASE, SMALL], ids=["clamped", "interior"])
def test_rademacher_term_does_not_increase_with_N(point):
    ns = [point["N"] * k for k in (1, 2, 4, 8)]
    values = [ev(point, N=n)["terms"]["rademacher"] for n in ns]
    assert all(b <= a for a, b in zip(values, values[1:], strict=False))
    if point is SMALL:  # strictly decreasing when sqrt(P/N) < A
        assert all(b < a for a, b in zip(values, values[1:], strict=False))


def test_confidence_term_decreases_in_N_and_increases_as_delta_shrinks():
    assert ev(BASE, N=20000)["terms"]["confidence"] < ev(BASE)["terms"]["confidence"]
    assert ev(BASE, delta=0.01)["terms"]["confidence"] > ev(BASE)["terms"]["confidence"]


@pytest.mark.parametrize("point", [BASE, SMALL], ids=["clamped", "interior"])
def test_derived_rademacher_lies_between_zero_and_the_trivial_bound_A(point):
    q = ev(point)["quantities"]
    assert 0 < q["rademacher_complexity"] <= q["A"] * (1 + 1e-15)


def test_printed_rademacher_term_is_negative_at_the_papers_sizes():
    # N = 10000, d_m = 64 (Table 1 cell): sqrt(P/N) > e A, so line 407's closed form is < 0
    out = ev(BASE, as_printed=True)
    q = out["quantities"]
    assert q["dudley_scale"] > math.e * q["A"]
    assert out["terms"]["rademacher"] < 0
    assert not {c["name"]: c["holds"] for c in out["conditions"]}["dudley_minimiser_le_A"]


@pytest.mark.parametrize("point", [BASE, SMALL], ids=["clamped", "interior"])
def test_printed_lemma4_terms_relate_to_the_derived_ones_as_documented(point):
    der, pri = ev(point)["quantities"], ev(point, as_printed=True)["quantities"]
    # rho^4 z_hat printed vs rho^2 z derived; M_hat printed vs M derived
    ratio2 = pri["lemma4_second"] / der["lemma4_second"]
    assert ratio2 == pytest.approx(der["z"] / (der["rho"] ** 2 * der["z_hat"]), rel=1e-12)
    ratio1 = pri["lemma4_first"] / der["lemma4_first"]
    assert ratio1 == pytest.approx(der["M"] / der["M_hat"], rel=1e-12)
    # the hats only shrink the bound (M_hat >= M, z_hat >= z): not implied by the conditions
    assert pri["lemma4_first"] <= der["lemma4_first"]
    assert pri["lemma4_second"] <= der["lemma4_second"]


def test_printed_and_derived_confidence_terms_differ_as_documented():
    out = ev(BASE)
    der, pri = out["terms"]["confidence"], ev(BASE, as_printed=True)["terms"]["confidence"]
    r = 2.0  # sqrt(4 * 1^2), already an integer
    c = out["quantities"]["A"] + 1.0  # the loss range A + Y, Y = 1 by default
    assert der == pytest.approx(3 * c * math.sqrt(math.log(2 * r / 0.05) / (2 * 10000)),
                                rel=1e-12)
    assert pri == pytest.approx(math.sqrt(math.log(r / 0.05) / 10000), rel=1e-12)
    assert der != pytest.approx(pri, rel=1e-3)


def test_lemma4_derived_bound_dominates_sqrt_2_phi0_over_N_when_both_conditions_hold():
    # tiny Phi0 makes both alpha-conditions true; then Phi0 <= each bound of lines 263-269
    out = ev(SMALL, Phi0=1e-16, alpha=2.0)
    conds = {c["name"]: c["holds"] for c in out["conditions"]}
    assert conds["alpha_square"] and conds["alpha_cube"]
    q = out["quantities"]
    assert q["empirical_loss_phi0"] <= out["terms"]["empirical_loss"]


def test_probability_is_vacuous_for_large_N_with_unit_hidden_constants():
    assert ev(BASE)["probability"] < 0
    small_n = ev(BASE, N=2, d_s=1, d_m=64)
    assert small_n["probability"] > 0  # exp(-1) term only
    boosted = ev(BASE, hidden_constants={"C_prob": 1e7})
    assert boosted["probability"] > 0


@pytest.mark.parametrize("as_printed", [False, True])
def test_compact_formulas_expand_to_the_full_expressions(as_printed):
    compact = G.compact_formulas(as_printed)
    full = {**G.quantities(as_printed),
            **{f"terms.{k}": v for k, v in G.theorem5_terms(as_printed).items()},
            "bound.true_loss": G.theorem5_bound(as_printed),
            "probability": G.theorem5_probability(),
            **{f"condition.{c.name}": c.relation for c in G.theorem5_conditions(as_printed)}}
    assert set(compact) == set(full)
    rng = np.random.default_rng(7)
    values = {s: float(rng.uniform(1.0, 3.0)) for s in GS.ARGUMENTS}
    values[GS.N] = 500.0
    args = [values[s] for s in GS.ARGUMENTS]
    for key, expr in compact.items():
        expanded = G.expand_compact(expr, as_printed)
        if isinstance(expanded, sp.core.relational.Relational):
            pairs = [(expanded.lhs, full[key].lhs), (expanded.rhs, full[key].rhs)]
        else:
            pairs = [(expanded, full[key])]
        for got, want in pairs:
            got_v, want_v = sp.lambdify(GS.ARGUMENTS, [got, want], modules="mpmath")(*args)
            assert float(got_v) == pytest.approx(float(want_v), rel=1e-12), key


def test_discrepancy_forms_differ_symbolically():
    for d in G.discrepancies():
        assert d.printed_expr is not None and d.derived_expr is not None
        assert sp.simplify(d.printed_expr - d.derived_expr) != 0, d.key


def test_full_expressions_use_only_the_generalization_symbols():
    st = G.theorem5()
    assert st.free_symbols() <= set(GS.ARGUMENTS)
    assert G.theorem5(True).free_symbols() <= set(GS.ARGUMENTS)


def test_spectral_norm_matches_the_svd_on_both_paths(monkeypatch):
    rng = np.random.default_rng(11)
    w = rng.standard_normal((200, 150)) / math.sqrt(150)
    exact = float(np.linalg.svd(w, compute_uv=False)[0])
    assert spectral_norm(w) == pytest.approx(exact, rel=1e-12)
    assert spectral_norm(w.T) == pytest.approx(exact, rel=1e-12)
    monkeypatch.setattr(GEN, "EXACT_SPECTRAL_MAX", 100)  # force the Lanczos path
    assert spectral_norm(w) == pytest.approx(exact, rel=1e-10)
