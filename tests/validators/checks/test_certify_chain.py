"""The chain of levels of ``validate theorem1 --decompose`` computed from per-step measurements
(validators/checks/certify_chain.py), on a hand-made run whose every measured quantity respects
its bound: each chain runs from the a-priori bound down to the smallest loss, each level is at
most the one above it, a measured part above its bound is the violation it must be, and an
a-posteriori bound that is not theory's recomposition is refused."""

from __future__ import annotations

import math

import numpy as np
import pytest
from boundcalc.validators.checks.certify_chain import (
    CHAIN_ROUTES,
    STAGES,
    chains,
    is_violation,
    level_label,
)

ETA, EPS_MIS = 0.01, 0.02
#: A-posteriori constants of the two families (tight: ε_tay, ε_cf; paper: ε_lin, ε_cf).
TIGHT = {"lipschitz_L": 2.0, "residual_envelope_B": 1.5, "transport_norm": 1.2, "eps_app": 0.1,
         "eps_taylor": 0.05, "eps_cf": 0.04}
PAPER = {"lipschitz_L": 3.0, "residual_envelope_B": 2.0, "transport_norm": 1.2, "eps_app": 0.2,
         "eps_lin": 0.3, "eps_cf": 0.1}


def _bounds(c: dict, first: float, K: int) -> dict[str, float]:
    """Theorem 1's min-iterate bounds from the constants, as theory composes them."""
    L, B, nu = c["lipschitz_L"], c["residual_envelope_B"], c["transport_norm"]
    opt = nu**2 / (4 * ETA * K) + ETA * L**2 * B**2
    eps = first + c["eps_cf"] + c["eps_app"] + EPS_MIS
    return {"min_iterate_linear_drift": opt + B * eps, "min_iterate": opt + B * eps,
            "min_iterate_cauchy_schwarz": (eps / 2 + math.sqrt(eps**2 / 4 + opt)) ** 2}


def _run(**changes) -> dict[str, np.ndarray]:
    """Three steps whose every measured part lies inside its a-posteriori bound."""
    loss = np.array([0.9, 0.7, 0.6])
    abs_r = np.array([0.8, 0.6, 0.5])                 # ≤ √R̂_k and ≤ B of both families
    T, C = np.array([0.03, 0.02, 0.01]), np.array([0.02, 0.02, 0.01])   # ≤ ε_tay, ε_cf
    lin, c_full = np.array([0.2, 0.1, 0.1]), np.array([0.05, 0.05, 0.02])  # ≤ paper ε_lin, ε_cf
    eps_a = TIGHT["eps_app"] + EPS_MIS
    steps = {"loss": loss, "psi": np.array([1.0, 0.8, 0.6]), "noise": np.zeros(3),
             "step_grad_sq": np.array([1.0, 0.8, 0.5]), "slack": np.array([0.0, 0.01, 0.0]),
             "mean_abs_r": abs_r, "max_abs_T": T, "max_abs_C": C, "max_abs_lin": lin,
             "max_abs_C_full": c_full, "mean_abs_r_TC": 0.5 * abs_r * (T + C),
             "mean_abs_r_lin_C_full": 0.5 * abs_r * (lin + c_full),
             "mean_abs_r_AM": 0.5 * abs_r * eps_a}
    steps["mean_abs_r_e"] = steps["mean_abs_r_TC"] + 0.5 * steps["mean_abs_r_AM"]
    steps["mean_r_e"] = -0.5 * steps["mean_abs_r_e"]
    steps.update(changes)
    return steps


def _chains(steps, sgd=False, post_scale=1.0):
    K = len(steps["loss"])
    tight = _bounds(TIGHT, TIGHT["eps_taylor"], K)
    post = {"tight": {"constants": TIGHT, "bound": {k: v * post_scale for k, v in tight.items()}},
            "paper": {"constants": PAPER, "bound": _bounds(PAPER, PAPER["eps_lin"], K)}}
    prior = {f: {k: 1.5 * v for k, v in post[f]["bound"].items()} for f in ("tight", "paper")}
    return chains(run_steps=steps, psi_final=0.5, eta=ETA, sgd=sgd, prior=prior, post=post,
                  eps_mis=EPS_MIS)


def test_each_chain_descends_from_the_a_priori_bound_to_the_smallest_loss():
    rows = _chains(_run())
    assert [r["route"] for r in rows if r["level"] == 0] == list(CHAIN_ROUTES)
    for route in CHAIN_ROUTES:
        chain = [r for r in rows if r["route"] == route]
        assert [r["level"] for r in chain] == list(range(len(chain)))
        assert chain[0]["key"] == "a_priori" and chain[-1]["key"] == "min"
        assert chain[-1]["value"] == pytest.approx(0.6, rel=1e-15)
        assert [r for r in chain if r["key"] == "average"][0]["value"] == \
            pytest.approx(np.mean([0.9, 0.7, 0.6]), rel=1e-15)
        assert chain[1]["value"] == pytest.approx(chain[0]["value"] / 1.5, rel=1e-12)
        assert [STAGES.index(r["stage"]) for r in chain] == \
            sorted(STAGES.index(r["stage"]) for r in chain)
        for above, row in zip(chain, chain[1:], strict=False):
            assert row["above"] == above["value"]
            assert row["ratio"] == pytest.approx(row["value"] / above["value"], rel=1e-12)
            if row["kind"] != "identity":
                assert row["holds"], row
            assert not is_violation(row)
            assert row["label"] == level_label(route, row["key"])


def test_a_taylor_remainder_above_its_bound_is_a_violation_of_the_tight_chains_only():
    rows = _chains(_run(max_abs_T=np.array([0.2, 0.02, 0.01])))     # mean 0.077 > ε_tay = 0.05
    bad = [(r["route"], r["key"]) for r in rows if is_violation(r)]
    assert bad == [("tight-linear", "first_part"), ("tight-cauchy-schwarz", "first_part")]


def test_with_minibatches_the_noise_is_an_expectation_level_never_a_violation():
    rows = _chains(_run(noise=np.array([-0.3, -0.2, -0.4])), sgd=True)
    for route in CHAIN_ROUTES:
        chain = {r["key"]: r for r in rows if r["route"] == route}
        assert chain["average_plus_noise"]["kind"] == "identity"
        assert chain["average_plus_noise"]["value"] == pytest.approx(np.mean([0.9, 0.7, 0.6])
                                                                     - 0.15, rel=1e-12)
        average = chain["average"]
        assert average["kind"] == "expectation" and average["holds"] is False
        assert not is_violation(average)


def test_an_a_posteriori_bound_that_is_not_theorys_recomposition_is_refused():
    with pytest.raises(RuntimeError, match="tight-linear: the recomposed a-posteriori bound"):
        _chains(_run(), post_scale=1.001)


@pytest.mark.parametrize(("row", "violation"), [
    ({"holds": False, "kind": "deterministic"}, True),
    ({"holds": False, "kind": "event"}, True),
    ({"holds": False, "kind": "identity"}, False),
    ({"holds": False, "kind": "expectation"}, False),
    ({"holds": True, "kind": "deterministic"}, False),
    ({"holds": None, "kind": "information"}, False),
])
def test_only_a_failed_deterministic_or_event_step_is_a_violation(row, violation):
    assert is_violation(row) is violation
