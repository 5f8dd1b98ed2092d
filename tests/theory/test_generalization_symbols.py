"""Symbols of the generalization bound (theory/generalization_symbols.py): every argument named
once, with a Unicode name, a LaTeX name and a glossary line; positive except Φ(θ⁰) and Y, which
may be zero; every hidden constant has a default of 1 or a derived one, never both; every
LaTeX name typesets as a balanced, ASCII group."""

from __future__ import annotations

import pytest
import sympy as sp
from boundcalc.theory import generalization_symbols as GS


def test_every_argument_is_named_once():
    names = [s.name for s in GS.ARGUMENTS]
    assert len(set(names)) == len(names)
    for name, value in vars(GS).items():
        if isinstance(value, sp.Symbol):
            assert value in GS.ARGUMENTS, name


@pytest.mark.parametrize("table", ["UNICODE_NAMES", "LATEX_NAMES", "GLOSSARY"])
def test_every_argument_has_an_entry_in_every_display_table(table):
    entries = getattr(GS, table)
    assert set(entries) == set(GS.ARGUMENTS)
    assert all(text.strip() for text in entries.values())


def test_display_names_tell_the_arguments_apart():
    for table in (GS.UNICODE_NAMES, GS.LATEX_NAMES):
        assert len(set(table.values())) == len(table)


@pytest.mark.parametrize("symbol", GS.ARGUMENTS, ids=str)
def test_every_argument_is_positive_except_phi0_and_y_which_may_be_zero(symbol):
    if symbol in (GS.Phi0, GS.Y):
        assert symbol.is_nonnegative and symbol.is_positive is None
    else:
        assert symbol.is_positive


def test_every_hidden_constant_has_a_default_of_one_or_a_derived_one_never_both():
    names = {s.name for s in GS.HIDDEN_CONSTANTS}
    assert set(GS.HIDDEN_DEFAULTS) | set(GS.DERIVED_DEFAULTS) == names
    assert not set(GS.HIDDEN_DEFAULTS) & set(GS.DERIVED_DEFAULTS)
    assert set(GS.HIDDEN_DEFAULTS.values()) == {1.0}
    assert GS.DERIVED_DEFAULTS == {"C_conf": "3 (A + Y)"}


def test_the_hidden_constants_close_the_argument_list_in_their_table_order():
    hidden = tuple(GS.HIDDEN_CONSTANTS)
    assert GS.ARGUMENTS[-len(hidden):] == hidden


@pytest.mark.parametrize("symbol", GS.ARGUMENTS, ids=str)
def test_every_latex_name_typesets_as_a_balanced_ascii_group(symbol):
    text = sp.latex(symbol**2 + 1, symbol_names=GS.LATEX_NAMES)
    assert text.isascii()
    assert text.count("{") == text.count("}")
    assert GS.LATEX_NAMES[symbol] in text
