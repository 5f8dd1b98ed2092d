"""ProjGD / ProjSGD: the fused gradient, the update rule, and what the trainer records."""

from __future__ import annotations

import math

import pytest
import torch
from boundcalc.validators import train as train_module
from boundcalc.validators.data.inputs import synthetic_inputs
from boundcalc.validators.model import (
    Params,
    displacement_radii,
    forward,
    get_activation,
    init_params,
    last_token_query,
    loss_and_gradient,
    project,
)
from boundcalc.validators.train import (
    full_loss,
    fused_inputs,
    fused_loss_and_gradient,
    minibatch_indices,
    proj_gd,
    proj_sgd,
    train,
)


def _problem(n=24, m=8, d=3, T=5, seed=0, dtype=torch.float64):
    X = synthetic_inputs(n, T, d, seed=seed + 1, dtype=dtype)
    q = last_token_query(X)
    gen = torch.Generator().manual_seed(seed + 2)
    y = 0.3 * torch.randn(n, generator=gen, dtype=torch.float64).to(dtype)
    return X, q, y, init_params(m, d, seed=seed, dtype=dtype)


def _moved(p: Params, scale=0.3, seed=5) -> Params:
    gen = torch.Generator().manual_seed(seed)
    return Params(*(t + scale * torch.randn(t.shape, generator=gen, dtype=torch.float64).to(t.dtype)
                    for t in p))


@pytest.mark.parametrize("backend", ["torch", "auto"])   # auto: the compiled kernel for tanh
@pytest.mark.parametrize("activation", ["tanh", "erf"])
@pytest.mark.parametrize("n,m,d,T,chunk", [(7, 4, 3, 5, 3), (30, 6, 2, 1, None), (33, 8, 4, 9, 7),
                                           (5, 2, 1, 2, 100)])
def test_fused_gradient_equals_the_closed_form_of_lemma1(activation, n, m, d, T, chunk, backend):
    X, q, y, p0 = _problem(n, m, d, T)
    p = _moved(p0)
    act = get_activation(activation)
    loss, grad, pred = loss_and_gradient(p, X, q, y, act)
    f_loss, f_grad, f_pred = fused_loss_and_gradient(p, X, q, y, act, chunk=chunk,
                                                     backend=backend)
    assert float(f_loss) == pytest.approx(float(loss), rel=1e-12)
    assert torch.allclose(f_pred, pred, rtol=1e-12, atol=1e-15)
    for a, b in zip(f_grad, grad, strict=True):
        assert torch.allclose(a, b, rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize("workers", [2, 3])
def test_fused_gradient_with_several_cpu_workers_equals_one_worker(workers):
    X, q, y, p0 = _problem(n=50)
    p = _moved(p0)
    act = get_activation("erf")
    loss, grad, pred = loss_and_gradient(p, X, q, y, act)
    threads = torch.get_num_threads()
    f_loss, f_grad, f_pred = fused_loss_and_gradient(p, X, q, y, act, chunk=7, workers=workers)
    assert torch.get_num_threads() == threads          # intra-op threads restored
    assert float(f_loss) == pytest.approx(float(loss), rel=1e-12)
    assert torch.allclose(f_pred, pred, rtol=1e-12, atol=1e-15)
    for a, b in zip(f_grad, grad, strict=True):
        assert torch.allclose(a, b, rtol=1e-10, atol=1e-15)
    again = fused_loss_and_gradient(p, X, q, y, act, chunk=7, workers=workers)
    assert all(torch.equal(a, b) for a, b in zip(again[1], f_grad, strict=True))


@pytest.mark.parametrize("backend", ["torch", "auto"])
def test_prebuilt_inputs_give_bitwise_the_same_result_and_are_checked(backend):
    X, q, y, p0 = _problem(n=40, m=6, d=3, T=7)
    p = _moved(p0)
    act = get_activation("tanh")
    inputs = fused_inputs(X, q)
    assert inputs.XT1.shape == (40, 4, 7) and bool((inputs.XT1[:, -1] == 1).all())
    assert torch.equal(inputs.XT1[:, :3], X.transpose(1, 2))
    built = fused_loss_and_gradient(p, X, q, y, act, chunk=6, backend=backend)
    reused = fused_loss_and_gradient(p, X, q, y, act, chunk=6, inputs=inputs, backend=backend)
    assert torch.equal(built[0], reused[0]) and torch.equal(built[2], reused[2])
    assert all(torch.equal(a, b) for a, b in zip(built[1], reused[1], strict=True))
    # non-contiguous X, q (views into larger tensors) give the same numbers
    wide = torch.zeros(40, 7, 5, dtype=X.dtype)
    wide[:, :, 1:4] = X
    strided = fused_loss_and_gradient(p, wide[:, :, 1:4], wide[:, -1, 1:4], y, act, chunk=6,
                                      backend=backend)
    assert all(torch.equal(a, b) for a, b in zip(strided[1], built[1], strict=True))
    with pytest.raises(ValueError, match="`inputs`"):
        fused_loss_and_gradient(p, X, q, y, act, inputs=fused_inputs(X[:39], q[:39]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_fused_softmax_is_stable_for_large_attention_logits(dtype):
    X, q, y, p0 = _problem(n=12, m=4, d=3, T=6, dtype=dtype)
    X = X / X.norm(dim=-1, keepdim=True)              # unit tokens: |z| up to ‖W_i q‖ = 1e3
    q = last_token_query(X)
    p = Params(p0.c, p0.U, 1e3 * p0.W / p0.W.flatten(1).norm(dim=-1).view(-1, 1, 1))
    act = get_activation("erf")
    loss, grad, pred = loss_and_gradient(p, X, q, y, act)
    f_loss, f_grad, f_pred = fused_loss_and_gradient(p, X, q, y, act, chunk=5)
    tol = 1e-4 if dtype == torch.float32 else 1e-9
    assert all(bool(torch.isfinite(t).all()) for t in (*f_grad, f_pred, f_loss))
    assert torch.allclose(f_pred, pred, rtol=tol, atol=tol)
    for a, b in zip(f_grad, grad, strict=True):
        assert torch.allclose(a, b, rtol=tol, atol=tol * float(b.abs().max()))


def test_fused_logits_shifted_by_the_last_token_fall_back_to_the_max_per_chunk():
    # samples 0-3 (the first chunk of 4) get logit spreads of ~10^3 (e_t would overflow when
    # shifted by the last token, so that chunk is redone with the max); the others do not
    X, q, y, p0 = _problem(n=12, m=4, d=3, T=6)
    X = X.clone()
    X[:4] *= 40.0
    q = last_token_query(X)
    act = get_activation("tanh")
    loss, grad, pred = loss_and_gradient(p0, X, q, y, act)
    f_loss, f_grad, f_pred = fused_loss_and_gradient(p0, X, q, y, act, chunk=4, workers=1,
                                                     backend="torch")
    assert float(f_loss) == pytest.approx(float(loss), rel=1e-10)
    assert torch.allclose(f_pred, pred, rtol=1e-10, atol=1e-13)
    for a, b in zip(f_grad, grad, strict=True):
        assert torch.allclose(a, b, rtol=1e-9, atol=1e-12 * float(b.abs().max()))
    inputs = fused_inputs(X, q)
    assert torch.equal(inputs.X_shift, X - X[:, -1:, :])
    z = torch.einsum("ntd,mde,ne->nmt", X, p0.W, q)
    spread = (z.amax(-1) - z[:, :, -1]) / math.log(2.0)
    assert float(spread[:4].max()) > 64 > float(spread[4:].max())   # the case is exercised


@pytest.mark.parametrize("activation", ["tanh", "erf"])
@pytest.mark.parametrize("widths", [None, (2, 4)])
def test_token_moments_path_gives_the_chunked_pass_numbers(monkeypatch, activation, widths):
    # the accelerators' organisation of the fused pass (softmax, then one product with the
    # token moments [x xᵀ, x]), forced on the CPU: the same loss, gradient and predictions as
    # the chunked passes and as the closed form, also where logits are far apart (×40 tokens)
    X, q, y, p0 = _problem(n=30, m=6, d=3, T=7)
    X = X.clone()
    X[:5] *= 40.0
    q = last_token_query(X)
    p = _moved(p0)
    act = get_activation(activation)
    chunked = fused_loss_and_gradient(p, X, q, y, act, chunk=8, backend="torch", widths=widths)
    assert fused_inputs(X, q).moments is None                     # not built on the CPU
    monkeypatch.setattr(train_module, "uses_token_moments", lambda device, d, T: True)
    calls = []
    moments_range = train_module._fused_range_moments
    monkeypatch.setattr(train_module, "_fused_range_moments",
                        lambda *args: calls.append(1) or moments_range(*args))
    inputs = fused_inputs(X, q)
    assert inputs.moments.shape == (30, 7, 12)
    for chunk in (8, None):
        loss, grad, pred = fused_loss_and_gradient(p, X, q, y, act, chunk=chunk, inputs=inputs,
                                                   backend="torch", widths=widths)
        torch.testing.assert_close(loss, chunked[0], rtol=1e-12, atol=0)
        torch.testing.assert_close(pred, chunked[2], rtol=1e-12, atol=1e-14)
        for a, b in zip(grad, chunked[1], strict=True):
            torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12 * float(b.abs().max()))
    assert calls                                                  # the path ran
    if widths is None:
        ref_loss, ref_grad, _ = loss_and_gradient(p, X, q, y, act)
        torch.testing.assert_close(loss, ref_loss, rtol=1e-10, atol=0)
        for a, b in zip(grad, ref_grad, strict=True):
            torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-12 * float(b.abs().max()))


def test_token_moments_are_used_on_accelerators_for_long_sequences_of_small_tokens(
        monkeypatch):
    monkeypatch.delenv("BOUNDCALC_TOKEN_MOMENTS", raising=False)
    largest = train_module.TOKEN_MOMENTS_MAX_D
    assert train_module.uses_token_moments("cuda", 8, 1024)
    assert train_module.uses_token_moments("cuda", 8, 72)            # T = d² + d
    assert not train_module.uses_token_moments("cuda", 8, 71)        # short sequences: chunked
    assert not train_module.uses_token_moments("cuda", 8, 16)
    assert train_module.uses_token_moments("cuda", largest, 10**4)
    assert not train_module.uses_token_moments("cuda", largest + 1, 10**4)
    assert not train_module.uses_token_moments("cpu", 8, 1024)
    monkeypatch.setenv("BOUNDCALC_TOKEN_MOMENTS", "0")
    assert not train_module.uses_token_moments("cuda", 8, 1024)


def test_projgd_repeats_bitwise():
    X, q, y, p0 = _problem(n=70, m=6, d=3, T=5)
    act = get_activation("tanh")
    a, b = (proj_gd(p0, X, q, y, act, steps=4, eta=2.0, rho=1.0, chunk=9) for _ in range(2))
    assert torch.equal(a.loss, b.loss) and torch.equal(a.grad_norm, b.grad_norm)
    assert all(torch.equal(s, t) for s, t in zip(a.params, b.params, strict=True))


def test_fused_loss_without_gradient_is_the_mean_squared_error():
    X, q, y, p0 = _problem()
    p = _moved(p0)
    act = get_activation("tanh")
    loss, grad, pred = fused_loss_and_gradient(p, X, q, y, act, need_grad=False)
    assert grad is None
    assert float(loss) == pytest.approx(float(((forward(p, X, q, act) - y) ** 2).mean()), rel=1e-12)
    assert float(full_loss(p, X, q, y, act, chunk=5)) == pytest.approx(float(loss), rel=1e-12)


def test_projgd_step_is_the_projected_gradient_update():
    X, q, y, p0 = _problem()
    act = get_activation("tanh")
    rho = (0.3, 0.2, 0.1)
    res = proj_gd(p0, X, q, y, act, steps=2, eta=5.0, rho=rho)
    _, g0, _ = loss_and_gradient(p0, X, q, y, act)
    p1 = project(Params(*(t - 5.0 * gt for t, gt in zip(p0, g0, strict=True))), p0, rho)
    _, g1, _ = loss_and_gradient(p1, X, q, y, act)
    p2 = project(Params(*(t - 5.0 * gt for t, gt in zip(p1, g1, strict=True))), p0, rho)
    for a, b in zip(res.params, p2, strict=True):
        assert torch.allclose(a, b, rtol=1e-12, atol=1e-14)
    for a, b in zip(res.average, (p0 + p1).scale(0.5), strict=True):   # (θ_0 + θ_1)/2
        assert torch.allclose(a, b, rtol=1e-12, atol=1e-14)
    assert float(res.loss[1]) == pytest.approx(float(full_loss(p1, X, q, y, act)), rel=1e-12)


def test_projgd_records_losses_of_theta_0_to_theta_K_minus_1():
    X, q, y, p0 = _problem()
    act = get_activation("tanh")
    res = proj_gd(p0, X, q, y, act, steps=15, eta=2.0, rho=1.0)
    assert res.loss.shape == (15,) and res.grad_norm.shape == (15, 3)
    assert res.radius.shape == (15, 3) and res.distance.shape == (15, 3)
    assert float(res.loss[0]) == pytest.approx(float((y**2).mean()), rel=1e-12)  # f(θ(0)) ≡ 0
    assert res.initial_loss == pytest.approx(float(res.loss[0]), rel=1e-12)
    assert res.min_loss == float(res.loss.min())
    assert torch.equal(res.loss, res.batch_loss)
    assert res.average_loss == pytest.approx(float(full_loss(res.average, X, q, y, act)),
                                             rel=1e-12)
    assert res.final_loss < res.initial_loss
    assert float(res.radius[0].abs().max()) == 0.0
    assert float(res.radius.max()) <= 1.0 * (1 + 1e-12)
    assert all(r <= 1.0 * (1 + 1e-12) for r in displacement_radii(res.params, p0))
    _, g0, _ = loss_and_gradient(p0, X, q, y, act)
    assert torch.allclose(res.grad_norm[0], torch.stack([t.norm() for t in g0]), rtol=1e-12)


def test_no_projection_mode_can_leave_omega_rho_and_projection_mode_cannot():
    X, q, y, p0 = _problem()
    act = get_activation("tanh")
    free = proj_gd(p0, X, q, y, act, steps=20, eta=20.0, project=False)
    boxed = proj_gd(p0, X, q, y, act, steps=20, eta=20.0, rho=0.05)
    assert max(displacement_radii(free.params, p0)) > 0.05
    assert max(displacement_radii(boxed.params, p0)) <= 0.05 * (1 + 1e-12)
    assert free.rho is None and free.config["projected"] is False


def test_closed_and_fused_gradients_give_the_same_trajectory():
    X, q, y, p0 = _problem()
    act = get_activation("erf")
    a = proj_gd(p0, X, q, y, act, steps=10, eta=3.0, rho=0.5, gradient="fused")
    b = proj_gd(p0, X, q, y, act, steps=10, eta=3.0, rho=0.5, gradient="closed")
    assert torch.allclose(a.loss, b.loss, rtol=1e-11)
    for s, t in zip(a.params, b.params, strict=True):
        assert torch.allclose(s, t, rtol=1e-11, atol=1e-14)


def test_minibatches_are_distinct_indices_drawn_uniformly():
    gen = torch.Generator().manual_seed(0)
    counts = torch.zeros(10)
    for _ in range(2000):
        idx = minibatch_indices(10, 4, gen)
        assert len(set(idx.tolist())) == 4
        counts[idx] += 1
    # each index appears with probability 4/10: 800 expected, sd ≈ 22
    assert float((counts - 800).abs().max()) < 120


def test_projsgd_is_seeded_and_records_full_and_batch_losses():
    X, q, y, p0 = _problem()
    act = get_activation("tanh")
    a = proj_sgd(p0, X, q, y, act, steps=12, eta=2.0, rho=1.0, batch_size=4, seed=3)
    b = proj_sgd(p0, X, q, y, act, steps=12, eta=2.0, rho=1.0, batch_size=4, seed=3)
    c = proj_sgd(p0, X, q, y, act, steps=12, eta=2.0, rho=1.0, batch_size=4, seed=4)
    assert torch.equal(a.loss, b.loss) and torch.equal(a.params.W, b.params.W)
    assert not torch.equal(a.params.W, c.params.W)
    assert a.config["algorithm"] == "ProjSGD" and a.batch_size == 4
    assert not torch.equal(a.loss, a.batch_loss)
    assert float(a.loss[0]) == pytest.approx(float((y**2).mean()), rel=1e-12)
    assert float(a.radius.max()) <= 1.0 * (1 + 1e-12)
    quiet = proj_sgd(p0, X, q, y, act, steps=3, eta=2.0, rho=1.0, batch_size=4,
                     record_full_loss=False)
    assert bool(torch.isnan(quiet.loss).all()) and math.isnan(quiet.min_loss)


def test_projsgd_step_uses_the_minibatch_gradient():
    X, q, y, p0 = _problem()
    act = get_activation("tanh")
    res = proj_sgd(p0, X, q, y, act, steps=1, eta=4.0, rho=(1.0, 1.0, 1.0), batch_size=5, seed=9)
    idx = minibatch_indices(X.shape[0], 5, torch.Generator().manual_seed(9))
    _, g, _ = loss_and_gradient(p0, X[idx], q[idx], y[idx], act)
    expected = project(Params(*(t - 4.0 * gt for t, gt in zip(p0, g, strict=True))), p0,
                       (1.0, 1.0, 1.0))
    for a, b in zip(res.params, expected, strict=True):
        assert torch.allclose(a, b, rtol=1e-12, atol=1e-14)


def test_float32_training_tracks_float64():
    X, q, y, p0 = _problem()
    X32, q32, y32, p32 = _problem(dtype=torch.float32)
    act = get_activation("tanh")
    a = proj_gd(p0, X, q, y, act, steps=10, eta=2.0, rho=1.0)
    b = proj_gd(p32, X32, q32, y32, act, steps=10, eta=2.0, rho=1.0)
    assert b.loss.dtype == torch.float32
    assert torch.allclose(b.loss.double(), a.loss, rtol=1e-4)


def test_small_problems_train_on_one_thread_and_restore_the_thread_count():
    from boundcalc.validators.train import intra_op_threads, small_work_threads

    assert small_work_threads(100, "cpu") == 1
    assert small_work_threads(1 << 30, "cpu") is None
    assert small_work_threads(100, "cuda") is None
    before = torch.get_num_threads()
    with intra_op_threads(before + 1):
        assert torch.get_num_threads() == before + 1
    assert torch.get_num_threads() == before


def test_train_rejects_bad_arguments_naming_them():
    X, q, y, p0 = _problem()
    act = get_activation("tanh")
    with pytest.raises(ValueError, match="`steps`"):
        train(p0, X, q, y, act, steps=0, eta=1.0, rho=1.0)
    with pytest.raises(ValueError, match="`eta`"):
        train(p0, X, q, y, act, steps=1, eta=-1.0, rho=1.0)
    with pytest.raises(ValueError, match="`rho`"):
        train(p0, X, q, y, act, steps=1, eta=1.0, rho=None)
    with pytest.raises(ValueError, match="`batch_size`"):
        train(p0, X, q, y, act, steps=1, eta=1.0, rho=1.0, batch_size=100)
    with pytest.raises(ValueError, match="`gradient`"):
        train(p0, X, q, y, act, steps=1, eta=1.0, rho=1.0, gradient="magic")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_training_matches_cpu():
    X, q, y, p0 = _problem()
    act = get_activation("tanh")
    cpu = proj_gd(p0, X, q, y, act, steps=5, eta=2.0, rho=1.0)
    gpu = proj_gd(p0.to(device="cuda"), X.cuda(), q.cuda(), y.cuda(), act, steps=5, eta=2.0,
                  rho=1.0)
    assert torch.allclose(gpu.loss, cpu.loss, rtol=1e-10)
    assert gpu.params.W.device.type == "cuda"
