"""Evaluate paper 003's generalization bound (Theorem 5) for concrete sizes: the API behind
``boundcalc generalization``.

The expressions live in :mod:`boundcalc.theory.generalization` (sympy); this module validates the
inputs, optionally draws the initial norms from the LeCun initialisation (numpy only — the
calculator never imports torch), evaluates every expression with mpmath and returns the JSON
contract of the calculator::

    {statement, inputs, quantities, terms, bound, conditions, probability, version}

``quantities`` carries every named quantity of the paper (η_•, ξ_•, ρ, z, ẑ, M, M̂, A, P, α,
Φ(θ⁰), plus the intermediate values listed in :data:`QUANTITY_KEYS`), all finite floats.

Example:
    >>> from boundcalc.generalization import evaluate_generalization
    >>> out = evaluate_generalization(N=1000, d_m=64, d_s=13, R_X=1, radii=(1, 1, 1, 1),
    ...                               delta=0.05, alpha=0.5, Phi0=10, seed=0)
    >>> sorted(out)
    ['bound', 'conditions', 'inputs', 'probability', 'quantities', 'statement', 'terms', 'version']
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import mpmath
import numpy as np
import sympy as sp

from boundcalc import __version__
from boundcalc.params import InputError, parse_integer, parse_number
from boundcalc.theory import generalization as G
from boundcalc.theory import generalization_symbols as GS

#: Keys of the ``quantities`` section, in output order (the first 16 are the issue's contract).
QUANTITY_KEYS: tuple[str, ...] = (
    "eta_Q", "eta_K", "eta_V", "eta_O", "xi_Q", "xi_K", "xi_V", "rho", "z", "z_hat", "M",
    "M_hat", "A", "P", "alpha", "Phi0",
    "R", "R_union", "dudley_scale", "rademacher_complexity", "lemma1_as_printed",
    "lemma4_first", "lemma4_second", "empirical_loss_phi0", "lemma4_probability",
)

#: Norm name → CLI flag, in the order of :data:`boundcalc.theory.generalization_symbols`.
NORM_FLAGS: dict[str, str] = {
    "WQ0_F": "--wq-fro", "WK0_F": "--wk-fro", "WV0_F": "--wv-fro",
    "WQ0_2": "--wq-spec", "WK0_2": "--wk-spec", "WV0_2": "--wv-spec", "WO0_2": "--wo-norm",
}

DEFAULT_PRECISION = 30
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
    """Draw θ⁰ from the LeCun init of paper 003 §3.1.3 and return its seven norms.

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
    """Validated inputs of :func:`evaluate_generalization` (all values as floats / ints)."""

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

    def symbol_values(self) -> dict[sp.Symbol, float]:
        """Value of every symbol of :data:`GS.ARGUMENTS`."""
        values: dict[sp.Symbol, float] = {
            GS.N: self.N, GS.d_m: self.d_m, GS.d_s: self.d_s, GS.R_X: self.R_X,
            GS.delta: self.delta, GS.R_Q: self.radii[0], GS.R_K: self.radii[1],
            GS.R_V: self.radii[2], GS.R_O: self.radii[3], GS.alpha: self.alpha,
            GS.Phi0: self.Phi0,
        }
        for sym in GS.ARGUMENTS:
            if sym.name in self.norms:
                values[sym] = self.norms[sym.name]
            elif sym.name in self.hidden:
                values[sym] = self.hidden[sym.name]
        return values

    def as_dict(self) -> dict[str, Any]:
        """Flat, JSON-ready view (radii, norms and hidden constants as separate keys)."""
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
        out.update(self.hidden)
        out["as_printed"] = self.as_printed
        return out


def _positive(flag: str, value: object) -> float:
    x = parse_number(flag, value)  # type: ignore[arg-type]
    if x <= 0:
        raise InputError(flag, f"must be > 0, got {value!r}")
    return x


def _positive_int(flag: str, value: object, minimum: int = 1) -> int:
    x = parse_integer(flag, value)  # type: ignore[arg-type]
    if x < minimum:
        raise InputError(flag, f"must be an integer >= {minimum}, got {value!r}")
    return x


def parse_radii(value: object) -> tuple[float, float, float, float]:
    """``"1,2,3,4"`` or a 4-sequence → (R_Q, R_K, R_V, R_O); one value is used for all four."""
    if isinstance(value, str):
        parts: Sequence[object] = [p.strip() for p in value.split(",")]
    elif isinstance(value, (int, float)):
        parts = [value]
    else:
        parts = list(value)  # type: ignore[call-overload]
    if len(parts) == 1:
        parts = list(parts) * 4
    if len(parts) != 4:
        raise InputError("--radii", f"takes R_Q,R_K,R_V,R_O (four values) or one value, "
                                    f"got {value!r}")
    vals = [parse_number("--radii", p) for p in parts]  # type: ignore[arg-type]
    if any(v <= 0 for v in vals):
        raise InputError("--radii", f"must all be > 0 (M divides by each radius), got {value!r}")
    return vals[0], vals[1], vals[2], vals[3]


def parse_hidden_constants(value: str | Mapping[str, object] | None) -> dict[str, float]:
    """``"C_D=2,C_cov=0.5"`` or a mapping → every hidden constant (unnamed ones default to 1)."""
    out = dict(GS.HIDDEN_DEFAULTS)
    if value is None or value == "":
        return out
    if isinstance(value, str):
        items: list[tuple[str, object]] = []
        for part in value.split(","):
            if "=" not in part:
                raise InputError("--hidden-constants", f"takes NAME=VALUE pairs, got {part!r}")
            key, _, val = part.partition("=")
            items.append((key.strip(), val.strip()))
    else:
        items = list(value.items())
    for key, val in items:
        if key not in out:
            raise InputError("--hidden-constants",
                             f"unknown constant {key!r}; known: {', '.join(out)}")
        out[key] = _positive("--hidden-constants", val)
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
) -> GeneralizationInputs:
    """Check every input; raise :class:`InputError` naming the flag.

    Rules: N an integer ≥ 2 (the probability has (N−1)^{−ĉ}); d_m, d_s, d integers ≥ 1 (d only
    for the LeCun draw, default d_m as in the paper's line 145); R_X, radii, hidden constants,
    norms and α > 0; Φ(θ⁰) ≥ 0; δ ∈ (0, 1); exactly one of ``init_norms`` (all seven) and
    ``seed``; each spectral norm ≤ its Frobenius norm; with ``as_printed`` the radius
    R = √(ΣR_•²) must exceed δ (the printed √(log(R/δ)/N)).
    """
    n_int = _positive_int("--N", N, minimum=2)
    dm_int = _positive_int("--dm", d_m)
    ds_int = _positive_int("--ds", d_s)
    d_int = dm_int if d is None else _positive_int("--d", d)
    rx = _positive("--rx", R_X)
    rad = parse_radii(radii)
    delta_v = parse_number("--delta", delta)  # type: ignore[arg-type]
    if not 0 < delta_v < 1:
        raise InputError("--delta", f"must lie in (0, 1), got {delta!r}")
    if alpha is None:
        raise InputError("--alpha", "is required: sigma_min(F_pre^0) measured on the data")
    alpha_v = _positive("--alpha", alpha)
    if Phi0 is None:
        raise InputError("--phi0", "is required: Phi(theta^0) = 1/2 ||f(theta^0) - y||^2")
    phi0_v = parse_number("--phi0", Phi0)  # type: ignore[arg-type]
    if phi0_v < 0:
        raise InputError("--phi0", f"must be >= 0, got {Phi0!r}")
    hidden = parse_hidden_constants(hidden_constants)  # type: ignore[arg-type]

    given = {k: v for k, v in (init_norms or {}).items() if v is not None}
    unknown = set(given) - set(NORM_FLAGS)
    if unknown:
        raise ValueError(f"`init_norms` has unknown keys {sorted(unknown)}; "
                         f"expected {list(NORM_FLAGS)}")
    if seed is not None and given:
        raise InputError("--from-init", "draws the init norms; do not also give "
                         f"{', '.join(NORM_FLAGS[k] for k in given)}")
    if seed is not None:
        seed_int = parse_integer("--from-init", seed)  # type: ignore[arg-type]
        if seed_int < 0:
            raise InputError("--from-init", f"must be a seed >= 0, got {seed!r}")
        if dm_int * d_int > MAX_INIT_ENTRIES:
            raise InputError("--from-init", f"draws d_m x d = {dm_int} x {d_int} matrices, more "
                             f"than {MAX_INIT_ENTRIES:.0e} entries; give the seven norm flags")
        norms = lecun_init_norms(dm_int, d_int, seed_int)
        method = ("dense eigensolver" if min(dm_int, d_int) <= EXACT_SPECTRAL_MAX
                      else "Lanczos")
        source = (f"LeCun init drawn with numpy seed {seed_int} (d = {d_int}; spectral norms "
                  f"by {method})")
    else:
        seed_int = None
        if not given:
            raise InputError("--from-init", "or all seven norm flags "
                             f"({', '.join(NORM_FLAGS.values())}) are required")
        missing = [flag for k, flag in NORM_FLAGS.items() if k not in given]
        if missing:
            raise InputError(missing[0], "is required when the init norms are given "
                             "(or use --from-init SEED)")
        norms = {k: _positive(NORM_FLAGS[k], given[k]) for k in NORM_FLAGS}
        source = "given"
    for name in ("Q", "K", "V"):
        if norms[f"W{name}0_2"] > norms[f"W{name}0_F"] * (1 + 1e-12):
            flag = NORM_FLAGS[f"W{name}0_2"]
            raise InputError(flag, f"must be <= the Frobenius norm {norms[f'W{name}0_F']!r}, "
                             f"got {norms[f'W{name}0_2']!r}")
    if as_printed and math.sqrt(sum(r * r for r in rad)) <= delta_v:
        raise InputError("--radii", "give R = sqrt(R_Q^2+R_K^2+R_V^2+R_O^2) > delta: the printed "
                         "confidence term sqrt(log(R/delta)/N) needs it")
    return GeneralizationInputs(
        N=n_int, d_m=dm_int, d_s=ds_int, d=d_int, R_X=rx, radii=rad, delta=delta_v,
        norms=norms, norms_source=source, seed=seed_int, alpha=alpha_v, Phi0=phi0_v,
        hidden=hidden, as_printed=bool(as_printed),
    )


def measure_data(path: str, d_m: object, seed: object) -> dict[str, Any]:
    """Measure N, d_s, R_X, the seven init norms, α and Φ(θ⁰) on a data set (``--data``).

    ``path`` is an ``.npz`` with arrays ``X`` (N, d_s, d) and ``y`` (N,). θ⁰ is the torch LeCun
    init of :func:`boundcalc.validators.encoder.lecun_init` with ``seed`` (so the norms, α and
    Φ(θ⁰) all belong to the same θ⁰). Imports torch, lazily: the rest of the calculator does not.
    """
    dm_int = _positive_int("--dm", d_m)
    if seed is None:
        raise InputError("--from-init", "SEED is required with --data (the seed of theta^0)")
    seed_int = parse_integer("--from-init", seed)  # type: ignore[arg-type]
    try:
        with np.load(str(path)) as archive:
            if "X" not in archive or "y" not in archive:
                raise InputError("--data", f"{path!r} must be an .npz with arrays 'X' "
                                 f"(N, d_s, d) and 'y' (N,), found {sorted(archive.files)}")
            X = np.asarray(archive["X"], dtype=float)
            y = np.asarray(archive["y"], dtype=float)
    except InputError:
        raise
    except (OSError, ValueError) as exc:
        raise InputError("--data", f"cannot read {path!r} as .npz: {exc}") from None
    if X.ndim != 3 or y.shape != (X.shape[0],) or X.shape[0] < 2:
        raise InputError("--data", f"needs X of shape (N, d_s, d) with N >= 2 and y of shape "
                                   f"(N,), got X {X.shape}, y {y.shape}")
    if not (np.isfinite(X).all() and np.isfinite(y).all()):
        raise InputError("--data", f"{path!r} contains non-finite values")
    try:
        import torch

        from boundcalc.validators.encoder import lecun_init, measure_init
    except ImportError:
        raise InputError("--data", "needs torch (pip install 'boundcalc[validators]'); or give "
                                   "--alpha and --phi0") from None
    params = lecun_init(dm_int, int(X.shape[2]), seed=seed_int)
    out = measure_init(params, torch.from_numpy(X), torch.from_numpy(y))
    out["seed"] = seed_int
    out["source"] = (f"measured on {path} at the torch LeCun init with seed {seed_int} "
                     f"(boundcalc.validators.encoder)")
    return out


# ---------------------------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------------------------

_OPS = {">=": lambda a, b: a >= b, ">": lambda a, b: a > b,
        "<=": lambda a, b: a <= b, "<": lambda a, b: a < b}


@cache
def _compiled(as_printed: bool):
    """lambdify (mpmath) every expression and both sides of every condition, once per form."""
    statement = G.theorem5(as_printed)
    exprs = statement.expressions()
    keys = tuple(exprs)
    func = sp.lambdify(GS.ARGUMENTS, [exprs[k] for k in keys], modules="mpmath")
    conds = []
    for cond in statement.conditions:
        rel = cond.relation
        sides = sp.lambdify(GS.ARGUMENTS, [rel.lhs, rel.rhs], modules="mpmath")
        conds.append((cond, rel.rel_op, sides))
    return statement, keys, func, tuple(conds)


def _finite(name: str, value: mpmath.mpf) -> float:
    out = float(value)
    if not math.isfinite(out):
        raise ValueError(f"{name} evaluated to {out}; inputs out of the representable range")
    return out


def evaluate_inputs(inputs: GeneralizationInputs,
                    precision: int = DEFAULT_PRECISION) -> dict[str, Any]:
    """Evaluate Theorem 5 (derived or printed form) at validated inputs; the JSON contract."""
    if precision < 10:
        raise ValueError(f"`precision` must be >= 10 digits, got {precision}")
    statement, keys, func, conds = _compiled(inputs.as_printed)
    values = inputs.symbol_values()
    with mpmath.workdps(precision):
        args = [mpmath.mpf(values[s]) for s in GS.ARGUMENTS]
        out = dict(zip(keys, func(*args), strict=True))
        quantities = {k: _finite(k, out[f"constants.{k}"]) for k in statement.constants}
        quantities["alpha"] = inputs.alpha
        quantities["Phi0"] = inputs.Phi0
        quantities = {k: quantities[k] for k in QUANTITY_KEYS}
        terms = {k: _finite(k, out[f"terms.{k}"]) for k in statement.terms}
        bound = {k: _finite(k, out[f"bound.{k}"]) for k in statement.bound}
        probability = _finite("probability", out["probability"])
        conditions = []
        for cond, op, sides in conds:
            lhs, rhs = sides(*args)
            holds = bool(_OPS[op](lhs, rhs))
            detail = (f"{cond.requirement}: {mpmath.nstr(lhs, 6)} {op} {mpmath.nstr(rhs, 6)} "
                      f"{'holds' if holds else 'FAILS'}")
            if not holds:
                detail += f" ({cond.why})"
            conditions.append({"name": cond.name, "holds": holds, "detail": detail})
    guaranteed = all(c["holds"] for c in conditions)
    form = "as_printed" if inputs.as_printed else "derived"
    return {
        "statement": {
            "name": statement.name,
            "title": statement.title,
            "summary": statement.summary,
            "guaranteed": guaranteed,
            "form": form,
            "precision_digits": precision,
            "paper": "003_ca845a00a60efb13 (Generalization bound for a Shallow Transformer "
                     "trained using Gradient Descent)",
            "hidden_constants": (
                ", ".join(f"{s.name} = {inputs.hidden[s.name]:g}" for s in GS.HIDDEN_CONSTANTS)
                + " (constants the paper hides in '≲', O, Omega; each defaults to 1)"),
            "discrepancies": (
                "; ".join(f"{d.key} (lines {d.lines})" for d in G.discrepancies())
                + f". This output uses the {form} form; --symbolic shows both, "
                  "docs/generalization.md explains each"),
        },
        "inputs": inputs.as_dict(),
        "quantities": quantities,
        "terms": terms,
        "bound": bound,
        "conditions": conditions,
        "probability": probability,
        "version": __version__,
    }


def render_descriptions() -> dict[str, str]:
    """One-line meaning of every key of the output (for ``render_result(descriptions=...)``)."""
    out = {s.name: text for s, text in GS.GLOSSARY.items()}
    out["d"] = "input dimension of the LeCun draw (default d_m; the formulas assume d = d_m)"
    out["norms_source"] = "where the seven init norms come from"
    out.update(G.DESCRIPTIONS)
    out.update({"alpha": GS.GLOSSARY[GS.alpha], "Phi0": GS.GLOSSARY[GS.Phi0]})
    return out


def render_latex_names() -> dict[str, str]:
    """LaTeX symbol of every key of the output (for ``render_result(latex_names=...)``)."""
    out = {s.name: name for s, name in GS.LATEX_NAMES.items()}
    out.update(G.LATEX)
    return out


def evaluate_generalization(
    *,
    N: object,
    d_m: object,
    d_s: object,
    R_X: object,
    radii: object,
    delta: object,
    alpha: object,
    Phi0: object,
    init_norms: Mapping[str, object] | None = None,
    seed: object = None,
    d: object = None,
    hidden_constants: str | Mapping[str, object] | None = None,
    as_printed: bool = False,
    precision: int = DEFAULT_PRECISION,
) -> dict[str, Any]:
    """Paper 003's Theorem 5 at one point, as the calculator's JSON-ready dict.

    Args:
        N: number of training examples (≥ 2).
        d_m: model dimension. d_s: sequence length. R_X: ‖X_n‖_F ≤ √d_s·R_X.
        radii: (R_Q, R_K, R_V, R_O), a 4-sequence or ``"R_Q,R_K,R_V,R_O"``.
        delta: failure probability (the bound holds w.p. ≥ 1 − 8e^{−d_m/2} − 2δ − …).
        alpha: σ_min(F_pre⁰). Phi0: Φ(θ⁰) = ½‖f(θ⁰) − y‖² (a sum over the N samples).
        init_norms: the seven norms of θ⁰ keyed as :data:`NORM_FLAGS`; or
        seed: draw them from the LeCun init (:func:`lecun_init_norms`), with
        d: the input dimension of that draw (default d_m, the paper's line 145).
        hidden_constants: overrides of :data:`GS.HIDDEN_DEFAULTS` (each defaults to 1).
        as_printed: evaluate the printed statements instead of the derived forms.
        precision: mpmath digits.

    Returns:
        ``{statement, inputs, quantities, terms, bound, conditions, probability, version}``.

    Raises:
        InputError: a bad input; ``.flag`` names the CLI flag.
    """
    inputs = validate_generalization(
        N=N, d_m=d_m, d_s=d_s, R_X=R_X, radii=radii, delta=delta, alpha=alpha, Phi0=Phi0,
        init_norms=init_norms, seed=seed, d=d, hidden_constants=hidden_constants,
        as_printed=as_printed,
    )
    return evaluate_inputs(inputs, precision)


# ---------------------------------------------------------------------------------------------
# Symbolic output
# ---------------------------------------------------------------------------------------------


def _unicode(expr: sp.Basic) -> str:
    names = {s: sp.Symbol(GS.UNICODE_NAMES[s], **s.assumptions0)
             for s in expr.free_symbols if s in GS.UNICODE_NAMES}
    return sp.sstr(expr.xreplace(names))


def _latex(expr: sp.Basic) -> str:
    return sp.latex(expr, symbol_names={**GS.LATEX_NAMES, **G.QUANTITY_LATEX})


def symbolic_generalization(as_printed: bool = False) -> dict[str, Any]:
    """Every formula of Theorem 5 (Unicode one-liner and LaTeX), its conditions, its probability,
    the hidden constants and the discrepancy table with both forms (for ``--symbolic``).

    Formulas are written one level at a time (:func:`G.compact_formulas`): P in terms of η_V,
    η_K, η_Q; the terms in terms of ρ, M, z, s, A; and so on.
    """
    st = G.theorem5(as_printed)
    compact = G.compact_formulas(as_printed)

    def entry(key: str, expr: sp.Basic) -> dict[str, str]:
        short = key.split(".", 1)[-1]
        symbol = G.QUANTITY_SYMBOLS.get(short)
        return {"description": G.DESCRIPTIONS.get(short, ""),
                "symbol": str(symbol) if symbol is not None else short,
                "unicode": _unicode(expr), "latex": _latex(expr)}

    return {
        "statement": {"name": st.name, "title": st.title, "summary": st.summary,
                      "form": "as_printed" if as_printed else "derived"},
        "quantities": {k: entry(k, compact[k]) for k in st.constants},
        "terms": {k: entry(f"terms.{k}", compact[f"terms.{k}"]) for k in st.terms},
        "bound": {k: entry(f"bound.{k}", compact[f"bound.{k}"]) for k in st.bound},
        "probability": entry("probability", compact["probability"]),
        "conditions": [{"name": c.name, "requirement": c.requirement,
                        "unicode": _unicode(compact[f"condition.{c.name}"]),
                        "latex": _latex(compact[f"condition.{c.name}"]),
                        "why": c.why} for c in st.conditions],
        "hidden_constants": {s.name: {"default": d, "where": text}
                             for s, (d, text) in GS.HIDDEN_CONSTANTS.items()},
        "discrepancies": [
            {"key": d.key, "lines": d.lines, "note": d.note,
             "printed": {"text": d.printed,
                         "unicode": _unicode(d.printed_expr) if d.printed_expr is not None
                         else "", "latex": _latex(d.printed_expr)
                         if d.printed_expr is not None else ""},
             "derived": {"text": d.derived,
                         "unicode": _unicode(d.derived_expr) if d.derived_expr is not None
                         else "", "latex": _latex(d.derived_expr)
                         if d.derived_expr is not None else ""}}
            for d in G.discrepancies()
        ],
    }


def symbolic_text(as_printed: bool = False) -> str:
    """Plain-text rendering of :func:`symbolic_generalization` (Unicode and LaTeX per line)."""
    data = symbolic_generalization(as_printed)
    lines = [f"{data['statement']['title']} — form: {data['statement']['form']}", ""]
    for group in ("quantities", "terms", "bound"):
        lines.append(f"[{group}]")
        for key, e in data[group].items():
            lines.append(f"  {key}: {e['symbol']} = {e['unicode']}")
            lines.append(f"    LaTeX: {e['latex']}")
            if e["description"]:
                lines.append(f"    ({e['description']})")
        lines.append("")
    p = data["probability"]
    lines += ["[probability]", f"  {p['unicode']}", f"    LaTeX: {p['latex']}", ""]
    lines.append("[conditions]")
    for c in data["conditions"]:
        lines.append(f"  {c['name']}: {c['unicode']}    ({c['why']})")
    lines += ["", "[hidden constants] (each defaults to 1; set with --hidden-constants)"]
    for name, h in data["hidden_constants"].items():
        lines.append(f"  {name} = {h['default']}: {h['where']}")
    lines += ["", "[discrepancies: printed statement vs derivation; default = derived, "
                  "--as-printed = printed]"]
    for d in data["discrepancies"]:
        lines.append(f"  {d['key']} (lines {d['lines']})")
        lines.append(f"    printed: {d['printed']['text']}")
        if d["printed"]["latex"]:
            lines.append(f"      LaTeX: {d['printed']['latex']}")
        lines.append(f"    derived: {d['derived']['text']}")
        if d["derived"]["latex"]:
            lines.append(f"      LaTeX: {d['derived']['latex']}")
        lines.append(f"    {d['note']}")
    return "\n".join(lines) + "\n"
