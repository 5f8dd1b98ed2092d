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
from typing import Any

from boundcalc.inputs.environment import require_gpu, require_module
from boundcalc.inputs.surfaces import VALIDATE
from boundcalc.inputs.validate_flags import check_statements, check_validate
from boundcalc.theory.catalog import FALSIFIERS

__all__ = ["DEFAULT_INDRNN_ALPHA", "EFFORT", "EXAMPLE_FLAGS", "GENERALIZATION", "INDRNN",
           "STATEMENTS", "TRAINING_STATEMENTS", "GeneralizationSettings", "ValidationSettings",
           "batch_size_note", "check_device", "expand_statements", "generalization_data",
           "generalization_settings", "make_generalization_settings", "make_settings",
           "require_torch", "resolve_device", "validation_settings"]

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
    """Check the ``validate generalization`` flags (:func:`~boundcalc.inputs.validate_flags.
    check_validate`; errors name the flag) and build the settings from the checked values
    (:func:`generalization_settings`)."""
    checked = check_validate(
        {"dm": dm, "N": N, "n_test": n_test, "steps": steps, "lr": lr, "seeds": seeds,
         "delta": delta, "data": data, "radii": radii, "hidden_constants": hidden_constants,
         "device": device, "dtype": dtype}, [GENERALIZATION])
    return generalization_settings(checked)


def generalization_settings(checked: dict[str, Any]) -> GeneralizationSettings:
    """:class:`GeneralizationSettings` from the values :func:`~boundcalc.inputs.validate_flags.
    check_validate` returned (``--device`` resolved here, importing torch). The content of
    ``--data`` was checked there against ``--N`` and ``--n-test``
    (:func:`boundcalc.inputs.data_files.check_generalization_data`, numpy), so an unusable file
    (or one too small for ``--N``) has failed, naming ``--data``, before any run directory or
    lock; the data are loaded when the cells run (:func:`generalization_data`)."""
    settings = GeneralizationSettings(
        d_m=checked["dm"], N=checked["N"], n_test=checked["n_test"], steps=checked["steps"],
        lr=checked["lr"], seeds=checked["seeds"], delta=float(checked["delta"]),
        data=checked.get("data"), radii=checked["radii"],
        hidden_constants=checked.get("hidden_constants"),
        device=resolve_device(checked["device"]), dtype=checked["dtype"])
    return settings


@functools.lru_cache(maxsize=2)
def generalization_data(N: int, n_test: int, data: str | None) -> dict[str, Any]:
    """The train and held-out sets of ``validate generalization`` (generated two-class images,
    or ``data``), loaded once per (N, n_test, data) and kept for the cells of the run."""
    from boundcalc.validators.data.digits import load_generalization_data

    return load_generalization_data(N, n_test, data)


def check_device(device: str) -> str:
    """``device`` normalised (``auto``, ``cpu``, ``cuda`` or ``cuda:k``) by its row
    (:data:`boundcalc.inputs.surfaces.VALIDATE`); anything else is an :class:`InputError` naming
    ``--device``. Needs no torch.

    Example:
        >>> check_device(" CUDA:1 "), check_device("cpu")
        ('cuda:1', 'cpu')
    """
    return VALIDATE["device"].check(device)


def require_torch(flag: str, what: str) -> None:
    """Refuse up front, naming ``flag``, when torch cannot be imported (the calculator's install
    has no torch; the validators need the ``validators`` extra)."""
    require_module(flag, "torch", what, "pip install 'boundcalc[validators]' (on a CPU machine "
                                        "install torch's CPU build first)")


def resolve_device(device: str) -> str:
    """``auto`` → ``cuda`` when a GPU is visible, else ``cpu``; ``cuda`` without one is an error."""
    choice = check_device(device)
    if choice == "cpu":
        return "cpu"
    import torch

    if choice == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    require_gpu(device, torch.cuda.is_available())
    return choice


def make_settings(*, m: str, n: str, d: str, T: str, rho: str, nu: str, delta: str,
                  activation: str, steps: str, seeds: str, rate_seeds: str, batch_size: str,
                  effort: str, device: str, dtype: str, teacher_width: str = "8192",
                  statements: Iterable[str] | None = None, batch_size_given: bool = True
                  ) -> ValidationSettings:
    """Check the CLI strings with :func:`~boundcalc.inputs.validate_flags.check_validate` (every
    error an :class:`InputError` naming the flag) and build the settings
    (:func:`validation_settings`).

    The minibatch size matters to ``prop1`` only (``statements`` = ``None``: assume it runs). A
    batch size above ``n`` is refused, naming ``--batch-size``, only when the user gave it
    (``batch_size_given``) and ``prop1`` runs; the default is lowered to ``n`` instead
    (:func:`batch_size_note` says so).
    """
    values = {"m": m, "n": n, "d": d, "T": T, "rho": rho, "nu": nu, "delta": delta,
              "activation": activation, "steps": steps, "seeds": seeds, "rate_seeds": rate_seeds,
              "batch_size": batch_size, "effort": effort, "device": device, "dtype": dtype,
              "teacher_width": teacher_width}
    names = None if statements is None else list(statements)
    given = set(values) - (set() if batch_size_given else {"batch_size"})
    return validation_settings(check_validate(values, names, given))


def validation_settings(checked: dict[str, Any]) -> ValidationSettings:
    """:class:`ValidationSettings` from the values :func:`~boundcalc.inputs.validate_flags.
    check_validate` returned (``--device`` resolved here, importing torch unless ``cpu``); a
    batch size above n (the default, since a given one was refused) is lowered to n."""
    return ValidationSettings(
        m=checked["m"], n=checked["n"], d=checked["d"], T=checked["T"],
        rho=tuple(float(v) for v in checked["rho"]),  # type: ignore[arg-type]
        nu=tuple(float(v) for v in checked["nu"]),  # type: ignore[arg-type]
        delta=float(checked["delta"]), activation=checked["activation"],
        steps=checked["steps"], seeds=checked["seeds"], rate_seeds=checked["rate_seeds"],
        batch_size=min(checked["batch_size"], checked["n"]), effort=checked["effort"],
        device=resolve_device(checked["device"]), dtype=checked["dtype"],
        teacher_width=checked["teacher_width"])


def batch_size_note(statements: Iterable[str], default: str, settings: ValidationSettings
                    ) -> str | None:
    """The stderr note when ``prop1`` runs with the default batch size lowered to ``n``."""
    if "prop1" in statements and settings.batch_size < int(default):
        return (f"note: prop1 uses --batch-size {settings.batch_size} (the default {default} "
                f"exceeds --n {settings.n})")
    return None


def expand_statements(names: Iterable[str]) -> list[str]:
    """``all`` → every Transformer statement (not ``prop2`` or ``generalization``); otherwise
    check each (:func:`~boundcalc.inputs.validate_flags.check_statements`)."""
    return check_statements(names, STATEMENTS, (INDRNN, GENERALIZATION))
