"""Measure the inputs of paper 003's Theorem 5 on a data set: ``boundcalc generalization --data``.

Paper 003 ("Generalization bound for a Shallow Transformer trained using Gradient Descent") states
its bound in terms of N, d_s, R_X, seven norms of the initial weights θ⁰, α = σ_min(F_pre⁰) and
Φ(θ⁰). Given an ``.npz`` data set and an init seed, :func:`measure_data` draws θ⁰ with the torch
LeCun initialisation of :mod:`boundcalc.validators.encoder` and measures all of them at that one
θ⁰, for :func:`boundcalc.generalization.bound.evaluate_inputs`; with them the label bound (largest
|y|) and the free yardsticks of the verdict: the mean loss |f − y| of the zero predictor (numpy)
and of θ⁰ (the torch forward pass that Φ(θ⁰) needs anyway). It lives among the validators because it
needs torch and the encoder; the calculator (:mod:`boundcalc.generalization.bound`) imports neither.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from boundcalc.inputs.data_files import read_tokens
from boundcalc.inputs.environment import require_module
from boundcalc.inputs.surfaces import check_data_flags

__all__ = ["measure_data"]


def measure_data(path: str, d_m: object, seed: object) -> dict[str, Any]:
    """Measure N, d_s, R_X, the seven init norms, α and Φ(θ⁰) on a data set (``--data``).

    ``path`` is an ``.npz`` with arrays ``X`` (N, d_s, d) and ``y`` (N,). θ⁰ is the torch LeCun
    init of :func:`boundcalc.validators.encoder.lecun_init` with ``seed`` (so the norms, α and
    Φ(θ⁰) all belong to the same θ⁰). The file is read and checked by the input layer
    (:func:`boundcalc.inputs.data_files.read_tokens`, numpy) first; torch is imported only then,
    and its absence is an :class:`InputError` of ``--data``.

    Returns:
        :func:`boundcalc.validators.encoder.measure_init`'s dict (``N``, ``d_s``, ``d``, ``d_m``,
        ``norms``, ``alpha``, ``Phi0``, ``R_X``, ``initial_model_loss`` = mean |f(θ⁰) − y|, …)
        plus ``y_max`` = max |y|, ``zero_predictor_loss`` = mean |y|, ``seed`` and ``source``.

    Raises:
        InputError: ``--dm`` or ``--from-init`` invalid or missing, ``--data`` unreadable or of
            the wrong shape, or torch not installed.
    """
    dm_int, seed_int = check_data_flags(d_m, seed)
    X, y = read_tokens(path)
    require_module("--data", "torch", "measures the data set", "pip install "
                   "'boundcalc[validators]'; or give --alpha and --phi0", import_it=True)
    import torch
    from boundcalc.validators.encoder import lecun_init, measure_init

    params = lecun_init(dm_int, int(X.shape[2]), seed=seed_int)
    out = measure_init(params, torch.from_numpy(X), torch.from_numpy(y))
    out["y_max"] = float(np.abs(y).max())
    out["zero_predictor_loss"] = float(np.abs(y).mean())
    out["seed"] = seed_int
    out["source"] = (f"measured on {path} at the torch LeCun init with seed {seed_int} "
                     f"(boundcalc.validators.encoder)")
    return out
