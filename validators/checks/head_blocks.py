"""Direct falsifiers of the per-head block bounds of the tight route (derivations.md §2.1, §7.10).

One head of the model is g(U, W) = σ(Uᵀa(W)) with a(W) = X softmax(XᵀWq). The tight route bounds
its first and second directional derivatives by the *block* norms of the directions,
h = (h_U, h_W) with ‖h_U‖ ≤ a_U, ‖h_W‖_F ≤ a_W and k = (k_U, k_W) with ‖k_U‖ ≤ b_U, ‖k_W‖_F ≤ b_W,
whenever ‖U‖ ≤ u, for every W and every input with token norms ≤ 1 and ‖q‖ ≤ 1
(:func:`boundcalc.theory.lemma2.head_gradient_block_bound`,
:func:`~boundcalc.theory.lemma2.head_hessian_block_bound`, a priori X = Q = 1):

    |Dg[h]|     ≤ Φ(u; a)    = σ₁√(a_U² + u²a_W²),
    |D²g[h, k]| ≤ H(u; a, b) = σ₂√((a_U² + u²a_W²)(b_U² + u²b_W²))
                               + σ₁(a_U b_W + a_W b_U + κu·a_W b_W),

κ = 4/(3√3) on the default route (derivations.md §2.2; 32/27 on the ``blocks`` route, §2.1).
κ bounds the attention term alone, |UᵀD²a[h_W, k_W]| ≤ κ‖U‖‖h_W q‖‖k_W q‖ (a third central
moment of the tokens under the softmax weights), and has a falsifier of its own
(:func:`search_attention_third_moment`, record ``tight.attention_third_moment``): the constant
is attained, so its best ratio tends to 1 and a constant 1 % too low is caught.

Every ε_lin, ε_tay, ε_cf and F of the tight route is assembled from these two per-head bounds, so
a direction that beats one of them is a counterexample to the route's derivation.

The derivatives are in closed form (:func:`head_directional_derivatives`; a test checks them
against ``torch.func.jvp`` of ``jvp``): with logits l_t = x_tᵀWq, s = softmax(l), a = Σ_t s_t x_t,
z = Uᵀa, e_t = x_tᵀh_Wq, ē = Σ_t s_t e_t (likewise e'_t for k_W),

    Da[h_W] = Σ_t s_t(e_t − ē)x_t,  Dz[h] = h_Uᵀa + UᵀDa[h_W],
    D²z[h, k] = h_UᵀDa[k_W] + k_UᵀDa[h_W] + Σ_t s_t(e_t − ē)(e'_t − ē')(x_tᵀU − z),
    Dg[h] = σ'(z)Dz[h],  D²g[h, k] = σ''(z)Dz[h]Dz[k] + σ'(z)D²z[h, k].

The search (:func:`search_head_gradient_block`, :func:`search_head_hessian_block`) is the
project's projected ascent (:func:`boundcalc.validators.checks.adversary.drive`) on a
:class:`~boundcalc.validators.checks.space.SearchSpace` of two heads that share (U(0), W(0))
(``symmetric``) and have ρ = (0, √2, √2), so that every per-head displacement block lies in a unit
ball: U = ``U0`` (‖U‖ ≤ u, the init ball of radius u), W = ``W0`` (free), the tokens ``X`` and the
query ``q`` (unit balls), and the directions built from head 0's (``dU``, ``dW``) and head 1's
blocks, each block rescaled onto the sphere of its radius: h = (a_U ĥ_U/‖ĥ_U‖, a_W ĥ_W/‖ĥ_W‖_F),
k likewise with (b_U, b_W). Dg[h] is linear and D²g[h, k] bilinear in each block, so their
suprema over the block balls lie on these spheres; a radius 0 pins its block to 0 exactly (the
extreme pairs (1, 0), (0, 1)). Each start ascends on the ratio |Dg[h]| / Φ(u; ‖h_U‖, ‖h_W‖_F) (or
|D²g[h, k]| / H at the four block norms of h and k), i.e. the bound at the radii. Batched over
starts and samples; no Python loop over either.

Records (:func:`head_block_records`, called by
:func:`~boundcalc.validators.checks.tight.validate_tight`): ``tight.head_gradient_block`` and
``tight.head_hessian_block``, method ``adversarial``, one per pair of block radii (``pair``);
``measured`` = |Dg[h]| (|D²g[h, k]|) at the maximising point, ``bound`` = Φ (H) at that point's
block norms, so ``ratio`` is the maximised ratio; the bound formulas are the theory's expressions
(:func:`block_bounds`), at u = the route's u_rms. ``tight.attention_third_moment``: measured
|UᵀD²a[h_W, k_W]| = |Σ_t s_t(e_t − ē)(e'_t − ē')Uᵀ(x_t − a)|, bound κ‖U‖‖h_W‖_F‖k_W‖_F (‖q‖ ≤ 1),
κ the theory's :func:`~boundcalc.theory.lemma2.attention_third_moment_bound`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

import sympy as sp
import torch
from torch import Tensor

from ..model import Activation
from .adversary import drive
from .ascent import SearchResult
from .records import activation_sigmas, record
from .space import Config, SearchSpace, random_configuration

__all__ = ["GRADIENT_PAIRS", "HESSIAN_PAIRS", "attention_third_moment", "block_bounds",
           "block_space", "head_block_records", "head_directional_derivatives",
           "search_attention_third_moment", "search_head_gradient_block",
           "search_head_hessian_block", "third_moment_constant"]

#: The variables of a block search: U, W, the inputs and the two unit-scaled directions.
BLOCK_VARS = ("U0", "W0", "dU", "dW", "X", "q")

#: Block radii (a_U, a_W) of the gradient search: the names "rho" and "nu" stand for
#: (ρ_u, ρ_w) and (ν_u, ν_w) of the run; the others are fixed extreme ratios.
GRADIENT_PAIRS: tuple[tuple[str, object], ...] = (
    ("rho", "rho"), ("nu", "nu"), ("(1,0)", (1.0, 0.0)), ("(0,1)", (0.0, 1.0)),
    ("(1,1)", (1.0, 1.0)))

#: Pairs of block radii ((a_U, a_W), (b_U, b_W)) of the Hessian search.
HESSIAN_PAIRS: tuple[tuple[str, object, object], ...] = (
    ("rho,rho", "rho", "rho"), ("rho,nu", "rho", "nu"),
    ("(1,0),(1,0)", (1.0, 0.0), (1.0, 0.0)), ("(0,1),(0,1)", (0.0, 1.0), (0.0, 1.0)),
    ("(1,0),(0,1)", (1.0, 0.0), (0.0, 1.0)), ("(1,1),(0,1)", (1.0, 1.0), (0.0, 1.0)))


# ----------------------------------------------------------------------------------------------
# the bounds (the theory's expressions) and the derivatives (closed form)
# ----------------------------------------------------------------------------------------------

def _sqrt(x: Tensor | float) -> Tensor | float:
    """√x of a tensor (differentiable) or of a number (a constant of the formula, e.g. √3)."""
    return torch.sqrt(x) if isinstance(x, Tensor) else math.sqrt(x)


@functools.cache
def block_bounds(activation: str, third_moment: bool = True
                 ) -> tuple[Callable[..., Tensor], Callable[..., Tensor]]:
    """(Φ, H) of ``activation`` as torch functions Φ(u, a_U, a_W) and
    H(u, a_U, a_W, b_U, b_W) (elementwise, differentiable): the theory's a-priori
    :func:`~boundcalc.theory.lemma2.head_gradient_block_bound` and
    :func:`~boundcalc.theory.lemma2.head_hessian_block_bound` (X = Q = 1) with the activation's
    σ₁, σ₂, so the searches test the calculator's expressions themselves. ``third_moment``:
    H's attention constant 4/(3√3) (the default route) or, False, 32/27 (the ``blocks`` route).

    >>> phi, hess = block_bounds("tanh")
    >>> one, zero = torch.tensor(1.0), torch.tensor(0.0)
    >>> float(phi(torch.tensor(2.0), torch.tensor(3.0), torch.tensor(2.0)))   # √(9 + 4·4)
    5.0
    >>> round(float(hess(one, one, zero, one, zero)), 6)                       # σ₂ of tanh
    0.7698
    """
    from boundcalc.theory.lemma2 import head_gradient_block_bound, head_hessian_block_bound
    from boundcalc.theory.symbols import sigma1, sigma2

    u, a_u, a_w, b_u, b_w = sp.symbols("u a_u a_w b_u b_w", nonnegative=True)
    _, s1, s2 = activation_sigmas(activation)
    modules = [{"sqrt": _sqrt}]
    grad = sp.lambdify((u, a_u, a_w, sigma1),
                       head_gradient_block_bound(u, a_u, a_w), modules=modules)
    hess = sp.lambdify((u, a_u, a_w, b_u, b_w, sigma1, sigma2),
                       head_hessian_block_bound(u, (a_u, a_w), (b_u, b_w),
                                                third_moment=third_moment), modules=modules)

    def phi(u_: Tensor, au: Tensor, aw: Tensor) -> Tensor:
        return grad(u_, au, aw, s1)

    def h_bound(u_: Tensor, au: Tensor, aw: Tensor, bu: Tensor, bw: Tensor) -> Tensor:
        return hess(u_, au, aw, bu, bw, s1, s2)

    return phi, h_bound


def head_directional_derivatives(U: Tensor, W: Tensor, X: Tensor, q: Tensor,
                                 h: tuple[Tensor, Tensor], k: tuple[Tensor, Tensor],
                                 act: Activation) -> tuple[Tensor, Tensor, Tensor]:
    """(Dg[h], Dg[k], D²g[h, k]) of one head g(U, W) = σ(Uᵀ X softmax(XᵀWq)), each (S, n), in
    closed form (module docstring).

    Shapes: U (S, d), W (S, d, d), X (S, n, T, d), q (S, n, d); h = (h_U (S, d), h_W (S, d, d)),
    k likewise. Start s's U, W and directions are shared by its n inputs.

    >>> from boundcalc.validators.model import get_activation
    >>> one = functools.partial(torch.ones, dtype=torch.float64)
    >>> U, X, q, W = one(1, 1), one(1, 1, 2, 1), one(1, 1, 1), 0 * one(1, 1, 1)
    >>> h = (one(1, 1), 0 * one(1, 1, 1))          # along U only: σ'(z)a, σ''(z)a² at z = 1
    >>> [round(float(t), 6) for t in head_directional_derivatives(U, W, X, q, h, h,
    ...                                                            get_activation("tanh"))]
    [0.419974, 0.419974, -0.6397]
    """
    h_u, h_w = h
    k_u, k_w = k
    logits = torch.einsum("sntd,sde,sne->snt", X, W, q)
    s = torch.softmax(logits, dim=-1)
    a = torch.einsum("snt,sntd->snd", s, X)
    z = torch.einsum("snd,sd->sn", a, U)
    p = torch.einsum("sntd,sd->snt", X, U)
    eh = torch.einsum("sntd,sde,sne->snt", X, h_w, q)
    ek = torch.einsum("sntd,sde,sne->snt", X, k_w, q)
    ch = eh - (s * eh).sum(-1, keepdim=True)
    ck = ek - (s * ek).sum(-1, keepdim=True)
    da_h = torch.einsum("snt,sntd->snd", s * ch, X)
    da_k = torch.einsum("snt,sntd->snd", s * ck, X)
    dz_h = torch.einsum("snd,sd->sn", a, h_u) + torch.einsum("snd,sd->sn", da_h, U)
    dz_k = torch.einsum("snd,sd->sn", a, k_u) + torch.einsum("snd,sd->sn", da_k, U)
    d2z = (torch.einsum("snd,sd->sn", da_k, h_u) + torch.einsum("snd,sd->sn", da_h, k_u)
           + (s * ch * ck * (p - z.unsqueeze(-1))).sum(-1))
    d1, d2 = act.d1(z), act.d2(z)
    return d1 * dz_h, d1 * dz_k, d2 * dz_h * dz_k + d1 * d2z


def third_moment_constant() -> float:
    """κ = 4/(3√3) as a float: the theory's
    :func:`~boundcalc.theory.lemma2.attention_third_moment_bound`.

    >>> round(third_moment_constant(), 6)
    0.7698
    """
    from boundcalc.theory.lemma2 import attention_third_moment_bound

    return float(attention_third_moment_bound())


def attention_third_moment(U: Tensor, W: Tensor, X: Tensor, q: Tensor, h_w: Tensor,
                           k_w: Tensor) -> Tensor:
    """UᵀD²a[h_W, k_W] = Σ_t s_t(e_t − ē)(e'_t − ē')Uᵀ(x_t − a), (S, n): the attention term of
    D²z (module docstring), e_t = x_tᵀh_Wq, e'_t = x_tᵀk_Wq, s = softmax(XᵀWq), a = Σ_t s_t x_t.
    Shapes as in :func:`head_directional_derivatives`.

    Two tokens ±e with weights (1 ∓ 1/√3)/2 and U = h_W q = k_W q = e attain κ = 4/(3√3):

    >>> import math
    >>> c = math.atanh(1 / math.sqrt(3))                  # logits ∓c: weights (1 ∓ 1/√3)/2
    >>> e = torch.tensor([[1.0, 0.0]], dtype=torch.float64)
    >>> X = torch.stack([e, -e], dim=1).unsqueeze(1)       # (1, 1, 2, 2)
    >>> W = -c * torch.eye(2, dtype=torch.float64).unsqueeze(0)
    >>> hw = torch.eye(2, dtype=torch.float64).unsqueeze(0)
    >>> value = attention_third_moment(e, W, X, e.unsqueeze(1), hw, hw)
    >>> round(float(value), 6), round(4 / (3 * math.sqrt(3)), 6)
    (0.7698, 0.7698)
    """
    logits = torch.einsum("sntd,sde,sne->snt", X, W, q)
    s = torch.softmax(logits, dim=-1)
    a = torch.einsum("snt,sntd->snd", s, X)
    p = torch.einsum("sntd,sd->snt", X, U) - torch.einsum("snd,sd->sn", a, U).unsqueeze(-1)
    eh = torch.einsum("sntd,sde,sne->snt", X, h_w, q)
    ek = torch.einsum("sntd,sde,sne->snt", X, k_w, q)
    ch = eh - (s * eh).sum(-1, keepdim=True)
    ck = ek - (s * ek).sum(-1, keepdim=True)
    return (s * ch * ck * p).sum(-1)


# ----------------------------------------------------------------------------------------------
# the searches
# ----------------------------------------------------------------------------------------------

def block_space(d: int, T: int, u: float, samples: int = 1) -> SearchSpace:
    """The search space of the block searches (module docstring): two heads sharing U = U(0)
    (‖U‖ ≤ u) and W = W(0), per-head displacement blocks in unit balls (the unit-scaled
    directions), free tokens and query.

    >>> block_space(3, 2, 1.5).radii
    (0.0, 1.0, 1.0)
    """
    root2 = math.sqrt(2.0)
    return SearchSpace(m=2, d=d, T=T, rho=(0.0, root2, root2), u_inf=float(u), samples=samples,
                       query="free", symmetric=True, init_event="max")


def _norm(t: Tensor, dims: int) -> Tensor:
    sq = t.pow(2).flatten(-dims).sum(-1) if dims > 1 else t.pow(2).sum(-1)
    return torch.sqrt(sq.clamp_min(1e-300))


def _directions(cfg: Config, first: tuple[float, float],
                second: tuple[float, float]) -> tuple[tuple[Tensor, Tensor], ...]:
    """h = (a_U ĥ_U/‖ĥ_U‖, a_W ĥ_W/‖ĥ_W‖_F), k likewise with (b_U, b_W), from the blocks ĥ, k̂
    of heads 0 and 1: every block on the sphere of its radius."""
    def unit(t: Tensor, dims: int) -> Tensor:
        return t / _norm(t, dims).reshape(t.shape[:-dims] + (1,) * dims)

    h = (first[0] * unit(cfg["dU"][:, 0], 1), first[1] * unit(cfg["dW"][:, 0], 2))
    k = (second[0] * unit(cfg["dU"][:, 1], 1), second[1] * unit(cfg["dW"][:, 1], 2))
    return h, k


def _evaluate(cfg: Config, act: Activation, u: float, first: tuple[float, float],
              second: tuple[float, float] | None, scale: float) -> tuple[Tensor, Tensor]:
    """(|D|, bound) of every start and sample, (S, n) each: D = Dg[h] (``second`` None) or
    D²g[h, k], the bound (times ``scale``) at the point's own block norms."""
    phi, hess = block_bounds(act.name)
    h, k = _directions(cfg, first, second if second is not None else (0.0, 0.0))
    dg_h, _, d2g = head_directional_derivatives(cfg["U0"][:, 0], cfg["W0"][:, 0], cfg["X"],
                                                cfg["q"], h, k, act)
    u_t = torch.as_tensor(u, dtype=cfg["X"].dtype, device=cfg["X"].device)
    nh = (_norm(h[0], 1), _norm(h[1], 2))
    if second is None:
        value, bound = dg_h.abs(), phi(u_t, *nh)
    else:
        value, bound = d2g.abs(), hess(u_t, *nh, _norm(k[0], 1), _norm(k[1], 2))
    return value, (scale * bound).unsqueeze(-1).expand_as(value)


def _search(d: int, T: int, u: float, act: Activation, first: tuple[float, float],
            second: tuple[float, float] | None, *, starts: int, steps: int, seed: int,
            samples: int, dtype: torch.dtype, device: torch.device, scale: float,
            restarts: int) -> tuple[SearchResult, dict]:
    space = block_space(d, T, u, samples)
    cfg = random_configuration(space, starts, seed=seed, dtype=dtype, device=device)

    def objective(c: Config) -> Tensor:
        value, bound = _evaluate(c, act, u, first, second, scale)
        return value / bound.clamp_min(1e-300)

    res = drive(space, objective, cfg, free=BLOCK_VARS, steps=steps, seed=seed,
                restarts=restarts)
    with torch.no_grad():
        value, bound = _evaluate(res.config, act, u, first, second, scale)
        ratio = value / bound.clamp_min(1e-300)
    flat = int(torch.argmax(ratio))
    s, j = divmod(flat, ratio.shape[1])
    h, k = _directions(res.config, first, second if second is not None else (0.0, 0.0))
    info = {
        "measured": float(value[s, j]), "bound": float(bound[s, j]), "start": s, "sample": j,
        "h_norms": [float(_norm(h[0][s], 1)), float(_norm(h[1][s], 2))],
        "U_norm": float(_norm(res.config["U0"][s, 0], 1)),
        "point": {"U": res.config["U0"][s, 0].tolist(), "W": res.config["W0"][s, 0].tolist(),
                  "X": res.config["X"][s, j].tolist(), "q": res.config["q"][s, j].tolist(),
                  "h_U": h[0][s].tolist(), "h_W": h[1][s].tolist()},
    }
    if second is not None:
        info["k_norms"] = [float(_norm(k[0][s], 1)), float(_norm(k[1][s], 2))]
        info["point"].update({"k_U": k[0][s].tolist(), "k_W": k[1][s].tolist()})
    return res, info


def search_head_gradient_block(d: int, T: int, u: float, act: Activation,
                               blocks: tuple[float, float], *, starts: int, steps: int,
                               seed: int, samples: int = 1, dtype: torch.dtype = torch.float64,
                               device: str | torch.device = "cpu", scale: float = 1.0,
                               restarts: int = 1) -> tuple[SearchResult, dict]:
    """Projected ascent on |Dg[h]| / (scale·Φ(u; ‖h_U‖, ‖h_W‖_F)) over ‖h_U‖ = a_U,
    ‖h_W‖_F = a_W (``blocks``; the sup over the balls lies there), ‖U‖ ≤ u, W, tokens and q
    (module docstring).

    Returns the :class:`SearchResult` and a dict with the maximiser's ``measured`` |Dg[h]|,
    ``bound`` (scale·Φ at its block norms), ``h_norms``, ``U_norm`` and the ``point`` itself
    (U, W, X, q, h_U, h_W as lists). ``scale`` < 1 lowers the bound (to show that the search can
    fail).

    >>> from boundcalc.validators.model import get_activation
    >>> _, info = search_head_gradient_block(2, 2, 1.0, get_activation("tanh"), (1.0, 0.0),
    ...                                      starts=4, steps=20, seed=0)
    >>> 0.9 < info["measured"] / info["bound"] <= 1.0     # sup: σ'(0)‖a‖ with ‖a‖ = 1
    True
    """
    return _search(d, T, u, act, blocks, None, starts=starts, steps=steps, seed=seed,
                   samples=samples, dtype=dtype, device=torch.device(device), scale=scale,
                   restarts=restarts)


def search_head_hessian_block(d: int, T: int, u: float, act: Activation,
                              first: tuple[float, float], second: tuple[float, float], *,
                              starts: int, steps: int, seed: int, samples: int = 1,
                              dtype: torch.dtype = torch.float64,
                              device: str | torch.device = "cpu", scale: float = 1.0,
                              restarts: int = 1) -> tuple[SearchResult, dict]:
    """Projected ascent on |D²g[h, k]| / (scale·H(u; ‖h‖ blocks, ‖k‖ blocks)) over h, k with
    block norms ``first`` = (a_U, a_W) and ``second`` = (b_U, b_W) (the sup over the balls lies
    on these spheres), ‖U‖ ≤ u, W, tokens
    and q (module docstring). Returns what :func:`search_head_gradient_block` returns, plus the
    maximiser's ``k_norms`` (and k in ``point``).

    >>> from boundcalc.validators.model import get_activation
    >>> _, info = search_head_hessian_block(2, 2, 1.0, get_activation("tanh"), (1.0, 0.0),
    ...                                     (1.0, 0.0), starts=4, steps=20, seed=0)
    >>> 0.9 < info["measured"] / info["bound"] <= 1.0     # sup: σ₂‖a‖² with ‖a‖ = 1
    True
    """
    return _search(d, T, u, act, first, second, starts=starts, steps=steps, seed=seed,
                   samples=samples, dtype=dtype, device=torch.device(device), scale=scale,
                   restarts=restarts)


def _third_moment_ratio(cfg: Config, scale: float) -> tuple[Tensor, Tensor]:
    """(|UᵀD²a[h_W, k_W]|, scale·κ‖U‖‖h_W‖_F‖k_W‖_F) of every start and sample, (S, n) each."""
    h, k = _directions(cfg, (0.0, 1.0), (0.0, 1.0))
    U = cfg["U0"][:, 0]
    value = attention_third_moment(U, cfg["W0"][:, 0], cfg["X"], cfg["q"], h[1], k[1]).abs()
    bound = scale * third_moment_constant() * _norm(U, 1) * _norm(h[1], 2) * _norm(k[1], 2)
    return value, bound.unsqueeze(-1).expand_as(value)


def search_attention_third_moment(d: int, T: int, u: float, *, starts: int, steps: int,
                                  seed: int, samples: int = 1,
                                  dtype: torch.dtype = torch.float64,
                                  device: str | torch.device = "cpu", scale: float = 1.0,
                                  restarts: int = 1) -> tuple[SearchResult, dict]:
    """Projected ascent on |UᵀD²a[h_W, k_W]| / (scale·κ‖U‖‖h_W‖_F‖k_W‖_F) over ‖U‖ ≤ u, W,
    tokens, q and the unit W-blocks h_W, k_W (derivations.md §2.2; κ = 4/(3√3)). Returns the
    :class:`SearchResult` and a dict with the maximiser's ``measured``, ``bound``, ``U_norm`` and
    ``point``. ``scale`` < 1 lowers κ (to show that the search can fail).

    >>> _, info = search_attention_third_moment(2, 2, 1.0, starts=8, steps=40, seed=0)
    >>> 0.9 < info["measured"] / info["bound"] <= 1.0
    True
    """
    space = block_space(d, T, u, samples)
    dev = torch.device(device)
    cfg = random_configuration(space, starts, seed=seed, dtype=dtype, device=dev)

    def objective(c: Config) -> Tensor:
        value, bound = _third_moment_ratio(c, scale)
        return value / bound.clamp_min(1e-300)

    res = drive(space, objective, cfg, free=BLOCK_VARS, steps=steps, seed=seed,
                restarts=restarts)
    with torch.no_grad():
        value, bound = _third_moment_ratio(res.config, scale)
        ratio = value / bound.clamp_min(1e-300)
    flat = int(torch.argmax(ratio))
    s, j = divmod(flat, ratio.shape[1])
    h, k = _directions(res.config, (0.0, 1.0), (0.0, 1.0))
    info = {
        "measured": float(value[s, j]), "bound": float(bound[s, j]), "start": s, "sample": j,
        "U_norm": float(_norm(res.config["U0"][s, 0], 1)),
        "point": {"U": res.config["U0"][s, 0].tolist(), "W": res.config["W0"][s, 0].tolist(),
                  "X": res.config["X"][s, j].tolist(), "q": res.config["q"][s, j].tolist(),
                  "h_W": h[1][s].tolist(), "k_W": k[1][s].tolist()},
    }
    return res, info


# ----------------------------------------------------------------------------------------------
# records
# ----------------------------------------------------------------------------------------------

def _radii(spec: object, rho: Sequence[float], nu: Sequence[float]) -> tuple[float, float]:
    if spec == "rho":
        return float(rho[1]), float(rho[2])
    if spec == "nu":
        return float(nu[1]), float(nu[2])
    a, b = spec  # type: ignore[misc]
    return float(a), float(b)


def head_block_records(d: int, T: int, u: float, act: Activation, rho: Sequence[float],
                       nu: Sequence[float], settings: dict, *, starts: int, steps: int,
                       seed: int, samples: int = 1, dtype: torch.dtype = torch.float64,
                       device: str | torch.device = "cpu", scale: float = 1.0,
                       keep_argmax: bool = False) -> list[dict]:
    """The records ``tight.head_gradient_block`` (one per :data:`GRADIENT_PAIRS` entry) and
    ``tight.head_hessian_block`` (one per :data:`HESSIAN_PAIRS` entry) at u (the route's u_rms),
    and ``tight.attention_third_moment`` (the constant κ of H's attention term, alone),
    with ρ = (ρ_c, ρ_u, ρ_w) and ν of the run; a pair with an all-zero direction (ν = 0) is
    skipped. Method ``adversarial``; ``measured`` |Dg[h]| or |D²g[h, k]| at the maximiser,
    ``bound`` the formula at its block norms; the block radii in ``blocks``, the pair's name in
    ``pair``; the maximising point in ``argmax`` when the record fails or ``keep_argmax``.

    >>> from boundcalc.validators.model import get_activation
    >>> recs = head_block_records(2, 2, 1.5, get_activation("tanh"), (2.0, 2.0, 2.0),
    ...                           (1.0, 1.0, 1.0), {}, starts=2, steps=2, seed=0)
    >>> len(recs), all(r["holds"] for r in recs)
    (12, True)
    """
    kw = {"starts": starts, "steps": steps, "samples": samples, "dtype": dtype,
          "device": device, "scale": scale}
    extra = {"u": float(u), "route": "tight", "bound_scale": float(scale)}
    out: list[dict] = []

    def add(name: str, pair: str, blocks: list[float], info: dict) -> None:
        rec = record(name, "adversarial", info["measured"], info["bound"], settings, pair=pair,
                     blocks=blocks, h_norms=info["h_norms"], U_norm=info["U_norm"],
                     **({"k_norms": info["k_norms"]} if "k_norms" in info else {}), **extra)
        if keep_argmax or not rec["holds"]:
            rec["argmax"] = info["point"]
        out.append(rec)

    for i, (pair, spec) in enumerate(GRADIENT_PAIRS):
        blocks = _radii(spec, rho, nu)
        if max(blocks) <= 0:
            continue
        _, info = search_head_gradient_block(d, T, u, act, blocks, seed=seed + 11 + i, **kw)
        add("tight.head_gradient_block", pair, list(blocks), info)
    for i, (pair, spec_a, spec_b) in enumerate(HESSIAN_PAIRS):
        first, second = _radii(spec_a, rho, nu), _radii(spec_b, rho, nu)
        if max(first) <= 0 or max(second) <= 0:
            continue
        _, info = search_head_hessian_block(d, T, u, act, first, second,
                                            seed=seed + 31 + i, **kw)
        add("tight.head_hessian_block", pair, [*first, *second], info)
    _, info = search_attention_third_moment(d, T, u, seed=seed + 51, **kw)
    rec = record("tight.attention_third_moment", "adversarial", info["measured"], info["bound"],
                 settings, pair="(0,1),(0,1)", U_norm=info["U_norm"], **extra)
    if keep_argmax or not rec["holds"]:
        rec["argmax"] = info["point"]
    out.append(rec)
    return out
