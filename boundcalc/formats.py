"""Render calculator results as a table, JSON, CSV, Markdown or LaTeX: the renderers in one place.

Every command's ``--format`` goes through the names re-exported here; each lives in the module
of what it renders:

* :mod:`boundcalc.result_text` — :func:`render_result` of one JSON-contract dict
  (``Evaluation.to_dict()`` of :mod:`boundcalc.api`), section by section, with the header lines
  :func:`guarantee_line` and :func:`route_line`;
* :mod:`boundcalc.frame_text` — :func:`render_frame` of a DataFrame (one row per sweep point) and
  :func:`iter_frame`, which streams CSV or JSON records in bounded memory;
* :mod:`boundcalc.cell_text` — :data:`FORMATS`, :func:`check_format` and :func:`format_value`,
  the text of one number in every format;
* :mod:`boundcalc.latex` — :func:`latex_text`, Unicode text as LaTeX that pdflatex compiles.

Number formatting: ``json``, ``csv`` and ``markdown`` print every float exactly (shortest
round-trip ``repr``), so the three carry identical numbers; ``table`` and ``latex`` round to
``digits`` significant digits (default :data:`DISPLAY_DIGITS`).

Example:
    >>> check_format(" JSON "), format_value(0.25, digits=3)
    ('json', '0.25')
"""

from __future__ import annotations

from boundcalc.cell_text import DISPLAY_DIGITS, FORMATS, Scalar, check_format, format_value
from boundcalc.frame_text import iter_frame, render_frame
from boundcalc.latex import latex_text
from boundcalc.result_text import HEADER_KEYS, guarantee_line, render_result, route_line

__all__ = ["DISPLAY_DIGITS", "FORMATS", "HEADER_KEYS", "Scalar", "check_format", "format_value",
           "guarantee_line", "iter_frame", "latex_text", "render_frame", "render_result",
           "route_line"]
