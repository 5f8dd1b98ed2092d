"""The Python API for notebooks: keyword inputs, defaults filled, floats by default.

:func:`evaluate` is the point commands (``boundcalc theorem1 --m 512 ...``) as a function, and
:func:`sweep` is ``boundcalc sweep``: the same checks (:func:`boundcalc.inputs.params.validate`),
the same evaluator and, for a sweep, the same grid code (:func:`boundcalc.calc.sweep.build_sweep`)
and columns. Both are re-exported by the package, so ``boundcalc.evaluate(...)`` and
``boundcalc.sweep(...)`` work after a plain ``import boundcalc``.

The keywords are the names of :data:`boundcalc.inputs.params.PARAMS` (``m, n, d, T, delta, rho, nu,
steps, eta, activation, batch_size, misspecification``) plus ``route`` (``"tight"``,
``"paper"``, ``"gradnorm"``, ``"joint"`` or ``"blocks"``); a keyword not given takes its default.
A number may be an int, a float or a string
(``"1e3"``; a float is read from its shortest text, so ``0.05`` is exactly 1/20); ``rho`` and
``nu`` also take a tuple of the three components, ``rho=(2, 3, 1)``. A bad value raises
:class:`boundcalc.errors.InputError` naming the keyword (``m must be a positive even integer
(symmetric init), got 3``); an unknown keyword raises ``TypeError``.

Example:
    >>> res = evaluate("theorem1", m=512, n=1000, rho=2)
    >>> res.verdict, round(res.bound["min_iterate"], 4), res.free_bound
    ('vacuous', 25.4128, ('initial_loss_bound', 9.0))
    >>> df = sweep("theorem1", m=[512, 4096, 8192], n=1000, rho=2)
    >>> df["bound.min_iterate"].round(2).tolist(), df["verdict"].tolist()
    ([25.41, 4.38, 2.92], ['vacuous', 'guaranteed', 'guaranteed'])
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from boundcalc.errors import InputError
from boundcalc.inputs.params import PARAMS, routed_key
from boundcalc.theory.catalog import NAMES, base_name
from boundcalc.version import __version__

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from boundcalc.calc.api import Evaluation

__all__ = ["evaluate", "sweep"]

#: Values of ``route``; the first is the default.

#: The per-component keywords of a sweep (``rho_c`` ... ``nu_w``), as ``boundcalc sweep --rho-c``.
_COMPONENTS: tuple[str, ...] = tuple(col for p in PARAMS.values() if p.kind == "triple"
                                     for col in p.columns)


def _keyword(flag: str) -> str:
    """The keyword of a CLI flag (``--batch-size`` → ``batch_size``, ``--T`` → ``T``,
    ``STATEMENT`` → ``statement``).

    Example:
        >>> [_keyword(f) for f in ("--batch-size", "--T", "--rho-u", "STATEMENT", "alpha")]
        ['batch_size', 'T', 'rho_u', 'statement', 'alpha']
    """
    if flag.startswith("--"):
        return flag[2:].replace("-", "_")
    return flag.lower()


def _renamed(exc: InputError) -> InputError:
    """``exc`` naming the keyword instead of the flag."""
    key = _keyword(exc.flag)
    return InputError(key, str(exc)[len(exc.flag) + 1:])


def _statement_key(statement: str, route: Any) -> str:
    """Registry key of ``statement`` on ``route`` (None: the default, tight)."""
    name = str(statement).strip().lower()
    if name not in NAMES:
        raise InputError("statement", f"must be one of {', '.join(NAMES)}, got {statement!r}")
    return routed_key(name, route, "route")


def _text(key: str, value: Any) -> str:
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


def _one(key: str, value: Any) -> str | int | float | Decimal:
    """One point value as the checks read it (text, int, float or Decimal: a float is read from
    its shortest text); a tuple for ρ and ν is the text of its three components."""
    if key == "activation":
        if not isinstance(value, str):
            raise InputError(key, f"must be tanh, erf or 'custom:S0,S1,S2', got {value!r}")
        return value
    if isinstance(value, str):
        return value
    if isinstance(value, tuple) and PARAMS[key].kind == "triple":
        return ",".join(_text(key, v) for v in value)
    if isinstance(value, (tuple, list, set, Mapping)) or hasattr(value, "__len__"):
        raise InputError(key, f"takes one value here, got {value!r} (boundcalc.sweep takes "
                              "lists)")
    _text(key, value)
    if isinstance(value, numbers.Integral):  # the checks then quote the value as given
        return int(value)
    return value if isinstance(value, (float, Decimal)) else float(value)


def _check_keywords(function: str, inputs: Mapping[str, Any], known: Iterable[str]) -> None:
    unknown = sorted(set(inputs) - set(known))
    if unknown:
        raise TypeError(f"{function}() got an unexpected keyword argument {unknown[0]!r}; the "
                        f"keywords are {', '.join(known)}")


def _precision(value: Any) -> int:
    from boundcalc.calc.evaluator import DEFAULT_PRECISION
    from boundcalc.inputs.params import parse_integer

    if value is None:
        return DEFAULT_PRECISION
    digits = parse_integer("precision", _text("precision", value))
    if not 10 <= digits <= 1000:
        raise InputError("precision", f"must be an integer between 10 and 1000, got {value!r}")
    return digits


def evaluate(statement: str, /, *, route: str | None = None, precision: int | None = None,
             exact: bool = False, alpha: Any = None, **inputs: Any) -> Evaluation:
    """Evaluate ``statement`` at one point, as ``boundcalc STATEMENT`` does.

    Args:
        statement: ``theorem1``, ``prop1``, ``remark9``, ``lemma2``, ``lemma3``, ``lemma5``,
            ``lemma6``, ``event`` or ``prop2``.
        route: ``"tight"`` (default), ``"paper"``, ``"gradnorm"``, ``"joint"`` or ``"blocks"``
            (theorem1, prop1, remark9 only).
        precision: significant digits of the mpmath evaluation (10 to 1000; default 20).
        exact: give the mpmath values instead of Python floats.
        alpha: prop2 only: the IndRNN's recurrent scale (default 3/2).
        **inputs: the parameters by keyword (see the module docstring); the others take their
            defaults, as the CLI's.

    Returns:
        :class:`boundcalc.calc.api.Evaluation`: ``inputs``, ``constants``, ``terms``, ``bound``,
        ``probability``, ``conditions``, ``verdict``, ``to_dict()`` (the CLI's JSON),
        ``to_frame()``; every number a Python float unless ``exact`` (a value beyond the float
        range stays mpmath, never ``inf``).

    Raises:
        InputError: a bad value, naming its keyword.

    Example:
        >>> res = evaluate("theorem1", m=512, n=1000, rho=(2, 3, 1), route="paper")
        >>> res.verdict, res.inputs["rho_u"], type(res.constants["lipschitz_L"]).__name__
        ('vacuous', 3.0, 'float')
        >>> res = evaluate("lemma2", m=64, exact=True, precision=30)
        >>> type(res.constants["u_inf"]).__name__, res.precision
        ('mpf', 30)
        >>> evaluate("theorem1", m=3)
        Traceback (most recent call last):
        ...
        boundcalc.errors.InputError: m must be a positive even integer (symmetric init), got 3
    """
    from boundcalc.calc.api import evaluate as evaluate_point
    from boundcalc.inputs.params import validate

    _check_keywords("evaluate", inputs, PARAMS)
    if not isinstance(exact, bool):  # "no" or 0 would silently pick one of the two views
        raise InputError("exact", f"must be True or False, got {exact!r}")
    try:
        key = _statement_key(statement, route)
        values = {k: _one(k, v) for k, v in inputs.items() if v is not None}
        digits = _precision(precision)
        checked = validate(**values, statement=key)
        if alpha is not None:
            result = _prop2(key, checked, alpha, digits)
        else:
            result = evaluate_point(key, checked, precision=digits)
    except InputError as exc:
        raise _renamed(exc) from None
    return result if exact else result.floats()


def _prop2(key: str, inputs: Any, alpha: Any, digits: int) -> Evaluation:
    """Proposition 2 at recurrent scale ``alpha`` (prop2 only)."""
    if key != "prop2":
        raise InputError("alpha", f"is for prop2 only, not {base_name(key)}")
    from boundcalc.calc.api import evaluate as evaluate_point
    from boundcalc.calc.compare_rnn import evaluate_prop2, is_default_alpha, parse_alpha

    text = _text("alpha", alpha)
    if is_default_alpha(parse_alpha(text)):
        return evaluate_point(key, inputs, precision=digits)
    return evaluate_prop2(inputs, parse_alpha(text), digits)


def _spec(key: str, value: Any) -> str:
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
        return ",".join(_text(key, v) for v in items)
    return _text(key, value)


def _choices(key: str, value: Any) -> list[Any]:
    """The values of ``route`` / ``activation``: a list, or one value."""
    if value is None or isinstance(value, str):
        return [value]
    if isinstance(value, Iterable) and not isinstance(value, Mapping):
        items = list(value)
        if not items:
            raise InputError(key, "must not be an empty list")
        return items
    raise InputError(key, f"must be text or a list of texts, got {value!r}")


def _sweep_given(inputs: Mapping[str, Any]) -> dict[str, str | None]:
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
                given[column] = _text(key, component)
            continue
        axis = key if param is None or param.kind == "triple" else param.columns[0]
        given[axis] = _spec(key, value)
    return given


def sweep(statement: str, /, *, route: Any = None, **inputs: Any) -> pd.DataFrame:
    """Evaluate ``statement`` over a grid, as ``boundcalc sweep STATEMENT`` does: one row per
    combination of the values given, the CLI sweep's columns, numpy float64.

    Every keyword of :func:`evaluate` (but ``precision``, ``exact``) takes one value or a list of
    values (also a range or list in the CLI's text: ``m="8:4096:x2"``; ``alpha``, prop2's
    recurrent scale, adds an ``alpha`` column, as ``sweep prop2 --alpha``); ``rho=[1, 2]``
    sweeps the three components together, ``rho_u=[1, 2]`` one component (also ``rho_c``,
    ``rho_w``, ``nu_c``, ``nu_u``, ``nu_w``), ``rho=(2, 3, 1)`` is one point. ``route`` and
    ``activation`` may be lists too: their frames are stacked (the tight and paper routes have
    different bound columns; a column one of them lacks is NaN there).

    Returns:
        :class:`pandas.DataFrame`: the inputs, every constant, term and bound, the probability,
        each ``condition.*``, ``conditions_hold``, ``guaranteed`` and, for statements with the
        free bounds B² and Y², the categorical ``verdict`` (min_iterate against min(B², Y²)) and
        ``average_iterate_verdict`` (average_iterate against B²).

    Raises:
        InputError: a bad value, naming its keyword; more than 2^20 rows.

    Example:
        >>> df = sweep("theorem1", m=[512, 8192], route=["tight", "paper"], rho=3, nu=3)
        >>> df.groupby("route", sort=False)["verdict"].apply(list).to_dict()
        {'tight': ['vacuous', 'guaranteed'], 'paper': ['vacuous', 'vacuous']}
        >>> sweep("lemma2", m=[64, 128], rho_u=[1, 2]).shape[0]
        4
    """
    import pandas as pd

    from boundcalc.calc.sweep import build_sweep

    _check_keywords("sweep", inputs, (*PARAMS, *_COMPONENTS, "alpha"))
    frames = []
    try:
        keys = [_statement_key(statement, r) for r in _choices("route", route)]
        activations = [a if a is None else _one("activation", a)
                       for a in _choices("activation", inputs.get("activation"))]
        given = _sweep_given(inputs)
        for key in keys:
            for activation in activations:
                frames.append(build_sweep(key, given, activation)[0])
    except InputError as exc:
        raise _renamed(exc) from None
    frame = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    routes = [r for r in dict.fromkeys(_route_names(frame)) if r]
    frame.attrs.update(statement=str(statement),
                       route=(routes[0] if len(routes) == 1 else routes) or None,
                       version=__version__)
    return frame


def _route_names(frame: pd.DataFrame) -> list[str]:
    """The routes of a sweep frame's rows (its ``route`` column; none for unrouted ones)."""
    return [str(r) for r in frame["route"]] if "route" in frame.columns else []


def _signature(function: Any, *, point: bool) -> None:
    """Show the parameters' keywords (with None: the default) in ``help()`` and notebooks."""
    sig = inspect.signature(function)
    params = [p for p in sig.parameters.values() if p.kind is not p.VAR_KEYWORD]
    names = list(PARAMS) if point else [*PARAMS, *_COMPONENTS, "alpha"]
    params += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None,
                                 annotation=Any) for name in names]
    function.__signature__ = sig.replace(parameters=params)


_signature(evaluate, point=True)
_signature(sweep, point=False)
