"""A Triton kernel for the softmax-weighted token sums of the fused step, one pass over the tokens.

Per sample j and head i, with the logits z_jit = x_jtᵀ w_ji (w_ji = W_i q_j), the softmax
s_jit = softmax_t(z_ji) and P_jit = x_jtᵀ U_i, the fused training step
(:func:`boundcalc.validators.train.fused_loss_and_gradient`) needs two d-vectors:

    a_ji  = Σ_t s_jit x_jt                 (the attention output; pre_ji = U_iᵀ a_ji)
    MU_ji = Σ_t s_jit P_jit x_jt           (M_ji U_i with M_ji = Σ_t s_jit x_jt x_jtᵀ)

and then G_ji U_i = MU_ji − pre_ji a_ji (docs/derivations.md, Remark 3); so do figure 2's
Transformer steps (:func:`~boundcalc.validators.experiments.figure2.
transformer_quantities_by_kernel`, whose seeds are a leading axis with a U of their own). The
torch organisations write the (samples × heads × tokens) logits and softmax to memory and read
them back several times; at the T sweep's T = 1024 with 320 heads that array is 10.5 GB a step
in float64, and moving it is what bounds the step on a GPU. This kernel never writes it: each
program takes one sample and a block of heads, walks the tokens in tiles (the tile's four
products are matrix products, float64 ones on the tensor cores), and keeps the running sums in
registers with the online softmax,

    μ' = max(μ, max_{t∈tile} z_t),   S' = e^{μ−μ'} S + Σ_{t∈tile} e^{z_t−μ'},
    A' = e^{μ−μ'} A + Σ_{t∈tile} e^{z_t−μ'} x_t,   B' = e^{μ−μ'} B + Σ_{t∈tile} e^{z_t−μ'} P_t x_t,

so that after the last tile a = A/S and MU = B/S exactly (each sum is rescaled to the final max;
the first tile starts from μ = −∞, S = A = B = 0). The same sums as the torch organisations,
accumulated in another order: equal to rounding (tests/validators/kernel/test_gpu_kernel.py
compares them at rtol 1e-12 in float64).

It runs where Triton compiles for the device (CUDA), for float32 and float64 and d ≤
:data:`MAX_D`; on the CPU it runs only under Triton's interpreter (``TRITON_INTERPRET=1``), which
is how the tests check it without a GPU. Training uses it only when ``BOUNDCALC_TRITON=1`` (not
yet the default: its speed against the token-moments organisation has still to be measured on a
GPU, ``benchmarks/gpu_steps.py --modes triton``) and after a first call on the device has matched
:func:`softmax_token_sums_reference` on a small problem (:func:`uses_triton_kernel`); where either
fails, one note on stderr says why and training keeps the torch organisations.

Example (runs anywhere; the reference is plain torch):
    >>> import torch
    >>> X = torch.tensor([[[1.0, 0.0], [0.0, 1.0]]])          # one sample, T = 2, d = 2
    >>> Wq = torch.tensor([[[0.0, 0.0]]])                      # one head, equal logits
    >>> a, MU = softmax_token_sums_reference(X, Wq, torch.tensor([[2.0, 0.0]]))
    >>> a.tolist(), MU.tolist()
    ([[[0.5, 0.5]]], [[[1.0, 0.0]]])
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

#: Largest token dimension d the kernel takes (the d-axis is one block, padded with zeros to a
#: power of two ≥ 16; figure 2's Transformer has d = 17).
MAX_D = 32
#: Heads and tokens per tile of a program (powers of two, at least 16: the tile's products
#: are matrix products, (heads × d)(d × tokens) and (heads × tokens)(tokens × d)). 32 × 32
#: compiles for sm_90 in float64 to DMMA with 158 registers a thread and no spills.
BLOCK_HEADS = 32
BLOCK_TOKENS = 32
#: Heads per tile for 16 < d ≤ 32 (figure 2's d = 17): with d padded to 32, 32 heads would spill
#: registers in float32.
BLOCK_HEADS_WIDE = 16
#: Smallest tile side: Triton's matrix products (tl.dot) take sides of 16 or more.
MIN_BLOCK = 16
#: Warps (of 32 threads) per program on the GPU.
NUM_WARPS = 4

_CHECKED: dict[tuple, str | None] = {}   # per kernel, device and key: None = self-check passed
_NOTED: set[str] = set()


def interpreting() -> bool:
    """Whether Triton's interpreter is on (``TRITON_INTERPRET=1``): the kernel then runs on
    CPU tensors, slowly, with numpy — for tests. Triton reads the variable when it is first
    imported, so it must be set before that."""
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def triton_unavailable_reason(device: torch.device | str, d: int, dtype: torch.dtype
                              ) -> str | None:
    """Why the kernel cannot run for tokens of dimension ``d`` in ``dtype`` on ``device``
    (None when it can).

    >>> print(triton_unavailable_reason("cuda", 40, torch.float64))
    d = 40 is above the kernel's largest token dimension 32
    """
    if int(d) < 1:
        return f"d = {int(d)} is not a token dimension"
    if int(d) > MAX_D:
        return f"d = {int(d)} is above the kernel's largest token dimension {MAX_D}"
    return triton_device_reason(device, dtype)


def triton_device_reason(device: torch.device | str, dtype: torch.dtype) -> str | None:
    """Why no Triton kernel of the project runs on ``device`` in ``dtype`` (None when they can):
    float32 or float64, a CUDA device (or the CPU under the interpreter), Triton installed.

    >>> print(triton_device_reason("cuda", torch.float16))
    dtype torch.float16 is not float32 or float64
    """
    if dtype not in (torch.float32, torch.float64):
        return f"dtype {dtype} is not float32 or float64"
    if torch.device(device).type != "cuda" and not interpreting():
        return "Triton compiles for CUDA devices only (on the CPU only under TRITON_INTERPRET=1)"
    try:
        import triton  # noqa: F401
    except ImportError:
        return "Triton is not installed"
    return None


def _kernel() -> Any:
    """The jitted kernel (:mod:`~boundcalc.validators.kernel.triton_source`, which imports
    Triton, is imported on first use)."""
    from . import triton_source

    return triton_source.softmax_token_sums_kernel


def _check_shapes(X: Tensor, Wq: Tensor, U: Tensor | None) -> tuple[tuple[int, ...], int, int,
                                                                      int, int]:
    """(leading axes, n, T, d, m) of X (..., n, T, d), Wq (..., n, m, d), U (m, d) or
    (..., m, d); ValueError naming the argument otherwise."""
    if (X.dim() < 3 or Wq.dim() != X.dim() or X.shape[:-2] != Wq.shape[:-2]
            or X.shape[-1] != Wq.shape[-1]):
        raise ValueError(f"`X` (..., n, T, d) and `Wq` (..., n, m, d) do not match: "
                         f"{tuple(X.shape)}, {tuple(Wq.shape)}")
    *lead, n, T, d = X.shape
    m = Wq.shape[-2]
    if U is not None and tuple(U.shape) not in ((m, d), (*lead, m, d)):
        raise ValueError(f"`U` must be (m, d) = {(m, d)} or (..., m, d) = {(*lead, m, d)}, "
                         f"got {tuple(U.shape)}")
    return tuple(lead), n, T, d, m


def softmax_token_sums_reference(X: Tensor, Wq: Tensor, U: Tensor | None = None
                                 ) -> tuple[Tensor, Tensor | None]:
    """(a, MU) of the module docstring in plain torch, through the (..., n, m, T) softmax.

    Shapes: X (..., n, T, d), Wq (..., n, m, d) = W_i q_j per sample and head, U (m, d) shared
    by every leading index or (..., m, d) one per leading index (figure 2's seeds), or None;
    returns a and MU (..., n, m, d), MU None without U.
    """
    _check_shapes(X, Wq, U)
    s = torch.softmax(torch.matmul(Wq, X.transpose(-1, -2)), dim=-1)     # (..., n, m, T)
    a = torch.matmul(s, X)
    if U is None:
        return a, None
    P = torch.matmul(U.unsqueeze(-3), X.transpose(-1, -2))               # x_tᵀU_i (..., n, m, T)
    return a, torch.matmul(s * P, X)


def softmax_token_sums(X: Tensor, Wq: Tensor, U: Tensor | None = None, *,
                       block_heads: int | None = None, block_tokens: int | None = None,
                       num_warps: int | None = None) -> tuple[Tensor, Tensor | None]:
    """(a, MU) of the module docstring by the Triton kernel: one launch, no (n, m, T) array.

    Shapes as :func:`softmax_token_sums_reference` (X, Wq, U of one dtype and device; U None:
    a only). The tile is ``block_heads`` × ``block_tokens`` (powers of two ≥ 16; None:
    :data:`BLOCK_HEADS`, or :data:`BLOCK_HEADS_WIDE` for d > 16, and :data:`BLOCK_TOKENS`, or
    T's power of two where smaller but ≥ 16; as they are at the call) and ``num_warps`` (None:
    :data:`NUM_WARPS`) the threads of a program; they change the order of the sums (so the
    rounding), not their value. Raises RuntimeError with :func:`triton_unavailable_reason`
    where the kernel cannot run.
    """
    lead, n, T, d, m = _check_shapes(X, Wq, U)
    block_d = max(MIN_BLOCK, 1 << (d - 1).bit_length())
    if block_heads is None:
        block_heads = BLOCK_HEADS if block_d <= MIN_BLOCK else BLOCK_HEADS_WIDE
    block_heads = int(block_heads)
    if block_tokens is None:          # no wider than the sequence (figure 1's T = 16)
        block_tokens = min(BLOCK_TOKENS, max(MIN_BLOCK, 1 << (T - 1).bit_length()))
    block_tokens = int(block_tokens)
    num_warps = NUM_WARPS if num_warps is None else int(num_warps)
    reason = triton_unavailable_reason(X.device, d, X.dtype)
    if reason is not None:
        raise RuntimeError(f"the Triton kernel cannot run: {reason}")
    for name, value in (("block_heads", block_heads), ("block_tokens", block_tokens)):
        if value < MIN_BLOCK or value & (value - 1):
            raise ValueError(f"`{name}` must be a power of two >= {MIN_BLOCK}, got {value}")
    b = n * int(torch.Size(lead).numel())
    X, Wq = X.contiguous(), Wq.contiguous()
    a = torch.empty(*lead, n, m, d, dtype=X.dtype, device=X.device)
    MU = torch.empty_like(a) if U is not None else None
    if b == 0 or m == 0:
        return a, MU
    u = U.contiguous() if U is not None else Wq       # unread without U
    # samples j·group … (j+1)·group − 1 share U's block j: all of them for one (m, d) U
    group = b if U is None or U.dim() == 2 else n
    grid = (b, -(-m // block_heads))
    _kernel()[grid](X, Wq, u, a, MU if MU is not None else a, T, m, d, group,
                    BLOCK_H=block_heads, BLOCK_T=block_tokens, BLOCK_D=block_d,
                    WITH_MU=U is not None, num_warps=num_warps)
    return a, MU


def _note_once(line: str) -> None:
    if line not in _NOTED:
        _NOTED.add(line)
        print(f"boundcalc: {line}", file=sys.stderr, flush=True)


def compare_with_reference(run: Callable[[], tuple], reference: Callable[[], tuple],
                           dtype: torch.dtype) -> str | None:
    """Run a kernel (``run``) and its torch reference on a small problem and compare every
    output; None when each agrees to 1e-10 (float64) or 1e-4 (float32) of its largest entry,
    else why not (the kernel's exception, or the disagreement)."""
    try:
        got, want = run(), reference()
    except Exception as exc:   # a compiler or driver refusal of any kind: keep the torch path
        return f"it failed on its first call ({type(exc).__name__}: {str(exc)[:200]})"
    tol = 1e-10 if dtype == torch.float64 else 1e-4
    for g, w in zip(got, want, strict=True):
        if g is None and w is None:
            continue
        err = float((g - w).abs().max()) / max(float(w.abs().max()), 1e-300)
        if not err <= tol:
            return f"it disagreed with the reference ({err:.2e} relative, tolerance {tol:g})"
    return None


def checked_use(kernel: str, device: torch.device, reason: str | None, key: tuple,
                self_check: Callable[[], str | None]) -> bool:
    """The rule every Triton kernel of the project is used by: ``BOUNDCALC_TRITON=1`` is set,
    nothing stands against it (``reason`` None, e.g. :func:`triton_unavailable_reason`), and
    ``self_check`` (run once per process and ``key``) found it agreeing with its reference.
    Otherwise False, and where the opt-in was set, one note on stderr says why."""
    if os.environ.get("BOUNDCALC_TRITON", "0") != "1":
        return False
    if reason is None:
        full = (kernel, str(device), *key)
        if full not in _CHECKED:
            _CHECKED[full] = self_check()
        reason = _CHECKED[full]
    if reason is not None:
        _note_once(f"BOUNDCALC_TRITON=1 but the Triton kernel of {kernel} is not used on "
                   f"{device} ({reason}); the torch code runs instead")
        return False
    return True


def usage_report() -> dict[str, str]:
    """What this process decided about each Triton kernel it was asked for: per kernel, device
    and key (dtype, d), ``used``, or why not; empty where ``BOUNDCALC_TRITON=1`` was never set.
    Run directories record it with the cells computed in this process
    (:func:`boundcalc.execution.executors.cell_meta`)."""
    return {" ".join(str(part) for part in key): "used" if reason is None else reason
            for key, reason in _CHECKED.items()}


def _self_check(device: torch.device, dtype: torch.dtype, d: int) -> str | None:
    """Run the kernel once on a small problem (tiles cut at both ends, logits far apart) and
    compare with :func:`softmax_token_sums_reference`; None when they agree."""
    gen = torch.Generator().manual_seed(0)
    X = torch.randn(3, 2 * BLOCK_TOKENS + 5, d, generator=gen, dtype=torch.float64)
    Wq = 4.0 * torch.randn(3, BLOCK_HEADS + 3, d, generator=gen, dtype=torch.float64)
    U = torch.randn(BLOCK_HEADS + 3, d, generator=gen, dtype=torch.float64)
    X, Wq, U = (t.to(device=device, dtype=dtype) for t in (X, Wq, U))
    return compare_with_reference(lambda: softmax_token_sums(X, Wq, U),
                                  lambda: softmax_token_sums_reference(X, Wq, U), dtype)


def uses_triton_kernel(device: torch.device | str, d: int, dtype: torch.dtype) -> bool:
    """Whether the fused step uses the kernel (:func:`checked_use`): ``BOUNDCALC_TRITON=1`` is
    set, it can run (:func:`triton_unavailable_reason`), and its first call on this device and
    dtype matched the reference (checked once per process; a failure is noted on stderr once
    and the torch organisations are kept).
    """
    if os.environ.get("BOUNDCALC_TRITON", "0") != "1":
        return False
    dev = torch.device(device)
    return checked_use("the token sums", dev, triton_unavailable_reason(dev, d, dtype),
                       (dtype, int(d)), lambda: _self_check(dev, dtype, int(d)))


__all__ = ["BLOCK_HEADS", "BLOCK_HEADS_WIDE", "BLOCK_TOKENS", "MAX_D", "MIN_BLOCK", "NUM_WARPS",
           "checked_use", "compare_with_reference", "interpreting", "softmax_token_sums",
           "triton_device_reason", "usage_report",
           "softmax_token_sums_reference", "triton_unavailable_reason", "uses_triton_kernel"]
