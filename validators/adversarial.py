"""Adversarial search machinery: projected gradient ascent over Ω_ρ, the init ball and the inputs.

The a-priori statements of Definition 1 and Lemmas 2, 3 and 6 hold for *every* W(0), every U(0)
with max_i ‖U_i(0)‖ ≤ u_∞ (the event E_U), every θ ∈ Ω_ρ (Definition 2) and every input with token
norms ≤ 1 and ‖q‖ ≤ 1, at any T. A search that tries to falsify them may therefore choose all of
those. The tight route's constants hold on the head-average event E_avg instead, for every U(0)
with √((1/m)Σ_i ‖U_i(0)‖²) ≤ ū (``init_event='average'``). This module provides the machinery;
:mod:`boundcalc.validators.check_lemmas` and :mod:`boundcalc.validators.check_tight` hold the
measurements.

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

**Ascent.** :func:`ascend` maximises a per-start objective by Adam steps (``maximize=True``) on the
free variables followed by the exact Euclidean projection of every variable onto its set (all
sets are products of balls, so the projection is a radial shrink per block). Learning rates are
scaled by each block's radius and follow a cosine decay. The best *projected* point of every start
is kept, so every reported value is attained by a feasible configuration.

**Hessians.** The Hessian of θ ↦ f(X; θ) is block-diagonal across heads, so one Hessian-vector
product (autograd double backward) applied to a vector with one block per head returns every
head's block product at once; :func:`head_lanczos` runs an independent Lanczos iteration (full
reorthogonalisation) per (start, head). Ritz values lie inside the spectrum, so the reported
|eigenvalue| is a *lower* bound of the true ‖∇²_θ f‖_op: a value above β is a real violation.

Everything is batched over starts × samples × heads (``torch.func.vmap`` over the start
dimension of the model functions of :mod:`boundcalc.validators.model`); there is no Python loop over
samples or heads.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import torch
from torch import Tensor
from torch.func import vmap

from .model import (
    Activation,
    Params,
    forward,
    gradient_norm,
    linearized_output,
    loss_and_gradient,
)

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
    cfg["U0"].copy_(_shrink(cfg["U0"], space.init_ball_radius, _block_dims(space, "U0")))
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
            out[key] = out[key] + (scale * _lr_scale(space, key)) * noise.to(out[key])
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


# ----------------------------------------------------------------------------------------------
# projected gradient ascent
# ----------------------------------------------------------------------------------------------

def _lr_scale(space: SearchSpace, key: str) -> float:
    """Typical coordinate size of a variable's set (radius / √(block dimension)); W(0) is free and
    only moves the softmax logits, for which steps of ~0.1 per entry proved the most reliable."""
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


def _block_dims(space: SearchSpace, key: str) -> int:
    """Trailing dimensions of one block of ``key`` (U(0) under ``init_event='average'``: the
    whole (m', d) block of a start is one ball)."""
    if key == "U0" and space.init_event == "average":
        return 2
    return _BLOCK_DIMS[key]


def _block_radius(space: SearchSpace, key: str) -> float:
    """Radius of one block's set (W(0): the Frobenius size of a unit-variance-per-row matrix
    scaled like :func:`_lr_scale`)."""
    dims = _block_dims(space, key)
    size = {0: 1, 1: space.d, 2: space.d * space.d}[dims]
    if key.startswith("v"):
        size = space.head_dim
    if key == "U0" and dims == 2:
        size = space.init_heads * space.d
    return _lr_scale(space, key) * math.sqrt(size)


def _ball_radius(space: SearchSpace, key: str) -> float | None:
    """Radius of the ball constraint of a block (None: unconstrained or not a ball)."""
    rc, ru, rw = space.radii
    return {"dU": ru, "dW": rw, "U0": space.init_ball_radius, "X": 1.0, "q": 1.0, "vU": None,
            "vW": None}.get(key)


def _normalized_step(space: SearchSpace, key: str, value: Tensor, grad: Tensor) -> Tensor:
    """Per block: the gradient, with its outward radial part removed when the block sits on the
    sphere of its ball (the Riemannian gradient of the active constraint), normalised to unit
    length (sign for scalar blocks), times the block's radius."""
    dims = _block_dims(space, key)
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
        scale = _lr_scale(space, key)
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


__all__ = [
    "DIRECTION_VARS", "INIT_EVENTS", "INIT_VARS", "INPUT_VARS", "THETA_VARS", "Config",
    "LanczosResult",
    "SearchResult", "SearchSpace", "ascend", "batched_forward", "batched_gradient_norm",
    "batched_linearized_output", "batched_loss_gradient", "concat_configs", "config_to_lists",
    "flatten_heads", "head_lanczos", "hessian_vector_product", "init_of", "perturb", "project_",
    "queries_of", "random_configuration", "rayleigh_quotients", "select", "theta_of",
    "unflatten_heads",
]
