"""The adversarial search machinery: feasibility, batching, ascent, Hessian-vector products."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from boundcalc.validators.checks.ascent import (  # noqa: E402
    ascend,
    flatten_heads,
    head_lanczos,
    rayleigh_quotients,
    unflatten_heads,
)
from boundcalc.validators.checks.space import (  # noqa: E402
    INIT_VARS,
    INPUT_VARS,
    THETA_VARS,
    SearchSpace,
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



def _space(**kw):
    base = {"m": 4, "d": 2, "T": 3, "rho": (0.5, 2.0, 1.0), "u_inf": 2.5}
    base.update(kw)
    return SearchSpace(**base)


def _feasible(space, cfg, tol=1e-12):
    rc, ru, rw = space.radii
    assert cfg["dc"].abs().max() <= rc + tol
    assert cfg["dU"].norm(dim=-1).max() <= ru + tol
    assert cfg["dW"].flatten(-2).norm(dim=-1).max() <= rw + tol
    assert cfg["U0"].norm(dim=-1).max() <= space.u_inf + tol
    assert cfg["X"].norm(dim=-1).max() <= 1 + tol
    if "q" in cfg:
        assert cfg["q"].norm(dim=-1).max() <= 1 + tol
    if "y" in cfg:
        assert cfg["y"].abs().max() <= space.label_max + tol
    if "vc" in cfg:
        norm = torch.sqrt(cfg["vc"] ** 2 + (cfg["vU"] ** 2).sum(-1)
                          + (cfg["vW"] ** 2).sum((-2, -1)))
        assert torch.allclose(norm, torch.ones_like(norm))
    assert set(cfg["c0"].unique().tolist()) <= {-1.0, 1.0}


@pytest.mark.parametrize("symmetric", [False, True])
def test_random_configurations_are_feasible_and_symmetric_init_gives_zero_output(symmetric):
    space = _space(symmetric=symmetric, samples=2, label_max=1.5, direction=True)
    cfg = random_configuration(space, 9, seed=3)
    _feasible(space, cfg)
    if symmetric:
        f0 = batched_forward(init_of(space, cfg), cfg["X"], queries_of(space, cfg), TANH)
        assert f0.abs().max() < 1e-12
        assert cfg["U0"].shape[1] == space.m // 2


def test_projection_is_idempotent_and_lands_in_every_set():
    space = _space(label_max=0.7, direction=True)
    cfg = random_configuration(space, 5, seed=0)
    big = {k: (v * 50.0 if k != "c0" else v) for k, v in cfg.items()}
    once = project_(space, {k: v.clone() for k, v in big.items()})
    _feasible(space, once)
    twice = project_(space, {k: v.clone() for k, v in once.items()})
    for key in once:  # idempotent up to one rounding of the radial rescale
        assert torch.allclose(once[key], twice[key], rtol=1e-14, atol=0), key


def test_projection_leaves_interior_points_unchanged():
    space = _space()
    cfg = random_configuration(space, 4, seed=1)
    small = {k: (v * 0.1 if k in THETA_VARS + ("U0", "X", "q") else v) for k, v in cfg.items()}
    out = project_(space, {k: v.clone() for k, v in small.items()})
    for key in small:
        assert torch.equal(out[key], small[key]), key


def test_identical_seeds_give_identical_configurations():
    space = _space(samples=2)
    a = random_configuration(space, 6, seed=11)
    b = random_configuration(space, 6, seed=11)
    c = random_configuration(space, 6, seed=12)
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not torch.equal(a["X"], c["X"])


def test_batched_model_functions_equal_the_model_start_by_start():
    space = _space(samples=3)
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


def test_duplicating_tokens_keeps_every_model_quantity():
    """The T-lifting of the searches: tiling each token k times leaves a, G and hence f, ‖∇f‖
    and f_lin unchanged (softmax weights split evenly over the copies)."""
    space = _space(T=3)
    cfg = random_configuration(space, 3, seed=4)
    big = dict(cfg)
    big["X"] = cfg["X"].repeat_interleave(4, dim=2)
    for fn in (batched_forward, batched_gradient_norm):
        a = fn(theta_of(space, cfg), cfg["X"], queries_of(space, cfg), TANH)
        b = fn(theta_of(space, big), big["X"], queries_of(space, big), TANH)
        assert torch.allclose(a, b, rtol=1e-12, atol=1e-14)


def test_ascent_reports_only_attained_feasible_values():
    space = _space(samples=2)
    cfg = random_configuration(space, 6, seed=5)

    def objective(c):
        return batched_gradient_norm(theta_of(space, c), c["X"], queries_of(space, c), TANH)

    for method in ("adam", "normalized"):
        res = ascend(space, cfg, objective, free=THETA_VARS + INIT_VARS + INPUT_VARS, steps=25,
                     method=method)
        _feasible(space, res.config)
        again = objective(res.config).amax(dim=1)
        assert torch.allclose(again, res.best, rtol=1e-12)
        start = objective(project_(space, {k: v.clone() for k, v in cfg.items()})).amax(dim=1)
        assert (res.best >= start - 1e-12).all()
        assert res.trace == sorted(res.trace)


@pytest.mark.parametrize("method", ["adam", "normalized"])
def test_ascent_finds_the_maximum_of_a_linear_objective_on_the_balls(method):
    """max ⟨g, ΔU_i⟩ over the ball ‖ΔU_i‖ ≤ ρ_u/√m is ρ_u/√m·‖g‖ (at ΔU_i = radius·g/‖g‖)."""
    space = _space()
    cfg = random_configuration(space, 4, seed=6)
    g = torch.randn(space.m, space.d, dtype=torch.float64,
                    generator=torch.Generator().manual_seed(6))

    def objective(c):
        return (c["dU"] * g).sum(-1)                       # (S, m)

    res = ascend(space, cfg, objective, free=("dU",), steps=200, method=method)
    if method == "adam":
        # Projected Adam's fixed point need not be the constrained maximiser (its step is scaled
        # per coordinate, the projection is Euclidean: seen up to 28 % short for some g), so
        # every search polishes with the normalized method afterwards, as checks.search.drive does.
        res = ascend(space, res.config, objective, free=("dU",), steps=200, method="normalized")
    expected = space.radii[1] * g.norm(dim=-1).max()
    assert float(res.best.max()) == pytest.approx(float(expected), rel=1e-4)


def test_fixed_variables_do_not_move():
    space = _space()
    cfg = random_configuration(space, 3, seed=7)

    def objective(c):
        return batched_gradient_norm(theta_of(space, c), c["X"], queries_of(space, c), TANH)

    res = ascend(space, cfg, objective, free=THETA_VARS, steps=10)
    for key in INIT_VARS + INPUT_VARS:
        assert torch.equal(res.config[key], cfg[key]), key


def test_perturbation_stays_feasible_and_is_seeded():
    space = _space()
    cfg = random_configuration(space, 3, seed=8)
    keys = THETA_VARS + INIT_VARS + INPUT_VARS
    a = perturb(space, cfg, scale=3.0, seed=1, keys=keys)
    b = perturb(space, cfg, scale=3.0, seed=1, keys=keys)
    _feasible(space, a)
    assert all(torch.equal(a[k], b[k]) for k in a)


def _dense_head_hessians(theta, X, q):
    """Dense ∇²_θ f for one start via autograd.functional, cut into per-head blocks."""
    m, d = theta.U.shape
    P = 1 + d + d * d

    def f(flat):
        p = unflatten_heads(flat.view(m, P), d)
        return forward(Params(p.c, p.U, p.W), X, q, TANH).sum()

    flat = flatten_heads(Params(theta.c.unsqueeze(0), theta.U.unsqueeze(0),
                                theta.W.unsqueeze(0)))[0].reshape(-1)
    H = torch.autograd.functional.hessian(f, flat).view(m, P, m, P)
    return H


def test_hessian_of_f_is_block_diagonal_across_heads():
    space = _space(m=4, d=2, T=3)
    cfg = random_configuration(space, 1, seed=9)
    th = theta_of(space, cfg)
    H = _dense_head_hessians(Params(th.c[0], th.U[0], th.W[0]), cfg["X"][0],
                             queries_of(space, cfg)[0])
    for i in range(4):
        for j in range(4):
            if i != j:
                assert H[i, :, j, :].abs().max() < 1e-13


@pytest.mark.parametrize("d", [1, 2])
def test_per_head_lanczos_equals_the_dense_hessian_spectrum(d):
    space = _space(m=4, d=d, T=3, direction=True)
    cfg = random_configuration(space, 3, seed=10)
    th = theta_of(space, cfg)
    q = queries_of(space, cfg)
    lz = head_lanczos(th, cfg["X"], q, TANH, k=space.head_dim, seed=0)
    for s in range(3):
        H = _dense_head_hessians(Params(th.c[s], th.U[s], th.W[s]), cfg["X"][s], q[s])
        for i in range(space.m):
            ev = torch.linalg.eigvalsh(H[i, :, i, :])
            assert float(lz.lam_min[s, i]) == pytest.approx(float(ev[0]), rel=1e-9, abs=1e-11)
            assert float(lz.lam_max[s, i]) == pytest.approx(float(ev[-1]), rel=1e-9, abs=1e-11)


def test_truncated_lanczos_ritz_values_stay_inside_the_spectrum():
    space = _space(m=2, d=3, T=4, direction=True)
    cfg = random_configuration(space, 2, seed=12)
    th, q = theta_of(space, cfg), queries_of(space, cfg)
    lz = head_lanczos(th, cfg["X"], q, TANH, k=4, seed=1)
    for s in range(2):
        H = _dense_head_hessians(Params(th.c[s], th.U[s], th.W[s]), cfg["X"][s], q[s])
        for i in range(2):
            ev = torch.linalg.eigvalsh(H[i, :, i, :])
            assert float(lz.lam_max[s, i]) <= float(ev[-1]) + 1e-10
            assert float(lz.lam_min[s, i]) >= float(ev[0]) - 1e-10


def test_rayleigh_quotients_equal_the_dense_quadratic_form():
    space = _space(m=2, d=2, T=3, direction=True)
    cfg = random_configuration(space, 2, seed=13)
    th, q = theta_of(space, cfg), queries_of(space, cfg)
    v = Params(cfg["vc"], cfg["vU"], cfg["vW"])
    r = rayleigh_quotients(th, cfg["X"], q, v, TANH).detach()
    flat_v = flatten_heads(v)
    for s in range(2):
        H = _dense_head_hessians(Params(th.c[s], th.U[s], th.W[s]), cfg["X"][s], q[s])
        for i in range(2):
            dense = flat_v[s, i] @ H[i, :, i, :] @ flat_v[s, i]
            assert float(r[s, i]) == pytest.approx(float(dense), rel=1e-10, abs=1e-12)


@pytest.mark.parametrize(
    ("kw", "name"),
    [({"m": 3}, "m"), ({"d": 0}, "d"), ({"T": 0}, "T"), ({"rho": (1.0, -1.0, 1.0)}, "rho"),
     ({"query": "first"}, "query"), ({"u_inf": -1.0}, "u_inf")],
)
def test_search_space_rejects_bad_arguments_by_name(kw, name):
    with pytest.raises(ValueError, match=f"`{name}`"):
        _space(**kw)


def test_ascent_rejects_bad_arguments_by_name():
    space = _space()
    cfg = random_configuration(space, 2, seed=0)
    with pytest.raises(ValueError, match="`steps`"):
        ascend(space, cfg, lambda c: c["dc"], free=("dc",), steps=-1)
    with pytest.raises(ValueError, match="`method`"):
        ascend(space, cfg, lambda c: c["dc"], free=("dc",), steps=1, method="lbfgs")
    with pytest.raises(ValueError, match="`starts`"):
        random_configuration(space, 0, seed=0)
    assert math.isfinite(float(ascend(space, cfg, lambda c: c["dc"], free=("dc",),
                                      steps=0).value))


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
