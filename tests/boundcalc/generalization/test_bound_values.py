"""Paper 003 quantities recomputed by hand (plain Python floats, written from the paper's formulas
independently of the sympy code) and compared with the calculator at 1e-12 relative."""

from __future__ import annotations

import math

import pytest

from boundcalc.generalization.bound import evaluate_generalization

REL = 1e-12

# one input point, every value distinct so that a swapped symbol cannot go unnoticed; at this
# point sqrt(P/N) > A, so the derived Dudley value is the clamped branch (c A)
N, DM, DS, RX = 1200, 1024, 13, 0.7
RQ, RK, RV, RO = 0.5, 1.5, 2.0, 0.25
DELTA = 0.05
NORMS = {"WQ0_F": 31.9, "WK0_F": 32.2, "WV0_F": 32.05, "WQ0_2": 2.01, "WK0_2": 1.98,
         "WV0_2": 2.03, "WO0_2": 1.02}
ALPHA, PHI0 = 3.0, 50.0

# a second point with small norms and many samples: sqrt(P/N) < A (interior Dudley branch)
INTERIOR = {"N": 200000, "d_m": 4, "d_s": 3, "R_X": 0.9, "radii": (0.05, 0.07, 0.11, 0.13),
            "delta": 0.01, "alpha": 0.2, "Phi0": 1e-12,
            "init_norms": {"WQ0_F": 0.31, "WK0_F": 0.29, "WV0_F": 0.33, "WQ0_2": 0.2,
                           "WK0_2": 0.21, "WV0_2": 0.22, "WO0_2": 0.4}}


def _evaluate(as_printed: bool = False) -> dict:
    return evaluate_generalization(
        N=N, d_m=DM, d_s=DS, R_X=RX, radii=(RQ, RK, RV, RO), delta=DELTA, alpha=ALPHA,
        Phi0=PHI0, init_norms=NORMS, as_printed=as_printed)


def _by_hand() -> dict[str, float]:
    """The paper's formulas, line by line (the line numbers of its plain-text extraction)."""
    eta_q = NORMS["WQ0_F"] + RQ  # line 175
    eta_k = NORMS["WK0_F"] + RK
    eta_v = NORMS["WV0_F"] + RV
    eta_o = NORMS["WO0_2"] + RO
    xi_q = NORMS["WQ0_2"] + RQ  # line 229
    xi_k = NORMS["WK0_2"] + RK
    xi_v = NORMS["WV0_2"] + RV
    rho = N**0.5 * DS**1.5 * RX  # line 233
    z = eta_o**2 * (1 + (4 / DM) * RX**4 * DS**2 * xi_v**2 * (xi_q**2 + xi_k**2))  # line 233
    z_hat = eta_o**2 * (1 + (4 / DM) * RX**4 * DS**2 * eta_v**2 * (eta_q**2 + eta_k**2))
    c = (2 / math.sqrt(DM)) * RX**2 * DS
    m = max(xi_v / RO, eta_o / RV, c * xi_k * xi_v * eta_o / RQ,
            c * xi_q * xi_v * eta_o / RK)  # line 235
    m_hat = max(eta_v / RO, eta_o / RV, c * eta_k * eta_v * eta_o / RQ,
                c * eta_q * eta_v * eta_o / RK)  # line 237
    a = eta_o * eta_v * (math.sqrt(DS) * RX)  # line 425
    p = ((math.sqrt(DS) * RX) ** 2
         * ((math.sqrt(DM) * eta_v) ** (2 / 3) + (math.sqrt(DM) * eta_k * eta_q * eta_v) ** (2 / 3))
         ** 3 * math.log(N * DS))  # line 398
    return {"eta_Q": eta_q, "eta_K": eta_k, "eta_V": eta_v, "eta_O": eta_o, "xi_Q": xi_q,
            "xi_K": xi_k, "xi_V": xi_v, "rho": rho, "z": z, "z_hat": z_hat, "M": m,
            "M_hat": m_hat, "A": a, "P": p, "alpha": ALPHA, "Phi0": PHI0}


@pytest.mark.parametrize("key", list(_by_hand()))
def test_quantity_matches_hand_computation_from_the_paper(key):
    assert _evaluate()["quantities"][key] == pytest.approx(_by_hand()[key], rel=REL)


def test_terms_match_hand_computation_of_the_derived_theorem5():
    hand = _by_hand()
    out = _evaluate()
    # Lemma 4 derived from the two alpha-conditions (lines 263-277)
    first = ALPHA**2 / (8 * hand["rho"] * hand["M"] * math.sqrt(N))
    second = ALPHA**3 * hand["eta_O"] / (32 * hand["rho"] ** 2 * hand["z"] * math.sqrt(N))
    assert out["terms"]["empirical_loss"] == pytest.approx(min(first, second), rel=REL)
    # Dudley (lines 403-407): infimum over delta in [0, A]
    s = math.sqrt(hand["P"] / N)
    dudley = s * (1 + math.log(hand["A"] / s)) if s <= hand["A"] else hand["A"]
    assert out["terms"]["rademacher"] == pytest.approx(2 * dudley, rel=REL)
    # line 317 with R = ceil(sqrt(sum R^2)) radius classes and line 125's factor 3c for a loss in
    # [0, c], c = A + Y (Y = 1 by default)
    r_classes = math.ceil(math.sqrt(RQ**2 + RK**2 + RV**2 + RO**2))
    conf = 3 * (hand["A"] + 1) * math.sqrt(math.log(2 * r_classes / DELTA) / (2 * N))
    assert out["terms"]["confidence"] == pytest.approx(conf, rel=REL)
    assert out["bound"]["true_loss"] == pytest.approx(min(first, second) + 2 * dudley + conf,
                                                      rel=REL)
    prob = 1 - 8 * math.exp(-DM / 2) - 2 * DELTA - math.exp(-((N - 1) ** -1.0) / DS)
    assert out["probability"] == pytest.approx(prob, rel=REL)


def test_terms_match_hand_computation_of_the_printed_theorem5():
    hand = _by_hand()
    out = _evaluate(as_printed=True)
    # lines 293 / 329, every hidden constant 1
    first = ALPHA**2 / (8 * hand["rho"] * hand["M_hat"] * math.sqrt(N))
    second = ALPHA**3 * hand["eta_O"] / (32 * hand["rho"] ** 4 * hand["z_hat"] * math.sqrt(N))
    s = math.sqrt(hand["P"] / N)
    rad = math.sqrt(hand["P"] / N) * (1 + math.log(hand["A"] * math.sqrt(N / hand["P"])))
    r = math.sqrt(RQ**2 + RK**2 + RV**2 + RO**2)
    conf = math.sqrt(math.log(r / DELTA) / N)
    assert out["terms"]["empirical_loss"] == pytest.approx(min(first, second), rel=REL)
    assert out["terms"]["rademacher"] == pytest.approx(rad, rel=REL)
    assert out["quantities"]["dudley_scale"] == pytest.approx(s, rel=REL)
    assert out["terms"]["confidence"] == pytest.approx(conf, rel=REL)
    assert out["quantities"]["lemma1_as_printed"] == pytest.approx(rad / N, rel=REL)


def test_alpha_conditions_match_hand_computation():
    hand = _by_hand()
    conds = {c["name"]: c["holds"] for c in _evaluate()["conditions"]}
    assert conds["alpha_square"] == (8 * hand["rho"] * hand["M"]
                                     * math.sqrt(2 * PHI0) <= ALPHA**2)
    assert conds["alpha_cube"] == (32 * hand["rho"] ** 2 * hand["z"]
                                   * math.sqrt(2 * PHI0) / hand["eta_O"] <= ALPHA**3)
    assert conds["width"] == (DM >= N**3)


def test_hidden_constants_scale_the_terms_they_multiply():
    base = evaluate_generalization(
        N=N, d_m=DM, d_s=DS, R_X=RX, radii=(RQ, RK, RV, RO), delta=DELTA, alpha=ALPHA,
        Phi0=PHI0, init_norms=NORMS, hidden_constants="C_conf=1")
    scaled = evaluate_generalization(
        N=N, d_m=DM, d_s=DS, R_X=RX, radii=(RQ, RK, RV, RO), delta=DELTA, alpha=ALPHA,
        Phi0=PHI0, init_norms=NORMS, hidden_constants="C_D=3,C_conf=5")
    assert scaled["terms"]["rademacher"] == pytest.approx(3 * base["terms"]["rademacher"],
                                                          rel=REL)
    assert scaled["terms"]["confidence"] == pytest.approx(5 * base["terms"]["confidence"],
                                                          rel=REL)
    assert scaled["inputs"]["C_D"] == 3.0 and scaled["inputs"]["C_cov"] == 1.0


def test_interior_dudley_branch_matches_hand_computation():
    p = INTERIOR
    n, dm, ds, rx = p["N"], p["d_m"], p["d_s"], p["R_X"]
    rq, rk, rv, ro = p["radii"]
    w = p["init_norms"]
    eta_q, eta_k, eta_v, eta_o = w["WQ0_F"] + rq, w["WK0_F"] + rk, w["WV0_F"] + rv, w["WO0_2"] + ro
    a = eta_o * eta_v * math.sqrt(ds) * rx
    two_thirds = 2 / 3
    pp = ((math.sqrt(ds) * rx) ** 2
          * ((math.sqrt(dm) * eta_v) ** two_thirds
             + (math.sqrt(dm) * eta_k * eta_q * eta_v) ** two_thirds) ** 3
          * math.log(n * ds))
    s = math.sqrt(pp / n)
    assert s < a  # the point is in the interior regime
    for as_printed in (False, True):
        out = evaluate_generalization(**p, as_printed=as_printed)
        assert out["quantities"]["P"] == pytest.approx(pp, rel=REL)
        assert out["quantities"]["A"] == pytest.approx(a, rel=REL)
        assert out["quantities"]["rademacher_complexity"] == pytest.approx(
            s * (1 + math.log(a / s)), rel=REL)
