"""The Triton kernel of the softmax-weighted token sums — compiled on a CUDA device, else run on
the CPU by Triton's interpreter (tests/validators/conftest.py): the same sums as the torch
reference and as the trainers' other organisations, the online softmax exact where the logits
are far apart, leading axes with their own U, and the opt-in with its self-check."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from boundcalc.validators import train as train_module
from boundcalc.validators.data.inputs import synthetic_inputs
from boundcalc.validators.kernel import gpu_kernel
from boundcalc.validators.model import get_activation, init_params, last_token_query
from boundcalc.validators.train import fused_inputs, fused_loss_and_gradient, proj_gd

pytest.importorskip("triton", reason="the kernel's tests need Triton (the `gpu` extra)")


DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@pytest.fixture
def interpreter(monkeypatch):
    """The kernel runnable here (on the CPU: Triton's interpreter, switched on by
    tests/validators/conftest.py before Triton's import), and the opt-in's once-per-process
    memory cleared."""
    if DEVICE == "cpu" and not gpu_kernel.interpreting():
        pytest.skip("Triton was imported before TRITON_INTERPRET=1 was set")
    monkeypatch.setattr(gpu_kernel, "_CHECKED", {})
    monkeypatch.setattr(gpu_kernel, "_NOTED", set())


def _tensors(b, T, d, m, scale=3.0, dtype=torch.float64, seed=0):
    gen = torch.Generator().manual_seed(seed)
    X = torch.randn(b, T, d, generator=gen, dtype=torch.float64)
    Wq = scale * torch.randn(b, m, d, generator=gen, dtype=torch.float64)
    U = torch.randn(m, d, generator=gen, dtype=torch.float64)
    return X.to(DEVICE, dtype), Wq.to(DEVICE, dtype), U.to(DEVICE, dtype)


@pytest.mark.parametrize("b,T,d,m", [(3, 70, 8, 19), (2, 5, 5, 3), (1, 1, 1, 1), (2, 33, 16, 17),
                                     (4, 64, 3, 16), (2, 20, 17, 5)])
def test_the_kernel_gives_the_reference_sums(interpreter, b, T, d, m):
    # tiles cut at the end of the tokens (T = 70, 33) and of the heads (m = 19, 17), d not a
    # power of two (5, 3) and at the largest (16)
    X, Wq, U = _tensors(b, T, d, m)
    a, MU = gpu_kernel.softmax_token_sums(X, Wq, U)
    ref_a, ref_MU = gpu_kernel.softmax_token_sums_reference(X, Wq, U)
    torch.testing.assert_close(a, ref_a, rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(MU, ref_MU, rtol=1e-12, atol=1e-13)
    a_only, none = gpu_kernel.softmax_token_sums(X, Wq)
    assert none is None
    torch.testing.assert_close(a_only, ref_a, rtol=1e-12, atol=1e-14)


def test_leading_axes_read_their_own_U(interpreter):
    # figure 2's seeds: X (seeds, n, T, d), Wq (seeds, n, m, d), U (seeds, m, d); each seed's
    # sums are those of that seed alone
    X, Wq, _ = _tensors(6, 21, 4, 5)
    X, Wq = X.view(3, 2, 21, 4), Wq.view(3, 2, 5, 4)
    U = torch.randn(3, 5, 4, dtype=X.dtype, generator=torch.Generator().manual_seed(9)).to(DEVICE)
    a, MU = gpu_kernel.softmax_token_sums(X, Wq, U)
    assert a.shape == MU.shape == (3, 2, 5, 4)
    for seed in range(3):
        ref_a, ref_MU = gpu_kernel.softmax_token_sums_reference(X[seed], Wq[seed], U[seed])
        torch.testing.assert_close(a[seed], ref_a, rtol=1e-12, atol=1e-14)
        torch.testing.assert_close(MU[seed], ref_MU, rtol=1e-12, atol=1e-13)
    shared_a, shared_MU = gpu_kernel.softmax_token_sums(X, Wq, U[1])   # one U for all
    torch.testing.assert_close(shared_MU[1], MU[1], rtol=1e-12, atol=1e-13)
    torch.testing.assert_close(shared_a, a, rtol=0, atol=0)
    with pytest.raises(ValueError, match="`U` must be"):
        gpu_kernel.softmax_token_sums(X, Wq, U[:2])


def test_the_online_softmax_is_exact_when_the_largest_logit_comes_late(interpreter):
    # logits ~ ±500: exp(z) overflows without the running max; the largest logit sits in the
    # last tile, so every earlier tile's sums must be rescaled to it
    X, Wq, U = _tensors(2, 3 * gpu_kernel.BLOCK_TOKENS + 7, 4, 5, scale=1.0)
    X[:, -1] = 100.0
    Wq = Wq.abs() + 1.0                     # z at the last token ≥ 400, the others far below
    a, MU = gpu_kernel.softmax_token_sums(X, Wq, U)
    ref_a, ref_MU = gpu_kernel.softmax_token_sums_reference(X, Wq, U)
    assert torch.isfinite(a).all() and torch.isfinite(MU).all()
    torch.testing.assert_close(a, ref_a, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(MU, ref_MU, rtol=1e-12, atol=1e-10)


@pytest.mark.parametrize("block_heads,block_tokens", [(16, 16), (64, 16), (32, 64)])
def test_the_tile_changes_the_rounding_only(interpreter, block_heads, block_tokens):
    X, Wq, U = _tensors(2, 45, 6, 9, dtype=torch.float32)
    a, MU = gpu_kernel.softmax_token_sums(X, Wq, U, block_heads=block_heads,
                                          block_tokens=block_tokens)
    ref_a, ref_MU = gpu_kernel.softmax_token_sums_reference(X.double(), Wq.double(), U.double())
    assert a.dtype == torch.float32
    torch.testing.assert_close(a.double(), ref_a, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(MU.double(), ref_MU, rtol=1e-5, atol=1e-5)


def test_bad_shapes_and_tiles_are_refused_by_name(interpreter):
    X, Wq, U = _tensors(2, 5, 3, 4)
    with pytest.raises(ValueError, match="`U` must be"):
        gpu_kernel.softmax_token_sums(X, Wq, U[:, :2])
    with pytest.raises(ValueError, match="`X` .* `Wq`"):
        gpu_kernel.softmax_token_sums(X, Wq[:1], U)
    with pytest.raises(ValueError, match="`block_tokens` must be a power of two >= 16, got 24"):
        gpu_kernel.softmax_token_sums(X, Wq, U, block_tokens=24)
    with pytest.raises(ValueError, match="`block_heads` must be a power of two >= 16, got 8"):
        gpu_kernel.softmax_token_sums(X, Wq, U, block_heads=8)
    X, Wq, U = _tensors(1, 3, gpu_kernel.MAX_D + 1, 2)
    with pytest.raises(RuntimeError, match="above the kernel's largest token dimension"):
        gpu_kernel.softmax_token_sums(X, Wq, U)


def test_without_the_interpreter_the_cpu_is_refused(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    assert "CUDA devices only" in gpu_kernel.triton_unavailable_reason("cpu", 8, torch.float64)
    assert gpu_kernel.triton_unavailable_reason("cpu", 8, torch.float16) is not None
    monkeypatch.setenv("BOUNDCALC_TRITON", "1")
    assert not gpu_kernel.uses_triton_kernel("cpu", 8, torch.float64)


def test_the_kernel_is_opt_in_and_checked_once(interpreter, monkeypatch, capsys):
    monkeypatch.delenv("BOUNDCALC_TRITON", raising=False)
    assert not gpu_kernel.uses_triton_kernel(DEVICE, 8, torch.float64)
    monkeypatch.setenv("BOUNDCALC_TRITON", "1")
    checks = []
    check = gpu_kernel._self_check
    monkeypatch.setattr(gpu_kernel, "_self_check", lambda *a: checks.append(a) or check(*a))
    assert gpu_kernel.uses_triton_kernel(DEVICE, 8, torch.float64)
    assert gpu_kernel.uses_triton_kernel(DEVICE, 8, torch.float64)
    assert len(checks) == 1                            # once per (device, dtype, d)
    # a kernel that disagrees with the reference is not used, and that is said once
    monkeypatch.setattr(gpu_kernel, "_CHECKED", {})
    real = gpu_kernel.softmax_token_sums
    monkeypatch.setattr(gpu_kernel, "softmax_token_sums",
                        lambda X, Wq, U=None, **kw: tuple(None if t is None else 1.01 * t
                                                          for t in real(X, Wq, U, **kw)))
    assert not gpu_kernel.uses_triton_kernel(DEVICE, 4, torch.float64)
    assert not gpu_kernel.uses_triton_kernel(DEVICE, 4, torch.float64)
    err = capsys.readouterr().err
    assert err.count("the Triton kernel of the token sums is not used") == 1
    assert "disagreed with the reference" in err


def test_the_cells_record_which_kernels_ran(interpreter, monkeypatch):
    from boundcalc.execution.executors import cell_meta

    monkeypatch.delenv("BOUNDCALC_TRITON", raising=False)
    assert gpu_kernel.usage_report() == {}
    assert "triton" not in cell_meta({"device": DEVICE})
    monkeypatch.setenv("BOUNDCALC_TRITON", "1")
    assert gpu_kernel.uses_triton_kernel(DEVICE, 8, torch.float64)
    monkeypatch.setattr(gpu_kernel, "_self_check", lambda *args: "it disagreed (a test)")
    assert not gpu_kernel.uses_triton_kernel(DEVICE, 5, torch.float64)
    device = str(torch.device(DEVICE))
    assert cell_meta({"device": DEVICE})["triton"] == {
        f"the token sums {device} torch.float64 8": "used",
        f"the token sums {device} torch.float64 5": "it disagreed (a test)"}


@pytest.mark.parametrize("activation", ["tanh", "erf"])
@pytest.mark.parametrize("widths", [None, (2, 6)])
def test_the_fused_pass_with_the_kernel_gives_the_chunked_pass_numbers(interpreter, monkeypatch,
                                                                       activation, widths):
    n, m, d, T = 12, 8, 3, 37
    X = synthetic_inputs(n, T, d, seed=1, dtype=torch.float64)
    X[:3] *= 40.0                                      # logits far apart
    q = last_token_query(X)
    y = 0.3 * torch.randn(n, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    gen = torch.Generator().manual_seed(5)
    p = type(init_params(m, d, seed=0))(*(t + 0.3 * torch.randn(t.shape, generator=gen,
                                                                 dtype=torch.float64)
                                          for t in init_params(m, d, seed=0)))
    X, q, y = X.to(DEVICE), q.to(DEVICE), y.to(DEVICE)
    p = type(p)(*(t.to(DEVICE) for t in p))
    act = get_activation(activation)
    chunked = fused_loss_and_gradient(p, X, q, y, act, chunk=5, backend="torch", widths=widths)
    monkeypatch.setenv("BOUNDCALC_TRITON", "1")
    assert gpu_kernel.uses_triton_kernel(X.device, d, X.dtype)   # its self-check, done once
    calls = []
    kernel = gpu_kernel.softmax_token_sums
    monkeypatch.setattr(gpu_kernel, "softmax_token_sums",
                        lambda *args: calls.append(args[0].shape[0]) or kernel(*args))
    inputs = fused_inputs(X, q)
    assert inputs.moments is None
    for chunk in (5, None):
        calls.clear()
        loss, grad, pred = fused_loss_and_gradient(p, X, q, y, act, chunk=chunk, inputs=inputs,
                                                   backend="torch", widths=widths)
        assert calls == ([5, 5, 2] if chunk else [n])  # every sample in one launch by default
        torch.testing.assert_close(loss, chunked[0], rtol=1e-12, atol=0)
        torch.testing.assert_close(pred, chunked[2], rtol=1e-12, atol=1e-14)
        for got, want in zip(grad, chunked[1], strict=True):
            torch.testing.assert_close(got, want, rtol=1e-10,
                                       atol=1e-12 * float(want.abs().max()))
    calls.clear()
    fused_loss_and_gradient(p, X, q, y, act, inputs=inputs, backend="torch", need_grad=False)
    assert calls == [n]


def test_projgd_with_the_kernel_follows_the_torch_trajectory(interpreter, monkeypatch):
    X = synthetic_inputs(10, 40, 3, seed=1, dtype=torch.float64)
    q = last_token_query(X)
    y = 0.3 * torch.randn(10, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    p0 = init_params(6, 3, seed=0)
    X, q, y = X.to(DEVICE), q.to(DEVICE), y.to(DEVICE)
    p0 = type(p0)(*(t.to(DEVICE) for t in p0))
    act = get_activation("tanh")
    plain = proj_gd(p0, X, q, y, act, steps=5, eta=2.0, rho=1.0, backend="torch")
    monkeypatch.setenv("BOUNDCALC_TRITON", "1")
    used = []
    organise = train_module._fused_range_moments
    monkeypatch.setattr(train_module, "_fused_range_moments",
                        lambda *args: used.append(args[-1]) or organise(*args))
    fast = proj_gd(p0, X, q, y, act, steps=5, eta=2.0, rho=1.0, backend="torch")
    assert used and all(used)                          # every pass took the kernel
    torch.testing.assert_close(fast.loss, plain.loss, rtol=1e-12, atol=0)
    for got, want in zip(fast.params, plain.params, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-11, atol=1e-13)


def test_every_kernel_compiles_for_hopper_without_spilling(tmp_path):
    # Triton compiles for sm_90 (H100, H200) without a GPU: ptxas and cuobjdump ship in its
    # wheel. Every kernel the trainers launch, at the tiles they use, in float64 and float32,
    # must compile, and keep its registers (no spill stack); the token sums' products must be
    # the tensor cores' float64 MMA
    script = Path(__file__).resolve().parents[3] / "benchmarks" / "triton_compile.py"
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["TRITON_CACHE_DIR"] = str(tmp_path / "cache")          # compiled here, not reused
    out = tmp_path / "kernels.json"
    done = subprocess.run([sys.executable, str(script), "--defaults-only", "--json", str(out)],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = json.loads(out.read_text())
    assert len(rows) == 24 and all(row["stack"] == 0 and "error" not in row for row in rows)
    float64_sums = [row for row in rows if row["kernel"].startswith("softmax_token_sums fp64")]
    assert float64_sums and all(row["mma"] > 0 for row in float64_sums)
