"""Measurements that try to falsify Definition 1, Lemmas 2, 3, 6 and Remark 3 (docs/derivations.md).

Every a-priori bound below holds for every W(0), every U(0) in the event ball
max_i ‖U_i(0)‖ ≤ u_∞, every θ ∈ Ω_ρ and every input with token norms ≤ 1 and ‖q‖ ≤ 1, at any T.
Each ``validate_*`` function therefore runs an *adversarial* search over all of them
(:mod:`boundcalc.validators.adversarial`) and also measures the quantities on one actual seeded init
and synthetic data set, where the a-posteriori expressions of :mod:`boundcalc.theory.aposteriori`
(measured max_i ‖U_i(0)‖, token norms, query norms, g_max = x_max²; derivations.md §10) apply too.

Every function returns a list of records (plain dicts) with at least

    name, method, measured, bound, ratio = measured / bound, holds = measured <= bound,

the settings (m, d, T, rho_c, rho_u, rho_w, delta, activation, starts, steps, seed, device, dtype)
and method-specific fields. ``holds`` uses no tolerance. A record with ``holds=False`` carries the
maximising configuration in ``argmax`` (plain lists), to be reported as a counterexample.

A-priori bounds come from :func:`boundcalc.api.evaluate` (``'event'``, ``'lemma2'``, ``'lemma3'``,
``'lemma6'``), so the validators and the CLI read the same expressions.

Search structure. The model is separable across heads: ‖∇f‖² = (1/m)Σ_i φ_i, f − f_lin = Σ_i e_i,
f = Σ_pairs F_p and the Hessian is block-diagonal. After the main ascent each start's best head (or
pair, under the symmetric init) is copied into every head and a short polishing ascent follows —
a feasible configuration whose value is at least the separable mean, so the search needs one good
head instead of m simultaneously good heads.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import math
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import NamedTuple

import sympy as sp
import torch
from torch import Tensor
from torch.func import vmap

from boundcalc.api import evaluate
from boundcalc.params import validate

from . import data
from .adversarial import (
    DIRECTION_VARS,
    INIT_VARS,
    INPUT_VARS,
    THETA_VARS,
    Config,
    SearchResult,
    SearchSpace,
    ascend,
    batched_forward,
    batched_gradient_norm,
    batched_linearized_output,
    batched_loss_gradient,
    concat_configs,
    config_to_lists,
    head_lanczos,
    init_of,
    perturb,
    queries_of,
    random_configuration,
    rayleigh_quotients,
    select,
    theta_of,
)
from .device import resolve_device, resolve_dtype
from .model import (
    Activation,
    Params,
    forward,
    get_activation,
    head_features,
    init_params,
    last_token_query,
    linearized_output,
)

ALL_VARS = THETA_VARS + INIT_VARS + INPUT_VARS + ("y",)

#: Default search effort (CI-sized); the documented grid run uses stronger settings.
DEFAULT_STARTS = 16
DEFAULT_STEPS = 100
DEFAULT_SAMPLES = 8

#: The sequence lengths of Remark 3's table (issue 3).
REMARK3_T = (1, 4, 16, 64, 256, 1024)


# ----------------------------------------------------------------------------------------------
# arguments, bounds and records
# ----------------------------------------------------------------------------------------------

def _rho_text(rho: object) -> str:
    """ρ as the calculator's text: one number or three comma-separated numbers."""
    if isinstance(rho, (int, float)) and not isinstance(rho, bool):
        return repr(float(rho)) if isinstance(rho, float) else str(rho)
    if isinstance(rho, str):
        return rho
    try:
        parts = list(rho)  # type: ignore[arg-type]
    except TypeError:
        raise ValueError(f"`rho` must be a number or (rho_c, rho_u, rho_w), got {rho!r}") from None
    if len(parts) != 3:
        raise ValueError(f"`rho` must be a number or (rho_c, rho_u, rho_w), got {rho!r}")
    return ",".join(repr(float(p)) if isinstance(p, float) else str(p) for p in parts)


@functools.cache
def _evaluate_cached(statement: str, m: int, d: int, rho: str, delta: str, activation: str,
                     nu: str) -> dict:
    inputs = validate(m=m, d=d, rho=rho, delta=delta, activation=activation, nu=nu)
    return evaluate(statement, inputs).to_dict()


def a_priori(statement: str, *, m: int, d: int, rho: object, delta: object = "0.05",
             activation: str = "tanh", nu: object = "1") -> dict:
    """``evaluate(statement, validate(...)).to_dict()`` (cached): constants and bounds.

    Raises:
        boundcalc.params.InputError naming the flag for invalid m, d, ρ, δ, activation.
    """
    return _evaluate_cached(statement, int(m), int(d), _rho_text(rho), str(delta),
                            str(activation), str(nu))


_POSTERIORI_KEYS = ("lipschitz_L", "smoothness_beta", "eps_lin", "output_envelope_F",
                    "residual_envelope_B", "label_envelope_Y")


@functools.cache
def _a_posteriori_function():
    from boundcalc.theory.aposteriori import theorem1_a_posteriori

    constants = theorem1_a_posteriori().constants
    exprs = [constants[k] for k in _POSTERIORI_KEYS]
    syms = sorted(set().union(*(e.free_symbols for e in exprs)), key=lambda s: s.name)
    return syms, sp.lambdify(syms, exprs, modules="mpmath")


def a_posteriori(*, m: int, d: int, rho: object, activation: str, nu: object = "1",
                 u0_max: float, x_max: float, q_max: float, g_max: float) -> dict[str, float]:
    """The a-posteriori constants (theory/aposteriori.py) at measured init and input geometry.

    Returns L, β, ε_lin, F, B, Y and the loss-gradient envelope 2LB, with u_∞ → u0_max and
    (X, Q, Γ) → (x_max, q_max, g_max) (derivations.md §10).
    """
    import mpmath

    inputs = validate(m=m, d=d, rho=_rho_text(rho), activation=activation, nu=str(nu))
    from boundcalc.theory import symbols as S

    from boundcalc.api import symbol_values

    values = {k: v for k, v in symbol_values(inputs).items()}
    values.update({S.u0_max: u0_max, S.x_max: x_max, S.q_max: q_max, S.g_max: g_max})
    syms, func = _a_posteriori_function()
    with mpmath.workdps(20):
        out = func(*[mpmath.mpf(sp.N(values[s], 25)) if not isinstance(values[s], float)
                     else mpmath.mpf(values[s]) for s in syms])
    result = {k: float(v) for k, v in zip(_POSTERIORI_KEYS, out, strict=True)}
    result["loss_gradient_envelope"] = 2 * result["lipschitz_L"] * result["residual_envelope_B"]
    return result


@contextlib.contextmanager
def _threads(device: torch.device, threads: int | None) -> Iterator[None]:
    """Run with ``threads`` intra-op CPU threads (restored afterwards); None leaves torch's setting.

    The searches are many small kernels; on a busy 2-core machine a float64 softmax with 2 OpenMP
    threads was measured at ~8 ms per call against ~20 µs with 1 thread, so 1 is the default.
    """
    if threads is None or device.type != "cpu":
        yield
        return
    old = torch.get_num_threads()
    torch.set_num_threads(int(threads))
    try:
        yield
    finally:
        torch.set_num_threads(old)


class _Setup(NamedTuple):
    """What every adversarial validator starts from (:func:`_setup`)."""

    dev: torch.device
    dt: torch.dtype
    act: Activation
    ev: dict
    rho_t: tuple
    rho_f: tuple[float, float, float]


def _setup(statement: str, *, m: int, d: int, rho: object, delta: object, activation: str,
           device: str | torch.device, dtype: torch.dtype | str, **extra: object) -> _Setup:
    """Device, dtype, activation, the a-priori evaluation of ``statement`` and the radii (as the
    calculator parsed them, and as floats)."""
    ev = a_priori(statement, m=m, d=d, rho=rho, delta=delta, activation=activation, **extra)
    rho_t = validate(m=m, rho=_rho_text(rho)).rho
    return _Setup(resolve_device(device), resolve_dtype(dtype), get_activation(activation), ev,
                  rho_t, tuple(float(r) for r in rho_t))


def _settings(m, d, T, rho_t, delta, activation, starts, steps, seed, device, dtype) -> dict:
    return {
        "m": m, "d": d, "T": T, "rho_c": float(rho_t[0]), "rho_u": float(rho_t[1]),
        "rho_w": float(rho_t[2]), "delta": float(delta), "activation": activation,
        "starts": starts, "steps": steps, "seed": seed, "device": str(device),
        "dtype": str(dtype).replace("torch.", ""),
    }


def _record(name: str, method: str, measured: float, bound: float, settings: dict,
            **extra) -> dict:
    ratio = measured / bound if bound > 0 else (0.0 if measured <= 0 else math.inf)
    rec = {"name": name, "method": method, "measured": float(measured), "bound": float(bound),
           "ratio": float(ratio), "holds": bool(measured <= bound)}
    rec.update(settings)
    rec.update(extra)
    return rec


def _check_args(*, m, d, T, starts, steps, seed, activation, samples=1) -> None:
    for name, value, low in (("m", m, 2), ("d", d, 1), ("T", T, 1), ("starts", starts, 1),
                             ("steps", steps, 0), ("samples", samples, 1)):
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise ValueError(f"`{name}` must be an integer >= {low}, got {value!r}")
    if m % 2:
        raise ValueError(f"`m` must be even (symmetric init), got {m}")
    if not isinstance(seed, int):
        raise ValueError(f"`seed` must be an integer, got {seed!r}")
    get_activation(activation)


@functools.cache
def _sigma(activation: str) -> tuple[float, float, float]:
    from boundcalc.theory.activations import get_activation as theory_activation

    a = theory_activation(activation)
    return float(a.sigma0), float(a.sigma1), float(a.sigma2)


# ----------------------------------------------------------------------------------------------
# data: one seeded init and synthetic inputs, with their measured geometry
# ----------------------------------------------------------------------------------------------

def synthetic_inputs(n: int, T: int, d: int, *, seed: int, dtype: torch.dtype = torch.float64,
                     device: str | torch.device = "cpu") -> tuple[Tensor, Tensor]:
    """X (n, T, d) with i.i.d. N(0, I_d) tokens clipped to norm ≤ 1, q = x_T (paper-notes §4).

    Drawn on the CPU from a generator seeded with ``seed`` offset away from :func:`init_params`'s
    stream, then moved.
    """
    X = data.synthetic_inputs(n, T, d, seed=int(seed) * 7919 + 104729, dtype=dtype,
                              device=device)
    return X, last_token_query(X)


def measured_geometry(params0: Params, X: Tensor, q: Tensor, act: Activation) -> dict[str, float]:
    """What an actual init and data set are (derivations.md §10).

    u0_max = max_i ‖U_i(0)‖; x_max = max token norm; q_max = max query norm; g_max = x_max² (valid
    for every W since X J Xᵀ ⪯ Σ_t s_t x_t x_tᵀ); g_at_init = max ‖X J(z_i) Xᵀ‖_op at W(0)
    (reported, not used: W moves during training).
    """
    F = head_features(params0, X, q, act)
    G = torch.einsum("nmt,ntd,nte->nmde", F.s, X, X) - F.a.unsqueeze(-1) * F.a.unsqueeze(-2)
    x_max = float(X.norm(dim=-1).max())
    return {
        "u0_max": float(params0.U.norm(dim=-1).max()),
        "x_max": x_max,
        "q_max": float(q.norm(dim=-1).max()),
        "g_max": x_max**2,
        "g_at_init": float(torch.linalg.eigvalsh(G).amax()),
    }


def _data(m, d, T, samples, seed, dtype, device, act):
    params0 = init_params(m, d, seed=seed, dtype=dtype, device=device)
    X, q = synthetic_inputs(samples, T, d, seed=seed, dtype=dtype, device=device)
    return params0, X, q, measured_geometry(params0, X, q, act)


def fixed_init_config(space: SearchSpace, params0: Params, X: Tensor, displacement: Config
                      ) -> Config:
    """Starts that all share the actual init ``params0`` (symmetric space), with start s seeing
    inputs X[s] (X: (S, n, T, d)) and the displacement (dc, dU, dW) of ``displacement``."""
    if not space.symmetric or space.query != "last":
        raise ValueError("`space` must be symmetric with query='last' for a fixed actual init")
    S, half = X.shape[0], space.m // 2
    return {
        "c0": params0.c.expand(S, -1).clone(),
        "U0": params0.U[:half].expand(S, -1, -1).clone(),
        "W0": params0.W[:half].expand(S, -1, -1, -1).clone(),
        "dc": displacement["dc"], "dU": displacement["dU"], "dW": displacement["dW"],
        "X": X,
        **{k: displacement[k] for k in ("y", "vc", "vU", "vW") if k in displacement},
    }


# ----------------------------------------------------------------------------------------------
# per-head decompositions and head cloning
# ----------------------------------------------------------------------------------------------

def per_head_gradient_blocks(space: SearchSpace, cfg: Config,
                             act: Activation) -> tuple[Tensor, Tensor, Tensor]:
    """The c, U and W blocks of m·‖∇_θ f‖² per head (Lemma 1), each (S, n, m):
    σ(pre_i)², c_i²σ'(pre_i)²‖a_i‖², c_i²σ'(pre_i)²‖G_iU_i‖²‖q‖²."""
    theta, q = theta_of(space, cfg), queries_of(space, cfg)
    F = vmap(functools.partial(head_features, act=act))(theta, cfg["X"], q)
    q2 = (q * q).sum(-1, keepdim=True)
    lead = theta.c.unsqueeze(1) ** 2 * F.dh**2
    return F.h**2, lead * (F.a**2).sum(-1), lead * (F.GU**2).sum(-1) * q2


def per_head_gradient_sq(space: SearchSpace, cfg: Config, act: Activation) -> Tensor:
    """φ_i = σ² + c_i²σ'²(‖a_i‖² + ‖G_iU_i‖²‖q‖²): (S, n, m), ‖∇_θ f‖² = (1/m)Σ_i φ_i (Lemma 1)."""
    pc, pu, pw = per_head_gradient_blocks(space, cfg, act)
    return pc + pu + pw


def per_head_linearization_terms(space: SearchSpace, cfg: Config, act: Activation) -> Tensor:
    """e_i (S, n, m) with f − f_lin = Σ_i e_i (the paper's eq. 19 per head):

    e_i = m^{-1/2}[c_i h_i − c_i(0)h_i(0) − Δc_i h_i(0)
                   − c_i(0)σ'(0)(a_i(0)ᵀΔU_i + (G_iU_i)(0)ᵀΔW_i q)].
    """
    theta, theta0, q = theta_of(space, cfg), init_of(space, cfg), queries_of(space, cfg)
    hf = vmap(functools.partial(head_features, act=act))
    F, F0 = hf(theta, cfg["X"], q), hf(theta0, cfg["X"], q)
    dWq = torch.einsum("smab,snb->snma", cfg["dW"], q)
    inner = (F0.a * cfg["dU"].unsqueeze(1)).sum(-1) + (F0.GU * dWq).sum(-1)
    c, c0 = theta.c.unsqueeze(1), theta0.c.unsqueeze(1)
    lin = c0 * F0.h + cfg["dc"].unsqueeze(1) * F0.h + c0 * F0.dh * inner
    return (c * F.h - lin) / math.sqrt(space.m)


def clone_best_head(space: SearchSpace, cfg: Config, scores: Tensor) -> Config:
    """Copy each start's best head (largest ``scores`` (S, m'), m' = m or m/2 pairs) into all heads.

    Non-symmetric: head j's (c(0), U(0), W(0), Δθ) and direction replace every head. Symmetric:
    pair (j, j + m/2) replaces every pair, so c(0) stays (c, −c) and f(θ(0)) ≡ 0.
    """
    S, m = cfg["dc"].shape
    best = scores.argmax(dim=1)                                   # (S,)
    half = m // 2
    out = {k: v.detach().clone() for k, v in cfg.items()}
    ar = torch.arange(S, device=best.device)

    def spread(t: Tensor, idx: Tensor, heads: int) -> Tensor:
        picked = t[ar, idx]                                       # (S, …)
        return picked.unsqueeze(1).expand((S, heads) + picked.shape[1:]).clone()

    if space.symmetric:
        for key in ("dc", "dU", "dW", "vc", "vU", "vW"):
            if key in cfg:
                first = spread(cfg[key], best, half)
                second = spread(cfg[key], best + half, half)
                out[key] = torch.cat([first, second], dim=1)
        out["c0"] = torch.cat([spread(cfg["c0"], best, half),
                               spread(cfg["c0"], best + half, half)], dim=1)
        out["U0"] = spread(cfg["U0"], best, half)
        out["W0"] = spread(cfg["W0"], best, half)
    else:
        for key in ("c0", "dc", "dU", "dW", "U0", "W0", "vc", "vU", "vW"):
            if key in cfg:
                out[key] = spread(cfg[key], best, m)
    return out


def _signs(starts: int, dtype, device) -> Tensor:
    """+1, −1, +1, … per start (both signs of a two-sided quantity)."""
    s = torch.ones(starts, dtype=dtype, device=device)
    s[1::2] = -1.0
    return s


# ----------------------------------------------------------------------------------------------
# hand-built worst case for L and the true supremum of ‖∇f‖
# ----------------------------------------------------------------------------------------------

def _profile_max(activation: str, weight: float, x_limit: float | None) -> tuple[float, float]:
    """(max, argmax) over x ∈ [−x_limit, x_limit] (all of R if None) of σ(x)² + weight·σ'(x)²."""
    act = get_activation(activation)
    lim = 30.0 if x_limit is None else min(float(x_limit), 30.0)
    x = torch.linspace(-lim, lim, 600_001, dtype=torch.float64)
    psi = act.fn(x) ** 2 + weight * act.d1(x) ** 2
    i = int(torch.argmax(psi))
    lo, hi = x[max(i - 1, 0)], x[min(i + 1, x.numel() - 1)]
    fine = torch.linspace(float(lo), float(hi), 20_001, dtype=torch.float64)
    psi_f = act.fn(fine) ** 2 + weight * act.d1(fine) ** 2
    j = int(torch.argmax(psi_f))
    return float(psi_f[j]), float(fine[j])


def lipschitz_supremum(*, m: int, d: int, T: int, rho: object, delta: object = "0.05",
                       activation: str = "tanh") -> dict[str, float]:
    """The true sup of ‖∇_θ f(X; θ)‖ over the whole adversarial set, and a configuration attaining
    it.

    Per head (Lemma 1) φ = σ(p)² + c²σ'(p)²(‖a‖² + ‖GU‖²‖q‖²) with p = Uᵀa. The softmax covariance
    G is PSD with ‖G‖_op ≤ tr G = Σ_t s_t‖x_t‖² − ‖a‖² ≤ 1 − ‖a‖², so with x = ‖a‖² ∈ [0, 1]
    ‖a‖² + ‖GU‖² ≤ x + u²(1 − x)² ≤ max(1, u²) (convex in x). Hence, with |c| ≤ c_max,
    ‖U‖ ≤ u_max,

        sup ‖∇f‖² ≤ sup_p [σ(p)² + c_max²·K·σ'(p)²],  K = max(1, u_max²) (T ≥ 2), K = 1 (T = 1),

    where for T = 1 (G = 0, a = x_1) p ranges over [−u_max, u_max]. Attained (every head alike):
    T ≥ 2: tokens ±e₁ with softmax mass ½ on each sign (a = 0, G = e₁e₁ᵀ), U = u_max e₁,
    |c| = c_max, value c_max·σ₁·u_max, equal to the upper bound when the sup over p sits at p = 0
    (tanh always; erf whenever c_max²u_max²·2/π is large enough; :func:`_profile_max` checks it
    numerically).
    T = 1: x_1 = e₁, Uᵀe₁ = p*, |c| = c_max.

    Returns:
        dict with ``upper`` (the supremum bound above), ``attained`` (value of the hand-built
        configuration of :func:`lipschitz_worst_case`), ``pre`` (its p*), ``c_max``, ``u_max``,
        ``L``.
    """
    ev = a_priori("lemma2", m=m, d=d, rho=rho, delta=delta, activation=activation)
    c_max, u_max = ev["constants"]["c_max"], ev["constants"]["u_max"]
    s1 = _sigma(activation)[1]
    if T >= 2:
        upper, _ = _profile_max(activation, c_max**2 * max(1.0, u_max**2), None)
        attained = (c_max * s1 * max(1.0, u_max)) ** 2   # u_max ≥ √d ≥ 1 in practice
        pre = 0.0
    else:
        upper, pre = _profile_max(activation, c_max**2, u_max)
        act = get_activation(activation)
        p = torch.tensor(pre, dtype=torch.float64)
        attained = float(act.fn(p) ** 2 + c_max**2 * act.d1(p) ** 2)
    return {"upper": math.sqrt(upper), "attained": math.sqrt(attained), "pre": pre,
            "c_max": c_max, "u_max": u_max, "L": ev["bound"]["lipschitz_L"]}


def lipschitz_worst_case(space: SearchSpace, *, pre: float = 0.0,
                         dtype: torch.dtype = torch.float64,
                         device: str | torch.device = "cpu") -> Config:
    """The hand-built worst case of :func:`lipschitz_supremum` as a one-start configuration.

    T ≥ 2: the last ⌈T/2⌉ tokens are e₁, the others −e₁, q = e₁ and W = ω e₁e₁ᵀ with
    ω = ½ log(#(−e₁)/#(e₁)), so the softmax puts mass ½ on each sign: a = 0, G = e₁e₁ᵀ (‖G‖ = 1).
    U(0) = u_∞e₁ (on the event sphere), ΔU = (ρ_u/√m)e₁, Δc_i = c_i(0)ρ_c/√m (|c_i| = c_max),
    ΔW = 0. T = 1: x_1 = q = e₁, U = p*e₁ + √(u_max² − p*²)e₂ (d ≥ 2; U = p* when d = 1).
    """
    m, d, T = space.m, space.d, space.T
    rc, ru, _ = space.radii
    u_max = space.u_inf + ru
    e1 = torch.zeros(d, dtype=torch.float64)
    e1[0] = 1.0
    signs = torch.ones(m, dtype=torch.float64)
    signs[m // 2:] = -1.0
    if T >= 2:
        k = (T + 1) // 2
        X = torch.cat([-e1.expand(T - k, d), e1.expand(k, d)])
        omega = 0.5 * math.log((T - k) / k)
        U = u_max * e1
    else:
        X = e1.view(1, d)
        omega = 0.0
        if d >= 2:
            U = pre * e1
            U[1] = math.sqrt(max(u_max**2 - pre**2, 0.0))
        else:
            U = torch.tensor([pre], dtype=torch.float64)
    W0 = omega * torch.outer(e1, e1)
    mh = space.init_heads
    cfg = {
        "c0": signs.view(1, m),
        "U0": (U * (space.u_inf / u_max)).expand(1, mh, d).clone(),
        "W0": W0.expand(1, mh, d, d).clone(),
        "dc": (signs * rc).view(1, m),
        "dU": (U * (ru / u_max)).expand(1, m, d).clone(),
        "dW": torch.zeros(1, m, d, d, dtype=torch.float64),
        "X": X.expand(1, space.samples, T, d).clone(),
    }
    if space.query == "free":
        cfg["q"] = e1.expand(1, space.samples, d).clone()
    return {k: v.to(device=device, dtype=dtype) for k, v in cfg.items()}


# ----------------------------------------------------------------------------------------------
# searches
# ----------------------------------------------------------------------------------------------

def _lipschitz_objective(space: SearchSpace, act: Activation):
    def objective(cfg: Config) -> Tensor:
        return batched_gradient_norm(theta_of(space, cfg), cfg["X"], queries_of(space, cfg), act)
    return objective


def _merge(a: SearchResult, b: SearchResult) -> SearchResult:
    """Per start slot, the better of two results over the same number of slots."""
    better = b.best > a.best
    cfg = {k: torch.where(better.view((-1,) + (1,) * (v.dim() - 1)), b.config[k], v)
           for k, v in a.config.items()}
    return SearchResult(torch.maximum(a.best, b.best), cfg, a.trace + b.trace)


def _elite_sources(best: Tensor, fraction: float = 0.25) -> Tensor:
    """For every slot, an elite slot of the same parity (signs alternate by parity)."""
    S = best.shape[0]
    src = torch.arange(S, device=best.device)
    for parity in (0, 1):
        slots = torch.arange(parity, S, 2, device=best.device)
        if slots.numel() == 0:
            continue
        n_elite = max(1, math.ceil(fraction * slots.numel()))
        elite = slots[torch.argsort(best[slots], descending=True)[:n_elite]]
        src[slots] = elite[torch.arange(slots.numel(), device=best.device) % n_elite]
    return src


def _lift_length(T: int) -> int | None:
    """The largest divisor T' ∈ {2, 3, 4} of T when T > 4 (None: no lifting)."""
    if T <= 4:
        return None
    for short in (4, 3, 2):
        if T % short == 0:
            return short
    return None


def drive(space: SearchSpace, objective, cfg: Config, *, free: Sequence[str], steps: int,
          seed: int, head_scores=None, restarts: int = 1, surrogate=None,
          lift: bool = True, method: str = "adam", lr: float = 0.1,
          polish_method: str = "normalized", polish_lr: float = 0.03,
          keep: int = 0) -> SearchResult:
    """The search schedule used by every measurement.

    0. if the tokens are free and T > 4 (``lift``): the whole schedule at a short length T' | T,
       whose best points, tokens tiled to length T, replace half of the starts (never the first
       ``keep`` slots: hand-built and paper starts);
    1. projected ascent from ``cfg`` (``steps`` steps, ``method``: Adam or normalised steps) on
       ``surrogate`` if given (the value of ``objective`` is tracked), else on ``objective``;
    2. if ``head_scores`` (cfg ↦ (S, m') per-head or per-pair scores) is given: copy each start's
       best head into every head (:func:`clone_best_head`) and polish (steps/2 steps of
       ``polish_method``, rate ``polish_lr``);
    3. ``restarts`` times: refill every slot with a perturbed copy of an elite slot (top quarter,
       same sign parity) and ascend again (steps/2), then clone and polish again.
    Every slot keeps its best feasible point over all phases.
    """
    main = surrogate if surrogate is not None else objective
    measure = objective if surrogate is not None else None
    short = _lift_length(space.T) if lift and "X" in free and steps > 0 else None
    if short is not None:
        # search at a short length first, then tile every token T/T' times: duplicated tokens
        # keep the softmax geometry exactly (same a, G, f, f_lin, Hessian), so each lifted start
        # begins at the short search's value; every other pair of slots stays random.
        small = {k: (v[:, :, :short].clone() if k == "X" else v) for k, v in cfg.items()}
        sres = drive(replace(space, T=short), objective, small, free=free, steps=steps,
                     seed=seed, head_scores=head_scores, restarts=restarts,
                     surrogate=surrogate, lift=False, method=method, lr=lr,
                     polish_method=polish_method, polish_lr=polish_lr)
        lifted = sres.config["X"].repeat_interleave(space.T // short, dim=2)
        slots = torch.arange(cfg["X"].shape[0], device=lifted.device)
        use = (((slots // 2) % 2 == 0) & (slots >= keep)).view(-1, 1, 1, 1)
        cfg = {k: (torch.where(use.view((-1,) + (1,) * (v.dim() - 1)), sres.config[k], v)
                   if k != "X" else torch.where(use, lifted, v)) for k, v in cfg.items()}
    res = ascend(space, cfg, main, free=free, steps=steps, measure=measure, method=method, lr=lr)
    if steps == 0:
        return res
    polish = max(steps // 2, 10)
    theta_free = bool({"dc", "dU", "dW"} & set(free))

    def clone_polish(r: SearchResult) -> SearchResult:
        if head_scores is None or not theta_free or space.m == 2 and space.symmetric:
            return r
        with torch.no_grad():
            cloned = clone_best_head(space, r.config, head_scores(r.config))
        return _merge(r, ascend(space, cloned, objective, free=free, steps=polish,
                                lr=polish_lr, method=polish_method))

    res = clone_polish(res)
    S = res.best.shape[0]
    for k in range(restarts if S >= 4 else 0):
        src = _elite_sources(res.best)
        base = {key: v[src].detach().clone() for key, v in res.config.items()}
        moved = perturb(space, base, scale=0.5, seed=seed + 7919 * (k + 1), keys=free)
        again = clone_polish(ascend(space, moved, main, free=free, steps=max(steps // 2, 1),
                                    measure=measure, method=method, lr=lr))
        res = _merge(res, again)
    return res


def search_lipschitz(space: SearchSpace, act: Activation, *, starts: int, steps: int, seed: int,
                     dtype: torch.dtype, device: torch.device,
                     extra: Config | None = None,
                     free: Sequence[str] = ALL_VARS, restarts: int = 1) -> SearchResult:
    """Projected ascent on max_j ‖∇_θ f(X_j; θ)‖ (closed form, Lemma 1) from random starts
    (plus ``extra`` starts) with the :func:`drive` schedule (best-head cloning by φ_i)."""
    cfg = random_configuration(space, starts, seed=seed, dtype=dtype, device=device)
    if extra is not None:
        cfg = concat_configs([extra, cfg])

    def scores(c: Config) -> Tensor:
        sc = per_head_gradient_sq(space, c, act).amax(dim=1)
        if space.symmetric:   # clone_best_head picks pairs (i, i + m/2) under the symmetric init
            half = space.m // 2
            sc = sc[:, :half] + sc[:, half:]
        return sc

    # block-weighted surrogates: start s ascends on (1/m)Σ_i (w_c φ_c + w_U φ_U + w_W φ_W) with
    # (w_c, w_U, w_W) cycling over full / W-block / (U, W)-blocks: the saturated plateau σ² → σ₀²
    # of the c block is a local maximum that traps plain ascent on the full norm.
    S = cfg["dc"].shape[0]
    table = torch.tensor([[1.0, 1.0, 1.0], [0.0, 0.0, 1.0], [0.0, 1.0, 1.0]], dtype=dtype,
                         device=device)
    weights = table[torch.arange(S, device=device) % 3]                 # (S, 3)

    def surrogate(c: Config) -> Tensor:
        pc, pu, pw = per_head_gradient_blocks(space, c, act)
        w = weights.view(S, 3, 1, 1)
        mix = w[:, 0] * pc + w[:, 1] * pu + w[:, 2] * pw
        return torch.sqrt(mix.mean(-1).clamp_min(1e-300))

    return drive(space, _lipschitz_objective(space, act), cfg, free=free, steps=steps,
                 seed=seed, head_scores=scores, restarts=restarts, surrogate=surrogate,
                 method="normalized", keep=0 if extra is None else extra["dc"].shape[0])


def autograd_gradient_norm(space: SearchSpace, cfg: Config, act: Activation) -> Tensor:
    """‖∇_θ f(X_sj; θ_s)‖ by autograd (independent of the closed form): (S, n)."""
    theta = Params(*(t.detach().requires_grad_(True) for t in theta_of(space, cfg)))
    X, q = cfg["X"].detach(), queries_of(space, cfg).detach()
    out = batched_forward(theta, X, q, act)                       # (S, n)
    norms = []
    for j in range(out.shape[1]):  # samples per start (1 in the searches)
        g = torch.autograd.grad(out[:, j].sum(), tuple(theta), retain_graph=True)
        norms.append(torch.sqrt(sum((t.flatten(1) ** 2).sum(1) for t in g)))
    return torch.stack(norms, dim=1)


def _rayleigh_objective(space: SearchSpace, act: Activation, sign: Tensor):
    def objective(cfg: Config) -> Tensor:
        v = Params(cfg["vc"], cfg["vU"], cfg["vW"])
        r = rayleigh_quotients(theta_of(space, cfg), cfg["X"], queries_of(space, cfg), v, act)
        return sign.unsqueeze(1) * r
    return objective


def search_smoothness(space: SearchSpace, act: Activation, *, starts: int, steps: int, seed: int,
                      dtype: torch.dtype, device: torch.device, lanczos: int = 32,
                      base: Config | None = None,
                      free: Sequence[str] = ALL_VARS + DIRECTION_VARS, restarts: int = 1
                      ) -> tuple[SearchResult, Tensor]:
    """Joint projected ascent on ±vᵢᵀ∇²_{θ_i} f vᵢ over (θ, U(0), W(0), X, q, unit v per head),
    then a per-head Lanczos (started at the best v) at each start's best point.

    Returns (search result, spectral (S,)): max over heads of max(|λ_min|, |λ_max|) of the Ritz
    values, each a lower bound of the true ‖∇²_θ f(X_s; θ_s)‖_op.
    """
    if not space.direction or space.samples != 1:
        raise ValueError("`space` needs direction=True and samples=1 for Hessian searches")
    cfg = base if base is not None else random_configuration(space, starts, seed=seed,
                                                             dtype=dtype, device=device)
    S = cfg["dc"].shape[0]
    sign = _signs(S, dtype, device)
    result = drive(space, _rayleigh_objective(space, act, sign), cfg, free=free, steps=steps,
                   seed=seed, restarts=restarts)
    best = result.config
    start = torch.cat([best["vc"].unsqueeze(-1), best["vU"], best["vW"].flatten(-2)], dim=-1)
    lz = head_lanczos(theta_of(space, best), best["X"], queries_of(space, best), act,
                      k=lanczos, seed=seed, start=start)
    return result, lz.spectral.amax(dim=1)


def _linearization_objective(space: SearchSpace, act: Activation, sign: Tensor):
    def objective(cfg: Config) -> Tensor:
        theta, theta0 = theta_of(space, cfg), init_of(space, cfg)
        X, q = cfg["X"], queries_of(space, cfg)
        gap = batched_forward(theta, X, q, act) - batched_linearized_output(theta0, theta, X, q,
                                                                            act)
        return sign.unsqueeze(1) * gap
    return objective


def search_linearization(space: SearchSpace, act: Activation, *, starts: int, steps: int,
                         seed: int, dtype: torch.dtype, device: torch.device,
                         extra: Config | None = None, base: Config | None = None,
                         free: Sequence[str] = ALL_VARS, restarts: int = 1) -> SearchResult:
    """Projected ascent on ±(f − f_lin) (both signs, alternating over starts; f_lin in closed form,
    Definition 3) with the :func:`drive` schedule (cloning by the signed per-head terms e_i)."""
    cfg = base if base is not None else random_configuration(space, starts, seed=seed,
                                                             dtype=dtype, device=device)
    if extra is not None:
        cfg = concat_configs([extra, cfg])
    sign = _signs(cfg["dc"].shape[0], dtype, device)

    def scores(c: Config) -> Tensor:
        terms = per_head_linearization_terms(space, c, act)               # (S, n, m)
        sc = (sign.view(-1, 1, 1) * terms).amax(dim=1)
        if space.symmetric:
            half = space.m // 2
            sc = sc[:, :half] + sc[:, half:]
        return sc

    return drive(space, _linearization_objective(space, act, sign), cfg, free=free, steps=steps,
                 seed=seed, head_scores=scores, restarts=restarts,
                 keep=0 if extra is None else extra["dc"].shape[0])


def _output_objective(space: SearchSpace, act: Activation, sign: Tensor):
    def objective(cfg: Config) -> Tensor:
        f = batched_forward(theta_of(space, cfg), cfg["X"], queries_of(space, cfg), act)
        return sign.unsqueeze(1) * f
    return objective


def search_output(space: SearchSpace, act: Activation, *, starts: int, steps: int, seed: int,
                  dtype: torch.dtype, device: torch.device, base: Config | None = None,
                  free: Sequence[str] = ALL_VARS, restarts: int = 1) -> SearchResult:
    """Projected ascent on ±f(X; θ) under the symmetric init (f(θ(0)) ≡ 0, Lemma 6) with the
    :func:`drive` schedule (cloning by pairs)."""
    if not space.symmetric:
        raise ValueError("`space` must be symmetric: Lemma 6's envelope uses f(theta(0)) = 0")
    cfg = base if base is not None else random_configuration(space, starts, seed=seed,
                                                             dtype=dtype, device=device)
    sign = _signs(cfg["dc"].shape[0], dtype, device)
    half = space.m // 2

    def scores(c: Config) -> Tensor:
        theta, q = theta_of(space, c), queries_of(space, c)
        F = vmap(functools.partial(head_features, act=act))(theta, c["X"], q)
        terms = theta.c.unsqueeze(1) * F.h                                 # (S, n, m)
        return (sign.view(-1, 1, 1) * (terms[..., :half] + terms[..., half:])).amax(dim=1)

    return drive(space, _output_objective(space, act, sign), cfg, free=free, steps=steps,
                 seed=seed, head_scores=scores, restarts=restarts)


def _loss_gradient_norm(space: SearchSpace, cfg: Config, act: Activation) -> Tensor:
    _, grad, _ = batched_loss_gradient(theta_of(space, cfg), cfg["X"], queries_of(space, cfg),
                                       cfg["y"], act)
    return torch.sqrt(sum((g.flatten(1) ** 2).sum(1) for g in grad))    # (S,)


def search_loss_gradient(space: SearchSpace, act: Activation, *, starts: int, steps: int,
                         seed: int, dtype: torch.dtype, device: torch.device,
                         restarts: int = 1) -> SearchResult:
    """Projected ascent on ‖∇R̂(θ)‖ (closed form, Lemma 1) over θ, the symmetric init, the inputs
    and labels |y| ≤ Y."""
    if not space.symmetric or space.label_max is None:
        raise ValueError("`space` must be symmetric with label_max set for the loss gradient")
    cfg = random_configuration(space, starts, seed=seed, dtype=dtype, device=device)
    return drive(space, lambda c: _loss_gradient_norm(space, c, act).unsqueeze(1), cfg,
                 free=ALL_VARS, steps=steps, seed=seed, restarts=restarts)


# ----------------------------------------------------------------------------------------------
# Definition 1
# ----------------------------------------------------------------------------------------------

def validate_event(m: int, d: int, *, delta: object = "0.05", seeds: int = 200, seed: int = 0,
                   device: str | torch.device = "cpu",
                   dtype: torch.dtype | str = torch.float64) -> list[dict]:
    """Definition 1: max_i ‖U_i(0)‖ against u_∞ over ``seeds`` inits (seeds seed, …, seed+seeds−1).

    Under the symmetric init only U_1(0), …, U_{m/2}(0) are independent (the others are copies).
    Records: ``event.violation_rate`` (fraction of seeds with max_i ‖U_i(0)‖ > u_∞, bound δ; also
    the exact rate 1 − P(χ_d ≤ u_∞)^{m/2}) and ``event.u_inf`` (largest max_i ‖U_i(0)‖ seen vs u_∞).
    """
    _check_args(m=m, d=d, T=1, starts=1, steps=0, seed=seed, activation="tanh", samples=seeds)
    dev, dt = resolve_device(device), resolve_dtype(dtype)
    ev = a_priori("event", m=m, d=d, rho="1", delta=delta)
    u_inf = ev["bound"]["u_inf"]
    norms = torch.stack([init_params(m, d, seed=s, dtype=dt, device=dev).U.norm(dim=-1).max()
                         for s in range(seed, seed + seeds)])
    rate = float((norms > u_inf).double().mean())
    chi_cdf = torch.special.gammainc(torch.tensor(d / 2.0, dtype=torch.float64),
                                     torch.tensor(u_inf**2 / 2.0, dtype=torch.float64))
    exact = float(1.0 - chi_cdf ** (m // 2))
    settings = _settings(m, d, None, ("nan",) * 3, delta, None, None, None, seed, dev, dt)
    settings["seeds"] = seeds
    return [
        _record("event.violation_rate", "seeds", rate, float(delta), settings,
                exact_rate=exact, u_inf=u_inf),
        _record("event.u_inf", "seeds", float(norms.max()), u_inf, settings,
                median_max_norm=float(norms.median())),
    ]


# ----------------------------------------------------------------------------------------------
# Lemma 2
# ----------------------------------------------------------------------------------------------

def validate_lemma2(m: int, d: int, T: int, rho: object, *, delta: object = "0.05",
                    activation: str = "tanh", starts: int = DEFAULT_STARTS,
                    steps: int = DEFAULT_STEPS, seed: int = 0, samples: int = DEFAULT_SAMPLES,
                    query: str = "free", lanczos: int = 32, device: str | torch.device = "cpu",
                    dtype: torch.dtype | str = torch.float64, threads: int | None = 1,
                    keep_argmax: bool = False) -> list[dict]:
    """Lemma 2: L and β against adversarial and data measurements.

    Records:
        ``lemma2.lipschitz_L``  method ``adversarial``: max ‖∇_θ f(X; θ)‖ (closed form, Lemma 1;
        re-checked by autograd at the maximiser, ``measured_autograd``) by projected ascent over
        θ ∈ Ω_ρ, U(0) in the event ball, W(0), tokens ‖x_t‖ ≤ 1 and ‖q‖ ≤ 1 (``query='free'``) or
        q = x_T, from ``starts`` random starts plus the hand-built worst case; method
        ``hand_built``: the configuration of :func:`lipschitz_worst_case` alone, with the true
        supremum (:func:`lipschitz_supremum`) in ``true_max``; method ``data``: one seeded init and
        ``samples`` synthetic inputs, ascent over θ only, with the a-posteriori L.
        ``lemma2.smoothness_beta``  methods ``adversarial`` and ``data``: the largest |eigenvalue|
        of ∇²_θ f(X; θ) by Hessian-vector products (per-head Lanczos of dimension ``lanczos``)
        at the maximisers of the joint Rayleigh-quotient ascent.
    """
    _check_args(m=m, d=d, T=T, starts=starts, steps=steps, seed=seed, activation=activation,
                samples=samples)
    dev, dt, act, ev, rho_t, rho_f = _setup("lemma2", m=m, d=d, rho=rho, delta=delta,
                                             activation=activation, device=device,
                                             dtype=dtype)
    L, beta = ev["bound"]["lipschitz_L"], ev["bound"]["smoothness_beta"]
    u_inf = ev["constants"]["u_inf"]
    settings = _settings(m, d, T, rho_t, delta, act.name, starts, steps, seed, dev, dt)
    records = []
    with _threads(dev, threads):
        # --- L, adversarial -------------------------------------------------------------------
        space = SearchSpace(m=m, d=d, T=T, rho=rho_f, u_inf=u_inf, query=query)
        sup = lipschitz_supremum(m=m, d=d, T=T, rho=rho, delta=delta, activation=activation)
        hand = lipschitz_worst_case(space, pre=sup["pre"], dtype=dt, device=dev)
        res = search_lipschitz(space, act, starts=starts, steps=steps, seed=seed, dtype=dt,
                               device=dev, extra=hand)
        best = select(res.config, res.argmax)
        auto = float(autograd_gradient_norm(space, best, act).max())
        rec = _record("lemma2.lipschitz_L", "adversarial", res.value, L, settings,
                      measured_autograd=auto, true_max=sup["upper"], query=query)
        records.append(_attach(rec, space, best, keep_argmax))
        hand_value = float(batched_gradient_norm(theta_of(space, hand), hand["X"],
                                                 queries_of(space, hand), act).max())
        records.append(_record("lemma2.lipschitz_L", "hand_built", hand_value, L, settings,
                               true_max=sup["upper"], hand_built_formula=sup["attained"],
                               query=query))
        # --- β, adversarial -------------------------------------------------------------------
        bspace = SearchSpace(m=m, d=d, T=T, rho=rho_f, u_inf=u_inf, query=query, direction=True)
        bres, spectral = search_smoothness(bspace, act, starts=starts, steps=steps, seed=seed + 1,
                                           dtype=dt, device=dev, lanczos=lanczos)
        i = int(torch.argmax(spectral))
        rec = _record("lemma2.smoothness_beta", "adversarial", float(spectral[i]), beta,
                      settings, rayleigh_max=bres.value, query=query, lanczos=lanczos)
        records.append(_attach(rec, bspace, select(bres.config, i), keep_argmax))
        # --- data: actual init, synthetic inputs ----------------------------------------------
        params0, X, q, geo = _data(m, d, T, samples, seed, dt, dev, act)
        post = a_posteriori(m=m, d=d, rho=rho, activation=activation, **_geo_args(geo))
        on_event = geo["u0_max"] <= u_inf
        dspace = SearchSpace(m=m, d=d, T=T, rho=rho_f, u_inf=max(u_inf, geo["u0_max"]),
                             query="last", symmetric=True)
        disp = random_configuration(dspace, samples, seed=seed + 2, dtype=dt, device=dev)
        dcfg = fixed_init_config(dspace, params0, X.unsqueeze(1), disp)
        dres = search_lipschitz_fixed(dspace, act, dcfg, steps)
        records.append(_data_record("lemma2.lipschitz_L", dres.value, L, post["lipschitz_L"],
                                    settings, geo, on_event, samples))
        bdspace = SearchSpace(m=m, d=d, T=T, rho=rho_f, u_inf=max(u_inf, geo["u0_max"]),
                              query="last", symmetric=True, direction=True)
        bdisp = random_configuration(bdspace, samples, seed=seed + 3, dtype=dt, device=dev)
        bdcfg = fixed_init_config(bdspace, params0, X.unsqueeze(1), bdisp)
        _, dspec = search_smoothness(bdspace, act, starts=samples, steps=steps, seed=seed + 3,
                                     dtype=dt, device=dev, lanczos=lanczos, base=bdcfg,
                                     free=THETA_VARS + DIRECTION_VARS)
        records.append(_data_record("lemma2.smoothness_beta", float(dspec.max()), beta,
                                    post["smoothness_beta"], settings, geo, on_event, samples))
    return records


def search_lipschitz_fixed(space: SearchSpace, act: Activation, cfg: Config,
                           steps: int, seed: int = 0) -> SearchResult:
    """Ascent on ‖∇f‖ over θ only (init and inputs fixed), :func:`drive` schedule."""
    return drive(space, _lipschitz_objective(space, act), cfg, free=THETA_VARS, steps=steps,
                 seed=seed)


def _geo_args(geo: dict) -> dict:
    return {k: geo[k] for k in ("u0_max", "x_max", "q_max", "g_max")}


def _data_record(name: str, measured: float, bound: float, post_bound: float, settings: dict,
                 geo: dict, on_event: bool, samples: int, method: str = "data", **extra) -> dict:
    rec = _record(name, method, measured, bound, settings, a_posteriori_bound=post_bound,
                  ratio_a_posteriori=measured / post_bound if post_bound > 0 else math.inf,
                  holds_a_posteriori=bool(measured <= post_bound), on_event=bool(on_event),
                  samples=samples, **geo, **extra)
    if not on_event:
        # the a-priori bound is only guaranteed on the event E_U: not a counterexample
        rec["holds"] = True
        rec["note"] = "init outside the event E_U: the a-priori bound is not guaranteed"
    return rec


def _attach(rec: dict, space: SearchSpace, cfg: Config, keep: bool) -> dict:
    if keep or not rec["holds"]:
        rec["argmax"] = config_to_lists(space, cfg)
    return rec


# ----------------------------------------------------------------------------------------------
# Lemma 3
# ----------------------------------------------------------------------------------------------

BOUNDARY_ALIGNMENTS = ("output", "feature")


def paper_boundary_point(params0: Params, X: Tensor, q: Tensor, rho: tuple[float, float, float],
                         act: Activation, align: str = "output") -> Params:
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
    """
    if align not in BOUNDARY_ALIGNMENTS:
        raise ValueError(f"`align` must be one of {BOUNDARY_ALIGNMENTS}, got {align!r}")
    m = params0.width
    theta = Params(*(t.detach().requires_grad_(True) for t in params0))
    _, gU, gW = torch.autograd.grad(forward(theta, X, q, act).sum(), tuple(theta))
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
    _check_args(m=m, d=d, T=T, starts=starts, steps=steps, seed=seed, activation=activation,
                samples=samples)
    dev, dt, act, ev, rho_t, rho_f = _setup("lemma3", m=m, d=d, rho=rho, delta=delta,
                                             activation=activation, device=device,
                                             dtype=dtype)
    eps = ev["bound"]["eps_lin"]
    u_inf = ev["constants"]["u_inf"]
    settings = _settings(m, d, T, rho_t, delta, act.name, starts, steps, seed, dev, dt)
    records = []
    with _threads(dev, threads):
        params0, X, q, geo = _data(m, d, T, samples, seed, dt, dev, act)
        post = a_posteriori(m=m, d=d, rho=rho, activation=activation, **_geo_args(geo))
        on_event = geo["u0_max"] <= u_inf
        disp = paper_boundary_point(params0, X, q, rho_f, act)
        theta = params0 + disp
        gap = (forward(theta, X, q, act) - linearized_output(params0, theta, X, q, act)).abs()
        records.append(_data_record("lemma3.eps_lin", float(gap.max()), eps, post["eps_lin"],
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
        records.append(_data_record("lemma3.eps_lin", dres.value, eps, post["eps_lin"], settings,
                                    geo, on_event, samples))
        # adversarial: everything free; the paper point at its worst sample is an extra start
        space = SearchSpace(m=m, d=d, T=T, rho=rho_f, u_inf=u_inf, query=query)
        j = int(torch.argmax(gap))
        extra = _paper_start(space, params0, disp, X[j], q[j], u_inf, dt, dev)
        res = search_linearization(space, act, starts=starts, steps=steps, seed=seed, dtype=dt,
                                   device=dev, extra=extra)
        best = select(res.config, res.argmax)
        rec = _record("lemma3.eps_lin", "adversarial", res.value, eps, settings, query=query)
        records.append(_attach(rec, space, best, keep_argmax))
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


# ----------------------------------------------------------------------------------------------
# Lemma 6
# ----------------------------------------------------------------------------------------------

def validate_lemma6(m: int, d: int, T: int, rho: object, *, delta: object = "0.05",
                    activation: str = "tanh", nu: object = "1", starts: int = DEFAULT_STARTS,
                    steps: int = DEFAULT_STEPS, seed: int = 0, samples: int = DEFAULT_SAMPLES,
                    draws: int = 64, query: str = "free", device: str | torch.device = "cpu",
                    dtype: torch.dtype | str = torch.float64, threads: int | None = 1,
                    keep_argmax: bool = False) -> list[dict]:
    """Lemma 6: envelopes F ≥ sup|f| and 2LB ≥ ‖∇R̂‖ on Ω_ρ.

    Records:
        ``lemma6.output_envelope_F``: ``adversarial`` — ascent on ±f over θ, the symmetric init
        (U(0) in the event ball; the envelope uses f(θ(0)) ≡ 0) and inputs; ``data`` — ascent over
        θ on one seeded init and synthetic inputs (a-posteriori F).
        ``lemma6.loss_gradient_envelope``: ``random`` — ‖∇R̂‖ at ``draws`` random θ ∈ Ω_ρ on the
        seeded init and data with random labels |y| ≤ the a-posteriori Y (a-posteriori 2LB);
        ``adversarial`` —
        ascent over θ, init, inputs and labels |y| ≤ Y (Y = the a-priori label envelope).
    """
    _check_args(m=m, d=d, T=T, starts=starts, steps=steps, seed=seed, activation=activation,
                samples=samples)
    dev, dt, act, ev, rho_t, rho_f = _setup("lemma6", m=m, d=d, rho=rho, delta=delta,
                                             activation=activation, device=device,
                                             dtype=dtype, nu=nu)
    F_bound, env = ev["bound"]["output_envelope_F"], ev["bound"]["loss_gradient_envelope"]
    Y = ev["bound"]["label_envelope_Y"]
    u_inf = ev["constants"]["u_inf"]
    settings = _settings(m, d, T, rho_t, delta, act.name, starts, steps, seed, dev, dt)
    records = []
    with _threads(dev, threads):
        space = SearchSpace(m=m, d=d, T=T, rho=rho_f, u_inf=u_inf, query=query, symmetric=True)
        res = search_output(space, act, starts=starts, steps=steps, seed=seed, dtype=dt,
                            device=dev)
        rec = _record("lemma6.output_envelope_F", "adversarial", res.value, F_bound, settings,
                      query=query)
        records.append(_attach(rec, space, select(res.config, res.argmax), keep_argmax))
        params0, X, q, geo = _data(m, d, T, samples, seed, dt, dev, act)
        post = a_posteriori(m=m, d=d, rho=rho, activation=activation, nu=nu, **_geo_args(geo))
        on_event = geo["u0_max"] <= u_inf
        dspace = SearchSpace(m=m, d=d, T=T, rho=rho_f, u_inf=max(u_inf, geo["u0_max"]),
                             query="last", symmetric=True)
        S = 2 * samples
        disp = random_configuration(dspace, S, seed=seed + 4, dtype=dt, device=dev)
        dcfg = fixed_init_config(dspace, params0, X.repeat_interleave(2, dim=0).unsqueeze(1), disp)
        dres = search_output(dspace, act, starts=S, steps=steps, seed=seed, dtype=dt, device=dev,
                             base=dcfg, free=THETA_VARS)
        records.append(_data_record("lemma6.output_envelope_F", dres.value, F_bound,
                                    post["output_envelope_F"], settings, geo, on_event,
                                    samples))
        # ‖∇R̂‖ at random θ ∈ Ω_ρ with random labels |y| ≤ Y on the actual init and data
        # labels within the a-posteriori label envelope, so that both envelopes apply
        y_post = post["label_envelope_Y"]
        lspace = SearchSpace(m=m, d=d, T=T, rho=rho_f, u_inf=max(u_inf, geo["u0_max"]),
                             samples=samples, query="last", symmetric=True, label_max=y_post)
        ldisp = random_configuration(lspace, draws, seed=seed + 5, dtype=dt, device=dev)
        lcfg = fixed_init_config(lspace, params0, X.expand(draws, -1, -1, -1), ldisp)
        with torch.no_grad():
            gnorm = _loss_gradient_norm(lspace, lcfg, act)
        records.append(_data_record("lemma6.loss_gradient_envelope", float(gnorm.max()), env,
                                    post["loss_gradient_envelope"], settings, geo, on_event,
                                    samples, method="random", draws=draws, label_max=y_post))
        aspace = SearchSpace(m=m, d=d, T=T, rho=rho_f, u_inf=u_inf, samples=1, query=query,
                             symmetric=True, label_max=Y)
        ares = search_loss_gradient(aspace, act, starts=starts, steps=steps, seed=seed + 6,
                                    dtype=dt, device=dev)
        rec = _record("lemma6.loss_gradient_envelope", "adversarial", ares.value, env, settings,
                      query=query, label_max=Y)
        records.append(_attach(rec, aspace, select(ares.config, ares.argmax), keep_argmax))
    return records


# ----------------------------------------------------------------------------------------------
# Remark 3
# ----------------------------------------------------------------------------------------------

def _covariance(space: SearchSpace, cfg: Config, act: Activation) -> Tensor:
    """G = X J(z_i) Xᵀ = Σ_t s_t x_t x_tᵀ − a aᵀ per (start, sample, head): (S, n, m, d, d)."""
    theta, q = theta_of(space, cfg), queries_of(space, cfg)
    F = vmap(functools.partial(head_features, act=act))(theta, cfg["X"], q)
    second = torch.einsum("snmt,sntd,snte->snmde", F.s, cfg["X"], cfg["X"])
    return second - F.a.unsqueeze(-1) * F.a.unsqueeze(-2)


def xjx_op_exact(X: Tensor, W: Tensor, q: Tensor, *, dps: int = 40) -> tuple[float, float]:
    """λ_max(X J(z) Xᵀ) of one head and one sample, in mpmath at ``dps`` digits.

    The floating-point inputs are taken as exact numbers: z_t = x_tᵀ W q, s = softmax(z),
    X J Xᵀ = Σ_t s_t x_t x_tᵀ − (Σ_t s_t x_t)(Σ_t s_t x_t)ᵀ, and its largest eigenvalue
    (``mpmath.eigsy``) are evaluated with ``dps`` significant digits, so the result is the value
    of this configuration, free of the float64 summation error over T tokens (≈ T·eps, enough to
    read 1 + 5e-15 at T = 1024 where Remark 3's bound 1 is attained with equality). Also returns
    max_t ‖x_t‖², evaluated the same way: Remark 3's bound is max_t ‖x_t‖² (the variance of
    x_tᵀv under s is at most its second moment), i.e. 1 on the lemmas' domain.

    Shapes: X (T, d), W (d, d), q (d,).

    Example:
        >>> X = torch.tensor([[1.0, 0.0], [-1.0, 0.0]], dtype=torch.float64)
        >>> xjx_op_exact(X, torch.zeros(2, 2, dtype=torch.float64), torch.ones(2))
        (1.0, 1.0)
    """
    import mpmath

    rows = X.detach().cpu().double().tolist()
    Wl = W.detach().cpu().double().tolist()
    ql = q.detach().cpu().double().tolist()
    d = len(ql)
    with mpmath.workdps(dps):
        x = [[mpmath.mpf(v) for v in row] for row in rows]
        Wq = [mpmath.fsum(mpmath.mpf(Wl[a][b]) * mpmath.mpf(ql[b]) for b in range(d))
              for a in range(d)]
        z = [mpmath.fsum(xt[a] * Wq[a] for a in range(d)) for xt in x]
        top = max(z)
        e = [mpmath.exp(zt - top) for zt in z]
        total = mpmath.fsum(e)
        s = [et / total for et in e]
        mean = [mpmath.fsum(st * xt[a] for st, xt in zip(s, x, strict=True)) for a in range(d)]
        cov = mpmath.matrix(d, d)
        for a in range(d):
            for b in range(a, d):
                v = mpmath.fsum(st * xt[a] * xt[b] for st, xt in zip(s, x, strict=True))
                cov[a, b] = cov[b, a] = v - mean[a] * mean[b]
        eig = mpmath.eigsy(cov, eigvals_only=True)
        top_eig = max(eig[i] for i in range(d))
        norm_sq = max(mpmath.fsum(v * v for v in xt) for xt in x)
        return float(top_eig), float(norm_sq)


def _xjx_argmax_exact(space: SearchSpace, cfg: Config,
                      act: Activation) -> tuple[float, float, float]:
    """(exact λ_max at the float argmax, float max, exact max‖x_t‖² there) over all starts,
    samples and heads of ``cfg``."""
    with torch.no_grad():
        eig = torch.linalg.eigvalsh(_covariance(space, cfg, act)).amax(-1)   # (S, n, m)
        flat = int(eig.argmax())
        s_i, n_i, m_i = (int(v) for v in torch.unravel_index(torch.tensor(flat), eig.shape))
        W = theta_of(space, cfg).W[s_i, m_i]
        q = queries_of(space, cfg)[s_i, n_i]
        exact, norm_sq = xjx_op_exact(cfg["X"][s_i, n_i], W, q)
    return exact, float(eig.max()), norm_sq


def remark3_table(m: int, d: int, rho: object, *, Ts: Sequence[int] = REMARK3_T,
                  delta: object = "0.05", activation: str = "tanh",
                  starts: int = DEFAULT_STARTS, steps: int = DEFAULT_STEPS, seed: int = 0,
                  query: str = "free", device: str | torch.device = "cpu",
                  dtype: torch.dtype | str = torch.float64, threads: int | None = 1) -> list[dict]:
    """Remark 3: the same T-free bounds at every T.

    For every T in ``Ts``: ``remark3.xjx_op`` — max ‖X J Xᵀ‖_op (ascent on ‖X J Xᵀ‖_F over
    tokens, W and q; the maximiser found with float eigvalsh, its value then evaluated exactly by
    :func:`xjx_op_exact`, also reported as ``float64_eigvalsh``) against 1;
    ``remark3.lipschitz_L`` — the adversarial max ‖∇_θ f‖ of :func:`search_lipschitz`
    (random starts and the hand-built case) against the T-free L, with the hand-built value
    and the true supremum. Two records per T.
    """
    if not Ts:
        raise ValueError("`Ts` must list at least one sequence length")
    for T in Ts:
        _check_args(m=m, d=d, T=T, starts=starts, steps=steps, seed=seed, activation=activation)
    dev, dt, act, ev, rho_t, rho_f = _setup("lemma2", m=m, d=d, rho=rho, delta=delta,
                                             activation=activation, device=device,
                                             dtype=dtype)
    L, u_inf = ev["bound"]["lipschitz_L"], ev["constants"]["u_inf"]
    records = []
    with _threads(dev, threads):
        for T in Ts:
            settings = _settings(m, d, T, rho_t, delta, act.name, starts, steps, seed, dev, dt)
            space = SearchSpace(m=m, d=d, T=T, rho=rho_f, u_inf=u_inf, query=query)
            cfg = random_configuration(space, starts, seed=seed, dtype=dt, device=dev)
            hand = lipschitz_worst_case(space, dtype=dt, device=dev)

            def cov_obj(c: Config, space=space) -> Tensor:
                return torch.linalg.matrix_norm(_covariance(space, c, act)).flatten(1)

            res = ascend(space, concat_configs([hand, cfg]), cov_obj,
                         free=("W0", "dW") + INPUT_VARS, steps=steps)
            op, op_float, norm_sq = _xjx_argmax_exact(space, res.config, act)
            hand_op, _, _ = _xjx_argmax_exact(space, hand, act)
            records.append(_record("remark3.xjx_op", "adversarial", op, 1.0, settings,
                                   hand_built=hand_op, float64_eigvalsh=op_float,
                                   max_token_norm_sq=norm_sq, query=query))
            sup = lipschitz_supremum(m=m, d=d, T=T, rho=rho, delta=delta, activation=activation)
            hand = lipschitz_worst_case(space, pre=sup["pre"], dtype=dt, device=dev)
            lres = search_lipschitz(space, act, starts=starts, steps=steps, seed=seed, dtype=dt,
                                    device=dev, extra=hand)
            records.append(_record("remark3.lipschitz_L", "adversarial", lres.value, L, settings,
                                   hand_built=sup["attained"], true_max=sup["upper"],
                                   query=query))
    return records


# ----------------------------------------------------------------------------------------------
# grids
# ----------------------------------------------------------------------------------------------

#: The issue's acceptance grid.
GRID = {"m": (2, 4, 16, 64), "d": (1, 2, 8), "T": (1, 2, 16, 128), "rho": ("0.5", "2", "5"),
        "activation": ("tanh", "erf")}


def grid_jobs(*, ms: Sequence[int] = GRID["m"], ds: Sequence[int] = GRID["d"],
              Ts: Sequence[int] = GRID["T"], rhos: Sequence[object] = GRID["rho"],
              activations: Sequence[str] = GRID["activation"]) -> list[tuple]:
    """One ``('event', m, d)`` job per (m, d) and one ``('lemmas', m, d, T, ρ, activation)`` job
    per grid point, the most expensive first."""
    jobs: list[tuple] = [("event", m, d) for m in ms for d in ds]
    lemma = [("lemmas", m, d, T, str(rho), act) for m in ms for d in ds for T in Ts
             for rho in rhos for act in activations]
    lemma.sort(key=lambda j: -j[1] * max(j[3], 4) * (1 + j[2] ** 2))
    return jobs + lemma


def run_job(job: tuple, settings: dict) -> list[dict]:
    """Run one job of :func:`grid_jobs` (event, or Lemmas 2, 3 and 6 at one grid point)."""
    kw = dict(settings)
    event_seeds = kw.pop("event_seeds", 200)
    if job[0] == "event":
        return validate_event(job[1], job[2], delta=kw["delta"], seeds=event_seeds,
                              seed=kw["seed"], device=kw["device"], dtype=kw["dtype"])
    _, m, d, T, rho, act = job
    lanczos = kw.pop("lanczos", 32)
    records = validate_lemma2(m, d, T, rho, activation=act, lanczos=lanczos, **kw)
    records += validate_lemma3(m, d, T, rho, activation=act, **kw)
    records += validate_lemma6(m, d, T, rho, activation=act, **kw)
    return records


def _job_key(job: tuple) -> str:
    return json.dumps(list(job))


def _worker(payload: tuple) -> tuple[str, list[dict], float]:
    job, settings = payload
    torch.set_num_threads(1)
    t0 = time.time()
    records = run_job(job, settings)
    for r in records:
        r["job"] = _job_key(job)
    return _job_key(job), records, time.time() - t0


def run_grid(*, ms: Sequence[int] = GRID["m"], ds: Sequence[int] = GRID["d"],
             Ts: Sequence[int] = GRID["T"], rhos: Sequence[object] = GRID["rho"],
             activations: Sequence[str] = GRID["activation"], delta: object = "0.05",
             starts: int = DEFAULT_STARTS, steps: int = DEFAULT_STEPS, seed: int = 0,
             samples: int = 4, lanczos: int = 32, device: str | torch.device = "cpu",
             dtype: torch.dtype | str = torch.float64, event_seeds: int = 200,
             workers: int = 1, cuda_workers: int = 0, cuda_share: float = 0.25,
             records_path: str | None = None, progress: bool = False) -> list[dict]:
    """Every measurement (event, Lemmas 2, 3, 6) at every point of the grid; records list.

    Args:
        workers: CPU processes (one intra-op thread each); 1 runs in this process.
        cuda_workers: extra processes on ``cuda`` that take the most expensive jobs (a fraction
            ``cuda_share`` of the lemma jobs), when CUDA is available.
        records_path: JSON-lines file; each finished job's records are appended at once, and
            jobs already in the file are skipped (resume).
    """
    settings = {"starts": starts, "steps": steps, "seed": seed, "samples": samples,
                "lanczos": lanczos, "device": str(device), "dtype": str(dtype).replace(
                    "torch.", ""), "delta": str(delta), "event_seeds": event_seeds}
    jobs = grid_jobs(ms=ms, ds=ds, Ts=Ts, rhos=rhos, activations=activations)
    records: list[dict] = []
    done: set[str] = set()
    if records_path:
        try:
            with open(records_path) as fh:
                for line in fh:
                    if line.strip():
                        r = json.loads(line)
                        records.append(r)
                        done.add(r.get("job", ""))
        except FileNotFoundError:
            pass
    jobs = [j for j in jobs if _job_key(j) not in done]

    def finish(key: str, recs: list[dict], seconds: float) -> None:
        records.extend(recs)
        if records_path:
            with open(records_path, "a") as fh:
                for r in recs:
                    fh.write(json.dumps(r) + "\n")
        if progress:
            print(f"{key}: {seconds:.1f}s", file=sys.stderr, flush=True)

    use_cuda = cuda_workers > 0 and torch.cuda.is_available()
    if workers <= 1 and not use_cuda:
        for job in jobs:
            finish(*_worker((job, settings)))
        return records
    import concurrent.futures as cf
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    lemma_jobs = [j for j in jobs if j[0] == "lemmas"]
    n_gpu = int(cuda_share * len(lemma_jobs)) if use_cuda else 0
    gpu_jobs = set(map(_job_key, lemma_jobs[:n_gpu]))
    gpu_settings = {**settings, "device": "cuda"}
    with cf.ProcessPoolExecutor(max(workers, 1), mp_context=ctx) as cpu_pool, \
            cf.ProcessPoolExecutor(max(cuda_workers, 1), mp_context=ctx) as gpu_pool:
        futures = []
        for job in jobs:
            if _job_key(job) in gpu_jobs:
                futures.append(gpu_pool.submit(_worker, (job, gpu_settings)))
            else:
                futures.append(cpu_pool.submit(_worker, (job, settings)))
        for fut in cf.as_completed(futures):
            try:
                finish(*fut.result())
            except Exception as exc:  # report and go on with the other jobs
                print(f"job failed: {exc!r}", file=sys.stderr, flush=True)
    return records


def summarize(records: Sequence[dict]) -> list[dict]:
    """Max ratio per (name, method): {name, method, count, max_ratio, worst (settings), violations,
    within_1pct}."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in records:
        groups.setdefault((r["name"], r["method"]), []).append(r)
    out = []
    for (name, method), recs in sorted(groups.items()):
        worst = max(recs, key=lambda r: r["ratio"])
        out.append({
            "name": name, "method": method, "count": len(recs), "max_ratio": worst["ratio"],
            "worst": {k: worst.get(k) for k in ("m", "d", "T", "rho_c", "rho_u", "rho_w",
                                                 "activation", "measured", "bound")},
            "violations": sum(not r["holds"] for r in recs),
            "within_1pct": sum(r["holds"] and r["ratio"] >= 0.99 for r in recs),
        })
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m boundcalc.validators.check_lemmas``: run the grid, print the summary as JSON.

    Exit status 1 when any record violates its bound.
    """
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--starts", type=int, default=DEFAULT_STARTS)
    parser.add_argument("--steps", type=int, default=DEFAULT_STEPS)
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--lanczos", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--cuda-workers", type=int, default=0)
    parser.add_argument("--cuda-share", type=float, default=0.25)
    parser.add_argument("--m", type=int, nargs="*", default=list(GRID["m"]))
    parser.add_argument("--d", type=int, nargs="*", default=list(GRID["d"]))
    parser.add_argument("--T", type=int, nargs="*", default=list(GRID["T"]))
    parser.add_argument("--rho", nargs="*", default=list(GRID["rho"]))
    parser.add_argument("--activation", nargs="*", default=list(GRID["activation"]))
    parser.add_argument("--records", help="JSON-lines file: appended per job, resumed from")
    args = parser.parse_args(argv)
    t0 = time.time()
    records = run_grid(ms=args.m, ds=args.d, Ts=args.T, rhos=args.rho,
                       activations=args.activation, starts=args.starts, steps=args.steps,
                       seed=args.seed, samples=args.samples, lanczos=args.lanczos,
                       device=args.device, workers=args.workers, cuda_workers=args.cuda_workers,
                       cuda_share=args.cuda_share, records_path=args.records, progress=True)
    summary = summarize(records)
    print(json.dumps({"seconds": time.time() - t0, "summary": summary}, indent=1))
    return 1 if any(s["violations"] for s in summary) else 0


__all__ = [
    "GRID", "REMARK3_T", "a_posteriori", "a_priori", "autograd_gradient_norm", "clone_best_head",
    "fixed_init_config", "grid_jobs", "lipschitz_supremum", "lipschitz_worst_case", "main",
    "measured_geometry", "paper_boundary_point", "per_head_gradient_sq",
    "per_head_linearization_terms", "remark3_table", "run_grid", "run_job", "search_linearization",
    "search_lipschitz", "search_loss_gradient", "search_output", "search_smoothness",
    "summarize", "synthetic_inputs", "validate_event", "validate_lemma2", "validate_lemma3",
    "validate_lemma6",
]


if __name__ == "__main__":
    raise SystemExit(main())
