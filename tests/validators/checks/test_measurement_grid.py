"""The grid of Lemma 2, 3 and 6 measurements: no bound violated on its points, reproducible,
summarised per constant."""

from __future__ import annotations

import itertools
import json

import pytest

torch = pytest.importorskip("torch")

from boundcalc.validators.checks import measurement_grid  # noqa: E402
from boundcalc.validators.checks.lemma2 import validate_lemma2  # noqa: E402
from boundcalc.validators.checks.lemma3 import validate_lemma3  # noqa: E402
from boundcalc.validators.checks.lemma6 import validate_lemma6  # noqa: E402
from boundcalc.validators.checks.measurement_grid import (  # noqa: E402
    GRID,
    grid_jobs,
    run_grid,
    summarize,
)

QUICK = {"starts": 4, "steps": 15, "samples": 2}


# --- the measurements hold on a representative subset of the issue's grid -----------------------

SUBSET = [
    (2, 1, 1, "0.5", "tanh"),
    (4, 2, 2, "2", "erf"),
    (16, 8, 16, "5", "tanh"),
    (64, 1, 128, "0.5", "erf"),
    (2, 8, 2, "5", "erf"),
]


@pytest.mark.parametrize(("m", "d", "T", "rho", "act"), SUBSET)
@pytest.mark.slow
def test_no_lemma_bound_is_violated_on_a_representative_subset(m, d, T, rho, act,
                                                            assert_records):
    records = []
    records += validate_lemma2(m, d, T, rho, activation=act, **QUICK)
    records += validate_lemma3(m, d, T, rho, activation=act, **QUICK)
    records += validate_lemma6(m, d, T, rho, activation=act, **QUICK)
    assert_records(records)
    names = {(r["name"], r["method"]) for r in records}
    assert ("lemma2.lipschitz_L", "hand_built") in names
    assert ("lemma3.eps_lin", "paper_point") in names
    assert ("lemma6.loss_gradient_envelope", "random") in names


_GRID_POINTS = list(itertools.product(GRID["m"], GRID["d"], GRID["T"]))
_GRID_CYCLE = list(itertools.product(GRID["rho"], GRID["activation"]))


@pytest.mark.slow
@pytest.mark.parametrize(("k", "m", "d", "T"),
                         [(k, *point) for k, point in enumerate(_GRID_POINTS)])
def test_no_lemma_bound_is_violated_on_every_m_d_T_of_the_grid(k, m, d, T, assert_records):
    """Every (m, d, T) of the grid once, ρ and activation cycling (reduced effort; the full grid
    with stronger settings is run by `boundcalc.validators.checks.measurement_grid.run_grid`,
    results in docs/validation.md). One test per point, so that parallel test workers share the
    grid."""
    rho, act = _GRID_CYCLE[k % len(_GRID_CYCLE)]
    kw = {"activation": act, "starts": 4, "steps": 10, "samples": 2, "seed": k}
    records = validate_lemma2(m, d, T, rho, lanczos=16, **kw)
    records += validate_lemma3(m, d, T, rho, **kw)
    records += validate_lemma6(m, d, T, rho, **kw)
    assert_records(records)


@pytest.mark.slow
def test_identical_seeds_give_identical_numbers():
    kw = {"starts": 3, "steps": 8, "samples": 2, "seed": 4}
    for fn in (validate_lemma2, validate_lemma3, validate_lemma6):
        a = fn(4, 2, 3, "2", activation="erf", **kw)
        b = fn(4, 2, 3, "2", activation="erf", **kw)
        assert [r["measured"] for r in a] == [r["measured"] for r in b]
    c = validate_lemma3(4, 2, 3, "2", activation="erf", **{**kw, "seed": 5})
    assert [r["measured"] for r in c] != [r["measured"] for r in a]


def test_summary_reports_the_max_ratio_per_constant():
    recs = [{"name": "a", "method": "x", "ratio": r, "holds": r <= 1, "measured": r,
             "bound": 1.0} for r in (0.2, 0.995, 0.5)]
    (row,) = summarize(recs)
    assert row["max_ratio"] == 0.995 and row["within_1pct"] == 1 and row["violations"] == 0


def test_grid_jobs_hold_each_point_once_with_the_event_jobs_first_and_costly_lemmas_next():
    jobs = grid_jobs(ms=(2, 16), ds=(1, 8), Ts=(1, 128), rhos=("2",), activations=("tanh",))
    assert jobs[:4] == [("event", 2, 1), ("event", 2, 8), ("event", 16, 1), ("event", 16, 8)]
    lemmas = jobs[4:]
    assert sorted(lemmas) == sorted(("lemmas", m, d, T, "2", "tanh") for m in (2, 16)
                                    for d in (1, 8) for T in (1, 128))
    assert lemmas[0] == ("lemmas", 16, 8, 128, "2", "tanh")
    assert lemmas[-1] == ("lemmas", 2, 1, 1, "2", "tanh")
    cost = [m * max(T, 4) * (1 + d**2) for _, m, d, T, _, _ in lemmas]
    assert cost == sorted(cost, reverse=True)


def test_a_grid_run_appends_each_job_and_a_rerun_resumes_without_recomputing(tmp_path,
                                                                             monkeypatch):
    path = tmp_path / "records.jsonl"
    kw = {"ms": (2,), "ds": (1,), "Ts": (1,), "rhos": ("2",), "activations": ("tanh",),
          "starts": 1, "steps": 1, "samples": 1, "lanczos": 4, "event_seeds": 4,
          "records_path": str(path)}
    first = run_grid(**kw)
    assert {r["job"] for r in first} == {'["event", 2, 1]', '["lemmas", 2, 1, 1, "2", "tanh"]'}
    assert all(r["holds"] for r in first)
    assert len(path.read_text().splitlines()) == len(first)

    def recompute(job, settings):
        raise AssertionError(f"{job} recomputed")

    monkeypatch.setattr(measurement_grid, "run_job", recompute)
    again = run_grid(**kw)
    assert json.dumps(again) == json.dumps(first)       # NaN fields compare as text
    assert len(path.read_text().splitlines()) == len(first)
