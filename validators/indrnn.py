"""The IndRNN of App. B.1 (eqs. 48–51) as pure, vectorised torch functions.

Computes, for a batch of n sequences X ∈ R^{n×T×d} (same layout as :mod:`validators.model`),

    z_{t,i} = w_iᵀ x_t + u_i h_{t−1,i},   h_{t,i} = σ(z_{t,i}),   h_{0,i} = 0      (eqs. 48–49)
    f(X; θ) = m^{-1/2} Σ_i c_i h_{T,i},   θ = (c, W, u)                            (eq. 50)

with W = W_in ∈ R^{m×d} (row i is w_i), u ∈ R^m the diagonal recurrent weights and c ∈ R^m the
readout, and everything the experiment and the Proposition 2 checks need from it in closed form:

* the gradient of R̂(θ) = (1/n) Σ_j (f(X_j; θ) − y_j)² by backpropagation through time (the
  project's loss convention, docs/derivations.md §0);
* the per-sample Jacobian w.r.t. u by forward-mode recursion, b_t = ∂h_t/∂u (per unit),
  b_t = σ'(z_t)(h_{t−1} + u b_{t−1}), b_0 = 0, so ∂f/∂u_i = m^{-1/2} c_i b_{T,i};
* the per-unit tangents ∂h_T/∂w (forward mode, a_t = σ'(z_t)(x_t + u a_{t−1})) and the
  linearization f_lin(θ) = f(θ(0)) + ⟨∇f(θ(0)), θ − θ(0)⟩ (Definition 3 for the IndRNN).

Each unit only sees its own state, so every quantity is vectorised over samples and units; the
recurrence itself is a Python loop over the T time steps (unavoidable, and T ≤ 97 here). The
closed forms are checked against autograd of :func:`forward`, which writes nothing in place;
:func:`trajectory` and the gradients write into preallocated time-major buffers (``out=``),
which autograd and ``vmap`` do not follow — they take leading batch axes instead.

Shapes: c (m,), W (m, d), u (m,), X (n, T, d), y (n,); :func:`trajectory`, :func:`forward`,
:func:`loss_and_gradient` and :func:`loss_gradient_and_jacobian_u` also take leading batch axes
(c (..., m), W (..., m, d), u (..., m), X (..., n, T, d), y (..., n)).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import Tensor

from boundcalc.validation.settings import (
    DEFAULT_INDRNN_ALPHA,
    EFFORT,
    INDRNN,
    ValidationSettings,
)

from .kernel import gpu_recurrence
from .model import Activation

#: Rademacher scale of u(0) in the authors' scripts (App. B.1).
DEFAULT_ALPHA = 1.5


class IndRNNParams(NamedTuple):
    """θ = (c, W, u): readout c (m,), input weights W = W_in (m, d), recurrent weights u (m,).

    A NamedTuple, so it is a pytree for ``torch.func`` and unpacks as ``c, W, u = params``.
    """

    c: Tensor
    W: Tensor
    u: Tensor

    @property
    def width(self) -> int:
        """m, the number of recurrent units."""
        return int(self.c.shape[0])

    def detach(self) -> IndRNNParams:
        return IndRNNParams(*(t.detach() for t in self))

    def to(self, *args, **kwargs) -> IndRNNParams:
        return IndRNNParams(*(t.to(*args, **kwargs) for t in self))

    def __sub__(self, other: IndRNNParams) -> IndRNNParams:
        return IndRNNParams(*(a - b for a, b in zip(self, other, strict=True)))


def init_indrnn(m: int, d: int, *, seed: int, alpha: float = DEFAULT_ALPHA,
                dtype: torch.dtype = torch.float64,
                device: str | torch.device = "cpu") -> IndRNNParams:
    """Symmetric initialisation (eq. 51), so that f(·; θ(0)) ≡ 0.

    For i ≤ m/2: c_i ~ Unif{±1}, w_i ~ N(0, I_d), u_i = α·Unif{±1}; units i + m/2 copy w_i and u_i
    and negate c_i. Draws on the CPU with ``torch.Generator().manual_seed(seed)`` in float64 and
    then casts and moves, so a seed gives the same θ(0) on every device.

    Example:
        >>> p = init_indrnn(4, 3, seed=0)
        >>> bool((p.c[:2] == -p.c[2:]).all()), sorted(set(p.u.abs().tolist()))
        (True, [1.5])
    """
    if m < 2 or m % 2:
        raise ValueError(f"`m` must be a positive even integer, got {m}")
    if d < 1:
        raise ValueError(f"`d` must be positive, got {d}")
    if not alpha > 0:
        raise ValueError(f"`alpha` must be > 0, got {alpha}")
    gen = torch.Generator().manual_seed(int(seed))
    half = m // 2
    c = torch.randint(0, 2, (half,), generator=gen, dtype=torch.float64) * 2.0 - 1.0
    W = torch.randn(half, d, generator=gen, dtype=torch.float64)
    u = (torch.randint(0, 2, (half,), generator=gen, dtype=torch.float64) * 2.0 - 1.0) * alpha
    params = IndRNNParams(torch.cat([c, -c]), torch.cat([W, W]), torch.cat([u, u]))
    return params.to(device=device, dtype=dtype)


class Trajectory(NamedTuple):
    """One forward pass, time-major: σ'(z_t) (T, ..., n, m), the states h_{t−1} (T, ..., n, m)
    (h_0 = 0 first), the final state h_T (..., n, m), if asked b_T = ∂h_T/∂u (..., n, m), and the
    inputs time-major, X_t (T, ..., n, d)."""

    dz: Tensor
    h_prev: Tensor
    h_last: Tensor
    b_last: Tensor | None
    X_time: Tensor


def _step(act: Activation, z: Tensor) -> tuple[Tensor, Tensor]:
    """(σ(z), σ'(z)); for tanh σ' = 1 − σ² reuses σ(z)."""
    h = act.fn(z)
    return h, (1.0 - h * h) if act.name == "tanh" else act.d1(z)


def _time_major(X: Tensor) -> Tensor:
    """(..., n, T, d) → (T, ..., n, d), contiguous: every step reads one block."""
    return X.movedim(-2, 0).contiguous()


def trajectory(params: IndRNNParams, X: Tensor, act: Activation,
               tangent_u: bool = False) -> Trajectory:
    """Run the recurrence (eqs. 48–49) for all samples and units; keep what BPTT needs.

    The input drive w_iᵀx_t of all time steps is one (batched) product, laid out time-major so
    that every step reads and writes contiguous (n, m) blocks; the loop over t does O(n·m) work
    in three kernels (z_t = drive_t + u ⊙ h_{t−1} in one ``addcmul``, σ(z_t) and σ'(z_t),
    written straight into the stored states), two more with ``tangent_u``, which carries the
    forward-mode derivative b_t = ∂h_t/∂u (per unit).

    Leading batch axes are allowed: c (..., m), W (..., m, d), u (..., m) with X (..., n, T, d)
    train several independent networks (figure 2's seeds) in the same kernels.

    With ``BOUNDCALC_TRITON=1``, for tanh where Triton runs, the T steps run in one Triton
    kernel instead (:func:`boundcalc.validators.kernel.gpu_recurrence.indrnn_recurrence`: the
    same states, σ' and tangent, to rounding).
    """
    _, W, u = params
    X_time = _time_major(X)                                   # (T, ..., n, d)
    drive = torch.matmul(X_time, W.transpose(-1, -2))         # w_iᵀ x_t   (T, ..., n, m)
    T, shape = drive.shape[0], drive.shape[1:]
    if _uses_kernel(act, drive):                              # every step in one kernel
        states, dz, b = gpu_recurrence.indrnn_recurrence(drive, u, tangent=tangent_u)
        return Trajectory(dz, states[:T], states[T], b, X_time)
    u_row = u.unsqueeze(-2)                                   # (..., 1, m)
    states = drive.new_empty((T + 1, *shape))                 # h_0 … h_T
    states[0].zero_()
    dz = drive.new_empty((T, *shape))
    z = drive.new_empty(shape)
    b = drive.new_zeros(shape) if tangent_u else None
    one = drive.new_ones(())
    is_tanh = act.name == "tanh"
    for t in range(T):
        torch.addcmul(drive[t], u_row, states[t], out=z)
        if is_tanh:                                           # σ' = 1 − σ² reuses σ(z)
            torch.tanh(z, out=states[t + 1])
            torch.addcmul(one, states[t + 1], states[t + 1], value=-1, out=dz[t])
        else:
            states[t + 1].copy_(act.fn(z))
            dz[t].copy_(act.d1(z))
        if b is not None:                                     # b_t = σ'(z_t)(h_{t−1} + u b_{t−1})
            torch.addcmul(states[t], u_row, b, out=b).mul_(dz[t])
    return Trajectory(dz, states[:T], states[T], b, X_time)


def forward(params: IndRNNParams, X: Tensor, act: Activation) -> Tensor:
    """f(X_j; θ) = m^{-1/2} Σ_i c_i h_{T,i}(X_j) for every sample j: shape (..., n).

    Differentiable by autograd (no in-place writes); leading batch axes as in
    :func:`trajectory`.

    Example:
        >>> from boundcalc.validators.model import get_activation
        >>> p = init_indrnn(6, 3, seed=1)
        >>> X = torch.randn(5, 7, 3, dtype=torch.float64)
        >>> forward(p, X, get_activation("tanh")).abs().max().item() < 1e-12
        True
    """
    _, W, u = params
    drive = torch.matmul(_time_major(X), W.transpose(-1, -2))
    u_row = u.unsqueeze(-2)
    h = drive.new_zeros(drive.shape[1:])
    for t in range(drive.shape[0]):
        h = act.fn(torch.addcmul(drive[t], u_row, h))
    return _readout(h, params.c)


def _uses_kernel(act: Activation, like: Tensor) -> bool:
    """Whether the recurrence on tensors of ``like``'s device and dtype runs in the Triton
    kernels (tanh, ``BOUNDCALC_TRITON=1``, and
    :func:`~boundcalc.validators.kernel.gpu_recurrence.uses_recurrence_kernel`)."""
    return act.name == "tanh" and gpu_recurrence.uses_recurrence_kernel(like.device, like.dtype)


def predict(params: IndRNNParams, X: Tensor, act: Activation) -> Tensor:
    """:func:`forward`'s f(X_j; θ) (..., n) without autograd: with ``BOUNDCALC_TRITON=1``, for
    tanh where Triton runs, by the recurrence kernel keeping only h_T; else :func:`forward`."""
    if not _uses_kernel(act, X):
        return forward(params, X, act)
    _, W, u = params
    drive = torch.matmul(_time_major(X), W.transpose(-1, -2))
    h_last, _, _ = gpu_recurrence.indrnn_recurrence(drive, u, store=False)
    return _readout(h_last, params.c)


def _readout(h: Tensor, c: Tensor) -> Tensor:
    """m^{-1/2} Σ_i c_i h_i: (..., n, m), (..., m) → (..., n)."""
    return torch.matmul(h, c.unsqueeze(-1)).squeeze(-1) / math.sqrt(c.shape[-1])


def _loss_gradient(params: IndRNNParams, X: Tensor, y: Tensor, act: Activation,
                   tangent_u: bool):
    traj = trajectory(params, X, act, tangent_u)
    c = params.c
    scale = 1.0 / math.sqrt(c.shape[-1])
    pred = _readout(traj.h_last, c)
    resid = pred - y
    w = (2.0 / y.shape[-1]) * resid                          # ∂R̂/∂f_j          (..., n)
    grad_c = torch.matmul(w.unsqueeze(-2), traj.h_last).squeeze(-2) * scale
    delta = w.unsqueeze(-1) * (c * scale).unsqueeze(-2)      # ∂R̂/∂h_T          (..., n, m)
    dz = traj.dz                                             # σ'(z_t), overwritten in place
    kernel = _uses_kernel(act, dz)
    if kernel:                                               # BPTT in one Triton kernel
        per_unit = gpu_recurrence.indrnn_backward(dz, traj.h_prev, delta, params.u)
    else:
        u_row = params.u.unsqueeze(-2)
        for t in range(dz.shape[0] - 1, -1, -1):             # ∂R̂/∂z_t, t = T … 1
            delta = dz[t].mul_(delta) * u_row                # ∂z_t/∂h_{t−1} = u
    # ∇_W = Σ_t dz_tᵀ X_t: one product per time step (batched), then the sum over t — the
    # products over samples alone keep the GPU busy, one product over (t, samples) would not
    grad_W = torch.matmul(dz.transpose(-1, -2), traj.X_time).sum(0)
    # ∇_u = Σ_t Σ_j dz_t ⊙ h_{t−1} (the kernel summed over t already)
    grad_u = per_unit.sum(-2) if kernel else dz.mul_(traj.h_prev).sum(0).sum(-2)
    return (resid**2).mean(-1), IndRNNParams(grad_c, grad_W, grad_u), pred, traj


def loss_and_gradient(params: IndRNNParams, X: Tensor, y: Tensor,
                      act: Activation) -> tuple[Tensor, IndRNNParams, Tensor]:
    """R̂(θ) = (1/n) Σ_j (f_j − y_j)² and its gradient by backpropagation through time.

    With w_j = 2(f_j − y_j)/n and δ_{T} = w_j c_i/√m = ∂R̂/∂h_{T,i}, going back in time
    ∂R̂/∂z_t = δ_t σ'(z_t), δ_{t−1} = u ⊙ ∂R̂/∂z_t, and

        ∂R̂/∂c_i = m^{-1/2} Σ_j w_j h_{T,ji},  ∇_u R̂ = Σ_{j,t} ∂R̂/∂z_t ⊙ h_{t−1},
        ∇_W R̂ = Σ_{j,t} (∂R̂/∂z_t) x_tᵀ.

    Returns:
        (loss, gradient as :class:`IndRNNParams`, predictions f (n,)).
    """
    loss, grad, pred, _ = _loss_gradient(params, X, y, act, tangent_u=False)
    return loss, grad, pred


def loss_gradient_and_jacobian_u(params: IndRNNParams, X: Tensor, y: Tensor, act: Activation
                                 ) -> tuple[Tensor, IndRNNParams, Tensor, Tensor]:
    """:func:`loss_and_gradient` plus ‖∂f(X_j)/∂u‖ for every sample (n,), from the same pass.

    ‖∂f_j/∂u‖² = (1/m) Σ_i c_i² b_{T,ji}² with b_t = σ'(z_t)(h_{t−1} + u b_{t−1}) (forward mode).
    """
    loss, grad, pred, traj = _loss_gradient(params, X, y, act, tangent_u=True)
    jac = torch.sqrt(((params.c.unsqueeze(-2) * traj.b_last) ** 2).sum(-1) / params.c.shape[-1])
    return loss, grad, pred, jac


def jacobian_u_norm(params: IndRNNParams, X: Tensor, act: Activation) -> Tensor:
    """‖∇_u f(X_j; θ)‖ for every sample j (n,), by forward mode (see
    :func:`loss_gradient_and_jacobian_u`)."""
    traj = trajectory(params, X, act, tangent_u=True)
    return torch.sqrt(((params.c.unsqueeze(-2) * traj.b_last) ** 2).sum(-1) / params.c.shape[-1])


class UnitTangents(NamedTuple):
    """h_T (n, m), a_T = ∂h_T/∂w (n, m, d) and b_T = ∂h_T/∂u (n, m), per unit."""

    h: Tensor
    a: Tensor
    b: Tensor


def unit_tangents(params: IndRNNParams, X: Tensor, act: Activation) -> UnitTangents:
    """Per-unit final state and its derivatives w.r.t. the unit's own (w_i, u_i), forward mode.

    a_t = σ'(z_t)(x_t + u a_{t−1}), b_t = σ'(z_t)(h_{t−1} + u b_{t−1}), a_0 = b_0 = 0. O(n·m·d·T).
    These are the IndRNN's neural-tangent features: ∇_{w_i} f = m^{-1/2} c_i a_{T,i} and
    ∂f/∂u_i = m^{-1/2} c_i b_{T,i}.
    """
    _, W, u = params
    n, T, d = X.shape
    drive = torch.einsum("ntd,md->tnm", X, W)
    h = X.new_zeros(n, params.width)
    a = X.new_zeros(n, params.width, d)
    b = X.new_zeros(n, params.width)
    for t in range(T):
        h_next, d1 = _step(act, drive[t] + u * h)
        a = d1.unsqueeze(-1) * (X[:, t].unsqueeze(1) + u.unsqueeze(-1) * a)
        b = d1 * (h + u * b)
        h = h_next
    return UnitTangents(h, a, b)


def linearized_output(params0: IndRNNParams, params: IndRNNParams, X: Tensor,
                      act: Activation, tangents0: UnitTangents | None = None) -> Tensor:
    """f_lin(X_j; θ) = f(X_j; θ(0)) + ⟨∇_θ f(X_j; θ(0)), θ − θ(0)⟩: shape (n,).

    Per unit: m^{-1/2}[h_i Δc_i + c_i(0)(a_iᵀΔw_i + b_i Δu_i)] at θ(0). Pass
    ``tangents0 = unit_tangents(params0, X, act)`` to reuse it across many θ.
    """
    tan = tangents0 if tangents0 is not None else unit_tangents(params0, X, act)
    dc, dW, du = params - params0
    inner = (tan.a * dW).sum(-1) + tan.b * du
    per_unit = tan.h * (params0.c + dc) + params0.c * inner
    return per_unit.sum(-1) / math.sqrt(params0.width)


def state_floats_per_sample(m: int) -> int:
    """Inference memory of the IndRNN per sample: the m-dimensional state (independent of T)."""
    return int(m)




# --------------------------------------------------------------------------- Prop. 2 measurements


def boundary_point(params0: IndRNNParams, X: Tensor, act: Activation,
                   rho: tuple[float, float, float]) -> IndRNNParams:
    """A point on the boundary of Ω_ρ chosen to stress the Proposition 2 constants.

    Per unit: Δc_i = +ρ_c/√m; Δw_i = ρ_w/√m along Σ_j ∂h_{T,i}(X_j)/∂w_i, the gradient of the
    unit's own output (not of f, which carries c_i(0): under the mirrored init units i and
    i + m/2 would then move in opposite directions and the second-order terms of f − f_lin would
    cancel in pairs, the effect docs/validation.md "Figure 1" measures for the Transformer);
    Δu_i = ρ_u/√m·sign(u_i(0)), which puts |u_i| at u_max = α + ρ_u/√m, the largest recurrent
    factor λ that Ω_ρ allows.
    """
    rc, ru, rw = (float(r) / math.sqrt(params0.width) for r in rho)
    tan = unit_tangents(params0, X, act)
    direction = tan.a.sum(0)                                             # (m, d)
    direction = direction / direction.norm(dim=-1, keepdim=True).clamp_min(1e-300)
    return IndRNNParams(params0.c + rc, params0.W + rw * direction,
                        params0.u + ru * torch.sign(params0.u))


def _unit_hessian_norms(params: IndRNNParams, x_seq: Tensor, act: Activation) -> Tensor:
    """‖∇²_{(w_i,u_i)} h_{T,i}‖_op for every unit i on one sequence x_seq (T, d): (m,)."""
    def h_T(theta: Tensor) -> Tensor:
        w, u = theta[:-1], theta[-1]
        h = theta.new_zeros(())
        for x in x_seq:
            h = act.fn(w @ x + u * h)
        return h

    thetas = torch.cat([params.W, params.u.unsqueeze(-1)], dim=-1)        # (m, d + 1)
    hess = torch.func.vmap(torch.func.hessian(h_T))(thetas)              # (m, d+1, d+1)
    return torch.linalg.matrix_norm(hess, ord=2)


def measure_prop2(*, m: int = 16, d: int = 4, T: int = 8, n: int = 8, alpha: float = 1.5,
                  rho: tuple[float, float, float] = (2.0, 2.0, 2.0), seed: int = 0,
                  activation: str = "tanh", device: str | torch.device = "cpu",
                  dtype: torch.dtype | str = torch.float64) -> list[dict[str, float | str]]:
    """Measure what Proposition 2's constants bound, at the :func:`boundary_point` of Ω_ρ.

    Inputs: n − 1 random sequences with unit-norm tokens and one sequence repeating e_1 (aligned
    tokens make the tangent recursions add up). Quantities (each next to its bound, evaluated by
    :func:`boundcalc.calc.compare_rnn.evaluate_prop2` from the same sympy expressions):
    ``unit_gradient_G`` max_{i,j} ‖∇_{(w_i,u_i)} h_{T,i}(X_j)‖; ``unit_hessian_H`` max_{i,j} of the
    per-unit Hessian norm; ``lipschitz_L`` max_j ‖∇_θ f(X_j)‖; ``eps_lin`` max_j |f − f_lin|.

    The inputs and θ(0) are drawn on the CPU in float64 and then moved, so a seed gives the same
    configuration on every ``device`` / ``dtype``.

    Returns:
        One dict per quantity: ``quantity``, ``measured``, ``bound``, ``ratio`` (≤ 1 unless the
        derivation is wrong); ``eps_lin`` also ``free_cap`` (:func:`eps_lin_free_cap`) and
        ``bound_over_free_cap`` (> 1: the bound is above what holds without the lemma).
    """
    from boundcalc.calc.compare_rnn import evaluate_prop2
    from boundcalc.inputs.params import validate

    from .model import get_activation

    if n < 2:
        raise ValueError(f"`n` must be >= 2 (one aligned and random sequences), got {n}")
    act = get_activation(activation)
    gen = torch.Generator().manual_seed(int(seed))
    raw = torch.randn(n - 1, T, d, generator=gen, dtype=torch.float64)
    aligned = torch.zeros(1, T, d, dtype=torch.float64)
    aligned[..., 0] = 1.0
    dt = getattr(torch, dtype) if isinstance(dtype, str) else dtype
    X = torch.cat([aligned, raw / raw.norm(dim=-1, keepdim=True)]).to(device=device, dtype=dt)
    params0 = init_indrnn(m, d, seed=seed, alpha=alpha, dtype=dt, device=device)
    params = boundary_point(params0, X, act, rho)
    tan = unit_tangents(params, X, act)
    unit_grad = torch.sqrt((tan.a**2).sum(-1) + tan.b**2)                  # (n, m)
    unit_hess = torch.stack([_unit_hessian_norms(params, X[j], act) for j in range(n)])
    full_grad = torch.sqrt(((tan.h**2) + params.c**2 * unit_grad**2).sum(-1) / m)
    gap = (forward(params, X, act) - linearized_output(params0, params, X, act)).abs()
    inputs = validate(m=m, n=n, d=d, T=T, rho=",".join(str(r) for r in rho), nu="1")
    bounds = evaluate_prop2(inputs, alpha=str(alpha)).constants
    measured = {"unit_gradient_G": unit_grad.max(), "unit_hessian_H": unit_hess.max(),
                "lipschitz_L": full_grad.max(), "eps_lin": gap.max()}
    out = []
    for key, value in measured.items():
        bound = float(bounds[key])
        out.append({"quantity": key, "measured": float(value), "bound": bound,
                    "ratio": float(value) / bound})
        if key == "eps_lin":
            cap = eps_lin_free_cap(m, rho, activation, float(bounds["output_envelope_F"]),
                                   float(bounds["lipschitz_L"]))
            out[-1].update(free_cap=cap, bound_over_free_cap=bound / cap)
    return out


def eps_lin_free_cap(m: int, rho: tuple[float, float, float], activation: str, F: float,
                     L: float) -> float:
    """A bound on sup |f − f_lin| over Ω_ρ that needs no Taylor argument:
    min(F, √m c_max σ₀) + L‖ρ‖.

    Why: |f(θ) − f_lin(θ)| ≤ |f(θ)| + |f(θ(0))| + |⟨∇f(θ(0)), θ − θ(0)⟩|. The output
    f = m^{-1/2} Σ_i c_i h_{T,i} has |h| ≤ σ₀ and |c_i| ≤ c_max = 1 + ρ_c/√m on Ω_ρ, so
    |f| ≤ √m c_max σ₀ (and ≤ F, Proposition 2's envelope); the mirrored init gives f(θ(0)) = 0;
    ‖∇f(θ(0))‖ ≤ L (θ(0) ∈ Ω_ρ) and ‖θ − θ(0)‖² ≤ Σ_i (ρ_c² + ρ_u² + ρ_w²)/m = ‖ρ‖².

    Example:
        >>> round(eps_lin_free_cap(16, (2.0, 2.0, 2.0), "tanh", 48.8188, 24.8495), 2)
        92.08
    """
    from boundcalc.theory.activations import get_activation as theory_activation

    sigma0 = float(theory_activation(activation).sigma0)
    c_max = 1 + rho[0] / math.sqrt(m)
    return min(F, math.sqrt(m) * c_max * sigma0) + L * math.sqrt(sum(r * r for r in rho))


def prop2_cell(settings: ValidationSettings, seed: int) -> list[dict]:
    """The ``validate prop2`` cell of ``seed``: :func:`measure_prop2` on the ``--effort`` level's
    number of sequences at α = ``settings.extra["prop2"]["alpha"]`` (default
    :data:`~boundcalc.validation.settings.DEFAULT_INDRNN_ALPHA`), as measured-vs-bound records;
    one torch thread on the CPU (the catalog's falsifier of ``prop2``)."""
    s = settings
    alpha = float(s.extra.get(INDRNN, {}).get("alpha", DEFAULT_INDRNN_ALPHA))
    previous = torch.get_num_threads()
    if s.device == "cpu":
        torch.set_num_threads(1)
    try:
        samples = EFFORT[s.effort]["samples"]
        rows = measure_prop2(m=s.m, d=s.d, T=s.T, n=max(2, samples), alpha=alpha, rho=s.rho,
                             seed=seed, activation=s.activation, device=s.device,
                             dtype=s.dtype)
    finally:
        torch.set_num_threads(previous)
    u_max = alpha + s.rho[1] / math.sqrt(s.m)
    return [{"name": f"prop2.{r['quantity']}", "method": "boundary_point",
             "measured": r["measured"], "bound": r["bound"], "ratio": r["ratio"],
             "holds": bool(r["measured"] <= r["bound"]),
             **{k: r[k] for k in ("free_cap", "bound_over_free_cap") if k in r},
             "alpha": alpha, "u_max": u_max,
             "m": s.m, "d": s.d, "T": s.T, "activation": s.activation, "device": s.device,
             "dtype": s.dtype} for r in rows]


__all__ = [
    "DEFAULT_ALPHA", "IndRNNParams", "Trajectory", "UnitTangents", "boundary_point", "forward",
    "eps_lin_free_cap", "init_indrnn", "jacobian_u_norm", "linearized_output",
    "loss_and_gradient", "predict",
    "loss_gradient_and_jacobian_u", "measure_prop2", "state_floats_per_sample", "trajectory",
    "unit_tangents", "prop2_cell"
]
