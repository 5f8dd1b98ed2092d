"""Symbolic statements of Arda, Cayci & Eryilmaz, *Finite-Time Analysis of Gradient Descent for
Shallow Transformers* (AISTATS 2026), and of the second bound family (the generalization bound of
*Generalization bound for a Shallow Transformer trained using Gradient Descent*): pure sympy, no
torch. One module per statement, named like its CLI command.

Modules:

* ``catalog``: the statement table (name, module, route, CLI help); pure data, no sympy;
* ``registry``: name → statement builder, built from the catalog;
* ``statement``: the :class:`Statement` / :class:`Condition` containers;
* ``symbols``: the named symbols; ``activations``: the σ₀, σ₁, σ₂ presets;
* ``labels``: meaning line and LaTeX symbol of every key of the statements;
* ``conditions``: hypotheses shared by several statements (m even, ρ ≥ ν);
* ``event`` (Definition 1: u_∞, ū), ``lemma2`` (L, β), ``lemma3`` (ε_lin, ε_tay), ``lemma5``
  (ε_app), ``lemma6`` (envelopes F, Y, B, 2LB), ``theorem1`` (ProjGD), ``prop1`` (ProjSGD),
  ``remark9`` (misspecification), ``prop2`` (the IndRNN): each computes its result's quantities and
  builds its statement with the function of the same name;
* ``aposteriori``: Theorem 1 with measured U(0) and input geometry (validators);
* ``generalization_symbols``, ``generalization_quantities``, ``generalization``: the
  generalization bound (its symbols; the quantities of its Lemmas 1, 2 and 4; Theorem 5, its
  conditions and statements).

Derivations: docs/derivations.md. The package's own names are loaded on first use, so that
importing :mod:`boundcalc.theory.catalog` does not import sympy.
"""

from __future__ import annotations

from importlib import import_module

#: Public name → module that defines it (loaded on first access).
_LAZY = {"BUILDERS": "registry", "get_statement": "registry",
         "Condition": "statement", "Statement": "statement"}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["BUILDERS", "Condition", "Statement", "get_statement"]
