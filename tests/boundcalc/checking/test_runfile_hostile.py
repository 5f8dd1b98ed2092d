"""``boundcalc check`` on hostile run files: memory bounded whatever K and whatever a header
claims, never a file that is not a regular one, the zip CRC verified for what is read, unknown
members warned of, a ratio against a zero bound null with its reason, JSON output standard (read
back here with a strict parser), and never an internal error (a property test over random and
damaged files)."""

from __future__ import annotations

import io
import json
import math
import os
import struct
import tracemalloc
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boundcalc.checking import runfile
from boundcalc.checking.runcheck import check_run
from boundcalc.checking.runfile import open_run
from boundcalc.cli import main
from boundcalc.errors import InputError

pytestmark = pytest.mark.needs_torch


def _strict(text: str):
    """``json.loads`` that refuses NaN and Infinity (not JSON)."""
    def refuse(name: str):
        raise ValueError(f"{name} is not standard JSON")
    return json.loads(text, parse_constant=refuse)


def _arrays(K: int = 5, steps=(5,)) -> dict:
    rng = np.random.default_rng(0)
    d, n, T = 2, 6, 3
    c0 = np.array([1.0, -1.0, -1.0, 1.0])
    U0 = np.tile(rng.normal(size=(2, d)), (2, 1))
    W0 = np.tile(rng.normal(size=(2, d, d)), (2, 1, 1))
    k = len(steps)
    return dict(c0=c0, U0=U0, W0=W0, c=np.repeat(c0[None] + 0.01, k, 0),
                U=np.repeat(U0[None], k, 0), W=np.repeat(W0[None], k, 0),
                steps=np.array(steps), X=rng.uniform(-0.4, 0.4, (n, T, d)), y=np.zeros(n),
                eta=np.array(0.1), K=np.array(K), activation=np.array("tanh"))


def _file(tmp_path, name="run.npz", **changed) -> str:
    path = str(tmp_path / name)
    np.savez(path, **{**_arrays(), **changed})
    return path


def _main(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------ memory bounded in K

def test_a_huge_K_is_checked_without_a_set_of_its_steps():
    check_run(_arrays(K=6))               # modules imported and code generated before measuring
    tracemalloc.start()
    try:
        result = check_run(_arrays(K=10**7))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    every = next(r for r in result.regime if r["name"] == "every_step_recorded")
    assert every["holds"] is False
    assert peak < 64 << 20, peak          # a set of 10**7 steps alone takes over 400 MB


def test_K_two_to_the_62_is_a_report_not_an_exhaustion(tmp_path, capsys):
    code, out, err = _main(["check", _file(tmp_path, K=np.array(2**62)), "--format", "json",
                            "-q"], capsys)
    assert code == 0, err
    assert _strict(out)["settings"]["K"] == 2**62


def test_every_step_recorded_still_holds_when_every_step_is():
    result = check_run(_arrays(K=4, steps=(1, 2, 3)))
    every = next(r for r in result.regime if r["name"] == "every_step_recorded")
    assert every["holds"] is True


@pytest.mark.parametrize("K", [math.inf, math.nan, -3.0, 2.5])
def test_a_K_that_is_no_positive_integer_is_a_one_line_refusal(tmp_path, capsys, K):
    code, _, err = _main(["check", _file(tmp_path, K=np.array(K))], capsys)
    assert code == 2 and "array `K` must be a positive integer" in err
    assert len(err.strip().splitlines()) == 1


# ------------------------------------------------------------------ not a regular file

def test_dev_zero_is_not_a_regular_file(capsys):
    code, _, err = _main(["check", "/dev/zero"], capsys)
    assert code == 2 and "not a regular file" in err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_not_a_regular_file_and_is_never_opened(tmp_path, capsys):
    os.mkfifo(tmp_path / "run.npz")                 # opening it would wait for a writer
    code, _, err = _main(["check", str(tmp_path / "run.npz")], capsys)
    assert code == 2 and "not a regular file" in err


def test_a_folder_is_not_a_regular_file(tmp_path, capsys):
    code, _, err = _main(["check", str(tmp_path)], capsys)
    assert code == 2 and "not a regular file" in err


# ------------------------------------------------------------------ memory bounded in file size

def _zip_with(tmp_path, member: str, payload: bytes, compress=zipfile.ZIP_DEFLATED) -> str:
    path = tmp_path / "crafted.npz"
    np.savez(path, **{k: v for k, v in _arrays().items() if f"{k}.npy" != member})
    with zipfile.ZipFile(path, "a", compression=compress) as zf:
        zf.writestr(member, payload)
    return str(path)


@pytest.mark.parametrize("compress", [zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED])
def test_a_header_claiming_a_terabyte_is_refused_before_anything_is_allocated(tmp_path,
                                                                              compress):
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False,
                                                  "shape": (10**11, 2, 2)})
    path = _zip_with(tmp_path, "X.npy", header.getvalue() + bytes(64), compress)
    with pytest.raises(InputError, match="array `X`"):
        open_run(path)


def test_compressed_arrays_expanding_beyond_the_limit_are_refused(tmp_path, monkeypatch):
    path = tmp_path / "run.npz"
    np.savez_compressed(path, **_arrays())
    open_run(path)                                          # small: read whole, fine
    monkeypatch.setattr(runfile, "COMPRESSED_LIMIT", 300)
    with pytest.raises(InputError, match="compressed and expands to .* save the run "
                                         "uncompressed"):
        open_run(path)


# ------------------------------------------------------------------ CRC and unknown members

def _flip_last_data_byte(path: str, member: str) -> None:
    data = bytearray(Path(path).read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo(member)
    name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26:
                                                    info.header_offset + 30])
    data[info.header_offset + 30 + name_len + extra_len + info.compress_size - 1] ^= 0x01
    Path(path).write_bytes(bytes(data))


@pytest.mark.parametrize("member", ["c0.npy", "X.npy", "W.npy", "K.npy"])
def test_a_bit_flipped_in_an_array_is_caught_by_the_zip_crc(tmp_path, capsys, member):
    path = _file(tmp_path)
    _flip_last_data_byte(path, member)
    code, _, err = _main(["check", path], capsys)
    assert code == 2 and f"array `{member[:-4]}` is damaged" in err and "CRC-32" in err


def test_a_bit_flipped_in_a_memory_mapped_array_is_caught_too(tmp_path, capsys):
    arrays = _arrays()
    arrays["X"] = np.random.default_rng(1).uniform(-0.1, 0.1, (20000, 4, 2))   # > 1 MB
    arrays["y"] = np.zeros(20000)
    path = str(tmp_path / "big.npz")
    np.savez(path, **arrays)
    assert isinstance(open_run(path).arrays["X"], np.memmap)
    _flip_last_data_byte(path, "X.npy")
    with pytest.raises(InputError, match="array `X` is damaged.*CRC-32"):
        open_run(path)


def test_members_that_are_not_arrays_of_a_run_file_are_warned_of_in_one_line(tmp_path, capsys):
    path = _file(tmp_path, extra=np.zeros(3), notes=np.array("hello"))
    code, out, err = _main(["check", path, "--format", "json", "-q"], capsys)
    assert code == 0
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "extra.npy" in warnings[0] and "notes.npy" in warnings[0]
    assert _strict(out)["warnings"] == [warnings[0].removeprefix("warning: ")]
    assert open_run(path).ignored == ("extra.npy", "notes.npy")


# ------------------------------------------------------------------ ratios and standard JSON

def test_a_ratio_against_a_zero_bound_is_null_with_its_reason_in_standard_json(tmp_path,
                                                                               capsys):
    code, out, err = _main(["check", _file(tmp_path), "--nu", "0", "--format", "json", "-q"],
                           capsys)
    assert code == 0, err
    lines = _strict(out)["lines"]
    zero = [x for x in lines if x["bound"] == 0]
    assert zero and all(x["ratio"] is None and x["ratio_note"] == "the bound is 0"
                        for x in zero)
    assert all(x["ratio_note"] is None and math.isfinite(x["ratio"])
               for x in lines if x["bound"] > 0)
    assert "Infinity" not in out and "NaN" not in out


def test_the_csv_and_table_show_no_inf_ratio_either(tmp_path, capsys):
    for fmt in ("csv", "table"):
        code, out, _ = _main(["check", _file(tmp_path), "--nu", "0", "--format", fmt, "-q"],
                             capsys)
        assert code == 0 and "inf" not in out.lower().replace("informative", "")


# ------------------------------------------------------------------ property: never exit 3

_NAMES = ("c0", "U0", "W0", "c", "U", "W", "steps", "X", "q", "y", "eta", "K", "activation")
_VALUES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True), st.integers(-2**63, 2**63 - 1),
    st.just(2**64 - 1), st.text(max_size=8), st.booleans())


@st.composite
def _hostile_file(draw):
    arrays = _arrays(K=draw(st.sampled_from([5, 6, 2**62])),
                     steps=draw(st.sampled_from([(5,), (1, 2, 3), (0, 5)])))
    for _ in range(draw(st.integers(0, 3))):
        name = draw(st.sampled_from(_NAMES + ("extra",)))
        how = draw(st.sampled_from(["drop", "scalar", "shape", "dtype", "nan", "value"]))
        if how == "drop":
            arrays.pop(name, None)
        elif how == "scalar":
            arrays[name] = np.array(draw(_VALUES))
        elif how == "shape":
            shape = tuple(draw(st.lists(st.integers(0, 5), max_size=4)))
            arrays[name] = np.zeros(shape)
        elif how == "dtype" and name in arrays:
            dtype = draw(st.sampled_from(["float16", "int8", "uint64", "complex128", "bool",
                                          "U3", ">f8", "float32"]))
            try:
                with warnings.catch_warnings():       # complex and overflowing casts: wanted
                    warnings.simplefilter("ignore")
                    arrays[name] = np.asarray(arrays[name]).astype(dtype)
            except (ValueError, TypeError, OverflowError):
                arrays[name] = np.zeros(3, dtype=dtype)
        elif how == "nan" and name in arrays and np.asarray(arrays[name]).size \
                and np.asarray(arrays[name]).dtype.kind in "fiub":
            value = np.array(arrays[name], dtype=np.float64)
            value.reshape(-1)[0] = draw(st.sampled_from([math.nan, math.inf, 1e308, -1e308]))
            arrays[name] = value
        elif how == "value":
            arrays[name] = np.full(np.shape(arrays.get(name, 0)),
                                   draw(st.floats(-1e300, 1e300)))
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    data = bytearray(buffer.getvalue())
    corruption = draw(st.sampled_from(["none", "truncate", "flip", "garbage"]))
    if corruption == "truncate":
        data = data[:draw(st.integers(0, len(data)))]
    elif corruption == "flip":
        position = draw(st.integers(0, len(data) - 1))
        data[position] ^= 1 << draw(st.integers(0, 7))
    elif corruption == "garbage":
        data = bytearray(draw(st.binary(max_size=200)))
    return bytes(data)


@pytest.mark.slow
@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(content=_hostile_file(), fmt=st.sampled_from(["json", "csv", "table"]),
       nu=st.sampled_from([None, "0", "1e-300", "3"]))
def test_check_never_exits_3_nor_prints_a_traceback_on_any_run_file(tmp_path, capsys,
                                                                     content, fmt, nu):
    path = tmp_path / "hostile.npz"
    path.write_bytes(content)
    argv = ["check", str(path), "--format", fmt, "-q"] + (["--nu", nu] if nu else [])
    code, out, err = _main(argv, capsys)
    assert code in (0, 1, 2), err
    assert "Traceback" not in err and "internal error" not in err
    if code == 2:
        assert [line.startswith("error: ") for line in err.strip().splitlines()
                if not line.startswith("warning: ")] == [True], err
    if code in (0, 1) and fmt == "json":
        _strict(out)


@pytest.mark.parametrize("dtype", [">f8", np.longdouble])
def test_an_array_float64_cannot_hold_or_in_a_foreign_byte_order_is_a_one_line_refusal(
        tmp_path, capsys, dtype):
    """A big-endian or extended-precision array (torch takes neither) is refused naming the
    array, exit 2, not an internal error."""
    X = _arrays()["X"].astype(dtype)
    if np.dtype(dtype).itemsize <= 8 and np.dtype(dtype).isnative:
        pytest.skip("this platform's long double is float64")
    code, _, err = _main(["check", _file(tmp_path, X=X)], capsys)
    assert code == 2 and "array `X` must be float16, float32, float64" in err
    assert len(err.strip().splitlines()) == 1
