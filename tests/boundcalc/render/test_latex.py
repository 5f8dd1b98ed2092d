"""Text and numbers as LaTeX (boundcalc/render/latex.py): whatever the text, the result is ASCII
with its math groups and braces balanced and every special character escaped; a number cell
reads back to the number at its digits."""

from __future__ import annotations

import re
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from boundcalc.render.latex import latex_text, latex_value

SPECIAL = "&%$#_{}~^\\|<>"


def _unescaped_dollars(text: str) -> int:
    return len(re.findall(r"(?<!\\)\$", text))


def _brace_depths(text: str) -> list[int]:
    """Running depth of the unescaped braces of ``text``."""
    depth, depths = 0, []
    for i, ch in enumerate(text):
        if ch in "{}" and (i == 0 or text[i - 1] != "\\"):
            depth += 1 if ch == "{" else -1
            depths.append(depth)
    return depths


@given(st.text())
def test_any_text_becomes_ascii_with_balanced_math_and_braces(text):
    out = latex_text(text)
    assert out.isascii()
    assert "\n" not in out and "\r" not in out
    assert _unescaped_dollars(out) % 2 == 0
    depths = _brace_depths(out)
    assert all(depth >= 0 for depth in depths) and (not depths or depths[-1] == 0)


@pytest.mark.parametrize("ch", SPECIAL)
def test_every_special_character_is_escaped_never_left_bare(ch):
    out = latex_text(f"a{ch}b")
    assert out != f"a{ch}b"
    assert out.startswith("a") and out.endswith("b")
    inner = out[1:-1]
    assert inner.startswith("\\") and inner.isascii()


def test_greek_letters_and_relations_are_math_macros_merged_into_one_group():
    assert latex_text("αβ") == r"$\alpha \beta$"
    assert latex_text("ρ ≥ ν") == r"$\rho$ $\ge$ $\nu$"
    assert latex_text("ε_mis") == r"$\varepsilon$\_mis"


@pytest.mark.parametrize(("text", "expected"), [
    ("θ̄", r"$\bar{\theta}$"), ("R̂", r"$\hat{R}$"), ("x̃", r"$\tilde{x}$"),
    ("Uᵀ", r"U$^{T}$"), ("σ₂", r"$\sigma _{2}$"), ("‖ν‖", r"$\| \nu \|$"),
])
def test_accents_sub_and_superscripts_become_their_macros(text, expected):
    assert latex_text(text) == expected


def test_a_combining_mark_with_nothing_before_it_is_dropped():
    assert latex_text("\u0304x") == "x"


def test_an_unknown_character_keeps_its_ascii_letters_or_becomes_a_question_mark():
    assert latex_text("ñ") == "n"      # NFKD: n + combining tilde
    assert latex_text("→∎") == r"$\to$?"


@given(st.floats(min_value=1e-300, max_value=1e300), st.integers(1, 12))
def test_a_number_cell_reads_back_to_the_number_at_its_digits(value, digits):
    cell = latex_value(value, digits)
    assert cell.startswith("$") and cell.endswith("$")
    body = cell[1:-1]
    match = re.fullmatch(r"(-?[0-9.]+)\\times 10\^\{(-?\d+)\}", body)
    number = (Decimal(match[1]) * Decimal(10) ** int(match[2]) if match else Decimal(body))
    exact = Decimal(value)
    assert abs(number - exact) <= Decimal(5) * Decimal(10) ** (exact.adjusted() - digits)


def test_integers_are_exact_and_nan_is_an_empty_cell():
    assert latex_value(2**70, 3) == f"${2**70}$"
    assert latex_value(float("nan"), 3) == ""
    assert latex_value(-3, 3) == "$-3$"


@pytest.mark.parametrize(("value", "expected"), [
    (np.float64(1.5e-9), r"$1.5\times 10^{-9}$"), (np.int64(512), "$512$"),
    (np.bool_(True), "true"), (None, ""), ("n_large & 50%", r"n\_large \& 50\%"),
])
def test_numpy_scalars_booleans_and_text_are_cells_like_their_python_values(value, expected):
    assert latex_value(value, 3) == expected
