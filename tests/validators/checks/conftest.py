"""Shared helpers of the checks' tests, as fixtures that return functions.

``assert_records(records)`` asserts that every record carries the contract's fields, a finite
measurement, a positive bound, the ratio measured / bound, and that its bound (and its
a-posteriori bound, where present) holds. ``search_space(**overrides)`` is a small
:class:`SearchSpace` (m = 4, d = 2, T = 3); ``assert_feasible(space, cfg)`` asserts that a
configuration lies in every set of the search: Ω_ρ's balls, the init ball, the unit token and
query balls, the label interval, a unit direction and ±1 output weights."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import pytest
import torch
from boundcalc.validators.checks.space import SearchSpace


def _assert_records(records: Iterable[dict]) -> None:
    for r in records:
        for key in ("name", "method", "measured", "bound", "ratio", "holds", "m", "d", "seed",
                    "device", "dtype"):
            assert key in r, key
        assert math.isfinite(r["measured"]) and r["bound"] > 0
        assert r["holds"], f"bound violated: {r}"
        assert r["ratio"] == pytest.approx(r["measured"] / r["bound"])
        if "a_posteriori_bound" in r:
            assert r["holds_a_posteriori"], f"a-posteriori bound violated: {r}"


@pytest.fixture
def assert_records() -> Callable[[Iterable[dict]], None]:
    """The record check above, for the measurement tests of this folder."""
    return _assert_records


def _search_space(**kw) -> SearchSpace:
    base = {"m": 4, "d": 2, "T": 3, "rho": (0.5, 2.0, 1.0), "u_inf": 2.5}
    base.update(kw)
    return SearchSpace(**base)


def _assert_feasible(space: SearchSpace, cfg: dict, tol: float = 1e-12) -> None:
    rc, ru, rw = space.radii
    assert cfg["dc"].abs().max() <= rc + tol
    assert cfg["dU"].norm(dim=-1).max() <= ru + tol
    assert cfg["dW"].flatten(-2).norm(dim=-1).max() <= rw + tol
    assert cfg["U0"].norm(dim=-1).max() <= space.u_inf + tol
    assert cfg["X"].norm(dim=-1).max() <= 1 + tol
    if "q" in cfg:
        assert cfg["q"].norm(dim=-1).max() <= 1 + tol
    if "y" in cfg:
        assert cfg["y"].abs().max() <= space.label_max + tol
    if "vc" in cfg:
        norm = torch.sqrt(cfg["vc"] ** 2 + (cfg["vU"] ** 2).sum(-1)
                          + (cfg["vW"] ** 2).sum((-2, -1)))
        assert torch.allclose(norm, torch.ones_like(norm))
    assert set(cfg["c0"].unique().tolist()) <= {-1.0, 1.0}


@pytest.fixture
def search_space() -> Callable[..., SearchSpace]:
    """The small search space above, with keyword overrides."""
    return _search_space


@pytest.fixture
def assert_feasible() -> Callable[..., None]:
    """The feasibility check above."""
    return _assert_feasible
