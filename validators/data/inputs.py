"""Inputs of the validators: synthetic sequences and checked user arrays.

Every sample is X_j ∈ R^{T×d} (stored row-major as ``(n, T, d)``: token t of sample j is
``X[j, t]``) with every token norm ‖x_{j,t}‖₂ ≤ 1, the standing assumption of the paper
(Section 3; Remarks 3–4 need it for ‖a‖ ≤ 1 and ‖X J Xᵀ‖_op ≤ 1). Labels are a vector ``(n,)``.

* :func:`synthetic_inputs` — the Section 6.1 inputs: x_{j,t} ~ N(0, I_d), then each token clipped
  to norm ≤ 1 (x ← x / max(1, ‖x‖)). Drawn on the CPU with a seeded ``torch.Generator`` in float64
  and only then moved, so one seed gives the same data on every device and dtype.
* :func:`load_inputs`, :func:`load_labels` — ``.npy`` / ``.pt`` files, checked for shape,
  finiteness and token norms; a bad file raises a one-line :class:`ValueError` naming the file
  and the problem (or, for token norms, is clipped when ``clip=True``).
* :func:`derived_seed` — independent integer seeds for the different random objects of one run
  (data, teacher, minibatches), so that e.g. the teacher's Monte Carlo samples are never the
  same numbers as the student's initialisation.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

#: Slack allowed on ‖x_t‖ ≤ 1 when checking user data (rounding of already-normalised tokens).
NORM_TOLERANCE = 1e-6


def derived_seed(seed: int, tag: str) -> int:
    """A 63-bit seed for the random object ``tag`` of run ``seed`` (numpy SeedSequence).

    Different tags give statistically independent streams; the same (seed, tag) always gives the
    same number.

    Example:
        >>> derived_seed(0, "data") == derived_seed(0, "data") != derived_seed(0, "teacher")
        True
    """
    if int(seed) < 0:
        raise ValueError(f"`seed` must be a non-negative integer, got {seed}")
    state = np.random.SeedSequence([int(seed), zlib.crc32(tag.encode())]).generate_state(2)
    return int((int(state[0]) << 31) ^ int(state[1])) & ((1 << 63) - 1)


def clip_tokens(X: Tensor) -> Tensor:
    """x_t ← x_t / max(1, ‖x_t‖) for every token: shape preserved, all token norms ≤ 1."""
    norms = X.norm(dim=-1, keepdim=True)
    return X / norms.clamp_min(1.0)


def token_norms(X: Tensor) -> Tensor:
    """‖x_{j,t}‖₂ for every token: (n, T, d) → (n, T)."""
    return X.norm(dim=-1)


def synthetic_inputs(n: int, T: int, d: int, *, seed: int, dtype: torch.dtype = torch.float64,
                     device: str | torch.device = "cpu") -> Tensor:
    """X ∈ R^{n×T×d}, tokens x ~ N(0, I_d) clipped to norm ≤ 1 (Section 6.1).

    Example:
        >>> X = synthetic_inputs(5, 3, 2, seed=0)
        >>> tuple(X.shape), bool((X.norm(dim=-1) <= 1 + 1e-12).all())
        ((5, 3, 2), True)
    """
    for name, value in (("n", n), ("T", T), ("d", d)):
        if int(value) != value or value < 1:
            raise ValueError(f"`{name}` must be a positive integer, got {value}")
    gen = torch.Generator().manual_seed(int(seed))
    X = torch.randn(int(n), int(T), int(d), generator=gen, dtype=torch.float64)
    return clip_tokens(X).to(device=device, dtype=dtype)


def _read_array(path: str | Path) -> np.ndarray:
    """Read a ``.npy`` or ``.pt`` file as a float64 numpy array (one-line errors)."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in (".npy", ".pt"):
        raise ValueError(f"{p}: unsupported file type {suffix or '(none)'!r}; use .npy or .pt")
    if not p.is_file():
        raise ValueError(f"{p}: no such file")
    try:
        if suffix == ".npy":
            raw = np.load(p, allow_pickle=False)
        else:
            raw = torch.load(p, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - any reader error becomes one line
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"{p}: cannot be read ({first})") from None
    if isinstance(raw, torch.Tensor):
        raw = raw.detach().cpu().numpy()
    if not isinstance(raw, np.ndarray):
        raise ValueError(f"{p}: expected one array/tensor, got {type(raw).__name__}")
    if not (np.issubdtype(raw.dtype, np.floating) or np.issubdtype(raw.dtype, np.integer)):
        raise ValueError(f"{p}: expected a real numeric array, got dtype {raw.dtype}")
    return raw.astype(np.float64)


def check_inputs(X: Tensor, *, clip: bool = False, source: str = "inputs") -> Tensor:
    """Check X has shape (n, T, d), finite entries and token norms ≤ 1.

    Args:
        X: candidate inputs.
        clip: clip tokens with norm > 1 instead of rejecting them (the CLI's ``--clip``).
        source: name used in error messages (a file name).

    Returns:
        X (clipped if ``clip``); raises a one-line ValueError otherwise.
    """
    if X.dim() != 3:
        raise ValueError(f"{source}: expected an array of shape (n, T, d), "
                         f"got shape {tuple(X.shape)}")
    if min(X.shape) < 1:
        raise ValueError(f"{source}: every dimension of (n, T, d) must be >= 1, "
                         f"got shape {tuple(X.shape)}")
    if not bool(torch.isfinite(X).all()):
        bad = int((~torch.isfinite(X)).sum())
        raise ValueError(f"{source}: {bad} non-finite entries (NaN or inf)")
    norms = token_norms(X)
    worst = float(norms.max())
    if worst > 1 + NORM_TOLERANCE:
        if not clip:
            count = int((norms > 1 + NORM_TOLERANCE).sum())
            raise ValueError(f"{source}: {count} tokens have norm > 1 (max {worst:.6g}); "
                             "the theory needs ||x_t|| <= 1 (pass clip=True / --clip to clip)")
        X = clip_tokens(X)
    return X


def load_inputs(path: str | Path, *, clip: bool = False, dtype: torch.dtype = torch.float64,
                device: str | torch.device = "cpu") -> Tensor:
    """Load user inputs of shape (n, T, d) from ``.npy`` or ``.pt`` and check them
    (:func:`check_inputs`)."""
    X = torch.from_numpy(_read_array(path))
    return check_inputs(X, clip=clip, source=str(path)).to(device=device, dtype=dtype)


def check_labels(y: Tensor, *, n: int | None = None, source: str = "labels") -> Tensor:
    """Check labels: shape (n,) (an (n, 1) column is flattened), finite, length n if given."""
    if y.dim() == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.dim() != 1:
        raise ValueError(f"{source}: expected a vector of shape (n,), got shape {tuple(y.shape)}")
    if n is not None and y.shape[0] != n:
        raise ValueError(f"{source}: expected {n} labels (one per input), got {y.shape[0]}")
    if not bool(torch.isfinite(y).all()):
        raise ValueError(f"{source}: {int((~torch.isfinite(y)).sum())} non-finite labels")
    return y


def load_labels(path: str | Path, *, n: int | None = None, dtype: torch.dtype = torch.float64,
                device: str | torch.device = "cpu") -> Tensor:
    """Load labels (n,) from ``.npy`` or ``.pt`` and check them (:func:`check_labels`)."""
    y = torch.from_numpy(_read_array(path))
    return check_labels(y, n=n, source=str(path)).to(device=device, dtype=dtype)


__all__ = [
    "NORM_TOLERANCE", "check_inputs", "check_labels", "clip_tokens", "derived_seed",
    "load_inputs", "load_labels", "synthetic_inputs", "token_norms",
]
