"""Output that cannot be written is one line on stderr naming where, and exit code 1.

Standard output on a full device (``/dev/full``: every write fails with ENOSPC, as on a full disk)
or closed, and ``--output`` on a full device: never exit 0 with the output lost, never an internal
error (exit 3), never a second report by the interpreter at exit.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from boundcalc.cli import main

FULL = Path("/dev/full")
needs_full = pytest.mark.skipif(
    not (FULL.exists() and stat.S_ISCHR(FULL.stat().st_mode)),
    reason="needs the character device /dev/full")

NO_SPACE = "error: cannot write standard output: No space left on device"

#: One invocation of each kind of command that prints; the sweep prints ~60 kB, more than the
#: stream's buffer, so its writes fail while it streams, not only at the final flush.
PRINTING = [
    ("theorem1", "--m", "512", "--n", "1000", "--rho", "2", "--format", "json"),
    ("theorem1", "--m", "512", "--n", "1000", "--rho", "2"),
    ("sweep", "theorem1", "--m", "8:4096:x2", "--n", "1e3,1e4,1e5,1e6", "--format", "csv"),
    ("width", "--target", "0.1", "--n", "1e6"),
    ("steps", "--target", "1"),
    ("explain", "theorem1"),
    ("compare-rnn", "--format", "csv"),
    ("generalization", "--N", "10000", "--dm", "64", "--ds", "13", "--rx", "1", "--radii",
     "1,1,1,1", "--from-init", "0", "--alpha", "0.5", "--phi0", "100"),
    ("--help",),
    ("theorem1", "--help"),
    ("--version",),
    (),
]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONIOENCODING": "utf-8", "COLUMNS": "100"}


def _on_full_stdout(args: list[str], capsys, monkeypatch) -> tuple[int, str]:
    """Exit code and stderr of ``boundcalc ARGS`` run in-process with stdout on /dev/full."""
    with open(FULL, "w", encoding="utf-8") as full:
        monkeypatch.setattr(sys, "stdout", full)
        code = main(args)
        monkeypatch.undo()
    return code, capsys.readouterr().err


@needs_full
@pytest.mark.parametrize("args", PRINTING, ids=[" ".join(a[:2]) or "no-args" for a in PRINTING])
def test_stdout_on_a_full_device_is_one_line_naming_it_and_exit_1(args, capsys, monkeypatch):
    code, err = _on_full_stdout(list(args), capsys, monkeypatch)
    assert code == 1, err
    assert err.splitlines()[-1] == NO_SPACE
    assert err.count("error:") == 1 and "internal error" not in err


@needs_full
def test_table_on_a_full_stdout_is_one_line_and_exit_1(tmp_path, capsys, monkeypatch):
    run = tmp_path / "run"
    (run / "cells").mkdir(parents=True)
    (run / "config.json").write_text(json.dumps(
        {"parameters": {"experiment": "table1", "dms": [16], "Ns": [64]}}))
    code, err = _on_full_stdout(["table", str(run)], capsys, monkeypatch)
    assert code == 1, err
    assert err.splitlines()[-1] == NO_SPACE


@needs_full
def test_the_process_on_a_full_stdout_exits_1_with_one_line(tmp_path):
    """End to end: nothing more on stderr at interpreter exit (its own flush of stdout)."""
    with open(FULL, "wb") as full:
        done = subprocess.run([sys.executable, "-m", "boundcalc", "theorem1", "--format", "json"],
                              stdout=full, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                              env=_env(), timeout=120)
    assert done.returncode == 1
    assert done.stderr == NO_SPACE + "\n"


@pytest.mark.parametrize("closed", [">&-", ">&- 2>&-"])
def test_a_closed_stdout_is_no_internal_error(closed, tmp_path):
    """Started with standard output closed (``sys.stdout`` is None): exit 1, and one line on
    stderr when stderr is open."""
    done = subprocess.run(["sh", "-c", f'"$0" -m boundcalc theorem1 --format json {closed}',
                           sys.executable], capture_output=True, text=True, cwd=tmp_path,
                          env=_env(), timeout=120)
    assert done.returncode == 1, done.stderr
    expected = "" if "2>&-" in closed else \
        "error: cannot write standard output: the stream is closed\n"
    assert done.stderr == expected


@needs_full
@pytest.mark.parametrize("args", [
    ("theorem1", "--m", "512", "--n", "1000", "--rho", "2", "--format", "json"),
    ("sweep", "theorem1", "--m", "8:4096:x2", "--n", "1e3,1e4,1e5,1e6", "--format", "csv"),
], ids=["theorem1", "sweep"])
def test_output_on_a_full_device_is_one_line_naming_the_flag_and_leaves_the_device(args, cli):
    run = cli(*args, "--output", str(FULL))
    assert run.code == 1, run.err
    assert run.err.splitlines()[-1] == \
        f"error: cannot write --output {FULL}: No space left on device"
    assert "wrote" not in run.err
    assert stat.S_ISCHR(FULL.stat().st_mode)        # written in place, never replaced by a file


def test_output_into_a_missing_folder_is_still_bad_input(cli, tmp_path):
    run = cli("theorem1", "--output", str(tmp_path / "no" / "such.json"))
    assert run.code == 2 and run.err.startswith("error: --output cannot write")


@pytest.mark.parametrize("argv", [["theorem1"], ["lemma3"], ["prop2", "--format", "csv"],
                                  ["sweep", "theorem1", "--m", "8,16"]])
def test_a_closed_stdout_stream_in_process_is_one_line_exit_1(argv):
    """A closed stream object as ``sys.stdout`` (a notebook or harness that closed it): the
    table's terminal probe must not end in an internal error."""
    closed, err = io.StringIO(), io.StringIO()
    closed.close()
    with contextlib.redirect_stdout(closed), contextlib.redirect_stderr(err):
        code = main(argv)
    assert code == 1
    assert err.getvalue() == "error: cannot write standard output: the stream is closed\n"
