"""Lemma 2: Lipschitz constant L and smoothness β of θ ↦ f(X; θ) on Ω_ρ, on the event E_U.

Arda, Cayci & Eryilmaz, *Finite-Time Analysis of Gradient Descent for Shallow Transformers* (AISTATS
2026), Lemma 2 (with Facts 1–3 and Remarks 3–4): the local regularity of the network that the
gradient envelope and the step size of Theorem 1 rest on.

Setting. f(X; θ) = m^{-1/2} Σ_i c_i g(U_i, W_i) with g(U, W) = σ(Uᵀ a(W)), a(W) = X softmax(Xᵀ W q).
For every input with token norms ≤ 1 and ‖q‖ ≤ 1 (Remarks 3–4): ‖a‖ ≤ 1 and the softmax-weighted
covariance G = X J Xᵀ is PSD with ‖G‖_op ≤ tr G ≤ 1. On Ω_ρ ∩ E_U (eq. 9):

    |c_i| ≤ c_max = 1 + ρ_c/√m,        ‖U_i‖ ≤ u_max = u_∞ + ρ_u/√m.

W is unconstrained: it enters only through the softmax, so every bound below holds for every W.

Per-head bounds (derivations.md §3):

* ‖∇_{(U,W)} g‖² = σ'²(‖a‖² + ‖G U qᵀ‖_F²) ≤ σ₁²(1 + u²)  →  G(u) = σ₁√(1 + u²).
* For a unit direction (h_U, h_W) with ‖h_U‖ = cos φ, ‖h_W‖_F = sin φ,
  D²g[h, h] = σ''·(h_Uᵀa + UᵀG h_W q)² + σ'·(2 h_Uᵀ G h_W q + Uᵀ D²a[h_W, h_W]),
  and Uᵀ D²a[h_W, h_W] is a softmax-weighted covariance of Uᵀ(x_t − a) with e_t²,
  e_t = (x_t − a)ᵀh_W q
  (Facts 1–3), so |Uᵀ D²a| ≤ max_t |Uᵀ(x_t − a)| · Var_s(e) ≤ 2u · sin²φ. Collecting,
  |D²g[h,h]| ≤ (cos φ, sin φ) M(u) (cos φ, sin φ)ᵀ with
  M(u) = [[σ₂, σ₂u + σ₁], [σ₂u + σ₁, σ₂u² + 2σ₁u]],
  so H(u) = λ_max(M(u)).

Lipschitz: ‖∇_θ f‖² = (1/m) Σ_i (σ² + c_i² σ'² (‖a_i‖² + ‖G_i U_i qᵀ‖²)) ≤ σ₀² + c_max² G(u_max)².

Smoothness: the Hessian of θ ↦ f is block-diagonal across heads; head i's block is
m^{-1/2} [[0, ∇gᵀ], [∇g, c_i ∇²g]], whose operator norm is at most
m^{-1/2}·λ_max([[0, G], [G, c_max H]]).

Two events (derivations.md §1, §1.1). ``event="max"`` (the paper's Definition 1) bounds every
‖U_i‖ by u_max = u_∞ + ρ_u/√m: needed for β, a maximum over heads. ``event="average"`` bounds the
root mean square over heads, √((1/m)Σ_i(‖U_i(0)‖ + ρ_u/√m)²) ≤ u_rms = ū + ρ_u/√m (Minkowski in
ℓ²(heads)); it serves every quantity that is a head average of per-head bounds concave and
non-decreasing in s = u²: L² (linear in s), G(√s) = σ₁√(1 + s) and H̃(s) below (Jensen). H̃ is the
sum of the largest eigenvalues of M(u)'s two parts, σ₂·vvᵀ with v = (1, u) and σ₁[[0, 1], [1, 2u]]
(λ_max is subadditive), so H ≤ H̃, and each piece of H̃ is concave in s; λ_max(M) itself is not
claimed concave.

Statement (:func:`lemma2`, the calculator's ``lemma2`` command): L and β on the event E_U, with the
ingredients u_∞, u_max, c_max, G(u_max) and H(u_max). Theorem 1 uses L in the gradient envelope 2LB
(Lemma 6) and in the step size η*; β is reported with it.
"""

from __future__ import annotations

import sympy as sp

from .conditions import m_even_condition
from .event import event_radius, head_average_radius
from .labels import LATEX_NAMES, LEMMA_DESCRIPTIONS
from .statement import Statement
from .symbols import (
    delta,
    g_max,
    m,
    q_max,
    rho_c,
    rho_u,
    sigma0,
    sigma1,
    sigma2,
    u0_max,
    u0_rms,
    x_max,
)

#: The two events on U(0): the max over heads (Definition 1) and the head average (§1.1).
EVENTS = ("max", "average")


def input_geometry(a_priori: bool = True) -> tuple[sp.Expr, sp.Expr, sp.Expr]:
    """(X, Q, Γ): bounds on token norms, the query norm and ‖X J Xᵀ‖_op.

    A priori (the paper's setting) all three are 1. The a-posteriori bounds of the validators keep
    the symbols ``x_max``, ``q_max``, ``g_max`` and evaluate them at measured values
    (Γ ≤ X² for every W).
    """
    if a_priori:
        return sp.Integer(1), sp.Integer(1), sp.Integer(1)
    return x_max, q_max, g_max


def largest_eigenvalue_2x2(a: sp.Expr, b: sp.Expr, c: sp.Expr) -> sp.Expr:
    """λ_max of the symmetric matrix [[a, b], [b, c]]: (a + c + √((a − c)² + 4b²)) / 2."""
    return (a + c + sp.sqrt((a - c) ** 2 + 4 * b**2)) / 2


def readout_max() -> sp.Expr:
    """c_max = 1 + ρ_c/√m: bound on |c_i| over Ω_ρ (eq. 9; |c_i(0)| = 1)."""
    return 1 + rho_c / sp.sqrt(m)


def feedforward_max(a_priori: bool = True) -> sp.Expr:
    """u_max = u_∞ + ρ_u/√m: bound on ‖U_i‖ over Ω_ρ on the event E_U (eq. 9).

    A posteriori the event radius u_∞ is replaced by the measured max_i ‖U_i(0)‖ (symbol u0_max).
    """
    return (event_radius() if a_priori else u0_max) + rho_u / sp.sqrt(m)


def feedforward_rms(a_priori: bool = True) -> sp.Expr:
    """u_rms = ū + ρ_u/√m ≥ √((1/m) Σ_i (‖U_i(0)‖ + ρ_u/√m)²) on the head-average event E_avg.

    Every ‖U_i‖ on Ω_ρ is at most ‖U_i(0)‖ + ρ_u/√m, and the root mean square over heads of that
    sum is at most ū + ρ_u/√m by Minkowski's inequality. A posteriori ū is replaced by the
    measured root mean square u0_rms of ‖U_i(0)‖.
    """
    return (head_average_radius() if a_priori else u0_rms) + rho_u / sp.sqrt(m)


def init_head_radius(a_priori: bool = True, event: str = "max") -> sp.Expr:
    """The radius of ``event`` at θ(0): u_∞ ≥ max_i ‖U_i(0)‖ (``"max"``, on E_U) or
    ū ≥ √((1/m) Σ_i ‖U_i(0)‖²) (``"average"``, on E_avg); a posteriori the measured u0_max or
    u0_rms. The free caps of derivations.md §4.1 bound ∇f(θ(0)) with it."""
    _check_event(event)
    if event == "max":
        return event_radius() if a_priori else u0_max
    return head_average_radius() if a_priori else u0_rms


def head_radius(a_priori: bool = True, event: str = "max") -> sp.Expr:
    """The per-head radius of ``event``: u_max (``"max"``) or u_rms (``"average"``)."""
    _check_event(event)
    return feedforward_max(a_priori) if event == "max" else feedforward_rms(a_priori)


def _check_event(event: str) -> None:
    if event not in EVENTS:
        raise ValueError(f"`event` must be one of {EVENTS}, got {event!r}")


def head_gradient_bound(u: sp.Expr, a_priori: bool = True) -> sp.Expr:
    """G(u) = σ₁√(X² + Γ²Q²u²) ≥ ‖∇_{(U,W)} σ(Uᵀa(W))‖ whenever ‖U‖ ≤ u (Lemma 1, Remarks 3–4).

    A priori X = Q = Γ = 1: G(u) = σ₁√(1 + u²).
    """
    x, q, g = input_geometry(a_priori)
    return sigma1 * sp.sqrt(x**2 + g**2 * q**2 * u**2)


def head_hessian_bound(u: sp.Expr, a_priori: bool = True) -> sp.Expr:
    """H(u) = λ_max(M(u)) ≥ ‖∇²_{(U,W)} σ(Uᵀa(W))‖_op whenever ‖U‖ ≤ u (Facts 1–3).

    M(u) = [[σ₂X², ΓQ(σ₂Xu + σ₁)], [ΓQ(σ₂Xu + σ₁), σ₂Γ²Q²u² + 2σ₁XΓQ²u]]; a priori (X = Q = Γ = 1)
    M(u) = [[σ₂, σ₂u + σ₁], [σ₂u + σ₁, σ₂u² + 2σ₁u]]. Holds for every W and every input within the
    geometry bounds.
    """
    x, q, g = input_geometry(a_priori)
    return largest_eigenvalue_2x2(
        sigma2 * x**2,
        g * q * (sigma2 * x * u + sigma1),
        sigma2 * g**2 * q**2 * u**2 + 2 * sigma1 * x * g * q**2 * u,
    )


def concave_unit_floor(s: sp.Expr) -> sp.Expr:
    """ĥ(s) = 1 + s/4 for s < 4, √s for s ≥ 4: the least concave majorant of max(1, √s) on s ≥ 0
    (the tangent to √s through (0, 1) touches it at s = 4), non-decreasing."""
    return sp.Piecewise((1 + s / 4, s < 4), (sp.sqrt(s), True))


def head_gradient_concave_bound(u: sp.Expr, a_priori: bool = True) -> sp.Expr:
    """Ĝ(u) = σ₁·X·ĥ(X²Q²u²) ≥ σ₁·max(X, X²Qu) ≥ ‖∇_{(U,W)} σ(Uᵀa(W))‖ whenever ‖U‖ ≤ u; concave
    and non-decreasing in s = u².

    ‖G‖_op ≤ tr G = Σ_t s_t‖x_t‖² − ‖a‖² ≤ X² − ‖a‖², so with α = ‖a‖² ∈ [0, X²],
    ‖∇g‖² ≤ σ₁²(α + (X² − α)²Q²u²), convex in α, hence at most σ₁² max(X², X⁴Q²u²). A priori
    Ĝ(u) ≥ σ₁ max(1, u), against G(u) = σ₁√(1 + u²) (derivations.md §2).
    """
    x, q, _ = input_geometry(a_priori)
    return sigma1 * x * concave_unit_floor(x**2 * q**2 * u**2)


def head_hessian_concave_bound(u: sp.Expr, a_priori: bool = True) -> sp.Expr:
    """H̃(u) = σ₂(X² + Γ²Q²u²) + σ₁(XΓQ²u + ΓQ√(1 + X²Q²u²)) ≥ H(u), concave in s = u².

    The two parts of M(u) = σ₂·vvᵀ + σ₁·[[0, ΓQ], [ΓQ, 2XΓQ²u]], v = (X, ΓQu), have largest
    eigenvalues σ₂‖v‖² and σ₁(XΓQ²u + ΓQ√(1 + X²Q²u²)); λ_max is subadditive. A priori
    H̃(u) = σ₂(1 + u²) + σ₁(u + √(1 + u²)). Used with the head-average event, where Jensen needs
    concavity in s.
    """
    x, q, g = input_geometry(a_priori)
    return (sigma2 * (x**2 + g**2 * q**2 * u**2)
            + sigma1 * (x * g * q**2 * u + g * q * sp.sqrt(1 + x**2 * q**2 * u**2)))


def head_gradient_block_bound(u: sp.Expr, along_u: sp.Expr, along_w: sp.Expr,
                              a_priori: bool = True) -> sp.Expr:
    """Φ(u; a) = σ₁X√(a_U² + Q²X²u²a_W²) ≥ |Dg[h]| for every direction h = (h_U, h_W) with
    ‖h_U‖ ≤ a_U, ‖h_W‖_F ≤ a_W, whenever ‖U‖ ≤ u (derivations.md §2.1); concave and
    non-decreasing in s = u².

    Dg[h] = σ'(z)(h_Uᵀa + UᵀG h_W q). With α = ‖a‖² ≤ X² and ‖G‖_op ≤ tr G ≤ X² − α, and
    t = √α/X ∈ [0, 1]: |Dg[h]| ≤ σ₁X(t·a_U + (1 − t²)·QXu·a_W) ≤ σ₁X√(a_U² + Q²X²u²a_W²) by
    Cauchy–Schwarz, since t² + (1 − t²)² ≤ 1. Never above Ĝ(u)·√(a_U² + a_W²).

    Example:
        >>> import sympy as sp
        >>> head_gradient_block_bound(sp.Integer(2), sp.Integer(3), sp.Integer(4)).subs(
        ...     sigma1, 1)
        sqrt(73)
    """
    x, q, _ = input_geometry(a_priori)
    return sigma1 * x * sp.sqrt(along_u**2 + q**2 * x**2 * u**2 * along_w**2)


def head_hessian_block_bound(u: sp.Expr, first: tuple[sp.Expr, sp.Expr],
                             second: tuple[sp.Expr, sp.Expr], a_priori: bool = True,
                             third_moment: bool = True) -> sp.Expr:
    """H(u; a, b) ≥ |D²g[h, k]| for directions with block norms ‖h_U‖ ≤ a_U, ‖h_W‖_F ≤ a_W,
    ‖k_U‖ ≤ b_U, ‖k_W‖_F ≤ b_W, whenever ‖U‖ ≤ u (derivations.md §2.1):

        H(u; a, b) = σ₂X²√((a_U² + Q²X²u²a_W²)(b_U² + Q²X²u²b_W²))
                     + σ₁(QX²(a_U b_W + a_W b_U) + κ·Q²X³u·a_W b_W),

    κ = 4/(3√3) (``third_moment=True``, the default: :func:`attention_third_moment_bound`,
    derivations.md §2.2) or κ = 32/27 (``third_moment=False``: the ``blocks`` route,
    :func:`coupled_third_moment_factor`).

    D²g[h, k] = σ''(z)Dz[h]Dz[k] + σ'(z)(h_UᵀG k_W q + k_UᵀG h_W q + UᵀD²a[h_W, k_W]) with
    Dz[h] = h_Uᵀa + UᵀG h_W q (bounded as in :func:`head_gradient_block_bound`), |h_UᵀG k_W q| ≤
    (X² − α)Q a_U b_W and UᵀD²a[h_W, k_W] = Σ_t s_t(e_t − ē)(e'_t − ē')Uᵀ(x_t − a): a third
    central moment tensor of the tokens under s, contracted with h_W q, k_W q and U, at most
    (4/(3√3))X³·u·Q²a_W b_W (§2.2); the older route bounds it by u(X + √α)·(X² − α)Q²a_W b_W
    (Cauchy–Schwarz under s, Var_s(e) ≤ ‖G‖Q²a_W²) and (X + √α)(X² − α) ≤ (32/27)X³ (maximum
    of (1 + t)²(1 − t) at t = 1/3). Concave and non-decreasing in s = u² (a geometric mean of
    two affine functions plus a multiple of √s).

    Example:
        >>> import sympy as sp
        >>> one = (sp.Integer(1), sp.Integer(0))
        >>> head_hessian_block_bound(sp.Integer(5), one, one)     # U-block only: σ₂‖a‖²
        sigma2
    """
    x, q, _ = input_geometry(a_priori)
    kappa = attention_third_moment_bound() if third_moment else coupled_third_moment_factor()
    (a_u, a_w), (b_u, b_w) = first, second
    gradient_part = sp.sqrt((a_u**2 + q**2 * x**2 * u**2 * a_w**2)
                            * (b_u**2 + q**2 * x**2 * u**2 * b_w**2))
    return (sigma2 * x**2 * gradient_part
            + sigma1 * (q * x**2 * (a_u * b_w + a_w * b_u)
                        + kappa * q**2 * x**3 * u * a_w * b_w))


def attention_third_moment_bound() -> sp.Expr:
    """κ = 4/(3√3) = 4√3/9 ≈ 0.770: for every softmax weight vector s over tokens with
    ‖x_t‖ ≤ X and every w, w', U,

        |Σ_t s_t (wᵀy_t)(w'ᵀy_t)(Uᵀy_t)| ≤ κ·X³‖w‖‖w'‖‖U‖,   y_t = x_t − Σ_r s_r x_r,

    i.e. |UᵀD²a[h_W, k_W]| ≤ κX³‖U‖‖h_W q‖‖k_W q‖ (derivations.md §2.2). Proof: the left side is a
    symmetric trilinear form T (the third central moment tensor of the tokens under s); its norm
    is attained on the diagonal, sup |T(v, v, v)| over unit v (spectral theorem for the first two
    slots; the van der Corput–Schaake inequality for binary cubics for the last), and T(v, v, v)
    is the third central moment of Z = vᵀx_t ∈ [−X, X], at most κX³ by
    EY³ ≤ min(bV, (2a + b)V + a²b) for Y = Z − EZ ∈ [a, b], V = EY². Attained (two tokens ±Xe,
    weights (1 ∓ 1/√3)/2), and independent of the activation: it is a property of softmax
    attention (equal in value to tanh's σ₂, max |2y(1 − y²)|, because both are the same cubic).

    Example:
        >>> attention_third_moment_bound(), attention_third_moment_bound() < 32 / 27
        (4*sqrt(3)/9, True)
    """
    return 4 * sp.sqrt(3) / 9


def coupled_third_moment_factor() -> sp.Expr:
    """32/27 = max_{t∈[0,1]} (1 + t)²(1 − t): the factor of the ``blocks`` route's bound
    |UᵀD²a[h_W, k_W]| ≤ u(X + √α)(X² − α)Q²a_W b_W ≤ (32/27)X³uQ²a_W b_W (derivations.md §2.1),
    above :func:`attention_third_moment_bound`."""
    return sp.Rational(32, 27)


def head_bounds(a_priori: bool = True, event: str = "max") -> tuple[sp.Expr, sp.Expr]:
    """(G, H) of ``event``: (G(u_max), H(u_max)) for ``"max"``; (Ĝ(u_rms), H̃(u_rms)) for
    ``"average"``, which bound the head averages of ‖∇g_i‖ and ‖∇²g_i‖ on E_avg (Jensen)."""
    u = head_radius(a_priori, event)
    if event == "max":
        return head_gradient_bound(u, a_priori), head_hessian_bound(u, a_priori)
    return head_gradient_concave_bound(u, a_priori), head_hessian_concave_bound(u, a_priori)


def init_head_gradient(a_priori: bool = True, event: str = "max") -> sp.Expr:
    """G₀ ≥ the head average of ‖∇_{(U,W)} g_i‖ at θ(0): G(u_∞) on E_U (every ‖U_i(0)‖ ≤ u_∞),
    Ĝ(ū) on E_avg (Jensen, Ĝ concave and non-decreasing in s = u²); measured radii a posteriori.
    What the free caps of derivations.md §4.1 use for ∇f(θ(0))."""
    u0 = init_head_radius(a_priori, event)
    if event == "max":
        return head_gradient_bound(u0, a_priori)
    return head_gradient_concave_bound(u0, a_priori)


def lipschitz_constant(a_priori: bool = True, event: str = "max") -> sp.Expr:
    """Lemma 2: L = √(σ₀² + c_max²·σ₁²·(1 + u_max²)) ≥ sup_{θ∈Ω_ρ} ‖∇_θ f(X; θ)‖ on E_U.

    O(1) in m up to the √log m of the event radius; free of T. With ``event="average"`` u_max
    is replaced by u_rms: ‖∇_θ f‖² is the head average of σ² + c_i²σ'²(‖a_i‖² + ‖G_iU_iqᵀ‖²),
    linear in ‖U_i‖², so it is at most σ₀² + c_max²σ₁²(1 + u_rms²) on E_avg (no √log m).

    Example:
        >>> from boundcalc.theory.lemma2 import lipschitz_constant
        >>> sorted(s.name for s in lipschitz_constant().free_symbols)
        ['d', 'delta', 'm', 'rho_c', 'rho_u', 'sigma0', 'sigma1']
    """
    c_max = readout_max()
    grad = head_gradient_bound(head_radius(a_priori, event), a_priori)
    return sp.sqrt(sigma0**2 + c_max**2 * grad**2)


def smoothness_constant(a_priori: bool = True) -> sp.Expr:
    """Lemma 2: β = m^{-1/2}·λ_max([[0, G], [G, c_max·H]]) ≥ sup_{θ∈Ω_ρ} ‖∇²_θ f(X; θ)‖_op on E_U.

    G = G(u_max), H = H(u_max). O(m^{-1/2}) up to the logarithm of the event radius.
    """
    u_max = feedforward_max(a_priori)
    grad = head_gradient_bound(u_max, a_priori)
    hess = readout_max() * head_hessian_bound(u_max, a_priori)
    return largest_eigenvalue_2x2(sp.Integer(0), grad, hess) / sp.sqrt(m)


def lemma2() -> Statement:
    """Lemma 2: L and β on Ω_ρ, on the event E_U."""
    u_max = feedforward_max()
    lip, beta = lipschitz_constant(), smoothness_constant()
    return Statement(
        name="lemma2",
        title="Lemma 2 (local Lipschitz continuity and smoothness)",
        summary=("On E_U (probability >= 1 - delta), for every W(0) and every input with token "
                 "norms <= 1, theta -> f(X; theta) is L-Lipschitz and beta-smooth on Omega_rho."),
        constants={
            "u_inf": event_radius(),
            "u_max": u_max,
            "c_max": readout_max(),
            "head_gradient_G": head_gradient_bound(u_max),
            "head_hessian_H": head_hessian_bound(u_max),
        },
        terms={},
        bound={"lipschitz_L": lip, "smoothness_beta": beta},
        probability=1 - delta,
        conditions=(m_even_condition(),),
        descriptions=LEMMA_DESCRIPTIONS,
        latex_names=LATEX_NAMES,
    )


__all__ = [
    "EVENTS",
    "attention_third_moment_bound",
    "concave_unit_floor",
    "coupled_third_moment_factor",
    "feedforward_max",
    "feedforward_rms",
    "head_bounds",
    "head_gradient_block_bound",
    "head_gradient_bound",
    "head_gradient_concave_bound",
    "head_hessian_block_bound",
    "head_hessian_bound",
    "head_hessian_concave_bound",
    "head_radius",
    "init_head_gradient",
    "init_head_radius",
    "input_geometry",
    "largest_eigenvalue_2x2",
    "lemma2",
    "lipschitz_constant",
    "readout_max",
    "smoothness_constant",
]
