"""The model core (validators/model.py) against autograd and against the definitions it encodes."""

from __future__ import annotations

import math

import pytest
import torch
from boundcalc.validators.data.inputs import synthetic_inputs
from boundcalc.validators.model import (
    Params,
    displacement_radii,
    forward,
    get_activation,
    gradient_norm,
    head_features,
    init_params,
    last_token_query,
    linearized_output,
    loss_and_gradient,
    project,
)
from torch.func import jvp

SHAPES = [(2, 1, 1), (4, 3, 5), (6, 2, 16), (8, 4, 3)]  # (m, d, T)
ACTIVATIONS = ["tanh", "erf"]



def _moved(params: Params, seed: int, scale: float = 0.3) -> Params:
    """θ(0) plus a random displacement, so that f ≠ 0 and every gradient block is non-zero."""
    gen = torch.Generator().manual_seed(seed)
    return Params(*(t + scale * torch.randn(t.shape, generator=gen, dtype=t.dtype) for t in params))


def _problem(m: int, d: int, T: int, n: int = 5, seed: int = 0):
    X = synthetic_inputs(n, T, d, seed=seed + 100)
    q = last_token_query(X)
    y = torch.randn(n, generator=torch.Generator().manual_seed(seed + 200), dtype=torch.float64)
    p0 = init_params(m, d, seed=seed)
    return X, q, y, p0, _moved(p0, seed + 300)


def _rel(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).norm() / b.norm().clamp_min(1e-300))


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("shape", SHAPES)
def test_closed_form_loss_gradient_equals_autograd(activation, shape):
    m, d, T = shape
    act = get_activation(activation)
    X, q, y, _, p = _problem(m, d, T)
    loss, grad, pred = loss_and_gradient(p, X, q, y, act)
    leaves = Params(*(t.clone().requires_grad_() for t in p))
    f = forward(leaves, X, q, act)
    ref_loss = ((f - y) ** 2).mean()
    ref = torch.autograd.grad(ref_loss, list(leaves))
    assert float(loss) == pytest.approx(float(ref_loss.detach()), rel=1e-12)
    assert _rel(pred, f.detach()) < 1e-12
    for name, closed, auto in zip("cUW", grad, ref, strict=True):
        if T == 1 and name == "W":  # one token: the softmax is constant, ∇_W ≡ 0 exactly
            assert float(closed.abs().max()) == 0.0 and float(auto.abs().max()) == 0.0
            continue
        assert _rel(closed, auto) < 1e-8, name


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("shape", SHAPES)
def test_closed_form_gradient_norm_equals_autograd_jacobian(activation, shape):
    m, d, T = shape
    act = get_activation(activation)
    X, q, _, _, p = _problem(m, d, T, n=4)
    leaves = Params(*(t.clone().requires_grad_() for t in p))
    f = forward(leaves, X, q, act)
    rows = [torch.autograd.grad(f[j], list(leaves), retain_graph=True) for j in range(len(f))]
    ref = torch.stack([torch.sqrt(sum((g**2).sum() for g in row)) for row in rows])
    assert _rel(gradient_norm(p, X, q, act), ref) < 1e-8


@pytest.mark.parametrize("shape", SHAPES)
def test_head_features_GU_equals_softmax_covariance_times_U(shape):
    m, d, T = shape
    X, q, _, _, p = _problem(m, d, T, n=3)
    F = head_features(p, X, q, get_activation("tanh"))
    J = torch.diag_embed(F.s) - F.s.unsqueeze(-1) * F.s.unsqueeze(-2)        # (n, m, T, T)
    G = torch.einsum("ntd,nmts,nse->nmde", X, J, X)                          # X J Xᵀ
    assert _rel(F.GU, torch.einsum("nmde,me->nmd", G, p.U)) < 1e-12
    assert float(torch.linalg.matrix_norm(G, ord=2).max()) <= 1 + 1e-12    # Remark 3


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("shape", SHAPES)
def test_output_is_identically_zero_at_symmetric_init(activation, shape):
    m, d, T = shape
    X, q, _, p0, _ = _problem(m, d, T, n=20)
    f = forward(p0, X, q, get_activation(activation))
    assert float(f.abs().max()) <= 1e-15
    assert torch.equal(p0.c[: m // 2], -p0.c[m // 2:])
    assert torch.equal(p0.U[: m // 2], p0.U[m // 2:]) and torch.equal(p0.W[: m // 2], p0.W[m // 2:])


def _far_point(p0: Params, seed: int, scale: float = 3.0) -> Params:
    return _moved(p0, seed, scale)


RHOS = [(0.5, 0.5, 0.5), (2.0, 0.1, 5.0), (0.0, 1.0, 0.0)]


@pytest.mark.parametrize("rho", RHOS)
def test_projection_is_idempotent(rho):
    p0 = init_params(8, 3, seed=1)
    proj = project(_far_point(p0, 2), p0, rho)
    again = project(proj, p0, rho)
    for a, b in zip(proj, again, strict=True):
        assert torch.allclose(a, b, rtol=0, atol=1e-15)


@pytest.mark.parametrize("rho", RHOS)
def test_projection_stays_within_the_radii_of_omega_rho(rho):
    p0 = init_params(8, 3, seed=1)
    for seed in range(5):
        used = displacement_radii(project(_far_point(p0, seed), p0, rho), p0)
        for r_used, r_max in zip(used, rho, strict=True):
            assert r_used <= r_max * (1 + 1e-12) + 1e-15


@pytest.mark.parametrize("rho", RHOS)
def test_projection_is_the_nearest_feasible_point(rho):
    """‖p − Π(p)‖ ≤ ‖p − z‖ and ⟨p − Π(p), z − Π(p)⟩ ≤ 0 (the variational inequality that
    characterises the projection onto a convex set) for random feasible z, interior and boundary."""
    m, d = 8, 3
    p0 = init_params(m, d, seed=1)
    p = _far_point(p0, 7)
    proj = project(p, p0, rho)
    gap = p - proj
    dist = float(gap.norm())
    feasible = []
    for seed in range(40):
        z = project(_far_point(p0, 1000 + seed, scale=3.0 if seed % 2 else 0.05), p0, rho)
        feasible.append(z)
    # points on the segment towards the projection and slight shrinkings of it are feasible too
    feasible += [p0 + (proj - p0).scale(t) for t in (0.0, 0.5, 0.999)]
    for z in feasible:
        assert dist <= float((p - z).norm()) + 1e-12
        assert float(gap.dot(z - proj)) <= 1e-12
    # a point inside Ω_ρ is its own projection (up to the rounding of θ(0) + (θ − θ(0)))
    inside = feasible[1]
    for a, b in zip(project(inside, p0, rho), inside, strict=True):
        assert torch.allclose(a, b, rtol=0, atol=1e-14)


def test_identical_seeds_give_identical_numbers_and_different_seeds_differ():
    a, b, c = (init_params(6, 3, seed=s) for s in (5, 5, 6))
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))
    assert not torch.equal(a.U, c.U)
    X1, X2 = synthetic_inputs(4, 5, 3, seed=9), synthetic_inputs(4, 5, 3, seed=9)
    assert torch.equal(X1, X2)
    act = get_activation("tanh")
    q = last_token_query(X1)
    pa, pb = _moved(a, 3), _moved(b, 3)
    assert torch.equal(forward(pa, X1, q, act), forward(pb, X2, q, act))
    y = torch.zeros(4, dtype=torch.float64)
    ga, gb = loss_and_gradient(pa, X1, q, y, act)[1], loss_and_gradient(pb, X2, q, y, act)[1]
    assert all(torch.equal(x, z) for x, z in zip(ga, gb, strict=True))


def test_init_is_the_same_in_float32_as_a_rounded_float64_init():
    p64, p32 = init_params(4, 2, seed=3), init_params(4, 2, seed=3, dtype=torch.float32)
    assert all(torch.equal(a.float(), b) for a, b in zip(p64, p32, strict=True))


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("shape", SHAPES)
def test_linearized_output_equals_jvp_at_init(activation, shape):
    m, d, T = shape
    act = get_activation(activation)
    X, q, _, p0, p = _problem(m, d, T, n=6)
    f0, tangent = jvp(lambda c, U, W: forward(Params(c, U, W), X, q, act), tuple(p0),
                      tuple(p - p0))
    assert _rel(linearized_output(p0, p, X, q, act), f0 + tangent) < 1e-12
    F0 = head_features(p0, X, q, act)
    assert _rel(linearized_output(p0, p, X, q, act, features0=F0), f0 + tangent) < 1e-12


def test_init_rejects_odd_width_naming_the_argument():
    with pytest.raises(ValueError, match="`m`.*got 3"):
        init_params(3, 2, seed=0)
    with pytest.raises(ValueError, match="`activation`"):
        get_activation("relu")


def test_gradient_norm_is_bounded_by_the_head_bound_at_init():
    """‖∇f‖² ≤ σ₀² + σ₁²(1 + max_i ‖U_i‖²) for |c_i| = 1 (the per-head bound behind Lemma 2)."""
    X, q, _, p0, _ = _problem(16, 4, 8, n=50)
    g = gradient_norm(p0, X, q, get_activation("tanh"))
    u = float(p0.U.norm(dim=-1).max())
    assert float(g.max()) <= math.sqrt(1 + 1 + u**2)
