"""The statement container (theory/statement.py): ``expressions`` lists every constant, term,
bound and the probability once, keyed by group; ``free_symbols`` includes the symbols that only a
condition names; both are frozen."""

from __future__ import annotations

import dataclasses

import pytest
import sympy as sp
from boundcalc.theory import symbols as S
from boundcalc.theory.registry import BUILDERS, get_statement
from boundcalc.theory.statement import Condition, Statement


def _toy() -> Statement:
    return Statement(
        name="toy", title="Toy", summary="a toy statement",
        constants={"u": sp.sqrt(S.d)}, terms={"t": S.m * S.n, "s": S.K},
        bound={"u": S.rho_c + S.nu_c},        # a key shared with constants, in another group
        probability=1 - S.delta,
        conditions=(Condition("batch", sp.Le(S.b, S.n), "b <= n", "a minibatch is a subset"),),
    )


def test_expressions_key_every_quantity_by_its_group_and_keep_the_probability_last():
    exprs = _toy().expressions()
    assert list(exprs) == ["constants.u", "terms.t", "terms.s", "bound.u", "probability"]
    assert exprs["constants.u"] == sp.sqrt(S.d) and exprs["bound.u"] == S.rho_c + S.nu_c
    assert exprs["probability"] == 1 - S.delta


def test_free_symbols_include_a_symbol_that_only_a_condition_names():
    assert _toy().free_symbols() == {S.d, S.m, S.n, S.K, S.rho_c, S.nu_c, S.delta, S.b}


def test_a_statement_and_its_conditions_are_frozen():
    statement = _toy()
    with pytest.raises(dataclasses.FrozenInstanceError):
        statement.name = "other"
    with pytest.raises(dataclasses.FrozenInstanceError):
        statement.conditions[0].name = "other"


def test_the_optional_fields_default_to_empty():
    statement = Statement(name="x", title="X", summary="", constants={}, terms={}, bound={},
                          probability=sp.Integer(1))
    assert (statement.conditions, statement.descriptions, statement.latex_names,
            statement.route) == ((), {}, {}, "")
    assert statement.expressions() == {"probability": 1}


@pytest.mark.parametrize("name", sorted(BUILDERS))
@pytest.mark.slow
def test_every_registered_statement_counts_each_quantity_once(name):
    statement = get_statement(name)
    sizes = len(statement.constants) + len(statement.terms) + len(statement.bound)
    assert len(statement.expressions()) == sizes + 1
    assert all(isinstance(c.relation, sp.Basic) and c.relation.free_symbols
               for c in statement.conditions)
