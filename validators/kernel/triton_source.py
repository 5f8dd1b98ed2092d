"""The Triton source of the project's GPU kernels; imported on first use, since it imports Triton.

What each kernel computes, and why, is documented with the function that launches it:
:func:`boundcalc.validators.kernel.gpu_kernel.softmax_token_sums` (the fused step's
softmax-weighted token sums, online softmax) and
:func:`boundcalc.validators.kernel.gpu_recurrence.indrnn_recurrence` /
:func:`~boundcalc.validators.kernel.gpu_recurrence.indrnn_backward` (the IndRNN's recurrence and
its backpropagation through time). The kernels are module-level functions so that Triton finds
every name they use among this module's globals, compiled or under its interpreter
(``TRITON_INTERPRET=1``, which must be set before this module is first imported).
"""

from __future__ import annotations

import triton
import triton.language as tl

try:
    from triton.language.extra import libdevice
except ImportError:   # an older Triton: tanh falls back to its exp form
    libdevice = None

#: Whether libdevice's tanh is used (compiled kernels); the interpreter has no libdevice.
HAS_LIBDEVICE = libdevice is not None


@triton.jit
def softmax_token_sums_kernel(x_ptr, wq_ptr, u_ptr, a_ptr, mu_ptr, T, m, d, group,
                              BLOCK_H: tl.constexpr, BLOCK_T: tl.constexpr,
                              BLOCK_D: tl.constexpr, WITH_MU: tl.constexpr):
    # program (j, block of heads): x (b, T, d), wq / a / mu (b, m, d), u (b / group, m, d),
    # contiguous; sample j reads u's block j // group. The four products of a tile are tl.dot
    # (float64: the tensor cores' DMMA, IEEE products and sums; float32: "ieee", not TF32), so
    # BLOCK_H, BLOCK_T and BLOCK_D are at least 16; the padding of d is zeros.
    j = tl.program_id(0).to(tl.int64)
    heads = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    dims = tl.arange(0, BLOCK_D)
    d_ok = dims[None, :] < d
    hd_ok = (heads[:, None] < m) & d_ok
    rows = (j * m + heads[:, None]) * d + dims[None, :]                 # (H, D)
    w = tl.load(wq_ptr + rows, mask=hd_ok, other=0.0)
    u = tl.load(u_ptr + ((j // group) * m + heads[:, None]) * d + dims[None, :], mask=hd_ok,
                other=0.0)
    top = tl.full((BLOCK_H,), float("-inf"), w.dtype)                  # μ
    total = tl.zeros((BLOCK_H,), w.dtype)                               # S
    acc_a = tl.zeros((BLOCK_H, BLOCK_D), w.dtype)                       # A
    acc_mu = tl.zeros((BLOCK_H, BLOCK_D), w.dtype)                      # B
    x_row = x_ptr + j * T * d
    for t0 in range(0, T, BLOCK_T):
        toks = t0 + tl.arange(0, BLOCK_T)
        t_ok = toks < T
        x = tl.load(x_row + toks[:, None] * d + dims[None, :], mask=t_ok[:, None] & d_ok,
                    other=0.0)                                          # (T', D)
        x_t = tl.trans(x)
        z = tl.dot(w, x_t, input_precision="ieee")                      # logits (H, T')
        z = tl.where(t_ok[None, :], z, float("-inf"))
        new_top = tl.maximum(top, tl.max(z, axis=1))
        rescale = tl.exp(top - new_top)
        e = tl.exp(z - new_top[:, None])
        total = total * rescale + tl.sum(e, axis=1)
        acc_a = acc_a * rescale[:, None] + tl.dot(e, x, input_precision="ieee")
        if WITH_MU:
            p = tl.dot(u, x_t, input_precision="ieee")                  # P (H, T')
            acc_mu = acc_mu * rescale[:, None] + tl.dot(e * p, x, input_precision="ieee")
        top = new_top
    tl.store(a_ptr + rows, acc_a / total[:, None], mask=hd_ok)
    if WITH_MU:
        tl.store(mu_ptr + rows, acc_mu / total[:, None], mask=hd_ok)


@triton.jit
def tanh(z, LIBDEVICE: tl.constexpr):
    # libdevice's tanh where LIBDEVICE, else sign(z)(1 − e^{−2|z|})/(1 + e^{−2|z|})
    if LIBDEVICE:
        out = libdevice.tanh(z)
    else:
        e = tl.exp(-2.0 * tl.abs(z))
        r = (1.0 - e) / (1.0 + e)
        out = tl.where(z < 0, -r, r)
    return out


@triton.jit
def indrnn_forward_kernel(drive_ptr, u_ptr, states_ptr, dz_ptr, last_ptr, b_ptr, T, N,
                          samples_units, m, STORE: tl.constexpr, TANGENT: tl.constexpr,
                          LIBDEVICE: tl.constexpr, BLOCK: tl.constexpr):
    # drive (T, N) time-major; element e is unit e % m of leading index e // samples_units.
    # The pointers step by N per time step (no t·N product, which could pass 2³¹).
    e = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    ok = e < N
    u = tl.load(u_ptr + (e // samples_units) * m + e % m, mask=ok, other=0.0)
    h = tl.zeros((BLOCK,), u.dtype)
    b = tl.zeros((BLOCK,), u.dtype)
    drive_at = drive_ptr + e
    states_at = states_ptr + e
    dz_at = dz_ptr + e
    for _ in range(T):
        z = tl.load(drive_at, mask=ok, other=0.0) + u * h
        h_next = tanh(z, LIBDEVICE)
        d1 = 1.0 - h_next * h_next
        if STORE:
            tl.store(states_at, h, mask=ok)                 # h_{t−1}
            tl.store(dz_at, d1, mask=ok)                    # σ'(z_t)
        if TANGENT:
            b = (h + u * b) * d1
        h = h_next
        drive_at += N
        states_at += N
        dz_at += N
    tl.store(last_ptr + e, h, mask=ok)
    if TANGENT:
        tl.store(b_ptr + e, b, mask=ok)


@triton.jit
def indrnn_backward_kernel(dz_ptr, states_ptr, delta_ptr, u_ptr, grad_u_ptr, T, N,
                           samples_units, m, BLOCK: tl.constexpr):
    e = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    ok = e < N
    u = tl.load(u_ptr + (e // samples_units) * m + e % m, mask=ok, other=0.0)
    delta = tl.load(delta_ptr + e, mask=ok, other=0.0)
    acc = tl.zeros((BLOCK,), u.dtype)
    dz_at = dz_ptr + e
    states_at = states_ptr + e
    for _ in range(T - 1):                                  # to t = T
        dz_at += N
        states_at += N
    for _ in range(T):                                      # t = T … 1
        g = tl.load(dz_at, mask=ok, other=0.0) * delta      # ∂R̂/∂z_t
        tl.store(dz_at, g, mask=ok)
        acc += g * tl.load(states_at, mask=ok, other=0.0)
        delta = g * u
        dz_at -= N
        states_at -= N
    tl.store(grad_u_ptr + e, acc, mask=ok)


__all__ = ["HAS_LIBDEVICE", "indrnn_backward_kernel", "indrnn_forward_kernel",
           "softmax_token_sums_kernel", "tanh"]
