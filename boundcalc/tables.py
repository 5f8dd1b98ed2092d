"""Tables from stored experiment runs: mean ± 95 % CI per cell, the bound beside it, the slopes.

``boundcalc reproduce figure1|figure2|table1`` leaves a run directory (:mod:`boundcalc.rundir`):
``config.json`` (the parameters, ``experiment`` naming the kind) and one JSON file per finished
cell under ``cells/``. This module re-reads those cell files — it never trains, never recomputes a
cell and never imports torch — and computes, per run:

* **figure1** (per width m): mean and 95 % Student-t CI over seeds of the linearization error,
  the approximation error and the minimum training loss, each next to its theory curve
  (ε_lin, ε_app, Theorem 1's min-iterate bound, evaluated by the calculator
  :func:`boundcalc.api.evaluate`, exactly as the run does), and the log–log slope of the means in
  m with its 95 % CI beside the theory curve's slope;
* **figure2** (per model and lag L): mean and 95 % CI over seeds of the max Jacobian norm, the
  min validation loss and the max loss gradient, and the memory per sample (no bound is stored);
* **table1** (per (d_m, N)): the lowest test loss and its epoch (one run per cell, so no CI) next
  to the Theorem 5 bound and the number of Lemma 4 conditions that hold.

The numbers are those of the run's own ``summary.csv`` / ``slopes.csv`` / ``table1.csv`` (the same
statistics, recomputed from the same cells; tests check the equality), so a table can be made from
an unfinished run, or from cells gathered from several machines. :func:`render_tables` prints them
as CSV (exact floats), Markdown or LaTeX (booktabs; both rounded), and :func:`regenerate_figures`
redraws a run's figure from the stored cells with the experiment's own plotting function.

Example:
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> folder = Path(tempfile.mkdtemp())
    >>> (folder / "cells").mkdir()
    >>> params = {"experiment": "table1", "dms": [16], "Ns": [64, 128]}
    >>> _ = (folder / "config.json").write_text(json.dumps({"parameters": params}))
    >>> run = load_run(folder)
    >>> run.kind, run.missing
    ('table1', ['dm16-N64', 'dm16-N128'])
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from boundcalc.params import InputError
from boundcalc.stats import fit_slope, mean_ci95, t_quantile_975

#: Experiment kinds a run directory can hold.
KINDS: tuple[str, ...] = ("figure1", "figure2", "table1")

#: Output formats of :func:`render_tables`.
TABLE_FORMATS: tuple[str, ...] = ("markdown", "latex", "csv")

FIGURE1_METRICS = ("lin_error", "app_error", "min_train_loss")
FIGURE1_EXTRA = ("lin_error_alt",)   # panel (a) at the other boundary alignment, if stored
FIGURE1_THEORY = {"lin_error": "eps_lin", "app_error": "eps_app",
                  "min_train_loss": "min_iterate", "lin_error_alt": "eps_lin"}
FIGURE2_MODELS = ("transformer", "indrnn")
FIGURE2_BLOCK = {"transformer": "W", "indrnn": "u"}
TABLE1_KEYS = ("d_m", "N", "lowest_test_loss", "lowest_test_epoch", "paper_lowest_test_loss",
               "paper_epoch", "theorem5_bound", "theorem5_bound_printed",
               "lowest_test_under_bound", "conditions_hold_count", "all_conditions_hold",
               "conditions_holding", "conditions_failing", "alpha", "Phi0")

#: Keys every stored cell of a kind holds (a cell file without them is damaged).
CELL_FIELDS: dict[str, tuple[str, ...]] = {
    "figure1": ("seed", "m", *FIGURE1_METRICS),
    "figure2": ("model", "L", "T", "seed", "max_jacobian", "min_val_loss", "max_loss_gradient",
                "diverged", "memory_floats_per_sample"),
    "table1": TABLE1_KEYS,
}

_ARG = "RUN_DIR"


# --------------------------------------------------------------------------- statistics


# --------------------------------------------------------------------------- reading a run


@dataclass
class StoredRun:
    """What a run directory holds: its kind, parameters and finished cells (never recomputed).

    Attributes:
        label: the run directory as the user named it (shown in tables and messages).
        path: the folder.
        kind: ``figure1``, ``figure2`` or ``table1``.
        params: the ``parameters`` of ``config.json``.
        records: the finished cells, in the order the experiment lists them.
        missing: keys of the expected cells with no usable file yet (damaged ones included).
        damaged: key → why its file is not a finished cell (empty, truncated, ``{}``, a field
            missing); left in place (``reproduce`` moves such files aside and recomputes them).
    """

    label: str
    path: Path
    kind: str
    params: dict[str, Any]
    records: list[dict[str, Any]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    damaged: dict[str, str] = field(default_factory=dict)

    @property
    def expected(self) -> int:
        """Number of cells the run's parameters call for."""
        return len(self.records) + len(self.missing)


_CELL_PATTERNS = {"figure1": re.compile(r"^m\d+-seed\d+$"),
                  "figure2": re.compile(r"^(transformer|indrnn)-L\d+-seed\d+$"),
                  "table1": re.compile(r"^dm\d+-N\d+$")}


def detect_kind(params: Mapping[str, Any], path: str | os.PathLike | None = None) -> str | None:
    """The experiment kind of a run: ``params["experiment"]`` (every run records it), else
    recognised from the parameter names, else from the output and cell files in ``path``;
    None when nothing matches (a ``validate`` run, say).

    Example:
        >>> detect_kind({"experiment": "figure2"}), detect_kind({"widths": [8, 16]})
        ('figure2', 'figure1')
        >>> detect_kind({"statements": ["lemma2"]}) is None
        True
    """
    stated = params.get("experiment")
    if stated is not None:
        return stated if stated in KINDS else None
    if "widths" in params:
        return "figure1"
    if "lags" in params:
        return "figure2"
    if "dms" in params and "Ns" in params:
        return "table1"
    if path is None:
        return None
    folder = Path(path)
    for kind, marker in (("figure1", "slopes.csv"), ("figure1", "figure1_table.tex"),
                         ("figure2", "figure2_table.tex"), ("table1", "table1.csv")):
        if (folder / marker).exists():
            return kind
    stems = [p.stem for p in (folder / "cells").glob("*.json")]
    for kind, pattern in _CELL_PATTERNS.items():
        if stems and all(pattern.match(s) for s in stems):
            return kind
    return None


def expected_cells(kind: str, params: Mapping[str, Any]) -> list[str]:
    """Cell keys (file stems under ``cells/``) a run of ``kind`` with ``params`` finishes, in the
    experiment's order: figure1 ``m<m>-seed<s>`` (seed-major), figure2
    ``<model>-L<L>-seed<s>``, table1 ``dm<d_m>-N<N>``.

    Example:
        >>> expected_cells("figure1", {"widths": [8, 16], "seeds": [1]})
        ['m8-seed1', 'm16-seed1']
    """
    if kind == "figure1":
        return [f"m{int(m)}-seed{int(s)}" for s in params["seeds"] for m in params["widths"]]
    if kind == "figure2":
        return [f"{model}-L{int(L)}-seed{int(s)}" for s in params["seeds"]
                for L in params["lags"] for model in FIGURE2_MODELS]
    if kind == "table1":
        return [f"dm{int(d)}-N{int(N)}" for d in params["dms"] for N in params["Ns"]]
    raise ValueError(f"`kind` must be one of {KINDS}, got {kind!r}")


def load_run(path: str | os.PathLike, label: str | None = None) -> StoredRun:
    """Read the config and every finished cell of one run directory (no computation).

    A cell file that is not a finished cell (empty, truncated, ``{}``, lacking a field of
    :data:`CELL_FIELDS`) is counted as missing and named in :attr:`StoredRun.damaged`; the other
    cells are tabled.

    Raises:
        InputError: (flag ``RUN_DIR``) ``path`` is not a directory, has no readable
            ``config.json`` or holds an unknown kind of run.

    Example:
        >>> load_run("/nonexistent")
        Traceback (most recent call last):
        ...
        boundcalc.params.InputError: RUN_DIR '/nonexistent' is not a directory
    """
    label = str(path) if label is None else label
    folder = Path(path)
    if not folder.is_dir():
        raise InputError(_ARG, f"{label!r} is not a directory")
    config_file = folder / "config.json"
    if not config_file.is_file():
        raise InputError(_ARG, f"{label!r} has no config.json (not a boundcalc run directory)")
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(_ARG, f"{label!r}: cannot read config.json: {exc}") from None
    params = config.get("parameters") if isinstance(config, dict) else None
    if not isinstance(params, dict):
        raise InputError(_ARG, f"{label!r}: config.json has no 'parameters' object")
    kind = detect_kind(params, folder)
    if kind is None:
        stated = params.get("experiment")
        what = f"experiment {stated!r}" if stated is not None else "no experiment"
        raise InputError(_ARG, f"{label!r} holds {what}; boundcalc table reads "
                               f"{', '.join(KINDS)} runs")
    try:
        keys = expected_cells(kind, params)
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(_ARG, f"{label!r}: config.json of a {kind} run lacks {exc}") from None
    from boundcalc.rundir import cell_problem

    records, missing, damaged = [], [], {}
    for key in keys:
        cell = folder / "cells" / f"{key}.json"
        if not cell.is_file():
            missing.append(key)
            continue
        try:
            text = cell.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            problem: str | None = f"unreadable: {getattr(exc, 'strerror', None) or exc}"
        else:
            problem = cell_problem(text, CELL_FIELDS[kind])
            if problem is None and not isinstance(json.loads(text), dict):
                problem = "not a JSON object"
        if problem is not None:
            missing.append(key)
            damaged[key] = problem
            continue
        records.append({k: _revive(v) for k, v in json.loads(text).items()})
    return StoredRun(label, folder, kind, params, records, missing, damaged)


_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _revive(value: Any) -> Any:
    """A non-finite float back from the text the run directory stores it as (``"nan"``,
    ``"inf"``, ``"-inf"``; see :func:`boundcalc.rundir.dumps`)."""
    return _NON_FINITE.get(value, value) if isinstance(value, str) else value


# --------------------------------------------------------------------------- summaries


def figure1_theory(m: int, params: Mapping[str, Any]) -> dict[str, float]:
    """ε_lin, ε_app (at n samples) and Theorem 1's min-iterate bound (at the n_train training
    samples) at width m — the calculator, as :func:`boundcalc.validators.figure1.theory_curves`.

    Example:
        >>> p = {"n": 256, "val_fraction": 0.2, "d": 8, "T": 16, "delta": "0.05", "steps": 100,
        ...      "rho": [3.0, 3.0, 3.0], "nu": [3.0, 3.0, 3.0], "activation": "tanh"}
        >>> sorted(figure1_theory(8, p))
        ['eps_app', 'eps_lin', 'min_iterate']
    """
    from boundcalc.api import evaluate
    from boundcalc.params import validate

    def text(v: Iterable[float]) -> str:
        return ",".join(repr(float(x)) for x in v)

    n = int(params["n"])
    n_train = n - int(float(params["val_fraction"]) * n)
    out = {}
    for count, keys in ((n, ("eps_lin", "eps_app")), (n_train, ("min_iterate",))):
        res = evaluate("theorem1", validate(
            m=int(m), n=count, d=params["d"], T=params["T"], delta=params["delta"],
            rho=text(params["rho"]), nu=text(params["nu"]), steps=params["steps"],
            activation=params["activation"]))
        for key in keys:
            out[key] = float(res.bound[key] if key in res.bound else res.constants[key])
    return out


def _figure1_metrics(records: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """The three panels, and the extra metrics every record has (runs before they existed
    lack them)."""
    extra = tuple(k for k in FIGURE1_EXTRA if records and all(k in r for r in records))
    return FIGURE1_METRICS + extra


def summarize_figure1(run: StoredRun) -> list[dict[str, Any]]:
    """One row per width with finished cells: the columns of the run's ``summary.csv``
    (``m``, ``seeds``, ``<metric>_mean``, ``<metric>_ci95``, ``<metric>_theory``).

    Example:
        >>> run = StoredRun("r", Path("."), "figure1", {"widths": [8]}, [], ["m8-seed1"])
        >>> summarize_figure1(run)
        []
    """
    return summarize_figure1_records(run.records, run.params)


def summarize_figure1_records(records: Sequence[Mapping[str, Any]],
                              params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """:func:`summarize_figure1` of cell records and run parameters (``widths`` and those of
    :func:`figure1_theory`); what ``reproduce figure1`` writes as ``summary.csv``."""
    rows = []
    for m in params["widths"]:
        cell = [r for r in records if r["m"] == m]
        if not cell:
            continue
        row: dict[str, Any] = {"m": m, "seeds": len(cell)}
        metrics = _figure1_metrics(cell)
        for key in metrics:
            mean, ci, _ = mean_ci95([_revive(r[key]) for r in cell])
            row[f"{key}_mean"], row[f"{key}_ci95"] = mean, ci
        curves = figure1_theory(m, params)
        for key in metrics:
            row[f"{key}_theory"] = curves[FIGURE1_THEORY[key]]
        rows.append(row)
    return rows


def figure1_slopes(summary: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per panel (the columns of ``slopes.csv``): log–log slope of the means in m with its
    95 % CI and intercept, the theory curve's slope, and the number of widths.

    Example:
        >>> rows = [{"m": m, **{f"{k}_{s}": 1 / m for k in FIGURE1_METRICS
        ...                     for s in ("mean", "theory")}} for m in (8, 16, 32)]
        >>> [round(r["slope"], 9) for r in figure1_slopes(rows)]
        [-1.0, -1.0, -1.0]
    """
    ms = [r["m"] for r in summary]
    rows = []
    present = [k for k in FIGURE1_EXTRA if summary and all(f"{k}_mean" in r for r in summary)]
    for key in FIGURE1_METRICS + tuple(present):
        slope, ci, intercept = fit_slope(ms, [r[f"{key}_mean"] for r in summary])
        theory, _, _ = fit_slope(ms, [r[f"{key}_theory"] for r in summary])
        rows.append({"panel": key, "slope": slope, "slope_ci95": ci, "intercept": intercept,
                     "theory_slope": theory, "widths": len(ms)})
    return rows


def summarize_figure2(run: StoredRun) -> list[dict[str, Any]]:
    """One row per (model, L) with finished cells: the columns of the run's ``summary.csv``.

    Example:
        >>> cells = [{"model": "indrnn", "L": 4, "T": 5, "diverged": False, "max_jacobian": j,
        ...           "min_val_loss": 0.5, "max_loss_gradient": 1.0,
        ...           "memory_floats_per_sample": 16} for j in (1.0, 3.0)]
        >>> run = StoredRun("r", Path("."), "figure2", {"lags": [4]}, cells)
        >>> row = summarize_figure2(run)[0]
        >>> row["model"], row["max_jacobian_mean"], row["seeds"]
        ('indrnn', 2.0, 2)
    """
    return summarize_figure2_records(run.records, run.params["lags"])


def summarize_figure2_records(records: Sequence[Mapping[str, Any]],
                              lags: Iterable[int]) -> list[dict[str, Any]]:
    """:func:`summarize_figure2` of cell records and the run's lags; what ``reproduce figure2``
    writes as ``summary.csv``."""
    rows = []
    lags = list(lags)
    for model in FIGURE2_MODELS:
        for L in lags:
            cell = [{k: _revive(v) for k, v in r.items()} for r in records
                    if r["model"] == model and r["L"] == L]
            if not cell:
                continue
            jac_mean, jac_ci, _ = mean_ci95([r["max_jacobian"] for r in cell])
            val_mean, val_ci, _ = mean_ci95([r["min_val_loss"] for r in cell])
            grad_mean, grad_ci, _ = mean_ci95([r["max_loss_gradient"] for r in cell])
            rows.append({
                "model": model, "L": L, "T": cell[0]["T"], "seeds": len(cell),
                "diverged": sum(bool(r["diverged"]) for r in cell),
                "jacobian_block": FIGURE2_BLOCK[model],
                "max_jacobian_mean": jac_mean, "max_jacobian_ci95": jac_ci,
                "max_jacobian_min": min(r["max_jacobian"] for r in cell),
                "max_jacobian_max": max(r["max_jacobian"] for r in cell),
                "min_val_loss_mean": val_mean, "min_val_loss_ci95": val_ci,
                "max_loss_gradient_mean": grad_mean, "max_loss_gradient_ci95": grad_ci,
                "memory_floats_per_sample": cell[0]["memory_floats_per_sample"],
            })
    return rows


def summarize_table1(run: StoredRun) -> list[dict[str, Any]]:
    """One row per finished (d_m, N) cell: the columns of the run's ``table1.csv``.

    Example:
        >>> cell = {k: 0 for k in TABLE1_KEYS} | {"d_m": 16, "N": 64, "wall_s": 1.0}
        >>> list(summarize_table1(StoredRun("r", Path("."), "table1", {}, [cell]))[0])[:3]
        ['d_m', 'N', 'lowest_test_loss']
    """
    return [{k: r.get(k) for k in TABLE1_KEYS} for r in run.records]


# --------------------------------------------------------------------------- tables


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

_TITLES = {
    "figure1": "Figure 1 (Section 6.1): mean ± 95% CI over seeds per width m; bound = boundcalc "
               "theory",
    "figure1-slopes": "Figure 1: log-log slope in m of the means (± 95% CI) and of the bound",
    "figure2": "Figure 2 (Section 6.2): mean ± 95% CI over seeds per (model, L); no bound is "
               "stored for this experiment",
    "table1": "Table 1 (paper 003): lowest test loss per (d_m, N), one run per cell (no CI), "
              "next to the Theorem 5 bound",
}


def build_tables(runs: Sequence[StoredRun]) -> list[Table]:
    """One combined table per kind (in the order the kinds first appear; a ``run`` column says
    which run each row comes from), and for figure1 a second one with the fitted slopes.

    Example:
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
            else:
                summary = summarize_table1(run)
            rows += [{"run": run.label, **s} for s in summary]
        columns = {"figure1": _FIGURE1_COLUMNS, "figure2": _FIGURE2_COLUMNS,
                   "table1": _TABLE1_COLUMNS}[kind]
        tables.append(Table(kind, kind, _TITLES[kind], columns, rows, len(group)))
        if kind == "figure1":
            tables.append(Table(kind, "figure1-slopes", _TITLES["figure1-slopes"],
                                _SLOPE_COLUMNS, slope_rows, len(group)))
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
    from boundcalc.formats import latex_text

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

    from boundcalc.formats import render_frame

    keys = ["run"]
    for col in table.columns:
        keys += [col.key] + ([col.ci] if col.ci else [])
    frame = pd.DataFrame([[row.get(k) for k in keys] for row in table.rows], columns=keys)
    return render_frame(frame, "csv")


def _render_markdown(table: Table, digits: int) -> str:
    import pandas as pd

    from boundcalc.formats import render_frame

    cols = _shown(table, "markdown")
    with_run = table.runs > 1
    headers = (["run"] if with_run else []) + [c.header + (" (± 95% CI)" if c.ci else "")
                                                for c in cols]
    body = [([row["run"]] if with_run else []) + [_display(row, c, digits, False) for c in cols]
            for row in table.rows]
    frame = pd.DataFrame(body, columns=headers, dtype=object)
    return render_frame(frame, "markdown", title=table.title)


def _render_latex(table: Table, digits: int) -> str:
    from boundcalc.formats import latex_text

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


# --------------------------------------------------------------------------- figures


def _config(cls: type, params: Mapping[str, Any]) -> Any:
    """The experiment's config dataclass from stored parameters (lists back to tuples)."""
    import dataclasses

    names = {f.name for f in dataclasses.fields(cls)}
    values = {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()
              if k in names}
    return cls(**values)


def regenerate_figures(run: StoredRun, directory: str | os.PathLike | None = None
                       ) -> list[Path]:
    """Redraw the run's figure (PNG and PDF) from its stored cells into ``directory`` (default:
    the run directory), with the experiment's own plotting function; nothing is retrained. Each
    file is drawn into a temporary folder first and moved into place. table1 has no figure (an
    empty list); a run without finished cells draws nothing either. Needs matplotlib and torch
    (the ``validators`` extra), imported only here.

    Example:
        >>> regenerate_figures(StoredRun("r", Path("."), "table1", {}))
        []
    """
    if run.kind == "table1" or not run.records:
        return []
    target = Path(directory) if directory is not None else run.path
    target.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".figures.", dir=target))
    try:
        if run.kind == "figure1":
            from boundcalc.validators import figure1

            summary = summarize_figure1(run)
            drawn = figure1.plot_figure(summary, figure1_slopes(summary),
                                        _config(figure1.Figure1Config, run.params),
                                        scratch / "figure1")
        else:
            from boundcalc.validators import figure2

            drawn = figure2.plot_figure(summarize_figure2(run),
                                        _config(figure2.Figure2Config, run.params),
                                        scratch / "figure2")
        written = []
        for path in drawn:
            final = target / Path(path).name
            os.replace(path, final)
            written.append(final)
        return written
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


__all__ = [
    "KINDS", "TABLE_FORMATS", "Column", "StoredRun", "Table", "build_tables", "detect_kind",
    "expected_cells", "figure1_slopes", "figure1_theory", "fit_slope", "load_run",
    "mean_ci95", "regenerate_figures", "render_tables", "summarize_figure1",
    "summarize_figure2", "summarize_table1", "t_quantile_975",
]
