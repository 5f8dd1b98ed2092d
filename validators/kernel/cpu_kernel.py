"""The compiled CPU kernel of the fused training step (``fused_step.c``), built on first use.

:func:`boundcalc.validators.train.fused_loss_and_gradient` spends its CPU time on a handful of
tensors of size (samples × tokens × heads) that torch must write to memory between operations (the
logits, their exponentials, the products x_tᵀU_i). ``fused_step.c`` computes the same sums per
(sample, block of heads) with all of these in registers (a block is one vector register: 16 float32
or 8 float64 heads where the compiler targets AVX-512, half that otherwise), for one student or for
several side by side (the widths of a figure-1 seed in one pass). It is C with no dependency, built
here with the system C compiler (``cc``, or ``$CC``) for the token dimension d and the dtype at hand
(``-march=native``; ``-mcpu=native`` on arm64; built again without the flag when the compiler
rejects it), cached under ``$BOUNDCALC_KERNEL_CACHE`` (default ``kernels`` in the package's cache
folder, :func:`boundcalc.files.cache_root`; else ``kernels`` in this user's own folder under the
temporary directory, :func:`boundcalc.files.fallback_cache_root`), and called through ctypes, which
releases the GIL, so the trainer's worker threads run it in parallel.

A library is only built in, and loaded from, a folder owned by this user that neither group nor
others can write to, below folders that only this user or root can change (and only when the file
is private too; :func:`boundcalc.files.untrusted_reason`, the check the generated-code cache
uses): a folder that anyone else could change, or whose parent another user could, is skipped,
never trusted. When the cache folder is skipped for that reason and the fallback folder is used
instead, one note on stderr says so (once per run); when neither can be used, training takes the
torch path with the note below.

It covers the tanh activation in float32 and float64 on the CPU. Everything else, and every
machine without a C compiler, uses the torch path, which computes the same quantities
(tests/validators/kernel/test_cpu_kernel.py checks the two against each other and against
``model.loss_and_gradient``). ``BOUNDCALC_CPU_KERNEL=0`` switches the kernel off;
``BOUNDCALC_KERNEL_VECTOR_BYTES=32`` (or 64) fixes the block to that many bytes, to compare the
AVX2-sized and AVX-512-sized kernels on one machine (the numbers are the same). When the kernel
applies but cannot be built, or the cached library will not load or lacks the kernel's symbols
(``boundcalc_fused_tanh``, ``boundcalc_lanes``), one note on stderr says so and why (once per run,
worker processes included); :func:`backend_report` keeps the backend and the reason, and a run
directory created afterwards records them in its ``config.json``
(:func:`boundcalc.runs.directory.environment`).

Example:
    >>> import torch
    >>> from boundcalc.validators.kernel.cpu_kernel import load_kernel
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
import sys
import tempfile
import threading
from pathlib import Path
from typing import NamedTuple

import torch
from torch import Tensor

from boundcalc.files import (
    cache_root,
    fallback_cache_root,
    make_private_folder,
    private_folder,
)

#: Largest token dimension the kernel is built for (its per-block arrays grow as d²).
MAX_D = 32

_SOURCE = Path(__file__).with_name("fused_step.c")
_FLAGS = ("-O3", "-fno-math-errno", "-fno-trapping-math", "-fPIC", "-shared", "-std=gnu11")
_LOCK = threading.Lock()
_CACHE: dict[tuple[int, torch.dtype], object] = {}
_FAILED: dict[tuple[int, torch.dtype], str] = {}
_BUILT: dict[tuple[int, torch.dtype], str] = {}   # the library loaded for each key
_SKIPPED: dict[tuple[int, torch.dtype], str] = {}  # not tried: switched off, or not covered
#: Set in the environment once the fall-back note was printed, so that worker processes (which
#: inherit it) do not print it again.
_NOTED_ENV = "BOUNDCALC_KERNEL_FALLBACK_NOTED"
#: The same for the note that an untrusted cache folder was skipped for the fallback folder.
_SKIP_NOTED_ENV = "BOUNDCALC_KERNEL_CACHE_SKIP_NOTED"
_DTYPES = (torch.float32, torch.float64)
_LOG2E = 1.0 / math.log(2.0)


def kernel_enabled() -> bool:
    """False when ``BOUNDCALC_CPU_KERNEL`` is set to 0 / false / off / no."""
    return os.environ.get("BOUNDCALC_CPU_KERNEL", "1").strip().lower() not in (
        "0", "false", "off", "no")


def _cache_dir() -> Path:
    """``$BOUNDCALC_KERNEL_CACHE``, else ``kernels`` in the package's cache folder (this user's
    fallback folder when the cache is switched off: a kernel must be built somewhere to run)."""
    explicit = os.environ.get("BOUNDCALC_KERNEL_CACHE")
    if explicit:
        return Path(explicit)
    root = cache_root()
    return (root if root is not None else fallback_cache_root()) / "kernels"


def _fallback_dir() -> Path:
    """This user's own folder under the temporary directory (never a shared one)."""
    return fallback_cache_root() / "kernels"


def _arch_flags() -> tuple[str, ...]:
    """The flag that tunes for this CPU: ``-mcpu=native`` on arm64 (where GCC and clang do not
    all take ``-march=native``), ``-march=native`` elsewhere."""
    machine = platform.machine().lower()
    return ("-mcpu=native",) if machine in ("arm64", "aarch64") else ("-march=native",)


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


def _folders() -> tuple[list[Path], list[str]]:
    """Cache folders that exist (created 0700 if missing) and are private to this user, they and
    every folder above them (:func:`boundcalc.files.make_private_folder`); and why each other
    one was skipped. When the first folder is skipped as untrusted (not merely impossible to
    create) and the fallback is used, one note on stderr says so."""
    out: list[Path] = []
    skipped: list[str] = []
    primary, untrusted = _cache_dir(), None
    for folder in dict.fromkeys([primary, _fallback_dir()]):
        problem = make_private_folder(folder)
        if problem is None:
            out.append(folder)
            continue
        skipped.append(problem)
        if folder == primary and folder.is_dir():     # there, but others could change it
            untrusted = problem
    if out and untrusted is not None:
        _note_once(_SKIP_NOTED_ENV, f"note: the kernel cache folder {primary} is not used "
                                    f"({untrusted}); the kernel is built in {out[0]}")
    return out, skipped


#: Environment variable that fixes the kernel's vector width in bytes (32: AVX2-sized blocks, 64:
#: AVX-512-sized); unset, the widest the compiler targets. For comparing the two on one machine.
VECTOR_BYTES_ENV = "BOUNDCALC_KERNEL_VECTOR_BYTES"


def _vector_bytes_define() -> list[str]:
    """``-DVBYTES=<n>`` from :data:`VECTOR_BYTES_ENV` (32 or 64), or nothing when it is unset."""
    value = os.environ.get(VECTOR_BYTES_ENV, "").strip()
    if not value:
        return []
    if value not in ("32", "64"):
        raise RuntimeError(f"{VECTOR_BYTES_ENV} must be 32 or 64, got {value!r}")
    return [f"-DVBYTES={value}"]


def _name(cc: str, flags: tuple[str, ...], defines: list[str], d: int, dtype: torch.dtype) -> str:
    key = hashlib.sha256(b"\0".join([_SOURCE.read_bytes(),
                                     " ".join((cc, *flags, *defines)).encode(),
                                     _cpu_signature().encode()])).hexdigest()[:20]
    return f"fused_step_d{d}_{str(dtype).replace('torch.', '')}_{key}.so"


def _build(d: int, dtype: torch.dtype) -> Path:
    """Compile fused_step.c for (d, dtype) into a private cache folder (atomic rename) and return
    the path; a library built earlier is reused when it and its folder are private."""
    cc = _compiler()
    if cc is None:
        raise RuntimeError("no C compiler (cc or $CC) on PATH")
    defines = [f"-DKD={d}"] + (["-DREAL_DOUBLE"] if dtype == torch.float64 else [])
    defines += _vector_bytes_define()
    variants = [(*_FLAGS, *_arch_flags()), _FLAGS]      # without the CPU flag if it is refused
    names = [_name(cc, flags, defines, d, dtype) for flags in variants]
    folders, skipped = _folders()
    if not folders:
        raise RuntimeError(f"no private cache folder for the kernel: {'; '.join(skipped)}")
    for folder in folders:
        for name in names:
            target = folder / name
            if target.exists() and private_folder(target):
                return target
    errors = []
    for folder in folders:
        try:
            fd, tmp = tempfile.mkstemp(suffix=".so", dir=folder)
            os.close(fd)
        except OSError as exc:
            errors.append(f"{folder}: {exc.strerror or exc}")
            continue
        try:
            for flags, name in zip(variants, names, strict=True):
                proc = subprocess.run([cc, *flags, *defines, str(_SOURCE), "-o", tmp, "-lm"],
                                      capture_output=True, text=True, timeout=120)
                if proc.returncode == 0:
                    os.replace(tmp, folder / name)
                    return folder / name
                errors.append(f"{cc} {' '.join(flags[len(_FLAGS):]) or '(no CPU flag)'} "
                              f"failed: {proc.stderr.strip()[:300] or f'exit {proc.returncode}'}")
            break                                        # a compiler error, not a folder one
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    raise RuntimeError("; ".join(errors))


def load_kernel(d: int, dtype: torch.dtype):
    """The compiled ``boundcalc_fused_tanh`` (a :class:`Kernel`) for token dimension ``d`` and
    ``dtype``, or None (kernel switched off, dtype other than float32/float64, d > :data:`MAX_D`, or
    no compiler / a failed build — the reason is kept in :func:`kernel_unavailable_reason`, and a
    failed build is noted once on stderr)."""
    key = (int(d), dtype)
    if not kernel_enabled():
        _SKIPPED[key] = "switched off by BOUNDCALC_CPU_KERNEL"
        return None
    if dtype not in _DTYPES or not 1 <= int(d) <= MAX_D:
        _SKIPPED[key] = f"the kernel covers float32/float64 and d <= {MAX_D}"
        return None
    if key in _CACHE:
        return _CACHE[key]
    if key in _FAILED:
        return None
    with _LOCK:
        if key in _CACHE:
            return _CACHE[key]
        try:
            path = _build(int(d), dtype)
            lib = ctypes.CDLL(str(path))
            # a library in the cache that lacks the kernel's symbols (another build, a file
            # put there by hand) is no kernel: the torch path, as for one that will not load
            fn = lib.boundcalc_fused_tanh
            lanes_fn = lib.boundcalc_lanes
        except (OSError, RuntimeError, AttributeError, subprocess.SubprocessError) as err:
            _FAILED[key] = str(err)
            _note_fallback(str(err))
            return None
        p = ctypes.c_void_p
        i64 = ctypes.c_int64
        fn.argtypes = [i64, i64, i64, i64, i64, p, p, p, p, p, p, p, ctypes.c_int, p, p, p, p, p]
        fn.restype = ctypes.c_int
        lanes_fn.argtypes = []
        lanes_fn.restype = ctypes.c_int
        _BUILT[key] = str(path)
        _CACHE[key] = Kernel(fn, int(lanes_fn()))
        return _CACHE[key]


def _note_fallback(reason: str) -> None:
    """One line on stderr, once per run (worker processes inherit the mark)."""
    short = " ".join(reason.split())
    short = short if len(short) <= 300 else short[:297] + "..."
    _note_once(_NOTED_ENV, f"note: the compiled CPU kernel is not available ({short}); training "
                           f"uses the torch path (the same numbers, slower)")


def _note_once(mark: str, line: str) -> None:
    """``line`` on stderr unless the environment variable ``mark`` says it was printed in this
    run (it is set here, and worker processes inherit it)."""
    if os.environ.get(mark):
        return
    os.environ[mark] = "1"
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def backend_report() -> dict[str, dict[str, str | None]]:
    """Per (d, dtype) tried in this process: ``{"d8-float64": {"backend": "kernel" | "torch",
    "reason": why torch (None for the kernel), "library": the .so loaded}}``; empty if none."""
    out: dict[str, dict[str, str | None]] = {}
    for (d, dtype), path in _BUILT.items():
        if (d, dtype) in _CACHE:
            out[f"d{d}-{str(dtype).replace('torch.', '')}"] = {
                "backend": "kernel", "reason": None, "library": path}
    for (d, dtype), reason in [*_FAILED.items(), *_SKIPPED.items()]:
        out.setdefault(f"d{d}-{str(dtype).replace('torch.', '')}",
                       {"backend": "torch", "reason": reason, "library": None})
    return out


def kernel_unavailable_reason(d: int, dtype: torch.dtype) -> str | None:
    """Why :func:`load_kernel` returned None for (d, dtype): it tried and failed, or the kernel
    is switched off or does not cover (d, dtype); None if it did not."""
    key = (int(d), dtype)
    return _FAILED.get(key) or (None if key in _CACHE else _SKIPPED.get(key))


class Kernel(NamedTuple):
    """A loaded kernel: the C function and its heads per block (one vector register)."""

    fn: object
    lanes: int


def padded_width(m: int, lanes: int) -> int:
    """m rounded up to a multiple of ``lanes`` (the kernel's heads per block)."""
    return -(-int(m) // int(lanes)) * int(lanes)


#: Bytes of per-(sample, head) values the kernel keeps for a group of samples (cache-sized).
GROUP_BYTES = 1 << 19


class KernelLayout(NamedTuple):
    """θ of one or more students in the kernel's block-major layouts (fused_step.c).

    The students' heads lie side by side, each student padded with zero heads to whole blocks
    of ``lanes``; ``student`` names the student of every block, ``widths`` the students' widths
    m_s and ``slots`` the position of every real head in the padded layout.
    """

    Wmap: Tensor     # (m_pad/VL, d_e, d_a, VL) = log₂e · W[i, a, e]
    Ut: Tensor       # (m_pad/VL, d_a, VL) = U[i, a]
    cs: Tensor       # (m_pad,) = c_i/√m_s
    student: Tensor  # (m_pad/VL,) int32
    widths: tuple[int, ...]
    slots: Tensor    # (M,) int64
    lanes: int


def kernel_layout(cs: Tensor, U: Tensor, W: Tensor, lanes: int,
                  widths: tuple[int, ...] | None = None) -> KernelLayout:
    """Pack θ for the kernel: cs (M,) the readout already scaled (c_i/√m_s), U (M, d),
    W (M, d, d); padded heads are all zero.

    ``widths`` splits the M heads into students (consecutive, Σ m_s = M; default one student of
    width M), each padded to whole blocks of ``lanes`` heads.
    """
    M, d = U.shape
    widths = (M,) if widths is None else tuple(int(w) for w in widths)
    if sum(widths) != M or any(w < 1 for w in widths):
        raise ValueError(f"`widths` must be positive and sum to {M}, got {widths}")
    counts = torch.tensor(widths)
    padded = torch.tensor([padded_width(w, lanes) for w in widths])
    # head i of student s goes to slot i + (padded heads before s) − (real heads before s)
    shift = (padded.cumsum(0) - padded) - (counts.cumsum(0) - counts)
    slots = torch.arange(M) + torch.repeat_interleave(shift, counts)
    m_pad = int(padded.sum())
    Wp = torch.zeros(m_pad, d, d, dtype=W.dtype)
    Wp[slots] = W * _LOG2E                                                # [i, a, e]
    Up = torch.zeros(m_pad, d, dtype=U.dtype)
    Up[slots] = U
    csp = torch.zeros(m_pad, dtype=cs.dtype)
    csp[slots] = cs
    student = torch.repeat_interleave(torch.arange(len(widths), dtype=torch.int32),
                                      padded // lanes)
    blocks = m_pad // lanes
    Wmap = Wp.view(blocks, lanes, d, d).permute(0, 3, 2, 1).contiguous()   # [b, e, a, l]
    Ut = Up.view(blocks, lanes, d).permute(0, 2, 1).contiguous()          # [b, a, l]
    return KernelLayout(Wmap, Ut, csp, student, widths, slots, lanes)


def kernel_range(kernel: Kernel, X: Tensor, q: Tensor, y: Tensor, layout: KernelLayout,
                 preds: Tensor, need_grad: bool
                 ) -> tuple[Tensor, Tensor | None, Tensor | None, Tensor | None]:
    """Run the kernel on the samples of X (n, T, d), q (n, d), y (n,) (contiguous, CPU).

    Writes f_js into ``preds`` (n, S), contiguous. Returns (Σ_j r_js² (S,), Σ r h (m_pad,),
    and in the kernel's block-major layouts Σ κ̃ ∘ a (m_pad/VL, d, VL) and Σ q (κ̃ ∘ GU)
    (m_pad/VL, d, d, VL)): the partial sums of ``train._fused_range``; :func:`unpack_sums`
    turns them into its layouts.
    """
    n, T, d = X.shape
    m_pad = layout.cs.shape[0]
    S = len(layout.widths)
    dt = X.dtype
    group = max(1, min(64, GROUP_BYTES // ((2 * d + 3) * m_pad * X.element_size())))
    loss = torch.zeros(S, dtype=torch.float64)
    if need_grad:
        grad_c = torch.zeros(m_pad, dtype=dt)
        acc_a = torch.zeros(m_pad // layout.lanes, d, layout.lanes, dtype=dt)
        acc_W = torch.zeros(m_pad // layout.lanes, d, d, layout.lanes, dtype=dt)
        ptrs = (grad_c.data_ptr(), acc_a.data_ptr(), acc_W.data_ptr())
    else:
        grad_c = acc_a = acc_W = None
        ptrs = (None, None, None)
    status = kernel.fn(n, T, m_pad, group, S, layout.student.data_ptr(), X.data_ptr(),
                       q.data_ptr(), y.data_ptr(), layout.Wmap.data_ptr(), layout.Ut.data_ptr(),
                       layout.cs.data_ptr(), int(bool(need_grad)), preds.data_ptr(),
                       loss.data_ptr(), *ptrs)
    if status != 0:
        raise MemoryError("fused_step kernel could not allocate its work buffer")
    return loss.to(dt), grad_c, acc_a, acc_W


def unpack_sums(grad_c: Tensor, acc_a: Tensor, acc_W: Tensor, layout: KernelLayout
                ) -> tuple[Tensor, Tensor, Tensor]:
    """Kernel sums → the layouts of ``train._fused_range`` without the padded heads: (M,),
    (d, M), (d, d·M) [e, (a, i)], M = Σ m_s."""
    blocks, d, lanes = acc_a.shape
    m_pad = blocks * lanes
    a = acc_a.permute(1, 0, 2).reshape(d, m_pad)
    w = acc_W.permute(1, 2, 0, 3).reshape(d, d, m_pad)
    M = layout.slots.numel()
    if len(layout.widths) == 1:                      # the real heads come first: slices
        return grad_c[:M], a[:, :M].contiguous(), w[:, :, :M].reshape(d, d * M)
    keep = layout.slots
    return grad_c[keep], a[:, keep].contiguous(), w[:, :, keep].reshape(d, d * M)


__all__ = ["MAX_D", "Kernel", "KernelLayout", "backend_report", "kernel_enabled",
           "kernel_layout",
           "kernel_range", "kernel_unavailable_reason", "load_kernel", "padded_width",
           "unpack_sums"]
