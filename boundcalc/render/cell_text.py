"""The text of one value in every output format, and the formats themselves.

Every renderer of the calculator (:mod:`boundcalc.render.result_text` for one result,
:mod:`boundcalc.render.frame_text` for a sweep's DataFrame, :mod:`boundcalc.runs.tables` for stored
runs) writes numbers through :func:`format_value`, so that one number prints the same everywhere:
``json``, ``csv`` and ``markdown`` print every float exactly (shortest round-trip ``repr``), so the
three carry identical numbers; ``table`` and ``latex`` round to ``digits`` significant digits
(default :data:`DISPLAY_DIGITS`). Also here: the check of a ``--format`` name, the escaping of a
Markdown cell, and the conversion of a rich renderable to plain text (the ``table`` format).

Example:
    >>> check_format("JSON"), format_value(0.1 + 0.2), format_value(0.1 + 0.2, 3)
    ('json', '0.30000000000000004', '0.3')
"""

from __future__ import annotations

import io
import math
from typing import Any

__all__ = ["DISPLAY_DIGITS", "FORMATS", "Scalar", "check_format", "format_value",
           "markdown_cell", "rich_to_text"]

#: Output formats accepted by every command's ``--format``.
FORMATS: tuple[str, ...] = ("table", "json", "csv", "markdown", "latex")

#: Significant digits of ``table`` and ``latex`` numbers unless the caller asks for more.
DISPLAY_DIGITS = 6

#: A value one cell can hold.
Scalar = str | int | float | bool | None


def check_format(fmt: str) -> str:
    """Return ``fmt`` lower-cased if it is one of :data:`FORMATS`, else raise ``ValueError``.

    Example:
        >>> check_format("JSON")
        'json'
    """
    key = str(fmt).strip().lower()
    if key not in FORMATS:
        raise ValueError(f"must be one of {', '.join(FORMATS)}, got {fmt!r}")
    return key



def format_value(value: Any, digits: int | None = None) -> str:
    """Text of one cell: exact ``repr`` for floats when ``digits`` is None, else ``digits``
    significant digits; ``true``/``false`` for booleans; empty text for None.

    Example:
        >>> format_value(1291.3661425071273), format_value(1291.3661425071273, 4)
        ('1291.3661425071273', '1291')
        >>> format_value(True), format_value(None), format_value(512)
        ('true', '', '512')
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        if digits is None:
            return repr(float(value))  # a numpy float64 is a float whose repr names its type
        if value.is_integer() and abs(value) < 10**digits:
            return str(int(value))
        return f"{value:.{digits}g}"
    if hasattr(value, "item"):  # numpy scalar
        return format_value(value.item(), digits)
    return str(value)



def markdown_cell(text: str) -> str:
    """``text`` safe inside one cell of a Markdown pipe table (``|`` escaped, one line).

    Example:
        >>> print(markdown_cell("a|b"))
        a\\|b
    """
    return str(text).replace("|", r"\|").replace("\r", " ").replace("\n", " ")


def rich_to_text(renderable: Any, width: int) -> str:
    """Plain text of a rich renderable at console ``width`` (no colour, trailing blanks cut)."""
    from rich.console import Console

    buf = io.StringIO()
    console = Console(file=buf, width=width, color_system=None, force_terminal=False,
                      highlight=False, emoji=False)
    console.print(renderable)
    return "\n".join(line.rstrip() for line in buf.getvalue().rstrip("\n").splitlines())
