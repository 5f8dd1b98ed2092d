"""Tables of runs from synthetic summaries: one power of ten per column (interval ends included),
an interval spanning decades flagged by its width, every measured column the statistic the title
names, slopes of two points said to be so, and table 1's verdict column in LaTeX."""

from __future__ import annotations

import re

import pytest

from boundcalc.render.rounding import WIDE_INTERVAL_DECADES, interval_decades
from boundcalc.runs.summaries import summarize_figure2_records
from boundcalc.runs.tables import render_tables, tables_from_summaries

_POWER = re.compile(r"×10\^(-?\d+)")


def _figure1_row(m: int, center: float, low: float, high: float) -> dict:
    return {"m": m, "seeds": 2, "initial_train_loss_mean": center,
            "initial_train_loss_ci95": 0.01, "initial_train_loss_gmean": center,
            "initial_train_loss_gci_low": low, "initial_train_loss_gci_high": high}


def _column(text: str, header_start: str) -> list[str]:
    first = text.split("\n\n")[1]   # the first table's pipe rows (after its title)
    lines = [line for line in first.splitlines() if line.startswith("|")]
    heads = [c.strip() for c in lines[0].strip("|").split("|")]
    index = next(i for i, h in enumerate(heads) if h.startswith(header_start))
    return [[c.strip() for c in line.strip("|").split("|")][index] for line in lines[2:]]


def test_an_interval_end_below_the_plain_range_moves_the_whole_column_to_one_power():
    # 0.0028 [5.1e-4, 0.0160]: the centre reads plainly, its lower end does not
    rows = [_figure1_row(8, 0.0028, 5.1e-4, 0.0160), _figure1_row(16, 0.0031, 0.0012, 0.0080)]
    text = render_tables(tables_from_summaries("figure1", [("r", rows, [])]), "markdown")
    cells = _column(text, "training loss at init")
    powers = {p for cell in cells for p in _POWER.findall(cell)}
    assert len(powers) == 1, cells
    assert all(cell.count("×10^") == 1 and cell.endswith(f"×10^{powers.pop()}")
               for cell in cells[:1]), cells


def test_every_cell_of_a_column_has_at_most_one_power_and_the_same_one():
    rows = [_figure1_row(m, c, lo, hi) for m, (c, lo, hi) in
            zip((8, 16, 32), [(0.0028, 5.1e-4, 0.016), (2.0e-5, 1.0e-5, 4.0e-5),
                              (0.3, 0.1, 0.9)], strict=True)]
    for fmt in ("markdown", "latex"):
        text = render_tables(tables_from_summaries("figure1", [("r", rows, [])]), fmt)
        found = re.findall(r"(?:×|\\times)10\^\{?(-?\d+)", text)
        assert len(set(found)) == 1 and len(found) == 3, (fmt, found)


def test_an_interval_wider_than_two_decades_is_flagged_by_its_width_and_the_title_says_why():
    rows = [_figure1_row(8, 3.1, 9.1e-17, 1.0e17), _figure1_row(16, 2.0, 1.0, 4.0)]
    assert interval_decades(9.1e-17, 1.0e17) > WIDE_INTERVAL_DECADES
    text = render_tables(tables_from_summaries("figure1", [("r", rows, [])]), "markdown")
    cells = _column(text, "training loss at init")
    assert cells == ["3.10 [CI spans 33 decades]", "2.0 [1.0, 4.0]"]
    assert "wider than two decades" in text.splitlines()[0]
    latex = render_tables(tables_from_summaries("figure1", [("r", rows, [])]), "latex")
    assert r"$3.10 [\mbox{CI spans 33 decades}]$" in latex and "e+" not in latex


def test_figure2_shows_every_measured_column_as_the_geometric_mean_its_title_names():
    cells = [{"model": "transformer", "L": 4, "T": 5, "diverged": False, "max_jacobian": j,
              "min_val_loss": v, "max_loss_gradient": g, "memory_floats_per_sample": 85}
             for j, v, g in ((0.5, 0.9, 0.01), (0.7, 1.1, 2.0), (0.6, 1.0, 0.02))]
    summary = summarize_figure2_records(cells, [4])
    text = render_tables(tables_from_summaries("figure2", [("r", summary, [])]), "markdown")
    title, header = text.splitlines()[0], text.splitlines()[2]
    assert "geometric mean" in title and "±" not in text.split("\n\n", 1)[1]
    measured = [h for h in header.split("|") if "max" in h or "min" in h]
    assert measured and all("geometric mean" in h for h in measured), measured
    assert "about 1" in title   # the yardstick of panel (b): predicting 0 on standardized labels


@pytest.mark.parametrize("fmt", ["markdown", "latex"])
def test_a_slope_fitted_to_two_widths_says_it_has_no_ci(fmt):
    rows = [{"m": m, "seeds": 3} for m in (8, 16)]
    fits = [{"panel": "lin_error", "slope": -0.5, "slope_ci95": float("nan"),
             "theory_slope": -0.36, "intercept": 0.0, "widths": 2}]
    text = render_tables(tables_from_summaries("figure1", [("r", rows, fits)]), fmt)
    assert "2 points: no CI" in text


def test_table1_latex_keeps_the_verdict_beside_under_bound():
    row = {"d_m": 16, "N": 64, "lowest_test_loss": 0.57, "theorem5_bound": 976.0,
           "under_bound": "yes, vacuous", "conditions_hold_count": "0/4"}
    latex = render_tables(tables_from_summaries("table1", [("r", [row], [])]), "latex")
    assert "under bound" in latex and "yes, vacuous" in latex


def test_a_table_whose_figure_draws_the_seeds_says_so_in_its_title():
    """Under MIN_SEEDS_FOR_BAND seeds the figure draws every seed instead of a band: the table
    of the same run says that its interval is the t-interval of those few values; with enough
    seeds it adds nothing, and a table without a figure of seeds never does."""
    from boundcalc.runs.tables import MIN_SEEDS_FOR_BAND

    few = [_figure1_row(8, 0.3, 0.1, 0.9), _figure1_row(16, 0.2, 0.1, 0.4)]
    text = render_tables(tables_from_summaries("figure1", [("r", few, [])]), "markdown")
    assert f"fewer than {MIN_SEEDS_FOR_BAND} seeds in a row" in text.splitlines()[0]
    latex = render_tables(tables_from_summaries("figure1", [("r", few, [])]), "latex")
    assert "fewer than" in latex.splitlines()[0]
    enough = [{**row, "seeds": MIN_SEEDS_FOR_BAND} for row in few]
    text = render_tables(tables_from_summaries("figure1", [("r", enough, [])]), "markdown")
    assert "fewer than" not in text
