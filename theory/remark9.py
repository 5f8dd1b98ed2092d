"""Remark 9: non-realizable labels add B·ε_mis to Theorem 1.

Arda, Cayci & Eryilmaz, *Finite-Time Analysis of Gradient Descent for Shallow Transformers* (AISTATS
2026), Remark 9: Theorem 1 when the labels are not exactly realizable.

If the labels are y_j = f*(X_j) + e_j with max_j |e_j| ≤ ε_mis for some f* in the transport class
F_ν, the drift identity (i) of Theorem 1 acquires the bracket [y_j − f*(X_j)], bounded by ε_mis,
and the label envelope grows to Y + ε_mis. Everything else is unchanged. Choice: the
misspecification is measured in sup-norm over the training samples (the paper's exact norm is
not recoverable).

Statement (:func:`remark9`, the calculator's ``remark9`` command): Theorem 1's statement with the
symbol ``epsilon_mis``, on either route.
"""

from __future__ import annotations

from .catalog import DEFAULT_ROUTE, Route
from .statement import Statement
from .theorem1 import theorem1


def remark9(route: Route = DEFAULT_ROUTE) -> Statement:
    """Theorem 1 with the misspecification term B·ε_mis (symbol ``epsilon_mis``)."""
    return theorem1(misspecified=True, route=route)


__all__ = ["remark9"]
