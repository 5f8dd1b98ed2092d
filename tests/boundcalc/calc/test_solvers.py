"""The solvers (boundcalc/calc/solvers.py): the width bisection keeps its bracket on a function
that is not monotone; the steps closed form is the square of its ratio."""

from __future__ import annotations

from boundcalc.calc.solvers import solve_steps, solve_width


def test_width_solver_keeps_its_bracket_on_a_non_monotone_function():
    bumpy = {2: 9.0, 4: 3.0, 6: 8.0, 8: 7.0, 16: 6.0}

    def f(m: int) -> float:
        return bumpy.get(m, 100.0 / m)

    answer = solve_width(f, 5.0)
    assert f(answer.m) <= 5.0 < f(answer.m - 2)


def test_steps_closed_form_matches_the_square_of_the_ratio():
    assert solve_steps(2, 3, 4, 1).steps == 576
    assert solve_steps(1, 1, 1, 0.3).steps == 12  # ceil(11.11)
    assert solve_steps(0, 1, 1, 0.1, eta=0.05).steps == 1


def test_a_solver_whose_quantities_overflow_raises_a_result_overflow_naming_the_flag():
    """--rho 1e300 is a valid radius; the solver's quantities at it are beyond the float
    range, which is a result that cannot be given, not a bad input value."""
    import pytest

    from boundcalc.calc.api import evaluate
    from boundcalc.calc.solvers import refuse_overflow
    from boundcalc.errors import ResultOverflowError
    from boundcalc.inputs.params import validate

    given = {"rho": "1e300"}
    inputs = validate(**given, statement="theorem1")
    with pytest.raises(ResultOverflowError) as err:
        refuse_overflow("theorem1", given, evaluate("theorem1", inputs, precision=20), 20)
    assert err.value.flag == "--rho" and "overflow" in str(err.value)
    refuse_overflow("theorem1", {}, evaluate("theorem1", validate(), precision=20), 20)
