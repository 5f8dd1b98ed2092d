"""The flags of ``boundcalc table`` (:mod:`boundcalc.inputs.table_flags`): each row checks its
flag, refusing in one line naming it, before any run is read."""

from __future__ import annotations

import pytest

from boundcalc.errors import InputError
from boundcalc.inputs.table_flags import STATISTICS, TABLE, TABLE_FORMATS, check_table_flags


def _refused(**values) -> InputError:
    with pytest.raises(InputError) as info:
        check_table_flags(**values)
    assert "\n" not in str(info.value)
    return info.value


def test_the_rows_are_the_table_commands_flags():
    assert list(TABLE) == ["fmt", "digits", "statistic", "figure_width", "figures_dir"]
    assert [row.flag for row in TABLE.values()] == ["--format", "--digits", "--statistic",
                                                    "--figure-width", "--figures-dir"]


@pytest.mark.parametrize("fmt", TABLE_FORMATS)
def test_every_table_format_is_accepted_in_any_case(fmt):
    assert check_table_flags(fmt=fmt.upper()) == {"fmt": fmt}


@pytest.mark.parametrize("fmt", ["json", "table", "html"])
def test_a_format_the_table_does_not_write_is_refused(fmt):
    error = _refused(fmt=fmt)
    assert error.flag == "--format" and str(error).endswith(f"got {fmt!r}")


@pytest.mark.parametrize(("value", "digits"), [(1, 1), ("17", 17), ("4", 4)])
def test_digits_from_1_to_17_are_accepted(value, digits):
    assert check_table_flags(digits=value)["digits"] == digits


@pytest.mark.parametrize("value", [0, 18, "2.5", "x"])
def test_digits_outside_1_to_17_are_refused(value):
    assert _refused(digits=value).flag == "--digits"


def test_digits_out_of_range_says_its_range():
    assert str(_refused(digits=18)) == "--digits must be between 1 and 17, got 18"


@pytest.mark.parametrize("statistic", STATISTICS)
def test_each_statistic_is_accepted(statistic):
    assert check_table_flags(statistic=statistic.title())["statistic"] == statistic


def test_an_unknown_statistic_is_refused_naming_both():
    assert str(_refused(statistic="median")) == ("--statistic must be geometric or arithmetic, "
                                                 "got 'median'")


def test_figure_width_is_single_or_double():
    assert check_table_flags(figure_width="Double")["figure_width"] == "double"
    assert str(_refused(figure_width="triple")) == ("--figure-width must be single or double, "
                                                    "got 'triple'")


def test_figures_dir_may_be_a_folder_or_new_but_not_a_file(tmp_path):
    assert check_table_flags(figures_dir=str(tmp_path))["figures_dir"] == str(tmp_path)
    new = tmp_path / "new"
    assert check_table_flags(figures_dir=str(new))["figures_dir"] == str(new)
    file = tmp_path / "file.txt"
    file.write_text("x")
    error = _refused(figures_dir=str(file))
    assert error.flag == "--figures-dir" and "is not a directory" in str(error)


def test_flags_not_given_are_not_checked_or_returned():
    assert check_table_flags(fmt=None, digits=None, statistic=None, figure_width=None,
                             figures_dir=None) == {}


def test_the_cli_refuses_a_bad_table_flag_before_reading_runs(cli, tmp_path):
    run = cli("table", str(tmp_path / "no-such-run"), "--digits", "30")
    assert run.code == 2 and run.err.startswith("error: --digits "), run.err
    assert len(run.err.strip().splitlines()) == 1
