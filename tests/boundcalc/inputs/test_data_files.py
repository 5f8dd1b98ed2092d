"""The content of ``--data`` files (boundcalc/inputs/data_files.py): every kind of bad file is one
InputError naming the flag and the file, in one line; and each surface that takes ``--data``
(``generalization``, ``validate generalization``, ``reproduce table1``, ``boundcalc.reproduce``)
refuses such a file with exit 2 before its run directory, lock or torch import."""

from __future__ import annotations

import gzip
import json
import os
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest

from boundcalc.cli import main
from boundcalc.errors import InputError
from boundcalc.experiment_api import reproduce
from boundcalc.inputs.data_files import (
    check_digit_images,
    check_generalization_data,
    read_digit_images,
    read_idx,
    read_mnist,
    read_tokens,
    split_tokens,
)

IDX_NAMES = {"train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
             "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}


def _idx_bytes(array: np.ndarray) -> bytes:
    """An IDX file written here (struct + numpy, type code 0x08), not by the module tested."""
    arr = np.ascontiguousarray(array, dtype=np.uint8)
    return bytes([0, 0, 8, arr.ndim]) + struct.pack(f">{arr.ndim}I", *arr.shape) + arr.tobytes()


def _mnist_folder(folder, train_labels=(0, 1, 0, 1, 2, 3), test_labels=(0, 1, 5)):
    folder.mkdir(parents=True, exist_ok=True)
    for split, labels in (("train", train_labels), ("test", test_labels)):
        images = np.zeros((len(labels), 28, 28), np.uint8)
        img_name, lab_name = IDX_NAMES[split]
        (folder / img_name).write_bytes(_idx_bytes(images))
        (folder / lab_name).write_bytes(_idx_bytes(np.asarray(labels)))
    return folder


def _refusal(call, flag, named):
    """The InputError of ``call``: its flag is ``flag``, and it is one line naming ``named``."""
    with pytest.raises(InputError) as err:
        call()
    message = str(err.value)
    assert err.value.flag == flag, message
    assert message.startswith(f"{flag} ") and "\n" not in message, message
    assert str(named) in message, message
    return message


# ------------------------------------------------------------------ the readers: good files read


def test_an_idx_folder_reads_as_the_arrays_written_plain_and_gzipped(tmp_path):
    folder = _mnist_folder(tmp_path / "m")
    for path in list(folder.iterdir())[:2]:
        gz = path.with_name(path.name + ".gz")
        gz.write_bytes(gzip.compress(path.read_bytes()))
        path.unlink()
    x_tr, y_tr, x_te, y_te = read_mnist(folder)
    assert x_tr.shape == (6, 28, 28) and x_tr.dtype == np.uint8 and y_tr.dtype == np.int64
    assert y_tr.tolist() == [0, 1, 0, 1, 2, 3] and y_te.tolist() == [0, 1, 5]


def test_the_digit_images_are_the_two_digits_relabelled_0_and_1(tmp_path):
    folder = _mnist_folder(tmp_path / "m")
    x_tr, y_tr, x_te, y_te = read_digit_images(folder, (1, 3), N=3)
    assert y_tr.tolist() == [0, 0, 1] and y_te.tolist() == [0] and len(x_tr) == 3
    check_digit_images("--data", folder, {"Ns": (2, 4), "digits": (0, 1), "n_test": 1})


def test_a_token_set_without_a_test_split_holds_out_the_samples_after_n(tmp_path):
    path = tmp_path / "tokens.npz"
    np.savez(path, X=np.arange(24.0).reshape(6, 2, 2), y=np.arange(6.0))
    out = split_tokens(path, 4, 8)
    assert out is not None and len(out["y"]) == 4 and len(out["y_test"]) == 2
    assert not set(out["y"].tolist()) & set(out["y_test"].tolist())
    assert split_tokens(tmp_path / "mnist-folder", 4, 8) is None        # not an .npz: MNIST
    check_generalization_data(4, 8, None)                               # the generated set


# ------------------------------------------------------------- every bad file: one line, --data


def test_a_token_set_missing_an_array_is_refused_naming_data_and_the_file(tmp_path):
    path = tmp_path / "tokens.npz"
    np.savez(path, X=np.ones((4, 2, 3)))
    _refusal(lambda: read_tokens(path), "--data", path)
    # validate's reader takes it for MNIST then, which lacks x_train …
    message = _refusal(lambda: check_generalization_data(2, 1, path), "--data", path)
    assert "lacks x_train, y_train, x_test, y_test" in message


def test_an_mnist_npz_missing_an_array_is_refused_naming_data_and_the_file(tmp_path):
    path = tmp_path / "mnist.npz"
    np.savez(path, x_train=np.zeros((2, 28, 28)), y_train=[0, 1])
    message = _refusal(lambda: read_mnist(path), "--data", path)
    assert "lacks x_test, y_test" in message


@pytest.mark.parametrize(("X", "y"), [
    (np.ones((4, 6)), np.zeros(4)),                   # X not (N, d_s, d)
    (np.ones((4, 2, 3)), np.zeros(3)),                # y not (N,)
    (np.ones((1, 2, 3)), np.zeros(1)),                # N < 2
    (np.ones((4, 0, 3)), np.zeros(4)),                # no tokens
])
def test_a_token_set_of_the_wrong_shape_is_refused_naming_data_and_the_file(tmp_path, X, y):
    path = tmp_path / "tokens.npz"
    np.savez(path, X=X, y=y)
    _refusal(lambda: read_tokens(path), "--data", path)
    if X.shape[0] > 1:
        _refusal(lambda: split_tokens(path, 2, 1), "--data", path)


def test_a_test_split_that_does_not_match_the_tokens_is_refused(tmp_path):
    path = tmp_path / "tokens.npz"
    np.savez(path, X=np.ones((4, 2, 3)), y=np.zeros(4), X_test=np.ones((2, 3, 3)),
             y_test=np.zeros(2))
    assert "do not match" in _refusal(lambda: split_tokens(path, 2, 8), "--data", path)


@pytest.mark.parametrize("bad", ["image", "label"])
def test_mnist_images_of_the_wrong_shape_or_count_are_refused(tmp_path, bad):
    folder = _mnist_folder(tmp_path / "m")
    if bad == "image":
        named = folder / IDX_NAMES["train"][0]
        named.write_bytes(_idx_bytes(np.zeros((6, 27, 28))))
    else:
        named = folder / IDX_NAMES["test"][1]
        named.write_bytes(_idx_bytes(np.zeros(2)))
    _refusal(lambda: read_mnist(folder), "--data", named)


@pytest.mark.parametrize("where", ["X", "y", "X_test"])
def test_a_token_set_holding_nan_is_refused(tmp_path, where):
    arrays = {"X": np.ones((4, 2, 3)), "y": np.zeros(4), "X_test": np.ones((2, 2, 3)),
              "y_test": np.zeros(2)}
    arrays[where] = np.where(np.ones_like(arrays[where], bool), np.nan, 0.0)
    path = tmp_path / "tokens.npz"
    np.savez(path, **arrays)
    assert "non-finite" in _refusal(lambda: split_tokens(path, 2, 8), "--data", path)
    if where != "X_test":
        assert "non-finite" in _refusal(lambda: read_tokens(path), "--data", path)


def test_mnist_images_holding_nan_are_refused(tmp_path):
    path = tmp_path / "mnist.npz"
    images = np.full((2, 28, 28), np.nan)
    np.savez(path, x_train=images, y_train=[0, 1], x_test=images, y_test=[0, 1])
    assert "non-finite" in _refusal(lambda: read_mnist(path), "--data", path)


@pytest.mark.parametrize(("content", "words"), [
    (_idx_bytes(np.zeros(6))[:-3], "IDX data has 3 bytes"),              # truncated data
    (_idx_bytes(np.zeros(6))[:6], "truncated IDX header"),               # truncated header
    (b"\x00\x00\x08\x03" + struct.pack(">3I", 2**31, 2**31, 2**31), "IDX data has 0 bytes"),
    (b"\x08\x03\x00\x01garbage", "bad magic number"),                   # bad magic
    (b"\x00\x00\x07\x01\x00\x00\x00\x00", "type code 0x07"),            # unknown type
    (b"", "bad magic number"),                                           # empty
])
def test_a_damaged_idx_file_is_refused_naming_data_and_the_file(tmp_path, content, words):
    folder = _mnist_folder(tmp_path / "m")
    bad = folder / IDX_NAMES["train"][1]
    bad.write_bytes(content)
    assert words in _refusal(lambda: read_idx(bad), "--data", bad)
    _refusal(lambda: read_mnist(folder), "--data", bad)


@pytest.mark.parametrize("content", [
    b"\x1f\x8b" + b"not gzip",                                            # bad gzip header
    gzip.compress(_idx_bytes(np.zeros(6)), mtime=0)[:-12],                # truncated stream
    gzip.compress(_idx_bytes(np.zeros(6)), mtime=0)[:10] + zlib.compress(b"x")[2:],  # deflate
], ids=["bad_header", "truncated_stream", "corrupt_deflate"])  # ids the same in every worker
def test_a_corrupt_gzip_file_is_refused_naming_data_and_the_file(tmp_path, content):
    bad = tmp_path / "labels-idx1-ubyte.gz"
    bad.write_bytes(content)
    assert "corrupt gzip data" in _refusal(lambda: read_idx(bad), "--data", bad)


def test_a_folder_without_the_idx_files_is_refused_naming_data_and_the_folder(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    message = _refusal(lambda: read_mnist(empty), "--data", empty)
    assert "train-images-idx3-ubyte" in message
    half = _mnist_folder(tmp_path / "half")
    (half / IDX_NAMES["test"][0]).unlink()
    assert "t10k-images" in _refusal(lambda: read_mnist(half), "--data", half)
    _refusal(lambda: read_mnist(tmp_path / "missing"), "--data", tmp_path / "missing")


@pytest.mark.parametrize("kind", ["text", "npy", "zip", "folder"])
def test_a_file_that_is_no_npz_archive_is_refused_naming_data_and_the_file(tmp_path, kind):
    path = tmp_path / "data.npz"
    if kind == "text":
        path.write_text("plain text")
    elif kind == "npy":
        with open(path, "wb") as f:
            np.save(f, np.ones((4, 2, 3)))
    elif kind == "zip":
        np.savez(path, X=np.ones((4, 2, 3)), y=np.zeros(4))
        path.write_bytes(path.read_bytes()[:60])
    else:
        path.mkdir()
    for call in (lambda: read_tokens(path), lambda: split_tokens(path, 2, 1)):
        _refusal(call, "--data", path)
    if kind != "folder":
        _refusal(lambda: read_mnist(path), "--data", path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_is_refused_without_reading_it(tmp_path):
    pipe = tmp_path / "pipe.npz"
    os.mkfifo(pipe)
    assert "not a regular file" in _refusal(lambda: read_tokens(pipe), "--data", pipe)
    _refusal(lambda: read_mnist(pipe), "--data", pipe)


def test_too_few_samples_for_n_are_refused_naming_data_and_the_file(tmp_path):
    path = tmp_path / "tokens.npz"
    np.savez(path, X=np.ones((4, 2, 3)), y=np.zeros(4))
    assert "need N + 1 = 5" in _refusal(lambda: split_tokens(path, 4, 8), "--data", path)
    np.savez(path, X=np.ones((4, 2, 3)), y=np.zeros(4), X_test=np.ones((1, 2, 3)),
             y_test=np.zeros(1))
    assert "4 training samples, N is 5" in _refusal(lambda: split_tokens(path, 5, 8), "--data",
                                                    path)
    folder = _mnist_folder(tmp_path / "m")
    message = _refusal(lambda: read_digit_images(folder, (0, 1), N=5), "--data", folder)
    assert "4 training images of digits (0, 1), the largest N is 5" in message
    message = _refusal(lambda: check_digit_images("--data", folder, {"Ns": (2, 5),
                                                  "digits": (0, 1), "n_test": None}),
                       "--data", folder)
    assert "the largest N is 5" in message
    assert "no test images of digits (2, 3)" in _refusal(
        lambda: read_digit_images(folder, (2, 3), N=1), "--data", folder)
    _refusal(lambda: check_generalization_data(5, 8, folder), "--data", folder)


# -------------------------------------------------------- the surfaces: exit 2 before any work


def _no_lock(monkeypatch, module):
    """Taking the run directory's lock fails the test: a refusal must come before it."""
    def owned(folder):
        raise AssertionError(f"the lock of {folder} was taken before the data were checked")
    monkeypatch.setattr(module, "owned", owned)


def _one_line(err: str, flag: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {flag} "), err
    return lines[0]


def test_generalization_refuses_a_bad_data_file_with_one_line_naming_data(tmp_path, capsys):
    path = tmp_path / "tokens.npz"
    np.savez(path, X=np.full((4, 2, 3), np.nan), y=np.zeros(4))
    assert main(["generalization", "--data", str(path), "--from-init", "0", "--dm", "8"]) == 2
    assert str(path) in _one_line(capsys.readouterr().err, "--data")


def test_validate_generalization_refuses_a_bad_data_file_before_its_lock(tmp_path, capsys,
                                                                         monkeypatch):
    import boundcalc.cli.validate as validate_cli

    _no_lock(monkeypatch, validate_cli)
    folder = _mnist_folder(tmp_path / "m")
    (folder / IDX_NAMES["train"][0]).write_bytes(b"\x00\x00\x08\x03\x00")
    out = tmp_path / "run"
    assert main(["validate", "generalization", "--data", str(folder), "--out", str(out)]) == 2
    assert str(folder) in _one_line(capsys.readouterr().err, "--data")
    assert not out.exists()


def test_validate_generalization_refuses_a_file_too_small_for_n_before_its_lock(tmp_path, capsys,
                                                                                monkeypatch):
    import boundcalc.cli.validate as validate_cli

    _no_lock(monkeypatch, validate_cli)
    path = tmp_path / "tokens.npz"
    np.savez(path, X=np.ones((8, 2, 3)), y=np.zeros(8))
    out = tmp_path / "run"
    assert main(["validate", "generalization", "--data", str(path), "--N", "8",
                 "--out", str(out)]) == 2
    assert "need N + 1 = 9" in _one_line(capsys.readouterr().err, "--data")
    assert not out.exists()


@pytest.mark.parametrize("case", ["corrupt", "few"])
def test_reproduce_table1_refuses_a_bad_data_set_before_its_lock(tmp_path, capsys, monkeypatch,
                                                                 case):
    import boundcalc.cli.reproduce as reproduce_cli

    _no_lock(monkeypatch, reproduce_cli)
    folder = _mnist_folder(tmp_path / "m")
    if case == "corrupt":
        (folder / IDX_NAMES["test"][1]).write_bytes(b"\x1f\x8bxx")
    out = tmp_path / "run"
    # the paper's Ns (400, 1200, 10000) need far more than 4 images of 0 and 1
    assert main(["reproduce", "table1", "--preset", "paper", "--data", str(folder),
                 "--out", str(out), "--device", "cpu"]) == 2
    line = _one_line(capsys.readouterr().err, "--data")
    assert str(folder) in line
    if case == "few":
        assert "4 training images of digits (0, 1), the largest N is 10000" in line
    assert not out.exists()


def test_reproduce_table1_checks_the_digits_and_ns_it_is_given(tmp_path, capsys, monkeypatch):
    import boundcalc.cli.reproduce as reproduce_cli

    _no_lock(monkeypatch, reproduce_cli)
    folder = _mnist_folder(tmp_path / "m")
    assert main(["reproduce", "table1", "--preset", "paper", "--data", str(folder),
                 "--set", "Ns=2", "--set", "digits=2,3", "--out", str(tmp_path / "r")]) == 2
    assert "no test images of digits (2, 3)" in _one_line(capsys.readouterr().err, "--data")


def test_the_python_reproduce_refuses_a_bad_data_set_naming_data(tmp_path):
    folder = _mnist_folder(tmp_path / "m")
    with pytest.raises(InputError) as err:
        reproduce("table1", "paper", tmp_path / "run", data=folder, Ns=[2, 5], progress=False)
    assert err.value.flag == "data" and str(folder) in str(err.value)
    assert not (tmp_path / "run").exists()


def test_the_installed_command_refuses_a_bad_data_set_before_importing_torch(tmp_path):
    folder = _mnist_folder(tmp_path / "m")
    (folder / IDX_NAMES["train"][1]).write_bytes(b"\x08\x03\x00\x01garbage")
    out = tmp_path / "run"
    args = ["reproduce", "table1", "--preset", "paper", "--data", str(folder), "--out", str(out)]
    code = ("import json, sys\nfrom boundcalc.cli import main\n"
            f"code = main({args!r})\nprint(json.dumps([code, 'torch' in sys.modules]))")
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert json.loads(run.stdout.strip().splitlines()[-1]) == [2, False], run.stderr
    line = _one_line(run.stderr, "--data")
    assert str(folder / IDX_NAMES["train"][1]) in line and "bad magic number" in line
    assert not out.exists()
