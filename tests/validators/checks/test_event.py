"""Definition 1's event measured over seeds against δ and the exact χ rate."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from boundcalc.validators.checks.event import validate_event  # noqa: E402
from boundcalc.validators.checks.records import a_priori  # noqa: E402
from boundcalc.validators.model import init_params  # noqa: E402


def test_event_violation_rate_is_at_most_delta_and_matches_the_exact_rate():
    rate, top = validate_event(8, 2, delta="0.3", seeds=400, seed=0)
    assert rate["holds"] and rate["measured"] <= 0.3
    assert rate["exact_rate"] <= 0.3
    # the union bound is loose, the chi-distribution rate is exact: 400 seeds agree with it
    sd = math.sqrt(rate["exact_rate"] * (1 - rate["exact_rate"]) / 400)
    assert abs(rate["measured"] - rate["exact_rate"]) <= 4 * sd + 1e-12
    assert top["bound"] == pytest.approx(a_priori("event", m=8, d=2, rho="1",
                                                  delta="0.3")["bound"]["u_inf"])


def test_event_uses_only_the_independent_half_of_the_heads():
    p = init_params(6, 3, seed=5)
    assert torch.equal(p.U[:3], p.U[3:])
    recs = validate_event(6, 3, seeds=3, seed=5)
    assert recs[1]["measured"] >= float(p.U.norm(dim=-1).max()) - 1e-12
