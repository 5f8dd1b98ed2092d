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

from boundcalc.errors import InputError
from boundcalc.inputs.surfaces import check_data_flags

__all__ = ["measure_data"]


def measure_data(path: str, d_m: object, seed: object) -> dict[str, Any]:
    """Measure N, d_s, R_X, the seven init norms, α and Φ(θ⁰) on a data set (``--data``).

    ``path`` is an ``.npz`` with arrays ``X`` (N, d_s, d) and ``y`` (N,). θ⁰ is the torch LeCun
    init of :func:`boundcalc.validators.encoder.lecun_init` with ``seed`` (so the norms, α and
    Φ(θ⁰) all belong to the same θ⁰). The file is checked with numpy first; torch is imported
    only then, and its absence is an :class:`InputError` of ``--data``.

    Returns:
        :func:`boundcalc.validators.encoder.measure_init`'s dict (``N``, ``d_s``, ``d``, ``d_m``,
        ``norms``, ``alpha``, ``Phi0``, ``R_X``, ``initial_model_loss`` = mean |f(θ⁰) − y|, …)
        plus ``y_max`` = max |y|, ``zero_predictor_loss`` = mean |y|, ``seed`` and ``source``.

    Raises:
        InputError: ``--dm`` or ``--from-init`` invalid or missing, ``--data`` unreadable or of
            the wrong shape, or torch not installed.
    """
    dm_int, seed_int = check_data_flags(d_m, seed)
    try:
        with np.load(str(path)) as archive:
            if "X" not in archive or "y" not in archive:
                raise InputError("--data", f"{path!r} must be an .npz with arrays 'X' "
                                 f"(N, d_s, d) and 'y' (N,), found {sorted(archive.files)}")
            X = np.asarray(archive["X"], dtype=float)
            y = np.asarray(archive["y"], dtype=float)
    except InputError:
        raise
    except (OSError, ValueError) as exc:
        raise InputError("--data", f"cannot read {path!r} as .npz: {exc}") from None
    if X.ndim != 3 or y.shape != (X.shape[0],) or X.shape[0] < 2:
        raise InputError("--data", f"needs X of shape (N, d_s, d) with N >= 2 and y of shape "
                                   f"(N,), got X {X.shape}, y {y.shape}")
    if not (np.isfinite(X).all() and np.isfinite(y).all()):
        raise InputError("--data", f"{path!r} contains non-finite values")
    try:
        import torch
        from boundcalc.validators.encoder import lecun_init, measure_init
    except ImportError:
        raise InputError("--data", "needs torch (pip install 'boundcalc[validators]'); or give "
                                   "--alpha and --phi0") from None
    params = lecun_init(dm_int, int(X.shape[2]), seed=seed_int)
    out = measure_init(params, torch.from_numpy(X), torch.from_numpy(y))
    out["y_max"] = float(np.abs(y).max())
    out["zero_predictor_loss"] = float(np.abs(y).mean())
    out["seed"] = seed_int
    out["source"] = (f"measured on {path} at the torch LeCun init with seed {seed_int} "
                     f"(boundcalc.validators.encoder)")
    return out
