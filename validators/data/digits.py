"""Token data sets of digit images: Table 1's training pool and test split, and the data of
``boundcalc validate generalization``.

Both use the images of :mod:`boundcalc.validators.data.mnist` (MNIST files a user points at, or
the generated rings-vs-bars stand-in), digits 0 vs 1, cut into ``patch × patch`` tokens
(:func:`~boundcalc.validators.data.mnist.images_to_tokens`). :func:`load_digit_tokens` is the one
loader: ``reproduce table1`` calls it with its run's settings, and :func:`load_generalization_data`
with those of ``reproduce table1 --preset quick`` (seed 0, 8 × 8 patches, pixels in [0, 1], digits
0 vs 1), so the default data of ``validate generalization`` are exactly that preset's images.
:func:`input_scale` measures R_X = max_n ‖X_n‖_F/√d_s (paper 003's Assumption 3) of a token set.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from boundcalc.inputs.data_files import read_digit_images, split_tokens

from .mnist import images_to_tokens, r_x_bound, synthetic_digits

__all__ = ["DEFAULT_N_TEST", "input_scale", "load_digit_tokens", "load_generalization_data"]

#: Held-out samples of the default data set (the test split of ``reproduce table1 --preset quick``).
DEFAULT_N_TEST = 128


def input_scale(X: Tensor) -> float:
    """R_X = max_n ‖X_n‖_F / √d_s, the smallest R_X with ‖X_n‖_F ≤ √d_s R_X (Assumption 3)."""
    norms = torch.linalg.matrix_norm(X.to(torch.float64), "fro")
    return float(norms.max()) / math.sqrt(X.shape[1])


def load_digit_tokens(data: str | None, *, Ns: tuple[int, ...], seed: int = 0,
                      n_test: int | None = None, n_generated: int = 0,
                      digits: tuple[int, int] = (0, 1), patch: int = 8, scale: str = "pixel"
                      ) -> dict[str, np.ndarray]:
    """Token arrays: ``X_pool`` (training pool, seeded permutation), ``y_pool``, ``X_test``,
    ``y_test`` (float64, labels 0/1).

    ``data`` is an MNIST IDX folder or .npz (:func:`~boundcalc.validators.data.mnist.load_mnist`;
    digits ``digits`` only, the first ``n_test`` test images, all when None), or None for
    ``n_generated`` generated images (seed ``seed + 1``; the first ``n_test`` held out). The pool
    is permuted with ``seed``; it must hold at least max(``Ns``) images.
    """
    rng = np.random.default_rng(seed)
    if data is None:
        images, labels = synthetic_digits(n_generated, seed=seed + 1)
        held_out = n_test or 0
        x_te, y_te = images[:held_out], labels[:held_out]
        x_tr, y_tr = images[held_out:], labels[held_out:]
        if len(y_tr) < max(Ns):  # the rule generated_pool of its field rows refuses this first
            raise ValueError(f"generated data: {len(y_tr)} training images of digits "
                             f"{digits}, the largest N is {max(Ns)}")
        if len(y_te) < 1:
            raise ValueError(f"generated data: no test images of digits {digits}")
    else:  # the input layer's reader: an InputError naming --data and the file
        x_tr, y_tr, x_te, y_te = read_digit_images(data, digits, max(Ns), n_test)
    order = rng.permutation(len(y_tr))
    return {"X_pool": images_to_tokens(x_tr[order], patch, scale),
            "y_pool": y_tr[order].astype(np.float64),
            "X_test": images_to_tokens(x_te, patch, scale),
            "y_test": y_te.astype(np.float64)}


def load_generalization_data(N: int, n_test: int = DEFAULT_N_TEST, data: str | None = None
                             ) -> dict[str, Any]:
    """Training and held-out tokens for ``validate generalization``.

    * ``data=None``: the generated two-class image set of ``reproduce table1 --preset quick``
      (:func:`~boundcalc.validators.data.mnist.synthetic_digits`, seed 1; the first ``n_test``
      images held out, the N training images the first N of a seed-0 permutation of the rest;
      8 × 8-patch tokens, pixels in [0, 1], so R_X = 8 a priori). With N ≤ 128 and
      n_test = 128 these are exactly that preset's images.
    * ``data`` an ``.npz`` with ``X`` (M, d_s, d) and ``y`` (M,) (the calculator's ``--data``
      layout), optionally ``X_test``, ``y_test``: tokens as given; without a test split the first N
      of a seed-0 permutation train and the next ``n_test`` are held out. R_X is measured,
      max_n ‖X_n‖_F/√d_s over training and held-out samples.
    * otherwise MNIST (IDX folder or .npz with ``x_train`` …,
      :func:`~boundcalc.validators.data.mnist.load_mnist`): digits 0 vs 1 as in Table 1, the
      first ``n_test`` test images held out, R_X = 8 a priori.

    Returns ``{"X", "y", "X_test", "y_test"}`` (float64 numpy arrays, labels as given, 0/1 for
    images), ``R_X`` and ``source`` (one line). Unusable data are a one-line
    :class:`~boundcalc.errors.InputError` naming ``--data`` and the file (the input layer's
    :func:`~boundcalc.inputs.data_files.split_tokens` and
    :func:`~boundcalc.inputs.data_files.read_digit_images`, which ``validate generalization``
    calls before any work).
    """
    if N < 2 or n_test < 1:
        raise ValueError(f"need N >= 2 and n_test >= 1, got N={N}, n_test={n_test}")
    tokens = None if data is None else split_tokens(data, N, n_test)
    if tokens is not None:
        both = torch.from_numpy(np.concatenate([tokens["X"], tokens["X_test"]]))
        return {**tokens, "R_X": input_scale(both),
                "source": f"{data}: tokens as given, R_X measured on train and held-out samples"}
    # the settings of ``reproduce table1 --preset quick`` (seed 0, digits 0 vs 1, 8 x 8 patches,
    # pixels in [0, 1]); a data path is resolved as that command resolves it
    patch, scale = 8, "pixel"
    arrays = load_digit_tokens(None if data is None else str(Path(data).resolve()), Ns=(N,),
                               seed=0, n_test=n_test, n_generated=max(257, N + n_test + 1),
                               digits=(0, 1), patch=patch, scale=scale)
    source = (f"{data}: MNIST digits 0 vs 1" if data is not None else
              "generated rings vs bars (reproduce table1 --preset quick's set)")
    return {"X": arrays["X_pool"][:N], "y": arrays["y_pool"][:N], "X_test": arrays["X_test"],
            "y_test": arrays["y_test"], "R_X": r_x_bound(patch, scale),
            "source": f"{source}, 8x8-patch tokens, R_X = 8 a priori"}
