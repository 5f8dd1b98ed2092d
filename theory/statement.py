"""The container every result of :mod:`boundcalc.theory` is returned in.

A :class:`Statement` is a purely symbolic object: named sympy expressions grouped the way the
calculator reports them (``constants``, ``terms``, ``bound``, ``probability``) plus the
conditions under which the bound is guaranteed. The CLI, the docs tables and the validators all
evaluate these same expressions, so there is exactly one source of truth for every number.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp


@dataclass(frozen=True)
class Condition:
    """A hypothesis of a statement, as a sympy relation that holds for valid inputs.

    Attributes:
        name: stable identifier (JSON ``conditions[].name``).
        relation: a sympy relational (or boolean) in the statement's symbols.
        requirement: human-readable form of the relation, e.g. ``"rho_c >= nu_c"``.
        why: what the derivation needs it for.
    """

    name: str
    relation: sp.Basic
    requirement: str
    why: str


@dataclass(frozen=True)
class Statement:
    """Symbolic form of one lemma / theorem of the paper.

    Attributes:
        name: CLI name (``theorem1``, ``lemma2`` ...).
        title: the paper's name for the result.
        summary: one paragraph: what is bounded, under which event.
        constants: named intermediate constants (event radius, L, beta, eps_lin, ...).
        terms: named additive terms of the main bound (empty for lemmas).
        bound: the final bound(s).
        probability: lower bound on the probability that the statement holds.
        conditions: hypotheses; the bound is guaranteed only when all hold.
        descriptions: one line per key of constants/terms/bound.
        latex_names: LaTeX symbol per key, for ``--symbolic`` and tables.
        route: the proof route of the bound (``tight`` / ``paper``), empty where there is one.
    """

    name: str
    title: str
    summary: str
    constants: dict[str, sp.Expr]
    terms: dict[str, sp.Expr]
    bound: dict[str, sp.Expr]
    probability: sp.Expr
    conditions: tuple[Condition, ...] = ()
    descriptions: dict[str, str] = field(default_factory=dict)
    latex_names: dict[str, str] = field(default_factory=dict)
    route: str = ""

    def expressions(self) -> dict[str, sp.Expr]:
        """All numeric expressions, keyed ``group.name`` (constants, terms, bound, probability)."""
        out: dict[str, sp.Expr] = {}
        for group in ("constants", "terms", "bound"):
            for key, expr in getattr(self, group).items():
                out[f"{group}.{key}"] = expr
        out["probability"] = self.probability
        return out

    def free_symbols(self) -> set[sp.Symbol]:
        """Union of the free symbols of every expression and condition."""
        syms: set[sp.Symbol] = set()
        for expr in self.expressions().values():
            syms |= sp.sympify(expr).free_symbols
        for cond in self.conditions:
            syms |= cond.relation.free_symbols
        return syms


__all__ = [
    "Condition", "Statement",
]
