"""The point commands: one statement at one parameter point (``theorem1`` … ``prop2``).

One command per row of :data:`boundcalc.theory.catalog.STATEMENTS`, generated: its options are the
parameters the row admits (:func:`boundcalc.cli.options.parameter_names`), plus ``--route`` for a
statement with a proof route, plus the output options. The command validates the flags
(:func:`boundcalc.inputs.params.validate`), evaluates (:func:`boundcalc.calc.api.evaluate`), adds
the verdict (:func:`boundcalc.calc.report.with_verdict`) and renders
(:func:`boundcalc.render.result_text.render_result`). ``prop2`` also takes ``--alpha``, the
IndRNN's recurrent scale (:mod:`boundcalc.calc.compare_rnn`).
"""

from typing import Annotated, Any

from boundcalc.calc.api import evaluate
from boundcalc.calc.report import input_sources, with_verdict
from boundcalc.calc.symbolic import symbolic_block
from boundcalc.cli.app import (
    app,
    check_format_flag,
    check_precision,
    check_route,
    console_width,
    emit,
    examples,
    finish,
)
from boundcalc.cli.options import (
    FmtOpt,
    OutOpt,
    PrecOpt,
    RouteOpt,
    StrictOpt,
    SymOpt,
    option,
    parameter_names,
    with_options,
)
from boundcalc.inputs.combinations import check_combinations
from boundcalc.inputs.params import PARAMS, validate
from boundcalc.render.result_text import render_result
from boundcalc.theory.catalog import STATEMENTS, StatementInfo

__all__ = ["prop2"]

#: The output options every point command ends with: (name, type, default).
_OUTPUT_OPTIONS = [("precision", PrecOpt, None), ("format", FmtOpt, "table"),
                   ("output", OutOpt, None), ("symbolic", SymOpt, False),
                   ("strict", StrictOpt, False)]


def _run_point(statement: str, flags: dict[str, Any]) -> None:
    """Split a point command's keyword arguments into parameters given and output options."""
    given = {name: flags[name] for name in PARAMS if flags.get(name) is not None}
    _point(statement, given, flags["format"], flags["output"], flags["symbolic"],
           flags["strict"], flags["precision"], flags.get("route"), flags.get("alpha"))


def _point(statement: str, given: dict[str, str], fmt: str, output: str | None, symbolic: bool,
           strict: bool, precision: str | None, route: str | None = None,
           alpha: str | None = None) -> None:
    """Evaluate ``statement`` (on ``route``; prop2 at Rademacher scale ``alpha``, default 3/2)
    at the validated point, render, write, exit."""
    fmt = check_format_flag(fmt)
    digits, shown = check_precision(precision)
    key = check_route(route, statement)
    other_alpha = None
    if alpha is not None:  # prop2 only; the registered statement is alpha = 3/2
        from boundcalc.calc.compare_rnn import is_default_alpha
        from boundcalc.inputs.surfaces import parse_alpha

        if not is_default_alpha(alpha):
            other_alpha = parse_alpha(alpha)
    check_combinations("point", {"symbolic": symbolic, "fmt": fmt, "alpha": alpha,
                                 "other_alpha": other_alpha})
    inputs = validate(**given, statement=key)
    if other_alpha is not None:
        from boundcalc.calc.compare_rnn import evaluate_prop2, nonvacuous_width_prop2

        result = evaluate_prop2(inputs, other_alpha, digits)
        data = with_verdict(key, result, inputs, digits, search=lambda: nonvacuous_width_prop2(
            inputs, other_alpha, digits))
    else:
        result = evaluate(key, inputs, precision=digits)
        data = with_verdict(key, result, inputs, digits)
    st = result.statement
    shown_data = data
    if fmt == "table":  # eta's source is its own column there
        shown_data = {**data, "inputs": {k: v for k, v in data["inputs"].items()
                                         if k != "eta_source"}}
    sources = input_sources(key, given, data["inputs"])
    if other_alpha is not None:
        sources["alpha"] = "given (--alpha)"
    text = render_result(shown_data, fmt, digits=shown, descriptions=st.descriptions,
                         sources=sources,
                         latex_names=st.latex_names, width=console_width(output))
    if symbolic:
        text += "\n\n" + symbolic_block(key, fmt)
    emit(text, output)
    finish(data, fmt, output, strict)


_POINT_DOC = ("Evaluate {what} at one parameter point: inputs (defaults shown), constants, terms, "
              "bound, probability and each condition PASS/FAIL. A failing condition labels the "
              "result NOT GUARANTEED (exit 0, or 1 with --strict).")


_VERDICT_DOC = (
    "\n\nVerdict (JSON `verdict`, the table's status line, which names the statement's "
    "probability): guaranteed (every condition holds, the probability reaches --min-probability "
    "(default 0.5; below it: not_guaranteed, and the line says so) "
    "and min_iterate < min(B², Y²), the free bound: R̂ ≤ B² for every θ, and the symmetric init "
    "gives f(θ(0)) = 0, so the loss at k = 0 is mean y² ≤ Y²; JSON `free_bound` names the "
    "binding one), vacuous (every condition holds, min_iterate ≥ min(B², Y²)) or not_guaranteed "
    "(a condition fails); `average_iterate_verdict` judges average_iterate against B² alone; "
    "--strict exits 1 unless guaranteed. `nonvacuous_from_m` is the smallest even m with "
    "every condition holding and min_iterate < min(B², Y²) (null where none does), "
    "`nonvacuous_until_m` the last even m of that range where it ends (exact), every other "
    "input fixed (η* recomputed per m unless --eta is given), null if none up to 2^62: a float64 "
    "grid (every even m up to 8192, then 64 widths per octave up to 2^62), bisection over the "
    "even integers between the last vacuous and the first non-vacuous grid width, then the exact "
    "mpmath evaluator confirms m non-vacuous and m − 2 vacuous. A quantity beyond the float "
    "range gives the verdict overflow (its exact value printed as text; JSON: a string, plus "
    "the list `overflow`).")


_ROUTE_DOC = (
    "\n\n--route tight (default), paper, gradnorm or joint: the proof route. The tight route "
    "(derivations.md §7.7, with the per-head block bounds of §7.10; joint: without them) "
    "reports min_iterate = min(min_iterate_linear_drift, "
    "min_iterate_cauchy_schwarz) and names the active drift bound (JSON `active_drift_bound`); "
    "gradnorm (§7.9) adds min_iterate_gradient_cauchy_schwarz (||grad R||^2 <= 4 L^2 R; valid "
    "for every eta, informative for eta L^2 < 1 - eps/B) and takes the step eta_g by default; "
    "paper is the paper's route.")


def _point_examples(cmd: str, extra: str = "") -> str:
    """The examples of the ``--help`` of a point command with a proof route."""
    return examples(
        f"boundcalc {cmd} --m 512 --n 1000 --rho 2{extra}",
        f"boundcalc {cmd} --m 512 --n 1000 --rho 2 --route paper   # vacuous",
        f"boundcalc {cmd} --m 512 --n 1000 --rho 2,3,1 --nu 1 --format json",
        f"boundcalc {cmd} --m 64 --rho 2 --activation erf --symbolic",
        f"boundcalc {cmd} --m 512 --rho 0.5 --nu 1 --strict   # not guaranteed: exit 1",
    )


def _routed_help(what: str) -> str:
    """``--help`` of a point command with a route and a verdict."""
    return _POINT_DOC.format(what=what) + _VERDICT_DOC + _ROUTE_DOC


def _register(row: StatementInfo) -> None:
    """Register the point command of catalog ``row`` (every statement but prop2)."""
    routed = [("route", RouteOpt, None)] if row.routed else []

    @with_options([*((name, None, None) for name in parameter_names(row.name)), *routed,
                   *_OUTPUT_OPTIONS])
    def command(**flags: Any) -> None:
        _run_point(row.name, flags)

    command.__name__ = row.name
    if row.routed:
        extra = "".join(f" {p.flag} {p.example}" for p in PARAMS.values()
                        if p.commands is not None and row.name in p.commands)
        app.command(name=row.name, help=_routed_help(row.what),
                    epilog=_point_examples(row.name, extra),
                    short_help=row.help)(command)
    else:
        app.command(name=row.name, help=_POINT_DOC.format(what=row.what),
                    short_help=row.help,
                    epilog=examples(f"boundcalc {row.name} --m 64 --rho 2",
                                    f"boundcalc {row.name} --m 4096 --d 16 --delta 0.01 "
                                    "--format json",
                                    f"boundcalc {row.name} --m 64 --symbolic"))(command)


def _listing(row: StatementInfo) -> tuple[bool, bool, bool]:
    """``boundcalc --help`` lists the results with a proof route first, then the lemmas, then
    Definition 1, then the IndRNN's Proposition 2 (registered last, below)."""
    return (not row.routed, row.uses_step_size, row.what.startswith("Definition"))


for _row in sorted(STATEMENTS, key=_listing):
    if _row.name != "prop2":
        _register(_row)


AlphaOpt = Annotated[str | None, option("--alpha", metavar="A", default="1.5",
                                      help="Rademacher scale of the IndRNN's recurrent weights "
                                           "at init, u_i(0) = ±alpha (> 0; the authors' 3/2)")]


@app.command(help=_POINT_DOC.format(what="Proposition 2 (IndRNN ProjGD; grows with T past the "
                                         "cutoff σ₁α ≥ 1)") + _VERDICT_DOC
             + "\n\n--alpha (default 1.5 = 3/2, as compare-rnn and validate prop2): the recurrent "
               "scale; another alpha is evaluated exactly (mpmath) and its nonvacuous_from_m "
               "searched with that alpha (galloping, then bisection, exact).",
             short_help="Proposition 2 (IndRNN ProjGD, α = 3/2 or --alpha; grows with T past "
                        "the cutoff σ₁α ≥ 1).",
             epilog=examples("boundcalc prop2 --m 64 --rho 2",
                              "boundcalc prop2 --m 512 --T 64 --alpha 0.5   # below the cutoff",
                              "boundcalc prop2 --m 4096 --d 16 --delta 0.01 --format json",
                              "boundcalc prop2 --m 64 --symbolic"))
@with_options([*((name, None, None) for name in parameter_names("prop2")),
               ("alpha", AlphaOpt, None), *_OUTPUT_OPTIONS])
def prop2(**flags: Any) -> None:
    _run_point("prop2", flags)
