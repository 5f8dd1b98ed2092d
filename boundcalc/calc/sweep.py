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

import sys
from collections.abc import Mapping, Sequence
from decimal import ROUND_FLOOR, Decimal, InvalidOperation, localcontext
from typing import Any

from boundcalc.inputs.params import (
    DEFAULTS,
    PARAMS,
    SWEEP_KINDS,
    InputError,
    parse_number,
    validate,
)
from boundcalc.theory.catalog import base_name

__all__ = ["ALPHA_AXIS", "MAX_ROWS", "SWEEP_AXES", "SWEEP_INPUTS", "build_sweep", "count_values",
           "parse_values", "select_columns"]

#: Largest number of sweep rows (and of values of one flag): 2**20.
MAX_ROWS = 2**20


_FLOAT_MAX = Decimal(sys.float_info.max)
#: Smallest positive float64 (subnormal); a nonzero value below half of it rounds to 0.0.
_FLOAT_TRUE_MIN = 5e-324
#: Significant digits of the quotients that count a range's values: far more than a count up to
#: :data:`MAX_ROWS` needs, and the exponents of float64-range values fit the context.
_COUNT_DIGITS = 40


def _decimal(flag: str, text: str, whole: str) -> Decimal:
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        raise InputError(flag, f"must be a number, a comma list or a range start:stop:step "
                               f"(or start:stop:xF), got {whole!r}") from None
    if not value.is_finite():
        raise InputError(flag, f"must be finite, got {whole!r}")
    if abs(value) > _FLOAT_MAX:
        raise InputError(flag, f"{text.strip()} is beyond the float64 range of a sweep (|value| "
                               f"<= {sys.float_info.max:.4g}; a sweep evaluates in float64), got "
                               f"{whole!r}")
    if value and not float(value):  # rounds to 0.0: the float64 row would silently differ
        raise InputError(flag, f"{text.strip()} is below the float64 range of a sweep (a nonzero "
                               f"|value| >= {_FLOAT_TRUE_MIN:.2g}; a sweep evaluates in float64), "
                               f"got {whole!r}")
    return value


def _text(value: Decimal) -> str:
    """Shortest plain decimal text of ``value`` (``Decimal('2E+3')`` → ``'2000'``)."""
    if value == value.to_integral_value():
        return str(int(value))
    return format(value.normalize(), "f")


def count_values(flag: str, spec: str) -> int:
    """How many values :func:`parse_values` would give, without building them (at most one more
    than it gives, for a stop within rounding of the last step); any range of float64 values,
    however fine its step (``2:8:1e-300``), gives a count, never an arithmetic error.

    Example:
        >>> count_values("--n", "1:1000000:1"), count_values("--rho", "2:8:1e-300") > 10**300
        (1000000, True)
    """
    spec = str(spec).strip()
    if ":" not in spec:
        return len([p for p in spec.split(",")])
    start, stop, step, geometric = _range_parts(flag, spec)
    with localcontext() as ctx:
        ctx.prec, ctx.Emax, ctx.Emin = _COUNT_DIGITS, 99999, -99999
        if geometric:
            steps = (stop / start).ln() / step.ln() + Decimal("1e-9")
        else:
            steps = _exact_difference(stop, start) / step
        return int(steps.to_integral_value(rounding=ROUND_FLOOR)) + 1


def _exact_difference(stop: Decimal, start: Decimal) -> Decimal:
    """``stop - start`` without rounding (enough digits for any two float64-range decimals)."""
    with localcontext() as ctx:
        ctx.prec = _exact_digits(stop, start)
        return stop - start


def _exact_digits(*values: Decimal) -> int:
    """Digits that hold the sum of any of ``values`` exactly."""
    nonzero = [v for v in values if v]
    if not nonzero:
        return 28
    top = max(v.adjusted() for v in nonzero)
    bottom = min(v.as_tuple().exponent for v in nonzero)
    return max(top - int(bottom) + 3, 28)


def _count_text(count: int) -> str:
    """A count as text: exact up to 15 digits, else rounded (``about 6.00e+300``)."""
    return str(count) if count < 10**15 else f"about {Decimal(count):.3g}"


def _range_parts(flag: str, spec: str) -> tuple[Decimal, Decimal, Decimal, bool]:
    parts = spec.split(":")
    if len(parts) != 3:
        raise InputError(flag, f"range must be start:stop:step or start:stop:xF, got {spec!r}")
    start = _decimal(flag, parts[0], spec)
    stop = _decimal(flag, parts[1], spec)
    step_text = parts[2].strip()
    geometric = step_text[:1].lower() == "x"
    step = _decimal(flag, step_text[1:] if geometric else step_text, spec)
    if stop < start:
        raise InputError(flag, f"range stop must be >= start, got {spec!r}")
    if geometric:
        if start <= 0:
            raise InputError(flag, f"geometric range needs start > 0, got {spec!r}")
        if step <= 1:
            raise InputError(flag, f"geometric range needs a factor xF with F > 1, got {spec!r}")
    elif step <= 0:
        raise InputError(flag, f"range step must be > 0, got {spec!r}")
    return start, stop, step, geometric


def parse_values(flag: str, spec: str, limit: int = MAX_ROWS) -> list[str]:
    """Expand one sweep flag into exact decimal strings (duplicates kept in order, once).

    Args:
        flag: the flag, for error messages (``--m``).
        spec: ``"512"``, ``"1e3,1e6"``, ``"8:4096:x2"`` or ``"0.1:0.5:0.1"``.
        limit: most values allowed (one-line :class:`InputError` naming the flag above it).

    Raises:
        InputError: unparsable values or ranges, or more than ``limit`` values.

    Example:
        >>> parse_values("--n", "1e3,1e6")
        ['1000', '1000000']
    """
    spec = str(spec).strip()
    if not spec:
        raise InputError(flag, "must not be empty")
    count = count_values(flag, spec)
    if count > limit:
        raise InputError(flag, f"gives {_count_text(count)} values, more than the limit of "
                               f"{limit}")
    if ":" not in spec:
        values = [_text(_decimal(flag, p, spec)) if _looks_numeric(p) else p.strip()
                  for p in spec.split(",")]
    else:
        start, stop, step, geometric = _range_parts(flag, spec)
        values = []
        current = start
        with localcontext() as ctx:
            if not geometric:  # exact decimal arithmetic: a step that lands on stop includes it
                ctx.prec = _exact_digits(start, stop, step)
            while current <= stop and len(values) < count + 1:
                values.append(_text(current))
                current = current * step if geometric else current + step
    return list(dict.fromkeys(values))


def _looks_numeric(text: str) -> bool:
    try:
        Decimal(text.strip())
    except InvalidOperation:
        return False
    return True



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
    """Validate one distinct sweep value with the single-point rules of params.validate."""
    try:
        if kind in ("rho", "nu"):
            validate(**{kind: value}, eta="1")
        elif axis == "eta":
            validate(eta=value)
        else:
            validate(**{_VALIDATE_KEY[axis]: value}, eta="1")
    except InputError as exc:
        if exc.flag == flag:
            raise
        raise InputError(flag, str(exc)[len(exc.flag) + 1:]) from None


def _alpha_values(statement: str, spec: str | None) -> list[str] | None:
    """The values of ``--alpha`` (None when not given); it is a flag of prop2 only, each value a
    finite α > 0."""
    if spec is None:
        return None
    if statement != "prop2":
        raise InputError("--alpha", f"is for prop2 only (the IndRNN's recurrent scale), not "
                                    f"{base_name(statement)}")
    values = parse_values("--alpha", spec)
    for value in values:
        if parse_number("--alpha", value) <= 0:
            raise InputError("--alpha", f"must be > 0, got {value!r}")
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
        (['not_guaranteed', 'vacuous', 'not_guaranteed', 'vacuous'], 'tight')
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
    rows = 1
    for vals in values.values():
        rows *= len(vals)
    if rows > MAX_ROWS:
        worst = max(values, key=lambda a: len(values[a]))
        sizes = " x ".join(f"{specs[a][1]} {len(v)}" for a, v in values.items() if len(v) > 1)
        raise InputError(specs[worst][1], f"makes the sweep {rows} rows ({sizes}), more than the "
                                          f"limit of {MAX_ROWS}; use fewer values")
    nu_sources = {_source_axis(f"nu_{c}", values) for c in "cuw"}
    if ("eta" not in values and st.step
            and all(any(Decimal(v) == 0 for v in values[a]) for a in nu_sources)):
        raise InputError("--nu", "needs a positive component in every row when --eta is not "
                                 "given (the theorem's step size is proportional to ||nu||)")
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
    chosen = []
    for raw in spec.split(","):
        item = raw.strip()
        if not item:
            continue
        if item in names:
            chosen.append(item)
            continue
        matches = [c for c in names if c.split(".")[-1] == item]
        if len(matches) != 1:
            hint = "ambiguous" if matches else "unknown"
            raise InputError("--columns", f"{hint} column {item!r}; choose from "
                                          f"{', '.join(names)}")
        chosen.append(matches[0])
    if not chosen:
        raise InputError("--columns", "must name at least one column")
    return list(dict.fromkeys(chosen))
