"""The AR(L) forecasting task of Section 6.2: data for the IndRNN vs Transformer comparison.

A univariate series with a dependency exactly L steps back,

    x_t = 0.9·x_{t−L} + ε_t,   ε_t i.i.d. N(0, 0.1),   x_0, …, x_{L−1} i.i.d. N(0, 1),

is cut into sliding windows of length T = L + 1 after a burn-in of 800 steps; window j is
(x_{s_j}, …, x_{s_j+T−1}) with s_j = 800 + j, and its label is the next value x_{s_j+T}. With
T = L + 1 the informative value x_{s_j+T−L} = x_{s_j+1} lies inside the window, so the lag sets the
dependency horizon: the Transformer can attend to it directly, the IndRNN has to carry it through
L recurrence steps.

Every token gets 8 fixed sin/cos pairs appended, at periods 32·2^k (k = 0, …, 7) of the position
t = 0, …, T − 1 within the window, so the Transformer can resolve positions: d = 1 + 16 = 17.
Labels are standardised (mean 0, population std 1 over all n windows); the inputs are left as
they are (token norms ≈ 3, above the theory's ‖x_t‖ ≤ 1: this experiment is outside the
theorem's regime on purpose, Section 6.2). 20 % of the windows, drawn at random, form the
validation set.

Noise level (choice): the paper writes ε ~ N(0, 0.1). We read 0.1 as the **variance** (standard
deviation √0.1 ≈ 0.316): the authors' script passes ``sigma_eps=math.sqrt(0.1)`` to a generator
that multiplies standard normals by ``sigma_eps``, and N(μ, σ²) is the usual convention. The
stationary variance of each residue class mod L is then 0.1/(1 − 0.81) ≈ 0.526.

Everything is drawn on the CPU in float64 from ``torch.Generator().manual_seed(...)``, so a
(seed, L) pair gives the same data on every device.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import Tensor

#: Defaults of Section 6.2 / the authors' scripts.
AR_COEFFICIENT = 0.9
NOISE_VARIANCE = 0.1
BURN_IN = 800
POSITIONAL_PAIRS = 8
BASE_PERIOD = 32.0
VALIDATION_FRACTION = 0.2


class ARData(NamedTuple):
    """Train / validation windows of one (L, seed).

    X_* (n_*, T, d) tokens (value, then 8 sines, then 8 cosines), y_* (n_*,) standardised labels;
    ``label_mean`` and ``label_std`` undo the standardisation.
    """

    X_train: Tensor
    y_train: Tensor
    X_val: Tensor
    y_val: Tensor
    label_mean: float
    label_std: float

    @property
    def T(self) -> int:
        return int(self.X_train.shape[1])

    @property
    def d(self) -> int:
        return int(self.X_train.shape[2])


def _check_positive_int(name: str, value: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"`{name}` must be a positive integer, got {value!r}")


def ar_series(L: int, length: int, *, generator: torch.Generator,
              coefficient: float = AR_COEFFICIENT,
              noise_variance: float = NOISE_VARIANCE) -> Tensor:
    """x_0 … x_{length−1} of x_t = coefficient·x_{t−L} + ε_t, ε_t ~ N(0, noise_variance): (length,).

    The first L values are N(0, 1). Each residue class mod L is an AR(1), so the recursion runs in
    blocks of L values at a time. float64, CPU.
    """
    _check_positive_int("L", L)
    _check_positive_int("length", length)
    if not -1.0 < coefficient < 1.0:
        raise ValueError(f"`coefficient` must lie in (-1, 1) for stationarity, got {coefficient}")
    if noise_variance < 0:
        raise ValueError(f"`noise_variance` must be >= 0, got {noise_variance}")
    x = torch.empty(max(length, L), dtype=torch.float64)
    x[:L] = torch.randn(L, generator=generator, dtype=torch.float64)
    eps = torch.randn(x.numel() - L, generator=generator, dtype=torch.float64)
    eps *= math.sqrt(noise_variance)
    for start in range(L, x.numel(), L):
        stop = min(start + L, x.numel())
        x[start:stop] = coefficient * x[start - L:stop - L] + eps[start - L:stop - L]
    return x[:length]


def positional_channels(T: int, pairs: int = POSITIONAL_PAIRS,
                        base_period: float = BASE_PERIOD) -> Tensor:
    """Fixed positional features (T, 2·pairs): sin(t ω_k) then cos(t ω_k), ω_k = 2π/(P·2^k).

    t = 0, …, T − 1 is the position inside the window, P the base period (32).
    """
    _check_positive_int("T", T)
    _check_positive_int("pairs", pairs)
    if not base_period > 0:
        raise ValueError(f"`base_period` must be > 0, got {base_period}")
    t = torch.arange(T, dtype=torch.float64).unsqueeze(-1)
    omega = 2.0 * math.pi / (base_period * 2.0 ** torch.arange(pairs, dtype=torch.float64))
    return torch.cat([torch.sin(t * omega), torch.cos(t * omega)], dim=-1)


def data_seed(seed: int, L: int) -> int:
    """The generator seed of the (seed, L) data set (distinct for every pair, shared by both
    models so that they are compared on the same windows)."""
    return 1_000_003 * int(seed) + int(L)


def make_ar_data(L: int, n: int, *, seed: int, coefficient: float = AR_COEFFICIENT,
                 noise_variance: float = NOISE_VARIANCE, burn_in: int = BURN_IN,
                 pairs: int = POSITIONAL_PAIRS, base_period: float = BASE_PERIOD,
                 val_fraction: float = VALIDATION_FRACTION, dtype: torch.dtype = torch.float32,
                 device: str | torch.device = "cpu") -> ARData:
    """n sliding windows of length T = L + 1 with next-value labels, split train / validation.

    Args:
        L: the lag (≥ 1); T = L + 1.
        n: number of windows (train + validation).
        seed: experiment seed; the generator uses :func:`data_seed` (seed, L).
        coefficient, noise_variance, burn_in: the AR process (0.9, variance 0.1, 800).
        pairs, base_period: positional channels (8 pairs, period 32): d = 1 + 2·pairs.
        val_fraction: share of windows in the validation set, in [0, 1).
        dtype, device: of the returned tensors.

    Returns:
        :class:`ARData` with ⌊val_fraction·n⌋ validation windows.

    Example:
        >>> data = make_ar_data(4, 50, seed=0)
        >>> tuple(data.X_train.shape), tuple(data.X_val.shape)
        ((40, 5, 17), (10, 5, 17))
    """
    _check_positive_int("L", L)
    _check_positive_int("n", n)
    if not isinstance(burn_in, int) or burn_in < 0:
        raise ValueError(f"`burn_in` must be a non-negative integer, got {burn_in!r}")
    if not 0.0 <= val_fraction < 1.0:
        raise ValueError(f"`val_fraction` must lie in [0, 1), got {val_fraction}")
    T = L + 1
    gen = torch.Generator().manual_seed(data_seed(seed, L))
    x = ar_series(L, burn_in + n + T, generator=gen, coefficient=coefficient,
                  noise_variance=noise_variance)
    starts = burn_in + torch.arange(n)
    windows = x[starts.unsqueeze(-1) + torch.arange(T)]              # (n, T)
    labels = x[starts + T]                                             # (n,)
    pos = positional_channels(T, pairs, base_period).expand(n, T, 2 * pairs)
    X = torch.cat([windows.unsqueeze(-1), pos], dim=-1)               # (n, T, 1 + 2 pairs)
    mean, std = labels.mean(), labels.std(unbiased=False).clamp_min(1e-12)
    y = (labels - mean) / std
    perm = torch.randperm(n, generator=gen)
    n_val = int(val_fraction * n)
    val, train = perm[:n_val], perm[n_val:]

    def cast(t: Tensor) -> Tensor:
        return t.to(device=device, dtype=dtype)

    return ARData(cast(X[train]), cast(y[train]), cast(X[val]), cast(y[val]),
                  float(mean), float(std))


def context_floats_per_sample(T: int, d: int) -> int:
    """Inference memory of the Transformer per sample: the whole context window, T·d floats."""
    return int(T) * int(d)


__all__ = [
    "AR_COEFFICIENT", "ARData", "BASE_PERIOD", "BURN_IN", "NOISE_VARIANCE", "POSITIONAL_PAIRS",
    "VALIDATION_FRACTION", "ar_series", "context_floats_per_sample", "data_seed", "make_ar_data",
    "positional_channels",
]
