"""Parameters of the calculator: defaults, parsing and validation (no torch, no sympy).

Every user-facing check raises :class:`InputError` with a one-line message naming the flag, e.g.
``--m must be a positive even integer, got 3``; the CLI turns it into exit code 2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

#: Defaults shown in every output. ``eta=None`` means "the theorem's step size η*".
DEFAULTS: dict[str, object] = {
    "m": 512,
    "n": 1000,
    "d": 8,
    "T": 16,
    "delta": "0.05",
    "rho": "2",
    "nu": "1",
    "steps": 4000,
    "eta": None,
    "activation": "tanh",
    "batch_size": 1,
    "misspecification": "0",
}


class InputError(ValueError):
    """Bad user input. ``flag`` names the offending CLI flag."""

    def __init__(self, flag: str, message: str):
        super().__init__(f"{flag} {message}")
        self.flag = flag


def parse_number(flag: str, text: str | float | int) -> float:
    """Parse a finite real number (accepts ``1e3``, ``0.05``, ``2**10`` is rejected)."""
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
    """``"2"`` → (2, 2, 2); ``"2,3,1"`` → (ρ_c, ρ_u, ρ_w). Values are kept as exact strings."""
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


@dataclass(frozen=True)
class Inputs:
    """Validated numeric inputs of a statement, as exact decimal strings and ints.

    Strings are kept so that mpmath evaluation sees ``0.05`` exactly, not its binary float.
    """

    m: int
    n: int
    d: int
    T: int
    delta: str
    rho: tuple[str, str, str]
    nu: tuple[str, str, str]
    steps: int
    eta: str | None
    activation: str
    batch_size: int = 1
    misspecification: str = "0"
    extra: dict[str, object] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        """Flat, JSON-ready view (ρ and ν split into components)."""
        return {
            "m": self.m, "n": self.n, "d": self.d, "T": self.T, "delta": float(self.delta),
            "rho_c": float(self.rho[0]), "rho_u": float(self.rho[1]), "rho_w": float(self.rho[2]),
            "nu_c": float(self.nu[0]), "nu_u": float(self.nu[1]), "nu_w": float(self.nu[2]),
            "K": self.steps, "eta": None if self.eta is None else float(self.eta),
            "activation": self.activation, "b": self.batch_size,
            "epsilon_mis": float(self.misspecification),
        }


def validate(
    *,
    m: object = DEFAULTS["m"],
    n: object = DEFAULTS["n"],
    d: object = DEFAULTS["d"],
    T: object = DEFAULTS["T"],
    delta: object = DEFAULTS["delta"],
    rho: object = DEFAULTS["rho"],
    nu: object = DEFAULTS["nu"],
    steps: object = DEFAULTS["steps"],
    eta: object = DEFAULTS["eta"],
    activation: str = "tanh",
    batch_size: object = DEFAULTS["batch_size"],
    misspecification: object = DEFAULTS["misspecification"],
    statement: str | None = None,
) -> Inputs:
    """Check every input and return :class:`Inputs`; raises :class:`InputError` naming the flag.

    Rules (issue 2, item 6): m a positive even integer; n, d, T, K, b positive integers;
    δ in (0, 1); ρ, ν, ε_mis non-negative; η > 0 when given; the activation a known preset or
    ``custom:S0,S1,S2``; ν with a positive component when η is not given and the statement uses
    the theorem's step size η* ∝ ‖ν‖ (``statement=None``: assume it does).
    ρ < ν is *not* an input error (the condition row fails instead).

    Example:
        >>> validate(m=512, n=1000, rho="2").rho
        ('2', '2', '2')
    """
    from boundcalc.api import compiled_statement, parse_activation  # no sympy when cached

    m_int = parse_integer("--m", m)
    if m_int < 2 or m_int % 2:
        raise InputError("--m", f"must be a positive even integer (symmetric init), got {m!r}")
    n_int = parse_integer("--n", n)
    if n_int < 1:
        raise InputError("--n", f"must be >= 1, got {n!r}")
    d_int = parse_integer("--d", d)
    if d_int < 1:
        raise InputError("--d", f"must be >= 1, got {d!r}")
    t_int = parse_integer("--T", T)
    if t_int < 1:
        raise InputError("--T", f"must be >= 1, got {T!r}")
    delta_value = parse_number("--delta", delta)
    if not 0 < delta_value < 1:
        raise InputError("--delta", f"must lie in (0, 1), got {delta!r}")
    k_int = parse_integer("--steps", steps)
    if k_int < 1:
        raise InputError("--steps", f"must be >= 1, got {steps!r}")
    b_int = parse_integer("--batch-size", batch_size)
    if b_int < 1:
        raise InputError("--batch-size", f"must be >= 1, got {batch_size!r}")
    eta_text = None
    if eta is not None:
        eta_value = parse_number("--eta", eta)
        if eta_value <= 0:
            raise InputError("--eta", f"must be > 0, got {eta!r}")
        eta_text = str(eta).strip()
    mis_value = parse_number("--misspecification", misspecification)
    if mis_value < 0:
        raise InputError("--misspecification", f"must be >= 0, got {misspecification!r}")
    rho_t = parse_triple("--rho", str(rho))
    nu_t = parse_triple("--nu", str(nu))
    needs_step = statement is None or compiled_statement(statement).step
    if eta_text is None and needs_step and all(float(v) == 0 for v in nu_t):
        raise InputError("--nu", "needs a positive component when --eta is not given "
                         "(the theorem's step size is proportional to ||nu||)")
    try:
        act_name, _ = parse_activation(str(activation))
    except ValueError as exc:
        raise InputError("--activation", str(exc)) from None
    return Inputs(
        m=m_int, n=n_int, d=d_int, T=t_int, delta=str(delta).strip(), rho=rho_t, nu=nu_t,
        steps=k_int, eta=eta_text, activation=act_name, batch_size=b_int,
        misspecification=str(misspecification).strip(),
    )
