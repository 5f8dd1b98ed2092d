"""Point evaluations (theorem1, prop1, remark9, lemmas): JSON contract, formats, exit codes."""

from __future__ import annotations

import csv
import io
import json
import math
import os

import pytest

from boundcalc.calc.api import evaluate
from boundcalc.inputs.params import validate

POINT = ("--m", "512", "--n", "1000", "--rho", "2")
CONTRACT_KEYS = {"statement", "inputs", "constants", "terms", "bound", "conditions",
                 "probability", "version"}
#: Keys the CLI adds for statements with the trivial bound B² (theorem1, prop1, remark9, prop2).
VERDICT_KEYS = {"verdict", "free_bound", "average_iterate_verdict", "nonvacuous_from_m",
                "active_drift_bound", "nonvacuous_until_m", "nonvacuous_again",
                "nonvacuous_checked_to_m"}


def _numbers(value):
    """Every number in a nested JSON value."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return
    if isinstance(value, (int, float)):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _numbers(v)
    elif isinstance(value, list):
        for v in value:
            yield from _numbers(v)


def test_json_is_exactly_the_evaluation_contract_with_finite_numbers(cli):
    run = cli("theorem1", *POINT, "--format", "json")
    assert run.code == 0
    data = json.loads(run.out)
    assert set(data) == CONTRACT_KEYS | VERDICT_KEYS
    assert {"u_inf", "lipschitz_L", "smoothness_beta", "eps_lin", "eps_app"} <= set(
        data["constants"])
    assert {"min_iterate", "average_iterate"} <= set(data["bound"])
    assert all(set(c) == {"name", "holds", "detail"} for c in data["conditions"])
    assert all(math.isfinite(x) for x in _numbers(data))
    expected = evaluate("theorem1", validate(m=512, n=1000, rho="2")).to_dict()
    assert {k: v for k, v in data.items() if k in CONTRACT_KEYS} == json.loads(
        json.dumps(expected))


def test_sequence_length_changes_no_number(cli):
    short = json.loads(cli("theorem1", *POINT, "--T", "4", "--format", "json").out)
    long = json.loads(cli("theorem1", *POINT, "--T", "4096", "--format", "json").out)
    assert (short["inputs"].pop("T"), long["inputs"].pop("T")) == (4, 4096)
    assert short == long


def test_csv_carries_the_same_numbers_as_json(cli):
    data = json.loads(cli("theorem1", *POINT, "--format", "json").out)
    rows = list(csv.reader(io.StringIO(cli("theorem1", *POINT, "--format", "csv").out)))
    assert rows[0] == ["section", "name", "value"]
    assert all(len(r) == 3 for r in rows)
    by_key = {(s, n): v for s, n, v in rows[1:]}
    for group in ("constants", "terms", "bound"):
        for name, value in data[group].items():
            assert float(by_key[(group, name)]) == value
    assert float(by_key[("probability", "probability")]) == data["probability"]
    assert by_key[("conditions", "m_even")] == "PASS"


def test_markdown_tables_have_consistent_rows(cli):
    out = cli("theorem1", *POINT, "--format", "markdown").out
    tables, current = [], []
    for line in out.splitlines() + [""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    assert len(tables) >= 6  # inputs, constants, terms, bound, probability, conditions
    for table in tables:
        widths = {line.count("|") - line.count(r"\|") for line in table}
        assert len(widths) == 1, table
        assert set(table[1]) <= set("|-: ")
    assert "| min_iterate |" in out


def test_latex_is_a_booktabs_tabular(cli):
    out = cli("theorem1", *POINT, "--format", "latex").out
    for token in (r"\begin{tabular}", r"\toprule", r"\midrule", r"\bottomrule", r"\end{tabular}"):
        assert token in out
    assert r"\varepsilon_{\mathrm{lin}}" in out


def test_table_shows_every_input_with_its_source(cli):
    run = cli("theorem1", *POINT)
    assert run.code == 0
    for name in ("m", "n", "d", "T", "delta", "rho_c", "nu_w", "K", "eta", "activation",
                 "sigma2", "min_iterate", "average_iterate", "probability", "m_even"):
        assert f" {name} " in run.out
    assert "given (--m)" in run.out
    assert "default" in run.out
    assert "theorem step size eta*" in run.out
    assert "VACUOUS" in run.out and "NOT GUARANTEED" not in run.out  # 25.41 ≥ Y² = 9
    informative = cli("theorem1", "--m", "8192", "--n", "1000", "--rho", "2")
    assert "GUARANTEED" in informative.out and "NOT GUARANTEED" not in informative.out


def test_rho_below_nu_is_labelled_not_guaranteed_and_exits_zero(cli):
    run = cli("theorem1", "--m", "512", "--rho", "0.5", "--nu", "1")
    assert run.code == 0
    assert "NOT GUARANTEED" in run.out
    assert "FAIL" in run.out
    as_json = cli("theorem1", "--m", "512", "--rho", "0.5", "--nu", "1", "--format", "json")
    assert as_json.code == 0
    assert json.loads(as_json.out)["statement"]["guaranteed"] is False
    assert "NOT GUARANTEED" in as_json.err


def test_strict_exits_one_when_a_condition_fails_or_vacuous_and_zero_otherwise(cli):
    assert cli("theorem1", "--m", "512", "--rho", "0.5", "--nu", "1", "--strict").code == 1
    assert cli("theorem1", *POINT, "--strict").code == 1  # vacuous: above Y²
    assert cli("theorem1", "--m", "8192", "--n", "1000", "--rho", "2", "--strict").code == 0


@pytest.mark.parametrize("command", ["theorem1", "prop1", "remark9", "lemma2", "lemma3", "lemma5",
                                     "lemma6", "event"])
def test_every_point_command_prints_its_statement(cli, command):
    run = cli(command, "--m", "64", "--format", "json")
    assert run.code == 0
    data = json.loads(run.out)
    assert data["statement"]["name"] == command
    assert data["bound"]
    assert all(math.isfinite(x) for x in _numbers(data))


def test_prop1_and_remark9_take_their_own_flags(cli):
    prop = json.loads(cli("prop1", "--m", "64", "--batch-size", "32", "--format", "json").out)
    assert prop["inputs"]["b"] == 32
    mis = json.loads(cli("remark9", "--m", "64", "--misspecification", "0.1",
                         "--format", "json").out)
    assert mis["terms"]["misspecification"] == pytest.approx(
        0.1 * mis["constants"]["residual_envelope_B"], rel=1e-12)


def test_fixed_eta_is_reported_as_given(cli):
    data = json.loads(cli("theorem1", *POINT, "--eta", "1e-5", "--format", "json").out)
    assert data["inputs"]["eta"] == 1e-5
    assert data["inputs"]["eta_source"] == "given"


def test_precision_flag_sets_the_evaluation_digits(cli):
    data = json.loads(cli("theorem1", *POINT, "--precision", "40", "--format", "json").out)
    assert data["statement"]["precision_digits"] == 40


@pytest.mark.slow
def test_symbolic_prints_each_formula_in_unicode_and_latex(cli):
    run = cli("theorem1", *POINT, "--symbolic")
    assert run.code == 0
    assert "ε_lin" in run.out and "√" in run.out and "ρ_u" in run.out
    assert r"\varepsilon_{\mathrm{lin}}" in run.out
    for key in ("optimization", "linearization", "approximation", "change_of_feature",
                "min_iterate", "average_iterate", "u_inf", "eps_cf"):
        assert f"{key}" in run.out.split("Formulas", 1)[1]


def test_output_file_is_written_whole_and_no_temporary_file_is_left(cli, tmp_path):
    target = tmp_path / "theorem1.json"
    run = cli("theorem1", *POINT, "--format", "json", "--output", str(target))
    assert run.code == 0 and run.out == ""
    assert json.loads(target.read_text()) == json.loads(
        cli("theorem1", *POINT, "--format", "json").out)
    assert os.listdir(tmp_path) == ["theorem1.json"]
