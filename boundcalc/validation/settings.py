"""What ``boundcalc validate`` runs, and with which parameters: the statements and the settings.

``validate`` measures, for each statement of the paper, the quantity that could falsify its bound
(:mod:`boundcalc.validation.runner`). This module names the statements (:data:`STATEMENTS`, run by
``all``, and :data:`INDRNN`, :data:`GENERALIZATION`, run only by name), the search effort levels
(:data:`EFFORT`), and turns the CLI's strings into the frozen settings a run stores in its
``config.json``: :class:`ValidationSettings` (:func:`make_settings`) and, for paper 003's bound,
:class:`GeneralizationSettings` (:func:`make_generalization_settings`). Every error is an
:class:`~boundcalc.inputs.params.InputError` naming the flag, raised before any run directory is
written. torch is imported only to resolve ``--device``.

Example:
    >>> expand_statements(["lemma2", "all"])[:3]
    ['lemma2', 'event', 'lemma3']
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from boundcalc.inputs.params import CHECKS, PARAMS, InputError, parse_number
from boundcalc.theory.catalog import ACTIVATIONS, FALSIFIERS

__all__ = ["DEFAULT_INDRNN_ALPHA", "EFFORT", "EXAMPLE_FLAGS", "GENERALIZATION", "INDRNN",
           "MAX_VALIDATION_WIDTH", "SHARED_PARAMETERS", "STATEMENTS", "TRAINING_STATEMENTS",
           "GeneralizationSettings", "ValidationSettings", "batch_size_note", "check_device",
           "check_parameters", "expand_statements", "generalization_data",
           "make_generalization_settings", "make_settings", "require_torch", "resolve_device"]

#: The order ``validate all`` runs them in (cheap first): the falsifiers of the catalog
#: (:data:`boundcalc.theory.catalog.FALSIFIERS`) that ``all`` runs.
STATEMENTS: tuple[str, ...] = tuple(row.name for row in FALSIFIERS if row.in_all)

#: Paper 003's generalization bound; ``validate generalization`` (not included in ``all``).
GENERALIZATION = "generalization"

#: Proposition 2 (App. B.1, the IndRNN); ``validate prop2`` (not included in ``all``).
INDRNN = "prop2"

#: The IndRNN's recurrent init scale α (u_i = ±α) when ``--alpha`` is not given, as the scripts.
DEFAULT_INDRNN_ALPHA = 1.5

#: Search effort of the adversarial validators (starts, ascent steps); ``--effort`` picks one.
EFFORT: dict[str, dict[str, int]] = {
    "quick": {"starts": 4, "search_steps": 40, "samples": 8},
    "standard": {"starts": 16, "search_steps": 150, "samples": 32},
    "thorough": {"starts": 64, "search_steps": 400, "samples": 64},
}


#: The largest width ``--m`` (and ``--dm``) the validators accept: 2**24. The validators hold the
#: width-m model as dense torch tensors (several m-row copies per search start and sample), which
#: past 2**24 rows no longer fit a device's memory, and float32 stops representing every integer
#: (so m itself, used in 1/sqrt(m) and the counts) exactly above 2**24.
MAX_VALIDATION_WIDTH = 2**24

_WIDTH_WHY = (f"must be <= {MAX_VALIDATION_WIDTH} (2**24) for the validators: the model is held "
              f"as dense torch tensors with m rows, which no longer fit in memory past that, and "
              f"float32 is exact for integers only up to 2**24")


#: Small flags of a CPU run, for the examples: ``make_settings(**EXAMPLE_FLAGS)``.
EXAMPLE_FLAGS: dict[str, str] = {
    "m": "4", "n": "16", "d": "2", "T": "3", "rho": "2", "nu": "1", "delta": "0.05",
    "activation": "tanh", "steps": "10", "seeds": "1", "rate_seeds": "5", "batch_size": "4",
    "effort": "quick", "device": "cpu", "dtype": "float64"}


#: Statements whose cells run ProjGD / ProjSGD (the training step that may use the CPU kernel).
TRAINING_STATEMENTS = ("theorem1", "prop1")


@dataclass(frozen=True)
class ValidationSettings:
    """Every parameter of a validation run (stored in the run's ``config.json``).

    Attributes:
        m, n, d, T: width, samples, token dimension, sequence length.
        rho, nu: projection radii and transport budgets (ρ_c, ρ_u, ρ_w), (ν_c, ν_u, ν_w).
        delta: failure probability per event.
        activation: ``tanh`` or ``erf``.
        steps: ProjGD / ProjSGD iterations K for ``theorem1`` / ``prop1``.
        seeds: searches and training runs use seeds 0, …, seeds − 1.
        rate_seeds: number of inits for the probability checks (event, lemma5).
        batch_size: ProjSGD minibatch size.
        effort: ``quick`` | ``standard`` | ``thorough`` search effort (see :data:`EFFORT`).
        device, dtype: torch device (resolved, never ``auto``) and ``float32`` | ``float64``.
    """

    m: int
    n: int
    d: int
    T: int
    rho: tuple[float, float, float]
    nu: tuple[float, float, float]
    delta: float
    activation: str
    steps: int
    seeds: int
    rate_seeds: int
    batch_size: int
    effort: str
    device: str
    dtype: str
    teacher_width: int = 8192
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "extra"}
        out.update(self.extra)
        return out

    def radii_text(self) -> tuple[str, str]:
        """ρ and ν as the validators' ``"rho_c,rho_u,rho_w"`` texts.

        Example:
            >>> make_settings(**{**EXAMPLE_FLAGS, "rho": "2,3,1"}).radii_text()
            ('2.0,3.0,1.0', '1.0,1.0,1.0')
        """
        return ",".join(str(r) for r in self.rho), ",".join(str(v) for v in self.nu)

    def search_kwargs(self, seed: int) -> dict[str, Any]:
        """Keyword arguments of an adversarial search of ``seed`` at the run's effort level.

        Example:
            >>> make_settings(**EXAMPLE_FLAGS).search_kwargs(3)["starts"]
            4
        """
        effort = EFFORT[self.effort]
        return {"delta": self.delta, "activation": self.activation, "starts": effort["starts"],
                "steps": effort["search_steps"], "samples": effort["samples"], "seed": seed,
                "device": self.device, "dtype": self.dtype}

    def training_kwargs(self, seed: int) -> dict[str, Any]:
        """Keyword arguments of the ProjGD / ProjSGD run of ``seed``.

        Example:
            >>> make_settings(**EXAMPLE_FLAGS).training_kwargs(3)["seeds"]
            [3]
        """
        return {"m": self.m, "n": self.n, "d": self.d, "T": self.T, "rho": self.rho,
                "nu": self.nu, "delta": self.delta, "activation": self.activation,
                "steps": self.steps, "seeds": [seed], "teacher_width": self.teacher_width,
                "device": self.device, "dtype": self.dtype}


@dataclass(frozen=True)
class GeneralizationSettings:
    """Parameters of ``validate generalization`` (stored under ``generalization`` in
    ``config.json``).

    Attributes:
        d_m: model dimension. N: training samples. n_test: held-out samples.
        steps: GD steps on Φ. lr: GD step size γ. seeds: init seeds 0, …, seeds − 1.
        delta: δ of Lemma 4 / Theorem 5.
        data: ``None`` (generated two-class images) or a path
            (:func:`boundcalc.validators.data.digits.load_generalization_data`).
        radii: (R_Q, R_K, R_V, R_O), or ``None`` = the radii actually travelled.
        hidden_constants: the calculator's ``--hidden-constants`` string (``None`` = all 1).
        device, dtype: as :class:`ValidationSettings`.
    """

    d_m: int
    N: int
    n_test: int
    steps: int
    lr: float
    seeds: int
    delta: float
    data: str | None
    radii: tuple[float, float, float, float] | None
    hidden_constants: str | None
    device: str
    dtype: str

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def make_generalization_settings(*, dm: str, N: str, n_test: str, steps: str, lr: str,
                                 seeds: str, delta: str, data: str | None, radii: str,
                                 hidden_constants: str | None, device: str, dtype: str
                                 ) -> GeneralizationSettings:
    """Parse and check the ``validate generalization`` flags; errors name the flag. The data are
    loaded once here, so an unusable ``--data`` (or an ``--N`` it cannot supply) fails before any
    run directory is written."""
    from boundcalc.generalization.bound_inputs import parse_hidden_constants, parse_radii
    from boundcalc.inputs.params import parse_integer

    def integer(flag: str, text: str, minimum: int) -> int:
        value = parse_integer(flag, text)
        if value < minimum:
            raise InputError(flag, f"must be an integer >= {minimum}, got {text!r}")
        return value

    delta_value = float(PARAMS["delta"].check(delta))
    lr_value = parse_number("--lr", lr)
    if not lr_value > 0:
        raise InputError("--lr", f"must be > 0, got {lr!r}")
    if dtype not in ("float32", "float64"):
        raise InputError("--dtype", f"must be float32 or float64, got {dtype!r}")
    radii_value = None if radii.strip().lower() == "travelled" else parse_radii(radii)
    if hidden_constants is not None:
        parse_hidden_constants(hidden_constants)
    if data is not None and not Path(data).exists():
        raise InputError("--data", f"{data!r} does not exist")
    if parse_number("--dm", dm) > MAX_VALIDATION_WIDTH:
        raise InputError("--dm", f"{_WIDTH_WHY.replace('m rows', 'd_m rows')}, got {dm!r}")
    settings = GeneralizationSettings(
        d_m=integer("--dm", dm, 1), N=integer("--N", N, 2), n_test=integer("--n-test", n_test, 1),
        steps=PARAMS["steps"].check(steps), lr=lr_value, seeds=integer("--seeds", seeds, 1),
        delta=delta_value, data=None if data is None else str(Path(data).resolve()),
        radii=radii_value, hidden_constants=hidden_constants, device=resolve_device(device),
        dtype=dtype)
    try:
        generalization_data(settings.N, settings.n_test, settings.data)
    except ValueError as err:
        flag = "--data" if data is not None else "--N"
        raise InputError(flag, str(err).replace("`", "")) from None
    return settings


@functools.lru_cache(maxsize=2)
def generalization_data(N: int, n_test: int, data: str | None) -> dict[str, Any]:
    """The train and held-out sets of ``validate generalization`` (generated two-class images,
    or ``data``), loaded once per (N, n_test, data) and kept for the cells of the run."""
    from boundcalc.validators.data.digits import load_generalization_data

    return load_generalization_data(N, n_test, data)


def check_device(device: str) -> str:
    """``device`` normalised (``auto``, ``cpu``, ``cuda`` or ``cuda:k``); anything else is an
    :class:`InputError` naming ``--device``. Needs no torch.

    Example:
        >>> check_device(" CUDA:1 "), check_device("cpu")
        ('cuda:1', 'cpu')
    """
    choice = device.strip().lower()
    if choice in ("auto", "cpu", "cuda") or (choice.startswith("cuda:")
                                              and choice[5:].isdigit()):
        return choice
    raise InputError("--device", f"must be auto, cpu or cuda, got {device!r}")


def require_torch(flag: str, what: str) -> None:
    """Refuse up front, naming ``flag``, when torch cannot be imported (the calculator's install
    has no torch; the validators need the ``validators`` extra)."""
    import importlib.util

    try:
        found = importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):  # a broken or blocked install counts as none
        found = False
    if not found:
        raise InputError(flag, f"{what} with torch, which is not installed: pip install "
                               f"'boundcalc[validators]' (on a CPU machine install torch's CPU "
                               f"build first)")


def resolve_device(device: str) -> str:
    """``auto`` → ``cuda`` when a GPU is visible, else ``cpu``; ``cuda`` without one is an error."""
    choice = check_device(device)
    if choice == "cpu":
        return "cpu"
    import torch

    if choice == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if not torch.cuda.is_available():
        raise InputError("--device", f"{device!r} requested but no CUDA GPU is available")
    return choice


#: The flags ``validate`` shares with the calculator's point commands (keywords of
#: :data:`boundcalc.inputs.params.PARAMS`): parsed and checked by the same rows, so that a bad
# value gets : the calculator's one-line error.
SHARED_PARAMETERS: tuple[str, ...] = ("m", "n", "d", "T", "delta", "rho", "nu", "steps",
                                      "activation", "batch_size")


def check_parameters(**values: str) -> dict[str, Any]:
    """Check the flags ``validate`` shares with the calculator (:data:`SHARED_PARAMETERS`, by
    keyword) with their :data:`boundcalc.inputs.params.PARAMS` rows, then the limits of the
    validators (width at most :data:`MAX_VALIDATION_WIDTH`, a preset activation); returns the
    checked values by keyword. Needs no torch, so the CLI refuses a bad value before any torch work.

    A value the calculator refuses gets the calculator's message, word for word; a value it
    accepts but the validators cannot run (``--m 1e30``, ``--activation custom:1,1,1``) gets the
    validators' reason.

    Example:
        >>> check_parameters(m="1e3", rho="2,3,1")
        {'m': 1000, 'rho': ('2', '3', '1')}
        >>> check_parameters(n="2.5")
        Traceback (most recent call last):
        ...
        boundcalc.errors.InputError: --n must be an integer, got '2.5'
    """
    unknown = sorted(set(values) - set(SHARED_PARAMETERS))
    if unknown:
        raise TypeError(f"check_parameters() got unexpected keyword arguments {unknown}")
    checked = {name: PARAMS[name].check(value) for name, value in values.items()}
    if "m" in checked and checked["m"] > MAX_VALIDATION_WIDTH:
        raise InputError("--m", f"{_WIDTH_WHY}, got {values['m']!r}")
    if "activation" in checked and checked["activation"] not in ACTIVATIONS:
        raise InputError("--activation", f"must be {' or '.join(ACTIVATIONS)} for the "
                                         f"validators, got {values['activation']!r}")
    return checked


def make_settings(*, m: str, n: str, d: str, T: str, rho: str, nu: str, delta: str,
                  activation: str, steps: str, seeds: str, rate_seeds: str, batch_size: str,
                  effort: str, device: str, dtype: str, teacher_width: str = "8192",
                  statements: Iterable[str] | None = None, batch_size_given: bool = True
                  ) -> ValidationSettings:
    """Parse and check CLI strings; every error is an :class:`InputError` naming the flag.

    The flags shared with the calculator go through :func:`check_parameters` (the calculator's
    checks and messages). The minibatch size matters to ``prop1`` only (``statements`` =
    ``None``: assume it runs). A batch size above ``n`` is refused, naming ``--batch-size``,
    only when the user gave it (``batch_size_given``) and ``prop1`` runs; the default is lowered
    to ``n`` instead (:func:`batch_size_note` says so).
    """
    def positive_int(flag: str, text: str) -> int:
        return CHECKS["count"](flag, text)

    p = check_parameters(m=m, n=n, d=d, T=T, delta=delta, rho=rho, nu=nu, steps=steps,
                         activation=activation, batch_size=batch_size)
    if effort not in EFFORT:
        raise InputError("--effort", f"must be one of {', '.join(EFFORT)}, got {effort!r}")
    if dtype not in ("float32", "float64"):
        raise InputError("--dtype", f"must be float32 or float64, got {dtype!r}")
    b_int = p["batch_size"]
    uses_batch = statements is None or "prop1" in statements
    if b_int > p["n"]:
        if batch_size_given and uses_batch:
            raise InputError("--batch-size", f"must be <= --n ({p['n']}), got {batch_size!r}")
        b_int = p["n"]
    return ValidationSettings(
        m=p["m"], n=p["n"], d=p["d"], T=p["T"],
        rho=tuple(float(v) for v in p["rho"]),  # type: ignore[arg-type]
        nu=tuple(float(v) for v in p["nu"]),  # type: ignore[arg-type]
        delta=float(p["delta"]), activation=p["activation"], steps=p["steps"],
        seeds=positive_int("--seeds", seeds), rate_seeds=positive_int("--rate-seeds", rate_seeds),
        batch_size=b_int, effort=effort, device=resolve_device(device), dtype=dtype,
        teacher_width=positive_int("--teacher-width", teacher_width),
    )


def batch_size_note(statements: Iterable[str], default: str, settings: ValidationSettings
                    ) -> str | None:
    """The stderr note when ``prop1`` runs with the default batch size lowered to ``n``."""
    if "prop1" in statements and settings.batch_size < int(default):
        return (f"note: prop1 uses --batch-size {settings.batch_size} (the default {default} "
                f"exceeds --n {settings.n})")
    return None


def expand_statements(names: Iterable[str]) -> list[str]:
    """``all`` → every Transformer statement (not ``prop2`` or ``generalization``); otherwise
    check each."""
    out: list[str] = []
    for name in names:
        key = name.strip().lower()
        if key == "all":
            out.extend(s for s in STATEMENTS if s not in out)
        elif key in (*STATEMENTS, INDRNN, GENERALIZATION):
            if key not in out:
                out.append(key)
        else:
            raise InputError("STATEMENT", f"must be one of {', '.join(STATEMENTS)}, all, "
                             f"{INDRNN} or {GENERALIZATION}, got {name!r}")
    return out
