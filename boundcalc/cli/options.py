"""The options of the commands, generated from the parameter table.

Every parameter option (``--m`` … ``--misspecification``) is built from its
:class:`boundcalc.inputs.params.Param` row (flag, metavar, help, default shown); a command declares
which parameters it takes by name and :func:`with_options` gives its function the signature Typer
reads, so the list of parameters is spelled once, in :data:`boundcalc.inputs.params.PARAMS`. The
options that are not parameters (output, route, target) are defined here once.

An option with a fixed set of values (``--format``, ``--route``, ``--preset``, ``--device`` ...)
is a :func:`choice_option`: ``--help`` lists the values (``[quick|paper]``) and the shell
completes them, while the command still checks the value itself, so that a wrong one is the
project's one-line error naming the flag (exit 2), not click's usage message.
"""

import inspect
from collections.abc import Callable, Iterable, Sequence
from typing import Annotated, Any

import typer

from boundcalc.cli.app import OUTPUT_PANEL, PARAMS_PANEL, output_file
from boundcalc.inputs.calculator_flags import DEFAULT_PRECISION
from boundcalc.inputs.params import PARAMS, Param
from boundcalc.render.cell_text import FORMATS
from boundcalc.theory.catalog import ACTIVATIONS, DEFAULT_ROUTE, ROUTES
from boundcalc.theory.catalog import NAMES as STATEMENT_NAMES

__all__ = ["COMPONENTS", "DEVICES", "ColumnsOpt", "FmtOpt", "OutOpt", "PrecOpt", "RouteOpt",
           "StatementArg", "StrictOpt", "SymOpt", "TargetOpt", "choice_metavar", "choice_option",
           "completer", "format_option", "option", "param_option", "parameter_names",
           "with_options"]

#: Values of ``--device`` (``validate``, ``reproduce``).
DEVICES: tuple[str, ...] = ("auto", "cpu", "cuda")


def choice_metavar(choices: Sequence[str]) -> str:
    """The placeholder that lists the values in ``--help``.

    Example:
        >>> choice_metavar(("quick", "paper"))
        '[quick|paper]'
    """
    return "[" + "|".join(choices) + "]"


def completer(choices: Sequence[str]) -> Callable[[str], list[str]]:
    """Shell completion of an option or argument with these values (the ``autocompletion`` of
    ``typer.Option``).

    Example:
        >>> completer(("table", "json", "csv"))("j")
        ['json']
    """
    values = tuple(choices)

    def complete(incomplete: str) -> list[str]:
        return [v for v in values if v.startswith(incomplete.lower())]

    return complete


def choice_option(*names: str, choices: Sequence[str], help: str, panel: str | None = None,
                  show_default: bool | str = True) -> Any:
    """A ``typer.Option`` whose values are ``choices``: listed in ``--help`` as the metavar,
    completed by the shell; the command checks the value (one-line error naming the flag)."""
    return typer.Option(*names, help=help, metavar=choice_metavar(choices),
                        autocompletion=completer(choices), rich_help_panel=panel,
                        show_default=show_default)


def format_option(formats: Sequence[str] = FORMATS, panel: str | None = OUTPUT_PANEL) -> Any:
    """The ``--format`` / ``-f`` option of a command that writes ``formats``."""
    return choice_option("--format", "-f", choices=formats, panel=panel,
                         help="output format")


def option(*names: str, help: str, default: object = None, panel: str = PARAMS_PANEL,
           metavar: str = "NUM") -> Any:
    """A ``typer.Option`` whose ``--help`` shows ``default`` (nothing when None)."""
    shown = "" if default is None else str(default)
    return typer.Option(*names, help=help, show_default=shown or False, rich_help_panel=panel,
                        metavar=metavar)


def param_option(param: Param) -> Any:
    """The annotated type of the option of ``param`` (a text; None: not given, the default)."""
    shown = param.shown_default if param.shown_default is not None else param.default
    info = option(param.flag, metavar=param.metavar, default=shown, help=param.help)
    if param.kind == "activation":  # the presets, and the start of a custom one
        info.autocompletion = completer((*ACTIVATIONS, "custom:"))
    return Annotated[str | None, info]


#: One option per component of ρ and ν (``--rho-c`` …), for ``sweep``.
COMPONENTS: dict[str, Any] = {
    column: Annotated[str | None, typer.Option(f"--{column.replace('_', '-')}",
                                               help="one component; overrides --rho / --nu",
                                               metavar="NUM", rich_help_panel=PARAMS_PANEL,
                                               show_default=False)]
    for p in PARAMS.values() if p.kind == "triple" for column in p.columns
}

PrecOpt = Annotated[str | None, option("--precision", metavar="DIGITS", panel=OUTPUT_PANEL,
                                       default=DEFAULT_PRECISION,
                                       help="significant digits of the mpmath evaluation (>= 10); "
                                            "the table then shows up to 17")]
FmtOpt = Annotated[str, format_option()]
OutOpt = Annotated[str | None, typer.Option("--output", "-o", callback=output_file,
                                            help="write to FILE (atomically) "
                                            "instead of stdout", metavar="FILE",
                                            rich_help_panel=OUTPUT_PANEL)]
SymOpt = Annotated[bool, typer.Option("--symbolic", help="also print every formula (Unicode and "
                                      "LaTeX); table, markdown and latex formats",
                                      rich_help_panel=OUTPUT_PANEL)]
StrictOpt = Annotated[bool, typer.Option("--strict", help="exit 1 unless the verdict is "
                                         "guaranteed (a condition fails, or the bound is vacuous: "
                                         "min_iterate >= min(B^2, Y^2))",
                                         rich_help_panel=OUTPUT_PANEL)]
RouteOpt = Annotated[str | None, choice_option(
    "--route", choices=ROUTES, help="proof route: tight (head-average event, Cauchy-Schwarz "
    "drift, per-head block bounds with the attention third moment 4/(3 sqrt 3); derivations.md "
    "§7.7, §7.10, §2.2), paper (the paper's route, §7.1-7.5), gradnorm (tight plus "
    "||grad R||^2 <= 4 L^2 R, step eta_g; §7.9), joint (tight with joint (U, W) norms: its "
    "numbers before §7.10) or blocks (tight with 32/27 in H: its numbers before §2.2)",
    show_default=DEFAULT_ROUTE, panel=PARAMS_PANEL)]
TargetOpt = Annotated[str, typer.Option("--target", help="the value to get under (> 0)",
                                        metavar="VALUE", rich_help_panel=PARAMS_PANEL,
                                        show_default=False)]
StatementArg = Annotated[str, typer.Argument(help=f"one of {', '.join(STATEMENT_NAMES)}",
                                             metavar="STATEMENT", show_default=False,
                                             autocompletion=completer(STATEMENT_NAMES))]
ColumnsOpt = Annotated[str | None, typer.Option(
    "--columns", help="comma list of columns to keep (names or unique suffixes, e.g. "
    "m,n,min_iterate); default: all, or a compact set for --format table",
    rich_help_panel=OUTPUT_PANEL)]


def parameter_names(command: str | None = None, *, without: Iterable[str] = ()) -> list[str]:
    """Names of the parameters a command takes, in table order: every row whose
    :attr:`~boundcalc.inputs.params.Param.commands` admits ``command`` (None: every row), less
    ``without``.

    Example:
        >>> parameter_names("theorem1")[-4:], "batch_size" in parameter_names("prop1")
        (['steps', 'eta', 'activation', 'min_probability'], True)
    """
    skip = set(without)
    return [p.name for p in PARAMS.values() if p.name not in skip
            and (command is None or p.commands is None or command in p.commands)]


def with_options(options: Sequence[tuple[str, Any, Any]]) -> Callable[[Callable], Callable]:
    """Give a ``**kwargs`` command function the signature Typer reads: one parameter per
    ``(name, annotated type, default)``, in order (a name of :data:`PARAMS` may give None as its
    type: its generated option)."""
    def wrap(func: Callable) -> Callable:
        params = []
        for name, annotation, default in options:
            if annotation is None:
                annotation = param_option(PARAMS[name])
            params.append(inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                            default=default, annotation=annotation))
        func.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        func.__annotations__ = {p.name: p.annotation for p in params}
        return func

    return wrap
