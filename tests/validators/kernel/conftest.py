"""Triton's interpreter for the GPU kernel's tests where no CUDA device is present.

Triton decides at import whether its language runs compiled or interpreted, so the switch must be
set before anything imports triton: here, at collection. Without CUDA nothing else in the suite
uses Triton; with CUDA the variable is left alone and the same tests run the compiled kernel.
"""

from __future__ import annotations

import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")
