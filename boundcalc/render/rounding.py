"""Numbers of the experiment tables as text: a mean rounded to its confidence interval.

One function writes every number of the LaTeX and Markdown tables of stored runs
(:mod:`boundcalc.runs.tables`, the ``*_table.tex`` files of ``reproduce`` and ``boundcalc table``):

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

__all__ = ["STYLES", "WIDE_INTERVAL_DECADES", "column_exponent", "column_mean_ci_text",
           "column_number_text", "interval_decades", "interval_text", "mean_ci_text",
           "number_text", "rounded", "scaled", "wide_interval_text"]

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


# ------------------------------------------------------------------ one exponent per column
# A table column writes all its numbers with one power of ten: plain digits when every number of
# the column reads plainly (0.001 ≤ |x| < 10⁴ or 0), else every number as a multiple of the
# same 10^k, k the leading exponent of the column's largest number.

_PLAIN_RANGE = (Decimal("0.001"), Decimal(10000))


def column_exponent(values: list[float | None]) -> int:
    """The power of ten k shared by the numbers of one table column: 0 when every finite value
    reads with plain digits (0, or 0.001 ≤ |x| < 10⁴), else the leading exponent of the largest
    |value|; 0 for a column without finite values.

    Example:
        >>> column_exponent([0.5, 12.0, 9000.0]), column_exponent([9e-4, 0.0010])
        (0, -3)
        >>> column_exponent([3.2e5, 2.0e9, None])
        9
    """
    finite = [abs(v) for v in values if v is not None and math.isfinite(v) and v != 0]
    if not finite:
        return 0
    if all(_PLAIN_RANGE[0] <= Decimal(repr(float(v))) < _PLAIN_RANGE[1] for v in finite):
        return 0
    return math.floor(math.log10(max(finite)))


def scaled(value: float, place: int, exponent: int) -> str:
    """``value`` / 10^``exponent`` rounded (half away from zero) at the decimal ``place`` of
    ``value`` (last digit at 10^place), as plain digits; the decimal arithmetic is exact, so the
    digits are those of ``value`` itself.

    Example:
        >>> scaled(0.0016912, -5, -3), scaled(48612.0, 2, 4), scaled(8.77, -1, 0)
        ('1.69', '4.86', '8.8')
    """
    q = _quantize(value, place).scaleb(-exponent)
    if q == 0:
        return "0"
    digits = max(0, exponent - place)
    return f"{q:.{digits}f}"


def _times(exponent: int, style: str) -> str:
    return f"\\times10^{{{exponent}}}" if style == "latex" else f"×10^{exponent}"


def _wrap(text: str, exponent: int, style: str, grouped: bool) -> str:
    if exponent == 0:
        return text
    return (f"({text})" if grouped else text) + _times(exponent, style)


def interval_text(center: float | None, low: float | None, high: float | None,
                  style: str = "latex", digits: int = 3, ci_digits: int = 2,
                  exponent: int = 0, own_powers: bool = True) -> str:
    """``center [low, high]`` — a geometric mean over seeds and its 95 % interval, which is not
    symmetric about it — all three rounded at one decimal place: that of the narrower side of the
    interval (``center − low`` or ``high − center``) to ``ci_digits`` significant digits, so no
    digit is shown that the interval does not support; ``center`` alone to ``digits`` digits when
    the interval is missing (one seed); ``--`` for a missing center. Numbers are written as
    multiples of 10^``exponent`` (:func:`column_exponent`), the power once after the brackets;
    ``own_powers`` False (a table column, whose one power of ten was chosen from every number it
    shows) writes the ends as multiples of that power too, never with a power of their own.

    Example:
        >>> interval_text(0.0123, 0.0101, 0.0149, "markdown")
        '0.0123 [0.0101, 0.0149]'
        >>> interval_text(0.0123, 0.0101, 0.0149, "markdown", exponent=-3)
        '(12.3 [10.1, 14.9])×10^-3'
        >>> interval_text(4.0, 0.7149, 22.38, "latex"), interval_text(2.5, None, None)
        ('4.0 [0.71, 22.4]', '2.50')
        >>> interval_text(0.13, 9.2e-8, 1.83e8, "markdown")
        '0.13 [9.2×10^-8, 1.8×10^8]'
    """
    if center is None or not math.isfinite(center):
        return "--"
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return _wrap(scaled(center, _digits_place(center, digits), exponent), exponent, style,
                     False)
    side = min(abs(center - low), abs(high - center))
    place = _digits_place(center, digits) if side == 0 else _place(side, ci_digits)
    ends = [_end(value, place, ci_digits, exponent, style, own_powers) for value in (low, high)]
    text = f"{scaled(center, place, exponent)} [{ends[0]}, {ends[1]}]"
    return _wrap(text, exponent, style, True)


def _end(value: float, place: int, ci_digits: int, exponent: int, style: str,
         own_powers: bool = True) -> str:
    """An end of an interval: at the center's ``place``, or to ``ci_digits`` significant digits
    where that place would write it as 0 or with more than four digits; plain digits while
    0.001 ≤ |value| / 10^exponent < 10⁴, else (an interval from two seeds can span many
    decades) mantissa × its own power of ten."""
    if value == 0:
        return "0"
    own = _place(value, ci_digits)
    if own < place or own > place + 2:   # under ci_digits digits, or over ci_digits + 2
        place = own
    text = scaled(value, place, exponent)
    if not own_powers or _PLAIN_RANGE[0] <= abs(Decimal(text)) < _PLAIN_RANGE[1]:
        return text
    lead = _quantize(value, place).adjusted()
    return rounded(value, place, style, plain=False) if exponent == 0 else (
        scaled(value, place, lead) + _times(lead - exponent, style))


#: A 95 % interval whose ends lie more than this many decades apart (high / low > 10^2, as two
#: or three seeds give) says only that the seeds disagree: the tables print its width in decades
#: instead of its ends (:func:`wide_interval_text`; CSV keeps the ends).
WIDE_INTERVAL_DECADES = 2.0


def interval_decades(low: float | None, high: float | None) -> float:
    """Decades between the ends of a positive interval, log10(high / low); NaN where an end is
    missing, not finite or not positive.

    Example:
        >>> round(interval_decades(9.1e-17, 1.0e17), 1), interval_decades(None, 2.0)
        (33.0, nan)
    """
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)) or \
            low <= 0 or high <= 0:
        return math.nan
    return math.log10(high / low)


def wide_interval_text(center: float | None, low: float | None, high: float | None,
                       style: str = "latex", digits: int = 3, exponent: int = 0) -> str | None:
    """``center [CI spans k decades]``: a geometric mean whose interval is wider than
    :data:`WIDE_INTERVAL_DECADES` (its ends would only say that the seeds disagree), the center to
    ``digits`` significant digits as a multiple of the column's 10^``exponent`` (``(0.634 [CI spans
    2.4 decades])×10^-3``, as the column's intervals write it); None for an
    interval that is not that wide (write it with :func:`interval_text`).

    Example:
        >>> wide_interval_text(3.1, 9.1e-17, 1.0e17, "markdown", 2)
        '3.1 [CI spans 33 decades]'
        >>> wide_interval_text(0.25, 0.063, 0.98, "markdown") is None
        True
    """
    decades = interval_decades(low, high)
    if center is None or not math.isfinite(center) or not decades > WIDE_INTERVAL_DECADES:
        return None
    text = (f"{scaled(center, _digits_place(center, digits), exponent)} "
            f"[CI spans {decades:.2g} decades]")
    return _wrap(text, exponent, style, True)


def _digits_place(value: float, digits: int) -> int:
    return 0 if value == 0 else _place(value, digits)


def column_mean_ci_text(mean: float | None, ci: float | None, style: str = "latex",
                        digits: int = 3, ci_digits: int = 2, exponent: int = 0) -> str:
    """``mean ± ci`` as :func:`mean_ci_text` rounds it, written as multiples of the column's
    10^``exponent`` (:func:`column_exponent`): ``(4.86 ± 0.21)×10^4``.

    Example:
        >>> column_mean_ci_text(48612.0, 2093.0, "markdown", exponent=4)
        '(4.86 ± 0.21)×10^4'
        >>> column_mean_ci_text(8.77, 110.3, "markdown"), column_mean_ci_text(2.5, None)
        ('10 ± 110', '2.50')
    """
    if mean is None or not math.isfinite(mean):
        return "--"
    pm = r" \pm " if style == "latex" else " ± "
    if ci is None or not math.isfinite(ci):
        return _wrap(scaled(mean, _digits_place(mean, digits), exponent), exponent, style, False)
    if ci == 0:
        text = scaled(mean, _digits_place(mean, digits), exponent) + pm + "0"
    else:
        place = _place(abs(ci), ci_digits)
        text = scaled(mean, place, exponent) + pm + scaled(abs(ci), place, exponent)
    return _wrap(text, exponent, style, True)


def column_number_text(value: float | None, digits: int = 3, style: str = "latex",
                       exponent: int = 0) -> str:
    """A number alone to ``digits`` significant digits, as a multiple of the column's
    10^``exponent``; ``--`` when missing or not finite.

    Example:
        >>> column_number_text(3.21e5, 3, "markdown", 9), column_number_text(4861.2, 3, "markdown")
        ('0.000321×10^9', '4860')
    """
    if value is None or not math.isfinite(value):
        return "--"
    return _wrap(scaled(value, _digits_place(value, digits), exponent), exponent, style, False)
