"""Transformer (Theorem 1) next to IndRNN (Proposition 2) as the sequence length T grows.

Three evaluators, no torch:

* :func:`evaluate_prop2` — Proposition 2 at one parameter point for any Rademacher scale α of the
  recurrent weights (the registered statement ``prop2`` fixes the authors' α = 3/2, since α is not
  one of :data:`boundcalc.calc.api.ARGUMENTS`). Same :class:`boundcalc.calc.api.Evaluation`
  contract as :func:`boundcalc.calc.api.evaluate`.
* :func:`evaluate_prop2_grid` — the same over a numpy grid with α an axis too (``sweep prop2
  --alpha``), as :func:`boundcalc.calc.evaluator.evaluate_grid`.
* :func:`compare_rnn` — one row per T: Theorem 1's ``min_iterate`` (identical for every T, Remark 3)
  and Proposition 2's (flat below the cutoff σ₁(α + ρ_u/√m) < 1, exponential past it).

The two bounds share the numbers m, n, δ, ρ, ν, K, the activation and η (or each its own η* when η
is not given); ρ and ν mean the same per-block radii / transport budgets for the two models
(Transformer blocks (c, U, W), IndRNN blocks (c, u, W_in)). Derivations: docs/derivations.md §7 and
docs/indrnn.md.

Example:
    >>> rows = compare_rnn([1, 1024], m=512, alpha="0.5")
    >>> rows[0]["transformer_bound"] == rows[1]["transformer_bound"]
    True
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction
from functools import cache
from typing import Any

import mpmath

from boundcalc.calc.api import (
    Evaluation,
    condition_results,
    evaluate,
    mp_arguments,
    out_of_range,
    overflow_text,
    symbol_values,
)
from boundcalc.calc.evaluator import (
    STEP_KEY,
    cached_statement,
    compile_function,
)
from boundcalc.calc.solvers import bisect_even
from boundcalc.errors import StepSizeUndefinedError
from boundcalc.inputs.calculator_flags import DEFAULT_PRECISION
from boundcalc.inputs.params import DEFAULTS, Inputs, validate
from boundcalc.inputs.surfaces import parse_alpha, parse_sequence_lengths

#: α of the authors' scripts (App. B.1 / Section 6.2).
DEFAULT_ALPHA = "1.5"


def is_default_alpha(alpha: str | float) -> bool:
    """Whether α (checked by :func:`parse_alpha`) is the registered statement's 3/2."""
    return Fraction(parse_alpha(alpha)) == Fraction(DEFAULT_ALPHA)


def nonvacuous_width_prop2(inputs: Inputs, alpha: str | float = DEFAULT_ALPHA,
                           precision: int = DEFAULT_PRECISION,
                           max_width: int = 2**62) -> int | None:
    """Smallest even m with Proposition 2's min_iterate below its free bound min(B², Y²)
    (:attr:`boundcalc.calc.api.Evaluation.free_bound`) at ``alpha``, every other input of
    ``inputs`` fixed (η* recomputed per m unless η is given): the exact evaluator
    (:func:`evaluate_prop2`) galloping up from m = 2 (doubling), then bisecting over the even
    integers. Like :func:`boundcalc.calc.solvers.nonvacuous_width` (the registered α = 3/2) the
    answer is exactly non-vacuous with m − 2 vacuous; the smallest such m when the bound crosses it
    once. None if no even m up to ``max_width`` is non-vacuous.

    Example:
        >>> from boundcalc.inputs.params import validate
        >>> nonvacuous_width_prop2(validate(T=16), "0.5")
        96434
    """
    from dataclasses import replace

    alpha_text = parse_alpha(alpha)

    def ok(w: int) -> bool:
        ev = evaluate_prop2(replace(inputs, m=w), alpha_text, precision)
        value, free = ev.bound["min_iterate"], ev.free_bound
        return value is not None and free is not None and bool(value < free[1])

    if ok(2):
        return 2
    lo, hi = 2, 4
    while not ok(hi):
        if hi >= max_width:
            return None
        lo, hi = hi, min(2 * hi, max_width)
    return bisect_even(ok, lo, hi)  # lo vacuous, hi non-vacuous


def _build_prop2_alpha() -> tuple[Any, tuple[Any, ...]]:
    from boundcalc.theory.prop2 import alpha, prop2

    return prop2(alpha), (alpha,)


def _compiled_prop2():
    """Proposition 2 with symbolic α as generated mpmath code over ARGUMENT_NAMES + (α,), from the
    code cache (no sympy once it holds it). No common-subexpression elimination: the branches of
    Proposition 2's Piecewise (below, at and above the cutoff α σ₁ = 1) divide by zero where they
    are not taken."""
    return cached_statement("prop2_alpha", _build_prop2_alpha, eliminate=False)


def evaluate_prop2(inputs: Inputs, alpha: str | float = DEFAULT_ALPHA,
                   precision: int = DEFAULT_PRECISION) -> Evaluation:
    """Proposition 2 at ``inputs`` and Rademacher scale ``alpha``, with mpmath at ``precision``.

    Args:
        inputs: validated inputs (:func:`boundcalc.inputs.params.validate`); ``T`` is the sequence
            length, ``d``, ``b`` and ``misspecification`` are not used by Proposition 2.
        alpha: α > 0 (u_i(0) = ±α); the authors use 1.5.
        precision: significant decimal digits (≥ 10). Past the cutoff the bound can exceed the
            float range: the mpmath values stay exact, ``to_dict()`` then gives them as text
            with the verdict ``overflow``.

    Returns:
        :class:`boundcalc.calc.api.Evaluation`; η defaults to Proposition 2's η* when
        ``inputs.eta`` is None. ``inputs['alpha']`` records α.
    """
    if precision < 10:
        raise ValueError(f"`precision` must be >= 10 digits, got {precision}")
    alpha_text = parse_alpha(alpha)
    alpha_exact = Fraction(alpha_text)
    statement, names, func, step = _compiled_prop2()
    with mpmath.workdps(precision):
        args = mp_arguments(inputs, precision)
        args["alpha"] = mpmath.mpf(alpha_exact.numerator) / alpha_exact.denominator
        if inputs.eta is None:
            try:
                args["eta"] = step(*(args[k] for k in names))[0]
            except ZeroDivisionError:   # L·B = 0 (σ₀ = σ₁ = 0): η* = ‖ν‖/(2LB√K) is undefined
                args["eta"] = mpmath.mpf(0)
            if not (mpmath.isfinite(args["eta"]) and args["eta"] > 0):
                raise StepSizeUndefinedError("--eta", "must be given here: the proposition's "
                                                      "step size eta* is undefined, since "
                                                      "L*B = 0")
        try:
            values = list(func(*(args[k] for k in names)))
        except ZeroDivisionError:   # a quantity undefined at this point (σ₁ = 0 at the cutoff)
            values = _prop2_exactly(inputs, alpha_exact, args["eta"], precision)
        out = dict(zip(statement.keys, values, strict=True))
        result_inputs = inputs.as_dict()
        result_inputs["alpha"] = float(alpha_exact)
        eta_used = +args["eta"]  # mpmath where float64 cannot hold it (to_dict: its text)
        result_inputs["eta"] = eta_used if out_of_range(eta_used) else float(eta_used)
        result_inputs["eta_source"] = ("given" if inputs.eta is not None
                                       else "proposition step size eta*")
        for name in ("sigma0", "sigma1", "sigma2"):
            sigma = args[name]
            result_inputs[name] = sigma if out_of_range(sigma) else float(sigma)
        def plus(value: mpmath.mpf | None) -> mpmath.mpf | None:   # None: undefined here
            return None if value is None else +value

        constants = {k: plus(out[f"constants.{k}"]) for k in statement.constants}
        terms = {k: plus(out[f"terms.{k}"]) for k in statement.terms}
        bound = {k: plus(out[f"bound.{k}"]) for k in statement.bound}
        probability = plus(out["probability"])
    conditions = condition_results(statement, inputs, args, precision, {"alpha": alpha_exact})
    return Evaluation(statement, result_inputs, constants, terms, bound, probability, conditions,
                      precision)


def _prop2_exactly(inputs: Inputs, alpha: Fraction, eta: mpmath.mpf, precision: int
                   ) -> list[mpmath.mpf | None]:
    """Every expression of Proposition 2 at scale ``alpha`` evaluated one by one from exact sympy
    values (the slow path, taken only when the generated code divides by zero): None for a
    quantity undefined at this point."""
    import sympy as sp

    from boundcalc.theory import symbols as S

    statement, (alpha_symbol,) = _build_prop2_alpha()
    values = {**symbol_values(inputs), alpha_symbol: sp.Rational(alpha.numerator,
                                                                 alpha.denominator),
              S.eta: sp.Rational(inputs.eta) if inputs.eta is not None else sp.Float(eta)}
    out: list[mpmath.mpf | None] = []
    for expr in statement.expressions().values():
        value = sp.N(sp.sympify(expr).xreplace(values), precision + 5)
        out.append(+mpmath.mpf(value) if value.is_real and value.is_finite else None)
    return out


@cache
def _prop2_grid_functions(star: bool) -> tuple[tuple[str, ...], Any, tuple[str, ...], Any]:
    """Proposition 2 with symbolic α for numpy grids: its keys, the numpy function of
    ARGUMENTS + (α,) returning every expression (η replaced by η* when ``star``), the names of
    its conditions and their numpy function."""
    import sympy as sp

    from boundcalc.calc.evaluator import ARGUMENTS
    from boundcalc.theory import symbols as S
    from boundcalc.theory.prop2 import alpha as ALPHA
    from boundcalc.theory.prop2 import prop2

    statement = prop2(ALPHA)
    exprs = statement.expressions()
    keys = tuple(exprs)
    values = tuple(sp.sympify(e) for e in exprs.values())
    if star:
        step = statement.constants[STEP_KEY]
        values = tuple(e.xreplace({S.eta: step}) for e in values)
    args = (*ARGUMENTS, ALPHA)
    func = compile_function(values, args, module="numpy")
    names = tuple(c.name for c in statement.conditions)
    conditions = compile_function(tuple(c.relation for c in statement.conditions), args,
                                  module="numpy")
    return keys, func, names, conditions


def evaluate_prop2_grid(columns: dict[str, Any], alpha: Any) -> dict[str, Any]:
    """Proposition 2 over a numpy grid whose recurrent scale α is an array too: the result of
    :func:`boundcalc.calc.evaluator.evaluate_grid` (``evaluate_grid("prop2", columns)`` fixes the
    authors' α = 3/2), for ``boundcalc sweep prop2 --alpha``.

    Args:
        columns: one entry per argument name of :data:`boundcalc.inputs.params.ARGUMENT_NAMES`
            (floats or arrays, broadcastable); ``eta`` None: each point's η*.
        alpha: α > 0, a float or an array broadcastable with the columns.

    Returns:
        dict of read-only numpy arrays of the broadcast shape: every argument, every
        ``group.key`` expression and ``condition.<name>`` booleans.

    Example:
        >>> from boundcalc.inputs.params import ARGUMENT_NAMES
        >>> from boundcalc.calc.sweep import build_sweep
        >>> base, _ = build_sweep("prop2", {"m": "64"}, None)
        >>> columns = {a: float(base[a][0]) for a in ARGUMENT_NAMES if a != "eta"}
        >>> out = evaluate_prop2_grid({**columns, "eta": None}, 1.5)
        >>> bool(abs(out["bound.min_iterate"][()] / base["bound.min_iterate"][0] - 1) < 1e-12)
        True
    """
    import numpy as np

    from boundcalc.inputs.params import ARGUMENT_NAMES

    star = columns.get("eta") is None
    keys, func, names, conditions = _prop2_grid_functions(star)
    eta_index = ARGUMENT_NAMES.index("eta")
    with np.errstate(all="ignore"):
        arrays = [np.asarray(columns[a] if columns[a] is not None else np.nan, dtype=float)
                  for a in ARGUMENT_NAMES]
        arrays.append(np.asarray(alpha, dtype=float))
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
        outputs = func(*arrays)
        if star:
            arrays[eta_index] = np.asarray(outputs[keys.index(f"constants.{STEP_KEY}")],
                                           dtype=float)
        held = conditions(*arrays) if names else []
    result = {a: np.broadcast_to(arrays[i], shape) for i, a in enumerate(ARGUMENT_NAMES)}
    for key, value in zip(keys, outputs, strict=True):
        result[key] = np.broadcast_to(np.asarray(value, dtype=float), shape)
    for name, value in zip(names, held, strict=True):
        result[f"condition.{name}"] = np.broadcast_to(np.asarray(value, dtype=bool), shape)
    return result


def _regime(lam: mpmath.mpf) -> str:
    if lam < 1:
        return "below cutoff"
    if lam == 1:
        return "at cutoff"
    return "above cutoff"


def _log10(value: mpmath.mpf) -> float | str:
    """log10 of a positive bound (:func:`_number`: the exact text past float64's range, as for a
    sequence length of 1e309)."""
    return _number(mpmath.log10(value)) if value > 0 else -math.inf


def _number(value: Any) -> float | str:
    """``value`` as a float, or (the overflow contract of :mod:`boundcalc.calc.api`) as the text of
    its exact value when float64 cannot hold it: beyond the float range (never ``inf``), or a
    nonzero value that would underflow to 0 (an η* of 1e-420 is not η = 0).

    Example:
        >>> _number(mpmath.mpf(10) ** 700), _number(mpmath.mpf(10) ** -700), _number(mpmath.mpf(2))
        ('1.000000e+700', '1.000000e-700', 2.0)
    """
    return overflow_text(value) if out_of_range(value) else float(value)


def _eta(evaluation: Evaluation, inputs: Inputs) -> float | str:
    """The η used: the given one, else the statement's η* at full precision (:func:`_number`)."""
    if inputs.eta is not None:
        return evaluation.inputs["eta"]
    return _number(evaluation.constants["theorem_step_size"])


def compare_rnn(T_values: Iterable[int], *, m: object = DEFAULTS["m"],
                n: object = DEFAULTS["n"], d: object = DEFAULTS["d"],
                delta: object = DEFAULTS["delta"], rho: object = DEFAULTS["rho"],
                nu: object = DEFAULTS["nu"], steps: object = DEFAULTS["steps"],
                eta: object = DEFAULTS["eta"], activation: str = "tanh",
                alpha: str | float = DEFAULT_ALPHA,
                precision: int = DEFAULT_PRECISION) -> list[dict[str, Any]]:
    """For each T: Theorem 1's bound (Transformer) and Proposition 2's (IndRNN), ``min_iterate``.

    Args:
        T_values: sequence lengths (positive integers), e.g. 1, 2, 4, …, 1024.
        m, n, d, delta, rho, nu, steps, eta, activation: as :func:`boundcalc.inputs.params.validate`
            (``steps`` is K; η = None uses each statement's own η*).
        alpha: Rademacher scale of the IndRNN's recurrent weights at init (> 0).
        precision: mpmath digits.

    Returns:
        One dict per T with keys ``T``, ``transformer_bound``, ``indrnn_bound`` (floats; past
        the float range the text of the exact value, e.g. ``"3.835e+621"``, never ``inf``),
        ``indrnn_log10_bound`` (a float, or past float64's range the text of its exact value),
        ``transformer_verdict`` and ``indrnn_verdict``
        (:attr:`boundcalc.calc.api.Evaluation.verdict`: ``overflow`` when a quantity of that
        statement exceeds the float range), ``transformer_eta``, ``indrnn_eta`` (a float, or
        the exact text of a step size float64 would round to 0), ``recurrent_factor_init`` (α·σ₁),
        ``recurrent_factor`` (λ = σ₁(α + ρ_u/√m)) and ``regime`` (``below cutoff`` /
        ``at cutoff`` / ``above cutoff``, judged on λ).

    Raises:
        InputError: a bad value, naming its flag (``--T``, ``--alpha``, ``--m`` …).
    """
    ts = parse_sequence_lengths("--T", T_values)
    alpha_text = parse_alpha(alpha)
    common = dict(m=m, n=n, d=d, delta=delta, rho=rho, nu=nu, steps=steps, eta=eta,
                  activation=activation)
    rows = []
    for t in ts:
        inputs = validate(T=t, **common)
        transformer = evaluate("theorem1", inputs, precision)
        rnn = evaluate_prop2(inputs, alpha_text, precision)
        value = rnn.bound["min_iterate"]
        lam = rnn.constants["recurrent_factor"]
        rows.append({
            "T": t,
            "transformer_bound": _number(transformer.bound["min_iterate"]),
            "indrnn_bound": _number(value),
            "indrnn_log10_bound": _log10(value),
            "transformer_verdict": transformer.verdict,
            "indrnn_verdict": rnn.verdict,
            "transformer_eta": _eta(transformer, inputs),
            "indrnn_eta": _eta(rnn, inputs),
            "recurrent_factor_init": float(rnn.constants["recurrent_factor_init"]),
            "recurrent_factor": float(lam),
            "regime": _regime(lam),
        })
    return rows


__all__ = ["DEFAULT_ALPHA", "compare_rnn", "evaluate_prop2", "evaluate_prop2_grid",
           "is_default_alpha", "nonvacuous_width_prop2"]
