"""The Triton source of the GPU kernels (validators/kernel/triton_source.py): its tanh, in the
exp form the interpreter and Tritons without libdevice use and in libdevice's where compiled,
against torch's, saturating without overflow; and the source as the one module that needs
Triton, imported only when a kernel is first used."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import textwrap

import pytest
import torch
from boundcalc.validators.kernel import gpu_kernel

triton = pytest.importorskip("triton", reason="the kernels' tests need Triton (the `gpu` extra)")
tl = pytest.importorskip("triton.language")

from boundcalc.validators.kernel import triton_source  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
BLOCK = 128


@triton.jit
def _tanh_kernel(z_ptr, out_ptr, n, LIBDEVICE: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = i < n
    z = tl.load(z_ptr + i, mask=ok, other=0.0)
    tl.store(out_ptr + i, triton_source.tanh(z, LIBDEVICE), mask=ok)


def _kernel_tanh(z: torch.Tensor, libdevice: bool) -> torch.Tensor:
    out = torch.empty_like(z)
    _tanh_kernel[(-(-z.numel() // BLOCK),)](z, out, z.numel(), LIBDEVICE=libdevice, BLOCK=BLOCK)
    return out


@pytest.mark.parametrize("libdevice", [False, True])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_the_kernels_tanh_is_torchs_and_saturates_without_overflow(libdevice, dtype):
    if DEVICE == "cpu" and not gpu_kernel.interpreting():
        pytest.skip("Triton was imported before TRITON_INTERPRET=1 was set")
    if libdevice and (gpu_kernel.interpreting() or not triton_source.HAS_LIBDEVICE):
        pytest.skip("libdevice's tanh exists in compiled kernels only")
    gen = torch.Generator().manual_seed(0)
    z = torch.cat([torch.linspace(-25, 25, 301, dtype=torch.float64),
                   torch.randn(200, generator=gen, dtype=torch.float64) * 1e-3,
                   torch.tensor([0.0, -0.0, 1e-30, 400.0, -400.0, 1e4, -1e4, 1e30, -1e30],
                                dtype=torch.float64)]).to(DEVICE, dtype)
    got = _kernel_tanh(z, libdevice)
    assert torch.isfinite(got).all()
    eps = torch.finfo(dtype).eps
    torch.testing.assert_close(got, torch.tanh(z), rtol=8 * eps, atol=8 * eps)
    assert (got[z >= 20] == 1).all() and (got[z <= -20] == -1).all()
    assert torch.equal(_kernel_tanh(-z, libdevice), -got)                  # odd, exactly


@pytest.mark.slow
def test_only_the_source_needs_triton_and_it_is_imported_on_a_kernels_first_use():
    """Without Triton the kernel modules still import (and say why the kernels cannot run);
    the source module alone fails, and nothing imports it before a kernel is asked for."""
    script = textwrap.dedent("""
        import sys
        sys.modules["triton"] = None                      # as if Triton were not installed
        from boundcalc.validators.kernel import gpu_kernel, gpu_recurrence
        import torch
        print(gpu_kernel.triton_device_reason("cuda", torch.float64))
        print("boundcalc.validators.kernel.triton_source" in sys.modules)
        try:
            from boundcalc.validators.kernel import triton_source
        except ImportError:
            print("ImportError")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300, cwd=tempfile.gettempdir())   # the installed package
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["Triton is not installed", "False", "ImportError"]
