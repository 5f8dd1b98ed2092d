"""MNIST digits 0 vs 1 as token sequences for paper 003's Table 1, and a generated stand-in.

Nothing is downloaded: :func:`load_mnist` reads the files a user points at. It is
:func:`boundcalc.inputs.data_files.read_mnist` of the input layer, which ``reproduce table1`` and
``validate generalization`` call on ``--data`` before any work (:func:`read_idx` and
:func:`select_digits` are the layer's too):

* **IDX files** (LeCun's format): a folder holding ``train-images-idx3-ubyte``,
  ``train-labels-idx1-ubyte``, ``t10k-images-idx3-ubyte`` and ``t10k-labels-idx1-ubyte``, each
  possibly gzip-compressed (``.gz`` suffix; gzip is also recognised by its magic bytes), and the
  ``…-idx3.ubyte`` spelling is accepted too.
* **.npz** with arrays ``x_train`` (n, 28, 28), ``y_train`` (n,), ``x_test``, ``y_test`` (the layout
  of ``keras.datasets.mnist``'s ``mnist.npz``).

A file that cannot be used raises a one-line :class:`~boundcalc.errors.InputError` (a
:class:`ValueError`) naming ``--data`` and the file.

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

from boundcalc.inputs.data_files import read_idx, select_digits
from boundcalc.inputs.data_files import read_mnist as load_mnist

SCALES = ("pixel", "unit")


def r_x_bound(patch: int, scale: str = "pixel") -> float:
    """The R_X of Assumption 3 that :func:`images_to_tokens` guarantees: every token has
    ‖x‖₂ ≤ patch (``"pixel"``) or ≤ 1 (``"unit"``), so ‖X_n‖_F ≤ √d_s·R_X."""
    if scale not in SCALES:
        raise ValueError(f"`scale` must be one of {SCALES}, got {scale!r}")
    return float(patch) if scale == "pixel" else 1.0


def write_idx(path: str | os.PathLike, array: np.ndarray) -> Path:
    """Write ``array`` (uint8) as an IDX file; gzip-compressed when ``path`` ends in ``.gz``.
    (For tests and for converting data; the reader,
    :func:`read_idx`, is the input layer's.)"""
    path = Path(path)
    arr = np.ascontiguousarray(array, dtype=np.uint8)
    data = bytes([0, 0, 0x08, arr.ndim]) + struct.pack(f">{arr.ndim}I", *arr.shape) \
        + arr.tobytes()
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    return path


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
