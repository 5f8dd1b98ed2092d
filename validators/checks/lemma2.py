"""Lemma 2: the Lipschitz constant L of θ ↦ f(X; θ) on Ω_ρ and the smoothness constant β.

:func:`validate_lemma2` measures sup ‖∇_θ f‖ by adversarial ascent (with the hand-built worst
case of :func:`lipschitz_worst_case` as an extra start; :func:`lipschitz_supremum` is the true
supremum it attains) and ‖∇²_θ f‖_op by per-head Lanczos at adversarial θ, against the
calculator's a-priori L and β (``evaluate('lemma2')``) and, on one seeded init and synthetic data,
against the a-posteriori ones.
"""

from __future__ import annotations

import math

import torch

from boundcalc.validation.settings import ValidationSettings

from ..model import get_activation
from .adversary import (
    autograd_gradient_norm,
    fixed_init_config,
    init_and_data,
    search_lipschitz,
    search_lipschitz_fixed,
    search_smoothness,
)
from .records import (
    DEFAULT_SAMPLES,
    DEFAULT_STARTS,
    DEFAULT_STEPS,
    a_posteriori,
    a_priori,
    activation_sigmas,
    attach_argmax,
    check_args,
    cpu_threads,
    data_record,
    geometry_args,
    record,
    record_settings,
    setup,
)
from .space import (
    DIRECTION_VARS,
    THETA_VARS,
    Config,
    SearchSpace,
    batched_gradient_norm,
    queries_of,
    random_configuration,
    select,
    theta_of,
)

__all__ = ["lipschitz_supremum", "lipschitz_worst_case", "validate_lemma2", "cell"]


def _profile_max(activation: str, weight: float, x_limit: float | None) -> tuple[float, float]:
    """(max, argmax) over x ∈ [−x_limit, x_limit] (all of R if None) of σ(x)² + weight·σ'(x)²."""
    act = get_activation(activation)
    lim = 30.0 if x_limit is None else min(float(x_limit), 30.0)
    x = torch.linspace(-lim, lim, 600_001, dtype=torch.float64)
    psi = act.fn(x) ** 2 + weight * act.d1(x) ** 2
    i = int(torch.argmax(psi))
    lo, hi = x[max(i - 1, 0)], x[min(i + 1, x.numel() - 1)]
    fine = torch.linspace(float(lo), float(hi), 20_001, dtype=torch.float64)
    psi_f = act.fn(fine) ** 2 + weight * act.d1(fine) ** 2
    j = int(torch.argmax(psi_f))
    return float(psi_f[j]), float(fine[j])


def lipschitz_supremum(*, m: int, d: int, T: int, rho: object, delta: object = "0.05",
                       activation: str = "tanh") -> dict[str, float]:
    """The true sup of ‖∇_θ f(X; θ)‖ over the whole adversarial set, and a configuration attaining
    it.

    Per head (Lemma 1) φ = σ(p)² + c²σ'(p)²(‖a‖² + ‖GU‖²‖q‖²) with p = Uᵀa. The softmax covariance
    G is PSD with ‖G‖_op ≤ tr G = Σ_t s_t‖x_t‖² − ‖a‖² ≤ 1 − ‖a‖², so with x = ‖a‖² ∈ [0, 1]
    ‖a‖² + ‖GU‖² ≤ x + u²(1 − x)² ≤ max(1, u²) (convex in x). Hence, with |c| ≤ c_max,
    ‖U‖ ≤ u_max,

        sup ‖∇f‖² ≤ sup_p [σ(p)² + c_max²·K·σ'(p)²],  K = max(1, u_max²) (T ≥ 2), K = 1 (T = 1),

    where for T = 1 (G = 0, a = x_1) p ranges over [−u_max, u_max]. Attained (every head alike):
    T ≥ 2: tokens ±e₁ with softmax mass ½ on each sign (a = 0, G = e₁e₁ᵀ), U = u_max e₁,
    |c| = c_max, value c_max·σ₁·u_max, equal to the upper bound when the sup over p sits at p = 0
    (tanh always; erf whenever c_max²u_max²·2/π is large enough; :func:`_profile_max` checks it
    numerically).
    T = 1: x_1 = e₁, Uᵀe₁ = p*, |c| = c_max.

    Returns:
        dict with ``upper`` (the supremum bound above), ``attained`` (value of the hand-built
        configuration of :func:`lipschitz_worst_case`), ``pre`` (its p*), ``c_max``, ``u_max``,
        ``L``.
    """
    ev = a_priori("lemma2", m=m, d=d, rho=rho, delta=delta, activation=activation)
    c_max, u_max = ev["constants"]["c_max"], ev["constants"]["u_max"]
    s1 = activation_sigmas(activation)[1]
    if T >= 2:
        upper, _ = _profile_max(activation, c_max**2 * max(1.0, u_max**2), None)
        attained = (c_max * s1 * max(1.0, u_max)) ** 2   # u_max ≥ √d ≥ 1 in practice
        pre = 0.0
    else:
        upper, pre = _profile_max(activation, c_max**2, u_max)
        act = get_activation(activation)
        p = torch.tensor(pre, dtype=torch.float64)
        attained = float(act.fn(p) ** 2 + c_max**2 * act.d1(p) ** 2)
    return {"upper": math.sqrt(upper), "attained": math.sqrt(attained), "pre": pre,
            "c_max": c_max, "u_max": u_max, "L": ev["bound"]["lipschitz_L"]}


def lipschitz_worst_case(space: SearchSpace, *, pre: float = 0.0,
                         dtype: torch.dtype = torch.float64,
                         device: str | torch.device = "cpu") -> Config:
    """The hand-built worst case of :func:`lipschitz_supremum` as a one-start configuration.

    T ≥ 2: the last ⌈T/2⌉ tokens are e₁, the others −e₁, q = e₁ and W = ω e₁e₁ᵀ with
    ω = ½ log(#(−e₁)/#(e₁)), so the softmax puts mass ½ on each sign: a = 0, G = e₁e₁ᵀ (‖G‖ = 1).
    U(0) = u_∞e₁ (on the event sphere), ΔU = (ρ_u/√m)e₁, Δc_i = c_i(0)ρ_c/√m (|c_i| = c_max),
    ΔW = 0. T = 1: x_1 = q = e₁, U = p*e₁ + √(u_max² − p*²)e₂ (d ≥ 2; U = p* when d = 1).
    """
    m, d, T = space.m, space.d, space.T
    rc, ru, _ = space.radii
    u_max = space.u_inf + ru
    e1 = torch.zeros(d, dtype=torch.float64)
    e1[0] = 1.0
    signs = torch.ones(m, dtype=torch.float64)
    signs[m // 2:] = -1.0
    if T >= 2:
        k = (T + 1) // 2
        X = torch.cat([-e1.expand(T - k, d), e1.expand(k, d)])
        omega = 0.5 * math.log((T - k) / k)
        U = u_max * e1
    else:
        X = e1.view(1, d)
        omega = 0.0
        if d >= 2:
            U = pre * e1
            U[1] = math.sqrt(max(u_max**2 - pre**2, 0.0))
        else:
            U = torch.tensor([pre], dtype=torch.float64)
    W0 = omega * torch.outer(e1, e1)
    mh = space.init_heads
    cfg = {
        "c0": signs.view(1, m),
        "U0": (U * (space.u_inf / u_max)).expand(1, mh, d).clone(),
        "W0": W0.expand(1, mh, d, d).clone(),
        "dc": (signs * rc).view(1, m),
        "dU": (U * (ru / u_max)).expand(1, m, d).clone(),
        "dW": torch.zeros(1, m, d, d, dtype=torch.float64),
        "X": X.expand(1, space.samples, T, d).clone(),
    }
    if space.query == "free":
        cfg["q"] = e1.expand(1, space.samples, d).clone()
    return {k: v.to(device=device, dtype=dtype) for k, v in cfg.items()}


def validate_lemma2(m: int, d: int, T: int, rho: object, *, delta: object = "0.05",
                    activation: str = "tanh", starts: int = DEFAULT_STARTS,
                    steps: int = DEFAULT_STEPS, seed: int = 0, samples: int = DEFAULT_SAMPLES,
                    query: str = "free", lanczos: int = 32, device: str | torch.device = "cpu",
                    dtype: torch.dtype | str = torch.float64, threads: int | None = 1,
                    keep_argmax: bool = False) -> list[dict]:
    """Lemma 2: L and β against adversarial and data measurements.

    Records:
        ``lemma2.lipschitz_L``  method ``adversarial``: max ‖∇_θ f(X; θ)‖ (closed form, Lemma 1;
        re-checked by autograd at the maximiser, ``measured_autograd``) by projected ascent over
        θ ∈ Ω_ρ, U(0) in the event ball, W(0), tokens ‖x_t‖ ≤ 1 and ‖q‖ ≤ 1 (``query='free'``) or
        q = x_T, from ``starts`` random starts plus the hand-built worst case; method
        ``hand_built``: the configuration of :func:`lipschitz_worst_case` alone, with the true
        supremum (:func:`lipschitz_supremum`) in ``true_max``; method ``data``: one seeded init and
        ``samples`` synthetic inputs, ascent over θ only, with the a-posteriori L.
        ``lemma2.smoothness_beta``  methods ``adversarial`` and ``data``: the largest |eigenvalue|
        of ∇²_θ f(X; θ) by Hessian-vector products (per-head Lanczos of dimension ``lanczos``)
        at the maximisers of the joint Rayleigh-quotient ascent.
    """
    check_args(m=m, d=d, T=T, starts=starts, steps=steps, seed=seed, activation=activation,
               samples=samples)
    dev, dt, act, ev, rho_t, rho_f = setup("lemma2", m=m, d=d, rho=rho, delta=delta,
                                           activation=activation, device=device,
                                           dtype=dtype)
    L, beta = ev["bound"]["lipschitz_L"], ev["bound"]["smoothness_beta"]
    u_inf = ev["constants"]["u_inf"]
    settings = record_settings(m, d, T, rho_t, delta, act.name, starts, steps, seed, dev, dt)
    records = []
    with cpu_threads(dev, threads):
        # --- L, adversarial -------------------------------------------------------------------
        space = SearchSpace(m=m, d=d, T=T, rho=rho_f, u_inf=u_inf, query=query)
        sup = lipschitz_supremum(m=m, d=d, T=T, rho=rho, delta=delta, activation=activation)
        hand = lipschitz_worst_case(space, pre=sup["pre"], dtype=dt, device=dev)
        res = search_lipschitz(space, act, starts=starts, steps=steps, seed=seed, dtype=dt,
                               device=dev, extra=hand)
        best = select(res.config, res.argmax)
        auto = float(autograd_gradient_norm(space, best, act).max())
        rec = record("lemma2.lipschitz_L", "adversarial", res.value, L, settings,
                     measured_autograd=auto, true_max=sup["upper"], query=query)
        records.append(attach_argmax(rec, space, best, keep_argmax))
        hand_value = float(batched_gradient_norm(theta_of(space, hand), hand["X"],
                                                 queries_of(space, hand), act).max())
        records.append(record("lemma2.lipschitz_L", "hand_built", hand_value, L, settings,
                              true_max=sup["upper"], hand_built_formula=sup["attained"],
                              query=query))
        # --- β, adversarial -------------------------------------------------------------------
        bspace = SearchSpace(m=m, d=d, T=T, rho=rho_f, u_inf=u_inf, query=query, direction=True)
        bres, spectral = search_smoothness(bspace, act, starts=starts, steps=steps, seed=seed + 1,
                                           dtype=dt, device=dev, lanczos=lanczos)
        i = int(torch.argmax(spectral))
        rec = record("lemma2.smoothness_beta", "adversarial", float(spectral[i]), beta,
                     settings, rayleigh_max=bres.value, query=query, lanczos=lanczos)
        records.append(attach_argmax(rec, bspace, select(bres.config, i), keep_argmax))
        # --- data: actual init, synthetic inputs ----------------------------------------------
        params0, X, q, geo = init_and_data(m, d, T, samples, seed, dt, dev, act)
        post = a_posteriori(m=m, d=d, rho=rho, activation=activation, **geometry_args(geo))
        on_event = geo["u0_max"] <= u_inf
        dspace = SearchSpace(m=m, d=d, T=T, rho=rho_f, u_inf=max(u_inf, geo["u0_max"]),
                             query="last", symmetric=True)
        disp = random_configuration(dspace, samples, seed=seed + 2, dtype=dt, device=dev)
        dcfg = fixed_init_config(dspace, params0, X.unsqueeze(1), disp)
        dres = search_lipschitz_fixed(dspace, act, dcfg, steps)
        records.append(data_record("lemma2.lipschitz_L", dres.value, L, post["lipschitz_L"],
                                   settings, geo, on_event, samples))
        bdspace = SearchSpace(m=m, d=d, T=T, rho=rho_f, u_inf=max(u_inf, geo["u0_max"]),
                              query="last", symmetric=True, direction=True)
        bdisp = random_configuration(bdspace, samples, seed=seed + 3, dtype=dt, device=dev)
        bdcfg = fixed_init_config(bdspace, params0, X.unsqueeze(1), bdisp)
        _, dspec = search_smoothness(bdspace, act, starts=samples, steps=steps, seed=seed + 3,
                                     dtype=dt, device=dev, lanczos=lanczos, base=bdcfg,
                                     free=THETA_VARS + DIRECTION_VARS)
        records.append(data_record("lemma2.smoothness_beta", float(dspec.max()), beta,
                                   post["smoothness_beta"], settings, geo, on_event, samples))
    return records


def cell(settings: ValidationSettings, seed: int) -> list[dict]:
    """The ``validate lemma2`` cell of ``seed``: :func:`validate_lemma2` at the run's sizes and
    search effort (the catalog's falsifier of ``lemma2``)."""
    rho, _ = settings.radii_text()
    return validate_lemma2(settings.m, settings.d, settings.T, rho,
                           **settings.search_kwargs(seed))
