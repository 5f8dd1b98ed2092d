"""The falsifier of H's attention constant κ = 4/(3√3) (derivations.md §2.2): the search reaches
κ (the constant is attained), so a κ lowered by 1 % is reported as a violation."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from boundcalc.validators.checks import head_blocks  # noqa: E402
from boundcalc.validators.checks.head_blocks import (  # noqa: E402
    attention_third_moment,
    head_block_records,
    head_directional_derivatives,
    search_attention_third_moment,
    third_moment_constant,
)
from boundcalc.validators.model import get_activation  # noqa: E402

SEARCH = {"starts": 16, "steps": 80}


def test_the_constant_is_the_theorys_kappa():
    assert third_moment_constant() == pytest.approx(4 / (3 * math.sqrt(3)), rel=1e-15)


def test_the_attention_term_is_the_second_derivative_of_z_without_its_u_blocks():
    # D²z[h, k] with h_U = k_U = 0 is UᵀD²a[h_W, k_W], and D²g = σ''DzDz + σ'D²z
    gen = torch.Generator().manual_seed(0)

    def r(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    U, W, X, q = r(3, 4), r(3, 4, 4), r(3, 2, 5, 4) / 2, r(3, 2, 4) / 2
    hw, kw = r(3, 4, 4), r(3, 4, 4)
    zero = torch.zeros(3, 4, dtype=torch.float64)
    act = get_activation("tanh")
    *_, d2g = head_directional_derivatives(U, W, X, q, (zero, hw), (zero, kw), act)
    logits = torch.einsum("sntd,sde,sne->snt", X, W, q)
    a = torch.einsum("snt,sntd->snd", torch.softmax(logits, -1), X)
    z = torch.einsum("snd,sd->sn", a, U)
    dz_h = head_directional_derivatives(U, W, X, q, (zero, hw), (zero, hw), act)[0] / act.d1(z)
    dz_k = head_directional_derivatives(U, W, X, q, (zero, kw), (zero, kw), act)[0] / act.d1(z)
    expect = (d2g - act.d2(z) * dz_h * dz_k) / act.d1(z)
    got = attention_third_moment(U, W, X, q, hw, kw)
    assert torch.allclose(got, expect, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(("d", "T"), [(2, 2), (3, 4)])
def test_the_search_reaches_kappa_and_never_exceeds_it(d, T):
    _, info = search_attention_third_moment(d, T, 2.0, seed=d, **SEARCH)
    assert 0.99 < info["measured"] / info["bound"] <= 1.0
    assert info["U_norm"] <= 2.0 * (1 + 1e-12)


def test_a_kappa_lowered_by_one_percent_is_reported_as_a_violation():
    _, info = search_attention_third_moment(2, 2, 2.0, seed=2, scale=0.99, **SEARCH)
    assert info["measured"] > info["bound"]


def test_the_record_fails_with_its_counterexample_when_kappa_is_lowered(monkeypatch):
    real = head_blocks.third_moment_constant
    monkeypatch.setattr(head_blocks, "third_moment_constant", lambda: 0.99 * real())
    recs = head_block_records(2, 2, 2.0, get_activation("tanh"), (2.0, 2.0, 2.0),
                              (1.0, 1.0, 1.0), {}, seed=0, starts=16, steps=80, samples=1)
    rec = next(r for r in recs if r["name"] == "tight.attention_third_moment")
    assert not rec["holds"] and rec["ratio"] > 1.0
    assert {"U", "W", "X", "q", "h_W", "k_W"} <= set(rec["argmax"])


def test_the_record_holds_at_the_true_constant():
    recs = head_block_records(2, 2, 2.0, get_activation("tanh"), (2.0, 2.0, 2.0),
                              (1.0, 1.0, 1.0), {"m": 4}, seed=0, starts=16, steps=80, samples=1)
    rec = next(r for r in recs if r["name"] == "tight.attention_third_moment")
    assert rec["holds"] and rec["method"] == "adversarial" and rec["route"] == "tight"
    assert rec["ratio"] > 0.99
