"""boundcalc.render.rounding: a mean rounded to its CI, on hand examples; never e-notation."""

from __future__ import annotations

import math
import re

import pytest

from boundcalc.render.rounding import (
    column_exponent,
    column_mean_ci_text,
    column_number_text,
    interval_text,
    mean_ci_text,
    number_text,
    rounded,
)

E_NOTATION = re.compile(r"\d[eE][+-]?\d")


@pytest.mark.parametrize(("mean", "ci", "latex", "markdown"), [
    (8.77, 1.13, r"8.8 \pm 1.1", "8.8 ± 1.1"),
    (48612.0, 2093.0, r"4.86\times10^{4} \pm 2.1\times10^{3}", "4.86×10^4 ± 2.1×10^3"),
    (8.77, 110.3, r"1\times10^{1} \pm 1.1\times10^{2}", "1×10^1 ± 1.1×10^2"),
    (-0.5113, 0.0141, r"-0.511 \pm 0.014", "-0.511 ± 0.014"),
    (0.12345, 0.0996, r"0.12 \pm 0.10", "0.12 ± 0.10"),           # 0.0996 → 0.10, not 0.100
    (1.2345e-5, 3.1e-7, r"1.235\times10^{-5} \pm 3.1\times10^{-7}",
     "1.235×10^-5 ± 3.1×10^-7"),
    (0.0016912, 0.000281, r"1.69\times10^{-3} \pm 2.8\times10^{-4}",
     "1.69×10^-3 ± 2.8×10^-4"),                                     # both alike
    (0.04, 0.3, r"0.04 \pm 0.30", "0.04 ± 0.30"),
    (2.5, math.nan, "2.50", "2.50"), (2.5, None, "2.50", "2.50"),
    (math.nan, 1.0, "--", "--"), (7.0, 0.0, r"7.00 \pm 0", "7.00 ± 0"),
])
def test_mean_is_rounded_to_the_last_digit_of_its_ci(mean, ci, latex, markdown):
    assert mean_ci_text(mean, ci, "latex") == latex
    assert mean_ci_text(mean, ci, "markdown") == markdown
    assert not E_NOTATION.search(latex) and not E_NOTATION.search(markdown)


def test_numbers_alone_keep_their_significant_digits_without_e_notation():
    assert number_text(113.2) == "113" and number_text(6581.0) == r"6.58\times10^{3}"
    assert number_text(0.5) == "0.500" and number_text(-0.72) == "-0.720"
    assert number_text(4e-18, 3, "markdown") == "4.00×10^-18"
    assert number_text(1e300) == r"1.00\times10^{300}"
    assert number_text(math.inf) == number_text(None) == "--"
    assert rounded(99.96, -1) == "100.0" and rounded(0.0, -2) == "0"
    with pytest.raises(ValueError, match="style"):
        rounded(1.0, 0, "html")


def test_ci_digits_widen_with_the_request():
    assert mean_ci_text(0.38921, 0.32112, "markdown", digits=4, ci_digits=3) == "0.389 ± 0.321"


# --------------------------------------------------------------------------- tables' columns


@pytest.mark.parametrize(("values", "k"), [
    ([0.5, 12.0, 9000.0, None], 0),          # all plain
    ([9e-4, 0.0010], -3),                    # one below 0.001: the whole column as ×10^-3
    ([3.2e5, 2.0e9], 9), ([48612.0, 10.0], 4), ([], 0), ([math.nan, 0.0], 0),
])
def test_a_column_shares_the_power_of_its_largest_number_unless_all_read_plainly(values, k):
    assert column_exponent(values) == k


@pytest.mark.parametrize(("center", "low", "high", "shown"), [
    (0.0123, 0.0101, 0.0149, "0.0123 [0.0101, 0.0149]"),
    (4.0, 0.7149, 22.38, "4.0 [0.71, 22.4]"),          # the narrower side (3.3) sets the place
    (0.4604, 0.4561, 0.4647, "0.4604 [0.4561, 0.4647]"),
    (2.5, math.nan, math.nan, "2.50"),                 # one seed: no interval
    (math.nan, 1.0, 2.0, "--"),
])
def test_interval_is_rounded_at_the_place_of_its_narrower_side(center, low, high, shown):
    assert interval_text(center, low, high, "markdown") == shown


def test_interval_in_a_column_power_reads_back_as_the_same_numbers():
    text = interval_text(0.0016912, 0.00121, 0.00236, "markdown", exponent=-3)
    assert text == "(1.69 [1.21, 2.36])×10^-3"
    center, low, high = (float(x) * 1e-3 for x in re.findall(r"[\d.]+", text.split("×")[0]))
    assert center == pytest.approx(0.0016912, abs=5e-6)
    assert (low, high) == (pytest.approx(0.00121), pytest.approx(0.00236))
    assert interval_text(0.0016912, 0.00121, 0.00236, "latex", exponent=-3) == \
        r"(1.69 [1.21, 2.36])\times10^{-3}"


def test_interval_spanning_decades_gives_its_ends_their_own_power_never_a_false_zero():
    text = interval_text(0.13, 9.5e-11, 1.8e8, "markdown")
    assert text == "0.13 [9.5×10^-11, 1.8×10^8]"
    assert not E_NOTATION.search(interval_text(51.0, 0.15, 1.8e4, "latex"))
    assert interval_text(51.0, 0.15, 1.8e4, "markdown") == "51 [0.15, 1.8×10^4]"


@pytest.mark.parametrize(("args", "shown"), [
    ((48612.0, 2093.0, "markdown", 3, 2, 4), "(4.86 ± 0.21)×10^4"),
    ((8.77, 110.3, "markdown"), "10 ± 110"),        # plain: a column without powers of ten
    ((9e-4, 1.9e-3, "markdown", 3, 2, -3), "(0.9 ± 1.9)×10^-3"),
    ((2.5, None, "latex"), "2.50"),
])
def test_mean_plus_minus_ci_in_a_column_power(args, shown):
    assert column_mean_ci_text(*args) == shown


def test_numbers_alone_in_a_column_power_keep_their_significant_digits():
    assert column_number_text(3.21e5, 3, "markdown", 9) == "0.000321×10^9"
    assert column_number_text(1.234e-5, 3, "latex", -5) == r"1.23\times10^{-5}"
    assert column_number_text(math.inf) == "--"
