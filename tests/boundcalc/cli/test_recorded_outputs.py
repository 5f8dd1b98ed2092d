"""The CLI's output is unchanged on a recorded set of commands.

Each command of :data:`COMMANDS` runs in-process; its exit code, stdout and stderr must equal the
file recorded under ``tests/boundcalc/cli/recorded/`` as :func:`same_output` compares them: the
text exactly, the numbers to :data:`NUMBER_RTOL`. Numbers are not compared bit for bit because
their last digits are decided by the CPU's vector width, the BLAS kernel and the thread count (the
LeCun init norms of ``generalization --from-init`` come from numpy's BLAS, and differ in the 16th
digit between an AVX2 and an AVX-512 machine); a number is printed with as many digits as it
needs, so its width (and with it a table's padding and rules) may change too, and runs of spaces
and of the table rule ``─`` count as one. Refactors keep these files unchanged; a
change that is meant to alter an output re-records it on purpose::

    python tests/boundcalc/cli/test_recorded_outputs.py --record

and the diff of ``tests/boundcalc/cli/recorded/`` is then part of the review. Help layout (typer,
click, rich) and the last digit of a float (numpy, sympy, mpmath) depend on library versions, so the
recording stores the versions it was made with (``ENVIRONMENT.json``) and the comparison is skipped,
saying why, under other versions (the lowest-pins CI step).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest

from boundcalc.cli import main

RECORDED = Path(__file__).with_name("recorded")

#: name → argv. Fast commands covering every command group, format and error path of the calculator.
COMMANDS: dict[str, list[str]] = {
    "help": ["--help"],
    "theorem1_default": ["theorem1"],
    "theorem1_issue": ["theorem1", "--m", "512", "--n", "1000", "--rho", "2"],
    "theorem1_paper_route": ["theorem1", "--m", "256", "--n", "1000", "--d", "8", "--rho", "3",
                             "--nu", "3", "--route", "paper"],
    "theorem1_json": ["theorem1", "--m", "256", "--format", "json"],
    # the tight route before its block bounds: the numbers theorem1_default / theorem1_json
    # printed on the default route until then (only the route's name differs)
    "theorem1_joint_route": ["theorem1", "--route", "joint"],
    "theorem1_joint_json": ["theorem1", "--m", "256", "--format", "json", "--route", "joint"],
    "theorem1_csv": ["theorem1", "--m", "64", "--format", "csv"],
    "theorem1_markdown": ["theorem1", "--format", "markdown"],
    "theorem1_latex": ["theorem1", "--format", "latex"],
    "theorem1_symbolic": ["theorem1", "--symbolic"],
    "theorem1_eta_custom": ["theorem1", "--eta", "0.001", "--activation", "custom:1,1,0.5",
                            "--rho", "2,3,1"],
    "theorem1_help": ["theorem1", "--help"],
    "prop1": ["prop1", "--m", "1024", "--batch-size", "4"],
    "prop1_paper_json": ["prop1", "--route", "paper", "--format", "json"],
    "remark9": ["remark9", "--misspecification", "0.01"],
    "prop2": ["prop2", "--T", "8"],
    "prop2_alpha": ["prop2", "--alpha", "0.9", "--format", "json"],
    "lemma2": ["lemma2", "--m", "128"],
    "lemma3_json": ["lemma3", "--format", "json"],
    "lemma5": ["lemma5", "--d", "4"],
    "lemma6_csv": ["lemma6", "--format", "csv"],
    "event": ["event", "--m", "2048", "--delta", "0.01"],
    "sweep_m": ["sweep", "theorem1", "--m", "64,256,1024"],
    "sweep_range_csv": ["sweep", "theorem1", "--m", "64:512:x2", "--rho", "1,2", "--format",
                        "csv"],
    "sweep_columns": ["sweep", "lemma3", "--m", "100,200", "--columns", "eps_lin"],
    "sweep_paper": ["sweep", "theorem1", "--route", "paper", "--m", "512,4096", "--format",
                    "json"],
    "width_target": ["width", "--target", "1", "--n", "1000"],
    "width_nonvacuous": ["width", "--nonvacuous", "--n", "1000", "--d", "8", "--rho", "3",
                         "--nu", "3"],
    "width_nonvacuous_json": ["width", "--nonvacuous", "--format", "json"],
    "steps": ["steps", "--target", "5", "--m", "4096"],
    "explain_theorem1": ["explain", "theorem1"],
    "explain_lemma2_latex": ["explain", "lemma2", "--format", "latex"],
    "explain_json": ["explain", "prop2", "--format", "json"],
    "compare_rnn": ["compare-rnn", "--T", "2,8,32"],
    "generalization": ["generalization", "--N", "10000", "--dm", "64", "--ds", "13",
                       "--from-init", "0", "--alpha", "0.5", "--phi0", "100"],
    "generalization_json": ["generalization", "--N", "1000", "--dm", "16", "--from-init", "1",
                            "--alpha", "0.5", "--phi0", "10", "--as-printed", "--format",
                            "json"],
    "generalization_missing": ["generalization", "--alpha", "0.5"],
    "bad_m_odd": ["theorem1", "--m", "3"],
    "bad_delta": ["theorem1", "--delta", "1.5"],
    "bad_format": ["theorem1", "--format", "yaml"],
    "bad_route": ["lemma2", "--route", "paper"],
    "bad_statement_sweep": ["sweep", "nosuch", "--m", "64"],
    "bad_unknown_option": ["theorem1", "--nosuch", "1"],
    "strict_vacuous": ["theorem1", "--m", "64", "--strict"],
    "overflow": ["theorem1", "--m", "2", "--rho", "1e300"],
    "version": ["--version"],
}


#: Libraries whose version changes the bytes of an output.
LIBRARIES = ("numpy", "sympy", "mpmath", "pandas", "typer", "click", "rich")


def _version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:  # click is vendored by recent typer releases
        return "absent"


def _environment() -> dict[str, str]:
    return {name: _version(name) for name in LIBRARIES}


#: Relative tolerance of a number in a recorded output (printed floats of 6 significant digits and
#: exact mpmath values differ between machines only where float64 BLAS rounding reaches them).
NUMBER_RTOL = 1e-9
#: Absolute tolerance: a value that should be zero printed as ±1e-17 on one machine, 0.0 on another.
NUMBER_ATOL = 1e-12

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_RUNS = re.compile(r" +|─+")


def _skeleton(text: str) -> tuple[str, list[str]]:
    """``text`` with each number replaced by ``#`` and runs of spaces / ``─`` by one, and the
    numbers in order."""
    numbers = _NUMBER.findall(text)
    return _RUNS.sub(lambda run: run.group()[0], _NUMBER.sub("#", text)), numbers


def _same_number(a: str, b: str) -> bool:
    if a == b:
        return True
    if not any(c in a + b for c in ".eE"):  # integers (widths, counts, exit codes) are exact
        return False
    return math.isclose(float(a), float(b), rel_tol=NUMBER_RTOL, abs_tol=NUMBER_ATOL)


def same_output(got: str, recorded: str) -> bool:
    """Whether ``got`` equals ``recorded`` up to the last digits of floats: the same text around
    the numbers (runs of spaces and of ``─`` counted as one), integers equal, floats within
    :data:`NUMBER_RTOL` relative (or :data:`NUMBER_ATOL` absolute).

    Example:
        >>> same_output("B² = 183.917 (m = 512)", "B² =  183.91700000001 (m = 512)")
        True
        >>> same_output("B² = 183.917 (m = 512)", "B² = 183.918 (m = 512)")
        False
        >>> same_output("m = 512", "m = 514"), same_output("GUARANTEED", "VACUOUS")
        (False, False)
    """
    (got_text, got_numbers), (want_text, want_numbers) = _skeleton(got), _skeleton(recorded)
    return got_text == want_text and len(got_numbers) == len(want_numbers) and all(
        _same_number(a, b) for a, b in zip(got_numbers, want_numbers, strict=True))


def _run(argv: list[str]) -> str:
    """``exit code``, stdout and stderr of one in-process invocation, as one text."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return f"exit {code}\n--- stdout\n{out.getvalue()}--- stderr\n{err.getvalue()}"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_cli_output_is_unchanged(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    made_with = json.loads((RECORDED / "ENVIRONMENT.json").read_text(encoding="utf-8"))
    if made_with != _environment():
        pytest.skip(f"recorded with {made_with}, running with {_environment()}")
    recorded = RECORDED / f"{name}.txt"
    assert recorded.exists(), f"no recording for {name}; run this file with --record"
    got, want = _run(COMMANDS[name]), recorded.read_text(encoding="utf-8")
    if not same_output(got, want):
        assert got == want  # pytest shows the diff


#: The recordings whose numbers come from numpy's BLAS (the LeCun init norms of
#: ``generalization --from-init``), and the OpenBLAS kernels and thread counts they are checked
#: under. On this project's AVX2 machines OpenBLAS's Sandybridge and Prescott kernels print other
#: last digits of these norms than its Haswell kernel, as an AVX-512 machine's kernel does, so
#: the difference between machines is exercised on one machine.
BLAS_COMMANDS = ("generalization", "generalization_json")
BLAS_VARIANTS = [(core, threads) for core in ("Prescott", "Sandybridge", "Haswell")
                 for threads in ("1", "2")]

#: Runs the commands named after ``sys.argv[1]`` (this file) with its ``_run``, in a fresh
#: process (OpenBLAS reads its kernel and thread count when numpy loads it).
_FRESH_PROCESS = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("recorded_outputs", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print(json.dumps({name: module._run(module.COMMANDS[name]) for name in sys.argv[2:]}))
"""


@pytest.mark.slow
@pytest.mark.parametrize(("core", "threads"), BLAS_VARIANTS)
def test_blas_dependent_outputs_match_their_recording_under_every_blas_kernel_and_thread_count(
        core: str, threads: str, tmp_path: Path) -> None:
    made_with = json.loads((RECORDED / "ENVIRONMENT.json").read_text(encoding="utf-8"))
    if made_with != _environment():
        pytest.skip(f"recorded with {made_with}, running with {_environment()}")
    env = {**os.environ, "COLUMNS": "100", "OPENBLAS_CORETYPE": core,
           "OPENBLAS_NUM_THREADS": threads, "OMP_NUM_THREADS": threads}
    proc = subprocess.run([sys.executable, "-c", _FRESH_PROCESS, __file__, *BLAS_COMMANDS],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    outputs = json.loads(proc.stdout.splitlines()[-1])
    for name in BLAS_COMMANDS:
        want = RECORDED.joinpath(f"{name}.txt").read_text(encoding="utf-8")
        assert same_output(outputs[name], want), (core, threads, name, outputs[name])


def test_recorded_comparison_ignores_only_the_last_digits_of_floats() -> None:
    """The comparison passes the AVX2 / AVX-512 difference of a recording (the last digits of the
    LeCun init norms: ``"WK0_2": 1.7172029304011218`` on one, ``…216`` on the other) and fails on
    anything else: another digit, an integer, a word, a missing number."""
    want = RECORDED.joinpath("generalization_json.txt").read_text(encoding="utf-8")
    norm = re.search(r'"WK0_2": (1\.71720293040112\d*)', want)
    assert norm is not None, "the recording lost the WK0_2 norm this test perturbs"
    value = norm.group(1)
    for other_machine in ("1.7172029304011218", "1.7172029304011216", "1.717202930401122"):
        assert same_output(want.replace(value, other_machine), want)
    assert not same_output(want.replace(value, "1.717203"), want)
    assert not same_output(want.replace(value, "1.7172029404011218"), want)
    assert not same_output(want.replace('"N": 1000', '"N": 1001'), want)
    assert not same_output(want.replace("true", "false", 1), want)
    assert not same_output(want.replace("exit 0", "exit 1"), want)
    assert not same_output(want.replace(f'"WK0_2": {value},', ""), want)


if __name__ == "__main__":  # pragma: no cover - maintenance entry point
    if sys.argv[1:] != ["--record"]:
        sys.exit("usage: python tests/boundcalc/cli/test_recorded_outputs.py --record")
    os.environ["COLUMNS"] = "100"
    RECORDED.mkdir(exist_ok=True)
    (RECORDED / "ENVIRONMENT.json").write_text(json.dumps(_environment(), indent=1) + "\n")
    for key, argv in sorted(COMMANDS.items()):
        (RECORDED / f"{key}.txt").write_text(_run(argv), encoding="utf-8")
        print(f"recorded {key}")
