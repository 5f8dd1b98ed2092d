"""boundcalc.rounding: a mean rounded to its CI, on hand examples; never e-notation."""

from __future__ import annotations

import math
import re

import pytest

from boundcalc.rounding import mean_ci_text, number_text, rounded

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
