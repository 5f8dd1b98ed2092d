"""Theorem 5 of the generalization bound: the calculator's ``generalization`` statement.

Source: *Generalization bound for a Shallow Transformer trained using Gradient Descent*
(anonymous, under review), the calculator's second bound family ("paper 003"); line numbers
(``line 291``) as in :mod:`boundcalc.theory.generalization_quantities`, which computes the
quantities of Lemmas 1, 2 and 4 (η, ξ, ρ, z, M, A, P, the Rademacher complexity, the empirical
loss). Model (§3.1.2, Wu et al. 2024): f(X) = (1/d_s) w_Oᵀ Σ_{i≤d_s} ReLU(W_V Xᵀ
softmax(X W_Kᵀ W_Q X^{(i,:)ᵀ}/√d_m)), LeCun init, d = d_m (line 145), loss ℓ 1-Lipschitz in its
first argument, plain GD.

What is computed here:

* Theorem 5: the true-loss bound L_D ≤ L_S + 2R_S + confidence term, with its probability
  (lines 291–329), and the union over radius classes it needs;
* the hypotheses the calculator can check (width, Wu et al.'s α-conditions, a positive
  probability; the printed Dudley form's domain);
* the statements ``generalization`` (Theorem 5), ``generalization-lemma1`` (Lemmas 1–2) and
  ``generalization-lemma4`` (Lemma 4), with the description and LaTeX name of every key;
* the compact forms (every formula written one level at a time in display symbols, for
  ``--symbolic``) and the table of discrepancies between the printed statements and the paper's
  own derivations.

Why two forms. The paper's statements and its own derivations disagree in places
(:func:`discrepancies`, docs/generalization.md). Every builder takes ``as_printed``: False (the
default) follows the derivation step by step, True reproduces the printed statement. Every
constant the paper hides behind "≲", O(·), Ω(·) or Ω̃(·) is a symbol of
:data:`boundcalc.theory.generalization_symbols.HIDDEN_CONSTANTS`: default 1 (an assumption), except
C_conf, whose default the derivation gives (:func:`derived_default`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import sympy as sp

from . import generalization_symbols as GS
from .generalization_quantities import (
    A,
    M,
    M_hat,
    P,
    a_form,
    dudley_closed_form,
    dudley_form,
    dudley_scale,
    empirical_loss_phi0_bound,
    eta_K,
    eta_O,
    eta_Q,
    eta_V,
    lemma4_bound,
    lemma4_first_form,
    lemma4_first_term,
    lemma4_probability,
    lemma4_second_form,
    lemma4_second_term,
    loss_range,
    m_form,
    p_form,
    rademacher_bound,
    rho,
    xi_K,
    xi_Q,
    xi_V,
    z,
    z_form,
    z_hat,
)
from .generalization_symbols import (
    C_D,
    C_O,
    R_K,
    R_O,
    R_Q,
    R_V,
    C_conf,
    C_cov,
    C_prob,
    C_width,
    N,
    Phi0,
    Y,
    alpha,
    c_hat,
    d_m,
    d_s,
    delta,
)
from .statement import Condition, Statement

# ---------------------------------------------------------------------------------------------
# Theorem 5: true loss (lines 287-331)
# ---------------------------------------------------------------------------------------------


def radius_R() -> sp.Expr:
    """R = √(R_Q² + R_K² + R_V² + R_O²) ≥ ‖θ^t − θ⁰‖₂ (line 163)."""
    return sp.sqrt(R_Q**2 + R_K**2 + R_V**2 + R_O**2)


def union_count() -> sp.Expr:
    """Number of radius classes in the union bound of the proof of Theorem 5 (lines 311–319).

    The proof takes R_i = i for i ∈ {1, …, R}, which needs R to be a positive integer. Choice:
    max(1, ⌈R⌉) classes, the smallest grid of integer radii that contains R.
    """
    return sp.Max(1, sp.ceiling(radius_R()))


def derived_default(name: str) -> sp.Expr:
    """The default of a hidden constant that the derivation gives (names of
    :data:`GS.DERIVED_DEFAULTS`): C_conf = 3c, the factor Mohri et al. Thm 3.1 (line 125) puts on
    the deviation term for a loss in [0, c], with c = :func:`loss_range` = A + Y.

    Example:
        >>> derived_default("C_conf")
        3*R_X*sqrt(d_s)*(R_O + WO0_2)*(R_V + WV0_F) + 3*Y
    """
    if name == C_conf.name:
        return 3 * loss_range()
    raise ValueError(f"`name` must be one of {sorted(GS.DERIVED_DEFAULTS)}, got {name!r}")


def confidence_term(as_printed: bool = False) -> sp.Expr:
    """Deviation term of the uniform bound.

    Derived (line 317): C_conf·√(log(2R/δ)/(2N)) with R the union count (:func:`union_count`),
    i.e. Mohri et al. Thm 3.1's 3c√(log(2/δ)/(2N)) (line 125) at δ/R: C_conf defaults to 3c
    (:func:`derived_default`). Printed (lines 293, 329):
    √(log(R/δ)/N) with R = :func:`radius_R`, inside the O(·) of Theorem 5 (factor C_O applied by
    :func:`theorem5_terms`).
    """
    return _confidence_form(radius_R() if as_printed else union_count(), as_printed)


def _confidence_form(r: sp.Expr, as_printed: bool) -> sp.Expr:
    if as_printed:
        return sp.sqrt(sp.log(r / delta) / N)
    return C_conf * sp.sqrt(sp.log(2 * r / delta) / (2 * N))


def theorem5_terms(as_printed: bool = False) -> dict[str, sp.Expr]:
    """The three additive terms of Theorem 5.

    Derived (lines 317, 325): L_D ≤ L_S + 2R_S + C_conf√(log(2R/δ)/(2N)) with ℓ 1-Lipschitz,
    L_S by :func:`lemma4_bound` and R_S by :func:`rademacher_bound`.
    Printed (lines 293, 329): min(α²/(8ρM̂√N), α³η_O/(32ρ⁴ẑ√N))
    + C_O·(√(P/N)(1 + log(A√(N/P))) + √(log(R/δ)/N)).
    """
    if as_printed:
        return {
            "empirical_loss": lemma4_bound(True),
            "rademacher": C_O * dudley_closed_form(True),
            "confidence": C_O * confidence_term(True),
        }
    return {
        "empirical_loss": lemma4_bound(False),
        "rademacher": 2 * rademacher_bound(False),
        "confidence": confidence_term(False),
    }


def theorem5_bound(as_printed: bool = False) -> sp.Expr:
    """Theorem 5: bound on the true loss L_D(f_{θ^t}), the sum of :func:`theorem5_terms`."""
    return sp.Add(*theorem5_terms(as_printed).values())


def theorem5_probability() -> sp.Expr:
    """1 − 8e^{−d_m/2} − 2δ − exp(−C_prob·(N−1)^{−ĉ}·d_s^{−1}) (lines 291, 327).

    Lemma 4's event (δ) and the uniform-convergence event (δ) by a union bound. As printed, the
    last term tends to 1 as N grows, so the bound is vacuous for large N unless C_prob grows
    with N (condition ``probability_positive``).
    """
    return (1 - 8 * sp.exp(-d_m / 2) - 2 * delta
            - sp.exp(-C_prob * (N - 1) ** (-c_hat) / d_s))


# ---------------------------------------------------------------------------------------------
# Conditions (lines 229, 253, 291)
# ---------------------------------------------------------------------------------------------


def alpha_square_condition() -> Condition:
    """α² ≥ 8ρM√(2Φ(θ⁰)) (Wu et al. Thm 1, lines 229, 253)."""
    return Condition(
        "alpha_square", sp.Ge(alpha**2, 8 * rho() * M() * sp.sqrt(2 * Phi0)),
        "alpha^2 >= 8 rho M sqrt(2 Phi0)",
        "Wu et al. Thm 1 (GD converges linearly); gives Phi0 <= alpha^4/(128 rho^2 M^2)")


def alpha_cube_condition() -> Condition:
    """α³ ≥ 32ρ²z√(2Φ(θ⁰))/η_O (Wu et al. Thm 1, lines 229, 253)."""
    return Condition(
        "alpha_cube", sp.Ge(alpha**3, 32 * rho() ** 2 * z() * sp.sqrt(2 * Phi0) / eta_O()),
        "alpha^3 >= 32 rho^2 z sqrt(2 Phi0) / eta_O",
        "Wu et al. Thm 1; gives Phi0 <= alpha^6 eta_O^2/(2048 rho^4 z^2)")


def width_condition() -> Condition:
    """d_m ≥ Ω̃(N³), read as d_m ≥ C_width·N³ with the logarithmic factor set to 1."""
    return Condition(
        "width", sp.Ge(d_m, C_width * N**3), "d_m >= C_width N^3",
        "Wu et al. Thm 1 needs d_m >= Omega~(N^3) (log factor omitted)")


def probability_condition() -> Condition:
    """The probability of Theorem 5 must be positive for the statement to say anything."""
    return Condition(
        "probability_positive", sp.Gt(theorem5_probability(), 0),
        "1 - 8 exp(-d_m/2) - 2 delta - exp(-C_prob (N-1)^(-c_hat)/d_s) > 0",
        "otherwise the bound holds with probability <= 0 (vacuous)")


def printed_dudley_condition() -> Condition:
    """√(C_cov P/N) ≤ A: the printed closed form of line 407 is the infimum only then."""
    return Condition(
        "dudley_minimiser_le_A", sp.Le(dudley_scale(), A()), "sqrt(C_cov P / N) <= A",
        "line 407 takes delta* = sqrt(P/N) in an infimum over [0, A]; above A the printed "
        "Rademacher term is below the trivial bound A and negative once sqrt(P/N) > e A")


def theorem5_conditions(as_printed: bool = False) -> tuple[Condition, ...]:
    """Hypotheses of Theorem 5 that the calculator can check (Assumption 3, the step size
    γ ≤ 1/k and the iterates staying within the radii are not numbers it has)."""
    conds = (width_condition(), alpha_square_condition(), alpha_cube_condition(),
             probability_condition())
    return (*conds, printed_dudley_condition()) if as_printed else conds


# ---------------------------------------------------------------------------------------------
# Statements
# ---------------------------------------------------------------------------------------------


def quantities(as_printed: bool = False) -> dict[str, sp.Expr]:
    """Every named quantity of paper 003 (the ``quantities`` section of the output)."""
    return {
        "eta_Q": eta_Q(), "eta_K": eta_K(), "eta_V": eta_V(), "eta_O": eta_O(),
        "xi_Q": xi_Q(), "xi_K": xi_K(), "xi_V": xi_V(),
        "rho": rho(), "z": z(), "z_hat": z_hat(), "M": M(), "M_hat": M_hat(),
        "A": A(), "P": P(),
        "R": radius_R(), "R_union": union_count(),
        "dudley_scale": dudley_scale(),
        "rademacher_complexity": rademacher_bound(as_printed),
        "lemma1_as_printed": rademacher_bound(True, lemma=1),
        "lemma4_first": lemma4_first_term(as_printed),
        "lemma4_second": lemma4_second_term(as_printed),
        "empirical_loss_phi0": empirical_loss_phi0_bound(),
        "lemma4_probability": lemma4_probability(),
        "loss_range": loss_range(),
    }


#: Display symbols of the named quantities, for formulas written one level at a time.
QUANTITY_SYMBOLS: dict[str, sp.Symbol] = {
    key: sp.Symbol(name, positive=True) for key, name in (
        ("eta_Q", "η_Q"), ("eta_K", "η_K"), ("eta_V", "η_V"), ("eta_O", "η_O"),
        ("xi_Q", "ξ_Q"), ("xi_K", "ξ_K"), ("xi_V", "ξ_V"), ("rho", "ρ"), ("z", "z"),
        ("z_hat", "ẑ"), ("M", "M"), ("M_hat", "M̂"), ("A", "A"), ("P", "P"), ("R", "R"),
        ("R_union", "R_∪"), ("dudley_scale", "s"), ("rademacher_complexity", "ℛ_S"),
        ("lemma4_first", "T₁"), ("lemma4_second", "T₂"), ("empirical_loss", "L̂"),
        ("rademacher", "G_R"), ("confidence", "G_δ"),
    )
}

#: LaTeX names of :data:`QUANTITY_SYMBOLS`.
QUANTITY_LATEX: dict[sp.Symbol, str] = {
    QUANTITY_SYMBOLS[k]: v for k, v in (
        ("eta_Q", r"\eta_Q"), ("eta_K", r"\eta_K"), ("eta_V", r"\eta_V"), ("eta_O", r"\eta_O"),
        ("xi_Q", r"\xi_Q"), ("xi_K", r"\xi_K"), ("xi_V", r"\xi_V"), ("rho", r"\rho"),
        ("z", "z"), ("z_hat", r"\hat z"), ("M", "M"), ("M_hat", r"\hat M"), ("A", "A"),
        ("P", "P"), ("R", "R"), ("R_union", r"R_\cup"), ("dudley_scale", "s"),
        ("rademacher_complexity", r"\mathcal{R}_S"), ("lemma4_first", "T_1"),
        ("lemma4_second", "T_2"), ("empirical_loss", r"\hat{\mathcal{L}}"),
        ("rademacher", r"G_{\mathcal{R}}"), ("confidence", r"G_\delta"),
    )
}


def compact_formulas(as_printed: bool = False) -> dict[str, sp.Expr]:
    """Every quantity, term, the bound, the probability and each condition written one level at
    a time, in the display symbols of its ingredients (:data:`QUANTITY_SYMBOLS`).

    Built from the same ``_*_form`` helpers as the full expressions, so substituting the full
    expression of each ingredient gives back :func:`quantities`/:func:`theorem5_terms` exactly
    (a test checks it). Keys: quantity keys, ``terms.<key>``, ``bound.true_loss``,
    ``probability``, ``condition.<name>``.
    """
    q = QUANTITY_SYMBOLS
    out: dict[str, sp.Expr] = {
        "eta_Q": eta_Q(), "eta_K": eta_K(), "eta_V": eta_V(), "eta_O": eta_O(),
        "xi_Q": xi_Q(), "xi_K": xi_K(), "xi_V": xi_V(), "rho": rho(),
        "z": z_form(q["eta_O"], q["xi_V"], q["xi_Q"], q["xi_K"]),
        "z_hat": z_form(q["eta_O"], q["eta_V"], q["eta_Q"], q["eta_K"]),
        "M": m_form(q["xi_V"], q["xi_Q"], q["xi_K"], q["eta_O"]),
        "M_hat": m_form(q["eta_V"], q["eta_Q"], q["eta_K"], q["eta_O"]),
        "A": a_form(q["eta_O"], q["eta_V"]),
        "P": p_form(q["eta_V"], q["eta_K"], q["eta_Q"]),
        "R": radius_R(), "R_union": sp.Max(1, sp.ceiling(q["R"])),
        "dudley_scale": sp.sqrt(C_cov * q["P"] / N),
        "rademacher_complexity": C_D * dudley_form(q["dudley_scale"], q["A"], as_printed),
        "lemma1_as_printed": C_O * dudley_form(q["dudley_scale"], q["A"], True) / N,
        "lemma4_first": lemma4_first_form(q["rho"], q["M_hat"] if as_printed else q["M"]),
        "lemma4_second": (lemma4_second_form(q["rho"], q["z_hat"], q["eta_O"], 4) if as_printed
                          else lemma4_second_form(q["rho"], q["z"], q["eta_O"], 2)),
        "empirical_loss_phi0": empirical_loss_phi0_bound(),
        "lemma4_probability": lemma4_probability(),
        "loss_range": q["A"] + Y,
        "terms.empirical_loss": sp.Min(q["lemma4_first"], q["lemma4_second"]),
        "terms.rademacher": (C_O * dudley_form(q["dudley_scale"], q["A"], True) if as_printed
                             else 2 * q["rademacher_complexity"]),
        "terms.confidence": (C_O * _confidence_form(q["R"], True) if as_printed
                             else _confidence_form(q["R_union"], False)),
        "bound.true_loss": q["empirical_loss"] + q["rademacher"] + q["confidence"],
        "probability": theorem5_probability(),
        "condition.width": sp.Ge(d_m, C_width * N**3),
        "condition.alpha_square": sp.Ge(alpha**2, 8 * q["rho"] * q["M"] * sp.sqrt(2 * Phi0)),
        "condition.alpha_cube": sp.Ge(alpha**3, 32 * q["rho"] ** 2 * q["z"] * sp.sqrt(2 * Phi0)
                                      / q["eta_O"]),
        "condition.probability_positive": sp.Gt(theorem5_probability(), 0),
    }
    if as_printed:
        out["condition.dudley_minimiser_le_A"] = sp.Le(q["dudley_scale"], q["A"])
    return out


@cache
def _symbol_to_full(as_printed: bool) -> dict[sp.Symbol, sp.Expr]:
    full: dict[str, sp.Expr] = {**quantities(as_printed), **theorem5_terms(as_printed)}
    return {QUANTITY_SYMBOLS[k]: full[k] for k in QUANTITY_SYMBOLS}


def expand_compact(expr: sp.Basic, as_printed: bool = False) -> sp.Basic:
    """Replace every display symbol in ``expr`` by its full expression (inverse of
    :func:`compact_formulas`, used by the tests)."""
    symbol_to_full = _symbol_to_full(as_printed)
    for _ in range(8):  # ingredients nest at most a few levels
        new = expr.xreplace(symbol_to_full)
        if new == expr:
            return new
        expr = new
    return expr


DESCRIPTIONS: dict[str, str] = {
    "eta_Q": "||W_Q^0||_F + R_Q (line 175)",
    "eta_K": "||W_K^0||_F + R_K (line 175)",
    "eta_V": "||W_V^0||_F + R_V (line 175)",
    "eta_O": "||w_O^0||_2 + R_O (line 175)",
    "xi_Q": "||W_Q^0||_2 + R_Q (line 229)",
    "xi_K": "||W_K^0||_2 + R_K (line 229)",
    "xi_V": "||W_V^0||_2 + R_V (line 229)",
    "rho": "N^(1/2) d_s^(3/2) R_X (line 233)",
    "z": "eta_O^2 (1 + (4/d_m) R_X^4 d_s^2 xi_V^2 (xi_Q^2 + xi_K^2)) (line 233)",
    "z_hat": "z with xi -> eta (line 233)",
    "M": "max(xi_V/R_O, eta_O/R_V, (2/sqrt(d_m)) R_X^2 d_s xi_K xi_V eta_O/R_Q, "
         "(2/sqrt(d_m)) R_X^2 d_s xi_Q xi_V eta_O/R_K) (line 235)",
    "M_hat": "M with xi -> eta (line 237)",
    "A": "eta_O eta_V sqrt(d_s) R_X >= |f| (line 425)",
    "P": "(sqrt(d_s) R_X)^2 ((sqrt(d_m) eta_V)^(2/3) + (sqrt(d_m) eta_K eta_Q eta_V)^(2/3))^3 "
         "log(N d_s) (line 398)",
    "R": "sqrt(R_Q^2 + R_K^2 + R_V^2 + R_O^2) (line 163)",
    "R_union": "number of radius classes in the union bound: max(1, ceil(R)) (lines 311-319)",
    "dudley_scale": "sqrt(C_cov P / N): minimiser of the Dudley bracket (line 406)",
    "rademacher_complexity": "bound on R_S(F_R^theta0) (Lemmas 1-2, lines 205, 211, 407)",
    "lemma1_as_printed": "Lemma 1 exactly as printed (line 177): C_O (1/N) sqrt(P/N)(1 + log(A "
                         "sqrt(N/P)))",
    "lemma4_first": "alpha^2/(8 rho M sqrt(N)) (derived) | alpha^2/(8 rho M_hat sqrt(N)) "
                    "(printed)",
    "lemma4_second": "alpha^3 eta_O/(32 rho^2 z sqrt(N)) (derived) | "
                     "alpha^3 eta_O/(32 rho^4 z_hat sqrt(N)) (printed)",
    "empirical_loss_phi0": "sqrt(2 Phi0 / N): line 277 before the alpha-conditions",
    "lemma4_probability": "1 - 8 exp(-d_m/2) - delta - exp(-C_prob (N-1)^(-c_hat)/d_s) "
                          "(line 229)",
    "loss_range": "A + Y: the loss range on the class, 0 <= l(f(X), y) <= |f(X) - y| <= A + Y "
                  "(1-Lipschitz l with l(y, y) = 0, |f| <= A, |y| <= Y): L_D <= A + Y holds "
                  "without any theorem, so a true_loss bound at or above it is vacuous",
    "empirical_loss": "Lemma 4: bound on the empirical loss L_S(f_theta^t) for every t",
    "rademacher": "2 R_S (derived, line 317) | C_O sqrt(P/N)(1 + log(A sqrt(N/P))) (printed)",
    "confidence": "C_conf sqrt(log(2R/delta)/(2N)), C_conf = 3 (A + Y) unless given (derived, "
                  "lines 125, 317) | C_O sqrt(log(R/delta)/N) (printed, line 293)",
    "true_loss": "Theorem 5: bound on the true loss L_D(f_theta^t)",
    "empirical_loss_bound": "Lemma 4 bound",
    "rademacher_bound": "Lemma 1/2 bound on the Rademacher complexity",
}

LATEX: dict[str, str] = {
    "eta_Q": r"\eta_Q", "eta_K": r"\eta_K", "eta_V": r"\eta_V", "eta_O": r"\eta_O",
    "xi_Q": r"\xi_Q", "xi_K": r"\xi_K", "xi_V": r"\xi_V", "rho": r"\rho", "z": "z",
    "z_hat": r"\hat z", "M": "M", "M_hat": r"\hat M", "A": "A", "P": "P", "R": "R",
    "R_union": r"\lceil R\rceil", "dudley_scale": r"\sqrt{P/N}",
    "rademacher_complexity": r"\mathcal{R}_S(\mathcal{F}_R^{\theta^0})",
    "lemma1_as_printed": r"\mathcal{R}_S^{\mathrm{L1}}",
    "lemma4_first": r"\frac{\alpha^2}{8\rho M\sqrt N}",
    "lemma4_second": r"\frac{\alpha^3\eta_O}{32\rho^2 z\sqrt N}",
    "empirical_loss_phi0": r"\sqrt{2\Phi(\theta^0)/N}",
    "lemma4_probability": r"p_{\mathrm{L4}}", "loss_range": "A + Y",
    "empirical_loss": r"\mathcal{L}_S", "rademacher": r"2\mathcal{R}_S",
    "confidence": r"\varepsilon_{\mathrm{conf}}", "true_loss": r"\mathcal{L}_{\mathcal{D}}",
    "empirical_loss_bound": r"\mathcal{L}_S", "rademacher_bound": r"\mathcal{R}_S",
}

_FORM = {False: "derived (default)", True: "as printed"}


def lemma1(as_printed: bool = False) -> Statement:
    """Lemmas 1–2 (Rademacher complexity of the class) as a :class:`Statement`."""
    consts = {k: v for k, v in quantities(as_printed).items()
              if k in ("eta_Q", "eta_K", "eta_V", "eta_O", "A", "P", "dudley_scale")}
    return Statement(
        name="generalization-lemma1",
        title="Paper 003 Lemmas 1-2 (Rademacher complexity)",
        summary=("Empirical Rademacher complexity of the transformers within radii (R_Q, R_K, "
                 f"R_V, R_O) of theta0, via Edelman et al.'s covering number; form: "
                 f"{_FORM[as_printed]}."),
        constants=consts, terms={},
        bound={"rademacher_bound": rademacher_bound(as_printed)},
        probability=sp.Integer(1),
        conditions=(printed_dudley_condition(),) if as_printed else (),
        descriptions=DESCRIPTIONS, latex_names=LATEX,
    )


def lemma4(as_printed: bool = False) -> Statement:
    """Lemma 4 (empirical loss along GD) as a :class:`Statement`."""
    keep = ("eta_O", "xi_Q", "xi_K", "xi_V", "eta_Q", "eta_K", "eta_V", "rho", "z", "z_hat",
            "M", "M_hat", "lemma4_first", "lemma4_second", "empirical_loss_phi0")
    consts = {k: v for k, v in quantities(as_printed).items() if k in keep}
    return Statement(
        name="generalization-lemma4",
        title="Paper 003 Lemma 4 (empirical loss along GD)",
        summary=("L_S(f_theta^t) <= min(...) for every t, under Wu et al. Thm 1's conditions; "
                 f"form: {_FORM[as_printed]}."),
        constants=consts, terms={},
        bound={"empirical_loss_bound": lemma4_bound(as_printed)},
        probability=lemma4_probability(),
        conditions=(width_condition(), alpha_square_condition(), alpha_cube_condition()),
        descriptions=DESCRIPTIONS, latex_names=LATEX,
    )


def theorem5(as_printed: bool = False) -> Statement:
    """Theorem 5 (true loss of the GD-trained transformer) as a :class:`Statement`.

    Example:
        >>> from boundcalc.theory.generalization import theorem5
        >>> sorted(theorem5().terms)
        ['confidence', 'empirical_loss', 'rademacher']
    """
    terms = theorem5_terms(as_printed)
    return Statement(
        name="generalization",
        title="Paper 003 Theorem 5 (generalization bound for GD-trained shallow Transformer)",
        summary=("L_D(f_theta^t) <= empirical (Lemma 4) + Rademacher (Lemma 1) + confidence, for "
                 "every GD step t, provided the iterates stay within the radii R_Q, R_K, R_V, "
                 "R_O (an assumption of the paper, not checked here), Assumption 3 holds and "
                 f"the step size is small enough; form: {_FORM[as_printed]}."),
        constants=quantities(as_printed), terms=terms,
        bound={"true_loss": sp.Add(*terms.values())},
        probability=theorem5_probability(),
        conditions=theorem5_conditions(as_printed),
        descriptions=DESCRIPTIONS, latex_names=LATEX,
    )


# ---------------------------------------------------------------------------------------------
# Discrepancies between the printed statements and their derivations
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Discrepancy:
    """One place where paper 003's printed statement and its own derivation disagree.

    Attributes:
        key: stable identifier.
        lines: line numbers in the paper's plain text (module docstring).
        printed: the printed formula (plain text).
        derived: what the derivation gives (plain text); the calculator's default.
        note: why, and what the calculator does.
        printed_expr / derived_expr: sympy forms where the difference is a formula.
    """

    key: str
    lines: str
    printed: str
    derived: str
    note: str
    printed_expr: sp.Expr | None = None
    derived_expr: sp.Expr | None = None


def discrepancies() -> tuple[Discrepancy, ...]:
    """The discrepancies that change a number (both forms are computed; see the docs).

    The sympy forms are written in the display symbols of :data:`QUANTITY_SYMBOLS` (expand them
    with :func:`expand_compact`).
    """
    q = QUANTITY_SYMBOLS
    s_, a_ = q["dudley_scale"], q["A"]
    return (
        Discrepancy(
            "lemma4_rho_power", "267-277 (derivation), 231, 283, 293, 325, 329 (statements)",
            "alpha^3 eta_O / (32 rho^4 z_hat sqrt(N))",
            "alpha^3 eta_O / (32 rho^2 z sqrt(N))",
            "Line 269 has Phi0 <= alpha^6 eta_O^2/(2048 rho^4 z^2); its square root times "
            "sqrt(2/N) is alpha^3 eta_O/(32 rho^2 z sqrt(N)). Line 277 already writes rho^4.",
            lemma4_second_form(q["rho"], q["z_hat"], q["eta_O"], 4),
            lemma4_second_form(q["rho"], q["z"], q["eta_O"], 2)),
        Discrepancy(
            "lemma4_hats", "281-285 (step), 231, 293 (statements); conditions 229, 253, 291",
            "min(alpha^2/(8 rho M_hat sqrt(N)), ...z_hat...)",
            "min(alpha^2/(8 rho M sqrt(N)), ...z...)",
            "M_hat >= M and z_hat >= z sit in denominators, so replacing xi by eta shrinks "
            "the bound: it is not implied by the conditions, which are stated with M and z. "
            "It would follow only from the stronger conditions with M_hat, z_hat.",
            lemma4_first_form(q["rho"], q["M_hat"]), lemma4_first_form(q["rho"], q["M"])),
        Discrepancy(
            "confidence_term", "317 (proof), 293 and 329 (statement); 125 (Mohri et al.)",
            "sqrt(log(R/delta)/N) inside O(.)",
            "C_conf sqrt(log(2R/delta)/(2N)), R = max(1, ceil(R)) classes",
            "Union bound over R radius classes in Mohri et al. Thm 3.1 (line 125) gives "
            "3c sqrt(log(2R/delta)/(2N)) for a loss in [0, c]; line 317 writes coefficient 1. "
            "Here C_conf = 3c by default, c = A + Y the loss range on the class.",
            _confidence_form(q["R"], True), _confidence_form(q["R_union"], False)),
        Discrepancy(
            "lemma1_extra_1_over_N", "177 (Lemma 1) vs 205, 211 (Lemma 2, proof) and 293",
            "O((1/N) sqrt(P/N)(1 + log(A sqrt(N/P))))",
            "c sqrt(P/N)(1 + log(A sqrt(N/P)))",
            "Lemma 1's statement has a factor 1/N absent from Lemma 2, its proof and Theorem 5.",
            C_O * dudley_form(s_, a_, True) / N, C_D * dudley_form(s_, a_, True)),
        Discrepancy(
            "dudley_domain", "403-407",
            "c sqrt(P/N)(1 + log(A sqrt(N/P)))",
            "c sqrt(P/N)(1 + log(A sqrt(N/P))) if sqrt(P/N) <= A else c A",
            "inf over delta in [0, A] of delta + sqrt(P/N) log(A/delta) is at "
            "delta = min(sqrt(P/N), A); the printed value is negative for sqrt(P/N) > e A.",
            dudley_form(s_, a_, True), dudley_form(s_, a_, False)),
    )


__all__ = [
    "DESCRIPTIONS", "Discrepancy", "LATEX", "QUANTITY_LATEX", "QUANTITY_SYMBOLS",
    "alpha_cube_condition", "alpha_square_condition", "compact_formulas", "confidence_term",
    "derived_default", "discrepancies", "expand_compact", "lemma1", "lemma4",
    "printed_dudley_condition",
    "probability_condition", "quantities", "radius_R", "theorem5", "theorem5_bound",
    "theorem5_conditions", "theorem5_probability", "theorem5_terms", "union_count",
    "width_condition",
]
