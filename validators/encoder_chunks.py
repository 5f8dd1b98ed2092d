"""Memory-aware chunking of the passes of paper 003's encoder (:mod:`validators.encoder`) over
its N samples.

One autograd pass of the encoder holds several (N, d_s, d_m) tensors at once — 2.6 GB each for
Table 1's cell d_m = 4096, N = 10000, d_s = 16 in float32, about 21 GB in all by the estimate
below (8 of them, :func:`chunk_bytes_per_sample`), more than many GPUs and CPUs hold. The
encoder's GD, its per-step records and its measurements at init therefore go through the samples
in chunks (a loop over chunks, never over samples):

* the gradient of the objective is the sum of the chunks' gradients, each chunk contributing its
  share of the same objective (the encoder's ``_objective_share``: Φ's sum over the chunk, or a
  mean over the chunk weighted by its fraction of N), accumulated by :func:`summed_grads`;
* passes without autograd (:func:`chunked`) concatenate the chunks' per-sample rows, and the
  losses, Φ or α are taken on the concatenation, as on an unchunked pass.

The chunk is chosen by memory (:func:`auto_chunk`: :data:`CUDA_CHUNK_FRACTION` of the free GPU
memory, or :data:`CPU_CHUNK_BUDGET` on the CPU, over the estimate
:func:`chunk_bytes_per_sample`) or given explicitly; when all N samples fit the callers run
their unchunked code, so the numbers are bit-for-bit those of a full-batch pass. This module
knows nothing of the encoder's model (it takes callables), so the encoder imports it and not
the reverse.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import Tensor

__all__ = ["CPU_CHUNK_BUDGET", "CUDA_CHUNK_FRACTION", "auto_chunk", "chunk_bytes_per_sample",
           "chunk_slices", "chunked", "resolve_chunk", "summed_grads"]

#: Bytes one chunk may take on the CPU (estimated by :func:`chunk_bytes_per_sample`): 1 GiB, a
#: fraction of any machine the experiments run on. The quick presets and Table 1's paper cells
#: with d_m ≤ 1024, N ≤ 1200 (float32: 0.5 MiB per sample at d_m = 1024) train in one chunk; at
#: d_m = 4096 (2 MiB per sample) a chunk holds 511 samples.
CPU_CHUNK_BUDGET = 1 << 30

#: Fraction of the free CUDA memory one chunk may take (the rest is headroom for the caching
#: allocator's fragmentation and for the error of the estimate).
CUDA_CHUNK_FRACTION = 0.5

#: Per-sample elements one autograd chunk holds at its peak, in units of d_s·d_m and of d_s².
_TOKEN_COPIES = 8
_SCORE_COPIES = 4


def chunk_bytes_per_sample(d_s: int, d_m: int, dtype: torch.dtype) -> int:
    """Estimated peak bytes per sample of one forward + backward pass of the encoder.

    Autograd keeps q, k, v and ReLU(S X W_Vᵀ) (four d_s × d_m tensors per sample), the forward
    pass briefly adds S X W_Vᵀ, and the backward pass holds up to three gradients of that size at
    once: 8·d_s·d_m elements. The scores before and after the softmax and their gradients add
    4·d_s². Inputs (d_s·d), outputs and parameters are left out (small beside d_s·d_m where
    chunking matters). Passes without autograd need less; they use the same (safe) estimate.
    Measured on the CPU (peak resident memory of one pass, N = 64, d_s = 16, d_m = 1024 and 2048,
    float64): 7.2 and 6.2 such copies per sample, under the 8 assumed.
    """
    return (_TOKEN_COPIES * d_s * d_m + _SCORE_COPIES * d_s * d_s) * dtype.itemsize


def auto_chunk(n: int, d_s: int, d_m: int, dtype: torch.dtype,
               device: torch.device | str) -> int:
    """Samples per chunk: the memory budget over :func:`chunk_bytes_per_sample`, within [1, n].

    On CUDA the budget is :data:`CUDA_CHUNK_FRACTION` of the free memory
    (``torch.cuda.mem_get_info`` plus what torch's caching allocator reserved but does not use,
    which it hands out again); elsewhere :data:`CPU_CHUNK_BUDGET`. n when everything fits.
    """
    device = torch.device(device)
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        free += torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
        budget = CUDA_CHUNK_FRACTION * free
    else:
        budget = CPU_CHUNK_BUDGET
    return max(1, min(int(n), int(budget // chunk_bytes_per_sample(d_s, d_m, dtype))))


def resolve_chunk(chunk: int | None, X: Tensor, d_m: int) -> int:
    """Samples per pass over ``X`` (shape (N, d_s, d)): ``chunk`` capped at N, or for None
    :func:`auto_chunk` at ``X``'s sizes, dtype and device. A ``chunk`` that is not a positive
    integer raises ValueError."""
    if chunk is not None and (isinstance(chunk, bool) or not isinstance(chunk, int)
                              or chunk < 1):
        raise ValueError(f"`chunk` must be a positive integer or None, got {chunk!r}")
    n = int(X.shape[0])
    if chunk is None:
        return auto_chunk(n, int(X.shape[1]), d_m, X.dtype, X.device)
    return min(chunk, max(n, 1))


def chunk_slices(n: int, chunk: int) -> list[slice]:
    """The consecutive sample ranges of at most ``chunk`` samples that cover 0 … n − 1."""
    return [slice(s, s + chunk) for s in range(0, n, chunk)]


def chunked(fn: Callable[[Tensor], Tensor], X: Tensor, chunk: int) -> Tensor:
    """``fn(X)`` (rows = samples) without autograd, ``chunk`` samples at a time, rows
    concatenated; with one chunk exactly ``fn(X)``, bit for bit."""
    with torch.no_grad():
        if chunk >= X.shape[0]:
            return fn(X)
        return torch.cat([fn(X[s]) for s in chunk_slices(int(X.shape[0]), chunk)])


def summed_grads(share: Callable[[slice], Tensor], params: Sequence[Tensor], n: int,
                 chunk: int) -> list[Tensor]:
    """Σ over the chunks s of ∇_params share(s): the gradient of a sum over samples, with one
    chunk's autograd graph alive at a time."""
    total: list[Tensor] = []
    for s in chunk_slices(n, chunk):
        grads = torch.autograd.grad(share(s), list(params))
        total = list(grads) if not total else [a.add_(g) for a, g in
                                               zip(total, grads, strict=True)]
    return total
