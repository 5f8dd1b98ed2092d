"""A library in the kernel cache that loads but is not the kernel (no ``boundcalc_fused_tanh``)
gives way to the torch path, said once on stderr, as a library that will not load does."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
import torch
from boundcalc.validators.kernel import cpu_kernel

HAS_CC = shutil.which(os.environ.get("CC") or "cc") is not None


@pytest.fixture
def fresh_kernel_state(monkeypatch):
    """Empty in-process caches, the fallback note not yet printed (restored afterwards)."""
    for name in ("_CACHE", "_FAILED", "_BUILT", "_SKIPPED"):
        monkeypatch.setattr(cpu_kernel, name, {})
    monkeypatch.setenv("BOUNDCALC_KERNEL_FALLBACK_NOTED", "")


def _library(tmp_path, source: str):
    c_file = tmp_path / "other.c"
    c_file.write_text(source)
    target = tmp_path / "other.so"
    subprocess.run([os.environ.get("CC") or "cc", "-shared", "-fPIC", str(c_file), "-o",
                    str(target)], check=True, capture_output=True)
    return target


@pytest.mark.skipif(not HAS_CC, reason="no C compiler on this machine")
@pytest.mark.parametrize("source", ["int some_other_function(void) { return 1; }\n",
                                    "int boundcalc_fused_tanh(void) { return 0; }\n"])
def test_a_cached_library_without_the_kernels_symbols_falls_back_to_torch_once(
        monkeypatch, tmp_path, capfd, fresh_kernel_state, source):
    library = _library(tmp_path, source)
    monkeypatch.setattr(cpu_kernel, "_build", lambda d, dtype: library)
    for _ in range(2):
        assert cpu_kernel.load_kernel(3, torch.float64) is None
    err = capfd.readouterr().err
    assert err.count("compiled CPU kernel is not available") == 1, err
    assert "torch path" in err and len(err.strip().splitlines()) == 1
    assert cpu_kernel.backend_report()["d3-float64"]["backend"] == "torch"


def test_a_garbage_library_falls_back_to_torch(monkeypatch, tmp_path, fresh_kernel_state):
    garbage = tmp_path / "garbage.so"
    garbage.write_bytes(b"\x7fELF not really a library")
    monkeypatch.setattr(cpu_kernel, "_build", lambda d, dtype: garbage)
    assert cpu_kernel.load_kernel(3, torch.float64) is None
    assert cpu_kernel.kernel_unavailable_reason(3, torch.float64)
