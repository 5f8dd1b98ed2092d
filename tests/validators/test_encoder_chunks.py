"""Chunked passes of the encoder (validators/encoder_chunks.py): GD and the measurements at init
through chunks of the samples equal the full-batch ones; the automatic chunk follows the memory
budget; a chunk that is not a positive integer is refused."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from boundcalc.validators import encoder as E  # noqa: E402
from boundcalc.validators import encoder_chunks as C  # noqa: E402

pytestmark = pytest.mark.needs_torch


def _assert_runs_close(a, b, rel):
    for name in ("phi", "train_loss", "test_loss", "distance"):
        assert torch.allclose(getattr(a, name), getattr(b, name), rtol=rel, atol=0,
                              equal_nan=True), name
    for u, v in zip(a.params, b.params, strict=True):
        assert torch.allclose(u.to(torch.float64), v.to(torch.float64), rtol=rel, atol=0)


@pytest.mark.parametrize("objective", E.OBJECTIVES)
@pytest.mark.parametrize("eval_loss", E.EVAL_LOSSES)
def test_chunked_gd_equals_full_batch_gd_in_float64(token_samples, objective, eval_loss):
    # N = 13 and a test set of 7 in chunks of 5 (5 + 5 + 3, 5 + 2): the summed chunk gradients
    # are the full-batch gradient of the same objective, the records the same losses
    X, y = token_samples(13, 3, 6, seed=1)
    X_te, y_te = token_samples(7, 3, 6, seed=2)
    p = E.lecun_init(8, 6, seed=3)
    kw = {"steps": 4, "lr": 0.3, "objective": objective, "eval_loss": eval_loss,
          "X_test": X_te, "y_test": y_te}
    full = E.train_gd(p, X, y, chunk=13, **kw)
    _assert_runs_close(E.train_gd(p, X, y, chunk=5, **kw), full, 1e-12)
    assert float(full.distance[-1].min()) > 0   # the steps moved every block


def test_chunked_gd_equals_full_batch_gd_in_float32(token_samples):
    X, y = token_samples(13, 3, 6, seed=1)
    p = E.lecun_init(8, 6, seed=3, dtype=torch.float32)
    kw = {"steps": 4, "lr": 0.3, "objective": "cross_entropy", "eval_loss": "logistic",
          "X_test": X[:7], "y_test": y[:7]}
    _assert_runs_close(E.train_gd(p, X, y, chunk=5, **kw), E.train_gd(p, X, y, chunk=None, **kw),
                       1e-5)


def test_chunked_init_measurements_equal_the_full_batch_ones(token_samples):
    X, y = token_samples(13, 3, 6, seed=1)
    p = E.lecun_init(16, 6, seed=3)
    full, chunked = E.measure_init(p, X, y), E.measure_init(p, X, y, chunk=4)
    assert chunked["alpha"] == pytest.approx(full["alpha"], rel=1e-12)
    assert chunked["Phi0"] == pytest.approx(full["Phi0"], rel=1e-12)
    assert E.alpha_of(p, X, chunk=4) == pytest.approx(full["alpha"], rel=1e-12)


def test_automatic_chunk_is_all_samples_when_they_fit_and_smaller_when_not(token_samples,
                                                                           monkeypatch):
    X, y = token_samples(13, 3, 6, seed=1)
    p = E.lecun_init(8, 6, seed=3)
    per_sample = C.chunk_bytes_per_sample(3, 8, torch.float64)
    assert per_sample == (8 * 3 * 8 + 4 * 3 * 3) * 8
    assert C.resolve_chunk(None, X, 8) == 13
    full = E.train_gd(p, X, y, steps=2, lr=0.3)
    assert torch.equal(full.phi, E.train_gd(p, X, y, steps=2, lr=0.3, chunk=13).phi)
    monkeypatch.setattr(C, "CPU_CHUNK_BUDGET", 4 * per_sample + 1)
    assert C.resolve_chunk(None, X, 8) == 4
    _assert_runs_close(E.train_gd(p, X, y, steps=2, lr=0.3), full, 1e-12)
    monkeypatch.setattr(C, "CPU_CHUNK_BUDGET", 1)
    assert C.resolve_chunk(None, X, 8) == 1
    _assert_runs_close(E.train_gd(p, X, y, steps=2, lr=0.3), full, 1e-12)


@pytest.mark.parametrize("chunk", [0, -1, 2.0, True])
def test_a_chunk_that_is_not_a_positive_integer_is_refused_naming_chunk(token_samples, chunk):
    X, y = token_samples(4, 2, 4)
    p = E.lecun_init(4, 4, seed=0)
    with pytest.raises(ValueError, match="`chunk`"):
        E.train_gd(p, X, y, steps=1, lr=0.1, chunk=chunk)
    with pytest.raises(ValueError, match="`chunk`"):
        E.measure_init(p, X, y, chunk=chunk)
