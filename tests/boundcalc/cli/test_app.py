"""What every command shares (boundcalc/cli/app.py): the checks of --format, --precision, --route,
--target and STATEMENT, each refusal an InputError naming its flag; writing the output (stdout
with one final newline, --output atomically; a bad path exit 2, a lost write exit 1); the
status line and --strict; run-directory errors; the matplotlib guard."""

from __future__ import annotations

import errno
import importlib
import sys

import pytest
import typer
from boundcalc.theory.catalog import NAMES

from boundcalc.calc.evaluator import DEFAULT_PRECISION
from boundcalc.cli.app import (
    check_format_flag,
    check_precision,
    check_route,
    check_statement,
    check_target,
    emit,
    finish,
    given_flags,
    require_matplotlib,
    run_directory_errors,
    write_output,
)
from boundcalc.errors import InputError, OutputError
from boundcalc.execution.engines import TasksFailedError

#: the module itself (the attribute ``boundcalc.cli.app`` is the Typer application)
app_module = importlib.import_module("boundcalc.cli.app")


def _flag_of(call, *args) -> str:
    with pytest.raises(InputError) as err:
        call(*args)
    return err.value.flag


def test_format_is_checked_against_the_commands_own_subset():
    assert check_format_flag(" CSV ") == "csv"
    assert check_format_flag("json", ("table", "json")) == "json"
    with pytest.raises(InputError, match="for this command") as err:
        check_format_flag("csv", ("table", "json"))
    assert err.value.flag == "--format" and "table, json" in str(err.value)
    assert _flag_of(check_format_flag, "xml") == "--format"


@pytest.mark.parametrize(("text", "expected"), [
    (None, (DEFAULT_PRECISION, None)), ("10", (10, 10)), ("17", (17, 17)), ("18", (18, 17)),
    ("1000", (1000, 17)),
])
def test_precision_sets_the_mpmath_digits_and_shows_at_most_17(text, expected):
    assert check_precision(text) == expected


@pytest.mark.parametrize("text", ["9", "1001", "0", "-20", "1e3.5", "ten"])
def test_precision_outside_10_to_1000_is_refused_naming_precision(text):
    assert _flag_of(check_precision, text) == "--precision"


@pytest.mark.parametrize("name", NAMES)
def test_every_catalog_statement_is_accepted_whatever_its_case(name):
    assert check_statement(f" {name.upper()} ") == name


def test_an_unknown_statement_is_refused_naming_statement_and_listing_the_names():
    with pytest.raises(InputError) as err:
        check_statement("lemma4")
    assert err.value.flag == "STATEMENT" and all(name in str(err.value) for name in NAMES)


def test_route_gives_the_registry_key_and_is_refused_where_there_is_no_route():
    assert check_route(None, "theorem1") == "theorem1"
    assert check_route("paper", "theorem1") == "theorem1_paper"
    assert _flag_of(check_route, "paper", "lemma2") == "--route"
    assert _flag_of(check_route, "scenic", "theorem1") == "--route"


@pytest.mark.parametrize("text", ["0", "-1e-3", "nan"])
def test_a_target_that_is_not_positive_is_refused_naming_target(text):
    assert _flag_of(check_target, text) == "--target"


def test_a_positive_target_is_its_value():
    assert check_target("1e-4") == 1e-4


def test_given_flags_keep_only_what_the_user_passed():
    assert given_flags(m="8", n=None, rho="0") == {"m": "8", "rho": "0"}


def test_output_to_stdout_ends_in_exactly_one_newline(capsys):
    emit("a\nb", None)
    emit(["x", "", "y\n"], None)
    assert capsys.readouterr().out == "a\nb\nxy\n"


def test_output_to_a_file_is_written_with_one_final_newline_and_named_on_stderr(tmp_path,
                                                                                 capsys):
    target = tmp_path / "out.csv"
    emit(iter(["a,b\n", "1,2"]), str(target), " (2 rows)")
    assert target.read_text() == "a,b\n1,2\n"
    assert capsys.readouterr().err == f"wrote {target} (2 rows)\n"


def test_an_output_path_that_cannot_be_written_is_an_input_error_naming_output(tmp_path):
    missing = tmp_path / "no" / "such" / "folder" / "out.txt"
    with pytest.raises(InputError) as err:
        write_output(str(missing), "x")
    assert err.value.flag == "--output" and str(missing) in str(err.value)
    assert not missing.parent.exists()     # never creates the folders


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO])
def test_a_full_disk_or_failing_device_is_an_output_error(tmp_path, monkeypatch, code):
    def fail(*args, **kwargs):
        raise OSError(code, "the device said no")

    monkeypatch.setattr(app_module, "write_atomic", fail)
    with pytest.raises(OutputError, match="--output"):
        write_output(str(tmp_path / "out.txt"), "x")


def _data(verdict, holds=True):
    return {"verdict": verdict, "conditions": [{"name": "m_even", "holds": holds}],
            "statement": {"guaranteed": verdict == "guaranteed"}}


@pytest.mark.parametrize("verdict", ["vacuous", "not_guaranteed", "overflow"])
def test_strict_exits_1_unless_the_verdict_is_guaranteed(verdict, capsys):
    with pytest.raises(typer.Exit) as exit_:
        finish(_data(verdict, holds=verdict != "not_guaranteed"), "json", None, strict=True)
    assert exit_.value.exit_code == 1
    assert capsys.readouterr().err.strip()       # the status went to stderr


def test_a_guaranteed_result_passes_strict_and_prints_no_status(capsys):
    finish(_data("guaranteed"), "json", None, strict=True)
    assert capsys.readouterr().err == ""


def test_the_status_line_is_left_to_a_table_on_stdout(capsys):
    finish(_data("vacuous"), "table", None, strict=False)
    assert capsys.readouterr().err == ""
    finish(_data("vacuous"), "table", "out.txt", strict=False)
    assert capsys.readouterr().err != ""


def test_a_run_directory_error_names_out_and_other_errors_pass_through():
    from boundcalc.runs.directory import RunDirectoryError

    with pytest.raises(InputError) as err, run_directory_errors():
        raise RunDirectoryError("run directory runs/x holds another experiment")
    assert err.value.flag == "--out"
    with pytest.raises(ValueError, match="^run directory"), run_directory_errors():
        raise ValueError("run directory text is no longer matched")  # raised where it is found
    with pytest.raises(InputError) as err, run_directory_errors():
        raise InputError("--seeds", "must be positive")
    assert err.value.flag == "--seeds"
    with pytest.raises(ValueError, match="^something else$"), run_directory_errors():
        raise ValueError("something else")


def test_failed_engine_tasks_are_one_line_and_exit_1(capsys):
    with pytest.raises(typer.Exit) as exit_, run_directory_errors():
        raise TasksFailedError("2 of 8 tasks failed")
    assert exit_.value.exit_code == 1
    assert capsys.readouterr().err == "error: 2 of 8 tasks failed\n"


def test_a_missing_matplotlib_is_refused_naming_the_flag(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)     # makes the import fail
    with pytest.raises(InputError) as err:
        require_matplotlib("--decompose", "the decomposition is drawn")
    assert err.value.flag == "--decompose" and "pip install" in str(err.value)
