"""The one check of ``boundcalc validate``'s inputs, run before any run directory, lock or torch.

``validate`` measures the Transformer statements, prop2 (the IndRNN) and paper 003's
generalization bound; its flags are the rows of :data:`boundcalc.inputs.surfaces.VALIDATE`.
:func:`check_validate` checks, in this order: that every flag given is used by a selected statement
(:func:`refuse_unused`), each value by its row, then the rules over several inputs
(:mod:`boundcalc.inputs.rules`: ρ ≥ ν and δ < ½ for theorem1 and prop1, b ≤ n for prop1), the
content of ``--data`` for generalization (:mod:`boundcalc.inputs.data_files`), and
returns the checked values from which :mod:`boundcalc.validation.settings` builds the run's
settings. Every failure is one :class:`~boundcalc.errors.InputError` naming the flag (exit 2).

The decision for ρ < ν (and δ ≥ ½): ``validate theorem1`` / ``prop1`` is refused, exit 2, before
any run directory: ProjGD / ProjSGD with transported parameters θ̄ outside Ω_ρ is not the algorithm
of the theorem, so there is nothing to measure. The other statements do not depend on ν and δ's
range this way and run.

Example:
    >>> checked = check_validate({"m": "8", "rho": "2,3,1", "seeds": "2"}, ["lemma2"])
    >>> checked["m"], checked["rho"], checked["seeds"]
    (8, ('2', '3', '1'), 2)
    >>> check_validate({"rho": "1", "nu": "2"}, ["theorem1"])
    Traceback (most recent call last):
    ...
    boundcalc.errors.InputError: --nu must be <= --rho componentwise for theorem1 (rho >= nu: \
the transported parameters (eq. 11) must lie in Omega_rho, Remark 10), got rho=(1, 1, 1), \
nu=(2, 2, 2)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from boundcalc.errors import InputError
from boundcalc.inputs.data_files import check_generalization_data
from boundcalc.inputs.flags import check_rows, choice_flag
from boundcalc.inputs.rules import apply_rules
from boundcalc.inputs.surfaces import VALIDATE
from boundcalc.theory.catalog import FALSIFIER

__all__ = ["GENERALIZATION_ONLY", "INDRNN_ONLY", "TRANSFORMER_ONLY", "check_falsifier",
           "check_run_statements", "check_statements", "check_validate", "refuse_unused"]

#: Flags used only by the Transformer statements / only by prop2 / only by ``generalization``
#: (keyword → flag).
TRANSFORMER_ONLY = {"m": "--m", "n": "--n", "d": "--d", "T": "--T", "rho": "--rho",
                    "nu": "--nu", "activation": "--activation", "rate_seeds": "--rate-seeds",
                    "batch_size": "--batch-size", "teacher_width": "--teacher-width",
                    "effort": "--effort"}
INDRNN_ONLY = {"alpha": "--alpha"}
GENERALIZATION_ONLY = {"dm": "--dm", "N": "--N", "n_test": "--n-test", "lr": "--lr",
                       "data": "--data", "radii": "--radii",
                       "hidden_constants": "--hidden-constants"}

_GENERALIZATION = "generalization"
_INDRNN = "prop2"


def check_statements(names: Iterable[str], everything: tuple[str, ...],
                     by_name: tuple[str, ...]) -> list[str]:
    """The STATEMENT arguments of ``validate``: ``all`` → ``everything`` (in order), each other
    name one of ``everything`` or ``by_name``; duplicates dropped, case and spaces ignored.

    Example:
        >>> check_statements(["lemma2", "ALL"], ("event", "lemma2"), ("prop2",))
        ['lemma2', 'event']
    """
    out: list[str] = []
    for name in names:
        key = str(name).strip().lower()
        if key == "all":
            out.extend(s for s in everything if s not in out)
        elif key in (*everything, *by_name):
            if key not in out:
                out.append(key)
        else:
            raise InputError("STATEMENT", f"must be one of {', '.join(everything)}, all, "
                             f"{' or '.join(by_name)}, got {name!r}")
    return out


def check_falsifier(statement: str) -> str:
    """A statement ``validate`` has a measurement for (a key of
    :data:`boundcalc.theory.catalog.FALSIFIER`), naming ``STATEMENT`` otherwise.

    Example:
        >>> check_falsifier("prop1")
        'prop1'
    """
    return choice_flag("statement", "STATEMENT", FALSIFIER, unit="",
                       meaning="a statement validate measures").check(statement)


def check_run_statements(statements: Iterable[str], extra: Mapping[str, Any]) -> None:
    """``run_validation`` from Python: ``generalization`` needs its settings in
    ``settings.extra`` (built by ``make_generalization_settings``).

    Example:
        >>> check_run_statements(["lemma2"], {})
    """
    if _GENERALIZATION in statements and _GENERALIZATION not in extra:
        raise InputError("STATEMENT", "generalization needs its settings in "
                         "settings.extra['generalization'] (make_generalization_settings)")


def refuse_unused(given: Iterable[str], statements: list[str]) -> None:
    """A flag given (keyword in ``given``) that no selected statement uses is an input error.

    Example:
        >>> refuse_unused(["m"], ["generalization"])
        Traceback (most recent call last):
        ...
        boundcalc.errors.InputError: --m is for the Transformer statements, not generalization \
(generalization's width is --dm)
    """
    given = set(given)
    if not [s for s in statements if s != _GENERALIZATION]:
        for param, flag in TRANSFORMER_ONLY.items():
            if param in given:
                hint = {"m": " (generalization's width is --dm)",
                        "n": " (generalization's sample count is --N)"}.get(param, "")
                raise InputError(flag, f"is for the Transformer statements, not generalization"
                                       f"{hint}")
    if _GENERALIZATION not in statements:
        for param, flag in GENERALIZATION_ONLY.items():
            if param in given:
                raise InputError(flag, "is for the generalization statement only")
    if _INDRNN not in statements:
        for param, flag in INDRNN_ONLY.items():
            if param in given:
                raise InputError(flag, "is for the prop2 statement (the IndRNN) only")


def check_validate(values: Mapping[str, object], statements: list[str] | None = None,
                   given: Iterable[str] | None = None, *, decompose: bool = False
                   ) -> dict[str, Any]:
    """Every input of ``validate`` checked: ``values`` by keyword of
    :data:`~boundcalc.inputs.surfaces.VALIDATE` (None: not given; a missing Transformer flag is
    not checked), for ``statements`` (None: assume every one runs), ``given`` the keywords the
    user gave (None: all of ``values``; only they are refused when unused, and a batch size
    above n is refused only when given, else lowered to n by the settings). ``decompose``:
    ``--decompose`` (theorem1 and prop1 only; ``--eta`` only with it).

    Returns the checked values by keyword. Needs no torch; touches no file but ``--data``,
    whose content is checked against ``--N`` and ``--n-test`` when ``generalization`` runs
    (:func:`boundcalc.inputs.data_files.check_generalization_data`: a token set or MNIST able
    to supply N training samples and a held-out one).
    """
    names = statements
    given_set = set(values if given is None else given)
    if names is not None:
        refuse_unused(given_set, names)
        if decompose:
            others = [s for s in names if s not in ("theorem1", "prop1")]
            if others:
                raise InputError("--decompose", f"is for theorem1 and prop1 only, got "
                                                f"{', '.join(others)}")
    if values.get("eta") is not None and not decompose:
        raise InputError("--eta", "is for --decompose only (the other validations use eta*)")
    checked = check_rows(VALIDATE, values)
    rule_values = {k: checked.get(k) for k in ("rho", "nu", "delta", "n")}
    if "batch_size" in given_set:
        rule_values["batch_size"] = checked.get("batch_size")
    apply_rules("validate", rule_values, names)
    if (checked.get("data") is not None and (names is None or _GENERALIZATION in names)
            and checked.get("N") is not None and checked.get("n_test") is not None):
        check_generalization_data(checked["N"], checked["n_test"], checked["data"])
    return checked
