"""Proposition 1 (ProjSGD with minibatch size b): Theorem 1's bound in expectation.

Arda, Cayci & Eryilmaz, *Finite-Time Analysis of Gradient Descent for Shallow Transformers* (AISTATS
2026), Proposition 1: the minibatch (ProjSGD) version of Theorem 1.

ProjSGD draws B_k uniformly (any unbiased scheme: with or without replacement) and steps along
g_k = (2/b) Σ_{j∈B_k} (f_j(θ_k) − y_j) ∇f_j(θ_k). Conditionally on θ_k, E[g_k] = ∇R̂(θ_k), so the
drift term (i) is the same as in Theorem 1 after a conditional expectation, and ‖g_k‖ ≤ 2LB almost
surely (Lemma 6), so term (ii) is bounded exactly as before. Taking full expectations and summing:

    E[min_{k<K} R̂(θ_k)] ≤ E[(1/K) Σ_k R̂(θ_k)] ≤ the Theorem 1 bound,

and, by Jensen (√· concave), E R̂(θ̂_K) ≤ (√A + 2ε_lin)² as well. The minibatch size b does not enter
the bound in this derivation (the envelope ‖g_k‖ ≤ 2LB holds for every b); it only has to satisfy
1 ≤ b ≤ n. The probability is over the initialisation (E_U ∩ E_app on the paper route, E_avg ∩ E_app
on the tight route), ≥ 1 − 2δ. The tight route's Cauchy–Schwarz drift bound carries over: with
φ(x) = x − ε√x convex, φ(E (1/K)Σ_k R̂(θ_k)) ≤ E (1/K)Σ_k φ(R̂(θ_k)) ≤ the optimization term
(derivations.md §8).

Statement (:func:`prop1`, the calculator's ``prop1`` command): Theorem 1's constants, terms and
bounds (read in expectation) with the extra hypothesis b ≤ n, on either route.
"""

from __future__ import annotations

import sympy as sp

from .catalog import DEFAULT_ROUTE, Route
from .statement import Condition, Statement
from .symbols import b, delta, n
from .theorem1 import (
    build_bound,
    common_conditions,
    route_descriptions,
    route_events,
    route_latex_names,
)


def prop1(route: Route = DEFAULT_ROUTE) -> Statement:
    """Proposition 1 (ProjSGD convergence, in expectation over minibatches).

    Example:
        >>> from boundcalc.theory.prop1 import prop1
        >>> prop1().conditions[-1].requirement
        'b <= n'
    """
    constants, terms, bound = build_bound(route=route)
    descriptions = route_descriptions(route)
    descriptions["min_iterate"] = "bound on E[min_{k<K} R(theta_k)] over the minibatches"
    descriptions["average_iterate"] = "bound on E[R(average iterate)] over the minibatches"
    return Statement(
        name="prop1",
        title="Proposition 1 (ProjSGD convergence)",
        summary=(f"On {route_events(route)} (probability ≥ 1 − 2δ over the init), K steps of "
                 "ProjSGD with "
                 "minibatch b give E[min_k R̂(θ_k)] ≤ min_iterate and E[R̂(θ̂_K)] ≤ "
                 "average_iterate. b does not enter the bound (almost-sure gradient envelope)."),
        constants=constants,
        terms=terms,
        bound=bound,
        probability=1 - 2 * delta,
        conditions=(*common_conditions(),
                    Condition("batch_le_n", sp.Le(b, n), "b <= n",
                              "a minibatch is a subset of the n samples")),
        descriptions=descriptions,
        latex_names=route_latex_names(route),
        route=route,
    )


__all__ = ["prop1"]
