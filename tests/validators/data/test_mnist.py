"""validators/data/mnist.py: IDX/.npz loading (plain, gzip), bad files, tokens, generated digits."""

from __future__ import annotations

import gzip
import struct

import numpy as np
import pytest
from boundcalc.validators.data.mnist import (
    images_to_tokens,
    load_mnist,
    r_x_bound,
    read_idx,
    select_digits,
    synthetic_digits,
    write_idx,
)

NAMES = {"train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
         "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}


def _idx_bytes(array: np.ndarray) -> bytes:
    """IDX written independently of the module (struct + numpy), ubyte type code 0x08."""
    arr = np.ascontiguousarray(array, dtype=np.uint8)
    return bytes([0, 0, 8, arr.ndim]) + struct.pack(f">{arr.ndim}I", *arr.shape) + arr.tobytes()


def _mnist_folder(folder, n_train=12, n_test=6, compress=False, seed=0):
    rng = np.random.default_rng(seed)
    arrays = {"train": (rng.integers(0, 256, (n_train, 28, 28)), np.arange(n_train) % 10),
              "test": (rng.integers(0, 256, (n_test, 28, 28)), np.arange(n_test) % 10)}
    folder.mkdir(parents=True, exist_ok=True)
    for split, (img_name, lab_name) in NAMES.items():
        for name, arr in zip((img_name, lab_name), arrays[split], strict=True):
            data = _idx_bytes(arr)
            if compress:
                (folder / f"{name}.gz").write_bytes(gzip.compress(data))
            else:
                (folder / name).write_bytes(data)
    return arrays


@pytest.mark.parametrize("compress", [False, True])
def test_idx_folder_round_trips(tmp_path, compress):
    arrays = _mnist_folder(tmp_path / "m", compress=compress)
    x_tr, y_tr, x_te, y_te = load_mnist(tmp_path / "m")
    assert x_tr.dtype == np.uint8 and x_tr.shape == (12, 28, 28)
    np.testing.assert_array_equal(x_tr, arrays["train"][0])
    np.testing.assert_array_equal(y_tr, arrays["train"][1])
    np.testing.assert_array_equal(x_te, arrays["test"][0])
    np.testing.assert_array_equal(y_te, arrays["test"][1])


def test_write_idx_and_npz(tmp_path):
    arr = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    for name in ("a-idx3-ubyte", "a-idx3-ubyte.gz"):
        np.testing.assert_array_equal(read_idx(write_idx(tmp_path / name, arr)), arr)
    assert (tmp_path / "a-idx3-ubyte").read_bytes() == _idx_bytes(arr)
    x, y = synthetic_digits(10, seed=3)
    np.savez(tmp_path / "m.npz", x_train=x, y_train=y, x_test=x[:4], y_test=y[:4])
    out = load_mnist(tmp_path / "m.npz")
    np.testing.assert_array_equal(out[0], x)
    np.testing.assert_array_equal(out[3], y[:4])


def _one_line_naming(exc_info, path):
    message = str(exc_info.value)
    assert "\n" not in message and str(path) in message, message


def test_bad_files_give_one_line_errors_naming_the_file(tmp_path):
    _mnist_folder(tmp_path / "m")
    bad = tmp_path / "m" / "train-labels-idx1-ubyte"
    bad.write_bytes(b"\x08\x03\x00\x01garbage")                          # bad magic
    with pytest.raises(ValueError) as err:
        load_mnist(tmp_path / "m")
    _one_line_naming(err, bad)
    bad.write_bytes(_idx_bytes(np.zeros(12))[:-3])                       # truncated data
    with pytest.raises(ValueError) as err:
        load_mnist(tmp_path / "m")
    _one_line_naming(err, bad)
    bad.write_bytes(_idx_bytes(np.zeros(11)))                            # label count mismatch
    with pytest.raises(ValueError) as err:
        load_mnist(tmp_path / "m")
    _one_line_naming(err, bad)
    gz = tmp_path / "x-idx1-ubyte.gz"
    gz.write_bytes(b"\x1f\x8b" + b"not gzip")
    with pytest.raises(ValueError) as err:
        read_idx(gz)
    _one_line_naming(err, gz)
    with pytest.raises(ValueError) as err:
        load_mnist(tmp_path / "empty")
    _one_line_naming(err, tmp_path / "empty")
    (tmp_path / "nofiles").mkdir()
    with pytest.raises(ValueError) as err:
        load_mnist(tmp_path / "nofiles")
    _one_line_naming(err, tmp_path / "nofiles")
    np.savez(tmp_path / "k.npz", x_train=np.zeros((2, 28, 28)))
    with pytest.raises(ValueError) as err:
        load_mnist(tmp_path / "k.npz")
    _one_line_naming(err, tmp_path / "k.npz")
    (tmp_path / "t.npz").write_text("plain text")
    with pytest.raises(ValueError) as err:
        load_mnist(tmp_path / "t.npz")
    _one_line_naming(err, tmp_path / "t.npz")


def test_tokens_layout_and_scale():
    img = np.zeros((1, 28, 28), dtype=np.uint8)
    img[0, 0, 0] = 255                     # lands at (2, 2) of the 32x32 padded image
    img[0, 27, 27] = 51
    tok = images_to_tokens(img, patch=8)
    assert tok.shape == (1, 16, 64)
    assert tok[0, 0, 2 * 8 + 2] == 1.0 and tok[0, 0].sum() == 1.0
    assert tok[0, 15, 5 * 8 + 5] == pytest.approx(0.2) and tok.sum() == pytest.approx(1.2)
    assert images_to_tokens(img, patch=4).shape == (1, 49, 16)
    assert images_to_tokens(img, patch=7).shape == (1, 16, 49)
    full = np.full((3, 28, 28), 255, dtype=np.uint8)
    for scale in ("pixel", "unit"):
        t = images_to_tokens(full, 8, scale)
        assert np.linalg.norm(t, axis=-1).max() <= r_x_bound(8, scale) + 1e-12
        fro = np.linalg.norm(t.reshape(3, -1), axis=-1)
        assert (fro <= np.sqrt(16) * r_x_bound(8, scale) + 1e-12).all()
    with pytest.raises(ValueError, match="scale"):
        images_to_tokens(full, 8, "other")


def test_synthetic_digits_are_seeded_two_class_images():
    x, y = synthetic_digits(40, seed=5)
    x2, y2 = synthetic_digits(40, seed=5)
    np.testing.assert_array_equal(x, x2)
    np.testing.assert_array_equal(y, y2)
    assert x.shape == (40, 28, 28) and x.dtype == np.uint8 and set(np.unique(y)) == {0, 1}
    # rings leave the centre dark, bars light it
    centre = x[:, 12:16, 12:16].mean(axis=(1, 2))
    assert centre[y == 1].mean() > centre[y == 0].mean() + 50
    imgs, labels = select_digits(np.arange(5)[:, None, None] * np.ones((1, 28, 28)),
                                 np.array([0, 1, 2, 1, 0]))
    assert imgs.shape[0] == 4 and labels.tolist() == [0, 1, 1, 0]
