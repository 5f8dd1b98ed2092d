"""boundcalc.runs.tables without runs on disk: which statistic a column shows, one power of ten per
column, and tabulars that never run into each other."""

from __future__ import annotations

import pytest

from boundcalc.runs.tables import render_tables, tables_from_summaries


def _tsweep_parts() -> list:
    rows = [{"m": 16, "T": T, "seeds": 3, "lin_error_mean": 0.3, "lin_error_ci95": 0.4,
             "lin_error_gmean": 0.25, "lin_error_gci_low": 0.1, "lin_error_gci_high": 0.6,
             "lin_error_theory": 28.8 * T} for T in (4, 16)]
    fits = [{"panel": "lin_error", "m": 16, "slope": 0.07, "slope_ci95": 0.1, "seeds": 3,
             "theory_slope": 0.0, "change": 1.3, "Ts": 2}]
    return [("r", rows, fits)]


def test_two_latex_tabulars_are_separated_by_a_paragraph_and_bigskip():
    text = render_tables(tables_from_summaries("tsweep", _tsweep_parts()), "latex")
    assert text.count("\\begin{tabular}") == 2
    assert "\\end{tabular}\n\n\\bigskip\n\n% T sweep:" in text


@pytest.mark.parametrize(("statistic", "shown", "title"), [
    ("geometric", "0.25 [0.10, 0.60]", "geometric mean [95% CI on the log values] over seeds"),
    ("arithmetic", "0.30 ± 0.40", "mean ± 95% CI over seeds"),
])
def test_measured_columns_show_the_statistic_asked_for_and_the_title_names_it(statistic,
                                                                              shown, title):
    text = render_tables(tables_from_summaries("tsweep", _tsweep_parts()), "markdown",
                         statistic=statistic)
    first = "\n\n".join(text.split("\n\n")[:2])   # title and table
    assert title in first
    assert f"| {shown} |" in first


def test_a_column_spanning_the_plain_range_shares_one_power_of_ten():
    text = render_tables(tables_from_summaries("tsweep", _tsweep_parts()), "markdown")
    # the bound: 115.2 and 460.8 read plainly; a power would be shared by both rows
    assert "| 115 |" in text and "| 461 |" in text


def test_an_unknown_statistic_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match="statistic"):
        render_tables([], "markdown", statistic="median")
