"""Shared setting of the validator tests: one torch thread per test module; Triton's
interpreter where no CUDA device is present.

The validator kernels are many small operations; on the project's small shared CPU machines two
threads lose more to synchronisation than they gain, and one thread also makes float reductions
run in a fixed order.

Triton decides when it is first imported whether its kernels run compiled or interpreted, so the
switch is set here, before any test imports it: without CUDA the GPU kernel's tests
(``validators/kernel/gpu_kernel.py``) then run it on the CPU; with CUDA the variable is left
alone and the same tests run the compiled kernel. Nothing else in the suite uses Triton.
"""

from __future__ import annotations

import os

import pytest
import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
