"""The tight route's label envelope Y measured (``tight.label_attention``,
``tight.label_envelope_Y``; docs/derivations.md §6.1 and §5.1 step 2; the module docstring of
:mod:`boundcalc.validators.checks.tight`, which runs these searches in ``validate_tight``).

* the attention factor E_U‖G U‖·‖q‖ (U ~ N(0, I_d), G = X J Xᵀ) against its bound 1: projected
  ascent over tokens, W and q on a Monte Carlo mean, then the exact expectation at the maximiser
  (:func:`expected_norm_exact`, an mpmath integral over G's eigenvalues);
* sup over the input of sup_v f*(X) = E_{U,W}[ν_c|σ(p)| + ν_uσ'(p)‖a‖ + ν_wσ'(p)‖G U‖‖q‖]:
  projected ascent on a mean over fixed init draws, re-estimated on fresh draws at the maximiser.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor
from torch.func import vmap

from ..model import Activation, Params, head_features
from .adversary import drive, head_covariance
from .ascent import SearchResult
from .space import INPUT_VARS, Config, SearchSpace, queries_of, random_configuration, select

#: Monte Carlo init draws of the label envelope's search (the re-estimate uses 4 times as many).
DEFAULT_DRAWS = 1024


def expected_norm_exact(eigenvalues: Sequence[float], *, dps: int = 30) -> float:
    """E‖Λ g‖, g ~ N(0, I), Λ = diag(λ) (E_U‖G U‖ with λ the eigenvalues of the symmetric G), by

        E√Q = (1/(2√π)) ∫₀^∞ (1 − E e^{−tQ}) t^{−3/2} dt,  E e^{−tQ} = Π_k (1 + 2tλ_k²)^{−1/2},

    (√x = (1/(2√π))∫₀^∞ (1 − e^{−tx}) t^{−3/2} dt for x ≥ 0), in mpmath at ``dps`` digits.

    Example:
        >>> round(expected_norm_exact([1.0]), 12) == round(math.sqrt(2 / math.pi), 12)
        True
    """
    import mpmath

    lam2 = [mpmath.mpf(float(v)) ** 2 for v in eigenvalues]
    if not any(lam2):
        return 0.0
    with mpmath.workdps(dps):
        def integrand(t):
            prod = mpmath.mpf(1)
            for v in lam2:
                prod /= mpmath.sqrt(1 + 2 * t * v)
            return -mpmath.expm1(mpmath.log(prod)) * t ** mpmath.mpf(-1.5)

        scale = 1 / max(lam2)
        value = mpmath.quad(integrand, [0, scale, 10 * scale, 100 * scale, mpmath.inf])
        return float(value / (2 * mpmath.sqrt(mpmath.pi)))


def _gaussian_draws(d: int, draws: int, seed: int, dtype, device) -> Tensor:
    gen = torch.Generator().manual_seed(int(seed))
    return torch.randn(draws, d, generator=gen, dtype=torch.float64).to(device=device,
                                                                         dtype=dtype)


def search_label_attention(space: SearchSpace, act: Activation, *, starts: int, steps: int,
                           seed: int, dtype: torch.dtype, device: torch.device,
                           draws: int = DEFAULT_DRAWS, restarts: int = 1
                           ) -> tuple[SearchResult, dict]:
    """sup over tokens, W and q of E_U‖G U‖·‖q‖ (U ~ N(0, I_d), G = X J Xᵀ of head 1).

    The ascent follows the Monte Carlo mean over ``draws`` fixed Gaussian vectors; the reported
    value is the exact expectation at the maximiser (:func:`expected_norm_exact` of G's
    eigenvalues, times ‖q‖), with ‖G‖_F and tr G there (the chain E‖GU‖ ≤ ‖G‖_F ≤ tr G ≤ 1)."""
    U = _gaussian_draws(space.d, draws, seed + 17, dtype, device)

    def objective(c: Config) -> Tensor:
        G = head_covariance(space, c, act)[:, :, 0]                 # (S, n, d, d)
        qn = queries_of(space, c).norm(dim=-1)                          # (S, n)
        GU = torch.einsum("snde,ke->snkd", G, U)
        return GU.norm(dim=-1).mean(-1) * qn

    cfg = random_configuration(space, starts, seed=seed, dtype=dtype, device=device)
    res = drive(space, objective, cfg, free=("W0",) + INPUT_VARS, steps=steps, seed=seed,
                restarts=restarts)
    best = select(res.config, res.argmax)
    with torch.no_grad():
        G = head_covariance(space, best, act)[0, :, 0]              # (n, d, d)
        qn = queries_of(space, best)[0].norm(dim=-1)
        mc = objective(best)[0]
        j = int(torch.argmax(mc))
        lam = torch.linalg.eigvalsh(G[j].double().cpu())
    exact = expected_norm_exact(lam.tolist()) * float(qn[j])
    info = {"monte_carlo": float(mc[j]), "frobenius": float(lam.norm()),
            "trace": float(lam.sum()), "q_norm": float(qn[j]), "draws": draws}
    return res, {"exact": exact, **info}


def _label_sup_terms(space: SearchSpace, cfg: Config, heads: Params, act: Activation,
                     nu: tuple[float, float, float]) -> Tensor:
    """(S, n): the init-draw mean of ν_c|σ(p)| + ν_uσ'(p)‖a‖ + ν_wσ'(p)‖G U‖‖q‖ over the draws
    ``heads`` (U, W) at every start's inputs: sup over the transport map v of f*(X) (Lemma 5's
    ψ with v chosen pointwise)."""
    q = queries_of(space, cfg)

    def one(X: Tensor, qq: Tensor) -> Tensor:
        F = head_features(heads, X, qq, act)                            # (n, M, …)
        qn = qq.norm(dim=-1, keepdim=True)
        val = (nu[0] * F.h.abs() + nu[1] * F.dh * F.a.norm(dim=-1)
               + nu[2] * F.dh * F.GU.norm(dim=-1) * qn)
        return val.mean(-1)

    return vmap(one)(cfg["X"], q)


def _init_draws(d: int, draws: int, seed: int, dtype, device) -> Params:
    """``draws`` (U, W) samples of the init distribution (c unused)."""
    gen = torch.Generator().manual_seed(int(seed))
    U = torch.randn(draws, d, generator=gen, dtype=torch.float64)
    W = torch.randn(draws, d, d, generator=gen, dtype=torch.float64)
    return Params(torch.ones(draws, dtype=torch.float64), U, W).to(device=device, dtype=dtype)


def search_label_envelope(space: SearchSpace, act: Activation, nu: tuple[float, float, float],
                          *, starts: int, steps: int, seed: int, dtype: torch.dtype,
                          device: torch.device, draws: int = DEFAULT_DRAWS, restarts: int = 1
                          ) -> tuple[SearchResult, dict]:
    """sup over the input (tokens, q) of sup_v f*(X) = E_{U,W}[ν_c|σ| + ν_uσ'‖a‖ + ν_wσ'‖GU‖‖q‖].

    The ascent follows the mean over ``draws`` fixed init draws; the reported value is the mean
    over 4·``draws`` fresh draws at the maximiser (unbiased), with its standard error."""
    heads = _init_draws(space.d, draws, seed + 29, dtype, device)

    def objective(c: Config) -> Tensor:
        return _label_sup_terms(space, c, heads, act, nu)

    cfg = random_configuration(space, starts, seed=seed, dtype=dtype, device=device)
    res = drive(space, objective, cfg, free=INPUT_VARS, steps=steps, seed=seed,
                restarts=restarts)
    best = select(res.config, res.argmax)
    fresh = _init_draws(space.d, 4 * draws, seed + 31, dtype, device)
    with torch.no_grad():
        q = queries_of(space, best)[0]
        F = head_features(fresh, best["X"][0], q, act)
        qn = q.norm(dim=-1, keepdim=True)
        per = (nu[0] * F.h.abs() + nu[1] * F.dh * F.a.norm(dim=-1)
               + nu[2] * F.dh * F.GU.norm(dim=-1) * qn)                  # (n, 4·draws)
        means = per.mean(-1)
        j = int(torch.argmax(means))
        se = float(per[j].std() / math.sqrt(per.shape[-1]))
    return res, {"estimate": float(means[j]), "standard_error": se,
                 "search_value": res.value, "draws": 4 * draws}


__all__ = [
    "DEFAULT_DRAWS", "expected_norm_exact", "search_label_attention",
    "search_label_envelope",
]
