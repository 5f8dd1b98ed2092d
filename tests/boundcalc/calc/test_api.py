"""The point evaluator (boundcalc/calc/api.py): ``evaluate`` at the precision asked."""

from __future__ import annotations

import mpmath


def test_mpmath_precision_is_honoured():
    from boundcalc.calc.api import evaluate
    from boundcalc.inputs.params import validate

    inputs = validate(m=512, n=1000, rho="2")
    low = evaluate("theorem1", inputs, precision=15).bound["min_iterate"]
    high = evaluate("theorem1", inputs, precision=50).bound["min_iterate"]
    assert abs(low - high) / high < 1e-13
    with mpmath.workdps(50):
        assert mpmath.mpf(high) != 0
