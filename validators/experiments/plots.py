"""The figures of the experiments, drawn the way a paper prints them.

Conventions every figure of :mod:`validators.experiments` follows (:func:`figure_style` sets them
for one figure, never globally):

* **width** — ``single`` (3.25 in, one column) or ``double`` (6.75 in, both columns), drawn at that
  size so that the fonts (8 pt text, 7 pt ticks and legend) are the sizes printed;
* **fonts** — TrueType (Type 42) in the PDF, never Type 3 (which many venues reject); true minus
  signs; symbols through mathtext (``$\\varepsilon_{\\mathrm{lin}}$``, ``$\\min_k \\hat{R}$``);
* **statistics on log axes** — the geometric mean over seeds and its 95 % t-interval computed on
  the log values (:func:`boundcalc.runs.stats.geometric_mean_ci95`, the summaries' ``_gmean`` /
  ``_gci_low`` / ``_gci_high``), so the band is symmetric on the axis and matches the log–log fit;
  with fewer than :data:`MIN_SEEDS_FOR_BAND` seeds the individual seeds are drawn instead of a
  band (a t-interval from 2–4 values spans decades and reads as data);
* **legends outside the data** — one legend for the whole figure, below the panels, whose markers
  are those drawn (hollow per-seed markers in each model's shape and colour);
* **panels** — every panel has its x- and y-axis labels and a letter of its own ((a), (b), … run
  on across rows); one y axis per panel, never a second (twin) axis: a bound decades above the
  measurements is drawn on the same axis or as the ratio measured / bound; a y range under one
  decade is drawn on a linear axis, one under two decades with plain tick labels;
* **slopes** — where a slope is claimed (figure 1: −1/2) a reference line of that slope runs
  beside the data; fitted slopes are printed in the titles with their 95 % CI, and no fitted line
  is drawn over the mean line it was fitted to;
* **captions** — ``FIG.caption.txt`` beside ``FIG.png`` / ``FIG.pdf`` defines every symbol and
  says what the markers, lines and bands are.

The ``*_figure`` functions return the matplotlib Figure and its caption (tests check the
properties above on them); ``plot_*`` draw it inside :func:`figure_style` and write the files.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from boundcalc.experiments.experiment_registry import experiment
from boundcalc.runs.stored import FIGURE1_METRICS
from boundcalc.runs.summaries import theorem1_applicability
from boundcalc.runs.tables import MIN_SEEDS_FOR_BAND

from .plot_axes import (
    OFF_SCALE,
    axis_scales,
    bound_on_scale,
    drawn_values,
    log_x,
    thin_tick_labels,
    value_axis,
    x_axis,
)

__all__ = ["FIGURE1_CAPTION", "FIGURE1_WIDTH", "FIGURE2_CAPTION", "FIGURE2_WIDTH",
           "FIGURE_WIDTHS", "TSWEEP_CAPTION", "TSWEEP_PANEL_LABELS",
           "TSWEEP_WIDTH", "check_width", "draw_figure1", "draw_figure2", "draw_figure2_summary",
           "draw_tsweep", "figure1_figure", "figure2_figure", "figure_style", "free_yardsticks",
           "plot_figure1", "plot_figure2", "plot_tsweep", "signed", "theorem1_applicability",
           "tsweep_figure"]

#: ``--figure-width``: inches of a one-column and of a two-column figure.
FIGURE_WIDTHS = {"single": 3.25, "double": 6.75}
#: The default ``--figure-width`` of each figure (its registry row's ``figure_width``): figure 1
#: four panels in a row, figure 2 two panels stacked, the T sweep three panels per width.
FIGURE1_WIDTH = experiment("figure1").figure_width or "double"
FIGURE2_WIDTH = experiment("figure2").figure_width or "single"
TSWEEP_WIDTH = experiment("tsweep").figure_width or "double"
_SEED_ALPHA = 0.45
_BOUND_COLOR, _ALT_COLOR = "tab:red", "tab:green"
_INITIAL_COLOR, _Y2_COLOR, _REF_COLOR = "black", "0.35", "0.55"
#: How a caption names what the panels draw (what :func:`_measured` drew: a band or the seeds).
_STAT_WORDS = {"band": "line and markers: the geometric mean over seeds; shaded: its 95% CI, a "
                       "Student-t interval on the log values",
               "seeds": "line and markers: the geometric mean over seeds; hollow markers: the "
                        "individual seeds (fewer than five: no confidence band is drawn)"}


def check_width(width: str) -> float:
    """Inches of ``width`` (``single`` or ``double``); a ValueError names any other value.

    Example:
        >>> check_width("single"), check_width("double")
        (3.25, 6.75)
    """
    if width not in FIGURE_WIDTHS:
        raise ValueError(f"`figure_width` must be one of {sorted(FIGURE_WIDTHS)}, got {width!r}")
    return FIGURE_WIDTHS[width]


@contextlib.contextmanager
def figure_style() -> Iterator[None]:
    """matplotlib settings of one figure (restored afterwards): Type 42 fonts in PDF and PS, true
    minus signs, 8 pt text (7.5 pt panel titles), 7 pt ticks and legends, thin lines."""
    import matplotlib

    matplotlib.use("Agg")
    with matplotlib.rc_context({
        "pdf.fonttype": 42, "ps.fonttype": 42, "axes.unicode_minus": True,
        "font.size": 8, "axes.titlesize": 7.5, "axes.labelsize": 8, "legend.fontsize": 7,
        "xtick.labelsize": 7, "ytick.labelsize": 7, "figure.titlesize": 8,
        "lines.linewidth": 1.1, "lines.markersize": 3.5, "axes.linewidth": 0.6,
        "grid.linewidth": 0.4, "xtick.major.width": 0.6, "ytick.major.width": 0.6,
        "xtick.minor.width": 0.4, "ytick.minor.width": 0.4, "legend.frameon": False,
        "legend.handlelength": 1.8, "legend.columnspacing": 1.2, "savefig.dpi": 300,
        "mathtext.fontset": "dejavusans",
    }):
        yield


def signed(value: float, digits: int = 2) -> str:
    """``value`` with ``digits`` decimals and a true minus sign (U+2212).

    Example:
        >>> signed(-0.511), signed(0.5, 1)
        ('−0.51', '0.5')
    """
    return f"{value:.{digits}f}".replace("-", "\u2212")


def _seed_values(records: Sequence[Mapping[str, Any]] | None, key: str, x_key: str, x: float,
                 where: Mapping[str, Any] | None = None) -> list[float]:
    if records is None:
        return []
    out = []
    for r in records:
        if r.get(x_key) != x or any(r.get(k) != v for k, v in (where or {}).items()):
            continue
        value = r.get(key)
        if isinstance(value, (int, float)) and math.isfinite(value) and value > 0:
            out.append(float(value))
    return out


#: Seeds drawn beside their mean, never under it: the j-th seed of a point sits this fraction of
#: the x axis's span (on the axis's own scale) to the right or left of the mean's marker.
_DODGE = (0.045, 0.075, 0.105)


def _dodged(x: float, j: int, span: tuple[float, float], log: bool) -> float:
    """x of the j-th seed marker beside a mean at ``x`` (alternately right and left, further out
    as j grows), ``span`` the data's x range, on a log or linear axis."""
    step = _DODGE[min(j // 2, len(_DODGE) - 1)] * (1 if j % 2 == 0 else -1)
    if log:
        return x * (span[1] / span[0]) ** step
    return x + step * (span[1] - span[0])


def _measured(ax, rows: Sequence[Mapping[str, Any]], key: str, x_key: str,
              records: Sequence[Mapping[str, Any]] | None, color: str, marker: str,
              where: Mapping[str, Any] | None = None, x_log: bool | None = None
              ) -> tuple[str, np.ndarray]:
    """Geometric mean over seeds (line and markers), and either its 95 % band on the log values
    or the individual seeds, drawn beside the mean's marker (:func:`_dodged`) so that none hides
    under it; returns ``"band"`` or ``"seeds"`` (what was drawn) and, per x, the lowest value
    drawn there (the band's lower edge or the lowest seed). ``x_log``: whether the x axis will be
    logarithmic (None: as :func:`x_axis` decides)."""
    x = np.array([r[x_key] for r in rows], dtype=float)
    g = np.array([r[f"{key}_gmean"] for r in rows], dtype=float)
    ax.plot(x, g, marker=marker, color=color, zorder=3)
    seeds = [int(r.get("seeds", 0)) for r in rows]
    lowest = g.copy()
    if records is not None and min(seeds, default=0) < MIN_SEEDS_FOR_BAND:
        span = (float(x.min()), float(x.max())) if x.size else (1.0, 1.0)
        log = log_x(x) if x_log is None else x_log
        for i, xi in enumerate(x):
            values = sorted(_seed_values(records, key, x_key, xi, where))
            if values:
                lowest[i] = min(lowest[i], values[0])
            ax.plot([_dodged(xi, j, span, log) for j in range(len(values))], values,
                    linestyle="none", marker=marker, markerfacecolor="none",
                    markeredgecolor=color, markeredgewidth=0.6, markersize=3.2,
                    alpha=_SEED_ALPHA, zorder=2)
        return "seeds", lowest
    low = np.array([r[f"{key}_gci_low"] for r in rows], dtype=float)
    high = np.array([r[f"{key}_gci_high"] for r in rows], dtype=float)
    ok = np.isfinite(low) & np.isfinite(high)
    ax.fill_between(x[ok], low[ok], high[ok], color=color, alpha=0.2, linewidth=0, zorder=1)
    lowest[ok] = np.minimum(lowest[ok], low[ok])
    return "band", lowest


def free_yardsticks(ax, rows: Sequence[Mapping[str, Any]], x_key: str,
                    bound_key: str | None = "min_train_loss_theory") -> list[tuple[Any, str]]:
    """Draw panel (c)'s free yardsticks on ``ax``: the measured training loss at initialization
    R̂(θ_0) (geometric mean over seeds, ``initial_train_loss_gmean``), which min_k R̂(θ_k) never
    exceeds, and Y² (``initial_loss_bound``) where it lies within the span of what the panel
    already shows (the bound, ``bound_key`` — None where the bound is off the panel's scale — and
    the measurements); a bound above them says nothing. Returns the legend entries of what was
    drawn."""
    from matplotlib.lines import Line2D

    x = np.array([r[x_key] for r in rows], dtype=float)
    handles: list[tuple[Any, str]] = []
    initial = np.array([r.get("initial_train_loss_gmean", math.nan) for r in rows], dtype=float)
    if np.isfinite(initial).any():
        ax.plot(x, initial, marker="v", linestyle="-.", color=_INITIAL_COLOR, markersize=3,
                linewidth=0.9, zorder=3)
        handles.append((Line2D([], [], color=_INITIAL_COLOR, linestyle="-.", marker="v",
                               markersize=3), r"measured $\hat{R}(\theta_0)$ (free bound)"))
    y2 = np.array([r.get("initial_loss_bound", math.nan) for r in rows], dtype=float)
    bound = [r.get(bound_key, math.nan) for r in rows] if bound_key else []
    shown = np.array(bound + list(initial) + list(drawn_values(ax)), dtype=float)
    shown = shown[np.isfinite(shown) & (shown > 0)]
    if np.isfinite(y2).all() and shown.size and shown.min() <= y2.min() and \
            y2.max() <= shown.max():
        ax.plot(x, y2, linestyle=(0, (5, 2, 1, 2)), color=_Y2_COLOR, linewidth=0.9, zorder=2)
        handles.append((Line2D([], [], color=_Y2_COLOR, linestyle=(0, (5, 2, 1, 2))),
                        r"$Y^2$ (free bound)"))
    return handles


def _seed_handle(color: str, marker: str = "o"):
    from matplotlib.lines import Line2D

    return Line2D([], [], linestyle="none", marker=marker, markerfacecolor="none",
                  markeredgecolor=color, markeredgewidth=0.6, markersize=3.2, alpha=_SEED_ALPHA)


def _spread_handle(drawn: str, color: str, marker: str = "o"):
    from matplotlib.patches import Patch

    if drawn == "band":
        return Patch(facecolor=color, alpha=0.2, linewidth=0), "95% CI"
    return _seed_handle(color, marker), "individual seeds"


def _letters() -> Iterator[str]:
    """(a), (b), … (z): one letter per panel of a figure, never repeated."""
    return iter(f"({chr(ord('a') + i)})" for i in range(26))


def _slope_text(slope: float, ci: float, digits: int = 2, unit: str = "",
                narrow: bool = False, points: int | None = None) -> str:
    """``slope −0.54±0.11 (95% CI)``; ``narrow`` (a one-column figure) breaks before the CI's
    name; a slope without a CI says why (``points`` 2: a line through two points).

    Example:
        >>> _slope_text(-0.5, float("nan"), points=2)
        'slope −0.50 (2 points: no CI)'
    """
    text = f"slope{unit} {signed(slope, digits)}"
    if not math.isfinite(ci):
        return text + ("\n" if narrow else " ") + (
            f"({points} points: no CI)" if points is not None and points < 3 else "(no CI)")
    return text + f"±{ci:.{digits}f}" + ("\n(95% CI)" if narrow else " (95% CI)")


def _title_size(width: str) -> float:
    """Panel titles: 7.5 pt, 6.5 pt in a one-column figure (two panels share 3.25 in)."""
    return 7.5 if width == "double" else 6.5


def _reference_slope(ax, x: np.ndarray, lowest: np.ndarray, slope: float = -0.5) -> None:
    """A reference line ∝ x^``slope`` (a straight line of that slope in log–log) a factor 2 below
    ``lowest``, the lowest value drawn at each x (the band's lower edge or the lowest seed), so
    that it runs beside the data and its spread, never on them."""
    ok = np.isfinite(lowest) & (lowest > 0)
    if not ok.any():
        return
    anchor = float(np.min(lowest[ok] / x[ok] ** slope)) / 2
    ax.plot(x, anchor * x ** slope, linestyle=(0, (1, 1.5)), color=_REF_COLOR,
            linewidth=1.0, zorder=1)


def _suptitle(fig, title: str, width: str) -> None:
    """The figure's title, broken into lines that fit a one-column figure."""
    import textwrap

    fig.suptitle(title if width == "double" else textwrap.fill(title, 56))


def _legend_size(width: str) -> dict[str, Any]:
    """Legend spacing: a one-column figure packs it tighter so that two columns fit."""
    if width == "double":
        return {}
    return {"fontsize": 6.5, "handlelength": 1.5, "columnspacing": 0.8, "handletextpad": 0.4}


def _save(fig, stem: Path, caption: str) -> list[Path]:
    """``stem``.png, ``stem``.pdf and the caption text ``stem``.caption.txt beside them."""
    from boundcalc.files import write_atomic

    paths = [stem.with_suffix(".png"), stem.with_suffix(".pdf")]
    for path in paths:
        fig.savefig(path)
    text_path = stem.with_suffix(".caption.txt")
    write_atomic(text_path, caption.strip() + "\n")
    return [*paths, text_path]


# --------------------------------------------------------------------------- figure 1

_F1_PANELS = {
    "lin_error": ("linearization", r"mean$_j\,|f - f_{\mathrm{lin}}|$",
                  r"$\varepsilon_{\mathrm{lin}}$"),
    "app_error": ("approximation", r"max$_j\,|f_{\mathrm{lin}}(\bar{\theta}) - y|$",
                  r"$\varepsilon_{\mathrm{app}}$"),
    "min_train_loss": ("training", r"min$_k\,\hat{R}(\theta_k)$", "Theorem 1"),
}
#: Panel names of a one-column T sweep (the y labels say what each is).
_SHORT = {"lin_error": "lin.", "app_error": "approx.", "min_train_loss": "training"}
_RATIO_MARKERS = {"lin_error": ("o", "black"), "app_error": ("s", "0.35"),
                  "min_train_loss": ("D", "0.6")}

FIGURE1_CAPTION = """\
{title}. Panels {a}–{c} against the width m of the student ({stat}):
{a} mean_j |f − f_lin|, the mean over the n samples of the gap between the network f and its
linearization f_lin at θ(0), both at the gradient-aligned boundary point of Ω_ρ (bound: Lemma 3's
ε_lin){alt_note};
{b} max_j |f_lin(θ̄) − y|, the largest gap between the linearization at the transported parameters
θ̄ (eq. (11)) and the teacher's label y (bound: ε_app);
{c} min_k R̂(θ_k), the lowest training loss R̂ = (1/n_train) Σ_j (f(X_j) − y_j)² over the iterates
θ_0 … θ_K of ProjGD (K steps; bound: Theorem 1's min-iterate bound), beside its free yardsticks:
the measured R̂(θ_0) (k = 0 is an iterate, so min_k R̂(θ_k) ≤ R̂(θ_0) with no theorem) and Y², the
bound on the loss at initialization of the same evaluation, where on scale;
{d} each measurement over its bound (below 1: the bound holds){ratio_note}{vacuity_note}.
Axes: {scales} (an axis over less than a decade is linear).{off_note}
The dotted grey line in {a}–{c} has slope −1/2 (∝ m^(−1/2), the rate of the theory and of the
paper's fits; a straight line only on log–log axes), drawn below the data and its spread for
comparison; the slope in each title is the least-squares slope of log(geometric mean) in log m
with its 95% CI (a fit to two widths has none). n = samples, d = token dimension,
T = sequence length, K = steps.{applicability}
"""


def figure1_figure(summary: Sequence[Mapping[str, Any]], fits: Sequence[Mapping[str, Any]],
                   records: Sequence[Mapping[str, Any]] | None, *, lin_align: str, title: str,
                   width: str = "double") -> tuple[Any, str]:
    """Figure 1 as a matplotlib Figure and its caption text (see :func:`plot_figure1`); call
    inside :func:`figure_style`."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    inches = check_width(width)
    metrics = list(_F1_PANELS)
    by_panel = {f["panel"]: f for f in fits}
    rows = sorted(summary, key=lambda r: r["m"])
    x = np.array([r["m"] for r in rows], dtype=float)
    theorem1, applicability = theorem1_applicability(rows)
    alt_align = "output" if lin_align == "feature" else "feature"
    has_alt = bool(rows) and all("lin_error_alt_gmean" in r for r in rows)
    letters = _letters()
    # Theorem 1's bound over the measured R̂(θ_0) is a bound over a measurement (above 1: vacuous),
    # not a measurement over its bound: it gets a panel of its own, with its own y label
    initial = np.array([r.get("initial_train_loss_gmean", math.nan) for r in rows], dtype=float)
    vacuity = np.array([r["min_train_loss_theory"] for r in rows], dtype=float) / initial
    has_vacuity = bool(np.isfinite(vacuity).any())
    panels = 5 if has_vacuity else 4
    if width == "double":
        shape, size = (1, panels), (inches, 2.7)
    else:   # five panels: the legend takes the sixth slot
        shape, size = ((3, 2), (inches, 5.4)) if has_vacuity else ((2, 2), (inches, 4.6))
    fig, grid = plt.subplots(*shape, figsize=size, layout="constrained")
    axes = list(np.ravel(grid))
    slot = axes[5] if width == "single" and has_vacuity else None
    for spare in axes[panels:]:
        spare.axis("off")
        if spare is not slot:
            fig.delaxes(spare)
    axes = axes[:panels]
    drawn = "band"
    free_handles: list[tuple[Any, str]] = []
    names: dict[str, str] = {}
    off_scale: list[str] = []
    for ax, key in zip(axes, metrics, strict=False):
        name, ylabel, _ = _F1_PANELS[key]
        names[key] = next(letters)
        drawn, lowest = _measured(ax, rows, key, "m", records, "tab:blue", "o")
        fit = by_panel.get(key, {})
        heading = f"{names[key]} {name}"
        if key == "min_train_loss" and applicability:
            heading += " (Theorem 1 not applicable)"
        if math.isfinite(fit.get("slope", math.nan)):
            heading += "\n" + _slope_text(fit["slope"], fit.get("slope_ci95", math.nan),
                                           narrow=width == "single" or panels > 4,
                                           points=fit.get("widths", len(rows)))
        if key == "lin_error" and has_alt:
            ax.plot(x, [r["lin_error_alt_gmean"] for r in rows], marker="^",
                    color=_ALT_COLOR, alpha=0.8, markersize=3)
        bound = np.array([r[f"{key}_theory"] for r in rows], dtype=float)
        on_scale = bound_on_scale(ax, bound)
        if on_scale:
            ax.plot(x, bound, marker="s", linestyle=":", color=_BOUND_COLOR, markersize=2.8)
        else:
            off_scale.append(names[key])
        if key == "min_train_loss":
            free_handles = free_yardsticks(ax, rows, "m",
                                           "min_train_loss_theory" if on_scale else None)
        _reference_slope(ax, x, lowest)
        ax.set_title(heading, loc="left", fontsize=_title_size(width))
        ax.set_ylabel(ylabel)
        x_axis(ax, x)
        value_axis(ax)
    ratio_ax = axes[3]
    names["ratio"] = next(letters)
    for key in metrics:
        marker, color = _RATIO_MARKERS[key]
        ratio = [r[f"{key}_gmean"] / r[f"{key}_theory"] for r in rows]
        ratio_ax.plot(x, ratio, marker=marker, color=color, markersize=3)
    free_ratio = initial / np.array([r["min_train_loss_theory"] for r in rows], dtype=float)
    if has_vacuity:   # the free yardstick over the same bound, beside (c) / Theorem 1
        ratio_ax.plot(x, free_ratio, marker="v", linestyle="-.", color=_INITIAL_COLOR,
                      markersize=3, markerfacecolor="none", linewidth=0.9)
    blank = "\n" * (1 + (width == "single" or panels > 4))   # as tall as a slope title
    ratio_ax.set_title(f"{names['ratio']} ratio" + blank, loc="left",
                       fontsize=_title_size(width))
    ratio_ax.set_ylabel("measured / bound")
    x_axis(ratio_ax, x)
    value_axis(ratio_ax)
    if has_vacuity:
        vacuity_ax = axes[4]
        names["vacuity"] = next(letters)
        vacuity_ax.plot(x, vacuity, marker="x", linestyle="-.", color=_BOUND_COLOR,
                        markersize=3.5)
        vacuity_ax.axhline(1.0, color="0.3", linewidth=0.6, linestyle=":")
        vacuity_ax.set_title(f"{names['vacuity']} vacuity" + blank, loc="left",
                             fontsize=_title_size(width))
        vacuity_ax.set_ylabel(r"Theorem 1 bound / $\hat{R}(\theta_0)$")
        x_axis(vacuity_ax, x)
        value_axis(vacuity_ax)
    for ax in axes:
        ax.set_xlabel("width $m$")
    spread, spread_label = _spread_handle(drawn, "tab:blue")
    a, b, c = (names[k] for k in metrics)
    handles = [
        (Line2D([], [], color="tab:blue", marker="o"), "geometric mean over seeds"),
        (spread, spread_label),
        (Line2D([], [], color=_BOUND_COLOR, linestyle=":", marker="s", markersize=2.8),
         "bound"),
        (Line2D([], [], color=_REF_COLOR, linestyle=(0, (1, 1.5)), linewidth=1.0),
         r"$\propto m^{-1/2}$"),
    ]
    if has_alt:
        handles.append((Line2D([], [], color=_ALT_COLOR, alpha=0.8, marker="^", markersize=3),
                        f"{a} {alt_align}-aligned"))
    bound_names = {**{k: v[2] for k, v in _F1_PANELS.items()}, "min_train_loss": theorem1}
    handles += free_handles + [
        (Line2D([], [], color=_RATIO_MARKERS[k][1], marker=_RATIO_MARKERS[k][0],
                markersize=3), f"{names[k]} / {bound_names[k]}") for k in metrics]
    if has_vacuity:
        handles += [(Line2D([], [], color=_INITIAL_COLOR, linestyle="-.", marker="v",
                            markersize=3, markerfacecolor="none", linewidth=0.9),
                     r"$\hat{R}(\theta_0)$ / " + theorem1),
                    (Line2D([], [], color=_BOUND_COLOR, linestyle="-.", marker="x",
                            markersize=3.5), theorem1 + r" / $\hat{R}(\theta_0)$")]
    if slot is not None:   # the legend in the empty sixth slot, where the layout put it
        _suptitle(fig, title, width)
        fig.canvas.draw()
        box, left = slot.get_position(), axes[4].get_position().x1 + 0.02
        fig.delaxes(slot)
        fig.legend(*zip(*handles, strict=True), loc="center", ncol=1,
                   bbox_to_anchor=(left, box.y0, 1.0 - left, box.height),
                   bbox_transform=fig.transFigure, labelspacing=0.3, borderaxespad=0.2,
                   **_legend_size(width))
    else:
        fig.legend(*zip(*handles, strict=True), loc="outside lower center",
                   ncol=4 if width == "double" else 2, **_legend_size(width))
    _suptitle(fig, title, width)
    thin_tick_labels(fig)
    alt_note = (f"; green triangles: the same with each head's step aligned with the "
                f"{'gradient of f' if alt_align == 'output' else 'gradient of its own output'}"
                f" ({alt_align} alignment)" if has_alt else "")
    ratio_note = (f"; hollow triangles: the measured R̂(θ_0) over the same bound as {c} — where "
                  f"it lies as far below 1 as {c}, the bound is vacuous and the small ratio "
                  f"says nothing" if has_vacuity else "")
    vacuity_note = (f";\n{names['vacuity']} Theorem 1's bound over the measured R̂(θ_0), a bound "
                    f"over a measurement on an axis of its own (above the dotted line at 1: the "
                    f"bound is vacuous)" if has_vacuity else "")
    off_note = (f" The bound of {', '.join(off_scale)} lies more than {OFF_SCALE:.0f} times "
                f"above every measurement of its panel and is left off it (it would squeeze the "
                f"data into the bottom of the axis): {names['ratio']} compares them."
                if off_scale else "")
    panel_axes = {names[k]: ax for k, ax in zip(metrics, axes, strict=False)}
    panel_axes[names["ratio"]] = ratio_ax
    if has_vacuity:
        panel_axes[names["vacuity"]] = axes[4]
    caption = FIGURE1_CAPTION.format(title=title, a=a, b=b, c=c, d=names["ratio"],
                                     stat=_STAT_WORDS[drawn], alt_note=alt_note,
                                     ratio_note=ratio_note, vacuity_note=vacuity_note,
                                     scales=axis_scales(panel_axes), off_note=off_note,
                                     applicability=applicability)
    return fig, caption


def plot_figure1(summary: Sequence[Mapping[str, Any]], fits: Sequence[Mapping[str, Any]],
                 records: Sequence[Mapping[str, Any]] | None, stem: Path, *, lin_align: str,
                 title: str, width: str = "double") -> list[Path]:
    """Figure 1: panels (a)–(c) measured against m on log–log axes (geometric mean over seeds
    with its 95 % band, or the seeds under five; the bound; a reference line of slope −1/2; the
    fitted slope ± 95 % CI in the title), panel (c) also the free yardsticks of its bound
    (:func:`free_yardsticks`: the measured R̂(θ_0) and Y² where on scale), panel (d) each
    measurement over its bound — the bounds sit 2–11 decades above the measurements, so (d)
    shows how far on an axis of its own — and panel (e), where R̂(θ_0) was measured, Theorem 1's
    bound over the measured R̂(θ_0) (a bound over a measurement, so its own axis and y label),
    above 1 wherever the bound is vacuous. ``double``: the panels in a row; ``single``: two per
    row.
    Writes ``stem``.png/.pdf and the caption defining every symbol, ``stem``.caption.txt."""
    import matplotlib.pyplot as plt

    with figure_style():
        fig, caption = figure1_figure(summary, fits, records, lin_align=lin_align, title=title,
                                      width=width)
        paths = _save(fig, stem, caption)
        plt.close(fig)
    return paths


# --------------------------------------------------------------------------- figure 2

_F2_MODELS = {"transformer": ("tab:blue", "o", r"Transformer ($P = W$)"),
              "indrnn": ("tab:orange", "s", r"IndRNN ($P = u$)")}

FIGURE2_CAPTION = """\
{title}. Both models trained by plain gradient descent (no projection) on the AR(L) task, against
the lag L (sequence length T = L + 1); per model the {stat}.
{a} max_k J(θ_k), the largest over the iterates θ_0 … θ_K of
J(θ) = sqrt((1/n) Σ_j ‖∇_P f(X_j; θ)‖²), the root-mean-square over the n training windows of the
gradient of the output f with respect to the parameter block P: the attention weights P = W of
the Transformer, the recurrent weights P = u of the IndRNN;
{b} the lowest validation loss (mean squared error on the held-out windows) over the iterates,
beside its yardstick: the labels are standardized to mean 0 and variance 1 over the windows, so
predicting 0 has a validation loss of about 1 (dash-dotted line).
Axes: {scales} (a y range within one decade is linear). m = width, K = steps, η = step size.
"""


def figure2_figure(summary: Sequence[Mapping[str, Any]],
                   records: Sequence[Mapping[str, Any]] | None, *, lags: Sequence[int],
                   title: str, width: str = "single") -> tuple[Any, str]:
    """Figure 2 as a matplotlib Figure and its caption text (see :func:`plot_figure2`); call
    inside :func:`figure_style`."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    inches = check_width(width)
    letters = _letters()
    panels = (("max_jacobian", "Jacobian", r"max$_k\, J(\theta_k)$"),
              ("min_val_loss", "validation", "min validation loss"))
    if width == "double":
        fig, axes = plt.subplots(1, 2, figsize=(inches, 2.5), layout="constrained")
    else:
        fig, axes = plt.subplots(2, 1, figsize=(inches, 4.2), layout="constrained")
    drawn = "band"
    names = []
    for ax, (key, name, ylabel) in zip(axes, panels, strict=True):
        names.append(next(letters))
        for model, (color, marker, _) in _F2_MODELS.items():
            rows = sorted((r for r in summary if r["model"] == model), key=lambda r: r["L"])
            if rows:
                drawn, _ = _measured(ax, rows, key, "L", records, color, marker,
                                     where={"model": model}, x_log=False)
        if key == "min_val_loss":   # the yardstick: the labels are standardized
            ax.axhline(1.0, color=_Y2_COLOR, linestyle="-.", linewidth=0.9, zorder=2)
        ax.set_title(f"{names[-1]} {name}", loc="left", fontsize=_title_size(width))
        ax.set_ylabel(ylabel)
        value_axis(ax)
        ax.set_xticks(list(lags))
        ax.grid(alpha=0.3, which="major")
        ax.tick_params(which="both", direction="out")
        ax.set_xlabel("lag $L$ ($T = L + 1$)")
    handles = []
    for color, marker, label in _F2_MODELS.values():
        handles.append((Line2D([], [], color=color, marker=marker),
                        f"{label}: geometric mean over seeds"))
        spread, spread_label = _spread_handle(drawn, color, marker)
        handles.append((spread, f"{label.split()[0]}: {spread_label}"))
    handles.append((Line2D([], [], color=_Y2_COLOR, linestyle="-.", linewidth=0.9),
                    f"{names[1]}: predicting 0 (standardized labels)"))
    fig.legend(*zip(*handles, strict=True), loc="outside lower center",
               ncol=2 if width == "double" else 1, **_legend_size(width))
    _suptitle(fig, title, width)
    thin_tick_labels(fig)
    caption = FIGURE2_CAPTION.format(title=title, a=names[0], b=names[1],
                                     stat=_STAT_WORDS[drawn],
                                     scales=axis_scales(dict(zip(names, axes, strict=True))))
    return fig, caption


def plot_figure2(summary: Sequence[Mapping[str, Any]], records: Sequence[Mapping[str, Any]] | None,
                 stem: Path, *, lags: Sequence[int], title: str, width: str = "single"
                 ) -> list[Path]:
    """Figure 2: (a) max Jacobian norm and (b) min validation loss against the lag L, per model
    the geometric mean over seeds with its 95 % band (or the seeds, under five); a panel whose
    values lie within one decade gets a linear axis. ``single``: stacked; ``double``: side by
    side. Writes ``stem``.png/.pdf and ``stem``.caption.txt (J defined)."""
    import matplotlib.pyplot as plt

    with figure_style():
        fig, caption = figure2_figure(summary, records, lags=lags, title=title, width=width)
        paths = _save(fig, stem, caption)
        plt.close(fig)
    return paths


# --------------------------------------------------------------------------- T sweep

#: Panel titles of the T sweep, one per figure-1 metric.
TSWEEP_PANEL_LABELS = {"lin_error": "linearization error",
                       "app_error": "approximation error",
                       "min_train_loss": "min training loss"}

TSWEEP_CAPTION = """\
{title}. Figure 1's teacher–student protocol at fixed width m (one row of panels per m) against
the sequence length T ({stat}; axes: {scales}). Per m: the linearization error
mean_j |f − f_lin|, the approximation error max_j |f_lin(θ̄) − y| and the lowest training loss
min_k R̂(θ_k) over the ProjGD iterates (with Theorem 1's bound where within a factor 100 of the
data, the measured loss at initialization R̂(θ_0) and Y² where on scale), as in Figure 1; the
last panel of each m is each measurement over its bound (ε_lin, ε_app, Theorem 1), beside the
measured R̂(θ_0) over Theorem 1's bound (hollow triangles: as far below 1 as the training loss,
the bound is vacuous) — the bounds do not depend on T and lie decades above the measurements, so
they are compared as ratios (below 1: the bound holds). The slope in each title is the slope of
log(metric) in log T fitted per seed, mean ± 95% CI over the seeds; 0 means no dependence on T.
n = samples, d = token dimension, K = steps, ρ the radii of Ω_ρ, ν the teacher's transport
budgets.{applicability}
"""


def tsweep_figure(summary: Sequence[Mapping[str, Any]], fits: Sequence[Mapping[str, Any]],
                  records: Sequence[Mapping[str, Any]] | None, *, widths: Sequence[int],
                  title: str, width: str = "double") -> tuple[Any, str]:
    """The T sweep as a matplotlib Figure and its caption text (see :func:`plot_tsweep`); call
    inside :func:`figure_style`."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    inches = check_width(width)
    free_handles: list[Any] = []
    shown = [m for m in widths if any(r["m"] == m for r in summary)]
    per_row = 4 if width == "double" else 2
    grid_rows = max(1, len(shown)) * (4 // per_row)
    row_inches = 2.0 if width == "double" else 1.45   # one column: two-line titles
    fig, grid = plt.subplots(grid_rows, per_row, squeeze=False, layout="constrained",
                             figsize=(inches, 0.8 + row_inches * grid_rows))
    axes = list(np.ravel(grid))
    letters = _letters()
    drawn = "band"
    bound_drawn = has_free_ratio = False
    theorem1, applicability = theorem1_applicability(summary)
    for i, m in enumerate(shown):
        row_axes = axes[4 * i: 4 * i + 4]
        rows = sorted((r for r in summary if r["m"] == m), key=lambda r: r["T"])
        mine = [r for r in records if r["m"] == m] if records is not None else None
        x = np.array([r["T"] for r in rows], dtype=float)
        for ax, key in zip(row_axes, FIGURE1_METRICS, strict=False):
            panel = f"{next(letters)} {_SHORT[key] if width == 'single' else _F1_PANELS[key][0]}, "\
                f"m = {m}"
            drawn, _ = _measured(ax, rows, key, "T", mine, "tab:blue", "o")
            fit = next((f for f in fits if f["m"] == m and f["panel"] == key), {})
            if math.isfinite(fit.get("slope", math.nan)):
                text = _slope_text(fit["slope"], fit.get("slope_ci95", math.nan),
                                   narrow=width == "double")
                # one column: the caption names the 95% CI (the title has no room for it)
                panel += "\n" + (text if width == "double" else text.replace(" (95% CI)", ""))
            if key == "min_train_loss":  # the bound beside R(theta_0), on one axis
                bound = np.array([r[f"{key}_theory"] for r in rows], dtype=float)
                on_scale = bound_on_scale(ax, bound)
                if on_scale:
                    ax.plot(x, bound, marker="s", linestyle=":", color=_BOUND_COLOR,
                            markersize=2.8)
                    bound_drawn = True
                free_handles = free_yardsticks(ax, rows, "T", f"{key}_theory" if on_scale
                                               else None) or free_handles
            ax.set_title(panel, loc="left", fontsize=_title_size(width))
            ax.set_ylabel(_F1_PANELS[key][1])
            x_axis(ax, x)
            value_axis(ax)
        ratio_ax = row_axes[3]
        ratio_ax.set_title(f"{next(letters)} ratio, m = {m}\n" + "\n" * (width == "double"),
                           loc="left", fontsize=_title_size(width))
        for key in FIGURE1_METRICS:
            marker, color = _RATIO_MARKERS[key]
            ratio_ax.plot(x, [r[f"{key}_gmean"] / r[f"{key}_theory"] for r in rows],
                          marker=marker, color=color, markersize=3)
        free_ratio = [r.get("initial_train_loss_gmean", math.nan) / r["min_train_loss_theory"]
                      for r in rows]
        if np.isfinite(free_ratio).any():
            ratio_ax.plot(x, free_ratio, marker="v", linestyle="-.", color=_INITIAL_COLOR,
                          markersize=3, markerfacecolor="none", linewidth=0.9)
            has_free_ratio = True
        ratio_ax.set_ylabel("measured / bound")
        x_axis(ratio_ax, x)
        value_axis(ratio_ax)
    for ax in axes:
        ax.set_xlabel("sequence length $T$")
    spread, spread_label = _spread_handle(drawn, "tab:blue")
    handles = [(Line2D([], [], color="tab:blue", marker="o"), "geometric mean over seeds"),
               (spread, spread_label),
               *([(Line2D([], [], color=_BOUND_COLOR, linestyle=":", marker="s",
                          markersize=2.8), f"bound {theorem1}")] if bound_drawn else []),
               *free_handles,
               *[(Line2D([], [], color=_RATIO_MARKERS[k][1], marker=_RATIO_MARKERS[k][0],
                         markersize=3), f"{_F1_PANELS[k][0]} / "
                  f"{theorem1 if k == 'min_train_loss' else _F1_PANELS[k][2]}")
                 for k in FIGURE1_METRICS],
               *([(Line2D([], [], color=_INITIAL_COLOR, linestyle="-.", marker="v",
                          markersize=3, markerfacecolor="none", linewidth=0.9),
                   r"$\hat{R}(\theta_0)$ / " + theorem1)] if has_free_ratio else [])]
    fig.legend(*zip(*handles, strict=True), loc="outside lower center",
               ncol=4 if width == "double" else 2, **_legend_size(width))
    _suptitle(fig, title, width)
    thin_tick_labels(fig)
    panel_axes = {ax.get_title(loc="left").split()[0]: ax for ax in axes if ax.has_data()}
    plain_title = title.replace(r"$\Omega_\rho$", "Ω_ρ")   # the caption is plain text
    return fig, TSWEEP_CAPTION.format(title=plain_title, stat=_STAT_WORDS[drawn],
                                      scales=axis_scales(panel_axes),
                                      applicability=applicability)


def plot_tsweep(summary: Sequence[Mapping[str, Any]], fits: Sequence[Mapping[str, Any]],
                records: Sequence[Mapping[str, Any]] | None, stem: Path, *,
                widths: Sequence[int], title: str, width: str = "double") -> list[Path]:
    """The T sweep: per width m (those of ``widths`` with summary rows) the three figure-1
    measurements against T, log–log — the geometric mean over seeds with its 95 % band on the
    log values (or the seeds themselves, under five, when ``records`` are given), the seeds' mean
    slope ± 95 % CI in the title; the min-training-loss panel with Theorem 1's bound and its free
    yardsticks, the measured R̂(θ_0) and Y² where on scale (:func:`free_yardsticks`) — and a
    fourth panel with each measurement over its bound (flat in T, decades above: one axis, no
    second y axis). Panel letters run on across the widths. ``double``: four panels per m in a
    row; ``single``: two by two. Writes ``stem``.png/.pdf and ``stem``.caption.txt."""
    import matplotlib.pyplot as plt

    with figure_style():
        fig, caption = tsweep_figure(summary, fits, records, widths=widths, title=title,
                                     width=width)
        paths = _save(fig, stem, caption)
        plt.close(fig)
    return paths


# --------------------------------------------------------------------------- from run parameters
# A run's figure from its parameters (config.json's, or the config dataclass as a dict): the one
# place each title is worded, so that ``boundcalc table --figures`` redraws from stored cells the
# figure the run itself wrote, without importing the experiments (torch).


def draw_figure1(summary: Sequence[Mapping[str, Any]], fits: Sequence[Mapping[str, Any]],
                 params: Mapping[str, Any], stem: Path,
                 records: Sequence[Mapping[str, Any]] | None = None,
                 width: str | None = None) -> list[Path]:
    """:func:`plot_figure1` of a figure-1 run with parameters ``params`` (``n``, ``d``, ``T``,
    ``steps``, ``seeds``, ``lin_align``); ``width`` None is figure 1's default (double)."""
    title = (f"teacher–student: n = {params['n']}, d = {params['d']}, T = {params['T']}, "
             f"K = {params['steps']}, {len(params['seeds'])} seeds")
    return plot_figure1(summary, fits, records, stem,
                        lin_align=params.get("lin_align", "feature"), title=title,
                        width=width or FIGURE1_WIDTH)


def draw_figure2(summary: Sequence[Mapping[str, Any]], params: Mapping[str, Any], stem: Path,
                 records: Sequence[Mapping[str, Any]] | None = None,
                 width: str | None = None) -> list[Path]:
    """:func:`plot_figure2` of a figure-2 run with parameters ``params`` (``m``, ``steps``,
    ``lr``, ``seeds``, ``lags``); ``width`` None is figure 2's default (single)."""
    title = (f"AR(L): m = {params['m']}, K = {params['steps']}, η = {params['lr']}, "
             f"{len(params['seeds'])} seeds")
    return plot_figure2(summary, records, stem, lags=params["lags"], title=title,
                        width=width or FIGURE2_WIDTH)


def draw_tsweep(summary: Sequence[Mapping[str, Any]], fits: Sequence[Mapping[str, Any]],
                params: Mapping[str, Any], stem: Path,
                records: Sequence[Mapping[str, Any]] | None = None,
                width: str | None = None) -> list[Path]:
    """:func:`plot_tsweep` of a T-sweep run with parameters ``params`` (``widths``, ``n``, ``d``,
    ``steps``, ``rho``, ``seeds``); ``width`` None is the T sweep's default (double)."""
    rho, nu = _radii(params["rho"]), _radii(params.get("nu", params["rho"]))
    radii = f"ρ = ν = {rho}" if rho == nu else f"ρ = {rho}, ν = {nu}"
    title = (f"Theorem 1's setting (ProjGD on $\\Omega_\\rho$) against T: n = {params['n']}, "
             f"d = {params['d']}, "
             f"K = {params['steps']}, {radii}, "
             f"{len(params['seeds'])} seeds")
    return plot_tsweep(summary, fits, records, stem, widths=params["widths"], title=title,
                       width=width or TSWEEP_WIDTH)


def _radii(values: Sequence[float]) -> str:
    """ρ or ν as a title writes it: one number when the three components agree.

    Example:
        >>> _radii([3.0, 3.0, 3.0]), _radii([2.0, 3.0, 3.0])
        ('3', '(2, 3, 3)')
    """
    parts = [f"{float(v):g}" for v in values]
    return parts[0] if len(set(parts)) == 1 else f"({', '.join(parts)})"


def draw_figure2_summary(summary: Sequence[Mapping[str, Any]], fits: Sequence[Mapping[str, Any]],
                         params: Mapping[str, Any], stem: Path,
                         records: Sequence[Mapping[str, Any]] | None = None,
                         width: str | None = None) -> list[Path]:
    """:func:`draw_figure2` with the arguments every registry row's ``figure`` takes (figure 2
    fits no slopes: ``fits`` is not drawn)."""
    return draw_figure2(summary, params, stem, records, width)
