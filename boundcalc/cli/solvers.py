"""``boundcalc width`` and ``boundcalc steps``: solve Theorem 1 for the width m or the number of
steps K that brings a term under a target, or (``width --nonvacuous``) for the smallest width at
which the bound is non-vacuous. The searches are :mod:`boundcalc.calc.solvers`'s; every answer is
re-checked with the exact evaluator at the answer and one below it, and both checks are shown
as conditions.
"""

import inspect
from collections.abc import Mapping
from dataclasses import replace
from typing import Annotated, Any

import mpmath
import typer

from boundcalc.calc.api import INITIAL_LOSS_KEY, TRIVIAL_KEY, VERDICT_BOUND, evaluate
from boundcalc.calc.evaluator import compiled_statement
from boundcalc.calc.solvers import (
    MAX_WIDTH,
    WIDTH_TERMS,
    compare_text,
    nonvacuous_width,
    point_arguments,
    refuse_overflow,
    smallest_verified,
    solve_steps,
    solve_width,
    width_terms,
)
from boundcalc.cli.app import (
    PARAMS_PANEL,
    app,
    check_format_flag,
    check_precision,
    check_route,
    check_target,
    console_width,
    emit,
    examples,
    finish,
    note,
)
from boundcalc.cli.options import (
    FmtOpt,
    OutOpt,
    PrecOpt,
    RouteOpt,
    StrictOpt,
    TargetOpt,
    parameter_names,
    with_options,
)
from boundcalc.inputs.combinations import check_combinations
from boundcalc.inputs.params import PARAMS, validate
from boundcalc.render.result_text import render_result
from boundcalc.version import __version__

__all__ = ["steps", "width"]

#: Significant digits that ``width`` / ``steps`` tables show (the answer sits at the target).
SOLVER_DIGITS = 12

#: The options after the parameters: (name, type, default).
_SOLVER_OPTIONS = [("route", RouteOpt, None), ("precision", PrecOpt, None),
                   ("format", FmtOpt, "table"), ("output", OutOpt, None),
                   ("strict", StrictOpt, False)]

#: How ``width --nonvacuous`` writes each free bound.
_SYMBOL = {TRIVIAL_KEY: "B²", INITIAL_LOSS_KEY: "Y²"}


def _given(flags: dict[str, Any]) -> dict[str, str]:
    """The parameters the user passed (None means 'use the default')."""
    return {name: flags[name] for name in PARAMS if flags.get(name) is not None}


def _solver_header(name: str, title: str, summary: str, guaranteed: bool, precision: int,
                   route: str | None = None) -> dict[str, Any]:
    return {"name": name, "title": title, "summary": summary, "guaranteed": guaranteed,
            "route": route or None, "precision_digits": precision}


def _solver_result(header: dict[str, Any], inputs: dict[str, Any], answer: dict[str, Any],
                   conditions: list[dict[str, Any]], evaluation: Any,
                   extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A solver's JSON: statement, the active drift bound at the answer (tight route; None on
    the paper route), ``extra`` top-level keys, inputs, answer, conditions, version."""
    return {"statement": header, **(extra or {}),
            "active_drift_bound": evaluation.active_drift_bound, "inputs": inputs,
            "answer": answer, "conditions": conditions, "version": __version__}


def _target_checks(quantity: str, var: str, found: int, step: int, value: Any, previous: Any,
                   goal: float, smallest: str, below_name: str) -> list[dict[str, Any]]:
    """The two re-checks of a solver's answer, as conditions: ``quantity`` meets ``goal`` at
    ``var = found``, and misses it one ``step`` below (or ``found`` is the smallest candidate)."""
    below_misses = found == step or (previous is not None and previous > goal)
    return [
        {"name": "meets_target", "holds": bool(value <= goal),
         "detail": f"{quantity} = {compare_text(value, goal)} <= {goal!r} at {var} = {found}"},
        {"name": below_name, "holds": bool(below_misses),
         "detail": (smallest if found == step else
                    f"{quantity} = {compare_text(previous, goal)} > {goal!r} at "
                    f"{var} = {found - step}")},
    ]


_WIDTH_HELP = (
    "Smallest even width m whose width terms of Theorem 1, B·ε_lin + B·ε_app + B·ε_cf "
    "(B·ε_tay for B·ε_lin on the tight route), are at most --target; or, with --nonvacuous, the "
    "smallest even m at which Theorem 1's bound is non-vacuous, min_iterate below the free "
    "bound min(B², Y²) (B² bounds the loss on Ω_ρ; Y² bounds the loss at initialization, "
    "f(θ(0)) = 0, and k = 0 is an iterate).\n\n"
    "--target: doubling from m = 2 to a feasible width, then bisection over even m (the answer "
    "meets the target and m − 2 does not); both are re-checked with the exact evaluator "
    "and reported. Exit 1 if no m up to 2^62 meets the target.\n\n"
    "--nonvacuous: every other input fixed (η* recomputed per m unless --eta is given); a "
    "float64 grid (every even m up to 8192, then 64 widths per octave up to 2^62), bisection over "
    "the even integers between the last vacuous and the first non-vacuous grid width, then the "
    "exact mpmath evaluator confirms m non-vacuous and m − 2 vacuous (the same search as the "
    "point commands' nonvacuous_from_m). Exit 1 if no m up to 2^62 is non-vacuous.\n\n"
    "--route tight (default), paper, gradnorm or joint: the proof route of Theorem 1."
)


@app.command(help=_WIDTH_HELP,
             short_help="Smallest even width m that brings the width terms under --target, or "
                        "makes the bound non-vacuous.",
             epilog=examples(
    "boundcalc width --target 0.1 --n 1e6",
    "boundcalc width --target 1 --n 1000 --rho 2 --nu 1 --d 4 --format json",
    "boundcalc width --target 0.5 --activation erf --delta 0.01",
    "boundcalc width --nonvacuous --n 1000 --rho 2 --route paper"))
@with_options([
    ("target", Annotated[str | None, typer.Option(
        "--target", help="the value to get under (> 0); or give --nonvacuous",
        metavar="VALUE", rich_help_panel=PARAMS_PANEL, show_default=False)], None),
    ("nonvacuous", Annotated[bool, typer.Option(
        "--nonvacuous", help="solve for the smallest even m with min_iterate < min(B^2, Y^2) "
        "instead of a --target", rich_help_panel=PARAMS_PANEL)], False),
    *((name, None, None) for name in parameter_names("theorem1", without=("m",))),
    *_SOLVER_OPTIONS])
def width(target: str | None, nonvacuous: bool, **flags: Any) -> None:
    """Smallest even width m that brings the width terms under --target (or, with --nonvacuous,
    makes the bound non-vacuous).

    ``--help`` shows :data:`_WIDTH_HELP`.
    """
    fmt, output, strict = check_format_flag(flags["format"]), flags["output"], flags["strict"]
    digits, shown = check_precision(flags["precision"])
    key = check_route(flags["route"], "theorem1")
    check_combinations("width", {"nonvacuous": nonvacuous, "target": target})
    given = _given(flags)
    inputs = validate(**given, statement=key)
    if nonvacuous:
        _width_nonvacuous(key, inputs, given, digits, shown, fmt, output, strict)
        return
    goal = check_target(str(target))
    search_digits = max(digits, 30)
    args = point_arguments(inputs, search_digits)
    answer = solve_width(lambda w: width_terms(key, args, w, search_digits), goal)
    if answer is None:
        refuse_overflow(key, given, evaluate(key, replace(inputs, m=MAX_WIDTH), precision=digits),
                        digits, m=MAX_WIDTH)
        top = width_terms(key, args, MAX_WIDTH, search_digits)
        note(f"infeasible: no even m <= 2^62 meets --target {target} (the width terms are "
              f"{top:.6g} at m = 2^62)")
        raise typer.Exit(1)

    def exact(w: int) -> tuple[Any, Any]:
        ev = evaluate(key, replace(inputs, m=w), precision=digits)
        return ev, mpmath.fsum(ev.terms[k] for k in WIDTH_TERMS)

    m_found, ev, value, previous = smallest_verified(exact, answer.m, 2, goal)
    refuse_overflow(key, given, ev, digits, m=m_found)
    data = ev.to_dict()
    route_name = data["statement"]["route"] or ""
    terms_text = f"B·({'ε_tay' if route_name == 'tight' else 'ε_lin'} + ε_app + ε_cf)"
    inputs_shown = {k: v for k, v in data["inputs"].items() if k != "m"}
    inputs_shown["target"] = goal
    conditions = [*_target_checks(terms_text, "m", m_found, 2, value, previous, goal,
                                  "m = 2 is the smallest even width", "m_minus_2_misses_target"),
                  *data["conditions"]]
    answer_section = {
        "m": m_found,
        "width_terms": float(value),
        "width_terms_at_m_minus_2": None if previous is None else float(previous),
        **{k: data["terms"][k] for k in WIDTH_TERMS},
        "min_iterate_at_m": data["bound"]["min_iterate"],
        "widths_evaluated": answer.evaluations,
    }
    header = _solver_header(
        "width", "Smallest even width m for the width terms of Theorem 1",
        f"Smallest even m with {terms_text} <= target (doubling, then bisection over even m; "
        f"re-checked with the exact evaluator at m and m − 2).",
        all(c["holds"] for c in conditions), digits, route_name)
    result = _solver_result(header, inputs_shown, answer_section, conditions, ev)
    _render_solver(result, fmt, output, shown, strict, key)


def _width_nonvacuous(key: str, inputs: Any, given: Mapping[str, str], digits: int,
                      shown: int | None, fmt: str, output: str | None, strict: bool) -> None:
    """``width --nonvacuous``: the smallest even m with min_iterate below the free bound
    min(B², Y²) (Theorem 1 on the route of ``key``), rendered like ``width --target``."""
    answer = nonvacuous_width(key, inputs, digits)
    if answer is None:
        top = evaluate(key, replace(inputs, m=MAX_WIDTH), precision=digits)
        refuse_overflow(key, given, top, digits, m=MAX_WIDTH)
        free_key, free_value = top.free_bound or (TRIVIAL_KEY, top.constants[TRIVIAL_KEY])
        note(f"infeasible: no even m <= 2^62 makes the bound non-vacuous (min_iterate = "
              f"{mpmath.nstr(top.bound[VERDICT_BOUND], 6)} >= {_SYMBOL[free_key]} = "
              f"{mpmath.nstr(free_value, 6)} at m = 2^62)")
        raise typer.Exit(1)
    ev, prev, m_found = answer.evaluation, answer.previous, answer.m
    refuse_overflow(key, given, ev, digits, m=m_found)
    value, trivial = ev.bound[VERDICT_BOUND], ev.constants[TRIVIAL_KEY]  # type: ignore[attr-defined]
    free_key, free = ev.free_bound  # type: ignore[attr-defined]
    data = ev.to_dict()  # type: ignore[attr-defined]
    inputs_shown = {k: v for k, v in data["inputs"].items() if k != "m"}
    conditions = [
        {"name": "non_vacuous_at_m", "holds": bool(value < free),
         "detail": f"min_iterate = {mpmath.nstr(value, 12)} < {_SYMBOL[free_key]} = "
                   f"{mpmath.nstr(free, 12)} at m = {m_found}"},
    ]
    p_value = p_trivial = p_free = None
    if prev is None:
        conditions.append({"name": "m_minus_2_vacuous", "holds": True,
                           "detail": "m = 2 is the smallest even width"})
    else:
        p_value, p_trivial = prev.bound[VERDICT_BOUND], prev.constants[TRIVIAL_KEY]  # type: ignore[attr-defined]
        p_key, p_free = prev.free_bound  # type: ignore[attr-defined]
        conditions.append({"name": "m_minus_2_vacuous", "holds": bool(not p_value < p_free),
                           "detail": f"min_iterate = {mpmath.nstr(p_value, 12)} >= "
                                     f"{_SYMBOL[p_key]} = {mpmath.nstr(p_free, 12)} at m = "
                                     f"{m_found - 2}"})
    conditions += data["conditions"]
    answer_section = {
        "m": m_found,
        "min_iterate": float(value),
        "free_bound": free_key,
        "free_bound_value": float(free),
        "trivial_bound_B2": float(trivial),
        "initial_loss_bound": data["constants"].get(INITIAL_LOSS_KEY),
        "min_iterate_at_m_minus_2": None if p_value is None else float(p_value),
        "free_bound_value_at_m_minus_2": None if p_free is None else float(p_free),
        "trivial_bound_B2_at_m_minus_2": None if p_trivial is None else float(p_trivial),
        "average_iterate_at_m": data["bound"]["average_iterate"],
        "eta": data["inputs"]["eta"],
        "eta_source": data["inputs"]["eta_source"],
        "grid_widths_evaluated": answer.grid_points,
        "exact_evaluations": answer.exact_evaluations,
    }
    route_name = data["statement"]["route"] or ""
    header = _solver_header(
        "width", "Smallest even width m at which Theorem 1's bound is non-vacuous",
        "Smallest even m with min_iterate < min(B², Y²) (the free bound), every other input "
        "fixed: a "
        "float64 grid (every even m up to 8192, then 64 per octave up to 2^62), bisection between "
        "the last vacuous and the first non-vacuous grid width, confirmed with the exact "
        "evaluator at m (non-vacuous) and m − 2 (vacuous).",
        all(c["holds"] for c in conditions), digits, route_name)
    result = _solver_result(header, inputs_shown, answer_section, conditions, ev,
                            {"nonvacuous_from_m": m_found})
    _render_solver(result, fmt, output, shown, strict, key)


_STEPS_HELP = (
    "Smallest number of steps K whose optimization term of Theorem 1 is at most --target.\n\n"
    "At the theorem's step size η* = ‖ν‖/(2LB√K) the term is ‖ν‖LB/√K, so K = "
    "⌈(‖ν‖LB/target)²⌉; at a fixed --eta it is ‖ν‖²/(4ηK) + ηL²B², reachable only if "
    "ηL²B² < target (else exit 1). K and K − 1 are re-checked with the exact evaluator.\n\n"
    "--route tight (default), paper, gradnorm or joint: the proof route of Theorem 1 (L and B "
    "are the "
    "route's)."
)


@app.command(help=_STEPS_HELP,
             short_help="Number of steps K that brings the optimization term under --target.",
             epilog=examples(
    "boundcalc steps --target 0.1 --m 4096",
    "boundcalc steps --target 1 --m 512 --eta 1e-5",
    "boundcalc steps --target 0.5 --m 1024 --rho 2 --nu 1 --format json",
    "boundcalc steps --target 0.1 --m 4096 --route paper"))
@with_options([("target", TargetOpt, inspect.Parameter.empty),
               *((name, None, None) for name in parameter_names("theorem1", without=("steps",))),
               *_SOLVER_OPTIONS])
def steps(target: str, **flags: Any) -> None:
    """Number of steps K that brings the optimization term under --target.

    ``--help`` shows :data:`_STEPS_HELP`.
    """
    fmt, output, strict = check_format_flag(flags["format"]), flags["output"], flags["strict"]
    digits, shown = check_precision(flags["precision"])
    key = check_route(flags["route"], "theorem1")
    goal = check_target(target)
    given = _given(flags)
    inputs = validate(**given, statement=key)
    base = evaluate(key, inputs, precision=digits)
    refuse_overflow(key, given, base, digits)
    c = base.constants
    answer = solve_steps(c["transport_norm"], c["lipschitz_L"], c["residual_envelope_B"],
                         target.strip(), eta=inputs.eta, precision=digits + 10)
    if answer.steps is None:
        note(f"infeasible: no K meets --target {target} at --eta {inputs.eta}: {answer.reason}; "
              f"omit --eta to use eta* (every target is then reachable)")
        raise typer.Exit(1)

    def exact(k: int) -> tuple[Any, Any]:
        ev = evaluate(key, replace(inputs, steps=k), precision=digits)
        return ev, ev.terms["optimization"]

    k_found, ev, value, previous = smallest_verified(exact, answer.steps, 1, goal)
    refuse_overflow(key, given, ev, digits, steps=k_found)
    data = ev.to_dict()
    inputs_shown = {k: v for k, v in data["inputs"].items() if k != "K"}
    inputs_shown["target"] = goal
    conditions = [*_target_checks("optimization term", "K", k_found, 1, value, previous, goal,
                                  "K = 1 is the smallest", "k_minus_1_misses_target"),
                  *data["conditions"]]
    answer_section = {
        "K": k_found,
        "optimization_term": float(value),
        "optimization_term_at_K_minus_1": None if previous is None else float(previous),
        "eta": data["inputs"]["eta"],
        "eta_source": data["inputs"]["eta_source"],
        "transport_norm": data["constants"]["transport_norm"],
        "lipschitz_L": data["constants"]["lipschitz_L"],
        "residual_envelope_B": data["constants"]["residual_envelope_B"],
        "min_iterate_at_K": data["bound"]["min_iterate"],
    }
    header = _solver_header(
        "steps", "Number of steps K for the optimization term of Theorem 1",
        "Smallest K with optimization term <= target: K = ceil((||nu|| L B / target)^2) at "
        "eta*, or ceil(||nu||^2 / (4 eta (target - eta L^2 B^2))) at a fixed eta; re-checked "
        "with the exact evaluator at K and K − 1.",
        all(c["holds"] for c in conditions), digits, data["statement"]["route"] or "")
    result = _solver_result(header, inputs_shown, answer_section, conditions, ev)
    _render_solver(result, fmt, output, shown, strict, key)


def _render_solver(result: dict[str, Any], fmt: str, output: str | None, shown: int | None,
                   strict: bool, key: str) -> None:
    st = compiled_statement(key)
    text = render_result(result, fmt, digits=shown or SOLVER_DIGITS, descriptions=st.descriptions,
                         latex_names=st.latex_names, width=console_width(output))
    emit(text, output)
    finish(result, fmt, output, strict)
