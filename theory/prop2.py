"""Proposition 2 (App. B.1): ProjGD on the IndRNN, with its explicit dependence on T.

Arda, Cayci & Eryilmaz, *Finite-Time Analysis of Gradient Descent for Shallow Transformers* (AISTATS
2026), Proposition 2 (Appendix B.1, eqs. 48–51): the IndRNN counterpart of Theorem 1, which shows
how a recurrent model's bound depends on T.

The primary paper states Proposition 2 as a corollary of Cayci & Eryilmaz (2024a, arXiv 2402.12241)
Thm 4.4 specialised to a scalar readout; its formulas were lost in extraction and Thm 4.4's
constants could not be recovered (docs/indrnn.md §0 lists what could). The statement below is
therefore *derived*, along the same Lyapunov route as Theorem 1 (derivations.md §7), with the
IndRNN's per-unit constants in place of the Transformer's per-head ones. Derivation: docs/indrnn.md.

Model (eqs. 48–50). Inputs x_1, …, x_T ∈ R^d with ‖x_t‖ ≤ 1. Unit i has w_i ∈ R^d (row i of W_in),
a scalar recurrent weight u_i and a readout c_i:

    h_{t,i} = σ(w_iᵀ x_t + u_i h_{t−1,i}),  h_{0,i} = 0,      f(X; θ) = m^{-1/2} Σ_i c_i h_{T,i}.

Init (eq. 51, symmetric): w_i ~ N(0, I_d), u_i = ±α, c_i = ±1 for i ≤ m/2, the other half copies
(w, u) and negates c, so f(·; θ(0)) ≡ 0. Ω_ρ: |c_i − c_i(0)| ≤ ρ_c/√m, |u_i − u_i(0)| ≤ ρ_u/√m,
‖w_i − w_i(0)‖ ≤ ρ_w/√m. Hence on Ω_ρ, deterministically (no event is needed, unlike E_U):

    |u_i| ≤ u_max = α + ρ_u/√m,    λ = σ₁·u_max   (per-step Lipschitz factor of the recurrence).

Where T enters: every per-unit constant is a polynomial in the geometric sum

    P_t(λ) = Σ_{s<t} λ^s = (1 − λ^t)/(1 − λ)   (t if λ = 1),

which stays below 1/(1 − λ) for every T when λ < 1, equals T at the cutoff λ = 1 and grows like
λ^T past it. This is the "cutoff" of Cayci & Eryilmaz: the bound is flat in T when α·σ₁ < 1 (and
m is large enough that σ₁ρ_u/√m does not push λ over 1) and grows exponentially in T otherwise.
Theorem 1 has no such factor (Remark 3: ‖X J Xᵀ‖ ≤ 1 for every T).

Per-unit bounds (docs/indrnn.md §2), for g = h_T as a function of (w, u) with |u| ≤ u_max:

* Γ_T = √(P_T(λ)² + σ₀² P_{T−1}(λ)²) ≥ |D z_t[δ]| for every unit direction δ and t ≤ T;
* G_T = σ₁ Γ_T ≥ ‖∇_{(w,u)} h_T‖;
* H_T = min{(σ₂Γ_T² + 2σ₁²Γ_T)·P_T(λ), σ₂Γ_T(Q_T + σ₀Q_{T−1}) + 2σ₁²(Q_{T−1} + σ₀Q_{T−2})}
  ≥ ‖∇²_{(w,u)} h_T‖_op, with Q_t(λ) = Σ_{j<t} (j + 1)λ^j.

The network-level constants, the Lyapunov drift and the final bound are Theorem 1's with
(G(u_max), H(u_max)) → (G_T, H_T); the approximation error uses Hoeffding only (every IndRNN
feature is bounded), with B₀ = σ₀ν_c + σ₁(ν_w P_T(λ₀) + σ₀ν_u P_{T−1}(λ₀)), λ₀ = α·σ₁:

    ε_app = 2B₀ √(log(2n/δ)/m),   probability ≥ 1 − δ.

Free caps (docs/indrnn.md §3.1, :func:`free_caps`): ε_lin, ε_cf, F and ε_app are each the smaller
of the form above and Theorem 1's cap with G_T(λ), G_T(λ₀) and |h_T| ≤ σ₀ (F ≤ √m c_max σ₀,
ε_app ≤ 2B₀); past the cutoff they replace H_T ~ Tλ^{2T} by first-order factors ~ λ^T.

Statement (:func:`prop2`, the calculator's ``prop2`` command): at the authors' α = 3/2 by default,
any α (or the symbol :data:`alpha`) on request.

Example:
    >>> from boundcalc.theory.prop2 import prop2
    >>> from boundcalc.theory.symbols import T
    >>> T in prop2().bound["min_iterate"].free_symbols
    True
"""

from __future__ import annotations

import sympy as sp

from .conditions import m_even_condition, rho_ge_nu_conditions
from .labels import PROP2_DESCRIPTIONS, PROP2_LATEX_NAMES
from .lemma2 import largest_eigenvalue_2x2, readout_max
from .lemma3 import attention_ffn_radius
from .lemma6 import output_cap
from .statement import Statement
from .symbols import (
    K,
    T,
    delta,
    eta,
    m,
    n,
    nu_c,
    nu_u,
    nu_w,
    rho_c,
    rho_u,
    sigma0,
    sigma1,
    sigma2,
)
from .theorem1 import assemble_bound, transport_norm

#: Rademacher scale of the recurrent weights at init, u_i(0) = ±α (eq. 51).
alpha = sp.Symbol("alpha", positive=True)

#: α used by the authors' scripts (and the registered statement ``prop2``).
DEFAULT_ALPHA = sp.Rational(3, 2)


def recurrent_weight_max(alpha_value: sp.Expr = alpha) -> sp.Expr:
    """u_max = α + ρ_u/√m ≥ |u_i| on Ω_ρ (|u_i(0)| = α exactly)."""
    return alpha_value + rho_u / sp.sqrt(m)


def recurrent_factor(alpha_value: sp.Expr = alpha, at_init: bool = False) -> sp.Expr:
    """λ = σ₁·u_max on Ω_ρ, or λ₀ = σ₁·α at θ(0) (``at_init``): the cutoff quantity vs 1.

    |∂h_t/∂h_{t−1}| = |σ'(·) u| ≤ λ, so perturbations of the state are multiplied by at most λ
    per step.
    """
    if at_init:
        return sigma1 * alpha_value
    return sigma1 * recurrent_weight_max(alpha_value)


def geometric_sum(lam: sp.Expr, t: sp.Expr = T) -> sp.Expr:
    """P_t(λ) = Σ_{s=0}^{t−1} λ^s, written per regime of the cutoff.

    (1 − λ^t)/(1 − λ) ≤ 1/(1 − λ) for λ < 1 (bounded in t), t for λ = 1, (λ^t − 1)/(λ − 1) for
    λ > 1 (exponential in t). P_0 = 0, P_1 = 1.

    Example:
        >>> from sympy import Rational
        >>> geometric_sum(Rational(1, 2), 3)
        7/4
    """
    lam, t = sp.sympify(lam), sp.sympify(t)
    return sp.Piecewise(
        ((1 - lam**t) / (1 - lam), sp.Lt(lam, 1)),
        (t, sp.Eq(lam, 1)),
        ((lam**t - 1) / (lam - 1), True),
    )


def tangent_bound(lam: sp.Expr, t: sp.Expr = T) -> sp.Expr:
    """Γ_t = √(P_t(λ)² + σ₀² P_{t−1}(λ)²) ≥ |D z_s[δ]| for s ≤ t and ‖δ‖ = 1 (indrnn.md §2).

    z_s = wᵀx_s + u h_{s−1} is the pre-activation; δ = (δw, δu) a unit direction.
    """
    return sp.sqrt(geometric_sum(lam, t) ** 2 + sigma0**2 * geometric_sum(lam, t - 1) ** 2)


def unit_gradient_bound(lam: sp.Expr, t: sp.Expr = T) -> sp.Expr:
    """G_t = σ₁ Γ_t ≥ ‖∇_{(w,u)} h_t‖ whenever |u| ≤ λ/σ₁ and every ‖x_s‖ ≤ 1."""
    return sigma1 * tangent_bound(lam, t)


def weighted_geometric_sum(lam: sp.Expr, t: sp.Expr = T) -> sp.Expr:
    """Q_t(λ) = Σ_{s=1}^{t} λ^{t−s} P_s(λ) = Σ_{j<t} (j + 1) λ^j = d(λ P_t(λ))/dλ.

    (1 − (t+1)λ^t + tλ^{t+1})/(1 − λ)² for λ ≠ 1 (→ 1/(1 − λ)² below the cutoff, ~ tλ^t/(λ−1)
    past it), t(t + 1)/2 at λ = 1; Q_t = 0 for t ∈ {−1, 0}.

    Example:
        >>> from sympy import Rational
        >>> weighted_geometric_sum(Rational(1, 2), 3)
        11/4
    """
    lam, t = sp.sympify(lam), sp.sympify(t)
    return sp.Piecewise(
        (t * (t + 1) / 2, sp.Eq(lam, 1)),
        ((1 - (t + 1) * lam**t + t * lam ** (t + 1)) / (1 - lam) ** 2, True),
    )


def unit_hessian_bound(lam: sp.Expr, t: sp.Expr = T) -> sp.Expr:
    """H_t ≥ ‖∇²_{(w,u)} h_t‖_op, the smaller of two valid bounds (indrnn.md §2.3).

    From D²h_s = σ''(z_s)(Dz_s)² + σ'(z_s)(2 δu Dh_{s−1} + u D²h_{s−1}) the second-order defect
    obeys S_s ≤ σ₂Γ_s² + 2σ₁²Γ_{s−1} + λ S_{s−1}, S_0 = 0, so S_t ≤ Σ_{s≤t} λ^{t−s}(σ₂Γ_s² +
    2σ₁²Γ_{s−1}). Bounding every Γ_s by Γ_t gives (σ₂Γ_t² + 2σ₁²Γ_t)·P_t (tight below the
    cutoff); bounding Γ_s ≤ P_s + σ₀P_{s−1} inside the sum gives
    σ₂Γ_t(Q_t + σ₀Q_{t−1}) + 2σ₁²(Q_{t−1} + σ₀Q_{t−2}) (exact at t = 1, and ~ tλ^{2t} instead
    of λ^{3t} past the cutoff).
    """
    gamma = tangent_bound(lam, t)
    coarse = (sigma2 * gamma**2 + 2 * sigma1**2 * gamma) * geometric_sum(lam, t)

    def q(k):
        return weighted_geometric_sum(lam, k)

    fine = (sigma2 * gamma * (q(t) + sigma0 * q(t - 1))
            + 2 * sigma1**2 * (q(t - 1) + sigma0 * q(t - 2)))
    return sp.Min(coarse, fine)


def feature_envelope(alpha_value: sp.Expr = alpha) -> sp.Expr:
    """B₀ = σ₀ν_c + σ₁(ν_w P_T(λ₀) + σ₀ν_u P_{T−1}(λ₀)) ≥ |ψ| at init (|u(0)| = α exactly).

    ψ = v_c h_T + ⟨v_w, ∂h_T/∂w⟩ + v_u ∂h_T/∂u is one unit's transported feature; B₀ bounds it and
    hence also |f*| (Lemma 6's label envelope Y).
    """
    lam0 = recurrent_factor(alpha_value, at_init=True)
    return sigma0 * nu_c + sigma1 * (nu_w * geometric_sum(lam0) + sigma0 * nu_u
                                     * geometric_sum(lam0, T - 1))


def approximation_log_factor() -> sp.Expr:
    """ℓ = log(2n/δ): Hoeffding's two signs and a union bound over the n samples."""
    return sp.log(2 * n / delta)


def free_caps(alpha_value: sp.Expr = alpha) -> tuple[sp.Expr, sp.Expr]:
    """(ε_lin cap, ε_cf cap): Theorem 1's free caps (derivations.md §4.1, §7.3.1) with the
    IndRNN's per-unit gradient bounds, G = G_T(λ) on Ω_ρ and G₀ = G_T(λ₀) at θ(0)
    (docs/indrnn.md §3.1):

        c_max·min(G r, 2√m σ₀) + G₀ r,
        (ρ_c + ν_c)·min(G r/√m, 2σ₀) + (r + r_ν)(c_max G + G₀).

    |h_T| ≤ σ₀ for every unit and |u_i(0)| = α exactly, so no event is needed.
    """
    grad = unit_gradient_bound(recurrent_factor(alpha_value))
    grad0 = unit_gradient_bound(recurrent_factor(alpha_value, at_init=True))
    c_max, r = readout_max(), attention_ffn_radius()
    r_nu = sp.sqrt(nu_u**2 + nu_w**2)
    lin = c_max * sp.Min(grad * r, 2 * sp.sqrt(m) * sigma0) + grad0 * r
    cf = ((rho_c + nu_c) * sp.Min(grad * r / sp.sqrt(m), 2 * sigma0)
          + (r + r_nu) * (c_max * grad + grad0))
    return lin, cf


def build_bound(alpha_value: sp.Expr = alpha, step: sp.Expr = eta):
    """Constants, named terms and the two bounds of Proposition 2.

    Args:
        alpha_value: α (a sympy number, or the symbol :data:`alpha`).
        step: the step size expression (symbol η by default).

    Returns:
        (constants, terms, bound) dictionaries of sympy expressions, keyed like Theorem 1's.
    """
    u_max = recurrent_weight_max(alpha_value)
    lam = recurrent_factor(alpha_value)
    lam0 = recurrent_factor(alpha_value, at_init=True)
    c_max = readout_max()
    grad = unit_gradient_bound(lam)
    hess = unit_hessian_bound(lam)
    r = attention_ffn_radius()  # √(ρ_u² + ρ_w²): joint (u, w) radius, same formula
    r_nu = sp.sqrt(nu_u**2 + nu_w**2)
    root_m = sp.sqrt(m)

    lip = sp.sqrt(sigma0**2 + c_max**2 * grad**2)
    beta = largest_eigenvalue_2x2(sp.Integer(0), grad, c_max * hess) / root_m
    lin_cap, cf_cap = free_caps(alpha_value)
    eps_lin = sp.Min((grad * rho_c * r + hess * r**2 / 2) / root_m, lin_cap)
    b0 = feature_envelope(alpha_value)
    eps_app = sp.Min(2 * b0 * sp.sqrt(approximation_log_factor() / m), 2 * b0)
    eps_cf = sp.Min((grad * r * (rho_c + nu_c) + (rho_c * grad + hess * r) * (r + r_nu)) / root_m,
                    cf_cap)
    out_env = sp.Min(sigma0 * rho_c + grad * r, output_cap())
    res = out_env + b0
    nu_norm = transport_norm()
    constants = {
        "u_max": u_max,
        "recurrent_factor_init": lam0,
        "recurrent_factor": lam,
        "geometric_sum_P_T": geometric_sum(lam),
        "unit_gradient_G": grad,
        "unit_hessian_H": hess,
        "lipschitz_L": lip,
        "smoothness_beta": beta,
        "eps_lin_cap": lin_cap,
        "eps_lin": eps_lin,
        "eps_app_cap": 2 * b0,
        "eps_app": eps_app,
        "eps_cf_cap": cf_cap,
        "eps_cf": eps_cf,
        "output_envelope_F_cap": output_cap(),
        "output_envelope_F": out_env,
        "label_envelope_Y": b0,
        "residual_envelope_B": res,
        "trivial_bound_B2": res**2,
        "initial_loss_bound": b0**2,
        "transport_norm": nu_norm,
        "theorem_step_size": nu_norm / (2 * lip * res * sp.sqrt(K)),
    }
    terms, bound = assemble_bound(lip, res, eps_lin, eps_app, eps_cf, step)
    return constants, terms, bound



def prop2(alpha_value: sp.Expr | None = None) -> Statement:
    """Proposition 2 (ProjGD on the IndRNN) as a :class:`Statement`.

    Args:
        alpha_value: the Rademacher scale α of u(0). ``None`` gives the authors' α = 3/2 (the
            registered statement ``prop2``, evaluable by :func:`boundcalc.calc.api.evaluate`); pass
            the symbol :data:`alpha` for the symbolic statement, or any positive sympy number.

    Example:
        >>> from boundcalc.theory.prop2 import alpha, prop2
        >>> alpha in prop2(alpha).free_symbols()
        True
    """
    a = DEFAULT_ALPHA if alpha_value is None else sp.sympify(alpha_value)
    if a.is_number and not a.is_positive:
        raise ValueError(f"`alpha_value` must be positive, got {a}")
    constants, terms, bound = build_bound(a)
    return Statement(
        name="prop2",
        title="Proposition 2 (ProjGD on the IndRNN, App. B.1)",
        summary=("With probability >= 1 - delta over the init, K steps of ProjGD on Omega_rho "
                 "give min_{k<K} R(theta_k) <= min_iterate for the IndRNN (eqs. 48-50). Every "
                 "constant depends on T through P_T(lambda), lambda = sigma1 (alpha + "
                 "rho_u/sqrt(m)): bounded in T below the cutoff lambda < 1, linear at lambda = 1, "
                 "exponential past it."),
        constants=constants,
        terms=terms,
        bound=bound,
        probability=1 - delta,
        conditions=(
            m_even_condition("unit", "eq. 51"),
            *rho_ge_nu_conditions(),
        ),
        descriptions=PROP2_DESCRIPTIONS,
        latex_names=PROP2_LATEX_NAMES,
    )


__all__ = [
    "DEFAULT_ALPHA", "alpha", "approximation_log_factor", "build_bound", "feature_envelope",
    "free_caps", "geometric_sum", "prop2", "recurrent_factor", "recurrent_weight_max",
    "tangent_bound", "unit_gradient_bound", "unit_hessian_bound", "weighted_geometric_sum",
]
