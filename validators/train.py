"""ProjGD and ProjSGD, the paper's trainers, with the per-step record the bounds are compared to.

Update (Section 4; Theorem 1 and Proposition 1), with the project's loss
R̂(θ) = (1/n) Σ_j (f(X_j; θ) − y_j)² (docs/derivations.md §0):

    ProjGD:   θ_{k+1} = Π_{Ω_ρ}(θ_k − η ∇R̂(θ_k)),
    ProjSGD:  θ_{k+1} = Π_{Ω_ρ}(θ_k − η g_k),  g_k = (2/b) Σ_{j∈B_k} (f_j(θ_k) − y_j) ∇f_j(θ_k),

θ_0 = θ(0), B_k drawn uniformly without replacement within a step (b distinct indices,
``torch.randperm`` of a seeded CPU generator, so E[g_k | θ_k] = ∇R̂(θ_k)); Π_{Ω_ρ} is
:func:`boundcalc.validators.model.project` (exact), skipped in the no-projection mode.

Recorded for k = 0, …, K−1, as preallocated tensors on the training device (one transfer to the
CPU at the end, no per-step synchronisation):

* ``loss[k]`` = R̂(θ_k) on the full training set (for ProjSGD an extra forward pass per step,
  ``record_full_loss=True``; NaN otherwise) and ``batch_loss[k]`` = the loss of the step's batch;
* ``grad_norm[k]`` = (‖g_c‖, ‖g_U‖, ‖g_W‖_F) of the step's gradient;
* ``radius[k]`` = √m·max_i of each block's displacement from θ(0) (the ρ actually used by θ_k,
  as :func:`boundcalc.validators.model.displacement_radii`) and ``distance[k]`` = the blocks'
  Euclidean distances ‖θ_k − θ(0)‖;
* the running sum Σ_{k<K} θ_k, giving the average iterate θ̂_K = (1/K) Σ_{k<K} θ_k (the one of
  Theorem 1's second bound) and its loss.

So ``min_loss`` = min_{k<K} R̂(θ_k) is exactly the quantity of Theorem 1's first bound (the K
losses are those of θ_0 … θ_{K−1}; R̂(θ_K) is reported separately as ``final_loss``).

Gradients come from :func:`fused_loss_and_gradient`, the closed form of
:func:`boundcalc.validators.model.loss_and_gradient` (Lemma 1) reorganised for speed (chunks of
samples, batched products, in-place softmax; equal to it to rounding, tested) — on the CPU, for
tanh, by the compiled kernel of :mod:`boundcalc.validators.kernel.cpu_kernel` where it builds
(the same sums with every per-token quantity in registers) —, or from ``model.loss_and_gradient``
itself with ``gradient="closed"``. ``TrainResult.config["backend"]`` says which ran.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import NamedTuple

import torch
from torch import Tensor

from .kernel import cpu_kernel, gpu_kernel
from .model import Activation, Params, get_activation, loss_and_gradient, project
from .step_graphs import run_steps
from .student_split import StudentSplit, check_widths, student_split

_LOG2E = 1.0 / math.log(2.0)   # exp(z) = 2^(z log₂e): the softmax uses exp2, cheaper than exp

#: Target number of (sample, token, head) entries per chunk on the CPU (cache-sized work set).
CPU_CHUNK_ENTRIES = 1 << 18
#: Upper bound on (sample, token, head) entries per chunk on accelerators (memory only).
DEVICE_CHUNK_ENTRIES = 1 << 28


#: Below this many (sample, token, head) entries per step, CPU work runs on one intra-op thread.
SMALL_STEP_ENTRIES = 1 << 20


@contextmanager
def intra_op_threads(threads: int | None) -> Iterator[None]:
    """Temporarily set torch's intra-op thread count (None: leave it); restored on exit."""
    before = torch.get_num_threads()
    if threads is None or threads == before:
        yield
        return
    torch.set_num_threads(int(threads))
    try:
        yield
    finally:
        torch.set_num_threads(before)


def small_work_threads(entries: int, device: torch.device | str) -> int | None:
    """1 for CPU work below :data:`SMALL_STEP_ENTRIES` entries, else None (keep torch's).

    Tiny tensor operations gain nothing from a second thread but can stall at OpenMP / MKL
    barriers for a scheduler time slice when the machine is shared; one thread avoids that.
    """
    return 1 if torch.device(device).type == "cpu" and entries < SMALL_STEP_ENTRIES else None


def default_chunk(n: int, T: int, m: int, device: torch.device | str) -> int:
    """Samples per chunk of :func:`fused_loss_and_gradient`: cache-sized on CPU, all on GPU."""
    budget = CPU_CHUNK_ENTRIES if torch.device(device).type == "cpu" else DEVICE_CHUNK_ENTRIES
    return max(1, min(int(n), budget // max(1, T * m)))


#: Implementations of the fused pass (:func:`fused_loss_and_gradient`'s ``backend``).
BACKENDS = ("auto", "torch", "kernel")


def check_backend(backend: str) -> None:
    """Refuse a ``backend`` that is not one of :data:`BACKENDS` (ValueError naming `backend`),
    so every trainer that takes one rejects a typo the same way.

    >>> check_backend("torch")
    >>> check_backend("cuda")
    Traceback (most recent call last):
    ...
    ValueError: `backend` must be one of ('auto', 'torch', 'kernel'), got 'cuda'
    """
    if backend not in BACKENDS:
        raise ValueError(f"`backend` must be one of {BACKENDS}, got {backend!r}")


def kernel_for(act: Activation, dtype: torch.dtype, device: torch.device, d: int):
    """The compiled kernel of the fused step where it applies (CPU, tanh, float32/64, d ≤ 32),
    else None; built on first use and cached (why it is absent is kept for the run's
    environment, a failed build noted once on stderr), so a caller that wants the backend
    recorded before a run starts calls it first.

    >>> kernel_for(get_activation("erf"), torch.float64, torch.device("cpu"), 4) is None
    True
    """
    if device.type != "cpu" or act.name != "tanh":
        return None
    return cpu_kernel.load_kernel(d, dtype)


def as_activation(act: Activation | str) -> Activation:
    """``act`` itself, or the :class:`~boundcalc.validators.model.Activation` it names, so the
    trainers take either.

    >>> as_activation("tanh").name
    'tanh'
    """
    return get_activation(act) if isinstance(act, str) else act


_POOLS: dict[int, ThreadPoolExecutor] = {}


def _cpu_pool(workers: int) -> ThreadPoolExecutor:
    """A process-wide pool of ``workers`` threads for :func:`fused_loss_and_gradient`."""
    if workers not in _POOLS:
        _POOLS[workers] = ThreadPoolExecutor(max_workers=workers,
                                             thread_name_prefix="boundcalc-step")
    return _POOLS[workers]


def _readout_residuals(students: StudentSplit, h: Tensor, f: Tensor, y: Tensor,
                       grad_c: Tensor | None) -> Tensor | None:
    """Write f_js = Σ_{i∈s} c_i/√m_s h_ji into ``f`` (b, S); with ``grad_c`` (m,), add
    Σ_j r_{j,s(i)} h_ji to it and return the residual of each head's student, r_{j,s(i)}
    ((b, 1) for one student, else (b, m)); None without."""
    single = students.count == 1
    if single:
        torch.mv(h, students.cs, out=f[:, 0])
    else:
        torch.mm(h, students.readout, out=f)
    if grad_c is None:
        return None
    if single:
        r = f[:, 0] - y
        grad_c.addmv_(h.t(), r)
        return r.unsqueeze(1)
    r_head = (f - y.unsqueeze(1))[:, students.head_student]
    grad_c.add_((h * r_head).sum(0))
    return r_head


def _fused_range(students: StudentSplit, Wq_map: Tensor, Ut: Tensor, inputs: FusedInputs,
                 y: Tensor, act: Activation, preds: Tensor, lo: int, hi: int, b: int,
                 need_grad: bool) -> tuple[Tensor, Tensor | None, Tensor | None, Tensor | None]:
    """Samples lo..hi−1 of :func:`fused_loss_and_gradient`, in chunks of b.

    ``Wq_map`` (d, d·m) maps q_j to log₂e · [W_i q_j]_(a, i); Ut = Uᵀ (d, m), m heads of S
    students. With r_js = f_js − y_j and κ̃_ji = r_js σ'(pre_ji) for head i of student s (κ
    without the per-head factor 2c_i/(n√m_s), applied by the caller), returns (Σ_j r_js² (S,),
    Σ_j r_js σ(pre_ji) (m,), Σ_j κ̃_j ∘ a_j as (d, m), Σ_j q_j (κ̃_j ∘ G_jU) as (d, d·m));
    writes f_js into ``preds[lo:hi]`` (n, S).
    """
    m, d = Ut.shape[1], Ut.shape[0]
    T = inputs.X.shape[1]
    dt, dev = Ut.dtype, Ut.device
    single = students.count == 1
    b = max(1, min(b, hi - lo))
    Wq = torch.empty(b, d, m, dtype=dt, device=dev)
    zp = torch.empty(2, b, T, m, dtype=dt, device=dev)
    R = torch.empty(2, b, d + 1, m, dtype=dt, device=dev)
    G = torch.empty(b, d, m, dtype=dt, device=dev)
    grad_c = acc_a = acc_W = None
    if need_grad:
        grad_c = torch.zeros(m, dtype=dt, device=dev)
        acc_a = torch.zeros(b, d, m, dtype=dt, device=dev)      # per chunk slot: Σ κ̃ ∘ a
        acc_W = torch.zeros(d, d * m, dtype=dt, device=dev)    # [e, (a, i)]
    one = torch.ones((), dtype=dt, device=dev)
    is_tanh = act.name == "tanh"
    views = None
    # On the CPU the logits are shifted by the last token's, z_t − z_T = (x_t − x_T)ᵀ W_i q, read
    # off one product with the precomputed X − x_T: e_T = 1, so S ≥ 1, and no max pass is needed
    # unless some e_t is large (S > 2⁶⁴, then the chunk is redone with the max). Elsewhere the
    # max is always subtracted (no per-chunk synchronisation).
    by_last = dev.type == "cpu"
    chunks = zip(*(t[lo:hi].split(b) for t in (*inputs[:4], y, preds)), strict=True)
    for Xc, XT1c, qc, Xsc, yc, f in chunks:
        bb = Xc.shape[0]
        if views is None or bb < b:     # fixed views of the reused buffers
            Wq, z, P, R0, R1, G = Wq[:bb], zp[0, :bb], zp[1, :bb], R[0, :bb], R[1, :bb], G[:bb]
            views = (Wq.view(bb, d * m), P.view(bb * T, m), R0[:, d], R1[:, d], R0[:, :d],
                     R1[:, :d], G.view(bb, d * m))
            if need_grad:
                acc_a_c = acc_a[:bb]
        Wq2, P2, S, eP, ea, eB, G2 = views
        torch.mm(qc, Wq_map, out=Wq2)                      # log₂e · W_i q
        torch.mm(Xc.view(bb * T, d), Ut, out=P2)           # P = X Uᵀ
        if by_last:
            torch.bmm(Xsc, Wq, out=z)                      # log₂e · (z − z_T)
            torch.bmm(XT1c, z.exp2_(), out=R0)             # e = exp(z − z_T); [Xᵀe ; S]
        if not by_last or not float(S.amax()) <= 2.0**64:   # (NaN too: redo with the max)
            torch.bmm(Xc, Wq, out=z)                       # log₂e · z
            z.sub_(z.amax(dim=1, keepdim=True)).exp2_()    # e = exp(z − max_t z) = S·s
            torch.bmm(XT1c, z, out=R0)                     # [Xᵀe ; S]
        P.mul_(z)                                          # e_t x_tᵀU_i
        torch.bmm(XT1c, P, out=R1)                         # [Xᵀ(e∘P) ; Σ_t e_t P_t]
        pre = eP / S                                       # (bb, m)
        h = act.fn(pre)
        r_head = _readout_residuals(students, h, f, yc, grad_c)
        if not need_grad:
            continue
        kap = torch.addcmul(one, h, h, value=-1) if is_tanh else act.d1(pre)
        kap.div_(S).mul_(r_head)                           # κ̃ / S
        torch.addcmul(eB, pre.unsqueeze(1), ea, value=-1, out=G)   # S·G_iU_i = S·(Xᵀ(s∘P) − pre a)
        kap = kap.unsqueeze(1)
        G.mul_(kap)
        acc_W.addmm_(qc.t(), G2)
        acc_a_c.addcmul_(ea, kap)
    r = preds[lo:hi] - y[lo:hi].unsqueeze(1)
    loss = (r[:, 0] @ r[:, 0]).unsqueeze(0) if single else (r * r).sum(0)
    return loss, grad_c, None if acc_a is None else acc_a.sum(dim=0), acc_W


def _fused_range_moments(students: StudentSplit, Wq_map: Tensor, U: Tensor,
                         inputs: FusedInputs, y: Tensor, act: Activation, preds: Tensor,
                         lo: int, hi: int, b: int, need_grad: bool, triton: bool = False
                         ) -> tuple[Tensor, Tensor | None, Tensor | None, Tensor | None]:
    """:func:`_fused_range` organised for accelerators: three passes over (b, m, T) per chunk.

    Same sums, returned in the same layout, from the normalised softmax s = softmax_t(z) (so
    S = 1) and the token moments (:func:`token_moments`): with Wq (b, m, d) = W_i q_j (natural
    units here: ``Wq_map`` without log₂e),

        z = Wq Xᵀ                        (b, m, T), one batched product
        s = softmax_t(z)                 one fused kernel (max, exp, sum, divide)
        [M | a] = s [x xᵀ | x]           (b, m, d² + d), one batched product:
                                         M_i = Σ_t s_t x_t x_tᵀ, a_i = Σ_t s_t x_t
        pre_i = U_iᵀa_i,  Xᵀ(s∘P)_i = M_i U_i,  G_iU_i = M_i U_i − pre_i a_i  (Remark 3)

    since Σ_t s_t x_t (x_tᵀU_i) = M_i U_i. The chunked passes of :func:`_fused_range` read or
    write the (b, T, m) arrays twelve times (logits, max, shift, exp, two products, P, e∘P);
    here they are written twice and read three times, and the max shift needs no
    synchronisation with the host (CUDA graphs). ``U`` is (m, d).

    With ``triton``, a and M_iU_i come from the Triton kernel instead
    (:func:`boundcalc.validators.kernel.gpu_kernel.softmax_token_sums`: one pass over the
    tokens with the online softmax, no (b, m, T) array and no token moments).
    """
    m, d = U.shape
    dt, dev = U.dtype, U.device
    single = students.count == 1
    b = max(1, min(b, hi - lo))
    grad_c = acc_a = acc_W = None
    if need_grad:
        grad_c = torch.zeros(m, dtype=dt, device=dev)
        acc_a = torch.zeros(m, d, dtype=dt, device=dev)         # Σ κ̃ ∘ a, as (m, d)
        acc_W = torch.zeros(d, d * m, dtype=dt, device=dev)     # [e, (a, i)]
    is_tanh = act.name == "tanh"
    one = torch.ones((), dtype=dt, device=dev)
    XT = inputs.XT1[:, :d]                                      # Xᵀ (n, d, T), a view
    for start in range(lo, hi, b):
        stop = min(start + b, hi)
        bb = stop - start
        qc, yc, f = inputs.q[start:stop], y[start:stop], preds[start:stop]
        Wq = torch.mm(qc, Wq_map).view(bb, m, d)               # W_i q_j
        MU = None
        if triton:
            a, MU = gpu_kernel.softmax_token_sums(inputs.X[start:stop], Wq,
                                                  U if need_grad else None)
        else:
            s = torch.softmax(torch.bmm(Wq, XT[start:stop]), dim=-1)   # (bb, m, T)
            R = torch.bmm(s, inputs.moments[start:stop])       # [M | a]  (bb, m, d² + d)
            a = R[..., d * d:]
        pre = (a * U).sum(-1)                                  # (bb, m)
        h = act.fn(pre)
        r_head = _readout_residuals(students, h, f, yc, grad_c)
        if not need_grad:
            continue
        kap = torch.addcmul(one, h, h, value=-1) if is_tanh else act.d1(pre)
        kap = (kap * r_head).unsqueeze(-1)                     # κ̃ (bb, m, 1)
        if MU is None:
            MU = (R[..., :d * d].view(bb, m, d, d) * U.unsqueeze(1)).sum(-1)   # M_i U_i
        GU = torch.addcmul(MU, pre.unsqueeze(-1), a, value=-1)  # G_iU_i   (bb, m, d)
        acc_W.addmm_(qc.t(), (GU * kap).transpose(1, 2).reshape(bb, d * m))
        acc_a.add_((a * kap).sum(0))
    r = preds[lo:hi] - y[lo:hi].unsqueeze(1)
    loss = (r[:, 0] @ r[:, 0]).unsqueeze(0) if single else (r * r).sum(0)
    return loss, grad_c, None if acc_a is None else acc_a.t(), acc_W


class FusedInputs(NamedTuple):
    """The θ-independent inputs of :func:`fused_loss_and_gradient`, built once per data set.

    X (n, T, d) and q (n, d) contiguous; XT1 = [Xᵀ; 1ᵀ] (n, d+1, T): the all-ones row makes
    the second products also return Σ_t e_t and Σ_t e_t P_t (see the function); X_shift =
    X − x_T (n, T, d), every token minus the sample's last one, for the shifted logits;
    ``moments`` (n, T, d² + d) = [x_t x_tᵀ (flattened), x_t] per token, for the accelerators'
    organisation (:func:`uses_token_moments`; None where it is not used).
    """

    X: Tensor
    XT1: Tensor
    q: Tensor
    X_shift: Tensor
    moments: Tensor | None = None


def token_moments(X: Tensor) -> Tensor:
    """[x_t x_tᵀ, x_t] per token, (n, T, d² + d): M_i = Σ_t s_t x_t x_tᵀ and a_i = Σ_t s_t x_t
    of every head come out of one product of the softmax weights with it."""
    n, T, d = X.shape
    outer = (X.unsqueeze(-1) * X.unsqueeze(-2)).reshape(n, T, d * d)
    return torch.cat([outer, X], dim=-1).contiguous()


#: Largest token dimension d for the token-moments organisation: the moments hold d + 1 times
#: the inputs' floats, (n, T, d² + d).
TOKEN_MOMENTS_MAX_D = 12


def uses_token_moments(device: torch.device | str, d: int, T: int) -> bool:
    """Whether the torch path of :func:`fused_loss_and_gradient` runs the token-moments
    organisation (:func:`_fused_range_moments`) for T tokens of dimension d.

    On accelerators, for d ≤ :data:`TOKEN_MOMENTS_MAX_D` and T ≥ d² + d, unless the
    environment sets ``BOUNDCALC_TOKEN_MOMENTS=0``; on the CPU never (the compiled kernel, or the
    chunked passes that fit its caches). Why T ≥ d² + d: per (sample, head) the chunked passes
    move about 12·T floats, the moments organisation about 5·T + 4(d² + d) (logits, softmax,
    the product; then the d² + d moments written, read and contracted), so it pays from
    T ≈ 0.6(d² + d), and at T = d² + d it moves a quarter less. Measured on an H200 in float64
    at d = 8: T = 1024, 320 heads, 17.7 ms a step against 32.6 ms chunked; T = 16, 504 heads,
    3.33 ms against 1.88 ms.
    """
    if torch.device(device).type == "cpu" or int(d) > TOKEN_MOMENTS_MAX_D:
        return False
    if int(T) < int(d) * (int(d) + 1):
        return False
    return os.environ.get("BOUNDCALC_TOKEN_MOMENTS", "1") != "0"


def fused_inputs(X: Tensor, q: Tensor, moments: bool | None = None) -> FusedInputs:
    """:class:`FusedInputs` of (X, q) — pass it as ``inputs=`` to reuse it across steps.
    ``moments`` (None: :func:`uses_token_moments` of X's device) adds :func:`token_moments`."""
    n, T, _ = X.shape
    ones = torch.ones(n, 1, T, dtype=X.dtype, device=X.device)
    if moments is None:
        moments = (uses_token_moments(X.device, X.shape[-1], X.shape[1])
                   and not gpu_kernel.uses_triton_kernel(X.device, X.shape[-1], X.dtype))
    return FusedInputs(X.contiguous(), torch.cat([X.transpose(1, 2), ones], dim=1),
                       q.contiguous(), X - X[:, -1:, :],
                       token_moments(X) if moments else None)


def fused_loss_and_gradient(params: Params, X: Tensor, q: Tensor, y: Tensor,
                            act: Activation | str, *, chunk: int | None = None,
                            need_grad: bool = True, workers: int | None = None,
                            inputs: FusedInputs | None = None, backend: str = "auto",
                            widths: tuple[int, ...] | None = None
                            ) -> tuple[Tensor, Params | None, Tensor]:
    """R̂(θ) = (1/n) Σ_j (f_j − y_j)², its gradient (Lemma 1) and the predictions f (n,).

    ``widths`` = (m_1, …, m_S) reads the heads as S independent students side by side (Σ m_s
    heads, student s's output m_s^{-1/2} Σ_{i∈s} c_i σ(·)): the loss is then (S,), one per
    student, the predictions (n, S), and each head's gradient is that of its own student's
    loss. One pass over the samples serves all students; every student's numbers equal a pass
    over that student alone (bit for bit on the kernel; to rounding on the torch path).

    Same mathematics as ``model.loss_and_gradient``, organised for speed. Per chunk of b
    samples (X_b (b, T, d), q_b (b, d)), with P_{ti} = x_tᵀU_i:

        z' = X_b (log₂e · W q)              one batched product, (b, T, m); z' = z log₂e
        P = X_b Uᵀ                          one product, (b·T, d) × (d, m)
        e = 2^(z' − max_t z')               in place: e = S s with S = Σ_t e_t, s = softmax_t(z)
                                            (CPU: 2^(z' − z'_T) from X − x_T, see below)
        [S a ; S] = [X_bᵀ; 1ᵀ] e            batched products, (b, d+1, m), the ones row giving
        [Xᵀ(e∘P) ; S pre] = [X_bᵀ; 1ᵀ](e∘P)   S and S pre_i = S a_iᵀU_i
        S G_iU_i = Xᵀ(e∘P)_i − pre_i S a_i  (Facts 1–2, Remark 3)
        w_j = 2(f_j − y_j)/n,  κ_{ji} = w_j σ'(pre_ji) c_i/√m
        ∇_U += Σ_j κ_j ∘ a_j,   ∇_W += q_bᵀ (κ ∘ G U)   (one matrix product)

    and ∂R̂/∂c = (1/√m) Σ_j w_j σ(pre_j). The softmax normalisation 1/S and the per-head factor
    2c_i/(n√m) of κ are applied to small (b, m) / (d, m) tensors rather than to the (b, T, m)
    ones. Intermediates are preallocated per worker and reused across chunks; ``chunk`` defaults
    to :func:`default_chunk`. With ``need_grad=False`` only the loss and predictions are
    computed (gradient None). ``inputs`` (:func:`fused_inputs` of X, q; built here if None)
    holds the θ-independent layouts, so a training loop builds them once. On the CPU the
    softmax shift is the last token's logit instead of the max (the same softmax; e_T = 1 so
    S ≥ 1), which saves two passes over (b, T, m); a chunk in which some e_t > 2⁶⁴ (a logit
    more than 44 above the last token's) is redone with the max.

    ``backend``: ``"torch"`` runs the chunked torch operations above; ``"kernel"`` the compiled
    CPU kernel (:mod:`boundcalc.validators.kernel.cpu_kernel`: the same sums per sample and block of
    heads in registers, tanh only, float32/float64, ``chunk`` unused; the softmax shifted by
    the max); ``"auto"`` (default) the kernel wherever it applies and builds, else torch.

    On the CPU the samples are split into ``workers`` contiguous ranges (default: torch's
    intra-op thread count) processed by a thread pool with torch's intra-op threads set to 1
    for the duration of the call (restored afterwards): the many small per-chunk operations then
    never wait at OpenMP barriers, which matters on a small, shared machine. The partial sums
    are added in a fixed order, so results are deterministic. On accelerators one pass is used,
    and for long sequences (T ≥ d² + d, d ≤ :data:`TOKEN_MOMENTS_MAX_D`) it is organised around
    the token moments instead (:func:`uses_token_moments`: the normalised softmax and one
    product with [x xᵀ, x]; the same sums to rounding, less than half the traffic). With
    ``BOUNDCALC_TRITON=1``, where Triton runs (:func:`~boundcalc.validators.kernel.gpu_kernel.
    uses_triton_kernel`), the softmax-weighted sums come from one Triton kernel over the tokens
    instead, all samples in one launch unless ``chunk`` is given.

    Shapes: params c (m,), U (m, d), W (m, d, d); X (n, T, d); q (n, d); y (n,).
    """
    act = as_activation(act)
    c, U, W = params
    n, T, d = X.shape
    m = c.shape[0]
    dt, dev = W.dtype, W.device
    b = int(chunk) if chunk is not None else default_chunk(n, T, m, dev)
    if b < 1:
        raise ValueError(f"`chunk` must be >= 1, got {chunk}")
    if workers is None:
        workers = torch.get_num_threads() if dev.type == "cpu" else 1
    if int(workers) != workers or workers < 1:
        raise ValueError(f"`workers` must be a positive integer, got {workers}")
    check_backend(backend)
    if inputs is not None and (inputs.X.shape != (n, T, d) or inputs.XT1.shape != (n, d + 1, T)
                               or inputs.q.shape != (n, d) or inputs.X_shift.shape != (n, T, d)):
        raise ValueError("`inputs` do not match X, q (build them with fused_inputs(X, q))")
    kernel = None if backend == "torch" else kernel_for(act, dt, dev, d)
    if backend == "kernel" and kernel is None:
        raise ValueError("`backend` 'kernel' needs the CPU, the tanh activation, float32 or "
                         "float64 and a C compiler"
                         + (f" ({cpu_kernel.kernel_unavailable_reason(d, dt)})"
                            if cpu_kernel.kernel_unavailable_reason(d, dt) else ""))
    split = check_widths(widths, m)
    students = student_split(c, split, n)
    preds = torch.empty(n, len(split), dtype=dt, device=dev)
    if kernel is not None:
        b = max(1, -(-n // workers))                  # one contiguous range per worker
        chunks = -(-n // b)
        workers = chunks
        layout = cpu_kernel.kernel_layout(students.cs, U, W, kernel.lanes, split)
        Xk = (inputs.X if inputs is not None else X).to(dt).contiguous()
        qk = (inputs.q if inputs is not None else q).to(dt).contiguous()
        yk = y.to(dt).contiguous()

        def run(lo_hi):
            lo, hi = lo_hi
            return cpu_kernel.kernel_range(kernel, Xk[lo:hi], qk[lo:hi], yk[lo:hi], layout,
                                           preds[lo:hi], need_grad)
    else:
        triton = gpu_kernel.uses_triton_kernel(dev, d, dt)
        moments = not triton and uses_token_moments(dev, d, T)
        if triton and chunk is None:
            b = n                     # no (b, m, T) array: one launch for every sample
        chunks = -(-n // b)
        workers = int(min(workers, chunks)) if dev.type == "cpu" else 1
        if inputs is None or (moments and inputs.moments is None):
            inputs = fused_inputs(X, q, moments=moments)
        if triton or moments:
            Wq_map = W.permute(2, 0, 1).reshape(d, m * d)          # [e, (i, a)] = W[i, a, e]

            def run(lo_hi):
                return _fused_range_moments(students, Wq_map, U, inputs, y, act, preds,
                                            lo_hi[0], lo_hi[1], b, need_grad, triton)
        else:
            # [e, (a, i)] = log₂e W[i, a, e]
            Wq_map = (W.permute(2, 1, 0) * _LOG2E).reshape(d, d * m)
            Ut = U.t().contiguous()

            def run(lo_hi):
                return _fused_range(students, Wq_map, Ut, inputs, y, act, preds, lo_hi[0],
                                    lo_hi[1], b, need_grad)

    # contiguous ranges with whole chunks, as equal as possible
    cuts = [b * (chunks * k // workers) for k in range(workers)] + [n]
    ranges = list(zip(cuts[:-1], cuts[1:], strict=True))

    if workers == 1:
        parts = [run(ranges[0])]
    else:
        before = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            parts = list(_cpu_pool(workers).map(run, ranges))
        finally:
            torch.set_num_threads(before)

    def total(k: int) -> Tensor:   # fixed left-to-right order: deterministic
        out = parts[0][k]
        for part in parts[1:]:
            out = out + part[k]
        return out

    loss = total(0) / n
    if widths is None:
        loss, preds = loss[0], preds[:, 0]
    if not need_grad:
        return loss, None, preds
    scale = students.scale
    head = c * scale                                      # the per-head factor 2c_i/(n√m) of κ
    grad_c, acc_U, acc_W = total(1), total(2), total(3)
    if kernel is not None:
        grad_c, acc_U, acc_W = cpu_kernel.unpack_sums(grad_c, acc_U, acc_W, layout)
    grad_U = (acc_U * head).t().contiguous()
    grad_W = (acc_W.view(d, d, m) * head).permute(2, 1, 0).contiguous()   # [e, a, i] → [i, a, e]
    return loss, Params(grad_c * scale, grad_U, grad_W), preds


def full_loss(params: Params, X: Tensor, q: Tensor, y: Tensor, act: Activation | str,
              chunk: int | None = None, inputs: FusedInputs | None = None,
              backend: str = "auto", widths: tuple[int, ...] | None = None) -> Tensor:
    """R̂(θ) on (X, y) (scalar tensor; (S,) for S students of ``widths``), by the chunked
    forward pass."""
    return fused_loss_and_gradient(params, X, q, y, act, chunk=chunk, need_grad=False,
                                   inputs=inputs, backend=backend, widths=widths)[0]


def minibatch_indices(n: int, b: int, generator: torch.Generator) -> Tensor:
    """B_k: b distinct indices, uniform over the b-subsets of {0, …, n−1} (CPU int64, (b,))."""
    return torch.randperm(n, generator=generator)[:b]


def check_steps_and_eta(steps, eta) -> None:
    """K ≥ 1 an integer and η > 0 finite, or ValueError naming the argument (every trainer's
    check of its step count and step size).

    >>> check_steps_and_eta(10, 0.1)
    >>> check_steps_and_eta(0, 0.1)
    Traceback (most recent call last):
    ...
    ValueError: `steps` must be a positive integer, got 0
    """
    if int(steps) != steps or steps < 1:
        raise ValueError(f"`steps` must be a positive integer, got {steps}")
    if not (isinstance(eta, (int, float)) and math.isfinite(eta) and eta > 0):
        raise ValueError(f"`eta` must be a positive finite number, got {eta!r}")


def check_rho(rho) -> tuple[float, float, float]:
    """The projection radii (ρ_c, ρ_u, ρ_w) of Ω_ρ from one number or three, each finite and
    non-negative, or ValueError naming `rho`.

    >>> check_rho(2)
    (2.0, 2.0, 2.0)
    >>> check_rho((1, 2, 3))
    (1.0, 2.0, 3.0)
    """
    values = rho if isinstance(rho, (tuple, list)) else (rho,) * 3
    try:
        out = tuple(float(v) for v in values)
    except (TypeError, ValueError):
        raise ValueError(f"`rho` must be one or three non-negative numbers, got {rho!r}") from None
    if len(out) != 3 or any(not math.isfinite(v) or v < 0 for v in out):
        raise ValueError(f"`rho` must be one or three non-negative numbers, got {rho!r}")
    return out  # type: ignore[return-value]


@dataclass
class TrainResult:
    """Outcome of :func:`train`; history tensors are on the CPU, length K = ``steps``.

    loss (K,) R̂(θ_k) [NaN if not recorded]; batch_loss (K,); grad_norm, radius, distance (K, 3)
    per block (c, U, W); params θ_K; average θ̂_K = (1/K)Σ_{k<K} θ_k; min_loss = min_k loss[k];
    average_loss = R̂(θ̂_K); final_loss = R̂(θ_K); initial_loss = R̂(θ_0).
    """

    params: Params
    average: Params
    loss: Tensor
    batch_loss: Tensor
    grad_norm: Tensor
    radius: Tensor
    distance: Tensor
    min_loss: float
    average_loss: float
    final_loss: float
    initial_loss: float
    steps: int
    eta: float
    rho: tuple[float, float, float] | None
    batch_size: int
    seconds: float
    config: dict = field(default_factory=dict)

    def summary(self) -> dict:
        """JSON-ready scalars: losses, maximal radii and gradient norms, timing."""
        return {
            "steps": self.steps, "eta": self.eta,
            "rho": None if self.rho is None else list(self.rho),
            "batch_size": self.batch_size, "initial_loss": self.initial_loss,
            "min_loss": self.min_loss, "average_loss": self.average_loss,
            "final_loss": self.final_loss,
            "argmin_step": int(torch.nan_to_num(self.loss, nan=math.inf).argmin()),
            "max_radius": [float(v) for v in self.radius.max(0).values],
            "max_grad_norm": [float(v) for v in self.grad_norm.max(0).values],
            "seconds": self.seconds, "seconds_per_step": self.seconds / self.steps,
            **self.config,
        }


def train(params0: Params, X: Tensor, q: Tensor, y: Tensor, act: Activation | str, *,
          steps: int, eta: float, rho=None, batch_size: int | None = None, seed: int = 0,
          project_iterates: bool = True, record_full_loss: bool = True,
          chunk: int | None = None, gradient: str = "fused",
          backend: str = "auto") -> TrainResult:
    """Run K = ``steps`` steps of ProjGD (``batch_size`` None or n) or ProjSGD (module docstring).

    Args:
        params0: θ(0) (also the centre of Ω_ρ); X (n, T, d), q (n, d), y (n,) on its device.
        act: activation (name or :class:`Activation`).
        steps: K ≥ 1; eta: step size η > 0.
        rho: (ρ_c, ρ_u, ρ_w) or one number; required unless ``project_iterates=False``.
        batch_size: b (1 ≤ b ≤ n) for ProjSGD; None = full batch (ProjGD).
        seed: seed of the minibatch generator (ProjSGD only).
        project_iterates: False = plain (S)GD, no projection (rho ignored).
        record_full_loss: ProjSGD only — also evaluate R̂(θ_k) on all n samples every step.
        chunk: samples per chunk of the fused pass (default :func:`default_chunk`).
        gradient: ``fused`` (default) or ``closed`` (``model.loss_and_gradient``).
        backend: of the fused pass — ``auto`` (the compiled CPU kernel where it applies),
            ``torch`` or ``kernel`` (:func:`fused_loss_and_gradient`).

    Returns:
        :class:`TrainResult`.
    """
    act = as_activation(act)
    check_steps_and_eta(steps, eta)
    rho_t = check_rho(rho) if project_iterates else None
    n = X.shape[0]
    if X.dim() != 3 or q.shape != (n, X.shape[2]) or y.shape != (n,):
        raise ValueError(f"expected X (n, T, d), q (n, d), y (n,); got {tuple(X.shape)}, "
                         f"{tuple(q.shape)}, {tuple(y.shape)}")
    sgd = batch_size is not None and batch_size != n
    if batch_size is not None and (int(batch_size) != batch_size or not 1 <= batch_size <= n):
        raise ValueError(f"`batch_size` must be an integer in [1, n={n}], got {batch_size}")
    if gradient not in ("fused", "closed"):
        raise ValueError(f"`gradient` must be 'fused' or 'closed', got {gradient!r}")
    b = int(batch_size) if sgd else n
    K = int(steps)
    dt, dev = params0.W.dtype, params0.W.device
    X, q, y = (t.to(device=dev, dtype=dt).contiguous() for t in (X, q, y))
    params0 = params0.detach()
    root_m = math.sqrt(params0.width)

    check_backend(backend)
    used_backend = ("closed" if gradient == "closed" else "torch" if backend == "torch"
                    else "kernel" if kernel_for(act, dt, dev, X.shape[2]) is not None
                    else "torch")
    # θ-independent layouts of the torch path, built once per run (the kernel reads X, q as
    # they are, the closed form needs none)
    inputs = fused_inputs(X, q) if used_backend == "torch" else None

    def step_grad(p: Params, Xb: Tensor, qb: Tensor, yb: Tensor,
                  inputs_b: FusedInputs | None):
        if gradient == "closed":
            return loss_and_gradient(p, Xb, qb, yb, act)
        return fused_loss_and_gradient(p, Xb, qb, yb, act, chunk=chunk, inputs=inputs_b,
                                       backend=backend)

    loss_hist = torch.full((K,), math.nan, dtype=dt, device=dev)
    batch_hist = torch.empty(K, dtype=dt, device=dev)
    grad_hist = torch.empty(K, 3, dtype=dt, device=dev)
    radius_hist = torch.empty(K, 3, dtype=dt, device=dev)
    dist_hist = torch.empty(K, 3, dtype=dt, device=dev)
    total = Params(*(torch.zeros_like(t) for t in params0))
    gen = torch.Generator().manual_seed(int(seed)) if sgd else None
    theta = params0.clone()          # θ_k, updated in place (see step_graphs)
    k_dev = torch.zeros(1, dtype=torch.int64, device=dev)

    def record_and_update(loss_b: Tensor, g: Params) -> None:
        """The records of step k and θ_{k+1} = Π(θ_k − η g), in place."""
        batch_hist.index_copy_(0, k_dev, loss_b.reshape(1))
        grad_hist.index_copy_(0, k_dev, torch.stack([g.c.norm(), g.U.norm(), g.W.norm()])
                              .unsqueeze(0))
        dc, dU, dW = theta - params0
        dU_norm, dW_norm = dU.norm(dim=-1), dW.flatten(1).norm(dim=-1)
        radius_hist.index_copy_(0, k_dev, (torch.stack([dc.abs().max(), dU_norm.max(),
                                                         dW_norm.max()]) * root_m).unsqueeze(0))
        dist_hist.index_copy_(0, k_dev, torch.stack([dc.norm(), dU_norm.norm(), dW_norm.norm()])
                              .unsqueeze(0))
        descend_in_place(theta, total, g, eta, None if rho_t is None
                         else lambda p: project(p, params0, rho_t))
        k_dev.add_(1)

    def gd_step() -> None:           # full batch: the same data every step (graph-capturable)
        loss_b, g, _ = step_grad(theta, X, q, y, inputs)
        loss_hist.index_copy_(0, k_dev, loss_b.reshape(1))
        record_and_update(loss_b, g)

    def sgd_step(k: int) -> None:    # the minibatch is drawn on the host: an eager step
        idx = minibatch_indices(n, b, gen).to(dev)
        if inputs is None:
            Xb, qb, inputs_b = X[idx], q[idx], None
        else:
            inputs_b = FusedInputs(*(None if t is None else t[idx] for t in inputs))
            Xb, qb = inputs_b.X, inputs_b.q
        loss_b, g, _ = step_grad(theta, Xb, qb, y[idx], inputs_b)
        if record_full_loss:
            loss_hist[k] = full_loss(theta, X, q, y, act, chunk, inputs, backend)
        record_and_update(loss_b, g)

    threads = small_work_threads(n * X.shape[1] * params0.width, dev)
    loop = "eager"
    with intra_op_threads(threads):
        start = time.perf_counter()
        if sgd:
            for k in range(K):
                sgd_step(k)
        else:
            loop = run_steps(gd_step, K, dev)
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
    seconds = time.perf_counter() - start
    average = total.scale(1.0 / K)
    with intra_op_threads(threads):
        average_loss = float(full_loss(average, X, q, y, act, chunk, inputs, backend))
        final = float(full_loss(theta, X, q, y, act, chunk, inputs, backend))
        initial = float(full_loss(params0, X, q, y, act, chunk, inputs, backend))
    loss_cpu = loss_hist.cpu()
    recorded = ~torch.isnan(loss_cpu)
    return TrainResult(
        params=theta, average=average, loss=loss_cpu, batch_loss=batch_hist.cpu(),
        grad_norm=grad_hist.cpu(), radius=radius_hist.cpu(), distance=dist_hist.cpu(),
        min_loss=float(loss_cpu[recorded].min()) if bool(recorded.any()) else math.nan,
        average_loss=average_loss, final_loss=final,
        initial_loss=initial,
        steps=K, eta=float(eta), rho=rho_t, batch_size=b, seconds=seconds,
        config={"algorithm": "ProjSGD" if sgd else "ProjGD",
                "projected": rho_t is not None, "gradient": gradient,
                "backend": used_backend, "loop": loop,
                "device": str(dev), "dtype": str(dt).replace("torch.", "")},
    )


def descend_in_place(theta: Params, total: Params, g: Params, eta: float,
                     projection: Callable[[Params], Params] | None) -> None:
    """One step of (projected) gradient descent written into θ's own tensors: total += θ_k, then
    θ_{k+1} = projection(θ_k − η g) (no projection for None). In place, so that a CUDA graph of
    the step replays it (:mod:`boundcalc.validators.step_graphs`)."""
    for acc_t, t in zip(total, theta, strict=True):
        acc_t.add_(t)
    new = Params(*(t - eta * gt for t, gt in zip(theta, g, strict=True)))
    if projection is not None:
        new = projection(new)
    for t, t_new in zip(theta, new, strict=True):
        t.copy_(t_new)


def proj_gd(params0: Params, X: Tensor, q: Tensor, y: Tensor, act: Activation | str, *,
            steps: int, eta: float, rho=None, project: bool = True, **kwargs) -> TrainResult:
    """ProjGD (full batch): θ_{k+1} = Π_{Ω_ρ}(θ_k − η∇R̂(θ_k)) (Theorem 1). See :func:`train`."""
    return train(params0, X, q, y, act, steps=steps, eta=eta, rho=rho, batch_size=None,
                 project_iterates=project, **kwargs)


def proj_sgd(params0: Params, X: Tensor, q: Tensor, y: Tensor, act: Activation | str, *,
             steps: int, eta: float, batch_size: int, rho=None, seed: int = 0,
             project: bool = True, **kwargs) -> TrainResult:
    """ProjSGD with minibatch b (Proposition 1). See :func:`train`."""
    return train(params0, X, q, y, act, steps=steps, eta=eta, rho=rho, batch_size=batch_size,
                 seed=seed, project_iterates=project, **kwargs)


__all__ = [
    "BACKENDS", "SMALL_STEP_ENTRIES", "TOKEN_MOMENTS_MAX_D", "FusedInputs", "TrainResult",
    "default_chunk", "descend_in_place", "full_loss", "fused_inputs", "fused_loss_and_gradient",
    "intra_op_threads", "minibatch_indices", "proj_gd", "proj_sgd", "small_work_threads",
    "token_moments", "train", "uses_token_moments",
]
