"""Device and dtype resolution of the validators (validators/device.py)."""

from __future__ import annotations

import pytest
import torch
from boundcalc.validators.device import resolve_device, resolve_dtype


def test_device_resolution():
    assert resolve_device("cpu").type == "cpu"
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA device"):
            resolve_device("cuda")


@pytest.mark.parametrize("given", ["float32", "float64", torch.float32, torch.float64])
def test_dtype_names_and_torch_dtypes_resolve_to_the_same_dtype(given):
    name = str(given).removeprefix("torch.")
    assert resolve_dtype(given) is getattr(torch, name)


@pytest.mark.parametrize("given", ["float16", torch.bfloat16, "double", "", None])
def test_a_dtype_other_than_float32_or_float64_is_refused_naming_dtype(given):
    with pytest.raises(ValueError, match="`dtype` must be float32 or float64"):
        resolve_dtype(given)


@pytest.mark.parametrize("given", ["cpu", torch.device("cpu"), "cpu:0"])
def test_cpu_in_any_spelling_resolves_to_a_cpu_device(given):
    assert resolve_device(given).type == "cpu"


@pytest.mark.parametrize("given", ["meta", "gpu", "cuda:x", ""])
def test_a_device_that_is_neither_cpu_nor_cuda_is_refused_naming_device(given):
    with pytest.raises(ValueError, match="`device` must be auto, cpu or cuda"):
        resolve_device(given)
