"""Panel (c) of figure 1 and the T sweep draws the free yardsticks of Theorem 1's bound: the
measured training loss at initialization, and Y² where it is on the panel's scale."""

from __future__ import annotations

import math

import numpy as np
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


# --------------------------------------------------------------------------- every figure
# The properties a reader relies on, checked on the matplotlib Figure objects of small synthetic
# summaries: one y axis per panel (no twin axes), every panel labelled on both axes, panel
# letters unique, the width the flag asks for, legend markers that are drawn somewhere, and a
# caption that names every panel and the 95% CI.

_F1_KEYS = ("lin_error", "app_error", "min_train_loss")


def _f1_rows(seeds: int = 6) -> list[dict]:
    rows = []
    for m in (8, 16, 32, 64):
        row = {"m": m, "seeds": seeds, "initial_train_loss_gmean": 3e-3,
               "initial_loss_bound": 81.0, "lin_error_alt_gmean": 0.03 * 8 / m}
        for i, key in enumerate(_F1_KEYS):
            g = 0.4 * 10.0 ** -i * (m / 8) ** -0.5
            row |= {f"{key}_gmean": g, f"{key}_gci_low": g / 1.5, f"{key}_gci_high": g * 1.5,
                    f"{key}_theory": 30.0 * 10.0 ** i}
        rows.append(row)
    return rows


def _f1_fits() -> list[dict]:
    return [{"panel": k, "slope": -0.5, "slope_ci95": 0.11, "intercept": 0.0} for k in _F1_KEYS]


def _f2_rows(seeds: int = 6) -> list[dict]:
    rows = []
    for model, scale in (("transformer", 1.0), ("indrnn", 30.0)):
        for L in (4, 16, 72):
            j, v = scale * L / 4, 0.8 + 0.01 * L
            rows.append({"model": model, "L": L, "seeds": seeds,
                         "max_jacobian_gmean": j, "max_jacobian_gci_low": j / 2,
                         "max_jacobian_gci_high": j * 2, "min_val_loss_gmean": v,
                         "min_val_loss_gci_low": v * 0.9, "min_val_loss_gci_high": v * 1.1})
    return rows


def _ts_rows() -> tuple[list[dict], list[dict]]:
    rows, fits = [], []
    for m in (16, 64):
        for T in (4, 16, 64):
            row = {"m": m, "T": T, "seeds": 6, "initial_train_loss_gmean": 3e-3,
                   "initial_loss_bound": 81.0}
            for i, key in enumerate(_F1_KEYS):
                g = 0.3 * 10.0 ** -i
                row |= {f"{key}_gmean": g, f"{key}_gci_low": g / 1.3, f"{key}_gci_high": g * 1.3,
                        f"{key}_theory": 30.0 * 10.0 ** i}
            rows.append(row)
        fits += [{"m": m, "panel": k, "slope": 0.01, "slope_ci95": 0.1} for k in _F1_KEYS]
    return rows, fits


def _figure(kind: str, width: str):
    from boundcalc.validators.experiments import plots

    if kind == "figure1":
        return plots.figure1_figure(_f1_rows(), _f1_fits(), None, lin_align="feature",
                                    title="t", width=width)
    if kind == "figure2":
        return plots.figure2_figure(_f2_rows(), None, lags=(4, 16, 72), title="t", width=width)
    rows, fits = _ts_rows()
    return plots.tsweep_figure(rows, fits, None, widths=(16, 64), title="t", width=width)


_PANELS = {"figure1": 5, "figure2": 2, "tsweep": 8}   # figure1: (e) the vacuity ratio
_CASES = [(kind, width) for kind in _PANELS for width in ("single", "double")]


@pytest.mark.parametrize(("kind", "width"), _CASES)
def test_every_panel_has_its_own_single_y_axis_and_both_axis_labels(kind, width):
    import matplotlib.pyplot as plt

    with figure_style():
        fig, _ = _figure(kind, width)
        boxes = [tuple(ax.get_position().bounds) for ax in fig.axes]
        labels = [(ax.get_xlabel(), ax.get_ylabel()) for ax in fig.axes]
        plt.close(fig)
    assert len(fig.axes) == _PANELS[kind]          # a twinx would add an axes
    assert len(set(boxes)) == len(boxes)           # ... at the position of another
    assert all(x and y for x, y in labels), labels


@pytest.mark.parametrize(("kind", "width"), _CASES)
def test_panel_letters_are_unique_and_in_order(kind, width):
    import re

    import matplotlib.pyplot as plt

    with figure_style():
        fig, caption = _figure(kind, width)
        titles = [ax.get_title(loc="left") for ax in fig.axes]
        plt.close(fig)
    letters = [re.match(r"\((\w)\)", t)[1] for t in titles]
    assert letters == [chr(ord("a") + i) for i in range(len(titles))], titles
    if kind != "tsweep":   # the T sweep's caption describes a row, not each letter
        assert all(f"({x})" in caption for x in letters)
    assert "95% CI" in caption


@pytest.mark.parametrize(("kind", "width"), _CASES)
def test_figure_is_as_wide_as_the_flag_says(kind, width):
    import matplotlib.pyplot as plt
    from boundcalc.validators.experiments.plots import FIGURE_WIDTHS

    with figure_style():
        fig, _ = _figure(kind, width)
        inches = fig.get_size_inches()[0]
        plt.close(fig)
    assert inches == pytest.approx(FIGURE_WIDTHS[width])


def _marker_key(line) -> tuple:
    from matplotlib.colors import to_rgba

    hollow = str(line.get_markerfacecolor()) == "none"
    color = line.get_markeredgecolor() if hollow else line.get_color()
    return line.get_marker(), tuple(round(c, 3) for c in to_rgba(color)[:3]), hollow


@pytest.mark.parametrize("seeds", [2, 6])
@pytest.mark.parametrize(("kind", "width"), _CASES)
def test_every_legend_marker_is_a_marker_drawn_in_a_panel(kind, width, seeds):
    """A legend entry with a marker stands for markers of that shape, colour and filling that
    some panel draws (seeds under five: hollow markers per seed, in each model's shape)."""
    import matplotlib.pyplot as plt
    from boundcalc.validators.experiments import plots
    from matplotlib.lines import Line2D

    records = None
    if seeds < plots.MIN_SEEDS_FOR_BAND:   # the seeds themselves are drawn: give them
        if kind == "figure2":
            records = [{"model": r["model"], "L": r["L"], "max_jacobian": 1.0 + s,
                        "min_val_loss": 0.8 + s / 10} for r in _f2_rows(seeds)
                       for s in range(seeds)]
        else:
            x_key = "m" if kind == "figure1" else "T"
            rows = _f1_rows(seeds) if kind == "figure1" else _ts_rows()[0]
            records = [{"m": r["m"], x_key: r[x_key], **{k: 0.1 + s for k in _F1_KEYS}}
                       for r in rows for s in range(seeds)]
    with figure_style():
        if kind == "figure1":
            fig, _ = plots.figure1_figure(_f1_rows(seeds), _f1_fits(), records,
                                          lin_align="feature", title="t", width=width)
        elif kind == "figure2":
            fig, _ = plots.figure2_figure(_f2_rows(seeds), records, lags=(4, 16, 72),
                                          title="t", width=width)
        else:
            rows, fits = _ts_rows()
            for r in rows:
                r["seeds"] = seeds
            fig, _ = plots.tsweep_figure(rows, fits, records, widths=(16, 64), title="t",
                                         width=width)
        drawn = {_marker_key(line) for ax in fig.axes for line in ax.get_lines()
                 if line.get_marker() not in ("", "None", None)}
        (legend,) = fig.legends
        handles = [h for h in legend.legend_handles
                   if isinstance(h, Line2D) and h.get_marker() not in ("", "None", None)]
        plt.close(fig)
    assert handles
    for handle in handles:
        assert _marker_key(handle) in drawn, _marker_key(handle)


def test_figure2_draws_a_range_under_a_decade_on_a_linear_axis():
    import matplotlib.pyplot as plt

    with figure_style():
        fig, _ = _figure("figure2", "single")
        scales = [ax.get_yscale() for ax in fig.axes]
        plt.close(fig)
    assert scales == ["log", "linear"]   # Jacobian norms over decades; losses within 0.7–1.6


@pytest.mark.parametrize("width", ["single", "double"])
def test_figure1_draws_the_bound_over_the_initial_loss_on_an_axis_labelled_for_it(width):
    """(d) "measured / bound" holds measurements over bounds only (below 1 here); Theorem 1's
    bound over the measured R̂(θ₀) (a bound over a measurement, far above 1) is on (e), whose
    y label says so; without R̂(θ₀) there is no (e)."""
    import matplotlib.pyplot as plt
    from boundcalc.validators.experiments import plots

    def panels(rows):
        with figure_style():
            fig, caption = plots.figure1_figure(rows, _f1_fits(), None, lin_align="feature",
                                                title="t", width=width)
            found = {ax.get_ylabel(): [np.asarray(line.get_ydata(), dtype=float)
                                       for line in ax.get_lines() if len(line.get_ydata()) == 4]
                     for ax in fig.axes}
            plt.close(fig)
        return found, caption

    found, caption = panels(_f1_rows())
    assert all((y < 1).all() for y in found["measured / bound"])
    (vacuity,) = found[r"Theorem 1 bound / $\hat{R}(\theta_0)$"]
    assert (vacuity > 1).all()
    assert "(e) Theorem 1's bound over the measured R̂(θ_0)" in caption
    without = [{k: v for k, v in r.items() if not k.startswith("initial_train_loss")}
               for r in _f1_rows()]
    found, caption = panels(without)
    assert len(found) == 4 and "(e)" not in caption


def test_figure1_draws_a_reference_slope_of_minus_one_half_apart_from_the_data():
    import matplotlib.pyplot as plt

    with figure_style():
        fig, caption = _figure("figure1", "double")
        ax = fig.axes[0]
        gmean = np.array([r["lin_error_gmean"] for r in _f1_rows()])
        slopes = []
        for line in ax.get_lines():
            x, y = (np.asarray(v, dtype=float) for v in line.get_data())
            if len(x) == 4 and (y > 0).all() and not np.allclose(y, gmean):
                slopes.append(np.polyfit(np.log(x), np.log(y), 1)[0])
                if abs(slopes[-1] + 0.5) < 1e-9:
                    assert (y < gmean / 2).all()      # beside the mean line, not under it
        plt.close(fig)
    assert any(abs(s + 0.5) < 1e-9 for s in slopes)
    assert "slope −1/2" in caption


def test_plot_writes_the_caption_beside_the_png_and_pdf(tmp_path):
    from boundcalc.validators.experiments.plots import plot_figure2

    paths = plot_figure2(_f2_rows(), None, tmp_path / "figure2", lags=(4, 16, 72),
                         title="AR(L)", width="single")
    assert sorted(p.name for p in paths) == ["figure2.caption.txt", "figure2.pdf",
                                             "figure2.png"]
    caption = (tmp_path / "figure2.caption.txt").read_text()
    assert caption.startswith("AR(L).") and "J(θ) = " in caption    # J is defined


def test_table_and_figure_of_one_stored_run_show_the_same_geometric_mean_and_interval():
    """One small stored figure-2 run (5 seeds: the figure draws the band): the table's
    ``gmean [low, high]`` of every (model, L) is the figure's marker and band there, rounded."""
    import re
    from pathlib import Path

    import matplotlib.pyplot as plt
    from boundcalc.validators.experiments.plots import figure2_figure
    from matplotlib.collections import PolyCollection

    from boundcalc.runs.stored import StoredRun
    from boundcalc.runs.summaries import summarize_figure2
    from boundcalc.runs.tables import build_tables, render_tables

    rng = np.random.default_rng(3)
    records = [{"model": model, "L": L, "T": L + 1, "seed": seed, "diverged": False,
                "max_jacobian": float(rng.lognormal(np.log(L), 1.0)),
                "min_val_loss": float(rng.uniform(0.5, 1.0)), "max_loss_gradient": 1.0,
                "memory_floats_per_sample": 8}
               for model in ("transformer", "indrnn") for L in (4, 16) for seed in range(5)]
    run = StoredRun("r", Path("."), "figure2", {"lags": [4, 16], "seeds": list(range(5))},
                    records)
    text = render_tables(build_tables([run]), "markdown", digits=4)
    table = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] in ("transformer", "indrnn"):
            table[(cells[0], int(cells[1]))] = [
                [float(x) for x in re.findall(r"-?\d+\.?\d*", cell)] for cell in cells[6:8]]
    with figure_style():
        fig, _ = figure2_figure(summarize_figure2(run), records, lags=(4, 16), title="t")
        for ax, panel in zip(fig.axes, range(2), strict=True):
            lines = [line for line in ax.get_lines() if line.get_marker() in ("o", "s")]
            bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
            assert len(lines) == len(bands) == 2
            for model, line, band in zip(("transformer", "indrnn"), lines, bands,
                                         strict=True):
                ys = band.get_paths()[0].vertices[:, 1]
                for L, y in zip(line.get_xdata(), line.get_ydata(), strict=True):
                    gmean, low, high = table[(model, int(L))][panel]
                    assert y == pytest.approx(gmean, rel=5e-3)
                    assert ys.min() <= high * 1.005 and ys.max() >= low * 0.995
                    edges = [v for v in ys if v == pytest.approx(low, rel=5e-3)
                             or v == pytest.approx(high, rel=5e-3)]
                    assert len(edges) >= 2
        plt.close(fig)


def test_a_log_axis_over_under_two_decades_has_plain_tick_labels():
    import matplotlib.pyplot as plt
    from boundcalc.validators.experiments.plots import figure2_figure

    rows = _f2_rows()
    for r in rows:   # Jacobian norms within 0.017–0.3 (with their bands): 1–2 decades
        g = 0.02 if r["model"] == "transformer" else 0.25
        r |= {"max_jacobian_gmean": g, "max_jacobian_gci_low": g / 1.2,
              "max_jacobian_gci_high": g * 1.2}
    with figure_style():
        fig, _ = figure2_figure(rows, None, lags=(4, 16, 72), title="t")
        ax = fig.axes[0]
        formatter = ax.yaxis.get_major_formatter()
        labels = [formatter(v) for v in (0.02, 0.05, 0.1, 0.2)]
        plt.close(fig)
    assert ax.get_yscale() == "log"
    assert labels == ["0.02", "0.05", "0.1", "0.2"]
