"""The options of ``reproduce`` beside the config fields (boundcalc/inputs/reproduce_options.py):
each refusal is one line naming its flag, the CLI and the Python API refuse the same values with
their own flag names, and nothing is refused that an experiment takes."""

from __future__ import annotations

import pytest

from boundcalc.cli import main
from boundcalc.errors import InputError
from boundcalc.experiment_api import reproduce
from boundcalc.inputs.reproduce_options import (
    check_choice,
    check_engine,
    check_given_once,
    check_jobs,
    check_kind,
    check_taken,
    require_data,
)


@pytest.mark.parametrize(("call", "flag", "text"), [
    (lambda: check_choice("--dtype", "half", ("float32", "float64")), "--dtype",
     "must be float32 or float64, got 'half'"),
    (lambda: check_choice("name", "fig", ("figure1", "table1"), one_of=True), "name",
     "must be one of figure1, table1, got 'fig'"),
    (lambda: check_jobs("--jobs", 0), "--jobs", "must be >= 1, got 0"),
    (lambda: check_jobs("jobs", 2.0, integer_text=True), "jobs",
     "must be an integer >= 1, got 2.0"),
    (lambda: check_kind("device", 0, str, "auto, cpu or cuda"), "device",
     "must be auto, cpu or cuda, got 0"),
    (lambda: check_taken("--dtype", "table1", ("figure1",), "figure1", only=True), "--dtype",
     "is for figure1 only, not table1"),
    (lambda: check_given_once("--seeds", "seeds", "--set"), "--seeds",
     "and --set seeds are both given; give one"),
    (lambda: require_data("--data", "paper", None, ("paper",), "PATH is required"), "--data",
     "PATH is required"),
    (lambda: check_engine("toy", "dask", True, False), "--executor",
     "toy runs on --executor processes only, not dask"),
])
def test_each_refusal_is_one_line_naming_its_flag(call, flag, text):
    with pytest.raises(InputError) as caught:
        call()
    assert caught.value.flag == flag and str(caught.value) == f"{flag} {text}"
    assert "\n" not in str(caught.value)


def test_what_an_experiment_takes_passes():
    check_choice("--dtype", "float64", ("float32", "float64"))
    check_jobs("--jobs", 1)
    check_jobs("jobs", 4, integer_text=True)
    check_taken("--dtype", "figure1", ("figure1", "figure2"), "figure1 and figure2")
    check_given_once("--seeds", "seeds", "--config")
    require_data("--data", "quick", None, ("paper",), "PATH is required")
    check_engine("figure1", "dask", True, True)


@pytest.mark.parametrize(("argv", "kwargs", "flag"), [
    (["--preset", "nope"], {"preset": "nope"}, "preset"),
    (["--jobs", "0"], {"jobs": 0}, "jobs"),
    (["--figure-width", "wide"], {"figure_width": "wide"}, "figure_width"),
])
def test_the_cli_and_the_api_refuse_the_same_option_naming_it(argv, kwargs, flag, tmp_path,
                                                              capsys):
    assert main(["reproduce", "figure1", *argv, "--out", str(tmp_path / "cli")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: --{flag.replace('_', '-')} ") and "\n" not in err
    with pytest.raises(InputError) as caught:
        reproduce("figure1", out=str(tmp_path / "api"), **kwargs)
    assert caught.value.flag == flag
    assert not (tmp_path / "cli").exists() and not (tmp_path / "api").exists()
