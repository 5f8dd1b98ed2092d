"""The inputs of paper 003's generalization bound (Theorem 5), checked, and the init norms drawn.

Paper 003 is "Generalization bound for a Shallow Transformer trained using Gradient Descent". Its
Theorem 5 depends on the sizes (N, d_m, d_s), the input scale R_X, the radii (R_Q, R_K, R_V, R_O)
the iterates stay within, δ, α = σ_min(F_pre⁰), Φ(θ⁰), seven norms of the initial weights θ⁰ and
the label bound Y (|y| ≤ Y; default :data:`DEFAULT_LABEL_BOUND`).
This module turns what a user gives (CLI text or Python values) into a
:class:`GeneralizationInputs` — every rule checked, each error an :class:`InputError` naming the
CLI flag — and, with ``--from-init SEED``, draws θ⁰ from the LeCun initialisation with numpy
(never torch: the calculator does not import it) and measures its norms, the spectral ones by a
dense eigensolver or, for large matrices, by Lanczos. The evaluation itself is
:mod:`boundcalc.generalization.bound`.

Example:
    >>> inputs = validate_generalization(N=100, d_m=8, d_s=3, R_X=1, radii="1", delta=0.1,
    ...                                  alpha=1, Phi0=1, seed=0)
    >>> inputs.radii, inputs.norms_source.split(" (")[0]
    ((1.0, 1.0, 1.0, 1.0), 'LeCun init drawn with numpy seed 0')
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp

from boundcalc.inputs.params import PARAMS
from boundcalc.inputs.rules import apply_rules
from boundcalc.inputs.surfaces import NORM_FLAGS, check_generalization
from boundcalc.theory import generalization_symbols as GS

__all__ = ["DEFAULT_LABEL_BOUND", "EXACT_SPECTRAL_MAX", "MAX_INIT_ENTRIES",
           "GeneralizationInputs", "lecun_init_norms", "spectral_norm", "validate_generalization"]

#: Default of the label bound Y (``--label-bound``): labels in [−1, 1], as the 0/1 labels of the
#: paper's experiment (line 429) and of ``validate generalization``. Y enters the loss range
#: A + Y (the free yardstick) and the derived C_conf = 3(A + Y), so it must bound every label of
#: the distribution; ``--data`` uses the largest |y| of the data instead.
DEFAULT_LABEL_BOUND = 1.0

#: Largest min(d_m, d) for which the spectral norm uses a dense eigensolver; above it, Lanczos.
EXACT_SPECTRAL_MAX = 1024


# ---------------------------------------------------------------------------------------------
# LeCun initialisation (numpy)
# ---------------------------------------------------------------------------------------------


def spectral_norm(matrix: np.ndarray, tol: float = 1e-9, max_steps: int = 600) -> float:
    """‖W‖₂: dense eigensolver when min(shape) ≤ :data:`EXACT_SPECTRAL_MAX`, else Lanczos.

    Dense: √λ_max of the smaller Gram matrix (LAPACK ``eigvalsh``, relative error ~1e-15).
    Large: Lanczos on WᵀW with full re-orthogonalisation, stopped when the Ritz residual
    |β_k·y_k| of the top Ritz value θ is ≤ ``tol``·θ (checked every 10 steps). The eigenvalue
    error is then of order residual²/gap, ~1e-15 relative for LeCun matrices (a test compares
    with the SVD); ~150 matrix–vector pairs at d_m = 4096 instead of a 20 s dense eigensolver.
    """
    w = np.asarray(matrix, dtype=float)
    if w.ndim != 2:
        raise ValueError(f"`matrix` must be 2-D, got shape {w.shape}")
    if min(w.shape) <= EXACT_SPECTRAL_MAX:
        gram = w.T @ w if w.shape[1] <= w.shape[0] else w @ w.T
        return math.sqrt(max(float(np.linalg.eigvalsh(gram)[-1]), 0.0))
    if w.shape[1] > w.shape[0]:
        w = w.T
    n = w.shape[1]
    steps = min(max_steps, n)
    basis = np.empty((steps + 1, n))
    basis[0] = np.random.default_rng(12345).standard_normal(n)
    basis[0] /= np.linalg.norm(basis[0])
    alphas: list[float] = []
    betas: list[float] = []
    theta = 0.0
    for k in range(steps):
        v = w.T @ (w @ basis[k])
        alphas.append(float(basis[k] @ v))
        for _ in range(2):  # full re-orthogonalisation, twice
            v -= basis[: k + 1].T @ (basis[: k + 1] @ v)
        b = float(np.linalg.norm(v))
        if k % 10 == 9 or b == 0.0 or k == steps - 1:
            tri = np.diag(alphas) + np.diag(betas, 1) + np.diag(betas, -1)
            evals, evecs = np.linalg.eigh(tri)
            theta = float(evals[-1])
            if abs(b * evecs[-1, -1]) <= tol * theta or b == 0.0:
                break
        betas.append(b)
        basis[k + 1] = v / b
    return math.sqrt(theta)


#: the most entries of one d_m x d matrix that ``--from-init`` draws (800 MB of float64)
MAX_INIT_ENTRIES = 10**8


def lecun_init_norms(d_m: int, d: int, seed: int) -> dict[str, float]:
    """Draw θ⁰ from the LeCun init of paper 003 (§3.1.3) and return its seven norms.

    W_Q, W_K, W_V ∈ R^{d_m×d} with entries N(0, 1/d), drawn in that order, then w_O ∈ R^{d_m}
    with entries N(0, 1/d_m), from ``numpy.random.default_rng(seed)``. (Not the same draws as a
    torch initialisation with the same seed; the norms have the same distribution.)
    """
    rng = np.random.default_rng(seed)
    out: dict[str, float] = {}
    for name in ("Q", "K", "V"):
        w = rng.standard_normal((d_m, d)) / math.sqrt(d)
        out[f"W{name}0_F"] = float(np.linalg.norm(w))
        out[f"W{name}0_2"] = spectral_norm(w)
        del w
    out["WO0_2"] = float(np.linalg.norm(rng.standard_normal(d_m) / math.sqrt(d_m)))
    return {k: out[k] for k in NORM_FLAGS}


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GeneralizationInputs:
    """Validated inputs of :func:`evaluate_generalization` (all values as floats / ints).

    ``hidden`` holds every hidden constant with a number (given, or its default 1); a constant
    named in ``derived`` (C_conf when not given) has the default the derivation gives, which
    :func:`boundcalc.generalization.bound.evaluate_inputs` computes from the other inputs.
    """

    N: int
    d_m: int
    d_s: int
    d: int
    R_X: float
    radii: tuple[float, float, float, float]
    delta: float
    norms: dict[str, float]
    norms_source: str
    seed: int | None
    alpha: float
    Phi0: float
    hidden: dict[str, float]
    as_printed: bool
    Y: float = DEFAULT_LABEL_BOUND
    derived: tuple[str, ...] = ()
    #: The smallest probability at which the bound counts as guaranteed (``--min-probability``).
    min_probability: float = float(PARAMS["min_probability"].default or "0.5")

    def symbol_values(self) -> dict[sp.Symbol, float]:
        """Value of every symbol of :data:`GS.ARGUMENTS` but the derived hidden constants."""
        values: dict[sp.Symbol, float] = {
            GS.N: self.N, GS.d_m: self.d_m, GS.d_s: self.d_s, GS.R_X: self.R_X,
            GS.delta: self.delta, GS.R_Q: self.radii[0], GS.R_K: self.radii[1],
            GS.R_V: self.radii[2], GS.R_O: self.radii[3], GS.alpha: self.alpha,
            GS.Phi0: self.Phi0, GS.Y: self.Y,
        }
        for sym in GS.ARGUMENTS:
            if sym.name in self.norms:
                values[sym] = self.norms[sym.name]
            elif sym.name in self.hidden:
                values[sym] = self.hidden[sym.name]
        return values

    def as_dict(self) -> dict[str, Any]:
        """Flat, JSON-ready view (radii, norms and hidden constants as separate keys; a derived
        hidden constant is None here, its value is the evaluation's)."""
        out: dict[str, Any] = {
            "N": self.N, "d_m": self.d_m, "d_s": self.d_s, "d": self.d, "R_X": self.R_X,
            "R_Q": self.radii[0], "R_K": self.radii[1], "R_V": self.radii[2],
            "R_O": self.radii[3], "delta": self.delta,
        }
        out.update(self.norms)
        out["norms_source"] = self.norms_source
        out["seed"] = self.seed
        out["alpha"] = self.alpha
        out["Phi0"] = self.Phi0
        out["Y"] = self.Y
        out.update({s.name: self.hidden.get(s.name) for s in GS.HIDDEN_CONSTANTS})
        out["as_printed"] = self.as_printed
        out["min_probability"] = self.min_probability
        return out


def validate_generalization(
    *,
    N: object,
    d_m: object,
    d_s: object,
    R_X: object,
    radii: object,
    delta: object,
    alpha: object = None,
    Phi0: object = None,
    init_norms: Mapping[str, object] | None = None,
    seed: object = None,
    d: object = None,
    hidden_constants: str | Mapping[str, object] | None = None,
    as_printed: bool = False,
    Y: object = None,
    min_probability: object = None,
) -> GeneralizationInputs:
    """Check every input; raise :class:`InputError` naming the flag.

    Rules: N an integer ≥ 2 (the probability has (N−1)^{−ĉ}); d_m, d_s, d integers ≥ 1 (d only
    for the LeCun draw, default d_m as in the paper's line 145); R_X, radii, hidden constants,
    norms and α > 0; Φ(θ⁰) ≥ 0; δ ∈ (0, 1); exactly one of ``init_norms`` (all seven) and
    ``seed``; each spectral norm ≤ its Frobenius norm; with ``as_printed`` the radius
    R = √(ΣR_•²) must exceed δ (the printed √(log(R/δ)/N)); the label bound Y ≥ 0 (flag
    ``--label-bound``, default :data:`DEFAULT_LABEL_BOUND`); ``min_probability`` in (0, 1)
    (``--min-probability``, the row of :data:`boundcalc.inputs.params.PARAMS`; default ½).
    """
    checked = check_generalization(
        N=N, d_m=d_m, d_s=d_s, R_X=R_X, radii=radii, delta=delta, alpha=alpha, Phi0=Phi0,
        init_norms=init_norms, seed=seed, d=d, hidden_constants=hidden_constants,
        Y=DEFAULT_LABEL_BOUND if Y is None else Y,
        max_init_entries=MAX_INIT_ENTRIES)
    dm_int, d_int, seed_int = checked["d_m"], checked["d"], checked["seed"]
    hidden = checked["hidden_constants"]
    derived = tuple(name for name in GS.DERIVED_DEFAULTS if name not in hidden)
    if seed_int is not None:
        norms = lecun_init_norms(dm_int, d_int, seed_int)
        method = ("dense eigensolver" if min(dm_int, d_int) <= EXACT_SPECTRAL_MAX
                      else "Lanczos")
        source = (f"LeCun init drawn with numpy seed {seed_int} (d = {d_int}; spectral norms "
                  f"by {method})")
    else:
        norms, source = checked["norms"], "given"
    rad, delta_v = checked["radii"], checked["delta"]
    apply_rules("generalization", {"norms": norms, "radii": rad, "delta": delta_v,
                                   "as_printed": bool(as_printed)})
    return GeneralizationInputs(
        N=checked["N"], d_m=dm_int, d_s=checked["d_s"], d=d_int, R_X=checked["R_X"],
        radii=rad, delta=delta_v, norms=norms, norms_source=source, seed=seed_int,
        alpha=checked["alpha"], Phi0=checked["Phi0"], hidden=hidden,
        as_printed=bool(as_printed), Y=checked["Y"], derived=derived,
        min_probability=float(PARAMS["min_probability"].check(
            PARAMS["min_probability"].default if min_probability is None else min_probability)),
    )
