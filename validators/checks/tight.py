"""Measurements that try to falsify the tight route's constants (docs/derivations.md §1.1, §2.1,
§5.1, §6.1, §7.7, §7.10).

The tight route of Theorem 1 (statement ``theorem1``; ``theorem1_paper`` is the paper's route)
replaces the max-over-heads event E_U by the head-average event

    E_avg = {√((1/m)Σ_i ‖U_i(0)‖²) ≤ ū},  P(E_avg) ≥ 1 − δ  (Laurent–Massart, χ²_{dm/2}),

and on it claims, for every W(0), every U(0) in E_avg, every θ ∈ Ω_ρ and every input with token
norms ≤ 1 and ‖q‖ ≤ 1 (u_rms = ū + ρ_u/√m; the records are named ``tight.<constant>``; every
bound is read from ``evaluate('theorem1')``, whose default route ``tight`` builds ε_lin, ε_tay,
ε_cf and F from the per-head *block* bounds Φ and H of derivations.md §2.1, below; the joint-norm
forms of before live on as route ``joint``):

==================  ===============================================================================
constant            claim
==================  ===============================================================================
L                   ‖∇_θ f(X; θ)‖ ≤ √(σ₀² + c_max² G(u_rms)²)
ε_lin               |f(θ) − f_lin(θ)| ≤ ε_lin = min(m^{-1/2}(ρ_c Φ(u_rms; ρ_u, ρ_w)
                    + ½H(u_rms; ρ, ρ)), cap)
ε_tay               |[f_lin − f](θ) + ⟨∇f(θ) − ∇f(θ(0)), θ − θ(0)⟩| ≤ ε_tay (block form, capped)
ε_cf                |⟨∇f(θ) − ∇f(θ(0)), θ̄ − θ(0)⟩| ≤ ε_cf = min(m^{-1/2}[ν_c Φ(u_rms; ρ_u, ρ_w)
                    + ρ_c Φ(u_rms; ν_u, ν_w) + H(u_rms; (ρ_u, ρ_w), (ν_u, ν_w))], cap) for every
                    θ̄ − θ(0) with SEPARATE per-head blocks |Δc_i| ≤ ν_c/√m, ‖ΔU_i‖ ≤ ν_u/√m,
                    ‖ΔW_i‖_F ≤ ν_w/√m (what the transport gives; not the joint ball of radius r_ν)
F                   |f(X; θ)| ≤ min(σ₀ρ_c + Φ(u_rms; ρ_u, ρ_w), √m c_max σ₀) (symmetric init,
                    f(θ(0)) = 0)
Y                   |f*(X)| ≤ σ₀ν_c + σ₁ν_u + σ₁ν_w, through E_U‖G U‖ ≤ ‖G‖_F ≤ tr G ≤ 1
ε_app (d-free)      max_j |f_lin(X_j; θ̄) − f*(X_j)| ≤ ε_app(attention_dof="one", sub_gamma=True)
                    w.p. ≥ 1 − δ
Φ (one head)        |Dg[h]| ≤ Φ(u; a) = σ₁√(a_U² + u²a_W²) for ‖h_U‖ ≤ a_U, ‖h_W‖_F ≤ a_W, ‖U‖ ≤ u
H (one head)        |D²g[h, k]| ≤ H(u; a, b) (block norms a of h, b of k; lemma2's
                    ``head_hessian_block_bound``)
==================  ===============================================================================

Φ and H, of one head g(U, W) = σ(Uᵀa(W)), are falsified directly at u = u_rms by
:mod:`boundcalc.validators.checks.head_blocks` (records ``tight.head_gradient_block`` and
``tight.head_hessian_block``, one per pair of block radii: (ρ_u, ρ_w), (ν_u, ν_w) and extreme
ratios; the bound is the formula at the maximiser's block norms).

The deterministic constants (L, ε_lin, ε_tay, ε_cf, F) are measured by the adversarial schedule
of :func:`boundcalc.validators.checks.adversary.drive` over θ ∈ Ω_ρ, W(0), the inputs and U(0) in
the **root-mean-square ball** √((1/m)Σ_i ‖U_i(0)‖²) ≤ ū (``SearchSpace(init_event='average')``; the
paper route's searches use the per-head ball ‖U_i(0)‖ ≤ u_∞), under the symmetric init (heads i
and i + m/2 share U(0), W(0) and carry c, −c, as E_avg is stated for) and, for L, ε_lin, ε_tay and
ε_cf, whose derivations never use the pairing, also over m unpaired heads with the same mean
(a superset). ε_cf's θ̄ needs no search:
the bracket is linear in θ̄ − θ(0), so its supremum over the product of per-head block sets is
exact,

    sup |⟨D, θ̄ − θ(0)⟩| = Σ_i [(ν_c/√m)|D_{c,i}| + (ν_u/√m)‖D_{U,i}‖ + (ν_w/√m)‖D_{W,i}‖_F],

D = ∇f(θ) − ∇f(θ(0)), attained by each block of θ̄_i − θ_i(0) along its own block of D:
(ν_c/√m)·sign(D_{c,i}), (ν_u/√m)·D_{U,i}/‖D_{U,i}‖, (ν_w/√m)·D_{W,i}/‖D_{W,i}‖_F
(:func:`change_of_feature_direction`; a test checks the value against autograd at that θ̄).
The probability claims (E_avg, the d-free ε_app) are measured as violation rates over many seeded
inits (:func:`validate_head_average_event`; ε_app by
:func:`boundcalc.validators.checks.lemma5.measure_lemma5` with ``routes=("paper", "tight")``).

Y is measured twice: ``tight.label_attention`` — the step that removed √d, sup over tokens, W and
q of E_U‖G U‖·‖q‖ (U ~ N(0, I_d)) against its bound 1, the expectation evaluated exactly at the
maximiser (:func:`expected_norm_exact`); ``tight.label_envelope_Y`` — sup over the input of
sup_v f*(X) = E_{U,W}[ν_c|σ(p)| + ν_uσ'(p)‖a‖ + ν_wσ'(p)‖G U‖‖q‖] (the transport map v chosen
pointwise, which is admissible), a Monte Carlo mean over init draws, re-estimated on fresh draws
at the maximiser (both searches: :mod:`boundcalc.validators.checks.label_envelope`).

Every record has the fields of :mod:`boundcalc.validators.checks.records` (``name``, ``method``,
``measured``, ``bound``, ``ratio``, ``holds`` without tolerance, the settings) and, for the
``data`` records (one seeded init and synthetic inputs, ascent over θ only), the a-posteriori
bound of ``theorem1_a_posteriori('tight')`` at the measured u0_rms = √((1/m)Σ_i ‖U_i(0)‖²), token
and query norms and g_max = x_max².
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import replace

import sympy as sp
import torch
from torch import Tensor
from torch.func import vmap

from boundcalc.calc.api import evaluate
from boundcalc.calc.evaluator import compile_function
from boundcalc.inputs.params import validate
from boundcalc.validation.settings import ValidationSettings

from ..device import resolve_device, resolve_dtype
from ..model import Activation, Params, get_activation, head_features, init_params
from .adversary import (
    ALL_VARS,
    alternating_signs,
    drive,
    fixed_init_config,
    measured_geometry,
    search_linearization,
    search_lipschitz,
    search_lipschitz_fixed,
    search_output,
    synthetic_inputs,
)
from .ascent import SearchResult
from .eps_app_teacher import signed_teacher_record
from .head_blocks import head_block_records
from .label_envelope import (
    DEFAULT_DRAWS,
    search_label_attention,
    search_label_envelope,
)
from .lemma2 import lipschitz_worst_case
from .records import (
    DEFAULT_SAMPLES,
    DEFAULT_STARTS,
    DEFAULT_STEPS,
    attach_argmax,
    check_args,
    cpu_threads,
    record,
    record_settings,
    rho_text,
)
from .space import (
    THETA_VARS,
    Config,
    SearchSpace,
    batched_gradient_norm,
    init_of,
    queries_of,
    random_configuration,
    select,
    theta_of,
)

#: Keys of the tight route's constants that the searches measure (``evaluate('theorem1')``).
TIGHT_KEYS = ("u_bar", "u_rms", "lipschitz_L", "eps_lin", "eps_taylor", "eps_cf",
              "output_envelope_F", "label_envelope_Y", "eps_app")


# ----------------------------------------------------------------------------------------------
# bounds: the calculator's tight route, a priori and a posteriori
# ----------------------------------------------------------------------------------------------

@functools.cache
def _tight_cached(m: int, n: int, d: int, rho: str, nu: str, delta: str,
                  activation: str) -> dict:
    inputs = validate(m=m, n=n, d=d, rho=rho, nu=nu, delta=delta, activation=activation)
    out = evaluate("theorem1", inputs).to_dict()
    route = out["statement"].get("route")
    if route != "tight":
        raise RuntimeError(f"statement 'theorem1' is on route {route!r}, expected 'tight'")
    return out


def tight_bounds(*, m: int, d: int, rho: object, nu: object = "1", delta: object = "0.05",
                 activation: str = "tanh", n: int = 64) -> dict[str, float]:
    """The tight route's constants of ``evaluate('theorem1', ...)`` (:data:`TIGHT_KEYS`), plus the
    bound 1 of the attention factor ``label_attention`` (E_U‖G U‖·‖q‖ ≤ ΓQ = 1 a priori).

    Every tight measurement reads its bound here (the tests halve them to show that a search
    can fail). n only enters ε_app (through log(4n/δ)).
    """
    ev = _tight_cached(int(m), int(n), int(d), rho_text(rho), rho_text(nu), str(delta),
                       str(activation))
    out = {k: float(ev["constants"][k]) for k in TIGHT_KEYS}
    out["label_attention"] = 1.0
    return out


_POSTERIORI_KEYS = ("lipschitz_L", "eps_lin", "eps_taylor", "eps_cf", "output_envelope_F",
                    "label_envelope_Y")


@functools.cache
def _posteriori_function():
    from boundcalc.theory.aposteriori import theorem1_a_posteriori

    constants = theorem1_a_posteriori("tight").constants
    exprs = [constants[k] for k in _POSTERIORI_KEYS]
    syms = sorted(set().union(*(e.free_symbols for e in exprs)), key=lambda s: s.name)
    return syms, compile_function(tuple(exprs), tuple(syms))


def a_posteriori_tight(*, m: int, d: int, rho: object, activation: str, nu: object = "1",
                       u0_rms: float, x_max: float, q_max: float, g_max: float
                       ) -> dict[str, float]:
    """The tight route's L, ε_lin, ε_tay, ε_cf, F, Y at a measured init and input geometry:
    ``theorem1_a_posteriori('tight')`` with ū → u0_rms and (X, Q, Γ) → (x_max, q_max, g_max)."""
    import mpmath
    from boundcalc.theory import symbols as S

    from boundcalc.calc.api import symbol_values

    values = dict(symbol_values(validate(m=m, d=d, rho=rho_text(rho), nu=rho_text(nu),
                                         activation=activation)))
    values.update({S.u0_rms: u0_rms, S.x_max: x_max, S.q_max: q_max, S.g_max: g_max})
    syms, func = _posteriori_function()
    with mpmath.workdps(20):
        out = func(*[mpmath.mpf(values[s]) if isinstance(values[s], float)
                     else mpmath.mpf(sp.N(values[s], 25)) for s in syms])
    return {k: float(v) for k, v in zip(_POSTERIORI_KEYS, out, strict=True)}


def head_average_norm(U: Tensor) -> float:
    """u0_rms = √((1/m)Σ_i ‖U_i‖²) of a (m, d) feed-forward block (all m heads; under the
    symmetric init it equals the value over the m/2 independent heads)."""
    return float(U.pow(2).sum(-1).mean().sqrt())


# ----------------------------------------------------------------------------------------------
# Head-average event E_avg
# ----------------------------------------------------------------------------------------------

def head_average_failure_exact(m: int, d: int, u_bar: float) -> float:
    """P((1/m)Σ_i ‖U_i(0)‖² > ū²) under the symmetric init: P(χ²_{dm/2} > (m/2)ū²) (exact)."""
    k = torch.tensor(d * m / 4.0, dtype=torch.float64)                # shape k/2 of χ²_k
    x = torch.tensor(m * u_bar**2 / 4.0, dtype=torch.float64)          # (m/2)ū² / 2
    return float(torch.special.gammaincc(k, x))


def validate_head_average_event(m: int, d: int, *, delta: object = "0.05", seeds: int = 200,
                                seed: int = 0, device: str | torch.device = "cpu",
                                dtype: torch.dtype | str = torch.float64) -> list[dict]:
    """E_avg: √((1/m)Σ_i ‖U_i(0)‖²) against ū over ``seeds`` inits (seeds seed, …, seed+seeds−1).

    Records ``tight.event_rate`` (fraction of seeds outside E_avg, bound δ; the exact rate
    P(χ²_{dm/2} > (m/2)ū²) alongside) and ``tight.u_bar`` (the empirical (1 − δ)-quantile of the
    root mean square over the seeds, lower order statistic, vs ū: above ū exactly when more than
    a fraction δ of the seeds is; the largest value seen is ``max_rms``). E_avg is a
    (1 − δ)-event, so the largest of many draws may exceed ū without contradicting it (at
    m = 16, d = 8 each init does with probability 0.0043, so one of 200 inits does with
    probability 0.58): the maximum is reported, not compared.
    """
    check_args(m=m, d=d, T=1, starts=1, steps=0, seed=seed, activation="tanh", samples=seeds)
    dev, dt = resolve_device(device), resolve_dtype(dtype)
    u_bar = tight_bounds(m=m, d=d, rho="1", delta=delta)["u_bar"]
    rms = torch.tensor([head_average_norm(init_params(m, d, seed=s, dtype=dt, device=dev).U)
                        for s in range(seed, seed + seeds)], dtype=torch.float64)
    rate = float((rms > u_bar).double().mean())
    settings = record_settings(m, d, None, ("nan",) * 3, delta, None, None, None, seed, dev, dt)
    settings["seeds"] = seeds
    return [
        record("tight.event_rate", "seeds", rate, float(delta), settings,
               exact_rate=head_average_failure_exact(m, d, u_bar), u_bar=u_bar, route="tight"),
        record("tight.u_bar", "seeds",
               float(torch.quantile(rms, 1 - float(delta), interpolation="lower")), u_bar,
               settings, max_rms=float(rms.max()), median_rms=float(rms.median()),
               route="tight"),
    ]


# ----------------------------------------------------------------------------------------------
# per-head decompositions of ε_tay and ε_cf
# ----------------------------------------------------------------------------------------------

def _features(space: SearchSpace, theta: Params, cfg: Config, act: Activation):
    return vmap(functools.partial(head_features, act=act))(theta, cfg["X"],
                                                           queries_of(space, cfg))


def per_head_taylor_terms(space: SearchSpace, cfg: Config, act: Activation) -> Tensor:
    """t_i (S, n, m) with Σ_i t_i = [f_lin − f](θ) + ⟨∇f(θ) − ∇f(θ(0)), θ − θ(0)⟩
    = f(θ(0)) − f(θ) + ⟨∇f(θ), θ − θ(0)⟩ (f_lin is affine):

    t_i = m^{-1/2}[c_i(0)h_i(0) − c_i h_i + Δc_i h_i + c_i σ'(p_i)(a_iᵀΔU_i + (G_iU_i)ᵀΔW_i q)].
    """
    theta, theta0, q = theta_of(space, cfg), init_of(space, cfg), queries_of(space, cfg)
    F, F0 = _features(space, theta, cfg, act), _features(space, theta0, cfg, act)
    dWq = torch.einsum("smab,snb->snma", cfg["dW"], q)
    inner = (F.a * cfg["dU"].unsqueeze(1)).sum(-1) + (F.GU * dWq).sum(-1)
    c, c0 = theta.c.unsqueeze(1), theta0.c.unsqueeze(1)
    terms = c0 * F0.h - c * F.h + cfg["dc"].unsqueeze(1) * F.h + c * F.dh * inner
    return terms / math.sqrt(space.m)


def gradient_change_blocks(space: SearchSpace, cfg: Config,
                           act: Activation) -> tuple[Tensor, Tensor, Tensor]:
    """Per head, the blocks of D = ∇_θ f(θ) − ∇_θ f(θ(0)) (Lemma 1): D_c (S, n, m) and the
    norms ‖D_{U,i}‖ and ‖D_{W,i}‖_F (S, n, m) of the U and W blocks, where
    ‖D_W‖_F = ‖c σ' G U − c(0)σ'(0)G(0)U(0)‖·‖q‖ (both rank one along the same q)."""
    theta, theta0, q = theta_of(space, cfg), init_of(space, cfg), queries_of(space, cfg)
    F, F0 = _features(space, theta, cfg, act), _features(space, theta0, cfg, act)
    root = math.sqrt(space.m)
    c, c0 = theta.c.unsqueeze(1), theta0.c.unsqueeze(1)
    lead, lead0 = (c * F.dh).unsqueeze(-1), (c0 * F0.dh).unsqueeze(-1)
    du = lead * F.a - lead0 * F0.a                                    # (S, n, m, d)
    dw = lead * F.GU - lead0 * F0.GU
    q2 = (q * q).sum(-1, keepdim=True)                                 # (S, n, 1)
    u2, w2 = (du * du).sum(-1), (dw * dw).sum(-1) * q2
    return ((F.h - F0.h) / root, torch.sqrt(u2.clamp_min(1e-300)) / root,
            torch.sqrt(w2.clamp_min(1e-300)) / root)


def per_head_change_of_feature(space: SearchSpace, cfg: Config, act: Activation,
                               nu: tuple[float, float, float]) -> Tensor:
    """(S, n, m): (ν_c/√m)|D_{c,i}| + (ν_u/√m)‖D_{U,i}‖ + (ν_w/√m)‖D_{W,i}‖_F, whose sum over
    heads is the exact sup over θ̄ of |⟨∇f(θ) − ∇f(θ(0)), θ̄ − θ(0)⟩| (module docstring)."""
    dc, du, dw = gradient_change_blocks(space, cfg, act)
    root = math.sqrt(space.m)
    return (nu[0] / root) * dc.abs() + (nu[1] / root) * du + (nu[2] / root) * dw


def change_of_feature_direction(space: SearchSpace, cfg: Config, act: Activation,
                                nu: tuple[float, float, float], sample: int = 0) -> Params:
    """The θ̄ − θ(0) (blocks (S, m, …)) that attains the change-of-feature supremum of
    :func:`per_head_change_of_feature` at input ``sample``: per head
    (ν_c/√m)·sign(D_c), (ν_u/√m)·D_U/‖D_U‖, (ν_w/√m)·D_W/‖D_W‖_F (D = ∇f(θ) − ∇f(θ(0)),
    Lemma 1)."""
    theta, theta0, q = theta_of(space, cfg), init_of(space, cfg), queries_of(space, cfg)
    F, F0 = _features(space, theta, cfg, act), _features(space, theta0, cfg, act)
    root = math.sqrt(space.m)
    j = sample
    c, c0 = theta.c, theta0.c
    dcb = (F.h[:, j] - F0.h[:, j]) / root                               # (S, m)
    lead, lead0 = (c * F.dh[:, j]).unsqueeze(-1), (c0 * F0.dh[:, j]).unsqueeze(-1)
    du = (lead * F.a[:, j] - lead0 * F0.a[:, j]) / root                 # (S, m, d)
    gw = (lead * F.GU[:, j] - lead0 * F0.GU[:, j]) / root
    dw = gw.unsqueeze(-1) * q[:, j].unsqueeze(1).unsqueeze(2)           # (S, m, d, d)
    scale_u = (nu[1] / root) / torch.sqrt((du * du).sum(-1)).clamp_min(1e-300)
    scale_w = (nu[2] / root) / torch.sqrt((dw * dw).sum((-2, -1))).clamp_min(1e-300)
    return Params((nu[0] / root) * torch.sign(dcb), du * scale_u.unsqueeze(-1),
                  dw * scale_w.unsqueeze(-1).unsqueeze(-1))


# ----------------------------------------------------------------------------------------------
# searches
# ----------------------------------------------------------------------------------------------

def _pair_scores(space: SearchSpace, per_head: Tensor) -> Tensor:
    """(S, m') per-head (or, symmetric, per-pair) scores from (S, n, m) terms."""
    sc = per_head.amax(dim=1)
    if space.symmetric:
        half = space.m // 2
        sc = sc[:, :half] + sc[:, half:]
    return sc


def search_taylor(space: SearchSpace, act: Activation, *, starts: int, steps: int, seed: int,
                  dtype: torch.dtype, device: torch.device, base: Config | None = None,
                  free: Sequence[str] = ALL_VARS, restarts: int = 1) -> SearchResult:
    """Projected ascent on ±(f(θ(0)) − f(θ) + ⟨∇f(θ), θ − θ(0)⟩) (both signs, alternating over
    starts; closed form, Lemma 1) with the :func:`drive` schedule (cloning by the signed per-head
    terms of :func:`per_head_taylor_terms`)."""
    cfg = base if base is not None else random_configuration(space, starts, seed=seed,
                                                             dtype=dtype, device=device)
    sign = alternating_signs(cfg["dc"].shape[0], dtype, device)

    def objective(c: Config) -> Tensor:
        return sign.unsqueeze(1) * per_head_taylor_terms(space, c, act).sum(-1)

    def scores(c: Config) -> Tensor:
        return _pair_scores(space, sign.view(-1, 1, 1) * per_head_taylor_terms(space, c, act))

    return drive(space, objective, cfg, free=free, steps=steps, seed=seed, head_scores=scores,
                 restarts=restarts)


def search_change_of_feature(space: SearchSpace, act: Activation,
                             nu: tuple[float, float, float], *, starts: int, steps: int,
                             seed: int, dtype: torch.dtype, device: torch.device,
                             base: Config | None = None, free: Sequence[str] = ALL_VARS,
                             restarts: int = 1) -> SearchResult:
    """Projected ascent on the exact sup over θ̄ of |⟨∇f(θ) − ∇f(θ(0)), θ̄ − θ(0)⟩|
    (:func:`per_head_change_of_feature`) with the :func:`drive` schedule."""
    cfg = base if base is not None else random_configuration(space, starts, seed=seed,
                                                             dtype=dtype, device=device)

    def objective(c: Config) -> Tensor:
        return per_head_change_of_feature(space, c, act, nu).sum(-1)

    def scores(c: Config) -> Tensor:
        return _pair_scores(space, per_head_change_of_feature(space, c, act, nu))

    return drive(space, objective, cfg, free=free, steps=steps, seed=seed, head_scores=scores,
                 restarts=restarts)


# ----------------------------------------------------------------------------------------------
# the measurement
# ----------------------------------------------------------------------------------------------

def _data_record(name: str, measured: float, bound: float, post_bound: float, settings: dict,
                 geo: dict, on_event: bool, samples: int, **extra) -> dict:
    rec = record(name, "data", measured, bound, settings, a_posteriori_bound=post_bound,
                 ratio_a_posteriori=measured / post_bound if post_bound > 0 else math.inf,
                 holds_a_posteriori=bool(measured <= post_bound), on_event=bool(on_event),
                 samples=samples, route="tight", **geo, **extra)
    if not on_event:
        # the a-priori bound is only guaranteed on E_avg: not a counterexample
        rec["holds"] = True
        rec["note"] = "init outside the head-average event E_avg: the a-priori bound is not " \
                      "guaranteed"
    return rec


def validate_tight(m: int, d: int, T: int, rho: object, *, nu: object = "1",
                   delta: object = "0.05", activation: str = "tanh",
                   starts: int = DEFAULT_STARTS, steps: int = DEFAULT_STEPS, seed: int = 0,
                   samples: int = DEFAULT_SAMPLES, query: str = "free",
                   draws: int = DEFAULT_DRAWS, device: str | torch.device = "cpu",
                   dtype: torch.dtype | str = torch.float64, threads: int | None = 1,
                   keep_argmax: bool = False, teacher_seeds: int = 200, n: int = 64
                   ) -> list[dict]:
    """The tight route's deterministic constants on E_avg, and the d-free label envelope.

    Methods: ``adversarial`` — U(0) in the root-mean-square ball of radius ū under the symmetric
    init (pairs share U(0), W(0); c(0) = (c, −c)), W(0), θ ∈ Ω_ρ, tokens and q free
    (``query='free'``) or q = x_T; ``adversarial_unpaired`` (L, ε_lin, ε_tay, ε_cf) — the same
    with m unpaired heads, (1/m)Σ_i ‖U_i(0)‖² ≤ ū²: a superset of the paired configurations (those
    four bounds never use the pairing), hence the stronger search; ``data`` — one seeded init and
    ``samples`` synthetic inputs, ascent over θ only, with the a-posteriori bound at u0_rms.

    * ``tight.lipschitz_L`` — max ‖∇_θ f‖ (the hand-built configuration of
      :func:`~boundcalc.validators.checks.lemma2.lipschitz_worst_case`, every U(0) = ū e₁, is a
      start, and is reported alone as method ``hand_built``: value c_max σ₁ u_rms);
    * ``tight.eps_lin`` — max |f − f_lin|;
    * ``tight.eps_taylor`` — max |f(θ(0)) − f(θ) + ⟨∇f(θ), θ − θ(0)⟩|;
    * ``tight.eps_cf`` — max over θ of the exact sup over θ̄ of |⟨∇f(θ) − ∇f(θ(0)), θ̄ − θ(0)⟩|;
    * ``tight.output_envelope_F`` — max |f| (f(θ(0)) = 0);
    * ``tight.head_gradient_block``, ``tight.head_hessian_block`` — one head's max |Dg[h]| / Φ
      and |D²g[h, k]| / H at u = u_rms, one record per pair of block radii
      (:func:`~boundcalc.validators.checks.head_blocks.head_block_records`; ``samples`` inputs
      per start);
    * ``tight.label_attention`` — sup of E_U‖G U‖·‖q‖ against 1 (exact at the maximiser);
    * ``tight.label_envelope_Y`` — sup over inputs of sup_v f*(X) against Y (Monte Carlo);
    * ``tight.eps_app_teacher`` — ε_app against the signed teacher of
      :mod:`~boundcalc.validators.checks.eps_app_teacher` over ``teacher_seeds`` inits (d ≥ 2):
      the rate of inits above ε_app must be ≤ δ; ε_app is evaluated at the run's data-set
      size ``n`` (it enters through the union over the n inputs, log(4n/δ)).
    """
    check_args(m=m, d=d, T=T, starts=starts, steps=steps, seed=seed, activation=activation,
               samples=samples)
    dev, dt, act = resolve_device(device), resolve_dtype(dtype), get_activation(activation)
    rho_t = validate(m=m, rho=rho_text(rho)).rho
    nu_t = validate(m=m, nu=rho_text(nu)).nu
    rho_f = tuple(float(r) for r in rho_t)
    nu_f = tuple(float(v) for v in nu_t)
    bounds = tight_bounds(m=m, d=d, rho=rho, nu=nu, delta=delta, activation=act.name, n=n)
    u_bar = bounds["u_bar"]
    settings = record_settings(m, d, T, rho_t, delta, act.name, starts, steps, seed, dev, dt)
    settings.update({"nu_c": nu_f[0], "nu_u": nu_f[1], "nu_w": nu_f[2], "route": "tight",
                     "u_bar": u_bar, "u_rms": bounds["u_rms"], "query": query})
    records: list[dict] = []

    def add(name: str, method: str, value: float, space: SearchSpace, cfg: Config | None,
            **extra) -> None:
        rec = record(name, method, value, bounds[name.split(".", 1)[1]], settings, **extra)
        records.append(attach_argmax(rec, space, cfg, keep_argmax) if cfg is not None else rec)

    with cpu_threads(dev, threads):
        space = SearchSpace(m=m, d=d, T=T, rho=rho_f, u_inf=u_bar, query=query, symmetric=True,
                            init_event="average")
        kw = {"starts": starts, "steps": steps, "dtype": dt, "device": dev}
        hand = lipschitz_worst_case(space, dtype=dt, device=dev)
        with torch.no_grad():
            hand_value = float(batched_gradient_norm(theta_of(space, hand), hand["X"],
                                                     queries_of(space, hand), act).max())
        c_max = 1.0 + rho_f[0] / math.sqrt(m)
        add("tight.lipschitz_L", "hand_built", hand_value, space, None,
            hand_built_formula=c_max * _sigma1(act.name) * bounds["u_rms"], symmetric=True)
        # --- L, ε_lin, ε_tay, ε_cf: paired heads (the init's own structure), then unpaired ---
        for method, sp_ in (("adversarial", space),
                            ("adversarial_unpaired", replace(space, symmetric=False))):
            sym = {"symmetric": sp_.symmetric}
            start = lipschitz_worst_case(sp_, dtype=dt, device=dev)
            res = search_lipschitz(sp_, act, seed=seed, extra=start, **kw)
            add("tight.lipschitz_L", method, res.value, sp_, select(res.config, res.argmax),
                **sym)
            res = search_linearization(sp_, act, seed=seed + 1, **kw)
            add("tight.eps_lin", method, res.value, sp_, select(res.config, res.argmax), **sym)
            res = search_taylor(sp_, act, seed=seed + 2, **kw)
            add("tight.eps_taylor", method, res.value, sp_, select(res.config, res.argmax),
                **sym)
            res = search_change_of_feature(sp_, act, nu_f, seed=seed + 3, **kw)
            add("tight.eps_cf", method, res.value, sp_, select(res.config, res.argmax),
                nu=list(nu_f), **sym)
        # --- F: needs f(θ(0)) = 0, i.e. the paired init ---------------------------------------
        res = search_output(space, act, seed=seed + 4, **kw)
        add("tight.output_envelope_F", "adversarial", res.value, space,
            select(res.config, res.argmax))
        # --- the per-head block bounds Φ and H behind ε_lin, ε_tay, ε_cf, F --------------------
        records.extend(head_block_records(d, T, bounds["u_rms"], act, rho_f, nu_f, settings,
                                          starts=starts, steps=steps, seed=seed,
                                          samples=samples, dtype=dt, device=dev,
                                          keep_argmax=keep_argmax))
        # --- Y (no θ: two heads carry the inputs' variables) ------------------------------------
        yspace = SearchSpace(m=2, d=d, T=T, rho=rho_f, u_inf=u_bar, query=query,
                             symmetric=True, init_event="average")
        res, info = search_label_attention(yspace, act, seed=seed + 5, draws=draws, **kw)
        add("tight.label_attention", "adversarial", info["exact"], yspace,
            select(res.config, res.argmax), **info)
        res, info = search_label_envelope(yspace, act, nu_f, seed=seed + 6, draws=draws, **kw)
        add("tight.label_envelope_Y", "adversarial", info["estimate"], yspace,
            select(res.config, res.argmax), **info)
        # --- data: one seeded init, synthetic inputs, ascent over θ -----------------------------
        records.extend(_data_records(m, d, T, rho, nu, rho_f, nu_f, act, bounds, settings,
                                     steps, samples, seed, dt, dev))
        # --- ε_app inside its class: the signed teacher (eps_app_teacher.py), d >= 2 ----------
        if d >= 2 and teacher_seeds > 0:
            rec = signed_teacher_record(m, d, tuple(float(v) for v in nu_f), bounds["eps_app"],
                                        delta=settings["delta"], seeds=teacher_seeds,
                                        activation=act.name, n=n)
            records.append({**settings, **rec})
    return records


@functools.cache
def _sigma1(activation: str) -> float:
    from boundcalc.theory.activations import get_activation as theory_activation

    return float(theory_activation(activation).sigma1)


def _data_records(m, d, T, rho, nu, rho_f, nu_f, act, bounds, settings, steps, samples, seed,
                  dt, dev) -> list[dict]:
    params0 = init_params(m, d, seed=seed, dtype=dt, device=dev)
    X, q = synthetic_inputs(samples, T, d, seed=seed, dtype=dt, device=dev)
    geo = measured_geometry(params0, X, q, act)
    geo["u0_rms"] = head_average_norm(params0.U)
    post = a_posteriori_tight(m=m, d=d, rho=rho, nu=nu, activation=act.name,
                              **{k: geo[k] for k in ("u0_rms", "x_max", "q_max", "g_max")})
    on_event = geo["u0_rms"] <= bounds["u_bar"]
    dspace = SearchSpace(m=m, d=d, T=T, rho=rho_f, u_inf=max(bounds["u_bar"], geo["u0_rms"]),
                         query="last", symmetric=True, init_event="average")
    S = 2 * samples
    Xs = X.repeat_interleave(2, dim=0).unsqueeze(1)            # sample j for both signs
    disp = random_configuration(dspace, S, seed=seed + 7, dtype=dt, device=dev)
    base = fixed_init_config(dspace, params0, Xs, disp)
    kw = {"starts": S, "steps": steps, "dtype": dt, "device": dev, "base": base,
          "free": THETA_VARS}
    out = []

    def rec(name: str, value: float) -> None:
        key = name.split(".", 1)[1]
        out.append(_data_record(name, value, bounds[key], post[key], settings, geo, on_event,
                                samples))

    rec("tight.lipschitz_L", search_lipschitz_fixed(dspace, act, base, steps).value)
    rec("tight.eps_lin", search_linearization(dspace, act, seed=seed + 1, **kw).value)
    rec("tight.eps_taylor", search_taylor(dspace, act, seed=seed + 2, **kw).value)
    rec("tight.eps_cf", search_change_of_feature(dspace, act, nu_f, seed=seed + 3, **kw).value)
    rec("tight.output_envelope_F", search_output(dspace, act, seed=seed + 4, **kw).value)
    return out


def cell(settings: ValidationSettings, seed: int) -> list[dict]:
    """The ``validate tight`` cell of ``seed``: :func:`validate_tight` (the tight route's
    constants on the head-average event) at the run's sizes and search effort."""
    rho, nu = settings.radii_text()
    return validate_tight(settings.m, settings.d, settings.T, rho, nu=nu, n=settings.n,
                          **settings.search_kwargs(seed))


__all__ = [
    "TIGHT_KEYS", "a_posteriori_tight", "change_of_feature_direction", "gradient_change_blocks",
    "head_average_failure_exact", "head_average_norm", "per_head_change_of_feature",
    "per_head_taylor_terms", "search_change_of_feature", "search_taylor", "tight_bounds",
    "validate_head_average_event", "validate_tight", "cell",
]
