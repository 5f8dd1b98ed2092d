"""Text and numbers as LaTeX that pdflatex compiles: the LaTeX output of every renderer.

The statements' titles, summaries and conditions are written in Unicode (θ̄, ≤, ‖·‖, Greek
letters); :func:`latex_text` turns such text into pure-ASCII LaTeX — special characters escaped,
mathematical symbols as math-mode macros — and :func:`latex_value` writes one table cell, a
number in math mode with ``\\times 10^{k}`` for large and small magnitudes. Used by the ``latex``
format of a result (:mod:`boundcalc.render.result_text`), a sweep
(:mod:`boundcalc.render.frame_text`), a stored run's tables (:mod:`boundcalc.runs.tables`) and the
symbolic output (:mod:`boundcalc.calc.symbolic`).

Example:
    >>> print(latex_value(1.5e-9, 3), latex_value(True, 3))
    $1.5\\times 10^{-9}$ true
"""

from __future__ import annotations

import math
from typing import Any

from boundcalc.render.cell_text import format_value

__all__ = ["latex_text", "latex_value"]

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


def latex_value(value: Any, digits: int) -> str:
    """A LaTeX cell: numbers with ``digits`` significant digits in math mode, with
    ``\\times 10^{k}`` for large / small magnitudes; text escaped by :func:`latex_text`."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return latex_text(format_value(value))
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
    return latex_text(str(value))
