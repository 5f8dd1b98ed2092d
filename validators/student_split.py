"""How the heads of one fused pass split into independent students (several widths at once).

:func:`boundcalc.validators.train.fused_loss_and_gradient` with ``widths = (m_1, …, m_S)`` reads
its Σ m_s heads as S students side by side: student s's output is m_s^{-1/2} Σ_{i∈s} c_i σ(·), its
residuals and loss are its own, and a head's gradient carries its own student's factor
2/(n√m_s). This module holds that bookkeeping: the per-head readout scale, the per-head gradient
scale, the student of every head and the (m, S) readout matrix.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import torch
from torch import Tensor

__all__ = ["StudentSplit", "check_widths", "per_head", "student_split"]


class StudentSplit(NamedTuple):
    """How the m heads of one pass split into S students (consecutive, of widths m_s).

    cs (m,) = c_i/√m_s; scale = 2/(n√m_s) per head (a float for one student); for S > 1,
    head_student (m,) the student of each head and readout (m, S) the matrix with cs_i in row i,
    column s(i), so that f = h @ readout (one student: f = h @ cs, as always).
    """

    widths: tuple[int, ...]
    cs: Tensor
    scale: Tensor | float
    head_student: Tensor | None
    readout: Tensor | None

    @property
    def count(self) -> int:
        return len(self.widths)


def student_split(c: Tensor, widths: tuple[int, ...], n: int) -> StudentSplit:
    """The :class:`StudentSplit` of readout c (m,) into students of ``widths``, for n samples.

    Example:
        >>> split = student_split(torch.ones(6, dtype=torch.float64), (2, 4), n=10)
        >>> split.head_student.tolist(), [round(v, 3) for v in split.cs.tolist()]
        ([0, 0, 1, 1, 1, 1], [0.707, 0.707, 0.5, 0.5, 0.5, 0.5])
    """
    if len(widths) == 1:
        return StudentSplit(widths, c / math.sqrt(widths[0]),
                            2.0 / (n * math.sqrt(widths[0])), None, None)
    dt, dev = c.dtype, c.device
    head_student = per_head(range(len(widths)), widths, torch.int64, dev)
    root = per_head([math.sqrt(w) for w in widths], widths, dt, dev)
    scale = per_head([2.0 / (n * math.sqrt(w)) for w in widths], widths, dt, dev)
    cs = c / root
    readout = torch.zeros(c.shape[0], len(widths), dtype=dt, device=dev)
    readout[torch.arange(c.shape[0], device=dev), head_student] = cs
    return StudentSplit(widths, cs, scale, head_student, readout)


def per_head(values: Sequence[float], widths: Sequence[int], dtype: torch.dtype,
             device: torch.device) -> Tensor:
    """(Σ m_s,) tensor with ``values[s]`` repeated m_s times: a per-student value per head."""
    return torch.repeat_interleave(torch.tensor(list(values), dtype=dtype, device=device),
                                   torch.tensor(list(widths), device=device))


def check_widths(widths, m: int) -> tuple[int, ...]:
    """``widths`` checked to split m heads into students (None: one student of width m)."""
    if widths is None:
        return (m,)
    out = tuple(int(w) for w in widths)
    if not out or any(w < 1 or w != v for w, v in zip(out, widths, strict=True)) \
            or sum(out) != m:
        raise ValueError(f"`widths` must be positive integers summing to the {m} heads, "
                         f"got {widths!r}")
    return out
