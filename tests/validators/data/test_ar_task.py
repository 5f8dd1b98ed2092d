"""The AR(L) data of Section 6.2: shapes, the recursion, the noise level, standardisation."""

from __future__ import annotations

import math

import pytest
import torch
from boundcalc.validators.data.ar_task import (
    ar_series,
    context_floats_per_sample,
    make_ar_data,
    positional_channels,
)


@pytest.mark.parametrize("L", [4, 16, 72, 96])
def test_windows_have_length_lag_plus_one_and_seventeen_channels(L):
    data = make_ar_data(L, 100, seed=3)
    assert tuple(data.X_train.shape) == (80, L + 1, 17)
    assert tuple(data.X_val.shape) == (20, L + 1, 17)
    assert tuple(data.y_train.shape) == (80,) and tuple(data.y_val.shape) == (20,)
    assert data.T == L + 1 and data.d == 17
    assert data.X_train.dtype == torch.float32
    assert context_floats_per_sample(data.T, data.d) == 17 * (L + 1)


def test_labels_are_standardised_over_all_windows():
    data = make_ar_data(16, 500, seed=1, dtype=torch.float64)
    y = torch.cat([data.y_train, data.y_val])
    assert abs(y.mean().item()) < 1e-12
    assert abs(y.std(unbiased=False).item() - 1) < 1e-12


def test_label_is_the_value_after_the_window_and_windows_slide_by_one():
    L, n = 4, 60
    data = make_ar_data(L, n, seed=2, dtype=torch.float64, val_fraction=0.5)
    X = torch.cat([data.X_train, data.X_val])[:, :, 0]
    y = torch.cat([data.y_train, data.y_val]) * data.label_std + data.label_mean
    starts = {tuple(X[k, :-1].tolist()): k for k in range(n)}
    hits = 0
    for j in range(n):
        k = starts.get(tuple(X[j, 1:].tolist()))        # the window one step later
        if k is not None:
            assert X[k, -1].item() == pytest.approx(y[j].item(), abs=1e-12)
            hits += 1
    assert hits == n - 1


def test_series_follows_the_lag_recursion_with_noise_variance_one_tenth():
    L = 7
    x = ar_series(L, 200_000, generator=torch.Generator().manual_seed(0))
    resid = x[L:] - 0.9 * x[:-L]
    assert abs(resid.var().item() - 0.1) < 0.002           # variance 0.1, not std 0.1
    stationary = x[2000:].var().item()
    assert abs(stationary - 0.1 / (1 - 0.81)) < 0.02


def test_positional_channels_are_sin_cos_at_doubling_periods_from_32():
    P = positional_channels(97)
    assert tuple(P.shape) == (97, 16)
    t = 5
    for k in range(8):
        omega = 2 * math.pi / (32 * 2**k)
        assert P[t, k].item() == pytest.approx(math.sin(t * omega), abs=1e-15)
        assert P[t, 8 + k].item() == pytest.approx(math.cos(t * omega), abs=1e-15)
    torch.testing.assert_close(P[:, :8] ** 2 + P[:, 8:] ** 2, torch.ones(97, 8,
                                                                        dtype=torch.float64))


def test_same_seed_same_data_and_both_lags_and_seeds_matter():
    a, b = make_ar_data(16, 50, seed=0), make_ar_data(16, 50, seed=0)
    assert all(torch.equal(u, v) for u, v in zip(a[:4], b[:4], strict=True))
    assert not torch.equal(a.y_train, make_ar_data(16, 50, seed=1).y_train)


@pytest.mark.parametrize("kwargs, name", [
    ({"L": 0, "n": 10}, "`L`"), ({"L": 2, "n": 0}, "`n`"),
    ({"L": 2, "n": 10, "val_fraction": 1.0}, "`val_fraction`"),
    ({"L": 2, "n": 10, "coefficient": 1.0}, "`coefficient`"),
])
def test_bad_arguments_are_named(kwargs, name):
    L, n = kwargs.pop("L"), kwargs.pop("n")
    with pytest.raises(ValueError, match=name):
        make_ar_data(L, n, seed=0, **kwargs)
