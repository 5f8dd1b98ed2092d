"""The adversarial searches shared by the measurements, and the data they start from.

Every a-priori bound of Definition 1, Lemmas 2, 3, 6 and Remark 3 holds for every W(0), every U(0)
in the event ball max_i ‖U_i(0)‖ ≤ u_∞, every θ ∈ Ω_ρ and every input with token norms ≤ 1 and
‖q‖ ≤ 1, at any T. A measurement therefore runs an *adversarial* search over all of them
(:mod:`.space`, :mod:`.ascent`) and also measures the quantities on one actual seeded init and
synthetic data set (:func:`synthetic_inputs`, :func:`measured_geometry`).

Search structure. The model is separable across heads: ‖∇f‖² = (1/m)Σ_i φ_i, f − f_lin = Σ_i e_i,
f = Σ_pairs F_p and the Hessian is block-diagonal. After the main ascent each start's best head (or
pair, under the symmetric init) is copied into every head and a short polishing ascent follows
(:func:`drive`, :func:`clone_best_head`) — a feasible configuration whose value is at least the
separable mean, so the search needs one good head instead of m simultaneously good heads.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import replace

import torch
from torch import Tensor
from torch.func import vmap

from ..data.inputs import synthetic_inputs as _synthetic_inputs
from ..model import Activation, Params, head_features, init_params, last_token_query
from .ascent import SearchResult, ascend, head_lanczos, rayleigh_quotients
from .space import (
    DIRECTION_VARS,
    INIT_VARS,
    INPUT_VARS,
    THETA_VARS,
    Config,
    SearchSpace,
    batched_forward,
    batched_gradient_norm,
    batched_linearized_output,
    batched_loss_gradient,
    concat_configs,
    init_of,
    perturb,
    queries_of,
    random_configuration,
    theta_of,
)

__all__ = ["ALL_VARS", "autograd_gradient_norm", "clone_best_head", "drive", "fixed_init_config",
           "measured_geometry", "per_head_gradient_blocks", "per_head_gradient_sq",
           "per_head_linearization_terms", "search_linearization", "search_lipschitz",
           "search_lipschitz_fixed", "search_loss_gradient", "search_output", "search_smoothness",
           "synthetic_inputs"]


ALL_VARS = THETA_VARS + INIT_VARS + INPUT_VARS + ("y",)


# ----------------------------------------------------------------------------------------------
# data: one seeded init and synthetic inputs, with their measured geometry
# ----------------------------------------------------------------------------------------------

def synthetic_inputs(n: int, T: int, d: int, *, seed: int, dtype: torch.dtype = torch.float64,
                     device: str | torch.device = "cpu") -> tuple[Tensor, Tensor]:
    """X (n, T, d) with i.i.d. N(0, I_d) tokens clipped to norm ≤ 1, q = x_T (the
    inputs of the paper's Section 6.1).

    Drawn on the CPU from a generator seeded with ``seed`` offset away from :func:`init_params`'s
    stream, then moved.
    """
    X = _synthetic_inputs(n, T, d, seed=int(seed) * 7919 + 104729, dtype=dtype,
                              device=device)
    return X, last_token_query(X)


def measured_geometry(params0: Params, X: Tensor, q: Tensor, act: Activation) -> dict[str, float]:
    """What an actual init and data set are (derivations.md §10).

    u0_max = max_i ‖U_i(0)‖; x_max = max token norm; q_max = max query norm; g_max = x_max² (valid
    for every W since X J Xᵀ ⪯ Σ_t s_t x_t x_tᵀ); g_at_init = max ‖X J(z_i) Xᵀ‖_op at W(0)
    (reported, not used: W moves during training).
    """
    F = head_features(params0, X, q, act)
    G = torch.einsum("nmt,ntd,nte->nmde", F.s, X, X) - F.a.unsqueeze(-1) * F.a.unsqueeze(-2)
    x_max = float(X.norm(dim=-1).max())
    return {
        "u0_max": float(params0.U.norm(dim=-1).max()),
        "x_max": x_max,
        "q_max": float(q.norm(dim=-1).max()),
        "g_max": x_max**2,
        "g_at_init": float(torch.linalg.eigvalsh(G).amax()),
    }


def init_and_data(m, d, T, samples, seed, dtype, device, act):
    """The actual init θ(0) of ``seed`` (m heads), ``samples`` synthetic inputs X (samples, T, d)
    with their queries q, and their :func:`measured_geometry`: what the measurements on data
    (rather than adversarial) evaluate at.

    >>> from boundcalc.validators.model import get_activation
    >>> params0, X, q, geo = init_and_data(4, 2, 3, 5, 0, torch.float64, "cpu",
    ...                                    get_activation("tanh"))
    >>> tuple(X.shape), tuple(q.shape), geo["x_max"] <= 1.0
    ((5, 3, 2), (5, 2), True)
    """
    params0 = init_params(m, d, seed=seed, dtype=dtype, device=device)
    X, q = synthetic_inputs(samples, T, d, seed=seed, dtype=dtype, device=device)
    return params0, X, q, measured_geometry(params0, X, q, act)


def fixed_init_config(space: SearchSpace, params0: Params, X: Tensor, displacement: Config
                      ) -> Config:
    """Starts that all share the actual init ``params0`` (symmetric space), with start s seeing
    inputs X[s] (X: (S, n, T, d)) and the displacement (dc, dU, dW) of ``displacement``."""
    if not space.symmetric or space.query != "last":
        raise ValueError("`space` must be symmetric with query='last' for a fixed actual init")
    S, half = X.shape[0], space.m // 2
    return {
        "c0": params0.c.expand(S, -1).clone(),
        "U0": params0.U[:half].expand(S, -1, -1).clone(),
        "W0": params0.W[:half].expand(S, -1, -1, -1).clone(),
        "dc": displacement["dc"], "dU": displacement["dU"], "dW": displacement["dW"],
        "X": X,
        **{k: displacement[k] for k in ("y", "vc", "vU", "vW") if k in displacement},
    }


# ----------------------------------------------------------------------------------------------
# per-head decompositions and head cloning
# ----------------------------------------------------------------------------------------------

def per_head_gradient_blocks(space: SearchSpace, cfg: Config,
                             act: Activation) -> tuple[Tensor, Tensor, Tensor]:
    """The c, U and W blocks of m·‖∇_θ f‖² per head (Lemma 1), each (S, n, m):
    σ(pre_i)², c_i²σ'(pre_i)²‖a_i‖², c_i²σ'(pre_i)²‖G_iU_i‖²‖q‖²."""
    theta, q = theta_of(space, cfg), queries_of(space, cfg)
    F = vmap(functools.partial(head_features, act=act))(theta, cfg["X"], q)
    q2 = (q * q).sum(-1, keepdim=True)
    lead = theta.c.unsqueeze(1) ** 2 * F.dh**2
    return F.h**2, lead * (F.a**2).sum(-1), lead * (F.GU**2).sum(-1) * q2


def per_head_gradient_sq(space: SearchSpace, cfg: Config, act: Activation) -> Tensor:
    """φ_i = σ² + c_i²σ'²(‖a_i‖² + ‖G_iU_i‖²‖q‖²): (S, n, m), ‖∇_θ f‖² = (1/m)Σ_i φ_i (Lemma 1)."""
    pc, pu, pw = per_head_gradient_blocks(space, cfg, act)
    return pc + pu + pw


def per_head_linearization_terms(space: SearchSpace, cfg: Config, act: Activation) -> Tensor:
    """e_i (S, n, m) with f − f_lin = Σ_i e_i (the paper's eq. 19 per head):

    e_i = m^{-1/2}[c_i h_i − c_i(0)h_i(0) − Δc_i h_i(0)
                   − c_i(0)σ'(0)(a_i(0)ᵀΔU_i + (G_iU_i)(0)ᵀΔW_i q)].
    """
    theta, theta0, q = theta_of(space, cfg), init_of(space, cfg), queries_of(space, cfg)
    hf = vmap(functools.partial(head_features, act=act))
    F, F0 = hf(theta, cfg["X"], q), hf(theta0, cfg["X"], q)
    dWq = torch.einsum("smab,snb->snma", cfg["dW"], q)
    inner = (F0.a * cfg["dU"].unsqueeze(1)).sum(-1) + (F0.GU * dWq).sum(-1)
    c, c0 = theta.c.unsqueeze(1), theta0.c.unsqueeze(1)
    lin = c0 * F0.h + cfg["dc"].unsqueeze(1) * F0.h + c0 * F0.dh * inner
    return (c * F.h - lin) / math.sqrt(space.m)


def clone_best_head(space: SearchSpace, cfg: Config, scores: Tensor) -> Config:
    """Copy each start's best head (largest ``scores`` (S, m'), m' = m or m/2 pairs) into all heads.

    Non-symmetric: head j's (c(0), U(0), W(0), Δθ) and direction replace every head. Symmetric:
    pair (j, j + m/2) replaces every pair, so c(0) stays (c, −c) and f(θ(0)) ≡ 0.
    """
    S, m = cfg["dc"].shape
    best = scores.argmax(dim=1)                                   # (S,)
    half = m // 2
    out = {k: v.detach().clone() for k, v in cfg.items()}
    ar = torch.arange(S, device=best.device)

    def spread(t: Tensor, idx: Tensor, heads: int) -> Tensor:
        picked = t[ar, idx]                                       # (S, …)
        return picked.unsqueeze(1).expand((S, heads) + picked.shape[1:]).clone()

    if space.symmetric:
        for key in ("dc", "dU", "dW", "vc", "vU", "vW"):
            if key in cfg:
                first = spread(cfg[key], best, half)
                second = spread(cfg[key], best + half, half)
                out[key] = torch.cat([first, second], dim=1)
        out["c0"] = torch.cat([spread(cfg["c0"], best, half),
                               spread(cfg["c0"], best + half, half)], dim=1)
        out["U0"] = spread(cfg["U0"], best, half)
        out["W0"] = spread(cfg["W0"], best, half)
    else:
        for key in ("c0", "dc", "dU", "dW", "U0", "W0", "vc", "vU", "vW"):
            if key in cfg:
                out[key] = spread(cfg[key], best, m)
    return out


def alternating_signs(starts: int, dtype, device) -> Tensor:
    """+1, −1, +1, … per start (both signs of a two-sided quantity): (starts,).

    >>> alternating_signs(3, torch.float64, "cpu").tolist()
    [1.0, -1.0, 1.0]
    """
    s = torch.ones(starts, dtype=dtype, device=device)
    s[1::2] = -1.0
    return s


# ----------------------------------------------------------------------------------------------
# searches
# ----------------------------------------------------------------------------------------------

def _lipschitz_objective(space: SearchSpace, act: Activation):
    def objective(cfg: Config) -> Tensor:
        return batched_gradient_norm(theta_of(space, cfg), cfg["X"], queries_of(space, cfg), act)
    return objective


def _merge(a: SearchResult, b: SearchResult) -> SearchResult:
    """Per start slot, the better of two results over the same number of slots."""
    better = b.best > a.best
    cfg = {k: torch.where(better.view((-1,) + (1,) * (v.dim() - 1)), b.config[k], v)
           for k, v in a.config.items()}
    return SearchResult(torch.maximum(a.best, b.best), cfg, a.trace + b.trace)


def _elite_sources(best: Tensor, fraction: float = 0.25) -> Tensor:
    """For every slot, an elite slot of the same parity (signs alternate by parity)."""
    S = best.shape[0]
    src = torch.arange(S, device=best.device)
    for parity in (0, 1):
        slots = torch.arange(parity, S, 2, device=best.device)
        if slots.numel() == 0:
            continue
        n_elite = max(1, math.ceil(fraction * slots.numel()))
        elite = slots[torch.argsort(best[slots], descending=True)[:n_elite]]
        src[slots] = elite[torch.arange(slots.numel(), device=best.device) % n_elite]
    return src


def _lift_length(T: int) -> int | None:
    """The largest divisor T' ∈ {2, 3, 4} of T when T > 4 (None: no lifting)."""
    if T <= 4:
        return None
    for short in (4, 3, 2):
        if T % short == 0:
            return short
    return None


def drive(space: SearchSpace, objective, cfg: Config, *, free: Sequence[str], steps: int,
          seed: int, head_scores=None, restarts: int = 1, surrogate=None,
          lift: bool = True, method: str = "adam", lr: float = 0.1,
          polish_method: str = "normalized", polish_lr: float = 0.03,
          keep: int = 0) -> SearchResult:
    """The search schedule used by every measurement.

    0. if the tokens are free and T > 4 (``lift``): the whole schedule at a short length T' | T,
       whose best points, tokens tiled to length T, replace half of the starts (never the first
       ``keep`` slots: hand-built and paper starts);
    1. projected ascent from ``cfg`` (``steps`` steps, ``method``: Adam or normalised steps) on
       ``surrogate`` if given (the value of ``objective`` is tracked), else on ``objective``;
    2. if ``head_scores`` (cfg ↦ (S, m') per-head or per-pair scores) is given: copy each start's
       best head into every head (:func:`clone_best_head`) and polish (steps/2 steps of
       ``polish_method``, rate ``polish_lr``);
    3. ``restarts`` times: refill every slot with a perturbed copy of an elite slot (top quarter,
       same sign parity) and ascend again (steps/2), then clone and polish again.
    Every slot keeps its best feasible point over all phases.
    """
    main = surrogate if surrogate is not None else objective
    measure = objective if surrogate is not None else None
    short = _lift_length(space.T) if lift and "X" in free and steps > 0 else None
    if short is not None:
        # search at a short length first, then tile every token T/T' times: duplicated tokens
        # keep the softmax geometry exactly (same a, G, f, f_lin, Hessian), so each lifted start
        # begins at the short search's value; every other pair of slots stays random.
        small = {k: (v[:, :, :short].clone() if k == "X" else v) for k, v in cfg.items()}
        sres = drive(replace(space, T=short), objective, small, free=free, steps=steps,
                     seed=seed, head_scores=head_scores, restarts=restarts,
                     surrogate=surrogate, lift=False, method=method, lr=lr,
                     polish_method=polish_method, polish_lr=polish_lr)
        lifted = sres.config["X"].repeat_interleave(space.T // short, dim=2)
        slots = torch.arange(cfg["X"].shape[0], device=lifted.device)
        use = (((slots // 2) % 2 == 0) & (slots >= keep)).view(-1, 1, 1, 1)
        cfg = {k: (torch.where(use.view((-1,) + (1,) * (v.dim() - 1)), sres.config[k], v)
                   if k != "X" else torch.where(use, lifted, v)) for k, v in cfg.items()}
    res = ascend(space, cfg, main, free=free, steps=steps, measure=measure, method=method, lr=lr)
    if steps == 0:
        return res
    polish = max(steps // 2, 10)
    theta_free = bool({"dc", "dU", "dW"} & set(free))

    def clone_polish(r: SearchResult) -> SearchResult:
        if head_scores is None or not theta_free or space.m == 2 and space.symmetric:
            return r
        with torch.no_grad():
            cloned = clone_best_head(space, r.config, head_scores(r.config))
        return _merge(r, ascend(space, cloned, objective, free=free, steps=polish,
                                lr=polish_lr, method=polish_method))

    res = clone_polish(res)
    S = res.best.shape[0]
    for k in range(restarts if S >= 4 else 0):
        src = _elite_sources(res.best)
        base = {key: v[src].detach().clone() for key, v in res.config.items()}
        moved = perturb(space, base, scale=0.5, seed=seed + 7919 * (k + 1), keys=free)
        again = clone_polish(ascend(space, moved, main, free=free, steps=max(steps // 2, 1),
                                    measure=measure, method=method, lr=lr))
        res = _merge(res, again)
    return res


def search_lipschitz(space: SearchSpace, act: Activation, *, starts: int, steps: int, seed: int,
                     dtype: torch.dtype, device: torch.device,
                     extra: Config | None = None,
                     free: Sequence[str] = ALL_VARS, restarts: int = 1) -> SearchResult:
    """Projected ascent on max_j ‖∇_θ f(X_j; θ)‖ (closed form, Lemma 1) from random starts
    (plus ``extra`` starts) with the :func:`drive` schedule (best-head cloning by φ_i)."""
    cfg = random_configuration(space, starts, seed=seed, dtype=dtype, device=device)
    if extra is not None:
        cfg = concat_configs([extra, cfg])

    def scores(c: Config) -> Tensor:
        sc = per_head_gradient_sq(space, c, act).amax(dim=1)
        if space.symmetric:   # clone_best_head picks pairs (i, i + m/2) under the symmetric init
            half = space.m // 2
            sc = sc[:, :half] + sc[:, half:]
        return sc

    # block-weighted surrogates: start s ascends on (1/m)Σ_i (w_c φ_c + w_U φ_U + w_W φ_W) with
    # (w_c, w_U, w_W) cycling over full / W-block / (U, W)-blocks: the saturated plateau σ² → σ₀²
    # of the c block is a local maximum that traps plain ascent on the full norm.
    S = cfg["dc"].shape[0]
    table = torch.tensor([[1.0, 1.0, 1.0], [0.0, 0.0, 1.0], [0.0, 1.0, 1.0]], dtype=dtype,
                         device=device)
    weights = table[torch.arange(S, device=device) % 3]                 # (S, 3)

    def surrogate(c: Config) -> Tensor:
        pc, pu, pw = per_head_gradient_blocks(space, c, act)
        w = weights.view(S, 3, 1, 1)
        mix = w[:, 0] * pc + w[:, 1] * pu + w[:, 2] * pw
        return torch.sqrt(mix.mean(-1).clamp_min(1e-300))

    return drive(space, _lipschitz_objective(space, act), cfg, free=free, steps=steps,
                 seed=seed, head_scores=scores, restarts=restarts, surrogate=surrogate,
                 method="normalized", keep=0 if extra is None else extra["dc"].shape[0])


def autograd_gradient_norm(space: SearchSpace, cfg: Config, act: Activation) -> Tensor:
    """‖∇_θ f(X_sj; θ_s)‖ by autograd (independent of the closed form): (S, n)."""
    theta = Params(*(t.detach().requires_grad_(True) for t in theta_of(space, cfg)))
    X, q = cfg["X"].detach(), queries_of(space, cfg).detach()
    out = batched_forward(theta, X, q, act)                       # (S, n)
    norms = []
    for j in range(out.shape[1]):  # samples per start (1 in the searches)
        g = torch.autograd.grad(out[:, j].sum(), tuple(theta), retain_graph=True)
        norms.append(torch.sqrt(sum((t.flatten(1) ** 2).sum(1) for t in g)))
    return torch.stack(norms, dim=1)


def _rayleigh_objective(space: SearchSpace, act: Activation, sign: Tensor):
    def objective(cfg: Config) -> Tensor:
        v = Params(cfg["vc"], cfg["vU"], cfg["vW"])
        r = rayleigh_quotients(theta_of(space, cfg), cfg["X"], queries_of(space, cfg), v, act)
        return sign.unsqueeze(1) * r
    return objective


def search_smoothness(space: SearchSpace, act: Activation, *, starts: int, steps: int, seed: int,
                      dtype: torch.dtype, device: torch.device, lanczos: int = 32,
                      base: Config | None = None,
                      free: Sequence[str] = ALL_VARS + DIRECTION_VARS, restarts: int = 1
                      ) -> tuple[SearchResult, Tensor]:
    """Joint projected ascent on ±vᵢᵀ∇²_{θ_i} f vᵢ over (θ, U(0), W(0), X, q, unit v per head),
    then a per-head Lanczos (started at the best v) at each start's best point.

    Returns (search result, spectral (S,)): max over heads of max(|λ_min|, |λ_max|) of the Ritz
    values, each a lower bound of the true ‖∇²_θ f(X_s; θ_s)‖_op.
    """
    if not space.direction or space.samples != 1:
        raise ValueError("`space` needs direction=True and samples=1 for Hessian searches")
    cfg = base if base is not None else random_configuration(space, starts, seed=seed,
                                                             dtype=dtype, device=device)
    S = cfg["dc"].shape[0]
    sign = alternating_signs(S, dtype, device)
    result = drive(space, _rayleigh_objective(space, act, sign), cfg, free=free, steps=steps,
                   seed=seed, restarts=restarts)
    best = result.config
    start = torch.cat([best["vc"].unsqueeze(-1), best["vU"], best["vW"].flatten(-2)], dim=-1)
    lz = head_lanczos(theta_of(space, best), best["X"], queries_of(space, best), act,
                      k=lanczos, seed=seed, start=start)
    return result, lz.spectral.amax(dim=1)


def _linearization_objective(space: SearchSpace, act: Activation, sign: Tensor):
    def objective(cfg: Config) -> Tensor:
        theta, theta0 = theta_of(space, cfg), init_of(space, cfg)
        X, q = cfg["X"], queries_of(space, cfg)
        gap = batched_forward(theta, X, q, act) - batched_linearized_output(theta0, theta, X, q,
                                                                            act)
        return sign.unsqueeze(1) * gap
    return objective


def search_linearization(space: SearchSpace, act: Activation, *, starts: int, steps: int,
                         seed: int, dtype: torch.dtype, device: torch.device,
                         extra: Config | None = None, base: Config | None = None,
                         free: Sequence[str] = ALL_VARS, restarts: int = 1) -> SearchResult:
    """Projected ascent on ±(f − f_lin) (both signs, alternating over starts; f_lin in closed form,
    Definition 3) with the :func:`drive` schedule (cloning by the signed per-head terms e_i)."""
    cfg = base if base is not None else random_configuration(space, starts, seed=seed,
                                                             dtype=dtype, device=device)
    if extra is not None:
        cfg = concat_configs([extra, cfg])
    sign = alternating_signs(cfg["dc"].shape[0], dtype, device)

    def scores(c: Config) -> Tensor:
        terms = per_head_linearization_terms(space, c, act)               # (S, n, m)
        sc = (sign.view(-1, 1, 1) * terms).amax(dim=1)
        if space.symmetric:
            half = space.m // 2
            sc = sc[:, :half] + sc[:, half:]
        return sc

    return drive(space, _linearization_objective(space, act, sign), cfg, free=free, steps=steps,
                 seed=seed, head_scores=scores, restarts=restarts,
                 keep=0 if extra is None else extra["dc"].shape[0])


def _output_objective(space: SearchSpace, act: Activation, sign: Tensor):
    def objective(cfg: Config) -> Tensor:
        f = batched_forward(theta_of(space, cfg), cfg["X"], queries_of(space, cfg), act)
        return sign.unsqueeze(1) * f
    return objective


def search_output(space: SearchSpace, act: Activation, *, starts: int, steps: int, seed: int,
                  dtype: torch.dtype, device: torch.device, base: Config | None = None,
                  free: Sequence[str] = ALL_VARS, restarts: int = 1) -> SearchResult:
    """Projected ascent on ±f(X; θ) under the symmetric init (f(θ(0)) ≡ 0, Lemma 6) with the
    :func:`drive` schedule (cloning by pairs)."""
    if not space.symmetric:
        raise ValueError("`space` must be symmetric: Lemma 6's envelope uses f(theta(0)) = 0")
    cfg = base if base is not None else random_configuration(space, starts, seed=seed,
                                                             dtype=dtype, device=device)
    sign = alternating_signs(cfg["dc"].shape[0], dtype, device)
    half = space.m // 2

    def scores(c: Config) -> Tensor:
        theta, q = theta_of(space, c), queries_of(space, c)
        F = vmap(functools.partial(head_features, act=act))(theta, c["X"], q)
        terms = theta.c.unsqueeze(1) * F.h                                 # (S, n, m)
        return (sign.view(-1, 1, 1) * (terms[..., :half] + terms[..., half:])).amax(dim=1)

    return drive(space, _output_objective(space, act, sign), cfg, free=free, steps=steps,
                 seed=seed, head_scores=scores, restarts=restarts)


def loss_gradient_norm(space: SearchSpace, cfg: Config, act: Activation) -> Tensor:
    """‖∇R̂(θ_s)‖ per start s (closed form, Lemma 1) on each start's inputs and labels: (S,);
    the objective of :func:`search_loss_gradient`, and what Lemma 6's loss-gradient envelope
    is measured by on data."""
    _, grad, _ = batched_loss_gradient(theta_of(space, cfg), cfg["X"], queries_of(space, cfg),
                                       cfg["y"], act)
    return torch.sqrt(sum((g.flatten(1) ** 2).sum(1) for g in grad))    # (S,)


def search_loss_gradient(space: SearchSpace, act: Activation, *, starts: int, steps: int,
                         seed: int, dtype: torch.dtype, device: torch.device,
                         restarts: int = 1) -> SearchResult:
    """Projected ascent on ‖∇R̂(θ)‖ (closed form, Lemma 1) over θ, the symmetric init, the inputs
    and labels |y| ≤ Y."""
    if not space.symmetric or space.label_max is None:
        raise ValueError("`space` must be symmetric with label_max set for the loss gradient")
    cfg = random_configuration(space, starts, seed=seed, dtype=dtype, device=device)
    return drive(space, lambda c: loss_gradient_norm(space, c, act).unsqueeze(1), cfg,
                 free=ALL_VARS, steps=steps, seed=seed, restarts=restarts)


def search_lipschitz_fixed(space: SearchSpace, act: Activation, cfg: Config,
                           steps: int, seed: int = 0) -> SearchResult:
    """Ascent on ‖∇f‖ over θ only (init and inputs fixed), :func:`drive` schedule."""
    return drive(space, _lipschitz_objective(space, act), cfg, free=THETA_VARS, steps=steps,
                 seed=seed)


def head_covariance(space: SearchSpace, cfg: Config, act: Activation) -> Tensor:
    """G = X J(z_i) Xᵀ = Σ_t s_t x_t x_tᵀ − a aᵀ per (start, sample, head): (S, n, m, d, d);
    the matrix of Remark 3 (its λ_max against max_t ‖x_t‖²) and of the tight route's label
    attention factor E_U‖G U‖·‖q‖ (:mod:`boundcalc.validators.checks.label_envelope`)."""
    theta, q = theta_of(space, cfg), queries_of(space, cfg)
    F = vmap(functools.partial(head_features, act=act))(theta, cfg["X"], q)
    second = torch.einsum("snmt,sntd,snte->snmde", F.s, cfg["X"], cfg["X"])
    return second - F.a.unsqueeze(-1) * F.a.unsqueeze(-2)
