"""The calculator commands' flags that are not parameters of a statement, one row each.

The statements' inputs are :data:`boundcalc.inputs.params.PARAMS`; the point commands, ``sweep``,
the solvers, ``explain`` and ``compare-rnn`` also take an output format, a precision, a statement
name and (``width``, ``steps``) a target. Their rows are here, each with its type, range, unit and
meaning, and the check the CLI calls (:mod:`boundcalc.cli.app`). No torch, no sympy.

Example:
    >>> PRECISION.check("40"), TARGET.check("0.1"), check_output_format("JSON")
    (40, 0.1, 'json')
"""

from __future__ import annotations

from collections.abc import Sequence

from boundcalc.errors import InputError
from boundcalc.inputs.flags import choice_flag, integer_flag, real_flag
from boundcalc.render.cell_text import FORMATS
from boundcalc.theory.catalog import NAMES as STATEMENT_NAMES

__all__ = ["DEFAULT_PRECISION", "FORMAT", "PRECISION", "STATEMENT", "TARGET", "check_output_format"]

#: Significant digits of the mpmath evaluation when ``--precision`` is not given.
DEFAULT_PRECISION = 20

#: ``--format``: the output formats of the calculator's commands.
FORMAT = choice_flag("fmt", "--format", FORMATS, unit="", meaning="output format")

#: ``--precision``: significant decimal digits of the mpmath evaluation.
PRECISION = integer_flag("precision", "--precision", minimum=10, maximum=1000, unit="digits",
                         meaning="mpmath digits of the evaluation (tables show at most 17)")

#: ``STATEMENT``: a statement of the catalog.
STATEMENT = choice_flag("statement", "STATEMENT", STATEMENT_NAMES, unit="",
                        meaning="the paper's statement to evaluate")

#: ``--target``: the value the width and steps solvers bring a term under.
TARGET = real_flag("target", "--target", low=0, unit="loss", message="must be > 0",
                   meaning="the value the solved-for terms must fall under")


def check_output_format(fmt: object, allowed: Sequence[str] = FORMATS) -> str:
    """``--format`` checked by :data:`FORMAT`, then against the formats of the command.

    Example:
        >>> check_output_format("csv", ("table", "json"))
        Traceback (most recent call last):
        ...
        boundcalc.errors.InputError: --format must be one of table, json for this command, \
got 'csv'
    """
    key = FORMAT.check(fmt)
    if key not in allowed:
        raise InputError("--format", f"must be one of {', '.join(allowed)} for this command, "
                                     f"got {fmt!r}")
    return key
