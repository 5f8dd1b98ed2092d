"""Training several students together gives every student the numbers of training it alone."""

from __future__ import annotations

import os
import shutil

import pytest
import torch
from boundcalc.validators.data.inputs import synthetic_inputs
from boundcalc.validators.model import Params, init_params, last_token_query
from boundcalc.validators.train import fused_loss_and_gradient, proj_gd
from boundcalc.validators.train_students import train_students

pytestmark = pytest.mark.needs_torch

HAS_CC = shutil.which(os.environ.get("CC") or "cc") is not None
BACKENDS = ["torch", pytest.param("kernel", marks=pytest.mark.skipif(
    not HAS_CC, reason="no C compiler on this machine"))]
#: widths that are not multiples of a head block (3, 6, 10) and one student of a single pair
WIDTHS = (2, 6, 10, 16)


def _data(n: int, d: int, T: int, dtype: torch.dtype, seed: int = 1):
    X = synthetic_inputs(n, T, d, seed=seed, dtype=dtype)
    gen = torch.Generator().manual_seed(seed + 7)
    y = (0.4 * torch.randn(n, generator=gen, dtype=torch.float64)).to(dtype)
    return X, last_token_query(X), y


def _inits(widths, d, dtype):
    return [init_params(m, d, seed=10 + m, dtype=dtype) for m in widths]


def _rel(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).abs().max() / b.abs().max().clamp_min(1e-300))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype,rtol", [(torch.float64, 1e-12), (torch.float32, 2e-5)])
def test_each_student_trained_together_equals_its_projgd_run_alone(backend, dtype, rtol):
    X, q, y = _data(45, 4, 5, dtype)
    inits = _inits(WIDTHS, 4, dtype)
    runs = train_students(inits, X, q, y, "tanh", steps=25, eta=0.4, rho=(0.5, 0.4, 0.6),
                          backend=backend)
    for p0, run in zip(inits, runs, strict=True):
        alone = proj_gd(p0, X, q, y, "tanh", steps=25, eta=0.4, rho=(0.5, 0.4, 0.6),
                        backend=backend)
        for name in ("min_loss", "final_loss", "average_loss", "initial_loss"):
            assert getattr(run, name) == pytest.approx(getattr(alone, name), rel=rtol), name
        assert _rel(run.loss, alone.loss) < rtol
        for a, b in zip(run.params, alone.params, strict=True):
            assert _rel(a, b) < rtol
        for a, b in zip(run.average, alone.average, strict=True):
            assert _rel(a, b) < rtol
        for name in ("grad_norm", "radius", "distance"):
            assert _rel(getattr(run, name), getattr(alone, name)) < max(rtol, 1e-10), name
        assert run.config["students"] == list(WIDTHS)
        assert run.config["backend"] == alone.config["backend"] == backend


@pytest.mark.skipif(not HAS_CC, reason="no C compiler on this machine")
def test_on_the_kernel_the_students_losses_and_iterates_are_bitwise_those_of_single_runs():
    X, q, y = _data(40, 8, 16, torch.float64)
    inits = _inits(WIDTHS, 8, torch.float64)
    runs = train_students(inits, X, q, y, "tanh", steps=10, eta=0.5, rho=3.0, backend="kernel")
    for p0, run in zip(inits, runs, strict=True):
        alone = proj_gd(p0, X, q, y, "tanh", steps=10, eta=0.5, rho=3.0, backend="kernel")
        assert torch.equal(run.loss, alone.loss)
        assert all(torch.equal(a, b) for a, b in zip(run.params, alone.params, strict=True))


def test_projection_keeps_each_student_in_its_own_ball_of_radius_rho_over_root_m():
    X, q, y = _data(30, 3, 4, torch.float64)
    rho = (0.3, 0.2, 0.25)
    runs = train_students(_inits((4, 12), 3, torch.float64), X, q, y, "tanh", steps=30,
                          eta=3.0, rho=rho)
    for run in runs:
        assert (run.radius <= torch.tensor(rho, dtype=torch.float64) * (1 + 1e-12)).all()
        assert bool((run.radius.max(0).values > 0.5 * torch.tensor(rho,
                                                                   dtype=torch.float64)).all())


@pytest.mark.parametrize("backend", BACKENDS)
def test_fused_pass_with_widths_gives_each_student_its_own_loss_and_gradient(backend):
    X, q, y = _data(21, 3, 6, torch.float64)
    inits = _inits((2, 4, 6), 3, torch.float64)
    joined = Params(*(torch.cat(b) for b in zip(*inits, strict=True)))
    loss, grad, preds = fused_loss_and_gradient(joined, X, q, y, "tanh", backend=backend,
                                                widths=(2, 4, 6))
    assert loss.shape == (3,) and preds.shape == (21, 3)
    lo = 0
    for s, p in enumerate(inits):
        l1, g1, f1 = fused_loss_and_gradient(p, X, q, y, "tanh", backend=backend)
        part = slice(lo, lo + p.width)
        lo += p.width
        assert float(loss[s]) == pytest.approx(float(l1), rel=1e-13)
        assert torch.allclose(preds[:, s], f1, rtol=1e-12, atol=1e-15)   # f = 0 at a mirrored init
        for a, b in zip(grad, g1, strict=True):
            assert _rel(a[part], b) < 1e-12


@pytest.mark.parametrize("bad", [(2, 4), (6, 7), (0, 12), ()])
def test_widths_that_do_not_split_the_heads_are_refused_naming_the_argument(bad):
    X, q, y = _data(5, 3, 2, torch.float64)
    p = init_params(12, 3, seed=1)
    with pytest.raises(ValueError, match="`widths`"):
        fused_loss_and_gradient(p, X, q, y, "tanh", widths=bad)


def test_students_that_differ_in_dtype_or_d_are_refused():
    X, q, y = _data(5, 3, 2, torch.float64)
    with pytest.raises(ValueError, match="`students`"):
        train_students([init_params(2, 3, seed=1), init_params(2, 3, seed=1,
                                                               dtype=torch.float32)],
                       X, q, y, "tanh", steps=1, eta=0.1, rho=1)
    with pytest.raises(ValueError, match="`students`"):
        train_students([], X, q, y, "tanh", steps=1, eta=0.1, rho=1)


def test_progress_is_reported_with_steps_done_and_never_for_the_last_step():
    X, q, y = _data(12, 3, 2, torch.float64)
    calls = []
    train_students(_inits((2, 4), 3, torch.float64), X, q, y, "tanh", steps=5, eta=0.1, rho=1,
                   progress=lambda k, K, s: calls.append((k, K, s >= 0)), progress_every_s=0.0)
    assert calls == [(k, 5, True) for k in range(1, 5)]
    calls.clear()
    train_students(_inits((2,), 3, torch.float64), X, q, y, "tanh", steps=5, eta=0.1, rho=1,
                   progress=lambda k, K, s: calls.append(k))   # a run shorter than 30 s
    assert calls == []
