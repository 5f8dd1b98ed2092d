"""``validate``'s summary rows: a bound at or above its free yardstick is vacuous, and ``holds`` is
never printed without that verdict."""

from __future__ import annotations

import math

import pytest

from boundcalc.runs.validation_summary import (
    MEASURED_VERDICTS,
    free_yardstick,
    holds_text,
    is_violation,
    summary_rows,
    verdict_of_rows,
    yardstick_fields,
)


def _record(seed: int, bound: float, initial: float, holds: bool = True,
            conditions: bool = True) -> dict:
    free = {"trivial_bound_B2": 90.8, "initial_loss_bound": 12.5, "initial_loss": initial}
    return {"statement": "theorem1", "seed": seed, "name": "theorem1.min_iterate",
            "method": "", "measured": 5e-4, "bound": bound, "ratio": 5e-4 / bound,
            "holds": holds, "initial_loss": initial, "conditions_hold": conditions,
            **yardstick_fields(bound, free, conditions)}


@pytest.mark.parametrize(("free", "binds"), [
    ({"trivial_bound_B2": 90.8, "initial_loss_bound": 12.5, "initial_loss": 6.3e-4},
     "initial_loss"),
    ({"trivial_bound_B2": 90.8, "initial_loss_bound": 12.5, "initial_loss": None},
     "initial_loss_bound"),
    ({"trivial_bound_B2": 9.0, "initial_loss_bound": 12.5}, "trivial_bound_B2"),
    ({"trivial_bound_B2": math.inf, "initial_loss_bound": math.nan, "initial_loss": 2.0},
     "initial_loss"),
])
def test_the_smallest_finite_free_bound_is_the_yardstick_that_binds(free, binds):
    assert free_yardstick(free)[0] == binds


@pytest.mark.parametrize(("bound", "conditions", "verdict"), [
    (498.2, True, "vacuous"), (498.2, False, "vacuous"), (1e-4, True, "informative"),
    (1e-4, False, "not_guaranteed"), (6.3e-4, True, "vacuous"), (math.nan, True, "vacuous"),
])
def test_guaranteed_iff_every_condition_holds_and_the_bound_is_below_its_yardstick(
        bound, conditions, verdict):
    fields = yardstick_fields(bound, {"trivial_bound_B2": 90.8, "initial_loss": 6.3e-4},
                              conditions)
    assert fields["verdict"] == verdict in MEASURED_VERDICTS
    assert fields["guaranteed"] is (conditions and bound < 6.3e-4)
    assert fields["free_bound_key"] == "initial_loss"


def test_holds_is_printed_with_its_verdict_beside_it():
    assert holds_text(True, "vacuous") == "true, vacuous"
    assert holds_text(False, "not_guaranteed") == "false, not guaranteed"
    assert holds_text(True, None) == "true"


def test_a_row_is_vacuous_when_any_of_its_seeds_is():
    assert verdict_of_rows(["informative", "vacuous"]) == "vacuous"
    assert verdict_of_rows(["informative", "not_guaranteed"]) == "not_guaranteed"
    assert verdict_of_rows(["informative", None]) == "informative"
    assert verdict_of_rows([None]) is None


def test_training_rows_keep_one_row_over_seeds_with_the_smallest_yardstick():
    (row,) = summary_rows([_record(0, 498.2, 6.3e-4), _record(1, 498.2, 4.0e-4)])
    assert row["count"] == 2 and "seed" not in row
    assert (row["initial_loss"], row["free_bound"], row["free_bound_key"]) == (
        4.0e-4, 4.0e-4, "initial_loss")
    assert row["bound_over_free_bound"] == pytest.approx(498.2 / 4.0e-4)
    assert row["verdict"] == "vacuous" and row["conditions_hold"] is True


def test_a_measurement_above_a_bound_whose_conditions_fail_is_no_violation():
    (row,) = summary_rows([_record(0, 1e-4, 6.3e-4, holds=False, conditions=False)])
    assert row["verdict"] == "not_guaranteed" and not is_violation(row)
    (row,) = summary_rows([_record(0, 1e-4, 6.3e-4, holds=False)])
    assert row["verdict"] == "informative" and is_violation(row)
