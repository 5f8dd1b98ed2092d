"""boundcalc.errors: an input error stays one short line, whatever value it echoes."""

from __future__ import annotations

import pytest

from boundcalc.errors import InputError


def test_a_huge_value_echoed_is_abbreviated_keeping_its_head_and_tail():
    value = ",".join(["1"] * 5000)
    err = InputError("--nu", f"takes one value or three comma-separated values, got {value!r}")
    text = str(err)
    assert len(text) < 300 and "characters left out" in text
    assert text.startswith("--nu takes one value or three comma-separated values, got '1,1,")
    assert text.endswith(",1'") and err.flag == "--nu"


def test_a_long_message_of_short_words_keeps_its_beginning_and_end():
    text = str(InputError("m", "got [" + ", ".join(["1"] * 5000) + "] (a list)"))
    assert len(text) < 2100 and text.startswith("m got [1, 1") and text.endswith("] (a list)")


@pytest.mark.parametrize("message", [
    "must be a positive even integer (symmetric init), got 3",
    "cannot write /" + "a" * 150 + "/run.json",
    "unknown column 'x'; choose from " + ", ".join(f"constants.c{i}" for i in range(60)),
])
def test_an_ordinary_message_is_kept_whole(message):
    assert str(InputError("--x", message)) == f"--x {message}"


@pytest.mark.parametrize("args", [("theorem1", "--nu"), ("sweep", "theorem1", "--rho-u"),
                                  ("prop2", "--alpha")])
def test_the_cli_error_line_of_a_5000_item_value_is_short(cli, args):
    run = cli(*args, ",".join(["1"] * 4999 + ["x"]))
    assert run.code == 2
    line = run.err.strip()
    assert "\n" not in line and len(line) < 400 and line.startswith(f"error: {args[-1]} ")
