"""Shared setting of the validator tests: one torch thread per test module.

The validator kernels are many small operations; on the project's small shared CPU machines two
threads lose more to synchronisation than they gain, and one thread also makes float reductions
run in a fixed order.
"""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
