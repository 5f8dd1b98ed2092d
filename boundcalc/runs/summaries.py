"""Summaries of stored experiment runs: mean ± 95 % CI per cell, the bound beside it, the slopes.

From the finished cells of a run (:class:`boundcalc.runs.stored.StoredRun`) this module computes,
per run:

* **figure1** (per width m): mean and 95 % Student-t CI over seeds (and the geometric mean with
  its t-interval on the log values, ``_gmean`` / ``_gci_low`` / ``_gci_high``, which the figure
  draws on its log axes) of the linearization error,
  the approximation error and the minimum training loss, each next to its theory curve
  (ε_lin, ε_app, Theorem 1's min-iterate bound, evaluated by the calculator
  :func:`boundcalc.calc.api.evaluate`, exactly as the run does), and the log–log slope of the means
  in m with its 95 % CI beside the theory curve's slope;
* **figure2** (per model and lag L): mean and 95 % CI over seeds of the max Jacobian norm, the
  min validation loss and the max loss gradient, each with its geometric mean and interval (the
  statistic the figure draws and the tables show), and the memory per sample (no bound is
  stored);
* **table1** (per (d_m, N)): the lowest test loss and its epoch (one run per cell, so no CI) next
  to the Theorem 5 bound, its verdict against the free yardstick (the held-out loss of the zero
  predictor and of the model at initialization, :func:`table1_row`) and the number of Lemma 4
  conditions that hold;
* **tsweep** (per width m and sequence length T): figure1's three metrics, mean and 95 % CI over
  seeds, next to the same bounds at that T (flat in T: no Transformer bound contains T), and per
  (metric, m) the slope of log(metric) in log T — fitted per seed, mean ± 95 % Student-t CI over
  the seeds (:func:`tsweep_slopes`).

These are the rows of the run's own ``summary.csv`` / ``slopes.csv`` / ``table1.csv``: the
experiments (:mod:`boundcalc.validators.experiments`) write them with these same functions, and
``boundcalc table`` (:mod:`boundcalc.runs.tables`) recomputes them from the stored cells. The
statistics are :mod:`boundcalc.runs.stats`; nothing here imports torch.

Example:
    >>> cells = [{"model": "transformer", "L": 2, "T": 3, "diverged": False, "max_jacobian": j,
    ...           "min_val_loss": 0.5, "max_loss_gradient": 1.0,
    ...           "memory_floats_per_sample": 8} for j in (1.0, 2.0)]
    >>> summarize_figure2_records(cells, [2])[0]["max_jacobian_mean"]
    1.5
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from boundcalc.runs.stats import fit_slope, geometric_mean_ci95, mean_ci95
from boundcalc.runs.stored import (
    FIGURE1_EXTRA,
    FIGURE1_METRICS,
    FIGURE2_MODELS,
    TABLE1_KEYS,
    StoredRun,
    revive,
)
from boundcalc.runs.validation_summary import yardstick_fields

__all__ = ["FIGURE1_THEORY", "FIGURE2_BLOCK", "figure1_run_slopes", "figure1_slopes",
           "figure1_theory", "theorem1_applicability", "tsweep_run_slopes",
           "summarize_figure1", "summarize_figure1_records", "summarize_figure2",
           "summarize_figure2_records", "summarize_table1", "summarize_tsweep", "table1_row",
           "TABLE1_VERDICT_KEYS", "INITIAL_LOSS_COLUMNS", "initial_loss_columns",
           "conditions_text", "not_applicable",
           "summarize_tsweep_records", "tsweep_slopes", "TSWEEP_METRICS"]

#: Panel of figure 1 → the calculator's quantity it is compared with.
FIGURE1_THEORY = {"lin_error": "eps_lin", "app_error": "eps_app",
                  "min_train_loss": "min_iterate", "lin_error_alt": "eps_lin"}
#: Model of figure 2 → the block of parameters whose Jacobian norm is measured.
FIGURE2_BLOCK = {"transformer": "W", "indrnn": "u"}


def figure1_theory(m: int, params: Mapping[str, Any]) -> dict[str, Any]:
    """ε_lin, ε_app (at n samples) and Theorem 1's min-iterate bound with its free bounds B²
    (``trivial_bound_B2``) and Y² (``initial_loss_bound``) (at the n_train training samples) at
    width m — the calculator, as :func:`boundcalc.validators.experiments.figure1.theory_curves` —
    and ``min_iterate_conditions``: ``hold``, or ``not applicable: …`` naming the conditions of
    Theorem 1 that fail (the calculator's own, :attr:`boundcalc.calc.api.Evaluation.conditions`:
    ρ ≥ ν componentwise, δ < ½), which every summary, table and figure shows beside the bound.

    Example:
        >>> p = {"n": 256, "val_fraction": 0.2, "d": 8, "T": 16, "delta": "0.05", "steps": 100,
        ...      "rho": [3.0, 3.0, 3.0], "nu": [3.0, 3.0, 3.0], "activation": "tanh"}
        >>> sorted(figure1_theory(8, p))  # doctest: +NORMALIZE_WHITESPACE
        ['eps_app', 'eps_lin', 'initial_loss_bound', 'min_iterate', 'min_iterate_conditions',
         'trivial_bound_B2']
        >>> figure1_theory(8, {**p, "rho": [2.0, 3.0, 3.0]})["min_iterate_conditions"]
        'not applicable: rho_c >= nu_c fails'
    """
    from boundcalc.calc.api import evaluate
    from boundcalc.inputs.params import validate

    def text(v: Iterable[float]) -> str:
        return ",".join(repr(float(x)) for x in v)

    n = int(params["n"])
    n_train = n - int(float(params["val_fraction"]) * n)
    out: dict[str, Any] = {}
    for count, keys in ((n, ("eps_lin", "eps_app")),
                        (n_train, ("min_iterate", "trivial_bound_B2", "initial_loss_bound"))):
        res = evaluate("theorem1", validate(
            m=int(m), n=count, d=params["d"], T=params["T"], delta=params["delta"],
            rho=text(params["rho"]), nu=text(params["nu"]), steps=params["steps"],
            activation=params["activation"]))
        for key in keys:
            out[key] = float(res.bound[key] if key in res.bound else res.constants[key])
    out["min_iterate_conditions"] = conditions_text(res.conditions)
    return out


def conditions_text(conditions: Iterable[Any]) -> str:
    """``hold`` when every condition of an evaluation holds, else ``not applicable: `` and the
    failing ones as the calculator words them (:class:`boundcalc.calc.api.Evaluation`'s
    ``conditions``; ``rho_c >= nu_c fails``).

    Example:
        >>> from types import SimpleNamespace as C
        >>> conditions_text([C(holds=True, detail="m even holds (m = 8)")])
        'hold'
        >>> conditions_text([C(holds=False, detail="delta < 1/2 FAILS (delta = 0.6): why")])
        'not applicable: delta < 1/2 fails'
    """
    failing = [str(c.detail).split(" FAILS")[0].strip() + " fails"
               for c in conditions if not c.holds]
    return "hold" if not failing else "not applicable: " + "; ".join(failing)


def not_applicable(row: Mapping[str, Any], key: str = "min_train_loss_conditions") -> str:
    """The ``not applicable: …`` text of a summary row whose bound's conditions fail, else
    ``""`` (a row of a run summarized before the column existed: ``""``).

    Example:
        >>> not_applicable({"min_train_loss_conditions": "not applicable: rho_c >= nu_c fails"})
        'not applicable: rho_c >= nu_c fails'
        >>> not_applicable({"min_train_loss_conditions": "hold"}), not_applicable({})
        ('', '')
    """
    text = row.get(key)
    return text if isinstance(text, str) and text.startswith("not applicable") else ""



def theorem1_applicability(rows: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """(label, caption sentence) of Theorem 1's bound in a figure of the summary ``rows``:
    ``("Theorem 1", "")`` where its conditions hold in every row, else ``("Theorem 1 (not
    applicable)", …)`` with a sentence naming the failing conditions (the calculator's, as the
    summary's ``min_train_loss_conditions`` records them).

    Example:
        >>> theorem1_applicability([{"min_train_loss_conditions": "hold"}])
        ('Theorem 1', '')
        >>> rows = [{"min_train_loss_conditions": "not applicable: rho_c >= nu_c fails"}]
        >>> theorem1_applicability(rows)[0]
        'Theorem 1 (not applicable)'
    """
    texts = [t.removeprefix("not applicable: ")
             for t in dict.fromkeys(not_applicable(r) for r in rows) if t]
    if not texts:
        return "Theorem 1", ""
    return ("Theorem 1 (not applicable)",
            f"\nTheorem 1 is not applicable at these settings ({'; '.join(texts)}): its bound, "
            f"drawn for reference, guarantees nothing here.")

def _geometric(key: str, values: Sequence[float | None]) -> dict[str, float]:
    """``<key>_gmean``, ``<key>_gci_low``, ``<key>_gci_high``: the geometric mean over seeds and
    its 95 % t-interval on the log values (:func:`boundcalc.runs.stats.geometric_mean_ci95`), what
    the figures draw on their log axes.

    Example:
        >>> {k: round(v, 4) for k, v in _geometric("x", [2.0, 8.0, 4.0]).items()}
        {'x_gmean': 4.0, 'x_gci_low': 0.7149, 'x_gci_high': 22.38}
    """
    gmean, low, high, _ = geometric_mean_ci95(values)
    return {f"{key}_gmean": gmean, f"{key}_gci_low": low, f"{key}_gci_high": high}


def _figure1_metrics(records: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """The three panels, and the extra metrics every record has (runs before they existed
    lack them)."""
    extra = tuple(k for k in FIGURE1_EXTRA if records and all(k in r for r in records))
    return FIGURE1_METRICS + extra


def summarize_figure1(run: StoredRun) -> list[dict[str, Any]]:
    """One row per width with finished cells: the columns of the run's ``summary.csv``
    (``m``, ``seeds``, ``<metric>_mean``, ``<metric>_ci95``, ``<metric>_theory``).

    Example:
        >>> from pathlib import Path
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
            values = [revive(r[key]) for r in cell]
            mean, ci, _ = mean_ci95(values)
            row[f"{key}_mean"], row[f"{key}_ci95"] = mean, ci
            row.update(_geometric(key, values))
        curves = figure1_theory(m, params)
        for key in metrics:
            row[f"{key}_theory"] = curves[FIGURE1_THEORY[key]]
        row.update(initial_loss_columns(cell, curves))
        rows.append(row)
    return rows


#: Figure 1's and the T sweep's columns of panel (c)'s free yardstick
#: (:func:`initial_loss_columns`).
INITIAL_LOSS_COLUMNS = ("initial_train_loss_mean", "initial_train_loss_ci95",
                        "initial_train_loss_gmean", "initial_train_loss_gci_low",
                        "initial_train_loss_gci_high", "trivial_bound_B2", "initial_loss_bound",
                        "min_train_loss_free_bound", "min_train_loss_free_bound_key",
                        "min_train_loss_verdict", "min_train_loss_conditions")


def initial_loss_columns(cell: Sequence[Mapping[str, Any]],
                         curves: Mapping[str, float]) -> dict[str, Any]:
    """Panel (c)'s free yardstick at one width (:data:`INITIAL_LOSS_COLUMNS`): the measured
    training loss at initialization R̂(θ_0) over seeds (``initial_train_loss``: mean, CI,
    geometric mean and interval; absent from cells written without it), B² and Y² of the same
    evaluation as the bound, and Theorem 1's min-iterate bound against the smallest of B², Y²
    and every seed's R̂(θ_0) (``min_train_loss_free_bound``, ``…_key``, ``…_verdict``; k = 0 is
    an iterate, so min_k R̂(θ_k) ≤ R̂(θ_0) with no theorem), and whether Theorem 1's conditions
    hold (``min_train_loss_conditions``, from ``curves["min_iterate_conditions"]``): where one
    fails the verdict is the calculator's ``not_guaranteed``, never ``vacuous`` or
    ``informative``.

    Example:
        >>> cols = initial_loss_columns([{"initial_train_loss": 0.004},
        ...                              {"initial_train_loss": 0.009}],
        ...                             {"min_iterate": 8960.0, "trivial_bound_B2": 648.3,
        ...                              "initial_loss_bound": 81.0})
        >>> cols["min_train_loss_free_bound"], cols["min_train_loss_verdict"]
        (0.004, 'vacuous')
    """
    out: dict[str, Any] = {"trivial_bound_B2": curves["trivial_bound_B2"],
                           "initial_loss_bound": curves["initial_loss_bound"]}
    free = {"trivial_bound_B2": curves["trivial_bound_B2"],
            "initial_loss_bound": curves["initial_loss_bound"]}
    if cell and all("initial_train_loss" in r for r in cell):
        values = [revive(r["initial_train_loss"]) for r in cell]
        mean, ci, _ = mean_ci95(values)
        out.update({"initial_train_loss_mean": mean, "initial_train_loss_ci95": ci,
                    **_geometric("initial_train_loss", values)})
        free["initial_loss"] = min(values)
    fields = yardstick_fields(curves["min_iterate"], free)
    conditions = str(curves.get("min_iterate_conditions", "hold"))
    out.update({"min_train_loss_free_bound": fields["free_bound"],
                "min_train_loss_free_bound_key": fields["free_bound_key"],
                "min_train_loss_verdict": fields["verdict"] if conditions == "hold"
                else "not_guaranteed",
                "min_train_loss_conditions": conditions})
    return out


def figure1_slopes(summary: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per panel (the columns of ``slopes.csv``): log–log slope in m of the geometric means
    over seeds (the markers the figure draws, so the fitted line runs through them) with its 95 %
    CI and intercept, the theory curve's slope, and the number of widths.

    Example:
        >>> rows = [{"m": m, **{f"{k}_{s}": 1 / m for k in FIGURE1_METRICS
        ...                     for s in ("gmean", "theory")}} for m in (8, 16, 32)]
        >>> [round(r["slope"], 9) for r in figure1_slopes(rows)]
        [-1.0, -1.0, -1.0]
    """
    ms = [r["m"] for r in summary]
    rows = []
    present = [k for k in FIGURE1_EXTRA if summary and all(f"{k}_gmean" in r for r in summary)]
    for key in FIGURE1_METRICS + tuple(present):
        slope, ci, intercept = fit_slope(ms, [r[f"{key}_gmean"] for r in summary])
        theory, _, _ = fit_slope(ms, [r[f"{key}_theory"] for r in summary])
        rows.append({"panel": key, "slope": slope, "slope_ci95": ci, "intercept": intercept,
                     "theory_slope": theory, "widths": len(ms)})
    return rows


def figure1_run_slopes(run: StoredRun, summary: Sequence[Mapping[str, Any]]
                       ) -> list[dict[str, Any]]:
    """:func:`figure1_slopes` of a stored figure-1 run's ``summary`` (its registry row's
    ``slopes``).

    Example:
        >>> run = StoredRun("r", __import__("pathlib").Path("."), "figure1", {"widths": []})
        >>> [row["panel"] for row in figure1_run_slopes(run, [])]
        ['lin_error', 'app_error', 'min_train_loss']
    """
    return figure1_slopes(summary)


def summarize_figure2(run: StoredRun) -> list[dict[str, Any]]:
    """One row per (model, L) with finished cells: the columns of the run's ``summary.csv``.

    Example:
        >>> cells = [{"model": "indrnn", "L": 4, "T": 5, "diverged": False, "max_jacobian": j,
        ...           "min_val_loss": 0.5, "max_loss_gradient": 1.0,
        ...           "memory_floats_per_sample": 16} for j in (1.0, 3.0)]
        >>> from pathlib import Path
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
            cell = [{k: revive(v) for k, v in r.items()} for r in records
                    if r["model"] == model and r["L"] == L]
            if not cell:
                continue
            jac_mean, jac_ci, _ = mean_ci95([r["max_jacobian"] for r in cell])
            val_mean, val_ci, _ = mean_ci95([r["min_val_loss"] for r in cell])
            grad_mean, grad_ci, _ = mean_ci95([r["max_loss_gradient"] for r in cell])
            geometric = {**_geometric("max_jacobian", [r["max_jacobian"] for r in cell]),
                         **_geometric("min_val_loss", [r["min_val_loss"] for r in cell]),
                         **_geometric("max_loss_gradient",
                                      [r["max_loss_gradient"] for r in cell])}
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
                **geometric,
            })
    return rows


def summarize_table1(run: StoredRun) -> list[dict[str, Any]]:
    """One row per finished (d_m, N) cell: the columns of the run's ``table1.csv``
    (:func:`table1_row`).

    Example:
        >>> cell = {k: 0 for k in TABLE1_KEYS} | {"d_m": 16, "N": 64, "wall_s": 1.0}
        >>> from pathlib import Path
        >>> list(summarize_table1(StoredRun("r", Path("."), "table1", {}, [cell]))[0])[:3]
        ['d_m', 'N', 'lowest_test_loss']
    """
    return [table1_row(r) for r in run.records]


#: The columns of a table1 row after the stored cell's (:data:`TABLE1_KEYS`): the Theorem 5 bound
#: against its free yardstick (:func:`table1_row`).
TABLE1_VERDICT_KEYS = ("zero_predictor_test_loss", "initial_test_loss", "theorem5_free_bound",
                       "theorem5_free_bound_key", "theorem5_verdict", "under_bound")

#: The held-out logistic loss of the zero predictor (logit 0 on every sample): log 2, exactly.
#: Cells written before table 1 measured it get this value.
ZERO_LOGIT_LOSS = math.log(2.0)


def table1_row(record: Mapping[str, Any]) -> dict[str, Any]:
    """A table1 cell as a row of ``table1.csv``: :data:`TABLE1_KEYS`, then the Theorem 5 bound
    against its free yardstick — the smaller of the held-out loss of the zero predictor (the
    logistic loss at logit 0, log 2; measured by the run, log 2 for cells written before) and of
    the model at initialization (epoch 0; absent from older cells). ``theorem5_verdict``:
    ``vacuous`` (bound ≥ yardstick), else ``not_guaranteed`` (a Lemma 4 condition fails, Lemma
    4 does not apply: GD on the cross-entropy, or the cell's Theorem 5 ``probability`` is below
    ½), else ``informative``. ``under_bound``: ``yes`` or
    ``no`` (lowest test loss ≤ bound) with that verdict beside it, never alone.

    Example:
        >>> cell = {"theorem5_bound": 640.0, "lowest_test_under_bound": True,
        ...         "initial_test_loss": 0.70, "zero_predictor_test_loss": 0.6931}
        >>> row = table1_row(cell)
        >>> row["under_bound"], row["theorem5_free_bound_key"]
        ('yes, vacuous', 'zero_predictor_test_loss')
    """
    row: dict[str, Any] = {k: record.get(k) for k in TABLE1_KEYS}
    zero = revive(record.get("zero_predictor_test_loss", ZERO_LOGIT_LOSS))
    initial = revive(record.get("initial_test_loss"))
    bound = revive(record.get("theorem5_bound"))
    conditions = (bool(record.get("all_conditions_hold"))
                  and bool(record.get("lemma4_applies", False)))
    fields = yardstick_fields(bound, {"zero_predictor_test_loss": zero,
                                      "initial_test_loss": initial}, conditions,
                              revive(record.get("probability")))
    finite = isinstance(bound, (int, float)) and math.isfinite(bound)
    under = "yes" if record.get("lowest_test_under_bound") else "no"
    row.update({"zero_predictor_test_loss": zero, "initial_test_loss": initial,
                "theorem5_free_bound": fields["free_bound"],
                "theorem5_free_bound_key": fields["free_bound_key"],
                "theorem5_verdict": fields["verdict"] if finite else None,
                "under_bound": f"{under}, {fields['verdict']}" if finite else "no bound"})
    return row


#: The T sweep's quantities: figure 1's three, and the minimum training loss relative to the
#: label power (``min_train_loss / label_rms²``: the teacher's label scale changes with T).
TSWEEP_METRICS = (*FIGURE1_METRICS, "rel_min_train_loss")


def _tsweep_value(record: Mapping[str, Any], key: str) -> float:
    """A T-sweep quantity of one cell; ``rel_min_train_loss`` is derived from the stored
    ``min_train_loss`` and ``label_rms`` (NaN where the cell lacks them)."""
    if key != "rel_min_train_loss":
        return revive(record[key])
    loss, rms = revive(record.get("min_train_loss")), revive(record.get("label_rms"))
    ok = all(isinstance(v, (int, float)) and math.isfinite(v) for v in (loss, rms)) and rms > 0
    return loss / rms**2 if ok else math.nan


def summarize_tsweep(run: StoredRun) -> list[dict[str, Any]]:
    """One row per (m, T) with finished cells: the columns of a tsweep run's ``summary.csv``.

    Example:
        >>> from pathlib import Path
        >>> run = StoredRun("r", Path("."), "tsweep", {"widths": [8], "Ts": [4]}, [],
        ...                 ["m8-T4-seed1"])
        >>> summarize_tsweep(run)
        []
    """
    return summarize_tsweep_records(run.records, run.params)


def summarize_tsweep_records(records: Sequence[Mapping[str, Any]],
                             params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per width m (``params["widths"]``), per sequence length T (``params["Ts"]``): ``m``,
    ``T``, ``seeds``, ``<metric>_mean``, ``<metric>_ci95``, the geometric mean over seeds with
    its 95 % t-interval on the log values (``<metric>_gmean``, ``_gci_low``, ``_gci_high``) and
    ``<metric>_theory`` (the calculator's bound at that (m, T), :func:`figure1_theory`; NaN for
    ``rel_min_train_loss``, which no bound is stated for), for every metric of
    :data:`TSWEEP_METRICS`; what ``reproduce tsweep`` writes as ``summary.csv``."""
    rows = []
    for m in params["widths"]:
        for T in params["Ts"]:
            cell = [r for r in records if r["m"] == m and r["T"] == T]
            if not cell:
                continue
            row: dict[str, Any] = {"m": m, "T": T, "seeds": len(cell)}
            for key in TSWEEP_METRICS:
                values = [_tsweep_value(r, key) for r in cell]
                mean, ci, _ = mean_ci95(values)
                row[f"{key}_mean"], row[f"{key}_ci95"] = mean, ci
                # the geometric mean and its t-interval on the log values: what the figure
                # draws on its log axes, where the slope is fitted
                logs = [math.log(v) for v in values if v is not None and math.isfinite(v)
                        and v > 0]
                lmean, lci, _ = mean_ci95(logs)
                row[f"{key}_gmean"] = math.exp(lmean) if logs else math.nan
                row[f"{key}_gci_low"] = math.exp(lmean - lci) if math.isfinite(lci) else math.nan
                row[f"{key}_gci_high"] = math.exp(lmean + lci) if math.isfinite(lci) else math.nan
            curves = figure1_theory(m, {**params, "T": T})
            for key in TSWEEP_METRICS:
                row[f"{key}_theory"] = (curves[FIGURE1_THEORY[key]] if key in FIGURE1_THEORY
                                        else math.nan)
            row.update(initial_loss_columns(cell, curves))
            rows.append(row)
    return rows


def tsweep_slopes(records: Sequence[Mapping[str, Any]], summary: Sequence[Mapping[str, Any]],
                  params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per (metric of :data:`TSWEEP_METRICS`, m): the slope of log(metric) in log T.

    ``slope`` ± ``slope_ci95``: the least-squares slope fitted to each seed's own cells (every T
    of that seed; the seed's init θ(0) is the same at every T, so the fit is paired), then mean
    and 95 % Student-t CI over the seeds (k − 1 degrees of freedom; NaN CI for one seed).
    ``slope_of_means`` ± ``slope_of_means_ci95``: the fit to the per-T means (regression CI, as
    figure1's slopes). ``theory_slope``: the same fit to the bound (0: flat in T).
    ``change``: exp(slope · log(T_max/T_min)), the factor the fitted line changes by over the
    sweep. Seeds with fewer than two finished T are left out.

    Example:
        >>> cells = [{"seed": s, "m": 8, "T": T, "lin_error": T ** 0.0 * s,
        ...           "app_error": 1.0, "min_train_loss": 1.0} for s in (1, 2) for T in (4, 16)]
        >>> rows = [{"m": 8, "T": T, **{f"{k}_{x}": 1.0 for k in FIGURE1_METRICS
        ...                             for x in ("mean", "theory")}} for T in (4, 16)]
        >>> slopes = [r["slope"] for r in tsweep_slopes(cells, rows, {"widths": [8]})][:3]
        >>> [abs(round(s, 12)) for s in slopes]  # abs: the sign of a zero fit is BLAS's choice
        [0.0, 0.0, 0.0]
    """
    out = []
    for m in params["widths"]:
        rows = [r for r in summary if r["m"] == m]
        Ts = [r["T"] for r in rows]
        for key in TSWEEP_METRICS:
            per_seed = []
            for seed in dict.fromkeys(r["seed"] for r in records if r["m"] == m):
                mine = [r for r in records if r["m"] == m and r["seed"] == seed]
                if len(mine) >= 2:
                    slope, _, _ = fit_slope([r["T"] for r in mine],
                                            [_tsweep_value(r, key) for r in mine])
                    per_seed.append(slope)
            mean, ci, k = mean_ci95(per_seed)
            of_means, of_means_ci, _ = fit_slope(Ts, [r.get(f"{key}_mean", math.nan)
                                                      for r in rows])
            bound = [r.get(f"{key}_theory", math.nan) for r in rows]
            # a bound equal at every T has slope 0 exactly (not the fit's rounding)
            theory = 0.0 if bound and min(bound) == max(bound) else fit_slope(Ts, bound)[0]
            span = math.log(max(Ts) / min(Ts)) if Ts else math.nan
            out.append({"panel": key, "m": m, "slope": mean, "slope_ci95": ci, "seeds": k,
                        "slope_of_means": of_means, "slope_of_means_ci95": of_means_ci,
                        "theory_slope": theory, "change": math.exp(mean * span)
                        if math.isfinite(mean) and math.isfinite(span) else math.nan,
                        "Ts": len(Ts)})
    return out


def tsweep_run_slopes(run: StoredRun, summary: Sequence[Mapping[str, Any]]
                      ) -> list[dict[str, Any]]:
    """:func:`tsweep_slopes` of a stored T-sweep run's cells and ``summary`` (its registry
    row's ``slopes``).

    Example:
        >>> run = StoredRun("r", __import__("pathlib").Path("."), "tsweep", {"widths": []})
        >>> tsweep_run_slopes(run, [])
        []
    """
    return tsweep_slopes(run.records, summary, run.params)
