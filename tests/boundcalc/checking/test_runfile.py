"""Run files: written uncompressed and memory-mapped back; every bad file is an InputError naming
the array (no torch needed)."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

from boundcalc.checking.runfile import ARRAYS, open_run, run_from_arrays, save_run
from boundcalc.errors import InputError


def arrays(m=4, d=2, n=5, T=3, k=3, seed=0) -> dict:
    rng = np.random.default_rng(seed)
    half = m // 2
    c0 = np.concatenate([np.ones(half), -np.ones(half)])
    U0 = np.tile(rng.normal(size=(half, d)), (2, 1))
    W0 = np.tile(rng.normal(size=(half, d, d)), (2, 1, 1))
    return {"c0": c0, "U0": U0, "W0": W0, "c": c0 + 0.01 * rng.normal(size=(k, m)),
            "U": U0 + 0.01 * rng.normal(size=(k, m, d)),
            "W": W0 + 0.01 * rng.normal(size=(k, m, d, d)), "steps": np.arange(1, k + 1),
            "X": rng.uniform(-0.5, 0.5, (n, T, d)), "y": rng.normal(size=n), "eta": 0.1, "K": k}


def test_save_run_round_trips_every_array_and_leaves_q_to_the_last_token(tmp_path):
    a = arrays()
    run = open_run(save_run(tmp_path / "run.npz", **a))
    for name in ("c0", "U0", "W0", "c", "U", "W", "steps", "X", "y"):
        np.testing.assert_array_equal(np.asarray(run.arrays[name]), a[name])
    np.testing.assert_array_equal(run.arrays["q"], a["X"][:, -1, :])
    assert (run.eta, run.K, run.activation) == (0.1, 3, "tanh")


def test_save_run_writes_members_uncompressed_and_large_ones_are_memory_mapped(tmp_path):
    a = arrays(m=128, d=8, k=20)                         # W: 20·128·64·8 B > 1 MB
    path = save_run(tmp_path / "run.npz", **a)
    with zipfile.ZipFile(path) as zf:
        assert {i.compress_type for i in zf.infolist()} == {zipfile.ZIP_STORED}
    run = open_run(path)
    assert isinstance(run.arrays["W"], np.memmap)
    _, _, _, W = run.iterates(5, 9)
    np.testing.assert_array_equal(W, a["W"][5:9])


def test_a_compressed_run_file_is_still_read(tmp_path):
    a = arrays()
    np.savez_compressed(tmp_path / "run.npz", **a)
    np.testing.assert_array_equal(open_run(tmp_path / "run.npz").arrays["W"], a["W"])


@pytest.mark.parametrize("name", ["c0", "W", "steps", "X", "y", "eta", "K"])
def test_a_missing_array_is_named(tmp_path, name):
    a = arrays()
    del a[name]
    np.savez(tmp_path / "run.npz", **a)
    with pytest.raises(InputError, match=f"array `{name}` is missing"):
        open_run(tmp_path / "run.npz")


@pytest.mark.parametrize("name, shape", [("U", (3, 4, 3)), ("W0", (4, 2)), ("y", (4,)),
                                         ("q", (5, 3)), ("c", (2, 4))])
def test_a_misshapen_array_is_named(name, shape):
    a = arrays()
    a[name] = np.zeros(shape)
    with pytest.raises(InputError, match=f"array `{name}` must have shape"):
        run_from_arrays(a)


@pytest.mark.parametrize("name", ["X", "y", "U0", "W"])
def test_a_nan_is_named(tmp_path, name):
    a = arrays()
    a[name] = a[name].copy()
    a[name].reshape(-1)[-1] = np.nan
    np.savez(tmp_path / "run.npz", **a)
    with pytest.raises(InputError, match=f"array `{name}` holds a NaN"):
        run = open_run(tmp_path / "run.npz")
        run.iterates(0, run.k)


def test_save_run_refuses_a_nan_iterate_before_writing(tmp_path):
    a = arrays()
    a["c"] = a["c"].copy()
    a["c"][1, 0] = np.inf
    with pytest.raises(InputError, match="array `c` holds a NaN or infinity at recorded step 2"):
        save_run(tmp_path / "run.npz", **a)
    assert not list(tmp_path.iterdir())


def test_an_odd_width_is_named_on_c0():
    a = arrays()
    for name in ("c0", "U0", "W0"):
        a[name] = a[name][:3]
    for name in ("c", "U", "W"):
        a[name] = a[name][:, :3]
    with pytest.raises(InputError, match="array `c0` has m = 3 heads"):
        run_from_arrays(a)


@pytest.mark.parametrize("keep", [0.3, 0.7, 0.999])
def test_a_truncated_file_names_an_array(tmp_path, keep):
    path = save_run(tmp_path / "run.npz", **arrays(m=64, d=8, k=10))
    data = path.read_bytes()
    path.write_bytes(data[:int(len(data) * keep)])
    with pytest.raises(InputError) as err:
        open_run(path)
    assert "array `" in str(err.value) and "truncated" in str(err.value)


@pytest.mark.parametrize("name, value, message", [
    ("steps", np.array([1, 1, 2]), "strictly increasing"),
    ("steps", np.array([1, 2, 9]), "integers in 0..K"),
    ("eta", -1.0, "positive finite"),
    ("K", 2.5, "positive integer"),
])
def test_bad_steps_and_scalars_are_named(name, value, message):
    a = arrays()
    a[name] = value
    with pytest.raises(InputError, match=f"array `{name}` .*{message}"):
        run_from_arrays(a)


def test_an_unknown_activation_is_named():
    with pytest.raises(InputError, match="array `activation` must be one of tanh, erf"):
        run_from_arrays({**arrays(), "activation": "relu"})


def test_the_documented_arrays_are_the_ones_read():
    assert list(ARRAYS) == ["c0", "U0", "W0", "c", "U", "W", "steps", "X", "q", "y", "eta",
                            "K", "activation"]
