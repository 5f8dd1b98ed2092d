"""The point evaluator (boundcalc/calc/api.py): ``evaluate`` at the precision asked."""

from __future__ import annotations

import mpmath
import pytest


def test_mpmath_precision_is_honoured():
    from boundcalc.calc.api import evaluate
    from boundcalc.inputs.params import validate

    inputs = validate(m=512, n=1000, rho="2")
    low = evaluate("theorem1", inputs, precision=15).bound["min_iterate"]
    high = evaluate("theorem1", inputs, precision=50).bound["min_iterate"]
    assert abs(low - high) / high < 1e-13
    with mpmath.workdps(50):
        assert mpmath.mpf(high) != 0


@pytest.mark.parametrize("point", [
    {"activation": "custom:0,0,1"},  # σ₀ = σ₁ = 0: L = 0
    # σ₀ = 0 with ρ = 0 and ν = (1, 0, 0): the residual envelope B is 0 while L > 0
    {"activation": "custom:0,1,0", "rho": "0", "nu": "1,0,0", "m": 2, "n": 1, "d": 1, "T": 1,
     "delta": "0.25", "steps": 1},
])
def test_an_undefined_step_size_is_a_result_error_naming_eta_not_an_internal_error(point):
    """Which inputs make L·B vanish is known from the statement's own L and B only: the
    evaluator reports it as a StepSizeUndefinedError (exit 2 naming --eta); with --eta given the
    same point evaluates."""
    from boundcalc.calc.api import evaluate
    from boundcalc.errors import ResultError, StepSizeUndefinedError
    from boundcalc.inputs.params import validate

    with pytest.raises(StepSizeUndefinedError) as err:
        evaluate("theorem1", validate(**point, statement="theorem1"))
    assert err.value.flag == "--eta" and isinstance(err.value, ResultError)
    assert "L*B = 0" in str(err.value)
    given = evaluate("theorem1", validate(**point, eta="0.1", statement="theorem1"))
    assert given.to_dict()["bound"]["min_iterate"] >= 0
