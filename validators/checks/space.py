"""The space the adversarial searches run over: Ω_ρ, the init ball and the inputs, batched.

The a-priori statements of Definition 1 and Lemmas 2, 3 and 6 hold for *every* W(0), every U(0)
with max_i ‖U_i(0)‖ ≤ u_∞ (the event E_U), every θ ∈ Ω_ρ (Definition 2) and every input with token
norms ≤ 1 and ‖q‖ ≤ 1, at any T. A search that tries to falsify them may therefore choose all of
those. The tight route's constants hold on the head-average event E_avg instead, for every U(0)
with √((1/m)Σ_i ‖U_i(0)‖²) ≤ ū (``init_event='average'``). This module holds the
search space and its batched model; :mod:`.ascent` the ascent and the Hessian machinery; the
modules named after a statement (:mod:`.lemma2`, :mod:`.tight`, …) the measurements.

**Configuration.** A batch of S independent *starts*, each a complete candidate
(c(0), U(0), W(0), Δθ, inputs), stored as a dict of tensors with a leading start dimension:

======  ======================  ==========================================================
key     shape                   constraint (projection)
======  ======================  ==========================================================
c0      (S, m)                  fixed signs ±1 (symmetric: (c, −c))
U0      (S, m', d)              ‖U_i(0)‖ ≤ u_∞ (the event ball; ``init_event='average'``:
                                √((1/m')Σ_i ‖U_i(0)‖²) ≤ u_inf = ū, one ball per start)
W0      (S, m', d, d)           free
dc      (S, m)                  |Δc_i| ≤ ρ_c/√m
dU      (S, m, d)               ‖ΔU_i‖ ≤ ρ_u/√m
dW      (S, m, d, d)            ‖ΔW_i‖_F ≤ ρ_w/√m
X       (S, n, T, d)            every token ‖x_t‖ ≤ 1
q       (S, n, d)               ‖q‖ ≤ 1 (only with ``query='free'``; else q = x_T)
y       (S, n)                  |y_j| ≤ Y (only with ``label_max``)
vc, vU, vW  (S, m), (S, m, d), (S, m, d, d)   one unit vector per head (only with ``direction``)
======  ======================  ==========================================================

m' = m/2 with ``symmetric=True`` (heads i and i + m/2 share U(0), W(0) and c0 is (c, −c), so
f(·; θ(0)) ≡ 0 as in Section 5.2), else m' = m. θ = (c0 + dc, U0 + dU, W0 + dW).

The exact projection onto these sets is :func:`project_` (a radial shrink per block);
:mod:`.ascent` moves the free variables between projections.

Everything is batched over starts × samples × heads (``torch.func.vmap`` over the start
dimension of the model functions of :mod:`boundcalc.validators.model`); there is no Python loop
over samples or heads.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import torch
from torch import Tensor
from torch.func import vmap

from ..model import Activation, Params, forward, gradient_norm, linearized_output, loss_and_gradient

__all__ = ["Config", "DIRECTION_VARS", "INIT_EVENTS", "INIT_VARS", "INPUT_VARS", "SearchSpace",
           "THETA_VARS", "batched_forward", "batched_gradient_norm", "batched_linearized_output",
           "batched_loss_gradient", "concat_configs", "config_to_lists", "init_of", "perturb",
           "project_", "queries_of", "random_configuration", "select", "theta_of"]


Config = dict[str, Tensor]

#: Variables of the parameter displacement, the init and the inputs.
THETA_VARS = ("dc", "dU", "dW")
INIT_VARS = ("U0", "W0")
INPUT_VARS = ("X", "q")
DIRECTION_VARS = ("vc", "vU", "vW")
#: The two constraint sets of U(0): per-head ball (E_U) and root-mean-square ball (E_avg).
INIT_EVENTS = ("max", "average")


@dataclass(frozen=True)
class SearchSpace:
    """The sets the adversary may choose from (one per variable of a :data:`Config`).

    Attributes:
        m: number of heads (even). d: token dimension. T: sequence length.
        rho: (ρ_c, ρ_u, ρ_w) of Ω_ρ (Definition 2).
        u_inf: radius of the init ball: ‖U_i(0)‖ ≤ u_inf for every head (Definition 1's event
            radius, ``init_event='max'``) or √((1/m)Σ_i ‖U_i(0)‖²) ≤ u_inf (the head-average
            radius ū of E_avg, ``init_event='average'``; under the symmetric init the mean over
            the m heads equals the mean over the m/2 independent ones).
        samples: inputs per start; they share that start's θ.
        query: ``'free'`` (q a variable with ‖q‖ ≤ 1) or ``'last'`` (q = x_T, the scripts' choice).
        symmetric: mirror U(0), W(0) in pairs and use c(0) = (c, −c) (f(θ(0)) ≡ 0).
        label_max: when set, labels y with |y| ≤ label_max are variables too.
        direction: when True, one unit vector per head (vc, vU, vW) is a variable (Rayleigh
            quotients of the per-head Hessian blocks).
        init_event: ``'max'`` (the per-head ball of E_U) or ``'average'`` (the root-mean-square
            ball of E_avg) for U(0).
    """

    m: int
    d: int
    T: int
    rho: tuple[float, float, float]
    u_inf: float
    samples: int = 1
    query: str = "free"
    symmetric: bool = False
    label_max: float | None = None
    direction: bool = False
    init_event: str = "max"

    def __post_init__(self) -> None:
        if self.m < 2 or self.m % 2:
            raise ValueError(f"`m` must be a positive even integer, got {self.m}")
        for name in ("d", "T", "samples"):
            if getattr(self, name) < 1:
                raise ValueError(f"`{name}` must be >= 1, got {getattr(self, name)}")
        if len(self.rho) != 3 or any(r < 0 or not math.isfinite(r) for r in self.rho):
            raise ValueError(f"`rho` must be three finite non-negative numbers, got {self.rho}")
        if not (self.u_inf >= 0 and math.isfinite(self.u_inf)):
            raise ValueError(f"`u_inf` must be finite and >= 0, got {self.u_inf}")
        if self.query not in ("free", "last"):
            raise ValueError(f"`query` must be 'free' or 'last', got {self.query!r}")
        if self.init_event not in INIT_EVENTS:
            raise ValueError(f"`init_event` must be one of {INIT_EVENTS}, got {self.init_event!r}")
        if self.label_max is not None and not self.label_max >= 0:
            raise ValueError(f"`label_max` must be >= 0, got {self.label_max}")

    @property
    def init_heads(self) -> int:
        """m' = number of independent (U(0), W(0)) heads: m/2 when symmetric, else m."""
        return self.m // 2 if self.symmetric else self.m

    @property
    def init_ball_radius(self) -> float:
        """Radius of one U(0) block's ball: u_inf per head (``'max'``), u_inf·√m' for the whole
        (m', d) block of a start (``'average'``: (1/m')Σ_i ‖U_i(0)‖² ≤ u_inf²)."""
        if self.init_event == "max":
            return self.u_inf
        return self.u_inf * math.sqrt(self.init_heads)

    @property
    def radii(self) -> tuple[float, float, float]:
        """Per-head radii (ρ_c/√m, ρ_u/√m, ρ_w/√m)."""
        root = math.sqrt(self.m)
        return (self.rho[0] / root, self.rho[1] / root, self.rho[2] / root)

    @property
    def head_dim(self) -> int:
        """P = 1 + d + d²: number of parameters of one head (c_i, U_i, W_i)."""
        return 1 + self.d + self.d * self.d


# ----------------------------------------------------------------------------------------------
# batched model (vmap over the start dimension)
# ----------------------------------------------------------------------------------------------

@functools.cache
def _batched(name: str, act: Activation) -> Callable:
    fns = {
        "forward": forward,
        "gradient_norm": gradient_norm,
        "linearized_output": linearized_output,
        "loss_and_gradient": loss_and_gradient,
    }
    return vmap(functools.partial(fns[name], act=act))


def batched_forward(theta: Params, X: Tensor, q: Tensor, act: Activation) -> Tensor:
    """f(X_sj; θ_s) for every start s and sample j: θ blocks (S, m, …), X (S, n, T, d) → (S, n)."""
    return _batched("forward", act)(theta, X, q)


def batched_gradient_norm(theta: Params, X: Tensor, q: Tensor, act: Activation) -> Tensor:
    """‖∇_θ f(X_sj; θ_s)‖ in closed form (Lemma 1): (S, n)."""
    return _batched("gradient_norm", act)(theta, X, q)


def batched_linearized_output(theta0: Params, theta: Params, X: Tensor, q: Tensor,
                              act: Activation) -> Tensor:
    """f_lin(X_sj; θ_s) around θ_s(0) (Definition 3, closed form): (S, n)."""
    return _batched("linearized_output", act)(theta0, theta, X, q)


def batched_loss_gradient(theta: Params, X: Tensor, q: Tensor, y: Tensor,
                          act: Activation) -> tuple[Tensor, Params, Tensor]:
    """(R̂_s (S,), ∇R̂_s as batched :class:`Params`, f (S, n)) with R̂ = (1/n)Σ_j (f_j − y_j)²."""
    return _batched("loss_and_gradient", act)(theta, X, q, y)


# ----------------------------------------------------------------------------------------------
# configurations
# ----------------------------------------------------------------------------------------------

def init_of(space: SearchSpace, cfg: Config) -> Params:
    """θ(0) = (c0, U0, W0) with the symmetric halves expanded: blocks (S, m, …)."""
    U0, W0 = cfg["U0"], cfg["W0"]
    if space.symmetric:
        U0 = torch.cat([U0, U0], dim=1)
        W0 = torch.cat([W0, W0], dim=1)
    return Params(cfg["c0"], U0, W0)


def theta_of(space: SearchSpace, cfg: Config) -> Params:
    """θ = θ(0) + (dc, dU, dW): blocks (S, m, …)."""
    c0, U0, W0 = init_of(space, cfg)
    return Params(c0 + cfg["dc"], U0 + cfg["dU"], W0 + cfg["dW"])


def queries_of(space: SearchSpace, cfg: Config) -> Tensor:
    """q (S, n, d): the free query, or the last token x_T."""
    return cfg["q"] if space.query == "free" else cfg["X"][:, :, -1, :]


def _shrink(t: Tensor, radius: float | Tensor, dims: int) -> Tensor:
    """Radial projection of every block (the last ``dims`` dimensions) onto the ball of radius.

    The result lies inside the ball **exactly**, not only as its floating-point norm reads:
    a block of k entries rescaled to the radius can end up a few ulps outside it (the rounding
    of the k products and of the norm that set the scale add up to at most (k/2 + 2)·eps
    relative), so blocks are rescaled to radius·(1 − (k + 2)·eps) instead whenever they reach
    beyond that. The bounds are claims about that domain, and some are attained with equality
    (‖X J Xᵀ‖ ≤ 1 needs ‖x_t‖ ≤ 1): a point one ulp outside would turn rounding into a
    "violation". Points strictly inside are returned unchanged.
    """
    def norm(x: Tensor) -> Tensor:
        return x.flatten(-dims).norm(dim=-1) if dims > 1 else x.norm(dim=-1)

    expand = (1,) * dims
    entries = math.prod(t.shape[-dims:])
    inner = radius * (1.0 - (entries + 2) * torch.finfo(t.dtype).eps)
    size = norm(t)
    scale = torch.where(size > inner, inner / size.clamp_min(1e-300), torch.ones_like(size))
    out = t * scale.reshape(scale.shape + expand)
    outside = norm(out) > inner
    if bool(outside.any()):   # the rescaled norm rounded up: pull in by a few ulps more
        inward = 1.0 - 4.0 * torch.finfo(t.dtype).eps
        fix = torch.where(outside, torch.full_like(scale, inward), torch.ones_like(scale))
        out = out * fix.reshape(fix.shape + expand)
    return out


@torch.no_grad()
def project_(space: SearchSpace, cfg: Config) -> Config:
    """Project every variable of ``cfg`` onto its set, in place (exact Euclidean projection)."""
    rc, ru, rw = space.radii
    cfg["dc"].copy_(cfg["dc"].clamp(-rc, rc))
    cfg["dU"].copy_(_shrink(cfg["dU"], ru, 1))
    cfg["dW"].copy_(_shrink(cfg["dW"], rw, 2))
    cfg["U0"].copy_(_shrink(cfg["U0"], space.init_ball_radius, block_dims(space, "U0")))
    cfg["X"].copy_(_shrink(cfg["X"], 1.0, 1))
    if "q" in cfg:
        cfg["q"].copy_(_shrink(cfg["q"], 1.0, 1))
    if "y" in cfg and space.label_max is not None:
        cfg["y"].copy_(cfg["y"].clamp(-space.label_max, space.label_max))
    if all(k in cfg for k in DIRECTION_VARS):
        norm = torch.sqrt(cfg["vc"] ** 2 + (cfg["vU"] ** 2).sum(-1)
                          + (cfg["vW"] ** 2).sum((-2, -1))).clamp_min(1e-300)
        cfg["vc"].div_(norm)
        cfg["vU"].div_(norm.unsqueeze(-1))
        cfg["vW"].div_(norm.unsqueeze(-1).unsqueeze(-1))
    return cfg


def _ball(gen: torch.Generator, shape: tuple[int, ...], radius: float, dims: int,
          boundary: float) -> Tensor:
    """Random points of a ball per block: a fraction ``boundary`` on the sphere; of the rest, half
    uniform in the ball's volume and half with a small radius (uniform in [0, 0.3·radius]), so
    that small pre-activations (σ' large) are covered as well as the boundary."""
    x = torch.randn(shape, generator=gen, dtype=torch.float64)
    lead = shape[: len(shape) - dims]
    block_dim = math.prod(shape[len(shape) - dims:])
    norms = (x.flatten(-dims).norm(dim=-1) if dims > 1 else x.norm(dim=-1)).clamp_min(1e-300)
    u = torch.rand(lead, generator=gen, dtype=torch.float64) ** (1.0 / max(block_dim, 1))
    small = 0.3 * torch.rand(lead, generator=gen, dtype=torch.float64)
    pick = torch.rand(lead, generator=gen, dtype=torch.float64)
    inner = torch.where(pick < boundary + (1 - boundary) / 2, u, small)
    r = radius * torch.where(pick < boundary, torch.ones_like(u), inner)
    return x * (r / norms).reshape(lead + (1,) * dims)


def _tokens(gen: torch.Generator, shape: tuple[int, int, int, int]) -> Tensor:
    """Random token sequences (S, n, T, d): half of the starts draw every token independently in
    the unit ball, the other half repeat a pool of k ∈ {1, …, 4} random tokens over the T positions
    (low-diversity inputs: duplicated tokens keep the softmax geometry of a short sequence, which
    is where extremes over all T tend to lie)."""
    S, n, T, d = shape
    free = _ball(gen, shape, 1.0, 1, 0.7)
    pool = _ball(gen, (S, n, 4, d), 1.0, 1, 0.8)
    k = torch.randint(1, 5, (S, n, 1), generator=gen)
    idx = (torch.rand(S, n, T, generator=gen) * k).long().clamp_max(3)
    pooled = torch.gather(pool, 2, idx.unsqueeze(-1).expand(S, n, T, d))
    use_pool = (torch.arange(S) % 2 == 1).view(S, 1, 1, 1)
    return torch.where(use_pool, pooled, free)


def perturb(space: SearchSpace, cfg: Config, *, scale: float, seed: int,
            keys: Iterable[str]) -> Config:
    """A copy of ``cfg`` with Gaussian noise of ``scale`` × each set's coordinate size added to
    the variables ``keys``, then projected (restarts around good points)."""
    gen = torch.Generator().manual_seed(int(seed))
    out = {k: v.detach().clone() for k, v in cfg.items()}
    for key in keys:
        if key in out:
            noise = torch.randn(out[key].shape, generator=gen, dtype=torch.float64)
            out[key] = out[key] + (scale * lr_scale(space, key)) * noise.to(out[key])
    return project_(space, out)


def random_configuration(space: SearchSpace, starts: int, *, seed: int,
                         dtype: torch.dtype = torch.float64,
                         device: str | torch.device = "cpu") -> Config:
    """S = ``starts`` random feasible configurations, drawn on the CPU from ``seed``, then moved.

    Diversity: half of every ball's points lie on its sphere (extremes of the a-priori bounds sit
    on the boundary), the rest uniformly inside; W(0) is Gaussian with a per-start scale in
    [0.1, 5] (small W: near-uniform attention; large W: near one-hot attention); c(0) signs are
    random (pairs (c, −c) when symmetric).
    """
    if starts < 1:
        raise ValueError(f"`starts` must be >= 1, got {starts}")
    gen = torch.Generator().manual_seed(int(seed))
    S, m, d, T, n, mh = starts, space.m, space.d, space.T, space.samples, space.init_heads
    rc, ru, rw = space.radii
    signs = torch.randint(0, 2, (S, mh), generator=gen, dtype=torch.float64) * 2.0 - 1.0
    c0 = torch.cat([signs, -signs], dim=1) if space.symmetric else signs
    w_scale = 10.0 ** (torch.rand(S, generator=gen, dtype=torch.float64) * 1.7 - 1.0)
    dc = (torch.rand(S, m, generator=gen, dtype=torch.float64) * 2.0 - 1.0) * rc
    edge = torch.rand(S, m, generator=gen, dtype=torch.float64) < 0.5
    dc = torch.where(edge, torch.sign(dc) * rc, dc)
    cfg: Config = {
        "c0": c0,
        "U0": _ball(gen, (S, mh, d), space.u_inf, 1, 0.5),
        "W0": torch.randn(S, mh, d, d, generator=gen, dtype=torch.float64)
        * w_scale.view(S, 1, 1, 1),
        "dc": dc,
        "dU": _ball(gen, (S, m, d), ru, 1, 0.5),
        "dW": _ball(gen, (S, m, d, d), rw, 2, 0.5),
        "X": _tokens(gen, (S, n, T, d)),
    }
    if space.query == "free":
        cfg["q"] = _ball(gen, (S, n, d), 1.0, 1, 0.7)
    if space.label_max is not None:
        cfg["y"] = (torch.rand(S, n, generator=gen, dtype=torch.float64) * 2.0 - 1.0) \
            * space.label_max
    if space.direction:
        cfg["vc"] = torch.randn(S, m, generator=gen, dtype=torch.float64)
        cfg["vU"] = torch.randn(S, m, d, generator=gen, dtype=torch.float64)
        cfg["vW"] = torch.randn(S, m, d, d, generator=gen, dtype=torch.float64)
    if space.init_event == "average":
        # half of the starts on the sphere of the root-mean-square ball (drawn after every other
        # variable, so the per-head ball's starts are unchanged)
        rms = cfg["U0"].pow(2).sum((-2, -1)).div(mh).sqrt().clamp_min(1e-300)
        edge = torch.rand(S, generator=gen, dtype=torch.float64) < 0.5
        scale = torch.where(edge, space.u_inf / rms, torch.ones_like(rms))
        cfg["U0"] = cfg["U0"] * scale.view(S, 1, 1)
    cfg = {k: v.to(device=device, dtype=dtype) for k, v in cfg.items()}
    return project_(space, cfg)


def concat_configs(configs: Iterable[Config]) -> Config:
    """Stack configurations along the start dimension (same keys and per-start shapes)."""
    configs = list(configs)
    keys = configs[0].keys()
    return {k: torch.cat([c[k] for c in configs], dim=0) for k in keys}


def select(cfg: Config, index: int | Tensor) -> Config:
    """The start(s) ``index`` of a configuration (keeps the start dimension)."""
    if isinstance(index, int):
        index = slice(index, index + 1)
    return {k: v[index].detach().clone() for k, v in cfg.items()}


def config_to_lists(space: SearchSpace, cfg: Config) -> dict[str, object]:
    """A one-start configuration as plain nested lists (θ(0), Δθ, inputs), for reports."""
    init = init_of(space, cfg)
    out: dict[str, object] = {
        "c0": init.c[0].tolist(), "U0": init.U[0].tolist(), "W0": init.W[0].tolist(),
        "dc": cfg["dc"][0].tolist(), "dU": cfg["dU"][0].tolist(), "dW": cfg["dW"][0].tolist(),
        "X": cfg["X"][0].tolist(), "q": queries_of(space, cfg)[0].tolist(),
    }
    if "y" in cfg:
        out["y"] = cfg["y"][0].tolist()
    return out


def lr_scale(space: SearchSpace, key: str) -> float:
    """Typical coordinate size of a variable's set (radius / √(block dimension)); W(0) is free and
    only moves the softmax logits, for which steps of ~0.1 per entry proved the most reliable.
    The ascent scales its steps and its noise by it, so every variable moves alike.

    >>> space = SearchSpace(m=4, d=4, T=2, rho=(2.0, 2.0, 2.0), u_inf=1.0)
    >>> lr_scale(space, "dU"), lr_scale(space, "W0")
    (0.5, 0.1)
    """
    rc, ru, rw = space.radii
    d, p = space.d, space.head_dim
    scales = {
        "dc": rc, "dU": ru / math.sqrt(d), "dW": rw / d, "U0": space.u_inf / math.sqrt(d),
        "W0": 0.1, "X": 1.0 / math.sqrt(d), "q": 1.0 / math.sqrt(d),
        "y": space.label_max or 0.0, "vc": 1.0 / math.sqrt(p), "vU": 1.0 / math.sqrt(p),
        "vW": 1.0 / math.sqrt(p),
    }
    return scales[key]


#: Number of trailing dimensions that form one block of each variable (one ball / one head).
_BLOCK_DIMS = {"dc": 0, "dU": 1, "dW": 2, "U0": 1, "W0": 2, "X": 1, "q": 1, "y": 0,
               "vc": 0, "vU": 1, "vW": 2}


def block_dims(space: SearchSpace, key: str) -> int:
    """Trailing dimensions of one block of ``key`` (U(0) under ``init_event='average'``: the
    whole (m', d) block of a start is one ball): the dimensions a projection or a norm of one
    block runs over.

    >>> block_dims(SearchSpace(m=4, d=4, T=2, rho=(2.0, 2.0, 2.0), u_inf=1.0), "dW")
    2
    """
    if key == "U0" and space.init_event == "average":
        return 2
    return _BLOCK_DIMS[key]
