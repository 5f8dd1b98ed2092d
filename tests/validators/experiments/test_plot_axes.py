"""The axis rules of the experiments' figures (:mod:`validators.experiments.plot_axes`): an axis
spanning less than a decade is linear, a decade or more logarithmic; a log y axis under two
decades labels 1, 2 and 5 times each power of ten and never a minor tick; thinned x tick labels
never overlap; the caption's words are the panels' scales; a bound far above its data is off
scale. Drawn on matplotlib's Agg canvas, no torch."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import matplotlib  # noqa: E402

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from boundcalc.validators.experiments.plot_axes import (  # noqa: E402
    OFF_SCALE,
    axis_scales,
    bound_on_scale,
    drawn_values,
    log_x,
    thin_tick_labels,
    value_axis,
    x_axis,
)
from matplotlib.ticker import FuncFormatter, NullFormatter  # noqa: E402


@pytest.fixture
def figure():
    fig = plt.figure()
    yield fig
    plt.close(fig)


@pytest.mark.parametrize(("x", "log"), [
    ([8, 16, 32, 64], False), ([8, 16, 32, 64, 128], True), ([1, 10], True),
    ([1, 9.99], False), ([0.7, 1.3], False), ([0, -1, 2, 3], False), ([np.nan, 1, 100], True),
    ([], False), ([0, -5], False),
])
def test_an_x_axis_is_logarithmic_exactly_from_a_decade(x, log):
    assert log_x(x) is log


def test_x_axis_puts_a_tick_at_every_value_on_the_scale_its_span_asks(figure):
    narrow, wide = figure.subplots(1, 2)
    x_axis(narrow, [8, 16, 32, 64])
    x_axis(wide, [8, 16, 32, 64, 128, 256])
    assert narrow.get_xscale() == "linear" and wide.get_xscale() == "log"
    assert list(wide.get_xticks()) == [8, 16, 32, 64, 128, 256]
    assert list(narrow.get_xticks()) == [8, 16, 32, 64]
    assert len(wide.xaxis.get_minorticklocs()) == 0


def test_values_within_a_decade_give_a_linear_y_axis_from_zero(figure):
    ax = figure.subplots()
    ax.plot([1, 2, 3], [0.7, 1.0, 1.3])
    value_axis(ax)
    assert ax.get_yscale() == "linear"
    bottom, top = ax.get_ylim()
    assert bottom == 0 and top == pytest.approx(1.3 * 1.08)


def test_values_over_a_decade_give_a_log_y_axis_without_minor_labels(figure):
    ax = figure.subplots()
    ax.plot([1, 2, 3], [1e-4, 1e-2, 1.0])
    value_axis(ax)
    assert ax.get_yscale() == "log"
    assert isinstance(ax.yaxis.get_minor_formatter(), NullFormatter)


def test_a_log_y_axis_under_two_decades_labels_1_2_5_in_plain_digits(figure):
    ax = figure.subplots()
    ax.plot([1, 2, 3], [0.01, 0.1, 0.5])
    value_axis(ax)
    assert ax.get_yscale() == "log"
    formatter = ax.yaxis.get_major_formatter()
    assert isinstance(formatter, FuncFormatter)
    figure.canvas.draw()
    low, high = ax.get_ylim()
    ticks = [t for t in ax.get_yticks() if low <= t <= high]
    mantissas = {round(t / 10 ** np.floor(np.log10(t) + 1e-9), 6) for t in ticks}
    assert mantissas <= {1.0, 2.0, 5.0} and len(ticks) >= 3
    labels = [formatter(t) for t in ticks]
    assert "0.02" in labels and "0.1" in labels
    assert all("10^" not in label for label in labels)


def test_small_values_under_two_decades_are_labelled_as_powers_of_ten(figure):
    ax = figure.subplots()
    ax.plot([1, 2], [2e-5, 5e-4])
    value_axis(ax)
    formatter = ax.yaxis.get_major_formatter()
    assert formatter(2e-4) == "$2\\times10^{-4}$" and formatter(1e-4) == "$10^{-4}$"


def test_drawn_values_are_the_finite_positive_values_of_lines_and_bands(figure):
    ax = figure.subplots()
    ax.plot([1, 2, 3], [1.0, np.nan, -2.0])
    ax.fill_between([1, 2], [3.0, 4.0], [5.0, 6.0])
    values = drawn_values(ax)
    assert values.min() == 1.0 and values.max() == 6.0
    assert np.all(np.isfinite(values)) and np.all(values > 0)


def _label_spans(fig, ax):
    renderer = fig.canvas.get_renderer()
    return sorted((b.x0, b.x1) for b in (t.get_window_extent(renderer)
                                         for t in ax.get_xticklabels() if t.get_text()))


@pytest.mark.parametrize("widths", [(8, 16, 32, 64, 128, 256),
                                    (8, 16, 24, 32, 40, 48, 56, 64),
                                    (1000, 2000, 4000, 8000, 16000, 32000, 64000)])
def test_thinned_tick_labels_never_overlap_and_the_ticks_stay(widths):
    fig, axes = plt.subplots(1, 5, figsize=(6.75, 1.8))
    try:
        for ax in axes:
            ax.plot(widths, np.linspace(1, 2, len(widths)))
            x_axis(ax, widths)
        fig.canvas.draw()
        before = [_label_spans(fig, ax) for ax in axes]
        thin_tick_labels(fig)
        fig.canvas.draw()
        for ax, spans in zip(axes, before, strict=True):
            kept = _label_spans(fig, ax)
            assert all(b0 >= a1 for (_, a1), (b0, _) in zip(kept, kept[1:], strict=False))
            assert kept and kept[0] == spans[0]   # the leftmost label is always kept
            assert list(ax.get_xticks()) == list(widths)
        # the paper's widths in five panels of a double column do run into each other unthinned
        crowded = any(b0 < a1 for s in before for (_, a1), (b0, _) in zip(s, s[1:],
                                                                        strict=False))
        assert crowded or widths != (8, 16, 32, 64, 128, 256)
        if crowded:
            assert any(len(_label_spans(fig, ax)) < len(widths) for ax in axes)
    finally:
        plt.close(fig)


def test_labels_that_fit_are_all_kept(figure):
    ax = figure.subplots()
    figure.set_size_inches(8, 3)
    x_axis(ax, [10, 100, 1000])
    ax.plot([10, 100, 1000], [1, 2, 3])
    thin_tick_labels(figure)
    figure.canvas.draw()
    assert [t.get_text() for t in ax.get_xticklabels()] != ["", "", ""]
    assert len(_label_spans(figure, ax)) == 3


def test_axis_scales_states_log_log_or_each_panels_axes(figure):
    a, b, c = figure.subplots(1, 3)
    for ax in (a, b, c):
        ax.set_xscale("log")
        ax.set_yscale("log")
    assert axis_scales({"a": a, "b": b, "c": c}) == "log–log"
    c.set_yscale("linear")
    assert axis_scales({"a": a, "b": b, "c": c}) == ("log–log in a, b; x logarithmic, "
                                                     "y linear in c")


def test_a_bound_more_than_off_scale_above_the_data_is_left_off(figure):
    ax = figure.subplots()
    ax.plot([1, 2], [0.5, 1.0])
    assert bound_on_scale(ax, np.array([OFF_SCALE * 1.0, 1e9]))
    assert not bound_on_scale(ax, np.array([OFF_SCALE * 1.01, 1e9]))
    assert not bound_on_scale(ax, np.array([np.nan, -1.0]))
    empty = figure.add_subplot(2, 1, 2)
    assert not bound_on_scale(empty, np.array([1.0]))
