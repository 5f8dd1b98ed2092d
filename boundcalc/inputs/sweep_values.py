"""The values of a sweep flag: one value, a comma list, or a range, expanded and checked.

A sweep flag (:mod:`boundcalc.calc.sweep`) takes one value, a comma list (``1e3,1e6``), an additive
range ``start:stop:step`` or a geometric range ``start:stop:xF``. :func:`parse_values` expands it
into exact decimal strings, each of which the sweep then checks with its parameter's row; a value
float64 cannot hold (beyond its range, or nonzero and rounding to 0.0) is an input error naming the
flag, and so is a range of more values than the row limit (:data:`MAX_ROWS`), however fine its
step: :func:`count_values` counts a range without building it. No torch, no numpy.

Example:
    >>> parse_values("--m", "8:64:x2"), count_values("--n", "1:1000000:1")
    (['8', '16', '32', '64'], 1000000)
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from decimal import ROUND_FLOOR, Decimal, InvalidOperation, localcontext

from boundcalc.errors import InputError

__all__ = ["MAX_ROWS", "check_row_count", "choose_columns", "count_values", "parse_values"]

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


def check_row_count(values: dict[str, list[str]], limit: int = MAX_ROWS) -> int:
    """The rows of a sweep whose flags (by flag) take ``values``; more than ``limit`` is an
    input error naming the flag with the most values.

    Example:
        >>> check_row_count({"--m": ["8", "16"], "--n": ["1", "2", "3"]})
        6
    """
    rows = 1
    for vals in values.values():
        rows *= len(vals)
    if rows > limit:
        worst = max(values, key=lambda flag: len(values[flag]))
        sizes = " x ".join(f"{flag} {len(v)}" for flag, v in values.items() if len(v) > 1)
        raise InputError(worst, f"makes the sweep {rows} rows ({sizes}), more than the limit of "
                                f"{limit}; use fewer values")
    return rows


def choose_columns(spec: str, names: Sequence[str]) -> list[str]:
    """``--columns``: a comma list of output columns, each a full name or the unambiguous last
    part of one (``min_iterate`` for ``bound.min_iterate``), in the order given, once each.

    Example:
        >>> choose_columns("m, min_iterate", ["m", "bound.min_iterate", "verdict"])
        ['m', 'bound.min_iterate']
    """
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
