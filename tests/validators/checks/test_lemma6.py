"""Lemma 6's measurement (validators/checks/lemma6.py): its four records hold against the
calculator's envelopes F and 2LB, a bound below what the searches reach is reported as a violation
with its maximiser, and bad activations and absent devices are refused (Lemma 3's too)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from boundcalc.validators.checks import lemma6  # noqa: E402
from boundcalc.validators.checks.lemma3 import validate_lemma3  # noqa: E402
from boundcalc.validators.checks.lemma6 import validate_lemma6  # noqa: E402

from boundcalc.calc.api import evaluate  # noqa: E402
from boundcalc.inputs.params import validate  # noqa: E402

QUICK = {"starts": 2, "steps": 6, "samples": 2, "draws": 8, "seed": 3}


def test_unknown_activation_and_missing_cuda_are_rejected():
    with pytest.raises(ValueError, match="activation"):
        validate_lemma3(4, 2, 2, "1", activation="relu", starts=1, steps=0)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="`device`"):
            validate_lemma6(4, 2, 2, "1", device="cuda", starts=1, steps=0)


def test_every_record_holds_against_the_calculators_envelopes():
    records = validate_lemma6(4, 2, 3, "2", **QUICK)
    assert [(r["name"], r["method"]) for r in records] == [
        ("lemma6.output_envelope_F", "adversarial"), ("lemma6.output_envelope_F", "data"),
        ("lemma6.loss_gradient_envelope", "random"),
        ("lemma6.loss_gradient_envelope", "adversarial")]
    bound = evaluate("lemma6", validate(m=4, d=2, rho="2")).to_dict()["bound"]
    for r in records:
        key = r["name"].removeprefix("lemma6.")
        assert r["bound"] == bound[key]
        assert 0 < r["measured"] <= r["bound"] and r["holds"]
        assert (r["m"], r["d"], r["T"], r["seed"]) == (4, 2, 3, 3)
    for r in records[1:3]:              # on the seeded init: the a-posteriori envelope holds too
        assert r["holds_a_posteriori"] and r["samples"] == 2
    assert records[2]["draws"] == 8 and records[2]["label_max"] > 0
    assert records[3]["label_max"] == bound["label_envelope_Y"]


def test_an_envelope_below_the_searched_value_is_a_violation_with_its_maximiser(monkeypatch):
    real = lemma6.setup

    def shrunk(*args, **kwargs):
        s = real(*args, **kwargs)
        ev = {**s.ev, "bound": {**s.ev["bound"]}}      # the cached evaluation stays untouched
        ev["bound"]["output_envelope_F"] *= 1e-3
        ev["bound"]["loss_gradient_envelope"] *= 1e-3
        return s._replace(ev=ev)

    monkeypatch.setattr(lemma6, "setup", shrunk)
    records = validate_lemma6(4, 2, 3, "2", **QUICK)
    for r in (records[0], records[3]):
        assert not r["holds"] and r["ratio"] > 1
        assert set(r["argmax"]) >= {"c0", "U0", "W0", "dc", "dU", "dW", "X", "q"}
    monkeypatch.undo()
    assert validate_lemma6(4, 2, 3, "2", **QUICK)[0]["holds"]
