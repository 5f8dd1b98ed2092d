"""Paper 003's shallow Transformer encoder (Wu et al. 2024) in torch, plain GD, and the
measurements that confront Lemma 4 and Theorem 5 with real runs.

Model (paper 003 §3.1.2, lines 45–85 of its extracted text), for a batch
X ∈ R^{N×d_s×d}:

    S_n     = softmax_rows((X_n W_Qᵀ)(X_n W_Kᵀ)ᵀ / √d_m)        (d_s × d_s, row-wise softmax)
    f_pre,n = (1/d_s) Σ_i ReLU(S_n X_n W_Vᵀ)_{i,:}               (column-wise average pooling)
    f(X_n)  = w_Oᵀ f_pre,n

with W_Q, W_K, W_V ∈ R^{d_m×d}, w_O ∈ R^{d_m} and the LeCun init of §3.1.3 (W entries N(0, 1/d),
w_O entries N(0, 1/d_m)); the paper sets d = d_m (L145), here ``d`` defaults to the input's last
dimension. F_pre ∈ R^{N×d_m} stacks the f_pre,n.

Measured: the seven norms of θ⁰ (keys of
:data:`boundcalc.inputs.surfaces.NORM_FLAGS`), α = σ_min(F_pre⁰), Φ(θ⁰) = ½‖f(θ⁰) − y‖², R_X =
max_n ‖X_n‖_F/√d_s (Assumption 3), and along GD the block distances ‖W_•^t − W_•⁰‖, Φ(θ^t), the
empirical loss L_S(f_{θ^t}) and a held-out loss. :func:`check_run` turns them into the inputs of
:func:`boundcalc.generalization.bound.evaluate_generalization` (radii = distances actually
travelled) and reports which conditions of Lemma 4 hold and whether the measured losses stay under
the bounds; a violation with all conditions holding is flagged as a finding.
:func:`validation_records` and :func:`validate_cell` serve
``boundcalc validate generalization`` (:mod:`boundcalc.validation.runner`): one measured-vs-bound
record per (check, form) with the conditions of that check as columns.

Memory: one autograd pass holds several (N, d_s, d_m) tensors (about 21 GB for Table 1's
d_m = 4096, N = 10000 in float32), so :func:`train_gd` (gradients and per-step records),
:func:`alpha_of` and :func:`measure_init` go through the samples in chunks chosen by memory or
given as ``chunk=`` (:mod:`validators.encoder_chunks`): the gradient is the sum of the chunks'
gradients of their shares of the same objective, recorded outputs and features are concatenated
over the chunks. When all N samples fit, one unchunked pass gives the full-batch numbers.

Conventions (choices, see docs/generalization.md):

* α is the smallest of the min(N, d_m) singular values of F_pre⁰ (the paper's literal
  "minimum singular value"); Wu et al.'s analysis needs σ_N(F_pre⁰) > 0, i.e. d_m ≥ N, reported
  as ``alpha_full_row_rank``.
* Training objective: ``"phi"`` = Φ(θ) = ½Σ(f − y)² (what Wu et al.'s Theorem 1, hence Lemma 4, is
  about), ``"mse"`` = (1/N)Σ(f − y)², or ``"cross_entropy"`` = mean binary cross-entropy of the
  logit f with labels in {0, 1} (the paper's experiment, L429). Lemma 4 applies to ``"phi"`` only.
* Evaluation loss ℓ (the 1-Lipschitz loss of L_S and L_D): ``"absolute"`` |f − y| (1-Lipschitz
  with ℓ(y, y) = 0, as the proof of Lemma 4 needs) or ``"logistic"`` log(1 + e^{−(2y−1)f})
  (1-Lipschitz, but ℓ(y, y) ≠ 0: Lemma 4's first step does not apply).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import torch
from torch import Tensor

from boundcalc.validation.settings import (
    GENERALIZATION,
    GeneralizationSettings,
    ValidationSettings,
    generalization_data,
)

from .data.digits import input_scale
from .encoder_chunks import chunked, resolve_chunk, summed_grads

__all__ = ["EVAL_LOSSES", "MIN_ALPHA", "MIN_RADIUS", "OBJECTIVES", "EncoderParams", "EncoderRun",
           "alpha_of", "check_run", "eval_loss_value", "forward", "init_norms", "lecun_init",
           "measure_init", "objective_value", "phi", "pre_features", "train_gd", "validate_cell",
           "validation_records", "generalization_cell"]

OBJECTIVES = ("phi", "mse", "cross_entropy")
EVAL_LOSSES = ("absolute", "logistic")


class EncoderParams(NamedTuple):
    """θ = (W_Q, W_K, W_V, w_O): W_• of shape (d_m, d), w_O of shape (d_m,)."""

    W_Q: Tensor
    W_K: Tensor
    W_V: Tensor
    w_O: Tensor  # noqa: N815 (the paper's name)

    @property
    def d_m(self) -> int:
        """Model dimension."""
        return int(self.w_O.shape[0])

    def detach(self) -> EncoderParams:
        return EncoderParams(*(t.detach() for t in self))

    def clone(self) -> EncoderParams:
        return EncoderParams(*(t.detach().clone() for t in self))


def lecun_init(d_m: int, d: int, *, seed: int, dtype: torch.dtype = torch.float64,
               device: torch.device | str = "cpu") -> EncoderParams:
    """LeCun init of §3.1.3 from a seeded CPU generator (draw order W_Q, W_K, W_V, w_O)."""
    if d_m < 1 or d < 1:
        raise ValueError(f"`d_m` and `d` must be >= 1, got d_m={d_m}, d={d}")
    gen = torch.Generator().manual_seed(int(seed))

    def normal(shape: tuple[int, ...], std: float) -> Tensor:
        return (torch.randn(shape, generator=gen, dtype=torch.float64) * std).to(dtype=dtype,
                                                                                 device=device)

    return EncoderParams(normal((d_m, d), 1 / math.sqrt(d)), normal((d_m, d), 1 / math.sqrt(d)),
                         normal((d_m, d), 1 / math.sqrt(d)), normal((d_m,), 1 / math.sqrt(d_m)))


def _check_inputs(X: Tensor, params: EncoderParams) -> None:
    if X.ndim != 3:
        raise ValueError(f"`X` must have shape (N, d_s, d), got {tuple(X.shape)}")
    if X.shape[2] != params.W_Q.shape[1]:
        raise ValueError(f"`X` has token dimension {X.shape[2]}, the weights expect "
                         f"{params.W_Q.shape[1]}")


def pre_features(params: EncoderParams, X: Tensor) -> Tensor:
    """F_pre ∈ R^{N×d_m}: f_pre(X_n) = (1/d_s) Σ_i ReLU(W_V X_nᵀ β_i) (L75)."""
    _check_inputs(X, params)
    d_m = params.d_m
    q = X @ params.W_Q.T  # (N, d_s, d_m)
    k = X @ params.W_K.T
    v = X @ params.W_V.T
    scores = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(d_m), dim=-1)  # row-wise (L45)
    return torch.relu(scores @ v).mean(dim=1)


def forward(params: EncoderParams, X: Tensor) -> Tensor:
    """f(X_n) = w_Oᵀ f_pre(X_n) for every n (L81, L85); shape (N,)."""
    return pre_features(params, X) @ params.w_O


def phi(params: EncoderParams, X: Tensor, y: Tensor) -> Tensor:
    """Φ(θ) = ½‖f(θ) − y‖₂² (L217), a sum over the N samples."""
    return 0.5 * ((forward(params, X) - y) ** 2).sum()


def objective_value(f: Tensor, y: Tensor, objective: str) -> Tensor:
    """The training objective at outputs ``f`` (see the module docstring)."""
    if objective == "phi":
        return 0.5 * ((f - y) ** 2).sum()
    if objective == "mse":
        return ((f - y) ** 2).mean()
    if objective == "cross_entropy":
        return torch.nn.functional.binary_cross_entropy_with_logits(f, y)
    raise ValueError(f"`objective` must be one of {OBJECTIVES}, got {objective!r}")


def _objective_share(f: Tensor, y: Tensor, objective: str, n: int) -> Tensor:
    """A chunk's share of :func:`objective_value` over all ``n`` samples (the shares sum to
    it): Φ, a sum, as it is; the means weighted by the chunk's fraction of the n samples."""
    value = objective_value(f, y, objective)
    return value if objective == "phi" else value * (f.shape[0] / n)


def eval_loss_value(f: Tensor, y: Tensor, eval_loss: str) -> Tensor:
    """Mean of the 1-Lipschitz evaluation loss ℓ(f, y) (L_S on training data, L_D estimate on
    held-out data)."""
    if eval_loss == "absolute":
        return (f - y).abs().mean()
    if eval_loss == "logistic":
        return torch.nn.functional.softplus(-(2 * y - 1) * f).mean()
    raise ValueError(f"`eval_loss` must be one of {EVAL_LOSSES}, got {eval_loss!r}")


def init_norms(params: EncoderParams) -> dict[str, float]:
    """‖W_•⁰‖_F, ‖W_•⁰‖₂ and ‖w_O⁰‖₂, keyed as :data:`boundcalc.inputs.surfaces.NORM_FLAGS`."""
    out: dict[str, float] = {}
    for name, w in zip("QKV", params[:3], strict=True):
        w64 = w.detach().to(torch.float64)
        out[f"W{name}0_F"] = float(torch.linalg.matrix_norm(w64, "fro"))
        out[f"W{name}0_2"] = float(torch.linalg.matrix_norm(w64, 2))
    out["WO0_2"] = float(torch.linalg.vector_norm(params.w_O.detach().to(torch.float64)))
    return {k: out[k] for k in ("WQ0_F", "WK0_F", "WV0_F", "WQ0_2", "WK0_2", "WV0_2", "WO0_2")}


def _chunk_for(chunk: int | None, X: Tensor, params: EncoderParams) -> int:
    """Samples per pass over ``X``: ``chunk`` (checked, capped at N) or by memory for None
    (:func:`validators.encoder_chunks.resolve_chunk`)."""
    _check_inputs(X, params)
    return resolve_chunk(chunk, X, params.d_m)


def _features(params: EncoderParams, X: Tensor, chunk: int | None) -> Tensor:
    """F_pre without autograd, ``chunk`` samples at a time (None = by memory)."""
    p = params.detach()
    return chunked(lambda Xc: pre_features(p, Xc), X, _chunk_for(chunk, X, params))


def alpha_of(params: EncoderParams, X: Tensor, *, chunk: int | None = None) -> float:
    """α = σ_min(F_pre): the smallest of the min(N, d_m) singular values (L215); F_pre is built
    ``chunk`` samples at a time (None = by memory)."""
    return float(torch.linalg.svdvals(_features(params, X, chunk).to(torch.float64))[-1])


def measure_init(params: EncoderParams, X: Tensor, y: Tensor, *,
                 chunk: int | None = None) -> dict[str, Any]:
    """Everything the calculator needs at θ⁰: the seven norms, α, Φ(θ⁰), R_X, sizes, and the
    mean loss |f − y| of θ⁰ (``initial_model_loss``, a free yardstick of the verdict).

    F_pre⁰ is built once, ``chunk`` samples at a time (None = by memory); α is its σ_min and
    Φ(θ⁰) = ½‖F_pre⁰ w_O − y‖² (the numbers of :func:`alpha_of` and :func:`phi`)."""
    dtype = params.w_O.dtype
    feats = _features(params, X.to(dtype), chunk)
    with torch.no_grad():
        residual = feats @ params.w_O - y.to(dtype)
        phi0 = float(0.5 * (residual**2).sum())
        initial_loss = float(residual.abs().mean())
    n, d_s, d = (int(s) for s in X.shape)
    return {
        "N": n, "d_s": d_s, "d": d, "d_m": params.d_m,
        "norms": init_norms(params),
        "alpha": float(torch.linalg.svdvals(feats.to(torch.float64))[-1]),
        "alpha_full_row_rank": params.d_m >= n,
        "Phi0": phi0,
        "initial_model_loss": initial_loss,
        "R_X": input_scale(X),
    }


@dataclass
class EncoderRun:
    """Per-step record of :func:`train_gd`, for t = 0 … steps (tensors on the CPU, float64).

    ``distance[t]`` = (‖W_Q^t − W_Q⁰‖_F, ‖W_K^t − W_K⁰‖_F, ‖W_V^t − W_V⁰‖_F, ‖w_O^t − w_O⁰‖₂).
    """

    objective: str
    eval_loss: str
    lr: float
    phi: Tensor
    train_loss: Tensor
    test_loss: Tensor
    distance: Tensor
    params: EncoderParams
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def radii(self) -> tuple[float, float, float, float]:
        """(R_Q, R_K, R_V, R_O) actually travelled: max over t of each block's distance."""
        m = self.distance.max(dim=0).values
        return float(m[0]), float(m[1]), float(m[2]), float(m[3])


def train_gd(params0: EncoderParams, X: Tensor, y: Tensor, *, steps: int, lr: float,
             objective: str = "phi", eval_loss: str = "absolute",
             X_test: Tensor | None = None, y_test: Tensor | None = None,
             chunk: int | None = None) -> EncoderRun:
    """Plain full-batch GD (L105–L113) on ``objective``, recording every step.

    Each step's gradient is that of the objective on all N samples, summed over chunks of
    ``chunk`` samples (:mod:`validators.encoder_chunks`); the records (Φ, L_S, held-out loss)
    concatenate the outputs of forward passes of the same chunk size without autograd.

    Args:
        params0: θ⁰ (not modified).
        X, y: training data, shapes (N, d_s, d) and (N,).
        steps: number of GD steps t' (≥ 0). lr: step size γ (> 0).
        objective: ``"phi"`` (Wu et al.'s Φ), ``"mse"`` or ``"cross_entropy"``.
        eval_loss: the 1-Lipschitz ℓ of L_S / L_D: ``"absolute"`` or ``"logistic"``.
        X_test, y_test: held-out data for the L_D estimate (NaN when absent).
        chunk: samples per pass (≥ 1; None = chosen by memory per data set,
            :func:`validators.encoder_chunks.auto_chunk`). A chunk ≥ N is one unchunked pass,
            with the numbers of the full-batch code.
    """
    if steps < 0:
        raise ValueError(f"`steps` must be >= 0, got {steps}")
    if not lr > 0:
        raise ValueError(f"`lr` must be > 0, got {lr}")
    if objective not in OBJECTIVES:
        raise ValueError(f"`objective` must be one of {OBJECTIVES}, got {objective!r}")
    if eval_loss not in EVAL_LOSSES:
        raise ValueError(f"`eval_loss` must be one of {EVAL_LOSSES}, got {eval_loss!r}")
    dtype = params0.w_O.dtype
    X = X.to(dtype)
    y = y.to(dtype)
    if X_test is not None:
        X_test = X_test.to(dtype)
        y_test = None if y_test is None else y_test.to(dtype)
    c_train = _chunk_for(chunk, X, params0)
    has_test = X_test is not None and y_test is not None
    c_test = _chunk_for(chunk, X_test, params0) if has_test else 1
    n = int(X.shape[0])
    theta0 = params0.clone()
    params = [t.clone().requires_grad_(True) for t in theta0]
    phis, train, test, dist = [], [], [], []

    def record(p: list[Tensor]) -> None:
        # kept on the device and read once at the end: no host synchronisation per epoch
        with torch.no_grad():
            ep = EncoderParams(*p)
            f = chunked(lambda Xc: forward(ep, Xc), X, c_train)
            phis.append(0.5 * ((f - y) ** 2).sum())
            train.append(eval_loss_value(f, y, eval_loss))
            if has_test:
                f_test = chunked(lambda Xc: forward(ep, Xc), X_test, c_test)
                test.append(eval_loss_value(f_test, y_test, eval_loss))
            dist.append(torch.stack([torch.linalg.vector_norm((a - b).reshape(-1))
                                     for a, b in zip(p, theta0, strict=True)]))

    record(params)
    for _ in range(steps):
        ep = EncoderParams(*params)
        if c_train >= n:  # one chunk: the full-batch autograd pass
            grads = torch.autograd.grad(objective_value(forward(ep, X), y, objective), params)
        else:
            grads = summed_grads(
                lambda s, ep=ep: _objective_share(forward(ep, X[s]), y[s], objective, n),
                params, n, c_train)
        with torch.no_grad():
            for p, g in zip(params, grads, strict=True):
                p -= lr * g
        record(params)

    def host(values: list[Tensor]) -> Tensor:
        return torch.stack(values).to(torch.float64).cpu()

    return EncoderRun(
        objective=objective, eval_loss=eval_loss, lr=float(lr),
        phi=host(phis), train_loss=host(train),
        test_loss=host(test) if has_test else torch.full((steps + 1,), math.nan,
                                                         dtype=torch.float64),
        distance=host(dist),
        params=EncoderParams(*(p.detach() for p in params)),
    )


#: Radius used in place of a block distance of exactly 0 (M divides by each radius).
MIN_RADIUS = 1e-12

#: α used by the calculator when the measured σ_min(F_pre⁰) is exactly 0 (the calculator needs
#: α > 0; a rank-deficient F_pre⁰, e.g. a ReLU unit dead on every sample, gives 0). The
#: α-conditions then fail and the Lemma 4 bound is ~0, as at α = 0 itself.
MIN_ALPHA = 1e-300


def check_run(X: Tensor, y: Tensor, *, d_m: int, seed: int, steps: int, lr: float,
              delta: float = 0.05, objective: str = "phi", eval_loss: str = "absolute",
              X_test: Tensor | None = None, y_test: Tensor | None = None,
              R_X: float | None = None,
              radii: tuple[float, float, float, float] | None = None,
              hidden_constants: str | Mapping[str, object] | None = None,
              dtype: torch.dtype = torch.float64,
              device: torch.device | str = "cpu", chunk: int | None = None) -> dict[str, Any]:
    """Train one cell and confront it with Lemma 4 and Theorem 5 (derived and printed forms).

    The calculator is evaluated at the measured θ⁰ (norms, α, Φ(θ⁰); an α of exactly 0 becomes
    :data:`MIN_ALPHA`, reported as ``alpha_used``), the measured R_X (unless given) and the radii:
    ``radii`` if given (any radii that contain the trajectory are valid, and larger radii shrink
    M, which carries 1/R_•), else those actually travelled (max over t; a zero
    distance becomes :data:`MIN_RADIUS`). ``radii_contain_trajectory`` says whether the given
    radii contain the run (if not, the bounds do not apply and a finding is reported). Both
    bounds hold "for every t", so they are compared with the largest measured loss of the run.
    The label bound Y of the calculator is the largest |y| of the training and held-out labels,
    and its verdict also judges the bound against the training losses of the zero predictor and
    of θ⁰ (``free``: the same on the held-out set, for :func:`validation_records`).
    ``chunk``: samples per pass of :func:`measure_init` and :func:`train_gd` (None = by memory).

    Returns:
        JSON-ready dict: ``cell``, ``init``, ``radii``, ``conditions`` (derived form),
        ``all_conditions_hold``, ``empirical`` (max over t ≥ 1 of L_S vs the Lemma 4 bounds),
        ``true`` (max over t ≥ 1 of the held-out loss vs the Theorem 5 bounds), ``findings``
        (list of strings; a measured loss above a bound whose conditions all hold is reported
        there), ``free`` (the label bound and the free yardsticks: the loss range A + Y, the mean
        loss of the zero predictor and of θ⁰ on the training and held-out sets), ``bounds`` (the
        two calculator outputs; ``as_printed`` is None when R = √(ΣR_•²) ≤ δ, where the printed
        deviation term √(log(R/δ)/N) is undefined).
    """
    from boundcalc.generalization.bound import evaluate_generalization

    if X.ndim != 3:
        raise ValueError(f"`X` must have shape (N, d_s, d), got {tuple(X.shape)}")
    params0 = lecun_init(d_m, int(X.shape[2]), seed=seed, dtype=dtype, device=device)
    X = X.to(dtype=dtype, device=device)
    y = y.to(dtype=dtype, device=device)
    if X_test is not None:
        X_test = X_test.to(dtype=dtype, device=device)
    if y_test is not None:
        y_test = y_test.to(dtype=dtype, device=device)
    init = measure_init(params0, X, y, chunk=chunk)
    run = train_gd(params0, X, y, steps=steps, lr=lr, objective=objective, eval_loss=eval_loss,
                   X_test=X_test, y_test=y_test, chunk=chunk)
    travelled = run.radii
    if radii is None:
        radii = tuple(max(r, MIN_RADIUS) for r in travelled)
    elif len(radii) != 4 or not all(r > 0 for r in radii):
        raise ValueError(f"`radii` must be four positive numbers (R_Q, R_K, R_V, R_O), "
                         f"got {radii!r}")
    contained = all(t <= r * (1 + 1e-12) for t, r in zip(travelled, radii, strict=True))
    rx = init["R_X"] if R_X is None else float(R_X)
    alpha_used = init["alpha"] if init["alpha"] > 0 else MIN_ALPHA
    labels = y if y_test is None else torch.cat([y.flatten(), y_test.flatten()])
    with torch.no_grad():
        free = {
            "label_bound": float(labels.abs().max()),
            "zero_predictor_train_loss": float(eval_loss_value(torch.zeros_like(y), y,
                                                               eval_loss)),
            "zero_predictor_heldout_loss": (
                float(eval_loss_value(torch.zeros_like(y_test), y_test, eval_loss))
                if X_test is not None and y_test is not None else math.nan),
            "initial_train_loss": float(run.train_loss[0]),
            "initial_heldout_loss": float(run.test_loss[0]) if X_test is not None else math.nan,
        }
    common = {"N": init["N"], "d_m": d_m, "d_s": init["d_s"], "R_X": rx, "radii": radii,
              "delta": delta, "alpha": alpha_used, "Phi0": init["Phi0"],
              "init_norms": init["norms"], "hidden_constants": hidden_constants,
              "Y": free["label_bound"],
              "measured": {"zero_predictor_loss": free["zero_predictor_train_loss"],
                           "initial_model_loss": free["initial_train_loss"]}}
    derived = evaluate_generalization(**common)
    free["loss_range"] = derived["quantities"]["loss_range"]
    if math.sqrt(sum(r * r for r in radii)) > delta:
        printed: dict[str, Any] | None = evaluate_generalization(**common, as_printed=True)
    else:  # the printed deviation term sqrt(log(R/delta)/N) is undefined for R <= delta
        printed = None
    all_hold = all(c["holds"] for c in derived["conditions"])
    # Lemma 4 and Theorem 5 speak of every t > 0: the maximum runs over t >= 1 (over t = 0
    # only when no step was taken)
    after = slice(1, None) if run.train_loss.numel() > 1 else slice(None)
    max_train = float(run.train_loss[after].max())
    max_test = float(run.test_loss[after].max()) if X_test is not None else math.nan
    lemma4 = derived["terms"]["empirical_loss"]
    thm5 = derived["bound"]["true_loss"]
    lemma4_applies = objective == "phi" and eval_loss == "absolute"
    findings: list[str] = []
    if not contained:
        findings.append(f"the radii {tuple(radii)} do not contain the trajectory (travelled "
                        f"{tuple(round(t, 12) for t in travelled)}): the bounds do not apply")
    if not lemma4_applies:
        findings.append(f"Lemma 4 does not apply as stated: objective={objective!r} "
                        f"(needs 'phi'), eval_loss={eval_loss!r} (needs ℓ(y, y) = 0)")
    applies = all_hold and lemma4_applies and contained
    if max_train > lemma4 and applies:
        findings.append(f"VIOLATION with all conditions holding: max_t L_S = {max_train:.6g} > "
                        f"Lemma 4 bound {lemma4:.6g}")
    if X_test is not None and max_test > thm5 and applies:
        findings.append(f"VIOLATION with all conditions holding: max_t held-out loss = "
                        f"{max_test:.6g} > Theorem 5 bound {thm5:.6g} (an estimate of L_D)")
    return {
        "cell": {"N": init["N"], "d_m": d_m, "d_s": init["d_s"], "d": init["d"], "seed": seed,
                 "steps": steps, "lr": float(lr), "objective": objective,
                 "eval_loss": eval_loss, "delta": delta},
        "init": {**init["norms"], "alpha": init["alpha"], "alpha_used": alpha_used,
                 "alpha_full_row_rank": init["alpha_full_row_rank"], "Phi0": init["Phi0"],
                 "R_X_measured": init["R_X"], "R_X_used": rx},
        "radii": dict(zip(("R_Q", "R_K", "R_V", "R_O"), radii, strict=True)),
        "radii_travelled": dict(zip(("R_Q", "R_K", "R_V", "R_O"), travelled, strict=True)),
        "radii_contain_trajectory": contained,
        "conditions": derived["conditions"],
        "all_conditions_hold": all_hold,
        "empirical": {
            "max_train_loss": max_train,
            "final_train_loss": float(run.train_loss[-1]),
            "final_phi": float(run.phi[-1]),
            "phi_non_increasing": bool((run.phi[1:] <= run.phi[:-1] * (1 + 1e-12)).all()),
            "lemma4_bound": lemma4,
            "lemma4_bound_printed": printed["terms"]["empirical_loss"] if printed else None,
            "sqrt_2_phi0_over_N": derived["quantities"]["empirical_loss_phi0"],
            "within_lemma4": max_train <= lemma4,
            "lemma4_applies": lemma4_applies,
        },
        "true": {
            "max_test_loss": max_test,
            "final_test_loss": float(run.test_loss[-1]),
            "theorem5_bound": thm5,
            "theorem5_bound_printed": printed["bound"]["true_loss"] if printed else None,
            "within_theorem5": (max_test <= thm5) if X_test is not None else None,
            "within_theorem5_printed": ((max_test <= printed["bound"]["true_loss"])
                                        if X_test is not None and printed else None),
        },
        "findings": findings,
        "free": free,
        "bounds": {"derived": derived, "as_printed": printed},
    }


# ---------------------------------------------------------------------------------------------
# ``boundcalc validate generalization``: one (seed) cell as measured-vs-bound records
# ---------------------------------------------------------------------------------------------

#: ``validate generalization`` checks: (record name, claim, where the bound sits in the
#: calculator's output, the measured key of :func:`check_run`'s report, the set of its free
#: yardsticks in ``report["free"]``: ``train`` or ``heldout``).
_CHECKS = (
    ("lemma4.empirical_loss", "max_t L_S(f_θt) ≤ Lemma 4 bound (ℓ = |f − y|, GD on Φ)",
     ("terms", "empirical_loss"), ("empirical", "max_train_loss"), "train"),
    ("theorem5.heldout_loss", "max_t held-out loss (estimate of L_D) ≤ Theorem 5 bound",
     ("bound", "true_loss"), ("true", "max_test_loss"), "heldout"),
)


def _free_bounds(report: Mapping[str, Any], part: str) -> dict[str, float]:
    """The free yardsticks of a check on ``part`` (``train``/``heldout``): the loss range
    A + Y and the measured mean losses of the zero predictor and of θ⁰ on that set (left out
    when not measured)."""
    free = report["free"]
    out = {"loss_range": float(free["loss_range"]),
           "zero_predictor_loss": float(free[f"zero_predictor_{part}_loss"]),
           "initial_model_loss": float(free[f"initial_{part}_loss"])}
    return {k: v for k, v in out.items() if math.isfinite(v)}

#: The calculator's conditions that are hypotheses of Lemma 4 (its own probability replaces
#: ``probability_positive``; ``dudley_minimiser_le_A`` concerns Theorem 5's Rademacher term only).
_LEMMA4_CONDITIONS = ("width", "alpha_square", "alpha_cube")


def _check_conditions(name: str, bounds: Mapping[str, Any], contained: bool, applies: bool
                      ) -> tuple[dict[str, bool], float]:
    """The conditions of one check (name → holds) and the probability its statement claims."""
    conds = {c["name"]: bool(c["holds"]) for c in bounds["conditions"]}
    if name.startswith("lemma4"):
        probability = float(bounds["quantities"]["lemma4_probability"])
        conds = {k: conds[k] for k in _LEMMA4_CONDITIONS}
        conds["probability_positive"] = probability > 0
    else:
        probability = float(bounds["probability"])
    conds["radii_contain_trajectory"] = bool(contained)
    if not applies:
        conds["lemma4_applies"] = False
    return conds, probability


def validation_records(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Turn one :func:`check_run` report into ``validate``'s measured-vs-bound records.

    One record per (check, form): Lemma 4 (max_t empirical loss) and Theorem 5 (max_t held-out
    loss), each against the derived bound and, when defined, the printed one. Each record carries
    ``holds`` (measured ≤ bound), one ``cond_<name>`` per hypothesis of that check and form, and
    ``conditions_hold`` (all of them) and ``failing`` (their names, or ``none``). The hypotheses:
    ``width``, ``alpha_square``, ``alpha_cube`` (Wu et al.'s Theorem 1, as the calculator states
    them), ``probability_positive`` (the probability the check's statement claims, Lemma 4's
    1 − 8e^{−d_m/2} − δ − … or Theorem 5's 1 − 8e^{−d_m/2} − 2δ − …, is > 0),
    ``radii_contain_trajectory`` (the GD iterates stay within the radii, L161), for the printed
    Theorem 5 ``dudley_minimiser_le_A``, and ``lemma4_applies`` (only when false: the run is not
    GD on Φ with ℓ(y, y) = 0). ``ratio`` = measured/bound, ``inf`` when the bound is ≤ 0.

    Beside ``holds``, each record says whether its bound says anything: ``verdict``
    (:func:`boundcalc.generalization.bound.verdict_of`: ``guaranteed`` when every condition holds
    and the bound is below every free yardstick, ``vacuous`` when the conditions hold but it is not,
    ``not_guaranteed`` when a condition fails or the record's probability is below ½), the
    yardsticks on the check's own set (``loss_range`` = A + Y; ``zero_predictor_loss`` and
    ``initial_loss``, the measured mean loss of f = 0 and of θ⁰: held-out for Theorem 5,
    training for Lemma 4), the binding one
    (``free_bound``, ``free_bound_name``) and ``bound_over_free`` = bound / free_bound.
    """
    from boundcalc.generalization.bound import verdict_of

    cell = report["cell"]
    init = report["init"]
    common = {
        "d_m": cell["d_m"], "N": cell["N"], "d_s": cell["d_s"], "d": cell["d"],
        "steps": cell["steps"], "lr": cell["lr"], "alpha": init["alpha"],
        "alpha_full_row_rank": init["alpha_full_row_rank"], "Phi0": init["Phi0"],
        "R_X": init["R_X_used"],
        **{f"travelled_{k}": v for k, v in report["radii_travelled"].items()},
        "phi_non_increasing": report["empirical"]["phi_non_increasing"],
        "sqrt_2_phi0_over_N": report["empirical"]["sqrt_2_phi0_over_N"],
        "final_train_loss": report["empirical"]["final_train_loss"],
        "final_heldout_loss": report["true"]["final_test_loss"],
    }
    applies = bool(report["empirical"]["lemma4_applies"])
    records = []
    for form, key in (("derived", "derived"), ("as printed", "as_printed")):
        bounds = report["bounds"][key]
        if bounds is None:  # printed deviation term undefined (R <= delta)
            continue
        for name, claim, (b1, b2), (m1, m2), part in _CHECKS:
            conds, probability = _check_conditions(name, bounds,
                                                   report["radii_contain_trajectory"], applies)
            failing = [k for k, ok in conds.items() if not ok]
            measured = float(report[m1][m2])
            bound = float(bounds[b1][b2])
            ratio = measured / bound if bound > 0 else math.inf
            free = _free_bounds(report, part)
            verdict, binding = verdict_of(not failing, bound, free, probability)
            records.append({
                "name": name, "method": form, "measured": measured, "bound": bound,
                "ratio": ratio, "holds": bool(measured <= bound), "verdict": verdict,
                "free_bound": free[binding], "free_bound_name": binding,
                "bound_over_free": bound / free[binding] if free[binding] > 0 else math.inf,
                "loss_range": free["loss_range"],
                "zero_predictor_loss": free.get("zero_predictor_loss", math.nan),
                "initial_loss": free.get("initial_model_loss", math.nan),
                "conditions_hold": not failing,
                **{f"cond_{k}": v for k, v in conds.items()},
                "failing": ",".join(failing) or "none", "probability": probability,
                "statement": claim, **common,
            })
    return records


def validate_cell(data: Mapping[str, Any], *, d_m: int, seed: int, steps: int, lr: float,
                  delta: float = 0.05, radii: tuple[float, float, float, float] | None = None,
                  hidden_constants: str | Mapping[str, object] | None = None,
                  dtype: torch.dtype = torch.float64, device: torch.device | str = "cpu"
                  ) -> list[dict[str, Any]]:
    """One ``validate generalization`` cell: LeCun init with ``seed``, GD on Φ (ℓ = |f − y|),
    :func:`check_run` at ``data``'s R_X, then :func:`validation_records`."""
    def tensor(name: str) -> Tensor:
        return torch.as_tensor(data[name], dtype=torch.float64)

    report = check_run(tensor("X"), tensor("y"), d_m=d_m, seed=seed, steps=steps, lr=lr,
                       delta=delta, objective="phi", eval_loss="absolute",
                       X_test=tensor("X_test"), y_test=tensor("y_test"), R_X=data["R_X"],
                       radii=radii, hidden_constants=hidden_constants, dtype=dtype,
                       device=device)
    return validation_records(report)


def generalization_cell(settings: ValidationSettings, seed: int) -> list[dict[str, Any]]:
    """The ``validate generalization`` cell of init ``seed``: :func:`validate_cell` with the
    run's :class:`~boundcalc.validation.settings.GeneralizationSettings` (in
    ``settings.extra["generalization"]``) on its data, loaded once per run; one torch thread on
    the CPU (the catalog's falsifier of the GD generalization bound)."""
    g = settings.extra.get(GENERALIZATION)
    if not isinstance(g, GeneralizationSettings):
        raise ValueError("generalization needs its settings in settings.extra['generalization'] "
                         "(make_generalization_settings)")
    previous = torch.get_num_threads()
    if g.device == "cpu":
        torch.set_num_threads(1)
    try:
        return validate_cell(generalization_data(g.N, g.n_test, g.data), d_m=g.d_m, seed=seed,
                             steps=g.steps, lr=g.lr, delta=g.delta, radii=g.radii,
                             hidden_constants=g.hidden_constants,
                             dtype=getattr(torch, g.dtype), device=g.device)
    finally:
        torch.set_num_threads(previous)
