"""The transport-mapping teacher of Section 6.1 and the transported student parameters (eq. 11).

**Transport map** (Section 5.4). v = (v_c, v_u, v_w) is a function of one head's initial
(U, W) only — never of its readout sign c (docs/derivations.md §0: heads i and i + m/2 share
(U, W) and must get the same v). Following the authors' Section 6.1 construction we take R
anchor sequences X_r (queries q_r) and a mixture

    v(U, W) = Σ_r α_r v^{(r)}(U, W),   Σ_r |α_r| = 1,
    v_c^{(r)} = (ν_c/σ₀) σ(Uᵀa_r),          |v_c^{(r)}| ≤ ν_c,
    v_u^{(r)} = (ν_u/σ₁) σ'(Uᵀa_r) a_r,     ‖v_u^{(r)}‖ ≤ ν_u   (‖a_r‖ ≤ 1),
    v_w^{(r)} = clip_{ν_w}(σ'(Uᵀa_r) G_r U q_rᵀ),  ‖v_w^{(r)}‖_F ≤ ν_w,

with a_r = a(X_r; W), G_r = X_r J X_rᵀ and clip_ν(M) = M·min(1, ν/‖M‖_F): each v^{(r)} is the
feature map of Lemma 4 at anchor r scaled into the sup-norm ball, so |v_c| ≤ ν_c, ‖v_u‖ ≤ ν_u and
‖v_w‖_F ≤ ν_w everywhere (triangle inequality, Σ|α_r| = 1).

**Target.** With ψ(U, W; X) = v_c σ(Uᵀa) + σ'(Uᵀa) aᵀv_u + σ'(Uᵀa) ⟨G U qᵀ, v_w⟩_F,
Lemma 5's target is the exact expectation f*(X) = E_{(U,W)~init} ψ(U, W; X). It has no closed
form (W enters through a softmax), so the teacher is the Monte Carlo mean over M fresh
init samples (U_s, W_s) ~ N(0, I) (default M = 8192):

    f*_M(X) = (1/M) Σ_s ψ(U_s, W_s; X)      — :meth:`Teacher.__call__`, exactly this mean.

**How the validators treat f*_M ≠ f*** (the choice; see docs/validation.md). f*_M is itself a
mean of M i.i.d. copies of ψ, i.e. Lemma 5's own estimator at width 2M (N = M independent
samples). So the same Lemma 5 expression evaluated at m = 2M bounds the teacher's error:
max_j |f*_M(X_j) − f*(X_j)| ≤ ε_T := ε_app(m = 2M, n, δ_T) with probability ≥ 1 − δ_T over the
teacher's samples (:meth:`Teacher.mc_error_bound`; δ_T = 10⁻⁶ by default). The checks then

* Lemma 5: count a seed as a violation whenever the measured max_j |f_lin(X_j; θ̄) − f*_M(X_j)|
  exceeds ε_app − ε_T, i.e. whenever the measurement cannot *certify* |f_lin − f*| ≤ ε_app
  (conservative: on the teacher's event every true violation is counted);
* Theorem 1 / Proposition 1: train on y_j = f*_M(X_j), which is f* up to ε_mis ≤ ε_T, and compare
  with Remark 9's bound at ε_mis = ε_T (the realizable bound is shown next to it).

**Transported student** (eq. 11). For a student initialisation θ(0) of width m,

    c̄_i = c_i(0) + v_c(U_i(0), W_i(0))/√m,
    Ū_i = U_i(0) + c_i(0) v_u(U_i(0), W_i(0))/√m,
    W̄_i = W_i(0) + c_i(0) v_w(U_i(0), W_i(0))/√m,

so θ̄ ∈ Ω_ν and, as c_i(0)² = 1, f_lin(X; θ̄) = (1/m) Σ_i ψ(U_i(0), W_i(0); X): the width-m
Monte Carlo estimate of f* (N = m/2 independent terms, each counted twice) —
:func:`transported_params`.

Memory: v_w is formed per sample, (k, d, d); the features of the data against the samples are
formed in blocks of data rows × teacher heads, (rows, T, heads) at most (:func:`psi_mean`:
about 2¹⁸ elements, cache-sized, on the CPU; all M heads and up to 2²⁶ elements, bounded by the
free device memory, on accelerators); no (batch, samples, d, d) tensor is ever built. The
teacher is built once per seed and reused for every width.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import torch
from torch import Tensor

from .data.inputs import derived_seed, synthetic_inputs
from .model import Activation, Params, get_activation, head_features, last_token_query

#: TransportMap: elements allowed in one (R, chunk, T) intermediate tensor.
TRANSPORT_CHUNK_ELEMENTS = 1 << 22
#: psi_mean on the CPU: elements of one (rows, T, heads) intermediate, 2¹⁸ (2 MiB in float64):
#: the block stays in a core's L2 cache. Measured for the paper preset (n = 5000, T = 16,
#: d = 8, M = 8192, one thread): 2¹⁷–2¹⁹ are within ~10 %, 2²² is about twice as slow.
CPU_CHUNK_ELEMENTS = 1 << 18
#: psi_mean on the CPU: at most this many teacher heads per block, so that a block has several
#: rows (the stacked (d, 2·d·heads) maps and the per-row products stay cache-sized).
CPU_HEAD_BLOCK = 1024
#: psi_mean on accelerators: elements of one (rows, T, M) intermediate (all heads at once, few
#: launches); fewer rows where the free device memory is short (``_psi_chunking``).
ACCEL_CHUNK_ELEMENTS = 1 << 26


def activation_bounds(act: Activation) -> tuple[float, float]:
    """(σ₀, σ₁) of a validator activation, read from the calculator's exact presets."""
    from boundcalc.theory.activations import get_activation as theory_activation

    bounds = theory_activation(act.name)
    return float(bounds.sigma0), float(bounds.sigma1)


def _queries(X: Tensor, query: Tensor | None) -> Tensor:
    """q_j: the last token (``query=None``) or a fixed vector (d,) for every sample."""
    if query is None:
        return last_token_query(X)
    return query.to(device=X.device, dtype=X.dtype).expand(X.shape[0], -1)


def _check_nu(nu) -> tuple[float, float, float]:
    values = tuple(float(v) for v in (nu if isinstance(nu, (tuple, list)) else (nu,) * 3))
    if len(values) != 3 or any(not math.isfinite(v) or v < 0 for v in values):
        raise ValueError(f"`nu` must be one or three non-negative numbers, got {nu!r}")
    return values  # type: ignore[return-value]


@dataclass(frozen=True)
class TransportMap:
    """v(U, W) = Σ_r α_r v^{(r)}(U, W) of the module docstring.

    anchors (R, T, d) and anchor_q (R, d) define the features; alpha (R,) has Σ|α_r| = 1;
    nu = (ν_c, ν_u, ν_w); sigma0, sigma1 the activation bounds used to scale into the ν-ball.
    """

    anchors: Tensor
    anchor_q: Tensor
    alpha: Tensor
    nu: tuple[float, float, float]
    act: Activation
    sigma0: float
    sigma1: float

    def __call__(self, U: Tensor, W: Tensor) -> Params:
        """v at k heads: U (k, d), W (k, d, d) → Params(v_c (k,), v_u (k, d), v_w (k, d, d)).

        Depends on (U, W) only. Chunked over k so that (R, chunk, T) stays small.
        """
        k = U.shape[0]
        R, T, _ = self.anchors.shape
        step = max(1, TRANSPORT_CHUNK_ELEMENTS // max(1, R * T))
        parts = [self._chunk(U[s:s + step], W[s:s + step]) for s in range(0, k, step)]
        return Params(*(torch.cat(blocks) for blocks in zip(*parts, strict=True)))

    def _chunk(self, U: Tensor, W: Tensor) -> Params:
        nu_c, nu_u, nu_w = self.nu
        ones = torch.ones(U.shape[0], dtype=U.dtype, device=U.device)
        F = head_features(Params(ones, U, W), self.anchors, self.anchor_q, self.act)  # (R, k, .)
        alpha = self.alpha.unsqueeze(-1)                                             # (R, 1)
        v_c = (nu_c / self.sigma0) * (alpha * F.h).sum(0)
        v_u = (nu_u / self.sigma1) * torch.einsum("rk,rkd->kd", alpha * F.dh, F.a)
        # ‖σ' G U qᵀ‖_F = |σ'| ‖G U‖ ‖q‖; clip each anchor's matrix to Frobenius norm ν_w
        fro = F.dh.abs() * F.GU.norm(dim=-1) * self.anchor_q.norm(dim=-1, keepdim=True)
        clip = torch.where(fro > nu_w, nu_w / fro.clamp_min(1e-300), torch.ones_like(fro))
        v_w = torch.einsum("rk,rkd,re->kde", alpha * clip * F.dh, F.GU, self.anchor_q)
        return Params(v_c, v_u, v_w)

    def to(self, *, dtype: torch.dtype | None = None,
           device: str | torch.device | None = None) -> TransportMap:
        """The same map with its tensors on ``device`` / in ``dtype``."""
        def move(t: Tensor) -> Tensor:
            return t.to(device=device or t.device, dtype=dtype or t.dtype)

        return TransportMap(move(self.anchors), move(self.anchor_q), move(self.alpha), self.nu,
                            self.act, self.sigma0, self.sigma1)


def _psi_chunking(n: int, k: int, T: int, d: int, device: torch.device,
                  dtype: torch.dtype) -> tuple[int, int]:
    """(rows, heads) per block of :func:`psi_mean`: samples and teacher heads handled at once.

    CPU: about :data:`CPU_CHUNK_ELEMENTS` elements per (rows, T, heads) intermediate, with at
    most :data:`CPU_HEAD_BLOCK` heads, so a block's intermediates stay in the core's cache.
    Elsewhere: all heads and up to :data:`ACCEL_CHUNK_ELEMENTS` elements per intermediate (few
    launches), fewer rows if the device's free memory (``torch.cuda.mem_get_info``) would not
    hold the block's ≈ 2T + 5d + 8 numbers per (row, head) twice over.
    """
    if device.type == "cpu":
        heads = max(1, min(k, CPU_HEAD_BLOCK, CPU_CHUNK_ELEMENTS // max(1, T)))
        return max(1, CPU_CHUNK_ELEMENTS // (T * heads)), heads
    rows = ACCEL_CHUNK_ELEMENTS // (T * k)
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        per_row = k * (2 * T + 5 * d + 8) * torch.finfo(dtype).bits // 8
        rows = min(rows, free // (2 * per_row))
    return max(1, min(n, rows)), k


def psi_mean(U: Tensor, W: Tensor, v: Params, X: Tensor, q: Tensor, act: Activation) -> Tensor:
    """(1/k) Σ_s ψ(U_s, W_s; X_j) for every sample j: shape (n,).

    ψ = v_c σ(Uᵀa) + σ'(Uᵀa)·(aᵀv_u + (G U)ᵀ v_w q) (⟨G U qᵀ, v_w⟩_F = (G U)ᵀ v_w q).
    U (k, d), W (k, d, d), v = (v_c (k,), v_u (k, d), v_w (k, d, d)), X (n, T, d), q (n, d).

    Batched matrix products with the head index last (contiguous), as in
    ``train._fused_range``; per block of rows j and heads i (:func:`_psi_chunking`):

    * [W_i q_j ; v_{w,i} q_j] by one product of q with the stacked maps (rows, 2, d, heads);
    * unnormalised softmax weights e_t = exp(z_t − z_ref) with z_t = x_tᵀ W_i q_j, one bmm.
      On the CPU z_ref = z_T, the last token's logit, read off (x_t − x_T)ᵀ W_i q directly
      (e_T = 1, so S = Σ_t e_t ≥ 1); a block whose S is not finite or exceeds 2⁶⁴ is redone
      with z_ref = max_t z_t, which elsewhere is always used (no synchronisation per block);
    * [Xᵀe ; S] and [Xᵀ(e∘p) ; Σ_t e_t p_t] with p_t = x_tᵀU_i: two bmm with [Xᵀ; 1ᵀ], so
      a = Xᵀe/S, Uᵀa = Σ_t e_t p_t / S and S·G U = Xᵀ(e∘p) − (Uᵀa) Xᵀe (model.py's
      G u = Σ_t s_t (x_tᵀu − aᵀu) x_t);
    * S·(aᵀv_u + (G U)ᵀ w̃) = Σ_d [Xᵀe]_d (v_u − (Uᵀa) w̃)_d + [Xᵀ(e∘p)]_d w̃_d, w̃ = v_w q.

    No (·, d, d) tensor per sample and head is formed; the largest intermediates are
    (rows, T, heads).
    """
    k, d = U.shape
    n, T, _ = X.shape
    dt, dev = U.dtype, U.device
    rows, heads = _psi_chunking(n, k, T, d, dev, dt)
    by_last = dev.type == "cpu"
    XT1 = torch.cat([X.transpose(1, 2), X.new_ones(n, 1, T)], dim=1)    # [Xᵀ; 1ᵀ] (n, d+1, T)
    X_shift = X - X[:, -1:, :]                                          # x_t − x_T
    d1 = (lambda h, pre: 1.0 - h * h) if act.name == "tanh" else (lambda h, pre: act.d1(pre))
    out = torch.zeros(n, dtype=dt, device=dev)
    for h0 in range(0, k, heads):
        hs = slice(h0, h0 + heads)
        kb = U[hs].shape[0]
        # [e, (0, a, i)] = W_i[a, e], [e, (1, a, i)] = v_{w,i}[a, e]
        maps = torch.stack([W[hs], v.W[hs]]).permute(3, 0, 2, 1).reshape(d, 2 * d * kb)
        Ut, VUt, vc = U[hs].t().contiguous(), v.U[hs].t().contiguous(), v.c[hs]
        for j0 in range(0, n, rows):
            js = slice(j0, j0 + rows)
            Xc, XT1c = X[js], XT1[js]
            bb = Xc.shape[0]
            Wq_Wt = (q[js] @ maps).view(bb, 2, d, kb)
            Wq, Wt = Wq_Wt[:, 0], Wq_Wt[:, 1]                           # W_i q_j, w̃ = v_w q_j
            e = R0 = None
            if by_last:
                e = torch.bmm(X_shift[js], Wq).exp_()                   # exp(z_t − z_T)
                R0 = torch.bmm(XT1c, e)                                 # [Xᵀe ; S]
            if R0 is None or not float(R0[:, d].amax()) <= 2.0**64:  # (NaN too)
                e = torch.bmm(Xc, Wq)
                e = e.sub_(e.amax(dim=1, keepdim=True)).exp_()          # exp(z_t − max z)
                R0 = torch.bmm(XT1c, e)
            ep = (Xc.reshape(bb * T, d) @ Ut).view(bb, T, kb).mul_(e)   # e_t x_tᵀU_i
            R1 = torch.bmm(XT1c, ep)                                    # [Xᵀ(e∘p) ; Σ e p]
            S = R0[:, d]
            pre = R1[:, d] / S                                          # U_iᵀ a_i
            lin = torch.addcmul(VUt, pre.unsqueeze(1), Wt, value=-1)   # v_u − (Uᵀa) w̃
            lin = lin.mul_(R0[:, :d]).addcmul_(R1[:, :d], Wt).sum(1)    # S·(aᵀv_u + (GU)ᵀw̃)
            h = act.fn(pre)
            out[js] += h @ vc + (d1(h, pre) * lin / S).sum(1)
    return out / k


@dataclass(frozen=True)
class Teacher:
    """Monte Carlo transport teacher f*_M (module docstring).

    transport: the map v; U (M, d), W (M, d, d): the teacher's own init samples; v: v at those
    samples; query: None (last token) or a fixed (d,) query; seed: the teacher seed.
    """

    transport: TransportMap
    U: Tensor
    W: Tensor
    v: Params
    query: Tensor | None
    seed: int

    @property
    def width(self) -> int:
        """M, the number of Monte Carlo samples."""
        return int(self.U.shape[0])

    @property
    def act(self) -> Activation:
        return self.transport.act

    def queries(self, X: Tensor) -> Tensor:
        """The queries q_j this teacher (and its student) use for inputs X: (n, d)."""
        return _queries(X, self.query)

    def __call__(self, X: Tensor, q: Tensor | None = None) -> Tensor:
        """f*_M(X_j) = (1/M) Σ_s ψ(U_s, W_s; X_j): shape (n,), in X's dtype and device."""
        q = self.queries(X) if q is None else q
        dev_dtype = {"device": self.U.device, "dtype": self.U.dtype}
        out = psi_mean(self.U, self.W, self.v, X.to(**dev_dtype), q.to(**dev_dtype), self.act)
        return out.to(device=X.device, dtype=X.dtype)

    def mc_error_bound(self, n: int, delta: float = 1e-6) -> float:
        """ε_T ≥ max_{j≤n} |f*_M(X_j) − f*(X_j)| with probability ≥ 1 − δ over the samples.

        Lemma 5's expression (boundcalc.calc.api, ``lemma5``) at m = 2M: f*_M is the mean of N = M
        i.i.d. copies of ψ, exactly Lemma 5's estimator with N = m/2. Valid for any n inputs
        drawn independently of the teacher's samples.
        """
        return eps_teacher(n, self.U.shape[1], self.transport.nu, self.act.name, self.width,
                           delta)

    @cached_property
    def label_sup(self) -> float:
        """sup_X |f*_M(X)| ≤ σ₀ν_c + σ₁ν_u + σ₁ν_w·mean_s ‖U_s‖ (deterministic)."""
        nu_c, nu_u, nu_w = self.transport.nu
        s0, s1 = self.transport.sigma0, self.transport.sigma1
        return s0 * nu_c + s1 * nu_u + s1 * nu_w * float(self.U.norm(dim=-1).mean())


def _eps_app(m: int, n: int, d: int, delta: float, nu, activation: str) -> float:
    """Lemma 5's ε_app from the calculator (the same expression the CLI prints)."""
    from boundcalc.calc.api import evaluate
    from boundcalc.inputs.params import validate

    nu_text = ",".join(repr(float(v)) for v in nu)
    res = evaluate("lemma5", validate(m=m, n=n, d=d, delta=repr(float(delta)), nu=nu_text,
                                      activation=activation))
    return float(res.bound["eps_app"])


def eps_teacher(n: int, d: int, nu, activation: str, width: int, delta: float) -> float:
    """ε_T: the Monte Carlo error bound of a teacher of ``width`` samples (M) on n inputs, with
    probability ≥ 1 − δ: Lemma 5's ε_app at m = 2M (:meth:`Teacher.mc_error_bound`), computed
    without building the teacher, for the measurements that need it before training.

    >>> eps_teacher(8, 2, (1.0, 1.0, 1.0), "tanh", 4096, 1e-6) < 1
    True
    """
    return _eps_app(2 * int(width), n, d, delta, nu, activation)


def build_teacher(d: int, T: int, *, seed: int, nu=(1.0, 1.0, 1.0), anchors: int = 16,
                  width: int = 8192, activation: str = "tanh", query: Tensor | None = None,
                  dtype: torch.dtype = torch.float64,
                  device: str | torch.device = "cpu") -> Teacher:
    """The Section 6.1 teacher: R anchors, mixture weights α, M init samples (module docstring).

    Args:
        d, T: token dimension and sequence length of the anchors (and of the data).
        seed: teacher seed; anchors, α and samples use streams derived from it
            (:func:`derived_seed`), independent of ``init_params(seed=...)`` of a student.
        nu: (ν_c, ν_u, ν_w) sup-norm budgets (one number = all three).
        anchors: R ≥ 1; width: M ≥ 1 Monte Carlo samples.
        activation: ``tanh`` or ``erf``; query: None (last token) or a fixed (d,) vector.

    Returns:
        :class:`Teacher`. Everything is drawn in float64 on the CPU, then moved.
    """
    if int(anchors) != anchors or anchors < 1:
        raise ValueError(f"`anchors` must be a positive integer, got {anchors}")
    if int(width) != width or width < 1:
        raise ValueError(f"`width` must be a positive integer, got {width}")
    nu_t = _check_nu(nu)
    act = get_activation(activation)
    sigma0, sigma1 = activation_bounds(act)
    X_r = synthetic_inputs(anchors, T, d, seed=derived_seed(seed, "teacher-anchors"))
    if query is not None:
        query = query.detach().to(torch.float64).reshape(-1)
        if query.shape[0] != d or float(query.norm()) > 1 + 1e-12:
            raise ValueError(f"`query` must be a vector of length d={d} with norm <= 1")
    q_r = _queries(X_r, query)
    gen = torch.Generator().manual_seed(derived_seed(seed, "teacher-alpha"))
    g = torch.randn(anchors, generator=gen, dtype=torch.float64)
    alpha = g / g.abs().sum()
    gen = torch.Generator().manual_seed(derived_seed(seed, "teacher-samples"))
    U = torch.randn(width, d, generator=gen, dtype=torch.float64)
    W = torch.randn(width, d, d, generator=gen, dtype=torch.float64)
    transport = TransportMap(X_r, q_r, alpha, nu_t, act, sigma0, sigma1)
    transport = transport.to(dtype=dtype, device=device)
    U, W = U.to(device=device, dtype=dtype), W.to(device=device, dtype=dtype)
    q_dev = None if query is None else query.to(device=device, dtype=dtype)
    return Teacher(transport, U, W, transport(U, W), q_dev, int(seed))


def transported_params(params0: Params, transport: TransportMap | Teacher) -> Params:
    """θ̄ of eq. (11) for the student initialisation ``params0`` (module docstring).

    θ̄ − θ(0) has per-head blocks (v_c/√m, c_i(0) v_u/√m, c_i(0) v_w/√m), so θ̄ ∈ Ω_ν.
    """
    tm = transport.transport if isinstance(transport, Teacher) else transport
    c0, U0, W0 = params0
    v = tm.to(dtype=U0.dtype, device=U0.device)(U0, W0)
    root_m = math.sqrt(params0.width)
    return Params(c0 + v.c / root_m,
                  U0 + c0.unsqueeze(-1) * v.U / root_m,
                  W0 + c0.view(-1, 1, 1) * v.W / root_m)


__all__ = [
    "Teacher", "TransportMap", "activation_bounds", "build_teacher", "eps_teacher", "psi_mean",
    "transported_params",
]
