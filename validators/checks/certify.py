"""The run-measured decomposition of the proof's slack of Theorem 1 / Proposition 1
(``validate theorem1 --decompose``; ``--certify`` is its old name, kept one release).

It bounds nothing beyond the run it is computed from: below the a-priori and a-posteriori bounds
every level uses this run's own residuals and iterates (:mod:`.certify_chain`), so it says which
inequality of the proof loses how much on this run, not what loss another run reaches. The
summary puts the free yardstick min(B², Y², R̂(θ_0)) beside the bounds, with their verdicts.

Along one actual ProjGD (ProjSGD) run on the validators' teacher–student problem (the setup of
:mod:`boundcalc.validators.checks.training`: teacher, data, init and θ̄ of eq. 11) every quantity
of the proof is measured at every step k, and the bound is rebuilt from the a-priori constants
down to the measured loss, one proof inequality at a time. Each level is an upper bound on the
next, so the ratio of consecutive levels is the slack of exactly one inequality.

**Per step** (θ_k ∈ Ω_ρ, r_j = f_j(θ_k) − y_j, d_j = ⟨∇f_j(θ_k), θ_k − θ̄⟩, f(θ(0)) = f0):

    d_j = r_j + e_j,   e_j = T_j − A_j + M_j − C_j                          (identity (b))
    T_j = [f_lin,j(θ_k) − f_j(θ_k)] + ⟨∇f_j(θ_k) − ∇f_j(θ(0)), θ_k − θ(0)⟩
        = ⟨∇f_j(θ_k), θ_k − θ(0)⟩ − f_j(θ_k) + f0_j                       (|T_j| ≤ ε_tay)
    C_j = ⟨∇f_j(θ_k) − ∇f_j(θ(0)), θ̄ − θ(0)⟩                               (|C_j| ≤ ε_cf)
    A_j − M_j = f_lin,j(θ̄) − y_j   (A_j = f_lin,j(θ̄) − f*(X_j), M_j = y_j − f*(X_j))

The split of A_j − M_j into A_j and M_j needs the exact f*, an expectation that is never
computed: the labels are the Monte Carlo teacher y = f*_M, so against f*_M the measured A_j is
f_lin,j(θ̄) − y_j and M_j = 0, while against f* |M_j| ≤ ε_mis = ε_T (the teacher's Monte Carlo
bound, w.p. ≥ 1 − δ_T; the module docstring of checks.training). The difference A_j − M_j is exact.
The paper route splits the same e_j as [f_lin,j − f_j] + C^full_j − (A_j − M_j) with
C^full_j = ⟨∇f_j(θ_k) − ∇f_j(θ(0)), θ_k − θ̄⟩ (|·| ≤ ε_lin and the paper's ε_cf).

All per-sample quantities come from Lemma 1's closed forms (directional derivatives of f along
θ_k − θ(0), θ̄ − θ(0) and, for the identity check, θ_k − θ̄ itself, from one batched pass over
the samples per step; ⟨∇f(θ(0)), ·⟩ from the initial features, computed once). The same pass
gives ∇R̂(θ_k) (and the minibatch gradient g_k of ProjSGD), so the run *is* ProjGD / ProjSGD:
θ_{k+1} = Π_{Ω_ρ}(θ_k − η g_k) with :func:`boundcalc.validators.model.project`, minibatches from
:func:`boundcalc.validators.train.minibatch_indices` with the seed of checks.training's first
ProjSGD run. Every per-step scalar is kept for every k (so the chain's sums are exact); the
per-sample vectors r, T, C, f_lin − f, C^full and d are kept every ``record_every``-th step and
at the last step.

The chain built from these measurements, the parts table, the files and the figure are
computed by :mod:`boundcalc.validators.certify_chain` (its module docstring describes the chain).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from boundcalc.theory.catalog import MEASURED_ROUTES, route_key
from torch import Tensor

from boundcalc.calc.api import evaluate
from boundcalc.runs.validation_summary import yardstick_fields

from ..data.inputs import derived_seed
from ..device import resolve_device, resolve_dtype
from ..model import Activation, Params, init_params, project
from ..teacher import build_teacher, eps_teacher, transported_params
from ..train import intra_op_threads, minibatch_indices, small_work_threads
from .certify_chain import (
    CHAIN_ROUTES,
    FILE_STEM,
    SAMPLE_ARRAYS,
    STAGES,
    STEP_COLUMNS,
    CertifyRun,
    a_posteriori_values,
    chains,
    float_values,
    is_violation,
    json_ready,
    parts,
    plot_chains,
    save_npz,
    write_files,
)
from .training import DEFAULT_TEACHER_DELTA, calculator_inputs, check_triple, teacher_data

#: (sample, token, head) entries per chunk of the per-step pass: CPU (cache-sized, but at least
#: CPU_MIN_CHUNK samples), accelerators.
CPU_CHUNK_ENTRIES = 1 << 18
CPU_MIN_CHUNK = 16
DEVICE_CHUNK_ENTRIES = 1 << 26
#: Largest number of elements kept for the θ-independent caches (features at θ(0), (θ̄ − θ(0))q).
CACHE_ELEMENTS = 1 << 27

#: The statements ``--decompose`` accepts.
CERTIFIABLE = ("theorem1", "prop1")



# ---------------------------------------------------------------------------- the per-step pass

def _wmap(W: Tensor, scale: float = 1.0) -> Tensor:
    """(d, d·m) map with [e, (a, i)] = scale·W[i, a, e]: q_j @ map = scale·(W_i q_j)_(a, i)."""
    m, d, _ = W.shape
    return (W.permute(2, 1, 0) * scale).reshape(d, d * m)


_LOG2E = 1.0 / math.log(2.0)


@dataclass
class _Chunk:
    """θ-independent pieces of one chunk of samples lo..hi−1 (and the θ(0) cache)."""

    lo: int
    hi: int
    X: Tensor      # (b, T, d)
    XT1: Tensor    # [Xᵀ; 1ᵀ] (b, d+1, T): the ones row makes the products also return Σ_t
    q: Tensor      # (b, d)
    y: Tensor      # (b,)
    feats0: tuple[Tensor, Tensor, Tensor] | None = None   # _features at θ(0)


def _features(Wq_map: Tensor, Ut: Tensor, ch: _Chunk, act: Activation
              ) -> tuple[Tensor, Tensor, Tensor]:
    """(Ã = σ'·a (b, d, m), G̃ = σ'·G U (b, d, m), σ(pre) (b, m)) of eqs. (2)–(3), heads last,
    σ' = σ'(pre) per sample and head.

    As the trainer's fused pass (train.py): z = X (log₂e · W q) by one batched product,
    e = 2^(z − max_t z) = S·s, [S a; S] = [Xᵀ; 1ᵀ] e, [Xᵀ(e ∘ P); S pre] = [Xᵀ; 1ᵀ](e ∘ P) with
    P = X Uᵀ, and S·G_iU_i = Xᵀ(e ∘ P)_i − pre_i·S a_i (Facts 1–2); 1/S is folded into σ'.
    ``Wq_map`` = _wmap(W, log₂e), ``Ut`` = Uᵀ (d, m).
    """
    d, m = Ut.shape
    b, T, _ = ch.X.shape
    Wq = (ch.q @ Wq_map).view(b, d, m)
    z = torch.bmm(ch.X, Wq)                                   # log₂e · z   (b, T, m)
    z.sub_(z.amax(dim=1, keepdim=True)).exp2_()               # e = S·s
    R0 = torch.bmm(ch.XT1, z)                                 # [S a ; S]
    P = (ch.X.reshape(b * T, d) @ Ut).view(b, T, m).mul_(z)   # e_t x_tᵀU_i
    R1 = torch.bmm(ch.XT1, P)                                 # [Xᵀ(e∘P) ; S pre]
    S = R0[:, d]
    pre = R1[:, d] / S
    dhS = act.d1(pre).div_(S).unsqueeze(1)                    # σ'/S  (b, 1, m)
    Ta = R0[:, :d] * dhS                                      # σ' a
    TG = torch.addcmul(R1[:, :d] * dhS, pre.unsqueeze(1), Ta, value=-1.0)   # σ' G U
    return Ta, TG, act.fn(pre)


def _direction_matrices(c: Tensor, dirs: Sequence[Params]) -> tuple[Tensor, Tensor, Tensor]:
    """The directions v^(k) as matrices for :func:`_directional`: (v_c (m, K),
    c ∘ v_U as (d·m, K), c ∘ v_W as (d·m, K·d)), c the readout of the point."""
    m, d = dirs[0].U.shape
    VC = torch.stack([v.c for v in dirs], dim=1)
    VU = torch.stack([(v.U * c.unsqueeze(1)).t().reshape(d * m) for v in dirs], dim=1)
    VW = torch.cat([(v.W * c.view(-1, 1, 1)).permute(1, 0, 2).reshape(d * m, d)
                    for v in dirs], dim=1)
    return VC, VU, VW


def _directional(feats: tuple[Tensor, Tensor, Tensor], q: Tensor,
                 mats: tuple[Tensor, Tensor, Tensor]) -> Tensor:
    """⟨∇_θ f(X_j; θ), v^(k)⟩ for the chunk's samples and every direction k (Lemma 1): (b, K).

    m^{-1/2} Σ_i [v_c,i σ_ji + c_i σ'_ji (a_jiᵀ v_U,i + (G_ji U_i)ᵀ v_W,i q_j)]: three matrix
    products over the (d, m) index, with the features of :func:`_features` at θ and ``mats`` =
    :func:`_direction_matrices` (c, directions).
    """
    Ta, TG, h = feats
    b, d, m = Ta.shape
    VC, VU, VW = mats
    K = VC.shape[1]
    w_part = ((TG.reshape(b, d * m) @ VW).view(b, K, d) * q.unsqueeze(1)).sum(-1)
    return (h @ VC + Ta.reshape(b, d * m) @ VU + w_part) / math.sqrt(m)


_POOLS: dict[int, ThreadPoolExecutor] = {}


def _pool(workers: int) -> ThreadPoolExecutor:
    if workers not in _POOLS:
        _POOLS[workers] = ThreadPoolExecutor(max_workers=workers,
                                             thread_name_prefix="boundcalc-certify")
    return _POOLS[workers]


class _Pass:
    """The per-step measurement pass: predictions, directional derivatives and gradients.

    The samples are processed in chunks (no loop over samples or heads); on the CPU the chunks
    are split into ``workers`` contiguous groups run by a thread pool with torch's intra-op
    threads at 1 (as the trainer's fused pass), partial gradient sums added in a fixed order.
    """

    def __init__(self, params0: Params, theta_bar: Params, X: Tensor, q: Tensor, y: Tensor,
                 act: Activation, chunk: int | None = None, workers: int | None = None):
        self.params0, self.theta_bar, self.act = params0, theta_bar, act
        self.bar_dir = theta_bar - params0
        n, T, d = X.shape
        m = params0.width
        dev = X.device
        if chunk is not None:
            b = int(chunk)
        elif dev.type == "cpu":
            b = max(CPU_MIN_CHUNK, CPU_CHUNK_ENTRIES // max(1, T * m))
        else:
            b = max(1, DEVICE_CHUNK_ENTRIES // max(1, T * m))
        b = max(1, min(n, b))
        XT1 = torch.cat([X.transpose(1, 2), torch.ones(n, 1, T, dtype=X.dtype, device=dev)],
                        dim=1)
        self.chunks = [_Chunk(lo, min(n, lo + b), X[lo:lo + b].contiguous(),
                              XT1[lo:lo + b].contiguous(), q[lo:lo + b].contiguous(),
                              y[lo:lo + b]) for lo in range(0, n, b)]
        self.n, self.m, self.d = n, m, d
        if workers is None:
            workers = torch.get_num_threads() if dev.type == "cpu" else 1
        self.workers = max(1, min(int(workers), len(self.chunks)))
        cuts = [len(self.chunks) * k // self.workers for k in range(self.workers + 1)]
        self.groups = [self.chunks[lo:hi] for lo, hi in zip(cuts[:-1], cuts[1:], strict=True)]
        self.cached = n * m * (2 * d + 1) <= CACHE_ELEMENTS
        self.map0, self.Ut0 = _wmap(params0.W, _LOG2E), params0.U.t().contiguous()
        bar_mats = _direction_matrices(params0.c, [self.bar_dir])
        f0, lin_bar = [], []
        for ch in self.chunks:
            feats0 = _features(self.map0, self.Ut0, ch, act)
            if self.cached:
                ch.feats0 = feats0
            f0.append(feats0[2] @ params0.c / math.sqrt(m))
            lin_bar.append(_directional(feats0, ch.q, bar_mats)[:, 0])
        self.f0 = torch.cat(f0)                          # f(X_j; θ(0)) (≈ 0, symmetric init)
        self.lin_bar = torch.cat(lin_bar)                # ⟨∇f_j(θ(0)), θ̄ − θ(0)⟩
        self.A_minus_M = self.f0 + self.lin_bar - y      # f_lin,j(θ̄) − y_j

    def __call__(self, theta: Params, weights: Callable[[Tensor, _Chunk], Tensor],
                 drift: bool = False) -> tuple[dict[str, Tensor], list[Params]]:
        """Per-sample vectors (each (n,)) f, D1 = ⟨∇f(θ), θ − θ(0)⟩, D2 = ⟨∇f(θ), θ̄ − θ(0)⟩,
        L1 = ⟨∇f(θ(0)), θ − θ(0)⟩ and, with ``drift``, D3 = ⟨∇f(θ), θ − θ̄⟩ computed along that
        direction itself; and the gradients Σ_j w_jk ∇f_j(θ) for the weight columns
        ``weights(r_chunk, chunk)`` (b, K_w)."""
        m, d, n = self.m, self.d, self.n
        root_m = math.sqrt(m)
        p0 = self.params0
        v1 = theta - p0
        dirs = [v1, self.bar_dir] + ([theta - self.theta_bar] if drift else [])
        mats = _direction_matrices(theta.c, dirs)
        mats0 = _direction_matrices(p0.c, [v1])
        Wq_map, Ut = _wmap(theta.W, _LOG2E), theta.U.t().contiguous()
        keys = ("f", "D1", "D2", "L1", *(("D3",) if drift else ()))
        dev, dt = theta.c.device, theta.c.dtype
        out = {k: torch.empty(n, dtype=dt, device=dev) for k in keys}

        def run(group: list[_Chunk]) -> list[Tensor] | None:
            acc = None
            for ch in group:
                b, sl = ch.hi - ch.lo, slice(ch.lo, ch.hi)
                feats = _features(Wq_map, Ut, ch, self.act)
                feats0 = (ch.feats0 if ch.feats0 is not None
                          else _features(self.map0, self.Ut0, ch, self.act))
                Ta, TG, h = feats
                f = torch.mv(h, theta.c).div_(root_m)
                out["f"][sl] = f
                D = _directional(feats, ch.q, mats)
                out["D1"][sl], out["D2"][sl] = D[:, 0], D[:, 1]
                if drift:
                    out["D3"][sl] = D[:, 2]
                out["L1"][sl] = _directional(feats0, ch.q, mats0)[:, 0]
                w = weights(f - ch.y, ch)                # (b, K_w)
                parts = [h.t() @ w,                                         # (m, K_w)
                         Ta.reshape(b, d * m).t() @ w,                      # (d·m, K_w)
                         torch.einsum("be,bk,bx->kex", ch.q, w, TG.reshape(b, d * m))
                         if w.shape[1] > 1 else
                         ((ch.q * w).t() @ TG.reshape(b, d * m)).unsqueeze(0)]   # (K_w, d, d·m)
                acc = parts if acc is None else [x + y for x, y in zip(acc, parts, strict=True)]
            return acc

        if self.workers == 1:
            partials = [run(self.groups[0])]
        else:
            before = torch.get_num_threads()
            torch.set_num_threads(1)
            try:
                partials = list(_pool(self.workers).map(run, self.groups))
            finally:
                torch.set_num_threads(before)
        acc = partials[0]
        for part in partials[1:]:                        # fixed order: deterministic
            acc = [x + y for x, y in zip(acc, part, strict=True)]
        gc, gU, gW = acc
        head = theta.c / root_m
        grads = [Params(gc[:, k] / root_m, (gU[:, k].view(d, m) * head).t().contiguous(),
                        (gW[k].view(d, d, m) * head).permute(2, 1, 0).contiguous())
                 for k in range(gc.shape[1])]
        return out, grads


def _projection_slack(z: Params, params0: Params, theta_bar: Params,
                      rho: tuple[float, float, float]) -> Tensor:
    """s = ‖z − θ̄‖² − ‖Π_{Ω_ρ}(z) − θ̄‖² ≥ 0 block by block, in a form that is exactly 0 where
    the projection leaves a block unchanged.

    A clipped block (displacement D = z_b − θ(0)_b with ‖D‖ > r) is moved to θ(0)_b + λD,
    λ = r/‖D‖, and contributes (1 − λ)²‖D‖² + 2(1 − λ)(⟨D, θ(0)_b − θ̄_b⟩ + r‖D‖), which is ≥ 0
    because ‖θ̄_b − θ(0)_b‖ ≤ ν/√m ≤ r (θ̄ ∈ Ω_ρ, Remark 10). The clipped set is decided by the
    same comparisons as :func:`boundcalc.validators.model.project`.
    """
    root_m = math.sqrt(params0.width)
    total = torch.zeros((), dtype=torch.float64, device=z.c.device)
    off = params0 - theta_bar
    for D, o, r in zip(z - params0, off, rho, strict=True):
        radius = float(r) / root_m
        flat = D.reshape(D.shape[0], -1)
        # the clipped set exactly as model.project decides it (in the run's dtype)
        clipped = (flat[:, 0].abs() if D.dim() == 1 else flat.norm(dim=-1)) > radius
        D2, o2 = flat.double(), o.reshape(o.shape[0], -1).double()
        norm = D2.norm(dim=-1)
        lam = radius / norm.clamp_min(1e-300)
        one_minus = torch.where(clipped, 1.0 - lam, torch.zeros_like(lam))
        cross = (D2 * o2).sum(-1) + radius * norm
        contrib = one_minus**2 * norm**2 + 2.0 * one_minus * cross
        total = total + torch.where(clipped, contrib, torch.zeros_like(contrib)).sum()
    return total


# ------------------------------------------------------------------------------------- the run

def _double(p: Params) -> Params:
    return Params(*(t.double() for t in p))



def certified_run(params0: Params, theta_bar: Params, X: Tensor, q: Tensor, y: Tensor,
                  act: Activation, *, steps: int, eta: float, rho, batch_size: int | None = None,
                  seed: int = 0, record_every: int | None = None, keep_params: bool = False,
                  chunk: int | None = None) -> CertifyRun:
    """K = ``steps`` steps of ProjGD (``batch_size`` None) or ProjSGD with every proof quantity
    measured (module docstring). Device and dtype are those of ``params0``; every per-step
    reduction is done in float64; nothing is synchronised with the host inside the loop."""
    K = int(steps)
    if K < 1:
        raise ValueError(f"`steps` must be a positive integer, got {steps}")
    rho_t = check_triple("rho", rho)
    dev = params0.W.device
    n = X.shape[0]
    sgd = batch_size is not None and int(batch_size) != n
    b = int(batch_size) if sgd else n
    if not 1 <= b <= n:
        raise ValueError(f"`batch_size` must be an integer in [1, n={n}], got {batch_size}")
    stride = max(1, K // 64) if record_every is None else int(record_every)
    if stride < 1:
        raise ValueError(f"`record_every` must be a positive integer, got {record_every}")
    recorded = sorted(set(range(0, K, stride)) | {K - 1})
    slot = {k: i for i, k in enumerate(recorded)}
    measure = _Pass(params0, theta_bar, X, q, y, act, chunk)
    f0, lin_bar, AM = measure.f0, measure.lin_bar, measure.A_minus_M
    hist = torch.empty(K, len(STEP_COLUMNS), dtype=torch.float64, device=dev)
    rec = {k: torch.empty(len(recorded), n, dtype=torch.float64, device=dev)
           for k in SAMPLE_ARRAYS}
    kept: list[Params] = []
    gen = torch.Generator().manual_seed(int(seed)) if sgd else None
    root_m = math.sqrt(params0.width)
    theta = params0.clone()
    mask = torch.zeros(n, dtype=X.dtype, device=dev)

    def weights(r: Tensor, ch: _Chunk) -> Tensor:
        full = (2.0 / n) * r
        if not sgd:
            return full.unsqueeze(1)
        return torch.stack([full, (2.0 / b) * r * mask[ch.lo:ch.hi]], dim=1)

    f0d, lin_bar_d, AMd = f0.double(), lin_bar.double(), AM.double()
    zero = torch.zeros((), dtype=torch.float64, device=dev)
    nan = torch.full((), math.nan, dtype=torch.float64, device=dev)
    start = time.perf_counter()
    for k in range(K):
        if sgd:
            mask.zero_()
            mask[minibatch_indices(n, b, gen).to(dev)] = 1.0
        recording = k in slot
        vec, grads = measure(theta, weights, drift=recording)
        grad = grads[0]
        g = grads[1] if sgd else grad
        f, D1, D2, L1 = (vec[key].double() for key in ("f", "D1", "D2", "L1"))
        r = f - y.double()
        T_ = D1 - f + f0d
        C_ = D2 - lin_bar_d
        lin = f0d + L1 - f
        drift = D1 - D2                  # ⟨∇f_j(θ_k), θ_k − θ̄⟩ by linearity
        C_full = drift - (L1 - lin_bar_d)
        e = T_ - AMd - C_
        ar = r.abs()
        v3 = _double(theta - theta_bar)
        grad_d, g_d = _double(grad), _double(g)
        drift_inner, step_inner = v3.dot(grad_d), v3.dot(g_d)
        dc, dU, dW = _double(theta - params0)
        if recording:   # d_j along θ_k − θ̄ itself: the identity d_j = r_j + e_j, checked
            D3 = vec["D3"].double()
            residual = (D3 - (r + e)).abs().max()
        else:
            residual = nan
        hist[k] = torch.stack([
            (r * r).mean(), grad_d.dot(grad_d), g_d.dot(g_d), v3.dot(v3),
            drift_inner, (2.0 / n) * (r * drift).sum(), step_inner, step_inner - drift_inner,
            (r * e).mean(), (ar * e.abs()).mean(), ar.mean(), ar.max(), T_.abs().max(),
            C_.abs().max(), lin.abs().max(), C_full.abs().max(), e.abs().max(),
            (ar * (T_.abs() + C_.abs())).mean(), (ar * (lin.abs() + C_full.abs())).mean(),
            (ar * AMd.abs()).mean(), residual, drift.abs().max(), zero,
            dc.abs().max() * root_m, dU.norm(dim=-1).max() * root_m,
            dW.flatten(1).norm(dim=-1).max() * root_m,
        ])
        if recording:
            i = slot[k]
            for key, val in zip(SAMPLE_ARRAYS, (r, T_, C_, lin, C_full, D3), strict=True):
                rec[key][i] = val
            if keep_params:
                kept.append(theta.detach().to("cpu").clone())
        z = Params(*(t - eta * gt for t, gt in zip(theta, g, strict=True)))
        hist[k, STEP_COLUMNS.index("slack")] = _projection_slack(z, params0, theta_bar, rho_t)
        theta = project(z, params0, rho_t)
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
    seconds = time.perf_counter() - start
    final = measure(theta, lambda r, ch: r.unsqueeze(1) * 0)[0]
    r_final = final["f"].double() - y.double()
    v_final = _double(theta - theta_bar)
    hist_cpu = hist.cpu().numpy()
    return CertifyRun(
        steps={name: hist_cpu[:, i].copy() for i, name in enumerate(STEP_COLUMNS)},
        psi_final=float(v_final.dot(v_final)), loss_final=float((r_final**2).mean()),
        recorded_steps=recorded, samples={k: v.cpu().numpy() for k, v in rec.items()},
        A_minus_M=AM.double().cpu().numpy(), f0=f0.double().cpu().numpy(),
        params=kept if keep_params else None, params_final=theta.detach().to("cpu"),
        seconds=seconds)


# --------------------------------------------------------------------------- one certification

def certify(kind: str = "theorem1", *, m: int, n: int, d: int, T: int, rho=2.0, nu=1.0,
            delta: float = 0.05, activation: str = "tanh", steps: int = 300, seed: int = 0,
            eta: float | None = None, batch_size: int = 8, teacher_width: int = 8192,
            anchors: int = 16, teacher_delta: float = DEFAULT_TEACHER_DELTA,
            record_every: int | None = None, keep_params: bool = False, device="cpu",
            dtype="float64", chunk: int | None = None) -> dict[str, Any]:
    """The run-measured decomposition of one ProjGD (``kind="theorem1"``) or ProjSGD
    (``"prop1"``, minibatch ``batch_size``) run of seed ``seed`` (module docstring).

    The teacher, data, labels y = f*_M, init θ(0) and θ̄ are checks.training's
    (``measure_theorem1`` / the first run of ``measure_prop1``); η = η* of ``evaluate(kind)``
    unless ``eta`` is given; the a-priori bounds are Remark 9's at ε_mis = ε_T on each route of
    :data:`boundcalc.theory.catalog.MEASURED_ROUTES` (tight route: ``remark9``, paper route:
    ``remark9_paper``).

    Returns a dict: ``summary`` (one row: the four headline levels — ``measured_constants_*``
    is the level with every deterministic constant measured on the run, ``run_certified_*`` its
    old name, kept one release — the free yardstick ``free_bound`` = min(B², Y², R̂(θ_0)) of the
    tight route with ``free_bound_key``, the verdicts of the a-priori and a-posteriori tight
    bounds against it, timings, configuration),
    ``chain`` (:func:`chains` rows), ``parts`` (:func:`parts` rows), ``steps`` (every per-step
    scalar, columns of :data:`STEP_COLUMNS` plus ``k``), ``recorded_steps``, ``samples``
    (numpy arrays, not JSON: :data:`SAMPLE_ARRAYS` at the recorded steps, ``A_minus_M``, ``f0``)
    and, with ``keep_params``, ``params`` (θ_k at the recorded steps) and the run's tensors
    (``data``: params0, theta_bar, X, q, y).
    """
    if kind not in CERTIFIABLE:
        raise ValueError(f"`kind` must be one of {CERTIFIABLE}, got {kind!r}")
    rho_t, nu_t = check_triple("rho", rho), check_triple("nu", nu)
    if any(r < v for r, v in zip(rho_t, nu_t, strict=True)):
        raise ValueError(f"`rho` must be >= `nu` componentwise (Remark 10: theta_bar must lie in "
                         f"Omega_rho), got rho={rho_t}, nu={nu_t}")
    if int(steps) != steps or steps < 1:
        raise ValueError(f"`steps` must be a positive integer, got {steps}")
    dev, dt = resolve_device(device), resolve_dtype(dtype)
    sgd = kind == "prop1"
    b = int(batch_size) if sgd else 1
    if sgd and not 1 <= b <= n:
        raise ValueError(f"`batch_size` must be an integer in [1, n={n}], got {batch_size}")
    started = time.perf_counter()
    realizable = evaluate(kind, calculator_inputs(m=m, n=n, d=d, T=T, delta=delta, rho=rho_t,
                                                  nu=nu_t, steps=steps, activation=activation,
                                                  eta=eta, batch_size=b))
    step = float(realizable.inputs["eta"])
    eps_t = eps_teacher(n, d, nu_t, activation, teacher_width, teacher_delta)
    mis_inputs = calculator_inputs(m=m, n=n, d=d, T=T, delta=delta, rho=rho_t, nu=nu_t,
                                   steps=steps, activation=activation, eta=step, batch_size=b,
                                   misspecification=eps_t)
    prior_ev = {route: evaluate(route_key("remark9", route), mis_inputs)
                for route in MEASURED_ROUTES}
    prior = {fam: {**float_values(ev.constants), **float_values(ev.bound)}
             for fam, ev in prior_ev.items()}
    teacher = build_teacher(d, T, seed=derived_seed(seed, "teacher"), nu=nu_t, anchors=anchors,
                            width=teacher_width, activation=activation, device=dev)
    X, q, y = teacher_data(teacher, n, T, d, seed, dt, dev)
    p0 = init_params(m, d, seed=seed, dtype=dt, device=dev)
    theta_bar = transported_params(p0, teacher)
    u_norms = p0.U.double().norm(dim=-1)
    geometry = {"u0_max": float(u_norms.max()), "u0_rms": float(u_norms.pow(2).mean().sqrt()),
                "x_max": float(X.double().norm(dim=-1).max()),
                "q_max": float(q.double().norm(dim=-1).max()), "rho": list(rho_t)}
    post = {fam: a_posteriori_values(mis_inputs, fam, eta=step, eps_mis=eps_t,
                                     geometry=geometry) for fam in MEASURED_ROUTES}
    threads = small_work_threads(n * T * m, dev)
    with intra_op_threads(threads):
        run = certified_run(p0, theta_bar, X, q, y, teacher.act, steps=int(steps), eta=step,
                            rho=rho_t, batch_size=b if sgd else None,
                            seed=derived_seed(seed, "minibatch0"), record_every=record_every,
                            keep_params=keep_params, chunk=chunk)
    chain = chains(run_steps=run.steps, psi_final=run.psi_final, eta=step, sgd=sgd,
                   prior=prior, post=post, eps_mis=eps_t)
    part_rows = parts(run=run, post=post, prior=prior, geometry=geometry, eps_mis=eps_t,
                      eps_app_prior=prior["tight"]["eps_app"])
    tag = {"statement": kind, "seed": int(seed)}
    chain = [{**tag, **r} for r in chain]
    part_rows = [{**tag, **r} for r in part_rows]
    by = {(r["route"], r["key"]): r["value"] for r in chain}
    steps_out = {"k": np.arange(len(run.steps["loss"])), **run.steps}
    summary = {
        **tag, "m": m, "n": n, "d": d, "T": T, "rho": list(rho_t), "nu": list(nu_t),
        "delta": float(delta), "activation": activation, "K": int(steps), "eta": step,
        "eta_source": realizable.inputs["eta_source"],
        "batch_size": b if sgd else n, "algorithm": "ProjSGD" if sgd else "ProjGD",
        "eps_mis_teacher": eps_t, "teacher_width": int(teacher_width),
        "teacher_delta": float(teacher_delta),
        "a_priori_tight": prior["tight"]["min_iterate"],
        "a_priori_tight_linear": by[("tight-linear", "a_priori")],
        "a_priori_tight_cauchy_schwarz": by[("tight-cauchy-schwarz", "a_priori")],
        "a_priori_paper": by[("paper", "a_priori")],
        "a_priori_realizable_tight": float(realizable.bound["min_iterate"]),
        "a_posteriori_tight": min(by[("tight-linear", "a_posteriori")],
                                  by[("tight-cauchy-schwarz", "a_posteriori")]),
        "a_posteriori_paper": by[("paper", "a_posteriori")],
        "measured_constants_tight": by[("tight-linear", "pointwise")],
        "measured_constants_paper": by[("paper", "pointwise")],
        "run_certified_tight": by[("tight-linear", "pointwise")],     # old name, one release
        "run_certified_paper": by[("paper", "pointwise")],            # old name, one release
        "telescoped": by[("tight-linear", "sign")],
        "average_loss": float(np.mean(run.steps["loss"])),
        "min_loss": float(np.min(run.steps["loss"])),
        "initial_loss": float(run.steps["loss"][0]), "final_loss": run.loss_final,
        **_yardstick_summary(prior["tight"], float(run.steps["loss"][0]),
                             prior["tight"]["min_iterate"],
                             min(by[("tight-linear", "a_posteriori")],
                                 by[("tight-cauchy-schwarz", "a_posteriori")]),
                             prior_ev["tight"].conditions_hold),
        "psi0": float(run.steps["psi"][0]), "psi_final": run.psi_final,
        **{k: v for k, v in geometry.items() if k != "rho"},
        "violations": sum(1 for r in [*chain, *part_rows] if is_violation(r)),
        "device": str(dev), "dtype": str(dt).replace("torch.", ""),
        "seconds_run": run.seconds, "seconds": time.perf_counter() - started,
        "recorded_steps": len(run.recorded_steps),
    }
    out = {"summary": summary, "chain": chain, "parts": part_rows, "steps": steps_out,
           "recorded_steps": run.recorded_steps,
           "samples": {**run.samples, "A_minus_M": run.A_minus_M, "f0": run.f0,
                       "recorded_steps": np.asarray(run.recorded_steps)}}
    if keep_params:
        out["params"] = run.params
        out["data"] = {"params0": p0, "theta_bar": theta_bar, "X": X, "q": q, "y": y,
                       "act": teacher.act, "params_final": run.params_final}
    return out


def _yardstick_summary(constants: dict[str, float], initial_loss: float, a_priori: float,
                       a_posteriori: float, conditions_hold: bool) -> dict[str, Any]:
    """B², Y², the free yardstick min(B², Y², R̂(θ_0)) of the tight route (``free_bound``,
    ``free_bound_key``) and the verdicts of its a-priori and a-posteriori bounds against it
    (:func:`boundcalc.runs.validation_summary.yardstick_fields`)."""
    free = {"trivial_bound_B2": constants["trivial_bound_B2"],
            "initial_loss_bound": constants["initial_loss_bound"],
            "initial_loss": initial_loss}
    prior = yardstick_fields(a_priori, free, conditions_hold)
    return {"trivial_bound_B2": free["trivial_bound_B2"],
            "initial_loss_bound": free["initial_loss_bound"],
            "free_bound": prior["free_bound"], "free_bound_key": prior["free_bound_key"],
            "a_priori_verdict": prior["verdict"],
            "a_posteriori_verdict": yardstick_fields(a_posteriori, free,
                                                     conditions_hold)["verdict"]}


# --------------------------------------------------------------- the ``validate --decompose`` run

def run_certification(statements: Sequence[str], settings, out: str | Path, *,
                      eta: float | None = None,
                      progress: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """``boundcalc validate theorem1|prop1 --decompose``: one decomposed run per (statement,
    seed) into the run directory ``out`` (cells ``decompose-<statement>-seed<s>.json`` and
    ``.npz``, the per-sample vectors; resumable), then the files (:func:`write_files`) from every
    cell. ``settings`` is a :class:`boundcalc.validation.settings.ValidationSettings`. Returns the
    results (JSON-ready)."""
    from boundcalc.runs.directory import RunDirectory

    bad = [s for s in statements if s not in CERTIFIABLE]
    if bad:
        raise ValueError(f"--decompose is for {' and '.join(CERTIFIABLE)} only, got {bad}")
    config = {"statements": list(statements), "decompose": True, "eta": eta,
              **settings.as_dict()}
    run = RunDirectory(out, config=config, device=settings.device)
    results, samples = [], {}
    for statement in statements:
        for seed in range(settings.seeds):
            key = f"{FILE_STEM}-{statement}-seed{seed}"
            if run.has_cell(key):
                res = run.load_cell(key)
                if progress:
                    progress(f"{key}: done earlier, loaded from {run.cells / (key + '.json')}")
            else:
                full = certify(statement, m=settings.m, n=settings.n, d=settings.d,
                               T=settings.T, rho=settings.rho, nu=settings.nu,
                               delta=settings.delta, activation=settings.activation,
                               steps=settings.steps, seed=seed, eta=eta,
                               batch_size=settings.batch_size,
                               teacher_width=settings.teacher_width, device=settings.device,
                               dtype=settings.dtype)
                save_npz(run.cells / f"{key}.npz", full["samples"])
                res = json_ready(full)
                run.save_cell(key, res)
                if progress:
                    summ = res["summary"]
                    progress(f"{key}: K={summ['K']} steps in {summ['seconds']:.1f} s, "
                             f"a-priori {summ['a_priori_tight']:.4g} "
                             f"({summ['a_priori_verdict']} against the free yardstick "
                             f"{summ['free_bound']:.4g}) -> measured constants "
                             f"{summ['measured_constants_tight']:.4g} -> min loss "
                             f"{summ['min_loss']:.4g}, {summ['violations']} violation(s)")
            results.append(res)
            cell_npz = run.cells / f"{key}.npz"
            if cell_npz.exists():
                with np.load(cell_npz) as npz:
                    samples[f"{statement}-seed{seed}"] = {k: npz[k] for k in npz.files}
    write_files(run.path, results, samples or None)
    return results


__all__ = [
    "CERTIFIABLE", "CHAIN_ROUTES", "SAMPLE_ARRAYS", "STAGES", "STEP_COLUMNS", "CertifyRun",
    "a_posteriori_values", "certified_run", "certify", "chains", "is_violation", "parts",
    "plot_chains", "run_certification", "write_files",
]
