"""The search space of the adversarial measurements: random configurations, projection onto its
sets, batched model functions, perturbation, argument checks."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from boundcalc.validators.checks.space import (  # noqa: E402
    INIT_VARS,
    INPUT_VARS,
    THETA_VARS,
    batched_forward,
    batched_gradient_norm,
    batched_linearized_output,
    init_of,
    perturb,
    project_,
    queries_of,
    random_configuration,
    theta_of,
)
from boundcalc.validators.model import (  # noqa: E402
    Params,
    forward,
    get_activation,
    gradient_norm,
    linearized_output,
)

TANH = get_activation("tanh")


@pytest.mark.parametrize("symmetric", [False, True])
def test_random_configurations_are_feasible_and_symmetric_init_gives_zero_output(
        symmetric, search_space, assert_feasible):
    space = search_space(symmetric=symmetric, samples=2, label_max=1.5, direction=True)
    cfg = random_configuration(space, 9, seed=3)
    assert_feasible(space, cfg)
    if symmetric:
        f0 = batched_forward(init_of(space, cfg), cfg["X"], queries_of(space, cfg), TANH)
        assert f0.abs().max() < 1e-12
        assert cfg["U0"].shape[1] == space.m // 2


def test_projection_is_idempotent_and_lands_in_every_set(search_space, assert_feasible):
    space = search_space(label_max=0.7, direction=True)
    cfg = random_configuration(space, 5, seed=0)
    big = {k: (v * 50.0 if k != "c0" else v) for k, v in cfg.items()}
    once = project_(space, {k: v.clone() for k, v in big.items()})
    assert_feasible(space, once)
    twice = project_(space, {k: v.clone() for k, v in once.items()})
    for key in once:  # idempotent up to one rounding of the radial rescale
        assert torch.allclose(once[key], twice[key], rtol=1e-14, atol=0), key


def test_projection_leaves_interior_points_unchanged(search_space):
    space = search_space()
    cfg = random_configuration(space, 4, seed=1)
    small = {k: (v * 0.1 if k in THETA_VARS + ("U0", "X", "q") else v) for k, v in cfg.items()}
    out = project_(space, {k: v.clone() for k, v in small.items()})
    for key in small:
        assert torch.equal(out[key], small[key]), key


def test_identical_seeds_give_identical_configurations(search_space):
    space = search_space(samples=2)
    a = random_configuration(space, 6, seed=11)
    b = random_configuration(space, 6, seed=11)
    c = random_configuration(space, 6, seed=12)
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not torch.equal(a["X"], c["X"])


def test_batched_model_functions_equal_the_model_start_by_start(search_space):
    space = search_space(samples=3)
    cfg = random_configuration(space, 4, seed=2)
    theta, theta0 = theta_of(space, cfg), init_of(space, cfg)
    X, q = cfg["X"], queries_of(space, cfg)
    f = batched_forward(theta, X, q, TANH)
    g = batched_gradient_norm(theta, X, q, TANH)
    lin = batched_linearized_output(theta0, theta, X, q, TANH)
    for s in range(4):
        p = Params(theta.c[s], theta.U[s], theta.W[s])
        p0 = Params(theta0.c[s], theta0.U[s], theta0.W[s])
        assert torch.allclose(f[s], forward(p, X[s], q[s], TANH), rtol=1e-13, atol=1e-15)
        assert torch.allclose(g[s], gradient_norm(p, X[s], q[s], TANH), rtol=1e-13)
        assert torch.allclose(lin[s], linearized_output(p0, p, X[s], q[s], TANH), rtol=1e-12,
                              atol=1e-14)


def test_duplicating_tokens_keeps_every_model_quantity(search_space):
    """The T-lifting of the searches: tiling each token k times leaves a, G and hence f, ‖∇f‖
    and f_lin unchanged (softmax weights split evenly over the copies)."""
    space = search_space(T=3)
    cfg = random_configuration(space, 3, seed=4)
    big = dict(cfg)
    big["X"] = cfg["X"].repeat_interleave(4, dim=2)
    for fn in (batched_forward, batched_gradient_norm):
        a = fn(theta_of(space, cfg), cfg["X"], queries_of(space, cfg), TANH)
        b = fn(theta_of(space, big), big["X"], queries_of(space, big), TANH)
        assert torch.allclose(a, b, rtol=1e-12, atol=1e-14)


def test_perturbation_stays_feasible_and_is_seeded(search_space, assert_feasible):
    space = search_space()
    cfg = random_configuration(space, 3, seed=8)
    keys = THETA_VARS + INIT_VARS + INPUT_VARS
    a = perturb(space, cfg, scale=3.0, seed=1, keys=keys)
    b = perturb(space, cfg, scale=3.0, seed=1, keys=keys)
    assert_feasible(space, a)
    assert all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize(
    ("kw", "name"),
    [({"m": 3}, "m"), ({"d": 0}, "d"), ({"T": 0}, "T"), ({"rho": (1.0, -1.0, 1.0)}, "rho"),
     ({"query": "first"}, "query"), ({"u_inf": -1.0}, "u_inf")],
)
def test_search_space_rejects_bad_arguments_by_name(kw, name, search_space):
    with pytest.raises(ValueError, match=f"`{name}`"):
        search_space(**kw)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_projected_blocks_lie_inside_their_ball_in_floating_point(dtype):
    """Rescaling to the radius can round one ulp outside; the projection must not (the bounds are
    claims about the closed domain, which the searches reach with equality)."""
    from boundcalc.validators.checks.space import _shrink

    gen = torch.Generator().manual_seed(11)
    x = (3 * torch.randn(20000, 7, generator=gen, dtype=torch.float64)).to(dtype)
    assert (_shrink(x, 1.0, 1).norm(dim=-1) <= 1.0).all()
    w = (3 * torch.randn(5000, 3, 3, generator=gen, dtype=torch.float64)).to(dtype)
    assert (_shrink(w, 0.7, 2).flatten(1).norm(dim=-1) <= 0.7).all()
    inside = 0.5 * x / x.norm(dim=-1, keepdim=True)
    assert torch.equal(_shrink(inside, 1.0, 1), inside)  # points inside are left unchanged


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_projected_blocks_lie_inside_their_ball_exactly(dtype):
    """The projected blocks are inside the ball as exact numbers, not only as their rounded norm
    reads: Σ x_k² evaluated in exact rational arithmetic is ≤ radius² (plain rescaling to the
    radius fails this for a sizeable fraction of blocks)."""
    from fractions import Fraction

    from boundcalc.validators.checks.space import _shrink

    gen = torch.Generator().manual_seed(12)
    x = (3 * torch.randn(2000, 8, generator=gen, dtype=torch.float64)).to(dtype)

    def exact_sq(rows: torch.Tensor) -> list[Fraction]:
        return [sum(Fraction(v) ** 2 for v in row) for row in rows.double().tolist()]

    assert all(v <= 1 for v in exact_sq(_shrink(x, 1.0, 1)))
    naive = x / x.norm(dim=-1, keepdim=True)
    assert any(v > 1 for v in exact_sq(naive))   # the property is not automatic
    w = (3 * torch.randn(500, 3, 3, generator=gen, dtype=torch.float64)).to(dtype)
    radius = Fraction(float(torch.tensor(0.7, dtype=dtype)))
    assert all(v <= radius**2 for v in exact_sq(_shrink(w, 0.7, 2).flatten(1)))
