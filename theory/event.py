"""Definition 1 and Fact 4: the high-probability event on the feed-forward init U(0).

Arda, Cayci & Eryilmaz, *Finite-Time Analysis of Gradient Descent for Shallow Transformers* (AISTATS
2026), Definition 1 (the event E_U) and Fact 4 (Gaussian norm concentration), which every later
lemma and theorem is conditioned on.

Fact 4 (Gaussian norm concentration): for g ~ N(0, I_d), the map g ↦ ‖g‖ is 1-Lipschitz and
E‖g‖ ≤ √(E‖g‖²) = √d, so P(‖g‖ ≥ √d + t) ≤ exp(−t²/2) (Boucheron et al. 2013, Thm 5.6).

Under the symmetric init (Section 5.2) only the m/2 vectors U_1(0), …, U_{m/2}(0) are independent;
the other half are copies. A union bound over those m/2 copies gives

    P( max_i ‖U_i(0)‖ > √d + t ) ≤ (m/2)·exp(−t²/2).

Choice (the paper's exact radius is not recoverable): we set the right side to δ, i.e.

    u_∞(m, d, δ) = √d + √(2·log(m / (2δ)))                         (Definition 1)

and call E_U = {max_i ‖U_i(0)‖ ≤ u_∞} the event, P(E_U) ≥ 1 − δ. Because m ≥ 2 and δ < 1 the
logarithm is positive. The event constrains U(0) only: Lemmas 2, 3 and 6 then hold for every
W(0) and every input whose tokens have norm ≤ 1.

Statement (:func:`event`, the calculator's ``event`` command): u_∞ and the head-average radius ū of
the tight route (derivations.md §1.1), each event with probability ≥ 1 − δ. Every later result holds
on one of these events, so the radii are reported on their own.
"""

from __future__ import annotations

import sympy as sp

from .conditions import m_even_condition
from .labels import LATEX_NAMES, LEMMA_DESCRIPTIONS
from .statement import Statement
from .symbols import d, delta, m


def event_radius() -> sp.Expr:
    """u_∞ = √d + √(2 log(m/(2δ))): radius of the Definition 1 event on max_i ‖U_i(0)‖.

    Example:
        >>> from boundcalc.theory.event import event_radius
        >>> from boundcalc.theory.symbols import d, m, delta
        >>> float(event_radius().subs({d: 1, m: 2, delta: sp.exp(-2)}))
        3.0
    """
    return sp.sqrt(d) + sp.sqrt(2 * sp.log(m / (2 * delta)))


def head_average_log_factor() -> sp.Expr:
    """x = log(1/δ): the Laurent–Massart deviation level of the head-average event."""
    return sp.log(1 / delta)


def head_average_radius() -> sp.Expr:
    """ū = √(d + 2√(2dx/m) + 4x/m), x = log(1/δ): radius of the head-average event E_avg.

    On E_avg the root mean square over heads of ‖U_i(0)‖ is at most ū; P(E_avg) ≥ 1 − δ
    (Laurent–Massart for the χ²_{dm/2} variable (m/2)·(1/m)Σ_i ‖U_i(0)‖²).

    Example:
        >>> from boundcalc.theory.event import head_average_radius
        >>> from boundcalc.theory.symbols import d, m, delta
        >>> float(head_average_radius().subs({d: 2, m: 4, delta: sp.exp(-1)}) ** 2)
        5.0
    """
    x = head_average_log_factor()
    return sp.sqrt(d + 2 * sp.sqrt(2 * d * x / m) + 4 * x / m)


def event_failure_probability(radius: sp.Expr) -> sp.Expr:
    """Union-bound failure probability (m/2)·exp(−(u − √d)²/2) of {max_i ‖U_i(0)‖ ≤ u}.

    Valid for u ≥ √d. With ``radius = event_radius()`` it simplifies to δ.
    """
    return (m / 2) * sp.exp(-((radius - sp.sqrt(d)) ** 2) / 2)


def event() -> Statement:
    """Definition 1: the event radius u_∞ for max_i ‖U_i(0)‖, and the head-average radius ū of the
    tight route (derivations.md §1.1); each event holds with probability ≥ 1 − δ."""
    return Statement(
        name="event",
        title="Definition 1 (event on U(0)) and Fact 4",
        summary="P(max_i ||U_i(0)|| <= u_inf) >= 1 - delta (max event E_U) and "
                "P((1/m) sum_i ||U_i(0)||^2 <= u_bar^2) >= 1 - delta (head-average event E_avg), "
                "each under the symmetric init.",
        constants={"u_inf": event_radius(), "u_bar": head_average_radius()},
        terms={},
        bound={"u_inf": event_radius(), "u_bar": head_average_radius()},
        probability=1 - delta,
        conditions=(m_even_condition(),),
        descriptions=LEMMA_DESCRIPTIONS,
        latex_names=LATEX_NAMES,
    )


__all__ = [
    "event",
    "event_failure_probability",
    "event_radius",
    "head_average_log_factor",
    "head_average_radius",
]
