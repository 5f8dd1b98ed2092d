"""Device and dtype arguments of the validators: one parser for every measurement module.

Example:
    >>> resolve_device("cpu").type, resolve_dtype("float32")
    ('cpu', torch.float32)
"""

from __future__ import annotations

import torch


def resolve_device(device: str | torch.device) -> torch.device:
    """``auto`` → cuda if available else cpu; ``cuda`` without a GPU, or anything other than
    auto, cpu or cuda, is a ValueError naming ``device``."""
    text = str(device)
    if text == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(text)
    except RuntimeError:   # not a device string at all ("gpu"): the same one-line refusal
        raise ValueError(f"`device` must be auto, cpu or cuda, got {device!r}") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("`device` is 'cuda' but no CUDA device is available")
    if dev.type not in ("cpu", "cuda"):
        raise ValueError(f"`device` must be auto, cpu or cuda, got {device!r}")
    return dev


def resolve_dtype(dtype: str | torch.dtype) -> torch.dtype:
    """``float32`` / ``float64`` (or the torch dtypes); anything else is a ValueError."""
    table = {"float32": torch.float32, "float64": torch.float64}
    if isinstance(dtype, torch.dtype) and dtype in table.values():
        return dtype
    if str(dtype) in table:
        return table[str(dtype)]
    raise ValueError(f"`dtype` must be float32 or float64, got {dtype!r}")


__all__ = ["resolve_device", "resolve_dtype"]
