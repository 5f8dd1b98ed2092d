"""``boundcalc validate``: exit codes, run directory, resume, and violations reported as exit 1."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest
import torch

from boundcalc.cli import main
from boundcalc.execution.executors import RunLock
from boundcalc.validation import runner as validation_runner
from boundcalc.validation import settings as validation_settings

#: drives the torch validators (validate, reproduce, figures): skipped where torch is absent
pytestmark = pytest.mark.needs_torch

SMALL = ["--m", "4", "--d", "2", "--T", "3", "--n", "16", "--rate-seeds", "20", "--steps", "20",
         "--teacher-width", "256", "--device", "cpu", "--quiet"]


@pytest.mark.slow
def test_small_validation_passes_and_writes_its_run_directory(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["validate", "event", "lemma3", "theorem1", *SMALL, "--out", str(out),
                 "--format", "json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["violations"] == 0
    assert {row["statement"] for row in report["summary"]} == {"event", "lemma3", "theorem1"}
    config = json.loads((out / "config.json").read_text())
    assert config["parameters"]["m"] == 4 and config["environment"]["device"] == "cpu"
    assert "torch" in config["environment"]
    assert sorted(p.name for p in (out / "cells").iterdir()) == [
        "event-seed0.json", "lemma3-seed0.json", "theorem1-seed0.json"]
    assert (out / "results.csv").read_text().startswith("statement,seed,seconds,")


@pytest.mark.slow
def test_rerun_with_the_same_out_loads_finished_cells_and_gives_the_same_records(tmp_path):
    settings = validation_settings.make_settings(
        m="4", n="16", d="2", T="3", rho="2", nu="1", delta="0.05", activation="tanh",
        steps="10", seeds="1", rate_seeds="20", batch_size="4", effort="quick", device="cpu",
        dtype="float64", teacher_width="256")
    lines: list[str] = []
    first = validation_runner.run_validation(["lemma3", "lemma5"], settings, tmp_path, lines.append)
    second = validation_runner.run_validation(["lemma3", "lemma5"], settings, tmp_path,
                                              lines.append)
    assert first == second
    assert sum("done earlier" in line for line in lines) == 2


@pytest.mark.slow
def test_identical_seeds_give_identical_measurements(tmp_path):
    settings = validation_settings.make_settings(
        m="4", n="16", d="2", T="3", rho="2", nu="1", delta="0.05", activation="erf",
        steps="10", seeds="1", rate_seeds="20", batch_size="4", effort="quick", device="cpu",
        dtype="float64", teacher_width="256")
    a = validation_runner.run_validation(["lemma2"], settings, tmp_path / "a")
    b = validation_runner.run_validation(["lemma2"], settings, tmp_path / "b")
    strip = [{k: v for k, v in r.items() if k != "seconds"} for r in a]
    assert strip == [{k: v for k, v in r.items() if k != "seconds"} for r in b]


def test_a_measurement_above_its_bound_exits_1(tmp_path, monkeypatch, capsys):
    def fake_runner(statement, settings, seed):
        return lambda: [{"name": "lemma3.eps_lin", "method": "fake", "measured": 2.0,
                         "bound": 1.0, "ratio": 2.0, "holds": False}]

    monkeypatch.setattr(validation_runner, "cell_runner", fake_runner)
    code = main(["validate", "lemma3", *SMALL, "--out", str(tmp_path)])
    assert code == 1
    assert "VIOLATION" in capsys.readouterr().out


def test_theorem1_at_the_default_setting_prints_vacuous_beside_holds_with_the_initial_loss(
        tmp_path, capsys):
    # m = 16, n = 64, rho = 2: Remark 9's bound (hundreds) lies above B^2, Y^2 and the run's
    # own R(theta_0) = mean y^2 (~1e-3): a measurement under it says nothing
    code = main(["validate", "theorem1", "--m", "16", "--n", "64", "--rho", "2", "--steps", "20",
                 "--teacher-width", "512", "--device", "cpu", "--quiet", "--out",
                 str(tmp_path / "table")])
    assert code == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.strip().startswith("theorem1 ")]
    assert len(rows) == 4
    assert all("true, vacuous" in line for line in rows)
    assert "R̂(θ_0)" in out and "4 bound(s) VACUOUS" in out
    assert main(["validate", "theorem1", "--m", "16", "--n", "64", "--rho", "2", "--steps", "20",
                 "--teacher-width", "512", "--device", "cpu", "--quiet", "--out",
                 str(tmp_path / "table"), "--format", "json"]) == 0
    summary = {r["name"]: r for r in json.loads(capsys.readouterr().out)["summary"]}
    row = summary["theorem1.min_iterate"]
    assert row["holds"] is True and row["verdict"] == "vacuous"
    assert row["free_bound_key"] == "initial_loss" and row["free_bound"] == row["initial_loss"]
    assert 0 < row["initial_loss"] < row["bound"]


def test_a_vacuous_bound_is_never_printed_as_holds_alone(tmp_path, monkeypatch, capsys):
    def fake_runner(statement, settings, seed):
        return lambda: [{"name": "theorem1.min_iterate", "method": "", "measured": 5e-4,
                         "bound": 498.2, "ratio": 1e-6, "holds": True, "initial_loss": 6e-4,
                         "free_bound": 6e-4, "free_bound_key": "initial_loss",
                         "bound_over_free_bound": 8.3e5, "verdict": "vacuous"}]

    monkeypatch.setattr(validation_runner, "cell_runner", fake_runner)
    assert main(["validate", "theorem1", *SMALL, "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    (line,) = [x for x in out.splitlines() if "theorem1.min_iterate" in x]
    assert "true, vacuous" in line and "R̂(θ_0)" in line
    assert "1 bound(s) VACUOUS" in out


def test_a_resumed_run_with_other_parameters_is_refused_naming_out(tmp_path, capsys):
    assert main(["validate", "event", *SMALL, "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    args = [*SMALL]
    args[args.index("--m") + 1] = "6"
    assert main(["validate", "event", *args, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --out") and "\n" not in err


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU message")
def test_cuda_without_a_gpu_is_a_one_line_error_with_exit_2(capsys):
    assert main(["validate", "lemma2", "--device", "cuda"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --device") and "\n" not in err


@pytest.mark.parametrize(("args", "flag"), [
    (["validate", "lemma9"], "STATEMENT"),
    (["validate", "lemma2", "--m", "3"], "--m"),
    (["validate", "lemma2", "--activation", "relu"], "--activation"),
    (["validate", "lemma2", "--effort", "huge"], "--effort"),
    (["validate", "prop1", "--n", "4", "--batch-size", "8"], "--batch-size"),
    (["validate", "lemma2", "--format", "csv"], "--format"),
])
def test_bad_validate_input_names_the_flag_and_exits_2(args, flag, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {flag}") and "\n" not in err


def test_all_expands_to_every_statement_once():
    assert validation_settings.expand_statements(["lemma2", "all"]) == [
        "lemma2", *[s for s in validation_settings.STATEMENTS if s != "lemma2"]]


@pytest.mark.parametrize("module", ["validation.settings", "validation.cells",
                                    "execution.progress", "runs.validation_summary"])
def test_docstring_examples_of_the_validation_modules_run(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(f"boundcalc.{module}"))
    assert result.failed == 0 and result.attempted > 0


@pytest.mark.parametrize("args", [
    ["validate", "lemma2"],
    ["validate", "theorem1", "--certify", "--device", "cpu"],
    ["reproduce", "figure1", "--preset", "quick"],
    ["reproduce", "tsweep", "--preset", "quick", "--device", "cpu"],
    ["reproduce", "table1", "--preset", "quick"],
    ["reproduce", "figure2", "--preset", "quick", "--executor", "dask"],
])
@pytest.mark.slow
def test_a_second_driver_is_refused_before_torch_is_imported(args, tmp_path):
    """The torch commands (validate, and reproduce, which shares its run-directory handling) take
    the run directory's lock before torch (seconds of import) and the experiments: a second driver
    on a live --out is refused at once. The CLI runs in a fresh process that reports its imports."""
    if "dask" in args:
        pytest.importorskip("distributed")
    probe = ("import json, sys\nfrom boundcalc.cli import main\ncode = main(sys.argv[1:])\n"
             "print(json.dumps({'code': code, 'torch': 'torch' in sys.modules}))\n")
    run = tmp_path / "run"
    with RunLock(run):
        # outside the source tree, as a regular install is imported (the CI's)
        done = subprocess.run([sys.executable, "-c", probe, *args, "--out", str(run)],
                              capture_output=True, text=True, timeout=600, check=False,
                              cwd=tmp_path)
    assert json.loads(done.stdout) == {"code": 2, "torch": False}
    assert done.stderr.startswith(f"error: --out run directory {run} is in use by the driver on "
                                  f"host {socket.gethostname()}, pid {os.getpid()} ")
    assert done.stderr.count("\n") == 1


#: Values of each flag ``validate`` shares with the calculator that the calculator refuses.
_COUNTS = ("2.5", "-1", "0", "nan", "1e500", "abc", "1.5e0")
_SHARED_BAD: dict[str, tuple[str, ...]] = {
    "--m": ("3", "2.5", "-2", "0", "nan", "1e500", "abc", "1e3.5"),
    "--n": _COUNTS, "--d": _COUNTS, "--T": _COUNTS, "--steps": _COUNTS,
    "--batch-size": _COUNTS,
    "--delta": ("0", "1", "1e3", "-0.1", "nan", "1e500", "abc"),
    "--rho": ("-1", "nan", "1,2", "2,-1,2", "abc", "1e500"),
    "--nu": ("-1", "nan", "1,2", "inf", "abc"),
    "--activation": ("relu", "custom:1,2", "custom:a,b,c", "custom:-1,1,1"),
    "--eta": ("0", "-1", "nan", "1e500", "abc"),
}


def _calculator_and_validate(flag: str) -> tuple[list[str], list[str]]:
    """The point command that takes ``flag`` and the ``validate`` command line that reads it."""
    if flag == "--batch-size":
        return ["prop1"], ["validate", "prop1"]
    if flag == "--eta":
        return ["theorem1"], ["validate", "theorem1", "--decompose"]
    return ["theorem1"], ["validate", "lemma2"]


@pytest.mark.parametrize(("flag", "value"), [(flag, value) for flag, values in _SHARED_BAD.items()
                                             for value in values])
def test_a_bad_shared_flag_gets_the_calculators_one_line_error_before_any_torch_work(
        flag, value, cli, monkeypatch, tmp_path):
    from boundcalc.cli import validate as validate_cli

    def no_torch_work(*args, **kwargs):
        raise AssertionError("validate reached its torch work before refusing the flag")

    monkeypatch.setattr(validate_cli, "require_torch", no_torch_work)
    monkeypatch.chdir(tmp_path)
    point, check = _calculator_and_validate(flag)
    calculator = cli(*point, flag, value)
    validated = cli(*check, flag, value, "--device", "cpu")
    assert calculator.code == 2 and validated.code == 2, (calculator.err, validated.err)
    assert calculator.err.startswith(f"error: {flag} ") and calculator.err.count("\n") == 1
    assert validated.err == calculator.err
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(("flag", "value", "reason"), [
    ("--m", "1e30", "2**24"), ("--activation", "custom:1,1,1", "for the validators"),
])
def test_a_value_the_calculator_takes_but_the_validators_cannot_run_says_why(
        flag, value, reason, cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli("theorem1", flag, value).code == 0
    validated = cli("validate", "lemma2", flag, value, "--device", "cpu")
    assert validated.code == 2 and validated.err.startswith(f"error: {flag} ")
    assert reason in validated.err and validated.err.count("\n") == 1
