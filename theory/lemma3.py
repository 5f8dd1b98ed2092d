"""Lemma 3: uniform linearization error ε_lin = sup_{θ∈Ω_ρ} |f(X; θ) − f_lin(X; θ)| on E_U.

Per-head expansion (the paper's eq. 19). Write Δc_i = c_i − c_i(0),
Δ_i = (U_i, W_i) − (U_i(0), W_i(0)),
h_i = g(U_i, W_i), h_i(0) = g(U_i(0), W_i(0)). Since f(θ(0)) = 0 (symmetric init),

    f − f_lin = m^{-1/2} Σ_i [ Δc_i·(h_i − h_i(0)) + c_i(0)·(h_i − h_i(0) − ⟨∇g(0), Δ_i⟩) ].

On Ω_ρ: |Δc_i| ≤ ρ_c/√m, ‖Δ_i‖ ≤ r/√m with r = √(ρ_u² + ρ_w²), |c_i(0)| = 1, and along the segment
‖U‖ ≤ u_max, so |h_i − h_i(0)| ≤ G(u_max)·‖Δ_i‖ (mean value) and the Taylor remainder is at most
½·H(u_max)·‖Δ_i‖². Summing the m heads:

    ε_lin = m^{-1/2}·( G(u_max)·ρ_c·r + ½·H(u_max)·r² ).

Choice: this per-head form is never larger than the generic smoothness bound β‖ρ‖²/2 (it uses
|c_i(0)| = 1 instead of c_max and the block structure). It holds for every W(0), every U(0) in E_U
and every input with token norms ≤ 1.
"""

from __future__ import annotations

import sympy as sp

from .lemma2 import feedforward_max, head_gradient_bound, head_hessian_bound
from .symbols import m, rho_c, rho_u, rho_w


def attention_ffn_radius() -> sp.Expr:
    """r = √(ρ_u² + ρ_w²): radius of the joint (U, W) displacement (times 1/√m per head)."""
    return sp.sqrt(rho_u**2 + rho_w**2)


def linearization_error_bound(a_priori: bool = True) -> sp.Expr:
    """Lemma 3: ε_lin = m^{-1/2}(G(u_max) ρ_c r + ½ H(u_max) r²) ≥ sup_{Ω_ρ} |f − f_lin|.

    Example:
        >>> from boundcalc.theory.lemma3 import linearization_error_bound
        >>> from boundcalc.theory.symbols import T
        >>> T in linearization_error_bound().free_symbols
        False
    """
    u_max = feedforward_max(a_priori)
    r = attention_ffn_radius()
    return (
        head_gradient_bound(u_max, a_priori) * rho_c * r
        + head_hessian_bound(u_max, a_priori) * r**2 / 2
    ) / sp.sqrt(m)
