"""Projected gradient ascent over the search space, and per-head Hessian spectra.

**Ascent.** :func:`ascend` maximises a per-start objective by Adam steps (``maximize=True``) on the
free variables of a :class:`~.space.SearchSpace` configuration, each followed by the exact
Euclidean projection of every variable onto its set (all sets are products of balls, so the
projection is a radial shrink per block). Learning rates are scaled by each block's radius and
follow a cosine decay. The best *projected* point of every start is kept, so every reported value
is attained by a feasible configuration.

**Hessians.** The Hessian of θ ↦ f(X; θ) is block-diagonal across heads, so one Hessian-vector
product (autograd double backward) applied to a vector with one block per head returns every
head's block product at once; :func:`head_lanczos` runs an independent Lanczos iteration (full
reorthogonalisation) per (start, head). Ritz values lie inside the spectrum, so the reported
|eigenvalue| is a *lower* bound of the true ‖∇²_θ f‖_op: a value above β is a real violation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import torch
from torch import Tensor

from ..model import Activation, Params
from .space import (
    Config,
    SearchSpace,
    batched_forward,
    block_dims,
    lr_scale,
    project_,
)

__all__ = ["LanczosResult", "SearchResult", "ascend", "flatten_heads", "head_lanczos",
           "hessian_vector_product", "rayleigh_quotients", "unflatten_heads"]


# ----------------------------------------------------------------------------------------------
# projected gradient ascent
# ----------------------------------------------------------------------------------------------

def _block_radius(space: SearchSpace, key: str) -> float:
    """Radius of one block's set (W(0): the Frobenius size of a unit-variance-per-row matrix
    scaled like :func:`lr_scale`)."""
    dims = block_dims(space, key)
    size = {0: 1, 1: space.d, 2: space.d * space.d}[dims]
    if key.startswith("v"):
        size = space.head_dim
    if key == "U0" and dims == 2:
        size = space.init_heads * space.d
    return lr_scale(space, key) * math.sqrt(size)


def _ball_radius(space: SearchSpace, key: str) -> float | None:
    """Radius of the ball constraint of a block (None: unconstrained or not a ball)."""
    rc, ru, rw = space.radii
    return {"dU": ru, "dW": rw, "U0": space.init_ball_radius, "X": 1.0, "q": 1.0, "vU": None,
            "vW": None}.get(key)


def _normalized_step(space: SearchSpace, key: str, value: Tensor, grad: Tensor) -> Tensor:
    """Per block: the gradient, with its outward radial part removed when the block sits on the
    sphere of its ball (the Riemannian gradient of the active constraint), normalised to unit
    length (sign for scalar blocks), times the block's radius."""
    dims = block_dims(space, key)
    if dims == 0:
        return _block_radius(space, key) * torch.sign(grad)

    def bnorm(t: Tensor) -> Tensor:
        n = t.flatten(-dims).norm(dim=-1) if dims > 1 else t.norm(dim=-1)
        return n.reshape(n.shape + (1,) * dims)

    radius = _ball_radius(space, key)
    if radius is not None and radius > 0:
        vnorm = bnorm(value)
        unit_x = value / vnorm.clamp_min(1e-300)
        radial = (grad * unit_x).flatten(-dims).sum(-1).reshape(vnorm.shape)
        active = (vnorm >= radius * (1 - 1e-9)) & (radial > 0)
        grad = torch.where(active, grad - radial * unit_x, grad)
    return _block_radius(space, key) * grad / bnorm(grad).clamp_min(1e-300)


@dataclass
class SearchResult:
    """Outcome of :func:`ascend`.

    Attributes:
        best: (S,) best objective value of every start (max over its columns).
        config: the configuration at which each start attained ``best`` (projected, feasible).
        trace: max over starts of the objective after every step (length steps + 1).
    """

    best: Tensor
    config: Config
    trace: list[float]

    @property
    def argmax(self) -> int:
        """Index of the best start."""
        return int(torch.argmax(self.best))

    @property
    def value(self) -> float:
        """max over starts of :attr:`best`."""
        return float(self.best.max())


def ascend(space: SearchSpace, cfg: Config, objective: Callable[[Config], Tensor], *,
           free: Iterable[str], steps: int, lr: float = 0.1,
           final_lr_fraction: float = 0.01,
           measure: Callable[[Config], Tensor] | None = None,
           method: str = "adam") -> SearchResult:
    """Projected gradient ascent of ``objective`` over the variables named in ``free``.

    Args:
        space: the constraint sets.
        cfg: starting configuration (copied; projected first).
        objective: maps a configuration to an (S, k) tensor; start s's value is the max over its
            k columns (e.g. samples, heads), the ascent direction the gradient of the sum of all
            entries (starts are independent, so every start follows its own gradient).
        free: variable names to optimise; the others stay fixed.
        steps: number of ascent steps (0: evaluate only).
        lr: Adam learning rate in units of each set's coordinate scale; cosine decay to
            ``lr * final_lr_fraction``.
        measure: when given, the (S, k) quantity whose best value is tracked (evaluated at the
            same projected points, without gradients); the ascent still follows ``objective``
            (e.g. a surrogate that weights the blocks of a norm differently per start).
        method: ``'adam'`` (Adam, ``maximize=True``, coordinate-wise scaling) or
            ``'normalized'`` (per-block normalised gradient steps of length lr × the block's
            radius: direction-faithful, converges onto the sphere of an active ball constraint).

    Returns:
        :class:`SearchResult` with the best feasible value and configuration of every start.
    """
    if steps < 0:
        raise ValueError(f"`steps` must be >= 0, got {steps}")
    if lr <= 0:
        raise ValueError(f"`lr` must be > 0, got {lr}")
    cfg = {k: v.detach().clone() for k, v in cfg.items()}
    project_(space, cfg)
    free = [k for k in free if k in cfg]
    groups = []
    for key in free:
        cfg[key].requires_grad_(True)
        scale = lr_scale(space, key)
        if scale > 0:
            groups.append({"params": [cfg[key]], "lr": lr * scale, "base": lr * scale})
    if method not in ("adam", "normalized"):
        raise ValueError(f"`method` must be 'adam' or 'normalized', got {method!r}")
    opt = None
    if groups and steps > 0:
        opt = (torch.optim.Adam(groups, maximize=True, foreach=True) if method == "adam"
               else torch.optim.SGD(groups, lr=lr, maximize=True))
    best = None
    best_cfg = {k: v.detach().clone() for k, v in cfg.items()}
    trace: list[float] = []
    for step in range(steps + 1):
        last = step == steps or opt is None
        with torch.set_grad_enabled(not last):
            values = objective(cfg)
        if measure is not None:
            with torch.no_grad():
                tracked = measure(cfg)
        else:
            tracked = values.detach()
        per_start = tracked.amax(dim=1)
        per_start = torch.nan_to_num(per_start, nan=-math.inf)
        if best is None:
            best = per_start.clone()
            improved = torch.ones_like(best, dtype=torch.bool)
        else:
            improved = per_start > best
            best = torch.where(improved, per_start, best)
        for key, value in cfg.items():
            mask = improved.view((-1,) + (1,) * (value.dim() - 1))
            best_cfg[key] = torch.where(mask, value.detach(), best_cfg[key])
        trace.append(float(best.max()))
        if last:
            break
        opt.zero_grad(set_to_none=True)
        values.sum().backward()
        frac = step / max(steps - 1, 1)
        factor = final_lr_fraction + (1 - final_lr_fraction) * 0.5 * (1 + math.cos(math.pi * frac))
        for group in groups:
            group["lr"] = group["base"] * factor
            for p in group["params"]:
                if p.grad is not None:
                    torch.nan_to_num_(p.grad, nan=0.0, posinf=0.0, neginf=0.0)
        if method == "normalized":
            with torch.no_grad():
                for key in free:
                    t = cfg[key]
                    if t.grad is not None:
                        t.add_(lr * factor * _normalized_step(space, key, t, t.grad))
        else:
            opt.step()
        project_(space, cfg)
    return SearchResult(best, best_cfg, trace)


# ----------------------------------------------------------------------------------------------
# Hessian-vector products and per-head Lanczos
# ----------------------------------------------------------------------------------------------

def _as_grad_input(t: Tensor) -> Tensor:
    return t if t.requires_grad else t.detach().requires_grad_(True)


def flatten_heads(p: Params) -> Tensor:
    """(c, U, W) blocks (S, m), (S, m, d), (S, m, d, d) → one (S, m, P) tensor, P = 1 + d + d²."""
    return torch.cat([p.c.unsqueeze(-1), p.U, p.W.flatten(-2)], dim=-1)


def unflatten_heads(v: Tensor, d: int) -> Params:
    """Inverse of :func:`flatten_heads`."""
    return Params(v[..., 0], v[..., 1:1 + d], v[..., 1 + d:].unflatten(-1, (d, d)))


def hessian_vector_product(theta: Params, X: Tensor, q: Tensor, act: Activation,
                           create_graph: bool = False) -> Callable[[Params], Params]:
    """v ↦ ∇²_θ f(X_s; θ_s)·v_s for every start s (one sample per start), by double backward.

    ``theta`` blocks (S, m, …) must be tensors in the autograd graph (leaves or not);
    X (S, 1, T, d).
    f is summed over starts; each start's output depends only on its own θ_s, so the result is
    the per-start Hessian-vector product. Independent of the closed forms of the model module.
    """
    if X.shape[1] != 1:
        raise ValueError(f"`X` must hold one sample per start for Hessians, got {X.shape[1]}")
    with torch.enable_grad():
        out = batched_forward(theta, X, q, act).sum()
        grads = torch.autograd.grad(out, tuple(theta), create_graph=True)

    def hvp(v: Params) -> Params:
        with torch.enable_grad():
            dot = sum((g * w).sum() for g, w in zip(grads, v, strict=True))
            return Params(*torch.autograd.grad(dot, tuple(theta), retain_graph=True,
                                               create_graph=create_graph))

    return hvp


def rayleigh_quotients(theta: Params, X: Tensor, q: Tensor, v: Params,
                       act: Activation) -> Tensor:
    """vᵢᵀ ∇²_{θ_i} f(X_s; θ_s) vᵢ for every start s and head i: (S, m).

    Differentiable in θ, X, q and v (third-order autograd).

    The per-head Rayleigh quotient of the block-diagonal Hessian (v_i need not be normalised).
    """
    keep_graph = torch.is_grad_enabled()
    with torch.enable_grad():
        theta = Params(*(_as_grad_input(t) for t in theta))
        out = batched_forward(theta, X, q, act).sum()
        grads = torch.autograd.grad(out, tuple(theta), create_graph=True)
        dot = sum((g * w).sum() for g, w in zip(grads, v, strict=True))
        hv = torch.autograd.grad(dot, tuple(theta), create_graph=keep_graph)
        r = hv[0] * v.c + (hv[1] * v.U).sum(-1) + (hv[2] * v.W).sum((-2, -1))
    return r if keep_graph else r.detach()


@dataclass
class LanczosResult:
    """Extreme Ritz pairs of every (start, head) Hessian block.

    Attributes:
        lam_min, lam_max: (S, m) smallest and largest Ritz values (inside the block's spectrum).
        vec_min, vec_max: (S, m, P) the corresponding unit Ritz vectors.
    """

    lam_min: Tensor
    lam_max: Tensor
    vec_min: Tensor
    vec_max: Tensor

    @property
    def spectral(self) -> Tensor:
        """(S, m) max(|λ_min|, |λ_max|): a lower bound of each block's operator norm."""
        return torch.maximum(self.lam_min.abs(), self.lam_max.abs())


def head_lanczos(theta: Params, X: Tensor, q: Tensor, act: Activation, *, k: int,
                 seed: int = 0, start: Tensor | None = None) -> LanczosResult:
    """Per-head Lanczos with full reorthogonalisation on ∇²_θ f(X_s; θ_s) (block-diagonal).

    Args:
        theta: detached θ blocks (S, m, …). X: (S, 1, T, d). q: (S, 1, d).
        k: Krylov dimension, capped at P = 1 + d + d² (k = P gives the exact spectrum of each block
            up to rounding).
        seed: seed of the random starting vectors; ``start`` (S, m, P) overrides them.

    Returns:
        :class:`LanczosResult`. Each block costs k Hessian-vector products, shared by all blocks.
    """
    S, m = theta.c.shape
    d = theta.U.shape[-1]
    P = 1 + d + d * d
    k = max(1, min(int(k), P))
    theta = Params(*(t.detach().requires_grad_(True) for t in theta))
    hvp = hessian_vector_product(theta, X.detach(), q.detach(), act)
    gen = torch.Generator().manual_seed(int(seed))
    if start is None:
        start = torch.randn(S, m, P, generator=gen, dtype=torch.float64)
    qv = start.to(theta.c).clone()
    qv = qv / qv.norm(dim=-1, keepdim=True).clamp_min(1e-300)
    basis = [qv]
    alphas: list[Tensor] = []
    betas: list[Tensor] = []
    for j in range(k):
        w = flatten_heads(hvp(unflatten_heads(basis[-1], d))).detach()
        a = (w * basis[-1]).sum(-1)
        alphas.append(a)
        Q = torch.stack(basis, dim=-2)                                   # (S, m, j+1, P)
        for _ in range(2):                                               # full reorthogonalisation
            w = w - torch.einsum("smkp,smk->smp", Q, torch.einsum("smkp,smp->smk", Q, w))
        b = w.norm(dim=-1)
        if j == k - 1:
            break
        scale = torch.stack(alphas, -1).abs().amax(-1) + torch.stack(betas + [b], -1).amax(-1)
        breakdown = b <= 1e-10 * scale.clamp_min(1e-300)
        fresh = torch.randn(S, m, P, generator=gen, dtype=torch.float64).to(w)
        for _ in range(2):
            fresh = fresh - torch.einsum("smkp,smk->smp", Q,
                                         torch.einsum("smkp,smp->smk", Q, fresh))
        nxt = torch.where(breakdown.unsqueeze(-1), fresh, w)
        nxt = nxt / nxt.norm(dim=-1, keepdim=True).clamp_min(1e-300)
        betas.append(torch.where(breakdown, torch.zeros_like(b), b))
        basis.append(nxt)
    kk = len(alphas)
    Tm = torch.diag_embed(torch.stack(alphas, -1))
    if kk > 1:
        off = torch.stack(betas[: kk - 1], -1)
        Tm = Tm + torch.diag_embed(off, 1) + torch.diag_embed(off, -1)
    evals, evecs = torch.linalg.eigh(Tm)
    Q = torch.stack(basis[:kk], dim=-2)
    vec_min = torch.einsum("smkp,smk->smp", Q, evecs[..., 0])
    vec_max = torch.einsum("smkp,smk->smp", Q, evecs[..., -1])
    return LanczosResult(evals[..., 0], evals[..., -1], vec_min, vec_max)

