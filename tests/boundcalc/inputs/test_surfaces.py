"""The rows of the surfaces around the calculator: every input has a type, range, unit and
meaning; ``generalization --symbolic`` checks its flags; ``compare-rnn --T 1e309`` prints no
``inf``; prop2's α is one check everywhere. Hypothesis drives random and hostile values through
``generalization`` and ``compare-rnn``: exit 0, 1 or 2, never 3, no traceback, and an exit 2 is
one line naming a flag."""

from __future__ import annotations

import json
import math
import re
import sys

import mpmath
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boundcalc.errors import InputError
from boundcalc.inputs.params import PARAMS
from boundcalc.inputs.surfaces import (
    ALPHA,
    CHECK,
    COMPARE_RNN,
    GENERALIZATION,
    NORM_FLAGS,
    VALIDATE,
    parse_alpha,
)

SURFACES = {"validate": VALIDATE, "generalization": GENERALIZATION, "check": CHECK,
            "compare-rnn": COMPARE_RNN}

#: Values a hostile user types: empty, signs, words, non-finite, past and below float64, huge
#: integers, separators, control characters.
HOSTILE = ["", " ", "-1", "0", "-0", "1e309", "-1e309", "1e-400", "nan", "inf", "-inf", "abc",
           "1,2", "1,,2", "2**10", "0x10", "1e2", "2.5", "1_000", "9" * 500, "1e99999", "\x00",
           "é", "1,2,3,4,5", "travelled", "0.5", "3", "64"]

values = st.one_of(st.sampled_from(HOSTILE), st.integers(-10, 10**6).map(str),
                   st.floats(allow_nan=True, allow_infinity=True).map(repr))


@pytest.mark.parametrize("surface", SURFACES)
def test_every_input_has_a_type_range_and_meaning_and_its_flag(surface):
    for name, row in SURFACES[surface].items():
        assert row.name == name
        assert row.flag.startswith("--"), name
        assert row.type and row.range and row.meaning, (surface, name)


def test_the_norm_rows_are_the_seven_norm_flags():
    assert {GENERALIZATION[k].flag for k in NORM_FLAGS} == set(NORM_FLAGS.values())


@pytest.mark.parametrize("value", ["0", "-1", "1e309", "nan", "1e-400", "abc"])
def test_alpha_is_one_row_refusing_what_every_surface_refused(value):
    with pytest.raises(InputError) as err:
        parse_alpha(value)
    assert err.value.flag == "--alpha"
    assert COMPARE_RNN["alpha"] is ALPHA and VALIDATE["alpha"] is ALPHA


def test_alpha_keeps_its_exact_decimal_text():
    assert parse_alpha(" 0.1 ") == "0.1"


@pytest.mark.parametrize("flag", ["rho", "nu", "delta", "misspecification"])
def test_check_refuses_a_nonzero_value_float64_rounds_to_zero(flag):
    with pytest.raises(InputError) as err:
        CHECK[flag].check("1e-400")
    assert err.value.flag == PARAMS[flag].flag and "round to 0" in str(err.value)


def test_check_takes_nu_zero():
    assert CHECK["nu"].check("0") == ("0", "0", "0")


# row 10 of the table: generalization --N -5 --symbolic was exit 0 (its checks skipped)

@pytest.mark.parametrize(("flag", "value"), [("--N", "-5"), ("--dm", "0"), ("--delta", "2"),
                                             ("--radii", "-1"), ("--precision", "5"),
                                             ("--hidden-constants", "C_D=-1")])
def test_generalization_symbolic_checks_its_flags(cli, flag, value):
    run = cli("generalization", flag, value, "--symbolic")
    assert run.code == 2, run.err
    assert run.err.startswith(f"error: {flag} ") and len(run.err.strip().splitlines()) == 1


def test_generalization_symbolic_alone_still_prints_the_formulas(cli):
    run = cli("generalization", "--symbolic", "--N", "100")
    assert run.code == 0 and "Theorem 5" in run.out


# row 12 of the table: compare-rnn --T 1e309 printed inf as a result

def test_compare_rnn_at_a_huge_length_prints_exact_text_not_inf(cli):
    run = cli("compare-rnn", "--T", "1e309", "--format", "json")
    assert run.code == 0, run.err
    row = json.loads(run.out, parse_constant=lambda c: pytest.fail(f"non-standard JSON {c}"))
    row = row[0] if isinstance(row, list) else row["rows"][0]
    assert isinstance(row["indrnn_log10_bound"], str)  # past float64: its exact text
    assert mpmath.mpf(row["indrnn_log10_bound"]) > sys.float_info.max
    assert not re.search(r"\binf\b", run.out)


@pytest.mark.slow
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flags=st.dictionaries(st.sampled_from(
    ["--N", "--dm", "--ds", "--rx", "--radii", "--delta", "--alpha", "--phi0", "--label-bound",
     "--from-init", "--d", "--hidden-constants", "--precision", *NORM_FLAGS.values()]),
    values, max_size=6), symbolic=st.booleans(), printed=st.booleans())
def test_generalization_takes_any_flags_without_an_internal_error(no_internal_error, cli, flags,
                                                                   symbolic, printed):
    args = ["generalization", "--format", "json" if not symbolic else "table"]
    # a LeCun draw is d_m x d: keep a valid one small so that the property stays fast
    for flag, value in flags.items():
        if flag in ("--dm", "--d") and value.isdigit() and int(value) > 256:
            value = "256"
        args += [flag, value]
    args += ["--symbolic"] * symbolic + ["--as-printed"] * printed
    no_internal_error(cli(*args))


@pytest.mark.slow
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flags=st.dictionaries(st.sampled_from(["--T", "--alpha", "--m", "--n", "--rho", "--nu",
                                              "--steps", "--activation"]),
                             values, max_size=4))
def test_compare_rnn_takes_any_flags_without_an_internal_error(no_internal_error, cli, flags):
    args = ["compare-rnn", "--format", "json"]
    for flag, value in flags.items():
        args += [flag, value]
    if "--T" not in flags:
        args += ["--T", "1,64"]
    run = cli(*args)
    no_internal_error(run)
    if run.code == 0:
        json.loads(run.out, parse_constant=lambda c: pytest.fail(f"non-standard JSON {c}"))


def test_generalization_rows_keep_the_messages_of_the_calculator():
    with pytest.raises(InputError, match=r"^--N must be an integer >= 2, got '1'$"):
        GENERALIZATION["N"].check("1")
    with pytest.raises(InputError, match=r"^--delta must lie in \(0, 1\), got '1'$"):
        GENERALIZATION["delta"].check("1")
    assert math.isclose(GENERALIZATION["R_X"].check("1e-300"), 1e-300)
