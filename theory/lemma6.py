"""Lemma 6: uniform envelopes on Ω_ρ (event E_U), used to make Theorem 1's error terms linear.

Arda, Cayci & Eryilmaz, *Finite-Time Analysis of Gradient Descent for Shallow Transformers* (AISTATS
2026), Lemma 6: bounds on |f|, |y|, |f − y| and ‖∇R̂‖ over Ω_ρ that turn Theorem 1's drift into a
linear inequality.

* Output envelope. f(θ(0)) = 0 and, per head,
  c_i h_i − c_i(0) h_i(0) = Δc_i h_i + c_i(0)(h_i − h_i(0)),
  so |f(X; θ)| ≤ m^{-1/2} Σ_i (σ₀ ρ_c/√m + G(u_max) r/√m):

      F = σ₀ρ_c + G(u_max)·r,        r = √(ρ_u² + ρ_w²).

* Label envelope (realizable targets y = f*(X), Section 5.4). With sup-norm bounded v,
  |f*(X)| ≤ E[ν_cσ₀ + ν_uσ₁ + ν_wσ₁‖U‖] ≤ Y = σ₀ν_c + σ₁ν_u + σ₁ν_w√d (E‖U‖ ≤ √d).
  Under Remark 9 the labels may be off f* by ε_mis: |y| ≤ Y + ε_mis.

* Residual envelope: |f(X_j; θ) − y_j| ≤ B = F + Y + ε_mis.

* Tight route (``tight=True``, derivations.md §6.1): F is a head average of G(u_i), so on the
  head-average event G(u_rms) replaces G(u_max); also |f| ≤ m^{-1/2} Σ_i |c_i|σ₀ ≤ √m·c_max·σ₀,
  and F is the smaller of the two. The attention part of |f*| is σ₁ν_wQ·E‖GU‖ ≤ σ₁ν_wQ√(tr G²)
  ≤ σ₁ν_wQΓ (U ~ N(0, I) independent of W, G = X J Xᵀ PSD, ‖G‖_F ≤ tr G ≤ Γ): Y loses its √d.

* Gradient envelopes: ‖∇_θ f‖ ≤ L (Lemma 2) and, for R̂(θ) = (1/n)Σ_j (f(X_j; θ) − y_j)²,
  ‖∇R̂(θ)‖ ≤ (2/n)Σ_j |f_j − y_j|·‖∇f_j‖ ≤ 2·L·B (also for every minibatch gradient).

Statement (:func:`lemma6`, the calculator's ``lemma6`` command): F, Y, B, L and 2LB on the event
E_U, with u_∞ and u_max (paper route, realizable labels).
"""

from __future__ import annotations

import sympy as sp

from .conditions import m_even_condition
from .event import event_radius
from .labels import LATEX_NAMES, LEMMA_DESCRIPTIONS
from .lemma2 import feedforward_max, head_bounds, input_geometry, lipschitz_constant, readout_max
from .lemma3 import attention_ffn_radius
from .statement import Statement
from .symbols import d, delta, m, nu_c, nu_u, nu_w, rho_c, sigma0, sigma1


def output_envelope(a_priori: bool = True, tight: bool = False) -> sp.Expr:
    """F = σ₀ρ_c + G(u_max)·√(ρ_u² + ρ_w²) ≥ sup_{θ∈Ω_ρ} |f(X; θ)| on E_U.

    ``tight``: min(σ₀ρ_c + G(u_rms)·r, √m·c_max·σ₀), valid on the head-average event.
    """
    grad, _ = head_bounds(a_priori, "average" if tight else "max")
    envelope = sigma0 * rho_c + grad * attention_ffn_radius()
    if tight:
        return sp.Min(envelope, sp.sqrt(m) * readout_max() * sigma0)
    return envelope


def label_envelope(misspecification: sp.Expr = sp.S.Zero, a_priori: bool = True,
                   tight: bool = False) -> sp.Expr:
    """Y + ε_mis with Y = σ₀ν_c + σ₁ν_uX + σ₁ν_wΓQ√d ≥ sup_X |f*(X)| (X = Q = Γ = 1 a priori).

    ``tight``: Y = σ₀ν_c + σ₁ν_uX + σ₁ν_wΓQ (no √d; module docstring).
    """
    x, q, g = input_geometry(a_priori)
    attention = sigma1 * nu_w * g * q * (1 if tight else sp.sqrt(d))
    return sigma0 * nu_c + sigma1 * nu_u * x + attention + misspecification


def residual_envelope(misspecification: sp.Expr = sp.S.Zero, a_priori: bool = True,
                      tight: bool = False) -> sp.Expr:
    """B = F + Y (+ ε_mis) ≥ max_j |f(X_j; θ) − y_j| for every θ ∈ Ω_ρ."""
    return (output_envelope(a_priori, tight)
            + label_envelope(misspecification, a_priori, tight))


def loss_gradient_envelope(
    misspecification: sp.Expr = sp.S.Zero, a_priori: bool = True, tight: bool = False
) -> sp.Expr:
    """2·L·B ≥ ‖∇R̂(θ)‖ (and every minibatch gradient) on Ω_ρ, R̂ = (1/n)Σ(f − y)²."""
    lip = lipschitz_constant(a_priori, "average" if tight else "max")
    return 2 * lip * residual_envelope(misspecification, a_priori, tight)


def lemma6() -> Statement:
    """Lemma 6: uniform envelopes of f, y, f − y and ∇R̂ on Ω_ρ, on the event E_U."""
    return Statement(
        name="lemma6",
        title="Lemma 6 (uniform envelopes)",
        summary="On E_U (probability >= 1 - delta): envelopes of |f|, |y|, |f - y|, ||grad f||, "
                "||grad R||.",
        constants={"u_inf": event_radius(), "u_max": feedforward_max()},
        terms={},
        bound={
            "output_envelope_F": output_envelope(),
            "label_envelope_Y": label_envelope(),
            "residual_envelope_B": residual_envelope(),
            "lipschitz_L": lipschitz_constant(),
            "loss_gradient_envelope": loss_gradient_envelope(),
        },
        probability=1 - delta,
        conditions=(m_even_condition(),),
        descriptions=LEMMA_DESCRIPTIONS,
        latex_names=LATEX_NAMES,
    )


__all__ = [
    "lemma6",
    "output_envelope",
    "label_envelope",
    "residual_envelope",
    "loss_gradient_envelope",
]
