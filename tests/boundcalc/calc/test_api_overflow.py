"""The overflow contract: a quantity beyond the float range is never a
number and never ``inf``. Point commands print its exact mpmath value as text, verdict
``overflow`` (JSON: the value as a string plus a top-level ``overflow`` list); sweeps mark such
rows ``overflow`` (an explicit CSV cell, never an empty one) and reject inputs that float64 cannot
hold; the ``steps`` / ``width`` solvers refuse (exit 2) instead of answering."""

from __future__ import annotations

import csv
import io
import json
import math
import re

import pytest

OVERFLOWING = [
    ("theorem1", "--rho", "1e300"),
    ("theorem1", "--d", "1e307"),       # the capped drift error ~ sqrt(d): its square overflows
    ("theorem1", "--nu", "1e300", "--rho", "1e300"),
    ("theorem1", "--eta", "5e-324"),
    ("theorem1", "--activation", "custom:1e300,1e300,1e300"),
    ("prop2", "--m", "512", "--T", "1024"),
    ("remark9", "--misspecification", "1e300"),
    ("lemma2", "--rho", "1e300"),
]
IDS = [" ".join(a) for a in OVERFLOWING]


def _reject(text: str) -> float:
    raise AssertionError(f"non-finite JSON number {text}")


def _clean(*texts: str) -> None:
    for text in texts:
        assert not re.search(r"\b(inf|Infinity|NaN|nan)\b", text), text
        assert "Traceback" not in text and "internal error" not in text, text


def _loads(text: str):
    return json.loads(text, parse_constant=_reject)


@pytest.mark.parametrize("args", OVERFLOWING, ids=IDS)
def test_point_table_says_overflow(cli, args):
    run = cli(*args)
    assert run.code == 0, run.err
    _clean(run.out, run.err)
    assert "OVERFLOW:" in run.out
    assert "exceed the float range; no bound is guaranteed" in " ".join(run.out.split())
    assert "GUARANTEED" not in run.out.replace("NOT GUARANTEED", "")


@pytest.mark.parametrize("args", OVERFLOWING, ids=IDS)
def test_point_json_overflow_form(cli, args):
    run = cli(*args, "--format", "json")
    assert run.code == 0, run.err
    _clean(run.out, run.err)
    data = _loads(run.out)
    assert data["verdict"] == "overflow"
    assert data["overflow"]
    for name in data["overflow"]:
        group, key = name.split(".", 1)
        value = data[group][key]
        assert isinstance(value, str)
        assert float(value) == math.inf  # exact value, beyond float64
    assert "OVERFLOW" in run.err


@pytest.mark.parametrize("args", OVERFLOWING[:2] + OVERFLOWING[-1:], ids=IDS[:2] + IDS[-1:])
def test_point_strict_exits_1(cli, args):
    run = cli(*args, "--strict")
    assert run.code == 1
    _clean(run.out, run.err)


def test_exact_value_is_printed(cli):
    run = cli("lemma2", "--rho", "1e300", "--format", "json")
    data = _loads(run.out)
    assert "bound.lipschitz_L" in data["overflow"]
    mantissa, exponent = data["bound"]["lipschitz_L"].split("e+")
    assert int(exponent) > 308 and 1 <= float(mantissa) < 10
    table = cli("lemma2", "--rho", "1e300").out
    assert f"e+{exponent}" in table


def _exact_step(*flags: str) -> str:
    """The text of η* at these flags, from the mpmath evaluation."""
    from boundcalc.calc.api import evaluate, overflow_text
    from boundcalc.inputs.params import validate

    names = dict(zip(flags[::2], flags[1::2], strict=True))
    inputs = validate(**{k.lstrip("-"): v for k, v in names.items()})
    return overflow_text(evaluate("theorem1", inputs).constants["theorem_step_size"])


@pytest.mark.parametrize("flags", [("--rho", "1e300"), ("--nu", "1e-300", "--rho", "1e10")],
                         ids=["rho 1e300", "nu 1e-300"])
def test_a_step_size_below_the_float_range_is_its_exact_text_never_zero(cli, flags):
    run = cli("theorem1", *flags, "--format", "json")
    assert run.code == 0, run.err
    data = _loads(run.out)
    exact = _exact_step(*flags)
    assert float(exact.split("e")[0]) > 1 and int(exact.split("e")[1]) < -323
    assert data["constants"]["theorem_step_size"] == exact
    assert data["inputs"]["eta"] == exact
    assert exact in cli("theorem1", *flags).out      # the table shows it too


def test_an_underflow_alone_keeps_the_verdict(cli):
    data = _loads(cli("theorem1", "--nu", "1e-300", "--rho", "1e10", "--format", "json").out)
    assert data["verdict"] == "vacuous" and "overflow" not in data
    assert isinstance(data["constants"]["theorem_step_size"], str)
    assert isinstance(data["terms"]["optimization"], float)    # 5.3e-275: a float holds it


def test_a_custom_activation_bound_below_the_float_range_is_its_exact_text(cli):
    data = _loads(cli("lemma2", "--activation", "custom:1e-400,1,1", "--format", "json").out)
    assert data["inputs"]["sigma0"] == "1.000000e-400"


def test_finite_result_unchanged(cli):
    data = _loads(cli("theorem1", "--format", "json").out)
    assert "overflow" not in data
    assert data["verdict"] != "overflow"


# --------------------------------------------------------------------------- sweeps


@pytest.mark.parametrize("flags", [("--m", "1e30,2"), ("--n", "1e300"), ("--steps", "1e300"),
                                   ("--rho", "1e300,2")])
def test_sweep_accepts_what_points_accept(cli, flags):
    run = cli("sweep", "theorem1", *flags, "--format", "csv")
    assert run.code == 0, run.err
    _clean(run.out, run.err)
    rows = list(csv.DictReader(io.StringIO(run.out)))
    for row in rows:
        assert all(cell != "" for key, cell in row.items() if key != "eta"), row


def test_sweep_overflow_rows(cli):
    run = cli("sweep", "theorem1", "--rho", "1e300,2", "--format", "csv")
    assert run.code == 0, run.err
    rows = list(csv.DictReader(io.StringIO(run.out)))
    assert [r["verdict"] for r in rows][0] == "overflow"
    assert rows[0]["bound.min_iterate"] == "overflow"
    assert rows[1]["verdict"] != "overflow"
    assert "OVERFLOW" in run.err
    js = cli("sweep", "theorem1", "--rho", "1e300,2", "--format", "json")
    assert js.code == 0, js.err
    _clean(js.out)
    records = _loads(js.out)
    assert records[0]["verdict"] == "overflow"
    assert cli("sweep", "theorem1", "--rho", "1e300,2", "--strict").code == 1


def test_sweep_unrepresentable_input_is_input_error(cli):
    run = cli("sweep", "theorem1", "--m", "2:1e400:x2")
    assert run.code == 2
    assert run.err.strip().count("\n") == 0
    assert "--m" in run.err
    _clean(run.err)


# --------------------------------------------------------------------------- solvers


@pytest.mark.parametrize("args", [("steps", "--target", "0.1", "--rho", "1e300"),
                                  ("steps", "--target", "0.1", "--rho", "1e300", "--format",
                                   "json"),
                                  ("width", "--target", "0.1", "--rho", "1e300")])
def test_solvers_refuse_overflow(cli, args):
    run = cli(*args)
    assert run.code == 2, (run.out, run.err)
    assert run.out == ""
    assert run.err.strip().count("\n") == 0
    assert "--rho" in run.err and "overflow" in run.err
    _clean(run.err)
