"""The Triton kernels of the IndRNN's recurrence — compiled on a CUDA device, else run on the CPU
by Triton's interpreter (tests/validators/conftest.py): the states, σ', tangent and BPTT of the
torch recurrence, and the IndRNN's loss, gradient, Jacobian and predictions through them."""

from __future__ import annotations

import pytest
import torch
from boundcalc.validators import indrnn
from boundcalc.validators.kernel import gpu_kernel, gpu_recurrence
from boundcalc.validators.model import get_activation

pytest.importorskip("triton", reason="the kernels' tests need Triton (the `gpu` extra)")

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
ACT = get_activation("tanh")


@pytest.fixture
def kernels(monkeypatch):
    """The kernels runnable here and opted in (``BOUNDCALC_TRITON=1``), the once-per-process
    memory of the self-checks cleared."""
    if DEVICE == "cpu" and not gpu_kernel.interpreting():
        pytest.skip("Triton was imported before TRITON_INTERPRET=1 was set")
    monkeypatch.setattr(gpu_kernel, "_CHECKED", {})
    monkeypatch.setattr(gpu_kernel, "_NOTED", set())
    monkeypatch.setenv("BOUNDCALC_TRITON", "1")


def _torch_backward(dz, h_prev, delta, u):
    dz = dz.clone()
    acc = torch.zeros_like(delta)
    for t in range(dz.shape[0] - 1, -1, -1):
        dz[t] *= delta
        acc += dz[t] * h_prev[t]
        delta = dz[t] * u.unsqueeze(-2)
    return dz, acc


@pytest.mark.parametrize("shape", [(9, 5, 7), (4, 2, 3, 6), (1, 1, 1), (6, 3, 2, 100)])
def test_the_recurrence_and_its_backward_are_the_torch_steps(kernels, shape):
    # (T, n, m) and (T, seeds, n, m); elements not a multiple of the block (100·6 = 600)
    gen = torch.Generator().manual_seed(0)
    drive = torch.randn(*shape, generator=gen, dtype=torch.float64).to(DEVICE)
    u = (1.5 * torch.rand(*shape[1:-2], shape[-1], generator=gen, dtype=torch.float64)
         - 0.75).to(DEVICE)
    states, dz, b = gpu_recurrence.indrnn_recurrence(drive, u, tangent=True)
    h, ref_b = torch.zeros_like(drive[0]), torch.zeros_like(drive[0])
    for t in range(shape[0]):
        torch.testing.assert_close(states[t], h, rtol=1e-13, atol=1e-15)
        h_next = torch.tanh(drive[t] + u.unsqueeze(-2) * h)
        torch.testing.assert_close(dz[t], 1 - h_next**2, rtol=1e-13, atol=1e-15)
        ref_b = (h + u.unsqueeze(-2) * ref_b) * (1 - h_next**2)
        h = h_next
    torch.testing.assert_close(states[-1], h, rtol=1e-13, atol=1e-15)
    torch.testing.assert_close(b, ref_b, rtol=1e-12, atol=1e-14)
    last, none, no_b = gpu_recurrence.indrnn_recurrence(drive, u, store=False)
    assert none is None and no_b is None
    torch.testing.assert_close(last, h, rtol=1e-13, atol=1e-15)
    delta = torch.randn(shape[1:], generator=gen, dtype=torch.float64).to(DEVICE)
    ref_g, ref_acc = _torch_backward(dz, states[:-1], delta, u)
    per_unit = gpu_recurrence.indrnn_backward(dz, states[:-1], delta, u)
    torch.testing.assert_close(dz, ref_g, rtol=1e-12, atol=1e-15)
    torch.testing.assert_close(per_unit, ref_acc, rtol=1e-12, atol=1e-15)


def test_shapes_that_do_not_match_are_refused_by_name(kernels):
    drive = torch.zeros(3, 2, 4, 5, dtype=torch.float64, device=DEVICE)
    with pytest.raises(ValueError, match="`drive` .* `u`"):
        gpu_recurrence.indrnn_recurrence(drive, torch.zeros(3, 5, dtype=torch.float64,
                                                            device=DEVICE))
    with pytest.raises(ValueError, match="`dz` must be contiguous"):
        gpu_recurrence.indrnn_backward(drive.transpose(-1, -2), drive, drive[0],
                                       torch.zeros(2, 4, dtype=torch.float64, device=DEVICE))


@pytest.mark.parametrize("seeds", [3, None])
def test_the_indrnn_through_the_kernels_gives_the_torch_numbers(kernels, monkeypatch, seeds):
    # loss, gradient (BPTT), predictions and ‖∂f/∂u‖ of figure 2's step, batched over seeds
    # and alone, with the kernels against the torch recurrence
    lead = () if seeds is None else (seeds,)
    gen = torch.Generator().manual_seed(3)
    nets = [indrnn.init_indrnn(8, 5, seed=s) for s in range(seeds or 1)]
    nets = [type(p)(*(t + 0.3 * torch.randn(t.shape, generator=gen, dtype=t.dtype)
                      for t in p)) for p in nets]
    params = (nets[0] if seeds is None else
              indrnn.IndRNNParams(*(torch.stack(t) for t in zip(*nets, strict=True))))
    params = type(params)(*(t.to(DEVICE) for t in params))
    X = torch.randn(*lead, 6, 11, 5, generator=gen, dtype=torch.float64).to(DEVICE)
    y = torch.randn(*lead, 6, generator=gen, dtype=torch.float64).to(DEVICE)
    assert gpu_recurrence.uses_recurrence_kernel(DEVICE, torch.float64)
    calls = []
    for name in ("indrnn_recurrence", "indrnn_backward"):
        real = getattr(gpu_recurrence, name)
        monkeypatch.setattr(gpu_recurrence, name,
                            lambda *a, real=real, name=name, **k: calls.append(name)
                            or real(*a, **k))
    fast = indrnn.loss_gradient_and_jacobian_u(params, X, y, ACT)
    fast_pred = indrnn.predict(params, X, ACT)
    assert calls == ["indrnn_recurrence", "indrnn_backward", "indrnn_recurrence"]
    monkeypatch.setenv("BOUNDCALC_TRITON", "0")
    plain = indrnn.loss_gradient_and_jacobian_u(params, X, y, ACT)
    assert len(calls) == 3                               # the torch recurrence this time
    for got, want in zip((fast[0], *fast[1], *fast[2:]), (plain[0], *plain[1], *plain[2:]),
                         strict=True):
        torch.testing.assert_close(got, want, rtol=1e-11, atol=1e-14)
    torch.testing.assert_close(fast_pred, indrnn.forward(params, X, ACT), rtol=1e-12,
                               atol=1e-15)
