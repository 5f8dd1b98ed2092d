"""Render a DataFrame — one row per sweep point — as a table, JSON, CSV, Markdown or LaTeX.

``boundcalc sweep``, ``boundcalc validate`` and ``boundcalc table`` print frames of up to millions
of rows. :func:`render_frame` renders one as text; :func:`iter_frame` yields CSV or JSON records
piece by piece, built column-wise (equal runs of cells formatted once), so that a 10^6-row sweep
streams to a file in bounded memory and faster than ``DataFrame.to_csv``, with exact floats
(shortest round-trip ``repr``) as :func:`boundcalc.render.cell_text.format_value` writes them. The
``table`` format shows the first and last rows of a long frame.

Example:
    >>> import pandas as pd
    >>> print(render_frame(pd.DataFrame({"m": [8, 16], "bound": [0.5, 0.25]}), "markdown"))
    | m | bound |
    |---:|---:|
    | 8 | 0.5 |
    | 16 | 0.25 |
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from boundcalc.render.cell_text import (
    DISPLAY_DIGITS,
    Scalar,
    check_format,
    format_value,
    markdown_cell,
    rich_to_text,
)
from boundcalc.render.latex import latex_text, latex_value

if TYPE_CHECKING:  # pandas is imported lazily (it is slow to import)
    import pandas as pd

__all__ = ["iter_frame", "render_frame"]


def render_frame(
    df: pd.DataFrame,
    fmt: str,
    *,
    digits: int | None = None,
    max_rows: int | None = 60,
    width: int | None = None,
    title: str | None = None,
) -> str:
    """Render a DataFrame (one row per sweep point) in ``fmt``.

    Args:
        df: the frame; float columns may hold NaN (rendered empty / ``null``).
        fmt: ``table``, ``json`` (list of records), ``csv``, ``markdown`` or ``latex``.
        digits: significant digits of ``table`` / ``latex`` numbers (default 6).
        max_rows: ``table`` only: show the first and last rows of longer frames.
        width: ``table`` console width (default: wide enough for every column).
        title: optional caption (``table``, ``markdown``, ``latex``).

    Example:
        >>> import pandas as pd
        >>> print(render_frame(pd.DataFrame({"m": [8, 16], "bound": [0.5, 0.25]}), "csv"))
        m,bound
        8,0.5
        16,0.25
    """
    fmt = check_format(fmt)
    columns = [str(c) for c in df.columns]
    if fmt in ("csv", "json"):
        return "".join(iter_frame(df, fmt))
    omitted = 0
    if fmt == "table" and max_rows is not None and len(df) > max_rows:
        half = max(max_rows // 2, 1)
        omitted = len(df) - 2 * half
        df = df.iloc[list(range(half)) + list(range(len(df) - half, len(df)))]
    rows = _frame_cells(df, None if fmt == "markdown" else (digits or DISPLAY_DIGITS))
    if fmt == "markdown":
        lines = [f"**{markdown_cell(title)}**", ""] if title else []
        lines.append("| " + " | ".join(markdown_cell(c) for c in columns) + " |")
        lines.append("|" + "---:|" * len(columns))
        lines += ["| " + " | ".join(markdown_cell(c) for c in row) + " |" for row in rows]
        return "\n".join(lines)
    if fmt == "latex":
        show = digits or DISPLAY_DIGITS
        lines = [f"% {latex_text(title)}"] if title else []
        lines += [rf"\begin{{tabular}}{{{'r' * len(columns)}}}", r"\toprule",
                  " & ".join(rf"\texttt{{{latex_text(c)}}}" for c in columns) + r" \\",
                  r"\midrule"]
        for values in df.itertuples(index=False):
            lines.append(" & ".join(latex_value(v, show) for v in values) + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}"]
        return "\n".join(lines)
    return _frame_table(columns, rows, omitted, width, title)


def _frame_cells(df: pd.DataFrame, digits: int | None) -> list[list[str]]:
    cols = []
    for c in df.columns:
        series = df[c]
        values = series.tolist()
        cols.append([format_value(v, digits) for v in values])
    return [list(r) for r in zip(*cols, strict=True)] if cols else []


def _column_text(series: Any, fmt: str) -> list[str]:
    """Exact text of every cell of one column: ``repr`` floats, ``true``/``false``, and empty
    (CSV) or ``null`` (JSON) for NaN; text quoted as CSV or JSON needs. Runs of equal cells
    (constant columns, or a column that depends only on a slower sweep axis) are formatted once."""
    import numpy as np

    if getattr(series.dtype, "name", "") == "category":  # few distinct texts: format each once
        texts = _column_text_plain(np.asarray(series.cat.categories, dtype=object), fmt)
        missing = "null" if fmt == "json" else ""
        table = np.array([*texts, missing], dtype=object)  # code -1 (missing) takes the last
        return table[series.cat.codes.to_numpy()].tolist()
    values = series.to_numpy()
    runs = _runs(values)
    if runs is not None:  # format the first cell of each run, then repeat it
        starts, lengths = runs
        texts = _column_text_plain(values[starts], fmt)
        return np.repeat(np.array(texts, dtype=object), lengths).tolist()
    return _column_text_plain(values, fmt)


def _runs(values: Any) -> tuple[Any, Any] | None:
    """(starts, lengths) of the runs of bitwise-equal cells when they are long (< 1 change in 4
    cells), else None."""
    import numpy as np

    size = len(values)
    if size < 64:
        return None
    if values.dtype.kind in "fiub":
        flat = np.ascontiguousarray(values)
        keyed = flat.view(np.uint8).reshape(size, -1)  # bitwise: -0.0 is not 0.0
        change = np.empty(size, dtype=bool)
        change[0] = True
        np.any(keyed[1:] != keyed[:-1], axis=1, out=change[1:])
    elif values.dtype == object:
        change = np.empty(size, dtype=bool)
        change[0] = True
        try:
            change[1:] = np.fromiter((a is not b and (type(a) is not type(b) or a != b)
                                      for a, b in zip(values[1:], values[:-1], strict=True)),
                                     dtype=bool, count=size - 1)
        except (TypeError, ValueError):
            return None
    else:
        return None
    starts = np.flatnonzero(change)
    if len(starts) * 4 > size:
        return None
    return starts, np.diff(np.append(starts, size))


def _column_text_plain(values: Any, fmt: str) -> list[str]:
    import numpy as np

    missing = "null" if fmt == "json" else ""
    if values.dtype == bool:
        return np.where(values, "true", "false").tolist()
    if np.issubdtype(values.dtype, np.integer):
        return list(map(str, values.tolist()))
    if np.issubdtype(values.dtype, np.floating):
        text = list(map(repr, values.tolist()))
        bad = ~np.isfinite(values)
        if bad.any():
            for i in np.flatnonzero(bad).tolist():
                text[i] = missing
        return text
    out = []
    for v in values.tolist():
        if v is None or (isinstance(v, float) and not math.isfinite(v)):
            out.append(missing)
        elif fmt == "json":
            out.append(json.dumps(_json_scalar(v), ensure_ascii=False))
        else:
            t = format_value(v)
            out.append('"' + t.replace('"', '""') + '"' if any(c in t for c in ',"\n\r') else t)
    return out


def iter_frame(df: pd.DataFrame, fmt: str, chunk: int = 65536) -> Iterator[str]:
    """CSV (header, then rows) or JSON records of ``df`` as successive pieces of text, built
    column-wise ``chunk`` rows at a time, so that a 10^6-row sweep streams to a file in bounded
    memory; ``"".join(iter_frame(df, fmt))`` is ``render_frame(df, fmt)``. Faster than
    ``DataFrame.to_csv`` and exact (shortest round-trip floats).

    Example:
        >>> import pandas as pd
        >>> "".join(iter_frame(pd.DataFrame({"m": [8], "ok": [True]}), "json"))
        '[\\n{"m": 8, "ok": true}\\n]'
    """
    fmt = check_format(fmt)
    if fmt not in ("csv", "json"):
        yield render_frame(df, fmt)
        return
    names = [str(c) for c in df.columns]
    keys = [json.dumps(n, ensure_ascii=False) + ": " for n in names]
    if fmt == "csv":
        yield ",".join('"' + n.replace('"', '""') + '"' if any(c in n for c in ',"\n') else n
                       for n in names)
    else:
        yield "["
    for start in range(0, len(df), chunk):
        block = df.iloc[start:start + chunk]
        cols = [_column_text(block[c], fmt) for c in df.columns]
        rows = zip(*cols, strict=True)
        if fmt == "csv":
            yield "\n" + "\n".join(map(",".join, rows))
        else:
            text = ",\n".join("{" + ", ".join(k + v for k, v in zip(keys, row, strict=True)) + "}"
                               for row in rows)
            yield ("\n" if start == 0 else ",\n") + text
    if fmt == "json":
        yield "\n]" if len(df) else "]"


def _json_scalar(value: Any) -> Scalar:
    """A cell as a JSON value: numpy scalars unwrapped, non-finite floats as None."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _frame_table(columns: list[str], rows: list[list[str]], omitted: int,
                 width: int | None, title: str | None) -> str:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(title, style="bold") if title else None, title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False)
    for c in columns:
        table.add_column(c, justify="right", no_wrap=True)
    shown: list[list[str] | None] = list(rows)
    if omitted:
        half = len(rows) // 2
        shown = rows[:half] + [None] + rows[half:]
    for row in shown:
        if row is None:
            table.add_row(*[Text("…") for _ in columns])
        else:
            table.add_row(*[Text(c) for c in row])
    need = sum(max([len(c)] + [len(r[i]) for r in rows[:200]] + [len(r[i]) for r in rows[-200:]])
               for i, c in enumerate(columns)) + 3 * len(columns)
    text = rich_to_text(table, width or max(need + 2, 60))
    if omitted:
        text += (f"\n… {omitted} of {len(rows) + omitted} rows not shown; "
                 "use --format csv or json (with --output) for every row")
    return text
