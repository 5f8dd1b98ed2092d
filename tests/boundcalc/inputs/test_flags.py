"""The :class:`Flag` rows' checks (:mod:`boundcalc.inputs.flags`): integer and real ranges with
their open and closed ends, types, float64's limits (a nonzero value that rounds to 0, inf, nan)
refused naming the flag, every message one line."""

from __future__ import annotations

import pytest

from boundcalc.errors import InputError
from boundcalc.inputs.flags import (
    check_float64,
    check_rows,
    choice_flag,
    integer_flag,
    param_flag,
    real_flag,
    text_flag,
)

SEEDS = integer_flag("seeds", "--seeds", minimum=1, maximum=64, unit="seeds", meaning="")
OPEN = real_flag("delta", "--delta", low=0, high=1, unit="", meaning="")
CLOSED = real_flag("frac", "--frac", low=0, high=1, low_open=False, high_open=False, unit="",
                   meaning="")
LR = real_flag("lr", "--lr", low=0, unit="step", meaning="")


def _refused(row, value) -> str:
    with pytest.raises(InputError) as info:
        row.check(value)
    message = str(info.value)
    assert info.value.flag == row.flag and message.startswith(row.flag + " "), message
    assert "\n" not in message
    return message


@pytest.mark.parametrize(("value", "number"), [("1", 1), ("64", 64), ("1e1", 10), (" 7 ", 7),
                                               (32, 32)])
def test_an_integer_row_accepts_its_range_exactly(value, number):
    got = SEEDS.check(value)
    assert got == number and isinstance(got, int)


@pytest.mark.parametrize("value", ["0", "65", "2.5", "seven", "", "inf", "nan", "1e400"])
def test_an_integer_row_refuses_outside_its_range_or_type(value):
    _refused(SEEDS, value)


def test_an_integer_rows_message_states_its_range():
    assert "between 1 and 64" in _refused(SEEDS, "65")
    row = integer_flag("N", "--N", minimum=2, unit="", meaning="", message="must exceed 1")
    assert _refused(row, "1") == "--N must exceed 1, got '1'"
    assert SEEDS.range == "1 .. 64" and row.range == ">= 2" and SEEDS.type == "integer"


@pytest.mark.parametrize(("row", "value", "ok"), [
    (OPEN, "0", False), (OPEN, "1", False), (OPEN, "0.5", True), (OPEN, "1e-300", True),
    (CLOSED, "0", True), (CLOSED, "1", True), (CLOSED, "1.0000001", False),
    (CLOSED, "-1e-300", False), (LR, "1e300", True), (LR, "-0.1", False),
])
def test_a_real_rows_ends_are_open_or_closed_as_declared(row, value, ok):
    if ok:
        assert row.check(value) == float(value)
    else:
        assert "got " + repr(value) in _refused(row, value)


def test_a_real_rows_range_text_shows_its_ends():
    assert (OPEN.range, CLOSED.range, LR.range) == ("(0, 1)", "[0, 1]", "> 0")
    assert real_flag("x", "--x", unit="", meaning="").range == "any finite value"
    assert real_flag("x", "--x", high=3, high_open=False, unit="", meaning="").range == "<= 3"


@pytest.mark.parametrize("value", ["1e-400", "-1e-400", "4e-330", "0.1e-323"])
def test_a_nonzero_value_that_rounds_to_zero_is_refused_naming_the_flag(value):
    row = real_flag("x", "--x", unit="", meaning="")
    assert "would round to 0" in _refused(row, value)
    assert "would round to 0" in _refused(LR, value)


def test_zero_and_the_smallest_subnormal_are_not_refused_as_rounding():
    check_float64("--x", "0")
    check_float64("--x", "0e-500")
    check_float64("--x", "5e-324")
    check_float64("--x", 1e-300)
    assert real_flag("x", "--x", unit="", meaning="").check("0e-500") == 0.0


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "1e309", "-1e400", "Infinity"])
def test_inf_nan_and_past_float64_are_refused(value):
    _refused(real_flag("x", "--x", unit="", meaning=""), value)


def test_as_text_keeps_the_exact_decimal():
    row = real_flag("x", "--x", low=0, unit="", meaning="", as_text=True)
    assert row.check(" 0.1000000000000000000001 ") == "0.1000000000000000000001"


def test_a_choice_row_ignores_case_and_spaces_and_names_the_choices():
    row = choice_flag("device", "--device", ("auto", "cpu", "cuda"), unit="", meaning="",
                      extra=lambda key: key.startswith("cuda:"))
    assert row.check(" CPU ") == "cpu" and row.check("cuda:1") == "cuda:1"
    assert _refused(row, "tpu") == "--device must be one of auto, cpu, cuda, got 'tpu'"
    assert row.range == "auto, cpu, cuda" and row.type == "choice"


def test_a_text_row_passes_its_flag_to_its_parse():
    seen = []
    row = text_flag("data", "--data", lambda flag, v: seen.append(flag) or str(v), type="path",
                    range="a file", unit="", meaning="")
    assert row.check("x.npz") == "x.npz" and seen == ["--data"]


def test_a_param_row_under_float64_refuses_a_component_that_rounds_to_zero():
    row = param_flag("rho", float64=True, unit="norm")
    assert "would round to 0" in _refused(row, "1,1e-400,1")
    assert param_flag("rho", float64=False, unit="norm").check("1,1e-400,1") == (
        "1", "1e-400", "1")


def test_a_param_row_renamed_names_its_own_flag():
    row = param_flag("delta", float64=True, flag="--conf", unit="")
    assert row.flag == "--conf" and row.range == "(0, 1)"
    assert _refused(row, "2").startswith("--conf ")
    assert _refused(row, "1e-400").startswith("--conf ")


def test_check_rows_checks_given_values_only_and_refuses_unknown_names():
    rows = {"seeds": SEEDS, "delta": OPEN}
    assert check_rows(rows, {"seeds": "2", "delta": None}) == {"seeds": 2}
    with pytest.raises(TypeError, match="seedz"):
        check_rows(rows, {"seedz": "2"})
    with pytest.raises(InputError, match="^--delta "):
        check_rows(rows, {"seeds": "2", "delta": "2"})


def test_a_huge_value_is_echoed_abbreviated_on_one_line():
    message = _refused(SEEDS, "9" * 10_000)
    assert len(message) < 400
