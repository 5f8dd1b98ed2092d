"""Render one calculator result — a JSON-contract dict — as a table, JSON, CSV, Markdown or LaTeX.

:func:`render_result` takes ``Evaluation.to_dict()`` of :mod:`boundcalc.calc.api` (or any dict of
the same shape) and renders it section by section. It is generic: a top-level ``statement`` dict
becomes the header, every flat ``name -> value`` dict (``inputs``, ``constants``, ``terms``,
``bound``, or any extra section such as ``quantities``) becomes its own section, a top-level scalar
(``probability``) a one-row section, and a list of ``{name, holds, detail}`` records
(``conditions``) a PASS/FAIL section. :func:`guarantee_line` and :func:`route_line` are the header
lines that say whether the bound is guaranteed (or vacuous) and by which proof route; the CLI also
prints the first on stderr. Numbers are written by :func:`boundcalc.render.cell_text.format_value`.

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
from collections.abc import Mapping, Sequence
from typing import Any

from boundcalc.render.cell_text import (
    DISPLAY_DIGITS,
    check_format,
    format_value,
    markdown_cell,
    rich_to_text,
)
from boundcalc.render.latex import latex_text, latex_value
from boundcalc.theory.catalog import Route

__all__ = ["HEADER_KEYS", "MAX_EVENT_APART_ROUTES", "MAX_EVENT_CONSTANTS", "guarantee_line",
           "render_result", "route_line"]

#: Section order of the JSON contract; any other section follows in the dict's order.
_CONTRACT_ORDER = ("statement", "inputs", "constants", "terms", "bound", "probability",
                   "conditions", "version")

#: Top-level keys that ``table``, ``markdown`` and ``latex`` show in the header lines (verdict,
#: route) instead of as sections; ``csv`` and ``json`` carry them as they are.
HEADER_KEYS: tuple[str, ...] = ("verdict", "overflow", "free_bound", "average_iterate_verdict",
                                "nonvacuous_from_m", "nonvacuous_until_m", "nonvacuous_again",
                                "nonvacuous_checked_to_m", "active_drift_bound")

#: How the status line names each free bound (``free_bound`` of a result) and its symbol.
_FREE_BOUND_NAMES: dict[str, tuple[str, str]] = {
    "trivial_bound_B2": ("B²", "the largest loss on Ω_ρ"),
    "initial_loss_bound": ("Y²", "the loss at initialization (f(θ(0)) = 0)"),
}


def _is_scalar(value: Any) -> bool:
    """True for a value one cell holds as it is (text, number, boolean, None)."""
    return value is None or isinstance(value, (str, int, float, bool))


#: Constants of the paper's max event E_U (Definition 1: max_i ‖U_i(0)‖ ≤ u_∞) that the tight
#: route reports but its 1 − 2δ statement (on the head-average event) does not use: the text
#: formats show them apart from its constants (CSV and JSON keep them among the constants).
MAX_EVENT_CONSTANTS: tuple[str, ...] = ("u_inf", "u_max", "smoothness_beta")
#: The routes whose table, Markdown and LaTeX output show the :data:`MAX_EVENT_CONSTANTS` apart:
#: three of :data:`boundcalc.theory.catalog.HEAD_AVERAGE_ROUTES` (the gradnorm route's output
#: keeps them among its constants).
MAX_EVENT_APART_ROUTES: tuple[Route, ...] = ("tight", "joint", "blocks")
_MAX_EVENT_TITLE = ("Max-event constants (E_U, Definition 1): not part of the tight route's "
                    "1 − 2δ statement, reported only")


class _Section:
    """One block of a result: ``kind`` is ``values`` (name -> scalar) or ``records``."""

    def __init__(self, key: str, kind: str, rows: list[tuple[str, Any]] | list[dict[str, Any]],
                 title: str | None = None):
        self.key = key
        self.kind = kind
        self.rows = rows
        self._title = title

    @property
    def title(self) -> str:
        return self._title or self.key.replace("_", " ").capitalize()


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


def _max_event_apart(data: Mapping[str, Any], sections: list[_Section]) -> list[_Section]:
    """On the :data:`MAX_EVENT_APART_ROUTES` (tight, joint, blocks), the
    :data:`MAX_EVENT_CONSTANTS` move from the constants to a section of their own right after
    them, so that no reader takes them for part of the statement."""
    statement = data.get("statement")
    if not (isinstance(statement, Mapping)
            and statement.get("route") in MAX_EVENT_APART_ROUTES):
        return sections
    out = []
    for sec in sections:
        if sec.key != "constants" or sec.kind != "values":
            out.append(sec)
            continue
        apart = [(n, v) for n, v in sec.rows if n in MAX_EVENT_CONSTANTS]
        out.append(_Section(sec.key, sec.kind,
                            [(n, v) for n, v in sec.rows if n not in MAX_EVENT_CONSTANTS]))
        if apart:
            out.append(_Section("max_event_constants", "values", apart, _MAX_EVENT_TITLE))
    return out


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
    conditions, else None; ``statement.status_line`` when the result words its own (paper 003's
    Theorem 5). With a top-level ``verdict`` (statements with the free bounds B² and
    Y²), a guaranteed or vacuous result also compares ``bound.min_iterate`` with the free bound
    named by ``free_bound`` (``trivial_bound_B2`` when absent), names it, and a vacuous one says
    from which width m it is informative (``nonvacuous_from_m``) and, where that range ends,
    up to which (``nonvacuous_until_m``). Where the two numbers print alike even with 17 digits
    (they tie in float64), it says the working precision decided. Where every condition holds
    and the result has a top-level ``probability``, the line names it (``with probability ≥
    0.9``); below ``inputs.min_probability`` (``statement.probability_sufficient`` false) the
    result is NOT GUARANTEED and the line says why. (A line whose conditions fail names no
    probability: the statement does not apply there.)

    Example:
        >>> guarantee_line({"conditions": [{"name": "rho_c_ge_nu_c", "holds": False}]})
        'NOT GUARANTEED: rho_c_ge_nu_c fails, the bound is not guaranteed'
        >>> print(guarantee_line({
        ...     "verdict": "vacuous", "nonvacuous_from_m": 4362, "free_bound": "initial_loss_bound",
        ...     "bound": {"min_iterate": 67.569},
        ...     "constants": {"trivial_bound_B2": 183.9, "initial_loss_bound": 9.0},
        ...     "conditions": [{"name": "m_even", "holds": True}]}).replace("; ", ";\\n"))
        VACUOUS: min_iterate 67.57 ≥ 9 = Y², the loss at initialization (f(θ(0)) = 0);
        informative from m = 4362
        >>> print(guarantee_line({"verdict": "not_guaranteed", "probability": 0.02,
        ...                       "inputs": {"min_probability": 0.5},
        ...                       "conditions": [{"name": "m_even", "holds": True}]}
        ...                      ).replace("; ", ";\\n").replace(", b", ",\\nb"))
        NOT GUARANTEED: the bound holds with probability ≥ 0.02 only,
        below the 0.5 required (--min-probability);
        its condition holds
    """
    statement = data.get("statement")
    own = statement.get("status_line") if isinstance(statement, Mapping) else None
    if isinstance(own, str) and own:  # a statement that words its own verdict
        return own
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
        line = f"NOT GUARANTEED: {', '.join(failed)} {verb}, the bound is not guaranteed"
        inputs = data.get("inputs") if isinstance(data.get("inputs"), Mapping) else {}
        chance = _probability_clause(data)[0] if "min_probability" in inputs else ""
        where = "where it holds" if len(failed) == 1 else "where they hold"
        return line + (f" ({where}, the bound holds {chance})" if chance.startswith("with ")
                       else "")
    holds = ("its condition holds" if len(conditions) == 1
             else f"all {len(conditions)} conditions hold")
    chance, sufficient = _probability_clause(data)
    if sufficient is False and data.get("verdict") != "vacuous":  # it holds, but too rarely
        numbers = _min_iterate_numbers(data)
        return (f"NOT GUARANTEED: {chance}; {holds}" + (f"; {numbers}" if numbers else ""))
    tail = f"; {chance}" if chance else ""
    verdict = data.get("verdict")
    if verdict not in ("guaranteed", "vacuous"):
        return f"GUARANTEED: {holds}{tail}"
    numbers = _min_iterate_numbers(data, verdict == "guaranteed")
    symbol = _FREE_BOUND_NAMES.get(str(data.get("free_bound") or "trivial_bound_B2"),
                                   ("B²", ""))[0]
    average = _average_clause(data, verdict)
    if verdict == "guaranteed":
        return (f"GUARANTEED: {holds}" + (f"; {numbers}" if numbers else "") + average + tail)
    parts = [numbers or f"min_iterate ≥ {symbol}"]
    if "nonvacuous_from_m" in data:
        parts.append(_informative_text(data))
    return "VACUOUS: " + "; ".join(parts) + average + tail


def _min_iterate_numbers(data: Mapping[str, Any], below: bool | None = None) -> str:
    """``min_iterate 25.41 ≥ 9 = Y², the loss at initialization (f(θ(0)) = 0)``: the bound
    against the free bound named by ``free_bound`` (``<`` when ``below``; None: as the numbers
    compare), ``""`` without both numbers."""
    bound = data.get("bound") if isinstance(data.get("bound"), Mapping) else {}
    constants = data.get("constants") if isinstance(data.get("constants"), Mapping) else {}
    key = str(data.get("free_bound") or "trivial_bound_B2")
    symbol, meaning = _FREE_BOUND_NAMES.get(key, (key, ""))
    value, free = bound.get("min_iterate"), constants.get(key)
    numbers = ""
    if isinstance(value, (int, float)) and isinstance(free, (int, float)):
        if below is None:
            below = float(value) < float(free)
        relation = "<" if below else "≥"
        shown, shown_free = _two_numbers(float(value), float(free))
        numbers = f"min_iterate {shown} {relation} {shown_free} = {symbol}"
        if meaning:
            numbers += f", {meaning}"
        if float(value) == float(free):
            digits = (data.get("statement") or {}).get("precision_digits")
            numbers += (f" (equal in float64; the {digits}-digit evaluation decides)" if digits
                        else " (equal in float64; the exact evaluation decides)")
    return numbers


def _informative_text(data: Mapping[str, Any]) -> str:
    """Where the bound is informative: ``informative for m in [a, b]`` where the range ends
    (``nonvacuous_until_m``: vacuous again from b + 2), ``informative from m = a`` with what was
    checked past it (``nonvacuous_checked_to_m``: the scan, not a proof that it stays so),
    ``informative at no even m ≤ 2^62``."""
    first = data.get("nonvacuous_from_m")
    if first is None:
        return "informative at no even m ≤ 2^62"
    last = data.get("nonvacuous_until_m")
    if last is not None:
        later = (", and again at some larger m" if data.get("nonvacuous_again")
                 else f", none larger up to {_power_text(data.get('nonvacuous_checked_to_m'))}")
        return (f"informative for m in [{first}, {last}] (vacuous again from m = "
                f"{int(last) + 2}{later})")
    text = f"informative from m = {first}"
    checked = data.get("nonvacuous_checked_to_m")
    if checked is not None:
        text += (f" (and at every width scanned up to {_power_text(checked)}; not proved "
                 f"monotone in m)")
    return text


def _power_text(value: Any) -> str:
    """``2^62`` for a power of two, else the integer."""
    if isinstance(value, int) and value > 0 and value & (value - 1) == 0:
        return f"2^{value.bit_length() - 1}"
    return str(value)


def _probability_clause(data: Mapping[str, Any]) -> tuple[str, bool | None]:
    """(``holds with probability ≥ 0.9``, whether that reaches ``inputs.min_probability``) from
    the top-level ``probability`` (the statement's lower bound on the probability of its
    event); ``("", None)`` without one. Below the minimum the text says so:
    ``holds with probability ≥ 0.02 only, below the 0.5 required (--min-probability)``."""
    value = data.get("probability")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "", None
    inputs = data.get("inputs") if isinstance(data.get("inputs"), Mapping) else {}
    statement = data.get("statement") if isinstance(data.get("statement"), Mapping) else {}
    least = inputs.get("min_probability")
    sufficient = statement.get("probability_sufficient")
    if not isinstance(sufficient, bool):
        sufficient = (None if not isinstance(least, (int, float))
                      else float(value) >= float(least))
    if sufficient is False and isinstance(least, (int, float)):
        shown, shown_least = _two_numbers(float(value), float(least))
        return (f"the bound holds with probability ≥ {shown} only, below the {shown_least} "
                f"required (--min-probability)", False)
    return f"with probability ≥ {float(value):.4g}", sufficient


def _average_clause(data: Mapping[str, Any], verdict: str) -> str:
    """``; average_iterate 216 ≥ B² = 183.9 (vacuous)`` where the average iterate's verdict
    (against B² alone) differs from the min-iterate verdict, else ``""``."""
    average = data.get("average_iterate_verdict")
    if average not in ("guaranteed", "vacuous") or average == verdict:
        return ""
    value = (data.get("bound") or {}).get("average_iterate")
    trivial = (data.get("constants") or {}).get("trivial_bound_B2")
    if not isinstance(value, (int, float)) or not isinstance(trivial, (int, float)):
        return ""
    shown, shown_b2 = _two_numbers(float(value), float(trivial))
    if average == "guaranteed":  # informative beside a vacuous min_iterate: say why it may be
        return (f"; average_iterate {shown} < B² = {shown_b2} (informative: B² is its only "
                f"free yardstick, since Y² bounds the loss at k = 0, not at the average "
                f"iterate)")
    return f"; average_iterate {shown} ≥ B² = {shown_b2} (vacuous)"


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
    sections = _max_event_apart(data, sections)
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


def _result_markdown(data: Mapping[str, Any], sections: list[_Section]) -> str:
    lines: list[str] = []
    statement = data.get("statement") if isinstance(data.get("statement"), Mapping) else None
    if statement:
        lines.append(f"## {markdown_cell(statement.get('title') or statement.get('name', ''))}")
        if statement.get("summary"):
            lines += ["", markdown_cell(statement["summary"])]
    route = route_line(data)
    if route:
        head, _, rest = route.partition(":")
        lines += ["", f"**{head}**:{markdown_cell(rest)}"]
    status = guarantee_line(data)
    if status:
        head, _, rest = status.partition(":")
        lines += ["", f"**{head}**:{markdown_cell(rest)}"]
    for sec in sections:
        if sec.key in ("statement", "version", *HEADER_KEYS):
            continue
        lines += ["", f"### {sec.title}", ""]
        if sec.kind == "values":
            lines += ["| name | value |", "|---|---:|"]
            lines += [f"| {markdown_cell(n)} | {markdown_cell(format_value(v))} |"
                      for n, v in sec.rows]
        else:
            fields = _record_fields(sec.rows)
            header = ["status" if f == "holds" else f for f in fields]
            lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(fields)]
            for rec in sec.rows:
                cells = [_record_status(rec.get(f)) if f == "holds"
                         else format_value(rec.get(f)) for f in fields]
                lines.append("| " + " | ".join(markdown_cell(c) for c in cells) + " |")
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
        caption = latex_text(sec.title)
        lines += [r"\midrule", rf"\multicolumn{{3}}{{l}}{{\textit{{{caption}}}}} \\"]
        if sec.kind == "values":
            for name, value in sec.rows:
                symbol = (f"${latex_names[name]}$" if name in latex_names
                          else rf"\texttt{{{latex_text(name)}}}")
                note = latex_text(descriptions.get(name, ""))
                lines.append(f"{symbol} & {latex_value(value, digits)} & {note} \\\\")
        else:
            for i, rec in enumerate(sec.rows):
                name = rf"\texttt{{{latex_text(str(rec.get('name', i)))}}}"
                status_cell = _record_status(rec.get("holds")) if "holds" in rec else ""
                extra = "; ".join(format_value(v) for f, v in rec.items()
                                  if f not in ("name", "holds"))
                lines.append(f"{name} & {status_cell} & {latex_text(extra)} \\\\")
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
    return rich_to_text(Group(*parts), width)
