"""Hypotheses shared by several statements, each defined once.

* ``m_even``: the symmetric initialisation of Arda, Cayci & Eryilmaz (AISTATS 2026, Section 5.2)
  pairs head i with head i + m/2 (same U(0), W(0), opposite c(0)), so that f(·; θ(0)) ≡ 0 and
  only m/2 heads are independent; the width m must therefore be even. Every Transformer statement
  (Definition 1, Lemmas 2–6, Theorem 1, Proposition 1, Remark 9) and the IndRNN's Proposition 2
  (eq. 51, units instead of heads) states it.
* ``rho_ge_nu``: ρ ≥ ν componentwise, so that the transported parameters θ̄ of eq. (11) lie in the
  projection set Ω_ρ (Remark 10); needed by every ProjGD / ProjSGD bound (Theorem 1, Proposition 1,
  Remark 9, Proposition 2).
"""

from __future__ import annotations

import sympy as sp

from .statement import Condition
from .symbols import m, nu_c, nu_u, nu_w, rho_c, rho_u, rho_w


def m_even_condition(unit: str = "head", source: str = "Section 5.2") -> Condition:
    """``m_even``: m ≡ 0 (mod 2), required by the symmetric initialisation.

    Args:
        unit: what the init pairs (``"head"`` for the Transformer, ``"unit"`` for the IndRNN).
        source: where the paper states the init (``"Section 5.2"``; ``"eq. 51"`` for the IndRNN).

    Example:
        >>> m_even_condition().why
        'symmetric initialisation pairs head i with head i + m/2 (Section 5.2)'
    """
    return Condition("m_even", sp.Eq(sp.Mod(m, 2), 0), "m even",
                     f"symmetric initialisation pairs {unit} i with {unit} i + m/2 ({source})")


def rho_ge_nu_conditions() -> tuple[Condition, ...]:
    """ρ ≥ ν componentwise, so that θ̄ of eq. (11) lies in Ω_ρ (Remark 10)."""
    why = "transported parameters θ̄ (eq. 11) must lie in Ω_ρ (Remark 10)"
    return (
        Condition("rho_c_ge_nu_c", sp.Ge(rho_c, nu_c), "rho_c >= nu_c", why),
        Condition("rho_u_ge_nu_u", sp.Ge(rho_u, nu_u), "rho_u >= nu_u", why),
        Condition("rho_w_ge_nu_w", sp.Ge(rho_w, nu_w), "rho_w >= nu_w", why),
    )


__all__ = ["m_even_condition", "rho_ge_nu_conditions"]
