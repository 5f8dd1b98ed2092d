"""The text of one value (boundcalc/render/cell_text.py): exact floats read back to the same float,
rounded floats within half a unit of their last digit, booleans before integers, numpy scalars
like Python's, format names checked, Markdown cells that cannot break a table."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.table import Table

from boundcalc.render.cell_text import (
    DISPLAY_DIGITS,
    FORMATS,
    check_format,
    format_value,
    markdown_cell,
    rich_to_text,
)

FINITE = st.floats(allow_nan=False, allow_infinity=False)


@given(FINITE)
def test_an_exact_float_reads_back_as_the_same_float(value):
    assert float(format_value(value)) == value


@given(st.floats(min_value=1e-300, max_value=1e300), st.integers(1, 17))
def test_a_rounded_float_is_within_half_a_unit_of_its_last_significant_digit(value, digits):
    text = format_value(value, digits)
    exact = Decimal(value)                        # the binary float's exact decimal value
    half_unit = Decimal(5) * Decimal(10) ** (exact.adjusted() - digits)
    assert abs(Decimal(text) - exact) <= half_unit
    mantissa = text.split("e")[0].replace(".", "").lstrip("0")
    assert len(mantissa) <= digits


@pytest.mark.parametrize("digits", [3, DISPLAY_DIGITS])
def test_an_integral_float_below_the_digits_prints_as_an_integer(digits):
    assert format_value(512.0, digits) == "512"
    assert format_value(-7.0, digits) == "-7"
    assert format_value(10.0**digits, digits) == f"{10.0**digits:.{digits}g}"   # not 1000...0


def test_booleans_are_words_never_the_integers_they_subclass():
    assert (format_value(True), format_value(False)) == ("true", "false")
    assert (format_value(True, 3), format_value(1, 3)) == ("true", "1")


def test_nan_and_none_are_empty_cells():
    assert format_value(None) == format_value(float("nan")) == format_value(np.nan, 4) == ""


@pytest.mark.parametrize("value", [0.1, 1291.3661425071273, 3, True, 2.0**-1074])
@pytest.mark.parametrize("digits", [None, 4])
def test_a_numpy_scalar_prints_as_the_python_value_it_holds(value, digits):
    assert format_value(np.array(value)[()], digits) == format_value(value, digits)


def test_a_float32_prints_the_float64_it_widens_to():
    value = np.float32(0.1)
    assert format_value(value) == repr(float(value))
    assert float(format_value(value)) == float(value)


@pytest.mark.parametrize("name", [*FORMATS, " JSON ", "Markdown", "LATEX"])
def test_a_format_name_is_accepted_whatever_its_case_and_blanks(name):
    assert check_format(name) == name.strip().lower()


@pytest.mark.parametrize("name", ["xml", "", "js on", "tables"])
def test_an_unknown_format_is_refused_listing_the_formats(name):
    with pytest.raises(ValueError) as err:
        check_format(name)
    assert repr(name) in str(err.value)
    assert all(fmt in str(err.value) for fmt in FORMATS)


@given(st.lists(st.text(), min_size=1, max_size=5))
def test_markdown_cells_keep_a_row_on_one_line_with_one_column_each(cells):
    row = "| " + " | ".join(markdown_cell(cell) for cell in cells) + " |"
    assert "\n" not in row and "\r" not in row      # CommonMark ends a line at either
    unescaped = [i for i, ch in enumerate(row) if ch == "|" and (i == 0 or row[i - 1] != "\\")]
    assert len(unescaped) == len(cells) + 1


def test_rich_text_fits_the_width_and_has_no_trailing_blanks():
    table = Table("statement", "value")
    for i in range(5):
        table.add_row(f"lemma{i} " * 6, f"{10.0 ** -i:.6g}")
    text = rich_to_text(table, width=40)
    lines = text.splitlines()
    assert lines and all(len(line) <= 40 for line in lines)
    assert all(line == line.rstrip() for line in lines)
    assert "\x1b[" not in text   # no colour codes
