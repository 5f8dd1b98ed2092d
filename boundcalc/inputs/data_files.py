"""The content of the data files a surface takes with ``--data``, checked before any work.

A ``--data`` path that exists can still be unusable: an ``.npz`` without the arrays the command
reads, arrays of the wrong shape or holding NaN, a truncated or corrupt IDX file, a folder
without the four MNIST files, or fewer samples than the N asked for. Each such file is refused
here with an :class:`~boundcalc.errors.InputError` naming the flag (``--data``), in one line that
names the file, before any run directory, lock or torch import, so that a bad file is exit 2 and
never a traceback after minutes of work. The readers return what they read (numpy arrays), and
the validators build their data sets on them, so a file is checked by the same code that reads
it. Only numpy and the standard library are imported.

The files, by surface:

* ``boundcalc generalization --data``: a token set, an ``.npz`` with ``X`` (N, d_s, d) and ``y``
  (N,), N ≥ 2, finite (:func:`read_tokens`).
* ``boundcalc validate generalization --data``: a token set with ``X`` (M, d_s, d), ``y`` (M,)
  and optionally ``X_test``, ``y_test``, enough samples for ``--N`` (:func:`split_tokens`), or
  MNIST as for Table 1 (:func:`check_generalization_data` tells which).
* ``boundcalc reproduce table1 --data``: MNIST, a folder of the four IDX files (each possibly
  gzip-compressed, :func:`read_idx`) or an ``.npz`` with ``x_train``, ``y_train``, ``x_test``,
  ``y_test`` (:func:`read_mnist`), holding enough images of the two digits for the largest N
  (:func:`read_digit_images`, :func:`check_digit_images`).

Example:
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> np.savez(folder / "tokens.npz", X=np.ones((3, 2, 4)))
    >>> read_tokens(folder / "tokens.npz")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    boundcalc.errors.InputError: --data '.../tokens.npz' must be an .npz with arrays 'X' \
(N, d_s, d) and 'y' (N,), found ['X']
"""

from __future__ import annotations

import gzip
import math
import os
import struct
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from boundcalc.errors import InputError

__all__ = ["IDX_DTYPES", "MNIST_ARRAYS", "MNIST_SPLITS", "TOKEN_ARRAYS",
           "check_digit_images", "check_generalization_data", "read_digit_images", "read_idx",
           "read_mnist", "read_tokens", "select_digits", "split_tokens"]

#: The element types of an IDX file, by the type code of its magic number.
IDX_DTYPES: dict[int, np.dtype] = {
    0x08: np.dtype(np.uint8), 0x09: np.dtype(np.int8), 0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"), 0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}

#: The stems of the MNIST IDX files (images, labels) of each split.
MNIST_SPLITS: dict[str, tuple[str, str]] = {"train": ("train-images", "train-labels"),
                                            "test": ("t10k-images", "t10k-labels")}

#: The arrays of an MNIST ``.npz`` (the layout of ``keras.datasets.mnist``'s ``mnist.npz``).
MNIST_ARRAYS = ("x_train", "y_train", "x_test", "y_test")

#: The arrays of a token set (``X``, ``y`` required; ``X_test``, ``y_test`` optional).
TOKEN_ARRAYS = ("X", "y", "X_test", "y_test")

_MNIST_HINT = "need the four MNIST IDX files, or an .npz with x_train, y_train, x_test, y_test"

#: What can go wrong reading an archive whose bytes are damaged (numpy raises these unwrapped).
_DAMAGED = (ValueError, TypeError, EOFError, zipfile.BadZipFile, zlib.error)


# ------------------------------------------------------------------------------ npz archives


def _read_npz(path: Path, names: Sequence[str], flag: str, label: str, unreadable: str,
              dtype: type | None = None) -> tuple[dict[str, np.ndarray], list[str]]:
    """The arrays ``names`` that the ``.npz`` ``path`` holds (as ``dtype`` when given), and the
    names of all its arrays; a file numpy cannot read as an archive is ``label: unreadable
    (why)``."""
    if path.exists() and not path.is_file():  # a folder, a pipe, a device: nothing to load
        raise InputError(flag, f"{label}: {unreadable} (not a regular file)")
    try:
        loaded = np.load(path, allow_pickle=False)
    except OSError as exc:
        raise InputError(flag, f"{label}: cannot read ({exc.strerror or exc})") from None
    except _DAMAGED as exc:
        raise InputError(flag, f"{label}: {unreadable} ({exc})") from None
    if not hasattr(loaded, "files"):  # one .npy array
        raise InputError(flag, f"{label}: {unreadable} (an .npy array, not an .npz archive)")
    try:
        with loaded as archive:
            files = sorted(archive.files)
            arrays = {k: np.asarray(archive[k], dtype=dtype) for k in names if k in files}
    except OSError as exc:
        raise InputError(flag, f"{label}: cannot read ({exc.strerror or exc})") from None
    except _DAMAGED as exc:
        raise InputError(flag, f"{label}: {unreadable} ({exc})") from None
    return arrays, files


def _all_finite(*arrays: np.ndarray) -> bool:
    return all(not np.issubdtype(a.dtype, np.inexact) or bool(np.isfinite(a).all())
               for a in arrays)


# ------------------------------------------------------------------------------ IDX and MNIST


def _read_bytes(path: Path, flag: str) -> bytes:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(flag, f"{path}: cannot read ({exc.strerror or exc})") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(flag, f"{path}: corrupt gzip data ({exc})") from None
    return raw


def read_idx(path: str | os.PathLike[str], *, flag: str = "--data") -> np.ndarray:
    """One IDX file (LeCun's format; gzip-compressed too, recognised by its magic bytes) as a
    numpy array of its declared shape and type; a file that is not one (bad magic number,
    unknown type code, truncated header or data, corrupt gzip) is an :class:`InputError` naming
    ``flag`` and the file.

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "labels-idx1-ubyte"
        >>> _ = path.write_bytes(bytes([0, 0, 0x08, 1, 0, 0, 0, 3, 7, 1, 9]))
        >>> read_idx(path)
        array([7, 1, 9], dtype=uint8)
        >>> _ = path.write_bytes(bytes([0, 0, 0x08, 1, 0, 0, 0, 4, 7, 1, 9]))
        >>> read_idx(path)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        boundcalc.errors.InputError: --data .../labels-idx1-ubyte: IDX data has 3 bytes, the \
header (4,) needs 4
    """
    path = Path(path)
    raw = _read_bytes(path, flag)
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise InputError(flag, f"{path}: not an IDX file (bad magic number)")
    code, ndim = raw[2], raw[3]
    if code not in IDX_DTYPES or ndim < 1:
        raise InputError(flag, f"{path}: not an IDX file (type code 0x{code:02x}, {ndim} "
                               "dimensions)")
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise InputError(flag, f"{path}: truncated IDX header")
    shape = struct.unpack(f">{ndim}I", raw[4:header])
    dtype = IDX_DTYPES[code]
    expected = math.prod(shape) * dtype.itemsize  # Python integers: a huge header cannot wrap
    if len(raw) - header != expected:
        raise InputError(flag, f"{path}: IDX data has {len(raw) - header} bytes, the header "
                               f"{tuple(shape)} needs {expected}")
    return np.frombuffer(raw, dtype=dtype, offset=header).reshape(shape).copy()


def _find_idx(folder: Path, stem: str, rank: int, flag: str) -> Path:
    for sep in ("-", "."):
        for suffix in ("", ".gz"):
            candidate = folder / f"{stem}-idx{rank}{sep}ubyte{suffix}"
            if candidate.is_file():
                return candidate
    raise InputError(flag, f"{folder}: no {stem}-idx{rank}-ubyte[.gz] file ({_MNIST_HINT})")


def _check_pair(images: np.ndarray, labels: np.ndarray, where: str, flag: str) -> None:
    if images.ndim != 3 or images.shape[1:] != (28, 28):
        raise InputError(flag, f"{where}: images must have shape (n, 28, 28), got "
                               f"{images.shape}")
    if labels.shape != (images.shape[0],):
        raise InputError(flag, f"{where}: {labels.shape[0] if labels.ndim else 0} labels for "
                               f"{images.shape[0]} images (labels must have shape (n,))")
    if not _all_finite(images, labels):
        raise InputError(flag, f"{where}: contains non-finite values")


def read_mnist(path: str | os.PathLike[str], *, flag: str = "--data"
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(x_train, y_train, x_test, y_test) of an MNIST data set: uint8 images (n, 28, 28) and
    int64 labels, read from a folder of the four IDX files (``train-images-idx3-ubyte``,
    ``train-labels-idx1-ubyte``, ``t10k-images-idx3-ubyte``, ``t10k-labels-idx1-ubyte``, each
    possibly ``.gz``; the ``…-idx3.ubyte`` spelling too) or from an ``.npz`` with
    :data:`MNIST_ARRAYS`. Nothing is downloaded. An unusable file (see :func:`read_idx`; a
    missing file or array, images not 28 × 28, a label count that is not the image count,
    non-finite values) is an :class:`InputError` naming ``flag`` and the file.

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "mnist.npz"
        >>> images = np.zeros((3, 28, 28), np.uint8)
        >>> np.savez(path, x_train=images, y_train=[0, 1, 1], x_test=images[:1], y_test=[0])
        >>> [a.shape for a in read_mnist(path)]
        [(3, 28, 28), (3,), (1, 28, 28), (1,)]
        >>> read_mnist(path.parent)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        boundcalc.errors.InputError: --data ...: no train-images-idx3-ubyte[.gz] file (need \
the four MNIST IDX files, or an .npz with x_train, y_train, x_test, y_test)
    """
    path = Path(path)
    if path.is_dir():
        out = []
        for split, (img_stem, lab_stem) in MNIST_SPLITS.items():
            img_file = _find_idx(path, img_stem, 3, flag)
            lab_file = _find_idx(path, lab_stem, 1, flag)
            images, labels = read_idx(img_file, flag=flag), read_idx(lab_file, flag=flag)
            _check_pair(images, labels, f"{img_file} / {lab_file} ({split})", flag)
            out += [images.astype(np.uint8), labels.astype(np.int64)]
        return out[0], out[1], out[2], out[3]
    if not path.exists():
        raise InputError(flag, f"{path}: no such file or folder")
    arrays, files = _read_npz(path, MNIST_ARRAYS, flag, str(path),
                              "not a readable .npz or IDX folder")
    missing = [k for k in MNIST_ARRAYS if k not in arrays]
    if missing:
        raise InputError(flag, f"{path}: .npz lacks {', '.join(missing)} (found {files})")
    x_train, y_train, x_test, y_test = (arrays[k] for k in MNIST_ARRAYS)
    _check_pair(x_train, y_train, f"{path} (train)", flag)
    _check_pair(x_test, y_test, f"{path} (test)", flag)
    return (x_train.astype(np.uint8), y_train.astype(np.int64),
            x_test.astype(np.uint8), y_test.astype(np.int64))


def select_digits(images: np.ndarray, labels: np.ndarray, digits: tuple[int, int] = (0, 1)
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Keep the images of the two ``digits``; their labels become 0 (the first digit) and 1
    (the second).

    Example:
        >>> images, labels = select_digits(np.zeros((4, 2, 2)), np.array([3, 7, 5, 3]), (3, 5))
        >>> images.shape, labels.tolist()
        ((3, 2, 2), [0, 1, 0])
    """
    keep = (labels == digits[0]) | (labels == digits[1])
    return images[keep], (labels[keep] == digits[1]).astype(np.int64)


def read_digit_images(path: str | os.PathLike[str], digits: Sequence[int] = (0, 1), N: int = 1,
                      n_test: int | None = None, *, flag: str = "--data"
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The MNIST images of the two ``digits`` (:func:`read_mnist`, :func:`select_digits`; labels
    0/1): the training images and the first ``n_test`` test images (all when None). Fewer than
    ``N`` training images (the largest N a run trains on) or no test image is an
    :class:`InputError` naming ``flag`` and the file.

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "mnist.npz"
        >>> images = np.zeros((4, 28, 28), np.uint8)
        >>> np.savez(path, x_train=images, y_train=[0, 1, 2, 1], x_test=images, y_test=[0] * 4)
        >>> [len(a) for a in read_digit_images(path, (0, 1), N=3, n_test=2)]
        [3, 3, 2, 2]
        >>> read_digit_images(path, (1, 2), N=4)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        boundcalc.errors.InputError: --data .../mnist.npz: 3 training images of digits (1, 2), \
the largest N is 4
    """
    pair = (int(digits[0]), int(digits[1]))
    x_tr, y_tr, x_te, y_te = read_mnist(path, flag=flag)
    x_tr, y_tr = select_digits(x_tr, y_tr, pair)
    x_te, y_te = select_digits(x_te, y_te, pair)
    if n_test is not None:
        x_te, y_te = x_te[:n_test], y_te[:n_test]
    if len(y_tr) < N:
        raise InputError(flag, f"{path}: {len(y_tr)} training images of digits {pair}, the "
                               f"largest N is {N}")
    if len(y_te) < 1:
        raise InputError(flag, f"{path}: no test images of digits {pair}")
    return x_tr, y_tr, x_te, y_te


def check_digit_images(flag: str, path: str | os.PathLike[str], config: Mapping[str, Any]
                       ) -> None:
    """``--data`` of an experiment that trains on MNIST digits (``reproduce table1``), against
    the run's ``config`` (every field's value, torch-free): the file is readable and holds at
    least max(``Ns``) training images and one test image of its two ``digits``
    (:func:`read_digit_images`).

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "mnist.npz"
        >>> images = np.zeros((4, 28, 28), np.uint8)
        >>> np.savez(path, x_train=images, y_train=[0, 1, 2, 1], x_test=images, y_test=[0] * 4)
        >>> check_digit_images("--data", path, {"Ns": (2, 3), "digits": (0, 1), "n_test": None})
    """
    read_digit_images(path, tuple(config["digits"]), max(config["Ns"]), config.get("n_test"),
                      flag=flag)


# ------------------------------------------------------------------------------ token sets


def read_tokens(path: str | os.PathLike[str], *, flag: str = "--data"
                ) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of the token set of ``boundcalc generalization --data``: an ``.npz`` with
    ``X`` (N, d_s, d) and ``y`` (N,), N ≥ 2, finite, as float64; anything else is an
    :class:`InputError` naming ``flag`` and the file.

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "tokens.npz"
        >>> np.savez(path, X=np.ones((3, 2, 4)), y=[0, 1, 1])
        >>> [a.shape for a in read_tokens(path)]
        [(3, 2, 4), (3,)]
    """
    label = repr(os.fspath(path))
    arrays, files = _read_npz(Path(path), ("X", "y"), flag, label, "cannot read as .npz",
                              np.float64)
    if "X" not in arrays or "y" not in arrays:
        raise InputError(flag, f"{label} must be an .npz with arrays 'X' (N, d_s, d) and 'y' "
                               f"(N,), found {files}")
    X, y = arrays["X"], arrays["y"]
    if X.ndim != 3 or y.shape != (X.shape[0],) or X.shape[0] < 2 or 0 in X.shape:
        raise InputError(flag, f"{label} needs X of shape (N, d_s, d) with N >= 2 and y of "
                               f"shape (N,), got X {X.shape}, y {y.shape}")
    if not _all_finite(X, y):
        raise InputError(flag, f"{label} contains non-finite values")
    return X, y


def split_tokens(path: str | os.PathLike[str], N: int, n_test: int, *, flag: str = "--data"
                 ) -> dict[str, np.ndarray] | None:
    """The training and held-out samples of a token set for ``validate generalization``
    (float64): an ``.npz`` with ``X`` (M, d_s, d) and ``y`` (M,), optionally ``X_test``,
    ``y_test`` (the first ``n_test`` held out); without them the first ``N`` of a seed-0
    permutation train and the next ``n_test`` are held out. Returns ``{"X", "y", "X_test",
    "y_test"}``, or None when ``path`` is not an ``.npz`` holding ``X`` and ``y`` (then it is
    MNIST, :func:`read_digit_images`). Too few samples for ``N`` (and one held out), shapes that
    do not fit, or non-finite values are an :class:`InputError` naming ``flag`` and the file.

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "tokens.npz"
        >>> np.savez(path, X=np.ones((5, 2, 4)), y=np.arange(5.0))
        >>> {k: v.shape for k, v in split_tokens(path, 3, 8).items()}
        {'X': (3, 2, 4), 'y': (3,), 'X_test': (2, 2, 4), 'y_test': (2,)}
        >>> split_tokens(path, 5, 8)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        boundcalc.errors.InputError: --data .../tokens.npz: 5 samples, need N + 1 = 6 or more \
(N to train, the rest held out) or X_test / y_test
    """
    where = os.fspath(path)
    if not where.endswith(".npz"):
        return None
    arrays, _ = _read_npz(Path(path), TOKEN_ARRAYS, flag, where, "cannot read as .npz",
                          np.float64)
    if "X" not in arrays or "y" not in arrays:
        return None
    X, y = arrays["X"], arrays["y"]
    if X.ndim != 3 or y.shape != (X.shape[0],) or 0 in X.shape[1:]:
        raise InputError(flag, f"{where}: needs X of shape (M, d_s, d) and y of shape (M,), got "
                               f"X {X.shape}, y {y.shape}")
    if "X_test" in arrays and "y_test" in arrays:
        X_te, y_te = arrays["X_test"][:n_test], arrays["y_test"][:n_test]
        if X.shape[0] < N:
            raise InputError(flag, f"{where}: {X.shape[0]} training samples, N is {N}")
        X_tr, y_tr = X[:N], y[:N]
        if X_te.ndim != 3 or X_te.shape[1:] != X.shape[1:] or y_te.shape != (X_te.shape[0],):
            raise InputError(flag, f"{where}: X_test / y_test do not match X's (d_s, d) = "
                                   f"{X.shape[1:]}")
    else:
        if X.shape[0] < N + 1:
            raise InputError(flag, f"{where}: {X.shape[0]} samples, need N + 1 = {N + 1} or "
                                   f"more (N to train, the rest held out) or X_test / y_test")
        order = np.random.default_rng(0).permutation(X.shape[0])
        X_tr, y_tr = X[order[:N]], y[order[:N]]
        X_te, y_te = X[order[N:N + n_test]], y[order[N:N + n_test]]
    if X_te.shape[0] < 1:
        raise InputError(flag, f"{where}: no held-out samples")
    if not _all_finite(X_tr, y_tr, X_te, y_te):
        raise InputError(flag, f"{where}: contains non-finite values")
    return {"X": X_tr, "y": y_tr, "X_test": X_te, "y_test": y_te}


def check_generalization_data(N: int, n_test: int, data: str | os.PathLike[str] | None, *,
                              flag: str = "--data") -> None:
    """``--data`` of ``validate generalization`` with its ``--N`` and ``--n-test``: a token set
    (:func:`split_tokens`) or else MNIST digits 0 vs 1 (:func:`read_digit_images`), able to
    supply N training samples and a held-out one; None (the generated set) always can.

    Example:
        >>> check_generalization_data(64, 128, None)
    """
    if data is None:
        return
    if split_tokens(data, N, n_test, flag=flag) is None:
        read_digit_images(data, (0, 1), N, n_test, flag=flag)
