"""Quantities of Lemmas 1, 2 and 4 of the generalization bound, as sympy expressions.

Source: *Generalization bound for a Shallow Transformer trained using Gradient Descent*
(anonymous, under review), the calculator's second bound family ("paper 003"). Line numbers
(``line 175``) locate each formula in the line-numbered plain text of that paper against which
the derivations were checked. Model (§3.1.2, Wu et al. 2024): f(X) = (1/d_s) w_Oᵀ Σ_{i≤d_s}
ReLU(W_V Xᵀ softmax(X W_Kᵀ W_Q X^{(i,:)ᵀ}/√d_m)), LeCun init, d = d_m (line 145), loss ℓ
1-Lipschitz in its first argument, plain GD.

What is computed (one function per quantity of the paper), and what for:

* η_• = ‖W_•⁰‖_F + R_•, η_O = ‖w_O⁰‖₂ + R_O, ξ_• = ‖W_•⁰‖₂ + R_• (lines 175, 229, 243–249): norms
  of the parameters anywhere in the class of iterates within the radii of θ⁰, in which every
  bound below is stated;
* ρ = N^{1/2} d_s^{3/2} R_X, z, ẑ, M, M̂ (lines 233–237): the quantities of Wu et al.'s
  convergence conditions, which Lemma 4 turns into an empirical-loss bound;
* A = η_O η_V √d_s R_X ≥ |f| (lines 179, 410–425) and the covering exponent P (lines 179, 398):
  the ingredients of the Rademacher complexity;
* the loss range A + Y on the class (lines 99, 123): the bound on the loss that holds without
  any theorem, against which Theorem 5's bound is judged;
* Lemma 1 / Lemma 2: Rademacher complexity via the covering number and Dudley's integral
  (lines 177, 205, 403–407);
* Lemma 4: empirical loss bound under Wu et al.'s Theorem 1 conditions, and its probability
  (lines 229–285).

Theorem 5 (true loss), its conditions and the statements are in
:mod:`boundcalc.theory.generalization`. The ``*_form`` helpers write z, M, A, P, the Dudley
bracket and Lemma 4's terms from their ingredients, so that the display forms there
(``compact_formulas``) use the same algebra as the full expressions. ``as_printed``: False (the
default) follows the paper's derivation, True reproduces its printed statement.

Example:
    >>> from boundcalc.theory.generalization_quantities import rho
    >>> rho()
    sqrt(N)*R_X*d_s**(3/2)
"""

from __future__ import annotations

import sympy as sp

from .generalization_symbols import (
    C_D,
    C_O,
    R_K,
    R_O,
    R_Q,
    R_V,
    R_X,
    WK0_2,
    WK0_F,
    WO0_2,
    WQ0_2,
    WQ0_F,
    WV0_2,
    WV0_F,
    C_cov,
    C_prob,
    N,
    Phi0,
    Y,
    alpha,
    c_hat,
    d_m,
    d_s,
    delta,
)

# ---------------------------------------------------------------------------------------------
# η, ξ: norms of the parameters anywhere in the class (lines 175, 229, 243-249)
# ---------------------------------------------------------------------------------------------


def eta_Q() -> sp.Expr:
    """η_Q = ‖W_Q⁰‖_F + R_Q ≥ ‖W_Q‖_F on the class (Lemma 1, line 175)."""
    return WQ0_F + R_Q


def eta_K() -> sp.Expr:
    """η_K = ‖W_K⁰‖_F + R_K ≥ ‖W_K‖_F on the class (Lemma 1, line 175)."""
    return WK0_F + R_K


def eta_V() -> sp.Expr:
    """η_V = ‖W_V⁰‖_F + R_V ≥ ‖W_V‖_F on the class (Lemma 1, line 175)."""
    return WV0_F + R_V


def eta_O() -> sp.Expr:
    """η_O = ‖w_O⁰‖₂ + R_O ≥ ‖w_O‖₂ on the class (Lemma 1, line 175; line 249)."""
    return WO0_2 + R_O


def xi_Q() -> sp.Expr:
    """ξ_Q = ‖W_Q⁰‖₂ + R_Q ≥ ‖W_Q‖₂ on the class; ξ_Q ≤ η_Q (Lemma 4, lines 229, 243)."""
    return WQ0_2 + R_Q


def xi_K() -> sp.Expr:
    """ξ_K = ‖W_K⁰‖₂ + R_K ≥ ‖W_K‖₂ on the class; ξ_K ≤ η_K (Lemma 4, lines 229, 245)."""
    return WK0_2 + R_K


def xi_V() -> sp.Expr:
    """ξ_V = ‖W_V⁰‖₂ + R_V ≥ ‖W_V‖₂ on the class; ξ_V ≤ η_V (Lemma 4, lines 229, 247)."""
    return WV0_2 + R_V


# ---------------------------------------------------------------------------------------------
# Lemma 4's quantities (lines 233-237, 257, 285)
# ---------------------------------------------------------------------------------------------


def rho() -> sp.Expr:
    """ρ = N^{1/2} d_s^{3/2} R_X (Lemma 4, line 233).

    Not the Lipschitz constant called ρ on lines 123–125 (the proof of Theorem 5 uses 1 there).
    """
    return sp.sqrt(N) * d_s ** sp.Rational(3, 2) * R_X


def z_form(e_o: sp.Expr, e_v: sp.Expr, e_q: sp.Expr, e_k: sp.Expr) -> sp.Expr:
    """e_O²(1 + (4/d_m) R_X⁴ d_s² e_V² (e_Q² + e_K²)): z (ξ norms) and ẑ (η norms) from their
    ingredients, which may be display symbols (``generalization.compact_formulas``)."""
    return e_o**2 * (1 + 4 / d_m * R_X**4 * d_s**2 * e_v**2 * (e_q**2 + e_k**2))


def z() -> sp.Expr:
    """z = η_O²(1 + (4/d_m) R_X⁴ d_s² ξ_V² (ξ_Q² + ξ_K²)) (Lemma 4, lines 233, 257)."""
    return z_form(eta_O(), xi_V(), xi_Q(), xi_K())


def z_hat() -> sp.Expr:
    """ẑ = η_O²(1 + (4/d_m) R_X⁴ d_s² η_V² (η_Q² + η_K²)) ≥ z (Lemma 4, lines 233, 285)."""
    return z_form(eta_O(), eta_V(), eta_Q(), eta_K())


def m_form(e_v: sp.Expr, e_q: sp.Expr, e_k: sp.Expr, e_o: sp.Expr) -> sp.Expr:
    """M (ξ norms) and M̂ (η norms) from their ingredients, as :func:`z_form`."""
    scale = 2 / sp.sqrt(d_m) * R_X**2 * d_s
    return sp.Max(
        e_v / R_O,
        e_o / R_V,
        scale * e_k * e_v * e_o / R_Q,
        scale * e_q * e_v * e_o / R_K,
    )


def M() -> sp.Expr:
    """M = max(ξ_V/R_O, η_O/R_V, (2/√d_m) R_X² d_s ξ_K ξ_V η_O/R_Q,
    (2/√d_m) R_X² d_s ξ_Q ξ_V η_O/R_K) (Lemma 4, lines 235, 257)."""
    return m_form(xi_V(), xi_Q(), xi_K(), eta_O())


def M_hat() -> sp.Expr:
    """M̂: M with every ξ replaced by η, so M̂ ≥ M (Lemma 4, lines 237, 285)."""
    return m_form(eta_V(), eta_Q(), eta_K(), eta_O())


# ---------------------------------------------------------------------------------------------
# Lemma 1 / Lemma 2: Rademacher complexity (lines 175-211, 368-425)
# ---------------------------------------------------------------------------------------------


def a_form(e_o: sp.Expr, e_v: sp.Expr) -> sp.Expr:
    """A = e_O e_V √d_s R_X from its ingredients, as :func:`z_form`."""
    return e_o * e_v * sp.sqrt(d_s) * R_X


def A() -> sp.Expr:
    """A = η_O η_V √d_s R_X ≥ |f| on the class (lines 179, 410–425).

    |w_Oᵀ ReLU(W_V Xᵀ s)| ≤ ‖w_O‖₂‖W_V‖₂‖X‖₂‖s‖₂ ≤ η_O η_V ‖X‖_F with ‖s‖₂ ≤ ‖s‖₁ = 1.
    """
    return a_form(eta_O(), eta_V())


def loss_range() -> sp.Expr:
    """c = A + Y: every loss on the class lies in [0, c], so L_D ≤ c and L_S ≤ c hold for free.

    The loss ℓ is 1-Lipschitz in its first argument (line 99), non-negative and bounded, as
    Mohri et al.'s theorem needs (line 123), with ℓ(y, y) = 0, as the first step of Lemma 4's
    proof uses (line 277). Hence 0 ≤ ℓ(f(X), y) = ℓ(f(X), y) − ℓ(y, y) ≤ |f(X) − y| ≤ |f(X)| + |y|
    ≤ A + Y for every f of the class (|f| ≤ A, :func:`A`) and every label (|y| ≤ Y). It is the
    c of line 125, and a bound on the true loss at or above it says nothing (docs §3.4).
    """
    return A() + Y


def p_form(e_v: sp.Expr, e_k: sp.Expr, e_q: sp.Expr) -> sp.Expr:
    """P from its ingredients, as :func:`z_form`."""
    two_thirds = sp.Rational(2, 3)
    return ((sp.sqrt(d_s) * R_X) ** 2
            * ((sp.sqrt(d_m) * e_v) ** two_thirds
               + (sp.sqrt(d_m) * e_k * e_q * e_v) ** two_thirds) ** 3
            * sp.log(N * d_s))


def P() -> sp.Expr:
    """P = (√d_s R_X)² ((√d_m η_V)^{2/3} + (√d_m η_K η_Q η_V)^{2/3})³ log(N d_s) (line 398).

    log N_∞(G; ε) ≲ P/ε² (line 396): Edelman et al. Cor. 4.5 (line 386) with
    B_X ≤ √d_s R_X, ‖W_V‖_{2,1} ≤ √d_m η_V, ‖W_Kᵀ W_Q/√d_m‖_{2,1} ≤ √d_m η_K η_Q and
    ‖W_V‖₂ ≤ η_V (line 376).
    """
    return p_form(eta_V(), eta_K(), eta_Q())


def dudley_scale() -> sp.Expr:
    """s = √(C_cov·P/N): the minimiser δ* of δ + s·log(A/δ) in the Dudley integral (line 406)."""
    return sp.sqrt(C_cov * P() / N)


def dudley_closed_form(as_printed: bool = False) -> sp.Expr:
    """inf_{δ} (δ + ∫_δ^A √(C_cov P/(ε² N)) dε), the bracket of lines 403–407.

    The integrand is s/ε with s = √(C_cov P/N), so the bracket is δ + s·log(A/δ).

    * printed (line 407): s·(1 + log(A/s)), the value at δ* = s.
    * derived (default): the infimum is over δ ∈ [0, A] (the integral runs from δ to A), so
      δ* = min(s, A): s·(1 + log(A/s)) when s ≤ A, and A (the trivial bound |f| ≤ A) when
      s > A. The printed form is smaller than A there and negative once s > e·A.
    """
    return dudley_form(dudley_scale(), A(), as_printed)


def dudley_form(s: sp.Expr, a: sp.Expr, as_printed: bool) -> sp.Expr:
    """The Dudley bracket at scale s with trivial bound a (:func:`dudley_closed_form`)."""
    interior = s * (1 + sp.log(a / s))
    if as_printed:
        return interior
    return sp.Piecewise((interior, s <= a), (a, True))


def rademacher_bound(as_printed: bool = False, lemma: int = 2) -> sp.Expr:
    """Bound on the empirical Rademacher complexity R_S(F_R^{θ⁰}) = R_S(G_R^{θ⁰}).

    Args:
        as_printed: False: c·(derived Dudley value) (lines 403–407 with δ* ≤ A); True: the printed
            closed form.
        lemma: only with ``as_printed``: 2 gives Lemma 2 / line 211, c·√(P/N)(1 + log(A√(N/P)));
            1 gives Lemma 1 as printed on line 177, C_O·(1/N)·√(P/N)(1 + log(A√(N/P))) (an extra
            1/N that neither Lemma 2, line 211 nor Theorem 5 carries).
    """
    if lemma not in (1, 2):
        raise ValueError(f"`lemma` must be 1 or 2, got {lemma!r}")
    if as_printed and lemma == 1:
        return C_O * dudley_closed_form(True) / N
    return C_D * dudley_closed_form(as_printed)


# ---------------------------------------------------------------------------------------------
# Lemma 4: empirical loss (lines 213-285)
# ---------------------------------------------------------------------------------------------


def lemma4_first_term(as_printed: bool = False) -> sp.Expr:
    """α²/(8ρM√N) (derived, from α² ≥ 8ρM√(2Φ(θ⁰)), lines 263–277) or α²/(8ρM̂√N) (printed,
    lines 231, 283)."""
    return lemma4_first_form(rho(), M_hat() if as_printed else M())


def lemma4_first_form(r: sp.Expr, m: sp.Expr) -> sp.Expr:
    """α²/(8 r m √N): Lemma 4's first term from ρ and M (or M̂)."""
    return alpha**2 / (8 * r * m * sp.sqrt(N))


def lemma4_second_form(r: sp.Expr, zz: sp.Expr, e_o: sp.Expr, power: int) -> sp.Expr:
    """α³ e_O/(32 r^power zz √N): Lemma 4's second term from ρ, z (or ẑ) and η_O."""
    return alpha**3 * e_o / (32 * r**power * zz * sp.sqrt(N))


def lemma4_second_term(as_printed: bool = False) -> sp.Expr:
    """α³η_O/(32ρ²z√N) (derived) or α³η_O/(32ρ⁴ẑ√N) (printed, lines 231, 283).

    Derivation (lines 267–277): α³ ≥ 32ρ²z√(2Φ(θ⁰))/η_O gives Φ(θ⁰) ≤ α⁶η_O²/(2048ρ⁴z²), and
    √(2Φ/N) ≤ √(2α⁶η_O²/(2048ρ⁴z²N)) = α³η_O/(32ρ²z√N). The last line of 277 writes ρ⁴.
    """
    if as_printed:
        return lemma4_second_form(rho(), z_hat(), eta_O(), 4)
    return lemma4_second_form(rho(), z(), eta_O(), 2)


def lemma4_bound(as_printed: bool = False) -> sp.Expr:
    """Lemma 4: L_S(f_{θ^t}) ≤ min(first, second) for every t (lines 231, 277, 283).

    Derived: L_S ≤ (1/N)Σ|f − y| ≤ √(2Φ(θ^t)/N) ≤ √(2Φ(θ⁰)/N) (1-Lipschitz ℓ with ℓ(y, y) = 0,
    Cauchy–Schwarz, Φ non-increasing under Wu et al. Thm 1), then each α-condition bounds
    Φ(θ⁰). The quantities are those of the conditions (M, z); the printed statement replaces
    them by M̂ ≥ M, ẑ ≥ z, which *shrinks* the bound and is therefore not implied (discrepancy
    ``lemma4_hats``).
    """
    return sp.Min(lemma4_first_term(as_printed), lemma4_second_term(as_printed))


def empirical_loss_phi0_bound() -> sp.Expr:
    """√(2Φ(θ⁰)/N): the step of line 277 before the α-conditions are used.

    Valid whenever Wu et al.'s convergence holds, and ≤ :func:`lemma4_bound` (derived) when both
    α-conditions hold. Reported for comparison; Theorem 5 uses :func:`lemma4_bound`.
    """
    return sp.sqrt(2 * Phi0 / N)


def lemma4_probability() -> sp.Expr:
    """1 − 8e^{−d_m/2} − δ − exp(−C_prob·(N−1)^{−ĉ}·d_s^{−1}) (lines 229, 253)."""
    return (1 - 8 * sp.exp(-d_m / 2) - delta
            - sp.exp(-C_prob * (N - 1) ** (-c_hat) / d_s))


__all__ = [
    "A",
    "M",
    "M_hat",
    "P",
    "a_form",
    "dudley_closed_form",
    "dudley_form",
    "dudley_scale",
    "empirical_loss_phi0_bound",
    "eta_K",
    "eta_O",
    "eta_Q",
    "eta_V",
    "lemma4_bound",
    "lemma4_first_form",
    "lemma4_first_term",
    "lemma4_probability",
    "lemma4_second_form",
    "lemma4_second_term",
    "loss_range",
    "m_form",
    "p_form",
    "rademacher_bound",
    "rho",
    "xi_K",
    "xi_Q",
    "xi_V",
    "z",
    "z_form",
    "z_hat",
]
