"""One row per command-line input of the surfaces around the calculator, and the checks it builds.

The calculator's Transformer inputs are the rows of :data:`boundcalc.inputs.params.PARAMS`; the
other surfaces (``validate``, ``generalization``, ``check``, ``compare-rnn``, prop2's α) declare
their inputs here as :class:`Flag` rows in :mod:`boundcalc.inputs.surfaces`: the flag, the type,
the range, the unit and the meaning, and the check that the type and range imply. A check returns
the value the command uses (an ``int``, a ``float``, a normalised choice, the exact text) or raises
:class:`~boundcalc.errors.InputError` with a one-line message naming the flag (exit code 2).

Values that a surface computes with in float64 are refused when float64 cannot hold them: past its
range (``1e309``) and, for a nonzero value, below it (``1e-400`` would silently become 0). The
calculator keeps exact decimal text and has no such limit.

No torch, no sympy.

Example:
    >>> row = integer_flag("seeds", "--seeds", minimum=1, unit="seeds",
    ...                    meaning="number of init seeds")
    >>> row.check("3"), row.range
    (3, '>= 1')
    >>> real_flag("lr", "--lr", low=0, unit="step", meaning="step size").check("1e-400")
    Traceback (most recent call last):
    ...
    boundcalc.errors.InputError: --lr must be a nonzero number float64 can hold (it would round \
to 0), got '1e-400'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from typing import Any

from boundcalc.errors import InputError
from boundcalc.inputs.params import PARAMS, parse_integer, parse_number

__all__ = ["Flag", "check_float64", "check_rows", "choice_flag", "integer_flag", "param_flag",
           "real_flag", "text_flag"]


def check_float64(flag: str, text: object) -> None:
    """Refuse a nonzero number that float64 rounds to 0 (``1e-400``), naming ``flag``; a value
    past float64's range is refused by :func:`~boundcalc.inputs.params.parse_number` already.

    Example:
        >>> check_float64("--nu", "0"), check_float64("--nu", "1e-300")
        (None, None)
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return
    raw = str(text).strip()
    try:
        exact = Decimal(raw)
    except InvalidOperation:
        return  # not a number: the row's own check names it
    if exact.is_finite() and exact != 0 and float(raw) == 0:
        raise InputError(flag, f"must be a nonzero number float64 can hold (it would round to "
                               f"0), got {text!r}")


@dataclass(frozen=True)
class Flag:
    """One command-line input of a surface.

    Attributes:
        name: keyword (the CLI function's parameter and the key of :func:`check_rows`).
        flag: the CLI flag, named by every error about it.
        type: the value's type in words (``integer``, ``real``, ``choice``, ``text``, …).
        range: its range in words (``>= 1``, ``(0, 1)``, ``auto, cpu or cuda``, …).
        unit: what it counts or measures (``samples``, ``step size``, ``seeds``, …).
        meaning: one line: what the surface does with it.
        parse: ``parse(flag, value)`` → the checked value, or :class:`InputError`.
    """

    name: str
    flag: str
    type: str
    range: str
    unit: str
    meaning: str
    parse: Callable[[str, object], Any]

    def check(self, value: object) -> Any:
        """The checked value (:class:`InputError` naming :attr:`flag` when it is not valid).

        Example:
            >>> choice_flag("dtype", "--dtype", ("float64", "float32"), unit="precision",
            ...             meaning="torch dtype").check(" Float32 ")
            'float32'
        """
        return self.parse(self.flag, value)


def _bound_text(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    if low is not None and high is not None:
        return f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if low is not None:
        return f"{'>' if low_open else '>='} {low:g}"
    if high is not None:
        return f"{'<' if high_open else '<='} {high:g}"
    return "any finite value"


def integer_flag(name: str, flag: str, *, minimum: int, maximum: int | None = None,
                 unit: str, meaning: str, message: str | None = None) -> Flag:
    """A row for an integer in [``minimum``, ``maximum``] (exact: ``1e3`` is 1000, ``2.5`` is
    refused). ``message``: the text after the flag when out of range (``{value!r}`` filled).

    Example:
        >>> integer_flag("N", "--N", minimum=2, unit="samples", meaning="").check("1")
        Traceback (most recent call last):
        ...
        boundcalc.errors.InputError: --N must be an integer >= 2, got '1'
    """
    text = message or (f"must be an integer >= {minimum}" if maximum is None
                       else f"must be an integer between {minimum} and {maximum}")

    def parse(flag: str, value: object) -> int:
        number = parse_integer(flag, value)  # type: ignore[arg-type]
        if number < minimum or (maximum is not None and number > maximum):
            raise InputError(flag, f"{text}, got {value!r}")
        return number

    range_text = f">= {minimum}" if maximum is None else f"{minimum} .. {maximum}"
    return Flag(name, flag, "integer", range_text, unit, meaning, parse)


def real_flag(name: str, flag: str, *, low: float | None = None, high: float | None = None,
              low_open: bool = True, high_open: bool = True, unit: str, meaning: str,
              message: str | None = None, as_text: bool = False) -> Flag:
    """A row for a finite real number in the given interval, held in float64 (so a nonzero
    value that rounds to 0 is refused, :func:`check_float64`). ``as_text``: keep the stripped
    text (an exact decimal for mpmath) instead of the float.

    Example:
        >>> real_flag("delta", "--delta", low=0, high=1, unit="", meaning="").check("0.05")
        0.05
    """
    range_text = _bound_text(low, high, low_open, high_open)
    text = message or ("must lie in " + range_text if low is not None and high is not None
                       else "must be " + range_text)

    def parse(flag: str, value: object) -> float | str:
        number = parse_number(flag, value)  # type: ignore[arg-type]
        check_float64(flag, value)
        if low is not None and (number <= low if low_open else number < low):
            raise InputError(flag, f"{text}, got {value!r}")
        if high is not None and (number >= high if high_open else number > high):
            raise InputError(flag, f"{text}, got {value!r}")
        return str(value).strip() if as_text else number

    return Flag(name, flag, "real", range_text, unit, meaning, parse)


def choice_flag(name: str, flag: str, choices: Iterable[str], *, unit: str, meaning: str,
                message: str | None = None, extra: Callable[[str], bool] | None = None) -> Flag:
    """A row for one of ``choices`` (case and surrounding spaces ignored); ``extra(key)`` admits
    further spellings (``cuda:1``).

    Example:
        >>> choice_flag("effort", "--effort", ("quick", "standard"), unit="", meaning=""
        ...             ).check("slow")
        Traceback (most recent call last):
        ...
        boundcalc.errors.InputError: --effort must be one of quick, standard, got 'slow'
    """
    allowed = tuple(choices)
    text = message or f"must be one of {', '.join(allowed)}"

    def parse(flag: str, value: object) -> str:
        key = str(value).strip().lower()
        if key in allowed or (extra is not None and extra(key)):
            return key
        raise InputError(flag, f"{text}, got {value!r}")

    return Flag(name, flag, "choice", ", ".join(allowed), unit, meaning, parse)


def text_flag(name: str, flag: str, parse: Callable[[str, object], Any], *, type: str,
              range: str, unit: str, meaning: str) -> Flag:
    """A row whose check is ``parse`` (a path, a list, ``NAME=V`` pairs …).

    Example:
        >>> text_flag("data", "--data", lambda flag, v: str(v), type="path", range="a file",
        ...           unit="", meaning="").check("x.npz")
        'x.npz'
    """
    return Flag(name, flag, type, range, unit, meaning, parse)


def param_flag(name: str, *, float64: bool, flag: str | None = None, unit: str,
               meaning: str | None = None) -> Flag:
    """The row of :data:`~boundcalc.inputs.params.PARAMS` ``name`` as a :class:`Flag`, with its
    check and messages; ``float64``: the surface computes with floats, so a nonzero value (or
    component) that float64 rounds to 0 is refused too.

    Example:
        >>> param_flag("nu", float64=True, unit="norm").check("1e-400,1,1")
        Traceback (most recent call last):
        ...
        boundcalc.errors.InputError: --nu must be a nonzero number float64 can hold (it would \
round to 0), got '1e-400'
    """
    row = PARAMS[name]
    range_text = {"even": "even, >= 2", "count": ">= 1", "probability": "(0, 1)",
                  "positive": "> 0", "non_negative": ">= 0", "triple": "each >= 0",
                  "activation": "tanh, erf or custom:S0,S1,S2"}[row.kind]

    def parse(flag: str, value: object) -> Any:
        if float64 and row.kind not in ("even", "count", "activation"):
            parts = str(value).split(",") if row.kind == "triple" else [value]
            for part in parts:  # before the range: 1e-400 is not "outside (0, 1)"
                check_float64(flag, part)
        return (row if flag == row.flag else replace(row, flag=flag)).check(value)

    return Flag(name, flag or row.flag, row.kind, range_text, unit, meaning or row.help, parse)


def check_rows(rows: Mapping[str, Flag], values: Mapping[str, object]) -> dict[str, Any]:
    """Check every given value (None: not given, skipped) with its row, in the rows' order;
    returns the checked values by keyword.

    Example:
        >>> rows = {"seeds": integer_flag("seeds", "--seeds", minimum=1, unit="", meaning="")}
        >>> check_rows(rows, {"seeds": "2"})
        {'seeds': 2}
    """
    unknown = sorted(set(values) - set(rows))
    if unknown:
        raise TypeError(f"check_rows() got unknown inputs {unknown}")
    return {name: row.check(values[name]) for name, row in rows.items()
            if values.get(name) is not None}
