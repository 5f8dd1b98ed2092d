"""``boundcalc sweep``: range errors through the command, row count, agreement with point
evaluations, formats (the grid syntax itself: tests/boundcalc/calc/test_sweep.py)."""

from __future__ import annotations

import csv
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boundcalc.calc.api import evaluate
from boundcalc.calc.sweep import SWEEP_AXES
from boundcalc.inputs.params import validate


@pytest.mark.parametrize("spec", ["2:8:1e-300", "0:1e308:5e-324", "1:2:1e-20",
                                  "1e-300:1e300:x1.0000000000000000000000000000001",
                                  "1:2:x1.0000000000000000000000000000000000000001"])
def test_a_range_of_too_many_values_says_about_how_many_on_one_short_line(cli, spec):
    run = cli("sweep", "lemma2", "--rho-c", spec)
    assert run.code == 2, run.err
    assert run.err.startswith("error: --rho-c gives ") and "more than the limit" in run.err
    assert run.err.count("\n") == 1 and len(run.err) < 200


@pytest.mark.parametrize("spec", ["1e-400", "1:2:1e-400", "0:1e-99999:1", "1,1e-330"])
def test_a_value_float64_rounds_to_zero_is_an_input_error_naming_the_flag(cli, spec):
    run = cli("sweep", "lemma2", "--rho-u", spec)
    assert run.code == 2, run.err
    assert run.err.startswith("error: --rho-u ") and "below the float64 range" in run.err


def _csv_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_sweep_has_one_row_per_combination(cli):
    run = cli("sweep", "theorem1", "--m", "8:64:x2", "--n", "1e3,1e6", "--delta", "0.01,0.05,0.1",
              "--format", "csv")
    assert run.code == 0
    rows = _csv_rows(run.out)
    assert len(rows) == 4 * 2 * 3
    assert {(r["m"], r["n"], r["delta"]) for r in rows} == {
        (m, n, d) for m in ("8", "16", "32", "64") for n in ("1000", "1000000")
        for d in ("0.01", "0.05", "0.1")}
    assert {"constants.eps_lin", "terms.optimization", "bound.min_iterate", "probability",
            "guaranteed"} <= set(rows[0])


def test_sweep_rows_equal_point_evaluations(cli):
    run = cli("sweep", "theorem1", "--m", "8,512", "--n", "1e3,1e6", "--rho", "0.5,2",
              "--steps", "100,4000", "--activation", "erf", "--format", "json")
    rows = json.loads(run.out)
    assert len(rows) == 16
    for row in (rows[0], rows[7], rows[-1]):
        point = evaluate("theorem1", validate(m=row["m"], n=row["n"], rho=str(row["rho_c"]),
                                              steps=row["K"], activation="erf"))
        for group in ("constants", "terms", "bound"):
            for name, value in getattr(point, group).items():
                assert row[f"{group}.{name}"] == pytest.approx(float(value), rel=1e-9)
        assert row["probability"] == pytest.approx(float(point.probability), rel=1e-12)
        assert row["eta"] == pytest.approx(point.to_dict()["inputs"]["eta"], rel=1e-9)
        assert row["guaranteed"] is point.guaranteed


def test_sweep_components_override_uniform_radii(cli):
    rows = _csv_rows(cli("sweep", "lemma3", "--m", "64", "--rho", "3", "--rho-u", "1,2",
                         "--format", "csv").out)
    assert [(r["rho_c"], r["rho_u"], r["rho_w"]) for r in rows] == [
        ("3.0", "1.0", "3.0"), ("3.0", "2.0", "3.0")]


def test_sweep_with_fixed_eta_uses_it_in_every_row(cli):
    rows = _csv_rows(cli("sweep", "theorem1", "--m", "64,128", "--eta", "1e-5,1e-4",
                         "--format", "csv").out)
    assert sorted({r["eta"] for r in rows}) == ["0.0001", "1e-05"]


def test_sweep_labels_rows_that_are_not_guaranteed_and_strict_exits_one(cli):
    run = cli("sweep", "theorem1", "--m", "8192", "--rho", "0.5,2", "--format", "csv")
    assert run.code == 0
    rows = _csv_rows(run.out)
    assert [r["guaranteed"] for r in rows] == ["false", "true"]
    assert [r["conditions_hold"] for r in rows] == ["false", "true"]
    assert "NOT GUARANTEED in 1 of 2 rows" in run.err
    vacuous = _csv_rows(cli("sweep", "theorem1", "--m", "64", "--rho", "2", "--format",
                            "csv").out)
    assert [(r["conditions_hold"], r["guaranteed"], r["verdict"]) for r in vacuous] == [
        ("true", "false", "vacuous")]
    assert cli("sweep", "theorem1", "--m", "64", "--rho", "0.5,2", "--strict",
               "--format", "csv").code == 1


def test_sweep_renders_in_every_format(cli):
    args = ("sweep", "theorem1", "--m", "8:32:x2", "--n", "1e3,1e6")
    assert len(json.loads(cli(*args, "--format", "json").out)) == 6
    markdown = [ln for ln in cli(*args, "--format", "markdown").out.splitlines()
                if ln.startswith("|")]
    assert len(markdown) == 2 + 6 and len({ln.count("|") for ln in markdown}) == 1
    latex = cli(*args, "--format", "latex").out
    assert r"\begin{tabular}" in latex and r"\toprule" in latex and latex.count(r"\\") == 7
    table = cli(*args).out
    assert "min_iterate" in table and "guaranteed" in table


def test_sweep_columns_select_and_order_the_output(cli):
    rows = _csv_rows(cli("sweep", "theorem1", "--m", "8,16", "--columns", "m,min_iterate",
                         "--format", "csv").out)
    assert list(rows[0]) == ["m", "bound.min_iterate"]


def test_sweep_row_cap_is_checked_before_evaluating(cli):
    run = cli("sweep", "theorem1", "--m", "2:2048:2", "--n", "1:1025:1")
    assert run.code == 2
    assert "more than the limit" in run.err and "--m" in run.err


def test_sweep_writes_the_csv_file_of_the_readme(cli, tmp_path):
    target = tmp_path / "sweep.csv"
    run = cli("sweep", "theorem1", "--m", "8:4096:x2", "--n", "1e3,1e6", "--format", "csv",
              "--output", str(target))
    assert run.code == 0 and "20 rows" in run.err
    assert len(_csv_rows(target.read_text())) == 20


@pytest.mark.slow
def test_sweep_prop2_takes_alpha_as_an_axis_equal_to_point_evaluations(cli):
    from boundcalc.calc.compare_rnn import evaluate_prop2

    run = cli("sweep", "prop2", "--m", "2048", "--T", "16,64", "--alpha", "0.5:1.5:0.5",
              "--format", "json")
    assert run.code == 0, run.err
    rows = json.loads(run.out)
    assert [(r["T"], r["alpha"]) for r in rows] == [(t, a) for t in (16, 64)
                                                    for a in (0.5, 1.0, 1.5)]
    for row in rows:
        point = evaluate_prop2(validate(m=2048, T=row["T"]), str(row["alpha"]))
        for key in ("constants.theorem_step_size", "bound.min_iterate", "probability"):
            exact = point.to_dict()[key.split(".")[0]]
            exact = exact[key.split(".")[1]] if isinstance(exact, dict) else exact
            assert row[key] == pytest.approx(exact, rel=1e-9), key
        assert row["verdict"] == point.verdict
    header = cli("sweep", "prop2", "--m", "2048", "--alpha", "0.5,1.5").out.splitlines()[2]
    assert header.split()[:2] == ["alpha", "optimization"]


@pytest.mark.parametrize(("args", "message"), [
    (("theorem1", "--alpha", "1"), "error: --alpha is for prop2 only"),
    (("prop2", "--alpha", "0.5,0"), "error: --alpha must be > 0, got '0'"),
    (("prop2", "--alpha", "nan"), "error: --alpha must be finite"),
    (("prop2", "--alpha", "1:2:1e-300"), "error: --alpha gives about 1.00e+300 values"),
])
def test_sweep_alpha_is_a_positive_scale_of_prop2_only(cli, args, message):
    run = cli("sweep", *args)
    assert run.code == 2 and run.err.startswith(message), run.err


# --- property: any range text of any sweep flag ------------------------------------------------

#: Every flag of ``sweep`` that takes a value, a list or a range (``--alpha``: prop2's).
SWEEP_FLAGS = sorted({flag for _, flag, _ in SWEEP_AXES} | {"--alpha"})
#: A statement that uses the flag (theorem1 for the others).
_STATEMENT_OF = {"--batch-size": "prop1", "--misspecification": "remark9", "--alpha": "prop2",
                 "--T": "prop2"}
_NUMBER = st.one_of(
    st.sampled_from(["0", "1", "2", "8", "64", "0.5", "-1", "-0", "1e-300", "5e-324", "1e-400",
                     "1e300", "1.7976931348623157e308", "1e400", "nan", "inf", "-inf", "", "abc",
                     "1e", "+2", " 3 "]),
    st.integers(-3, 70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr))
_STEP = st.one_of(_NUMBER, st.sampled_from(
    ["x2", "x1", "x0.5", "x1.0000001", "x1e300", "xnan", "x", "X3", "x-2", "+1", "+0", "1e-300",
     "1e-20", "5e-324", "1e-99999", "0.25"]))
RANGE_TEXT = st.one_of(
    st.builds("{}:{}:{}".format, _NUMBER, _NUMBER, _STEP),    # reversed, tiny, huge, NaN ...
    st.lists(_NUMBER, min_size=1, max_size=4).map(",".join),
    st.sampled_from(["1:2", "1:2:3:4", ":", "2:8:1e-300", "1e-300:1e300:x2", "1:1e300:x1.0000001",
                     "8:2:1", "2,,4", "1:1048577:1"]))


@settings(max_examples=200, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(flags=st.lists(st.sampled_from(SWEEP_FLAGS), min_size=1, max_size=2, unique=True),
       data=st.data())
@pytest.mark.slow
def test_any_range_text_of_any_sweep_flag_exits_0_1_or_2_naming_the_flag(flags, data, cli,
                                                                          tmp_path_factory):
    statement = _STATEMENT_OF.get(flags[0], "theorem1")
    if "--alpha" in flags:
        statement = "prop2"
    argv = ["sweep", statement]
    for flag in flags:
        argv += [flag, data.draw(RANGE_TEXT, label=flag)]
    out = tmp_path_factory.getbasetemp() / "range-property.csv"
    run = cli(*argv, "--columns", "guaranteed", "--format", "csv", "--output", str(out))
    shown = f"boundcalc {' '.join(map(repr, argv))} -> {run.code}: {run.err}"
    assert run.code in (0, 1, 2), shown
    assert "Traceback" not in run.err and "internal error" not in run.err, shown
    if run.code == 2:
        line = run.err.strip()
        assert "\n" not in line and line.startswith("error: ") and len(line) < 400, shown
        named = line.split()[1]
        assert named in flags or any(f.startswith(named + "-") for f in flags), shown
