"""boundcalc.cli.options: options with a fixed set of values list them in ``--help`` and the shell
completes them (completion is enabled), while a wrong value stays the one-line error naming the
flag."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout

import pytest

from boundcalc.cli import main
from boundcalc.cli.options import choice_metavar, completer


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _complete(words: str) -> list[str]:
    """What bash completion offers after ``words`` (the last word is the one being typed)."""
    parts = words.split(" ")
    env = {**os.environ, "_BOUNDCALC_COMPLETE": "complete_bash", "COMP_WORDS": words,
           "COMP_CWORD": str(len(parts) - 1), "COLUMNS": "100"}
    proc = subprocess.run([sys.executable, "-m", "boundcalc"], env=env, capture_output=True,
                          text=True, timeout=120, cwd=tempfile.gettempdir())  # not the source tree
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_choice_metavar_and_completer():
    assert choice_metavar(("tight", "paper")) == "[tight|paper]"
    assert completer(("table", "json", "csv"))("") == ["table", "json", "csv"]
    assert completer(("table", "json", "csv"))("T") == ["table"]


@pytest.mark.parametrize(("argv", "metavars"), [
    (["theorem1"], ["[table|json|csv|markdown|latex]", "[tight|paper|gradnorm|joint|blocks]"]),
    (["sweep"], ["[table|json|csv|markdown|latex]", "[tight|paper|gradnorm|joint|blocks]"]),
    (["explain"], ["[table|json|markdown|latex]", "[tight|paper|gradnorm|joint|blocks]"]),
    (["width"], ["[table|json|csv|markdown|latex]"]),
    (["generalization"], ["[table|json|csv|markdown|latex]"]),
    (["compare-rnn"], ["[table|json|csv|markdown|latex]"]),
    (["validate"], ["[table|json]", "[auto|cpu|cuda]", "[float64|float32]",
                    "[quick|standard|thorough]"]),
    (["table"], ["[markdown|latex|csv]", "[single|double]", "[geometric|arithmetic]"]),
    (["reproduce"], ["[quick|paper]", "[auto|cpu|cuda]", "[float64|float32]",
                     "[feature|output]", "[single|double]"]),
])
def test_help_lists_the_values(argv, metavars, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")  # one line per metavar
    code, out, _ = _run(*argv, "--help")
    assert code == 0
    for metavar in metavars:
        assert metavar in out


def test_completion_is_enabled():
    code, out, _ = _run("--help")
    assert code == 0 and "--install-completion" in out and "--show-completion" in out


@pytest.mark.parametrize(("words", "expected"), [
    ("boundcalc theorem1 --format ", ["table", "json", "csv", "markdown", "latex"]),
    ("boundcalc theorem1 --format m", ["markdown"]),
    ("boundcalc sweep theorem1 --route ", ["tight", "paper", "gradnorm", "joint", "blocks"]),
    ("boundcalc explain lemma", ["lemma2", "lemma3", "lemma5", "lemma6"]),
    ("boundcalc explain theorem1 --format ", ["table", "json", "markdown", "latex"]),
    ("boundcalc theorem1 --activation ", ["tanh", "erf", "custom:"]),
    ("boundcalc reproduce figure1 --preset ", ["quick", "paper"]),
    ("boundcalc reproduce ", ["figure1", "figure2", "table1", "tsweep"]),
    ("boundcalc reproduce figure1 --device c", ["cpu", "cuda"]),
    ("boundcalc validate theorem1 --device ", ["auto", "cpu", "cuda"]),
    ("boundcalc validate theorem1 --format ", ["table", "json"]),
    ("boundcalc validate theorem1 --effort t", ["thorough"]),
    ("boundcalc table runs/x --format ", ["markdown", "latex", "csv"]),
])
def test_the_shell_completes_the_values(words, expected):
    assert _complete(words) == expected


@pytest.mark.parametrize(("argv", "line"), [
    (["theorem1", "--format", "yaml"],
     "error: --format must be one of table, json, csv, markdown, latex, got 'yaml'"),
    (["explain", "theorem1", "--format", "csv"],
     "error: --format must be one of table, json, markdown, latex for this command, got 'csv'"),
    (["sweep", "theorem1", "--route", "fast"],
     "error: --route must be one of tight, paper, gradnorm, joint, blocks, got 'fast'"),
    (["reproduce", "figure1", "--preset", "huge"],
     "error: --preset must be quick or paper, got 'huge'"),
    (["validate", "theorem1", "--device", "tpu"],
     "error: --device must be auto, cpu or cuda, got 'tpu'"),
    (["validate", "theorem1", "--format", "csv"],
     "error: --format must be table or json, got 'csv'"),
])
def test_a_wrong_value_is_still_the_one_line_error(argv, line):
    code, out, err = _run(*argv)
    assert (code, out, err) == (2, "", line + "\n")


def test_the_table_formats_are_the_tables_module_s():
    from boundcalc.cli.table import FORMATS
    from boundcalc.inputs.table_flags import TABLE_FORMATS

    assert FORMATS == TABLE_FORMATS
