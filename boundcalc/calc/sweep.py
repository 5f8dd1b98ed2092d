"""The grid of a sweep: parse the flags' lists and ranges, check every value, evaluate.

A sweep flag takes one value, a comma list (``1e3,1e6``), an additive range ``start:stop:step``
or a geometric range ``start:stop:xF``; :func:`build_sweep` checks every distinct value with the
single-point rules of :func:`boundcalc.inputs.params.validate`, lays the axes out as an open grid
(each axis its own numpy dimension, so a quantity depending on m only is computed once per m) and
evaluates it with :func:`boundcalc.calc.evaluator.evaluate_grid` in float64. The axes are generated
from :data:`boundcalc.inputs.params.PARAMS`: one per scalar parameter (named by its column), and for
ρ and ν a uniform axis (``--rho``, the three components alike) plus one per component
(``--rho-c`` ...); prop2 also takes ``--alpha``, the IndRNN's recurrent scale α, as an axis
(:data:`ALPHA_AXIS`, evaluated by :func:`boundcalc.calc.compare_rnn.evaluate_prop2_grid`). Rows
whose values overflow float64 say ``overflow``, never ``inf``; a value float64 cannot hold (beyond
its range, or nonzero and rounding to 0.0) is an input error, and so is a range of more values than
the row limit, however fine its step.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from boundcalc.inputs.combinations import check_combinations
from boundcalc.inputs.params import (
    DEFAULTS,
    PARAMS,
    SWEEP_KINDS,
    validate,
)
from boundcalc.inputs.rules import apply_rules
from boundcalc.inputs.surfaces import ALPHA
from boundcalc.inputs.sweep_values import check_row_count, choose_columns, parse_values
from boundcalc.theory.catalog import base_name

__all__ = ["ALPHA_AXIS", "SWEEP_AXES", "SWEEP_INPUTS", "build_sweep", "select_columns"]

def _axes() -> tuple[tuple[str, str, str], ...]:
    axes = []
    for p in PARAMS.values():
        if p.kind == "activation":
            continue
        if p.kind == "triple":
            axes.append((p.name, p.flag, p.name))
            axes += [(col, f"{p.flag}-{col[-1]}", p.name) for col in p.columns]
        else:
            axes.append((p.columns[0], p.flag, SWEEP_KINDS[p.kind]))
    return tuple(axes)


#: Sweep axes in row order: (axis, flag, kind). ``rho`` / ``nu`` are uniform axes (one value for
#: the three components); ``rho_c`` ... are per-component axes, present only when given.
SWEEP_AXES: tuple[tuple[str, str, str], ...] = _axes()

#: The :func:`boundcalc.inputs.params.validate` keyword of each axis.
_VALIDATE_KEY: dict[str, str] = {
    (p.name if p.kind == "triple" else p.columns[0]): p.name for p in PARAMS.values()
}

#: The axis (and input column) of the IndRNN's recurrent scale α: ``--alpha``, prop2 only.
ALPHA_AXIS = "alpha"

#: Input columns of a sweep, in order.
SWEEP_INPUTS: tuple[str, ...] = tuple(
    col for p in PARAMS.values() if p.kind != "activation" for col in p.columns)


def _check_sweep_value(axis: str, flag: str, kind: str, value: str) -> None:
    """Check one distinct sweep value with its parameter's row, naming the sweep's flag."""
    row = PARAMS[kind if kind in ("rho", "nu") else _VALIDATE_KEY[axis]]
    (row if row.flag == flag else replace(row, flag=flag)).check(value)


def _alpha_values(statement: str, spec: str | None) -> list[str] | None:
    """The values of ``--alpha`` (None when not given); it is a flag of prop2 only, each value a
    finite α > 0."""
    if spec is None:
        return None
    check_combinations("sweep", {"alpha": spec, "statement": base_name(statement)})
    values = parse_values("--alpha", spec)
    for value in values:
        ALPHA.check(value)
    return values


def _source_axis(column: str, axes: Mapping[str, Any]) -> str:
    """The axis a sweep input column takes its values from (rho_u from --rho-u, else --rho)."""
    if column in axes:
        return column
    if column[:-2] in ("rho", "nu") and column[:-2] in axes:
        return column[:-2]
    return column


def _sweep_axes(given: Mapping[str, str | None]) -> dict[str, tuple[str, str, str]]:
    """(spec, flag, kind) per axis: the flags given, else the defaults; the uniform --rho / --nu
    axis only when some component takes its value from it; η only when given (else η*)."""
    axes = {}
    for axis, flag, kind in SWEEP_AXES:
        spec = given.get(axis)
        if axis in ("rho", "nu"):
            if all(given.get(f"{axis}_{c}") is not None for c in "cuw"):
                continue
            spec = spec if spec is not None else str(DEFAULTS[axis])
        elif spec is None and kind not in ("rho", "nu"):
            default = DEFAULTS[_VALIDATE_KEY[axis]]
            spec = None if default is None else str(default)
        if spec is not None:
            axes[axis] = (spec, flag, kind)
    return axes


def build_sweep(statement: str, given: Mapping[str, str | None], activation: str | None):
    """Validate the sweep flags and evaluate the grid; returns (DataFrame, swept columns).

    ``statement`` is a registry key (``theorem1_paper`` for the paper route). A statement with a
    proof route gets a constant ``route`` column, one with the free bounds B² and Y² a
    ``verdict`` column (categorical: guaranteed, vacuous, not_guaranteed; min_iterate against
    min(B², Y²), see :func:`boundcalc.calc.api.verdict_column`) and an ``average_iterate_verdict``
    column (average_iterate against B²). ``conditions_hold`` says whether every condition holds;
    ``probability_sufficient`` whether the row's probability reaches its ``min_probability``
    (``--min-probability``, default ½; float64; below it a row that would be guaranteed is
    not_guaranteed, a vacuous one stays vacuous);
    ``guaranteed`` whether the row says something (its verdict is guaranteed; for a statement
    without a verdict, its conditions hold, its probability suffices and nothing overflows).
    ``given`` maps each axis of :data:`SWEEP_AXES` (and :data:`ALPHA_AXIS`, prop2 only: an
    ``alpha`` column) to its flag's text, None: not given.

    Example:
        >>> df, swept = build_sweep("theorem1", {"m": "8,16", "rho": "1,2"}, None)
        >>> len(df), swept, list(df["rho_u"])
        (4, ['m', 'rho_c', 'rho_u', 'rho_w'], [1.0, 2.0, 1.0, 2.0])
        >>> df, _ = build_sweep("theorem1", {"m": "8,4096", "rho": "0.5,3"}, None)
        >>> list(df["verdict"]), df["route"][0]
        (['not_guaranteed', 'vacuous', 'not_guaranteed', 'guaranteed'], 'tight')
        >>> df, _ = build_sweep("theorem1", {"m": "8,8192", "rho": "1"}, None)
        >>> list(df["verdict"]), list(df["guaranteed"]), list(df["conditions_hold"])
        (['vacuous', 'guaranteed'], [False, True], [True, True])
        >>> df, _ = build_sweep("theorem1", {"m": "8192", "rho": "1", "delta": "0.05,0.49"}, None)
        >>> list(df["probability"].round(2)), list(df["verdict"])
        ([0.9, 0.02], ['guaranteed', 'not_guaranteed'])
        >>> df, swept = build_sweep("prop2", {"m": "200000", "alpha": "0.5,1.5"}, None)
        >>> swept, list(df["alpha"]), list(df["verdict"])
        (['alpha'], [0.5, 1.5], ['guaranteed', 'vacuous'])
    """
    from decimal import Decimal

    import numpy as np
    import pandas as pd

    from boundcalc.calc.api import (
        AVERAGE_BOUND,
        FREE_BOUND_KEYS,
        OVERFLOW,
        TRIVIAL_KEY,
        VERDICTS,
        has_verdict,
        verdict_column,
    )
    from boundcalc.calc.evaluator import activation_values, compiled_statement, evaluate_grid

    st = compiled_statement(statement)
    specs = _sweep_axes(given)
    values: dict[str, list[str]] = {}
    for axis, (spec, flag, kind) in specs.items():
        values[axis] = parse_values(flag, spec)
        for v in values[axis]:
            _check_sweep_value(axis, flag, kind, v)
    alphas = _alpha_values(statement, given.get(ALPHA_AXIS))
    if alphas is not None:
        values[ALPHA_AXIS] = alphas
        specs[ALPHA_AXIS] = (str(given[ALPHA_AXIS]), "--alpha", "real")
    rows = check_row_count({specs[a][1]: v for a, v in values.items()})
    nu_sources = [_source_axis(f"nu_{c}", values) for c in "cuw"]
    # the row with the smallest ν: η* must be defined in every row
    smallest_nu = tuple(min(Decimal(v) for v in values[a]) for a in nu_sources)
    apply_rules("calculator", {"nu": smallest_nu, "eta_star": "eta" not in values and st.step,
                               "sweep": True})
    act_name = validate(activation=activation or DEFAULTS["activation"], eta="1").activation
    sigmas = [float(v) for v in activation_values(act_name, 30)]
    axes = list(values)
    shape = tuple(len(values[a]) for a in axes)
    int_axes = {a for a, _, kind in SWEEP_AXES if kind == "int"}
    grid: dict[str, Any] = {}
    int64_max = np.iinfo(np.int64).max
    for position, axis in enumerate(axes):
        exact = [int(Decimal(v)) if axis in int_axes else float(v) for v in values[axis]]
        as_int = axis in int_axes and all(abs(v) <= int64_max for v in exact)
        raw = np.array(exact if as_int else [float(v) for v in exact],
                       dtype=np.int64 if as_int else float)
        view = [1] * len(axes)
        view[position] = len(raw)
        grid[axis] = raw.reshape(view)
    columns: dict[str, Any] = {}
    for column in SWEEP_INPUTS:
        source = _source_axis(column, grid)
        columns[column] = grid[source].astype(float) if source in grid else None
    columns.update(zip(("sigma0", "sigma1", "sigma2"), sigmas, strict=True))
    if ALPHA_AXIS in grid:  # prop2 at the recurrent scales given
        from boundcalc.calc.compare_rnn import evaluate_prop2_grid

        result = evaluate_prop2_grid(columns, grid[ALPHA_AXIS])
    else:
        result = evaluate_grid(statement, columns)
    frame: dict[str, Any] = {}
    for column in SWEEP_INPUTS:
        source = _source_axis(column, grid)
        data = grid[source] if source in grid else np.asarray(result[column], dtype=float)
        frame[column] = _flat(np.broadcast_to(data, shape))
    if ALPHA_AXIS in grid:
        frame[ALPHA_AXIS] = _flat(np.broadcast_to(grid[ALPHA_AXIS], shape))
    frame["activation"] = np.full(rows, act_name, dtype=object)
    for s, value in zip(("sigma0", "sigma1", "sigma2"), sigmas, strict=True):
        frame[s] = np.full(rows, value)
    if st.route:
        frame["route"] = np.full(rows, st.route, dtype=object)
    for group in ("constants", "terms", "bound"):
        for key in getattr(st, group):
            frame[f"{group}.{key}"] = _flat(np.broadcast_to(result[f"{group}.{key}"], shape))
    # (an axis that is no argument of the statement, --min-probability, broadcasts the results)
    frame["probability"] = _flat(np.broadcast_to(result["probability"], shape))
    # float64 overflow of the grid evaluation (the inputs are finite): an explicit text cell
    outputs = [c for c in frame if c.startswith(("constants.", "terms.", "bound."))
               or c == "probability"]
    overflow = np.zeros(rows, dtype=bool)
    for column in outputs:
        bad = ~np.isfinite(frame[column])
        if bad.any():
            overflow |= bad
            cells = frame[column].astype(object)
            cells[bad] = OVERFLOW
            frame[column] = cells
    conditions_hold = np.ones(rows, dtype=bool)
    for cond in st.conditions:
        holds = _flat(np.broadcast_to(result[f"condition.{cond.name}"], shape))
        frame[f"condition.{cond.name}"] = holds
        conditions_hold &= holds
    frame["conditions_hold"] = conditions_hold

    def column(name: str) -> Any:
        return np.where(overflow, np.nan, frame[name]).astype(float)

    # the statement's probability against --min-probability (a NaN probability never reaches it)
    with np.errstate(invalid="ignore"):
        probable = column("probability") >= np.asarray(frame["min_probability"], dtype=float)
    frame["probability_sufficient"] = probable
    codes = None
    if has_verdict(statement):
        free = np.minimum.reduce([column(f"constants.{k}") for k in FREE_BOUND_KEYS
                                  if k in st.constants])
        codes = verdict_column(conditions_hold, column("bound.min_iterate"), free,
                               column("probability"), frame["min_probability"])
        codes[overflow] = VERDICTS.index(OVERFLOW)
    elif overflow.any():  # a statement without B²: the column appears only with an overflow
        codes = np.where(conditions_hold & probable, 0, 2).astype(np.int8)
        codes[overflow] = VERDICTS.index(OVERFLOW)
    frame["guaranteed"] = (conditions_hold & probable & ~overflow if codes is None
                           else codes == VERDICTS.index("guaranteed"))
    if codes is not None:
        frame["verdict"] = pd.Categorical.from_codes(codes, categories=list(VERDICTS))
    if has_verdict(statement) and f"bound.{AVERAGE_BOUND}" in frame:
        average = verdict_column(conditions_hold, column(f"bound.{AVERAGE_BOUND}"),
                                 column(f"constants.{TRIVIAL_KEY}"), column("probability"),
                                 frame["min_probability"])
        average[overflow] = VERDICTS.index(OVERFLOW)
        frame["average_iterate_verdict"] = pd.Categorical.from_codes(
            average, categories=list(VERDICTS))
    swept = [c for c in (*SWEEP_INPUTS, ALPHA_AXIS)
             if _source_axis(c, grid) in values and len(values[_source_axis(c, grid)]) > 1]
    return pd.DataFrame(frame, copy=False), swept  # no copy: the columns are fresh arrays


def _flat(array: Any) -> Any:
    """One row per grid point, as an array the DataFrame owns (evaluate_grid returns read-only
    broadcast views)."""
    flat = array.reshape(-1)
    return flat if flat.flags.writeable and flat.base is None else flat.copy()


def select_columns(df: Any, spec: str | None, fmt: str, swept: Sequence[str]) -> list[str]:
    names = [str(c) for c in df.columns]
    if spec is None:
        if fmt != "table":
            return names
        keep = list(swept) or ["m"]
        keep += [c for c in names if c.startswith(("terms.", "bound."))]
        return keep + ["probability", "guaranteed"] + (["verdict"] if "verdict" in names else [])
    return choose_columns(spec, names)
