"""What every adversarial measurement shares (validators/checks/records.py): the a-priori and
a-posteriori bounds of Lemmas 2, 3 and 6, a record's ratio and its no-tolerance verdict, data
records off the init event, the counterexample attached to a failing record, and the arguments
refused by name."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from boundcalc.validators.checks.records import (  # noqa: E402
    a_posteriori,
    a_priori,
    attach_argmax,
    check_args,
    cpu_threads,
    data_record,
    record,
    rho_text,
)
from boundcalc.validators.checks.space import SearchSpace, random_configuration  # noqa: E402

from boundcalc.inputs.params import validate  # noqa: E402


def test_a_posteriori_equals_a_priori_at_the_worst_case_geometry():
    for act in ("tanh", "erf"):
        prior2 = a_priori("lemma2", m=16, d=4, rho="2,1,3", activation=act)
        prior3 = a_priori("lemma3", m=16, d=4, rho="2,1,3", activation=act)
        prior6 = a_priori("lemma6", m=16, d=4, rho="2,1,3", activation=act)
        post = a_posteriori(m=16, d=4, rho="2,1,3", activation=act,
                            u0_max=prior2["constants"]["u_inf"], x_max=1.0, q_max=1.0, g_max=1.0)
        assert post["lipschitz_L"] == pytest.approx(prior2["bound"]["lipschitz_L"], rel=1e-12)
        assert post["smoothness_beta"] == pytest.approx(prior2["bound"]["smoothness_beta"],
                                                        rel=1e-12)
        assert post["eps_lin"] == pytest.approx(prior3["bound"]["eps_lin"], rel=1e-12)
        assert post["output_envelope_F"] == pytest.approx(prior6["bound"]["output_envelope_F"],
                                                          rel=1e-12)
        assert post["loss_gradient_envelope"] == pytest.approx(
            prior6["bound"]["loss_gradient_envelope"], rel=1e-12)


@pytest.mark.parametrize(("measured", "bound", "ratio", "holds"), [
    (1.0, 4.0, 0.25, True),
    (4.0, 4.0, 1.0, True),                        # equality holds
    (math.nextafter(4.0, 5.0), 4.0, None, False),   # one ulp above fails: no tolerance
    (-1.0, 0.0, 0.0, True),                       # a bound of 0: ratio 0 when measured <= 0
    (0.5, 0.0, math.inf, False),                  # ... and inf when above it
])
def test_a_records_ratio_and_verdict_follow_measured_over_bound_without_tolerance(
        measured, bound, ratio, holds):
    rec = record("lemma2.lipschitz_L", "adversarial", measured, bound, {"m": 4, "seed": 1},
                 steps=7)
    assert rec["holds"] is holds
    assert rec["ratio"] == (measured / bound if ratio is None else ratio)
    assert (rec["name"], rec["method"], rec["m"], rec["seed"], rec["steps"]) == \
        ("lemma2.lipschitz_L", "adversarial", 4, 1, 7)


def test_a_data_record_off_the_init_event_is_no_counterexample_but_keeps_its_a_posteriori_verdict():
    geo = {"u0_max": 1.2, "x_max": 0.9, "q_max": 1.0, "g_max": 0.81}
    on = data_record("lemma2.lipschitz_L", 3.0, 2.0, 2.5, {}, geo, True, 8)
    assert on["holds"] is False and "note" not in on                # on the event: a violation
    assert on["holds_a_posteriori"] is False and on["ratio_a_posteriori"] == 3.0 / 2.5
    off = data_record("lemma2.lipschitz_L", 3.0, 2.0, 2.5, {}, geo, False, 8)
    assert off["holds"] is True and "not guaranteed" in off["note"]
    assert off["holds_a_posteriori"] is False and off["ratio"] == 1.5
    assert off["u0_max"] == 1.2 and off["samples"] == 8 and off["on_event"] is False


def test_a_failing_record_carries_its_maximiser_and_a_holding_one_only_when_kept():
    space = SearchSpace(m=4, d=2, T=3, rho=(1.0, 1.0, 1.0), u_inf=2.0)
    cfg = random_configuration(space, 1, seed=0)
    failing = attach_argmax(record("x", "adversarial", 2.0, 1.0, {}), space, cfg, keep=False)
    assert failing["argmax"]["X"] == cfg["X"][0].tolist()
    assert failing["argmax"]["dU"] == cfg["dU"][0].tolist()
    assert len(failing["argmax"]["c0"]) == 4
    holding = attach_argmax(record("x", "adversarial", 0.5, 1.0, {}), space, cfg, keep=False)
    assert "argmax" not in holding
    assert "argmax" in attach_argmax(dict(holding), space, cfg, keep=True)


@pytest.mark.parametrize("rho", [2, 2.5, "0.5", (1, 2.0, 3), ["1", "2", "3"]])
def test_rho_text_is_parsed_by_the_calculator_into_the_radii_given(rho):
    parsed = validate(m=4, rho=rho_text(rho)).rho
    expected = (rho,) * 3 if not isinstance(rho, (tuple, list)) else tuple(rho)
    assert tuple(float(r) for r in parsed) == tuple(float(r) for r in expected)


@pytest.mark.parametrize(("kw", "name"), [
    ({"m": 2.0}, "m"), ({"m": True}, "m"), ({"d": 0}, "d"), ({"T": 0}, "T"),
    ({"starts": 0}, "starts"), ({"steps": -1}, "steps"), ({"samples": 0}, "samples"),
    ({"seed": 1.5}, "seed"), ({"m": 6, "d": 0}, "d"), ({"activation": "relu"}, "activation"),
])
def test_measurement_arguments_are_refused_by_name(kw, name):
    args = {"m": 4, "d": 2, "T": 2, "starts": 1, "steps": 0, "seed": 0, "activation": "tanh"}
    args.update(kw)
    with pytest.raises(ValueError, match=f"`{name}`"):
        check_args(**args)


def test_cpu_threads_restores_the_thread_count_even_after_an_error():
    before = torch.get_num_threads()
    with pytest.raises(RuntimeError, match="inside"), cpu_threads(torch.device("cpu"), 2):
        assert torch.get_num_threads() == 2
        raise RuntimeError("inside")
    assert torch.get_num_threads() == before
