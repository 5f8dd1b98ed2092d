"""``boundcalc sweep``: a statement over a grid of parameters, as a table, CSV, JSON, Markdown
or LaTeX. The grid is built and evaluated by :func:`boundcalc.calc.sweep.build_sweep`; this module
renders it and reports the rows that are not guaranteed, vacuous or overflow.
"""

import inspect
from typing import Annotated, Any

import typer

from boundcalc.calc.sweep import ALPHA_AXIS, SWEEP_AXES, build_sweep, select_columns
from boundcalc.cli.app import (
    app,
    check_format_flag,
    check_route,
    check_statement,
    emit,
    examples,
    note,
)
from boundcalc.cli.options import (
    COMPONENTS,
    ColumnsOpt,
    FmtOpt,
    OutOpt,
    RouteOpt,
    StatementArg,
    StrictOpt,
    option,
    parameter_names,
    with_options,
)
from boundcalc.inputs.params import PARAMS
from boundcalc.render.frame_text import iter_frame, render_frame

__all__ = ["sweep"]

#: The keyword argument of the command that holds each sweep axis.
_FLAG_OF_AXIS: dict[str, str] = {
    **{(p.name if p.kind == "triple" else p.columns[0]): p.name for p in PARAMS.values()},
    **{column: column for column in COMPONENTS},
}


#: ``--alpha`` of ``sweep``: the IndRNN's recurrent scale, an axis like any other (prop2 only).
SweepAlphaOpt = Annotated[str | None, option(
    "--alpha", metavar="A", default="1.5",
    help="prop2 only: Rademacher scale of the IndRNN's recurrent weights at init, u_i(0) = "
         "±alpha (> 0; the authors' 3/2); a value, list or range like the other flags")]


def _sweep_parameters() -> list[tuple[str, Any, Any]]:
    """Every parameter, with the per-component options of ρ and ν after ``--nu``."""
    out: list[tuple[str, Any, Any]] = []
    for name in parameter_names():
        out.append((name, None, None))
        if name == "nu":
            out += [(column, annotation, None) for column, annotation in COMPONENTS.items()]
    return out


_SWEEP_HELP = (
    "Evaluate STATEMENT over a grid: one row per combination of the values given.\n\n"
    "Every numeric flag takes a value, a comma list (1e3,1e6), an additive range "
    "start:stop:step or a geometric range start:stop:xF (stop included when a step lands "
    "on it). In a sweep, --rho and --nu list uniform values (each applied to all three "
    "components); sweep one component with --rho-c/--rho-u/--rho-w, --nu-c/--nu-u/--nu-w. "
    "Rows: inputs, every constant, term and bound, the probability, each condition and "
    "`guaranteed`; numpy float64 evaluation.\n\n"
    "theorem1, prop1, remark9 and prop2 also get a `verdict` column: guaranteed (every "
    "condition holds and min_iterate < min(B², Y²), the free bound), vacuous (min_iterate ≥ "
    "min(B², Y²)) or "
    "not_guaranteed (a condition fails), or overflow (a value beyond the float64 range: the "
    "cell says overflow; other statements get the column only then); --strict exits 1 unless "
    "every row is guaranteed. "
    "--route tight|paper|gradnorm|joint (theorem1, prop1, remark9 only; default tight) picks the "
    "proof route, named in the `route` column and the title. --alpha (prop2 only; default "
    "1.5) sweeps the IndRNN's recurrent scale, shown in an `alpha` column."
)


@app.command(help=_SWEEP_HELP,
             short_help="Evaluate a statement over a grid of parameters (lists, ranges).",
             epilog=examples(
    "boundcalc sweep theorem1 --m 8:4096:x2 --n 1e3,1e6 --format csv --output sweep.csv",
    "boundcalc sweep theorem1 --m 512,1024 --steps 1000:5000:1000",
    "boundcalc sweep lemma3 --m 64:1024:x2 --rho-u 1,2,4 --format markdown",
    "boundcalc sweep prop1 --m 1024 --batch-size 1,8,64 --columns m,b,min_iterate",
    "boundcalc sweep theorem1 --m 256:65536:x2 --route paper --columns m,min_iterate,verdict",
    "boundcalc sweep prop2 --m 2048 --T 16,64 --alpha 0.5:1.5:0.25"))
@with_options([("statement", StatementArg, inspect.Parameter.empty),
               *_sweep_parameters(), ("alpha", SweepAlphaOpt, None), ("route", RouteOpt, None),
               ("format", FmtOpt, "table"),
               ("output", OutOpt, None), ("columns", ColumnsOpt, None),
               ("strict", StrictOpt, False)])
def sweep(statement: str, **flags: Any) -> None:
    """Evaluate a statement over a grid of parameters (lists, ranges).

    ``--help`` shows :data:`_SWEEP_HELP`.
    """
    name = check_statement(statement)
    key = check_route(flags["route"], name)
    fmt = check_format_flag(flags["format"])
    output = flags["output"]
    given = {axis: flags[_FLAG_OF_AXIS[axis]] for axis, _, _ in SWEEP_AXES}
    given[ALPHA_AXIS] = flags["alpha"]
    df, swept = build_sweep(key, given, flags["activation"])
    keep = select_columns(df, flags["columns"], fmt, swept)
    label = f"{name} ({df['route'].iloc[0]} route)" if "route" in df.columns else name
    title = f"{label}: {len(df)} rows" if fmt in ("table", "markdown", "latex") else None
    shown = df[keep]
    if fmt == "table":  # short headers (terms.optimization -> optimization) where unambiguous
        short = [c.split(".")[-1] for c in keep]
        if len(set(short)) == len(short):
            shown = shown.set_axis(short, axis=1)
    text = (iter_frame(shown, fmt) if fmt in ("csv", "json")
            else render_frame(shown, fmt, title=title))
    emit(text, output, f" ({len(df)} rows)")
    failed = int((~df["conditions_hold"]).sum())
    if failed:
        note(f"NOT GUARANTEED in {failed} of {len(df)} rows (see the condition.* columns)")
    improbable = int((df["conditions_hold"] & ~df["probability_sufficient"]
                      & ~df["guaranteed"]
                      & (df["verdict"] != "vacuous" if "verdict" in df.columns else True)).sum())
    if improbable:
        note(f"NOT GUARANTEED in {improbable} of {len(df)} rows whose conditions hold: their "
             f"probability is below the min_probability column (--min-probability; see the "
             f"probability column)")
    vacuous = int((df["verdict"] == "vacuous").sum()) if "verdict" in df.columns else 0
    if vacuous:
        note(f"VACUOUS in {vacuous} of {len(df)} rows (min_iterate ≥ min(B², Y²), the free bound; "
             f"see the verdict column)")
    over = int((df["verdict"] == "overflow").sum()) if "verdict" in df.columns else 0
    if over:
        note(f"OVERFLOW in {over} of {len(df)} rows (a value exceeds the float64 range; no bound "
              f"is guaranteed there; see the verdict column)")
    if flags["strict"] and (failed or improbable or vacuous or over):
        raise typer.Exit(1)
