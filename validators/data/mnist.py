"""MNIST digits 0 vs 1 as token sequences for paper 003's Table 1, and a generated stand-in.

Nothing is downloaded: :func:`load_mnist` reads the files a user points at.

* **IDX files** (LeCun's format): a folder holding ``train-images-idx3-ubyte``,
  ``train-labels-idx1-ubyte``, ``t10k-images-idx3-ubyte`` and ``t10k-labels-idx1-ubyte``, each
  possibly gzip-compressed (``.gz`` suffix; gzip is also recognised by its magic bytes), and the
  ``…-idx3.ubyte`` spelling is accepted too.
* **.npz** with arrays ``x_train`` (n, 28, 28), ``y_train`` (n,), ``x_test``, ``y_test`` (the layout
  of ``keras.datasets.mnist``'s ``mnist.npz``).

A file that cannot be used raises a one-line :class:`ValueError` naming the file.

**Images → tokens** (the paper, L429, says only "each image of size 28 × 28 is broken into tokens
each of dimension d = 64"; this is our choice, configurable by ``patch``): the 28 × 28 image is
zero-padded symmetrically to the next multiple of ``patch`` (28 → 32 for ``patch = 8``) and cut
into non-overlapping ``patch × patch`` patches, read row by row (top-left patch first); each patch,
flattened row-major, is one token. ``patch = 8`` gives d_s = 16 tokens of dimension d = 64;
``patch = 4`` gives d_s = 49 tokens of dimension 16; ``patch = 7`` gives 16 tokens of dimension 49.

**Scale, so that R_X is known a priori** (``scale``): ``"pixel"`` (default) divides the grey levels
by 255, so pixels lie in [0, 1] (what torchvision's ``ToTensor`` gives, presumably the paper's
input); a token then has ‖x‖₂ ≤ √(patch²) = patch, hence ‖X_n‖_F ≤ √d_s·patch and the paper's
Assumption 3 (‖X_n‖_F ≤ √d_s R_X) holds with **R_X = patch** (8 for 64-dimensional tokens) whatever
the data. ``"unit"`` divides further by ``patch``: every token has norm ≤ 1 and **R_X = 1**, but the
inputs are 8× smaller and GD with step 0.1 barely moves in a few hundred epochs.
:func:`r_x_bound` gives the bound; Table 1 uses it and also reports the measured
max_n ‖X_n‖_F/√d_s (smaller).

**Generated set** (:func:`synthetic_digits`, for the quick preset): seeded 28 × 28 uint8 images,
class 0 an ellipse ring ("0"-like: random centre jitter, radii, thickness), class 1 a tilted bar
("1"-like: random tilt, length, thickness), plus Gaussian pixel noise, clipped to [0, 255].
"""

from __future__ import annotations

import gzip
import os
import struct
from pathlib import Path

import numpy as np

SCALES = ("pixel", "unit")


def r_x_bound(patch: int, scale: str = "pixel") -> float:
    """The R_X of Assumption 3 that :func:`images_to_tokens` guarantees: every token has
    ‖x‖₂ ≤ patch (``"pixel"``) or ≤ 1 (``"unit"``), so ‖X_n‖_F ≤ √d_s·R_X."""
    if scale not in SCALES:
        raise ValueError(f"`scale` must be one of {SCALES}, got {scale!r}")
    return float(patch) if scale == "pixel" else 1.0

_IDX_DTYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: np.dtype(">i2"), 0x0C: np.dtype(">i4"),
               0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}

SPLITS = {"train": ("train-images", "train-labels"), "test": ("t10k-images", "t10k-labels")}


def _read_bytes(path: Path) -> bytes:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise ValueError(f"{path}: corrupt gzip data ({exc})") from None
    return raw


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """One IDX file (optionally gzip-compressed) as a numpy array of its declared shape."""
    path = Path(path)
    raw = _read_bytes(path)
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise ValueError(f"{path}: not an IDX file (bad magic number)")
    code, ndim = raw[2], raw[3]
    if code not in _IDX_DTYPES or ndim < 1:
        raise ValueError(f"{path}: not an IDX file (type code 0x{code:02x}, {ndim} dimensions)")
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise ValueError(f"{path}: truncated IDX header")
    shape = struct.unpack(f">{ndim}I", raw[4:header])
    dtype = np.dtype(_IDX_DTYPES[code])
    expected = int(np.prod(shape)) * dtype.itemsize
    if len(raw) - header != expected:
        raise ValueError(f"{path}: IDX data has {len(raw) - header} bytes, the header "
                         f"{tuple(shape)} needs {expected}")
    return np.frombuffer(raw, dtype=dtype, offset=header).reshape(shape).copy()


def write_idx(path: str | os.PathLike, array: np.ndarray) -> Path:
    """Write ``array`` (uint8) as an IDX file; gzip-compressed when ``path`` ends in ``.gz``.
    (For tests and for converting data; the loader does not need it.)"""
    path = Path(path)
    arr = np.ascontiguousarray(array, dtype=np.uint8)
    data = bytes([0, 0, 0x08, arr.ndim]) + struct.pack(f">{arr.ndim}I", *arr.shape) \
        + arr.tobytes()
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    return path


def _find(folder: Path, stem: str, rank: int) -> Path:
    for sep in ("-", "."):
        for suffix in ("", ".gz"):
            candidate = folder / f"{stem}-idx{rank}{sep}ubyte{suffix}"
            if candidate.is_file():
                return candidate
    raise ValueError(f"{folder}: no {stem}-idx{rank}-ubyte[.gz] file (need the four MNIST IDX "
                     "files, or an .npz with x_train, y_train, x_test, y_test)")


def _check_pair(images: np.ndarray, labels: np.ndarray, where: str) -> None:
    if images.ndim != 3 or images.shape[1:] != (28, 28):
        raise ValueError(f"{where}: images must have shape (n, 28, 28), got {images.shape}")
    if labels.shape != (images.shape[0],):
        raise ValueError(f"{where}: {labels.shape[0] if labels.ndim else 0} labels for "
                         f"{images.shape[0]} images (labels must have shape (n,))")


def load_mnist(path: str | os.PathLike
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(x_train, y_train, x_test, y_test): uint8 images (n, 28, 28) and int64 labels, from a folder
    of IDX files or an .npz (see the module docstring). Raises a one-line ValueError naming the
    file."""
    path = Path(path)
    if path.is_dir():
        out = []
        for split, (img_stem, lab_stem) in SPLITS.items():
            img_file, lab_file = _find(path, img_stem, 3), _find(path, lab_stem, 1)
            images, labels = read_idx(img_file), read_idx(lab_file)
            _check_pair(images, labels, f"{img_file} / {lab_file} ({split})")
            out += [images.astype(np.uint8), labels.astype(np.int64)]
        return out[0], out[1], out[2], out[3]
    if not path.exists():
        raise ValueError(f"{path}: no such file or folder")
    try:
        with np.load(path, allow_pickle=False) as archive:
            missing = [k for k in ("x_train", "y_train", "x_test", "y_test")
                       if k not in archive.files]
            if missing:
                raise ValueError(f"{path}: .npz lacks {', '.join(missing)} (found "
                                 f"{sorted(archive.files)})")
            arrays = [np.asarray(archive[k]) for k in ("x_train", "y_train", "x_test", "y_test")]
    except ValueError as exc:
        if str(exc).startswith(str(path)):
            raise
        raise ValueError(f"{path}: not a readable .npz or IDX folder ({exc})") from None
    except OSError as exc:
        raise ValueError(f"{path}: cannot read ({exc})") from None
    _check_pair(arrays[0], arrays[1], f"{path} (train)")
    _check_pair(arrays[2], arrays[3], f"{path} (test)")
    return (arrays[0].astype(np.uint8), arrays[1].astype(np.int64),
            arrays[2].astype(np.uint8), arrays[3].astype(np.int64))


def select_digits(images: np.ndarray, labels: np.ndarray, digits: tuple[int, int] = (0, 1)
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Keep the two ``digits``; labels become 0 (first digit) and 1 (second)."""
    keep = (labels == digits[0]) | (labels == digits[1])
    return images[keep], (labels[keep] == digits[1]).astype(np.int64)


def images_to_tokens(images: np.ndarray, patch: int = 8, scale: str = "pixel") -> np.ndarray:
    """(n, H, W) uint8 images → (n, d_s, patch²) float64 tokens with ‖token‖₂ ≤
    :func:`r_x_bound` (module docstring: symmetric zero padding to a multiple of ``patch``,
    row-major patches, grey levels / 255, and / patch more for ``scale="unit"``)."""
    if not isinstance(patch, int) or patch < 1:
        raise ValueError(f"`patch` must be a positive integer, got {patch!r}")
    imgs = np.asarray(images, dtype=np.float64)
    if imgs.ndim != 3:
        raise ValueError(f"`images` must have shape (n, H, W), got {imgs.shape}")
    r_x_bound(patch, scale)  # checks `scale`
    divisor = 255.0 * (patch if scale == "unit" else 1)
    n, h, w = imgs.shape
    H, W = -(-h // patch) * patch, -(-w // patch) * patch
    top, left = (H - h) // 2, (W - w) // 2
    padded = np.zeros((n, H, W))
    padded[:, top:top + h, left:left + w] = imgs
    tokens = padded.reshape(n, H // patch, patch, W // patch, patch).transpose(0, 1, 3, 2, 4)
    return tokens.reshape(n, (H // patch) * (W // patch), patch * patch) / divisor


def synthetic_digits(n: int, seed: int, noise: float = 25.0
                     ) -> tuple[np.ndarray, np.ndarray]:
    """``n`` seeded 28×28 uint8 images, label 0 = ring ("0"-like), 1 = tilted bar ("1"-like),
    with Gaussian pixel noise of standard deviation ``noise`` (grey levels); labels balanced in
    expectation (Bernoulli(½))."""
    if n < 1:
        raise ValueError(f"`n` must be >= 1, got {n}")
    rng = np.random.default_rng(int(seed))
    yy, xx = np.mgrid[0:28, 0:28].astype(np.float64)
    labels = rng.integers(0, 2, size=n)
    images = np.empty((n, 28, 28))
    for i, label in enumerate(labels):
        cy, cx = 13.5 + rng.normal(0, 1.5, size=2)
        if label == 0:
            ry, rx = rng.uniform(7, 10), rng.uniform(4.5, 7.5)
            thick = rng.uniform(0.18, 0.35)
            r = np.sqrt(((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2)
            img = np.clip(1 - np.abs(r - 1) / thick, 0, 1)
        else:
            angle = rng.uniform(-0.35, 0.35)
            length, half = rng.uniform(8, 11), rng.uniform(1.0, 2.2)
            u = (yy - cy) * np.cos(angle) + (xx - cx) * np.sin(angle)      # along the bar
            v = -(yy - cy) * np.sin(angle) + (xx - cx) * np.cos(angle)     # across
            img = np.clip(half + 0.5 - np.abs(v), 0, 1) * (np.abs(u) <= length)
        images[i] = 255 * img + rng.normal(0, noise, size=(28, 28))
    return np.clip(np.rint(images), 0, 255).astype(np.uint8), labels.astype(np.int64)


__all__ = ["SCALES", "images_to_tokens", "load_mnist", "r_x_bound", "read_idx",
           "select_digits", "synthetic_digits", "write_idx"]
