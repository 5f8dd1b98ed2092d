"""The run file: one training run of the paper's model, trained anywhere, as a ``.npz``.

A run file holds the arrays below (names exact; shapes with m heads, d the token dimension,
n samples of T tokens, k recorded iterates) and nothing else is needed to check the run against
the theory (``boundcalc check``, :func:`boundcalc.check_run`):

==============  ==============  ===============================================================
array           shape           what
==============  ==============  ===============================================================
``c0``          (m,)            readout c(0) of the initial parameters θ(0)
``U0``          (m, d)          feed-forward U(0)
``W0``          (m, d, d)       attention W(0)
``c``           (k, m)          readout at each recorded iterate
``U``           (k, m, d)       feed-forward at each recorded iterate
``W``           (k, m, d, d)    attention at each recorded iterate
``steps``       (k,)            their step numbers: integers, increasing, in 0..K
``X``           (n, T, d)       the input sequences (tokens x_t as rows)
``q``           (n, d)          the queries; optional: the last token X[:, -1] when absent
``y``           (n,)            the labels
``eta``         ()              the step size
``K``           ()              the number of steps run
``activation``  ()              ``tanh`` (default when absent) or ``erf`` (σ(x) = erf(x/√2))
==============  ==============  ===============================================================

The model is the project's (:mod:`boundcalc.validators.model`):
f(X; θ) = m^{-1/2} Σ_i c_i σ(U_iᵀ X softmax(Xᵀ W_i q)), softmax over the T tokens, loss
R̂ = (1/n) Σ_j (f(X_j) − y_j)². The recorded iterates may be any subset of the steps.

Files may be large (m = 4096, n = 4000 and a few hundred iterates are several GB), so
:func:`open_run` memory-maps every array stored uncompressed and reads nothing else until asked;
:meth:`RunFile.iterates` then reads a chunk of iterates at a time. :func:`save_run` writes
uncompressed (``numpy.savez``, not ``savez_compressed``): a compressed array can only be read
whole into memory, which :func:`open_run` does for small ones but is no way to check a large run.

Every problem with a file (missing array, wrong shape, NaN or infinity, odd m, a truncated or
compressed-and-corrupt file) is an :class:`~boundcalc.errors.InputError` naming the array, which
the CLI prints in one line (exit 2). Nothing here imports torch.

Example:
    >>> import os, tempfile
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> m, d, n, T = 4, 2, 3, 5
    >>> c0 = np.array([1.0, -1.0, -1.0, 1.0]); U0 = np.tile(rng.normal(size=(2, d)), (2, 1))
    >>> W0 = np.tile(rng.normal(size=(2, d, d)), (2, 1, 1))
    >>> path = os.path.join(tempfile.mkdtemp(), "run.npz")
    >>> _ = save_run(path, c0=c0, U0=U0, W0=W0, c=c0[None], U=U0[None], W=W0[None], steps=[3],
    ...              X=rng.uniform(-0.5, 0.5, (n, T, d)), y=np.zeros(n), eta=0.1, K=3)
    >>> run = open_run(path)
    >>> (run.m, run.d, run.n, run.T, run.k, run.K, run.eta, run.activation)
    (4, 2, 3, 5, 1, 3, 0.1, 'tanh')
    >>> steps, c, U, W = run.iterates(0, 1)
    >>> steps.tolist(), W.shape
    ([3], (1, 4, 2, 2))
"""

from __future__ import annotations

import dataclasses
import io
import math
import os
import stat
import struct
import tempfile
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from boundcalc.errors import InputError

__all__ = ["ARRAYS", "ACTIVATIONS", "RunFile", "open_run", "run_from_arrays", "save_run"]

#: The arrays of a run file and their shapes (``()``: a scalar), in the table's order.
ARRAYS: dict[str, tuple[str, ...]] = {
    "c0": ("m",), "U0": ("m", "d"), "W0": ("m", "d", "d"),
    "c": ("k", "m"), "U": ("k", "m", "d"), "W": ("k", "m", "d", "d"), "steps": ("k",),
    "X": ("n", "T", "d"), "q": ("n", "d"), "y": ("n",),
    "eta": (), "K": (), "activation": (),
}

#: Arrays a run file may leave out (``q``: the last token; ``activation``: tanh).
OPTIONAL = ("q", "activation")

#: The activations a run may name.
ACTIVATIONS = ("tanh", "erf")

_MB = 1 << 20

#: Bytes the compressed arrays of one file may expand to in memory, together (a compressed
#: array cannot be memory-mapped; a run this large is saved uncompressed).
COMPRESSED_LIMIT = 256 * _MB

#: Bytes read at a time to verify a memory-mapped array's CRC-32.
_CRC_CHUNK = 16 * _MB


@dataclass(frozen=True)
class RunFile:
    """A checked run: its arrays (memory-mapped for a file), sizes and scalars.

    ``arrays`` maps every name of :data:`ARRAYS` but ``eta``, ``K``, ``activation`` to a numpy
    array (``q`` filled with the last tokens when the file has none); ``source`` names where it
    came from in messages (the path, or ``arrays``); ``ignored`` the file's other members (not
    read; ``boundcalc check`` warns of them in one line).
    """

    source: str
    arrays: Mapping[str, np.ndarray]
    m: int
    d: int
    n: int
    T: int
    k: int
    K: int
    eta: float
    activation: str
    ignored: tuple[str, ...] = ()

    def iterates(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                         np.ndarray]:
        """(steps, c, U, W) of the recorded iterates ``start:stop``, read now as float64
        (steps as int64); a NaN or infinity is an :class:`InputError` naming the array and
        the step."""
        steps = np.asarray(self.arrays["steps"][start:stop]).astype(np.int64)
        out = [steps]
        for name in ("c", "U", "W"):
            block = _rows(self.arrays[name], start, stop)
            bad = ~np.isfinite(block.reshape(block.shape[0], -1)).all(axis=1)
            if bad.any():
                step = int(steps[int(np.argmax(bad))])
                raise InputError("RUN", f"{self.source}: array `{name}` holds a NaN or infinity "
                                        f"at recorded step {step}")
            out.append(block)
        return out[0], out[1], out[2], out[3]

    def chunk_size(self, budget_mb: int = 64) -> int:
        """How many iterates a chunk of about ``budget_mb`` MB (float64) holds (at least one)."""
        per = 8 * self.m * (1 + self.d + self.d * self.d)
        return max(1, (budget_mb * _MB) // per)


# ------------------------------------------------------------------------------ reading

def _rows(arr: np.ndarray, start: int, stop: int) -> np.ndarray:
    """``arr[start:stop]`` as float64. Of a memory-mapped file only those rows are mapped, and
    unmapped once copied, so reading a file chunk by chunk keeps no more than a chunk resident."""
    if isinstance(arr, np.memmap) and arr.filename and arr.flags.c_contiguous and arr.ndim:
        stop = max(start, min(stop, arr.shape[0]))
        row = arr.itemsize * int(np.prod(arr.shape[1:], dtype=np.int64))
        if stop == start:
            return np.empty((0, *arr.shape[1:]))
        part = np.memmap(arr.filename, dtype=arr.dtype, mode="r", offset=arr.offset + start * row,
                         shape=(stop - start, *arr.shape[1:]))
        out = np.array(part, dtype=np.float64)
        del part
        return out
    return np.asarray(arr[start:stop], dtype=np.float64)


def _fail(source: str, message: str) -> InputError:
    return InputError("RUN", f"{source}: {message}")


def _scan_local_headers(path: str, size: int) -> str:
    """Why a zip without its directory cannot be read, naming the array it ends in."""
    last = None
    with open(path, "rb") as fh:
        offset = 0
        while offset + 30 <= size:
            fh.seek(offset)
            head = fh.read(30)
            if head[:4] != b"PK\x03\x04":
                break
            comp, name_len, extra_len = (struct.unpack("<I", head[18:22])[0],
                                         *struct.unpack("<HH", head[26:30]))
            name = fh.read(name_len).decode("utf-8", "replace").removesuffix(".npy")
            extra = fh.read(extra_len)
            if comp == 0xFFFFFFFF:  # zip64: the sizes are in the extra field
                pos = 0
                while pos + 4 <= len(extra):
                    tag, length = struct.unpack("<HH", extra[pos:pos + 4])
                    if tag == 1 and length >= 16 and pos + 20 <= len(extra):
                        comp = struct.unpack("<Q", extra[pos + 12:pos + 20])[0]
                        break
                    pos += 4 + length
            start = offset + 30 + name_len + extra_len
            if start + comp > size:
                return (f"array `{name}` is truncated (the file ends at byte {size}, the array "
                        f"needs {start + comp})")
            last, offset = name, start + comp
    if last is None:
        return "is not a run file (.npz): no array could be read"
    return (f"is truncated after array `{last}` (the zip directory at its end is missing): "
            "a run file needs every array of `boundcalc check --help`")


class _Budget:
    """Bytes that the compressed members of one file may still expand to in memory."""

    def __init__(self, left: int):
        self.left = left


def _crc_problem(fh: Any, start: int, length: int, expected: int) -> bool:
    """Whether the ``length`` bytes at ``start`` differ from the zip's CRC-32 ``expected``
    (read :data:`_CRC_CHUNK` bytes at a time: memory bounded whatever the member's size)."""
    fh.seek(start)
    crc, left = 0, length
    while left > 0:
        block = fh.read(min(_CRC_CHUNK, left))
        if not block:
            return True
        crc = zlib.crc32(block, crc)
        left -= len(block)
    return crc != expected


def _header(stream: Any, name: str, source: str) -> tuple[tuple[int, ...], bool, np.dtype]:
    """(shape, fortran order, dtype) of the ``.npy`` header at the stream's position."""
    version = np.lib.format.read_magic(stream)
    if version not in ((1, 0), (2, 0)):
        raise _fail(source, f"array `{name}` is in .npy format {version[0]}.{version[1]}; a run "
                            "file's arrays are 1.0 or 2.0 (numpy.save of real numbers)")
    try:   # numpy parses the header as a Python literal: damage raises anything from tokenize
        read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                else np.lib.format.read_array_header_2_0)
        shape, fortran, dtype = read(stream)
    except Exception as err:  # noqa: BLE001 - a damaged header, whatever numpy raises for it
        raise ValueError(f"its .npy header is damaged ({type(err).__name__}: {err})") from None
    if dtype.hasobject:
        raise ValueError("it holds Python objects")
    if any(int(x) < 0 for x in shape):
        raise ValueError(f"its header gives a negative size, shape {tuple(shape)}")
    return tuple(int(x) for x in shape), bool(fortran), dtype


def _member(path: str, fh: Any, zf: zipfile.ZipFile, info: zipfile.ZipInfo, size: int,
            source: str, budget: _Budget) -> np.ndarray:
    """One member, its zip CRC-32 verified: memory-mapped when stored uncompressed and large
    (the CRC read in chunks first), else read whole (a compressed member only within
    ``budget``: it expands in memory beyond what the file holds)."""
    name = info.filename.removesuffix(".npy")
    try:
        if info.compress_type != zipfile.ZIP_STORED:
            if info.file_size > budget.left:
                raise _fail(source, f"array `{name}` is compressed and expands to "
                                    f"{info.file_size} bytes, more than the "
                                    f"{COMPRESSED_LIMIT // _MB} MB that compressed arrays may "
                                    "take together: save the run uncompressed "
                                    "(boundcalc.save_run, numpy.savez), which is memory-mapped")
            budget.left -= info.file_size
            with zf.open(info) as member:         # zipfile checks the CRC on reaching the end
                raw = member.read(info.file_size + 1)
            if len(raw) != info.file_size:
                raise ValueError(f"it expands to {len(raw)} bytes, the zip says {info.file_size}")
            stream = io.BytesIO(raw)
            shape, fortran, dtype = _header(stream, name, source)
            count = math.prod(shape)
            if stream.tell() + count * dtype.itemsize > len(raw):
                raise ValueError(f"its header says {count * dtype.itemsize} bytes of data, it "
                                 f"holds {len(raw) - stream.tell()}")
            flat = np.frombuffer(raw, dtype=dtype, count=count, offset=stream.tell())
            return flat.reshape(shape, order="F" if fortran else "C").copy()
        fh.seek(info.header_offset)
        head = fh.read(30)
        if head[:4] != b"PK\x03\x04":
            raise ValueError("bad zip entry")
        name_len, extra_len = struct.unpack("<HH", head[26:30])
        start = info.header_offset + 30 + name_len + extra_len
        end = start + info.compress_size
        if end > size:
            raise _fail(source, f"array `{name}` is truncated (the file ends at byte {size}, "
                                f"the array needs {end})")
        fh.seek(start)
        shape, fortran, dtype = _header(fh, name, source)
        offset = fh.tell()
        nbytes = math.prod(shape) * dtype.itemsize
        if offset + nbytes > end:
            raise _fail(source, f"array `{name}` is damaged: its header says {nbytes} bytes of "
                                f"data, its zip entry holds {max(0, end - offset)}")
        if _crc_problem(fh, start, info.compress_size, info.CRC):
            raise _fail(source, f"array `{name}` is damaged: its bytes do not match the zip's "
                                "CRC-32 checksum (a bit flipped on disk or in transfer?)")
        if nbytes < _MB:  # small: read now
            fh.seek(offset)
            data = fh.read(nbytes)
            flat = np.frombuffer(data, dtype=dtype, count=math.prod(shape))
            return flat.reshape(shape, order="F" if fortran else "C").copy()
        return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape,
                         order="F" if fortran else "C")
    except InputError:
        raise
    except (ValueError, TypeError, KeyError, OSError, EOFError, OverflowError, MemoryError,
            struct.error, zlib.error, zipfile.BadZipFile, NotImplementedError,
            RuntimeError) as err:
        raise _fail(source, f"array `{name}` cannot be read: {' '.join(str(err).split())}"
                    ) from None


def _load_members(path: str) -> tuple[dict[str, np.ndarray], list[str]]:
    """The arrays of :data:`ARRAYS` in the file at ``path``, and the names of its other members
    (not read)."""
    source = path
    try:
        info = os.stat(path)
    except OSError as err:
        raise _fail(source, f"cannot be read: {err.strerror or err}") from None
    if not stat.S_ISREG(info.st_mode):
        raise _fail(source, "is not a regular file (a run file is a .npz file)")
    size = info.st_size
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, EOFError, ValueError, struct.error, OverflowError):
        raise _fail(source, _scan_local_headers(path, size)) from None
    except OSError as err:
        raise _fail(source, f"cannot be read: {err.strerror or err}") from None
    out: dict[str, np.ndarray] = {}
    ignored: list[str] = []
    budget = _Budget(COMPRESSED_LIMIT)
    with zf, open(path, "rb") as fh:
        for member in zf.infolist():
            name = member.filename.removesuffix(".npy")
            if name not in ARRAYS or not member.filename.endswith(".npy"):
                ignored.append(member.filename)
                continue
            if name in out:
                raise _fail(source, f"array `{name}` appears twice in the file")
            out[name] = _member(path, fh, zf, member, size, source, budget)
    return out, ignored


def open_run(path: str | os.PathLike[str]) -> RunFile:
    """The run file at ``path``, checked and memory-mapped (module docstring).

    Raises:
        InputError naming the array (flag ``RUN``) for a missing, misshapen, non-finite or
        truncated array, an odd m, bad scalars.
    """
    text = os.fspath(path)
    arrays, ignored = _load_members(text)
    run = run_from_arrays(arrays, source=text)
    return dataclasses.replace(run, ignored=tuple(ignored)) if ignored else run


def _scalar(source: str, arrays: Mapping[str, Any], name: str) -> Any:
    value = np.asarray(arrays[name])
    if value.size != 1:
        raise _fail(source, f"array `{name}` must be a scalar, got shape {value.shape}")
    return value.reshape(()).item()


def _check_shape(source: str, name: str, arr: np.ndarray, sizes: dict[str, int]) -> None:
    want = ARRAYS[name]
    expected = tuple(sizes[s] for s in want)
    if arr.shape != expected:
        dims = ", ".join(want)
        raise _fail(source, f"array `{name}` must have shape ({dims}) = {expected}, "
                            f"got {arr.shape}")
    if arr.dtype.kind not in "fiu":
        raise _fail(source, f"array `{name}` must hold real numbers, got dtype {arr.dtype}")
    if not arr.dtype.isnative or (arr.dtype.kind == "f" and arr.dtype.itemsize > 8):
        # float64 holds what is read exactly, and torch takes it as it is
        raise _fail(source, f"array `{name}` must be float16, float32, float64 or integers in "
                            f"this machine's byte order, got dtype {arr.dtype.str}")


def _finite(source: str, name: str, arr: np.ndarray) -> None:
    flat = arr.reshape(-1)
    chunk = 1 << 22
    for start in range(0, flat.size, chunk):
        if not np.isfinite(flat[start:start + chunk]).all():
            raise _fail(source, f"array `{name}` holds a NaN or infinity")


def run_from_arrays(arrays: Mapping[str, Any], *, source: str = "arrays") -> RunFile:
    """A :class:`RunFile` from a mapping of the arrays of :data:`ARRAYS` (numpy arrays,
    memory maps, torch tensors or lists), checked like a file.

    The small arrays (θ(0), X, q, y, steps) are checked for NaN here; the iterates when read
    (:meth:`RunFile.iterates`).
    """
    arrays = {k: _numpy(v) for k, v in arrays.items()}
    for name in ARRAYS:
        if name not in arrays and name not in OPTIONAL:
            raise _fail(source, f"array `{name}` is missing (a run file holds "
                                f"{', '.join(ARRAYS)}; q and activation are optional)")
    for name in ("c0", "U0", "W0", "steps", "X", "y", "c", "U", "W", "q"):
        if name in arrays and arrays[name].ndim != len(ARRAYS[name]):
            raise _fail(source, f"array `{name}` must have shape ({', '.join(ARRAYS[name])}), "
                                f"got {arrays[name].shape}")
    sizes = {"m": arrays["c0"].shape[0], "d": arrays["U0"].shape[1],
             "k": arrays["steps"].shape[0], "n": arrays["X"].shape[0], "T": arrays["X"].shape[1]}
    if sizes["m"] < 2 or sizes["m"] % 2:
        raise _fail(source, f"array `c0` has m = {sizes['m']} heads: m must be a positive even "
                            "integer (the symmetric init pairs the heads)")
    for name, low in (("d", "U0"), ("k", "steps"), ("n", "X"), ("T", "X")):
        if sizes[name] < 1:
            raise _fail(source, f"array `{low}` gives {name} = 0: it must be at least 1")
    if "q" not in arrays:
        arrays["q"] = arrays["X"][:, -1, :]
    for name in ("c0", "U0", "W0", "c", "U", "W", "steps", "X", "q", "y"):
        _check_shape(source, name, arrays[name], sizes)
    for name in ("c0", "U0", "W0", "X", "q", "y", "steps"):
        _finite(source, name, arrays[name])
    eta = _scalar(source, arrays, "eta")
    K = _scalar(source, arrays, "K")
    if isinstance(eta, bool) or not isinstance(eta, (int, float)) or not 0 < eta < np.inf:
        raise _fail(source, f"array `eta` must be a positive finite number, got {eta!r}")
    if isinstance(K, bool) or not isinstance(K, (int, float)) or not math.isfinite(K) \
            or int(K) != K or K < 1:
        raise _fail(source, f"array `K` must be a positive integer, got {K!r}")
    K = int(K)
    activation = str(_scalar(source, arrays, "activation")) if "activation" in arrays else "tanh"
    if activation.strip().lower() not in ACTIVATIONS:
        raise _fail(source, f"array `activation` must be one of {', '.join(ACTIVATIONS)}, "
                            f"got {activation!r}")
    steps = np.asarray(arrays["steps"])
    if (steps != np.round(steps)).any() or (steps < 0).any() or (steps > K).any():
        raise _fail(source, f"array `steps` must hold integers in 0..K = 0..{K}")
    if (np.diff(steps) <= 0).any():
        raise _fail(source, "array `steps` must be strictly increasing")
    kept = {k: v for k, v in arrays.items() if k in ARRAYS and k not in ("eta", "K", "activation")}
    return RunFile(source, kept, sizes["m"], sizes["d"], sizes["n"], sizes["T"], sizes["k"], K,
                   float(eta), activation.strip().lower())


# ------------------------------------------------------------------------------ writing

def _numpy(value: Any) -> np.ndarray:
    """A numpy view of an array, a torch tensor (detached, moved to the CPU) or a list."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):
        value = value.detach().cpu().numpy()
    if isinstance(value, np.ndarray):
        return value
    return np.asarray(value)


def save_run(path: str | os.PathLike[str], *, c0: Any, U0: Any, W0: Any, c: Any, U: Any, W: Any,
             steps: Any, X: Any, y: Any, eta: float, K: int, q: Any = None,
             activation: str = "tanh") -> Path:
    """Write a run file (module docstring) at ``path``, uncompressed, atomically.

    Takes numpy arrays, torch tensors (any device; detached and copied to the CPU) or lists,
    with the shapes of :data:`ARRAYS`; ``q=None`` leaves the queries out (the last token).
    The arrays are checked as :func:`open_run` checks them before anything is written.

    Returns:
        The path written.

    Raises:
        InputError naming the array for a wrong shape, a NaN, an odd m, bad scalars.
    """
    arrays: dict[str, Any] = {"c0": c0, "U0": U0, "W0": W0, "c": c, "U": U, "W": W,
                              "steps": steps, "X": X, "y": y, "eta": eta, "K": K,
                              "activation": activation}
    if q is not None:
        arrays["q"] = q
    arrays = {k: _numpy(v) for k, v in arrays.items()}
    run = run_from_arrays(arrays, source="save_run")
    for start in range(0, run.k, run.chunk_size()):
        run.iterates(start, start + run.chunk_size())
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                               dir=target.parent if str(target.parent) else ".")
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **arrays)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
