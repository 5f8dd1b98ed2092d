"""Formulas as a reader sees them: each statement's expressions in Unicode and LaTeX.

Every constant, term and bound of a statement is printed in terms of the named quantities listed
before it (``ε_drift = ε_tay + ε_app + ε_cf``, not the expanded expression), by replacing every
sub-expression equal to an earlier quantity with its symbol (:func:`formula_tables`). This is
what ``--symbolic`` appends to a point result (:func:`symbolic_block`) and what ``boundcalc
explain`` shows with the glossary of the symbols used and the conditions
(:func:`explain_data`, :func:`explain_text`). Imports sympy (only when called).

Example:
    >>> info = explain_data("lemma3")
    >>> sorted(info["formulas"])
    ['bound', 'constants', 'probability', 'terms']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from boundcalc.render.latex import latex_text

__all__ = ["QUANTITY_UNICODE", "explain_data", "explain_text", "formula_tables",
           "symbolic_block"]

QUANTITY_UNICODE: dict[str, str] = {
    "u_inf": "u_∞", "u_max": "u_max", "c_max": "c_max", "lipschitz_L": "L",
    "smoothness_beta": "β", "eps_lin": "ε_lin", "eps_app": "ε_app", "eps_cf": "ε_cf",
    "output_envelope_F": "F", "label_envelope_Y": "Y", "residual_envelope_B": "B",
    "transport_norm": "‖ν‖", "theorem_step_size": "η*", "head_gradient_G": "G",
    "head_hessian_H": "H", "r_uw": "r_uw", "log_factor": "ℓ",
    "loss_gradient_envelope": "‖∇R̂‖_max", "trivial_bound_B2": "B²", "initial_loss_bound": "Y²",
}


def formula_tables(statement_name: str) -> dict[str, dict[str, Any]]:
    """Each constant / term / bound / probability, abbreviated in terms of the quantities listed
    before it, as ``{group: {key: {"unicode", "latex", "description"}}}``."""
    import sympy as sp

    from boundcalc.theory import symbols as S
    from boundcalc.theory.registry import get_statement

    st = get_statement(statement_name)
    base = {s: sp.Symbol(S.UNICODE_NAMES.get(s, s.name), positive=True) for s in S.ALL}
    base.update({s: sp.Symbol(s.name, positive=True) for s in S.GEOMETRY + (S.u0_max,)})
    table: dict[sp.Expr, sp.Expr] = {}
    latex_of: dict[sp.Symbol, str] = {}
    out: dict[str, dict[str, Any]] = {}
    groups = [("constants", st.constants), ("terms", st.terms), ("bound", st.bound),
              ("probability", {"probability": st.probability})]
    for group, exprs in groups:
        out[group] = {}
        for key, expr in exprs.items():
            expr = sp.sympify(expr)
            short = _abbreviate(expr, {k: v for k, v in table.items() if k != expr})
            unicode_expr = short.xreplace(base)
            out[group][key] = {
                "unicode": _unicode(unicode_expr),
                "latex": sp.latex(short, symbol_names=latex_of),
                "description": st.descriptions.get(key, ""),
            }
            if not expr.is_Atom and expr not in table:
                sym = sp.Symbol(QUANTITY_UNICODE.get(key, key), positive=True)
                latex_of[sym] = st.latex_names.get(key, rf"\mathrm{{{key}}}".replace("_", r"\_"))
                table[expr] = sym
                for power in (2, -1, -2):
                    table.setdefault(expr**power, sym**power)
    return out


def _abbreviate(expr: Any, table: Mapping[Any, Any]) -> Any:
    """Replace every sub-expression of ``expr`` found in ``table`` by its symbol; a sum (product)
    in the table also matches as a subset of the terms (factors) of a larger sum (product)."""
    memo: dict[Any, Any] = {}
    groups = sorted(((k, v) for k, v in table.items() if k.is_Add or k.is_Mul),
                    key=lambda kv: -len(kv[0].args))

    def walk(e: Any) -> Any:
        if e in memo:
            return memo[e]
        if e in table:
            memo[e] = table[e]
            return memo[e]
        if e.is_Atom or not e.args:
            return e
        args = list(e.args)
        found = []
        if e.is_Add or e.is_Mul:
            for full, sym in groups:
                if full.func is not e.func or len(full.args) > len(args):
                    continue
                rest = list(args)
                try:
                    for a in full.args:
                        rest.remove(a)
                except ValueError:
                    continue
                args = rest
                found.append(sym)
        result = e.func(*found, *[walk(a) for a in args])
        memo[e] = result
        return result

    return walk(expr)


def _unicode(expr: Any) -> str:
    """One-line Unicode text of a sympy expression (√, ·, ^)."""
    import sympy as sp

    text = sp.sstr(expr)
    return (text.replace("**", "^").replace("*", "·").replace("sqrt(", "√(")
            .replace("Piecewise(", "piecewise("))


def _tex_name(name: str) -> str:
    return name.replace("_", "\\_")


def symbolic_block(statement_name: str, fmt: str) -> str:
    tables = formula_tables(statement_name)
    if fmt == "markdown":
        lines = ["### Formulas", "", "Each in terms of the named quantities listed before it."]
        for group, items in tables.items():
            lines += ["", f"**{group}**", ""]
            for key, f in items.items():
                lines.append(f"- `{key}` = `{f['unicode']}`  ")
                lines.append(f"  $${f['latex']}$$")
        return "\n".join(lines)
    if fmt == "latex":
        lines = ["% Formulas, each in terms of the named quantities listed before it",
                 r"\begin{align*}"]
        rows = []
        for items in tables.values():
            for key, f in items.items():
                rows.append(rf"\text{{{_tex_name(key)}}}: &\quad {f['latex']}")
        lines.append(" \\\\\n".join(rows))
        lines.append(r"\end{align*}")
        return "\n".join(lines)
    lines = ["Formulas (each in terms of the named quantities listed before it)"]
    for group, items in tables.items():
        lines.append(f"  {group}")
        for key, f in items.items():
            name = QUANTITY_UNICODE.get(key, key)
            label = key if name == key else f"{key} ({name})"
            lines.append(f"    {label} = {f['unicode']}")
            lines.append(f"      LaTeX: {f['latex']}")
    return "\n".join(lines)


def explain_data(statement: str) -> dict[str, Any]:
    """Title, proof route (None where there is one), summary, glossary of the symbols used,
    formulas and conditions of ``statement`` (a registry key: ``theorem1_paper`` for the paper
    route).

    Example:
        >>> sorted(explain_data("lemma3"))
        ['conditions', 'formulas', 'route', 'statement', 'summary', 'symbols', 'title']
        >>> explain_data("prop1_paper")["route"]
        'paper'
    """
    import sympy as sp

    from boundcalc.theory import symbols as S
    from boundcalc.theory.registry import get_statement

    st = get_statement(statement)
    used = st.free_symbols()
    symbols = {
        s.name: {"unicode": S.UNICODE_NAMES.get(s, s.name), "latex": sp.latex(s),
                 "meaning": S.GLOSSARY.get(s, "")}
        for s in (*S.ALL, *S.GEOMETRY, S.u0_max) if s in used
    }
    conditions = [{"name": c.name, "requirement": c.requirement, "why": c.why,
                   "latex": sp.latex(c.relation)} for c in st.conditions]
    return {"statement": st.name, "title": st.title, "route": st.route or None,
            "summary": st.summary, "symbols": symbols, "formulas": formula_tables(statement),
            "conditions": conditions}


def explain_text(info: Mapping[str, Any], fmt: str) -> str:
    if fmt == "json":
        import json

        return json.dumps(info, indent=2, ensure_ascii=False)
    formulas = info["formulas"]
    route = f"route: {info['route']}" if info.get("route") else ""
    if fmt == "markdown":
        lines = [f"## {info['title']}", ""]
        lines += [f"**route**: {info['route']}", ""] if route else []
        lines += [info["summary"], "", "### Symbols", "", "| symbol | meaning |", "|---|---|"]
        lines += [f"| {s['unicode']} | {s['meaning']} |" for s in info["symbols"].values()]
        lines += ["", "### Formulas", "", "Each in terms of the named quantities listed before it."]
        for group, items in formulas.items():
            lines += ["", f"**{group}**", ""]
            for key, f in items.items():
                desc = f" — {f['description']}" if f["description"] else ""
                lines += [f"- `{key}`{desc}", f"  - `{f['unicode']}`", f"  - $${f['latex']}$$"]
        lines += ["", "### Conditions", ""]
        lines += [f"- `{c['requirement']}` ({c['name']}): {c['why']}" for c in info["conditions"]]
        return "\n".join(lines)
    if fmt == "latex":
        lines = [f"% {latex_text(info['title'])}: {latex_text(info['summary'])}"]
        lines += [f"% {route}"] if route else []
        lines += [r"\begin{align*}"]
        rows = []
        for items in formulas.values():
            for key, f in items.items():
                rows.append(rf"\text{{{_tex_name(key)}}}: &\quad {f['latex']}")
        rows += [rf"\text{{{_tex_name(c['name'])}}}: &\quad {c['latex']}"
                 for c in info["conditions"]]
        lines += [" \\\\\n".join(rows), r"\end{align*}"]
        return "\n".join(lines)
    lines = [info["title"], *([route] if route else []), "", info["summary"], "", "Symbols"]
    width = max((len(s["unicode"]) for s in info["symbols"].values()), default=1)
    lines += [f"  {s['unicode']:<{width}}  {s['meaning']}" for s in info["symbols"].values()]
    lines += ["", "Formulas (each in terms of the named quantities listed before it)"]
    for group, items in formulas.items():
        lines.append(f"  {group}")
        for key, f in items.items():
            name = QUANTITY_UNICODE.get(key, key)
            label = key if name == key else f"{key} ({name})"
            if f["description"]:
                lines.append(f"    {label}: {f['description']}")
            else:
                lines.append(f"    {label}")
            lines.append(f"      = {f['unicode']}")
            lines.append(f"      LaTeX: {f['latex']}")
    lines += ["", "Conditions (the bound is guaranteed only when all hold)"]
    lines += [f"  {c['name']}: {c['requirement']} — {c['why']}" for c in info["conditions"]]
    return "\n".join(lines)
