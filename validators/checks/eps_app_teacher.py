"""A teacher inside Lemma 5's class chosen to make the approximation error large (ε_app's falsifier
in the class, derivations.md §5, §5.1, §5.3).

Lemma 5 bounds, with probability ≥ 1 − δ over θ(0), max_j |f_lin(X_j; θ̄) − f*(X_j)| for
*every* transport map v = (v_c, v_u, v_w) of (c, U, W) with |v_c| ≤ ν_c, ‖v_u‖ ≤ ν_u,
‖v_w‖_F ≤ ν_w and every data set with token norms ≤ 1, ‖q‖ ≤ 1. The teacher that the training
checks use has a small variance, so it cannot test the concentration constants. This one makes
each head pair's term as large as the class allows at one input and gives it a fair sign:

* the input X₀: two tokens e₁ and −e₁, query q = e₁, so a = μe₁ with μ = tanh(W₁₁) (up to the
  sign convention of the logits), G U = (1 − μ²)U₁e₁ and z = Uᵀa = μU₁ depend on (U, W) only
  through (U₁, W₁₁);
* v = r·v* with r = sign(U₂) and v* the maximiser of the transported feature at X₀:
  v*_c = ν_c sign(σ(z)), v*_u = ν_u a/‖a‖, v*_w = ν_w (GU)qᵀ/(‖GU‖‖q‖), so each pair contributes
  ψ = r(ν_c|σ(z)| + ν_uσ'(z)‖a‖ + ν_wσ'(z)‖GU‖‖q‖) (σ' ≥ 0 for tanh and erf).

U₂ is independent of (U₁, W₁₁) and symmetric, so f*(X₀) = Eψ = 0 exactly (no Monte Carlo teacher),
and |f_lin(X₀; θ̄) − f*(X₀)| = |f_lin(X₀; θ̄)| is computed by the model's own
:func:`~boundcalc.validators.model.linearized_output` at θ̄ − θ(0) = (v_c/√m, c(0)v_u/√m,
c(0)v_w/√m) (eq. 11). Any data set that contains X₀ has max_j error at least this, so a rate of
seeds above ε_app larger than δ would falsify Lemma 5's constants.

Record ``tight.eps_app_teacher`` (:func:`signed_teacher_record`): measured = the largest error
over the seeds, bound = ε_app of the tight route, holds = (rate of seeds above ε_app) ≤ δ; the
(1 − δ)-quantile and its ratio beside it.
"""

from __future__ import annotations

import math

import torch

from ..model import Params, get_activation, head_features, init_params, linearized_output

__all__ = ["reference_input", "signed_teacher_error", "signed_teacher_record"]


def reference_input(d: int, dtype: torch.dtype = torch.float64) -> tuple[torch.Tensor, ...]:
    """(X₀, q₀): the tokens e₁, −e₁ (shape (1, 2, d)) and the query e₁ (shape (1, d)).

    >>> X, q = reference_input(3)
    >>> X.tolist(), q.tolist()
    ([[[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0]]], [[1.0, 0.0, 0.0]])
    """
    X = torch.zeros(1, 2, d, dtype=dtype)
    X[0, 0, 0], X[0, 1, 0] = 1.0, -1.0
    return X, X[:, 0].clone()


def signed_teacher_error(m: int, d: int, nu: tuple[float, float, float], seed: int,
                         activation: str = "tanh", dtype: torch.dtype = torch.float64) -> float:
    """|f_lin(X₀; θ̄) − f*(X₀)| for the signed teacher of the module docstring at the init of
    ``seed`` (f*(X₀) = 0 exactly). Needs d ≥ 2 (the sign r = sign(U₂)).

    >>> 0.0 <= signed_teacher_error(8, 2, (1.0, 1.0, 1.0), seed=0) <= 3.0
    True
    """
    if d < 2:
        raise ValueError(f"`d` must be at least 2 for the signed teacher, got {d}")
    act = get_activation(activation)
    p0 = init_params(m, d, seed=seed, dtype=dtype)
    X, q = reference_input(d, dtype)
    F = head_features(p0, X, q, act)
    a, gu, h = F.a[0], F.GU[0], F.h[0]
    r = torch.where(p0.U[:, 1] >= 0, 1.0, -1.0).to(dtype)

    def unit(v: torch.Tensor) -> torch.Tensor:
        norm = v.norm(dim=-1, keepdim=True)
        return torch.where(norm > 0, v / norm.clamp_min(1e-300), torch.zeros_like(v))

    nu_c, nu_u, nu_w = nu
    v_c = nu_c * torch.sign(h) * r
    v_u = nu_u * unit(a) * r[:, None]
    v_w = nu_w * torch.einsum("md,e->mde", unit(gu), q[0] / q[0].norm()) * r[:, None, None]
    root = math.sqrt(m)
    step = Params(v_c / root, p0.c[:, None] * v_u / root, p0.c[:, None, None] * v_w / root)
    return float(linearized_output(p0, p0 + step, X, q, act)[0].abs())


def signed_teacher_record(m: int, d: int, nu: tuple[float, float, float], eps_app: float, *,
                          delta: float = 0.05, seeds: int = 200, activation: str = "tanh",
                          n: int = 64, bound_scale: float = 1.0) -> dict:
    """The record ``tight.eps_app_teacher`` (module docstring) over ``seeds`` inits: measured =
    max error, bound = ``bound_scale``·ε_app (``bound_scale`` < 1 lowers it, to show that the
    rate can exceed δ), holds = rate above the bound ≤ δ. ``n`` is the data-set size ε_app was
    evaluated at (recorded).

    >>> rec = signed_teacher_record(8, 2, (1.0, 1.0, 1.0), 3.0, seeds=4)
    >>> rec["name"], rec["holds"], rec["violation_rate"]
    ('tight.eps_app_teacher', True, 0.0)
    """
    errors = torch.tensor([signed_teacher_error(m, d, nu, s, activation) for s in range(seeds)],
                          dtype=torch.float64)
    bound = float(bound_scale) * float(eps_app)
    rate = float((errors > bound).double().mean())
    quantile = float(torch.quantile(errors, 1 - float(delta)))
    return {"name": "tight.eps_app_teacher", "method": "signed_teacher",
            "measured": float(errors.max()), "bound": bound,
            "ratio": float(errors.max()) / bound if bound > 0 else math.inf,
            "holds": rate <= float(delta), "violation_rate": rate, "delta": float(delta),
            "seeds": int(seeds), "quantile_1_minus_delta": quantile,
            "quantile_ratio": quantile / bound if bound > 0 else math.inf,
            "mean_error": float(errors.mean()), "m": m, "d": d, "n": n, "nu": list(nu),
            "activation": activation, "route": "tight", "bound_scale": float(bound_scale)}
