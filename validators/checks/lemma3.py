"""Lemma 3: the linearisation error |f(θ) − f_lin(θ)| ≤ ε_lin on Ω_ρ.

:func:`validate_lemma3` starts from the paper's gradient-aligned boundary point of Ω_ρ
(:func:`paper_boundary_point`) and ascends |f − f_lin| over θ, the init and the inputs, against
the calculator's ε_lin (``evaluate('lemma3')``), and on one seeded init and synthetic data against
the a-posteriori ε_lin.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from boundcalc.validation.settings import ValidationSettings

from ..model import Activation, Params, forward, linearized_output
from .adversary import fixed_init_config, init_and_data, search_linearization
from .records import (
    DEFAULT_SAMPLES,
    DEFAULT_STARTS,
    DEFAULT_STEPS,
    a_posteriori,
    attach_argmax,
    check_args,
    cpu_threads,
    data_record,
    geometry_args,
    record,
    record_settings,
    setup,
)
from .space import THETA_VARS, Config, SearchSpace, concat_configs, select

__all__ = ["BOUNDARY_ALIGNMENTS", "paper_boundary_point", "validate_lemma3", "cell"]


BOUNDARY_ALIGNMENTS = ("output", "feature")


def paper_boundary_point(params0: Params, X: Tensor, q: Tensor, rho: tuple[float, float, float],
                         act: Activation, align: str = "output",
                         chunk: int | None = None) -> Params:
    """The paper's gradient-aligned boundary point (Section 6.1): for every head, ΔU_i and ΔW_i
    of norms ρ_u/√m and ρ_w/√m, and Δc_i = +ρ_c/√m. Returns the displacement (Δc, ΔU, ΔW).

    ``align`` picks the direction of ΔU_i, ΔW_i:

    * ``"output"`` — along the head's block of ∇_θ Σ_j f(X_j; θ(0)) (autograd), the literal
      reading of the public script. Since ∂f/∂U_i, ∂f/∂W_i carry the factor c_i(0), the mirrored
      init (head i + m/2 = head i with c negated) gives mirrored heads opposite displacements,
      and the second-order terms of f − f_lin cancel in pairs: what remains is third order,
      O(1/m) instead of Lemma 3's O(1/√m) (docs/validation.md, "Figure 1").
    * ``"feature"`` — along the gradient of the head's own output Σ_j σ(U_iᵀ a_i(X_j)), i.e. the
      ``"output"`` direction times sign(c_i(0)). Then the cross terms Δc_i·⟨∇σ_i, Δθ_i⟩ all
      have the sign of Δc_i and add up over heads: the point shows the O(1/√m) second-order
      gap that Lemma 3 bounds.

    ``chunk``: samples per autograd pass (the gradient of the sum is accumulated over chunks, so
    that a long sequence need not hold (n, m, T) at once); None = all samples in one pass.
    """
    if align not in BOUNDARY_ALIGNMENTS:
        raise ValueError(f"`align` must be one of {BOUNDARY_ALIGNMENTS}, got {align!r}")
    m = params0.width
    theta = Params(*(t.detach().requires_grad_(True) for t in params0))
    step = max(1, X.shape[0] if chunk is None else int(chunk))
    gU = gW = None
    for s in range(0, X.shape[0], step):
        _, cU, cW = torch.autograd.grad(forward(theta, X[s:s + step], q[s:s + step], act).sum(),
                                        tuple(theta))
        gU, gW = (cU, cW) if gU is None else (gU + cU, gW + cW)
    if align == "feature":
        sign = torch.sign(params0.c.detach())
        gU, gW = gU * sign.view(-1, 1), gW * sign.view(-1, 1, 1)
    root = math.sqrt(m)
    nU = gU.norm(dim=-1, keepdim=True)
    nW = gW.flatten(1).norm(dim=-1).view(-1, 1, 1)
    dU = torch.where(nU > 0, gU / nU.clamp_min(1e-300), torch.zeros_like(gU)) * rho[1] / root
    dW = torch.where(nW > 0, gW / nW.clamp_min(1e-300), torch.zeros_like(gW)) * rho[2] / root
    dc = torch.full_like(params0.c, rho[0] / root)
    return Params(dc, dU, dW)


def validate_lemma3(m: int, d: int, T: int, rho: object, *, delta: object = "0.05",
                    activation: str = "tanh", starts: int = DEFAULT_STARTS,
                    steps: int = DEFAULT_STEPS, seed: int = 0, samples: int = DEFAULT_SAMPLES,
                    query: str = "free", device: str | torch.device = "cpu",
                    dtype: torch.dtype | str = torch.float64, threads: int | None = 1,
                    keep_argmax: bool = False) -> list[dict]:
    """Lemma 3: sup |f − f_lin| against ε_lin.

    Records ``lemma3.eps_lin`` with methods
        ``paper_point``: the gradient-aligned boundary point of the paper's script on one seeded
        init and ``samples`` synthetic inputs (measured = max_j |f − f_lin|; ``mean`` = the
        script's metric); ``data``: projected ascent over θ ∈ Ω_ρ from that point, per sample,
        init and inputs fixed (a-posteriori bound applies); ``adversarial``: ascent over θ, U(0)
        in the event ball, W(0) (per head, not mirrored) and inputs, both signs, starting from
        random configurations and from the paper point at its worst sample.
    """
    check_args(m=m, d=d, T=T, starts=starts, steps=steps, seed=seed, activation=activation,
               samples=samples)
    dev, dt, act, ev, rho_t, rho_f = setup("lemma3", m=m, d=d, rho=rho, delta=delta,
                                           activation=activation, device=device,
                                           dtype=dtype)
    eps = ev["bound"]["eps_lin"]
    u_inf = ev["constants"]["u_inf"]
    settings = record_settings(m, d, T, rho_t, delta, act.name, starts, steps, seed, dev, dt)
    records = []
    with cpu_threads(dev, threads):
        params0, X, q, geo = init_and_data(m, d, T, samples, seed, dt, dev, act)
        post = a_posteriori(m=m, d=d, rho=rho, activation=activation, **geometry_args(geo))
        on_event = geo["u0_max"] <= u_inf
        disp = paper_boundary_point(params0, X, q, rho_f, act)
        theta = params0 + disp
        gap = (forward(theta, X, q, act) - linearized_output(params0, theta, X, q, act)).abs()
        records.append(data_record("lemma3.eps_lin", float(gap.max()), eps, post["eps_lin"],
                                   settings, geo, on_event, samples, method="paper_point",
                                   mean=float(gap.mean())))
        # data: per-sample ascent from the paper point (both signs), init and inputs fixed
        dspace = SearchSpace(m=m, d=d, T=T, rho=rho_f, u_inf=max(u_inf, geo["u0_max"]),
                             query="last", symmetric=True)
        S = 2 * samples
        paper_disp = {"dc": disp.c.expand(S, -1).clone(), "dU": disp.U.expand(S, -1, -1).clone(),
                      "dW": disp.W.expand(S, -1, -1, -1).clone()}
        Xs = X.repeat_interleave(2, dim=0).unsqueeze(1)             # sample j for signs +, −
        dcfg = fixed_init_config(dspace, params0, Xs, paper_disp)
        dres = search_linearization(dspace, act, starts=S, steps=steps, seed=seed, dtype=dt,
                                    device=dev, base=dcfg, free=THETA_VARS)
        records.append(data_record("lemma3.eps_lin", dres.value, eps, post["eps_lin"], settings,
                                   geo, on_event, samples))
        # adversarial: everything free; the paper point at its worst sample is an extra start
        space = SearchSpace(m=m, d=d, T=T, rho=rho_f, u_inf=u_inf, query=query)
        j = int(torch.argmax(gap))
        extra = _paper_start(space, params0, disp, X[j], q[j], u_inf, dt, dev)
        res = search_linearization(space, act, starts=starts, steps=steps, seed=seed, dtype=dt,
                                   device=dev, extra=extra)
        best = select(res.config, res.argmax)
        rec = record("lemma3.eps_lin", "adversarial", res.value, eps, settings, query=query)
        records.append(attach_argmax(rec, space, best, keep_argmax))
    return records


def _paper_start(space: SearchSpace, params0: Params, disp: Params, x: Tensor, q: Tensor,
                 u_inf: float, dt, dev) -> Config:
    """Two starts (signs +, −) at the paper point with one data sample, U(0) shrunk into the
    event ball."""
    U0 = params0.U * torch.clamp(u_inf / params0.U.norm(dim=-1, keepdim=True).clamp_min(1e-300),
                                 max=1.0)
    cfg = {"c0": params0.c, "U0": U0, "W0": params0.W, "dc": disp.c, "dU": disp.U,
           "dW": disp.W, "X": x.unsqueeze(0)}
    if space.query == "free":
        cfg["q"] = q.unsqueeze(0)
    one = {k: v.unsqueeze(0).to(device=dev, dtype=dt) for k, v in cfg.items()}
    return concat_configs([one, one])


def cell(settings: ValidationSettings, seed: int) -> list[dict]:
    """The ``validate lemma3`` cell of ``seed``: :func:`validate_lemma3` at the run's sizes and
    search effort (the catalog's falsifier of ``lemma3``)."""
    rho, _ = settings.radii_text()
    return validate_lemma3(settings.m, settings.d, settings.T, rho,
                           **settings.search_kwargs(seed))
