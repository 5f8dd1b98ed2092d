"""Lemma 3: uniform linearization error ε_lin = sup_{θ∈Ω_ρ} |f(X; θ) − f_lin(X; θ)| on E_U.

Arda, Cayci & Eryilmaz, *Finite-Time Analysis of Gradient Descent for Shallow Transformers* (AISTATS
2026), Lemma 3 (eq. 19): how far the network is from its linearization around θ(0), the price
Theorem 1 pays for the lazy-training argument.

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
and every input with token norms ≤ 1. The sum over heads is a head average of G(u_i) and
H(u_i), so on the head-average event (``event="average"``) G(u_rms) and H̃(u_rms) replace them.

Taylor remainder at an iterate (derivations.md §7.2, the tight route). Theorem 1's drift meets
[f_lin − f](θ) + ⟨∇f(θ) − ∇f(θ(0)), θ − θ(0)⟩. With φ(s) = f(θ(0) + sΔ), Δ = θ − θ(0), it equals
(φ(0) + φ'(0) − φ(1)) + (φ'(1) − φ'(0)) = ∫₀¹ s φ''(s) ds, and per head
φ'' = m^{-1/2} Σ_i [2Δc_i Dg_i[Δ_i] + (c_i(0) + sΔc_i) D²g_i[Δ_i, Δ_i]], so

    |∫₀¹ s φ''| ≤ m^{-1/2}·(1/m) Σ_i [ρ_c r G(u_i) + (½ + ρ_c/(3√m)) r² H(u_i)]
               ≤ m^{-1/2}·( ρ_c r G + (½ + ρ_c/(3√m)) r² H ) = ε_tay,

one term where Lemma 3 and the θ − θ(0) half of the change of feature counted
m^{-1/2}(3ρ_c r G + (3/2) r² H) between them.

Free caps (derivations.md §4.1, §7.7 item 2). Both bounds are second order and exceed, at small
m, what holds without the expansion: per head f − f_lin = m^{-1/2}[c_i(h_i − h_i(0)) −
c_i(0)⟨∇g_i(θ(0)), Δ_i⟩] and the Taylor bracket is m^{-1/2}[−c_i(0)(h_i − h_i(0)) +
c_i⟨∇g_i(θ), Δ_i⟩], with |h_i − h_i(0)| ≤ min(G‖Δ_i‖, 2σ₀), so

    ε_lin ≤ c_max·min(G r, 2√m σ₀) + G₀ r,    ε_tay ≤ min(G r, 2√m σ₀) + c_max G r,

G₀ the gradient bound at θ(0) (``lemma2.init_head_gradient``). Neither uses the pairing of the
heads. Every statement takes the smaller of bound and cap.

Statement (:func:`lemma3`, the calculator's ``lemma3`` command): ε_lin = min(Lemma 3, its cap) on
the event E_U, with u_∞, u_max, r and the cap. ε_lin bounds how far the network is from its
linearization around θ(0) on Ω_ρ; Theorem 1 pays it in the drift (paper route) and in the
average-iterate bound.
"""

from __future__ import annotations

import sympy as sp

from .conditions import m_even_condition
from .event import event_radius
from .labels import LATEX_NAMES, LEMMA_DESCRIPTIONS
from .lemma2 import (
    feedforward_max,
    feedforward_rms,
    head_bounds,
    head_gradient_block_bound,
    head_hessian_block_bound,
    init_head_gradient,
    readout_max,
)
from .statement import Statement
from .symbols import delta, m, rho_c, rho_u, rho_w, sigma0


def attention_ffn_radius() -> sp.Expr:
    """r = √(ρ_u² + ρ_w²): radius of the joint (U, W) displacement (times 1/√m per head)."""
    return sp.sqrt(rho_u**2 + rho_w**2)


def linearization_error_bound(a_priori: bool = True, event: str = "max") -> sp.Expr:
    """Lemma 3: ε_lin = m^{-1/2}(G ρ_c r + ½ H r²) ≥ sup_{Ω_ρ} |f − f_lin|.

    (G, H) = (G(u_max), H(u_max)) on E_U (``event="max"``), (G(u_rms), H̃(u_rms)) on E_avg.

    Example:
        >>> from boundcalc.theory.lemma3 import linearization_error_bound
        >>> from boundcalc.theory.symbols import T
        >>> T in linearization_error_bound().free_symbols
        False
    """
    grad, hess = head_bounds(a_priori, event)
    r = attention_ffn_radius()
    return (grad * rho_c * r + hess * r**2 / 2) / sp.sqrt(m)


def taylor_remainder_bound(a_priori: bool = True, event: str = "average") -> sp.Expr:
    """ε_tay = m^{-1/2}(ρ_c r G + (½ + ρ_c/(3√m)) r² H) ≥ |[f_lin − f](θ) + ⟨∇f(θ) − ∇f(θ(0)),
    θ − θ(0)⟩| for every θ ∈ Ω_ρ (module docstring); (G, H) of ``event`` as in
    :func:`linearization_error_bound`.

    Example:
        >>> from boundcalc.theory.lemma3 import taylor_remainder_bound
        >>> from boundcalc.theory.symbols import rho_c
        >>> float(taylor_remainder_bound().subs(rho_c, 0) / linearization_error_bound(
        ...     event="average").subs(rho_c, 0))
        1.0
    """
    grad, hess = head_bounds(a_priori, event)
    r = attention_ffn_radius()
    return (rho_c * r * grad + (sp.Rational(1, 2) + rho_c / (3 * sp.sqrt(m))) * r**2 * hess
            ) / sp.sqrt(m)


def displacement_blocks() -> tuple[sp.Expr, sp.Expr]:
    """(ρ_u, ρ_w): the block radii of one head's (U, W) displacement on Ω_ρ (times 1/√m)."""
    return rho_u, rho_w


def linearization_error_block_bound(a_priori: bool = True, third_moment: bool = True) -> sp.Expr:
    """ε_lin = m^{-1/2}(ρ_c Φ(u_rms; ρ_u, ρ_w) + ½ H(u_rms; ρ, ρ)) ≥ sup_{Ω_ρ} |f − f_lin| on
    E_avg: Lemma 3's per-head expansion with the block bounds of derivations.md §2.1 in place of
    G·r and ½H·r² (the tight route, §7.10 item 3).

    Example:
        >>> from boundcalc.theory.lemma3 import linearization_error_bound
        >>> from boundcalc.theory.symbols import d, delta, m, rho_c, rho_u, rho_w, sigma1, sigma2
        >>> point = {m: 2048, d: 8, delta: 0.05, rho_c: 3, rho_u: 3, rho_w: 3, sigma1: 1,
        ...          sigma2: 0.7698}
        >>> block = linearization_error_block_bound().subs(point)
        >>> joint = linearization_error_bound(event="average").subs(point)
        >>> round(float(block), 3), round(float(joint), 3)
        (1.786, 3.52)
    """
    return _block_expansion(sp.Rational(1, 2), a_priori, third_moment)


def taylor_remainder_block_bound(a_priori: bool = True, third_moment: bool = True) -> sp.Expr:
    """ε_tay = m^{-1/2}(ρ_c Φ(u_rms; ρ_u, ρ_w) + (½ + ρ_c/(3√m)) H(u_rms; ρ, ρ)) on E_avg: the
    Taylor remainder of :func:`taylor_remainder_bound` with the block bounds of derivations.md
    §2.1 (per head |Dg_i[Δ_i]| ≤ Φ(u_i; ρ_u, ρ_w)/√m, |D²g_i[Δ_i, Δ_i]| ≤ H(u_i; ρ, ρ)/m, both
    concave in u_i², so Jensen over the heads gives u_rms). ``third_moment``: H's attention
    constant, as in :func:`~boundcalc.theory.lemma2.head_hessian_block_bound` (False: the
    ``blocks`` route's 32/27)."""
    return _block_expansion(sp.Rational(1, 2) + rho_c / (3 * sp.sqrt(m)), a_priori, third_moment)


def _block_expansion(hessian_weight: sp.Expr, a_priori: bool,
                     third_moment: bool = True) -> sp.Expr:
    """m^{-1/2}(ρ_c Φ(u_rms; ρ_u, ρ_w) + w·H(u_rms; ρ, ρ)), w = ``hessian_weight``: the per-head
    expansion shared by the block forms of ε_lin (w = ½) and ε_tay (w = ½ + ρ_c/(3√m))."""
    u = feedforward_rms(a_priori)
    blocks = displacement_blocks()
    return (rho_c * head_gradient_block_bound(u, *blocks, a_priori)
            + hessian_weight * head_hessian_block_bound(u, blocks, blocks, a_priori,
                                                        third_moment)
            ) / sp.sqrt(m)


def linearization_cap(a_priori: bool = True, event: str = "max") -> sp.Expr:
    """c_max·min(G r, 2√m σ₀) + G₀ r ≥ sup_{Ω_ρ} |f − f_lin|: the cap that holds without the
    second-order expansion (derivations.md §4.1).

    Per head f − f_lin = m^{-1/2}[c_i(h_i − h_i(0)) − c_i(0)⟨∇g_i(θ(0)), Δ_i⟩], with
    |h_i − h_i(0)| ≤ min(G(u_i)‖Δ_i‖, 2σ₀) and ‖∇g_i(θ(0))‖ ≤ G(‖U_i(0)‖). (G, G₀) =
    (G(u_max), G(u_∞)) on E_U (``event="max"``), (Ĝ(u_rms), Ĝ(ū)) on E_avg. Needs no pairing of
    the heads. Smaller than Lemma 3's m^{-1/2}(G ρ_c r + ½ H r²) at small m only.
    """
    grad, _ = head_bounds(a_priori, event)
    grad0 = init_head_gradient(a_priori, event)
    r = attention_ffn_radius()
    return (readout_max() * sp.Min(grad * r, 2 * sp.sqrt(m) * sigma0) + grad0 * r)


def taylor_remainder_cap(a_priori: bool = True, event: str = "average") -> sp.Expr:
    """min(G r, 2√m σ₀) + c_max G r ≥ |[f_lin − f](θ) + ⟨∇f(θ) − ∇f(θ(0)), θ − θ(0)⟩| on Ω_ρ
    (derivations.md §7.7 item 2a).

    The bracket equals f(θ(0)) − f(θ) + ⟨∇f(θ), θ − θ(0)⟩, per head
    m^{-1/2}[−c_i(0)(h_i − h_i(0)) + c_i⟨∇g_i(θ), Δ_i⟩]; (G at u_rms or u_max) of ``event`` as in
    :func:`linearization_cap`.
    """
    grad, _ = head_bounds(a_priori, event)
    r = attention_ffn_radius()
    return sp.Min(grad * r, 2 * sp.sqrt(m) * sigma0) + readout_max() * grad * r


def lemma3() -> Statement:
    """Lemma 3: uniform linearization error on Ω_ρ, on the event E_U."""
    return Statement(
        name="lemma3",
        title="Lemma 3 (linearization error)",
        summary=("On E_U (probability >= 1 - delta), sup over Omega_rho and over inputs with token "
                 "norms <= 1 of |f(X; theta) - f_lin(X; theta)| <= eps_lin, the smaller of the "
                 "second-order bound and the free cap eps_lin_cap."),
        constants={
            "u_inf": event_radius(),
            "u_max": feedforward_max(),
            "r_uw": attention_ffn_radius(),
            "eps_lin_cap": linearization_cap(),
        },
        terms={},
        bound={"eps_lin": sp.Min(linearization_error_bound(), linearization_cap())},
        probability=1 - delta,
        conditions=(m_even_condition(),),
        descriptions=LEMMA_DESCRIPTIONS,
        latex_names=LATEX_NAMES,
    )


__all__ = [
    "attention_ffn_radius",
    "displacement_blocks",
    "lemma3",
    "linearization_cap",
    "linearization_error_block_bound",
    "linearization_error_bound",
    "taylor_remainder_block_bound",
    "taylor_remainder_bound",
    "taylor_remainder_cap",
]
