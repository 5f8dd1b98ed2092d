"""Summary statistics of the experiments: Student-t confidence intervals and log–log slopes.

The experiments (:mod:`boundcalc.validators.experiments.figure1`,
:mod:`boundcalc.validators.experiments.figure2`) and ``boundcalc table`` report the same numbers
from the same stored cells (both through :mod:`boundcalc.runs.summaries`), so they share these
functions. numpy and mpmath only (no scipy, no torch): the t quantile is
found by bisection on the regularised incomplete beta function.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence


def t_quantile_975(df: int) -> float:
    """0.975 quantile of Student's t with ``df`` degrees of freedom (mpmath, no scipy).

    Example:
        >>> round(t_quantile_975(1), 4), round(t_quantile_975(9), 4)
        (12.7062, 2.2622)
    """
    import mpmath

    nu = mpmath.mpf(df)
    lo, hi = mpmath.mpf(0), mpmath.mpf(1)
    for _ in range(80):  # P(|t| > q) = I_{nu/(nu+q²)}(nu/2, 1/2) = 0.05, bisect on x
        mid = (lo + hi) / 2
        if mpmath.betainc(nu / 2, mpmath.mpf(1) / 2, 0, mid, regularized=True) < 0.05:
            lo = mid
        else:
            hi = mid
    x = (lo + hi) / 2
    return float(mpmath.sqrt(nu * (1 - x) / x))


def mean_ci95(values: Sequence[float | None]) -> tuple[float, float, int]:
    """(mean, half-width of the 95 % Student-t CI, count) over the finite values; the CI is NaN
    for a single value, everything NaN for none.

    Example:
        >>> mean, ci, k = mean_ci95([1.0, 2.0, 3.0, float("nan")])
        >>> mean, round(ci, 4), k
        (2.0, 2.4841, 3)
    """
    import numpy as np

    arr = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    k = int(arr.size)
    if k == 0:
        return math.nan, math.nan, 0
    with np.errstate(over="ignore"):   # values near the float range: an infinite spread
        mean = float(arr.mean())
        if k == 1:
            return mean, math.nan, 1
        return mean, t_quantile_975(k - 1) * float(arr.std(ddof=1)) / math.sqrt(k), k


def geometric_mean_ci95(values: Sequence[float | None]) -> tuple[float, float, float, int]:
    """(geometric mean, lower, upper end of its 95 % Student-t CI, count) over the positive
    finite values: the interval is computed on the log values and mapped back,
    exp(mean(log x) ± t_{0.975, k−1} · s/√k), s the sample standard deviation of log x — the CI
    of a quantity drawn on a log axis and fitted in log space (:func:`fit_slope`). Unlike the
    arithmetic interval of :func:`mean_ci95` it is never below zero and is symmetric on the log
    axis (lower · upper = geometric mean²). The ends are NaN for a single value, everything NaN
    for none; non-positive and non-finite values are dropped.

    Example:
        >>> g, lo, hi, k = geometric_mean_ci95([2.0, 8.0, 4.0, float("nan"), 0.0])
        >>> round(g, 12), round(lo, 4), round(hi, 4), round(lo * hi, 9), k
        (4.0, 0.7149, 22.38, 16.0, 3)
        >>> geometric_mean_ci95([4.0])[:2]
        (4.0, nan)
    """
    logs = [math.log(v) for v in values if v is not None and math.isfinite(v) and v > 0]
    mean, half, k = mean_ci95(logs)
    if k == 0:
        return math.nan, math.nan, math.nan, 0
    if not math.isfinite(half):
        return _exp(mean), math.nan, math.nan, k
    return _exp(mean), _exp(mean - half), _exp(mean + half), k


def _exp(x: float) -> float:
    """e^x, inf beyond the float range (an interval end of values spanning hundreds of decades)
    rather than an OverflowError."""
    return math.exp(x) if x < _LOG_FLOAT_MAX else math.inf


#: log of the largest float64: e^x overflows above it.
_LOG_FLOAT_MAX = math.log(1.7976931348623157e308)


def fit_slope(widths: Iterable[float], values: Iterable[float | None]
              ) -> tuple[float, float, float]:
    """Least-squares slope of log(value) on log(m), its 95 % CI half-width (NaN for fewer than 3
    points) and the intercept; non-positive and non-finite values are dropped.

    Example:
        >>> slope, ci, intercept = fit_slope([8, 16, 32], [2 / 8, 2 / 16, 2 / 32])
        >>> round(slope, 12), round(ci, 12), round(intercept, 6)
        (-1.0, 0.0, 0.693147)
    """
    import numpy as np

    pts = [(math.log(m), math.log(v)) for m, v in zip(widths, values, strict=True)
           if v is not None and math.isfinite(v) and v > 0]
    if len(pts) < 2:
        return math.nan, math.nan, math.nan
    x, y = np.array(pts).T
    A = np.vstack([x, np.ones_like(x)]).T
    (slope, intercept), *_ = np.linalg.lstsq(A, y, rcond=None)
    k = len(pts)
    if k < 3:
        return float(slope), math.nan, float(intercept)
    resid = y - (slope * x + intercept)
    se = math.sqrt(float(resid @ resid) / (k - 2) / float(((x - x.mean()) ** 2).sum()))
    return float(slope), t_quantile_975(k - 2) * se, float(intercept)


__all__ = ["fit_slope", "geometric_mean_ci95", "mean_ci95", "t_quantile_975"]
