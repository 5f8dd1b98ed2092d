"""What a verdict says is true: it names its probability (GUARANTEED needs probability ≥
--min-probability, default ½), says where the informative range of widths ends, gives null where
no width makes the conditions hold, and names the step size each route uses."""

from __future__ import annotations

import json
from dataclasses import replace

import mpmath
import pytest

from boundcalc.calc.api import evaluate
from boundcalc.calc.sweep import build_sweep
from boundcalc.generalization.bound import evaluate_generalization
from boundcalc.inputs.params import validate

#: The issue's generalization point: every condition holds and the bound is below A + Y, but
#: the paper's probability is 0.000999.
RARE = ("generalization", "--N", "1000", "--dm", "1e9", "--ds", "1", "--rx", "1", "--radii",
        "0.001,0.001,0.001,0.001", "--wk-fro", "0.01", "--wk-spec", "0.005", "--wq-fro", "0.01",
        "--wq-spec", "0.005", "--wv-fro", "0.01", "--wv-spec", "0.005", "--wo-norm", "0.01",
        "--alpha", "100", "--phi0", "1e-20", "--delta", "1e-6")

#: Theorem 1 at δ = 0.49: every condition holds, min_iterate < Y², probability 1 − 2δ = 0.02.
HALF_DELTA = ("theorem1", "--m", "8192", "--n", "1000", "--rho", "2", "--delta", "0.49")

#: The paper route at a width past the end of its informative range.
PAPER_RANGE = ("theorem1", "--route", "paper", "--m", "1099511627776", "--n", "1128", "--d", "10",
               "--delta", "0.007", "--rho", "2.674", "--nu", "2", "--steps", "393")


def _flat(text: str) -> str:
    return " ".join(text.split())


def _json(cli, *args: str) -> dict:
    run = cli(*args, "--format", "json")
    assert run.code == 0, run.err
    return json.loads(run.out)


def test_generalization_at_probability_0_000999_is_not_guaranteed_and_names_it(cli):
    data = _json(cli, *RARE)
    assert data["probability"] == pytest.approx(0.000999, rel=1e-3)
    assert all(c["holds"] for c in data["conditions"])
    assert data["bound"]["true_loss"] < data["quantities"]["loss_range"]  # below A + Y
    assert data["verdict"] == "not_guaranteed" and not data["statement"]["guaranteed"]
    assert data["inputs"]["min_probability"] == 0.5
    line = data["statement"]["status_line"]
    assert line.startswith("NOT GUARANTEED: the bound holds with probability ≥ 0.0009985 only, "
                           "below the 0.5 required (--min-probability)")
    assert "the paper's term exp(-C_prob (N-1)^(-c_hat)/d_s) = 0.999 binds" in line
    assert "NOT GUARANTEED" in _flat(cli(*RARE).out)


def test_a_lower_min_probability_makes_the_generalization_point_guaranteed_and_records_it(cli):
    data = _json(cli, *RARE, "--min-probability", "0.0005")
    assert data["verdict"] == "guaranteed" and data["inputs"]["min_probability"] == 0.0005
    assert "holds with probability ≥ 0.0009985" in data["statement"]["status_line"]
    bad = cli(*RARE, "--min-probability", "1.5")
    assert bad.code == 2 and "--min-probability must lie in (0, 1)" in bad.err


def test_theorem1_at_delta_0_49_is_not_guaranteed_and_names_its_probability(cli):
    data = _json(cli, *HALF_DELTA)
    assert data["probability"] == pytest.approx(0.02, rel=1e-12)
    assert data["statement"]["conditions_hold"] and not data["statement"]["probability_sufficient"]
    assert data["bound"]["min_iterate"] < data["constants"]["initial_loss_bound"]
    assert data["verdict"] == "not_guaranteed" and not data["statement"]["guaranteed"]
    out = _flat(cli(*HALF_DELTA).out)
    assert ("NOT GUARANTEED: the bound holds with probability ≥ 0.02 only, below the 0.5 "
            "required (--min-probability); all 5 conditions hold; min_iterate 2.692 < 9 = Y²"
            ) in out
    assert cli(*HALF_DELTA, "--strict").code == 1
    lowered = _json(cli, *HALF_DELTA, "--min-probability", "0.01")
    assert lowered["verdict"] == "guaranteed" and lowered["inputs"]["min_probability"] == 0.01


def test_a_guaranteed_or_vacuous_line_names_its_probability(cli):
    out = _flat(cli("theorem1", "--m", "8192", "--n", "1000", "--rho", "2").out)
    assert out.count("GUARANTEED: all 5 conditions hold") == 1
    assert "with probability ≥ 0.9" in out
    vacuous = _flat(cli("theorem1", "--m", "512", "--n", "1000", "--rho", "2").out)
    assert "VACUOUS: min_iterate 23.26" in vacuous and "with probability ≥ 0.9" in vacuous


def test_the_probability_threshold_is_decided_on_the_exact_probability():
    at = evaluate("theorem1", validate(m=8192, rho="2", delta="0.25", min_probability="0.5"))
    assert at.probability == mpmath.mpf("0.5") and at.probability_sufficient  # ≥, inclusive
    below = evaluate("theorem1", validate(m=8192, rho="2", delta="0.25",
                                          min_probability="0.5000001"))
    assert not below.probability_sufficient and below.verdict == "not_guaranteed"


def test_sweep_rows_below_the_minimum_probability_are_not_guaranteed(cli):
    df, _ = build_sweep("theorem1", {"m": "8192", "rho": "2", "delta": "0.05,0.49",
                                     "min_probability": "0.01,0.5"}, None)
    got = {(round(r.probability, 2), r.min_probability): str(r.verdict) for r in df.itertuples()}
    assert got == {(0.9, 0.01): "guaranteed", (0.9, 0.5): "guaranteed",
                   (0.02, 0.01): "guaranteed", (0.02, 0.5): "not_guaranteed"}
    run = cli("sweep", "theorem1", "--m", "8192", "--rho", "2", "--delta", "0.05,0.49")
    assert "NOT GUARANTEED in 1 of 2 rows whose conditions hold" in run.err


def test_the_paper_route_names_the_end_of_its_informative_range(cli):
    data = _json(cli, *PAPER_RANGE)
    assert data["verdict"] == "vacuous"
    assert data["nonvacuous_from_m"] == 110168410
    assert data["nonvacuous_until_m"] == 309457454958
    inputs = validate(n=1128, d=10, delta="0.007", rho="2.674", nu="2", steps=393,
                      statement="theorem1_paper")
    for m, informative in ((309457454958, True), (309457454960, False)):
        ev = evaluate("theorem1_paper", replace(inputs, m=m))  # the exact (mpmath) evaluator
        assert (ev.verdict == "guaranteed") is informative, m
    out = _flat(cli(*PAPER_RANGE).out)
    assert "informative for m in [110168410, 309457454958]" in out
    assert "informative from m = 110168410" not in out


def test_a_range_without_an_end_is_not_claimed_for_all_larger_m(cli):
    data = _json(cli, "theorem1", "--m", "512", "--n", "1000", "--rho", "2")
    assert data["nonvacuous_from_m"] == 1436 and data["nonvacuous_until_m"] is None
    out = _flat(cli("theorem1", "--m", "512", "--n", "1000", "--rho", "2").out)
    assert "informative from m = 1436 (and at every width scanned up to 2^62" in out
    assert "for all larger m" not in out


def test_rho_below_nu_gives_no_informative_width(cli):
    data = _json(cli, "theorem1", "--m", "512", "--rho", "1", "--nu", "2")
    assert data["verdict"] == "not_guaranteed"
    assert data["nonvacuous_from_m"] is None and data["nonvacuous_until_m"] is None


def test_the_average_iterate_says_b_squared_is_its_only_free_yardstick(cli):
    out = _flat(cli("theorem1", "--m", "512", "--n", "1000", "--rho", "2").out)
    assert ("average_iterate 65.58 < B² = 129.4 (informative: B² is its only free yardstick, "
            "since Y² bounds the loss at k = 0, not at the average iterate)") in out


@pytest.mark.parametrize(("route", "source"), [("gradnorm", "gradnorm step size eta_g"),
                                               ("tight", "theorem step size eta*"),
                                               ("paper", "theorem step size eta*")])
def test_eta_source_names_the_step_each_route_uses(cli, route, source):
    data = _json(cli, "theorem1", "--m", "512", "--route", route)
    assert data["inputs"]["eta_source"] == source
    assert data["inputs"]["eta"] == data["constants"]["theorem_step_size"]


def test_generalization_api_takes_min_probability():
    point = dict(N=1000, d_m=10**9, d_s=1, R_X=1, radii=(0.001,) * 4, delta=1e-6, alpha=100,
                 Phi0=1e-20, init_norms={"WQ0_F": 0.01, "WK0_F": 0.01, "WV0_F": 0.01,
                                         "WQ0_2": 0.005, "WK0_2": 0.005, "WV0_2": 0.005,
                                         "WO0_2": 0.01})
    assert evaluate_generalization(**point)["verdict"] == "not_guaranteed"
    assert evaluate_generalization(**point, min_probability=1e-4)["verdict"] == "guaranteed"


def test_validate_rows_below_the_minimum_probability_are_not_informative():
    from boundcalc.runs.validation_summary import yardstick_fields

    free = {"trivial_bound_B2": 9.0, "initial_loss": 4.0}
    assert yardstick_fields(1.0, free, True, probability=0.9)["verdict"] == "informative"
    low = yardstick_fields(1.0, free, True, probability=0.02)
    assert low["verdict"] == "not_guaranteed" and not low["guaranteed"]
    # a bound at or above its yardstick says nothing, whatever its probability
    assert yardstick_fields(5.0, free, True, probability=0.02)["verdict"] == "vacuous"


def test_table1_rows_below_the_minimum_probability_are_not_informative():
    from boundcalc.runs.summaries import table1_row

    cell = {"theorem5_bound": 0.1, "lowest_test_under_bound": True, "initial_test_loss": 0.7,
            "zero_predictor_test_loss": 0.6931, "all_conditions_hold": True,
            "lemma4_applies": True}
    assert table1_row({**cell, "probability": 0.9})["theorem5_verdict"] == "informative"
    low = table1_row({**cell, "probability": 0.05})
    assert low["theorem5_verdict"] == "not_guaranteed"
    assert low["under_bound"] == "yes, not_guaranteed"
