"""Triton kernels of the IndRNN's recurrence (figure 2): each unit's T steps in registers.

The IndRNN's recurrence is diagonal: unit i of sample j (of seed s) runs on its own,

    z_t = w_iᵀx_t + u_i h_{t−1},   h_t = tanh(z_t),   σ'(z_t) = 1 − h_t²,
    b_t = σ'(z_t)(h_{t−1} + u_i b_{t−1})          (the tangent ∂h_t/∂u_i, for J(θ)),

from h_0 = b_0 = 0, and backpropagation through time runs it backwards,

    g_t = σ'(z_t) δ_t,   δ_{t−1} = u_i g_t,   ∂R̂/∂u_i += g_t h_{t−1}     (t = T … 1),

from δ_T = ∂R̂/∂h_T (docs/indrnn.md). :func:`boundcalc.validators.indrnn.trajectory` does each
time step as a few torch kernels over the whole (seed, sample, unit) block, so every step reads
and writes that block several times (≈ 10 passes per token and training step at figure 2's
L = 96 on a GPU). Here one program takes a block of (seed, sample, unit) elements and walks all
T steps with h, b and δ in registers: per step the forward kernel reads the drive w_iᵀx_t and
writes h_{t−1} and σ'(z_t) (what the backward pass needs), the backward kernel reads those two
and writes g_t (for ∇_W = Σ_t g_tᵀ X_t, a matrix product left to torch). The same operations in
the same order per element as the torch code (the tangent and ∂R̂/∂u's sum over t aside, whose
order differs): equal to rounding, tested against it.

tanh is libdevice's on the GPU; Triton's interpreter (``TRITON_INTERPRET=1``, the tests on a
CPU) has no libdevice, so there the kernel computes
tanh(z) = sign(z)(1 − e^{−2|z|})/(1 + e^{−2|z|}). Used by :mod:`boundcalc.validators.indrnn` for
the tanh IndRNN when ``BOUNDCALC_TRITON=1`` and its first call on the device matched the torch
recurrence, forwards and backwards (:func:`boundcalc.validators.kernel.gpu_kernel.checked_use`).
"""

from __future__ import annotations

import os
from typing import Any

import torch
from torch import Tensor

from .gpu_kernel import (
    checked_use,
    compare_with_reference,
    interpreting,
    triton_device_reason,
)

#: (seed, sample, unit) elements per program.
BLOCK = 256


def _libdevice() -> bool:
    """Whether the compiled kernels take libdevice's tanh (never under the interpreter)."""
    from . import triton_source

    return triton_source.HAS_LIBDEVICE and not interpreting()


def _kernels() -> tuple[Any, Any]:
    """The jitted kernels (:mod:`~boundcalc.validators.kernel.triton_source`, which imports
    Triton, is imported on first use)."""
    from . import triton_source

    return triton_source.indrnn_forward_kernel, triton_source.indrnn_backward_kernel


def _layout(drive: Tensor, u: Tensor) -> tuple[int, int, int, int]:
    """(T, N, n·m, m) of a time-major drive (T, ..., n, m) and u (..., m)."""
    if drive.dim() < 3 or u.shape[:-1] != drive.shape[1:-2] or u.shape[-1] != drive.shape[-1]:
        raise ValueError(f"`drive` (T, ..., n, m) and `u` (..., m) do not match: "
                         f"{tuple(drive.shape)}, {tuple(u.shape)}")
    T, n, m = drive.shape[0], drive.shape[-2], drive.shape[-1]
    return T, drive[0].numel(), n * m, m


def indrnn_recurrence(drive: Tensor, u: Tensor, *, store: bool = True, tangent: bool = False
                      ) -> tuple[Tensor, Tensor | None, Tensor | None]:
    """The forward recurrence from a time-major drive w_iᵀx_t (T, ..., n, m) and u (..., m).

    Returns (states, dz, b_T): with ``store``, states (T + 1, ..., n, m) = h_0 … h_T and dz
    (T, ..., n, m) = σ'(z_1) … σ'(z_T) (the layout of
    :class:`boundcalc.validators.indrnn.Trajectory`); without, states is h_T alone (..., n, m)
    and dz None. b_T (..., n, m) with ``tangent``, else None.
    """
    T, N, samples_units, m = _layout(drive, u)
    drive, u = drive.contiguous(), u.contiguous()
    shape = drive.shape[1:]
    states = drive.new_empty((T + 1, *shape)) if store else drive.new_empty(shape)
    dz = drive.new_empty((T, *shape)) if store else None
    b = drive.new_empty(shape) if tangent else None
    if N == 0:
        return states, dz, b
    last = states[T] if store else states
    forward_kernel, _ = _kernels()
    forward_kernel[(-(-N // BLOCK),)](drive, u, states, dz if store else last, last,
                                      b if tangent else last, T, N, samples_units, m,
                                      STORE=store, TANGENT=tangent,
                                      LIBDEVICE=_libdevice(), BLOCK=BLOCK)
    return states, dz, b


def indrnn_backward(dz: Tensor, h_prev: Tensor, delta: Tensor, u: Tensor) -> Tensor:
    """Backpropagation through time: overwrites ``dz`` (T, ..., n, m) = σ'(z_t) with
    g_t = ∂R̂/∂z_t, from δ_T = ``delta`` (..., n, m) and the states h_{t−1} (T, ..., n, m);
    returns Σ_t g_t h_{t−1} per element (..., n, m), whose sum over samples is ∇_u R̂."""
    T, N, samples_units, m = _layout(dz, u)
    if not dz.is_contiguous():
        raise ValueError("`dz` must be contiguous (it is overwritten in place)")
    grad_u = dz.new_empty(dz.shape[1:])
    if N == 0:
        return grad_u.zero_()
    _, backward_kernel = _kernels()
    backward_kernel[(-(-N // BLOCK),)](dz, h_prev.contiguous(), delta.contiguous(),
                                       u.contiguous(), grad_u, T, N, samples_units, m,
                                       BLOCK=BLOCK)
    return grad_u


def _torch_steps(drive: Tensor, u: Tensor, delta: Tensor) -> tuple[Tensor, ...]:
    """The recurrence and its backward step by step in torch (the self-check's reference):
    states, σ', b_T, the g_t and Σ_t g_t h_{t−1}."""
    u_row = u.unsqueeze(-2)
    h = torch.zeros_like(drive[0])
    b = torch.zeros_like(h)
    states, dz = [h], []
    for t in range(drive.shape[0]):
        h_next = torch.tanh(drive[t] + u_row * h)
        d1 = 1.0 - h_next * h_next
        b = (h + u_row * b) * d1
        h = h_next
        states.append(h)
        dz.append(d1)
    g = torch.stack(dz)
    per_unit = torch.zeros_like(delta)
    for t in range(drive.shape[0] - 1, -1, -1):
        g[t] *= delta
        per_unit += g[t] * states[t]
        delta = g[t] * u_row
    return torch.stack(states), torch.stack(dz), b, g, per_unit


def _kernel_steps(drive: Tensor, u: Tensor, delta: Tensor) -> tuple[Tensor, ...]:
    states, dz, b = indrnn_recurrence(drive, u, tangent=True)
    g = dz.clone()
    per_unit = indrnn_backward(g, states[:-1], delta, u)
    return states, dz, b, g, per_unit


def _self_check(device: torch.device, dtype: torch.dtype) -> str | None:
    """Both kernels on a small problem (two seeds, a block cut at the end) against
    :func:`_torch_steps`."""
    gen = torch.Generator().manual_seed(0)
    drive = torch.randn(7, 2, 3, BLOCK // 4 + 5, generator=gen, dtype=torch.float64)
    u = 1.5 * torch.rand(2, BLOCK // 4 + 5, generator=gen, dtype=torch.float64) - 0.75
    delta = torch.randn(2, 3, BLOCK // 4 + 5, generator=gen, dtype=torch.float64)
    drive, u, delta = (t.to(device=device, dtype=dtype) for t in (drive, u, delta))
    return compare_with_reference(lambda: _kernel_steps(drive, u, delta),
                                  lambda: _torch_steps(drive, u, delta), dtype)


def uses_recurrence_kernel(device: torch.device | str, dtype: torch.dtype) -> bool:
    """Whether the tanh IndRNN runs its recurrence by these kernels
    (:func:`~boundcalc.validators.kernel.gpu_kernel.checked_use`: ``BOUNDCALC_TRITON=1``, the
    kernels can run here, and their first call matched the torch recurrence)."""
    if os.environ.get("BOUNDCALC_TRITON", "0") != "1":
        return False
    dev = torch.device(device)
    return checked_use("the IndRNN recurrence", dev, triton_device_reason(dev, dtype),
                       (dtype,), lambda: _self_check(dev, dtype))


__all__ = ["BLOCK", "indrnn_backward", "indrnn_recurrence", "uses_recurrence_kernel"]
