"""Shared check of the adversarial measurements' records: ``assert_records(records)`` asserts
that every record carries the contract's fields, a finite measurement, a positive bound, the
ratio measured / bound, and that its bound (and its a-posteriori bound, where present) holds."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import pytest


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
