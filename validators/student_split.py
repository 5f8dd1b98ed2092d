"""How the heads of one fused pass split into independent students (several widths at once).

:func:`boundcalc.validators.train.fused_loss_and_gradient` with ``widths = (m_1, …, m_S)`` reads
its Σ m_s heads as S students side by side: student s's output is m_s^{-1/2} Σ_{i∈s} c_i σ(·), its
residuals and loss are its own, and a head's gradient carries its own student's factor
2/(n√m_s). This module holds that bookkeeping: the per-head readout scale, the per-head gradient
scale, the student of every head and the (m, S) readout matrix.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import NamedTuple

import torch
from torch import Tensor

__all__ = ["StudentSplit", "check_widths", "per_head", "split_constants", "student_split"]


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

    Everything but cs and the readout depends on (widths, n, dtype, device) alone and is built
    once (:func:`split_constants`), so a training loop's per-step split is two element-wise
    operations on the device: no host-to-device copy and no host synchronisation (which also
    lets a CUDA graph capture the step).

    Example:
        >>> split = student_split(torch.ones(6, dtype=torch.float64), (2, 4), n=10)
        >>> split.head_student.tolist(), [round(v, 3) for v in split.cs.tolist()]
        ([0, 0, 1, 1, 1, 1], [0.707, 0.707, 0.5, 0.5, 0.5, 0.5])
    """
    if len(widths) == 1:
        return StudentSplit(widths, c / math.sqrt(widths[0]),
                            2.0 / (n * math.sqrt(widths[0])), None, None)
    head_student, root, scale, member = split_constants(tuple(widths), int(n), c.dtype, c.device)
    cs = c / root
    readout = torch.where(member, cs.unsqueeze(1), torch.zeros((), dtype=c.dtype, device=c.device))
    return StudentSplit(widths, cs, scale, head_student, readout)


@functools.lru_cache(maxsize=32)
def split_constants(widths: tuple[int, ...], n: int, dtype: torch.dtype, device: torch.device
                     ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """(head_student (m,), √m_s per head (m,), 2/(n√m_s) per head (m,), member (m, S) with
    member[i, s] = [head i belongs to student s]) on ``device``: the θ-independent part of a
    split, cached (shared: read, never write, the returned tensors)."""
    head_student = per_head(range(len(widths)), widths, torch.int64, device)
    root = per_head([math.sqrt(w) for w in widths], widths, dtype, device)
    scale = per_head([2.0 / (n * math.sqrt(w)) for w in widths], widths, dtype, device)
    member = head_student.unsqueeze(1) == torch.arange(len(widths), device=device)
    return head_student, root, scale, member


def per_head(values: Sequence[float], widths: Sequence[int], dtype: torch.dtype,
             device: torch.device) -> Tensor:
    """(Σ m_s,) tensor with ``values[s]`` repeated m_s times: a per-student value per head.

    Built on the host and copied once (a repeat on the device would synchronise to learn the
    output size)."""
    host = torch.repeat_interleave(torch.tensor(list(values), dtype=dtype),
                                   torch.tensor(list(widths)))
    return host.to(device)


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
