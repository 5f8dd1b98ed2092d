"""Empirical NTK blocks against autograd Jacobians; the Monte Carlo Lemma 4 kernel."""

from __future__ import annotations

import pytest
import torch
from boundcalc.validators.data.inputs import synthetic_inputs
from boundcalc.validators.model import (
    Params,
    forward,
    get_activation,
    init_params,
    last_token_query,
)
from boundcalc.validators.ntk import empirical_ntk, limit_ntk


def _jacobian_blocks(params: Params, X, q, act):
    """Per-sample gradients of f by autograd: one (n, block size) matrix per block c, U, W."""
    leaves = Params(*(t.clone().requires_grad_() for t in params))
    f = forward(leaves, X, q, act)
    rows = [torch.autograd.grad(f[j], list(leaves), retain_graph=True) for j in range(len(f))]
    return [torch.stack([row[b].reshape(-1) for row in rows]) for b in range(3)]


@pytest.mark.parametrize("activation", ["tanh", "erf"])
@pytest.mark.parametrize("shape", [(2, 1, 1), (4, 3, 5), (6, 2, 8)])
def test_empirical_ntk_blocks_equal_jacobian_products(activation, shape):
    m, d, T = shape
    act = get_activation(activation)
    X = synthetic_inputs(5, T, d, seed=1)
    X2 = synthetic_inputs(3, T, d, seed=2)
    q, q2 = last_token_query(X), last_token_query(X2)
    gen = torch.Generator().manual_seed(0)
    p = Params(*(t + 0.2 * torch.randn(t.shape, generator=gen, dtype=t.dtype)
                 for t in init_params(m, d, seed=3)))
    J, J2 = _jacobian_blocks(p, X, q, act), _jacobian_blocks(p, X2, q2, act)
    ntk = empirical_ntk(p, X, q, act, X2, q2)
    for block, a, b in zip((ntk.K_c, ntk.K_u, ntk.K_w), J, J2, strict=True):
        assert torch.allclose(block, a @ b.T, rtol=1e-10, atol=1e-14)
    assert torch.allclose(ntk.K, sum(a @ b.T for a, b in zip(J, J2, strict=True)),
                          rtol=1e-10, atol=1e-14)


def test_empirical_ntk_is_symmetric_positive_semidefinite():
    X = synthetic_inputs(8, 4, 3, seed=0)
    q = last_token_query(X)
    ntk = empirical_ntk(init_params(16, 3, seed=0), X, q, get_activation("tanh"))
    for block in ntk:
        assert torch.allclose(block, block.T, atol=1e-15)
        assert float(torch.linalg.eigvalsh(block).min()) >= -1e-12


def test_limit_kernel_estimates_agree_across_independent_sample_sets():
    """Two independent Monte Carlo estimates differ by at most a few standard errors."""
    X = synthetic_inputs(4, 5, 3, seed=0)
    q = last_token_query(X)
    act = get_activation("tanh")
    a = limit_ntk(X, q, act, samples=4000, seed=1)
    b = limit_ntk(X, q, act, samples=4000, seed=2)
    z = (a.K - b.K).abs() / torch.sqrt(a.stderr**2 + b.stderr**2)
    assert float(z.max()) < 5.0
    assert torch.allclose(a.K, a.K_c + a.K_u + a.K_w, atol=1e-14)
    assert float(a.K_w.abs().max()) > 0       # the attention block is not zero (Lemma 4)


def test_empirical_ntk_at_symmetric_init_is_the_limit_estimator_on_its_own_samples():
    """At θ(0) (c_i² = 1, heads paired) the empirical NTK is the Lemma 4 mean over m/2 samples."""
    X = synthetic_inputs(4, 5, 3, seed=0)
    q = last_token_query(X)
    act = get_activation("erf")
    m = 64
    gen = torch.Generator().manual_seed(7)
    U = torch.randn(m // 2, 3, generator=gen, dtype=torch.float64)
    W = torch.randn(m // 2, 3, 3, generator=gen, dtype=torch.float64)
    p0 = Params(torch.cat([torch.ones(m // 2), -torch.ones(m // 2)]).double(),
                torch.cat([U, U]), torch.cat([W, W]))
    mc = limit_ntk(X, q, act, samples=m // 2, seed=7, chunk=5)
    emp = empirical_ntk(p0, X, q, act)
    for e, l in zip(emp, mc[:4], strict=True):
        assert torch.allclose(e, l, rtol=1e-12, atol=1e-15)


def test_limit_ntk_rejects_too_few_samples():
    X = synthetic_inputs(2, 2, 2, seed=0)
    with pytest.raises(ValueError, match="`samples`"):
        limit_ntk(X, last_token_query(X), get_activation("tanh"), samples=1)
