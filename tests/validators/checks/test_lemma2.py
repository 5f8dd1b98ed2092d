"""Lemma 2's measurement: bounds read from the calculator, data records, argument checks."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from boundcalc.validators.checks.adversary import synthetic_inputs  # noqa: E402
from boundcalc.validators.checks.lemma2 import validate_lemma2  # noqa: E402
from boundcalc.validators.model import init_params  # noqa: E402

from boundcalc.calc.api import evaluate  # noqa: E402
from boundcalc.inputs.params import validate  # noqa: E402


def test_bounds_come_from_the_calculator():
    rec = validate_lemma2(4, 2, 2, "2,1,3", starts=2, steps=0, samples=1)
    ev = evaluate("lemma2", validate(m=4, d=2, rho="2,1,3")).to_dict()
    L = [r for r in rec if r["name"] == "lemma2.lipschitz_L"]
    assert all(r["bound"] == ev["bound"]["lipschitz_L"] for r in L)
    assert (L[0]["rho_c"], L[0]["rho_u"], L[0]["rho_w"]) == (2.0, 1.0, 3.0)


def test_data_records_carry_the_measured_geometry_and_both_bounds():
    recs = validate_lemma2(4, 3, 5, "2", starts=2, steps=5, samples=3, seed=2)
    data = [r for r in recs if r["method"] == "data"]
    p0 = init_params(4, 3, seed=2)
    X, q = synthetic_inputs(3, 5, 3, seed=2)
    for r in data:
        assert r["u0_max"] == pytest.approx(float(p0.U.norm(dim=-1).max()))
        assert r["x_max"] == pytest.approx(float(X.norm(dim=-1).max()))
        assert r["q_max"] == pytest.approx(float(q.norm(dim=-1).max()))
        assert r["g_max"] == pytest.approx(r["x_max"] ** 2)
        assert r["g_at_init"] <= r["g_max"] + 1e-12
        assert r["a_posteriori_bound"] <= r["bound"] or not r["on_event"]


@pytest.mark.parametrize(
    ("kw", "name"),
    [({"m": 3}, "m"), ({"starts": 0}, "starts"), ({"steps": -1}, "steps"),
     ({"dtype": "float16"}, "dtype"), ({"samples": 0}, "samples")],
)
def test_measurements_reject_bad_arguments_by_name(kw, name):
    args = {"m": 4, "d": 2, "T": 2, "rho": "1", "starts": 2, "steps": 1, "samples": 1}
    args.update(kw)
    m, d, T, rho = args.pop("m"), args.pop("d"), args.pop("T"), args.pop("rho")
    with pytest.raises(ValueError, match=f"`{name}`"):
        validate_lemma2(m, d, T, rho, **args)
