"""Tables of stored experiment runs, as CSV, Markdown or LaTeX: ``boundcalc table``.

The rows are the summaries of :mod:`boundcalc.summaries` — per figure1 width, figure2 (model, L)
or table1 (d_m, N) cell, mean ± 95 % CI next to the bound, and figure1's slopes — of the runs that
:func:`boundcalc.runs.load_run` read back (re-exported here with :class:`StoredRun`).
:func:`build_tables` makes one combined table per kind (a ``run`` column says which run a row
comes from); :func:`render_tables` prints them as CSV (exact floats, the run's own column names),
Markdown or LaTeX (booktabs; both rounded, ``mean ± CI``). The figures of a run are redrawn by
:func:`boundcalc.validators.experiments.figures.regenerate_figures` (matplotlib and torch).

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
from dataclasses import dataclass
from typing import Any

from boundcalc.frame_text import render_frame
from boundcalc.latex import latex_text
from boundcalc.runs import StoredRun, load_run
from boundcalc.summaries import (
    figure1_slopes,
    summarize_figure1,
    summarize_figure2,
    summarize_table1,
    summarize_tsweep,
    tsweep_slopes,
)

__all__ = ["TABLE_FORMATS", "Column", "StoredRun", "Table", "build_tables", "load_run",
           "render_tables"]

#: Output formats of :func:`render_tables`.
TABLE_FORMATS: tuple[str, ...] = ("markdown", "latex", "csv")


@dataclass(frozen=True)
class Column:
    """One column of a table: ``key`` (a plain value) or ``key`` ± ``ci`` (mean and CI).

    ``header`` / ``latex`` name it in Markdown / LaTeX; ``csv_only`` columns are left out of
    Markdown and LaTeX (CSV keeps every number).
    """

    key: str
    header: str
    latex: str
    ci: str | None = None
    csv_only: bool = False


@dataclass
class Table:
    """A titled table: ``columns`` and one dict per row (keys of the columns, plus ``run``)."""

    kind: str
    name: str
    title: str
    columns: list[Column]
    rows: list[dict[str, Any]]
    runs: int = 1


def _c(key: str, header: str, latex: str | None = None, **kw: Any) -> Column:
    return Column(key, header, latex if latex is not None else header, **kw)


_FIGURE1_COLUMNS = [
    _c("m", "m", "$m$"), _c("seeds", "seeds"),
    _c("lin_error_mean", "linearization error", ci="lin_error_ci95"),
    _c("lin_error_theory", "bound ε_lin", r"$\varepsilon_{\mathrm{lin}}$"),
    _c("app_error_mean", "approximation error", ci="app_error_ci95"),
    _c("app_error_theory", "bound ε_app", r"$\varepsilon_{\mathrm{app}}$"),
    _c("min_train_loss_mean", "min training loss", ci="min_train_loss_ci95"),
    _c("min_train_loss_theory", "bound Theorem 1", "Theorem 1"),
    _c("lin_error_alt_mean", "linearization error, other alignment", ci="lin_error_alt_ci95"),
    _c("lin_error_alt_theory", "bound ε_lin (other alignment)", csv_only=True),
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
]
_TABLE1_COLUMNS = [
    _c("d_m", "d_m", "$d_m$"), _c("N", "N", "$N$"),
    _c("lowest_test_loss", "lowest test loss"), _c("lowest_test_epoch", "epoch"),
    _c("paper_lowest_test_loss", "paper's lowest test loss", "paper"),
    _c("paper_epoch", "paper's epoch", "paper epoch"),
    _c("theorem5_bound", "bound Theorem 5", "Theorem 5 bound"),
    _c("theorem5_bound_printed", "Theorem 5 printed", csv_only=True),
    _c("lowest_test_under_bound", "under bound"),
    _c("conditions_hold_count", "Lemma 4 conditions", "conditions"),
    _c("all_conditions_hold", "all hold", csv_only=True),
    _c("conditions_holding", "holding", csv_only=True),
    _c("conditions_failing", "failing", csv_only=True),
    _c("alpha", "alpha", csv_only=True), _c("Phi0", "Phi0", csv_only=True),
]

_TSWEEP_COLUMNS = [
    _c("m", "m", "$m$"), _c("T", "T", "$T$"), _c("seeds", "seeds"),
    *[c for c in _FIGURE1_COLUMNS if c.key in {f"{k}_{s}" for s in ("mean", "theory") for k in
                                                ("lin_error", "app_error", "min_train_loss")}],
]
_TSWEEP_SLOPE_COLUMNS = [
    _c("panel", "panel"), _c("m", "m", "$m$"),
    _c("slope", "slope in log T", r"slope in $\log T$", ci="slope_ci95"),
    _c("seeds", "seeds"),
    _c("slope_of_means", "slope of the means", ci="slope_of_means_ci95"),
    _c("theory_slope", "bound's slope"),
    _c("change", "factor over the T range", r"factor over $T$"),
    _c("Ts", "T values", r"$T$ values"),
]

_TITLES = {
    "figure1": "Figure 1 (Section 6.1): mean ± 95% CI over seeds per width m; bound = boundcalc "
               "theory",
    "figure1-slopes": "Figure 1: log-log slope in m of the means (± 95% CI) and of the bound",
    "figure2": "Figure 2 (Section 6.2): mean ± 95% CI over seeds per (model, L); no bound is "
               "stored for this experiment",
    "table1": "Table 1 (paper 003): lowest test loss per (d_m, N), one run per cell (no CI), "
              "next to the Theorem 5 bound",
    "tsweep": "T sweep (Theorem 1 regime): mean ± 95% CI over seeds per (m, T); bound = "
              "boundcalc theory (flat in T)",
    "tsweep-slopes": "T sweep: slope of log(metric) in log T fitted per seed, mean ± 95% "
                     "t-interval over seeds; the slope of the means and of the bound beside it",
}


def build_tables(runs: Sequence[StoredRun]) -> list[Table]:
    """One combined table per kind (in the order the kinds first appear; a ``run`` column says
    which run each row comes from), and for figure1 a second one with the fitted slopes.

    Example:
        >>> from pathlib import Path
        >>> run = StoredRun("r", Path("."), "table1", {}, [])
        >>> [(t.name, len(t.rows)) for t in build_tables([run])]
        [('table1', 0)]
    """
    kinds = list(dict.fromkeys(r.kind for r in runs))
    tables = []
    for kind in kinds:
        group = [r for r in runs if r.kind == kind]
        rows: list[dict[str, Any]] = []
        slope_rows: list[dict[str, Any]] = []
        for run in group:
            if kind == "figure1":
                summary = summarize_figure1(run)
                slope_rows += [{"run": run.label, **s} for s in figure1_slopes(summary)]
            elif kind == "figure2":
                summary = summarize_figure2(run)
            elif kind == "tsweep":
                summary = summarize_tsweep(run)
                slope_rows += [{"run": run.label, **s}
                               for s in tsweep_slopes(run.records, summary, run.params)]
            else:
                summary = summarize_table1(run)
            rows += [{"run": run.label, **s} for s in summary]
        columns = {"figure1": _FIGURE1_COLUMNS, "figure2": _FIGURE2_COLUMNS,
                   "table1": _TABLE1_COLUMNS, "tsweep": _TSWEEP_COLUMNS}[kind]
        tables.append(Table(kind, kind, _TITLES[kind], columns, rows, len(group)))
        if kind in ("figure1", "tsweep"):
            slope_columns = _SLOPE_COLUMNS if kind == "figure1" else _TSWEEP_SLOPE_COLUMNS
            tables.append(Table(kind, f"{kind}-slopes", _TITLES[f"{kind}-slopes"],
                                slope_columns, slope_rows, len(group)))
    return tables


def _sig(value: Any, digits: int) -> str:
    """Display text of one number: ``digits`` significant digits, ``--`` for NaN / missing."""
    if value is None:
        return "--"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "--" if not math.isfinite(value) else f"{value:.{digits}g}"
    return str(value)


def _ci_digits(digits: int) -> int:
    return max(2, digits - 1)


def _display(row: Mapping[str, Any], col: Column, digits: int, latex: bool) -> str:
    value = row.get(col.key)
    if col.key == "paper_epoch" and isinstance(value, int) and value < 0:
        value = None  # table1: no paper value for this cell
    if col.ci is None:
        text = _sig(value, digits)
        if not latex:
            return text
        if isinstance(value, (int, float)) and not isinstance(value, bool) and text != "--":
            return f"${_latex_number(text)}$"
        return latex_text(text)
    ci = row.get(col.ci)
    mean_text = _sig(value, digits)
    if mean_text == "--":
        return "--"
    has_ci = isinstance(ci, (int, float)) and math.isfinite(ci)
    if not latex:
        return f"{mean_text} ± {_sig(ci, _ci_digits(digits))}" if has_ci else mean_text
    body = _latex_number(mean_text)
    if has_ci:
        body += rf" \pm {_latex_number(_sig(ci, _ci_digits(digits)))}"
    return f"${body}$"


def _latex_number(text: str) -> str:
    if "e" in text:
        mantissa, exponent = text.split("e")
        return rf"{mantissa} \times 10^{{{int(exponent)}}}"
    return text


def _shown(table: Table, fmt: str) -> list[Column]:
    return [c for c in table.columns if fmt == "csv" or not c.csv_only]


def _render_csv(table: Table) -> str:
    import pandas as pd

    keys = ["run"]
    for col in table.columns:
        keys += [col.key] + ([col.ci] if col.ci else [])
    frame = pd.DataFrame([[row.get(k) for k in keys] for row in table.rows], columns=keys)
    return render_frame(frame, "csv")


def _render_markdown(table: Table, digits: int) -> str:
    import pandas as pd

    cols = _shown(table, "markdown")
    with_run = table.runs > 1
    headers = (["run"] if with_run else []) + [c.header + (" (± 95% CI)" if c.ci else "")
                                                for c in cols]
    body = [([row["run"]] if with_run else []) + [_display(row, c, digits, False) for c in cols]
            for row in table.rows]
    frame = pd.DataFrame(body, columns=headers, dtype=object)
    return render_frame(frame, "markdown", title=table.title)


def _render_latex(table: Table, digits: int) -> str:
    cols = _shown(table, "latex")
    with_run = table.runs > 1
    align = ("l" if with_run else "") + "".join("c" if c.ci else "r" for c in cols)
    headers = (["run"] if with_run else []) + [c.latex for c in cols]
    lines = [f"% {latex_text(table.title)}; generated by boundcalc table",
             rf"\begin{{tabular}}{{{align}}}", r"\toprule",
             " & ".join(headers) + r" \\", r"\midrule"]
    previous = None
    for row in table.rows:
        if with_run and previous is not None and row["run"] != previous:
            lines.append(r"\midrule")
        previous = row["run"]
        cells = ([rf"\texttt{{{latex_text(row['run'])}}}"] if with_run else [])
        cells += [_display(row, c, digits, True) for c in cols]
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines)


def render_tables(tables: Sequence[Table], fmt: str, digits: int = 3) -> str:
    """The tables as one text, separated by an empty line.

    ``csv``: one block per table, every number exact (the run's own column names, plus ``run``),
    the mean and its ``_ci95`` in separate columns; a block is plain CSV. ``markdown``: a bold
    title, then a pipe table. ``latex``: a booktabs ``tabular`` after a ``%`` title line.
    Markdown and LaTeX show ``mean ± CI`` with ``digits`` significant digits (the CI with
    ``max(2, digits - 1)``) and leave out the columns marked ``csv_only``.

    Example:
        >>> t = Table("table1", "table1", "demo", [_c("x", "x", ci="x_ci95")],
        ...           [{"run": "a", "x": 0.123456, "x_ci95": 0.01}])
        >>> print(render_tables([t], "csv"), end="")
        run,x,x_ci95
        a,0.123456,0.01
        >>> print(render_tables([t], "markdown").splitlines()[-1])
        | 0.123 ± 0.01 |
    """
    if fmt not in TABLE_FORMATS:
        raise ValueError(f"`fmt` must be one of {TABLE_FORMATS}, got {fmt!r}")
    if fmt == "csv":
        parts = [_render_csv(t) for t in tables]
    elif fmt == "markdown":
        parts = [_render_markdown(t, digits) for t in tables]
    else:
        parts = [_render_latex(t, digits) for t in tables]
    return "\n\n".join(p.rstrip("\n") for p in parts) + "\n"
