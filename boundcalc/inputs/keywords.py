"""The inputs of the Python API (:func:`boundcalc.evaluate`, :func:`boundcalc.sweep`) by keyword.

The keywords are the names of :data:`boundcalc.inputs.params.PARAMS` plus ``route``,
``precision``, ``exact`` and ``alpha`` (and for a sweep the components ``rho_c`` … ``nu_w``). A
number may be an int, a float (read from its shortest text, so ``0.05`` is exactly 1/20), a
``Decimal`` or a string; ρ and ν also take a tuple of three components. The functions here turn
each value into the text the rows check and rename an :class:`~boundcalc.errors.InputError` of a
flag after its keyword (``m must be a positive even integer``), so that a notebook user reads the
name they typed. No torch.

Example:
    >>> point_value("rho", (2, 3, 1)), sweep_spec("m", [512, 4096.0])
    ('2,3,1', '512,4096.0')
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from boundcalc.errors import InputError
from boundcalc.inputs.params import PARAMS, routed_key
from boundcalc.theory.catalog import NAMES

__all__ = ["COMPONENTS", "check_exact", "check_keywords", "choices", "keyword_of", "point_value",
           "precision_digits", "renamed", "statement_key", "sweep_given", "sweep_spec",
           "value_text"]


def check_exact(exact: object) -> bool:
    """``exact`` of :func:`boundcalc.evaluate`: True or False only ("no" or 0 would silently pick
    one of the two views).

    Example:
        >>> check_exact(False)
        False
    """
    if not isinstance(exact, bool):
        raise InputError("exact", f"must be True or False, got {exact!r}")
    return exact


#: The per-component keywords of a sweep (``rho_c`` ... ``nu_w``), as ``boundcalc sweep --rho-c``.
COMPONENTS: tuple[str, ...] = tuple(col for p in PARAMS.values() if p.kind == "triple"
                                     for col in p.columns)


def keyword_of(flag: str) -> str:
    """The keyword of a CLI flag (``--batch-size`` → ``batch_size``, ``--T`` → ``T``,
    ``STATEMENT`` → ``statement``).

    Example:
        >>> [keyword_of(f) for f in ("--batch-size", "--T", "--rho-u", "STATEMENT", "alpha")]
        ['batch_size', 'T', 'rho_u', 'statement', 'alpha']
    """
    if flag.startswith("--"):
        return flag[2:].replace("-", "_")
    return flag.lower()


def renamed(exc: InputError) -> InputError:
    """``exc`` naming the keyword instead of the flag."""
    key = keyword_of(exc.flag)
    return InputError(key, str(exc)[len(exc.flag) + 1:])


def statement_key(statement: str, route: Any) -> str:
    """Registry key of ``statement`` on ``route`` (None: the default, tight)."""
    name = str(statement).strip().lower()
    if name not in NAMES:
        raise InputError("statement", f"must be one of {', '.join(NAMES)}, got {statement!r}")
    return routed_key(name, route, "route")


def value_text(key: str, value: Any) -> str:
    """One value as the text the checks read (the shortest text of a float)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, Decimal)):
        raise InputError(key, f"must be a number or its text, got {value!r}")
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, Decimal):
        return str(value)
    return repr(float(value))


def point_value(key: str, value: Any) -> str | int | float | Decimal:
    """One point value as the checks read it (text, int, float or Decimal: a float is read from
    its shortest text); a tuple for ρ and ν is the text of its three components."""
    if key == "activation":
        if not isinstance(value, str):
            raise InputError(key, f"must be tanh, erf or 'custom:S0,S1,S2', got {value!r}")
        return value
    if isinstance(value, str):
        return value
    if isinstance(value, tuple) and PARAMS[key].kind == "triple":
        return ",".join(value_text(key, v) for v in value)
    if isinstance(value, (tuple, list, set, Mapping)) or hasattr(value, "__len__"):
        raise InputError(key, f"takes one value here, got {value!r} (boundcalc.sweep takes "
                              "lists)")
    value_text(key, value)
    if isinstance(value, numbers.Integral):  # the checks then quote the value as given
        return int(value)
    return value if isinstance(value, (float, Decimal)) else float(value)


def check_keywords(function: str, inputs: Mapping[str, Any], known: Iterable[str]) -> None:
    unknown = sorted(set(inputs) - set(known))
    if unknown:
        raise TypeError(f"{function}() got an unexpected keyword argument {unknown[0]!r}; the "
                        f"keywords are {', '.join(known)}")


def precision_digits(value: Any) -> int:
    from boundcalc.inputs.calculator_flags import DEFAULT_PRECISION
    from boundcalc.inputs.params import parse_integer

    if value is None:
        return DEFAULT_PRECISION
    digits = parse_integer("precision", value_text("precision", value))
    if not 10 <= digits <= 1000:
        raise InputError("precision", f"must be an integer between 10 and 1000, got {value!r}")
    return digits


def sweep_spec(key: str, value: Any) -> str:
    """The sweep flag's text of one keyword: a value, or a comma list of a list's values."""
    if isinstance(value, str):
        return value
    if isinstance(value, Iterable) and not isinstance(value, (tuple, Mapping)):
        items = list(value)
        if not items:
            raise InputError(key, "must not be an empty list")
        if any(isinstance(v, (tuple, list)) for v in items):
            raise InputError(key, "takes a list of uniform values in a sweep; sweep one "
                                  f"component with {key}_c=[...], {key}_u=[...], {key}_w=[...]")
        return ",".join(value_text(key, v) for v in items)
    return value_text(key, value)


def choices(key: str, value: Any) -> list[Any]:
    """The values of ``route`` / ``activation``: a list, or one value."""
    if value is None or isinstance(value, str):
        return [value]
    if isinstance(value, Iterable) and not isinstance(value, Mapping):
        items = list(value)
        if not items:
            raise InputError(key, "must not be an empty list")
        return items
    raise InputError(key, f"must be text or a list of texts, got {value!r}")


def sweep_given(inputs: Mapping[str, Any]) -> dict[str, str | None]:
    """``build_sweep``'s flags (keyed by sweep axis) from the keywords; a tuple for ρ / ν sets
    its three components."""
    given: dict[str, str | None] = {}
    for key, value in inputs.items():
        if value is None or key == "activation":
            continue
        param = PARAMS.get(key)
        if param is not None and param.kind == "triple" and isinstance(value, tuple):
            if len(value) != 3:
                raise InputError(key, f"takes one value or three components, got {value!r}")
            for column, component in zip(param.columns, value, strict=True):
                if inputs.get(column) is not None:
                    raise InputError(column, f"is given twice: by {column}= and by {key}=")
                given[column] = value_text(key, component)
            continue
        axis = key if param is None or param.kind == "triple" else param.columns[0]
        given[axis] = sweep_spec(key, value)
    return given
