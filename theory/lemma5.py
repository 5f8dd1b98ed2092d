"""Lemma 5: approximation error of the transported parameters θ̄ (eq. 11).

Arda, Cayci & Eryilmaz, *Finite-Time Analysis of Gradient Descent for Shallow Transformers* (AISTATS
2026), Lemma 5 (θ̄ of eq. 11): how well the linearized model at the transported parameters θ̄
reproduces the target f*, the price Theorem 1 pays for approximating f* in the transport class.

With θ̄ from eq. (11) and c_i(0)² = 1,

    f_lin(X; θ̄) = (1/m) Σ_i ψ(U_i(0), W_i(0); X),
    ψ = v_c σ(Uᵀa) + σ'(Uᵀa)·aᵀv_u + σ'(Uᵀa)·⟨G U qᵀ, v_w⟩_F,

and, heads i and i + m/2 sharing (U, W), this is the mean of N = m/2 i.i.d. copies of ψ whose
expectation is f*(X). Split ψ = ψ_b + ψ_w:

* bounded part |ψ_b| ≤ B₀ = σ₀ν_c + σ₁ν_u: Hoeffding, P(|mean − E| ≥ s) ≤ 2 exp(−N s²/(2B₀²));
* attention part |ψ_w| ≤ σ₁ν_w‖U‖ with ‖U‖² ~ χ²_d: by symmetrisation (Jensen with an independent
  copy, cosh x ≤ e^{x²/2}, (|y| + |y'|)² ≤ 2y² + 2y'²) and the χ² moment generating function,
  log E e^{λ(ψ_w − Eψ_w)} ≤ −d·log(1 − 2λ²B_w²) ≤ 4dλ²B_w² for |λ| ≤ 1/(2B_w), B_w = σ₁ν_w.
  Chernoff then gives s_w = 4B_w√(d ℓ/N) when ℓ/N ≤ d, else 2B_w(d + ℓ/N).

Each part gets failure δ/2, union bound over the n samples and both signs: ℓ = log(4n/δ).
With N = m/2:

    ε_app = 2B₀√(ℓ/m) + s_w,   s_w = 4B_w√(2dℓ/m) if 2ℓ/m ≤ d, else 2B_w(d + 2ℓ/m),

and P(max_j |f_lin(X_j; θ̄) − f*(X_j)| ≤ ε_app) ≥ 1 − δ. This is the only place n enters (through
ℓ). With the input geometry (X, Q, Γ) of ``lemma2.input_geometry``: B₀ = σ₀ν_c + σ₁ν_uX and
B_w = σ₁ν_wΓQ (1 each a priori). Choice: the paper's Hölder combination is replaced by a plain
union of the two parts, which gives explicit constants. It needs no event on U(0).

The transport map may depend on c too: heads i and i + m/2 share (U, W) and carry opposite c, so
f_lin(X; θ̄) is the mean of the N = m/2 i.i.d. pair averages (ψ(c, U, W) + ψ(−c, U, W))/2, whose
mean is f*(X) and which obey the same two bounds.

d-free attention part (``attention_dof="one"``, derivations.md §5.1). |ψ_w| ≤ σ₁ν_wQ‖GU‖ with
G = X J Xᵀ PSD and a function of (W, X) only, so given W, ‖GU‖² = Σ_k λ_k² g_k² with g ~ N(0, I)
and Σ_k λ_k² = ‖G‖_F² ≤ (tr G)² ≤ Γ². −log(1 − x) is convex and vanishes at 0, hence
superadditive, so E e^{t‖GU‖²/Γ²} ≤ (1 − 2t)^{−1/2}: the moment generating function of χ²₁. The
symmetrisation above then runs with one degree of freedom instead of d: the same formula with d
replaced by 1.

Theorem 1 caps ε_app by |f_lin(θ̄)| + |f*| ≤ B₀ + B_w·u₀ + Y on its U(0)-event
(``lemma6.approximation_cap``, derivations.md §5.2); this statement, which needs no event, does not.

Statement (:func:`lemma5`, the calculator's ``lemma5`` command): ε_app and ℓ, probability ≥ 1 − δ.
ε_app is how well the linearized model at θ̄ reproduces the target on the n samples; Theorem 1 pays
B·ε_app.
"""

from __future__ import annotations

import sympy as sp

from .conditions import m_even_condition
from .labels import LATEX_NAMES, LEMMA_DESCRIPTIONS
from .lemma2 import input_geometry
from .statement import Statement
from .symbols import d, delta, m, n, nu_c, nu_u, nu_w, sigma0, sigma1


def approximation_log_factor() -> sp.Expr:
    """ℓ = log(4n/δ): union bound over n samples, two signs and two parts (δ/2 each)."""
    return sp.log(4 * n / delta)


#: Degrees of freedom of the attention part's χ² comparison: ``"d"`` (‖U‖² ~ χ²_d, the paper's
#: route) or ``"one"`` (‖GU‖²/Γ² dominated by χ²₁, the tight route).
ATTENTION_DOF = ("d", "one")


def feature_bounds(a_priori: bool = True) -> tuple[sp.Expr, sp.Expr]:
    """(B₀, B_w) = (σ₀ν_c + σ₁ν_uX, σ₁ν_wΓQ): |ψ_b| ≤ B₀ and |ψ_w| ≤ B_w‖U‖ for one head's
    transported feature ψ = ψ_b + ψ_w at θ(0) (module docstring; X = Q = Γ = 1 a priori)."""
    x, q, g = input_geometry(a_priori)
    return sigma0 * nu_c + sigma1 * nu_u * x, sigma1 * nu_w * g * q


def approximation_error_bound(a_priori: bool = True, attention_dof: str = "d",
                              sub_gamma: bool = False) -> sp.Expr:
    """Lemma 5: ε_app = 2B₀√(ℓ/m) + s_w with probability ≥ 1 − δ (see module docstring).

    ``attention_dof="one"`` uses the d-free comparison of the attention part (module docstring);
    ``sub_gamma=True`` takes the smaller of that deviation and :func:`sub_gamma_deviation`
    (the tight route, derivations.md §5.3).

    Example:
        >>> from boundcalc.theory.lemma5 import approximation_error_bound
        >>> sorted(s.name for s in approximation_error_bound().free_symbols)
        ['d', 'delta', 'm', 'n', 'nu_c', 'nu_u', 'nu_w', 'sigma0', 'sigma1']
    """
    if attention_dof not in ATTENTION_DOF:
        raise ValueError(f"`attention_dof` must be one of {ATTENTION_DOF}, got {attention_dof!r}")
    dof = d if attention_dof == "d" else sp.Integer(1)
    ell = approximation_log_factor()
    bounded, attention = feature_bounds(a_priori)
    sub_gaussian = 4 * attention * sp.sqrt(2 * dof * ell / m)
    sub_exponential = 2 * attention * (dof + 2 * ell / m)
    attention_part = sp.Piecewise((sub_gaussian, 2 * ell / m <= dof), (sub_exponential, True))
    if sub_gamma:
        attention_part = sp.Min(attention_part, sub_gamma_deviation(attention, dof))
    return 2 * bounded * sp.sqrt(ell / m) + attention_part


def sub_gamma_deviation(attention: sp.Expr, dof: sp.Expr = sp.S.One) -> sp.Expr:
    """s_w = 4B_w√(k ℓ/m) + 2√2·B_w ℓ/m ≥ the attention part's deviation with probability
    ≥ 1 − δ/2 over the n samples and both signs, k = ``dof`` (derivations.md §5.3).

    The symmetrised log-moment generating function −k·log(1 − 2λ²B_w²) (module docstring) is at
    most k·x/(1 − x), x = 2λ²B_w², and 1 − x = (1 − cλ)(1 + cλ) ≥ 1 − cλ with c = √2·B_w, so
    each pair average is sub-gamma with variance factor v = 4kB_w² and scale c on both tails
    (Boucheron, Lugosi & Massart 2013, §2.4): the mean of N = m/2 exceeds √(2vℓ/N) + cℓ/N with
    probability ≤ e^{−ℓ}. Against the sub-Gaussian branch 4B_w√(2kℓ/m) it keeps the leading
    term's exact constant (−log(1 − x) ≈ x) instead of doubling it.

    Example:
        >>> import sympy as sp
        >>> from boundcalc.theory.symbols import delta, m, n
        >>> point = {m: 2048, n: 1000, delta: sp.Rational(1, 20)}
        >>> round(float(sub_gamma_deviation(sp.Integer(3)).subs(point)), 4)
        0.9377
    """
    ell = approximation_log_factor()
    return (4 * attention * sp.sqrt(dof * ell / m)
            + 2 * sp.sqrt(2) * attention * ell / m)


def approximation_probability() -> sp.Expr:
    """Lemma 5 holds with probability at least 1 − δ."""
    return 1 - delta


def lemma5() -> Statement:
    """Lemma 5: approximation error of the transported parameters."""
    return Statement(
        name="lemma5",
        title="Lemma 5 (approximation error)",
        summary=("With probability >= 1 - delta over the init, "
                 "max_j |f_lin(X_j; theta_bar) - f*(X_j)| <= eps_app."),
        constants={"log_factor": approximation_log_factor()},
        terms={},
        bound={"eps_app": approximation_error_bound()},
        probability=approximation_probability(),
        conditions=(m_even_condition(),),
        descriptions=LEMMA_DESCRIPTIONS,
        latex_names=LATEX_NAMES,
    )


__all__ = [
    "ATTENTION_DOF",
    "approximation_error_bound",
    "approximation_log_factor",
    "approximation_probability",
    "feature_bounds",
    "lemma5",
    "sub_gamma_deviation",
]
