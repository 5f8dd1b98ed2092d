"""Every registered statement evaluates on a grid (numpy) to the same numbers as point by point
(mpmath) — including Piecewise / Min expressions such as Proposition 2's."""

from __future__ import annotations

import math

import pytest
from boundcalc.theory.registry import BUILDERS

from boundcalc.calc.api import evaluate
from boundcalc.calc.evaluator import evaluate_grid
from boundcalc.inputs.params import ARGUMENT_NAMES, validate

POINTS = [dict(m=4, rho="1", nu="0.5", T=3), dict(m=512, rho="2", nu="1", T=16)]


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_grid_evaluation_equals_point_evaluation_for_every_statement(name):
    for point in POINTS:
        inputs = validate(n=1000, **point)
        ev = evaluate(name, inputs)
        args = {key: float(value) for key, value in ev.inputs.items()
                if key in ARGUMENT_NAMES and value is not None}
        columns = dict.fromkeys(ARGUMENT_NAMES, None)
        columns.update(args)
        columns.update(rho_c=1.0 * float(point["rho"]), rho_u=float(point["rho"]),
                       rho_w=float(point["rho"]), nu_c=float(point["nu"]),
                       nu_u=float(point["nu"]), nu_w=float(point["nu"]))
        grid = evaluate_grid(name, columns)
        for key, value in ev.bound.items():
            want = float(value)
            got = float(grid[f"bound.{key}"])
            assert math.isclose(got, want, rel_tol=1e-9), (name, point, key, got, want)
