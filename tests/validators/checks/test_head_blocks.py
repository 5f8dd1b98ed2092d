"""The per-head block bounds Φ and H of the tight route against direct adversarial searches."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from boundcalc.validators.checks import head_blocks  # noqa: E402
from boundcalc.validators.checks.head_blocks import (  # noqa: E402
    GRADIENT_PAIRS,
    HESSIAN_PAIRS,
    block_bounds,
    head_block_records,
    head_directional_derivatives,
    search_head_gradient_block,
    search_head_hessian_block,
)
from boundcalc.validators.checks.tight import tight_bounds  # noqa: E402
from boundcalc.validators.model import get_activation  # noqa: E402
from torch.func import jvp  # noqa: E402

SIGMAS = {"tanh": (1.0, 0.769800358919501), "erf": (math.sqrt(2 / math.pi), 0.4839414490382867)}
TINY = {"starts": 4, "steps": 20, "samples": 2}


def _random_head(S=3, n=2, T=3, d=3, seed=0):
    gen = torch.Generator().manual_seed(seed)

    def r(*shape, scale=1.0):
        return scale * torch.randn(*shape, generator=gen, dtype=torch.float64)

    X = r(S, n, T, d)
    X = X / X.norm(dim=-1, keepdim=True).clamp_min(1.0)
    return {"U": r(S, d, scale=1.5), "W": r(S, d, d, scale=2.0), "X": X, "q": r(S, n, d) / 2,
            "h": (r(S, d), r(S, d, d)), "k": (r(S, d), r(S, d, d))}


@pytest.mark.parametrize("activation", ["tanh", "erf"])
def test_closed_form_directional_derivatives_equal_nested_jvp(activation):
    act = get_activation(activation)
    p = _random_head()
    S, n = p["X"].shape[:2]
    got = head_directional_derivatives(p["U"], p["W"], p["X"], p["q"], p["h"], p["k"], act)
    for s in range(S):
        for j in range(n):
            x, q = p["X"][s, j], p["q"][s, j]

            def g(U, W, x=x, q=q):
                a = x.T @ torch.softmax(x @ (W @ q), dim=0)
                return act.fn(U @ a)

            def dg_k(U, W, s=s):
                return jvp(g, (U, W), (p["k"][0][s], p["k"][1][s]))[1]

            primal = (p["U"][s], p["W"][s])
            dk = dg_k(*primal)
            dh = jvp(g, primal, (p["h"][0][s], p["h"][1][s]))[1]
            d2 = jvp(dg_k, primal, (p["h"][0][s], p["h"][1][s]))[1]
            assert float(got[0][s, j]) == pytest.approx(float(dh), rel=1e-11, abs=1e-14)
            assert float(got[1][s, j]) == pytest.approx(float(dk), rel=1e-11, abs=1e-14)
            assert float(got[2][s, j]) == pytest.approx(float(d2), rel=1e-11, abs=1e-14)


@pytest.mark.parametrize("activation", ["tanh", "erf"])
def test_block_bounds_are_the_stated_formulas_with_the_activations_sigmas(activation):
    s1, s2 = SIGMAS[activation]
    phi, hess = block_bounds(activation)
    t = torch.tensor
    for u, au, aw, bu, bw in [(3.18, 2.0, 2.0, 1.0, 1.0), (1.0, 1.0, 0.0, 0.0, 1.0),
                              (0.5, 0.3, 1.7, 2.0, 0.0)]:
        a2, b2 = au**2 + u**2 * aw**2, bu**2 + u**2 * bw**2
        expect_phi = s1 * math.sqrt(a2)
        expect_h = s2 * math.sqrt(a2 * b2) + s1 * (au * bw + aw * bu + 32 / 27 * u * aw * bw)
        args = [t(v, dtype=torch.float64) for v in (u, au, aw, bu, bw)]
        assert float(phi(*args[:3])) == pytest.approx(expect_phi, rel=1e-14)
        # the blocks route's H (derivations.md §2.1, 32/27)
        assert float(block_bounds(activation, False)[1](*args)) == pytest.approx(expect_h,
                                                                                rel=1e-14)
        # the default route's H (§2.2): the attention constant 4/(3√3)
        kappa = 4 / (3 * math.sqrt(3))
        expect_k = s2 * math.sqrt(a2 * b2) + s1 * (au * bw + aw * bu + kappa * u * aw * bw)
        assert float(hess(*args)) == pytest.approx(expect_k, rel=1e-14)


def test_gradient_search_reports_a_violation_of_a_halved_bound():
    act = get_activation("tanh")
    for blocks in [(1.0, 0.0), (2.0, 2.0)]:
        _, info = search_head_gradient_block(2, 2, 3.0, act, blocks, seed=0, scale=0.5, **TINY)
        assert info["measured"] > info["bound"]              # a counterexample to 0.5·Φ
        assert info["h_norms"] == pytest.approx(list(blocks), abs=1e-12)
        _, fair = search_head_gradient_block(2, 2, 3.0, act, blocks, seed=0, **TINY)
        assert 0.6 < fair["measured"] / fair["bound"] <= 1.0


def test_hessian_search_reports_a_violation_of_a_halved_bound():
    act = get_activation("erf")
    for first, second in [((1.0, 0.0), (1.0, 0.0)), ((0.0, 2.0), (0.0, 1.0))]:
        _, info = search_head_hessian_block(2, 2, 3.0, act, first, second, seed=1, scale=0.5,
                                            starts=8, steps=40, samples=2)
        assert info["measured"] > info["bound"]
        assert info["h_norms"] + info["k_norms"] == pytest.approx([*first, *second], abs=1e-12)


def test_halved_bounds_fail_their_records_with_the_counterexample_attached(monkeypatch):
    real = head_blocks.block_bounds

    def halved(activation):
        phi, hess = real(activation)
        return (lambda *a: 0.5 * phi(*a)), (lambda *a: 0.5 * hess(*a))

    monkeypatch.setattr(head_blocks, "block_bounds", halved)
    recs = head_block_records(2, 2, 3.0, get_activation("tanh"), (2.0, 2.0, 2.0),
                              (1.0, 1.0, 1.0), {}, seed=0, **TINY)
    failed = {(r["name"], r["pair"]) for r in recs if not r["holds"]}
    assert {("tight.head_gradient_block", p[0]) for p in GRADIENT_PAIRS} <= failed
    assert ("tight.head_hessian_block", "(1,0),(1,0)") in failed
    assert ("tight.head_hessian_block", "(0,1),(0,1)") in failed
    for r in recs:
        if not r["holds"]:
            point = r["argmax"]
            assert {"U", "W", "X", "q", "h_U", "h_W"} <= set(point)
            assert math.hypot(*point["U"]) <= r["u"] * (1 + 1e-12)


@pytest.mark.parametrize(("m", "d", "T", "rho", "nu", "activation"), [
    (4, 2, 2, "2", "1", "tanh"),
    (4, 2, 2, "2", "1", "erf"),
    (16, 8, 16, "3", "3", "tanh"),        # the sizes of Fig. 1 (d = 8, T = 16)
])
def test_no_head_block_record_exceeds_its_bound(m, d, T, rho, nu, activation):
    bounds = tight_bounds(m=m, d=d, rho=rho, nu=nu, activation=activation)
    radii = tuple(float(rho) for _ in range(3)), tuple(float(nu) for _ in range(3))
    recs = head_block_records(d, T, bounds["u_rms"], get_activation(activation), *radii,
                              {"m": m}, seed=3, **TINY)
    assert len(recs) == len(GRADIENT_PAIRS) + len(HESSIAN_PAIRS) + 1   # + κ's own record
    for r in recs:
        assert r["holds"], r
        assert r["ratio"] == pytest.approx(r["measured"] / r["bound"], rel=1e-14)
        assert r["u"] == bounds["u_rms"] and r["m"] == m
    best = {r["pair"]: r["ratio"] for r in recs if r["name"] == "tight.head_gradient_block"}
    assert best["(1,0)"] > 0.9 and best["(0,1)"] > 0.8        # Φ is attained on each block


def test_a_zero_direction_is_skipped():
    recs = head_block_records(2, 2, 2.0, get_activation("tanh"), (1.0, 1.0, 1.0),
                              (1.0, 0.0, 0.0), {}, seed=0, starts=2, steps=0, samples=1)
    pairs = {(r["name"], r["pair"]) for r in recs}
    assert ("tight.head_gradient_block", "nu") not in pairs
    assert ("tight.head_hessian_block", "rho,nu") not in pairs
    assert len(recs) == len(GRADIENT_PAIRS) + len(HESSIAN_PAIRS) + 1 - 2
