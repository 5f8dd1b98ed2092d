"""A-posteriori versions of the Lemma 2–6 and Theorem 1 expressions.

The a-priori statements bound the worst case over every U(0) in the event E_U and every input with
token norms ≤ 1. Given one actual initialisation and data set, the *same* derivation holds with

* u0_max = measured max_i ‖U_i(0)‖ in place of the event radius u_∞ (Definition 1);
* x_max = measured max token norm, q_max = measured max query norm;
* u0_rms = measured √((1/m) Σ_i ‖U_i(0)‖²) in place of the head-average radius ū (tight route);
* g_max = a bound on tr(X J Xᵀ) (hence on its Frobenius and operator norms) valid for every W:
  tr(X J Xᵀ) = Σ_t s_t ‖x_t‖² − ‖a‖² ≤ x_max², so g_max = x_max² is valid over all of Ω_ρ (the
  value measured at W(0) is *not*, since W moves).

Comparing both evaluations shows how much of the slack is the high-probability envelope and the
worst-case geometry, and how much is the inequalities themselves.
"""

from __future__ import annotations

from .catalog import DEFAULT_ROUTE, Route
from .statement import Statement
from .symbols import delta
from .theorem1 import (
    build_bound,
    common_conditions,
    route_descriptions,
    route_latex_names,
)


def theorem1_a_posteriori(route: Route = DEFAULT_ROUTE) -> Statement:
    """Theorem 1's constants, terms and bounds with (u0_max or u0_rms, x_max, q_max, g_max) left
    symbolic, on proof ``route`` (default :data:`~boundcalc.theory.catalog.DEFAULT_ROUTE`)."""
    constants, terms, bound = build_bound(a_priori=False, route=route)
    constants.pop("u_inf")
    return Statement(
        name="theorem1_a_posteriori",
        title="Theorem 1 evaluated a posteriori (measured U(0) and input geometry)",
        summary="The Theorem 1 expressions with u_inf -> measured max_i ||U_i(0)|| and the "
                "input-geometry bounds (x_max, q_max, g_max) at their measured values.",
        constants=constants,
        terms=terms,
        bound=bound,
        probability=1 - delta,
        conditions=common_conditions(),
        descriptions=route_descriptions(route),
        latex_names=route_latex_names(route),
        route=route,
    )


__all__ = ["theorem1_a_posteriori"]
