"""Device and dtype resolution of the validators (validators/device.py)."""

from __future__ import annotations

import pytest
import torch
from boundcalc.validators.device import resolve_device


def test_device_resolution():
    assert resolve_device("cpu").type == "cpu"
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA device"):
            resolve_device("cuda")
