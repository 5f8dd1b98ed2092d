"""run_steps: every step runs once, in order, with its progress callback; graphs only on CUDA and
only when not turned off (the CUDA side is in test_cuda_paths.py)."""

from __future__ import annotations

import pytest
import torch
from boundcalc.validators.step_graphs import GRAPHS_ENV, graphs_enabled, run_steps

pytestmark = pytest.mark.needs_torch


def test_graphs_only_on_cuda_and_only_when_not_turned_off(monkeypatch):
    monkeypatch.delenv(GRAPHS_ENV, raising=False)
    assert not graphs_enabled(torch.device("cpu"))
    assert graphs_enabled(torch.device("cuda"))
    monkeypatch.setenv(GRAPHS_ENV, "0")
    assert not graphs_enabled(torch.device("cuda"))
    monkeypatch.setenv(GRAPHS_ENV, "1")
    assert graphs_enabled(torch.device("cuda"))


@pytest.mark.parametrize("steps", [0, 1, 7])
def test_every_step_runs_once_in_order_with_its_callback(steps):
    trace, seen = torch.zeros(max(steps, 1)), []
    k = torch.zeros(1, dtype=torch.int64)

    def step():
        trace.index_copy_(0, k, (k + 10).to(trace.dtype))
        k.add_(1)

    assert run_steps(step, steps, torch.device("cpu"), after=seen.append) == "eager"
    assert int(k) == steps and seen == list(range(1, steps + 1))
    assert trace[:steps].tolist() == [10.0 + i for i in range(steps)]
