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
    ('vacuous', 23.2556, ('initial_loss_bound', 9.0))
    >>> df = sweep("theorem1", m=[512, 4096, 8192], n=1000, rho=2)
    >>> df["bound.min_iterate"].round(2).tolist(), df["verdict"].tolist()
    ([23.26, 4.13, 2.79], ['vacuous', 'guaranteed', 'guaranteed'])
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

from boundcalc.errors import InputError
from boundcalc.inputs.combinations import check_combinations
from boundcalc.inputs.keywords import (
    COMPONENTS,
    check_exact,
    check_keywords,
    choices,
    point_value,
    precision_digits,
    renamed,
    statement_key,
    sweep_given,
    value_text,
)
from boundcalc.inputs.params import PARAMS
from boundcalc.theory.catalog import base_name
from boundcalc.version import __version__

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from boundcalc.calc.api import Evaluation

__all__ = ["evaluate", "sweep"]

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

    check_keywords("evaluate", inputs, PARAMS)
    check_exact(exact)
    try:
        key = statement_key(statement, route)
        values = {k: point_value(k, v) for k, v in inputs.items() if v is not None}
        digits = precision_digits(precision)
        checked = validate(**values, statement=key)
        if alpha is not None:
            result = _prop2(key, checked, alpha, digits)
        else:
            result = evaluate_point(key, checked, precision=digits)
    except InputError as exc:
        raise renamed(exc) from None
    return result if exact else result.floats()


def _prop2(key: str, inputs: Any, alpha: Any, digits: int) -> Evaluation:
    """Proposition 2 at recurrent scale ``alpha`` (prop2 only)."""
    check_combinations("python", {"alpha": alpha, "statement": base_name(key)})
    from boundcalc.calc.api import evaluate as evaluate_point
    from boundcalc.calc.compare_rnn import evaluate_prop2, is_default_alpha
    from boundcalc.inputs.surfaces import parse_alpha

    text = value_text("alpha", alpha)
    if is_default_alpha(parse_alpha(text)):
        return evaluate_point(key, inputs, precision=digits)
    return evaluate_prop2(inputs, parse_alpha(text), digits)


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

    check_keywords("sweep", inputs, (*PARAMS, *COMPONENTS, "alpha"))
    frames = []
    try:
        keys = [statement_key(statement, r) for r in choices("route", route)]
        activations = [a if a is None else point_value("activation", a)
                       for a in choices("activation", inputs.get("activation"))]
        given = sweep_given(inputs)
        for key in keys:
            for activation in activations:
                frames.append(build_sweep(key, given, activation)[0])
    except InputError as exc:
        raise renamed(exc) from None
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
    names = list(PARAMS) if point else [*PARAMS, *COMPONENTS, "alpha"]
    params += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None,
                                 annotation=Any) for name in names]
    function.__signature__ = sig.replace(parameters=params)


_signature(evaluate, point=True)
_signature(sweep, point=False)
