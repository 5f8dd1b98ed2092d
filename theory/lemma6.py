"""Lemma 6: uniform envelopes on Ω_ρ (event E_U), used to make Theorem 1's error terms linear.

Arda, Cayci & Eryilmaz, *Finite-Time Analysis of Gradient Descent for Shallow Transformers* (AISTATS
2026), Lemma 6: bounds on |f|, |y|, |f − y| and ‖∇R̂‖ over Ω_ρ that turn Theorem 1's drift into a
linear inequality.

* Output envelope. f(θ(0)) = 0 and, per head,
  c_i h_i − c_i(0) h_i(0) = Δc_i h_i + c_i(0)(h_i − h_i(0)),
  so |f(X; θ)| ≤ m^{-1/2} Σ_i (σ₀ ρ_c/√m + G(u_max) r/√m):

      F = min(σ₀ρ_c + G(u_max)·r, √m·c_max·σ₀),        r = √(ρ_u² + ρ_w²),

  the second argument (:func:`output_cap`) because |f| ≤ m^{-1/2} Σ_i |c_i|σ₀ for a bounded
  activation, on either route.

* Label envelope (realizable targets y = f*(X), Section 5.4). With sup-norm bounded v,
  |f*(X)| ≤ E[ν_cσ₀ + ν_uσ₁ + ν_wσ₁‖U‖] ≤ Y = σ₀ν_c + σ₁ν_u + σ₁ν_w√d (E‖U‖ ≤ √d).
  Under Remark 9 the labels may be off f* by ε_mis: |y| ≤ Y + ε_mis.

* Residual envelope: |f(X_j; θ) − y_j| ≤ B = F + Y + ε_mis.

* Tight route (``tight=True``, derivations.md §6.1): F is a head average of G(u_i), so on the
  head-average event G(u_rms) replaces G(u_max), with the same cap √m·c_max·σ₀. The attention
  part of |f*| is σ₁ν_wQ·E‖GU‖ ≤ σ₁ν_wQ√(tr G²)
  ≤ σ₁ν_wQΓ (U ~ N(0, I) independent of W, G = X J Xᵀ PSD, ‖G‖_F ≤ tr G ≤ Γ): Y loses its √d.

* Approximation cap (:func:`approximation_cap`, derivations.md §5.2): |f_lin(X; θ̄) − f*(X)| ≤
  |f_lin(X; θ̄)| + |f*(X)| ≤ B₀ + B_w·u₀ + Y, with Lemma 5's (B₀, B_w) and u₀ = u_∞ (E_U) or ū
  (E_avg): a cap on ε_app that binds at small m.

* Gradient envelopes: ‖∇_θ f‖ ≤ L (Lemma 2) and, for R̂(θ) = (1/n)Σ_j (f(X_j; θ) − y_j)²,
  ‖∇R̂(θ)‖ ≤ (2/n)Σ_j |f_j − y_j|·‖∇f_j‖ ≤ 2·L·B (also for every minibatch gradient).

Statement (:func:`lemma6`, the calculator's ``lemma6`` command): F, Y, B, L and 2LB on the event
E_U, with u_∞, u_max and F's cap √m·c_max·σ₀ (paper route, realizable labels).
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
    init_head_radius,
    input_geometry,
    lipschitz_constant,
    readout_max,
)
from .lemma3 import attention_ffn_radius
from .lemma5 import feature_bounds
from .statement import Statement
from .symbols import d, delta, m, nu_c, nu_u, nu_w, rho_c, rho_u, rho_w, sigma0, sigma1


def output_cap() -> sp.Expr:
    """√m·c_max·σ₀ ≥ |f(X; θ)| for every θ with |c_i| ≤ c_max: |f| ≤ m^{-1/2} Σ_i |c_i|·σ₀ (a
    bounded activation; no event, no pairing)."""
    return sp.sqrt(m) * readout_max() * sigma0


def output_envelope(a_priori: bool = True, tight: bool = False,
                    blockwise: bool = False) -> sp.Expr:
    """F = min(σ₀ρ_c + G(u_max)·√(ρ_u² + ρ_w²), √m·c_max·σ₀) ≥ sup_{θ∈Ω_ρ} |f(X; θ)| on E_U.

    ``tight``: G(u_rms) in place of G(u_max), valid on the head-average event. ``blockwise``
    (with ``tight``): the block bound Φ(u_rms; ρ_u, ρ_w) ≥ |h_i − h_i(0)|·√m in place of
    G(u_rms)·r (derivations.md §2.1, §6.1). The second argument is :func:`output_cap`.
    """
    if blockwise:
        if not tight:
            raise ValueError("`blockwise` needs `tight` (the head-average event)")
        first_order = head_gradient_block_bound(feedforward_rms(a_priori), rho_u, rho_w,
                                                a_priori)
    else:
        grad, _ = head_bounds(a_priori, "average" if tight else "max")
        first_order = grad * attention_ffn_radius()
    return sp.Min(sigma0 * rho_c + first_order, output_cap())


def approximation_cap(a_priori: bool = True, tight: bool = False) -> sp.Expr:
    """Y + B₀ + B_w·u₀ ≥ max_j |f_lin(X_j; θ̄) − f*(X_j)|: the cap on Lemma 5's ε_app that holds
    without concentration (derivations.md §5.2).

    |f*| ≤ Y (:func:`label_envelope` without ε_mis) and f_lin(X; θ̄) = (1/m)Σ_i ψ_i with
    |ψ_i| ≤ B₀ + B_w‖U_i(0)‖, whose head average is at most B₀ + B_w·u₀; u₀ = u_∞ on E_U, ū on
    E_avg (``tight``), or their measured values a posteriori (``lemma2.init_head_radius``).
    Y is the label envelope without ε_mis: ε_app compares f_lin(θ̄) with f*, not with y.
    """
    bounded, attention = feature_bounds(a_priori)
    u0 = init_head_radius(a_priori, "average" if tight else "max")
    return label_envelope(sp.S.Zero, a_priori, tight) + bounded + attention * u0


def label_envelope(misspecification: sp.Expr = sp.S.Zero, a_priori: bool = True,
                   tight: bool = False) -> sp.Expr:
    """Y + ε_mis with Y = σ₀ν_c + σ₁ν_uX + σ₁ν_wΓQ√d ≥ sup_X |f*(X)| (X = Q = Γ = 1 a priori).

    ``tight``: Y = σ₀ν_c + σ₁ν_uX + σ₁ν_wΓQ (no √d; module docstring).
    """
    x, q, g = input_geometry(a_priori)
    attention = sigma1 * nu_w * g * q * (1 if tight else sp.sqrt(d))
    return sigma0 * nu_c + sigma1 * nu_u * x + attention + misspecification


def residual_envelope(misspecification: sp.Expr = sp.S.Zero, a_priori: bool = True,
                      tight: bool = False, blockwise: bool = False) -> sp.Expr:
    """B = F + Y (+ ε_mis) ≥ max_j |f(X_j; θ) − y_j| for every θ ∈ Ω_ρ (F of
    :func:`output_envelope` with ``tight`` and ``blockwise``)."""
    return (output_envelope(a_priori, tight, blockwise)
            + label_envelope(misspecification, a_priori, tight))


def loss_gradient_envelope(
    misspecification: sp.Expr = sp.S.Zero, a_priori: bool = True, tight: bool = False,
    blockwise: bool = False,
) -> sp.Expr:
    """2·L·B ≥ ‖∇R̂(θ)‖ (and every minibatch gradient) on Ω_ρ, R̂ = (1/n)Σ(f − y)²."""
    lip = lipschitz_constant(a_priori, "average" if tight else "max")
    return 2 * lip * residual_envelope(misspecification, a_priori, tight, blockwise)


def lemma6() -> Statement:
    """Lemma 6: uniform envelopes of f, y, f − y and ∇R̂ on Ω_ρ, on the event E_U."""
    return Statement(
        name="lemma6",
        title="Lemma 6 (uniform envelopes)",
        summary="On E_U (probability >= 1 - delta): envelopes of |f|, |y|, |f - y|, ||grad f||, "
                "||grad R||.",
        constants={"u_inf": event_radius(), "u_max": feedforward_max(),
                   "output_envelope_F_cap": output_cap()},
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
    "approximation_cap",
    "lemma6",
    "output_cap",
    "output_envelope",
    "label_envelope",
    "residual_envelope",
    "loss_gradient_envelope",
]
