"""Theorem 1 (ProjGD), with Remark 9's misspecification term as an option.

Arda, Cayci & Eryilmaz, *Finite-Time Analysis of Gradient Descent for Shallow Transformers* (AISTATS
2026), Theorem 1 (finite-time convergence of projected GD) and Remark 9: the bound assembled from
Lemmas 2–6.

Loss convention (choice; the paper's is not recoverable): R̂(θ) = (1/n) Σ_j (f(X_j; θ) − y_j)², no ½,
as in the authors' scripts. ProjGD: θ_{k+1} = Π_{Ω_ρ}(θ_k − η ∇R̂(θ_k)), θ_0 = θ(0).

Proof (derivations.md §7). Ψ_k = ‖θ_k − θ̄‖² with θ̄ of eq. (11); θ̄ ∈ Ω_ρ when ρ ≥ ν (Remark 10)
and Ψ_0 ≤ ‖ν‖² = ν_c² + ν_u² + ν_w². Non-expansiveness of Π_{Ω_ρ}:

    Ψ_{k+1} ≤ Ψ_k − 2η⟨∇R̂(θ_k), θ_k − θ̄⟩ + η²‖∇R̂(θ_k)‖².

(i) With r_j = f_j(θ_k) − y_j and ⟨∇f_j(θ(0)), θ_k − θ̄⟩ = f_lin,j(θ_k) − f_lin,j(θ̄):
    ⟨∇f_j(θ_k), θ_k − θ̄⟩ = r_j + [f_lin,j(θ_k) − f_j(θ_k)] − [f_lin,j(θ̄) − f*(X_j)]
                             + [y_j − f*(X_j)] + ⟨∇f_j(θ_k) − ∇f_j(θ(0)), θ_k − θ̄⟩,
    the brackets bounded by ε_lin (Lemma 3), ε_app (Lemma 5), ε_mis (Remark 9) and ε_cf
    (change of feature, below). Hence ⟨∇R̂, θ_k − θ̄⟩ ≥ 2R̂(θ_k) − 2B·ε with ε = ε_lin + ε_app + ε_cf
    + ε_mis and B the residual envelope of Lemma 6.
(ii) ‖∇R̂‖ ≤ 2LB (Lemma 6).

Summing k = 0..K−1 and dividing by 4ηK:

    min_{k<K} R̂(θ_k) ≤ (1/K) Σ_k R̂(θ_k) ≤ ‖ν‖²/(4ηK) + ηL²B² + B(ε_lin + ε_app + ε_cf + ε_mis).

Change of feature (the paper's eqs. 27–34, per block): per head, the c-gradient moves by
m^{-1/2}|h_i − h_i(0)| ≤ m^{-1}G r and the (U, W)-gradient by m^{-1/2}‖c_i∇g − c_i(0)∇g(0)‖ ≤
m^{-1}(ρ_c G + H r); θ_k − θ̄ has per-head blocks ≤ (ρ_c + ν_c)/√m and (r + r_ν)/√m,
r_ν = √(ν_u² + ν_w²):

    ε_cf = m^{-1/2}·[ G·r·(ρ_c + ν_c) + (ρ_c·G + H·r)·(r + r_ν) ],   G = G(u_max), H = H(u_max).

Average iterate θ̂_K = (1/K) Σ_{k<K} θ_k ∈ Ω_ρ. f_lin is affine, so R̂_lin is convex; with Minkowski,
√R̂(θ̂_K) ≤ √R̂_lin(θ̂_K) + ε_lin ≤ √((1/K)Σ R̂_lin(θ_k)) + ε_lin ≤ √A + 2ε_lin, A the bound above.

Free caps (derivations.md §4.1, §5.2, §6, §7.3.1, §7.7): ε_lin, ε_tay, ε_app, ε_cf and F each
enter as the smaller of the lemma's bound and a cap that needs no second-order expansion or
concentration (``<key>_cap`` beside it); the caps bind at small m only. Any bound on a bracket is
valid in its place, so the assembly, η*, the average iterate and the Cauchy–Schwarz form stay valid.

Step size: any η > 0 is allowed; η* = ‖ν‖/(2LB√K) minimises the optimization term, which becomes
‖ν‖·L·B/√K. Probability: E_U (δ) and Lemma 5 (δ) by a union bound, ≥ 1 − 2δ.

Statement (:func:`theorem1`, the calculator's ``theorem1`` command; :mod:`.remark9` passes
``misspecified=True``): on the tight route by default, ``route="paper"`` for the paper's route.
:func:`build_bound` (both routes) and :func:`assemble_bound` (the Lyapunov assembly, also used by
Proposition 2) are shared with Proposition 1, Remark 9 and the a-posteriori bounds.
"""

from __future__ import annotations

import sympy as sp

from .catalog import (
    BLOCKWISE_ROUTES,
    DEFAULT_ROUTE,
    HEAD_AVERAGE_ROUTES,
    ROUTES,
    THIRD_MOMENT_ROUTES,
    Route,
)
from .conditions import m_even_condition, rho_ge_nu_conditions
from .event import event_radius, head_average_radius
from .labels import (
    BLOCKS_DESCRIPTIONS,
    DESCRIPTIONS,
    GRADNORM_DESCRIPTIONS,
    JOINT_DESCRIPTIONS,
    LATEX_NAMES,
    TIGHT_DESCRIPTIONS,
)
from .lemma2 import (
    feedforward_max,
    feedforward_rms,
    head_bounds,
    head_gradient_block_bound,
    head_hessian_block_bound,
    init_head_gradient,
    lipschitz_constant,
    readout_max,
    smoothness_constant,
)
from .lemma3 import (
    attention_ffn_radius,
    linearization_cap,
    linearization_error_block_bound,
    linearization_error_bound,
    taylor_remainder_block_bound,
    taylor_remainder_bound,
    taylor_remainder_cap,
)
from .lemma5 import approximation_error_bound
from .lemma6 import (
    approximation_cap,
    label_envelope,
    output_cap,
    output_envelope,
    residual_envelope,
)
from .statement import Condition, Statement
from .symbols import (
    K,
    delta,
    eps_mis,
    eta,
    m,
    nu_c,
    nu_u,
    nu_w,
    rho_c,
    rho_u,
    rho_w,
    sigma0,
    u0_rms,
)


def initial_loss_bound(misspecification: sp.Expr = sp.S.Zero, a_priori: bool = True,
                       tight: bool = False) -> sp.Expr:
    """Y² ≥ R̂(θ_0) ≥ min_{k<K} R̂(θ_k), the bound on the min-iterate loss that holds for free.

    Under the symmetric initialization head i ≤ m/2 has a twin with readout −c_i, so
    f(X; θ(0)) = 0 for every X and R̂(θ_0) = (1/n)Σ_j y_j² ≤ (Y + ε_mis)² (Lemma 6's label
    envelope, ``label_envelope``), with no event; k = 0 is an iterate, so min_{k<K} R̂(θ_k) ≤
    R̂(θ_0) (for ProjSGD the expectation of the min too, surely). A min_iterate bound says
    something only below min(B², Y²) (derivations.md §7.8); Y ≤ B, so Y² binds.
    """
    return label_envelope(misspecification, a_priori, tight) ** 2


def transport_norm() -> sp.Expr:
    """‖ν‖ = √(ν_c² + ν_u² + ν_w²) ≥ ‖θ(0) − θ̄‖ (initial Lyapunov value Ψ_0 ≤ ‖ν‖²)."""
    return sp.sqrt(nu_c**2 + nu_u**2 + nu_w**2)


def _check_route(route: Route) -> None:
    """The proof routes of Theorem 1 / Proposition 1 / Remark 9 (:data:`catalog.ROUTES`):
    ``tight`` (the default, derivations.md §7.7 with the block bounds of §7.10), ``paper`` (the
    paper's skeleton, §7.1–7.5), ``gradnorm`` (the tight route plus the gradient-norm form
    ‖∇R̂‖² ≤ 4L²R̂, §7.9), ``joint`` (§7.7 with joint (U, W) norms: the tight route before
    §7.10) and ``blocks`` (the tight route with H's earlier constant 32/27: before §2.2)."""
    if route not in ROUTES:
        raise ValueError(f"`route` must be one of {ROUTES}, got {route!r}")


def is_blockwise(route: Route) -> bool:
    """True for the routes whose per-head bounds are the block bounds of derivations.md §7.10
    (:data:`catalog.BLOCKWISE_ROUTES`: ``tight``, ``gradnorm``); ``joint`` and ``paper`` use
    joint (U, W) norms."""
    _check_route(route)
    return route in BLOCKWISE_ROUTES


def uses_third_moment(route: Route) -> bool:
    """True for the block routes whose H bounds the attention term by the third-moment constant
    4/(3√3) of derivations.md §2.2 (:data:`catalog.THIRD_MOMENT_ROUTES`: ``tight``,
    ``gradnorm``); ``blocks`` keeps §2.1's 32/27."""
    _check_route(route)
    return route in THIRD_MOMENT_ROUTES


def change_of_feature_error_bound(a_priori: bool = True,
                                  route: Route = DEFAULT_ROUTE) -> sp.Expr:
    """ε_cf ≥ the change-of-feature bracket of the drift (eqs. 27–34).

    ``paper``: sup |⟨∇f(X; θ) − ∇f(X; θ(0)), θ − θ̄⟩| over θ ∈ Ω_ρ, per-head blocks of θ − θ̄ at most
    (ρ_c + ν_c)/√m and (r + r_ν)/√m (θ̄ − θ(0) has blocks ν_c/√m and r_ν/√m), on E_U:
    m^{-1/2}[G r (ρ_c + ν_c) + (ρ_c G + H r)(r + r_ν)].

    ``joint``: only the θ̄ − θ(0) half, |⟨∇f(θ) − ∇f(θ(0)), θ̄ − θ(0)⟩|, since the θ − θ(0) half is
    merged into the Taylor remainder ε_tay (lemma3.taylor_remainder_bound); on E_avg:
    m^{-1/2}[G r ν_c + (ρ_c G + H̃ r) r_ν] with G = G(u_rms), H̃ = H̃(u_rms).

    ``tight`` / ``gradnorm`` / ``blocks``: the same bracket with the block bounds of
    derivations.md §2.1 (H's attention constant 4/(3√3) of §2.2; 32/27 on ``blocks``)
    (θ̄ − θ(0) has per-head blocks ν_c/√m, ν_u/√m, ν_w/√m; θ − θ(0) has ρ_c/√m, ρ_u/√m,
    ρ_w/√m), on E_avg, u = u_rms (§7.10):
    m^{-1/2}[ν_c Φ(u; ρ_u, ρ_w) + ρ_c Φ(u; ν_u, ν_w) + H(u; (ρ_u, ρ_w), (ν_u, ν_w))].
    """
    _check_route(route)
    if is_blockwise(route):
        u = feedforward_rms(a_priori)
        return (nu_c * head_gradient_block_bound(u, rho_u, rho_w, a_priori)
                + rho_c * head_gradient_block_bound(u, nu_u, nu_w, a_priori)
                + head_hessian_block_bound(u, (rho_u, rho_w), (nu_u, nu_w), a_priori,
                                           uses_third_moment(route))
                ) / sp.sqrt(m)
    grad, hess = head_bounds(a_priori, "max" if route == "paper" else "average")
    r = attention_ffn_radius()
    r_nu = sp.sqrt(nu_u**2 + nu_w**2)
    if route == "paper":
        return (grad * r * (rho_c + nu_c) + (rho_c * grad + hess * r) * (r + r_nu)) / sp.sqrt(m)
    return (grad * r * nu_c + (rho_c * grad + hess * r) * r_nu) / sp.sqrt(m)


def change_of_feature_cap(a_priori: bool = True, route: Route = DEFAULT_ROUTE) -> sp.Expr:
    """a_c·min(G r/√m, 2σ₀) + a_θ·(c_max G + G₀) ≥ the change-of-feature bracket of ``route``:
    the cap that holds without the Hessian (derivations.md §7.3.1).

    Per head, the c-entry of ∇f(θ) − ∇f(θ(0)) is m^{-1/2}(h_i − h_i(0)), at most
    m^{-1/2}min(G(u_i)‖Δ_i‖, 2σ₀); its (U, W)-block m^{-1/2}(c_i∇g_i(θ) − c_i(0)∇g_i(θ(0))) has
    norm ≤ m^{-1/2}(c_max G(u_i) + G(‖U_i(0)‖)). Against the blocks of θ − θ̄ (``paper``:
    a_c = ρ_c + ν_c, a_θ = r + r_ν) or of θ̄ − θ(0) (``tight``: a_c = ν_c, a_θ = r_ν), each times
    1/√m, and a head average: (G, G₀) = (G(u_max), G(u_∞)) on E_U, (Ĝ(u_rms), Ĝ(ū)) on E_avg.
    """
    _check_route(route)
    event = "max" if route == "paper" else "average"
    grad, _ = head_bounds(a_priori, event)
    grad0 = init_head_gradient(a_priori, event)
    r = attention_ffn_radius()
    r_nu = sp.sqrt(nu_u**2 + nu_w**2)
    a_c, a_theta = (rho_c + nu_c, r + r_nu) if route == "paper" else (nu_c, r_nu)
    return (a_c * sp.Min(grad * r / sp.sqrt(m), 2 * sigma0)
            + a_theta * (readout_max() * grad + grad0))


def theorem_step_size(misspecification: sp.Expr = sp.S.Zero, a_priori: bool = True,
                      route: Route = DEFAULT_ROUTE) -> sp.Expr:
    """η* = ‖ν‖ / (2·L·B·√K): the step size that minimises the optimization term ‖ν‖²/(4ηK) +
    ηL²B² (L and B of ``route``)."""
    tight = route in HEAD_AVERAGE_ROUTES
    lip = lipschitz_constant(a_priori, "average" if tight else "max")
    res = residual_envelope(misspecification, a_priori, tight, is_blockwise(route))
    return transport_norm() / (2 * lip * res * sp.sqrt(K))


def gradient_step_size(lipschitz: sp.Expr, drift: sp.Expr) -> sp.Expr:
    """η_g = ‖ν‖ / (2L√K·ε + 2‖ν‖L²): the gradnorm route's default step (derivations.md §7.9).

    ‖ν‖/(2Lε√K) minimises the gradient-norm form's leading terms ε²(1 + 2ηL²) + ‖ν‖²/(2ηK) for
    ε² ≫ ‖ν‖²/(4ηK); the extra 2‖ν‖L² in the denominator keeps ηL² < ½, so a = 1 − ηL² > ½. Any
    η > 0 is admissible (:func:`gradient_norm_form` holds for every η).

    Example:
        >>> import sympy as sp
        >>> from boundcalc.theory.symbols import K, nu_c, nu_u, nu_w
        >>> L, e = sp.symbols("L epsilon", positive=True)
        >>> gradient_step_size(L, e).subs({L: 1, e: 2, K: 100, nu_c: 1, nu_u: 0, nu_w: 0})
        1/42
    """
    return transport_norm() / (2 * lipschitz * sp.sqrt(K) * drift
                               + 2 * transport_norm() * lipschitz**2)


def gradient_norm_form(lipschitz: sp.Expr, residual: sp.Expr, drift: sp.Expr,
                       step: sp.Expr = eta) -> tuple[sp.Expr, sp.Expr]:
    """(a, bound): a = 1 − ηL² and the Cauchy–Schwarz drift bound with ‖∇R̂‖² ≤ 4L²R̂ in place of
    4L²B² (derivations.md §7.9), valid for every η > 0:

        R̄ ≤ (ε/(2a′) + √(ε²/(4a′²) + ‖ν‖²/(4ηK·a′)))²,   a′ = max(a, ε/B),  R̄ = (1/K)Σ_k R̂(θ_k).

    For a ≥ ε/B (> 0) it solves a·R̄ − ε√R̄ ≤ ‖ν‖²/(4ηK) (Jensen on the convex x ↦ ax − ε√x); for
    a < ε/B it is ≥ (ε/a′)² = B² ≥ R̄ (every residual ≤ B on Ω_ρ), so it needs no condition on η.

    Example:
        >>> import sympy as sp
        >>> from boundcalc.theory.symbols import K, nu_c, nu_u, nu_w
        >>> a, bound = gradient_norm_form(sp.Integer(1), sp.Integer(4), sp.Integer(1),
        ...                               sp.Rational(1, 2))
        >>> a, bound.subs({K: 1, nu_c: 1, nu_u: 0, nu_w: 0})
        (1/2, (1 + sqrt(2))**2)
    """
    a = 1 - step * lipschitz**2
    floor = drift / residual
    margin = (a + floor + sp.Abs(a - floor)) / 2          # max(a, ε/B)
    optimization = transport_norm() ** 2 / (4 * step * K)
    return a, (drift / (2 * margin)
               + sp.sqrt(drift**2 / (4 * margin**2) + optimization / margin)) ** 2


def common_conditions() -> tuple[Condition, ...]:
    """Hypotheses shared by Theorem 1 and Proposition 1."""
    return (
        m_even_condition(),
        *rho_ge_nu_conditions(),
        Condition("delta_lt_half", sp.Lt(delta, sp.Rational(1, 2)), "delta < 1/2",
                  "the bound holds with probability 1 − 2δ, which must be positive"),
    )


def build_bound(misspecification: sp.Expr = sp.S.Zero, step: sp.Expr = eta,
                a_priori: bool = True, route: Route = DEFAULT_ROUTE):
    """Constants, named terms and the two bounds of Theorem 1 (and Remark 9 if ε_mis ≠ 0).

    Args:
        misspecification: ε_mis (0 for realizable labels).
        step: the step size expression (symbol η by default).
        a_priori: False keeps the input-geometry symbols and the measured u0_max (``paper``) or
            u0_rms (``tight``) in place of the event radius (a-posteriori bounds of the
            validators).
        route: ``"tight"`` (the default; derivations.md §7.7 with §7.10), ``"paper"``
            (§7.1–7.5), ``"gradnorm"`` (§7.9), ``"joint"`` (§7.7) or ``"blocks"`` (§7.10
            with §2.1's 32/27).

    Returns:
        (constants, terms, bound) dictionaries of sympy expressions.
    """
    _check_route(route)
    if route != "paper":
        return _build_tight(misspecification, step, a_priori, route)
    lip = lipschitz_constant(a_priori)
    lin_cap, app_cap = linearization_cap(a_priori, "max"), approximation_cap(a_priori)
    eps_lin = sp.Min(linearization_error_bound(a_priori), lin_cap)
    eps_app = sp.Min(approximation_error_bound(a_priori), app_cap)
    cf_cap = change_of_feature_cap(a_priori, "paper")
    eps_cf = sp.Min(change_of_feature_error_bound(a_priori, "paper"), cf_cap)
    res = residual_envelope(misspecification, a_priori)
    constants = {
        "u_inf": event_radius(),
        "u_max": feedforward_max(a_priori),
        "lipschitz_L": lip,
        "smoothness_beta": smoothness_constant(a_priori),
        "eps_lin_cap": lin_cap,
        "eps_lin": eps_lin,
        "eps_app_cap": app_cap,
        "eps_app": eps_app,
        "eps_cf_cap": cf_cap,
        "eps_cf": eps_cf,
        "output_envelope_F_cap": output_cap(),
        "output_envelope_F": output_envelope(a_priori),
        "label_envelope_Y": label_envelope(misspecification, a_priori),
        "residual_envelope_B": res,
        "trivial_bound_B2": res**2,
        "initial_loss_bound": initial_loss_bound(misspecification, a_priori),
        "transport_norm": transport_norm(),
        "theorem_step_size": theorem_step_size(misspecification, a_priori, "paper"),
    }
    terms, bound = assemble_bound(lip, res, eps_lin, eps_app, eps_cf, step, misspecification)
    return constants, terms, bound


def _build_tight(misspecification: sp.Expr, step: sp.Expr, a_priori: bool,
                 route: Route = DEFAULT_ROUTE):
    """The tight route (derivations.md §7.7): head-average event, Taylor remainder merged with the
    θ_k − θ(0) half of the change of feature, d-free attention parts, and the drift bounded both
    linearly in B and by Cauchy–Schwarz (the smaller bound is reported). ``blockwise`` (§7.10):
    the per-head block bounds of §2.1 in ε_lin, ε_tay, ε_cf and F, and the sub-gamma attention
    deviation of §5.3 in ε_app (False: the ``joint`` route). ``gradnorm`` (§7.9): a third form
    with ‖∇R̂‖² ≤ 4L²R̂ (informative where ηL² < 1 − ε/B) and the step η_g. H's attention
    constant is §2.2's 4/(3√3) on ``tight`` and ``gradnorm``, §2.1's 32/27 on ``blocks``."""
    gradnorm, blockwise = route == "gradnorm", is_blockwise(route)
    third_moment = uses_third_moment(route)
    lip = lipschitz_constant(a_priori, "average")
    lin_cap, tay_cap = linearization_cap(a_priori, "average"), taylor_remainder_cap(a_priori)
    app_cap = approximation_cap(a_priori, tight=True)
    if blockwise:
        lin = linearization_error_block_bound(a_priori, third_moment)
        tay = taylor_remainder_block_bound(a_priori, third_moment)
    else:
        lin = linearization_error_bound(a_priori, "average")
        tay = taylor_remainder_bound(a_priori, "average")
    eps_lin = sp.Min(lin, lin_cap)
    eps_tay = sp.Min(tay, tay_cap)
    eps_app = sp.Min(approximation_error_bound(a_priori, attention_dof="one",
                                               sub_gamma=blockwise), app_cap)
    cf_cap = change_of_feature_cap(a_priori, "tight")
    eps_cf = sp.Min(change_of_feature_error_bound(a_priori, route), cf_cap)
    res = residual_envelope(misspecification, a_priori, tight=True, blockwise=blockwise)
    drift = eps_tay + eps_app + eps_cf + misspecification
    constants = {
        "u_inf": event_radius(),
        "u_max": feedforward_max(a_priori),
        "u_bar": head_average_radius() if a_priori else u0_rms,
        "u_rms": feedforward_rms(a_priori),
        "lipschitz_L": lip,
        "smoothness_beta": smoothness_constant(a_priori),
        "eps_lin_cap": lin_cap,
        "eps_lin": eps_lin,
        "eps_taylor_cap": tay_cap,
        "eps_taylor": eps_tay,
        "eps_app_cap": app_cap,
        "eps_app": eps_app,
        "eps_cf_cap": cf_cap,
        "eps_cf": eps_cf,
        "eps_drift": drift,
        "output_envelope_F_cap": output_cap(),
        "output_envelope_F": output_envelope(a_priori, tight=True, blockwise=blockwise),
        "label_envelope_Y": label_envelope(misspecification, a_priori, tight=True),
        "residual_envelope_B": res,
        "trivial_bound_B2": res**2,
        "initial_loss_bound": initial_loss_bound(misspecification, a_priori, tight=True),
        "transport_norm": transport_norm(),
        "theorem_step_size": theorem_step_size(misspecification, a_priori, route),
    }
    if gradnorm:
        constants["theorem_step_size"] = gradient_step_size(lip, drift)
    # the linear-drift bound is §7.5's assembly with the Taylor remainder in Lemma 3's place
    terms, linear_bound = assemble_bound(lip, res, eps_tay, eps_app, eps_cf, step, misspecification)
    optimization, linear = terms["optimization"], linear_bound["min_iterate"]
    cauchy_schwarz = (drift / 2 + sp.sqrt(drift**2 / 4 + optimization)) ** 2
    forms = {"min_iterate_linear_drift": linear, "min_iterate_cauchy_schwarz": cauchy_schwarz}
    if gradnorm:
        a, gradient_form = gradient_norm_form(lip, res, drift, step)
        constants["step_margin_a"] = a
        forms["min_iterate_gradient_cauchy_schwarz"] = gradient_form
    min_iterate = sp.Min(linear, cauchy_schwarz)
    if gradnorm:
        min_iterate = (linear + cauchy_schwarz - sp.Abs(linear - cauchy_schwarz)) / 2
        # min(x, y) = (x + y − |x − y|)/2: sympy's Min would compare the three forms symbolically
        # (minutes) each time η* is substituted
        gradient_form = forms["min_iterate_gradient_cauchy_schwarz"]
        min_iterate = (min_iterate + gradient_form - sp.Abs(min_iterate - gradient_form)) / 2
    bound = {
        "min_iterate": min_iterate,
        "average_iterate": (sp.sqrt(min_iterate) + 2 * eps_lin) ** 2,
        **forms,
    }
    return constants, terms, bound


def assemble_bound(lipschitz: sp.Expr, residual: sp.Expr, eps_lin: sp.Expr, eps_app: sp.Expr,
                   eps_cf: sp.Expr, step: sp.Expr = eta,
                   misspecification: sp.Expr = sp.S.Zero
                   ) -> tuple[dict[str, sp.Expr], dict[str, sp.Expr]]:
    """The Lyapunov argument of derivations.md §7.5 from its ingredients: the named terms and both
    bounds (min iterate; average iterate by §7.5's Minkowski–Jensen step).

    Any model whose per-unit constants give L, B, ε_lin, ε_app and ε_cf on Ω_ρ gets the same
    assembly: Theorem 1 / Proposition 1 / Remark 9 on the paper route here, the IndRNN's
    Proposition 2 (``prop2.build_bound``).

    Returns:
        (terms, bound): ``optimization`` = ‖ν‖²/(4ηK) + ηL²B², ``linearization`` = Bε_lin,
        ``approximation`` = Bε_app, ``change_of_feature`` = Bε_cf (and ``misspecification`` = Bε_mis
        when ε_mis ≠ 0); ``min_iterate`` their sum, ``average_iterate`` (√min_iterate + 2ε_lin)².
    """
    terms = {
        "optimization": transport_norm() ** 2 / (4 * step * K) + step * lipschitz**2 * residual**2,
        "linearization": residual * eps_lin,
        "approximation": residual * eps_app,
        "change_of_feature": residual * eps_cf,
    }
    if misspecification != 0:
        terms["misspecification"] = residual * misspecification
    min_iterate = sp.Add(*terms.values())
    bound = {
        "min_iterate": min_iterate,
        "average_iterate": (sp.sqrt(min_iterate) + 2 * eps_lin) ** 2,
    }
    return terms, bound



def route_descriptions(route: Route) -> dict[str, str]:
    """The meaning line of every key of a Theorem 1 / Proposition 1 / Remark 9 statement on
    ``route``."""
    _check_route(route)
    if route == "gradnorm":
        return dict(GRADNORM_DESCRIPTIONS)
    if route == "joint":
        return dict(JOINT_DESCRIPTIONS)
    if route == "blocks":
        return dict(BLOCKS_DESCRIPTIONS)
    return dict(TIGHT_DESCRIPTIONS if route == "tight" else DESCRIPTIONS)


def theorem1(misspecified: bool = False, route: Route = DEFAULT_ROUTE) -> Statement:
    """Theorem 1 (ProjGD convergence) as a :class:`Statement`.

    Args:
        misspecified: add Remark 9's term B·ε_mis (labels off the transport target by ε_mis).
        route: ``"tight"`` (default; derivations.md §7.7 with §7.10), ``"paper"`` (§7.1–7.5),
            ``"gradnorm"`` (§7.9), ``"joint"`` (§7.7 before §7.10) or ``"blocks"`` (§7.10
            with §2.1's 32/27: the default before §2.2).

    Example:
        >>> from boundcalc.theory.theorem1 import theorem1
        >>> sorted(theorem1().terms)
        ['approximation', 'change_of_feature', 'linearization', 'optimization']
        >>> theorem1(route="paper").route
        'paper'
    """
    mis = eps_mis if misspecified else sp.Integer(0)
    constants, terms, bound = build_bound(mis, route=route)
    return Statement(
        name="remark9" if misspecified else "theorem1",
        title=("Remark 9 (misspecified targets)" if misspecified
               else "Theorem 1 (ProjGD convergence)"),
        summary=((f"With labels off the transport target by at most ε_mis (|y_j − f*(X_j)| ≤ "
                  f"ε_mis), on {route_events(route)} (probability ≥ 1 − 2δ), K steps of ProjGD "
                  "on Ω_ρ with step η still give min_{k<K} R̂(θ_k) ≤ min_iterate and "
                  "R̂((1/K)Σθ_k) ≤ average_iterate, each now carrying the extra term "
                  "misspecification = B·ε_mis (ε_mis = 0 is Theorem 1). No term depends on the "
                  "sequence length T.") if misspecified else
                 (f"On {route_events(route)} (probability ≥ 1 − 2δ), K steps of ProjGD on Ω_ρ "
                  "with step η give min_{k<K} R̂(θ_k) ≤ min_iterate and R̂((1/K)Σθ_k) ≤ "
                  "average_iterate, R̂ = (1/n)Σ(f − y)². No term depends on the sequence length "
                  "T.")),
        constants=constants,
        terms=terms,
        bound=bound,
        probability=1 - 2 * delta,
        conditions=common_conditions(),
        descriptions=route_descriptions(route),
        latex_names=route_latex_names(route),
        route=route,
    )


def route_events(route: Route) -> str:
    """The events a Theorem 1 route's bound holds on: E_avg ∩ E_app on the head-average routes
    (:data:`catalog.HEAD_AVERAGE_ROUTES`), E_U ∩ E_app on the paper's."""
    _check_route(route)
    return "E_avg ∩ E_app" if route in HEAD_AVERAGE_ROUTES else "E_U ∩ E_app"


def route_latex_names(route: Route) -> dict[str, str]:
    """LaTeX symbol of every key on ``route`` (the tight route's linearization term is Bε_tay)."""
    _check_route(route)
    names = dict(LATEX_NAMES)
    if route != "paper":
        names["linearization"] = r"B\varepsilon_{\mathrm{tay}}"
    return names


__all__ = [
    "assemble_bound", "build_bound", "change_of_feature_cap",
    "change_of_feature_error_bound", "common_conditions", "gradient_norm_form",
    "gradient_step_size",
    "initial_loss_bound", "is_blockwise", "route_descriptions", "route_events",
    "route_latex_names", "theorem1", "uses_third_moment",
    "theorem_step_size",
    "transport_norm",
]
