"""Measurement that tries to falsify the gradnorm route's new step (docs/derivations.md §7.9).

The gradnorm route of Theorem 1 (``theorem1_gradnorm``) adds one inequality to the tight route: on
E_avg, for every θ ∈ Ω_ρ, every n admissible inputs and every labels,

    ‖∇R̂(θ)‖² ≤ 4L²R̂(θ),   R̂(θ) = (1/n)Σ_j (f(X_j; θ) − y_j)²,

with L the tight route's Lipschitz constant. The labels enter only through the residual vector r,
and ∇R̂ = (2/n)Jᵀr with J the n × P Jacobian (rows ∇_θ f(X_j; θ)), so the supremum over the labels
is exact: sup_r ‖∇R̂‖ / (2√R̂) = sup_r ‖Jᵀr‖ / (√n‖r‖) = √(λ_max(JJᵀ)/n), attained at the top
eigenvector of the n × n Gram matrix JJᵀ (:func:`gradient_gram`, closed form of Lemma 1). The record
``gradnorm.gradient_residual`` is the largest √(λ_max(JJᵀ)/n) the adversarial schedule of
:func:`boundcalc.validators.checks.adversary.drive` finds over θ ∈ Ω_ρ, W(0), the inputs and U(0) in
the root-mean-square ball of E_avg (the tight route's domain; ``samples`` inputs per start), against
L. A ratio above 1 falsifies the step.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import torch
from torch import Tensor
from torch.func import vmap

from boundcalc.inputs.params import validate

from ..device import resolve_device, resolve_dtype
from ..model import Activation, get_activation, head_features
from .adversary import ALL_VARS, drive
from .ascent import SearchResult
from .records import DEFAULT_STARTS, DEFAULT_STEPS
from .space import Config, SearchSpace, queries_of, random_configuration, theta_of
from .tight import tight_bounds

__all__ = ["gradient_gram", "gradient_residual_ratio", "search_gradient_residual",
           "validate_gradnorm"]


def gradient_gram(space: SearchSpace, cfg: Config, act: Activation) -> Tensor:
    """(S, n, n): the Gram matrix JJᵀ of the per-sample gradients, ⟨∇f(X_j; θ), ∇f(X_k; θ)⟩ =
    (1/m)Σ_i [h_ij h_ik + c_i²σ'_ij σ'_ik (a_ij·a_ik + (G_ij U_i)·(G_ik U_i)(q_j·q_k))] (Lemma 1's
    blocks: c_i, U_i and the rank-one W_i block along q)."""
    theta, q = theta_of(space, cfg), queries_of(space, cfg)
    F = vmap(functools.partial(head_features, act=act))(theta, cfg["X"], q)
    lead = (theta.c.unsqueeze(1) * F.dh).unsqueeze(-1)                 # (S, n, m, 1)
    gu, gw = lead * F.a, lead * F.GU                                   # (S, n, m, d)
    gram = (torch.einsum("sjm,skm->sjk", F.h, F.h)
            + torch.einsum("sjmd,skmd->sjk", gu, gu)
            + torch.einsum("sjmd,skmd->sjk", gw, gw) * torch.einsum("sjd,skd->sjk", q, q))
    return gram / space.m


def gradient_residual_ratio(space: SearchSpace, cfg: Config, act: Activation) -> Tensor:
    """(S, 1): sup over the labels of ‖∇R̂(θ)‖ / (2√R̂(θ)) = √(λ_max(JJᵀ)/n) at each start."""
    gram = gradient_gram(space, cfg, act)
    top = torch.linalg.eigvalsh(gram)[..., -1].clamp_min(0.0)
    return torch.sqrt(top / gram.shape[-1]).unsqueeze(-1)


def search_gradient_residual(space: SearchSpace, act: Activation, *, starts: int, steps: int,
                             seed: int, dtype: torch.dtype, device: torch.device,
                             free: Sequence[str] = ALL_VARS) -> SearchResult:
    """Projected ascent on √(λ_max(JJᵀ)/n) (:func:`gradient_residual_ratio`) with the
    :func:`drive` schedule, from random starts."""
    cfg = random_configuration(space, starts, seed=seed, dtype=dtype, device=device)
    return drive(space, lambda c: gradient_residual_ratio(space, c, act), cfg, free=free,
                 steps=steps, seed=seed)


def validate_gradnorm(m: int, d: int, T: int, rho: str | float, *, nu: object = "1",
                      delta: object = "0.05", activation: str = "tanh",
                      starts: int = DEFAULT_STARTS, steps: int = DEFAULT_STEPS, seed: int = 0,
                      samples: int = 4, query: str = "free", device: str | torch.device = "cpu",
                      dtype: torch.dtype | str = torch.float64) -> list[dict]:
    """The record ``gradnorm.gradient_residual``: the largest √(λ_max(JJᵀ)/n) found (``samples``
    inputs per start, paired and unpaired heads) against the tight route's L, which the step
    ‖∇R̂‖² ≤ 4L²R̂ of derivations.md §7.9 claims bounds it.

    Example:
        >>> [r["name"] for r in validate_gradnorm(4, 2, 2, "1", starts=2, steps=0)]
        ['gradnorm.gradient_residual', 'gradnorm.gradient_residual']
    """
    dev, dt, act = resolve_device(device), resolve_dtype(dtype), get_activation(activation)
    rho_t = validate(m=m, rho=str(rho)).rho
    rho_f = tuple(float(r) for r in rho_t)
    bounds = tight_bounds(m=m, d=d, rho=rho, nu=nu, delta=delta, activation=act.name)
    settings = {"m": m, "d": d, "T": T, "rho_c": rho_f[0], "rho_u": rho_f[1], "rho_w": rho_f[2],
                "delta": float(delta), "activation": act.name, "starts": starts, "steps": steps,
                "seed": seed, "device": str(dev), "dtype": str(dt).replace("torch.", ""),
                "route": "gradnorm", "u_bar": bounds["u_bar"], "query": query, "samples": samples}
    records = []
    for method, symmetric in (("adversarial", True), ("adversarial_unpaired", False)):
        space = SearchSpace(m=m, d=d, T=T, rho=rho_f, u_inf=bounds["u_bar"], samples=samples,
                            query=query, symmetric=symmetric, init_event="average")
        res = search_gradient_residual(space, act, starts=starts, steps=steps, seed=seed,
                                       dtype=dt, device=dev)
        measured, bound = float(res.value), bounds["lipschitz_L"]
        records.append({"name": "gradnorm.gradient_residual", "method": method,
                        "measured": measured, "bound": bound, "ratio": measured / bound,
                        "holds": bool(measured <= bound), **settings, "symmetric": symmetric})
    if not all(math.isfinite(r["measured"]) for r in records):
        raise RuntimeError("gradnorm.gradient_residual: a non-finite measurement")
    return records
