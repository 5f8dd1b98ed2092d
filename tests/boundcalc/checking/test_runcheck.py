"""check_run on runs trained outside the project (the ``plain_run`` fixture: plain GD without
projection, or Adam, from a loop written from the model's formula): the regime lines, the lines
against both routes' bounds and their verdicts."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from boundcalc.checking.runcheck import check_run
from boundcalc.checking.runfile import save_run

pytestmark = pytest.mark.needs_torch


def regime(result) -> dict:
    return {r["name"]: r["holds"] for r in result.regime}


def lines(result, name) -> list[dict]:
    return [x for x in result.lines if x["name"] == name]


def test_a_plain_gd_run_inside_omega_rho_is_in_the_regime_and_holds(plain_run, tmp_path):
    path = save_run(tmp_path / "run.npz", **plain_run())
    result = check_run(path, rho=5, nu=1)
    held = regime(result)
    for name in ("m_even", "symmetric_init", "token_norms", "query_norms", "in_omega_rho",
                 "gradient_steps", "every_step_recorded", "head_average_event", "max_event"):
        assert held[name] is True, name
    assert result.violations == []
    assert {x["verdict"] for x in lines(result, "gradient_norm")} == {"holds"}
    assert {(x["route"], x["kind"]) for x in result.lines} == {
        (r, k) for r in ("tight", "paper") for k in ("a-priori", "a-posteriori")}
    traj = result.trajectory
    assert lines(result, "gradient_norm")[0]["measured"] == max(traj["grad_norm_max"])
    assert lines(result, "min_iterate")[0]["measured"] == min(traj["loss"][:-1])  # steps < K
    assert lines(result, "initial_loss")[0]["measured"] == traj["loss"][0]


def test_a_run_leaving_omega_rho_makes_its_lines_not_applicable(plain_run):
    result = check_run(plain_run(), rho="0.001", nu="0.001")
    assert regime(result)["in_omega_rho"] is False
    for x in result.lines:
        if x["name"] in ("gradient_norm", "linearization", "output", "min_iterate"):
            assert x["verdict"].startswith("not applicable (") and "in_omega_rho" in x["verdict"]
    assert result.violations == []


def test_without_rho_the_smallest_containing_rho_is_used(plain_run):
    result = check_run(plain_run(), nu=0)
    rho = result.settings["rho"]
    assert not result.settings["rho_given"]
    assert rho == pytest.approx(result.settings["rho_measured"], rel=1e-15)
    assert rho == pytest.approx(np.max([result.trajectory[f"rho_{b}"] for b in "cuw"], axis=1))
    assert regime(result)["in_omega_rho"] is True


def test_a_non_symmetric_init_is_named_and_its_lines_are_not_applicable(plain_run):
    result = check_run(plain_run(symmetric=False), rho=5)
    assert regime(result)["symmetric_init"] is False
    for x in lines(result, "output") + lines(result, "initial_loss"):
        assert "symmetric_init" in x["verdict"]
    assert {x["verdict"] for x in lines(result, "gradient_norm")} == {"holds"}


def test_an_adam_run_is_not_taken_for_gradient_descent(plain_run):
    result = check_run(plain_run(optimizer="adam"), rho=5)
    assert regime(result)["gradient_steps"] is False
    for x in lines(result, "min_iterate"):
        assert x["verdict"] == "holds" or "gradient_steps" in x["verdict"]


def test_unrecorded_steps_leave_the_step_check_unknown(plain_run):
    result = check_run(plain_run(record=[2, 5, 8]), rho=5)
    held = regime(result)
    assert held["gradient_steps"] is None and held["every_step_recorded"] is False


def _inflate(monkeypatch, factor):
    import boundcalc.validators.checks.run as run_module

    real = run_module.measure_run

    def inflated(*args, **kwargs):
        meas = real(*args, **kwargs)
        meas.grad_norm = meas.grad_norm * factor
        return meas

    monkeypatch.setattr(run_module, "measure_run", inflated)


def test_a_value_above_its_bound_inside_the_regime_is_a_violation(plain_run, monkeypatch):
    _inflate(monkeypatch, 1e6)
    result = check_run(plain_run(), rho=5)
    assert {(x["route"], x["kind"], x["name"]) for x in result.violations} == {
        (r, k, "gradient_norm") for r in ("tight", "paper") for k in ("a-priori", "a-posteriori")}


def test_a_value_above_its_bound_outside_the_regime_is_not_a_violation(plain_run, monkeypatch):
    _inflate(monkeypatch, 1e6)
    arrays = plain_run()
    arrays["X"] = arrays["X"] * 3                       # token norms up to 3
    result = check_run(arrays, rho=50)
    assert regime(result)["token_norms"] is False
    for x in lines(result, "gradient_norm"):
        expected = "violated" if x["kind"] == "a-posteriori" else "not applicable (token_norms"
        assert x["verdict"].startswith(expected)


def test_misspecification_checks_against_remark9(plain_run):
    plain = check_run(plain_run(), rho=5)
    mis = check_run(plain_run(), rho=5, misspecification=0.5)
    assert (plain.settings["statement"], mis.settings["statement"]) == ("theorem1", "remark9")
    assert lines(mis, "min_iterate")[0]["bound"] > lines(plain, "min_iterate")[0]["bound"]


def test_the_report_renders_as_table_json_csv_and_frames(plain_run):
    import json

    result = check_run(plain_run(), rho=5)
    assert "Measured against bound" in result.text()
    assert json.loads(result.text("json"))["violations"] == 0
    assert result.text("csv").splitlines()[0].startswith("route,kind,quantity")
    frames = result.frames()
    assert len(frames["lines"]) == 20 and list(frames["trajectory"]["step"])[:2] == [0, 1]


README_SIZES = "m, d, T, n, eta, K = 32, 8, 16, 200, 0.5, 30"


def test_the_readme_check_example_fits_15_lines_and_trains_saves_and_checks(tmp_path,
                                                                             monkeypatch, capsys):
    import torch

    readme = (Path(__file__).parents[3] / "README.md").read_text(encoding="utf-8")
    code = readme.split("## Check your own run (torch)")[1].split("```python\n")[1].split("```")[0]
    assert len(code.splitlines()) + 2 <= 15            # with its two fences
    assert "boundcalc.save_run(" in code and "boundcalc.check_run(" in code
    small = code.replace(README_SIZES, "m, d, T, n, eta, K = 8, 4, 6, 24, 0.5, 5")
    assert small != code
    monkeypatch.chdir(tmp_path)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        exec(compile(small, "README.md", "exec"), {})
    finally:
        torch.set_num_threads(threads)
    report = capsys.readouterr().out
    for condition in ("symmetric_init", "gradient_steps", "every_step_recorded"):
        assert re.search(rf"^{condition} +yes ", report, re.MULTILINE), condition
    assert "recorded=5 K=5" in report and "0 violation(s) inside the regime" in report
