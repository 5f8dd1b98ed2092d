"""The calculator commands' own flags (:mod:`boundcalc.inputs.calculator_flags`): ``--format``,
``--precision``, ``STATEMENT`` and ``--target``, each refused naming its flag in one line, and
the CLI calling these checks (exit 2)."""

from __future__ import annotations

import pytest
from boundcalc.theory.catalog import NAMES

from boundcalc.errors import InputError
from boundcalc.inputs.calculator_flags import (
    DEFAULT_PRECISION,
    FORMAT,
    PRECISION,
    STATEMENT,
    TARGET,
    check_output_format,
)
from boundcalc.render.cell_text import FORMATS


def _message(row, value) -> str:
    with pytest.raises(InputError) as info:
        row.check(value)
    assert info.value.flag == row.flag and "\n" not in str(info.value)
    return str(info.value)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_is_accepted_in_any_case(fmt):
    assert FORMAT.check(fmt.upper()) == fmt
    assert check_output_format(f" {fmt.title()} ") == fmt


def test_an_unknown_format_is_refused_naming_the_formats():
    assert _message(FORMAT, "yaml") == "--format must be one of " + ", ".join(FORMATS) \
        + ", got 'yaml'"


def test_a_format_of_another_command_is_refused_naming_the_allowed_ones():
    with pytest.raises(InputError) as info:
        check_output_format("latex", ("table", "json", "csv"))
    assert str(info.value) == ("--format must be one of table, json, csv for this command, "
                               "got 'latex'")
    assert check_output_format("json", ("table", "json")) == "json"


@pytest.mark.parametrize(("value", "digits"), [("10", 10), ("1000", 1000), ("4e1", 40)])
def test_precision_accepts_10_to_1000(value, digits):
    assert PRECISION.check(value) == digits


@pytest.mark.parametrize("value", ["9", "1001", "20.5", "many", "-20"])
def test_precision_outside_10_to_1000_is_refused(value):
    assert _message(PRECISION, value).startswith("--precision must be an integer")


def test_the_default_precision_is_within_the_range():
    assert PRECISION.check(str(DEFAULT_PRECISION)) == DEFAULT_PRECISION


@pytest.mark.parametrize("name", NAMES)
def test_every_catalog_statement_is_a_statement(name):
    assert STATEMENT.check(name.upper()) == name


def test_an_unknown_statement_is_refused_naming_the_catalog():
    message = _message(STATEMENT, "theorem2")
    assert message.startswith("STATEMENT must be one of ") and all(n in message for n in NAMES)


@pytest.mark.parametrize("value", ["0", "-0.1", "inf", "nan", "1e-400"])
def test_a_target_must_be_a_positive_number_float64_holds(value):
    assert _message(TARGET, value).startswith("--target must be")


def test_a_target_is_a_float():
    assert TARGET.check("0.25") == 0.25 and TARGET.range == "> 0"


@pytest.mark.parametrize(("argv", "flag"), [
    (["theorem1", "--format", "yaml"], "--format"),
    (["theorem1", "--precision", "5"], "--precision"),
    (["width", "--target", "0"], "--target"),
])
def test_the_cli_refuses_with_exit_2_naming_the_flag(cli, argv, flag):
    run = cli(*argv)
    assert run.code == 2, run.err
    assert run.err.startswith(f"error: {flag} ") and len(run.err.strip().splitlines()) == 1
