"""Symbolic statements of Arda, Cayci & Eryilmaz, *Finite-Time Analysis of Gradient Descent for
Shallow Transformers* (AISTATS 2026): one module per result, pure sympy, no torch.

Modules: ``symbols`` (named symbols), ``activations`` (σ₀, σ₁, σ₂ presets), ``event``
(Definition 1), ``lemma2`` (L, β), ``lemma3`` (ε_lin), ``lemma5`` (ε_app), ``lemma6`` (envelopes),
``theorem1`` (ProjGD), ``proposition1`` (ProjSGD), ``remark9`` (misspecification), ``lemmas``
(statement objects of the lemmas), ``registry`` (name → statement).
Derivations: docs/derivations.md.
"""

from .registry import BUILDERS, get_statement
from .statement import Condition, Statement

__all__ = ["BUILDERS", "Condition", "Statement", "get_statement"]
