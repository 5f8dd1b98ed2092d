"""``width`` and ``steps``: the answer meets the target, one step less does not."""

from __future__ import annotations

import dataclasses
import json

import mpmath
import pytest

from boundcalc.calc.api import evaluate
from boundcalc.calc.solvers import WIDTH_TERMS
from boundcalc.inputs.params import validate


def _width_terms(inputs, m: int) -> float:
    res = evaluate("theorem1", dataclasses.replace(inputs, m=m), precision=30)
    return float(mpmath.fsum(res.terms[k] for k in WIDTH_TERMS))


def _optimization(inputs, k: int) -> float:
    return float(evaluate("theorem1", dataclasses.replace(inputs, steps=k),
                          precision=30).terms["optimization"])


@pytest.mark.parametrize(("target", "flags"), [
    ("100", ("--n", "1000")),
    ("0.1", ("--n", "1e6")),
    ("5", ("--n", "50", "--d", "2", "--rho", "1.5", "--nu", "1", "--activation", "erf")),
])
def test_width_answer_meets_the_target_and_m_minus_2_does_not(cli, target, flags):
    run = cli("width", "--target", target, *flags, "--format", "json")
    assert run.code == 0, run.err
    data = json.loads(run.out)
    m = data["answer"]["m"]
    assert m % 2 == 0 and m > 2
    inputs = validate(**{k.lstrip("-"): v for k, v in zip(flags[::2], flags[1::2], strict=True)})
    assert _width_terms(inputs, m) <= float(target) < _width_terms(inputs, m - 2)
    assert data["answer"]["width_terms"] == pytest.approx(_width_terms(inputs, m), rel=1e-12)
    assert all(c["holds"] for c in data["conditions"])


def test_width_is_two_when_the_target_is_loose(cli):
    data = json.loads(cli("width", "--target", "1e9", "--format", "json").out)
    assert data["answer"]["m"] == 2
    assert data["answer"]["width_terms_at_m_minus_2"] is None


def test_width_beyond_two_to_the_62_is_infeasible_with_exit_1(cli):
    run = cli("width", "--target", "1e-12")
    assert run.code == 1
    assert run.err.startswith("infeasible:") and len(run.err.strip().splitlines()) == 1


def test_steps_answer_meets_the_target_and_k_minus_1_does_not(cli):
    run = cli("steps", "--target", "0.1", "--m", "4096", "--format", "json")
    assert run.code == 0, run.err
    data = json.loads(run.out)
    k = data["answer"]["K"]
    inputs = validate(m=4096)
    assert _optimization(inputs, k) <= 0.1 < _optimization(inputs, k - 1)
    c = data["answer"]
    closed = (c["transport_norm"] * c["lipschitz_L"] * c["residual_envelope_B"] / 0.1) ** 2
    assert k == pytest.approx(closed, abs=1.0)


def test_steps_at_a_fixed_eta_meets_the_target_and_k_minus_1_does_not(cli):
    data = json.loads(cli("steps", "--target", "1", "--m", "512", "--eta", "1e-5",
                          "--format", "json").out)
    k = data["answer"]["K"]
    inputs = validate(m=512, eta="1e-5")
    assert _optimization(inputs, k) <= 1 < _optimization(inputs, k - 1)
    assert data["answer"]["eta_source"] == "given"


def test_steps_at_a_too_large_eta_is_infeasible_with_exit_1(cli):
    run = cli("steps", "--target", "1", "--m", "512", "--eta", "1e-3")
    assert run.code == 1
    assert "eta L^2 B^2" in run.err and len(run.err.strip().splitlines()) == 1
