"""Named sympy symbols shared by every statement of the primary paper.

One symbol per quantity of Arda, Cayci & Eryilmaz (AISTATS 2026), so that every expression in
:mod:`boundcalc.theory` is built from the same objects and its free symbols can be inspected
(e.g. a test checks that no Transformer expression contains the sequence length ``T``).

All symbols are declared positive (sympy then simplifies ``sqrt(x**2)`` to ``x`` and limits in
``m`` and ``K`` behave), except the misspecification level, which may be zero.
"""

from __future__ import annotations

import sympy as sp

# sizes
m = sp.Symbol("m", positive=True)  # width = number of heads (even)
n = sp.Symbol("n", positive=True)  # number of training samples
d = sp.Symbol("d", positive=True)  # token dimension
T = sp.Symbol("T", positive=True)  # sequence length (must never appear in a Transformer bound)
K = sp.Symbol("K", positive=True)  # number of (projected) gradient steps
b = sp.Symbol("b", positive=True)  # minibatch size (Proposition 1)

# probability
delta = sp.Symbol("delta", positive=True)  # failure probability per high-probability event

# projection radii of Omega_rho (Definition 2) and transport sup-norm budgets (Section 5.4)
rho_c, rho_u, rho_w = sp.symbols("rho_c rho_u rho_w", positive=True)
nu_c, nu_u, nu_w = sp.symbols("nu_c nu_u nu_w", positive=True)

# activation bounds |sigma| <= sigma0, |sigma'| <= sigma1, |sigma''| <= sigma2
sigma0, sigma1, sigma2 = sp.symbols("sigma0 sigma1 sigma2", positive=True)

# step size
eta = sp.Symbol("eta", positive=True)

# input geometry (a-priori value 1 each; the validators' a-posteriori bounds use measured values)
x_max = sp.Symbol("x_max", positive=True)  # max token norm  max_t ||x_t||
q_max = sp.Symbol("q_max", positive=True)  # max query norm  ||q||
g_max = sp.Symbol("g_max", positive=True)  # bound on tr(XJX^T) >= its norms; <= x_max**2
# measured max_i ||U_i(0)|| replacing the event radius in a-posteriori bounds
u0_max = sp.Symbol("u0_max", positive=True)
# measured root mean square over heads of ||U_i(0)|| replacing the head-average radius a posteriori
u0_rms = sp.Symbol("u0_rms", positive=True)

# Remark 9: sup-norm distance of the labels to the transport target, max_j |y_j - f*(X_j)|
eps_mis = sp.Symbol("epsilon_mis", nonnegative=True)

#: Display names (Unicode) used by ``--symbolic`` and ``explain``.
UNICODE_NAMES: dict[sp.Symbol, str] = {
    m: "m", n: "n", d: "d", T: "T", K: "K", b: "b", delta: "δ",
    rho_c: "ρ_c", rho_u: "ρ_u", rho_w: "ρ_w", nu_c: "ν_c", nu_u: "ν_u", nu_w: "ν_w",
    sigma0: "σ₀", sigma1: "σ₁", sigma2: "σ₂", eta: "η", eps_mis: "ε_mis",
}

#: One-line glossary for every symbol (``boundcalc explain``).
GLOSSARY: dict[sp.Symbol, str] = {
    m: "width: number of attention heads (even, symmetric init)",
    n: "number of training samples",
    d: "token dimension",
    T: "sequence length (no Transformer bound depends on it, Remark 3)",
    K: "number of projected gradient steps",
    b: "minibatch size of ProjSGD (Proposition 1)",
    delta: "failure probability of each high-probability event",
    rho_c: "projection radius of the readout block c (times 1/sqrt(m) per head)",
    rho_u: "projection radius of the feed-forward block U (times 1/sqrt(m) per head)",
    rho_w: "projection radius of the attention block W (times 1/sqrt(m) per head)",
    nu_c: "sup-norm budget of the transport map v_c",
    nu_u: "sup-norm budget of the transport map v_u",
    nu_w: "sup-norm (Frobenius) budget of the transport map v_w",
    sigma0: "sup |sigma|",
    sigma1: "sup |sigma'|",
    sigma2: "sup |sigma''|",
    eta: "step size",
    eps_mis: "Remark 9: max_j |y_j - f*(X_j)| (0 = realizable)",
    x_max: "input geometry: max token norm (1 a priori)",
    q_max: "input geometry: max query norm (1 a priori)",
    g_max: "input geometry: bound on tr(X J X^T), hence on its Frobenius and operator norms "
           "(1 a priori; <= x_max^2 for every W)",
    u0_max: "a posteriori: measured max_i ||U_i(0)|| in place of the event radius",
    u0_rms: "a posteriori: measured sqrt((1/m) sum_i ||U_i(0)||^2) in place of the head-average "
            "radius",
}

#: Input-geometry symbols; the a-priori statements substitute :data:`A_PRIORI_GEOMETRY`.
GEOMETRY = (x_max, q_max, g_max)
A_PRIORI_GEOMETRY: dict[sp.Symbol, sp.Expr] = {x_max: sp.Integer(1), q_max: sp.Integer(1),
                                               g_max: sp.Integer(1)}

#: Every symbol an a-priori Transformer statement may contain.
ALL = (m, n, d, T, K, b, delta, rho_c, rho_u, rho_w, nu_c, nu_u, nu_w,
       sigma0, sigma1, sigma2, eta, eps_mis)


__all__ = [
    "ALL", "A_PRIORI_GEOMETRY", "GEOMETRY", "GLOSSARY", "K", "T", "UNICODE_NAMES", "b", "d",
    "delta", "eps_mis", "eta", "g_max", "m", "n", "nu_c", "nu_u", "nu_w", "q_max", "rho_c", "rho_u",
    "rho_w", "sigma0", "sigma1", "sigma2", "u0_max", "u0_rms", "x_max",
]
