"""Labels of the primary paper's statements: one meaning line and one LaTeX symbol per key.

Every :class:`~boundcalc.theory.statement.Statement` of Arda, Cayci & Eryilmaz, *Finite-Time
Analysis of Gradient Descent for Shallow Transformers* (AISTATS 2026) carries, next to its sympy
expressions, a ``descriptions`` table (one line per key of ``constants`` / ``terms`` / ``bound``,
shown by the calculator's tables and ``explain``) and a ``latex_names`` table (the symbol printed
by ``--symbolic`` and the LaTeX tables). The tables live here, apart from the formulas, so that
Definition 1, the lemmas, Theorem 1, Proposition 1, Remark 9 and Proposition 2 share one copy
and no lemma module has to import Theorem 1 for its labels. Pure data: no sympy.

* :data:`DESCRIPTIONS` / :data:`TIGHT_DESCRIPTIONS`: Theorem 1's keys on the paper route and on
  the tight route (Theorem 1, Proposition 1, Remark 9 and their a-posteriori form);
* :data:`LATEX_NAMES`: LaTeX symbol of every Theorem 1 key (both routes);
* :data:`LEMMA_DESCRIPTIONS`: Definition 1 and Lemmas 2, 3, 5, 6 (Theorem 1's paper-route lines
  plus the per-lemma constants);
* :data:`PROP2_DESCRIPTIONS` / :data:`PROP2_LATEX_NAMES`: Proposition 2 (the IndRNN).
"""

from __future__ import annotations

#: Meaning of every key of Theorem 1 on the paper route (also the lemmas' shared lines).
DESCRIPTIONS: dict[str, str] = {
    "u_inf": "Definition 1 max event E_U: max_i ||U_i(0)|| <= u_inf w.p. >= 1 - delta",
    "u_max": "max event E_U: bound on every ||U_i|| over Omega_rho (eq. 9)",
    "lipschitz_L": "Lemma 2, max event E_U: Lipschitz constant of theta -> f(X; theta) on "
                   "Omega_rho",
    "smoothness_beta": "Lemma 2, max event E_U: smoothness (Hessian operator norm) on Omega_rho",
    "eps_lin_cap": "free cap on eps_lin, no Taylor expansion: c_max min(G r, 2 sqrt(m) sigma0) "
                   "+ G(u_inf) r, G = G(u_max)",
    "eps_lin": "Lemma 3, max event E_U: sup |f - f_lin| on Omega_rho (min with eps_lin_cap)",
    "eps_app_cap": "free cap on eps_app, no concentration: Y + B0 + B_w u_inf >= |f*| + "
                   "|f_lin(theta_bar)| on E_U",
    "eps_app": "Lemma 5 (d degrees of freedom): max_j |f_lin(X_j; theta_bar) - f*(X_j)| w.p. >= "
               "1 - delta (min with eps_app_cap)",
    "eps_cf_cap": "free cap on eps_cf, no Hessian: (rho_c + nu_c) min(G r/sqrt(m), 2 sigma0) + "
                  "(r + r_nu)(c_max G + G(u_inf))",
    "eps_cf": "max event E_U: change of feature |<grad f(theta) - grad f(theta(0)), theta - "
              "theta_bar>| (min with eps_cf_cap)",
    "output_envelope_F_cap": "sqrt(m) c_max sigma0 >= |f| (bounded activation): free cap on F",
    "output_envelope_F": "Lemma 6, max event E_U: sup |f| on Omega_rho (min with "
                         "output_envelope_F_cap)",
    "label_envelope_Y": "Lemma 6: sup |y| for realizable labels (+ eps_mis)",
    "residual_envelope_B": "Lemma 6, max event E_U: sup |f - y| on Omega_rho",
    "trivial_bound_B2": "B^2 >= R(theta) for every theta in Omega_rho: a bound above it is vacuous",
    "initial_loss_bound": "Y^2 >= R(theta_0) = mean y^2 (f(theta(0)) = 0) >= min_k R(theta_k): "
                          "a min_iterate above it is vacuous",
    "transport_norm": "||nu||: bound on ||theta(0) - theta_bar||",
    "theorem_step_size": "eta* = ||nu|| / (2 L B sqrt(K)), minimiser of the optimization term",
    "optimization": "||nu||^2/(4 eta K) + eta L^2 B^2",
    "linearization": "B * eps_lin",
    "approximation": "B * eps_app",
    "change_of_feature": "B * eps_cf",
    "misspecification": "B * eps_mis (Remark 9)",
    "min_iterate": "paper route: bound on min_{k<K} R(theta_k) (and on the average loss)",
    "average_iterate": "bound on R at the average iterate (1/K) sum_{k<K} theta_k",
}

#: Meaning of every key of Theorem 1 on the tight route: the paper-route lines, those whose meaning
#: changes rewritten, plus the tight-only keys.
TIGHT_DESCRIPTIONS: dict[str, str] = {
    **DESCRIPTIONS,
    "u_inf": "Definition 1 max event E_U: max_i ||U_i(0)|| <= u_inf; only beta uses it here",
    "u_max": "max event E_U: bound on every ||U_i|| over Omega_rho; only beta uses it here",
    "u_bar": "head-average event E_avg: sqrt((1/m) sum_i ||U_i(0)||^2) <= u_bar w.p. >= 1 - delta",
    "u_rms": "head-average event E_avg: u_bar + rho_u/sqrt(m) >= rms over heads of ||U_i|| bound",
    "lipschitz_L": "Lemma 2, head-average event E_avg: sup ||grad f|| on Omega_rho",
    "smoothness_beta": "Lemma 2, max event E_U: smoothness on Omega_rho (reported, not used)",
    "eps_lin_cap": "free cap on eps_lin, no Taylor expansion: c_max min(G r, 2 sqrt(m) sigma0) "
                   "+ G(u_bar) r, G = G(u_rms), E_avg",
    "eps_lin": "Lemma 3, head-average event E_avg: sup |f - f_lin| (used by average_iterate; "
               "min with eps_lin_cap)",
    "eps_taylor_cap": "free cap on eps_taylor, no Hessian: min(G r, 2 sqrt(m) sigma0) + c_max G r, "
                      "G = G(u_rms), E_avg",
    "eps_taylor": "E_avg: |f_lin - f + <grad f(theta) - grad f(theta(0)), theta - theta(0)>| "
                  "(min with eps_taylor_cap)",
    "eps_app_cap": "free cap on eps_app, no concentration: Y + B0 + B_w u_bar >= |f*| + "
                   "|f_lin(theta_bar)| on E_avg",
    "eps_app": "Lemma 5, d-free attention part: max_j |f_lin(X_j; theta_bar) - f*(X_j)| w.p. >= "
               "1 - delta (min with eps_app_cap)",
    "eps_cf_cap": "free cap on eps_cf, no Hessian: nu_c min(G r/sqrt(m), 2 sigma0) + "
                  "r_nu (c_max G + G(u_bar)), G = G(u_rms), E_avg",
    "eps_cf": "E_avg: change of feature |<grad f(theta) - grad f(theta(0)), theta_bar - "
              "theta(0)>| (min with eps_cf_cap)",
    "eps_drift": "eps_taylor + eps_app + eps_cf (+ eps_mis) >= |e_j|, the drift error per sample",
    "output_envelope_F": "Lemma 6, E_avg: sup |f| on Omega_rho (min with output_envelope_F_cap)",
    "label_envelope_Y": "Lemma 6, d-free: sup |y| for realizable labels (+ eps_mis)",
    "residual_envelope_B": "Lemma 6, E_avg: sup |f - y| on Omega_rho",
    "linearization": "B * eps_taylor",
    "min_iterate": "tight route: min of the linear-drift and Cauchy-Schwarz bounds on "
                   "min_{k<K} R(theta_k) (and on the average loss)",
    "min_iterate_linear_drift": "optimization + B * eps_drift: drift error bounded with |r_j| <= B",
    "min_iterate_cauchy_schwarz": "(eps_drift/2 + sqrt(eps_drift^2/4 + optimization))^2: drift "
                                  "error bounded with (1/n) sum |r_j| <= sqrt(R)",
}

#: Meaning of every key of Theorem 1 on the gradnorm route (derivations.md §7.9): the tight route's
#: lines plus the gradient-norm form, its step and its margin a = 1 - eta L^2.
GRADNORM_DESCRIPTIONS: dict[str, str] = {
    **TIGHT_DESCRIPTIONS,
    "theorem_step_size": "eta_g = ||nu|| / (2 L sqrt(K) eps_drift + 2 ||nu|| L^2): "
                         "near-minimiser of the gradient-norm form, eta_g L^2 < 1/2",
    "step_margin_a": "a = 1 - eta L^2; the gradient-norm form uses a' = max(a, eps_drift/B)",
    "min_iterate": "gradnorm route: min of the linear-drift, Cauchy-Schwarz and gradient-norm "
                   "bounds on min_{k<K} R(theta_k) (and on the average loss)",
    "min_iterate_gradient_cauchy_schwarz": "(eps_drift/(2a') + sqrt(eps_drift^2/(4a'^2) + "
                                           "||nu||^2/(4 eta K a')))^2, a' = max(a, eps_drift/B): "
                                           "drift by Cauchy-Schwarz and ||grad R||^2 <= 4 L^2 R",
}

#: Meaning of every key of Theorem 1 on the joint route (derivations.md §7.7 without §7.10's
#: block bounds): the tight route's lines.
JOINT_DESCRIPTIONS: dict[str, str] = {
    **TIGHT_DESCRIPTIONS,
    "min_iterate": "joint route: min of the linear-drift and Cauchy-Schwarz bounds on "
                   "min_{k<K} R(theta_k) (and on the average loss), joint (U, W) norms",
}

#: Meaning of every key of Theorem 1 on the blocks route (derivations.md §7.10 with §2.1's
#: constant 32/27 in H: the default route before §2.2): the tight route's lines.
BLOCKS_DESCRIPTIONS: dict[str, str] = {
    **TIGHT_DESCRIPTIONS,
    "min_iterate": "blocks route: min of the linear-drift and Cauchy-Schwarz bounds on "
                   "min_{k<K} R(theta_k) (and on the average loss), H with 32/27",
}

#: LaTeX symbol of every Theorem 1 key (the tight route renames ``linearization``).
LATEX_NAMES: dict[str, str] = {
    "u_inf": r"u_\infty", "u_max": r"u_{\max}", "lipschitz_L": "L",
    "u_bar": r"\bar u", "u_rms": r"u_{\mathrm{rms}}",
    "smoothness_beta": r"\beta", "eps_lin": r"\varepsilon_{\mathrm{lin}}",
    "eps_taylor": r"\varepsilon_{\mathrm{tay}}", "eps_drift": r"\varepsilon",
    "eps_app": r"\varepsilon_{\mathrm{app}}", "eps_cf": r"\varepsilon_{\mathrm{cf}}",
    "eps_lin_cap": r"\varepsilon_{\mathrm{lin}}^{\mathrm{cap}}",
    "eps_taylor_cap": r"\varepsilon_{\mathrm{tay}}^{\mathrm{cap}}",
    "eps_app_cap": r"\varepsilon_{\mathrm{app}}^{\mathrm{cap}}",
    "eps_cf_cap": r"\varepsilon_{\mathrm{cf}}^{\mathrm{cap}}",
    "output_envelope_F_cap": r"F^{\mathrm{cap}}", "output_envelope_F": "F",
    "label_envelope_Y": "Y", "residual_envelope_B": "B",
    "trivial_bound_B2": "B^2", "initial_loss_bound": "Y^2",
    "transport_norm": r"\|\nu\|", "theorem_step_size": r"\eta^\star",
    "optimization": r"\mathcal{E}_{\mathrm{opt}}", "linearization": r"B\varepsilon_{\mathrm{lin}}",
    "approximation": r"B\varepsilon_{\mathrm{app}}",
    "change_of_feature": r"B\varepsilon_{\mathrm{cf}}",
    "misspecification": r"B\varepsilon_{\mathrm{mis}}",
    "min_iterate": r"\min_{k<K}\hat R(\theta_k)", "average_iterate": r"\hat R(\bar\theta_K)",
    "min_iterate_linear_drift": r"\mathcal{E}_{\mathrm{opt}} + B\varepsilon",
    "min_iterate_cauchy_schwarz": r"\bigl(\tfrac{\varepsilon}{2} + \sqrt{\tfrac{\varepsilon^2}{4}"
                                  r" + \mathcal{E}_{\mathrm{opt}}}\bigr)^2",
    "step_margin_a": "a",
    "min_iterate_gradient_cauchy_schwarz": r"\bigl(\tfrac{\varepsilon}{2a'} + \sqrt{\tfrac{"
                                           r"\varepsilon^2}{4a'^2} + \tfrac{\|\nu\|^2}"
                                           r"{4\eta K a'}}\bigr)^2",
}

#: Definition 1 and Lemmas 2, 3, 5, 6: Theorem 1's lines plus the per-lemma constants.
LEMMA_DESCRIPTIONS: dict[str, str] = {
    **DESCRIPTIONS,
    "u_bar": TIGHT_DESCRIPTIONS["u_bar"],
    # the lemma5 statement needs no event on U(0) and keeps Lemma 5's eps_app uncapped
    "eps_app": "Lemma 5 (d degrees of freedom): max_j |f_lin(X_j; theta_bar) - f*(X_j)| w.p. >= "
               "1 - delta",
    "c_max": "bound on |c_i| over Omega_rho (eq. 9)",
    "head_gradient_G": "G(u_max) = sigma1 sqrt(1 + u_max^2): per-head (U, W) gradient bound",
    "head_hessian_H": "H(u_max): per-head (U, W) Hessian operator-norm bound",
    "r_uw": "sqrt(rho_u^2 + rho_w^2)",
    "log_factor": "log(4n/delta): union over samples, signs and parts",
    "loss_gradient_envelope": "2 L B >= ||grad R(theta)|| on Omega_rho",
}

#: Proposition 2 (ProjGD on the IndRNN).
PROP2_DESCRIPTIONS: dict[str, str] = {
    "u_max": "alpha + rho_u/sqrt(m) >= |u_i| on Omega_rho",
    "recurrent_factor_init": "lambda_0 = sigma1*alpha: the paper's cutoff quantity (vs 1)",
    "recurrent_factor": "lambda = sigma1*u_max: per-step Lipschitz factor of the recurrence",
    "geometric_sum_P_T": "P_T(lambda) = sum_{s<T} lambda^s: where T enters every constant",
    "unit_gradient_G": "G_T = sigma1 Gamma_T >= ||grad_(w,u) h_T||",
    "unit_hessian_H": "H_T >= ||Hessian_(w,u) h_T||_op",
    "lipschitz_L": "Lipschitz constant of theta -> f(X; theta) on Omega_rho",
    "smoothness_beta": "smoothness (Hessian operator norm) on Omega_rho",
    "eps_lin_cap": "free cap on eps_lin, no Taylor expansion: c_max min(G_T r, 2 sqrt(m) sigma0) "
                   "+ G_T(lambda_0) r",
    "eps_lin": "sup |f - f_lin| on Omega_rho (min with eps_lin_cap)",
    "eps_app_cap": "free cap on eps_app, no concentration: 2 B_0 >= |f*| + |f_lin(theta_bar)|",
    "eps_app": "max_j |f_lin(X_j; theta_bar) - f*(X_j)| w.p. >= 1 - delta (Hoeffding; min with "
               "eps_app_cap)",
    "eps_cf_cap": "free cap on eps_cf, no Hessian: (rho_c + nu_c) min(G_T r/sqrt(m), 2 sigma0) + "
                  "(r + r_nu)(c_max G_T + G_T(lambda_0))",
    "eps_cf": "change-of-feature error |<grad f(theta) - grad f(theta(0)), theta - theta_bar>| "
              "(min with eps_cf_cap)",
    "output_envelope_F_cap": "sqrt(m) c_max sigma0 >= |f| (bounded activation): free cap on F",
    "output_envelope_F": "sup |f| on Omega_rho (min with output_envelope_F_cap)",
    "label_envelope_Y": "B_0 >= sup |f*| (realizable labels)",
    "residual_envelope_B": "F + Y >= sup |f - y| on Omega_rho",
    "trivial_bound_B2": "B^2 >= R(theta) for every theta in Omega_rho: a bound above it is vacuous",
    "initial_loss_bound": "Y^2 >= R(theta_0) = mean y^2 (f(theta(0)) = 0) >= min_k R(theta_k): "
                          "a min_iterate above it is vacuous",
    "transport_norm": "||nu||: bound on ||theta(0) - theta_bar||",
    "theorem_step_size": "eta* = ||nu|| / (2 L B sqrt(K)), minimiser of the optimization term",
    "optimization": "||nu||^2/(4 eta K) + eta L^2 B^2",
    "linearization": "B * eps_lin",
    "approximation": "B * eps_app",
    "change_of_feature": "B * eps_cf",
    "min_iterate": "bound on min_{k<K} R(theta_k) (and on the average loss)",
    "average_iterate": "bound on R at the average iterate (1/K) sum_{k<K} theta_k",
}

#: LaTeX symbol of every Proposition 2 key.
PROP2_LATEX_NAMES: dict[str, str] = {
    "u_max": r"u_{\max}", "recurrent_factor_init": r"\alpha\sigma_1",
    "recurrent_factor": r"\lambda", "geometric_sum_P_T": r"P_T(\lambda)",
    "unit_gradient_G": "G_T", "unit_hessian_H": "H_T", "lipschitz_L": "L",
    "smoothness_beta": r"\beta", "eps_lin": r"\varepsilon_{\mathrm{lin}}",
    "eps_app": r"\varepsilon_{\mathrm{app}}", "eps_cf": r"\varepsilon_{\mathrm{cf}}",
    "eps_lin_cap": r"\varepsilon_{\mathrm{lin}}^{\mathrm{cap}}",
    "eps_app_cap": r"\varepsilon_{\mathrm{app}}^{\mathrm{cap}}",
    "eps_cf_cap": r"\varepsilon_{\mathrm{cf}}^{\mathrm{cap}}",
    "output_envelope_F_cap": r"F^{\mathrm{cap}}",
    "output_envelope_F": "F", "label_envelope_Y": "Y", "residual_envelope_B": "B",
    "trivial_bound_B2": "B^2", "initial_loss_bound": "Y^2", "transport_norm": r"\|\nu\|",
    "theorem_step_size": r"\eta^\star",
    "optimization": r"\mathcal{E}_{\mathrm{opt}}", "linearization": r"B\varepsilon_{\mathrm{lin}}",
    "approximation": r"B\varepsilon_{\mathrm{app}}",
    "change_of_feature": r"B\varepsilon_{\mathrm{cf}}",
    "min_iterate": r"\min_{k<K}\hat R(\theta_k)", "average_iterate": r"\hat R(\bar\theta_K)",
}

__all__ = [
    "BLOCKS_DESCRIPTIONS", "DESCRIPTIONS", "GRADNORM_DESCRIPTIONS", "JOINT_DESCRIPTIONS",
    "LATEX_NAMES", "LEMMA_DESCRIPTIONS",
    "PROP2_DESCRIPTIONS", "PROP2_LATEX_NAMES", "TIGHT_DESCRIPTIONS",
]
