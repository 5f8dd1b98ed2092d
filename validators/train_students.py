"""ProjGD for several students at once: one fused pass per step serves every width.

Figure 1 trains, for each seed, one student per width (8, 16, …, 256: 504 heads in all) on the
same data with the same step size and radii. The students never interact — student s has its
own readout scale m_s^{-1/2}, its own residuals r_js = f_s(X_j) − y_j and its own loss — so the
S trajectories of

    θ^s_{k+1} = Π_{Ω_ρ(m_s)}(θ^s_k − η ∇R̂_s(θ^s_k)),   s = 1 … S   (Theorem 1's ProjGD),

are computed together: the heads of all students lie side by side in one parameter set, one
fused pass (:func:`boundcalc.validators.train.fused_loss_and_gradient` with ``widths``) returns
every student's loss and gradient, the update is one tensor operation, and the projection onto
the product of per-head balls uses each head's own radii ρ/√m_s. Per step the samples are read
once for all students instead of once per student, and the per-step Python and launch overhead
is paid once.

On CUDA the K steps are replays of one captured CUDA graph of the step
(:func:`boundcalc.validators.step_graphs.run_steps`; ``config["loop"]`` says ``graph`` or
``eager``), with the numbers of the eager steps.

Every number is that of :func:`boundcalc.validators.train.proj_gd` run on each student alone:
on the compiled CPU kernel the losses and gradients are the same bit for bit (same blocks of
heads, same order of every sum), the projection and the update are the same element-wise
operations; on the torch path the output sums differ by rounding only.
(tests/validators/test_train_students.py checks both against ``proj_gd``.)

Example:
    >>> import torch
    >>> from boundcalc.validators.data.inputs import synthetic_inputs
    >>> from boundcalc.validators.model import init_params, last_token_query
    >>> X = synthetic_inputs(32, 4, 3, seed=1)
    >>> y = torch.zeros(32, dtype=torch.float64)
    >>> inits = [init_params(m, 3, seed=m) for m in (2, 4)]
    >>> runs = train_students(inits, X, last_token_query(X), y, "tanh", steps=3, eta=0.1, rho=1)
    >>> [r.params.width for r in runs]
    [2, 4]
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence

import torch
from torch import Tensor

from .model import Activation, Params
from .step_graphs import run_steps
from .student_split import per_head, split_constants
from .train import (
    TrainResult,
    as_activation,
    check_backend,
    check_rho,
    check_steps_and_eta,
    descend_in_place,
    full_loss,
    fused_inputs,
    fused_loss_and_gradient,
    intra_op_threads,
    kernel_for,
    small_work_threads,
)

__all__ = ["PROGRESS_EVERY_S", "train_students"]

#: Default seconds of wall time between two calls of ``train_students``'s ``progress``.
PROGRESS_EVERY_S = 30.0


def _project_heads(theta: Params, params0: Params, radii: tuple[Tensor, Tensor, Tensor]
                   ) -> Params:
    """:func:`boundcalc.validators.model.project` with per-head radii (M,): each head of
    student s in its balls of radii ρ/√m_s; the same element-wise operations."""
    rc, ru, rw = radii
    dc, dU, dW = theta - params0
    dc = torch.minimum(torch.maximum(dc, -rc), rc)
    nu = dU.norm(dim=-1, keepdim=True)
    ru = ru.unsqueeze(-1)
    dU = dU * torch.where(nu > ru, nu.clamp_min(1e-300).reciprocal() * ru, torch.ones_like(nu))
    nw = dW.flatten(1).norm(dim=-1).view(-1, 1, 1)
    rw = rw.view(-1, 1, 1)
    dW = dW * torch.where(nw > rw, nw.clamp_min(1e-300).reciprocal() * rw, torch.ones_like(nw))
    return Params(params0.c + dc, params0.U + dU, params0.W + dW)


def train_students(students: Sequence[Params], X: Tensor, q: Tensor, y: Tensor,
                   act: Activation | str, *, steps: int, eta: float, rho=None,
                   project_iterates: bool = True, chunk: int | None = None,
                   backend: str = "auto",
                   progress: Callable[[int, int, float], None] | None = None,
                   progress_every_s: float = PROGRESS_EVERY_S) -> list[TrainResult]:
    """K = ``steps`` steps of full-batch ProjGD for every student, in one computation.

    Args:
        students: the initial parameters θ^s(0) of S ≥ 1 students (widths m_s, same d, dtype
            and device); each is also the centre of its Ω_ρ.
        X (n, T, d), q (n, d), y (n,): the training data, shared by all students.
        act: activation (name or :class:`Activation`); steps: K ≥ 1; eta: η > 0.
        rho: (ρ_c, ρ_u, ρ_w) or one number; required unless ``project_iterates=False``.
        chunk, backend: of the fused pass (:func:`~boundcalc.validators.train.train`).
        progress: called as ``progress(k, K, seconds)`` after step k whenever
            ``progress_every_s`` seconds of wall time have passed since the last call (never for
            a run shorter than that): k steps done of K in ``seconds`` so far, for a progress
            line with an ETA. It reads the host clock only (no device synchronisation).

    Returns:
        One :class:`~boundcalc.validators.train.TrainResult` per student, in order, each equal
        to that of ``proj_gd`` on the student alone (module docstring). ``seconds`` is the wall
        time of the whole batch; ``config["students"]`` lists the widths trained together.
    """
    act = as_activation(act)
    students = list(students)
    if not students or not all(isinstance(p, Params) for p in students):
        raise ValueError("`students` must be a non-empty sequence of Params")
    check_steps_and_eta(steps, eta)
    rho_t = check_rho(rho) if project_iterates else None
    first = students[0].W
    d = first.shape[-1]
    if any(p.W.shape[-1] != d or p.W.dtype != first.dtype or p.W.device != first.device
           for p in students):
        raise ValueError("`students` must share d, dtype and device")
    n = X.shape[0]
    if X.dim() != 3 or X.shape[2] != d or q.shape != (n, d) or y.shape != (n,):
        raise ValueError(f"expected X (n, T, d={d}), q (n, d), y (n,); got {tuple(X.shape)}, "
                         f"{tuple(q.shape)}, {tuple(y.shape)}")
    check_backend(backend)
    widths = tuple(p.width for p in students)
    S, K = len(widths), int(steps)
    dt, dev = first.dtype, first.device
    X, q, y = (t.to(device=dev, dtype=dt).contiguous() for t in (X, q, y))
    params0 = Params(*(torch.cat(blocks).detach() for blocks in zip(*students, strict=True)))
    used_backend = ("torch" if backend == "torch"
                    else "kernel" if kernel_for(act, dt, dev, d) is not None else "torch")
    inputs = fused_inputs(X, q) if used_backend == "torch" else None
    head_student, root_m, _, _ = split_constants(widths, n, dt, dev)
    radii = None if rho_t is None else tuple(
        per_head([float(r) / math.sqrt(m) for m in widths], widths, dt, dev) for r in rho_t)

    def per_student_sum(values: Tensor) -> Tensor:
        return torch.zeros(S, dtype=dt, device=dev).index_add_(0, head_student, values)

    def per_student_max(values: Tensor) -> Tensor:
        return torch.zeros(S, dtype=dt, device=dev).scatter_reduce_(
            0, head_student, values, "amax", include_self=False)

    loss_hist = torch.empty(K, S, dtype=dt, device=dev)
    grad_hist = torch.empty(K, 3, S, dtype=dt, device=dev)
    radius_hist = torch.empty(K, 3, S, dtype=dt, device=dev)
    dist_hist = torch.empty(K, 3, S, dtype=dt, device=dev)
    total = Params(*(torch.zeros_like(t) for t in params0))
    theta = params0.clone()          # the iterate θ_k, updated in place (see step_graphs)
    k_dev = torch.zeros(1, dtype=torch.int64, device=dev)

    def loss_of(p: Params) -> Tensor:
        return full_loss(p, X, q, y, act, chunk, inputs, backend, widths=widths)

    def step() -> None:
        loss_k, g, _ = fused_loss_and_gradient(theta, X, q, y, act, chunk=chunk,
                                               inputs=inputs, backend=backend, widths=widths)
        loss_hist.index_copy_(0, k_dev, loss_k.unsqueeze(0))
        grad_hist.index_copy_(0, k_dev, torch.stack([
            per_student_sum(g.c * g.c), per_student_sum((g.U * g.U).sum(-1)),
            per_student_sum((g.W * g.W).flatten(1).sum(-1))]).sqrt().unsqueeze(0))
        dc, dU, dW = theta - params0
        dU_norm, dW_norm = dU.norm(dim=-1), dW.flatten(1).norm(dim=-1)
        radius_hist.index_copy_(0, k_dev, torch.stack([
            per_student_max(dc.abs() * root_m), per_student_max(dU_norm * root_m),
            per_student_max(dW_norm * root_m)]).unsqueeze(0))
        dist_hist.index_copy_(0, k_dev, torch.stack([
            per_student_sum(dc * dc), per_student_sum(dU_norm ** 2),
            per_student_sum(dW_norm ** 2)]).sqrt().unsqueeze(0))
        descend_in_place(theta, total, g, eta, None if radii is None
                         else lambda p: _project_heads(p, params0, radii))
        k_dev.add_(1)

    threads = small_work_threads(n * X.shape[1] * params0.width, dev)
    with intra_op_threads(threads):
        start = last_report = time.perf_counter()

        def after(k: int) -> None:
            nonlocal last_report
            if progress is not None and k < K:
                now = time.perf_counter()
                if now - last_report >= progress_every_s:
                    last_report = now
                    progress(k, K, now - start)

        loop = run_steps(step, K, dev, after=after)
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
    seconds = time.perf_counter() - start
    average = total.scale(1.0 / K)
    with intra_op_threads(threads):
        average_loss, final, initial = (loss_of(p).cpu() for p in (average, theta, params0))
    loss_cpu, grad_cpu = loss_hist.cpu(), grad_hist.cpu()
    radius_cpu, dist_cpu = radius_hist.cpu(), dist_hist.cpu()
    config = {"algorithm": "ProjGD", "projected": rho_t is not None, "gradient": "fused",
              "backend": used_backend, "device": str(dev),
              "dtype": str(dt).replace("torch.", ""), "students": list(widths),
              "loop": loop}
    out, lo = [], 0
    for s, m in enumerate(widths):
        part = slice(lo, lo + m)
        lo += m
        out.append(TrainResult(
            params=Params(*(t[part] for t in theta)), average=Params(*(t[part] for t in average)),
            loss=loss_cpu[:, s].clone(), batch_loss=loss_cpu[:, s].clone(),
            grad_norm=grad_cpu[:, :, s].clone(), radius=radius_cpu[:, :, s].clone(),
            distance=dist_cpu[:, :, s].clone(), min_loss=float(loss_cpu[:, s].min()),
            average_loss=float(average_loss[s]), final_loss=float(final[s]),
            initial_loss=float(initial[s]), steps=K, eta=float(eta), rho=rho_t, batch_size=n,
            seconds=seconds, config=dict(config)))
    return out
