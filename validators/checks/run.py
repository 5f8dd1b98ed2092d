"""Measurements of a run trained anywhere (a run file, :mod:`boundcalc.checking.runfile`) along its
trajectory: what ``boundcalc check`` compares with the theory.

At θ(0) and at every recorded iterate θ_k, over all n samples:

* max_j ‖∇_θ f(X_j; θ_k)‖ (against L, Lemma 2 / the tight route),
* max_j |f(X_j; θ_k) − f_lin(X_j; θ_k)| (against ε_lin, Lemma 3),
* max_j |f(X_j; θ_k)| (against F, Lemma 6),
* R̂(θ_k) = (1/n) Σ_j (f(X_j; θ_k) − y_j)² (against Theorem 1's min_iterate),
* the displacement radii √m · max_i of each block's displacement (the smallest Ω_ρ holding θ_k),
* for two consecutive recorded steps k, k + 1, how far θ_{k+1} is from the (projected) gradient
  step Π_ρ(θ_k − η ∇R̂(θ_k)), relative to ‖θ_{k+1} − θ_k‖: near 0 for plain GD that stays in
  Ω_ρ and for ProjGD on Ω_ρ, of order 1 for another optimizer (Adam).

Everything is the closed form of :mod:`boundcalc.validators.model` (Lemma 1), in float64,
from **one pass per (θ, sample block)**: the attention, a = X s, G_i U_i, σ and σ' are formed
once (:func:`_forward_pass`) and f, ‖∇f‖, f − f_lin, the loss and, only where the next step is
recorded (the step check needs it), ∇R̂ all come from them; θ(0)'s pass is formed once per block
for every θ of a chunk (f_lin is linear in θ − θ(0) given it). Batched over all heads (the last
axis, so that each product is one wide batched matrix product) and over blocks of samples (the
block sized so that a (block, m, T) tensor stays near 2 MB; no Python loop over samples or
heads), the blocks shared by threads, and over the recorded steps chunk by chunk
(:meth:`boundcalc.checking.runfile.RunFile.iterates`), so a file larger than memory is read once, a
chunk at a time. Also the geometry of θ(0) and of the data (u0_max, u0_rms, x_max, q_max) and
max_j |f(X_j; θ(0))|, the symmetric-init check.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import torch

from boundcalc.checking.runfile import RunFile

from ..model import Params, displacement_radii, get_activation, project

__all__ = ["RunMeasurement", "measure_run", "sample_block"]

#: Bytes a (block, m, T) float64 tensor may take (the sample blocks are sized by it): small
#: enough to stay near the cache through the pass (measured at m = 256, n = 4000, T = 16, one
#: thread: 0.45 s of CPU per θ in blocks of 2 MB, 0.50 s in 1 MB or 4 MB, 0.57–0.6 s in 8 MB).
BLOCK_BYTES = 2 << 20


@dataclass
class RunMeasurement:
    """What :func:`measure_run` measured. Per-step arrays have one entry per measured point:
    θ(0) first (step 0), then every recorded iterate in order."""

    steps: np.ndarray
    grad_norm: np.ndarray
    lin_gap: np.ndarray
    abs_f: np.ndarray
    loss: np.ndarray
    radii: np.ndarray                      # (points, 3): ρ_c, ρ_u, ρ_w of each point
    geometry: dict[str, float]             # u0_max, u0_rms, x_max, q_max, label_max, f0_max
    gd_deviation: float | None             # max over consecutive pairs (None: no pair)
    gd_pairs: int
    seconds: float
    device: str
    extra: dict[str, float] = field(default_factory=dict)


def sample_block(m: int, T: int, budget: int | None = None) -> int:
    """How many samples a block holds so that a (block, m, T) float64 tensor fits ``budget``
    bytes (None: :data:`BLOCK_BYTES`).

    Example:
        >>> sample_block(256, 16)
        64
    """
    return max(1, (BLOCK_BYTES if budget is None else budget) // (8 * m * max(T, 1)))


def _params(c, U, W, device) -> Params:
    return Params(*(torch.as_tensor(np.ascontiguousarray(a), dtype=torch.float64, device=device)
                    for a in (c, U, W)))


#: Largest bound on |z| = |x_tᵀ W_i q| up to which the softmax exponentiates z unshifted
#: (e^{±300} is far inside float64; above it the largest score is subtracted first).
_UNSHIFTED = 300.0


class _Block(NamedTuple):
    """One block of b samples in float64: X (b, T, d), Xt1 = [Xᵀ; 1ᵀ] per sample (b, d + 1, T),
    q (b, d), q2 = ‖q‖² (b,), y (b,), and the largest token and query norms."""

    X: torch.Tensor
    Xt1: torch.Tensor
    q: torch.Tensor
    q2: torch.Tensor
    y: torch.Tensor
    x_max: float
    q_max: float


class _Theta(NamedTuple):
    """θ arranged for the pass (heads last): c (m,), Ut = Uᵀ (d, m), M (d, d·m) with
    M[e, a·m + i] = W_i[a, e] (so q M holds W_i q), and max_i ‖W_i‖_F."""

    c: torch.Tensor
    Ut: torch.Tensor
    M: torch.Tensor
    w_max: float


class _Pass(NamedTuple):
    """One θ on one block, from one pass (heads last): Wq = W_i q (b, d, m), a = X s and
    GU = G_i U_i (b, d, m), their squared norms over d (b, 2m), h = σ(pre) and dh = σ'(pre)
    (b, m), f (b,)."""

    Wq: torch.Tensor
    a: torch.Tensor
    GU: torch.Tensor
    squares: torch.Tensor
    h: torch.Tensor
    dh: torch.Tensor
    f: torch.Tensor


def _blocks(run: RunFile, dev: torch.device) -> list[_Block]:
    """The samples in float64 on ``dev``, in blocks of :func:`sample_block` samples."""
    block = sample_block(run.m, run.T)
    out = []
    for s in range(0, run.n, block):
        X, q, y = (torch.as_tensor(np.asarray(run.arrays[k][s:s + block], dtype=np.float64),
                                   device=dev) for k in ("X", "q", "y"))
        b, T, _ = X.shape
        ones = torch.ones(b, 1, T, dtype=X.dtype, device=dev)
        out.append(_Block(X, torch.cat([X.transpose(1, 2), ones], 1),
                          q, (q * q).sum(-1), y,
                          float(X.norm(dim=-1).max()), float(q.norm(dim=-1).max())))
    return out


def _arrange(theta: Params) -> _Theta:
    c, U, W = theta
    m, d = U.shape
    return _Theta(c, U.T.contiguous(), W.permute(2, 1, 0).reshape(d, d * m),
                  float(W.flatten(1).norm(dim=-1).max()))


def _buffer(work: dict, name: str, shape: tuple[int, ...], like: torch.Tensor) -> torch.Tensor:
    """``work[name]``, (re)allocated when its shape changes: the large outputs of a pass are
    written into the same memory pass after pass (fresh allocations of a few MB each were
    measured to cost as much as the products, in page faults)."""
    buf = work.get(name)
    if buf is None or tuple(buf.shape) != shape:
        buf = work[name] = torch.empty(shape, dtype=like.dtype, device=like.device)
    return buf


def _forward_pass(theta: _Theta, block: _Block, act, work: dict) -> _Pass:
    """Everything the measurements need of θ on one block, the attention formed once.

    Heads are the last axis, so each product is one wide batched matrix product:
    [z | p] = Xᵀ [W_i q | U_i] (b, T, 2m); e = exp(z) (shifted by its max over t only when
    |z| could overflow) and e ⊙ p in place; [X; 1ᵀ] [e | e ⊙ p] gives X e, X (e ⊙ p) and the
    softmax denominators Σ_t e_t at once; then a = X s, pre = U_iᵀ a and
    G_i U_i = X (s ⊙ p) − pre · a (the softmax facts of :mod:`boundcalc.validators.model`).
    The large tensors live in ``work`` (:func:`_buffer`): a pass's result is valid until the
    next pass with the same ``work``."""
    b, T, d = block.X.shape
    m = theta.c.shape[0]
    R = _buffer(work, "R", (b, d, 2 * m), block.X)
    R[..., :m] = (block.q @ theta.M).view(b, d, m)                  # [W_i q | U_i]
    R[..., m:] = theta.Ut
    zp = torch.bmm(block.X, R, out=_buffer(work, "zp", (b, T, 2 * m), R))  # [z | p]
    z = zp[..., :m]
    if block.x_max * theta.w_max * block.q_max > _UNSHIFTED:
        z.sub_(z.amax(1, keepdim=True))
    e = z.exp_()
    zp[..., m:].mul_(e)
    xe = torch.bmm(block.Xt1, zp, out=_buffer(work, "xe", (b, d + 1, 2 * m), R))
    den = xe[:, d, :m]
    aG = xe[:, :d].div_(den.repeat(1, 2).unsqueeze(1))              # [a | X (s ⊙ p)]
    a = aG[..., :m]
    pre = (a * theta.Ut).sum(1)
    GU = aG[..., m:].sub_(pre.unsqueeze(1) * a)
    h = act.fn(pre)
    dh = 1.0 - h * h if act.name == "tanh" else act.d1(pre)      # tanh' = 1 − tanh²
    return _Pass(R[..., :m], a, GU, (aG * aG).sum(1), h, dh, h @ theta.c / math.sqrt(m))


def _measure_points(thetas: list[Params], theta0: Params, data: list[_Block], act, n: int,
                    need_grad: list[bool], tick: Callable[[], None], workers: int = 1
                    ) -> list[tuple[float, float, float, float, Params | None]]:
    """(max ‖∇f‖, max |f − f_lin|, max |f|, R̂, ∇R̂ or None) at each θ of ``thetas``, over all
    sample blocks, from one :func:`_forward_pass` per (θ, block); θ(0)'s pass is formed once
    per block for all of them (f_lin is linear in θ − θ(0) given it). ∇R̂ only where
    ``need_grad``. ``workers`` threads take every ``workers``-th block each (torch runs without
    the GIL) and their sums are added in a fixed order, so the values do not depend on timing."""
    m, d = theta0.U.shape
    root_m = math.sqrt(m)
    arranged0 = _arrange(theta0)
    arranged = [arranged0 if theta is theta0 else _arrange(theta) for theta in thetas]
    moves = [(theta.c - theta0.c, (theta.U - theta0.U).T.reshape(-1)) for theta in thetas]

    def share(blocks: list[_Block]) -> tuple[torch.Tensor, list[list[torch.Tensor] | None]]:
        stats = torch.zeros(len(thetas), 4, dtype=torch.float64, device=theta0.c.device)
        sums: list[list[torch.Tensor] | None] = [None] * len(thetas)  # c, Uᵀ, (W_i q)-major W
        work0: dict = {}                                         # θ(0)'s pass and the others'
        work: dict = {}
        for block in blocks:
            base = _forward_pass(arranged0, block, act, work0)
            coef0 = arranged0.c * base.dh                         # c_i(0) σ'(pre_i(0)) (b, m)
            a0 = (base.a * coef0.unsqueeze(1)).flatten(1)         # (b, d·m)
            GU0 = base.GU * coef0.unsqueeze(1)
            for i, theta in enumerate(arranged):
                P = base if theta is arranged0 else _forward_pass(theta, block, act, work)
                norm2 = P.h * P.h + (theta.c * P.dh) ** 2 * (
                    P.squares[:, :m] + P.squares[:, m:] * block.q2.unsqueeze(-1))
                dc, dU = moves[i]
                lin = base.f + (base.h @ dc + a0 @ dU
                                + (GU0 * (P.Wq - base.Wq)).sum((1, 2))) / root_m
                resid = P.f - block.y
                row = torch.stack([norm2.sum(-1).max() / m, (P.f - lin).abs().max(),
                                   P.f.abs().max(), resid @ resid / n])
                stats[i, :3] = torch.maximum(stats[i, :3], row[:3])
                stats[i, 3] += row[3]
                if need_grad[i]:
                    w = resid * (2.0 / n)
                    coef = (w.unsqueeze(-1) * P.dh * (theta.c / root_m)).unsqueeze(1)
                    part = [w @ P.h / root_m, (coef * P.a).sum(0),
                            (coef * P.GU).flatten(1).T @ block.q]
                    sums[i] = part if sums[i] is None else [x + y for x, y in zip(
                        sums[i], part, strict=True)]  # type: ignore[arg-type]
            tick()
        return stats, sums

    if workers > 1 and len(data) > 1:
        with ThreadPoolExecutor(workers) as pool:
            parts = list(pool.map(share, [data[w::workers] for w in range(workers)]))
    else:
        parts = [share(data)]
    stats, sums = parts[0]
    for more, more_sums in parts[1:]:
        stats = torch.cat([torch.maximum(stats[:, :3], more[:, :3]), stats[:, 3:] + more[:, 3:]],
                          1)
        sums = [a if b is None else [x + y for x, y in zip(a, b, strict=True)]  # type: ignore
                for a, b in zip(sums, more_sums, strict=True)]
    grads = [None if g is None else Params(g[0], g[1].T, g[2].view(d, m, d).transpose(0, 1))
             for g in sums]
    return [(math.sqrt(r[0]), r[1], r[2], r[3], g)
            for r, g in zip(stats.tolist(), grads, strict=True)]


def measure_run(run: RunFile, *,
                device: str = "cpu", progress: Callable[[int, int, str], None] | None = None,
                chunk_mb: int = 64, threads: int | None = 2) -> RunMeasurement:
    """Measure ``run`` at θ(0) and every recorded iterate (module docstring).

    The step check projects on the smallest Ω_ρ holding θ(0), ..., θ_{k+1}, which projects
    exactly as ProjGD did on any Ω_ρ the run stayed in. ``progress(done, total, detail)`` is
    called after each sample block of each chunk of iterates. ``threads``: on the CPU, how many
    threads measure sample blocks side by side, each running torch on one thread (torch's own
    setting is restored after; None: one thread at torch's setting). Threads over whole blocks
    rather than torch's threads inside each product: on the project's shared 2-core machines,
    under load, torch's two threads waited on each other and measured 4 times slower than one.
    """
    dev = torch.device(device)
    if threads is None or dev.type != "cpu":
        return _measure(run, dev, progress, chunk_mb, 1)
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _measure(run, dev, progress, chunk_mb, max(1, int(threads)))
    finally:
        torch.set_num_threads(before)


def _measure(run: RunFile, dev: torch.device, progress: Callable[[int, int, str], None] | None,
             chunk_mb: int, workers: int) -> RunMeasurement:
    started = time.perf_counter()
    act = get_activation(run.activation)
    A = run.arrays
    theta0 = _params(A["c0"], A["U0"], A["W0"], dev)
    n = run.n
    data = _blocks(run, dev)
    u_norms = theta0.U.norm(dim=-1)
    geometry = {"u0_max": float(u_norms.max()), "u0_rms": float(u_norms.pow(2).mean().sqrt()),
                "x_max": max(b.x_max for b in data), "q_max": max(b.q_max for b in data),
                "label_max": max(float(b.y.abs().max()) for b in data)}
    chunk = run.chunk_size(chunk_mb)
    chunks = list(range(0, run.k, chunk))
    total, done = len(chunks) * len(data), 0
    detail = "initial parameters"

    lock = threading.Lock()

    def tick() -> None:
        nonlocal done
        with lock:
            done += 1
            if progress is not None:
                progress(done, total, detail)

    recorded = {int(s) for s in np.asarray(A["steps"]).tolist()}
    (g0, _, f0_max, loss0, grad0), = _measure_points([theta0], theta0, data, act, n,
                                                     [1 in recorded], lambda: None, workers)
    geometry["f0_max"] = f0_max
    rows = [(0, g0, 0.0, f0_max, loss0, (0.0, 0.0, 0.0))]
    running = np.zeros(3)
    previous: tuple[int, Params, Params | None] = (0, theta0, grad0)
    deviation, pairs = 0.0, 0
    for start in chunks:
        steps, c, U, W = run.iterates(start, start + chunk)
        detail = f"steps {int(steps[0])}-{int(steps[-1])}"
        thetas = [_params(c[i], U[i], W[i], dev) for i in range(steps.shape[0])]
        del c, U, W
        measured = _measure_points(thetas, theta0, data, act, n,
                                   [int(s) + 1 in recorded for s in steps.tolist()], tick,
                                   workers)
        for step, theta, (g, gap, f_max, loss, grad) in zip(steps.tolist(), thetas, measured,
                                                            strict=True):
            radii = displacement_radii(theta, theta0)
            running = np.maximum(running, radii)
            if previous[0] + 1 == step and previous[2] is not None:
                ball = (float(running[0]), float(running[1]), float(running[2]))
                expected = project(previous[1] - previous[2].scale(run.eta), theta0, ball)
                moved = float((theta - previous[1]).norm())
                off = float((theta - expected).norm())
                deviation = max(deviation, off / moved if moved > 0 else
                                (0.0 if off == 0 else math.inf))
                pairs += 1
            previous = (step, theta, grad)
            rows.append((step, g, gap, f_max, loss, radii))
    cols = list(zip(*rows, strict=True))
    return RunMeasurement(
        steps=np.array(cols[0], dtype=np.int64), grad_norm=np.array(cols[1]),
        lin_gap=np.array(cols[2]), abs_f=np.array(cols[3]), loss=np.array(cols[4]),
        radii=np.array(cols[5], dtype=np.float64).reshape(-1, 3), geometry=geometry,
        gd_deviation=deviation if pairs else None, gd_pairs=pairs,
        seconds=time.perf_counter() - started, device=str(dev))
