"""The compiled CPU kernel of the fused training step (``fused_step.c``), built on first use.

:func:`boundcalc.validators.train.fused_loss_and_gradient` spends its CPU time on a handful of
tensors of size (samples × tokens × heads) that torch must write to memory between operations
(the logits, their exponentials, the products x_tᵀU_i). ``fused_step.c`` computes the same sums
per (sample, block of 8 heads) with all of these in registers. It is C with no dependency, built
here with the system C compiler (``cc``, or ``$CC``) for the token dimension d and the dtype at
hand, cached under ``$BOUNDCALC_KERNEL_CACHE`` (default ``~/.cache/boundcalc/kernels``, else a
temporary folder), and called through ctypes, which releases the GIL, so the trainer's worker
threads run it in parallel.

It covers the tanh activation in float32 and float64 on the CPU. Everything else, and every
machine without a C compiler, uses the torch path, which computes the same quantities
(tests/validators/test_cpu_kernel.py checks the two against each other and against
``model.loss_and_gradient``). ``BOUNDCALC_CPU_KERNEL=0`` switches the kernel off.

Example:
    >>> import torch
    >>> from boundcalc.validators.cpu_kernel import load_kernel
    >>> kernel = load_kernel(8, torch.float32)   # None where no C compiler is found
"""

from __future__ import annotations

import ctypes
import hashlib
import math
import os
import platform
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import NamedTuple

import torch
from torch import Tensor

#: Heads per block of the kernel (``IB`` in fused_step.c); widths are padded to a multiple.
HEAD_BLOCK = 8
#: Largest token dimension the kernel is built for (its per-block arrays grow as d²).
MAX_D = 32

_SOURCE = Path(__file__).with_name("fused_step.c")
_FLAGS = ("-O3", "-march=native", "-fno-math-errno", "-fno-trapping-math", "-fPIC", "-shared",
          "-std=gnu11")
_LOCK = threading.Lock()
_CACHE: dict[tuple[int, torch.dtype], object] = {}
_FAILED: dict[tuple[int, torch.dtype], str] = {}
_DTYPES = (torch.float32, torch.float64)
_LOG2E = 1.0 / math.log(2.0)


def kernel_enabled() -> bool:
    """False when ``BOUNDCALC_CPU_KERNEL`` is set to 0 / false / off / no."""
    return os.environ.get("BOUNDCALC_CPU_KERNEL", "1").strip().lower() not in (
        "0", "false", "off", "no")


def _cache_dir() -> Path:
    explicit = os.environ.get("BOUNDCALC_KERNEL_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "boundcalc" / "kernels"


def _cpu_signature() -> str:
    """What ``-march=native`` depends on: the machine and its CPU's name and flags."""
    text = platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("model name", "flags")):
                text += line
                if line.startswith("flags"):
                    break
    except OSError:
        pass
    return text


def _compiler() -> str | None:
    cc = os.environ.get("CC") or "cc"
    return shutil.which(cc)


def _build(d: int, dtype: torch.dtype) -> Path:
    """Compile fused_step.c for (d, dtype) into the cache (atomic rename) and return the path."""
    cc = _compiler()
    if cc is None:
        raise RuntimeError("no C compiler (cc or $CC) on PATH")
    defines = [f"-DKD={d}"] + (["-DREAL_DOUBLE"] if dtype == torch.float64 else [])
    source = _SOURCE.read_bytes()
    key = hashlib.sha256(b"\0".join([source, " ".join((cc, *_FLAGS, *defines)).encode(),
                                     _cpu_signature().encode()])).hexdigest()[:20]
    name = f"fused_step_d{d}_{str(dtype).replace('torch.', '')}_{key}.so"
    for folder in (_cache_dir(), Path(tempfile.gettempdir()) / "boundcalc-kernels"):
        target = folder / name
        if target.exists():
            return target
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(suffix=".so", dir=folder)
            os.close(fd)
        except OSError:
            continue
        try:
            proc = subprocess.run([cc, *_FLAGS, *defines, str(_SOURCE), "-o", tmp, "-lm"],
                                  capture_output=True, text=True, timeout=120)
            if proc.returncode != 0:
                raise RuntimeError(f"{cc} failed: {proc.stderr.strip()[:500]}")
            os.replace(tmp, target)
            return target
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    raise RuntimeError(f"no writable cache folder for the kernel ({_cache_dir()})")


def load_kernel(d: int, dtype: torch.dtype):
    """The compiled ``boundcalc_fused_tanh`` for token dimension ``d`` and ``dtype``, or None
    (kernel switched off, dtype other than float32/float64, d > :data:`MAX_D`, or no compiler /
    a failed build — the reason is kept in :func:`kernel_unavailable_reason`)."""
    if not kernel_enabled() or dtype not in _DTYPES or not 1 <= int(d) <= MAX_D:
        return None
    key = (int(d), dtype)
    if key in _CACHE:
        return _CACHE[key]
    if key in _FAILED:
        return None
    with _LOCK:
        if key in _CACHE:
            return _CACHE[key]
        try:
            lib = ctypes.CDLL(str(_build(int(d), dtype)))
        except (OSError, RuntimeError, subprocess.SubprocessError) as err:
            _FAILED[key] = str(err)
            return None
        fn = lib.boundcalc_fused_tanh
        p = ctypes.c_void_p
        i64 = ctypes.c_int64
        fn.argtypes = [i64, i64, i64, i64, p, p, p, p, p, p, ctypes.c_int, p, p, p, p, p]
        fn.restype = ctypes.c_int
        _CACHE[key] = fn
        return fn


def kernel_unavailable_reason(d: int, dtype: torch.dtype) -> str | None:
    """Why :func:`load_kernel` returned None for (d, dtype), if it tried and failed."""
    return _FAILED.get((int(d), dtype))


def padded_width(m: int) -> int:
    """m rounded up to a multiple of :data:`HEAD_BLOCK`."""
    return -(-int(m) // HEAD_BLOCK) * HEAD_BLOCK


def vector_lanes(dtype: torch.dtype) -> int:
    """Heads per block of the kernel for ``dtype``: one 32-byte vector (8 float32, 4 float64)."""
    return 32 * 8 // torch.finfo(dtype).bits


#: Bytes of per-(sample, head) values the kernel keeps for a group of samples (cache-sized).
GROUP_BYTES = 1 << 17


class KernelLayout(NamedTuple):
    """θ in the kernel's block-major layouts (fused_step.c), width padded to ``m_pad``."""

    Wmap: Tensor    # (m_pad/VL, d_e, d_a, VL) = log₂e · W[i, a, e]
    Ut: Tensor      # (m_pad/VL, d_a, VL) = U[i, a]
    cs: Tensor      # (m_pad,) = c_i/√m
    m: int
    lanes: int


def kernel_layout(c: Tensor, U: Tensor, W: Tensor) -> KernelLayout:
    """Pack θ = (c (m,), U (m, d), W (m, d, d)) for the kernel (padded heads are all zero)."""
    m, d = U.shape
    lanes = vector_lanes(U.dtype)
    m_pad = padded_width(m)
    Wp = torch.zeros(m_pad, d, d, dtype=W.dtype)
    Wp[:m] = W * _LOG2E                                        # [i, a, e]
    Up = torch.zeros(m_pad, d, dtype=U.dtype)
    Up[:m] = U
    cs = torch.zeros(m_pad, dtype=c.dtype)
    cs[:m] = c / math.sqrt(m)
    blocks = m_pad // lanes
    Wmap = Wp.view(blocks, lanes, d, d).permute(0, 3, 2, 1).contiguous()   # [b, e, a, l]
    Ut = Up.view(blocks, lanes, d).permute(0, 2, 1).contiguous()          # [b, a, l]
    return KernelLayout(Wmap, Ut, cs, m, lanes)


def kernel_range(kernel, X: Tensor, q: Tensor, y: Tensor, layout: KernelLayout, preds: Tensor,
                 need_grad: bool
                 ) -> tuple[Tensor, Tensor | None, Tensor | None, Tensor | None]:
    """Run the kernel on the samples of X (n, T, d), q (n, d), y (n,) (contiguous, CPU).

    Writes f into ``preds`` (n,, contiguous). Returns (Σ r², Σ r h (m_pad,), and in the kernel's
    block-major layouts Σ κ̃ ∘ a (m_pad/VL, d, VL) and Σ q (κ̃ ∘ GU) (m_pad/VL, d, d, VL)): the
    partial sums of ``train._fused_range``; :func:`unpack_sums` turns them into its layouts.
    """
    n, T, d = X.shape
    m_pad = layout.cs.shape[0]
    dt = X.dtype
    group = max(1, min(64, GROUP_BYTES // ((2 * d + 3) * m_pad * X.element_size())))
    loss = ctypes.c_double(0.0)
    if need_grad:
        grad_c = torch.zeros(m_pad, dtype=dt)
        acc_a = torch.zeros(m_pad // layout.lanes, d, layout.lanes, dtype=dt)
        acc_W = torch.zeros(m_pad // layout.lanes, d, d, layout.lanes, dtype=dt)
        ptrs = (grad_c.data_ptr(), acc_a.data_ptr(), acc_W.data_ptr())
    else:
        grad_c = acc_a = acc_W = None
        ptrs = (None, None, None)
    status = kernel(n, T, m_pad, group, X.data_ptr(), q.data_ptr(), y.data_ptr(),
                    layout.Wmap.data_ptr(), layout.Ut.data_ptr(), layout.cs.data_ptr(),
                    int(bool(need_grad)), preds.data_ptr(), ctypes.byref(loss), *ptrs)
    if status != 0:
        raise MemoryError("fused_step kernel could not allocate its work buffer")
    return torch.tensor(loss.value, dtype=dt), grad_c, acc_a, acc_W


def unpack_sums(grad_c: Tensor, acc_a: Tensor, acc_W: Tensor, m: int
                ) -> tuple[Tensor, Tensor, Tensor]:
    """Kernel sums → the layouts of ``train._fused_range``: (m,), (d, m), (d, d·m) [e, (a, i)]."""
    blocks, d, lanes = acc_a.shape
    m_pad = blocks * lanes
    a = acc_a.permute(1, 0, 2).reshape(d, m_pad)[:, :m]
    w = acc_W.permute(1, 2, 0, 3).reshape(d, d, m_pad)[:, :, :m]
    return grad_c[:m], a.contiguous(), w.reshape(d, d * m)


__all__ = ["HEAD_BLOCK", "MAX_D", "KernelLayout", "kernel_enabled", "kernel_layout",
           "kernel_range", "kernel_unavailable_reason", "load_kernel", "padded_width",
           "unpack_sums", "vector_lanes"]
