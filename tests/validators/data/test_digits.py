"""Token data sets of digit images (validators/data/digits.py): R_X measured as Assumption 3 states
it, the default data of ``validate generalization`` are the images of ``reproduce table1 --preset
quick``, an MNIST file keeps only the two digits asked for, and a ``--data`` token set is split
into disjoint training and held-out samples."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from boundcalc.validators.data.digits import (  # noqa: E402
    input_scale,
    load_digit_tokens,
    load_generalization_data,
)
from boundcalc.validators.data.mnist import r_x_bound  # noqa: E402
from boundcalc.validators.experiments import table1  # noqa: E402


def test_input_scale_is_the_largest_frobenius_norm_over_the_root_of_the_token_count():
    X = torch.zeros(3, 4, 2, dtype=torch.float64)
    X[0, 0] = torch.tensor([3.0, 4.0])                   # ‖X_0‖_F = 5
    X[1] = 1.0                                           # ‖X_1‖_F = √8
    X[2, :, 0] = 2.0                                     # ‖X_2‖_F = 4
    assert input_scale(X) == pytest.approx(5.0 / math.sqrt(4), rel=1e-15)
    assert input_scale(X.to(torch.float32)) == pytest.approx(2.5, rel=1e-7)


def test_default_generalization_data_are_the_table1_quick_presets_images():
    cfg = table1.make_config("quick")
    arrays = load_digit_tokens(cfg.data, Ns=cfg.Ns, seed=cfg.seed, n_test=cfg.n_test,
                               n_generated=cfg.n_generated, digits=cfg.digits, patch=cfg.patch,
                               scale=cfg.scale)
    N = max(cfg.Ns)
    out = load_generalization_data(N)
    assert np.array_equal(out["X"], arrays["X_pool"][:N])
    assert np.array_equal(out["y"], arrays["y_pool"][:N])
    assert np.array_equal(out["X_test"], arrays["X_test"])
    assert np.array_equal(out["y_test"], arrays["y_test"])
    assert out["R_X"] == r_x_bound(cfg.patch, cfg.scale) == 8.0
    # the a-priori R_X bounds the measured one
    both = torch.from_numpy(np.concatenate([out["X"], out["X_test"]]))
    assert input_scale(both) <= out["R_X"]
    assert set(np.unique(out["y"])) == {0.0, 1.0}


def _mnist_like(tmp_path):
    rng = np.random.default_rng(3)
    x_train = rng.integers(0, 256, size=(40, 28, 28), dtype=np.uint8)
    y_train = np.arange(40) % 4                         # digits 0, 1, 2, 3 in turn
    x_test = rng.integers(0, 256, size=(12, 28, 28), dtype=np.uint8)
    y_test = np.arange(12) % 4
    path = tmp_path / "mnist.npz"
    np.savez(path, x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test)
    return path, x_train, y_train


def test_an_mnist_file_keeps_only_the_two_digits_and_permutes_the_pool_by_seed(tmp_path):
    path, x_train, y_train = _mnist_like(tmp_path)
    a = load_digit_tokens(str(path), Ns=(8,), seed=0, n_test=4, digits=(1, 3), patch=7)
    assert a["X_pool"].shape == (20, 16, 49)           # 20 images of 1 or 3, 4 × 4 patches of 7²
    assert a["X_test"].shape[0] == 4
    assert np.array_equal(np.sort(a["y_pool"]), np.repeat([0.0, 1.0], 10))   # 1 → 0, 3 → 1
    b = load_digit_tokens(str(path), Ns=(8,), seed=0, n_test=4, digits=(1, 3), patch=7)
    c = load_digit_tokens(str(path), Ns=(8,), seed=1, n_test=4, digits=(1, 3), patch=7)
    assert np.array_equal(a["X_pool"], b["X_pool"])
    assert not np.array_equal(a["X_pool"], c["X_pool"])
    # the same images in another order: the token sets agree as multisets
    key = np.sort(a["X_pool"].reshape(20, -1).sum(-1))
    assert np.array_equal(key, np.sort(c["X_pool"].reshape(20, -1).sum(-1)))
    with pytest.raises(ValueError, match=r"20 training images of digits \(1, 3\), the largest N"):
        load_digit_tokens(str(path), Ns=(21,), digits=(1, 3))


def test_a_token_file_without_a_test_split_holds_out_disjoint_samples(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(10, 3, 2))
    y = np.arange(10.0)                                  # the label names the sample
    np.savez(tmp_path / "cell.npz", X=X, y=y)
    out = load_generalization_data(6, n_test=3, data=str(tmp_path / "cell.npz"))
    assert out["X"].shape == (6, 3, 2) and out["X_test"].shape == (3, 3, 2)
    train, held = set(out["y"].tolist()), set(out["y_test"].tolist())
    assert not train & held and len(train | held) == 9
    for Xs, ys in ((out["X"], out["y"]), (out["X_test"], out["y_test"])):
        assert all(np.array_equal(x, X[int(label)]) for x, label in zip(Xs, ys, strict=True))
    both = np.concatenate([out["X"], out["X_test"]])
    norms = np.linalg.norm(both.reshape(9, -1), axis=1)
    assert out["R_X"] == pytest.approx(norms.max() / math.sqrt(3), rel=1e-14)
    with pytest.raises(ValueError, match="10 samples, need N \\+ 1 = 11 or more"):
        load_generalization_data(10, data=str(tmp_path / "cell.npz"))
    np.savez(tmp_path / "nan.npz", X=np.full((4, 2, 2), np.nan), y=np.zeros(4))
    with pytest.raises(ValueError, match="contains non-finite values"):
        load_generalization_data(2, data=str(tmp_path / "nan.npz"))
