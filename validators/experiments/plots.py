"""The figures of the experiments, drawn the way a paper prints them.

Conventions every figure of :mod:`validators.experiments` follows (:func:`figure_style` sets them
for one figure, never globally):

* **width** — ``single`` (3.25 in, one column) or ``double`` (6.75 in, both columns), drawn at that
  size so that the fonts (8 pt text, 7 pt ticks and legend) are the sizes printed;
* **fonts** — TrueType (Type 42) in the PDF, never Type 3 (which many venues reject); true minus
  signs; symbols through mathtext (``$\\varepsilon_{\\mathrm{lin}}$``, ``$\\min_k \\hat{R}$``);
* **statistics on log axes** — the geometric mean over seeds and its 95 % t-interval computed on
  the log values (:func:`boundcalc.stats.geometric_mean_ci95`, the summaries' ``_gmean`` /
  ``_gci_low`` / ``_gci_high``), so the band is symmetric on the axis and matches the log–log fit;
  with fewer than :data:`MIN_SEEDS_FOR_BAND` seeds the individual seeds are drawn instead of a
  band (a t-interval from 2–4 values spans decades and reads as data);
* **legends outside the data** — one legend for the whole figure, below the panels; every panel
  has its y-axis label and a panel letter.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from boundcalc.runs import FIGURE1_METRICS

__all__ = ["DEFAULT_WIDTHS", "FIGURE_WIDTHS", "MIN_SEEDS_FOR_BAND", "TSWEEP_PANEL_LABELS",
           "check_width", "draw_figure1", "draw_figure2", "draw_tsweep", "figure_style",
           "free_yardsticks", "plot_figure1", "plot_figure2", "plot_tsweep", "signed"]

#: ``--figure-width``: inches of a one-column and of a two-column figure.
FIGURE_WIDTHS = {"single": 3.25, "double": 6.75}
#: Each experiment's default ``--figure-width``: figure 1 four panels in a row, figure 2 two
#: panels stacked, the T sweep three panels per width.
DEFAULT_WIDTHS = {"figure1": "double", "figure2": "single", "tsweep": "double"}
#: Fewer seeds than this: the seeds are drawn one by one instead of a confidence band.
MIN_SEEDS_FOR_BAND = 5

_SEED_ALPHA = 0.45
_FIT_COLOR, _BOUND_COLOR, _ALT_COLOR = "0.45", "tab:red", "tab:green"
_INITIAL_COLOR, _Y2_COLOR = "black", "0.35"


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


def _measured(ax, rows: Sequence[Mapping[str, Any]], key: str, x_key: str,
              records: Sequence[Mapping[str, Any]] | None, color: str, marker: str,
              where: Mapping[str, Any] | None = None) -> str:
    """Geometric mean over seeds (line and markers), and either its 95 % band on the log values
    or the individual seeds; returns ``"band"`` or ``"seeds"`` (what was drawn)."""
    x = np.array([r[x_key] for r in rows], dtype=float)
    g = np.array([r[f"{key}_gmean"] for r in rows], dtype=float)
    ax.plot(x, g, marker=marker, color=color, zorder=3)
    seeds = [int(r.get("seeds", 0)) for r in rows]
    if records is not None and min(seeds, default=0) < MIN_SEEDS_FOR_BAND:
        for xi in x:
            values = _seed_values(records, key, x_key, xi, where)
            ax.plot([xi] * len(values), values, linestyle="none", marker=marker,
                    markerfacecolor="none", markeredgecolor=color, markeredgewidth=0.6,
                    markersize=3.2, alpha=_SEED_ALPHA, zorder=2)
        return "seeds"
    low = np.array([r[f"{key}_gci_low"] for r in rows], dtype=float)
    high = np.array([r[f"{key}_gci_high"] for r in rows], dtype=float)
    ok = np.isfinite(low) & np.isfinite(high)
    ax.fill_between(x[ok], low[ok], high[ok], color=color, alpha=0.2, linewidth=0, zorder=1)
    return "band"


def free_yardsticks(ax, rows: Sequence[Mapping[str, Any]], x_key: str,
                    bound_key: str = "min_train_loss_theory") -> list[tuple[Any, str]]:
    """Draw panel (c)'s free yardsticks on ``ax``: the measured training loss at initialization
    R̂(θ_0) (geometric mean over seeds, ``initial_train_loss_gmean``), which min_k R̂(θ_k) never
    exceeds, and Y² (``initial_loss_bound``) where it lies within the span of what the panel
    already shows (the bound and the measurements); a bound above them says nothing. Returns the
    legend entries of what was drawn."""
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
    shown = np.array([r.get(bound_key, math.nan) for r in rows] + list(initial), dtype=float)
    shown = shown[np.isfinite(shown) & (shown > 0)]
    if np.isfinite(y2).all() and shown.size and shown.min() <= y2.min() and \
            y2.max() <= shown.max():
        ax.plot(x, y2, linestyle=(0, (5, 2, 1, 2)), color=_Y2_COLOR, linewidth=0.9, zorder=2)
        handles.append((Line2D([], [], color=_Y2_COLOR, linestyle=(0, (5, 2, 1, 2))),
                        r"$Y^2$ (free bound)"))
    return handles


def _spread_handle(drawn: str, color: str):
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    if drawn == "band":
        return Patch(facecolor=color, alpha=0.2, linewidth=0), "95% CI"
    return (Line2D([], [], linestyle="none", marker="o", markerfacecolor="none",
                   markeredgecolor=color, markeredgewidth=0.6, alpha=_SEED_ALPHA),
            "individual seeds")


def _log_axes(ax, x_ticks: Sequence[float] | None = None, base: int = 10) -> None:
    from matplotlib.ticker import FixedLocator, NullLocator, ScalarFormatter

    ax.set_yscale("log")
    if x_ticks is not None:
        if base != 10:
            ax.set_xscale("log", base=base)
        ax.xaxis.set_major_locator(FixedLocator(list(x_ticks)))
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_locator(NullLocator())
    ax.grid(alpha=0.3, which="major")
    ax.tick_params(which="both", direction="out")


def _save(fig, stem: Path) -> list[Path]:
    paths = [stem.with_suffix(".png"), stem.with_suffix(".pdf")]
    for path in paths:
        fig.savefig(path)
    return paths


# --------------------------------------------------------------------------- figure 1

_F1_PANELS = {
    "lin_error": ("(a) linearization", r"mean$_j\,|f - f_{\mathrm{lin}}|$",
                  r"bound $\varepsilon_{\mathrm{lin}}$", r"(a) / $\varepsilon_{\mathrm{lin}}$"),
    "app_error": ("(b) approximation", r"max$_j\,|f_{\mathrm{lin}}(\bar{\theta}) - y|$",
                  r"bound $\varepsilon_{\mathrm{app}}$", r"(b) / $\varepsilon_{\mathrm{app}}$"),
    "min_train_loss": ("(c) training", r"min$_k\,\hat{R}(\theta_k)$",
                       "bound Theorem 1", "(c) / Theorem 1"),
}
_RATIO_MARKERS = {"lin_error": ("o", "black"), "app_error": ("s", "0.35"),
                  "min_train_loss": ("D", "0.6")}


def plot_figure1(summary: Sequence[Mapping[str, Any]], fits: Sequence[Mapping[str, Any]],
                 records: Sequence[Mapping[str, Any]] | None, stem: Path, *, lin_align: str,
                 title: str, width: str = "double") -> list[Path]:
    """Figure 1: panels (a)–(c) measured against m on log–log axes (geometric mean with its
    band or the seeds, the log–log fit, the bound), panel (c) also the free yardsticks of its
    bound (:func:`free_yardsticks`: the measured R̂(θ_0) and Y² where on scale), panel (d) each
    measurement over its bound — the bounds sit 2–11 decades above the measurements, so (d)
    shows how far on an axis of its own — and Theorem 1's bound over the measured R̂(θ_0), above
    1 wherever the bound is vacuous. ``double``: four panels in a row; ``single``: two by two.
    Writes ``stem``.png/.pdf."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    inches = check_width(width)
    metrics = list(_F1_PANELS)
    by_panel = {f["panel"]: f for f in fits}
    rows = sorted(summary, key=lambda r: r["m"])
    x = np.array([r["m"] for r in rows], dtype=float)
    alt_align = "output" if lin_align == "feature" else "feature"
    with figure_style():
        shape, size = ((1, 4), (inches, 2.45)) if width == "double" else ((2, 2), (inches, 3.9))
        fig, grid = plt.subplots(*shape, figsize=size, layout="constrained")
        axes = list(np.ravel(grid))
        drawn = "band"
        free_handles: list[tuple[Any, str]] = []
        for ax, key in zip(axes, metrics, strict=False):
            name, ylabel, bound_label, _ = _F1_PANELS[key]
            drawn = _measured(ax, rows, key, "m", records, "tab:blue", "o")
            fit = by_panel.get(key, {})
            if math.isfinite(fit.get("slope", math.nan)):
                ax.plot(x, np.exp(fit["intercept"]) * x ** fit["slope"], "--", color=_FIT_COLOR,
                        linewidth=0.9, zorder=2)
                ci = fit.get("slope_ci95", math.nan)
                slope = signed(fit["slope"]) + (f" ± {ci:.2f}" if math.isfinite(ci) else "")
                name += f"\nslope {slope}"
            ax.plot(x, [r[f"{key}_theory"] for r in rows], marker="s", linestyle=":",
                    color=_BOUND_COLOR, markersize=2.8)
            if key == "min_train_loss":
                free_handles = free_yardsticks(ax, rows, "m")
            if key == "lin_error" and all("lin_error_alt_gmean" in r for r in rows):
                ax.plot(x, [r["lin_error_alt_gmean"] for r in rows], marker="^",
                        color=_ALT_COLOR, alpha=0.8, markersize=3)
            ax.set_title(name, loc="left")
            ax.set_ylabel(ylabel)
            _log_axes(ax, x, base=2)
        ratio_ax = axes[3]
        for key in metrics:
            marker, color = _RATIO_MARKERS[key]
            ratio = [r[f"{key}_gmean"] / r[f"{key}_theory"] for r in rows]
            ratio_ax.plot(x, ratio, marker=marker, color=color, markersize=3)
        vacuity = [r["min_train_loss_theory"] / r.get("initial_train_loss_gmean", math.nan)
                   for r in rows]
        if np.isfinite(vacuity).any():
            ratio_ax.plot(x, vacuity, marker="x", linestyle="-.", color=_BOUND_COLOR,
                          markersize=3.5)
            ratio_ax.axhline(1.0, color="0.3", linewidth=0.6, linestyle=":")
        ratio_ax.set_title("(d) ratio\n", loc="left")
        ratio_ax.set_ylabel("measured / bound")
        _log_axes(ratio_ax, x, base=2)
        for ax in axes:
            ax.set_xlabel("width $m$")
        spread, spread_label = _spread_handle(drawn, "tab:blue")
        handles = [
            (Line2D([], [], color="tab:blue", marker="o"), "geometric mean"),
            (spread, spread_label),
            (Line2D([], [], color=_FIT_COLOR, linestyle="--"), "log–log fit"),
            (Line2D([], [], color=_BOUND_COLOR, linestyle=":", marker="s", markersize=2.8),
             "bound"),
            (Line2D([], [], color=_ALT_COLOR, marker="^", markersize=3),
             f"(a) {alt_align}-aligned"),
        ] + free_handles + [(Line2D([], [], color=_RATIO_MARKERS[k][1],
                                    marker=_RATIO_MARKERS[k][0], markersize=3), _F1_PANELS[k][3])
                             for k in metrics]
        if np.isfinite(vacuity).any():
            handles.append((Line2D([], [], color=_BOUND_COLOR, linestyle="-.", marker="x",
                                   markersize=3.5),
                            r"Theorem 1 / $\hat{R}(\theta_0)$ (> 1: vacuous)"))
        fig.legend(*zip(*handles, strict=True), loc="outside lower center",
                   ncol=4 if width == "double" else 2)
        fig.suptitle(title)
        paths = _save(fig, stem)
        plt.close(fig)
    return paths


# --------------------------------------------------------------------------- figure 2

_F2_MODELS = {"transformer": ("tab:blue", "o", r"Transformer ($\partial f / \partial W$)"),
              "indrnn": ("tab:orange", "s", r"IndRNN ($\partial f / \partial u$)")}


def plot_figure2(summary: Sequence[Mapping[str, Any]], records: Sequence[Mapping[str, Any]] | None,
                 stem: Path, *, lags: Sequence[int], title: str, width: str = "single"
                 ) -> list[Path]:
    """Figure 2: (a) max Jacobian norm and (b) min validation loss against the lag L, per model
    the geometric mean over seeds with its band (or the seeds). ``single``: stacked with a shared
    x axis; ``double``: side by side. Writes ``stem``.png/.pdf."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    inches = check_width(width)
    panels = (("max_jacobian", "(a) Jacobian", r"max$_k\, J(\theta_k)$"),
              ("min_val_loss", "(b) validation", "min validation loss"))
    with figure_style():
        if width == "double":
            fig, axes = plt.subplots(1, 2, figsize=(inches, 2.4), layout="constrained")
        else:
            fig, axes = plt.subplots(2, 1, sharex=True, figsize=(inches, 3.6),
                                     layout="constrained")
        drawn = "band"
        for ax, (key, name, ylabel) in zip(axes, panels, strict=True):
            for model, (color, marker, _) in _F2_MODELS.items():
                rows = sorted((r for r in summary if r["model"] == model), key=lambda r: r["L"])
                if rows:
                    drawn = _measured(ax, rows, key, "L", records, color, marker,
                                      where={"model": model})
            ax.set_title(name, loc="left")
            ax.set_ylabel(ylabel)
            _log_axes(ax)
            ax.set_xticks(list(lags))
            if width == "double" or ax is axes[-1]:
                ax.set_xlabel("lag $L$ ($T = L + 1$)")
        handles = [(Line2D([], [], color=c, marker=mk), label)
                   for c, mk, label in _F2_MODELS.values()]
        handles.append(_spread_handle(drawn, "0.4"))
        fig.legend(*zip(*handles, strict=True), loc="outside lower center",
                   ncol=3 if width == "double" else 2)
        fig.suptitle(title)
        paths = _save(fig, stem)
        plt.close(fig)
    return paths


# --------------------------------------------------------------------------- T sweep

#: Panel titles of the T sweep, one per figure-1 metric.
TSWEEP_PANEL_LABELS = {"lin_error": "(a) linearization error",
                       "app_error": "(b) approximation error",
                       "min_train_loss": "(c) min training loss"}


def plot_tsweep(summary: Sequence[Mapping[str, Any]], fits: Sequence[Mapping[str, Any]],
                records: Sequence[Mapping[str, Any]] | None, stem: Path, *,
                widths: Sequence[int], title: str, width: str = "double") -> list[Path]:
    """The T sweep: one row of three panels per width m (those of ``widths`` with summary rows)
    against T, log–log — the geometric mean over seeds with its 95 % band on the log values (or
    the seeds themselves, under five, when ``records`` are given), the line with the seeds' mean
    slope (± CI in the title), and the bound — flat, decades above — on a right-hand axis of its
    own in panels (a), (b); panel (c) draws Theorem 1's bound on the measurements' own axis beside
    its free yardsticks, the measured R̂(θ_0) and Y² where on scale (:func:`free_yardsticks`), so
    that the bound is seen above the loss at initialization. Writes ``stem``.png/.pdf."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    inches = check_width(width)
    free_handles: list[Any] = []
    shown = [m for m in widths if any(r["m"] == m for r in summary)]
    with figure_style():
        fig, grid = plt.subplots(max(1, len(shown)), 3, squeeze=False, layout="constrained",
                                 figsize=(inches, 0.6 + 1.9 * max(1, len(shown))))
        drawn = "band"
        for row_axes, m in zip(grid, shown, strict=False):
            rows = sorted((r for r in summary if r["m"] == m), key=lambda r: r["T"])
            mine = [r for r in records if r["m"] == m] if records is not None else None
            x = np.array([r["T"] for r in rows], dtype=float)
            for ax, key in zip(row_axes, FIGURE1_METRICS, strict=True):
                drawn = _measured(ax, rows, key, "T", mine, "tab:blue", "o")
                fit = next(f for f in fits if f["m"] == m and f["panel"] == key)
                panel = f"{TSWEEP_PANEL_LABELS[key]}, m = {m}"
                if np.isfinite(fit["slope"]):
                    logs = np.log([r[f"{key}_gmean"] for r in rows])
                    level = np.nanmean(logs) - fit["slope"] * np.log(x).mean()
                    ax.plot(x, np.exp(level) * x ** fit["slope"], "--", color=_FIT_COLOR,
                            linewidth=0.9, zorder=2)
                    ci = fit["slope_ci95"]
                    panel += f"\nslope in log T {signed(fit['slope'], 3)}" + (
                        f" ± {ci:.3f}" if np.isfinite(ci) else "")
                bound = np.array([r[f"{key}_theory"] for r in rows], dtype=float)
                if key == "min_train_loss":  # the bound beside R(theta_0), on one axis
                    ax.plot(x, bound, marker="s", linestyle=":", color=_BOUND_COLOR,
                            markersize=2.8)
                    free_handles = free_yardsticks(ax, rows, "T") or free_handles
                    ax.tick_params(axis="y", which="both", right=True, labelright=True)
                else:
                    right = ax.twinx()
                    right.plot(x, bound, marker="s", linestyle=":", color=_BOUND_COLOR,
                               markersize=2.8)
                    right.set_yscale("log")
                    right.set_ylim(np.nanmin(bound) / 3, np.nanmax(bound) * 3)
                    right.tick_params(axis="y", colors=_BOUND_COLOR, which="both")
                ax.set_title(panel, loc="left")
                _log_axes(ax, x, base=2)
                ax.set_xlabel("sequence length $T$")
        spread, spread_label = _spread_handle(drawn, "tab:blue")
        handles = [(Line2D([], [], color="tab:blue", marker="o"), "geometric mean over seeds"),
                   (spread, spread_label),
                   (Line2D([], [], color=_FIT_COLOR, linestyle="--"), "mean per-seed slope"),
                   (Line2D([], [], color=_BOUND_COLOR, linestyle=":", marker="s",
                           markersize=2.8), "bound (flat in T; right axis in (a), (b))"),
                   *free_handles]
        fig.legend(*zip(*handles, strict=True), loc="outside lower center", ncol=3)
        fig.suptitle(title)
        paths = _save(fig, stem)
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
                        width=width or DEFAULT_WIDTHS["figure1"])


def draw_figure2(summary: Sequence[Mapping[str, Any]], params: Mapping[str, Any], stem: Path,
                 records: Sequence[Mapping[str, Any]] | None = None,
                 width: str | None = None) -> list[Path]:
    """:func:`plot_figure2` of a figure-2 run with parameters ``params`` (``m``, ``steps``,
    ``lr``, ``seeds``, ``lags``); ``width`` None is figure 2's default (single)."""
    title = (f"AR(L): m = {params['m']}, K = {params['steps']}, η = {params['lr']}, "
             f"{len(params['seeds'])} seeds")
    return plot_figure2(summary, records, stem, lags=params["lags"], title=title,
                        width=width or DEFAULT_WIDTHS["figure2"])


def draw_tsweep(summary: Sequence[Mapping[str, Any]], fits: Sequence[Mapping[str, Any]],
                params: Mapping[str, Any], stem: Path,
                records: Sequence[Mapping[str, Any]] | None = None,
                width: str | None = None) -> list[Path]:
    """:func:`plot_tsweep` of a T-sweep run with parameters ``params`` (``widths``, ``n``, ``d``,
    ``steps``, ``rho``, ``seeds``); ``width`` None is the T sweep's default (double)."""
    title = (f"Theorem 1's setting (ProjGD on Ω_ρ) against T: n = {params['n']}, "
             f"d = {params['d']}, "
             f"K = {params['steps']}, ρ = ν = {params['rho'][0]:g}, "
             f"{len(params['seeds'])} seeds")
    return plot_tsweep(summary, fits, records, stem, widths=params["widths"], title=title,
                       width=width or DEFAULT_WIDTHS["tsweep"])
