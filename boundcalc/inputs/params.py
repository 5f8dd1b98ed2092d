"""The parameters of the Transformer statements: one table, and the checks generated from it.

:data:`PARAMS` has one :class:`Param` row per input: its keyword, CLI flag, the sympy symbols it
sets (names of :mod:`boundcalc.theory.symbols`), its JSON/CSV column names, the default shown in
every output, the check of its values and its help text. Everything else is read from the table:
the CLI options of the point commands and of ``sweep`` (:mod:`boundcalc.cli.options`), the sweep
axes (:mod:`boundcalc.calc.sweep`), the source column of the output ("given (--rho)"), the defaults
of ``validate`` and :func:`validate` here. From a flag to its formula: the row names the symbol, and
the command's statement module (``boundcalc.theory.<command>``) holds the formula.

Every user-facing check raises :class:`~boundcalc.errors.InputError` with a one-line message
naming the flag, e.g. ``--m must be a positive even integer, got 3``; the CLI turns it into exit
code 2. No torch, no sympy.

Example:
    >>> PARAMS["rho"].flag, PARAMS["rho"].symbols, PARAMS["steps"].columns
    ('--rho', ('rho_c', 'rho_u', 'rho_w'), ('K',))
    >>> validate(m=512, n=1000, rho="2").rho
    ('2', '2', '2')
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

from boundcalc.errors import InputError
from boundcalc.inputs.rules import apply_rules
from boundcalc.theory.catalog import ACTIVATIONS, BY_NAME, base_name, route_key

__all__ = [
    "ARGUMENT_NAMES", "CHECKS", "DEFAULTS", "FIELD_TYPES", "PARAMS", "InputError", "Inputs",
    "Param", "parse_activation", "parse_integer", "parse_number", "parse_triple", "routed_key",
    "validate",
]


def parse_number(flag: str, text: str | float | int) -> float:
    """Parse a finite real number (accepts ``1e3``, ``0.05``; ``2**10`` is rejected).

    Example:
        >>> parse_number("--delta", "5e-2")
        0.05
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = float(text)
    else:
        try:
            value = float(str(text).strip())
        except ValueError:
            raise InputError(flag, f"must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise InputError(flag, f"must be finite, got {text!r}")
    return value


#: Integers past this many digits are refused (they would only be slow, never meaningful).
_MAX_INTEGER_DIGITS = 400


def parse_integer(flag: str, text: str | float | int) -> int:
    """Parse an integer exactly (no trip through a binary float, so ``2**53 + 1`` stays itself);
    ``1e3`` and ``1000.0`` are accepted because they are exactly integers, ``1.5e0`` is not.

    Example:
        >>> parse_integer("--n", "9007199254740993"), parse_integer("--n", "1e3")
        (9007199254740993, 1000)
    """
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    if isinstance(text, float):
        if not math.isfinite(text):
            raise InputError(flag, f"must be finite, got {text!r}")
        if not text.is_integer():
            raise InputError(flag, f"must be an integer, got {text!r}")
        return int(text)
    raw = str(text).strip()
    try:
        value = Decimal(raw)
    except InvalidOperation:
        raise InputError(flag, f"must be an integer, got {text!r}") from None
    if not value.is_finite():
        raise InputError(flag, f"must be finite, got {text!r}")
    if value.adjusted() >= _MAX_INTEGER_DIGITS:
        raise InputError(flag, f"is too large, got {text!r}")
    if value != value.to_integral_value():
        raise InputError(flag, f"must be an integer, got {text!r}")
    return int(value)


def parse_triple(flag: str, text: str) -> tuple[str, str, str]:
    """``"2"`` → (2, 2, 2); ``"2,3,1"`` → (ρ_c, ρ_u, ρ_w). Values are kept as exact strings.

    Example:
        >>> parse_triple("--rho", "2,3,1")
        ('2', '3', '1')
    """
    parts = [p.strip() for p in str(text).split(",")]
    if len(parts) == 1:
        parts = parts * 3
    if len(parts) != 3:
        raise InputError(flag, f"takes one value or three comma-separated values, got {text!r}")
    for p in parts:
        value = parse_number(flag, p)
        if value < 0:
            raise InputError(flag, f"must be non-negative, got {text!r}")
    return parts[0], parts[1], parts[2]


# --------------------------------------------------------------------------- checks by kind


def _even_width(flag: str, text: object) -> int:
    value = parse_integer(flag, text)
    if value < 2 or value % 2:
        raise InputError(flag, f"must be a positive even integer (symmetric init), got {text!r}")
    return value


def _count(flag: str, text: object) -> int:
    value = parse_integer(flag, text)
    if value < 1:
        raise InputError(flag, f"must be >= 1, got {text!r}")
    return value


def _probability(flag: str, text: object) -> str:
    if not 0 < parse_number(flag, text) < 1:
        raise InputError(flag, f"must lie in (0, 1), got {text!r}")
    return str(text).strip()


def _positive(flag: str, text: object) -> str:
    if parse_number(flag, text) <= 0:
        raise InputError(flag, f"must be > 0, got {text!r}")
    return str(text).strip()


def _non_negative(flag: str, text: object) -> str:
    if parse_number(flag, text) < 0:
        raise InputError(flag, f"must be >= 0, got {text!r}")
    return str(text).strip()


def _triple(flag: str, text: object) -> tuple[str, str, str]:
    return parse_triple(flag, str(text))


def parse_activation(spec: str) -> tuple[str, tuple[Fraction, Fraction, Fraction] | None]:
    """(name, exact custom bounds or None for a preset) of an activation spec: a preset of
    :data:`boundcalc.theory.catalog.ACTIVATIONS` or ``custom:S0,S1,S2`` (the bounds σ₀, σ₁, σ₂
    of |σ|, |σ'|, |σ''|); ``ValueError`` with a message that reads after the flag name
    (``--activation must be ...``).

    Example:
        >>> parse_activation("custom:1,0.5,0.25")
        ('custom:1,0.5,0.25', (Fraction(1, 1), Fraction(1, 2), Fraction(1, 4)))
        >>> parse_activation(" TANH ")
        ('tanh', None)
    """
    text = str(spec).strip()
    key = text.lower()
    if key in ACTIVATIONS:
        return key, None
    if key.startswith("custom:"):
        parts = key[len("custom:"):].split(",")
        if len(parts) != 3:
            raise ValueError(f"must be custom:S0,S1,S2 with three bounds, got {spec!r}")
        try:
            values = tuple(Fraction(p.strip()) for p in parts)
        except (ValueError, ZeroDivisionError):
            raise ValueError(f"must be custom:S0,S1,S2 with three numbers, got {spec!r}") from None
        if any(v < 0 for v in values):
            raise ValueError(f"must be custom:S0,S1,S2 with bounds >= 0, got {spec!r}")
        return text, values  # type: ignore[return-value]
    raise ValueError(f"must be {', '.join(ACTIVATIONS)} or custom:S0,S1,S2, got {spec!r}")


def _activation(flag: str, text: object) -> str:
    try:
        name, _ = parse_activation(str(text))
    except ValueError as exc:
        raise InputError(flag, str(exc)) from None
    return name


#: The check of each kind: ``check(flag, text)`` returns the value kept in :class:`Inputs`.
CHECKS: dict[str, Callable[[str, object], Any]] = {
    "even": _even_width, "count": _count, "probability": _probability, "positive": _positive,
    "non_negative": _non_negative, "triple": _triple, "activation": _activation,
}

#: Value kinds of a sweep axis by check kind: ``int`` axes keep integers exactly.
SWEEP_KINDS: dict[str, str] = {"even": "int", "count": "int", "probability": "real",
                               "positive": "real", "non_negative": "real", "triple": "triple"}


@dataclass(frozen=True)
class Param:
    """One input of the Transformer statements.

    Attributes:
        name: keyword of :func:`validate` and of the CLI function.
        flag: the CLI flag.
        symbols: names of the sympy symbols it sets (:mod:`boundcalc.theory.symbols`).
        columns: its keys in JSON/CSV outputs (the input columns of a sweep).
        default: the default (text, as shown); None for η: the theorem's step size η*.
        kind: a key of :data:`CHECKS`.
        metavar: placeholder in ``--help``.
        help: one-line help.
        shown_default: the default as ``--help`` shows it (when not ``default``).
        commands: the point commands that take the flag (None: all of them).
        example: a value for the help's examples of those commands.
        validation_default: the default of ``boundcalc validate`` (small, CPU-fast sizes).
    """

    name: str
    flag: str
    symbols: tuple[str, ...]
    columns: tuple[str, ...]
    default: str | None
    kind: str
    metavar: str
    help: str
    shown_default: str | None = None
    commands: tuple[str, ...] | None = None
    example: str | None = None
    validation_default: str | None = None

    def check(self, value: object) -> Any:
        """The checked value (:class:`InputError` naming :attr:`flag` when it is not valid).

        Example:
            >>> PARAMS["m"].check("64"), PARAMS["delta"].check(" 0.05 ")
            (64, '0.05')
        """
        return CHECKS[self.kind](self.flag, value)


def _rows(*rows: Param) -> dict[str, Param]:
    return {row.name: row for row in rows}


#: Every input of the Transformer statements, in the order of the CLI options and of the sweep.
PARAMS: Mapping[str, Param] = _rows(
    Param("m", "--m", ("m",), ("m",), "512", "even", "EVEN",
          "width m: number of heads (positive, even)", validation_default="16"),
    Param("n", "--n", ("n",), ("n",), "1000", "count", "INT",
          "number of training samples (>= 1)", validation_default="64"),
    Param("d", "--d", ("d",), ("d",), "8", "count", "INT", "token dimension (>= 1)",
          validation_default="4"),
    Param("T", "--T", ("T",), ("T",), "16", "count", "INT",
          "sequence length (no Transformer bound depends on it; prop2's IndRNN bounds grow "
          "with it past the cutoff)", validation_default="8"),
    Param("delta", "--delta", ("delta",), ("delta",), "0.05", "probability", "P",
          "failure probability per event, in (0, 1)", validation_default="0.05"),
    Param("rho", "--rho", ("rho_c", "rho_u", "rho_w"), ("rho_c", "rho_u", "rho_w"), "2",
          "triple", "R[,R,R]", "projection radii: one value or rho_c,rho_u,rho_w",
          validation_default="2"),
    Param("nu", "--nu", ("nu_c", "nu_u", "nu_w"), ("nu_c", "nu_u", "nu_w"), "1", "triple",
          "V[,V,V]", "transport budgets: one value or nu_c,nu_u,nu_w", validation_default="1"),
    Param("steps", "--steps", ("K",), ("K",), "4000", "count", "K",
          "number of gradient steps K (>= 1)", validation_default="300"),
    Param("eta", "--eta", ("eta",), ("eta",), None, "positive", "ETA", "step size (> 0)",
          shown_default="eta* = ||nu||/(2 L B sqrt(K))"),
    Param("activation", "--activation", ("sigma0", "sigma1", "sigma2"), ("activation",), "tanh",
          "activation", "NAME", "tanh, erf or custom:S0,S1,S2", validation_default="tanh"),
    Param("batch_size", "--batch-size", ("b",), ("b",), "1", "count", "B",
          "ProjSGD minibatch size b (1 <= b <= n)", commands=("prop1",),
          example="32", validation_default="8"),
    Param("misspecification", "--misspecification", ("epsilon_mis",), ("epsilon_mis",), "0",
          "non_negative", "EPS", "eps_mis = max_j |y_j - f*(X_j)| (>= 0)",
          commands=("remark9",), example="0.1"),
    Param("min_probability", "--min-probability", (), ("min_probability",), "0.5",
          "probability", "P",
          "smallest probability at which a bound counts as GUARANTEED, in (0, 1): below it "
          "the verdict is not_guaranteed and says so"),
)

#: Names of the sympy symbols a statement may contain, in the order of the arguments of every
#: function the evaluator generates (:mod:`boundcalc.calc.evaluator`): the parameters' symbols.
ARGUMENT_NAMES: tuple[str, ...] = tuple(sym for p in PARAMS.values() for sym in p.symbols)

#: Defaults shown in every output, by keyword (η: None, the theorem's step size η*).
DEFAULTS: dict[str, object] = {
    p.name: (int(p.default) if p.kind in ("even", "count") else p.default)
    for p in PARAMS.values()
}


#: The type of an :class:`Inputs` field, by check kind (a row without a default may be None).
FIELD_TYPES: dict[str, Any] = {
    "even": int, "count": int, "probability": str, "positive": str, "non_negative": str,
    "triple": tuple[str, str, str], "activation": str,
}


def _param_fields(cls: type) -> type:
    """``cls`` as a frozen dataclass with one field per :data:`PARAMS` row, in table order and
    before its own fields, each defaulting to the row's checked default: so that an input is
    one row of the table, not also a field written here."""
    own = dict(cls.__dict__.get("__annotations__", {}))
    fields: dict[str, Any] = {}
    for p in PARAMS.values():
        kind = FIELD_TYPES[p.kind]
        fields[p.name] = kind if p.default is not None else kind | None
        setattr(cls, p.name, None if p.default is None else p.check(p.default))
    cls.__annotations__ = {**fields, **own}
    return dataclass(frozen=True)(cls)


@_param_fields
class Inputs:
    """Validated numeric inputs of a statement, as exact decimal strings and ints: one field per
    row of :data:`PARAMS` (named by its keyword; an ``int`` for an integer kind, a tuple of three
    strings for ρ and ν, the text otherwise; η None when not given), each defaulting to the
    row's default, then ``extra``.

    Strings are kept so that mpmath evaluation sees ``0.05`` exactly, not its binary float.

    Example:
        >>> inputs = validate(m=64, rho="2,3,1", eta="0.01")
        >>> inputs.m, inputs.rho, inputs.eta, inputs.steps
        (64, ('2', '3', '1'), '0.01', 4000)
        >>> inputs.exact_values()["rho_u"], inputs.exact_values()["eta"]
        (Fraction(3, 1), Fraction(1, 100))
    """

    extra: dict[str, object] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        """Flat, JSON-ready view keyed by the :attr:`Param.columns` (ρ and ν split into
        components)."""
        out: dict[str, object] = {}
        for p in PARAMS.values():
            value = getattr(self, p.name)
            if p.kind == "triple":
                out.update(zip(p.columns, (float(v) for v in value), strict=True))
            elif p.kind in ("even", "count") or p.kind == "activation":
                out[p.columns[0]] = value
            else:
                out[p.columns[0]] = None if value is None else float(value)
        return out

    def exact_values(self) -> dict[str, int | Fraction]:
        """Exact value of every rational input, keyed by the names of its row's
        :attr:`Param.symbols`: integers as ``int``, the rest as ``Fraction`` of their decimal
        text; η only when given, σ₀, σ₁, σ₂ only for a custom activation (a preset's are not
        rational)."""
        values: dict[str, int | Fraction] = {}
        for p in PARAMS.values():
            value = getattr(self, p.name)
            if value is None:
                continue
            if p.kind == "activation":
                _, custom = parse_activation(value)
                if custom is not None:
                    values.update(zip(p.symbols, custom, strict=True))
            elif p.kind == "triple":
                values.update(zip(p.symbols, (Fraction(v) for v in value), strict=True))
            elif p.symbols:  # a row without symbols (min_probability) is no argument
                values[p.symbols[0]] = value if isinstance(value, int) else Fraction(value)
        return values


def _uses_step_size(statement: str | None) -> bool:
    """Whether ``statement`` (a registry key; None: assume so) uses the theorem's step size η*."""
    if statement is None:
        return True
    return BY_NAME[base_name(statement)].uses_step_size


def routed_key(statement: str, route: object, flag: str = "--route") -> str:
    """Registry key of catalog statement ``statement`` on proof ``route`` (None: the default,
    tight), from :func:`boundcalc.theory.catalog.route_key`; a route that is not one of
    :data:`~boundcalc.theory.catalog.ROUTES`, or any route for a statement with one proof route,
    is an :class:`InputError` naming ``flag``.

    Example:
        >>> routed_key("prop1", "paper"), routed_key("lemma2", None)
        ('prop1_paper', 'lemma2')
    """
    try:
        return route_key(statement, route)
    except ValueError as err:
        raise InputError(flag, str(err)) from None


def validate(*, statement: str | None = None, **values: object) -> Inputs:
    """Check every input (:data:`PARAMS`; a missing one takes its default) and return
    :class:`Inputs`; raises :class:`InputError` naming the flag.

    Rules: m a positive even integer; n, d, T, K, b positive integers; δ in (0, 1); ρ, ν, ε_mis
    non-negative; η > 0 when given; the activation a known preset or ``custom:S0,S1,S2``; ν with
    a positive component when η is not given and the statement uses the theorem's step size
    η* ∝ ‖ν‖ (``statement=None``: assume it does). ρ < ν is *not* an input error (the condition
    row fails instead).

    Example:
        >>> validate(m=512, n=1000, rho="2,3,1").rho
        ('2', '3', '1')
        >>> validate(m=3)
        Traceback (most recent call last):
        ...
        boundcalc.errors.InputError: --m must be a positive even integer (symmetric init), got 3
    """
    unknown = sorted(set(values) - set(PARAMS))
    if unknown:
        raise TypeError(f"validate() got unexpected keyword arguments {unknown}")
    checked: dict[str, Any] = {}
    # the scalars first, then rho and nu, then the activation (the order of the messages when
    # several flags are wrong)
    for p in sorted(PARAMS.values(), key=lambda p: ("triple", "activation").index(p.kind) + 1
                    if p.kind in ("triple", "activation") else 0):
        if p.kind == "activation":
            continue
        value = values.get(p.name, p.default)
        checked[p.name] = None if value is None else p.check(value)
    apply_rules("calculator", {"nu": checked["nu"],
                               "eta_star": checked["eta"] is None and _uses_step_size(statement)})
    checked["activation"] = PARAMS["activation"].check(values.get("activation", "tanh"))
    return Inputs(**checked)
