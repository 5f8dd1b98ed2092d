"""``--route`` and the verdict contract: guaranteed / vacuous / not_guaranteed against the free
bound min(B², Y²), the smallest non-vacuous width (point commands and ``width --nonvacuous``),
``--strict``, the sweeps' ``verdict`` column, and the route named in every output."""

from __future__ import annotations

import csv
import dataclasses
import io
import json

import numpy as np
import pytest
from boundcalc.theory.catalog import ROUTED
from boundcalc.theory.registry import ROUTED as REGISTRY_ROUTED

from boundcalc.calc.api import VERDICTS, evaluate, has_verdict, mp_arguments, verdict_column
from boundcalc.calc.evaluator import evaluate_grid
from boundcalc.calc.solvers import nonvacuous_width, width_grid
from boundcalc.inputs.params import validate
from boundcalc.render.result_text import guarantee_line

VACUOUS = ("theorem1", "--m", "512", "--n", "1000", "--rho", "2", "--route", "paper")
GUARANTEED = ("theorem1", "--m", "8192", "--n", "1000", "--d", "8", "--rho", "3", "--nu", "3")
NOT_GUARANTEED = ("theorem1", "--rho", "0.5", "--nu", "1")
VERDICT_KEYS = ("verdict", "free_bound", "average_iterate_verdict", "nonvacuous_from_m",
                "active_drift_bound")
ROUTE_COMMANDS = [(c, r) for c in ("theorem1", "prop1", "remark9") for r in ("tight", "paper")]


def _flat(text: str) -> str:
    """``text`` with every run of whitespace one space (the table wraps long status lines)."""
    return " ".join(text.split())


def _json(cli, *args):
    run = cli(*args, "--format", "json")
    assert run.code == 0, run.err
    return json.loads(run.out)


def _below(name: str, inputs, m: int, key: str) -> bool:
    ev = evaluate(name, dataclasses.replace(inputs, m=m))
    return bool(ev.bound["min_iterate"] < ev.constants[key])


def _nonvacuous(name: str, inputs, m: int) -> bool:
    """min_iterate below both free bounds, B² and Y² (exact evaluator)."""
    return (_below(name, inputs, m, "trivial_bound_B2")
            and _below(name, inputs, m, "initial_loss_bound"))


# --------------------------------------------------------------------------- the three verdicts


def test_paper_route_at_m_512_is_vacuous_and_informative_only_below_y_squared(cli):
    data = _json(cli, *VACUOUS)
    assert data["statement"]["route"] == "paper"
    assert data["verdict"] == "vacuous"
    assert data["statement"]["guaranteed"] is False and data["statement"]["conditions_hold"]
    bound, trivial = data["bound"]["min_iterate"], data["constants"]["trivial_bound_B2"]
    initial = data["constants"]["initial_loss_bound"]
    assert bound == pytest.approx(1291.3661425, rel=1e-9)
    assert trivial == pytest.approx(727.2711090, rel=1e-9)
    assert trivial == pytest.approx(data["constants"]["residual_envelope_B"] ** 2, rel=1e-12)
    # Y = σ₀ν_c + σ₁ν_u + σ₁ν_w√d = 2 + √8 on the paper route (ν = 1, d = 8, tanh)
    assert initial == pytest.approx((2 + 8 ** 0.5) ** 2, rel=1e-12)
    assert initial == pytest.approx(data["constants"]["label_envelope_Y"] ** 2, rel=1e-12)
    assert data["free_bound"] == "initial_loss_bound" and initial < trivial
    # against B² alone the first width would be 1712 (exact evaluator, checked by hand) ...
    inputs = validate(n=1000, rho="2")
    assert _below("theorem1_paper", inputs, 1712, "trivial_bound_B2")
    assert not _below("theorem1_paper", inputs, 1710, "trivial_bound_B2")
    # ... but at 1712 the bound is still above Y²: informative only from m = 10 465 658
    assert not _nonvacuous("theorem1_paper", inputs, 1712)
    assert data["nonvacuous_from_m"] == 10465658
    assert _nonvacuous("theorem1_paper", inputs, 10465658)
    assert not _nonvacuous("theorem1_paper", inputs, 10465656)
    assert data["active_drift_bound"] is None
    table = cli(*VACUOUS)
    assert table.code == 0
    assert ("VACUOUS: min_iterate 1291 ≥ 23.31 = Y², the loss at initialization (f(θ(0)) = 0); "
            "informative from m = 10465658") in _flat(table.out)
    assert "GUARANTEED" not in table.out


def test_the_main_job_is_vacuous_against_y_squared_and_informative_from_m_1436(cli):
    # 1572 on the blocks route, the default before derivations.md §2.2 (checked below)
    main = ("theorem1", "--m", "512", "--n", "1000", "--rho", "2")
    data = _json(cli, *main)
    assert data["verdict"] == "vacuous" and data["free_bound"] == "initial_loss_bound"
    assert data["constants"]["initial_loss_bound"] == pytest.approx(9.0, rel=1e-15)
    assert data["bound"]["min_iterate"] < data["constants"]["trivial_bound_B2"]  # below B² only
    assert data["nonvacuous_from_m"] == 1436
    inputs = validate(n=1000, rho="2")
    assert _nonvacuous("theorem1", inputs, 1436) and not _nonvacuous("theorem1", inputs, 1434)
    assert (_nonvacuous("theorem1_blocks", inputs, 1572)
            and not _nonvacuous("theorem1_blocks", inputs, 1570))
    blocks = _json(cli, *main, "--route", "blocks")
    assert blocks["nonvacuous_from_m"] == 1572
    assert blocks["bound"]["min_iterate"] == pytest.approx(25.41, abs=0.005)
    # the average iterate is judged against B² alone: informative here (72.9 < 129.4)
    assert data["average_iterate_verdict"] == "guaranteed"
    assert data["bound"]["average_iterate"] < data["constants"]["trivial_bound_B2"]
    out = _flat(cli(*main).out)
    assert ("VACUOUS: min_iterate 23.26 ≥ 9 = Y², the loss at initialization (f(θ(0)) = 0); "
            "informative from m = 1436") in out
    assert cli(*main, "--strict").code == 1


def test_the_main_job_on_the_joint_route_keeps_the_numbers_before_the_block_bounds(cli):
    main = ("theorem1", "--m", "512", "--n", "1000", "--rho", "2", "--route", "joint")
    data = _json(cli, *main)
    assert data["verdict"] == "vacuous" and data["free_bound"] == "initial_loss_bound"
    assert data["nonvacuous_from_m"] == 4362
    inputs = validate(n=1000, rho="2")
    assert (_nonvacuous("theorem1_joint", inputs, 4362)
            and not _nonvacuous("theorem1_joint", inputs, 4360))
    # the average iterate is judged against B² alone: vacuous here (216.0 ≥ 183.9)
    assert data["average_iterate_verdict"] == "vacuous"
    assert data["bound"]["average_iterate"] >= data["constants"]["trivial_bound_B2"]
    out = _flat(cli(*main).out)
    assert ("VACUOUS: min_iterate 67.57 ≥ 9 = Y², the loss at initialization (f(θ(0)) = 0); "
            "informative from m = 4362") in out


@pytest.mark.parametrize(("args", "free"), [
    (("prop1", "--m", "512", "--n", "1000", "--rho", "2", "--batch-size", "32"), 9.0),
    (("remark9", "--m", "512", "--n", "1000", "--rho", "2", "--misspecification", "0.1"), 9.61),
    (("prop2", "--T", "1"), 4.0),
    (("prop2", "--T", "2", "--alpha", "0.5"), 12.25),
])
def test_every_training_bound_is_vacuous_above_its_initial_loss(cli, args, free):
    data = _json(cli, *args)
    assert data["constants"]["initial_loss_bound"] == pytest.approx(free, rel=1e-12)
    assert data["bound"]["min_iterate"] >= free
    assert data["verdict"] == "vacuous" and data["free_bound"] == "initial_loss_bound"
    assert data["statement"]["guaranteed"] is False


def test_tight_route_at_m_8192_is_guaranteed(cli):
    data = _json(cli, *GUARANTEED)
    assert data["statement"]["route"] == "tight"
    assert data["verdict"] == "guaranteed" and data["statement"]["guaranteed"] is True
    bound, trivial = data["bound"]["min_iterate"], data["constants"]["trivial_bound_B2"]
    assert bound < data["constants"]["initial_loss_bound"] == 81.0 < trivial
    assert data["nonvacuous_from_m"] == 1576
    linear = data["bound"]["min_iterate_linear_drift"]
    cauchy = data["bound"]["min_iterate_cauchy_schwarz"]
    assert bound == min(linear, cauchy)
    assert data["active_drift_bound"] == ("cauchy_schwarz" if cauchy <= linear
                                          else "linear_drift")
    table = cli(*GUARANTEED).out
    assert f"active drift bound: {data['active_drift_bound']}" in table
    line = next(ln for ln in table.splitlines() if ln.startswith("GUARANTEED"))
    assert line.startswith("GUARANTEED: all 5 conditions hold; min_iterate ")
    assert " < 81 = Y², the loss at initialization" in line


@pytest.mark.parametrize(("command", "route"), ROUTE_COMMANDS)
def test_a_failing_condition_is_not_guaranteed_on_both_routes(cli, command, route):
    data = _json(cli, command, *NOT_GUARANTEED[1:], "--route", route)
    assert data["verdict"] == "not_guaranteed"
    assert data["statement"]["route"] == route
    table = cli(command, *NOT_GUARANTEED[1:], "--route", route).out
    assert "NOT GUARANTEED: rho_c_ge_nu_c, rho_u_ge_nu_u, rho_w_ge_nu_w fail" in table


def test_prop2_has_the_verdict_too_and_null_when_no_width_helps(cli):
    data = _json(cli, "prop2")
    assert "trivial_bound_B2" in data["constants"]
    assert data["constants"]["trivial_bound_B2"] == pytest.approx(
        data["constants"]["residual_envelope_B"] ** 2, rel=1e-12)
    assert data["verdict"] == "vacuous" and data["active_drift_bound"] is None
    assert data["constants"]["initial_loss_bound"] == pytest.approx(
        data["constants"]["label_envelope_Y"] ** 2, rel=1e-12)
    assert data["statement"]["route"] is None
    m = data["nonvacuous_from_m"]
    inputs = validate()
    assert _nonvacuous("prop2", inputs, m) and not _nonvacuous("prop2", inputs, m - 2)
    assert _json(cli, "prop2", "--rho", "0.5")["verdict"] == "not_guaranteed"
    far = _json(cli, "prop2", "--T", "40")  # exponential in T past the cutoff
    assert far["verdict"] == "vacuous" and far["nonvacuous_from_m"] is None
    assert "informative at no even m ≤ 2^62" in _flat(cli("prop2", "--T", "40").out)


def test_past_two_to_the_53_the_exact_evaluator_settles_the_width():
    # float64 cannot tell m from m - 2 there: the answer is confirmed (and moved) with mpmath
    inputs = validate(T=32)
    answer = nonvacuous_width("prop2", inputs, 20)
    assert answer is not None and answer.m > 2**53
    assert _nonvacuous("prop2", inputs, answer.m)
    assert not _nonvacuous("prop2", inputs, answer.m - 2)


# --------------------------------------------------------------------------- JSON keys


@pytest.mark.parametrize(("command", "route"), [*ROUTE_COMMANDS, ("prop2", None)])
def test_json_has_the_verdict_keys_and_names_the_route(cli, command, route):
    args = (command, "--m", "64") + (("--route", route) if route else ())
    data = _json(cli, *args)
    assert list(data)[:6] == ["statement", *VERDICT_KEYS]
    assert data["verdict"] in VERDICTS
    assert data["statement"]["route"] == route
    assert (data["active_drift_bound"] is None) == (route != "tight")
    first = data["nonvacuous_from_m"]
    assert first is None or (isinstance(first, int) and first % 2 == 0)


@pytest.mark.parametrize("command", ["lemma2", "lemma3", "lemma5", "lemma6", "event"])
def test_statements_without_b_squared_keep_their_contract(cli, command):
    data = _json(cli, command, "--m", "64")
    assert not set(VERDICT_KEYS) & set(data)
    assert data["statement"]["route"] is None
    assert not has_verdict(command)


def test_the_default_route_is_tight_and_paper_gives_the_paper_numbers(cli):
    assert _json(cli, "theorem1") == _json(cli, "theorem1", "--route", "tight")
    paper = _json(cli, "prop1", "--m", "1024", "--route", "paper")
    expected = evaluate("prop1_paper", validate(m=1024)).to_dict()
    assert paper["bound"] == pytest.approx(json.loads(json.dumps(expected))["bound"])
    assert ROUTED == REGISTRY_ROUTED


# --------------------------------------------------------------------------- width --nonvacuous


@pytest.mark.parametrize("flags", [
    ("--n", "10", "--d", "1", "--rho", "1", "--steps", "100000", "--route", "paper"),
    ("--n", "1000", "--rho", "2"),
    ("--n", "50", "--d", "2", "--rho", "1.5", "--eta", "1e-4", "--steps", "20000"),
])
def test_width_nonvacuous_matches_a_brute_force_scan(cli, flags):
    data = _json(cli, "width", "--nonvacuous", *flags)
    route = flags[flags.index("--route") + 1] if "--route" in flags else "tight"
    key = "theorem1_paper" if route == "paper" else "theorem1"
    assert data["statement"]["route"] == route
    m = data["answer"]["m"]
    assert data["nonvacuous_from_m"] == m
    assert all(c["holds"] for c in data["conditions"])
    given = {k.lstrip("-"): v for k, v in zip(flags[::2], flags[1::2], strict=True)
             if k != "--route"}
    inputs = validate(**given)
    # the answer and m − 2 with the exact evaluator; every even width below with numpy
    assert _nonvacuous(key, inputs, m) and not _nonvacuous(key, inputs, m - 2)
    columns = {k: float(v) for k, v in mp_arguments(inputs).items()}
    if inputs.eta is None:
        columns["eta"] = None
    columns["m"] = np.arange(2, m, 2, dtype=float)
    grid = evaluate_grid(key, columns)
    free = np.minimum(grid["constants.trivial_bound_B2"], grid["constants.initial_loss_bound"])
    assert not np.any(grid["bound.min_iterate"] < free)
    if inputs.eta is not None:
        assert data["answer"]["eta"] == float(inputs.eta)
        assert data["answer"]["eta_source"] == "given"
    point = _json(cli, "theorem1", "--m", "512", *flags)
    assert point["nonvacuous_from_m"] == m  # the same search


def test_width_nonvacuous_prints_the_answer_like_width_target(cli):
    run = cli("width", "--nonvacuous", "--n", "1000", "--rho", "2")
    assert run.code == 0
    assert "route: tight" in run.out and "Answer" in run.out
    assert "non_vacuous_at_m" in run.out and "m_minus_2_vacuous" in run.out
    assert " 1436" in run.out and "< Y² = 9.0 at m = 1436" in run.out
    blocks = cli("width", "--nonvacuous", "--n", "1000", "--rho", "2", "--route", "blocks")
    assert " 1572" in blocks.out and "< Y² = 9.0 at m = 1572" in blocks.out


def test_width_nonvacuous_infeasible_and_bad_combinations(cli):
    run = cli("width", "--nonvacuous", "--steps", "1", "--eta", "10")
    assert run.code == 1
    assert run.err.startswith("infeasible:") and len(run.err.strip().splitlines()) == 1
    both = cli("width", "--nonvacuous", "--target", "1")
    assert both.code == 2 and "--nonvacuous" in both.err
    neither = cli("width")
    assert neither.code == 2 and "--target" in neither.err


def test_the_width_grid_is_dense_then_geometric_and_ends_at_two_to_the_62():
    grid = width_grid((1000000, 3))
    assert grid[:4] == [2, 4, 6, 8] and grid[-1] == 2**62
    assert all(w % 2 == 0 for w in grid) and grid == sorted(set(grid))
    assert 1000000 in grid and 3 not in grid
    assert len([w for w in grid if w > 8192]) == 49 * 64 + 1  # 64 per octave, plus 1000000


# --------------------------------------------------------------------------- --strict


@pytest.mark.parametrize(("args", "code"), [
    (VACUOUS, 1), (GUARANTEED, 0), (NOT_GUARANTEED, 1),
    (("prop2",), 1), (("lemma2", "--m", "64"), 0), (("prop1", "--batch-size", "2000"), 1),
])
def test_strict_exits_one_unless_guaranteed(cli, args, code):
    run = cli(*args, "--strict")
    assert run.code == code
    assert cli(*args).code == 0


def test_strict_on_a_file_output_notes_the_vacuous_verdict(cli, tmp_path):
    run = cli(*VACUOUS, "--format", "json", "--output", str(tmp_path / "x.json"), "--strict")
    assert run.code == 1
    assert "VACUOUS: min_iterate" in run.err


def test_sweep_strict_exits_one_on_a_vacuous_row(cli):
    vacuous = cli("sweep", "theorem1", "--m", "512,8192", "--strict")
    assert vacuous.code == 1 and "VACUOUS in 1 of 2 rows" in vacuous.err
    fine = cli("sweep", *GUARANTEED, "--strict")
    assert fine.code == 0 and fine.err == ""


# --------------------------------------------------------------------------- sweeps


def _csv(text):
    return list(csv.DictReader(io.StringIO(text)))


@pytest.mark.parametrize("route", ["tight", "paper"])
def test_sweep_verdict_column_equals_the_point_verdicts(cli, route):
    run = cli("sweep", "theorem1", "--m", "64,8192,16777216", "--rho", "0.5,2,3", "--nu", "1,3",
              "--route", route, "--format", "csv")
    assert run.code == 0
    rows = _csv(run.out)
    key = "theorem1_paper" if route == "paper" else "theorem1"
    seen = set()
    for row in rows:
        assert row["route"] == route
        point = evaluate(key, validate(m=row["m"], rho=row["rho_c"], nu=row["nu_c"]))
        assert row["verdict"] == point.verdict
        seen.add(row["verdict"])
    assert seen == set(VERDICTS) - {"overflow"}  # no row of this grid overflows
    records = json.loads(cli("sweep", "theorem1", "--m", "64,4096", "--rho", "0.5,3", "--nu",
                             "3", "--route", route, "--format", "json").out)
    assert {r["verdict"] for r in records} <= set(VERDICTS)
    assert all(r["route"] == route for r in records)


def test_sweep_verdict_column_is_shown_and_selectable(cli):
    table = cli("sweep", "theorem1", "--m", "64,8192", "--rho", "3", "--nu", "3").out
    assert "verdict" in table and "guaranteed" in table.splitlines()[-1]
    rows = _csv(cli("sweep", "prop2", "--m", "64,128", "--columns", "m,verdict",
                    "--format", "csv").out)
    assert rows == [{"m": "64", "verdict": "vacuous"}, {"m": "128", "verdict": "vacuous"}]
    lemma = _csv(cli("sweep", "lemma3", "--m", "64", "--format", "csv").out)
    assert "verdict" not in lemma[0] and "route" not in lemma[0]


def test_verdict_column_codes():
    codes = verdict_column([True, True, True, False], [1.0, 2.0, float("nan"), 1.0], 2.0)
    assert [VERDICTS[c] for c in codes] == ["guaranteed", "vacuous", "vacuous", "not_guaranteed"]


# --------------------------------------------------------------------------- route in every format


@pytest.mark.parametrize("route", ["tight", "paper"])
def test_every_point_format_names_the_route(cli, route):
    args = ("theorem1", "--m", "512", "--route", route)
    assert f"route: {route}" in cli(*args).out
    assert _json(cli, *args)["statement"]["route"] == route
    assert ["statement", "route", route] in list(csv.reader(io.StringIO(
        cli(*args, "--format", "csv").out)))
    markdown = cli(*args, "--format", "markdown").out
    assert f"**route**: {route}" in markdown and f"route {route}" in markdown
    assert f"% route: {route}" in cli(*args, "--format", "latex").out


@pytest.mark.parametrize("route", ["tight", "paper"])
@pytest.mark.slow
def test_every_sweep_explain_and_solver_output_names_the_route(cli, route):
    sweep = ("sweep", "prop1", "--m", "64,128", "--route", route)
    for fmt in ("table", "markdown", "latex"):
        assert f"prop1 ({route} route): 2 rows" in cli(*sweep, "--format", fmt).out
    assert {r["route"] for r in _csv(cli(*sweep, "--format", "csv").out)} == {route}
    assert {r["route"] for r in json.loads(cli(*sweep, "--format", "json").out)} == {route}
    explain = ("explain", "remark9", "--route", route)
    assert f"route: {route}" in cli(*explain).out
    assert json.loads(cli(*explain, "--format", "json").out)["route"] == route
    assert f"**route**: {route}" in cli(*explain, "--format", "markdown").out
    assert f"% route: {route}" in cli(*explain, "--format", "latex").out
    for solver in (("width", "--target", "100"), ("steps", "--target", "100"),
                   ("width", "--nonvacuous")):
        data = _json(cli, *solver, "--route", route)
        assert data["statement"]["route"] == route
        assert (data["active_drift_bound"] is None) == (route == "paper")
        assert f"route: {route}" in cli(*solver, "--route", route).out


@pytest.mark.parametrize("args", [
    ("lemma2", "--route", "paper"), ("prop2", "--route", "tight"), ("event", "--route", "paper"),
    ("sweep", "lemma3", "--route", "paper"), ("sweep", "prop2", "--route", "tight"),
    ("explain", "lemma5", "--route", "paper"), ("theorem1", "--route", "fast"),
    ("width", "--nonvacuous", "--route", "loose"), ("sweep", "theorem1", "--route", "x"),
])
def test_route_is_refused_where_it_does_not_apply(cli, args):
    run = cli(*args)
    assert run.code == 2
    lines = run.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "--route" in lines[0]
    assert run.out == ""


def test_route_choices_are_shown_in_help(cli):
    for command in ("theorem1", "prop1", "remark9", "sweep", "width", "steps", "explain"):
        run = cli(command, "--help")
        assert run.code == 0 and "tight|paper" in run.out, command


# --------------------------------------------------------------------------- status line


def test_status_line_prints_enough_digits_to_separate_close_numbers():
    data = {"verdict": "guaranteed", "bound": {"min_iterate": 646.0101},
            "constants": {"trivial_bound_B2": 646.0102},
            "conditions": [{"name": "a", "holds": True}, {"name": "b", "holds": True}]}
    assert guarantee_line(data) == (
        "GUARANTEED: all 2 conditions hold; min_iterate 646.0101 < 646.0102 = B², the largest "
        "loss on Ω_ρ")
    data["verdict"] = "vacuous"
    data["bound"]["min_iterate"] = 1291.37
    data["constants"]["trivial_bound_B2"] = 727.27
    assert guarantee_line(data) == "VACUOUS: min_iterate 1291 ≥ 727.3 = B², the largest loss on Ω_ρ"


def test_status_line_names_the_binding_free_bound_and_a_float64_tie():
    data = {"verdict": "guaranteed", "free_bound": "initial_loss_bound",
            "statement": {"precision_digits": 20},
            "bound": {"min_iterate": 8.999999999999999, "average_iterate": 20.0},
            "constants": {"trivial_bound_B2": 18.0, "initial_loss_bound": 9.0},
            "average_iterate_verdict": "vacuous",
            "conditions": [{"name": "a", "holds": True}]}
    line = guarantee_line(data)
    assert line.startswith("GUARANTEED: its condition holds; min_iterate 8.999999999999998 < 9 = "
                           "Y², the loss at initialization")
    assert line.endswith("; average_iterate 20 ≥ B² = 18 (vacuous)")
    data["bound"]["min_iterate"] = 9.0  # equal in float64, below at the working precision
    assert "(equal in float64; the 20-digit evaluation decides)" in guarantee_line(data)


def test_the_prop2_tie_at_huge_m_is_published_with_its_deciding_precision(cli):
    # the smallest informative width at T = 32: min_iterate and Y² are equal in float64 there,
    # and only the 20-digit evaluation puts the bound below Y²; the status line says so
    m = 1494813398247061776
    data = _json(cli, "prop2", "--m", str(m), "--T", "32")
    assert data["verdict"] == "guaranteed" and data["nonvacuous_from_m"] == m
    assert data["bound"]["min_iterate"] == data["constants"]["initial_loss_bound"]
    assert "(equal in float64; the 20-digit evaluation decides)" in guarantee_line(data)
