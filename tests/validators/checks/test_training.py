"""Theorem 1 and Proposition 1 measured against the calculator's bounds."""

from __future__ import annotations

import math

import pytest
from boundcalc.validators.checks.lemma5 import measure_lemma5
from boundcalc.validators.checks.training import measure_prop1, measure_theorem1
from boundcalc.validators.device import resolve_dtype

from boundcalc.calc.api import evaluate
from boundcalc.inputs.params import validate

SMALL = {"m": 8, "n": 32, "d": 2, "T": 4}
CONTRACT = {"name", "measured", "bound", "ratio", "holds"}


def test_theorem1_projgd_run_against_the_bound_with_the_theorem_step_size():
    recs = measure_theorem1(**SMALL, rho=2.0, nu=1.0, steps=40, seeds=2, teacher_width=1024,
                            anchors=4)
    assert [r["name"] for r in recs] == ["theorem1.min_iterate", "theorem1.average_iterate",
                                         "theorem1_paper.min_iterate",
                                         "theorem1_paper.average_iterate"]
    assert [r["route"] for r in recs] == ["tight", "tight", "paper", "paper"]
    eta_star = evaluate("theorem1", validate(m=8, n=32, d=2, T=4, rho="2", nu="1",
                                             steps=40)).inputs["eta"]
    for rec in recs:
        assert set(rec) >= CONTRACT
        assert rec["holds"] is True and rec["conditions_hold"] is True
        assert rec["guaranteed"] is (rec["verdict"] == "informative")
        assert rec["eta"] == pytest.approx(eta_star, rel=1e-12)
        # the MC teacher's error enters as Remark 9's misspecification: a larger bound
        assert rec["bound"] > rec["bound_realizable"] > rec["measured"] >= 0
        assert rec["terms"]["misspecification"] > 0
        assert math.isfinite(rec["a_posteriori_bound"]) and rec["a_posteriori_holds"]
        key = rec["name"].split(".")[1]
        worst = max(rec["per_seed"], key=lambda s, k=key: s[k])
        assert rec["a_posteriori_bound"] == worst["a_posteriori"][rec["route"]][key]
        assert len(rec["per_seed"]) == 2
        for seed in rec["per_seed"]:
            assert all(r <= 2.0 * (1 + 1e-12) for r in seed["max_radius"])
    min_rec = recs[0]
    assert min_rec["measured"] == max(s["min_iterate"] for s in min_rec["per_seed"])


def test_min_iterate_records_are_judged_against_the_measured_initial_loss_and_say_vacuous():
    # m = 16, n = 64, rho = 2 (the validate defaults' setting): the bounds are hundreds, the
    # run's own R(theta_0) = mean y^2 is ~1e-3, so every bound is vacuous and says so
    recs = measure_theorem1(m=16, n=64, d=4, T=8, rho=2.0, nu=1.0, steps=20, seeds=2,
                            teacher_width=512, anchors=4)
    initial = min(s["initial_loss"] for s in recs[0]["per_seed"])
    for rec in recs:
        key = rec["name"].split(".")[1]
        assert rec["initial_loss"] == initial > 0
        assert rec["trivial_bound_B2"] > rec["initial_loss_bound"] > initial
        if key == "min_iterate":
            # k = 0 is an iterate: the run's measured R(theta_0) is the binding yardstick
            assert (rec["free_bound_key"], rec["free_bound"]) == ("initial_loss", initial)
        else:
            # the average iterate's output is not 0: only B^2 bounds its loss for free
            assert (rec["free_bound_key"], rec["free_bound"]) == ("trivial_bound_B2",
                                                                 rec["trivial_bound_B2"])
        assert rec["bound_over_free_bound"] == pytest.approx(rec["bound"] / rec["free_bound"])
        assert rec["holds"] is True and rec["conditions_hold"] is True
        assert rec["verdict"] == "vacuous" and rec["guaranteed"] is False
        assert rec["a_posteriori_verdict"] == "vacuous"


def test_theorem1_with_a_larger_given_step_trains_and_stays_below_its_bound():
    recs = measure_theorem1(**SMALL, rho=2.0, nu=1.0, steps=40, seeds=1, eta=0.5,
                            teacher_width=1024, anchors=4)
    seed = recs[0]["per_seed"][0]
    assert recs[0]["eta"] == 0.5 and recs[0]["eta_source"] == "given"
    assert seed["min_iterate"] < seed["initial_loss"]
    assert all(r["holds"] for r in recs)


def test_prop1_reports_the_mean_over_minibatch_runs():
    recs = measure_prop1(**SMALL, rho=2.0, nu=1.0, steps=20, seeds=1, batch_size=4, runs=3,
                         eta=0.5, teacher_width=512, anchors=2)
    assert [r["name"] for r in recs] == ["prop1.min_iterate", "prop1.average_iterate",
                                         "prop1_paper.min_iterate", "prop1_paper.average_iterate"]
    for rec in recs:
        assert rec["runs"] == 3 and rec["batch_size"] == 4
        assert rec["holds"] is True
        assert rec["per_seed"][0]["runs"] == 3


def test_training_measurements_reject_rho_below_nu_and_bad_arguments():
    with pytest.raises(ValueError, match="`rho` must be >= `nu`"):
        measure_theorem1(**SMALL, rho=0.5, nu=1.0, steps=2)
    with pytest.raises(ValueError, match="`batch_size`"):
        measure_prop1(**SMALL, steps=2, batch_size=100)
    with pytest.raises(ValueError, match="`seeds`"):
        measure_lemma5(**SMALL, seeds=0)
    with pytest.raises(ValueError, match="`dtype`"):
        resolve_dtype("float16")


def test_a_posteriori_bounds_are_the_theory_expressions_at_measured_values():
    import sympy as sp
    from boundcalc.theory import symbols as S
    from boundcalc.theory.aposteriori import theorem1_a_posteriori
    from boundcalc.validators.checks.training import _a_posteriori, calculator_inputs

    from boundcalc.calc.api import symbol_values
    from boundcalc.calc.evaluator import evaluate_expressions

    inputs = calculator_inputs(m=16, n=64, d=4, T=8, delta=0.05, rho=(2, 2, 2), nu=(1, 1, 1),
                               steps=100, activation="tanh", eta=0.01, misspecification=0.25)
    got = _a_posteriori(inputs, 0.01, 0.25, u0_max=3.1, x_max=0.9, q_max=0.8,
                       route="paper")
    values = {s: float(sp.N(v)) for s, v in symbol_values(inputs).items()}
    values.update({S.eta: 0.01, S.u0_max: 3.1, S.x_max: 0.9, S.q_max: 0.8, S.g_max: 0.81})
    exprs = dict(theorem1_a_posteriori("paper").bound)
    used = set().union(*(e.free_symbols for e in exprs.values()))
    ref = evaluate_expressions(exprs, {s: v for s, v in values.items() if s in used})
    for key, value in ref.items():
        assert got["realizable"][key] == pytest.approx(value, rel=1e-12)
        assert got["misspecified"][key] > value     # ε_mis > 0 only adds


@pytest.mark.parametrize(("module", "function", "cell", "row"),
                         [("training", "measure_theorem1", "theorem1_cell", "theorem1"),
                          ("training", "measure_prop1", "prop1_cell", "prop1"),
                          ("lemma5", "measure_lemma5", "cell", "lemma5")])
def test_each_cell_measures_the_routes_its_falsifier_row_lists(monkeypatch, module, function,
                                                               cell, row):
    """``validate`` reads the routes from the catalog's falsifier row, not from a list of its
    own (the measurement itself is replaced: only its arguments are looked at)."""
    from importlib import import_module

    from boundcalc.theory.catalog import FALSIFIER

    from boundcalc.validation.settings import EXAMPLE_FLAGS, make_settings

    checks = import_module(f"boundcalc.validators.checks.{module}")
    seen = {}
    monkeypatch.setattr(checks, function, lambda **kwargs: seen.update(kwargs) or [])
    getattr(checks, cell)(make_settings(**EXAMPLE_FLAGS), 0)
    assert seen["routes"] == FALSIFIER[row].routes
    assert FALSIFIER[row].routes == (("paper", "tight") if row == "lemma5" else ("tight", "paper"))
