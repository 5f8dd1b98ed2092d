"""Neural tangent kernels of the shallow Transformer: empirical (width m) and the Lemma 4 limit.

**Empirical NTK** at θ = (c, U, W): K(X, X') = ⟨∇_θ f(X; θ), ∇_θ f(X'; θ)⟩. By Lemma 1 the
gradient splits into the three parameter blocks, so K = K_c + K_u + K_w with, for head i,
h_i = σ(U_iᵀa_i), s_i = σ'(U_iᵀa_i), G_i = X J(z_i) Xᵀ at X and primes for the same at X',

    K_c(X, X') = (1/m) Σ_i h_i h'_i,
    K_u(X, X') = (1/m) Σ_i c_i² s_i s'_i a_iᵀa'_i,
    K_w(X, X') = (1/m) Σ_i c_i² s_i s'_i (G_i U_i)ᵀ(G'_i U_i) (qᵀq'),

the last from ⟨G U qᵀ, G'U q'ᵀ⟩_F = (G U)ᵀ(G'U)·qᵀq'. Every block is one matrix product over the
flattened (head, coordinate) axis (:func:`empirical_ntk`); nothing of size (n, n', m) is built.

**Limit kernel** (Lemma 4). As m → ∞ at initialisation (c_i² = 1) the empirical NTK converges to
K_∞ = E_{(U,W)~init}[same three integrands]. :func:`limit_ntk` estimates it by Monte Carlo over
fresh, independent (U, W) ~ N(0, I) samples, with the standard error of each entry. The
symmetric initialisation's empirical NTK is the same estimator with m/2 distinct samples.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor

from .model import Activation, Features, Params, head_features


class NTK(NamedTuple):
    """Kernel blocks, each (n, n'): K = K_c + K_u + K_w."""

    K: Tensor
    K_c: Tensor
    K_u: Tensor
    K_w: Tensor


def _block_factors(params: Params, F: Features) -> tuple[Tensor, Tensor, Tensor]:
    """(h (n, m), c σ' a (n, m·d), c σ' G U (n, m·d)) — the three gradient blocks times √m."""
    coef = (params.c * F.dh).unsqueeze(-1)
    n = F.h.shape[0]
    return F.h, (coef * F.a).reshape(n, -1), (coef * F.GU).reshape(n, -1)


def empirical_ntk(params: Params, X: Tensor, q: Tensor, act: Activation,
                  X2: Tensor | None = None, q2: Tensor | None = None) -> NTK:
    """Empirical NTK blocks at θ between X (n, T, d) and X2 (n', T', d) (default X2 = X).

    Returns :class:`NTK` with (n, n') matrices; K equals J Jᵀ' with J the Jacobian of
    θ ↦ f(X; θ) (checked against autograd in tests/validators/test_ntk.py).
    """
    m = params.width
    F = head_features(params, X, q, act)
    hc, au, gw = _block_factors(params, F)
    if X2 is None:
        hc2, au2, gw2, q2 = hc, au, gw, q
    else:
        if q2 is None:
            raise ValueError("`q2` must be given together with `X2`")
        F2 = head_features(params, X2, q2, act)
        hc2, au2, gw2 = _block_factors(params, F2)
    K_c = hc @ hc2.T / m
    K_u = au @ au2.T / m
    K_w = (gw @ gw2.T) * (q @ q2.T) / m
    return NTK(K_c + K_u + K_w, K_c, K_u, K_w)


class LimitNTK(NamedTuple):
    """Monte Carlo estimate of the Lemma 4 kernel: blocks (n, n') and the standard error of K."""

    K: Tensor
    K_c: Tensor
    K_u: Tensor
    K_w: Tensor
    stderr: Tensor
    samples: int


def limit_ntk(X: Tensor, q: Tensor, act: Activation, *, samples: int = 4096, seed: int = 0,
              X2: Tensor | None = None, q2: Tensor | None = None,
              chunk: int = 1024) -> LimitNTK:
    """Lemma 4's K_∞(X, X') = E over (U, W) ~ init with c² = 1, by Monte Carlo.

    Args:
        X, q: inputs (n, T, d) and queries (n, d); X2, q2 optional second set (default X, q).
        act: activation; samples: number S of i.i.d. (U, W) draws (U ~ N(0, I_d), W entries
            N(0, 1), all drawn first — U then W — in float64 on the CPU from
            ``torch.Generator().manual_seed(seed)``, so the estimate does not depend on chunk).
        chunk: at most this many samples per pass; also capped so that the per-sample
            (n, n', chunk) integrands (needed for the standard error) stay below 2^22 entries.

    Returns:
        :class:`LimitNTK`; ``stderr`` is the entrywise standard error of K (sample std / √S).
    """
    if int(samples) != samples or samples < 2:
        raise ValueError(f"`samples` must be an integer >= 2, got {samples}")
    if X2 is None:
        X2, q2 = X, q
    elif q2 is None:
        raise ValueError("`q2` must be given together with `X2`")
    d = X.shape[-1]
    chunk = max(1, min(int(chunk), (1 << 22) // max(1, X.shape[0] * X2.shape[0])))
    gen = torch.Generator().manual_seed(int(seed))
    U_all = torch.randn(samples, d, generator=gen, dtype=torch.float64)
    W_all = torch.randn(samples, d, d, generator=gen, dtype=torch.float64)
    sums = [torch.zeros(X.shape[0], X2.shape[0], dtype=X.dtype, device=X.device)
            for _ in range(4)]
    sq = torch.zeros_like(sums[0])
    for done in range(0, samples, chunk):
        U, W = U_all[done:done + chunk], W_all[done:done + chunk]
        k = U.shape[0]
        heads = Params(torch.ones(k, dtype=torch.float64), U, W).to(device=X.device,
                                                                       dtype=X.dtype)
        F1 = head_features(heads, X, q, act)
        F2 = head_features(heads, X2, q2, act)
        kc = F1.h.unsqueeze(1) * F2.h.unsqueeze(0)                               # (n, n', k)
        dd = F1.dh.unsqueeze(1) * F2.dh.unsqueeze(0)
        ku = dd * torch.einsum("nkd,lkd->nlk", F1.a, F2.a)
        kw = dd * torch.einsum("nkd,lkd->nlk", F1.GU, F2.GU) * (q @ q2.T).unsqueeze(-1)
        total = kc + ku + kw
        for acc, block in zip(sums, (total, kc, ku, kw), strict=True):
            acc += block.sum(-1)
        sq += (total**2).sum(-1)
    K, K_c, K_u, K_w = (s / samples for s in sums)
    var = (sq / samples - K**2).clamp_min(0) * samples / (samples - 1)
    return LimitNTK(K, K_c, K_u, K_w, torch.sqrt(var / samples), int(samples))


__all__ = ["NTK", "LimitNTK", "empirical_ntk", "limit_ntk"]
