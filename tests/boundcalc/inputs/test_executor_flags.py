"""``--slurm-time`` (:mod:`boundcalc.inputs.executor_flags`): minutes, H:MM, H:MM:SS and
D-HH:MM:SS in whole minutes (seconds round up, so a task never gets less than asked), and a
one-line refusal naming the flag otherwise."""

from __future__ import annotations

import pytest

from boundcalc.errors import InputError
from boundcalc.inputs.executor_flags import EXECUTORS, SLURM_TIME, parse_slurm_time


@pytest.mark.parametrize(("text", "minutes"), [
    ("1", 1), ("90", 90), (" 45 ", 45), ("1:30", 90), ("0:05", 5), ("1:30:00", 90),
    ("2:00:00", 120), ("0:00:01", 1), ("0:59:59", 60), ("1-00:00:00", 1440),
    ("2-01:30:00", 2 * 1440 + 90), ("1-12:00", 1440 + 720),
])
def test_valid_forms_give_whole_minutes(text, minutes):
    assert parse_slurm_time(text) == minutes
    assert SLURM_TIME.check(text) == minutes


def test_seconds_round_up_never_down():
    assert parse_slurm_time("0:10:01") == 11
    assert parse_slurm_time("0:10:00") == 10


@pytest.mark.parametrize("text", ["", "abc", "1h", "1.5", "1:2:3:4", "-5", "1-", "x-1:00:00",
                                  "1:xx:00", ":30", "-0:00"])
def test_unreadable_forms_are_refused_naming_the_flag(text):
    with pytest.raises(InputError) as info:
        SLURM_TIME.check(text)
    assert str(info.value) == f"--slurm-time must be minutes or H:MM:SS, got {text!r}"


@pytest.mark.parametrize("text", ["0", "0:00", "0:00:00", "0-00:00:00"])
def test_less_than_a_minute_is_refused(text):
    with pytest.raises(InputError, match="^--slurm-time must be at least one minute"):
        parse_slurm_time(text)


def test_a_refusal_names_the_flag_it_was_given():
    with pytest.raises(InputError) as info:
        parse_slurm_time("soon", flag="slurm_time")
    assert info.value.flag == "slurm_time" and "\n" not in str(info.value)


def test_the_default_executor_is_listed_first():
    assert EXECUTORS[0] == "processes" and set(EXECUTORS) == {"processes", "dask", "slurm"}
