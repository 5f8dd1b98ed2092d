"""Measurements of a run trained anywhere (a run file, :mod:`boundcalc.runfile`) along its
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
batched over all heads and over blocks of samples (the block sized so that a (block, m, T)
tensor stays near 2 MB, in cache; no Python loop over samples or heads), and over the recorded steps
chunk by chunk (:meth:`boundcalc.runfile.RunFile.iterates`), so a file larger than memory is read
once, a chunk at a time. Also the geometry of θ(0) and of the data (u0_max, u0_rms, x_max,
q_max) and max_j |f(X_j; θ(0))|, the symmetric-init check.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from boundcalc.runfile import RunFile

from ..model import (
    Params,
    displacement_radii,
    get_activation,
    gradient_norm,
    head_features,
    linearized_output,
    loss_and_gradient,
    project,
)

__all__ = ["RunMeasurement", "measure_run", "sample_block"]

#: Bytes a (block, m, T) float64 tensor may take (the sample blocks are sized by it): small
#: enough to stay in cache through the chain of elementwise passes of ``head_features``
#: (measured at m = 256, n = 4000, T = 16 on 1 thread: 2.9 s a pass in blocks of 1024 samples,
#: 1.3 s in blocks of 64).
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


def _blocks(run: RunFile, dev: torch.device) -> list[tuple[torch.Tensor, ...]]:
    """(X, q, y) in float64 on ``dev``, in sample blocks of :func:`sample_block` samples."""
    block = sample_block(run.m, run.T)
    return [tuple(torch.as_tensor(np.asarray(run.arrays[k][s:s + block], dtype=np.float64),
                                  device=dev) for k in ("X", "q", "y"))
            for s in range(0, run.n, block)]


def _measure_points(thetas: list[Params], theta0: Params, data, act, n: int,
                    tick: Callable[[], None]) -> list[tuple[float, float, float, float, Params]]:
    """(max ‖∇f‖, max |f − f_lin|, max |f|, R̂, ∇R̂) at each θ of ``thetas``, over all sample
    blocks; θ(0)'s features are formed once per block for all of them."""
    grad_max = [0.0] * len(thetas)
    gap_max = [0.0] * len(thetas)
    f_max = [0.0] * len(thetas)
    loss = [0.0] * len(thetas)
    grads: list[Params | None] = [None] * len(thetas)
    for X, q, y in data:
        F0 = head_features(theta0, X, q, act)
        share = y.shape[0] / n              # a block's loss and gradient are means over it
        for i, theta in enumerate(thetas):
            F = F0 if theta is theta0 else head_features(theta, X, q, act)  # θ(0)'s: F0
            block_loss, block_grad, f = loss_and_gradient(theta, X, q, y, act, features=F)
            loss[i] += float(block_loss) * share
            block_grad = block_grad.scale(share)
            grads[i] = block_grad if grads[i] is None else grads[i] + block_grad
            grad_max[i] = max(grad_max[i],
                              float(gradient_norm(theta, X, q, act, features=F).max()))
            lin = linearized_output(theta0, theta, X, q, act, features0=F0)
            gap_max[i] = max(gap_max[i], float((f - lin).abs().max()))
            f_max[i] = max(f_max[i], float(f.abs().max()))
        tick()
    return [(grad_max[i], gap_max[i], f_max[i], loss[i], grads[i])  # type: ignore[misc]
            for i in range(len(thetas))]


def measure_run(run: RunFile, *,
                device: str = "cpu", progress: Callable[[int, int, str], None] | None = None,
                chunk_mb: int = 64, threads: int | None = 1) -> RunMeasurement:
    """Measure ``run`` at θ(0) and every recorded iterate (module docstring).

    The step check projects on the smallest Ω_ρ holding θ(0), ..., θ_{k+1}, which projects
    exactly as ProjGD did on any Ω_ρ the run stayed in. ``progress(done, total, detail)`` is
    called after each sample block of each chunk of iterates. ``threads``: torch's CPU threads
    while measuring (restored after; None leaves torch's setting). One is the default: on the
    project's shared 2-core machines two threads were measured 9 times slower on a small run
    (m = 32, n = 200, 30 steps: 23 s against 2.6 s), the threads waiting on each other.
    """
    dev = torch.device(device)
    if threads is None or dev.type != "cpu":
        return _measure(run, dev, progress, chunk_mb)
    before = torch.get_num_threads()
    torch.set_num_threads(int(threads))
    try:
        return _measure(run, dev, progress, chunk_mb)
    finally:
        torch.set_num_threads(before)


def _measure(run: RunFile, dev: torch.device,
             progress: Callable[[int, int, str], None] | None, chunk_mb: int) -> RunMeasurement:
    started = time.perf_counter()
    act = get_activation(run.activation)
    A = run.arrays
    theta0 = _params(A["c0"], A["U0"], A["W0"], dev)
    n = run.n
    data = _blocks(run, dev)
    u_norms = theta0.U.norm(dim=-1)
    geometry = {"u0_max": float(u_norms.max()), "u0_rms": float(u_norms.pow(2).mean().sqrt()),
                "x_max": max(float(X.norm(dim=-1).max()) for X, _, _ in data),
                "q_max": max(float(q.norm(dim=-1).max()) for _, q, _ in data),
                "label_max": max(float(y.abs().max()) for _, _, y in data)}
    chunk = run.chunk_size(chunk_mb)
    chunks = list(range(0, run.k, chunk))
    total, done = len(chunks) * len(data), 0
    detail = "initial parameters"

    def tick() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total, detail)

    (g0, _, f0_max, loss0, grad0), = _measure_points([theta0], theta0, data, act, n, lambda: None)
    geometry["f0_max"] = f0_max
    rows = [(0, g0, 0.0, f0_max, loss0, (0.0, 0.0, 0.0))]
    running = np.zeros(3)
    previous: tuple[int, Params, Params] = (0, theta0, grad0)
    deviation, pairs = 0.0, 0
    for start in chunks:
        steps, c, U, W = run.iterates(start, start + chunk)
        detail = f"steps {int(steps[0])}-{int(steps[-1])}"
        thetas = [_params(c[i], U[i], W[i], dev) for i in range(steps.shape[0])]
        del c, U, W
        measured = _measure_points(thetas, theta0, data, act, n, tick)
        for step, theta, (g, gap, f_max, loss, grad) in zip(steps.tolist(), thetas, measured,
                                                            strict=True):
            radii = displacement_radii(theta, theta0)
            running = np.maximum(running, radii)
            if previous[0] + 1 == step:
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
