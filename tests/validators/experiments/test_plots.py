"""Panel (c) of figure 1 and the T sweep draws the free yardsticks of Theorem 1's bound: the
measured training loss at initialization, and Y² where it is on the panel's scale."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("matplotlib")

from boundcalc.validators.experiments.plots import figure_style, free_yardsticks  # noqa: E402


def _rows(y2: float) -> list[dict]:
    return [{"m": m, "min_train_loss_theory": 9e3 / m, "initial_train_loss_gmean": 4e-3,
             "initial_loss_bound": y2} for m in (8, 16, 32)]


@pytest.mark.parametrize(("y2", "drawn"), [
    (81.0, ["measured", "Y^2"]),          # between R(theta_0) and the bound: on scale
    (1e6, ["measured"]),                   # above everything the panel shows: left out
])
def test_panel_c_draws_the_measured_initial_loss_and_y2_where_on_scale(y2, drawn):
    import matplotlib.pyplot as plt

    with figure_style():
        fig, ax = plt.subplots()
        handles = free_yardsticks(ax, _rows(y2), "m")
        lines = [line.get_ydata().tolist() for line in ax.get_lines()]
        plt.close(fig)
    assert [label.split()[0].strip("$") for _, label in handles] == drawn
    assert [4e-3] * 3 in lines
    assert ([y2] * 3 in lines) is (len(drawn) == 2)


def test_rows_without_a_measured_initial_loss_draw_no_curve_for_it():
    import matplotlib.pyplot as plt

    rows = [{"m": 8, "min_train_loss_theory": 1e3, "initial_loss_bound": 81.0,
             "initial_train_loss_gmean": math.nan}]
    with figure_style():
        fig, ax = plt.subplots()
        handles = free_yardsticks(ax, rows, "m")
        plt.close(fig)
    assert handles == []
