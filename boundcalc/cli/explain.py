"""``boundcalc explain``: a statement's title, summary, symbol glossary, every formula (Unicode
and LaTeX) and every condition with the reason the derivation needs it; the text is
:mod:`boundcalc.calc.symbolic`'s.
"""

from typing import Annotated

from boundcalc.calc.symbolic import explain_data, explain_text
from boundcalc.cli.app import (
    app,
    check_format_flag,
    check_route,
    check_statement,
    emit,
    examples,
)
from boundcalc.cli.options import OutOpt, RouteOpt, StatementArg, format_option

__all__ = ["explain"]

#: The formats of ``explain`` (a statement is no table of numbers: no CSV).
_FORMATS: tuple[str, ...] = ("table", "json", "markdown", "latex")


_EXPLAIN_HELP = (
    "Explain STATEMENT: title, summary, glossary of its symbols, every formula (Unicode "
    "and LaTeX) and every condition with the reason the derivation needs it. --route tight "
    "(default) or paper picks the proof route of theorem1, prop1 and remark9."
)


@app.command(help=_EXPLAIN_HELP,
             short_help="Statement, symbol glossary, formulas (Unicode, LaTeX), conditions.",
             epilog=examples("boundcalc explain theorem1",
                              "boundcalc explain lemma5 --format markdown",
                              "boundcalc explain prop1 --format json --output prop1.json",
                              "boundcalc explain theorem1 --route paper"))
def explain(
    statement: StatementArg,
    route: RouteOpt = None,
    format: Annotated[str, format_option(_FORMATS)] = "table",
    output: OutOpt = None,
) -> None:
    """Statement, symbol glossary, formulas (Unicode, LaTeX), conditions.

    ``--help`` shows :data:`_EXPLAIN_HELP`.
    """
    name = check_statement(statement)
    key = check_route(route, name)
    fmt = check_format_flag(format, _FORMATS)
    emit(explain_text(explain_data(key), fmt), output)
