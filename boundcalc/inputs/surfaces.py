"""The inputs of every command-line surface around the calculator, one :class:`Flag` row each.

The calculator's point commands, ``sweep`` and the solvers read :data:`boundcalc.inputs.params.
PARAMS`; this module holds the rows of the other surfaces, each with its type, range, unit and
meaning (:class:`boundcalc.inputs.flags.Flag`):

* :data:`ALPHA` — prop2's recurrent init scale α (``--alpha`` of the point commands, ``sweep``,
  ``compare-rnn``, ``validate prop2`` and :func:`boundcalc.evaluate`): one row, one check.
* :data:`VALIDATE` — ``boundcalc validate`` (the Transformer statements, prop2 and paper 003's
  generalization run), from which :mod:`boundcalc.validation.settings` builds its settings.
* :data:`GENERALIZATION` — ``boundcalc generalization`` (Theorem 5 at one point).
* :data:`CHECK` — ``boundcalc check RUN`` (the flags; the run file's arrays are checked when read,
  :mod:`boundcalc.checking.runfile`).
* :data:`COMPARE_RNN` — ``boundcalc compare-rnn``.

Conditions over several inputs (ρ ≥ ν, δ < ½, b ≤ n, …) are the rules of
:mod:`boundcalc.inputs.rules`. Nothing here imports torch or sympy.

Example:
    >>> VALIDATE["seeds"].check("2"), VALIDATE["device"].check(" CUDA:1 ")
    (2, 'cuda:1')
    >>> GENERALIZATION["N"].range, CHECK["nu"].unit
    ('>= 2', 'transport budget (parameter norm)')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from boundcalc.errors import InputError
from boundcalc.inputs.flags import (
    Flag,
    choice_flag,
    integer_flag,
    param_flag,
    real_flag,
    text_flag,
)
from boundcalc.inputs.params import PARAMS, parse_integer, parse_number
from boundcalc.render.cell_text import FORMATS
from boundcalc.theory.catalog import ACTIVATIONS

__all__ = ["ALPHA", "CHECK", "CHECK_FORMATS", "COMPARE_RNN", "DEVICES", "GENERALIZATION",
           "MAX_VALIDATION_WIDTH", "NORM_FLAGS", "VALIDATE", "check_data_flags",
           "check_generalization", "parse_alpha", "parse_hidden_constants", "parse_radii",
           "parse_sequence_lengths"]


def _rows(*rows: Flag) -> dict[str, Flag]:
    return {row.name: row for row in rows}


#: prop2's α: the Rademacher scale of the IndRNN's recurrent weights at init (u_i(0) = ±α), kept
#: as its exact decimal text (the evaluator reads it as a fraction).
ALPHA = real_flag("alpha", "--alpha", low=0, unit="recurrent weight scale",
                  meaning="prop2: the IndRNN's recurrent init scale (u_i = +-alpha)",
                  as_text=True)


def parse_alpha(value: object) -> str:
    """α checked by :data:`ALPHA` (> 0, finite, nonzero in float64), as exact decimal text.

    Example:
        >>> parse_alpha(" 0.5 "), parse_alpha(1.5)
        ('0.5', '1.5')
    """
    return str(ALPHA.check(value))


# --------------------------------------------------------------------------- validate

#: The largest width ``--m`` (and ``--dm``) the validators accept: 2**24. The validators hold the
#: width-m model as dense torch tensors (several m-row copies per search start and sample), which
#: past 2**24 rows no longer fit a device's memory, and float32 stops representing every integer
#: (so m itself, used in 1/sqrt(m) and the counts) exactly above 2**24.
MAX_VALIDATION_WIDTH = 2**24

_WIDTH_WHY = (f"must be <= {MAX_VALIDATION_WIDTH} (2**24) for the validators: the model is held "
              f"as dense torch tensors with m rows, which no longer fit in memory past that, and "
              f"float32 is exact for integers only up to 2**24")

#: ``--device`` spellings: ``auto``, ``cpu``, ``cuda`` and ``cuda:k``.
DEVICES = ("auto", "cpu", "cuda")


def _device_index(key: str) -> bool:
    return key.startswith("cuda:") and key[5:].isdigit()


def _validator_width(flag: str, value: object) -> int:
    checked = PARAMS["m"].check(value) if flag == "--m" else integer_flag(
        "dm", flag, minimum=1, unit="", meaning="").check(value)
    if checked > MAX_VALIDATION_WIDTH:
        why = _WIDTH_WHY if flag == "--m" else _WIDTH_WHY.replace("m rows", "d_m rows")
        raise InputError(flag, f"{why}, got {value!r}")
    return checked


def _validator_activation(flag: str, value: object) -> str:
    name = PARAMS["activation"].check(value)
    if name not in ACTIVATIONS:
        raise InputError(flag, f"must be {' or '.join(ACTIVATIONS)} for the validators, got "
                               f"{value!r}")
    return name


def _run_directory(flag: str, value: object) -> str:
    text = str(value)
    if not text.strip():
        raise InputError(flag, "must name a directory, got an empty path")
    return text


def _existing_path(flag: str, value: object) -> str:
    text = str(value)
    if not text.strip() or not Path(text).exists():
        raise InputError(flag, f"{text!r} does not exist")
    return str(Path(text).resolve())


def _validate_radii(flag: str, value: object) -> tuple[float, float, float, float] | None:
    return None if str(value).strip().lower() == "travelled" else parse_radii(value, flag)


def _hidden(flag: str, value: object) -> str:
    parse_hidden_constants(value, flag)  # type: ignore[arg-type]
    return str(value)


def _count(name: str, flag: str, unit: str, meaning: str) -> Flag:
    return integer_flag(name, flag, minimum=1, unit=unit, meaning=meaning,
                        message="must be >= 1")


#: Every input of ``boundcalc validate``: the Transformer statements' (the calculator's rows,
#: with the validators' limits and float64), prop2's α, and generalization's.
VALIDATE: Mapping[str, Flag] = _rows(
    Flag("m", "--m", "integer", f"even, 2 .. {MAX_VALIDATION_WIDTH}", "heads",
         "width m of the model the validators build", _validator_width),
    param_flag("n", float64=False, unit="samples"),
    param_flag("d", float64=False, unit="token dimension"),
    param_flag("T", float64=False, unit="tokens"),
    param_flag("delta", float64=True, unit="probability"),
    param_flag("rho", float64=True, unit="projection radius (parameter norm)"),
    param_flag("nu", float64=True, unit="transport budget (parameter norm)"),
    Flag("activation", "--activation", "choice", " or ".join(ACTIVATIONS), "activation",
         "the model's activation (a preset: the validators run it)", _validator_activation),
    param_flag("steps", float64=False, unit="gradient steps"),
    param_flag("batch_size", float64=False, unit="samples per step"),
    _count("seeds", "--seeds", "seeds", "searches and training runs use seeds 0..S-1"),
    _count("rate_seeds", "--rate-seeds", "inits", "inits for the probability checks"),
    _count("teacher_width", "--teacher-width", "heads", "Monte Carlo width of the teacher"),
    choice_flag("effort", "--effort", ("quick", "standard", "thorough"), unit="search size",
                meaning="adversarial search effort (starts, ascent steps, samples)"),
    choice_flag("device", "--device", DEVICES, unit="torch device", extra=_device_index,
                meaning="where the validators compute", message="must be auto, cpu or cuda"),
    choice_flag("dtype", "--dtype", ("float32", "float64"), unit="floating point",
                meaning="torch dtype", message="must be float32 or float64"),
    choice_flag("fmt", "--format", ("table", "json"), unit="", meaning="output format",
                message="must be table or json"),
    text_flag("out", "--out", _run_directory, type="path", range="a directory name",
              unit="", meaning="run directory (default runs/validate-<UTC time>)"),
    Flag("dm", "--dm", "integer", f"1 .. {MAX_VALIDATION_WIDTH}", "model dimension",
         "generalization: model dimension d_m", _validator_width),
    integer_flag("N", "--N", minimum=2, unit="samples", meaning="generalization: training "
                 "samples N"),
    integer_flag("n_test", "--n-test", minimum=1, unit="samples",
                 meaning="generalization: held-out samples"),
    real_flag("lr", "--lr", low=0, unit="step size", meaning="generalization: GD step size on "
              "Phi", message="must be > 0"),
    text_flag("data", "--data", _existing_path, type="path", range="an existing file or folder",
              unit="", meaning="generalization: MNIST IDX folder or .npz"),
    text_flag("radii", "--radii", _validate_radii, type="radii",
              range="travelled, or four values > 0", unit="parameter norm",
              meaning="generalization: R_Q,R_K,R_V,R_O of the bounds"),
    text_flag("hidden_constants", "--hidden-constants", _hidden, type="NAME=V pairs",
              range="each > 0", unit="", meaning="generalization: the hidden constants"),
    ALPHA,
    param_flag("eta", float64=True, unit="step size",
               meaning="--decompose: step size (default: the theorem's eta*)"),
)


# --------------------------------------------------------------------------- generalization

#: Norm name → CLI flag, in the order of :data:`boundcalc.theory.generalization_symbols`.
NORM_FLAGS: dict[str, str] = {
    "WQ0_F": "--wq-fro", "WK0_F": "--wk-fro", "WV0_F": "--wv-fro",
    "WQ0_2": "--wq-spec", "WK0_2": "--wk-spec", "WV0_2": "--wv-spec", "WO0_2": "--wo-norm",
}


def parse_radii(value: object, flag: str = "--radii") -> tuple[float, float, float, float]:
    """``"1,2,3,4"`` or a 4-sequence → (R_Q, R_K, R_V, R_O), each > 0; one value is used for all
    four.

    Example:
        >>> parse_radii("2"), parse_radii([1, 2, 3, 4])
        ((2.0, 2.0, 2.0, 2.0), (1.0, 2.0, 3.0, 4.0))
    """
    from boundcalc.inputs.flags import check_float64

    if isinstance(value, str):
        parts: Sequence[object] = [p.strip() for p in value.split(",")]
    elif isinstance(value, (int, float)):
        parts = [value]
    else:
        try:
            parts = list(value)  # type: ignore[call-overload]
        except TypeError:
            raise InputError(flag, f"takes R_Q,R_K,R_V,R_O (four values) or one value, "
                                   f"got {value!r}") from None
    if len(parts) == 1:
        parts = list(parts) * 4
    if len(parts) != 4:
        raise InputError(flag, f"takes R_Q,R_K,R_V,R_O (four values) or one value, "
                               f"got {value!r}")
    vals = [parse_number(flag, p) for p in parts]  # type: ignore[arg-type]
    for p in parts:
        check_float64(flag, p)
    if any(v <= 0 for v in vals):
        raise InputError(flag, f"must all be > 0 (M divides by each radius), got {value!r}")
    return vals[0], vals[1], vals[2], vals[3]


def parse_hidden_constants(value: str | Mapping[str, object] | None,
                           flag: str = "--hidden-constants") -> dict[str, float]:
    """``"C_D=2,C_cov=0.5"`` or a mapping → the hidden constants with a number: the given ones
    (each > 0) and the numeric defaults (1) of the others. A constant with a derived default
    (C_conf) is in the result only when given.

    Example:
        >>> parse_hidden_constants("C_D=2")["C_D"], parse_hidden_constants(None)["C_cov"]
        (2.0, 1.0)
    """
    from boundcalc.theory import generalization_symbols as GS

    out = dict(GS.HIDDEN_DEFAULTS)
    known = [s.name for s in GS.HIDDEN_CONSTANTS]
    if value is None or value == "":
        return out
    if isinstance(value, str):
        items: list[tuple[str, object]] = []
        for part in value.split(","):
            if "=" not in part:
                raise InputError(flag, f"takes NAME=VALUE pairs, got {part!r}")
            key, _, val = part.partition("=")
            items.append((key.strip(), val.strip()))
    elif isinstance(value, Mapping):
        items = list(value.items())
    else:
        raise InputError(flag, f"takes NAME=VALUE pairs, got {value!r}")
    positive = real_flag("hidden", flag, low=0, unit="", meaning="", message="must be > 0")
    for key, val in items:
        if key not in known:
            raise InputError(flag, f"unknown constant {key!r}; known: {', '.join(known)}")
        out[key] = positive.check(val)
    return out


def _seed(flag: str, value: object) -> int:
    seed = parse_integer(flag, value)  # type: ignore[arg-type]
    if seed < 0:
        raise InputError(flag, f"must be a seed >= 0, got {value!r}")
    return seed


def _norm(key: str, meaning: str) -> Flag:
    return real_flag(key, NORM_FLAGS[key], low=0, unit="matrix norm", meaning=meaning,
                     message="must be > 0")


#: Every input of ``boundcalc generalization`` (Theorem 5 of paper 003 at one point), by the
#: keyword of :func:`boundcalc.generalization.bound_inputs.validate_generalization`.
GENERALIZATION: Mapping[str, Flag] = _rows(
    integer_flag("N", "--N", minimum=2, unit="samples",
                 meaning="training examples (the probability has (N-1)^-c_hat)"),
    integer_flag("d_m", "--dm", minimum=1, unit="model dimension", meaning="model dimension"),
    integer_flag("d_s", "--ds", minimum=1, unit="tokens", meaning="sequence length d_s"),
    integer_flag("d", "--d", minimum=1, unit="input dimension",
                 meaning="input dimension of the --from-init draw (default d_m)"),
    real_flag("R_X", "--rx", low=0, unit="input norm", message="must be > 0",
              meaning="input scale: ||X_n||_F <= sqrt(d_s) R_X"),
    text_flag("radii", "--radii", lambda flag, v: parse_radii(v, flag), type="radii",
              range="four values > 0 (one = all four)", unit="parameter norm",
              meaning="R_Q,R_K,R_V,R_O: distance travelled from the init"),
    real_flag("delta", "--delta", low=0, high=1, unit="probability",
              meaning="failure probability"),
    real_flag("alpha", "--alpha", low=0, unit="singular value", message="must be > 0",
              meaning="alpha = sigma_min(F_pre^0), measured on the data at init"),
    real_flag("Phi0", "--phi0", low=0, low_open=False, unit="loss", message="must be >= 0",
              meaning="Phi(theta^0) = 1/2 ||f(theta^0) - y||^2, a sum over the N samples"),
    real_flag("Y", "--label-bound", low=0, low_open=False, unit="label",
              message="must be >= 0 (|y| <= Y for every label)",
              meaning="Y >= |y| for every label of the distribution"),
    text_flag("seed", "--from-init", _seed, type="integer", range=">= 0", unit="seed",
              meaning="draw the init norms from the LeCun init with this seed"),
    _norm("WQ0_F", "||W_Q^0||_F"), _norm("WK0_F", "||W_K^0||_F"),
    _norm("WV0_F", "||W_V^0||_F"), _norm("WQ0_2", "||W_Q^0||_2"),
    _norm("WK0_2", "||W_K^0||_2"), _norm("WV0_2", "||W_V^0||_2"),
    _norm("WO0_2", "||w_O^0||_2"),
    text_flag("hidden_constants", "--hidden-constants",
              lambda flag, v: parse_hidden_constants(v, flag),  # type: ignore[arg-type]
              type="NAME=V pairs", range="each > 0", unit="",
              meaning="C_D, C_cov, C_conf, C_O, C_width, C_prob, c_hat (default 1)"),
    integer_flag("precision", "--precision", minimum=10, maximum=1000, unit="digits",
                 meaning="mpmath digits", message="must be between 10 and 1000"),
    choice_flag("fmt", "--format", FORMATS, unit="", meaning="output format"),
)


def check_generalization(*, N: object, d_m: object, d_s: object, R_X: object, radii: object,
                         delta: object, alpha: object, Phi0: object,
                         init_norms: Mapping[str, object] | None, seed: object, d: object,
                         hidden_constants: object, Y: object, max_init_entries: int
                         ) -> dict[str, Any]:
    """Every input of Theorem 5 checked by its :data:`GENERALIZATION` row, and how they go
    together: α and Φ(θ⁰) required; exactly one of ``seed`` (``--from-init``, drawing a
    d_m × d init of at most ``max_init_entries`` entries per matrix) and all seven norms.
    Returns the checked values by keyword (``d`` defaults to ``d_m``; ``norms``
    the given norms or None; ``hidden_constants`` the constants with a number).

    Example:
        >>> checked = check_generalization(
        ...     N="100", d_m="8", d_s="3", R_X="1", radii="1", delta="0.1", alpha="1",
        ...     Phi0="1", init_norms=None, seed="0", d=None, hidden_constants=None, Y=1,
        ...     max_init_entries=10**8)
        >>> checked["N"], checked["d"], checked["radii"], checked["norms"]
        (100, 8, (1.0, 1.0, 1.0, 1.0), None)
    """
    rows = GENERALIZATION
    out: dict[str, Any] = {
        "N": rows["N"].check(N), "d_m": rows["d_m"].check(d_m), "d_s": rows["d_s"].check(d_s)}
    out["d"] = out["d_m"] if d is None else rows["d"].check(d)
    out["R_X"] = rows["R_X"].check(R_X)
    out["radii"] = rows["radii"].check(radii)
    out["delta"] = rows["delta"].check(delta)
    if alpha is None:
        raise InputError("--alpha", "is required: sigma_min(F_pre^0) measured on the data")
    out["alpha"] = rows["alpha"].check(alpha)
    if Phi0 is None:
        raise InputError("--phi0", "is required: Phi(theta^0) = 1/2 ||f(theta^0) - y||^2")
    out["Phi0"] = rows["Phi0"].check(Phi0)
    out["hidden_constants"] = rows["hidden_constants"].check(hidden_constants)
    out["Y"] = rows["Y"].check(Y)
    given = {k: v for k, v in (init_norms or {}).items() if v is not None}
    unknown = set(given) - set(NORM_FLAGS)
    if unknown:
        raise ValueError(f"`init_norms` has unknown keys {sorted(unknown)}; "
                         f"expected {list(NORM_FLAGS)}")
    if seed is not None and given:
        raise InputError("--from-init", "draws the init norms; do not also give "
                         f"{', '.join(NORM_FLAGS[k] for k in given)}")
    out["seed"], out["norms"] = None, None
    if seed is not None:
        out["seed"] = rows["seed"].check(seed)
        if out["d_m"] * out["d"] > max_init_entries:
            raise InputError("--from-init", f"draws d_m x d = {out['d_m']} x {out['d']} "
                             f"matrices, more than {max_init_entries:.0e} entries; give the "
                             f"seven norm flags")
        return out
    if not given:
        raise InputError("--from-init", "or all seven norm flags "
                         f"({', '.join(NORM_FLAGS.values())}) are required")
    missing = [flag for k, flag in NORM_FLAGS.items() if k not in given]
    if missing:
        raise InputError(missing[0], "is required when the init norms are given "
                         "(or use --from-init SEED)")
    out["norms"] = {k: rows[k].check(given[k]) for k in NORM_FLAGS}
    return out


def check_data_flags(d_m: object, seed: object) -> tuple[int, int]:
    """``--dm`` and ``--from-init`` of ``generalization --data`` (the seed of θ⁰ is required
    there), checked by their rows.

    Example:
        >>> check_data_flags("64", "0")
        (64, 0)
    """
    if seed is None:
        raise InputError("--from-init", "SEED is required with --data (the seed of theta^0)")
    return GENERALIZATION["d_m"].check(d_m), GENERALIZATION["seed"].check(seed)


# --------------------------------------------------------------------------- check


#: Output formats of ``boundcalc check``.
CHECK_FORMATS = ("table", "json", "csv")

#: The flags of ``boundcalc check RUN`` (the run file supplies m, n, d, T, K, η and the
#: activation). The check computes in float64: a nonzero value float64 rounds to 0 is refused.
CHECK: Mapping[str, Flag] = _rows(
    param_flag("rho", float64=True, unit="projection radius (parameter norm)",
               meaning="radii of Omega_rho; default: the smallest holding the run"),
    param_flag("nu", float64=True, unit="transport budget (parameter norm)"),
    param_flag("delta", float64=True, unit="probability"),
    param_flag("misspecification", float64=True, unit="label error",
               meaning="eps_mis > 0: Remark 9's min_iterate instead of Theorem 1's"),
    choice_flag("device", "--device", DEVICES, unit="torch device", extra=_device_index,
                meaning="where to compute (float64)", message="must be auto, cpu or cuda"),
    choice_flag("fmt", "--format", CHECK_FORMATS, unit="", meaning="output format"),
)


# --------------------------------------------------------------------------- compare-rnn


def parse_sequence_lengths(flag: str, value: object) -> list[int]:
    """A comma list (or a sequence) of sequence lengths, each an integer >= 1.

    Example:
        >>> parse_sequence_lengths("--T", "1, 4,16")
        [1, 4, 16]
    """
    parts = ([p for p in value.split(",") if p.strip()] if isinstance(value, str)
             else list(value))  # type: ignore[call-overload]
    if not parts:
        raise InputError(flag, "needs at least one sequence length")
    lengths = [parse_integer(flag, t) for t in parts]
    if min(lengths) < 1:
        raise InputError(flag, f"values must be >= 1, got {lengths}")
    return lengths


#: The inputs of ``boundcalc compare-rnn`` (the calculator's rows for the shared ones).
COMPARE_RNN: Mapping[str, Flag] = _rows(
    text_flag("T_values", "--T", parse_sequence_lengths, type="integer list",
              range="each >= 1", unit="tokens", meaning="the sequence lengths, one row each"),
    *(Flag(name, PARAMS[name].flag, PARAMS[name].kind, "as the calculator", "",
           PARAMS[name].help, lambda flag, v, name=name: PARAMS[name].check(v))
      for name in ("m", "n", "rho", "nu", "steps", "activation")),
    ALPHA,
)

