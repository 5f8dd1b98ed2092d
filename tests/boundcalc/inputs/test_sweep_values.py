"""The grid of a sweep (boundcalc/inputs/sweep_values.py): value lists and ranges expand
exactly, count exactly however fine the step, a malformed one names its flag; the frame owns its
columns."""

from __future__ import annotations

import pytest

from boundcalc.inputs.params import InputError
from boundcalc.inputs.sweep_values import count_values, parse_values


@pytest.mark.parametrize(("spec", "values"), [
    ("512", ["512"]),
    ("1e3,1e6", ["1000", "1000000"]),
    ("8:4096:x2", ["8", "16", "32", "64", "128", "256", "512", "1024", "2048", "4096"]),
    ("8:100:x2", ["8", "16", "32", "64"]),
    ("0.1:0.5:0.1", ["0.1", "0.2", "0.3", "0.4", "0.5"]),
    ("1:10:4", ["1", "5", "9"]),
    ("0.01:0.05:0.02", ["0.01", "0.03", "0.05"]),
    ("2,2,4", ["2", "4"]),
])
def test_sweep_values_expand_exactly_and_include_a_stop_that_is_hit(spec, values):
    assert parse_values("--x", spec) == values
    assert count_values("--x", spec) >= len(values)


@pytest.mark.parametrize("spec", ["1:2", "a:3:1", "3:1:1", "1:3:0", "0:8:x2", "1:8:x1", ""])
def test_malformed_ranges_raise_an_input_error_naming_the_flag(spec):
    with pytest.raises(InputError) as err:
        parse_values("--m", spec)
    assert err.value.flag == "--m"


def test_a_range_counts_and_steps_exactly_however_fine_its_step():
    assert count_values("--x", "2:8:1e-300") == 6 * 10**300 + 1
    assert count_values("--x", "1:2:x1.0000000000000000000000000000001") > 10**30
    # 1 + 5e-324 > 1: exact decimal steps leave the stop out
    assert [float(v) for v in parse_values("--x", "5e-324:1:0.25")] == [5e-324, 0.25, 0.5, 0.75]


def test_the_sweep_frame_owns_writable_columns():
    from boundcalc.calc.sweep import build_sweep

    df, _ = build_sweep("theorem1", {"m": "8,16", "n": "10,100"}, None)
    df.loc[0, "bound.min_iterate"] = 1.0
    df.loc[1, "m"] = 4
    df["terms.optimization"] *= 2
    df.loc[0, "guaranteed"] = False
    assert df.loc[0, "bound.min_iterate"] == 1.0 and df.loc[1, "m"] == 4
