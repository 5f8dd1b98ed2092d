"""Evaluate paper 003's generalization bound (Theorem 5) for concrete sizes: the API behind
``boundcalc generalization``.

Paper 003 is "Generalization bound for a Shallow Transformer trained using Gradient Descent". Its
expressions live in :mod:`boundcalc.theory.generalization` (sympy); the inputs are checked (and
the initial norms optionally drawn from the LeCun initialisation with numpy) by
:mod:`boundcalc.generalization.bound_inputs`, whose public names this module re-exports. Here every
expression is evaluated with mpmath at :data:`GENERALIZATION_PRECISION` digits into the JSON
contract of the calculator::

    {statement, verdict, inputs, quantities, terms, bound, conditions, probability, version}

plus ``measured`` when measured losses are given (``--data``). The ``verdict`` judges the bound
against what holds without the theorem (:data:`VERDICTS`): the loss range A + Y on the class
(``quantities.loss_range``) and, with data, the measured losses of the zero predictor and of the
initial model (:data:`MEASURED_KEYS`); ``statement.status_line`` says it in one line, naming the
binding yardstick and the hidden constants that are assumed rather than derived.

``quantities`` carries every named quantity of the paper (η_•, ξ_•, ρ, z, ẑ, M, M̂, A, P, α,
Φ(θ⁰), plus the intermediate values listed in :data:`QUANTITY_KEYS`), all finite floats.
:func:`symbolic_generalization` and :func:`symbolic_text` give the formulas themselves
(``--symbolic``). Nothing here imports torch or the validators; measuring the inputs on a data set
(``--data``) is :func:`boundcalc.validators.generalization_data.measure_data`.

Example:
    >>> from boundcalc.generalization.bound import evaluate_generalization
    >>> out = evaluate_generalization(N=1000, d_m=64, d_s=13, R_X=1, radii=(1, 1, 1, 1),
    ...                               delta=0.05, alpha=0.5, Phi0=10, seed=0)
    >>> sorted(out)  # doctest: +NORMALIZE_WHITESPACE
    ['bound', 'conditions', 'inputs', 'probability', 'quantities', 'statement', 'terms',
     'verdict', 'version']
    >>> out["verdict"], out["statement"]["guaranteed"], out["statement"]["conditions_hold"]
    ('not_guaranteed', False, False)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import cache
from typing import Any

import mpmath
import sympy as sp

from boundcalc.calc.api import probability_sufficient
from boundcalc.calc.evaluator import compile_function, condition_holds, condition_info
from boundcalc.errors import ResultOverflowError
from boundcalc.generalization.bound_inputs import (
    GeneralizationInputs,
    lecun_init_norms,
    validate_generalization,
)
from boundcalc.inputs.surfaces import NORM_FLAGS
from boundcalc.theory import generalization as G
from boundcalc.theory import generalization_symbols as GS
from boundcalc.version import __version__

__all__ = ["GENERALIZATION_PRECISION", "MEASURED_KEYS", "PROBABILITY_TERMS", "QUANTITY_KEYS",
           "VERDICTS", "GeneralizationInputs", "evaluate_generalization", "evaluate_inputs",
           "lecun_init_norms", "probability_terms", "probability_text", "render_descriptions",
           "render_latex_names", "status_line", "symbolic_generalization", "symbolic_text",
           "validate_generalization", "verdict_of"]

#: Keys of the ``quantities`` section, in output order: the 16 named quantities of the paper
#: (η_•, ξ_•, ρ, z, ẑ, M, M̂, A, P, α, Φ(θ⁰)), then the intermediate values.
QUANTITY_KEYS: tuple[str, ...] = (
    "eta_Q", "eta_K", "eta_V", "eta_O", "xi_Q", "xi_K", "xi_V", "rho", "z", "z_hat", "M",
    "M_hat", "A", "P", "alpha", "Phi0",
    "R", "R_union", "dudley_scale", "rademacher_complexity", "lemma1_as_printed",
    "lemma4_first", "lemma4_second", "empirical_loss_phi0", "lemma4_probability",
    "loss_range",
)

#: The verdicts of Theorem 5 (top-level ``verdict``): ``guaranteed`` = every condition holds,
#: the bound is below every free yardstick and the probability reaches ``min_probability``;
#: ``vacuous`` = every condition holds but the bound is not below one of the yardsticks (it says
#: nothing that holds without it, whatever its probability); ``not_guaranteed`` = a condition
#: fails, or the bound is below every yardstick but its probability is below
#: ``min_probability`` (``--min-probability``, default ½).
VERDICTS: tuple[str, ...] = ("guaranteed", "vacuous", "not_guaranteed")

#: Measured free yardsticks (section ``measured``, with ``--data``) → meaning. Both predictors
#: are chosen without looking at the data, so their mean loss on it is an unbiased estimate of
#: their true loss; a bound on L_D(f_θ^t) at or above it does not show that training beats them.
MEASURED_KEYS: dict[str, str] = {
    "zero_predictor_loss": "mean loss |0 - y| of the zero predictor f = 0 on the data: what "
                           "predicting 0 gives without training (measured, not a bound)",
    "initial_model_loss": "mean loss |f_theta0(X) - y| of the initial model theta0 on the data: "
                          "what stopping at t = 0 gives (measured, not a bound)",
}

#: How the status line names each free yardstick.
_YARDSTICK_NAMES: dict[str, str] = {
    "loss_range": "A + Y, the loss range on the class",
    "zero_predictor_loss": "the zero predictor's measured loss on the data",
    "initial_model_loss": "the initial model's measured loss on the data",
}

#: mpmath digits of Theorem 5's evaluation: 30, not the 20 of the other statements
#: (:data:`boundcalc.calc.evaluator.DEFAULT_PRECISION`). Theorem 5's probability
#: 1 − 8e^{−d_m/2} − 2δ − … and Lemma 4's probability subtract terms of order 1 to leave a small
#: number, losing about ten digits to cancellation: at 20 digits they differ from a 60-digit
#: evaluation in the last digits of the float on a quarter of random valid inputs (377 of 1496
#: points, N up to 10^12, d_m up to 10^4, δ down to 10^-12; ``lemma4_probability`` by up to
#: 1.4e-9 relative, ``probability`` by up to 7.4e-10, the printed Rademacher term once by
#: 1.9e-16), while at 30 digits every output equals the 60-digit one on all 1496 points. (On the
#: recorded CLI commands and the test suite's points 20 and 30 digits print the same numbers.)
GENERALIZATION_PRECISION = 30


# ---------------------------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------------------------

@cache
def _compiled(as_printed: bool):
    """Every expression and both sides of every condition compiled by the evaluator (mpmath),
    with each condition's code for :func:`boundcalc.calc.evaluator.condition_holds`, once per form;
    the derived defaults of hidden constants; the hidden constants the verdict depends on
    (those of the bound, the probability and the conditions)."""
    statement = G.theorem5(as_printed)
    exprs = statement.expressions()
    keys = tuple(exprs)
    arguments = tuple(GS.ARGUMENTS)
    func = compile_function(tuple(exprs[k] for k in keys), arguments)
    conds = []
    for cond in statement.conditions:
        rel = cond.relation
        sides = compile_function((rel.lhs, rel.rhs), arguments)
        info = condition_info(cond.name, rel, cond.requirement, cond.why)
        conds.append((cond, rel.rel_op, sides, info))
    derived = {name: compile_function((G.derived_default(name),), arguments)
               for name in GS.DERIVED_DEFAULTS}
    used = set().union(*(e.free_symbols for e in statement.bound.values()),
                       statement.probability.free_symbols,
                       *(c.relation.free_symbols for c in statement.conditions))
    hidden_used = tuple(s.name for s in GS.HIDDEN_CONSTANTS if s in used)
    return statement, exprs, func, tuple(conds), derived, hidden_used


#: The CLI flag of every input symbol (for the error of an input that overflows a quantity).
_FLAG_OF: dict[str, str] = {
    "N": "--N", "d_m": "--dm", "d_s": "--ds", "R_X": "--rx", "delta": "--delta",
    "R_Q": "--radii", "R_K": "--radii", "R_V": "--radii", "R_O": "--radii", "alpha": "--alpha",
    "Phi0": "--phi0", "Y": "--label-bound", **NORM_FLAGS,
    **{s.name: "--hidden-constants" for s in GS.HIDDEN_CONSTANTS},
}


def _finite(name: str, value: mpmath.mpf, expr: sp.Basic, args: Mapping[str, Any]) -> float:
    """``value`` as a float; if it overflows, a :class:`~boundcalc.errors.ResultOverflowError`
    naming the flag of the input of ``expr`` (the expression of ``name``) farthest from 1 in
    magnitude (a huge or a tiny value drives a quantity past the float range)."""
    out = float(value)
    if math.isfinite(out):
        return out

    def distance(name: str) -> float:
        size = abs(args[name])
        return abs(float(mpmath.log10(size))) if size else 0.0

    names = sorted((s.name for s in expr.free_symbols if s.name in args), key=distance,
                   reverse=True)
    flag = _FLAG_OF.get(names[0], "--N") if names else "--N"
    raise ResultOverflowError(flag, f"makes {name} = {out} overflow the float range; give values "
                           "closer to 1"
                           + (f" (most extreme input of {name}: {names[0]} = "
                              f"{mpmath.nstr(args[names[0]], 6)})" if names else ""))


def _measured(measured: Mapping[str, object] | None) -> dict[str, float]:
    """The measured yardsticks, checked: known keys, finite numbers ≥ 0."""
    out: dict[str, float] = {}
    for key, value in (measured or {}).items():
        if key not in MEASURED_KEYS:
            raise ValueError(f"`measured` has unknown key {key!r}; expected {list(MEASURED_KEYS)}")
        number = float(value)  # type: ignore[arg-type]
        if not (math.isfinite(number) and number >= 0):
            raise ValueError(f"`measured[{key!r}]` must be a finite loss >= 0, got {value!r}")
        out[key] = number
    return out


def verdict_of(conditions_hold: bool, bound: float, yardsticks: Mapping[str, float],
               probability: Any = None, min_probability: Any = 0.5) -> tuple[str, str]:
    """The verdict (:data:`VERDICTS`) and the binding yardstick: the smallest of ``yardsticks``
    (name → value; ``loss_range`` always among them). ``not_guaranteed`` when a condition fails,
    or when the bound is below every yardstick but ``probability`` (None: not checked) is below
    ``min_probability``; a bound at or above a yardstick is ``vacuous`` whatever its probability.

    Example:
        >>> verdict_of(True, 32.3, {"loss_range": 15.9, "zero_predictor_loss": 0.2})
        ('vacuous', 'zero_predictor_loss')
        >>> verdict_of(True, 0.1, {"loss_range": 15.9})
        ('guaranteed', 'loss_range')
        >>> verdict_of(True, 0.1, {"loss_range": 15.9}, probability=0.000999)
        ('not_guaranteed', 'loss_range')
    """
    binding = min(yardsticks, key=lambda k: yardsticks[k])
    if not conditions_hold:
        return "not_guaranteed", binding
    if not bound < yardsticks[binding]:
        return "vacuous", binding  # a free yardstick says as much, whatever the probability
    if probability is not None and not probability_sufficient(probability, min_probability):
        return "not_guaranteed", binding
    return "guaranteed", binding


def _number_pair(a: float, b: float) -> tuple[str, str]:
    """``a`` and ``b`` with 4 significant digits, or more (up to 17) until two different numbers
    print differently (so that ``a < b`` still reads so)."""
    sa, sb = f"{a:.4g}", f"{b:.4g}"
    for digits in range(4, 18):
        sa, sb = f"{a:.{digits}g}", f"{b:.{digits}g}"
        if a == b or float(sa) != float(sb):
            break
    return sa, sb


def _assumptions(inputs: GeneralizationInputs, hidden_used: tuple[str, ...]) -> str:
    """``|y| <= Y = 1 and C_D = C_cov = … = 1 (not derived)``: what the number assumes."""
    groups: dict[float, list[str]] = {}
    for name in hidden_used:
        if name not in inputs.derived:
            groups.setdefault(inputs.hidden[name], []).append(name)
    constants = ", ".join(" = ".join(names) + f" = {value:g}" for value, names in groups.items())
    text = f"|y| ≤ Y = {inputs.Y:.4g}"
    return text + (f" and {constants} (not derived)" if constants else "")


#: The three terms Theorem 5's probability 1 − 8e^{−d_m/2} − 2δ − e^{−C_prob (N−1)^{−ĉ}/d_s}
#: subtracts from 1, by name (the last is the paper's term from Lemma 4, line 291).
PROBABILITY_TERMS: tuple[str, ...] = ("8 exp(-d_m/2)", "2 delta",
                                      "exp(-C_prob (N-1)^(-c_hat)/d_s)")


def probability_terms(values: Mapping[str, Any]) -> dict[str, Any]:
    """Each term :data:`PROBABILITY_TERMS` subtracts from 1, at the mpmath ``values`` of the
    arguments (by name).

    Example:
        >>> terms = probability_terms({"d_m": 64, "delta": 0.05, "N": 1000, "d_s": 13,
        ...                            "C_prob": 1, "c_hat": 1})
        >>> {k: round(float(v), 4) for k, v in terms.items()}
        {'8 exp(-d_m/2)': 0.0, '2 delta': 0.1, 'exp(-C_prob (N-1)^(-c_hat)/d_s)': 0.9999}
    """
    mp = {k: mpmath.mpf(values[k]) for k in ("d_m", "delta", "N", "d_s", "C_prob", "c_hat")}
    return {
        PROBABILITY_TERMS[0]: 8 * mpmath.exp(-mp["d_m"] / 2),
        PROBABILITY_TERMS[1]: 2 * mp["delta"],
        PROBABILITY_TERMS[2]: mpmath.exp(-mp["C_prob"] * (mp["N"] - 1) ** (-mp["c_hat"])
                                         / mp["d_s"]),
    }


def probability_text(probability: float, min_probability: float,
                     terms: Mapping[str, float], sufficient: bool | None = None) -> str:
    """How the status line names Theorem 5's probability: ``holds with probability ≥ p``, below
    ``min_probability`` ``... only, below the 0.5 required (--min-probability)``, and which of
    the subtracted :data:`PROBABILITY_TERMS` takes most (the binding one). ``sufficient``:
    whether the probability reaches the minimum as decided exactly (None: compare the floats).

    Example:
        >>> print(probability_text(0.000999, 0.5, {"2 delta": 2e-6,
        ...       "exp(-C_prob (N-1)^(-c_hat)/d_s)": 0.999}).replace("; ", ";\\n").replace(
        ...       " (i", "\\n(i").replace(", b", ",\\nb"))
        the bound holds with probability ≥ 0.000999 only,
        below the 0.5 required (--min-probability);
        the paper's term exp(-C_prob (N-1)^(-c_hat)/d_s) = 0.999 binds
        (it grows to 1 with N d_s unless C_prob does)
    """
    top = max(terms, key=lambda k: terms[k])
    if top == PROBABILITY_TERMS[2]:
        why = (f"the paper's term {top} = {terms[top]:.4g} binds (it grows to 1 with N d_s "
               f"unless C_prob does)")
    else:
        why = f"{top} = {terms[top]:.4g} binds"
    if sufficient is None:
        sufficient = probability >= min_probability
    if not sufficient:
        shown, least = _number_pair(probability, min_probability)
        return (f"the bound holds with probability ≥ {shown} only, below the {least} required "
                f"(--min-probability); {why}")
    return f"holds with probability ≥ {probability:.4g}; {why}"


def status_line(verdict: str, failing: list[str], n_conditions: int, bound: float,
                yardsticks: Mapping[str, float], assumptions: str,
                probability: str = "") -> str:
    """The one-line verdict of Theorem 5, naming the binding yardstick (and every other one the
    bound is not below), what the number assumes, and its ``probability`` (the text of
    :func:`probability_text`; a verdict not guaranteed for want of probability starts with it).

    Example:
        >>> status_line("vacuous", [], 4, 32.34, {"loss_range": 15.86}, "|y| ≤ Y = 0.21")
        'VACUOUS: true_loss 32.34 ≥ 15.86 = A + Y, the loss range on the class (all 4 ...'
    """
    order = sorted(yardsticks, key=lambda k: yardsticks[k])
    compared: list[str] = []
    for key in order:
        shown, shown_y = _number_pair(bound, yardsticks[key])
        below = bound < yardsticks[key]
        if not compared and verdict != "not_guaranteed":  # the binding one: as the verdict says
            below = verdict == "guaranteed"
        if below and compared:
            break  # the binding one and every one the bound is not below
        compared.append(f"{'<' if below else '≥'} {shown_y} = {_YARDSTICK_NAMES[key]}")
        if below:
            break
    numbers = f"true_loss {_number_pair(bound, yardsticks[order[0]])[0]} " + ", ".join(compared)
    holds = ("its condition holds" if n_conditions == 1
             else f"all {n_conditions} conditions hold")
    if verdict == "not_guaranteed" and failing:
        verb = "fails" if len(failing) == 1 else "fail"
        head = (f"NOT GUARANTEED: {', '.join(failing)} {verb}, the bound is not guaranteed; "
                f"{numbers}")
    elif verdict == "not_guaranteed":  # every condition holds: the probability is too small
        return f"NOT GUARANTEED: {probability}; {holds}; {numbers}; assumes {assumptions}"
    elif verdict == "vacuous":
        head = f"VACUOUS: {numbers} ({holds})"
    else:
        head = f"GUARANTEED: {holds}; {numbers}"
    return f"{head}; assumes {assumptions}" + (f"; {probability}" if probability else "")


def evaluate_inputs(inputs: GeneralizationInputs,
                    precision: int = GENERALIZATION_PRECISION,
                    measured: Mapping[str, object] | None = None) -> dict[str, Any]:
    """Evaluate Theorem 5 (derived or printed form) at validated inputs; the JSON contract.

    ``measured``: the measured yardsticks (keys of :data:`MEASURED_KEYS`, e.g. from ``--data``),
    reported in the section ``measured`` and judged against by the verdict.
    """
    if precision < 10:
        raise ValueError(f"`precision` must be >= 10 digits, got {precision}")
    statement, exprs, func, conds, derived_fns, hidden_used = _compiled(inputs.as_printed)
    measured_values = _measured(measured)
    values = inputs.symbol_values()
    shown_inputs = inputs.as_dict()
    with mpmath.workdps(precision):
        args = [mpmath.mpf(values[s]) if s in values else mpmath.mpf(1) for s in GS.ARGUMENTS]
        named = {s.name: a for s, a in zip(GS.ARGUMENTS, args, strict=True)}
        for name in inputs.derived:  # every derived default depends on non-derived inputs only
            index = [s.name for s in GS.ARGUMENTS].index(name)
            args[index] = derived_fns[name](*args)[0]
            shown_inputs[name] = _finite(name, args[index], G.derived_default(name), named)
        out = dict(zip(exprs, func(*args), strict=True))
        quantities = {k: _finite(k, out[f"constants.{k}"], exprs[f"constants.{k}"], named)
                      for k in statement.constants}
        quantities["alpha"] = inputs.alpha
        quantities["Phi0"] = inputs.Phi0
        quantities = {k: quantities[k] for k in QUANTITY_KEYS}
        terms = {k: _finite(k, out[f"terms.{k}"], exprs[f"terms.{k}"], named)
                 for k in statement.terms}
        bound = {k: _finite(k, out[f"bound.{k}"], exprs[f"bound.{k}"], named)
                 for k in statement.bound}
        probability = _finite("probability", out["probability"], exprs["probability"], named)
        approximate = {s.name: a for s, a in zip(GS.ARGUMENTS, args, strict=True)}
        conditions = []
        for cond, op, sides, info in conds:
            lhs, rhs = sides(*args)
            holds = condition_holds(info, {}, approximate, precision)
            detail = (f"{cond.requirement}: {mpmath.nstr(lhs, 6)} {op} {mpmath.nstr(rhs, 6)} "
                      f"{'holds' if holds else 'FAILS'}")
            if not holds:
                detail += f" ({cond.why})"
            conditions.append({"name": cond.name, "holds": holds, "detail": detail})
        # the verdict compares the mpmath values (a float tie cannot flip it)
        yard_mp = {"loss_range": out["constants.loss_range"],
                   **{k: mpmath.mpf(v) for k, v in measured_values.items()}}
        conditions_hold = all(c["holds"] for c in conditions)
        verdict, binding = verdict_of(conditions_hold, out["bound.true_loss"], yard_mp,
                                      out["probability"], inputs.min_probability)
        sufficient = probability_sufficient(out["probability"], inputs.min_probability)
        chance = probability_text(probability, inputs.min_probability,
                                  {k: float(v) for k, v in probability_terms(named).items()},
                                  sufficient)
    yardsticks = {"loss_range": quantities["loss_range"], **measured_values}
    failing = [c["name"] for c in conditions if not c["holds"]]
    assumptions = _assumptions(inputs, hidden_used)
    form = "as_printed" if inputs.as_printed else "derived"
    hidden_text = ", ".join(
        f"{s.name} = {shown_inputs[s.name]:g}"
        + (f" (derived: {GS.DERIVED_DEFAULTS[s.name]})" if s.name in inputs.derived else "")
        for s in GS.HIDDEN_CONSTANTS)
    result: dict[str, Any] = {
        "statement": {
            "name": statement.name,
            "title": statement.title,
            "summary": statement.summary,
            "guaranteed": verdict == "guaranteed",
            "conditions_hold": conditions_hold,
            "probability_sufficient": sufficient,
            "free_bound": yardsticks[binding],
            "free_bound_name": binding,
            "status_line": status_line(verdict, failing, len(conditions),
                                       bound["true_loss"], yardsticks, assumptions, chance),
            "assumptions": assumptions,
            "form": form,
            "precision_digits": precision,
            "paper": "Generalization bound for a Shallow Transformer trained using Gradient "
                     "Descent (anonymous submission, under review)",
            "hidden_constants": (
                hidden_text + " (constants the paper hides in '≲', O, Omega; each defaults to 1, "
                "an assumption, except C_conf, whose default 3 (A + Y) is derived)"),
            "discrepancies": (
                "; ".join(f"{d.key} (lines {d.lines})" for d in G.discrepancies())
                + f". This output uses the {form} form; --symbolic shows both, "
                  "docs/generalization.md explains each"),
        },
        "verdict": verdict,
        "inputs": shown_inputs,
        "quantities": quantities,
        "terms": terms,
        "bound": bound,
    }
    if measured_values:
        result["measured"] = measured_values
    result.update({"conditions": conditions, "probability": probability,
                   "version": __version__})
    return result


def render_descriptions() -> dict[str, str]:
    """One-line meaning of every key of the output (for ``render_result(descriptions=...)``)."""
    out = {s.name: text for s, text in GS.GLOSSARY.items()}
    out["d"] = "input dimension of the LeCun draw (default d_m; the formulas assume d = d_m)"
    out["norms_source"] = "where the seven init norms come from"
    out.update(G.DESCRIPTIONS)
    out.update({"alpha": GS.GLOSSARY[GS.alpha], "Phi0": GS.GLOSSARY[GS.Phi0]})
    out.update(MEASURED_KEYS)
    return out


def render_latex_names() -> dict[str, str]:
    """LaTeX symbol of every key of the output (for ``render_result(latex_names=...)``)."""
    out = {s.name: name for s, name in GS.LATEX_NAMES.items()}
    out.update(G.LATEX)
    return out


def evaluate_generalization(
    *,
    N: object,
    d_m: object,
    d_s: object,
    R_X: object,
    radii: object,
    delta: object,
    alpha: object,
    Phi0: object,
    init_norms: Mapping[str, object] | None = None,
    seed: object = None,
    d: object = None,
    hidden_constants: str | Mapping[str, object] | None = None,
    as_printed: bool = False,
    precision: int = GENERALIZATION_PRECISION,
    Y: object = None,
    measured: Mapping[str, object] | None = None,
    min_probability: object = None,
) -> dict[str, Any]:
    """Paper 003's Theorem 5 at one point, as the calculator's JSON-ready dict.

    Args:
        N: number of training examples (≥ 2).
        d_m: model dimension. d_s: sequence length. R_X: ‖X_n‖_F ≤ √d_s·R_X.
        radii: (R_Q, R_K, R_V, R_O), a 4-sequence or ``"R_Q,R_K,R_V,R_O"``.
        delta: failure probability (the bound holds w.p. ≥ 1 − 8e^{−d_m/2} − 2δ − …).
        alpha: σ_min(F_pre⁰). Phi0: Φ(θ⁰) = ½‖f(θ⁰) − y‖² (a sum over the N samples).
        init_norms: the seven norms of θ⁰ keyed as :data:`NORM_FLAGS`; or
        seed: draw them from the LeCun init (:func:`lecun_init_norms`), with
        d: the input dimension of that draw (default d_m, the paper's line 145).
        hidden_constants: overrides of the hidden constants (each defaults to 1, an assumption,
            except C_conf, whose default 3 (A + Y) the derivation gives).
        as_printed: evaluate the printed statements instead of the derived forms.
        precision: mpmath digits.
        Y: the label bound, |y| ≤ Y for every label (default 1): the loss range A + Y.
        measured: measured free yardsticks (keys of :data:`MEASURED_KEYS`) the verdict also
            judges the bound against.
        min_probability: the smallest probability at which the bound counts as guaranteed
            (default ½); below it the verdict is ``not_guaranteed`` and says so.

    Returns:
        ``{statement, verdict, inputs, quantities, terms, bound, conditions, probability,
        version}`` (and ``measured`` when given).

    Raises:
        InputError: a bad input; ``.flag`` names the CLI flag.
    """
    inputs = validate_generalization(
        N=N, d_m=d_m, d_s=d_s, R_X=R_X, radii=radii, delta=delta, alpha=alpha, Phi0=Phi0,
        init_norms=init_norms, seed=seed, d=d, hidden_constants=hidden_constants,
        as_printed=as_printed, Y=Y, min_probability=min_probability,
    )
    return evaluate_inputs(inputs, precision, measured)


# ---------------------------------------------------------------------------------------------
# Symbolic output
# ---------------------------------------------------------------------------------------------


def _unicode(expr: sp.Basic) -> str:
    names = {s: sp.Symbol(GS.UNICODE_NAMES[s], **s.assumptions0)
             for s in expr.free_symbols if s in GS.UNICODE_NAMES}
    return sp.sstr(expr.xreplace(names))


def _latex(expr: sp.Basic) -> str:
    return sp.latex(expr, symbol_names={**GS.LATEX_NAMES, **G.QUANTITY_LATEX})


def symbolic_generalization(as_printed: bool = False) -> dict[str, Any]:
    """Every formula of Theorem 5 (Unicode one-liner and LaTeX), its conditions, its probability,
    the hidden constants and the discrepancy table with both forms (for ``--symbolic``).

    Formulas are written one level at a time (:func:`G.compact_formulas`): P in terms of η_V,
    η_K, η_Q; the terms in terms of ρ, M, z, s, A; and so on.
    """
    st = G.theorem5(as_printed)
    compact = G.compact_formulas(as_printed)

    def entry(key: str, expr: sp.Basic) -> dict[str, str]:
        short = key.split(".", 1)[-1]
        symbol = G.QUANTITY_SYMBOLS.get(short)
        return {"description": G.DESCRIPTIONS.get(short, ""),
                "symbol": str(symbol) if symbol is not None else short,
                "unicode": _unicode(expr), "latex": _latex(expr)}

    return {
        "statement": {"name": st.name, "title": st.title, "summary": st.summary,
                      "form": "as_printed" if as_printed else "derived"},
        "quantities": {k: entry(k, compact[k]) for k in st.constants},
        "terms": {k: entry(f"terms.{k}", compact[f"terms.{k}"]) for k in st.terms},
        "bound": {k: entry(f"bound.{k}", compact[f"bound.{k}"]) for k in st.bound},
        "probability": entry("probability", compact["probability"]),
        "conditions": [{"name": c.name, "requirement": c.requirement,
                        "unicode": _unicode(compact[f"condition.{c.name}"]),
                        "latex": _latex(compact[f"condition.{c.name}"]),
                        "why": c.why} for c in st.conditions],
        "hidden_constants": {s.name: {"default": d if d is not None
                                      else GS.DERIVED_DEFAULTS[s.name],
                                      "derived": d is None, "where": text}
                             for s, (d, text) in GS.HIDDEN_CONSTANTS.items()},
        "discrepancies": [
            {"key": d.key, "lines": d.lines, "note": d.note,
             "printed": {"text": d.printed,
                         "unicode": _unicode(d.printed_expr) if d.printed_expr is not None
                         else "", "latex": _latex(d.printed_expr)
                         if d.printed_expr is not None else ""},
             "derived": {"text": d.derived,
                         "unicode": _unicode(d.derived_expr) if d.derived_expr is not None
                         else "", "latex": _latex(d.derived_expr)
                         if d.derived_expr is not None else ""}}
            for d in G.discrepancies()
        ],
    }


def symbolic_text(as_printed: bool = False) -> str:
    """Plain-text rendering of :func:`symbolic_generalization` (Unicode and LaTeX per line)."""
    data = symbolic_generalization(as_printed)
    lines = [f"{data['statement']['title']} — form: {data['statement']['form']}", ""]
    for group in ("quantities", "terms", "bound"):
        lines.append(f"[{group}]")
        for key, e in data[group].items():
            lines.append(f"  {key}: {e['symbol']} = {e['unicode']}")
            lines.append(f"    LaTeX: {e['latex']}")
            if e["description"]:
                lines.append(f"    ({e['description']})")
        lines.append("")
    p = data["probability"]
    lines += ["[probability]", f"  {p['unicode']}", f"    LaTeX: {p['latex']}", ""]
    lines.append("[conditions]")
    for c in data["conditions"]:
        lines.append(f"  {c['name']}: {c['unicode']}    ({c['why']})")
    lines += ["", "[hidden constants] (each defaults to 1, an assumption, unless derived; set "
                  "with --hidden-constants)"]
    for name, h in data["hidden_constants"].items():
        derived = " (derived)" if h["derived"] else ""
        lines.append(f"  {name} = {h['default']}{derived}: {h['where']}")
    lines += ["", "[discrepancies: printed statement vs derivation; default = derived, "
                  "--as-printed = printed]"]
    for d in data["discrepancies"]:
        lines.append(f"  {d['key']} (lines {d['lines']})")
        lines.append(f"    printed: {d['printed']['text']}")
        if d["printed"]["latex"]:
            lines.append(f"      LaTeX: {d['printed']['latex']}")
        lines.append(f"    derived: {d['derived']['text']}")
        if d["derived"]["latex"]:
            lines.append(f"      LaTeX: {d['derived']['latex']}")
        lines.append(f"    {d['note']}")
    return "\n".join(lines) + "\n"
