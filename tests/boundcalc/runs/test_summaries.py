"""Table 1's rows: the Theorem 5 bound is judged against its free yardstick (the held-out loss of
the zero predictor and of the model at initialization), and "under bound" never reads yes alone."""

from __future__ import annotations

import math

import pytest

from boundcalc.runs.summaries import TABLE1_VERDICT_KEYS, table1_row


def _cell(bound: float, **extra) -> dict:
    return {"d_m": 16, "N": 64, "lowest_test_loss": 0.5, "theorem5_bound": bound,
            "lowest_test_under_bound": bound >= 0.5, "all_conditions_hold": False,
            "lemma4_applies": False, **extra}


def test_a_bound_above_the_zero_predictors_loss_is_under_bound_yes_vacuous():
    row = table1_row(_cell(640.0, zero_predictor_test_loss=math.log(2), initial_test_loss=0.70))
    assert row["under_bound"] == "yes, vacuous" and row["theorem5_verdict"] == "vacuous"
    assert row["theorem5_free_bound_key"] == "zero_predictor_test_loss"
    assert row["theorem5_free_bound"] == math.log(2)
    assert set(TABLE1_VERDICT_KEYS) <= set(row)


def test_the_initial_models_held_out_loss_binds_when_it_is_smaller():
    row = table1_row(_cell(0.68, zero_predictor_test_loss=math.log(2), initial_test_loss=0.6)
                     | {"all_conditions_hold": True, "lemma4_applies": True})
    assert (row["theorem5_free_bound_key"], row["theorem5_free_bound"]) == (
        "initial_test_loss", 0.6)
    assert row["under_bound"] == "yes, vacuous"


def test_a_cell_stored_before_the_yardstick_gets_the_zero_logit_loss_log_2():
    row = table1_row(_cell(640.0))
    assert row["zero_predictor_test_loss"] == math.log(2) and row["initial_test_loss"] is None
    assert row["under_bound"] == "yes, vacuous"


@pytest.mark.parametrize(("conditions", "applies", "verdict"), [
    (True, True, "informative"), (True, False, "not_guaranteed"),
    (False, True, "not_guaranteed"),
])
def test_below_the_yardstick_informative_only_when_lemma4_applies_and_every_condition_holds(
        conditions, applies, verdict):
    row = table1_row(_cell(0.6, zero_predictor_test_loss=math.log(2), initial_test_loss=0.69,
                           all_conditions_hold=conditions, lemma4_applies=applies))
    assert row["theorem5_verdict"] == verdict
    assert row["under_bound"] == f"yes, {verdict}"


def test_an_unevaluated_bound_is_no_bound_not_under_it():
    row = table1_row(_cell(math.nan))
    assert row["under_bound"] == "no bound" and row["theorem5_verdict"] is None
