"""The flags of ``boundcalc table`` (tables and figures from stored runs), one row each.

``table`` reads stored experiment runs (their records are checked when read,
:mod:`boundcalc.runs.stored`); its own flags are the rows of :data:`TABLE`, checked by
:func:`check_table_flags` before any run is read. No torch.

Example:
    >>> check_table_flags(fmt="LaTeX", digits=3, statistic="geometric", figure_width=None,
    ...                   figures_dir=None)["fmt"]
    'latex'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from boundcalc.inputs.flags import Flag, check_rows, choice_flag, integer_flag
from boundcalc.inputs.output_paths import FIGURES_DIR

__all__ = ["STATISTICS", "TABLE", "TABLE_FORMATS", "check_table_flags"]

#: Output formats of ``boundcalc table`` (:func:`boundcalc.runs.tables.render_tables`).
TABLE_FORMATS: tuple[str, ...] = ("markdown", "latex", "csv")

#: What a measured column shows in Markdown and LaTeX: ``geometric`` (the default) the geometric
#: mean over seeds and its 95 % t-interval on the log values, ``gmean [low, high]`` — what the
#: figures draw and the slopes fit — or ``arithmetic`` the mean ± its 95 % t-interval.
STATISTICS: tuple[str, ...] = ("geometric", "arithmetic")


#: The flags of ``boundcalc table``, by keyword.
TABLE: Mapping[str, Flag] = {row.name: row for row in (
    choice_flag("fmt", "--format", TABLE_FORMATS, unit="", meaning="table format"),
    integer_flag("digits", "--digits", minimum=1, maximum=17, unit="significant digits",
                 meaning="digits of the numbers shown", message="must be between 1 and 17"),
    choice_flag("statistic", "--statistic", STATISTICS, unit="",
                meaning="mean over seeds of each measured column",
                message=f"must be {' or '.join(STATISTICS)}"),
    choice_flag("figure_width", "--figure-width", ("single", "double"), unit="column width",
                meaning="width of the redrawn figures", message="must be single or double"),
    FIGURES_DIR,
)}


def check_table_flags(**values: Any) -> dict[str, Any]:
    """Every given flag of ``table`` (None: not given) checked by its :data:`TABLE` row."""
    return check_rows(TABLE, values)
