"""Numbers of the experiment tables as text: a mean rounded to its confidence interval.

One function writes every number of the LaTeX and Markdown tables of stored runs
(:mod:`boundcalc.tables`, the ``*_table.tex`` files of ``reproduce`` and ``boundcalc table``):

* a mean with a CI half-width: the half-width to ``ci_digits`` significant digits (2 by default),
  the mean rounded to the same decimal place (the CI's last digit), so no digit is shown that the
  CI does not support: 8.77 ± 1.13 → ``8.8 \\pm 1.1``; 48 612 ± 2 093 → ``4.86\\times10^{4} \\pm
  2.1\\times10^{3}``;
* a number alone (a bound, a single seed): ``digits`` significant digits.

A rounded number is written with plain digits when its last shown digit is a unit or a decimal
and it is at least 0.001 (``8.8``, ``0.0042``, ``4861``); otherwise as a mantissa times a power of
ten (``2.1\\times10^{3}`` — never ``2100``, whose trailing zeros would claim digits the number
does not have — and ``1.2\\times10^{-5}``). LaTeX never gets e-notation (``1.1e+02``) in math mode;
Markdown gets ``4.86×10^4``.

Example:
    >>> mean_ci_text(8.77, 1.13, "latex"), mean_ci_text(48612.0, 2093.0, "latex")
    ('8.8 \\\\pm 1.1', '4.86\\\\times10^{4} \\\\pm 2.1\\\\times10^{3}')
    >>> mean_ci_text(48612.0, 2093.0, "markdown"), number_text(1.234e-5, 3, "markdown")
    ('4.86×10^4 ± 2.1×10^3', '1.23×10^-5')
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

__all__ = ["STYLES", "mean_ci_text", "number_text", "rounded"]

#: The text styles: LaTeX math (``\\times10^{k}``, ``\\pm``) or Markdown (``×10^k``, ``±``).
STYLES = ("latex", "markdown")

_PLAIN_BELOW = -3   # 0.001 … is written with plain digits, 0.000999 as m×10^-4


def _place(value: float, digits: int) -> int:
    """Decimal place (the exponent of ten) of the last of ``digits`` significant digits of
    ``value``, after rounding (0.0996 to 2 digits is 0.10: place −2)."""
    lead = math.floor(math.log10(abs(value)))
    place = lead - (digits - 1)
    if abs(_quantize(value, place)) >= Decimal(1).scaleb(lead + 1):
        place += 1
    return place


def _quantize(value: float, place: int) -> Decimal:
    """``value`` rounded half away from zero (as by hand) at 10^place, from its shortest repr."""
    return Decimal(repr(float(value))).quantize(Decimal(1).scaleb(place), ROUND_HALF_UP)


def _plain(value: float, place: int) -> bool:
    """Whether ``value`` rounded to ``place`` is written with plain digits."""
    q = _quantize(value, place)
    return q == 0 or (place <= 0 and q.adjusted() >= _PLAIN_BELOW)


def rounded(value: float, place: int, style: str = "latex", plain: bool | None = None) -> str:
    r"""``value`` rounded to the decimal ``place`` (last digit at 10^place) as text: plain digits
    when ``place`` ≤ 0 and the rounded value is 0 or ≥ 0.001, else mantissa × 10^k (``plain``
    False forces the latter, as for a mean whose CI needs it).

    Example:
        >>> print(rounded(2093.0, 2), rounded(8.77, -1), rounded(0.000123, -6), rounded(-0.04, -3))
        2.1\times10^{3} 8.8 1.23\times10^{-4} -0.040
    """
    if style not in STYLES:
        raise ValueError(f"`style` must be one of {STYLES}, got {style!r}")
    q = _quantize(value, place)
    if q == 0:
        return "0"
    lead = q.adjusted()                      # exponent of the leading digit
    if plain is None:
        plain = _plain(value, place)
    if plain:
        return f"{q:f}"
    mantissa = q.scaleb(-lead)
    text = f"{mantissa:f}"
    return (f"{text}\\times10^{{{lead}}}" if style == "latex" else f"{text}×10^{lead}")


def number_text(value: float, digits: int = 3, style: str = "latex") -> str:
    """A number alone (no CI) to ``digits`` significant digits; ``--`` when it is not finite.

    Example:
        >>> number_text(4861.2, 3), number_text(4861.2, 4), number_text(0.5, 3), number_text(0.0)
        ('4.86\\\\times10^{3}', '4861', '0.500', '0')
    """
    if value is None or not math.isfinite(value):
        return "--"
    if value == 0:
        return "0"
    return rounded(value, _place(value, digits), style)


def mean_ci_text(mean: float, ci: float | None, style: str = "latex", digits: int = 3,
                 ci_digits: int = 2) -> str:
    """``mean ± ci`` with the CI half-width to ``ci_digits`` significant digits and the mean
    rounded to the CI's last digit (``\\pm`` in LaTeX math, ``±`` in Markdown), both with plain
    digits or both as powers of ten; the mean alone to ``digits`` digits when the CI is missing
    or not finite; ``--`` for a missing mean. A CI of zero keeps the mean's ``digits`` and shows
    ``± 0``.

    Example:
        >>> mean_ci_text(8.77, 110.3), mean_ci_text(-0.5113, 0.0141), mean_ci_text(2.5, None)
        ('1\\\\times10^{1} \\\\pm 1.1\\\\times10^{2}', '-0.511 \\\\pm 0.014', '2.50')
        >>> mean_ci_text(0.0016912, 0.000281, "markdown"), mean_ci_text(9e-4, 0.0019, "markdown")
        ('1.69×10^-3 ± 2.8×10^-4', '9×10^-4 ± 1.9×10^-3')
    """
    if mean is None or not math.isfinite(mean):
        return "--"
    pm = r" \pm " if style == "latex" else " ± "
    if ci is None or not math.isfinite(ci):
        return number_text(mean, digits, style)
    if ci == 0:
        return number_text(mean, digits, style) + pm + "0"
    place = _place(abs(ci), ci_digits)
    plain = _plain(mean, place) and _plain(abs(ci), place)   # both alike
    return rounded(mean, place, style, plain) + pm + rounded(abs(ci), place, style, plain)
