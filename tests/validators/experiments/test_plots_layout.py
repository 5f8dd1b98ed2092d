"""What a reader sees on the figures, checked on the matplotlib objects of synthetic summaries:
tick labels that never run into each other (the paper's widths 8 … 256 at double width), a caption
whose axis scales are the panels', no literal underscore outside mathtext, seeds drawn beside
their mean, the m^(-1/2) line below the data's spread, a bound far above its data left off its
panel, a two-point slope said to be one, one-column figures without an empty slot."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from boundcalc.validators.experiments import plots  # noqa: E402
from boundcalc.validators.experiments.plots import figure_style  # noqa: E402

_KEYS = ("lin_error", "app_error", "min_train_loss")
_PAPER_WIDTHS = (8, 16, 32, 64, 128, 256)


def _f1(widths=_PAPER_WIDTHS, seeds: int = 10, bound_factor: float = 30.0):
    """Summary rows (geometric mean g, band g/1.5 … 1.5g), fits, and with fewer than five seeds
    two seeds per width at g/4 and 4g."""
    rows = []
    for m in widths:
        row = {"m": m, "seeds": seeds, "initial_train_loss_gmean": 3e-3,
               "initial_loss_bound": 81.0, "lin_error_alt_gmean": 0.03 * 8 / m}
        for i, key in enumerate(_KEYS):
            g = 0.4 * 10.0 ** (-1.5 * i) * (m / 8) ** -0.5
            row |= {f"{key}_gmean": g, f"{key}_gci_low": g / 1.5, f"{key}_gci_high": g * 1.5,
                    f"{key}_theory": bound_factor * 10.0 ** (2.5 * i) * g / 0.4}
        rows.append(row)
    records = [{"m": r["m"], **{k: r[f"{k}_gmean"] * f for k in _KEYS}}
               for r in rows for f in (0.25, 4.0)] if seeds < 5 else None
    fits = [{"panel": k, "slope": -0.5, "slope_ci95": 0.1 if len(widths) > 2 else math.nan,
             "widths": len(widths)} for k in _KEYS]
    return rows, fits, records


def _figure1(width: str, **kw):
    rows, fits, records = _f1(**kw)
    return plots.figure1_figure(rows, fits, records, lin_align="feature", title="t",
                                width=width)


def _tsweep(width: str, seeds: int = 6, title: str = "t"):
    rows, fits = [], []
    for m in (16, 64):
        for T in (4, 16, 64, 256):
            row = {"m": m, "T": T, "seeds": seeds, "initial_train_loss_gmean": 3e-3,
                   "initial_loss_bound": 81.0}
            for i, key in enumerate(_KEYS):
                g = 0.3 * 10.0 ** -(1.5 * i) * (1 + 0.1 * math.log(T))
                row |= {f"{key}_gmean": g, f"{key}_gci_low": g / 1.3,
                        f"{key}_gci_high": g * 1.3, f"{key}_theory": 30.0 * 10.0 ** (2 * i)}
            rows.append(row)
        fits += [{"m": m, "panel": k, "slope": 0.01, "slope_ci95": 0.1} for k in _KEYS]
    return plots.tsweep_figure(rows, fits, None, widths=(16, 64), title=title, width=width)


def _figure2(width: str):
    rows = []
    for model, scale in (("transformer", 1.0), ("indrnn", 30.0)):
        for L in (4, 16, 72, 96):
            j, v = scale * L / 4, 0.8 + 0.005 * L
            rows.append({"model": model, "L": L, "seeds": 6, "max_jacobian_gmean": j,
                         "max_jacobian_gci_low": j / 2, "max_jacobian_gci_high": j * 2,
                         "min_val_loss_gmean": v, "min_val_loss_gci_low": v * 0.9,
                         "min_val_loss_gci_high": v * 1.1})
    return plots.figure2_figure(rows, None, lags=(4, 16, 72, 96), title="t", width=width)


_ALL = [(name, width) for name in ("figure1", "figure1-3seeds", "figure2", "tsweep")
        for width in ("single", "double")]


def _make(name: str, width: str):
    if name == "figure1":
        return _figure1(width)
    if name == "figure1-3seeds":
        return _figure1(width, seeds=3)
    return _figure2(width) if name == "figure2" else _tsweep(width)


def _close(fig) -> None:
    import matplotlib.pyplot as plt

    plt.close(fig)


@pytest.mark.parametrize(("name", "width"), _ALL)
def test_no_two_x_tick_labels_of_a_panel_overlap(name, width):
    """Figure 1 at the paper's widths 8 … 256 in five panels of a 6.75 in row ran its labels
    into each other; a label that would is left out (the tick stays)."""
    with figure_style():
        fig, _ = _make(name, width)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        for ax in fig.axes:
            boxes = sorted((b.x0, b.x1) for b in
                           (t.get_window_extent(renderer) for t in ax.get_xticklabels()
                            if t.get_visible() and t.get_text()))
            assert len(boxes) >= 2, ax.get_title(loc="left")
            for (_, right), (left, _) in zip(boxes, boxes[1:], strict=False):
                assert left > right, (name, width, ax.get_title(loc="left"))
        _close(fig)


def _claimed_scales(caption: str) -> list[tuple[str, list[str]]]:
    """(kind, panel letters; empty: every panel) from the caption's ``axes: …`` phrase."""
    phrase = re.search(r"[Aa]xes: (.*?)(?: \((?:an axis|a y range)|\)\. Per m)", caption)[1]
    out = []
    for part in phrase.split("; "):
        kind, _, letters = part.partition(" in ")
        out.append((kind, re.findall(r"\(\w\)", letters)))
    return out


def _kind(ax) -> str:
    x, y = ax.get_xscale(), ax.get_yscale()
    if (x, y) == ("log", "log"):
        return "log–log"
    words = {"log": "logarithmic", "linear": "linear"}
    return f"x {words[x]}, y {words[y]}"


@pytest.mark.parametrize(("name", "width"), _ALL)
def test_the_caption_states_the_axis_scales_every_panel_has(name, width):
    """The T sweep's caption said log–log over panels with linear y axes: the caption's claim
    is now made from the axes, and read back here panel by panel."""
    with figure_style():
        fig, caption = _make(name, width)
        panels = {ax.get_title(loc="left").split()[0]: _kind(ax) for ax in fig.axes}
        _close(fig)
    claims = _claimed_scales(caption)
    if len(claims) == 1 and not claims[0][1]:
        assert set(panels.values()) == {claims[0][0]}, (caption, panels)
    else:
        claimed = {letter: kind for kind, letters in claims for letter in letters}
        assert claimed == panels


def _outside_math(text: str) -> str:
    return re.sub(r"\$[^$]*\$", "", text)


@pytest.mark.parametrize("width", ["single", "double"])
def test_no_figure_text_shows_a_literal_underscore(width, monkeypatch, tmp_path):
    """Ω_ρ was typeset with its underscore: every text of the figure (its title as the run's
    parameters make it) has underscores only inside mathtext."""
    from matplotlib.text import Text

    titles = []
    monkeypatch.setattr(plots, "plot_tsweep", lambda *a, **kw: titles.append(kw["title"]))
    plots.draw_tsweep([], [], {"n": 128, "d": 8, "steps": 100, "rho": [3.0] * 3,
                               "seeds": [1, 2, 3], "widths": [16, 64]}, tmp_path / "t")
    (title,) = titles
    assert r"$\Omega_\rho$" in title
    with figure_style():
        for fig, _ in (_tsweep(width, title=title), _figure1(width), _figure2(width)):
            texts = [t.get_text() for t in fig.findobj(Text)]
            _close(fig)
            assert all("_" not in _outside_math(t) for t in texts), \
                [t for t in texts if "_" in _outside_math(t)]


@pytest.mark.parametrize("width", ["single", "double"])
def test_fewer_than_five_seeds_are_drawn_beside_the_mean_not_under_it(width):
    with figure_style():
        fig, _ = _figure1(width, seeds=3)
        ax = fig.axes[0]
        hollow = [line for line in ax.get_lines() if line.get_markerfacecolor() == "none"]
        mean_x = set(_PAPER_WIDTHS)
        _close(fig)
    assert hollow
    assert all(x not in mean_x for line in hollow for x in line.get_xdata())


@pytest.mark.parametrize("seeds", [3, 10])
def test_the_reference_line_runs_below_every_seed_and_the_band(seeds):
    """The m^(-1/2) line ran on the CI band: it now runs below the lowest value drawn at each
    width (the band's lower edge g/1.5, or the lowest seed g/4)."""
    rows, _, _ = _f1(seeds=seeds)
    with figure_style():
        fig, _ = _figure1("double", seeds=seeds)
        for ax, key in zip(fig.axes[:3], _KEYS, strict=True):
            (ref,) = [line for line in ax.get_lines() if line.get_color() == "0.55"]
            lowest = np.array([r[f"{key}_gmean"] / (4.0 if seeds < 5 else 1.5) for r in rows])
            assert (np.asarray(ref.get_ydata(), dtype=float) < lowest).all(), key
        _close(fig)


def test_a_bound_decades_above_its_data_is_left_off_its_panel_and_the_caption_says_so():
    with figure_style():
        fig, caption = _figure1("double", bound_factor=1e6)
        values = [np.asarray(line.get_ydata(), dtype=float) for ax in fig.axes[:3]
                  for line in ax.get_lines()]
        _close(fig)
    assert max(v.max() for v in values if len(v)) < 1.0     # no bound (≥ 10^6 × data) drawn
    assert "left off" in caption and "(a), (b), (c)" in caption


@pytest.mark.parametrize("width", ["single", "double"])
def test_a_slope_through_two_widths_says_it_has_no_ci_and_titles_stay_apart(width):
    from matplotlib.text import Text

    with figure_style():
        fig, caption = _figure1(width, widths=(8, 64))
        titles = [ax.get_title(loc="left") for ax in fig.axes[:3]]
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        boxes = [t.get_window_extent(renderer) for ax in fig.axes for t in ax.findobj(Text)
                 if t.get_text() and t.get_text() == ax.get_title(loc="left")]
        _close(fig)
    assert all("2 points: no CI" in t for t in titles), titles
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    assert "a fit to two widths has none" in caption


@pytest.mark.parametrize(("widths", "scale"), [((8, 16, 32, 64), "linear"),
                                               (_PAPER_WIDTHS, "log")])
def test_an_x_axis_over_less_than_a_decade_is_linear(widths, scale):
    with figure_style():
        fig, caption = _figure1("double", widths=widths)
        scales = {ax.get_xscale() for ax in fig.axes}
        _close(fig)
    assert scales == {scale}
    assert ("x linear" in caption) is (scale == "linear")


def test_one_column_figures_have_no_empty_slot_and_stay_short():
    """Figure 1 in one column was 6.6 in with an empty slot, the T sweep 8.8 in: the legend
    takes figure 1's sixth slot, inside the figure."""
    with figure_style():
        fig, _ = _figure1("single")
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        (legend,) = fig.legends
        box, page = legend.get_window_extent(renderer), fig.bbox
        height = fig.get_size_inches()[1]
        panels = [ax.get_position() for ax in fig.axes]
        _close(fig)
        fig_t, _ = _tsweep("single")
        tsweep_height = fig_t.get_size_inches()[1]
        _close(fig_t)
    assert len(panels) == 5 and height <= 5.5
    assert page.x0 <= box.x0 and box.x1 <= page.x1 and page.y0 <= box.y0
    assert box.x0 > max(p.x1 for p in panels[4:5]) * page.width    # beside (e), in the slot
    assert tsweep_height <= 7.0


@pytest.mark.parametrize("width", ["single", "double"])
def test_figure2_legend_names_the_geometric_mean_and_panel_b_has_its_yardstick(width):
    with figure_style():
        fig, caption = _figure2(width)
        (legend,) = fig.legends
        labels = [t.get_text() for t in legend.get_texts()]
        flat = [line for line in fig.axes[1].get_lines()
                if np.allclose(np.asarray(line.get_ydata(), dtype=float), 1.0)]
        _close(fig)
    assert sum("geometric mean" in label for label in labels) == 2
    assert flat and any("predicting 0" in label for label in labels)
    assert "predicting 0 has a validation loss of about 1" in caption


@pytest.mark.parametrize("kind", ["figure1", "tsweep"])
def test_the_ratio_panel_shows_the_free_yardstick_beside_a_vacuous_bound(kind):
    """(c) / Theorem 1 ≈ 1e-6 says nothing alone: the measured R̂(θ₀) over the same bound is
    drawn beside it (as far below 1: the bound is vacuous)."""
    with figure_style():
        fig, caption = _figure1("double") if kind == "figure1" else _tsweep("double")
        ratio = next(ax for ax in fig.axes if ax.get_ylabel() == "measured / bound")
        hollow = [line for line in ratio.get_lines() if line.get_marker() == "v"
                  and line.get_markerfacecolor() == "none"]
        _close(fig)
    assert hollow
    assert (np.asarray(hollow[0].get_ydata(), dtype=float) < 1).all()
    assert "hollow triangles" in caption
