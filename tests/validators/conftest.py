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

import math
import os
from collections.abc import Callable

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


def _token_samples(n: int, d_s: int, d: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` samples of ``d_s`` Gaussian tokens in R^d of norm about 1, with 0/1 labels."""
    gen = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d_s, d, generator=gen, dtype=torch.float64) / math.sqrt(d)
    y = (torch.rand(n, generator=gen, dtype=torch.float64) > 0.5).to(torch.float64)
    return X, y


@pytest.fixture(scope="session")
def token_samples() -> Callable[..., tuple[torch.Tensor, torch.Tensor]]:
    """``token_samples(n, d_s, d, seed=0)`` → (X, y): the encoder tests' data set, X of shape
    (n, d_s, d) with tokens of norm about 1, y of shape (n,) in {0, 1}."""
    return _token_samples
