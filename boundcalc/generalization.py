"""Evaluate paper 003's generalization bound (Theorem 5) for concrete sizes: the API behind
``boundcalc generalization``.

Paper 003 is "Generalization bound for a Shallow Transformer trained using Gradient Descent". Its
expressions live in :mod:`boundcalc.theory.generalization` (sympy); the inputs are checked (and
the initial norms optionally drawn from the LeCun initialisation with numpy) by
:mod:`boundcalc.generalization_inputs`, whose public names this module re-exports. Here every
expression is evaluated with mpmath at :data:`GENERALIZATION_PRECISION` digits into the JSON
contract of the calculator::

    {statement, inputs, quantities, terms, bound, conditions, probability, version}

``quantities`` carries every named quantity of the paper (η_•, ξ_•, ρ, z, ẑ, M, M̂, A, P, α,
Φ(θ⁰), plus the intermediate values listed in :data:`QUANTITY_KEYS`), all finite floats.
:func:`symbolic_generalization` and :func:`symbolic_text` give the formulas themselves
(``--symbolic``). Nothing here imports torch or the validators; measuring the inputs on a data set
(``--data``) is :func:`boundcalc.validators.generalization_data.measure_data`.

Example:
    >>> from boundcalc.generalization import evaluate_generalization
    >>> out = evaluate_generalization(N=1000, d_m=64, d_s=13, R_X=1, radii=(1, 1, 1, 1),
    ...                               delta=0.05, alpha=0.5, Phi0=10, seed=0)
    >>> sorted(out)
    ['bound', 'conditions', 'inputs', 'probability', 'quantities', 'statement', 'terms', 'version']
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import cache
from typing import Any

import mpmath
import sympy as sp

from boundcalc.evaluator import compile_function, condition_holds, condition_info
from boundcalc.generalization_inputs import (
    NORM_FLAGS,
    GeneralizationInputs,
    lecun_init_norms,
    parse_hidden_constants,
    parse_radii,
    validate_generalization,
)
from boundcalc.theory import generalization as G
from boundcalc.theory import generalization_symbols as GS
from boundcalc.version import __version__

__all__ = ["GENERALIZATION_PRECISION", "NORM_FLAGS", "QUANTITY_KEYS",
           "GeneralizationInputs", "evaluate_generalization", "evaluate_inputs",
           "lecun_init_norms", "parse_hidden_constants", "parse_radii", "render_descriptions",
           "render_latex_names", "symbolic_generalization", "symbolic_text",
           "validate_generalization"]

#: Keys of the ``quantities`` section, in output order: the 16 named quantities of the paper
#: (η_•, ξ_•, ρ, z, ẑ, M, M̂, A, P, α, Φ(θ⁰)), then the intermediate values.
QUANTITY_KEYS: tuple[str, ...] = (
    "eta_Q", "eta_K", "eta_V", "eta_O", "xi_Q", "xi_K", "xi_V", "rho", "z", "z_hat", "M",
    "M_hat", "A", "P", "alpha", "Phi0",
    "R", "R_union", "dudley_scale", "rademacher_complexity", "lemma1_as_printed",
    "lemma4_first", "lemma4_second", "empirical_loss_phi0", "lemma4_probability",
)

#: mpmath digits of Theorem 5's evaluation: 30, not the 20 of the other statements
#: (:data:`boundcalc.evaluator.DEFAULT_PRECISION`). Theorem 5's probability
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
    with each condition's code for :func:`boundcalc.evaluator.condition_holds`, once per form."""
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
    return statement, keys, func, tuple(conds)


def _extreme_flag(inputs: GeneralizationInputs) -> str:
    """The flag of the input farthest from 1 in magnitude (what drives a value past the float
    range)."""
    values: list[tuple[str, float]] = [
        ("--N", inputs.N), ("--dm", inputs.d_m), ("--ds", inputs.d_s), ("--rx", inputs.R_X),
        ("--delta", inputs.delta), ("--alpha", inputs.alpha), ("--phi0", inputs.Phi0),
        *(("--radii", r) for r in inputs.radii),
        *((NORM_FLAGS[k], v) for k, v in inputs.norms.items()),
        *(("--hidden-constants", v) for v in inputs.hidden.values())]
    positive = [(flag, abs(math.log10(v))) for flag, v in values if v > 0]
    return max(positive, key=lambda item: item[1])[0] if positive else "--N"


def _finite(name: str, value: mpmath.mpf, inputs: GeneralizationInputs) -> float:
    """``value`` as a float; beyond the float range an :class:`InputError` naming the most
    extreme input (as ``steps`` and ``width`` refuse to answer from overflowing quantities)."""
    out = float(value)
    if not math.isfinite(out):
        from boundcalc.api import overflow_text
        from boundcalc.errors import InputError

        raise InputError(_extreme_flag(inputs),
                         f"makes {name} = {overflow_text(value)} exceed the float range; "
                         "give values closer to 1 (inputs out of the representable range)")
    return out


def evaluate_inputs(inputs: GeneralizationInputs,
                    precision: int = GENERALIZATION_PRECISION) -> dict[str, Any]:
    """Evaluate Theorem 5 (derived or printed form) at validated inputs; the JSON contract."""
    if precision < 10:
        raise ValueError(f"`precision` must be >= 10 digits, got {precision}")
    statement, keys, func, conds = _compiled(inputs.as_printed)
    values = inputs.symbol_values()
    with mpmath.workdps(precision):
        args = [mpmath.mpf(values[s]) for s in GS.ARGUMENTS]
        out = dict(zip(keys, func(*args), strict=True))
        quantities = {k: _finite(k, out[f"constants.{k}"], inputs)
                      for k in statement.constants}
        quantities["alpha"] = inputs.alpha
        quantities["Phi0"] = inputs.Phi0
        quantities = {k: quantities[k] for k in QUANTITY_KEYS}
        terms = {k: _finite(k, out[f"terms.{k}"], inputs) for k in statement.terms}
        bound = {k: _finite(k, out[f"bound.{k}"], inputs) for k in statement.bound}
        probability = _finite("probability", out["probability"], inputs)
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
    guaranteed = all(c["holds"] for c in conditions)
    form = "as_printed" if inputs.as_printed else "derived"
    return {
        "statement": {
            "name": statement.name,
            "title": statement.title,
            "summary": statement.summary,
            "guaranteed": guaranteed,
            "form": form,
            "precision_digits": precision,
            "paper": "Generalization bound for a Shallow Transformer trained using Gradient "
                     "Descent (anonymous submission, under review)",
            "hidden_constants": (
                ", ".join(f"{s.name} = {inputs.hidden[s.name]:g}" for s in GS.HIDDEN_CONSTANTS)
                + " (constants the paper hides in '≲', O, Omega; each defaults to 1)"),
            "discrepancies": (
                "; ".join(f"{d.key} (lines {d.lines})" for d in G.discrepancies())
                + f". This output uses the {form} form; --symbolic shows both, "
                  "docs/generalization.md explains each"),
        },
        "inputs": inputs.as_dict(),
        "quantities": quantities,
        "terms": terms,
        "bound": bound,
        "conditions": conditions,
        "probability": probability,
        "version": __version__,
    }


def render_descriptions() -> dict[str, str]:
    """One-line meaning of every key of the output (for ``render_result(descriptions=...)``)."""
    out = {s.name: text for s, text in GS.GLOSSARY.items()}
    out["d"] = "input dimension of the LeCun draw (default d_m; the formulas assume d = d_m)"
    out["norms_source"] = "where the seven init norms come from"
    out.update(G.DESCRIPTIONS)
    out.update({"alpha": GS.GLOSSARY[GS.alpha], "Phi0": GS.GLOSSARY[GS.Phi0]})
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
        hidden_constants: overrides of :data:`GS.HIDDEN_DEFAULTS` (each defaults to 1).
        as_printed: evaluate the printed statements instead of the derived forms.
        precision: mpmath digits.

    Returns:
        ``{statement, inputs, quantities, terms, bound, conditions, probability, version}``.

    Raises:
        InputError: a bad input; ``.flag`` names the CLI flag.
    """
    inputs = validate_generalization(
        N=N, d_m=d_m, d_s=d_s, R_X=R_X, radii=radii, delta=delta, alpha=alpha, Phi0=Phi0,
        init_norms=init_norms, seed=seed, d=d, hidden_constants=hidden_constants,
        as_printed=as_printed,
    )
    return evaluate_inputs(inputs, precision)


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
        "hidden_constants": {s.name: {"default": d, "where": text}
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
    lines += ["", "[hidden constants] (each defaults to 1; set with --hidden-constants)"]
    for name, h in data["hidden_constants"].items():
        lines.append(f"  {name} = {h['default']}: {h['where']}")
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
