"""The gradnorm route's validator: ‖∇R̂‖² ≤ 4L²R̂ measured as √(λ_max(JJᵀ)/n) against L."""

import torch
from boundcalc.validators.checks import gradnorm
from boundcalc.validators.checks.space import (
    SearchSpace,
    batched_gradient_norm,
    queries_of,
    random_configuration,
    theta_of,
)
from boundcalc.validators.model import get_activation

SPACE = SearchSpace(m=4, d=2, T=3, rho=(1.0, 1.0, 1.0), u_inf=2.0, samples=3, symmetric=True,
                    init_event="average")


def _cfg():
    return random_configuration(SPACE, 3, seed=1, dtype=torch.float64)


def test_gram_diagonal_is_the_squared_per_sample_gradient_norm():
    act, cfg = get_activation("tanh"), _cfg()
    gram = gradnorm.gradient_gram(SPACE, cfg, act)
    norms = batched_gradient_norm(theta_of(SPACE, cfg), cfg["X"], queries_of(SPACE, cfg), act)
    assert torch.allclose(torch.diagonal(gram, dim1=-2, dim2=-1), norms**2, rtol=1e-10)


def test_gradient_residual_ratio_is_the_autograd_ratio_at_the_top_eigenvector_residual():
    act, cfg = get_activation("tanh"), _cfg()
    gram = gradnorm.gradient_gram(SPACE, cfg, act)
    ratio = gradnorm.gradient_residual_ratio(SPACE, cfg, act)[:, 0]
    _, vecs = torch.linalg.eigh(gram)
    r = vecs[..., -1]                                              # (S, n) residual vector
    n = r.shape[-1]
    # ‖∇R̂‖² = (4/n²) rᵀ JJᵀ r and R̂ = ‖r‖²/n for labels y = f − r
    grad_sq = 4.0 / n**2 * torch.einsum("sj,sjk,sk->s", r, gram, r)
    loss = (r * r).sum(-1) / n
    assert torch.allclose(torch.sqrt(grad_sq) / (2 * torch.sqrt(loss)), ratio, rtol=1e-10)
    # and no residual vector does better (random ones)
    other = torch.randn(50, *r.shape, dtype=r.dtype, generator=torch.Generator().manual_seed(0))
    g2 = 4.0 / n**2 * torch.einsum("bsj,sjk,bsk->bs", other, gram, other)
    assert bool((torch.sqrt(g2) / (2 * torch.sqrt((other * other).sum(-1) / n))
                 <= ratio + 1e-12).all())


def test_gradient_residual_records_hold_against_the_tight_lipschitz_constant():
    recs = gradnorm.validate_gradnorm(4, 2, 2, "1", starts=2, steps=5, samples=2)
    assert [r["method"] for r in recs] == ["adversarial", "adversarial_unpaired"]
    assert all(r["holds"] and 0 < r["ratio"] <= 1 for r in recs)


def test_a_lowered_lipschitz_bound_is_reported_as_a_violation(monkeypatch):
    real = gradnorm.tight_bounds

    def lowered(**kw):
        out = dict(real(**kw))
        out["lipschitz_L"] *= 0.05
        return out

    monkeypatch.setattr(gradnorm, "tight_bounds", lowered)
    recs = gradnorm.validate_gradnorm(4, 2, 2, "1", starts=2, steps=5, samples=2)
    assert not any(r["holds"] for r in recs)


def test_one_sample_ratio_is_that_sample_gradient_norm():
    space = SearchSpace(m=4, d=2, T=3, rho=(1.0, 1.0, 1.0), u_inf=2.0, samples=1)
    act = get_activation("tanh")
    cfg = random_configuration(space, 2, seed=3, dtype=torch.float64)
    norms = batched_gradient_norm(theta_of(space, cfg), cfg["X"], queries_of(space, cfg), act)
    assert torch.allclose(gradnorm.gradient_residual_ratio(space, cfg, act)[:, 0], norms[:, 0],
                          rtol=1e-10)
