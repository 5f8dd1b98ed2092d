"""Named sympy symbols of the second bound family: the generalization bound of paper 003.

Paper 003 (*Generalization bound for a Shallow Transformer trained using Gradient Descent*,
anonymous, under review; line numbers as in :mod:`boundcalc.theory.generalization_quantities`)
bounds the true loss of the Wu et al. (2024) encoder
f(X) = (1/d_s) w_Oᵀ Σ_i ReLU(W_V Xᵀ softmax(X W_Kᵀ W_Q X^{(i,:)ᵀ}/√d_m)) trained by GD. Its
symbols are disjoint from the primary paper's (:mod:`boundcalc.theory.symbols`): the two families
never share an expression, so they get separate namespaces.

Three groups:

* **sizes and data**: N (samples), d_m (model dimension = input dimension d, paper §4 line 145),
  d_s (sequence length), R_X (‖X_n‖_F ≤ √d_s·R_X), δ;
* **labels**: Y, a bound on the labels (|y| ≤ Y for every (X, y) of the distribution D): with
  A ≥ |f| it bounds the loss on the class, 0 ≤ ℓ ≤ A + Y, the range that Mohri et al.'s theorem
  needs (line 123) and the bound that holds without any theorem;
* **radii and initialisation**: R_Q, R_K, R_V, R_O (Frobenius / ℓ₂ distance travelled from θ⁰,
  §4.1) and the seven norms of θ⁰ that the paper's η_•, ξ_• need; α = σ_min(F_pre⁰) and
  Φ(θ⁰) = ½‖f(θ⁰) − y‖² (§4.3), which depend on the data and are inputs;
* **hidden constants**: every constant the paper hides behind "≲", O(·), Ω(·) or Ω̃(·), made an
  explicit symbol (:data:`HIDDEN_CONSTANTS`), so that the output can name them and a user can set
  them. Each defaults to 1 (an assumption, not derived) except C_conf, whose default the
  derivation gives: 3c with c = A + Y the loss range (:data:`DERIVED_DEFAULTS`).

All symbols are positive except Φ(θ⁰), which may be zero (labels fitted at initialisation), and
Y, which may be zero (every label 0).
"""

from __future__ import annotations

import sympy as sp

# sizes and data (paper 003 §3.1, Assumption 3)
N = sp.Symbol("N", positive=True)  # number of training examples
d_m = sp.Symbol("d_m", positive=True)  # model dimension (= input dimension d, line 145)
d_s = sp.Symbol("d_s", positive=True)  # sequence length (rows of X)
R_X = sp.Symbol("R_X", positive=True)  # ‖X_n‖_F ≤ √d_s·R_X for every n
delta = sp.Symbol("delta", positive=True)  # failure probability of each high-probability event

# radii travelled from θ⁰ (§4.1: ‖W_Q^t − W_Q⁰‖_F ≤ R_Q, ..., ‖w_O^t − w_O⁰‖₂ ≤ R_O)
R_Q, R_K, R_V, R_O = sp.symbols("R_Q R_K R_V R_O", positive=True)

# norms of the initialisation θ⁰ = (W_Q⁰, W_K⁰, W_V⁰, w_O⁰)
WQ0_F, WK0_F, WV0_F = sp.symbols("WQ0_F WK0_F WV0_F", positive=True)  # Frobenius
WQ0_2, WK0_2, WV0_2 = sp.symbols("WQ0_2 WK0_2 WV0_2", positive=True)  # spectral
WO0_2 = sp.Symbol("WO0_2", positive=True)  # ‖w_O⁰‖₂

# data-dependent quantities at initialisation (§4.3)
alpha = sp.Symbol("alpha", positive=True)  # σ_min(F_pre⁰)
Phi0 = sp.Symbol("Phi0", nonnegative=True)  # Φ(θ⁰) = ½‖f(θ⁰) − y‖₂²

# labels: |y| <= Y for every (X, y) of the distribution
Y = sp.Symbol("Y", nonnegative=True)

# hidden constants (see HIDDEN_CONSTANTS: default 1 each, C_conf's derived)
C_D = sp.Symbol("C_D", positive=True)
C_cov = sp.Symbol("C_cov", positive=True)
C_conf = sp.Symbol("C_conf", positive=True)
C_O = sp.Symbol("C_O", positive=True)
C_width = sp.Symbol("C_width", positive=True)
C_prob = sp.Symbol("C_prob", positive=True)
c_hat = sp.Symbol("c_hat", positive=True)

#: Hidden constant → (default, where the paper hides it and what it multiplies). A default of
#: None means derived from the other inputs (:data:`DERIVED_DEFAULTS`).
HIDDEN_CONSTANTS: dict[sp.Symbol, tuple[int | None, str]] = {
    C_D: (1, "Dudley entropy-integral constant c (lines 139, 205, 403): "
              "R_S <= c * inf_delta (delta + integral ...)"),
    C_cov: (1, "constant hidden by '≲' in the covering-number bound (Lemma 6 = Edelman et al. "
               "Cor. 4.5, lines 386-396): log N_inf <= C_cov * P / eps^2"),
    C_conf: (None, "prefactor of the confidence term; the proof (line 317) writes 1, Mohri et al. "
                   "Thm 3.1 as quoted on line 125 gives 3c for a loss bounded in [0, c]; default "
                   "3c with c = A + Y, the loss range on the class (derived)"),
    C_O: (1, "constant of the O(.) around the Rademacher and confidence terms of the printed "
             "Theorem 5 (lines 293, 329); used only with as_printed"),
    C_width: (1, "constant of d_m >= Omega~(N^3) (lines 229, 253, 291); the omitted logarithmic "
                 "factor is taken as 1"),
    C_prob: (1, "constant of the Omega(.) in exp(-Omega((N-1)^(-c_hat) d_s^(-1))) in the "
                "probability (lines 229, 253, 291, 327)"),
    c_hat: (1, "exponent c_hat > 0 of Assumption 3 (line 223), a property of the data "
               "distribution; printed as epsilon on lines 291 and 323"),
}

#: Name → default of every hidden constant with a numeric default (for the API and the CLI);
#: every such default is 1, an assumption that no derivation backs.
HIDDEN_DEFAULTS: dict[str, float] = {s.name: float(v[0]) for s, v in HIDDEN_CONSTANTS.items()
                                    if v[0] is not None}

#: Hidden constants whose default the derivation gives, as the plain text of the formula
#: (``boundcalc.theory.generalization.derived_default`` is the expression): C_conf = 3c for a
#: loss in [0, c] (Mohri et al. Thm 3.1, line 125), c = A + Y (docs/generalization.md §4).
DERIVED_DEFAULTS: dict[str, str] = {C_conf.name: "3 (A + Y)"}

#: Display names (Unicode) for ``--symbolic``.
UNICODE_NAMES: dict[sp.Symbol, str] = {
    N: "N", d_m: "d_m", d_s: "d_s", R_X: "R_X", delta: "δ",
    R_Q: "R_Q", R_K: "R_K", R_V: "R_V", R_O: "R_O",
    WQ0_F: "‖W_Q⁰‖_F", WK0_F: "‖W_K⁰‖_F", WV0_F: "‖W_V⁰‖_F",
    WQ0_2: "‖W_Q⁰‖₂", WK0_2: "‖W_K⁰‖₂", WV0_2: "‖W_V⁰‖₂", WO0_2: "‖w_O⁰‖₂",
    alpha: "α", Phi0: "Φ(θ⁰)", Y: "Y",
    C_D: "c", C_cov: "C_cov", C_conf: "C_conf", C_O: "C_O", C_width: "C_width",
    C_prob: "C_prob", c_hat: "ĉ",
}

#: LaTeX names (used by ``sympy.latex(..., symbol_names=LATEX_NAMES)``).
LATEX_NAMES: dict[sp.Symbol, str] = {
    N: "N", d_m: "d_m", d_s: "d_s", R_X: "R_X", delta: r"\delta",
    R_Q: "R_Q", R_K: "R_K", R_V: "R_V", R_O: "R_O",
    WQ0_F: r"\|W_Q^0\|_F", WK0_F: r"\|W_K^0\|_F", WV0_F: r"\|W_V^0\|_F",
    WQ0_2: r"\|W_Q^0\|_2", WK0_2: r"\|W_K^0\|_2", WV0_2: r"\|W_V^0\|_2",
    WO0_2: r"\|w_O^0\|_2", alpha: r"\alpha", Phi0: r"\Phi(\theta^0)", Y: "Y",
    C_D: "c", C_cov: r"C_{\mathrm{cov}}", C_conf: r"C_{\mathrm{conf}}", C_O: r"C_{O}",
    C_width: r"C_{\mathrm{width}}", C_prob: r"C_{\mathrm{prob}}", c_hat: r"\hat c",
}

#: One-line glossary of every symbol.
GLOSSARY: dict[sp.Symbol, str] = {
    N: "number of training examples",
    d_m: "model dimension; the paper sets the input dimension d = d_m (line 145)",
    d_s: "sequence length (rows of each input X_n)",
    R_X: "input scale: ||X_n||_F <= sqrt(d_s) R_X for every n (Assumption 3)",
    delta: "failure probability (Wu et al.'s delta and the Rademacher delta; 2 delta in total)",
    R_Q: "radius: ||W_Q^t - W_Q^0||_F <= R_Q along training",
    R_K: "radius: ||W_K^t - W_K^0||_F <= R_K along training",
    R_V: "radius: ||W_V^t - W_V^0||_F <= R_V along training",
    R_O: "radius: ||w_O^t - w_O^0||_2 <= R_O along training",
    WQ0_F: "Frobenius norm of W_Q at initialisation",
    WK0_F: "Frobenius norm of W_K at initialisation",
    WV0_F: "Frobenius norm of W_V at initialisation",
    WQ0_2: "spectral norm of W_Q at initialisation",
    WK0_2: "spectral norm of W_K at initialisation",
    WV0_2: "spectral norm of W_V at initialisation",
    WO0_2: "l2 norm of w_O at initialisation",
    alpha: "alpha = sigma_min(F_pre^0), smallest singular value of the N x d_m pre-output "
           "features at initialisation",
    Phi0: "Phi(theta^0) = 1/2 ||f(theta^0) - y||_2^2 (sum over the N samples, not a mean)",
    Y: "label bound: |y| <= Y for every label of the distribution (default 1; with --data the "
       "largest |y| of the data)",
    **{s: text for s, (_, text) in HIDDEN_CONSTANTS.items()},
}

#: Inputs of every generalization expression, in the order the evaluator passes them.
ARGUMENTS: tuple[sp.Symbol, ...] = (
    N, d_m, d_s, R_X, delta, R_Q, R_K, R_V, R_O,
    WQ0_F, WK0_F, WV0_F, WQ0_2, WK0_2, WV0_2, WO0_2, alpha, Phi0, Y,
    *HIDDEN_CONSTANTS,
)


__all__ = [
    "ARGUMENTS", "C_D", "C_O", "C_conf", "C_cov", "C_prob", "C_width", "DERIVED_DEFAULTS",
    "GLOSSARY", "HIDDEN_CONSTANTS", "HIDDEN_DEFAULTS", "LATEX_NAMES", "N", "Phi0", "R_K", "R_O",
    "R_Q", "R_V", "R_X", "UNICODE_NAMES", "WK0_2", "WK0_F", "WO0_2", "WQ0_2", "WQ0_F", "WV0_2",
    "WV0_F", "Y", "alpha", "c_hat", "d_m", "d_s", "delta",
]
