"""boundcalc.runs.stats: the geometric mean and its t-interval on the log values, by hand."""

from __future__ import annotations

import math

import pytest

from boundcalc.runs.stats import geometric_mean_ci95, mean_ci95, t_quantile_975


def test_geometric_interval_is_the_t_interval_of_the_logs_mapped_back():
    """Three seeds 0.01, 0.1, 10: logs −4.6052, −2.3026, 2.3026; their mean −1.5351 and sample
    standard deviation 3.5173 (hand computation), t_{0.975, 2} = 4.302653 (tables)."""
    values = [0.01, 0.1, 10.0]
    logs = [math.log(v) for v in values]
    mean = sum(logs) / 3
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / 2)
    assert mean == pytest.approx(-1.535057, abs=1e-6) and sd == pytest.approx(3.517257, abs=1e-6)
    half = 4.302653 * sd / math.sqrt(3)
    g, low, high, k = geometric_mean_ci95(values)
    assert k == 3
    assert g == pytest.approx(10 ** (-2 / 3), rel=1e-12)          # (0.01 · 0.1 · 10)^(1/3)
    assert low == pytest.approx(math.exp(mean - half), rel=1e-5)
    assert high == pytest.approx(math.exp(mean + half), rel=1e-5)
    assert low * high == pytest.approx(g * g, rel=1e-12)          # symmetric on a log axis
    assert 0 < low < min(values) and high > max(values)
    # the arithmetic interval of the same seeds reaches below zero, the geometric one cannot
    a_mean, a_half, _ = mean_ci95(values)
    assert a_mean - a_half < 0 < low


def test_geometric_interval_drops_bad_values_and_needs_two():
    g, low, high, k = geometric_mean_ci95([4.0, None, math.nan, -1.0, 0.0, math.inf])
    assert (g, k) == (pytest.approx(4.0), 1) and math.isnan(low) and math.isnan(high)
    assert geometric_mean_ci95([])[3] == 0 and math.isnan(geometric_mean_ci95([])[0])
    g, low, high, _ = geometric_mean_ci95([3.0, 3.0, 3.0])
    assert g == low == high == pytest.approx(3.0)


def test_t_quantile_of_the_geometric_interval_is_students():
    g, low, high, _ = geometric_mean_ci95([1.0, math.e ** 2])
    # logs 0 and 2: mean 1, s = √2, half = t_{0.975,1} · √2 / √2 = 12.7062
    assert math.log(high) - 1 == pytest.approx(t_quantile_975(1), rel=1e-9)
    assert math.log(g) == pytest.approx(1.0) and math.log(low) == pytest.approx(1 - 12.7062047)


def test_an_interval_of_values_spanning_the_float_range_ends_at_infinity_not_an_error():
    """Seeds hundreds of decades apart (a diverged run beside a sound one): the upper end of the
    geometric interval is beyond float64 and is inf, the mean and lower end stay numbers."""
    import math

    from boundcalc.runs.stats import geometric_mean_ci95, mean_ci95

    g, lo, hi, k = geometric_mean_ci95([1e-300, 1e300])
    assert (g, k) == (1.0, 2) and lo == 0.0 and hi == math.inf
    mean, ci, k = mean_ci95([1e308, -1e308, 1e308])
    assert k == 3 and math.isfinite(mean) and ci == math.inf
