"""The paper's shallow multi-head Transformer (eqs. 2–4) as pure, vectorised torch functions.

Computes, for a batch of n sequences X ∈ R^{n×T×d} with queries q ∈ R^{n×d},

    a_i(X)  = X softmax(Xᵀ W_i q)                  (eq. 2, column softmax over the T tokens)
    h_i(X)  = σ(U_iᵀ a_i(X))                        (eq. 3)
    f(X; θ) = m^{-1/2} Σ_i c_i h_i(X),  θ = (c, U, W)   (eq. 4)

and everything the validators need from it in closed form (Lemma 1): per-sample gradient norms,
the linearization f_lin(θ) = f(θ(0)) + ⟨∇f(θ(0)), θ − θ(0)⟩ (Definition 3) and the gradient of
the empirical loss R̂(θ) = (1/n) Σ_j (f(X_j; θ) − y_j)² — the project's loss convention, see
docs/derivations.md §0. Every function works on whole batches and all heads at once (einsum; no
Python loop over samples or heads) and is differentiable by autograd, so tests can check the
closed forms against it.

Shapes: c (m,), U (m, d), W (m, d, d), X (n, T, d), q (n, d), y (n,). ``m`` is the number of heads.

Softmax facts used (Facts 1–2): with s = softmax(z), J = diag(s) − s sᵀ and G = X J Xᵀ, the
directional derivative of a along W is G h q, and for any vector u

    G u = Σ_t s_t (x_tᵀu − aᵀu) x_t,

which is how ``GU`` below is formed without building the d×d matrix G.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import torch
from torch import Tensor


class Params(NamedTuple):
    """θ = (c, U, W): readout c (m,), feed-forward U (m, d), attention W (m, d, d).

    A NamedTuple, so it is a pytree for ``torch.func`` and unpacks as ``c, U, W = params``.
    """

    c: Tensor
    U: Tensor
    W: Tensor

    @property
    def width(self) -> int:
        """m, the number of heads."""
        return int(self.c.shape[0])

    def detach(self) -> Params:
        return Params(self.c.detach(), self.U.detach(), self.W.detach())

    def clone(self) -> Params:
        return Params(self.c.clone(), self.U.clone(), self.W.clone())

    def to(self, *args, **kwargs) -> Params:
        return Params(*(t.to(*args, **kwargs) for t in self))

    def __add__(self, other: Params) -> Params:  # type: ignore[override]
        return Params(*(a + b for a, b in zip(self, other, strict=True)))

    def __sub__(self, other: Params) -> Params:
        return Params(*(a - b for a, b in zip(self, other, strict=True)))

    def scale(self, factor: float | Tensor) -> Params:
        return Params(*(factor * t for t in self))

    def dot(self, other: Params) -> Tensor:
        """Euclidean inner product ⟨θ, θ'⟩ over all blocks (scalar tensor)."""
        return sum((a * b).sum() for a, b in zip(self, other, strict=True))

    def norm(self) -> Tensor:
        """Euclidean norm ‖θ‖ (Frobenius for W)."""
        return torch.sqrt(self.dot(self))


@dataclass(frozen=True)
class Activation:
    """σ with its first two derivatives, elementwise torch functions."""

    name: str
    fn: Callable[[Tensor], Tensor]
    d1: Callable[[Tensor], Tensor]
    d2: Callable[[Tensor], Tensor]


def _tanh_d1(x: Tensor) -> Tensor:
    return 1.0 - torch.tanh(x) ** 2


def _tanh_d2(x: Tensor) -> Tensor:
    t = torch.tanh(x)
    return -2.0 * t * (1.0 - t**2)


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _erf_fn(x: Tensor) -> Tensor:
    return torch.erf(x / math.sqrt(2.0))


def _erf_d1(x: Tensor) -> Tensor:
    # d/dx erf(x/√2) = √(2/π) e^{−x²/2}  (the authors' public script is off by a factor √2 here)
    return _SQRT_2_OVER_PI * torch.exp(-0.5 * x**2)


def _erf_d2(x: Tensor) -> Tensor:
    return -x * _SQRT_2_OVER_PI * torch.exp(-0.5 * x**2)


ACTIVATIONS: dict[str, Activation] = {
    "tanh": Activation("tanh", torch.tanh, _tanh_d1, _tanh_d2),
    "erf": Activation("erf", _erf_fn, _erf_d1, _erf_d2),
}


def get_activation(name: str) -> Activation:
    """The torch activation called ``name`` (``tanh`` or ``erf``, i.e. erf(x/√2)).

    The calculator also accepts ``custom:S0,S1,S2`` bounds, but a validator needs an actual
    function, so only the two presets are available here.
    """
    key = name.strip().lower()
    if key not in ACTIVATIONS:
        raise ValueError(
            f"`activation` must be one of {sorted(ACTIVATIONS)} for the validators, got {name!r}"
        )
    return ACTIVATIONS[key]


def init_params(m: int, d: int, *, seed: int, dtype: torch.dtype = torch.float64,
                device: str | torch.device = "cpu") -> Params:
    """Symmetric initialisation of Section 5.2, so that f(·; θ(0)) ≡ 0.

    For i ≤ m/2: c_i ~ Unif{±1}, U_i ~ N(0, I_d), W_i entries i.i.d. N(0, 1); heads i + m/2 copy
    U_i and W_i and negate c_i. Draws on the CPU with ``torch.Generator().manual_seed(seed)`` and
    then moves, so the same seed gives the same θ(0) on every device.

    Example:
        >>> p = init_params(4, 2, seed=0)
        >>> bool((p.c[:2] == -p.c[2:]).all()), tuple(p.W.shape)
        (True, (4, 2, 2))
    """
    if m < 2 or m % 2:
        raise ValueError(f"`m` must be a positive even integer, got {m}")
    if d < 1:
        raise ValueError(f"`d` must be positive, got {d}")
    gen = torch.Generator().manual_seed(int(seed))
    half = m // 2
    c = torch.randint(0, 2, (half,), generator=gen, dtype=torch.float64) * 2.0 - 1.0
    U = torch.randn(half, d, generator=gen, dtype=torch.float64)
    W = torch.randn(half, d, d, generator=gen, dtype=torch.float64)
    params = Params(torch.cat([c, -c]), torch.cat([U, U]), torch.cat([W, W]))
    return params.to(device=device, dtype=dtype)


def last_token_query(X: Tensor) -> Tensor:
    """q_j = x_{j,T}: the query used by the paper's scripts (‖q‖ ≤ 1 when tokens are)."""
    return X[:, -1, :]


class Features(NamedTuple):
    """Per-sample, per-head intermediate quantities of eqs. (2)–(3).

    s (n, m, T) softmax weights; a (n, m, d) attention outputs; pre (n, m) = U_iᵀ a_i;
    h, dh, d2h (n, m) = σ, σ', σ'' at pre; GU (n, m, d) = G_i U_i with G_i = X J(z_i) Xᵀ.
    """

    s: Tensor
    a: Tensor
    pre: Tensor
    h: Tensor
    dh: Tensor
    d2h: Tensor
    GU: Tensor


def head_features(params: Params, X: Tensor, q: Tensor, act: Activation) -> Features:
    """All per-head quantities for a batch, in one vectorised pass (see :class:`Features`)."""
    _, U, W = params
    Wq = torch.einsum("mab,nb->nma", W, q)            # W_i q_j          (n, m, d)
    z = torch.einsum("ntd,nmd->nmt", X, Wq)            # Xᵀ W_i q         (n, m, T)
    s = torch.softmax(z, dim=-1)
    a = torch.einsum("nmt,ntd->nmd", s, X)             # X s              (n, m, d)
    pre = torch.einsum("nmd,md->nm", a, U)             # U_iᵀ a_i         (n, m)
    p = torch.einsum("ntd,md->nmt", X, U)              # x_tᵀ U_i         (n, m, T)
    GU = torch.einsum("nmt,ntd->nmd", s * (p - pre.unsqueeze(-1)), X)
    return Features(s, a, pre, act.fn(pre), act.d1(pre), act.d2(pre), GU)


def forward(params: Params, X: Tensor, q: Tensor, act: Activation) -> Tensor:
    """f(X_j; θ) = m^{-1/2} Σ_i c_i σ(U_iᵀ a_i(X_j)) for every sample j: shape (n,).

    Example:
        >>> p = init_params(4, 3, seed=1)
        >>> X = torch.randn(5, 6, 3, dtype=torch.float64) / 3
        >>> forward(p, X, last_token_query(X), get_activation("tanh")).abs().max().item() < 1e-12
        True
    """
    _, U, W = params
    Wq = torch.einsum("mab,nb->nma", W, q)
    s = torch.softmax(torch.einsum("ntd,nmd->nmt", X, Wq), dim=-1)
    a = torch.einsum("nmt,ntd->nmd", s, X)
    h = act.fn(torch.einsum("nmd,md->nm", a, U))
    return h @ params.c / math.sqrt(params.width)


def gradient_norm(params: Params, X: Tensor, q: Tensor, act: Activation,
                  features: Features | None = None) -> Tensor:
    """‖∇_θ f(X_j; θ)‖ for every sample j, in closed form (Lemma 1): shape (n,).

    ‖∇f‖² = (1/m) Σ_i [σ(pre_i)² + c_i² σ'(pre_i)² (‖a_i‖² + ‖G_i U_i‖² ‖q‖²)].
    Pass ``features = head_features(params, X, q, act)`` when it is already computed.
    """
    F = features if features is not None else head_features(params, X, q, act)
    q2 = (q * q).sum(-1, keepdim=True)
    per_head = F.h**2 + params.c**2 * F.dh**2 * ((F.a**2).sum(-1) + (F.GU**2).sum(-1) * q2)
    return torch.sqrt(per_head.sum(-1) / params.width)


def linearized_output(params0: Params, params: Params, X: Tensor, q: Tensor,
                      act: Activation, features0: Features | None = None) -> Tensor:
    """f_lin(X_j; θ) = f(X_j; θ(0)) + ⟨∇_θ f(X_j; θ(0)), θ − θ(0)⟩ (Definition 3): shape (n,).

    Closed form per head: m^{-1/2}[σ Δc_i + c_i(0) σ' (a_iᵀΔU_i + (G_i U_i)ᵀ ΔW_i q)] at θ(0).
    Pass ``features0 = head_features(params0, X, q, act)`` to reuse it across many θ.
    """
    F = features0 if features0 is not None else head_features(params0, X, q, act)
    dc, dU, dW = params - params0
    dWq = torch.einsum("mab,nb->nma", dW, q)
    inner = (F.a * dU).sum(-1) + (F.GU * dWq).sum(-1)
    f0 = F.h @ params0.c
    per_head = F.h * dc + params0.c * F.dh * inner
    return (f0 + per_head.sum(-1)) / math.sqrt(params0.width)


def loss_and_gradient(params: Params, X: Tensor, q: Tensor, y: Tensor,
                      act: Activation, features: Features | None = None
                      ) -> tuple[Tensor, Params, Tensor]:
    """R̂(θ) = (1/n) Σ_j (f_j − y_j)² and its gradient in closed form (Lemma 1).

    With w_j = 2 (f_j − y_j)/n:
        ∂R̂/∂c_i = m^{-1/2} Σ_j w_j σ(pre_ji),
        ∇_{U_i} R̂ = m^{-1/2} c_i Σ_j w_j σ'(pre_ji) a_ji,
        ∇_{W_i} R̂ = m^{-1/2} c_i Σ_j w_j σ'(pre_ji) (G_ji U_i) q_jᵀ.

    Pass ``features = head_features(params, X, q, act)`` when it is already computed.

    Returns:
        (loss, gradient as :class:`Params`, predictions f (n,)).
    """
    F = features if features is not None else head_features(params, X, q, act)
    scale = 1.0 / math.sqrt(params.width)
    pred = (F.h @ params.c) * scale
    resid = pred - y
    n = y.shape[0]
    w = (2.0 / n) * resid                                  # (n,)
    grad_c = (w @ F.h) * scale
    coef = (w.unsqueeze(-1) * F.dh) * (params.c * scale)   # (n, m)
    grad_U = torch.einsum("nm,nmd->md", coef, F.a)
    grad_W = torch.einsum("nmd,ne->mde", coef.unsqueeze(-1) * F.GU, q)
    return (resid**2).mean(), Params(grad_c, grad_U, grad_W), pred


def project(params: Params, params0: Params, rho: tuple[float, float, float]) -> Params:
    """Euclidean projection onto Ω_ρ (Definition 2), exact.

    Ω_ρ is a product of per-head balls |c_i − c_i(0)| ≤ ρ_c/√m, ‖U_i − U_i(0)‖ ≤ ρ_u/√m,
    ‖W_i − W_i(0)‖_F ≤ ρ_w/√m, so the projection radially shrinks each block's displacement that
    lies outside its ball and leaves the others unchanged.
    """
    root_m = math.sqrt(params.width)
    rc, ru, rw = (float(r) / root_m for r in rho)
    dc, dU, dW = params - params0
    dc = dc.clamp(-rc, rc)
    nu = dU.norm(dim=-1, keepdim=True)
    dU = dU * torch.where(nu > ru, ru / nu.clamp_min(1e-300), torch.ones_like(nu))
    nw = dW.flatten(1).norm(dim=-1).view(-1, 1, 1)
    dW = dW * torch.where(nw > rw, rw / nw.clamp_min(1e-300), torch.ones_like(nw))
    return Params(params0.c + dc, params0.U + dU, params0.W + dW)


def displacement_radii(params: Params, params0: Params) -> tuple[float, float, float]:
    """√m · max_i of each block's displacement: (ρ_c, ρ_u, ρ_w) actually used by θ."""
    dc, dU, dW = params - params0
    root_m = math.sqrt(params.width)
    return (float(dc.abs().max()) * root_m, float(dU.norm(dim=-1).max()) * root_m,
            float(dW.flatten(1).norm(dim=-1).max()) * root_m)


__all__ = [
    "ACTIVATIONS", "Activation", "Features", "Params", "displacement_radii", "forward",
    "get_activation", "gradient_norm", "head_features", "init_params", "last_token_query",
    "linearized_output", "loss_and_gradient", "project",
]
