"""Tables of stored experiment runs, as CSV, Markdown or LaTeX: ``boundcalc table``.

The rows are the summaries of :mod:`boundcalc.runs.summaries` — per figure1 width, figure2 (model,
L) or table1 (d_m, N) cell, mean ± 95 % CI next to the bound, and figure1's slopes — of the runs
that :func:`boundcalc.runs.stored.load_run` read back (re-exported here with :class:`StoredRun`).
:func:`build_tables` makes one combined table per kind (a ``run`` column says which run a row
comes from); :func:`render_tables` prints them as CSV (exact floats, the run's own column names),
Markdown or LaTeX (booktabs; both rounded, ``mean ± CI``). The figures of a run are redrawn by
:func:`boundcalc.validators.experiments.figures.regenerate_figures` (matplotlib, not torch).

Example:
    >>> from pathlib import Path
    >>> cell = {"d_m": 16, "N": 64, "lowest_test_loss": 0.25, "theorem5_bound": 3.5}
    >>> from pathlib import Path
    >>> run = StoredRun("run-a", Path("."), "table1", {}, [cell])
    >>> print(render_tables(build_tables([run]), "markdown").splitlines()[2])
    | d_m | N | lowest test loss | epoch | paper's lowest test loss | paper's epoch | \
bound Theorem 5 | under bound | Lemma 4 conditions |
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from boundcalc.experiments.experiment_registry import experiment, load
from boundcalc.inputs.table_flags import STATISTICS, TABLE_FORMATS
from boundcalc.render.frame_text import render_frame
from boundcalc.render.latex import latex_text
from boundcalc.render.rounding import (
    column_exponent,
    column_mean_ci_text,
    column_number_text,
    interval_text,
    wide_interval_text,
)
from boundcalc.runs.stored import StoredRun, load_run
from boundcalc.runs.summaries import not_applicable

__all__ = ["MIN_SEEDS_FOR_BAND", "Column", "StoredRun", "Table", "build_tables",
           "figure1_tables", "figure2_tables", "load_run", "render_tables", "table1_tables",
           "tables_from_summaries", "tsweep_tables"]

#: How the titles name each statistic.
_STATISTIC_WORDS = {"geometric": "geometric mean [95% CI on the log values]",
                    "arithmetic": "mean ± 95% CI"}


@dataclass(frozen=True)
class Column:
    """One column of a table: ``key`` (a plain value) or ``key`` ± ``ci`` (mean and CI).

    ``header`` names it in Markdown; ``latex`` is its head in LaTeX (a symbol where there is one)
    and ``group`` the grouped head spanning it and its neighbours of the same group (LaTeX only);
    ``csv_only`` columns are left out of Markdown and LaTeX (CSV keeps every number), and
    ``in_latex`` False leaves one out of LaTeX alone. ``note``: the key of a row's text that
    follows the value in Markdown and LaTeX when it says ``not applicable: …`` (a bound whose
    conditions fail, :func:`boundcalc.runs.summaries.not_applicable`).
    """

    key: str
    header: str
    latex: str
    ci: str | None = None
    csv_only: bool = False
    group: str | None = None
    in_latex: bool = True
    note: str | None = None


@dataclass
class Table:
    """A titled table: ``columns`` and one dict per row (keys of the columns, plus ``run``).

    ``footers`` (LaTeX only): per run label, one closing row below that run's rows — its label
    and ``{column key: (value, ci)}`` (figure 1's fitted slopes under the columns they fit).
    ``latex_view``: another table LaTeX draws instead of this one (figure 2, one row per lag with
    the two models side by side); ``in_latex`` False leaves the table out of LaTeX;
    ``draws_seeds``: its figure draws every seed of a row with fewer than
    :data:`MIN_SEEDS_FOR_BAND` (its title then says so).
    """

    kind: str
    name: str
    title: str
    columns: list[Column]
    rows: list[dict[str, Any]]
    runs: int = 1
    footers: dict[str, tuple[str, dict[str, tuple[Any, Any]]]] = field(default_factory=dict)
    latex_view: Table | None = None
    in_latex: bool = True
    draws_seeds: bool = False


def _c(key: str, header: str, latex: str | None = None, **kw: Any) -> Column:
    return Column(key, header, latex if latex is not None else header, **kw)


_LIN, _APP, _LOSS = "linearization error", "approximation error", "min training loss"
_FIGURE1_COLUMNS = [
    _c("m", "m", "$m$"), _c("seeds", "seeds", in_latex=False),
    _c("lin_error_mean", "linearization error", "measured", ci="lin_error_ci95", group=_LIN),
    _c("lin_error_theory", "bound ε_lin", r"$\varepsilon_{\mathrm{lin}}$", group=_LIN),
    _c("app_error_mean", "approximation error", "measured", ci="app_error_ci95", group=_APP),
    _c("app_error_theory", "bound ε_app", r"$\varepsilon_{\mathrm{app}}$", group=_APP),
    _c("min_train_loss_mean", "min training loss", "measured", ci="min_train_loss_ci95",
       group=_LOSS),
    _c("initial_train_loss_mean", "training loss at init R̂(θ₀)", r"$\hat{R}(\theta_0)$",
       ci="initial_train_loss_ci95", group=_LOSS),
    _c("min_train_loss_theory", "bound Theorem 1", "Theorem 1", group=_LOSS,
       note="min_train_loss_conditions"),
    _c("min_train_loss_verdict", "Theorem 1 verdict", csv_only=True),
    _c("min_train_loss_conditions", "Theorem 1 conditions", csv_only=True),
    _c("min_train_loss_free_bound", "free yardstick min(B², Y², R̂(θ₀))", csv_only=True),
    _c("min_train_loss_free_bound_key", "free yardstick is", csv_only=True),
    _c("initial_loss_bound", "Y²", csv_only=True),
    _c("trivial_bound_B2", "B²", csv_only=True),
    _c("lin_error_alt_mean", "linearization error, other alignment", "measured",
       ci="lin_error_alt_ci95", group="other alignment"),
    _c("lin_error_alt_theory", "bound ε_lin (other alignment)", csv_only=True),
    *[_c(f"{k}_{s}", f"{k} {s}", csv_only=True)
      for k in ("lin_error", "app_error", "min_train_loss", "lin_error_alt",
                "initial_train_loss")
      for s in ("gmean", "gci_low", "gci_high")],
]
_SLOPE_COLUMNS = [
    _c("panel", "panel"), _c("slope", "slope in m", "slope in $m$", ci="slope_ci95"),
    _c("theory_slope", "bound's slope"), _c("intercept", "intercept", csv_only=True),
    _c("widths", "widths"),
]
_FIGURE2_COLUMNS = [
    _c("model", "model"), _c("L", "L", "$L$"), _c("T", "T", "$T$"), _c("seeds", "seeds"),
    _c("diverged", "diverged"), _c("jacobian_block", "block"),
    _c("max_jacobian_mean", "max Jacobian norm", ci="max_jacobian_ci95"),
    _c("max_jacobian_min", "max Jacobian min", csv_only=True),
    _c("max_jacobian_max", "max Jacobian max", csv_only=True),
    _c("min_val_loss_mean", "min validation loss", ci="min_val_loss_ci95"),
    _c("max_loss_gradient_mean", "max loss gradient", ci="max_loss_gradient_ci95"),
    _c("memory_floats_per_sample", "memory / sample", "memory / sample (floats)"),
    *[_c(f"{k}_{s}", f"{k} {s}", csv_only=True)
      for k in ("max_jacobian", "min_val_loss", "max_loss_gradient")
      for s in ("gmean", "gci_low", "gci_high")],
]
_JAC, _VAL, _MEM = "max Jacobian norm", "min validation loss", "memory / sample (floats)"
#: figure 2 in LaTeX: one row per lag, the two models side by side under grouped heads
_FIGURE2_LATEX_COLUMNS = [
    _c("L", "L", "$L$"), _c("T", "T", "$T$"),
    _c("transformer_max_jacobian_mean", "", "Transformer ($W$)",
       ci="transformer_max_jacobian_ci95", group=_JAC),
    _c("indrnn_max_jacobian_mean", "", "IndRNN ($u$)", ci="indrnn_max_jacobian_ci95",
       group=_JAC),
    _c("transformer_min_val_loss_mean", "", "Transformer", ci="transformer_min_val_loss_ci95",
       group=_VAL),
    _c("indrnn_min_val_loss_mean", "", "IndRNN", ci="indrnn_min_val_loss_ci95", group=_VAL),
    _c("transformer_memory_floats_per_sample", "", "Transformer ($Td$)", group=_MEM),
    _c("indrnn_memory_floats_per_sample", "", "IndRNN ($m$)", group=_MEM),
]
_TABLE1_COLUMNS = [
    _c("d_m", "d_m", "$d_m$"), _c("N", "N", "$N$"),
    _c("lowest_test_loss", "lowest test loss", group="this run"),
    _c("lowest_test_epoch", "epoch", group="this run"),
    _c("paper_lowest_test_loss", "paper's lowest test loss", "lowest test loss", group="paper"),
    _c("paper_epoch", "paper's epoch", "epoch", group="paper"),
    _c("theorem5_bound", "bound Theorem 5", "Theorem 5 bound"),
    _c("theorem5_bound_printed", "Theorem 5 printed", csv_only=True),
    _c("under_bound", "under bound"),
    _c("lowest_test_under_bound", "lowest test loss <= bound", csv_only=True),
    _c("zero_predictor_test_loss", "zero predictor's test loss", csv_only=True),
    _c("initial_test_loss", "test loss at init", csv_only=True),
    _c("theorem5_free_bound", "free yardstick", csv_only=True),
    _c("theorem5_free_bound_key", "free yardstick is", csv_only=True),
    _c("theorem5_verdict", "verdict", csv_only=True),
    _c("conditions_hold_count", "Lemma 4 conditions", "conditions"),
    _c("all_conditions_hold", "all hold", csv_only=True),
    _c("conditions_holding", "holding", csv_only=True),
    _c("conditions_failing", "failing", csv_only=True),
    _c("alpha", "alpha", csv_only=True), _c("Phi0", "Phi0", csv_only=True),
]

_TSWEEP_COLUMNS = [
    _c("m", "m", "$m$"), _c("T", "T", "$T$"), _c("seeds", "seeds", in_latex=False),
    *[c for c in _FIGURE1_COLUMNS if c.key in {f"{k}_{s}" for s in ("mean", "theory") for k in
                                                ("lin_error", "app_error", "min_train_loss",
                                                 "initial_train_loss")}],
    _c("rel_min_train_loss_mean", "min training loss / label rms²",
       r"$\min_k \hat{R} / \overline{y^2}$", ci="rel_min_train_loss_ci95"),
    _c("min_train_loss_conditions", "Theorem 1 conditions", csv_only=True),
]
_TSWEEP_SLOPE_COLUMNS = [
    _c("panel", "panel"), _c("m", "m", "$m$"),
    _c("slope", "slope in log T", r"slope in $\log T$", ci="slope_ci95"),
    _c("seeds", "seeds"),
    _c("slope_of_means", "slope of the means", ci="slope_of_means_ci95"),
    _c("theory_slope", "bound's slope"),
    _c("change", "factor over the T range", r"factor over $T$"),
    _c("Ts", "number of T values", r"number of $T$"),
]

_FIGURE1_TITLE = ("Figure 1 (Section 6.1): {statistic} over seeds per width m; bound = boundcalc "
                  "theory; Theorem 1's bound says something only below R̂(θ₀), the measured "
                  "training loss at init")
_FIGURE1_SLOPES_TITLE = ("Figure 1: log-log slope in m of the geometric means (± 95% CI) and "
                         "of the bound")
_FIGURE2_TITLE = ("Figure 2 (Section 6.2): {statistic} over seeds per (model, L); no bound is "
                  "stored for this experiment; the labels are standardized, so predicting 0 has "
                  "a validation loss of about 1 (the yardstick of the min validation loss)")
_TABLE1_TITLE = ("Table 1 (paper 003): lowest test loss per (d_m, N), one run per cell (no CI), "
                 "next to the Theorem 5 bound; under bound: with its verdict against the free "
                 "yardstick, the held-out loss of the zero predictor (log 2) and of the model at "
                 "init")
_TSWEEP_TITLE = ("T sweep (Theorem 1's setting: ProjGD with radii ρ = ν): {statistic} over "
                 "seeds per (m, T); bound = boundcalc theory (flat in T); Theorem 1's bound says "
                 "something only below R̂(θ₀), the measured training loss at init")
_TSWEEP_SLOPES_TITLE = ("T sweep: slope of log(metric) in log T fitted per seed, mean ± 95% "
                        "t-interval over seeds; the slope of the means and of the bound beside "
                        "it")


def build_tables(runs: Sequence[StoredRun]) -> list[Table]:
    """One combined table per kind (in the order the kinds first appear; a ``run`` column says
    which run each row comes from), and for figure1 a second one with the fitted slopes: each
    run summarized, its slopes fitted and the kind's tables made by its registry row
    (:mod:`boundcalc.experiments.experiment_registry`).

    Example:
        >>> from pathlib import Path
        >>> run = StoredRun("r", Path("."), "table1", {}, [])
        >>> [(t.name, len(t.rows)) for t in build_tables([run])]
        [('table1', 0)]
    """
    kinds = list(dict.fromkeys(r.kind for r in runs))
    tables = []
    for kind in kinds:
        row = experiment(kind)
        parts = []
        for run in (r for r in runs if r.kind == kind):
            summary = load(row.summarize)(run)
            fits = load(row.slopes)(run, summary) if row.slopes is not None else []
            parts.append((run.label, summary, fits))
        tables += tables_from_summaries(kind, parts)
    return tables


Parts = Sequence[tuple[str, Sequence[Mapping[str, Any]], Sequence[Mapping[str, Any]]]]


def tables_from_summaries(kind: str, parts: Parts) -> list[Table]:
    """The tables of one kind from ``(run label, summary rows, slope rows)`` per run (its registry
    row's ``tables``): what :func:`build_tables` makes of stored runs, and what ``reproduce``
    renders into its ``figure1_table.tex`` / ``figure2_table.tex`` from the summary it has just
    written (so both are one implementation).

    Example:
        >>> rows = [{"d_m": 16, "N": 64, "lowest_test_loss": 0.25}]
        >>> [t.name for t in tables_from_summaries("table1", [("r", rows, [])])]
        ['table1']
    """
    return list(load(experiment(kind).tables)(parts))


def _rows(parts: Parts) -> list[dict[str, Any]]:
    return [{"run": label, **s} for label, summary, _ in parts for s in summary]


def _fits(parts: Parts) -> list[dict[str, Any]]:
    return [{"run": label, **f} for label, _, fits in parts for f in fits]


def table1_tables(parts: Parts) -> list[Table]:
    """Table 1's table: one row per (run, d_m, N).

    Example:
        >>> [len(t.rows) for t in table1_tables([("r", [{"d_m": 16, "N": 64}], [])])]
        [1]
    """
    return [Table("table1", "table1", _TABLE1_TITLE, _TABLE1_COLUMNS, _rows(parts),
                  len(parts))]


def figure2_tables(parts: Parts) -> list[Table]:
    """Figure 2's table: one row per (run, model, L); LaTeX draws both models side by side per
    L.

    Example:
        >>> rows = [{"model": m, "L": 4, "T": 5} for m in ("transformer", "indrnn")]
        >>> table = figure2_tables([("r", rows, [])])[0]
        >>> len(table.rows), len(table.latex_view.rows)
        (2, 1)
    """
    rows = _rows(parts)
    table = Table("figure2", "figure2", _FIGURE2_TITLE, _FIGURE2_COLUMNS, rows, len(parts),
                  draws_seeds=True)
    table.latex_view = Table("figure2", "figure2", _FIGURE2_TITLE, _FIGURE2_LATEX_COLUMNS,
                             _figure2_by_lag(rows), len(parts))
    return [table]


def tsweep_tables(parts: Parts) -> list[Table]:
    """The T sweep's tables: one row per (run, m, T), then the slopes in log T.

    Example:
        >>> [t.name for t in tsweep_tables([("r", [], [])])]
        ['tsweep', 'tsweep-slopes']
    """
    return [Table("tsweep", "tsweep", _TSWEEP_TITLE, _TSWEEP_COLUMNS, _rows(parts),
                  len(parts), draws_seeds=True),
            Table("tsweep", "tsweep-slopes", _TSWEEP_SLOPES_TITLE, _TSWEEP_SLOPE_COLUMNS,
                  _fits(parts), len(parts))]


def figure1_tables(parts: Parts) -> list[Table]:
    """Figure 1's tables: one row per (run, m) with the fitted slopes as a LaTeX footer row per
    run, and the slopes as their own table (Markdown and CSV).

    Example:
        >>> fits = [{"panel": "lin_error", "slope": -0.5, "slope_ci95": 0.1, "theory_slope": -0.5}]
        >>> table, slopes = figure1_tables([("r", [{"m": 8}], fits)])
        >>> table.footers["r"][1]["lin_error_mean"], len(slopes.rows)
        ((-0.5, 0.1), 1)
    """
    table = Table("figure1", "figure1", _FIGURE1_TITLE, _FIGURE1_COLUMNS, _rows(parts),
                  len(parts), draws_seeds=True)
    for label, _, fits in parts:
        footer: dict[str, tuple[Any, Any]] = {}
        for fit in fits:
            footer[f"{fit['panel']}_mean"] = (fit["slope"], fit["slope_ci95"])
            footer[f"{fit['panel']}_theory"] = (fit["theory_slope"], None)
        two = any(isinstance(f.get("widths"), int) and f["widths"] < 3 for f in fits)
        table.footers[label] = ("slope" + (_TWO_POINTS if two else ""), footer)
    slopes = Table("figure1", "figure1-slopes", _FIGURE1_SLOPES_TITLE, _SLOPE_COLUMNS,
                   _fits(parts), len(parts),
                   in_latex=False)   # LaTeX: the slope row under figure 1's columns
    return [table, slopes]


def _figure2_by_lag(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Figure 2's rows (one per model and lag) as one row per run and lag with both models."""
    out: dict[tuple[str, Any], dict[str, Any]] = {}
    for row in rows:
        merged = out.setdefault((row["run"], row["L"]),
                                {"run": row["run"], "L": row["L"], "T": row["T"]})
        for key, value in row.items():
            if key not in ("run", "model", "L", "T"):
                merged[f"{row['model']}_{key}"] = value
    return list(out.values())


#: How a slope table names its panels: (Markdown, LaTeX); CSV keeps the keys.
_PANELS: dict[str, tuple[str, str]] = {
    "lin_error": ("linearization error", r"linearization error"),
    "app_error": ("approximation error", r"approximation error"),
    "min_train_loss": ("min training loss", r"min training loss"),
    "rel_min_train_loss": ("min training loss / label rms²",
                           r"$\min_k \hat{R} / \overline{y^2}$"),
    "lin_error_alt": ("linearization error, other alignment",
                      r"linearization error, other alignment"),
}


def _geometric_key(table: Table, col: Column) -> str | None:
    """The metric whose geometric mean and interval (``<metric>_gmean``, ``_gci_low``,
    ``_gci_high``) a mean ± CI column of ``table`` has beside it, or None."""
    if col.ci is None or not col.key.endswith("_mean"):
        return None
    metric = col.key.removesuffix("_mean")
    return metric if any(f"{metric}_gmean" in row for row in table.rows) else None


def _shown_numbers(row: Mapping[str, Any], col: Column, metric: str | None) -> list[float]:
    """The numbers a cell writes, which decide its column's power of ten: the geometric mean and
    the ends of its interval (not those of an interval printed as its width,
    :func:`_wide_text`), or the value; none for what is not a float."""
    if metric is None:
        values = [row.get(col.key)]
    elif _wide_text(row, metric, 3, "markdown") is not None:
        values = [row.get(f"{metric}_gmean")]
    else:
        values = [row.get(f"{metric}_{s}") for s in ("gmean", "gci_low", "gci_high")]
    return [v for v in values if isinstance(v, float) and not isinstance(v, bool)
            and math.isfinite(v)]


def _wide_text(row: Mapping[str, Any], metric: str, digits: int, style: str,
               exponent: int = 0) -> str | None:
    return wide_interval_text(_float(row.get(f"{metric}_gmean")),
                              _float(row.get(f"{metric}_gci_low")),
                              _float(row.get(f"{metric}_gci_high")), style, digits, exponent)


#: What a title adds when a cell gives an interval as its width (:func:`_wide_text`).
_WIDE_NOTE = ("; [CI spans k decades]: a 95% CI wider than two decades (a few seeds that "
              "disagree) is given as its width, its ends are in the CSV")
#: How a slope without a CI (a fit to two points) says so.
_TWO_POINTS = " (2 points: no CI)"
#: Fewer seeds than this: a figure draws every seed beside its geometric mean instead of a 95 %
#: band (a band of a few values says little), and its table says so.
MIN_SEEDS_FOR_BAND = 5
#: What such a table's title adds (:func:`_title`).
_FEW_SEEDS_NOTE = ("; fewer than {n} seeds in a row: its figure draws every seed beside the "
                   "geometric mean instead of a band, and the interval here is the t-interval of "
                   "those few values")


def _display(row: Mapping[str, Any], col: Column, digits: int, latex: bool,
             metric: str | None = None, exponent: int = 0) -> str:
    """A cell's text: its value (:func:`_value_text`), then, for a column with a ``note`` whose
    row says ``not applicable: …``, that text in parentheses."""
    text = _value_text(row, col, digits, latex, metric, exponent)
    note = not_applicable(row, col.note) if col.note is not None else ""
    if not note:
        return text
    return f"{text} ({latex_text(note) if latex else note})"


def _value_text(row: Mapping[str, Any], col: Column, digits: int, latex: bool,
                metric: str | None = None, exponent: int = 0) -> str:
    value = row.get(col.key)
    if col.key == "paper_epoch" and isinstance(value, int) and value < 0:
        value = None  # table1: no paper value for this cell
    if col.key == "panel" and value in _PANELS:
        return _PANELS[value][1 if latex else 0]
    style = "latex" if latex else "markdown"
    if metric is not None:
        wide = _wide_text(row, metric, digits, style, exponent)
        if wide is not None:   # LaTeX: the words as text inside the math
            return "$" + wide.replace("[CI spans", r"[\mbox{CI spans").replace(
                "decades]", r"decades}]") + "$" if latex else wide
        text = interval_text(_float(row.get(f"{metric}_gmean")),
                             _float(row.get(f"{metric}_gci_low")),
                             _float(row.get(f"{metric}_gci_high")), style, digits,
                             _ci_digits(digits), exponent, own_powers=False)
        return text if not latex or text == "--" else f"${text}$"
    if col.ci is not None:
        text = column_mean_ci_text(_float(value), _float(row.get(col.ci)), style, digits,
                                   _ci_digits(digits), exponent)
        if _fewer_than_three_points(row, col) and text != "--":
            return (f"${text}$" if latex else text) + _TWO_POINTS
        return text if not latex or text == "--" else f"${text}$"
    if isinstance(value, float):
        text = column_number_text(value, digits, style, exponent)
        return text if not latex or text == "--" else f"${text}$"
    if isinstance(value, bool) or value is None:
        text = "--" if value is None else ("yes" if value else "no")
    else:
        text = str(value)
    if latex:
        return f"${text}$" if isinstance(value, int) and not isinstance(value, bool) \
            else latex_text(text)
    return text


def _fewer_than_three_points(row: Mapping[str, Any], col: Column) -> bool:
    """Whether a slope cell is a fit to two points (figure 1's ``widths``, the T sweep's ``Ts``
    below 3), which has no CI: the cell says so rather than print a bare number."""
    points = row.get("Ts" if "Ts" in row else "widths")
    return (col.key.startswith("slope") and isinstance(points, int) and points < 3
            and not math.isfinite(_float(row.get(col.ci or "")) or math.nan))


def _float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _ci_digits(digits: int) -> int:
    return max(2, digits - 1)


def _shown(table: Table, fmt: str) -> list[Column]:
    return [c for c in table.columns
            if fmt == "csv" or (not c.csv_only and (fmt != "latex" or c.in_latex))]


def _cells(table: Table, cols: Sequence[Column], digits: int, latex: bool, statistic: str
           ) -> tuple[list[str | None], dict[str, list[str]]]:
    """Per column, the statistic it shows (its geometric metric or None) and its rows' texts,
    every float of one column written with one power of ten (:func:`column_exponent`)."""
    metrics = [_geometric_key(table, c) if statistic == "geometric" else None for c in cols]
    texts: dict[str, list[str]] = {}
    for col, metric in zip(cols, metrics, strict=True):
        exponent = column_exponent([v for row in table.rows
                                    for v in _shown_numbers(row, col, metric)])
        texts[col.key] = [_display(row, col, digits, latex, metric, exponent)
                          for row in table.rows]
    return metrics, texts


def _suffix(col: Column, metric: str | None) -> str:
    if metric is not None:
        return " (geometric mean [95% CI])"
    return " (± 95% CI)" if col.ci else ""


def _render_csv(table: Table) -> str:
    import pandas as pd

    keys = ["run"]
    for col in table.columns:
        keys += [col.key] + ([col.ci] if col.ci else [])
    frame = pd.DataFrame([[row.get(k) for k in keys] for row in table.rows], columns=keys)
    return render_frame(frame, "csv")


def _title(table: Table, statistic: str, texts: Mapping[str, list[str]] | None = None) -> str:
    title = table.title.replace("{statistic}", _STATISTIC_WORDS[statistic])
    if texts and any("decades]" in t for column in texts.values() for t in column):
        title += _WIDE_NOTE
    if table.draws_seeds and any(
            _float(row.get("seeds")) < MIN_SEEDS_FOR_BAND for row in table.rows
            if _float(row.get("seeds")) is not None):
        title += _FEW_SEEDS_NOTE.format(n=MIN_SEEDS_FOR_BAND)
    return title


def _render_markdown(table: Table, digits: int, statistic: str) -> str:
    import pandas as pd

    cols = _shown(table, "markdown")
    with_run = table.runs > 1
    metrics, texts = _cells(table, cols, digits, False, statistic)
    headers = (["run"] if with_run else []) + [c.header + _suffix(c, metric)
                                                for c, metric in zip(cols, metrics, strict=True)]
    body = [([row["run"]] if with_run else []) + [texts[c.key][i] for c in cols]
            for i, row in enumerate(table.rows)]
    frame = pd.DataFrame(body, columns=headers, dtype=object)
    return render_frame(frame, "markdown", title=_title(table, statistic, texts))


def _group_heads(cols: Sequence[Column], offset: int) -> list[str]:
    """The grouped-head row and its ``\\cmidrule``s, or nothing when no column has a group."""
    if not any(c.group for c in cols):
        return []
    cells, rules, i = [""] * offset, [], 0
    while i < len(cols):
        j = i
        while j + 1 < len(cols) and cols[i].group and cols[j + 1].group == cols[i].group:
            j += 1
        if cols[i].group and j > i:
            cells.append(rf"\multicolumn{{{j - i + 1}}}{{c}}{{{latex_text(cols[i].group)}}}")
            rules.append(rf"\cmidrule(lr){{{offset + i + 1}-{offset + j + 1}}}")
        else:
            cells.append(latex_text(cols[i].group) if cols[i].group else "")
        i = j + 1
    return [" & ".join(cells) + r" \\", "".join(rules)] if rules else [" & ".join(cells) + r" \\"]


def _render_latex(table: Table, digits: int, statistic: str) -> str:
    if table.latex_view is not None:
        title_table, table = table, table.latex_view
    else:
        title_table = table
    cols = _shown(table, "latex")
    _, texts = _cells(table, cols, digits, True, statistic)
    title = _title(title_table, statistic, texts)
    with_run = table.runs > 1
    align = ("l" if with_run else "") + "".join("c" if c.ci or c.group else "r" for c in cols)
    lines = [f"% {latex_text(title)}; generated by boundcalc",
             rf"\begin{{tabular}}{{{align}}}", r"\toprule",
             *_group_heads(cols, int(with_run)),
             " & ".join((["run"] if with_run else []) + [c.latex for c in cols]) + r" \\",
             r"\midrule"]
    runs = list(dict.fromkeys(row["run"] for row in table.rows))
    for i, label in enumerate(runs):
        if i:
            lines.append(r"\midrule")
        name = [rf"\texttt{{{latex_text(label)}}}"] if with_run else []
        for i in (i for i, r in enumerate(table.rows) if r["run"] == label):
            lines.append(" & ".join(name + [texts[c.key][i] for c in cols]) + r" \\")
        if label in table.footers:
            head, values = table.footers[label]
            row = {c.key: values.get(c.key, (None, None))[0] for c in cols}
            row |= {c.ci: values.get(c.key, (None, None))[1] for c in cols if c.ci}
            cells = [_display(row, c, digits, True) for c in cols[1:]]
            lines += [r"\midrule", " & ".join(name + [head] + cells) + r" \\"]
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines)


def render_tables(tables: Sequence[Table], fmt: str, digits: int = 3,
                  statistic: str = "geometric") -> str:
    """The tables as one text, separated by an empty line (LaTeX: by ``\\bigskip`` in a
    paragraph of its own, so that two tabulars never sit side by side).

    ``csv``: one block per table, every number exact (the run's own column names, plus ``run``),
    the mean and its ``_ci95`` in separate columns; a block is plain CSV. ``markdown``: a bold
    title, then a pipe table. ``latex``: a booktabs ``tabular`` after a ``%`` title line, grouped
    heads over the columns of one measurement and symbols as column heads (figure 1: the fitted
    slopes as a last row under the columns they fit; figure 2: one row per lag, both models side
    by side) — the same text ``reproduce`` writes as ``figure1_table.tex`` / ``figure2_table.tex``.
    Markdown and LaTeX show, per measured column, the ``statistic`` of :data:`STATISTICS`:
    ``geometric`` (default, where the summary has it: what the figures draw) ``gmean [low,
    high]`` (:func:`boundcalc.render.rounding.interval_text`), ``arithmetic`` ``mean ± CI``; the CI
    (or the narrower side of the interval) to ``max(2, digits - 1)`` significant digits and the mean
    rounded to its last digit, a number alone to ``digits``; every number of one column with one
    power of ten (:func:`boundcalc.render.rounding.column_exponent`: plain digits, or ``(…)×10^k`` /
    ``(…)\\times10^{k}`` with the same k down the column; never ``e+``); they leave out the
    columns marked ``csv_only``. CSV is the same whatever ``statistic``.

    Example:
        >>> t = Table("table1", "table1", "demo", [_c("x", "x", ci="x_ci95")],
        ...           [{"run": "a", "x": 0.123456, "x_ci95": 0.01}])
        >>> print(render_tables([t], "csv"), end="")
        run,x,x_ci95
        a,0.123456,0.01
        >>> print(render_tables([t], "markdown").splitlines()[-1])
        | 0.123 ± 0.010 |
        >>> print(render_tables([t], "latex").splitlines()[-3])
        $0.123 \\pm 0.010$ \\\\
    """
    if fmt not in TABLE_FORMATS:
        raise ValueError(f"`fmt` must be one of {TABLE_FORMATS}, got {fmt!r}")
    if statistic not in STATISTICS:
        raise ValueError(f"`statistic` must be one of {STATISTICS}, got {statistic!r}")
    if fmt == "csv":
        parts = [_render_csv(t) for t in tables]
    elif fmt == "markdown":
        parts = [_render_markdown(t, digits, statistic) for t in tables]
    else:
        parts = [_render_latex(t, digits, statistic) for t in tables if t.in_latex]
    gap = "\n\n\\bigskip\n\n" if fmt == "latex" else "\n\n"
    return gap.join(p.rstrip("\n") for p in parts) + "\n"
