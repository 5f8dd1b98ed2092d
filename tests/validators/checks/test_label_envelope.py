"""The tight route's label envelope searches (validators/checks/label_envelope.py): the exact
Gaussian expectation E‖ΛG‖, and the attention factor's search whose exact value at the maximiser
respects the chain E‖GU‖ ≤ ‖G‖_F ≤ tr G ≤ 1 and agrees with its Monte Carlo mean."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from boundcalc.validators.checks.label_envelope import (  # noqa: E402
    expected_norm_exact,
    search_label_attention,
)
from boundcalc.validators.checks.space import SearchSpace  # noqa: E402
from boundcalc.validators.model import get_activation  # noqa: E402


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


def test_the_attention_factor_at_its_maximiser_respects_the_chain_up_to_one():
    space = SearchSpace(m=4, d=3, T=4, rho=(1.0, 1.0, 1.0), u_inf=2.0, symmetric=True)
    res, info = search_label_attention(space, get_activation("tanh"), starts=2, steps=12,
                                       seed=1, dtype=torch.float64, device=torch.device("cpu"),
                                       draws=256)
    assert 0 < info["exact"] <= info["frobenius"] * info["q_norm"] + 1e-12
    assert info["frobenius"] <= info["trace"] + 1e-12 and info["trace"] <= 1 + 1e-12
    assert info["q_norm"] <= 1 + 1e-12
    # the ascent's Monte Carlo mean over 256 draws is the exact expectation up to sampling
    assert info["monte_carlo"] == pytest.approx(info["exact"], rel=0.1)
    assert res.value == pytest.approx(info["monte_carlo"], rel=1e-9)
    # the search gets well above a random start (its supremum is sqrt(2/pi) = 0.798)
    assert 0.5 < info["exact"] <= math.sqrt(2 / math.pi) + 1e-9
