"""The label envelope's exact Gaussian expectation (validators/checks/label_envelope.py)."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from boundcalc.validators.checks.label_envelope import expected_norm_exact  # noqa: E402


def test_expected_gaussian_norm_is_exact():
    assert expected_norm_exact([1.0]) == pytest.approx(math.sqrt(2 / math.pi), rel=1e-12)
    assert expected_norm_exact([1.0, 1.0]) == pytest.approx(math.sqrt(math.pi / 2), rel=1e-12)
    assert expected_norm_exact([0.5, 0.5, 0.5]) == pytest.approx(math.sqrt(2 / math.pi),
                                                                 rel=1e-12)  # ½ E χ₃
    lam = torch.tensor([0.6, 0.3, 0.1], dtype=torch.float64)
    g = torch.randn(400000, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    mc = float((g * lam).norm(dim=-1).mean())
    assert expected_norm_exact(lam.tolist()) == pytest.approx(mc, rel=3e-3)
    assert expected_norm_exact([0.0, 0.0]) == 0.0
