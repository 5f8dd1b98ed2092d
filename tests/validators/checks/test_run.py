"""measure_run against a trajectory from a plain torch loop written from the model's formula (not
the project's model: the ``plain_run`` fixture of tests/conftest.py), every measured value
recomputed by autograd."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from boundcalc.validators.checks.run import measure_run, sample_block  # noqa: E402

from boundcalc.checking.runfile import run_from_arrays  # noqa: E402


def autograd_values(plain_forward, arrays, theta):
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
def test_every_measured_value_equals_its_autograd_recomputation(optimizer, plain_run,
                                                                 plain_forward):
    arrays = plain_run(optimizer=optimizer, symmetric=optimizer == "gd", record=[1, 2, 5, 8])
    meas = measure_run(run_from_arrays(arrays))
    assert meas.steps.tolist() == [0, 1, 2, 5, 8]
    points = [(arrays["c0"], arrays["U0"], arrays["W0"])] + [
        (arrays["c"][i], arrays["U"][i], arrays["W"][i]) for i in range(4)]
    for i, theta in enumerate(points):
        norm, gap, fmax, loss = autograd_values(plain_forward, arrays, theta)
        assert meas.grad_norm[i] == pytest.approx(norm, abs=1e-10, rel=0)
        assert meas.lin_gap[i] == pytest.approx(gap, abs=1e-10, rel=0)
        assert meas.abs_f[i] == pytest.approx(fmax, abs=1e-10, rel=0)
        assert meas.loss[i] == pytest.approx(loss, abs=1e-10, rel=0)


def test_plain_gd_steps_are_recognised_and_adam_steps_are_not(plain_run):
    gd = measure_run(run_from_arrays(plain_run(optimizer="gd")))
    adam = measure_run(run_from_arrays(plain_run(optimizer="adam")))
    assert gd.gd_pairs == adam.gd_pairs == 8
    assert gd.gd_deviation < 1e-9
    assert adam.gd_deviation > 0.1


def test_no_consecutive_recorded_steps_leave_the_step_check_unknown(plain_run):
    meas = measure_run(run_from_arrays(plain_run(record=[2, 4, 6])))
    assert meas.gd_pairs == 0 and meas.gd_deviation is None


def test_sample_blocks_and_step_chunks_give_the_unblocked_values(monkeypatch, plain_run):
    arrays = plain_run(n=11)
    whole = measure_run(run_from_arrays(arrays))
    monkeypatch.setattr("boundcalc.validators.checks.run.BLOCK_BYTES", 8 * 6 * 4 * 3)
    assert sample_block(6, 4, 8 * 6 * 4 * 3) == 3
    import boundcalc.validators.checks.run as run_module

    blocked = run_module.measure_run(run_from_arrays(arrays), chunk_mb=0)
    for key in ("grad_norm", "lin_gap", "abs_f", "loss", "radii"):
        np.testing.assert_allclose(getattr(blocked, key), getattr(whole, key), rtol=0,
                                   atol=1e-12)


def test_the_displacement_radii_are_the_largest_per_head_block_moves(plain_run):
    arrays = plain_run()
    meas = measure_run(run_from_arrays(arrays))
    root_m = math.sqrt(6)
    dc = (arrays["c"] - arrays["c0"]).abs().amax(dim=1) * root_m
    dW = (arrays["W"] - arrays["W0"]).flatten(2).norm(dim=-1).amax(dim=1) * root_m
    np.testing.assert_allclose(meas.radii[1:, 0], dc.numpy(), rtol=1e-12)
    np.testing.assert_allclose(meas.radii[1:, 2], dW.numpy(), rtol=1e-12)


def test_attention_scores_too_large_to_exponentiate_are_measured_as_autograd_does(
        plain_run, plain_forward):
    arrays = plain_run(record=[1, 2])
    arrays["W0"], arrays["W"] = arrays["W0"] * 1000, arrays["W"] * 1000  # |z| up to ~10³
    meas = measure_run(run_from_arrays(arrays))
    norm, gap, fmax, loss = autograd_values(plain_forward, arrays, (
        arrays["c"][1], arrays["U"][1], arrays["W"][1]))
    assert np.isfinite(meas.grad_norm).all()
    assert meas.grad_norm[2] == pytest.approx(norm, abs=1e-10, rel=0)
    assert meas.lin_gap[2] == pytest.approx(gap, abs=1e-10, rel=0)
    assert meas.abs_f[2] == pytest.approx(fmax, abs=1e-10, rel=0)
    assert meas.loss[2] == pytest.approx(loss, abs=1e-10, rel=0)


def test_two_threads_give_the_values_of_one(monkeypatch, plain_run):
    monkeypatch.setattr("boundcalc.validators.checks.run.BLOCK_BYTES", 8 * 6 * 4 * 2)
    run = run_from_arrays(plain_run(n=11))
    one, two = measure_run(run, threads=1), measure_run(run, threads=2)
    for key in ("grad_norm", "lin_gap", "abs_f", "loss", "radii"):
        np.testing.assert_allclose(getattr(two, key), getattr(one, key), rtol=0, atol=1e-12)
    assert two.gd_pairs == one.gd_pairs == 8
    assert two.gd_deviation == pytest.approx(one.gd_deviation, abs=1e-12)
