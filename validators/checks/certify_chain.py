"""The run-measured decomposition of the proof's slack along one run
(``validate theorem1 --decompose``; ``--certify`` is its old name, kept one release).

What it is, and what it is not: the a-priori bound is rebuilt level by level, each proof
inequality replaced by the two sides measured on *this* run, so the ratio of consecutive levels
is the slack of one inequality. Only the a-priori and a-posteriori levels are bounds (the latter
at the run's measured init and input geometry, on the same event); every level below them uses
this run's own residuals and iterates, so it bounds the loss of this run only — it certifies
nothing about another run. (Earlier versions called the levels below the a-posteriori one
"run-certified", which overstated them.) Beside them the summary gives the free yardstick
min(B², Y², R̂(θ_0)) that a bound on min_k R̂(θ_k) must beat to say anything, and the verdicts of
the a-priori and a-posteriori bounds against it.

:mod:`boundcalc.validators.certify` runs ProjGD / ProjSGD and measures every quantity of the proof
at every step (:class:`CertifyRun`, the record it fills, is defined here; r_j, T_j, C_j, e_j and
A_j − M_j are defined in that module's docstring). This module computes, from those measurements,
Theorem 1's a-posteriori constants (:func:`a_posteriori_values`), the chains of levels from the
a-priori bound down to the measured loss (:func:`chains`, labels :func:`level_label`), the table
of measured parts against their a-posteriori bounds (:func:`parts`), which rows are violations
(:func:`is_violation`), and writes the decomposition's files and figure (:func:`write_files`,
:func:`plot_chains`). It never imports ``certify``.

**The chain** (tight route, linear drift; the Cauchy–Schwarz and paper routes are analogous, see
:func:`chains`), O_meas = Ψ_0/(4ηK) + (η/4)·mean_k ‖g_k‖², ε_a = ε_app + ε_mis:

    a-priori       ‖ν‖²/(4ηK) + ηL²B² + B(ε_tay + ε_cf + ε_a)        (boundcalc.calc.api.evaluate)
    a-posteriori   the same with measured u0_rms, x_max, q_max, g_max = x_max²
    Ψ_0 ≤ ‖ν‖², ‖g_k‖² ≤ 4L²B², |T_j| ≤ ε_tay, |C_j| ≤ ε_cf  (measured-constants: each measured)
    (1/n)Σ|r_j| ≤ B, then pointwise |r_j|(|T_j| + |C_j|)   (measured-constants; ε_a a bound)
    |A_j − M_j| ≤ ε_a, |e_j| ≤ |T_j| + |C_j| + |A_j − M_j|, −r_j e_j ≤ |r_j||e_j|, Ψ_K ≥ 0
    (a) with the measured projection slack  =  (1/K)Σ_k R̂(θ_k)  (identity)  ≥  min_k R̂(θ_k)

For ProjSGD the last identity carries the minibatch noise ξ_k = ⟨g_k − ∇R̂(θ_k), θ_k − θ̄⟩
(E[ξ_k | θ_k] = 0), a level of its own marked ``expectation``.

The chain is computed in mpmath (40 digits) from the float64 per-step measurements, so each
comparison of consecutive levels is the comparison of the two sides of one inequality evaluated
on the same measured numbers, with no rounding of its own. A level above the one before it is
a violation (exit 1): for a ``deterministic`` step a derivation bug, for an ``event`` step the
failure of an event of probability ≤ δ.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from boundcalc.calc.evaluator import cached_function

from ..model import Params

#: Per-step scalars recorded at every step k (columns of ``decompose_steps.csv``).
STEP_COLUMNS = (
    "loss",                  # R̂(θ_k)
    "grad_sq",               # ‖∇R̂(θ_k)‖²
    "step_grad_sq",          # ‖g_k‖² (= grad_sq for ProjGD)
    "psi",                   # Ψ_k = ‖θ_k − θ̄‖²
    "drift_inner",           # ⟨∇R̂(θ_k), θ_k − θ̄⟩ from the gradient
    "drift_inner_samples",   # (2/n) Σ_j r_j d_j from the per-sample directional derivatives
    "step_inner",            # ⟨g_k, θ_k − θ̄⟩
    "noise",                 # ξ_k = ⟨g_k − ∇R̂(θ_k), θ_k − θ̄⟩ (0 for ProjGD)
    "mean_r_e",              # (1/n) Σ r_j e_j
    "mean_abs_r_e",          # (1/n) Σ |r_j||e_j|
    "mean_abs_r",            # (1/n) Σ |r_j|
    "max_abs_r",
    "max_abs_T",
    "max_abs_C",
    "max_abs_lin",           # max_j |f_lin,j(θ_k) − f_j(θ_k)|
    "max_abs_C_full",        # max_j |⟨∇f_j(θ_k) − ∇f_j(θ(0)), θ_k − θ̄⟩|
    "max_abs_e",
    "mean_abs_r_TC",         # (1/n) Σ |r_j|(|T_j| + |C_j|)
    "mean_abs_r_lin_C_full",  # (1/n) Σ |r_j|(|f_lin,j − f_j| + |C^full_j|)
    "mean_abs_r_AM",         # (1/n) Σ |r_j||A_j − M_j|
    "identity_residual",     # max_j |d_j − (r_j + e_j)|, d_j along θ_k − θ̄ (recorded steps; NaN
                             # elsewhere, where d_j = D1_j − D2_j by linearity)
    "max_abs_drift",         # max_j |d_j|
    "slack",                 # s_k ≥ 0, the projection's slack in (a)
    "radius_c", "radius_u", "radius_w",   # √m · max_i block displacement of θ_k from θ(0)
)

#: Per-sample vectors kept at the recorded steps (``decompose_samples.npz``).
SAMPLE_ARRAYS = ("r", "T", "C", "lin", "C_full", "drift")


@dataclass
class CertifyRun:
    """What one decomposed run measured (tensors on the CPU, float64)."""

    steps: dict[str, np.ndarray]          # STEP_COLUMNS, each (K,)
    psi_final: float                       # Ψ_K
    loss_final: float                      # R̂(θ_K)
    recorded_steps: list[int]
    samples: dict[str, np.ndarray]         # SAMPLE_ARRAYS at recorded steps, each (R, n)
    A_minus_M: np.ndarray                  # f_lin,j(θ̄) − y_j (n,)
    f0: np.ndarray                         # f(X_j; θ(0)) (n,)
    params: list[Params] | None           # θ_k at the recorded steps (keep_params=True)
    params_final: Params
    seconds: float


# ------------------------------------------------------------------------------ the constants

def _a_posteriori_expressions(route: str) -> tuple[list[str], list, list]:
    """(keys, expressions, symbols) of the a-posteriori constants, terms and bounds of ``route``
    with ε_mis symbolic (``build_bound(eps_mis, a_priori=False, route=route)``; the realizable
    statement is ``theory/aposteriori.py::theorem1_a_posteriori(route)``)."""
    import sympy as sp
    from boundcalc.theory import symbols as S
    from boundcalc.theory.theorem1 import build_bound

    constants, terms, bound = build_bound(S.eps_mis, a_priori=False, route=route)
    exprs = {**{f"constants.{k}": v for k, v in constants.items()},
             **{f"terms.{k}": v for k, v in terms.items()},
             **{f"bound.{k}": v for k, v in bound.items()}}
    syms = sorted(set().union(*(sp.sympify(e).free_symbols for e in exprs.values())),
                  key=lambda s: s.name)
    return list(exprs), list(exprs.values()), syms


def _one_by_one(route: str, values: dict[str, float]) -> list[float]:
    """The a-posteriori expressions of ``route`` evaluated one at a time (sympy, 30 digits): the
    slow path, taken only when the generated code divides by zero; NaN for a quantity undefined
    at this point (none of the bounds the check reports: only the theorem's step size η*, which
    a run with its own η does not use)."""
    import sympy as sp

    keys, exprs, syms = _a_posteriori_expressions(route)
    subs = {sym: sp.Float(values[sym.name], 30) for sym in syms}
    out = []
    for expr in exprs:
        value = sp.sympify(expr).xreplace(subs).evalf(30)
        out.append(float(value) if value.is_real and value.is_finite else math.nan)
    return out


def a_posteriori_values(inputs, route: str, *, eta: float, eps_mis: float,
                        geometry: dict[str, float]) -> dict[str, dict[str, float]]:
    """Theorem 1's a-posteriori constants, terms and bounds on ``route`` (mpmath, 30 digits) at
    ``inputs`` (boundcalc.inputs.params.validate), step ``eta``, ε_mis = ``eps_mis`` and the
    measured ``geometry`` (u0_max, u0_rms, x_max, q_max; g_max = x_max²). The generated code is
    kept in the code cache (:func:`boundcalc.calc.evaluator.cached_function`): only the first run
    builds it."""
    import mpmath
    import sympy as sp
    from boundcalc.theory import symbols as S

    from boundcalc.calc.api import symbol_values

    values = {sym.name: float(sp.N(val, 30)) for sym, val in symbol_values(inputs).items()}
    values.update({S.eta.name: eta, S.eps_mis.name: eps_mis, S.u0_max.name: geometry["u0_max"],
                   S.u0_rms.name: geometry["u0_rms"], S.x_max.name: geometry["x_max"],
                   S.q_max.name: geometry["q_max"], S.g_max.name: geometry["x_max"] ** 2})
    keys, names, func = cached_function(f"theorem1_a_posteriori_{route}",
                                        lambda: _a_posteriori_expressions(route))
    with mpmath.workdps(30):
        try:
            numbers = func(*[mpmath.mpf(values[s]) for s in names])
        except ZeroDivisionError:  # a quantity undefined here (η* when L·B = 0 at ρ = ν = 0)
            numbers = _one_by_one(route, values)
    out: dict[str, dict[str, float]] = {"constants": {}, "terms": {}, "bound": {}}
    for key, val in zip(keys, numbers, strict=True):
        group, name = key.split(".", 1)
        out[group][name] = float(val)
    return out


def float_values(group) -> dict[str, float]:
    """A mapping of numbers (an evaluation's constants or bounds) as floats, its None entries
    (undefined values) left out.

    >>> float_values({"L": 2, "eta_star": None})
    {'L': 2.0}
    """
    return {k: float(v) for k, v in group.items() if v is not None}


# ---------------------------------------------------------------------------------- the chain

#: Stages of the chain, top to bottom: the two bounds (a priori; a posteriori at the measured
#: geometry), then the levels that use this run's own measurements — each deterministic constant
#: replaced by its value along the run (``measured-constants``, called ``run-certified`` before:
#: it bounds this run's loss only), the remaining event terms and steps measured
#: (``run-measured``), and the measured loss itself.
STAGES = ("a-priori", "a-posteriori", "measured-constants", "run-measured", "measured")

#: The stage name earlier versions wrote for ``measured-constants`` (accepted when reading).
OLD_STAGE_NAMES = {"run-certified": "measured-constants"}

#: Stem of the files :func:`write_files` writes (``decompose.json``, …); earlier versions wrote
#: ``certify.*``.
FILE_STEM = "decompose"

#: The chains of the decomposition, one per route variant (the ``route`` of its rows): tight
#: (linear drift), tight (Cauchy–Schwarz drift), paper. Not the calculator's proof routes
#: (:data:`boundcalc.theory.catalog.ROUTES`).
CHAIN_ROUTES = ("tight-linear", "tight-cauchy-schwarz", "paper")


def chains(*, run_steps: dict[str, np.ndarray], psi_final: float, eta: float, sgd: bool,
           prior: dict[str, dict[str, float]], post: dict[str, dict[str, dict[str, float]]],
           eps_mis: float) -> list[dict[str, Any]]:
    """The three chains of levels (module docstring) from the per-step measurements.

    ``prior[route]`` / ``post[route]``: constants and bounds a priori (evaluate) and a posteriori
    (:func:`a_posteriori_values`) for ``tight`` and ``paper``. Every level is computed in mpmath
    at 40 digits from the float64 measurements. Each row: route, level, key, stage, kind
    (``event``, ``deterministic``, ``identity`` or ``expectation``), inequality (what takes the
    level above to this one), value, above, ratio = value/above, slack = above/value, holds.
    """
    import mpmath

    mp = mpmath.mp
    with mpmath.workdps(40):
        s = {k: [mp.mpf(float(x)) for x in v] for k, v in run_steps.items()}
        K = len(s["loss"])
        Km = mp.mpf(K)

        def mean(values) -> Any:
            return mp.fsum(values) / Km

        eta_m = mp.mpf(eta)
        psi0, psiK = s["psi"][0], mp.mpf(psi_final)
        G = s["step_grad_sq"]
        opt_meas = psi0 / (4 * eta_m * Km) + eta_m / 4 * mean(G)
        Q = mean(s["loss"])
        noise = mean(s["noise"])
        slack_sum = mp.fsum(s["slack"])
        eps_m = mp.mpf(eps_mis)
        rows: list[dict[str, Any]] = []

        def tail(route: str, first: list[tuple], pointwise_key: str, pointwise_max: tuple,
                 pointwise_text: str, triangle_text: str, eps_a) -> None:
            """The levels of ``route`` from 'every constant measured' down to the min loss."""
            m1, m2 = pointwise_max
            levels = list(first)
            lv_abs = opt_meas + mean([ar * (x + y + eps_a) for ar, x, y in
                                      zip(s["mean_abs_r"], s[m1], s[m2], strict=True)])
            if route != "tight-cauchy-schwarz":
                levels.append(("mean_abs_r", "measured-constants", "deterministic",
                               "(c) (1/n) sum_j |r_j| <= B (Lemma 6)", lv_abs))
            levels.append(("pointwise", "measured-constants", "deterministic", pointwise_text,
                           opt_meas + mean([x + ar * eps_a for x, ar in
                                            zip(s[pointwise_key], s["mean_abs_r"],
                                                strict=True)])))
            levels.append(("app_measured", "run-measured", "event",
                           "|A_j - M_j| = |f_lin,j(theta_bar) - y_j| <= eps_app + eps_mis "
                           "(Lemma 5 on E_app; teacher Monte Carlo error <= eps_T)",
                           opt_meas + mean([x + y for x, y in
                                            zip(s[pointwise_key], s["mean_abs_r_AM"],
                                                strict=True)])))
            levels.append(("triangle", "run-measured", "deterministic", triangle_text,
                           opt_meas + mean(s["mean_abs_r_e"])))
            levels.append(("sign", "run-measured", "deterministic",
                           "(c) -r_j e_j <= |r_j||e_j|: the telescoped sum of (a) with measured "
                           "terms", opt_meas - mean(s["mean_r_e"])))
            levels.append(("psi_final", "run-measured", "deterministic",
                           "Psi_K = ||theta_K - theta_bar||^2 >= 0",
                           opt_meas - mean(s["mean_r_e"]) - psiK / (4 * eta_m * Km)))
            telescoped = (opt_meas - mean(s["mean_r_e"])
                          - (psiK + slack_sum) / (4 * eta_m * Km))
            levels.append(("projection", "run-measured", "deterministic",
                           "(a) projection non-expansive: measured slack s_k >= 0 subtracted",
                           telescoped))
            if sgd:
                levels.append(("average_plus_noise", "measured", "identity",
                               "identity: (1/K) sum_k [R(theta_k) + xi_k/2] (telescoping)",
                               Q + noise / 2))
                levels.append(("average", "measured", "expectation",
                               "minibatch noise E[xi_k | theta_k] = 0 removed (holds in "
                               "expectation only)", Q))
            else:
                levels.append(("average", "measured", "identity",
                               "identity: (1/K) sum_k R(theta_k) (telescoping)", Q))
            levels.append(("min", "measured", "deterministic", "min_k R <= (1/K) sum_k R",
                           min(s["loss"])))
            above = None
            for i, (key, stage, kind, text, value) in enumerate(levels):
                row = {"route": route, "level": i, "key": key, "stage": stage, "kind": kind,
                       "label": level_label(route, key, sgd), "inequality": text,
                       "value": float(value)}
                if above is None:
                    row.update(above=None, ratio=None, slack=None, holds=None)
                else:
                    holds = bool(value <= above) if kind != "identity" else None
                    row.update(above=float(above),
                               ratio=float(value / above) if above != 0 else math.inf,
                               slack=float(above / value) if value != 0 else math.inf,
                               holds=holds)
                    if kind == "identity":
                        row["identity_residual"] = float(abs(value - above)
                                                         / max(abs(value), abs(above)))
                rows.append(row)
                above = value

        for route in CHAIN_ROUTES:
            family = "paper" if route == "paper" else "tight"
            pc, post_all = prior[family], post[family]
            post_r = post_all["constants"]
            L, B = mp.mpf(post_r["lipschitz_L"]), mp.mpf(post_r["residual_envelope_B"])
            nu2 = mp.mpf(post_r["transport_norm"]) ** 2
            eps_a = mp.mpf(post_r["eps_app"]) + eps_m
            if family == "tight":
                e1, e2 = mp.mpf(post_r["eps_taylor"]), mp.mpf(post_r["eps_cf"])
                m1, m2 = "max_abs_T", "max_abs_C"
                pw_key = "mean_abs_r_TC"
                names = ("|T_j| <= eps_taylor (Taylor remainder)",
                         "|C_j| <= eps_cf (change of feature, theta_bar - theta(0) half)")
                pw_text = ("(c) pointwise: (1/n) sum_j |r_j|(|T_j| + |C_j|) <= "
                           "(1/n) sum_j |r_j| * (max_j |T_j| + max_j |C_j|)")
                tri = "|e_j| <= |T_j| + |C_j| + |A_j - M_j| (triangle)"
            else:
                e1, e2 = mp.mpf(post_r["eps_lin"]), mp.mpf(post_r["eps_cf"])
                m1, m2 = "max_abs_lin", "max_abs_C_full"
                pw_key = "mean_abs_r_lin_C_full"
                names = ("|f_lin,j - f_j| <= eps_lin (Lemma 3)",
                         "|<grad f_j(theta_k) - grad f_j(theta(0)), theta_k - theta_bar>| <= "
                         "eps_cf (paper's change of feature)")
                pw_text = ("(c) pointwise: (1/n) sum_j |r_j|(|f_lin,j - f_j| + |C_full,j|) <= "
                           "(1/n) sum_j |r_j| * (max_j |f_lin,j - f_j| + max_j |C_full,j|)")
                tri = "|e_j| <= |f_lin,j - f_j| + |C_full,j| + |A_j - M_j| (triangle)"
            if route == "tight-cauchy-schwarz":
                def level(opt, eps):
                    return (eps / 2 + mp.sqrt(eps**2 / 4 + opt)) ** 2
                prior_key = "min_iterate_cauchy_schwarz"
            else:
                def level(opt, eps, B=B):
                    return opt + B * eps
                prior_key = ("min_iterate_linear_drift" if family == "tight"
                             else "min_iterate")
            opt_post = nu2 / (4 * eta_m * Km) + eta_m * L**2 * B**2
            opt_psi = psi0 / (4 * eta_m * Km) + eta_m * L**2 * B**2
            eps_post = e1 + e2 + eps_a
            recomposed = level(opt_post, eps_post)
            evaluated = mp.mpf(post_all["bound"][prior_key])
            if abs(recomposed - evaluated) > mp.mpf(1e-9) * abs(evaluated):
                raise RuntimeError(f"{route}: the recomposed a-posteriori bound {recomposed} "
                                   f"differs from theory's {evaluated}")
            if route == "tight-cauchy-schwarz":
                eps_T = mp.sqrt(mean([(x + e2 + eps_a) ** 2 for x in s[m1]]))
                eps_TC = mp.sqrt(mean([(x + y + eps_a) ** 2
                                       for x, y in zip(s[m1], s[m2], strict=True)]))
            else:
                eps_T = mean(s[m1]) + e2 + eps_a
                eps_TC = mean([x + y for x, y in zip(s[m1], s[m2], strict=True)]) + eps_a
            geometry = ("measured geometry: u0_rms <= u_bar (E_avg), x_max, q_max <= 1, "
                        "g_max = x_max^2" if family == "tight" else
                        "measured geometry: u0_max <= u_inf (E_U), x_max, q_max <= 1, "
                        "g_max = x_max^2")
            first = [
                ("a_priori", "a-priori", "bound",
                 f"a-priori bound ({route}), boundcalc.calc.api.evaluate", mp.mpf(pc[prior_key])),
                ("a_posteriori", "a-posteriori", "event", geometry, recomposed),
                ("psi0", "measured-constants", "deterministic",
                 "Psi_0 = ||theta(0) - theta_bar||^2 <= ||nu||^2", level(opt_psi, eps_post)),
                ("grad_sq", "measured-constants", "deterministic",
                 "(d) ||g_k||^2 <= 4 L^2 B^2 (Lemma 6)", level(opt_meas, eps_post)),
                ("first_part", "measured-constants", "deterministic",
                 names[0] + ", per step max_j", level(opt_meas, eps_T)),
                ("second_part", "measured-constants", "deterministic",
                 names[1] + ", per step max_j", level(opt_meas, eps_TC)),
            ]
            if route == "tight-cauchy-schwarz":
                sqrtQ = mp.sqrt(Q)
                first.append(("quadratic", "measured-constants",
                              "expectation" if sgd else "deterministic",
                              "x - eps sqrt(x) <= O  =>  x <= (eps/2 + sqrt(eps^2/4 + O))^2, "
                              "at x = (1/K) sum_k R(theta_k)", opt_meas + eps_TC * sqrtQ))
                first.append(("cauchy_schwarz_k", "measured-constants", "deterministic",
                              "Cauchy-Schwarz over k: mean_k sqrt(R_k) eps_k <= "
                              "sqrt(mean R) sqrt(mean eps_k^2)",
                              opt_meas + mean([mp.sqrt(R) * (x + y + eps_a) for R, x, y in
                                               zip(s["loss"], s[m1], s[m2], strict=True)])))
                first.append(("mean_abs_r", "measured-constants", "deterministic",
                              "(c) (1/n) sum_j |r_j| <= sqrt(R) (Cauchy-Schwarz over j)",
                              opt_meas + mean([ar * (x + y + eps_a) for ar, x, y in
                                               zip(s["mean_abs_r"], s[m1], s[m2],
                                                   strict=True)])))
            tail(route, first, pw_key, (m1, m2), pw_text, tri, eps_a)
    return rows


_LABELS = {
    "a_priori": "a-priori bound",
    "a_posteriori": "measured geometry (u0, x_max, q_max)",
    "psi0": "Ψ₀ ≤ ‖ν‖²",
    "grad_sq": "(d) ‖g_k‖² ≤ 4L²B²",
    "quadratic": "x − ε√x ≤ O solved (Cauchy–Schwarz drift)",
    "cauchy_schwarz_k": "Cauchy–Schwarz over k",
    "pointwise": "pointwise Σ|r_j|(…) ≤ Σ|r_j|·max(…)",
    "app_measured": "|A_j − M_j| ≤ ε_app + ε_mis",
    "sign": "−r_j e_j ≤ |r_j||e_j| (telescoped (a))",
    "psi_final": "Ψ_K ≥ 0",
    "projection": "(a) projection slack s_k ≥ 0",
    "average_plus_noise": "= mean_k [R̂(θ_k) + ξ_k/2]",
    "min": "min_k R̂ ≤ mean_k R̂",
}


def level_label(route: str, key: str, sgd: bool = False) -> str:
    """A short label of the inequality that leads to level ``key`` of ``route`` (figure,
    tables)."""
    paper = route == "paper"
    special = {
        "first_part": "|f_lin − f| ≤ ε_lin" if paper else "|T_j| ≤ ε_tay",
        "second_part": "|C^full_j| ≤ ε_cf (paper)" if paper else "|C_j| ≤ ε_cf",
        "mean_abs_r": ("(1/n)Σ|r_j| ≤ √R̂" if route == "tight-cauchy-schwarz"
                       else "(1/n)Σ|r_j| ≤ B"),
        "triangle": ("|e_j| ≤ |f_lin − f| + |C^full| + |A − M|" if paper
                     else "|e_j| ≤ |T_j| + |C_j| + |A_j − M_j|"),
        "average": ("E[ξ_k | θ_k] = 0 → mean_k R̂(θ_k)" if sgd
                    else "= mean_k R̂(θ_k) (identity)"),
    }
    return special.get(key, _LABELS.get(key, key))


# ------------------------------------------------------------------------------ the parts table

def parts(*, run: CertifyRun, post: dict[str, dict[str, dict[str, float]]],
          prior: dict[str, dict[str, float]], geometry: dict[str, float],
          eps_mis: float, eps_app_prior: float) -> list[dict[str, Any]]:
    """Every measured piece of the proof against the a-posteriori bound it must respect."""
    s = run.steps
    tight, paper = post["tight"]["constants"], post["paper"]["constants"]
    am = float(np.abs(run.A_minus_M).max())
    rows = []

    def row(name, measured, bound, kind, text, **extra):
        measured, bound = float(measured), float(bound)
        rows.append({"name": name, "measured": measured, "bound": bound,
                     "ratio": measured / bound if bound > 0 else None,
                     "holds": None if kind == "information" else bool(measured <= bound),
                     "kind": kind, "inequality": text, **extra})

    row("psi0", s["psi"][0], tight["transport_norm"] ** 2, "deterministic",
        "Psi_0 = ||theta(0) - theta_bar||^2 <= ||nu||^2")
    for fam, c in (("tight", tight), ("paper", paper)):
        row(f"{fam}.grad_sq", s["step_grad_sq"].max(),
            4 * c["lipschitz_L"] ** 2 * c["residual_envelope_B"] ** 2, "deterministic",
            f"max_k ||g_k||^2 <= 4 L^2 B^2 ({fam} L, B)")
        row(f"{fam}.residual", s["max_abs_r"].max(), c["residual_envelope_B"], "deterministic",
            f"max_k,j |r_j| <= B ({fam})")
    row("tight.T", s["max_abs_T"].max(), tight["eps_taylor"], "deterministic",
        "max_k,j |T_j| <= eps_taylor")
    row("tight.C", s["max_abs_C"].max(), tight["eps_cf"], "deterministic",
        "max_k,j |C_j| <= eps_cf (tight)")
    row("tight.lin", s["max_abs_lin"].max(), tight["eps_lin"], "deterministic",
        "max_k,j |f_lin,j - f_j| <= eps_lin (head-average event)")
    row("paper.lin", s["max_abs_lin"].max(), paper["eps_lin"], "deterministic",
        "max_k,j |f_lin,j - f_j| <= eps_lin (max event, Lemma 3)")
    row("paper.C_full", s["max_abs_C_full"].max(), paper["eps_cf"], "deterministic",
        "max_k,j |<grad f_j(theta_k) - grad f_j(theta(0)), theta_k - theta_bar>| <= eps_cf "
        "(paper)")
    row("tight.A_vs_teacher", am, tight["eps_app"] + eps_mis, "event",
        "max_j |f_lin,j(theta_bar) - f*_M(X_j)| = max_j |A_j - M_j| <= eps_app + eps_T",
        eps_app=tight["eps_app"], ratio_to_eps_app=am / tight["eps_app"],
        eps_app_a_priori=eps_app_prior)
    row("tight.e", s["max_abs_e"].max(), tight["eps_drift"], "event",
        "max_k,j |e_j| <= eps_drift = eps_taylor + eps_app + eps_cf + eps_mis")
    row("geometry.u0_rms", geometry["u0_rms"], prior["tight"]["u_bar"], "event",
        "u0_rms = sqrt((1/m) sum_i ||U_i(0)||^2) <= u_bar (E_avg)")
    row("geometry.u0_max", geometry["u0_max"], prior["tight"]["u_inf"], "event",
        "u0_max = max_i ||U_i(0)|| <= u_inf (E_U: the paper route's event only; the tight "
        "route's 1 - 2 delta statement is on E_avg and does not use it)", route="paper")
    for key, what in (("x_max", "token"), ("q_max", "query")):
        row(f"geometry.{key}", geometry[key], 1.0, "information",
            f"max {what} norm, computed in float64 (information: the a-posteriori bounds use "
            "this measured value, not 1)")
    for j, block in enumerate("cuw"):
        row(f"radius_{block}", s[f"radius_{block}"].max(), geometry["rho"][j], "information",
            f"sqrt(m) max_k,i displacement of the {block} blocks vs rho (theta_k in Omega_rho "
            "up to the rounding of model.project: a clipped block is rescaled in floating point "
            "and can read a few ulps outside its ball)")
    row("slack_min", -float(s["slack"].min()), 0.0, "deterministic",
        "projection slack s_k >= 0 at every step (measured: -min_k s_k <= 0)",
        steps_with_active_projection=int((s["slack"] > 0).sum()))
    return rows


def is_violation(row: dict[str, Any]) -> bool:
    """A level above the level before it, or a measured part above its bound, on a step that is
    not an identity and not an expectation-only step."""
    return row.get("holds") is False and row.get("kind") not in ("identity", "expectation")


# ------------------------------------------------------------------------- files and the figure

_JSON_STEP_KEYS = ("k", *STEP_COLUMNS)


def json_ready(result: dict[str, Any]) -> dict[str, Any]:
    """A decomposed run's result as it is stored (``decompose.json``, a run directory's cell):
    summary, chain, parts, the recorded steps and the per-step scalars as lists; the per-sample
    arrays and parameters left out (they go to the ``.npz`` files)."""
    steps = result["steps"]
    return {"summary": result["summary"], "chain": result["chain"], "parts": result["parts"],
            "recorded_steps": list(result["recorded_steps"]),
            "steps": {k: np.asarray(steps[k]).tolist() for k in _JSON_STEP_KEYS}}


def write_files(folder: str | Path, results: Sequence[dict[str, Any]],
                samples: dict[str, dict[str, np.ndarray]] | None = None) -> list[Path]:
    """``decompose.json`` (summary, chain, parts, per-step scalars of every run),
    ``decompose.csv`` (the chains and parts, a ``table`` column says which),
    ``decompose_steps.csv`` (every step of every run), ``decompose_samples.npz`` (per-sample
    vectors at the recorded steps, keys ``<statement>-seed<s>.<name>``) and ``decompose.pdf`` /
    ``decompose.png`` in ``folder`` (:data:`FILE_STEM`; ``certify.*`` before)."""
    from boundcalc.files import write_atomic
    from boundcalc.runs.directory import dumps, records_to_csv

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    ready = [json_ready(r) if "samples" in r else r for r in results]
    stem = folder / FILE_STEM
    write_atomic(stem.with_suffix(".json"), dumps(ready))
    table = ([{"table": "chain", **row} for r in ready for row in r["chain"]]
             + [{"table": "part", **row} for r in ready for row in r["parts"]])
    write_atomic(stem.with_suffix(".csv"), records_to_csv(table))
    step_rows = []
    for r in ready:
        tag = {"statement": r["summary"]["statement"], "seed": r["summary"]["seed"]}
        cols = r["steps"]
        step_rows.extend({**tag, **{k: cols[k][i] for k in _JSON_STEP_KEYS}}
                         for i in range(len(cols["k"])))
    steps_csv = folder / f"{FILE_STEM}_steps.csv"
    write_atomic(steps_csv, records_to_csv(step_rows))
    paths = [stem.with_suffix(".json"), stem.with_suffix(".csv"), steps_csv]
    if samples:
        save_npz(folder / f"{FILE_STEM}_samples.npz",
                 {f"{key}.{name}": arr for key, arrays in samples.items()
                   for name, arr in arrays.items()})
        paths.append(folder / f"{FILE_STEM}_samples.npz")
    paths += plot_chains(ready, stem)
    return paths


def save_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """``np.savez_compressed`` of ``arrays`` to ``path``, written atomically (a temporary file in
    the folder, then replaced), so a reader never sees half a file.

    >>> save_npz(Path("x.npz"), {"a": np.arange(3)})
    >>> np.load("x.npz")["a"].tolist()
    [0, 1, 2]
    """
    tmp = path.with_name(f".{path.stem}.tmp.npz")
    np.savez_compressed(tmp, **arrays)
    tmp.replace(path)


_STAGE_COLORS = {"a-priori": "tab:red", "a-posteriori": "tab:orange",
                 "measured-constants": "tab:blue", "run-measured": "tab:purple",
                 "measured": "tab:green"}


def plot_chains(results: Sequence[dict[str, Any]], stem: Path) -> list[Path]:
    """One row of panels per (statement, seed), one panel per route: a horizontal bar per level
    (log scale), labelled with the inequality that leads to it, coloured by stage, and a dashed
    line at the free yardstick min(B², Y², R̂(θ_0)) (summary ``free_bound``), which a bound on
    min_k R̂(θ_k) must beat to say anything."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    rows = len(results)
    fig, axes = plt.subplots(rows, len(CHAIN_ROUTES), figsize=(6.4 * len(CHAIN_ROUTES), 5.2 * rows),
                             squeeze=False, constrained_layout=True)
    for r_i, res in enumerate(results):
        summ = res["summary"]
        for c_i, route in enumerate(CHAIN_ROUTES):
            ax = axes[r_i][c_i]
            levels = [row for row in res["chain"] if row["route"] == route]
            y = np.arange(len(levels))[::-1]
            values = np.array([max(row["value"], 1e-300) for row in levels])
            colors = [_STAGE_COLORS[OLD_STAGE_NAMES.get(row["stage"], row["stage"])]
                      for row in levels]
            ax.barh(y, values, color=colors, alpha=0.8)
            for yy, row in zip(y, levels, strict=True):
                note = "" if row["slack"] is None else f"  ×{row['slack']:.3g}"
                bad = " VIOLATION" if is_violation(row) else ""
                ax.text(row["value"], yy, f" {row['value']:.3g}{note}{bad}", va="center",
                        fontsize=6.5, color="red" if bad else "black")
            ax.set_yticks(y)
            ax.set_yticklabels([f"{row['level']}. {row['label']}" for row in levels],
                               fontsize=7)
            ax.set_xscale("log")
            lo = max(min(values) / 10, 1e-300)
            free = summ.get("free_bound")
            if isinstance(free, (int, float)) and free > 0:
                ax.axvline(free, color="black", linestyle="--", linewidth=0.9)
                lo = min(lo, free / 10)
            ax.set_xlim(lo, max(values) * 1e3)
            ax.grid(alpha=0.3, axis="x", which="major")
            ax.set_title(f"{summ['statement']} seed {summ['seed']}: {route}\n"
                         f"m={summ['m']}, n={summ['n']}, d={summ['d']}, T={summ['T']}, "
                         f"K={summ['K']}, eta={summ['eta']:.3g}", fontsize=8)
            ax.set_xlabel("levels 0-1 bound min_k R(theta_k); below: this run's own "
                          "measurements; ×: slack to the level above", fontsize=7)
    handles: list[Any] = [Patch(color=c, label=s) for s, c in _STAGE_COLORS.items()]
    handles.append(Line2D([], [], color="black", linestyle="--", linewidth=0.9,
                          label="free yardstick min(B², Y², R(θ_0)): a bound above it says "
                                "nothing"))
    fig.legend(handles=handles, loc="outside lower center", ncol=len(handles), fontsize=8,
               frameon=False)
    paths = [stem.with_suffix(".png"), stem.with_suffix(".pdf")]
    for path in paths:
        fig.savefig(path, dpi=120)
    plt.close(fig)
    return paths


__all__ = [
    "CHAIN_ROUTES", "FILE_STEM", "OLD_STAGE_NAMES", "SAMPLE_ARRAYS", "STAGES", "STEP_COLUMNS",
    "CertifyRun", "a_posteriori_values",
    "chains", "is_violation", "level_label", "parts", "plot_chains", "write_files",
]
