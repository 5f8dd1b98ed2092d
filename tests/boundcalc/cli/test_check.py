"""``boundcalc check``: bad run files and flags are one line naming the array or flag (exit 2),
a violation inside the regime exits 1, anything else 0."""

from __future__ import annotations

import json

import numpy as np
import pytest

from boundcalc.checking.runfile import save_run

pytestmark = pytest.mark.needs_torch


@pytest.fixture
def run_file(plain_run, tmp_path):
    arrays = {k: np.asarray(v) if hasattr(v, "numpy") else v for k, v in plain_run().items()}
    return arrays, save_run(tmp_path / "run.npz", **arrays)


def one_line_naming(result, name: str) -> None:
    assert result.code == 2
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert name in lines[0] and "Traceback" not in result.err


@pytest.mark.parametrize("name", ["W", "y", "c0"])
def test_a_missing_array_is_one_line_naming_it(cli, run_file, name):
    arrays, path = run_file
    del arrays[name]
    np.savez(path, **arrays)
    one_line_naming(cli("check", str(path)), f"array `{name}` is missing")


def test_a_wrong_shape_is_one_line_naming_the_array(cli, run_file):
    arrays, path = run_file
    arrays["U"] = arrays["U"][:, :, :2]
    np.savez(path, **arrays)
    one_line_naming(cli("check", str(path)), "array `U` must have shape")


@pytest.mark.parametrize("name", ["X", "W"])
def test_a_nan_is_one_line_naming_the_array(cli, run_file, name):
    arrays, path = run_file
    arrays[name] = arrays[name].copy()
    arrays[name][-1] = np.nan
    np.savez(path, **arrays)
    one_line_naming(cli("check", str(path), "--quiet"), f"array `{name}` holds a NaN")


def test_an_odd_width_is_one_line_naming_c0(cli, run_file):
    arrays, path = run_file
    for name in ("c0", "U0", "W0"):
        arrays[name] = arrays[name][:5]
    for name in ("c", "U", "W"):
        arrays[name] = arrays[name][:, :5]
    np.savez(path, **arrays)
    one_line_naming(cli("check", str(path)), "array `c0` has m = 5")


def test_a_truncated_file_is_one_line_naming_an_array(cli, run_file):
    _, path = run_file
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])
    one_line_naming(cli("check", str(path)), "array `")


@pytest.mark.parametrize("args, flag", [(("--rho", "-1"), "--rho"), (("--format", "xml"),
                                                                     "--format"),
                                        (("--device", "tpu"), "--device")])
def test_a_bad_flag_is_one_line_naming_it(cli, run_file, args, flag):
    one_line_naming(cli("check", str(run_file[1]), *args), flag)


def test_a_missing_file_is_one_line(cli, tmp_path):
    one_line_naming(cli("check", str(tmp_path / "none.npz")), "cannot be read")


@pytest.mark.slow
def test_a_run_in_the_regime_exits_0_with_its_report(cli, run_file):
    result = cli("check", str(run_file[1]), "--rho", "5", "--format", "json")
    assert result.code == 0
    data = json.loads(result.out)
    assert data["violations"] == 0 and len(data["lines"]) == 20
    assert {r["name"]: r["holds"] for r in data["regime"]}["gradient_steps"] is True


def test_a_violation_inside_the_regime_exits_1(cli, run_file, monkeypatch):
    import boundcalc.validators.checks.run as run_module

    real = run_module.measure_run

    def inflated(*args, **kwargs):
        meas = real(*args, **kwargs)
        meas.lin_gap = meas.lin_gap + 1e6
        return meas

    monkeypatch.setattr(run_module, "measure_run", inflated)
    result = cli("check", str(run_file[1]), "--rho", "5")
    assert result.code == 1
    assert "VIOLATION inside the regime: tight a-priori linearization" in result.err
    assert "violated" in result.out


def test_long_files_show_progress_with_an_eta_and_quiet_hides_it(cli, run_file, monkeypatch):
    monkeypatch.setattr("boundcalc.validators.checks.run.BLOCK_BYTES", 8 * 6 * 4 * 3)
    loud = cli("check", str(run_file[1]))
    assert loud.code == 0 and "[check 1/3] steps 1-8; ETA" in loud.err
    assert cli("check", str(run_file[1]), "--quiet").err == ""
