"""measure_run against a trajectory from a plain torch loop written here from the model's formula
(not the project's model), every measured value recomputed by autograd."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from boundcalc.validators.checks.run import measure_run, sample_block  # noqa: E402

from boundcalc.runfile import run_from_arrays  # noqa: E402


def plain_forward(c, U, W, X, q):
    """f(X; θ) = m^{-1/2} Σ_i c_i tanh(U_iᵀ X softmax(Xᵀ W_i q)), tokens as the rows of X."""
    logits = torch.einsum("nta,mab,nb->nmt", X, W, q)
    attended = torch.einsum("nmt,nta->nma", torch.softmax(logits, dim=-1), X)
    return (c * torch.tanh((attended * U).sum(-1))).sum(-1) / math.sqrt(c.shape[0])


def plain_run(*, optimizer="gd", symmetric=True, m=6, d=3, T=4, n=9, steps=8, eta=0.05,
              seed=0, record=None):
    """Train by plain GD (no projection) or Adam on (1/n)Σ(f − y)²; the run file's arrays."""
    gen = torch.Generator().manual_seed(seed)
    half = m // 2
    c = torch.where(torch.rand(half, generator=gen) < 0.5, -1.0, 1.0).double()
    U = torch.randn(half, d, generator=gen, dtype=torch.float64)
    W = torch.randn(half, d, d, generator=gen, dtype=torch.float64)
    if symmetric:
        c0, U0, W0 = torch.cat([c, -c]), torch.cat([U, U]), torch.cat([W, W])
    else:
        c0 = torch.where(torch.rand(m, generator=gen) < 0.5, -1.0, 1.0).double()
        U0 = torch.randn(m, d, generator=gen, dtype=torch.float64)
        W0 = torch.randn(m, d, d, generator=gen, dtype=torch.float64)
    X = torch.randn(n, T, d, generator=gen, dtype=torch.float64)
    X = X / X.norm(dim=-1, keepdim=True).clamp_min(1.0)
    y = torch.sin(3 * X[:, 0, 0])
    params = [t.clone().requires_grad_(True) for t in (c0, U0, W0)]
    moments = [(torch.zeros_like(p), torch.zeros_like(p)) for p in params]
    keep = set(range(1, steps + 1) if record is None else record)
    traj = {"c": [], "U": [], "W": [], "steps": []}
    for k in range(1, steps + 1):
        loss = ((plain_forward(*params, X, X[:, -1]) - y) ** 2).mean()
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, g, (first, second) in zip(params, grads, moments, strict=True):
                if optimizer == "gd":
                    p -= eta * g
                else:  # Adam, betas (0.9, 0.999), eps 1e-8
                    first.mul_(0.9).add_(0.1 * g)
                    second.mul_(0.999).add_(0.001 * g * g)
                    step = first / (1 - 0.9**k) / ((second / (1 - 0.999**k)).sqrt() + 1e-8)
                    p -= eta * step
        if k in keep:
            for name, p in zip("cUW", params, strict=True):
                traj[name].append(p.detach().clone())
            traj["steps"].append(k)
    return {"c0": c0, "U0": U0, "W0": W0, "c": torch.stack(traj["c"]),
            "U": torch.stack(traj["U"]), "W": torch.stack(traj["W"]),
            "steps": np.array(traj["steps"]), "X": X, "y": y, "eta": eta, "K": steps}


def autograd_values(arrays, theta):
    """max_j ‖∇f_j‖, max_j |f_j − f_lin,j|, max_j |f_j|, R̂ at θ, by autograd per sample."""
    X, y = arrays["X"], arrays["y"]
    q = X[:, -1]
    theta0 = [arrays[k].clone().requires_grad_(True) for k in ("c0", "U0", "W0")]
    theta = [t.clone().requires_grad_(True) for t in theta]
    f = plain_forward(*theta, X, q)
    f0 = plain_forward(*theta0, X, q)
    norms, gaps = [], []
    for j in range(X.shape[0]):
        g = torch.autograd.grad(f[j], theta, retain_graph=True)
        norms.append(math.sqrt(sum(float((t * t).sum()) for t in g)))
        g0 = torch.autograd.grad(f0[j], theta0, retain_graph=True)
        with torch.no_grad():
            lin = float(f0[j]) + sum(float((a * (b - c)).sum())
                                     for a, b, c in zip(g0, theta, theta0, strict=True))
            gaps.append(abs(float(f[j]) - lin))
    f = f.detach()
    return max(norms), max(gaps), float(f.abs().max()), float(((f - y) ** 2).mean())


@pytest.mark.parametrize("optimizer", ["gd", "adam"])
def test_every_measured_value_equals_its_autograd_recomputation(optimizer):
    arrays = plain_run(optimizer=optimizer, symmetric=optimizer == "gd", record=[1, 2, 5, 8])
    meas = measure_run(run_from_arrays(arrays))
    assert meas.steps.tolist() == [0, 1, 2, 5, 8]
    points = [(arrays["c0"], arrays["U0"], arrays["W0"])] + [
        (arrays["c"][i], arrays["U"][i], arrays["W"][i]) for i in range(4)]
    for i, theta in enumerate(points):
        norm, gap, fmax, loss = autograd_values(arrays, theta)
        assert meas.grad_norm[i] == pytest.approx(norm, abs=1e-10, rel=0)
        assert meas.lin_gap[i] == pytest.approx(gap, abs=1e-10, rel=0)
        assert meas.abs_f[i] == pytest.approx(fmax, abs=1e-10, rel=0)
        assert meas.loss[i] == pytest.approx(loss, abs=1e-10, rel=0)


def test_plain_gd_steps_are_recognised_and_adam_steps_are_not():
    gd = measure_run(run_from_arrays(plain_run(optimizer="gd")))
    adam = measure_run(run_from_arrays(plain_run(optimizer="adam")))
    assert gd.gd_pairs == adam.gd_pairs == 8
    assert gd.gd_deviation < 1e-9
    assert adam.gd_deviation > 0.1


def test_no_consecutive_recorded_steps_leave_the_step_check_unknown():
    meas = measure_run(run_from_arrays(plain_run(record=[2, 4, 6])))
    assert meas.gd_pairs == 0 and meas.gd_deviation is None


def test_sample_blocks_and_step_chunks_give_the_unblocked_values(monkeypatch):
    arrays = plain_run(n=11)
    whole = measure_run(run_from_arrays(arrays))
    monkeypatch.setattr("boundcalc.validators.checks.run.BLOCK_BYTES", 8 * 6 * 4 * 3)
    assert sample_block(6, 4, 8 * 6 * 4 * 3) == 3
    import boundcalc.validators.checks.run as run_module

    blocked = run_module.measure_run(run_from_arrays(arrays), chunk_mb=0)
    for key in ("grad_norm", "lin_gap", "abs_f", "loss", "radii"):
        np.testing.assert_allclose(getattr(blocked, key), getattr(whole, key), rtol=0,
                                   atol=1e-12)


def test_the_displacement_radii_are_the_largest_per_head_block_moves():
    arrays = plain_run()
    meas = measure_run(run_from_arrays(arrays))
    root_m = math.sqrt(6)
    dc = (arrays["c"] - arrays["c0"]).abs().amax(dim=1) * root_m
    dW = (arrays["W"] - arrays["W0"]).flatten(2).norm(dim=-1).amax(dim=1) * root_m
    np.testing.assert_allclose(meas.radii[1:, 0], dc.numpy(), rtol=1e-12)
    np.testing.assert_allclose(meas.radii[1:, 2], dW.numpy(), rtol=1e-12)
