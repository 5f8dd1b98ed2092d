"""Theorem 1's bound where its conditions fail (ρ < ν in a component, δ ≥ ½): the summary rows of
figure 1 and of the T sweep record the calculator's failing conditions and its verdict
``not_guaranteed`` (never ``vacuous``), and the tables and figures say "not applicable" wherever
the bound appears."""

from __future__ import annotations

import pytest

from boundcalc.runs.summaries import (
    figure1_theory,
    summarize_figure1_records,
    summarize_tsweep_records,
)
from boundcalc.runs.tables import figure1_tables, render_tables, tsweep_tables

PARAMS = {"widths": [8, 16], "seeds": [1, 2], "n": 64, "val_fraction": 0.2, "d": 4, "T": 8,
          "delta": "0.05", "steps": 50, "rho": [3.0, 3.0, 3.0], "nu": [3.0, 3.0, 3.0],
          "activation": "tanh"}


def _records(widths, Ts=None):
    out = []
    for m in widths:
        for T in Ts or [None]:
            for seed in (1, 2):
                cell = {"seed": seed, "m": m, "lin_error": 0.1 * seed, "app_error": 0.2,
                        "min_train_loss": 0.01 * seed, "initial_train_loss": 0.02 * seed}
                if T is not None:
                    cell["T"] = T
                out.append(cell)
    return out


@pytest.mark.parametrize(("change", "says"), [
    ({"rho": [2.0, 3.0, 3.0]}, "not applicable: rho_c >= nu_c fails"),
    ({"rho": [2.0, 2.0, 2.0]}, "not applicable: rho_c >= nu_c fails; rho_u >= nu_u fails; "
                               "rho_w >= nu_w fails"),
    ({"delta": "0.5"}, "not applicable: delta < 1/2 fails"),
])
def test_a_failing_condition_is_recorded_and_the_verdict_is_never_vacuous(change, says):
    params = {**PARAMS, **change}
    rows = summarize_figure1_records(_records(params["widths"]), params)
    assert [r["min_train_loss_conditions"] for r in rows] == [says, says]
    assert {r["min_train_loss_verdict"] for r in rows} == {"not_guaranteed"}
    assert figure1_theory(8, params)["min_iterate_conditions"] == says


def test_where_the_conditions_hold_the_verdict_is_the_yardsticks():
    rows = summarize_figure1_records(_records(PARAMS["widths"]), PARAMS)
    assert {r["min_train_loss_conditions"] for r in rows} == {"hold"}
    assert {r["min_train_loss_verdict"] for r in rows} == {"vacuous"}


def test_the_tables_say_not_applicable_beside_the_bound():
    params = {**PARAMS, "rho": [2.0, 3.0, 3.0]}
    rows = summarize_figure1_records(_records(params["widths"]), params)
    for fmt in ("markdown", "latex"):
        text = render_tables(figure1_tables([("r", rows, [])]), fmt)
        assert text.count("not applicable: rho") == 2, fmt   # one per width
    csv = render_tables(figure1_tables([("r", rows, [])]), "csv")
    assert "min_train_loss_conditions" in csv and "not_guaranteed" in csv
    held = summarize_figure1_records(_records(PARAMS["widths"]), PARAMS)
    assert "not applicable" not in render_tables(figure1_tables([("r", held, [])]), "markdown")


def test_the_t_sweep_records_and_tables_the_failing_conditions():
    params = {**PARAMS, "widths": [8], "Ts": [4, 8], "nu": [3.0, 3.0, 4.0]}
    rows = summarize_tsweep_records(_records([8], [4, 8]), params)
    assert {r["min_train_loss_conditions"] for r in rows} == {
        "not applicable: rho_w >= nu_w fails"}
    assert {r["min_train_loss_verdict"] for r in rows} == {"not_guaranteed"}
    text = render_tables(tsweep_tables([("r", rows, [])]), "markdown")
    assert text.count("not applicable: rho_w >= nu_w fails") == 2


def test_the_figures_label_the_bound_and_say_which_conditions_fail():
    pytest.importorskip("matplotlib")
    from boundcalc.validators.experiments import plots

    params = {**PARAMS, "rho": [2.0, 3.0, 3.0]}
    rows = summarize_figure1_records(_records(params["widths"]), params)
    with plots.figure_style():
        fig, caption = plots.figure1_figure(rows, [], None, lin_align="feature", title="t")
    labels = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    titles = [ax.get_title(loc="left") for ax in fig.axes]
    assert "Theorem 1 is not applicable at these settings (rho_c >= nu_c fails)" in caption
    assert any("Theorem 1 (not applicable)" in label for label in labels)
    assert any("Theorem 1 not applicable" in title for title in titles)
    held = summarize_figure1_records(_records(PARAMS["widths"]), PARAMS)
    with plots.figure_style():
        fig, caption = plots.figure1_figure(held, [], None, lin_align="feature", title="t")
    assert "not applicable" not in caption
    t_rows = summarize_tsweep_records(_records([8], [4, 8]),
                                      {**params, "widths": [8], "Ts": [4, 8]})
    with plots.figure_style():
        fig, caption = plots.tsweep_figure(t_rows, [], None, widths=[8], title="t")
    labels = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    # the bound is drawn only within a factor 100 of the data (else compared in the ratio panel):
    # wherever Theorem 1 is named, it is named not applicable
    assert "training / Theorem 1 (not applicable)" in labels
    named = [label for label in labels if "Theorem 1" in label]
    assert named and all("Theorem 1 (not applicable)" in label for label in named)
    assert "Theorem 1 is not applicable at these settings" in caption
