"""Bad input: one line on stderr naming the flag, exit code 2, no traceback, no rich box."""

from __future__ import annotations

import subprocess
import sys

import pytest

BAD = [
    (("theorem1", "--m", "3"), "--m"),
    (("theorem1", "--m", "0"), "--m"),
    (("theorem1", "--m", "-4"), "--m"),
    (("theorem1", "--m", "12.5"), "--m"),
    (("theorem1", "--n", "0"), "--n"),
    (("theorem1", "--d", "0"), "--d"),
    (("theorem1", "--T", "0"), "--T"),
    (("theorem1", "--delta", "0"), "--delta"),
    (("theorem1", "--delta", "1"), "--delta"),
    (("theorem1", "--delta", "1.5"), "--delta"),
    (("theorem1", "--rho", "-1"), "--rho"),
    (("theorem1", "--rho", "1,2"), "--rho"),
    (("theorem1", "--nu", "-0.5"), "--nu"),
    (("theorem1", "--nu", "1,1,-1"), "--nu"),
    (("theorem1", "--eta", "0"), "--eta"),
    (("theorem1", "--eta", "-1e-3"), "--eta"),
    (("theorem1", "--steps", "0"), "--steps"),
    (("theorem1", "--m", "abc"), "--m"),
    (("theorem1", "--delta", "nan"), "--delta"),
    (("theorem1", "--n", "inf"), "--n"),
    (("theorem1", "--activation", "relu"), "--activation"),
    (("theorem1", "--activation", "custom:1,2"), "--activation"),
    (("theorem1", "--format", "xml"), "--format"),
    (("theorem1", "--precision", "3"), "--precision"),
    (("theorem1", "--symbolic", "--format", "json"), "--symbolic"),
    (("theorem1", "--output", "/nonexistent-dir/x.json"), "--output"),
    (("prop1", "--batch-size", "0"), "--batch-size"),
    (("remark9", "--misspecification", "-1"), "--misspecification"),
    (("theorem1", "--bogus"), "--bogus"),
    (("theorem1", "--m"), "--m"),
    (("sweep",), "statement"),
    (("sweep", "theorem2"), "STATEMENT"),
    (("sweep", "theorem1", "--m", "3,4"), "--m"),
    (("sweep", "theorem1", "--m", "8:2:2"), "--m"),
    (("sweep", "theorem1", "--m", "2:8:0"), "--m"),
    (("sweep", "theorem1", "--m", "2:8:x1"), "--m"),
    (("sweep", "theorem1", "--delta", "0.5:1.5:0.5"), "--delta"),
    (("sweep", "theorem1", "--rho-u", "-1"), "--rho-u"),
    (("sweep", "theorem1", "--columns", "nope"), "--columns"),
    (("sweep", "theorem1", "--m", "2:4000:2", "--n", "1:4000:1"), "--n"),
    (("explain", "lemma9"), "STATEMENT"),
    (("explain", "theorem1", "--format", "csv"), "--format"),
    (("width", "--target", "0"), "--target"),
    (("width", "--target", "x"), "--target"),
    (("steps", "--target", "-1"), "--target"),
    (("frobnicate",), "frobnicate"),
]


@pytest.mark.parametrize(("args", "flag"), BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_gives_one_line_naming_the_flag_and_exit_2(cli, args, flag):
    run = cli(*args)
    assert run.code == 2
    lines = run.err.strip().splitlines()
    assert len(lines) == 1, run.err
    assert lines[0].startswith("error: ")
    assert flag.lower() in lines[0].lower()
    assert "Traceback" not in run.err
    assert not set("╭╰│─") & set(run.err)
    assert run.out == ""


def test_the_installed_command_path_prints_no_traceback(tmp_path):
    # the real entry point, through `python -m boundcalc`, in a fresh interpreter (outside the
    # repository, so that the installed package is imported, not the source tree)
    proc = subprocess.run([sys.executable, "-m", "boundcalc", "theorem1", "--m", "3"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "error: --m must be a positive even integer (symmetric init), got '3'")
    assert proc.stdout == ""


def test_rho_below_nu_is_not_an_input_error(cli):
    assert cli("theorem1", "--rho", "0.5", "--nu", "1", "--format", "json").code == 0


def test_help_and_version_exit_zero(cli):
    assert cli("--help").code == 0
    assert cli("theorem1", "--help").code == 0
    run = cli("--version")
    assert run.code == 0 and run.out.startswith("boundcalc ")


def test_repeated_runs_build_the_click_command_at_most_once_and_a_new_command_rebuilds_it(
        cli, monkeypatch):
    import typer

    from boundcalc.cli import app

    built = []
    real = typer.main.get_command
    monkeypatch.setattr(typer.main, "get_command", lambda a: built.append(a) or real(a))
    for _ in range(3):
        assert cli("lemma2", "--format", "json").code == 0
    assert len(built) <= 1  # none if an earlier test of this process built it
    monkeypatch.setattr(app, "registered_commands", list(app.registered_commands))
    app.command("probe-command")(lambda: print("probe ran"))
    run = cli("probe-command")
    assert run.code == 0 and run.out == "probe ran\n" and len(built) <= 2 and built[-1] is app


def test_an_internal_error_is_one_line_with_exit_3(cli, monkeypatch):
    import boundcalc.calc.api

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(boundcalc.calc.api, "evaluate", broken)
    monkeypatch.delenv("BOUNDCALC_DEBUG", raising=False)
    run = cli("theorem1")
    assert run.code == 3
    assert run.err.strip() == ("error: internal error RuntimeError: boom "
                               "(set BOUNDCALC_DEBUG=1 for the traceback)")


@pytest.mark.parametrize(("args", "start"), [
    (["validate", "lemma2", "--m", "4"], "error: STATEMENT validate lemma2 measures the model with "
                                         "torch, which is not installed"),
    (["reproduce", "figure1"], "error: EXPERIMENT figure1 trains the model with torch, which is "
                               "not installed"),
    (["validate", "lemma2", "--device", "tpu"], "error: --device must be auto, cpu or cuda"),
])
def test_the_torch_commands_without_torch_are_one_line_naming_the_extra(cli, monkeypatch, args,
                                                                        start):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "torch" else real(name, *a))
    run = cli(*args)
    assert run.code == 2 and run.out == ""
    assert run.err.startswith(start) and run.err.count("\n") == 1
    assert "torch" not in run.err or "boundcalc[validators]" in run.err
