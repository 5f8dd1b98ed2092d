"""Activation presets: the three bounds (σ₀, σ₁, σ₂) of Section 3.2, eq. (3).

The paper assumes ``|σ| ≤ σ₀``, ``|σ'| ≤ σ₁`` and ``|σ''| ≤ σ₂`` on the whole real line. Two
presets are exact closed forms:

* ``tanh``: σ₀ = 1, σ₁ = 1 (at 0), σ₂ = max |−2 tanh(x) sech²(x)| = 4/(3√3), attained where
  tanh²(x) = 1/3.
* ``erf``: σ(x) = erf(x/√2), σ'(x) = √(2/π)·e^{−x²/2}, σ''(x) = −x·√(2/π)·e^{−x²/2}; hence
  σ₀ = 1, σ₁ = √(2/π) (at 0) and σ₂ = √(2/π)·e^{−1/2} (at |x| = 1). (The authors' public script
  has σ' off by a factor √2; these are the correct values.)

``custom`` takes three user numbers.

Example:
    >>> from boundcalc.theory.activations import get_activation
    >>> get_activation("tanh").sigma2
    4*sqrt(3)/9
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp


@dataclass(frozen=True)
class Activation:
    """Exact bounds of an activation: |σ| ≤ sigma0, |σ'| ≤ sigma1, |σ''| ≤ sigma2."""

    name: str
    sigma0: sp.Expr
    sigma1: sp.Expr
    sigma2: sp.Expr

    def as_dict(self) -> dict[str, sp.Expr]:
        return {"sigma0": self.sigma0, "sigma1": self.sigma1, "sigma2": self.sigma2}


TANH = Activation("tanh", sp.Integer(1), sp.Integer(1), 4 / (3 * sp.sqrt(3)))
ERF = Activation(
    "erf",
    sp.Integer(1),
    sp.sqrt(2 / sp.pi),
    sp.sqrt(2 / sp.pi) * sp.exp(-sp.Rational(1, 2)),
)

PRESETS: dict[str, Activation] = {"tanh": TANH, "erf": ERF}


def get_activation(spec: str) -> Activation:
    """Parse an activation spec: ``tanh``, ``erf`` or ``custom:S0,S1,S2``.

    Args:
        spec: preset name, or ``custom:`` followed by three non-negative numbers.

    Returns:
        The :class:`Activation` with exact sympy values.

    Raises:
        ValueError: unknown name, or malformed / negative custom values.

    Example:
        >>> get_activation("custom:1,0.5,0.25").sigma1
        1/2
    """
    key = spec.strip().lower()
    if key in PRESETS:
        return PRESETS[key]
    if key.startswith("custom:"):
        parts = key[len("custom:"):].split(",")
        if len(parts) != 3:
            raise ValueError(
                f"custom activation needs three bounds 'custom:S0,S1,S2', got {spec!r}"
            )
        try:
            values = [sp.nsimplify(sp.Float(p.strip(), 30), rational=True) for p in parts]
        except (ValueError, TypeError, sp.SympifyError) as exc:
            raise ValueError(f"custom activation bounds must be numbers, got {spec!r}") from exc
        if any(v < 0 for v in values) or not all(v.is_finite for v in values):
            raise ValueError(f"custom activation bounds must be finite and >= 0, got {spec!r}")
        return Activation(spec.strip(), *values)
    raise ValueError(
        f"unknown activation {spec!r}; choose tanh, erf or custom:S0,S1,S2"
    )


__all__ = [
    "Activation", "ERF", "PRESETS", "TANH", "get_activation",
]
