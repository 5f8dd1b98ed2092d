"""Conditions over several inputs, one :class:`Rule` row each, and what failing one does.

A single input is checked by its row (:data:`boundcalc.inputs.params.PARAMS`,
:mod:`boundcalc.inputs.surfaces`); a condition that ties inputs together (ρ ≥ ν componentwise,
δ < ½, b ≤ n, a spectral norm at most its Frobenius norm, …) is a row of :data:`RULES`. Each rule
says, per surface, what its failure does:

* :data:`REFUSE` — an input error (exit code 2, one line naming the rule's flag), raised by
  :func:`apply_rules` before any run directory, lock or torch import: the surface cannot compute
  what was asked (``validate theorem1`` cannot run ProjGD whose transported parameters θ̄ leave
  Ω_ρ).
* :data:`NOT_APPLICABLE` — the inputs are computed, and every statement the rule belongs to is
  reported as "not applicable: ρ < ν" (the calculator shows the theorem's condition rows as FAIL
  and its verdict says so; a measurement above the bound is then no violation).

The statements a rule belongs to are the registry keys' base names (``theorem1`` covers
``theorem1_paper``). Values are given by keyword, as the surface holds them: numbers, exact
decimal text, or tuples of them for ρ and ν.

Example:
    >>> apply_rules("validate", {"rho": (1, 1, 1), "nu": (2, 2, 2)}, ["lemma2"])
    []
    >>> apply_rules("validate", {"rho": (1, 1, 1), "nu": (2, 2, 2)}, ["theorem1"])
    Traceback (most recent call last):
    ...
    boundcalc.errors.InputError: --nu must be <= --rho componentwise for theorem1 (rho >= nu: \
the transported parameters (eq. 11) must lie in Omega_rho, Remark 10), got rho=(1, 1, 1), \
nu=(2, 2, 2)
    >>> [r.name for r in failing_rules("calculator", {"delta": "0.6"}, ["theorem1"])]
    ['delta_lt_half']
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from boundcalc.errors import InputError
from boundcalc.theory.catalog import base_name

__all__ = ["NOT_APPLICABLE", "REFUSE", "RULES", "SURFACES", "Rule", "apply_rules",
           "failing_rules", "not_applicable_text"]

#: The failure is an input error (exit 2), raised before any work.
REFUSE = "refuse"
#: The failure makes the rule's statements not applicable; the inputs are still computed.
NOT_APPLICABLE = "not applicable"

#: The surfaces a rule can name: the calculator's commands (point, sweep, solvers, compare-rnn,
#: :func:`boundcalc.evaluate`), ``validate``, the experiments (``reproduce``, its ``--set`` and
#: TOML, :func:`boundcalc.reproduce`) and ``generalization``.
SURFACES = ("calculator", "validate", "reproduce", "generalization")


def _exact(value: object) -> Fraction:
    """A number, or its decimal text, as an exact fraction (a float exactly as stored)."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, float):
        return Fraction(value)
    return Fraction(str(value).strip())


def _triple(value: object) -> tuple[Fraction, ...]:
    if isinstance(value, (tuple, list)):
        parts: list[object] = list(value)
    else:
        parts = [p for p in str(value).split(",")]
    if len(parts) == 1:
        parts = parts * 3
    return tuple(_exact(p) for p in parts)


def _text(value: object) -> str:
    """ρ and ν as the user reads them: ``(1, 1, 1)``, numbers without a trailing ``.0``."""
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(_text(v) for v in value) + ")"
    if isinstance(value, float) and value.is_integer() and math.isfinite(value):
        return str(int(value))
    return str(value).strip()


@dataclass(frozen=True)
class Rule:
    """A condition over several inputs.

    Attributes:
        name: the rule's key; where a statement states it, the name of its condition rows
            (``rho_ge_nu`` covers ``rho_c_ge_nu_c``, …).
        inputs: the keywords it reads; a rule whose inputs are not all given is not checked.
        flag: the flag an error names (or a function of the values that gives it).
        requirement: the condition in words (``rho >= nu componentwise``).
        failure: the failed condition, short, as "not applicable: …" shows it (``ρ < ν``).
        why: where it comes from and what breaks without it.
        statements: base names of the statements whose hypothesis it is (empty: every one of
            the surface's).
        actions: surface → :data:`REFUSE` or :data:`NOT_APPLICABLE`; a surface not listed does
            not check it.
        holds: ``holds(values)`` → whether the condition holds.
        message: ``message(values, statements)`` → the text after :attr:`flag` when refused.
    """

    name: str
    inputs: tuple[str, ...]
    flag: str | Callable[[Mapping[str, Any]], str]
    requirement: str
    failure: str
    why: str
    statements: tuple[str, ...]
    actions: Mapping[str, str]
    holds: Callable[[Mapping[str, Any]], bool]
    message: Callable[[Mapping[str, Any], list[str]], str]

    def concerns(self, statement: str) -> bool:
        """Whether the rule is a hypothesis of ``statement`` (a registry key or base name).

        Example:
            >>> RULES["delta_lt_half"].concerns("theorem1_paper")
            True
        """
        return not self.statements or base_name(statement) in self.statements


def _rho_ge_nu(values: Mapping[str, Any]) -> bool:
    return all(r >= v for r, v in zip(_triple(values["rho"]), _triple(values["nu"]),
                                      strict=True))


def _rho_ge_nu_message(values: Mapping[str, Any], statements: list[str]) -> str:
    return (f"must be <= --rho componentwise for {', '.join(statements)} (rho >= nu: the "
            f"transported parameters (eq. 11) must lie in Omega_rho, Remark 10), got "
            f"rho={_text(values['rho'])}, nu={_text(values['nu'])}")


def _delta_message(values: Mapping[str, Any], statements: list[str]) -> str:
    return (f"must be < 1/2 for {', '.join(statements)} (their bound holds with probability "
            f"1 - 2 delta, which must be positive), got {_text(values['delta'])}")


def _batch_message(values: Mapping[str, Any], statements: list[str]) -> str:
    return f"must be <= --n ({_text(values['n'])}), got {_text(values['batch_size'])}"


def _spectral(values: Mapping[str, Any]) -> bool:
    norms = values["norms"]
    return all(norms[f"W{k}0_2"] <= norms[f"W{k}0_F"] * (1 + 1e-12) for k in "QKV")


def _spectral_culprit(norms: Mapping[str, float]) -> str:
    return next(k for k in "QKV" if norms[f"W{k}0_2"] > norms[f"W{k}0_F"] * (1 + 1e-12))


def _spectral_message(values: Mapping[str, Any], statements: list[str]) -> str:
    norms = values["norms"]
    bad = _spectral_culprit(norms)
    return (f"must be <= the Frobenius norm {norms[f'W{bad}0_F']!r}, got "
            f"{norms[f'W{bad}0_2']!r}")


def _printed_radius(values: Mapping[str, Any]) -> bool:
    if not values.get("as_printed"):
        return True
    return math.sqrt(sum(r * r for r in values["radii"])) > values["delta"]


_TRAINING = ("theorem1", "prop1", "remark9")


def _nu_for_eta_star(values: Mapping[str, Any]) -> bool:
    return not values["eta_star"] or any(v > 0 for v in _triple(values["nu"]))


def _nu_for_eta_star_message(values: Mapping[str, Any], statements: list[str]) -> str:
    where = " in every row" if values.get("sweep") else ""
    return (f"needs a positive component{where} when --eta is not given (the theorem's step "
            f"size is proportional to ||nu||)")

#: Every condition over several inputs, by name.
RULES: Mapping[str, Rule] = {rule.name: rule for rule in (
    Rule("rho_ge_nu", ("rho", "nu"), "--nu", "rho >= nu componentwise", "ρ < ν",
         "the transported parameters θ̄ (eq. 11) must lie in Ω_ρ (Remark 10); ProjGD / ProjSGD "
         "cannot be run, nor their bound applied, without it",
         (*_TRAINING, "prop2"),
         {"calculator": NOT_APPLICABLE, "reproduce": NOT_APPLICABLE, "validate": REFUSE},
         _rho_ge_nu, _rho_ge_nu_message),
    Rule("delta_lt_half", ("delta",), "--delta", "delta < 1/2", "δ ≥ ½",
         "Theorem 1 and Proposition 1 hold with probability 1 − 2δ, which must be positive",
         _TRAINING,
         {"calculator": NOT_APPLICABLE, "reproduce": NOT_APPLICABLE, "validate": REFUSE},
         lambda v: _exact(v["delta"]) < Fraction(1, 2), _delta_message),
    Rule("batch_le_n", ("batch_size", "n"), "--batch-size", "b <= n", "b > n",
         "a ProjSGD minibatch is a subset of the n samples", ("prop1",),
         {"calculator": NOT_APPLICABLE, "validate": REFUSE},
         lambda v: int(v["batch_size"]) <= int(v["n"]), _batch_message),
    Rule("nu_positive_for_eta_star", ("nu", "eta_star"), "--nu",
         "a positive component of nu when eta is not given", "ν = 0 with η = η*",
         "the theorem's step size η* = ‖ν‖/(2 L B √K) is 0 when ν = 0", (),
         {"calculator": REFUSE}, _nu_for_eta_star, _nu_for_eta_star_message),
    Rule("spectral_le_frobenius", ("norms",),
         lambda v: f"--w{_spectral_culprit(v['norms']).lower()}-spec", "||W||_2 <= ||W||_F",
         "‖W‖₂ > ‖W‖_F", "a spectral norm never exceeds the Frobenius norm of its matrix",
         (), {"generalization": REFUSE}, _spectral, _spectral_message),
    Rule("printed_radius_above_delta", ("radii", "delta", "as_printed"), "--radii",
         "sqrt(R_Q^2+R_K^2+R_V^2+R_O^2) > delta (--as-printed)", "R ≤ δ",
         "the printed confidence term sqrt(log(R/delta)/N) needs R > δ", (),
         {"generalization": REFUSE}, _printed_radius,
         lambda v, s: "give R = sqrt(R_Q^2+R_K^2+R_V^2+R_O^2) > delta: the printed "
                      "confidence term sqrt(log(R/delta)/N) needs it"),
)}


def failing_rules(surface: str, values: Mapping[str, Any],
                  statements: Iterable[str] | None = None) -> list[Rule]:
    """The rules of ``surface`` that concern one of ``statements`` (None: every statement), whose
    inputs are all in ``values`` (not None) and that do not hold.

    Example:
        >>> failing_rules("calculator", {"rho": "2", "nu": "1"}, ["theorem1"])
        []
    """
    if surface not in SURFACES:
        raise ValueError(f"`surface` must be one of {SURFACES}, got {surface!r}")
    names = None if statements is None else list(statements)
    out = []
    for rule in RULES.values():
        if surface not in rule.actions:
            continue
        if any(values.get(key) is None for key in rule.inputs):
            continue
        if names is not None and not any(rule.concerns(s) for s in names):
            continue
        if not rule.holds(values):
            out.append(rule)
    return out


def apply_rules(surface: str, values: Mapping[str, Any],
                statements: Iterable[str] | None = None) -> list[Rule]:
    """Check the rules of ``surface``: the first failing rule whose action there is
    :data:`REFUSE` raises :class:`InputError` naming its flag (with the statements it concerns);
    the failing :data:`NOT_APPLICABLE` rules are returned.

    Example:
        >>> [r.failure for r in apply_rules("calculator", {"rho": "1", "nu": "2"}, ["prop1"])]
        ['ρ < ν']
    """
    names = None if statements is None else list(statements)
    failing = failing_rules(surface, values, names)
    for rule in failing:
        if rule.actions[surface] == REFUSE:
            concerned = (list(rule.statements) if names is None
                         else [s for s in names if rule.concerns(s)])
            flag = rule.flag(values) if callable(rule.flag) else rule.flag
            raise InputError(flag, rule.message(values, concerned))
    return [rule for rule in failing if rule.actions[surface] == NOT_APPLICABLE]


def not_applicable_text(rules: Iterable[Rule]) -> str | None:
    """The "not applicable: …" text of failing rules (None when there are none).

    Example:
        >>> not_applicable_text([RULES["rho_ge_nu"], RULES["delta_lt_half"]])
        'not applicable: ρ < ν, δ ≥ ½'
    """
    failures = [rule.failure for rule in rules]
    return f"not applicable: {', '.join(failures)}" if failures else None
