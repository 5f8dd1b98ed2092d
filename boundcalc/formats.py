"""Render calculator results as a table, JSON, CSV, Markdown or LaTeX.

Two renderers, both returning a string (the CLI prints it or writes it to ``--output``):

* :func:`render_result` takes a JSON-contract dict (``Evaluation.to_dict()`` of
  :mod:`boundcalc.api`, or any dict of the same shape) and renders it section by section. It is
  generic: a top-level ``statement`` dict becomes the header, every flat ``name -> value`` dict
  (``inputs``, ``constants``, ``terms``, ``bound``, or any extra section such as ``quantities``)
  becomes its own section, a top-level scalar (``probability``) a one-row section, and a list of
  ``{name, holds, detail}`` records (``conditions``) a PASS/FAIL section.
* :func:`render_frame` renders a pandas DataFrame (one row per sweep point).

Number formatting: ``json``, ``csv`` and ``markdown`` print every float exactly (shortest
round-trip ``repr``), so the three carry identical numbers; ``table`` and ``latex`` round to
``digits`` significant digits (default :data:`DISPLAY_DIGITS`).

Example:
    >>> data = {"statement": {"name": "demo", "title": "Demo", "guaranteed": True},
    ...         "quantities": {"m": 512, "eps": 0.25}, "probability": 0.9, "version": "0.1.0"}
    >>> print(render_result(data, "csv"))  # doctest: +NORMALIZE_WHITESPACE
    section,name,value
    statement,name,demo
    statement,title,Demo
    statement,guaranteed,true
    probability,probability,0.9
    quantities,m,512
    quantities,eps,0.25
    version,version,0.1.0
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas is imported lazily (it is slow to import)
    import pandas as pd

#: Output formats accepted by every command's ``--format``.
FORMATS: tuple[str, ...] = ("table", "json", "csv", "markdown", "latex")

#: Significant digits of ``table`` and ``latex`` numbers unless the caller asks for more.
DISPLAY_DIGITS = 6

#: Section order of the JSON contract; any other section follows in the dict's order.
_CONTRACT_ORDER = ("statement", "inputs", "constants", "terms", "bound", "probability",
                   "conditions", "version")

Scalar = str | int | float | bool | None

#: Top-level keys that ``table``, ``markdown`` and ``latex`` show in the header lines (verdict,
#: route) instead of as sections; ``csv`` and ``json`` carry them as they are.
HEADER_KEYS: tuple[str, ...] = ("verdict", "overflow", "nonvacuous_from_m", "active_drift_bound")


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


# --------------------------------------------------------------------------- number formatting


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


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
            return repr(value)
        if value.is_integer() and abs(value) < 10**digits:
            return str(int(value))
        return f"{value:.{digits}g}"
    if hasattr(value, "item"):  # numpy scalar
        return format_value(value.item(), digits)
    return str(value)


#: Non-ASCII characters of the statements' texts as pdflatex-safe LaTeX: ``("math", ...)`` goes
#: into ``$...$``, ``("text", ...)`` stays in text mode.
_LATEX_UNICODE: dict[str, tuple[str, str]] = {
    **{ch: ("math", "\\" + name) for ch, name in zip(
        "αβγδεζηθικλμνξπρστυφχψωΓΔΘΛΞΠΣΥΦΨΩ",
        ["alpha", "beta", "gamma", "delta", "varepsilon", "zeta", "eta", "theta", "iota",
         "kappa", "lambda", "mu", "nu", "xi", "pi", "rho", "sigma", "tau", "upsilon", "varphi",
         "chi", "psi", "omega", "Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma",
         "Upsilon", "Phi", "Psi", "Omega"], strict=True)},
    "ϵ": ("math", r"\epsilon"), "ϕ": ("math", r"\phi"),
    "≤": ("math", r"\le"), "≥": ("math", r"\ge"), "≠": ("math", r"\neq"),
    "≈": ("math", r"\approx"), "∝": ("math", r"\propto"), "±": ("math", r"\pm"),
    "·": ("math", r"\cdot"), "×": ("math", r"\times"), "∘": ("math", r"\circ"),
    "√": ("math", r"\surd"), "‖": ("math", r"\|"), "∞": ("math", r"\infty"),
    "∩": ("math", r"\cap"), "∪": ("math", r"\cup"), "∈": ("math", r"\in"),
    "∉": ("math", r"\notin"), "⊂": ("math", r"\subset"), "⊆": ("math", r"\subseteq"),
    "∑": ("math", r"\sum"), "∏": ("math", r"\prod"), "∫": ("math", r"\int"),
    "∂": ("math", r"\partial"), "∇": ("math", r"\nabla"), "∀": ("math", r"\forall"),
    "∃": ("math", r"\exists"), "→": ("math", r"\to"), "←": ("math", r"\leftarrow"),
    "↦": ("math", r"\mapsto"), "⇒": ("math", r"\Rightarrow"), "⟨": ("math", r"\langle"),
    "⟩": ("math", r"\rangle"), "⌈": ("math", r"\lceil"), "⌉": ("math", r"\rceil"),
    "⌊": ("math", r"\lfloor"), "⌋": ("math", r"\rfloor"), "⋆": ("math", r"\star"),
    "★": ("math", r"\star"), "∗": ("math", "*"), "ℓ": ("math", r"\ell"),
    "−": ("math", "-"), "′": ("math", "'"),
    **{ch: ("math", f"^{{{i}}}") for i, ch in enumerate("⁰¹²³⁴⁵⁶⁷⁸⁹")},
    **{ch: ("math", f"_{{{i}}}") for i, ch in enumerate("₀₁₂₃₄₅₆₇₈₉")},
    "⁻": ("math", "^{-}"), "ᵀ": ("math", "^{T}"),
    "–": ("text", "--"), "—": ("text", "---"), "…": ("text", r"\ldots{}"),
    "‘": ("text", "`"), "’": ("text", "'"), "“": ("text", "``"), "”": ("text", "''"),
    "\u00a0": ("text", "~"), "é": ("text", r"\'e"), "è": ("text", r"\`e"), "ü": ("text", r'\"u'),
    "ö": ("text", r'\"o'), "ä": ("text", r'\"a'),
}

#: Combining marks: the accent macro applied (in math mode) to the character before.
_LATEX_ACCENTS = {"\u0302": r"\hat", "\u0304": r"\bar", "\u0305": r"\bar", "\u0303": r"\tilde",
                  "\u0307": r"\dot", "\u0308": r"\ddot", "\u20d7": r"\vec"}

_LATEX_SPECIAL = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
                  "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  "\\": r"\textbackslash{}", "|": r"\textbar{}", "<": r"\textless{}",
                  ">": r"\textgreater{}"}


def latex_text(text: Any) -> str:
    """``text`` as pure-ASCII LaTeX that pdflatex compiles: the special characters escaped, Greek
    letters and mathematical symbols as math-mode macros (``θ̄`` → ``$\\bar{\\theta}$``,
    ``Ω_ρ`` → ``$\\Omega$\\_$\\rho$``), anything else non-ASCII as ``?``.

    Example:
        >>> print(latex_text("R̂(θ̄) ≤ 1 − 2δ & 50%"))
        $\\hat{R}$($\\bar{\\theta}$) $\\le$ 1 $-$ 2$\\delta$ \\& 50\\%
    """
    import unicodedata

    tokens: list[list[str]] = []  # [kind, latex]
    for ch in str(text).replace("\r", " ").replace("\n", " "):
        if ch in _LATEX_ACCENTS:
            if tokens:
                kind, body = tokens.pop()
                base = body if kind == "math" else (body if body.isalnum() else "{}")
                tokens.append(["math", f"{_LATEX_ACCENTS[ch]}{{{base}}}"])
            continue
        if ch in _LATEX_SPECIAL:
            tokens.append(["text", _LATEX_SPECIAL[ch]])
        elif ord(ch) < 128:
            tokens.append(["text", ch])
        elif ch in _LATEX_UNICODE:
            tokens.append(list(_LATEX_UNICODE[ch]))
        else:
            plain = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode()
            tokens.append(["text", "".join(_LATEX_SPECIAL.get(c, c) for c in plain) or "?"])
    out: list[str] = []
    previous = ""
    for kind, body in tokens:
        if kind == "math":
            if previous == "math":  # merge $a$$b$ into $a b$
                out[-1] = out[-1][:-1] + " " + body + "$"
            else:
                out.append(f"${body}$")
        else:
            out.append(body)
        previous = kind
    return "".join(out)


_latex_escape = latex_text


def _latex_value(value: Any, digits: int) -> str:
    """A LaTeX cell: numbers in math mode with ``\\times 10^{k}`` for large / small magnitudes."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return _latex_escape(format_value(value))
    if isinstance(value, int):
        return f"${value}$"
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        text = f"{value:.{digits}g}"
        if "e" in text:
            mantissa, exponent = text.split("e")
            return f"${mantissa}\\times 10^{{{int(exponent)}}}$"
        return f"${text}$"
    return _latex_escape(str(value))


# --------------------------------------------------------------------------- sections


class _Section:
    """One block of a result: ``kind`` is ``values`` (name -> scalar) or ``records``."""

    def __init__(self, key: str, kind: str, rows: list[tuple[str, Any]] | list[dict[str, Any]]):
        self.key = key
        self.kind = kind
        self.rows = rows

    @property
    def title(self) -> str:
        return self.key.replace("_", " ").capitalize()


def _ordered_keys(data: Mapping[str, Any]) -> list[str]:
    first = [k for k in _CONTRACT_ORDER if k in data and k != "version"]
    rest = [k for k in data if k not in _CONTRACT_ORDER]
    last = ["version"] if "version" in data else []
    # extra sections go before the conditions so that PASS/FAIL rows close the report
    if "conditions" in first:
        first.remove("conditions")
        return first + rest + ["conditions"] + last
    return first + rest + last


def _sections(data: Mapping[str, Any]) -> list[_Section]:
    """Split a result dict into sections (see the module docstring for the rules)."""
    sections = []
    for key in _ordered_keys(data):
        value = data[key]
        if isinstance(value, (Mapping, list, tuple)) and not value:
            continue  # an empty section (the lemmas have no terms) renders as nothing
        if isinstance(value, Mapping):
            if not all(_is_scalar(v) or hasattr(v, "item") for v in value.values()):
                raise ValueError(f"section {key!r} must map names to numbers or text")
            sections.append(_Section(key, "values", [(str(k), v) for k, v in value.items()]))
        elif isinstance(value, Sequence) and not isinstance(value, str) and all(
                _is_scalar(v) for v in value):  # a list of names (``overflow``): one cell
            sections.append(_Section(key, "values", [(key, " ".join(map(str, value)))]))
        elif isinstance(value, Sequence) and not isinstance(value, str):
            records = [dict(item) for item in value]
            sections.append(_Section(key, "records", records))
        else:
            sections.append(_Section(key, "values", [(key, value)]))
    return sections


def _record_fields(records: list[dict[str, Any]]) -> list[str]:
    fields: list[str] = []
    for rec in records:
        for f in rec:
            if f not in fields:
                fields.append(f)
    return fields


def _record_status(value: Any) -> str:
    return "PASS" if value else "FAIL"


def _two_numbers(a: float, b: float) -> tuple[str, str]:
    """``a`` and ``b`` with 4 significant digits, or more (up to 17) until two different numbers
    print differently (so that ``a < b`` still reads so)."""
    for digits in range(4, 18):
        sa, sb = f"{a:.{digits}g}", f"{b:.{digits}g}"
        if a == b or float(sa) != float(sb):
            break
    return sa, sb


def guarantee_line(data: Mapping[str, Any]) -> str | None:
    """``GUARANTEED ...`` / ``VACUOUS ...`` / ``NOT GUARANTEED ...`` for a result with
    conditions, else None. With a top-level ``verdict`` (statements with the trivial bound B²),
    a guaranteed or vacuous result also compares ``bound.min_iterate`` with
    ``constants.trivial_bound_B2`` and a vacuous one says from which width m it is not
    (``nonvacuous_from_m``).

    Example:
        >>> guarantee_line({"conditions": [{"name": "rho_c_ge_nu_c", "holds": False}]})
        'NOT GUARANTEED: rho_c_ge_nu_c fails, the bound is not guaranteed'
        >>> guarantee_line({"verdict": "vacuous", "nonvacuous_from_m": 1712,
        ...                 "bound": {"min_iterate": 1291.37}, "constants": {"trivial_bound_B2":
        ...                 727.27}, "conditions": [{"name": "m_even", "holds": True}]})
        'VACUOUS: min_iterate 1291 ≥ B² = 727.3; non-vacuous from m = 1712'
    """
    if data.get("verdict") == "overflow":
        names = data.get("overflow") or ["a quantity"]
        return (f"OVERFLOW: {', '.join(map(str, names))} exceed the float range; no bound is "
                f"guaranteed")
    conditions = data.get("conditions")
    if not isinstance(conditions, Sequence) or not conditions:
        return None
    failed = [str(c.get("name", "?")) for c in conditions if not c.get("holds", False)]
    if failed:
        verb = "fails" if len(failed) == 1 else "fail"
        return f"NOT GUARANTEED: {', '.join(failed)} {verb}, the bound is not guaranteed"
    holds = ("its condition holds" if len(conditions) == 1
             else f"all {len(conditions)} conditions hold")
    verdict = data.get("verdict")
    bound = data.get("bound") if isinstance(data.get("bound"), Mapping) else {}
    constants = data.get("constants") if isinstance(data.get("constants"), Mapping) else {}
    value, trivial = bound.get("min_iterate"), constants.get("trivial_bound_B2")
    if verdict not in ("guaranteed", "vacuous"):
        return f"GUARANTEED: {holds}"
    numbers = ""
    if isinstance(value, (int, float)) and isinstance(trivial, (int, float)):
        shown, shown_b2 = _two_numbers(float(value), float(trivial))
        relation = "<" if verdict == "guaranteed" else "≥"
        numbers = f"min_iterate {shown} {relation} B² = {shown_b2}"
    if verdict == "guaranteed":
        return f"GUARANTEED: {holds}" + (f"; {numbers}" if numbers else "")
    parts = [numbers or "min_iterate ≥ B²"]
    if "nonvacuous_from_m" in data:
        first = data["nonvacuous_from_m"]
        parts.append(f"non-vacuous from m = {first}" if first is not None
                     else "non-vacuous at no even m ≤ 2^62")
    return "VACUOUS: " + "; ".join(parts)


def route_line(data: Mapping[str, Any]) -> str | None:
    """``route: tight; active drift bound: cauchy_schwarz`` for a result whose statement names
    its proof route, else None.

    Example:
        >>> route_line({"statement": {"route": "paper"}, "active_drift_bound": None})
        'route: paper'
    """
    statement = data.get("statement")
    route = statement.get("route") if isinstance(statement, Mapping) else None
    if not route:
        return None
    drift = data.get("active_drift_bound")
    return f"route: {route}" + (f"; active drift bound: {drift}" if drift else "")


# --------------------------------------------------------------------------- render_result


def render_result(
    data: Mapping[str, Any],
    fmt: str,
    *,
    digits: int | None = None,
    descriptions: Mapping[str, str] | None = None,
    sources: Mapping[str, str] | None = None,
    latex_names: Mapping[str, str] | None = None,
    width: int | None = None,
) -> str:
    """Render a JSON-contract dict in ``fmt`` (one of :data:`FORMATS`).

    Args:
        data: ``Evaluation.to_dict()`` or any dict of flat sections (see the module docstring).
        fmt: ``table``, ``json``, ``csv``, ``markdown`` or ``latex``.
        digits: significant digits of ``table`` / ``latex`` numbers (default 6).
        descriptions: optional one-line meaning per quantity name (``table`` and ``latex``).
        sources: optional source per input name, e.g. ``{"m": "given", "n": "default"}``
            (``table`` only; the data itself is never changed).
        latex_names: optional LaTeX symbol per quantity name (``latex`` only).
        width: console width of ``table`` (default 110).

    Returns:
        The rendered text; ``json`` is exactly ``json.dumps(data)`` (indented), with
        non-finite floats rejected.

    Example:
        >>> out = render_result({"bound": {"min_iterate": 2.5}}, "markdown")
        >>> "| min_iterate | 2.5 |" in out
        True
    """
    fmt = check_format(fmt)
    if fmt == "json":
        return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)
    sections = _sections(data)
    if fmt == "csv":
        return _result_csv(sections)
    if fmt == "markdown":
        return _result_markdown(data, sections)
    show = DISPLAY_DIGITS if digits is None else digits
    if fmt == "latex":
        return _result_latex(data, sections, show, descriptions or {}, latex_names or {})
    return _result_table(data, sections, show, descriptions or {}, sources or {}, width or 110)


def _result_csv(sections: list[_Section]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["section", "name", "value"])
    for sec in sections:
        if sec.kind == "values":
            for name, value in sec.rows:
                writer.writerow([sec.key, name, format_value(value)])
            continue
        for i, rec in enumerate(sec.rows):
            name = str(rec.get("name", i))
            if "holds" in rec:
                writer.writerow([sec.key, name, _record_status(rec["holds"])])
            for field, value in rec.items():
                if field in ("name", "holds"):
                    continue
                writer.writerow([f"{sec.key}.{field}", name, format_value(value)])
    return buf.getvalue().rstrip("\n")


def _md_cell(text: str) -> str:
    return str(text).replace("|", r"\|").replace("\n", " ")


def _result_markdown(data: Mapping[str, Any], sections: list[_Section]) -> str:
    lines: list[str] = []
    statement = data.get("statement") if isinstance(data.get("statement"), Mapping) else None
    if statement:
        lines.append(f"## {_md_cell(statement.get('title') or statement.get('name', ''))}")
        if statement.get("summary"):
            lines += ["", _md_cell(statement["summary"])]
    route = route_line(data)
    if route:
        head, _, rest = route.partition(":")
        lines += ["", f"**{head}**:{_md_cell(rest)}"]
    status = guarantee_line(data)
    if status:
        head, _, rest = status.partition(":")
        lines += ["", f"**{head}**:{_md_cell(rest)}"]
    for sec in sections:
        if sec.key in ("statement", "version", *HEADER_KEYS):
            continue
        lines += ["", f"### {sec.title}", ""]
        if sec.kind == "values":
            lines += ["| name | value |", "|---|---:|"]
            lines += [f"| {_md_cell(n)} | {_md_cell(format_value(v))} |" for n, v in sec.rows]
        else:
            fields = _record_fields(sec.rows)
            header = ["status" if f == "holds" else f for f in fields]
            lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(fields)]
            for rec in sec.rows:
                cells = [_record_status(rec.get(f)) if f == "holds"
                         else format_value(rec.get(f)) for f in fields]
                lines.append("| " + " | ".join(_md_cell(c) for c in cells) + " |")
    if statement or "version" in data:
        meta = []
        if statement and statement.get("name"):
            meta.append(f"statement `{statement['name']}`")
        if statement and statement.get("route"):
            meta.append(f"route {statement['route']}")
        if "version" in data:
            meta.append(f"boundcalc {data['version']}")
        if statement and statement.get("precision_digits"):
            meta.append(f"{statement['precision_digits']} digits")
        lines += ["", "_" + ", ".join(meta) + "_"]
    return "\n".join(lines).lstrip("\n")


def _result_latex(data: Mapping[str, Any], sections: list[_Section], digits: int,
                  descriptions: Mapping[str, str], latex_names: Mapping[str, str]) -> str:
    statement = data.get("statement") if isinstance(data.get("statement"), Mapping) else {}
    lines = []
    if statement:
        lines.append(f"% {latex_text(statement.get('title', statement.get('name', '')))}")
    route = route_line(data)
    if route:
        lines.append(f"% {latex_text(route)}")
    status = guarantee_line(data)
    if status:
        lines.append(f"% {latex_text(status)}")
    if "version" in data:
        lines.append(f"% boundcalc {latex_text(data['version'])}")
    lines += [r"\begin{tabular}{llp{0.5\linewidth}}", r"\toprule",
              r"quantity & value & note \\"]
    for sec in sections:
        if sec.key in ("statement", "version", *HEADER_KEYS):
            continue
        caption = _latex_escape(sec.title)
        lines += [r"\midrule", rf"\multicolumn{{3}}{{l}}{{\textit{{{caption}}}}} \\"]
        if sec.kind == "values":
            for name, value in sec.rows:
                symbol = (f"${latex_names[name]}$" if name in latex_names
                          else rf"\texttt{{{_latex_escape(name)}}}")
                note = _latex_escape(descriptions.get(name, ""))
                lines.append(f"{symbol} & {_latex_value(value, digits)} & {note} \\\\")
        else:
            for i, rec in enumerate(sec.rows):
                name = rf"\texttt{{{_latex_escape(str(rec.get('name', i)))}}}"
                status_cell = _record_status(rec.get("holds")) if "holds" in rec else ""
                extra = "; ".join(format_value(v) for f, v in rec.items()
                                  if f not in ("name", "holds"))
                lines.append(f"{name} & {status_cell} & {_latex_escape(extra)} \\\\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines)


def _result_table(data: Mapping[str, Any], sections: list[_Section], digits: int,
                  descriptions: Mapping[str, str], sources: Mapping[str, str],
                  width: int) -> str:
    from rich import box
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    parts: list[Any] = []
    statement = data.get("statement") if isinstance(data.get("statement"), Mapping) else None
    if statement:
        parts.append(Text(str(statement.get("title") or statement.get("name", "")),
                          style="bold"))
        if statement.get("summary"):
            parts.append(Text(str(statement["summary"])))
    route = route_line(data)
    if route:
        parts.append(Text(route, style="bold"))
    status = guarantee_line(data)
    if status:
        style = ("bold green" if status.startswith("GUAR")
                 else "bold yellow" if status.startswith("VAC") else "bold red")
        parts.append(Text(status, style=style))
    for sec in sections:
        if sec.key in ("statement", "version", *HEADER_KEYS):
            continue
        table = Table(title=Text(sec.title, style="bold"), title_justify="left",
                      box=box.SIMPLE_HEAD, pad_edge=False, expand=False)
        if sec.kind == "values":
            table.add_column("name", no_wrap=True)
            table.add_column("value", justify="right", no_wrap=True)
            extra = ("source" if sec.key == "inputs" and sources
                     else "meaning" if any(n in descriptions for n, _ in sec.rows) else None)
            if extra:
                table.add_column(extra)
            for name, value in sec.rows:
                cells = [Text(name), Text(format_value(value, digits) or "—")]
                if extra == "source":
                    cells.append(Text(sources.get(name, "")))
                elif extra:
                    cells.append(Text(descriptions.get(name, "")))
                table.add_row(*cells)
        else:
            fields = _record_fields(sec.rows)
            for f in fields:
                table.add_column("status" if f == "holds" else f,
                                 no_wrap=f in ("name", "holds"))
            for rec in sec.rows:
                cells = []
                for f in fields:
                    if f == "holds":
                        ok = bool(rec.get(f))
                        cells.append(Text(_record_status(ok), style="green" if ok else "bold red"))
                    else:
                        cells.append(Text(format_value(rec.get(f), digits)))
                table.add_row(*cells)
        parts.append(table)
    footer = []
    if statement and statement.get("name"):
        footer.append(f"statement {statement['name']}"
                      + (f" ({statement['route']} route)" if statement.get("route") else ""))
    if statement and statement.get("precision_digits"):
        footer.append(f"evaluated with {statement['precision_digits']} significant digits, "
                      f"shown with {digits}")
    if "version" in data:
        footer.append(f"boundcalc {data['version']}")
    if footer:
        parts.append(Text(" · ".join(footer), style="dim"))
    return _rich_to_text(Group(*parts), width)


def _rich_to_text(renderable: Any, width: int) -> str:
    from rich.console import Console

    buf = io.StringIO()
    console = Console(file=buf, width=width, color_system=None, force_terminal=False,
                      highlight=False, emoji=False)
    console.print(renderable)
    return "\n".join(line.rstrip() for line in buf.getvalue().rstrip("\n").splitlines())


# --------------------------------------------------------------------------- render_frame


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
        lines = [f"**{_md_cell(title)}**", ""] if title else []
        lines.append("| " + " | ".join(_md_cell(c) for c in columns) + " |")
        lines.append("|" + "---:|" * len(columns))
        lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
        return "\n".join(lines)
    if fmt == "latex":
        show = digits or DISPLAY_DIGITS
        lines = [f"% {latex_text(title)}"] if title else []
        lines += [rf"\begin{{tabular}}{{{'r' * len(columns)}}}", r"\toprule",
                  " & ".join(rf"\texttt{{{_latex_escape(c)}}}" for c in columns) + r" \\",
                  r"\midrule"]
        for values in df.itertuples(index=False):
            lines.append(" & ".join(_latex_value(v, show) for v in values) + r" \\")
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
    text = _rich_to_text(table, width or max(need + 2, 60))
    if omitted:
        text += (f"\n… {omitted} of {len(rows) + omitted} rows not shown; "
                 "use --format csv or json (with --output) for every row")
    return text
