"""Lemma 5's approximation error measured over seeds against δ, on the paper's and the tight
route (validators/checks/lemma5.py)."""

from __future__ import annotations

import pytest
from boundcalc.validators.checks.lemma5 import measure_lemma5

from boundcalc.calc.api import evaluate
from boundcalc.inputs.params import validate

SMALL = {"m": 8, "n": 32, "d": 2, "T": 4}
CONTRACT = {"name", "measured", "bound", "ratio", "holds"}


@pytest.mark.parametrize("activation", ["tanh", "erf"])
def test_lemma5_violation_rate_over_200_seeds_is_at_most_delta(activation):
    (rec,) = measure_lemma5(**SMALL, nu=(1.0, 2.0, 1.5), delta=0.05, activation=activation,
                            seeds=200, teacher_width=4096, anchors=8)
    assert set(rec) >= CONTRACT
    assert rec["seeds"] == 200
    assert rec["violation_rate"] <= 0.05
    assert rec["holds"] is True
    assert rec["violation_rate_vs_mc_teacher"] <= rec["violation_rate"]   # conservative count
    assert rec["ratio"] == pytest.approx(rec["measured"] / rec["bound"], rel=1e-12)
    ref = evaluate("lemma5", validate(m=8, n=32, d=2, delta="0.05", nu="1.0,2.0,1.5",
                                      activation=activation)).bound["eps_app"]
    assert rec["bound"] == pytest.approx(float(ref), rel=1e-12)
    assert 0 < rec["teacher_mc_error_bound"] < rec["bound"]


def test_lemma5_measurement_is_reproducible():
    a = measure_lemma5(**SMALL, seeds=[3, 4], teacher_width=256, anchors=2)[0]
    b = measure_lemma5(**SMALL, seeds=[3, 4], teacher_width=256, anchors=2)[0]
    assert a["measured"] == b["measured"] and a["mean_error"] == b["mean_error"]


def test_d_free_approximation_error_rate_and_its_falsifiability(monkeypatch):
    from boundcalc.validators.checks import lemma5

    kw = {"m": 8, "n": 32, "d": 4, "T": 4, "nu": (1.0, 2.0, 1.5), "seeds": 100,
          "teacher_width": 1024, "anchors": 4}
    paper, tight = measure_lemma5(**kw, routes=("paper", "tight"))
    assert (paper["name"], tight["name"]) == ("lemma5", "tight.eps_app")
    assert tight["route"] == "tight" and tight["holds"] and tight["violation_rate"] <= 0.05
    assert tight["measured"] == paper["measured"] and tight["bound"] < paper["bound"]
    ref = evaluate("theorem1", validate(m=8, n=32, d=4, nu="1.0,2.0,1.5"))
    assert tight["bound"] == pytest.approx(float(ref.constants["eps_app"]), rel=1e-12)
    # a bound below most measured errors (after the teacher's ε_T) is a violation rate > δ
    real = lemma5.evaluate
    too_small = tight["teacher_mc_error_bound"] + 0.5 * tight["mean_error"]

    class Scaled:
        def __init__(self, ev):
            self.bound, self.constants = ev.bound, dict(ev.constants)
            self.constants["eps_app"] = too_small

    monkeypatch.setattr(lemma5, "evaluate",
                        lambda name, inputs: Scaled(real(name, inputs)) if name == "theorem1"
                        else real(name, inputs))
    (bad,) = measure_lemma5(**kw, routes=("tight",))
    assert bad["violation_rate"] > 0.05 and not bad["holds"]
