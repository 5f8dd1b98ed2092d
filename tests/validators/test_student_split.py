"""How one fused pass's heads split into students (validators/student_split.py): each student's
readout scale 1/√m_s and gradient factor 2/(n√m_s), the student of every head, and a readout
matrix whose columns are the students' own outputs."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from boundcalc.validators.student_split import check_widths, per_head, student_split  # noqa: E402

F64 = torch.float64


def test_split_reproduces_each_students_own_readout_and_gradient_factor():
    widths, n = (2, 3, 1), 5
    gen = torch.Generator().manual_seed(0)
    c = torch.randn(6, generator=gen, dtype=F64)
    h = torch.randn(n, 6, generator=gen, dtype=F64)          # σ(pre) of every head, per sample
    split = student_split(c, widths, n)
    assert split.count == 3
    assert split.head_student.tolist() == [0, 0, 1, 1, 1, 2]
    start = 0
    for s, m_s in enumerate(widths):
        heads = slice(start, start + m_s)
        start += m_s
        # student s alone: f = m_s^{-1/2} Σ_{i∈s} c_i σ(·), gradient factor 2/(n√m_s)
        alone = h[:, heads] @ c[heads] / math.sqrt(m_s)
        torch.testing.assert_close((h @ split.readout)[:, s], alone, rtol=1e-13, atol=1e-15)
        torch.testing.assert_close(split.cs[heads], c[heads] / math.sqrt(m_s), rtol=0, atol=0)
        assert split.scale[heads].tolist() == [2.0 / (n * math.sqrt(m_s))] * m_s
        others = torch.ones(6, dtype=torch.bool)
        others[heads] = False
        assert (split.readout[others, s] == 0).all()      # no head feeds another student


def test_one_student_is_the_plain_model_scaling():
    c = torch.tensor([1.0, -1.0, 1.0, -1.0], dtype=F64)
    split = student_split(c, (4,), n=8)
    assert split.count == 1 and split.readout is None and split.head_student is None
    torch.testing.assert_close(split.cs, c / 2.0, rtol=0, atol=0)
    assert split.scale == 2.0 / (8 * 2.0)


def test_per_head_repeats_each_students_value_over_its_heads():
    out = per_head([0.5, -1.0, 3.0], (1, 3, 2), F64, torch.device("cpu"))
    assert out.tolist() == [0.5, -1.0, -1.0, -1.0, 3.0, 3.0] and out.dtype == F64


def test_widths_default_to_one_student_and_must_split_the_heads_exactly():
    assert check_widths(None, 6) == (6,)
    assert check_widths([2, 4], 6) == (2, 4)
    for bad in ((2, 3), (0, 6), (3.5, 2.5), (), (-1, 7)):
        with pytest.raises(ValueError, match="`widths` must be positive integers summing to"):
            check_widths(bad, 6)
