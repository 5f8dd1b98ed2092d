"""Damaged run directories through the commands: a truncated, empty or ``{}`` cell file is named,
moved aside and recomputed (``validate``, ``reproduce``) or left out and named (``table``); a
truncated ``config.json`` is a one-line exit-2 error naming the file (never an internal error)."""

from __future__ import annotations

import json

import pytest

from boundcalc.cli import main

#: drives the torch validators (validate, reproduce, figures): skipped where torch is absent
pytestmark = pytest.mark.needs_torch

VALIDATE = ["validate", "lemma5", "--m", "4", "--n", "8", "--quiet", "--device", "cpu",
            "--format", "json"]
DAMAGE = {"truncated": lambda text: text[: len(text) // 2], "empty": lambda text: "",
          "empty-object": lambda text: "{}"}


def _one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "internal error" not in err and "Traceback" not in err
    return lines[0]


@pytest.fixture(scope="module")
def validated(tmp_path_factory):
    out = tmp_path_factory.mktemp("v") / "run"
    assert main([*VALIDATE, "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_validate_recomputes_a_damaged_cell_and_names_it(validated, tmp_path, capsys, damage):
    import shutil

    out = tmp_path / "run"
    shutil.copytree(validated, out)
    cell = out / "cells" / "lemma5-seed0.json"
    good = json.loads(cell.read_text())
    cell.write_text(DAMAGE[damage](cell.read_text()))
    capsys.readouterr()
    assert main([*VALIDATE, "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"damaged cell {cell}" in err and "computing it again" in err
    assert (out / "cells" / "corrupt" / "lemma5-seed0.json").exists()
    again = json.loads(cell.read_text())
    assert [r["measured"] for r in again] == [r["measured"] for r in good]


@pytest.mark.parametrize("text", ["", '{"parameters": {"statements": ["lem', "{}"])
def test_validate_on_a_damaged_config_is_a_clean_exit_2(validated, tmp_path, capsys, text):
    import shutil

    out = tmp_path / "run"
    shutil.copytree(validated, out)
    (out / "config.json").write_text(text)
    capsys.readouterr()
    assert main([*VALIDATE, "--out", str(out)]) == 2
    line = _one_line_error(capsys.readouterr().err)
    assert str(out / "config.json") in line and "--out" in line and "--out --out" not in line


@pytest.mark.parametrize("experiment", ["figure1", "figure2", "table1"])
def test_reproduce_on_a_truncated_config_is_a_clean_exit_2(tmp_path, capsys, experiment):
    out = tmp_path / experiment
    (out / "cells").mkdir(parents=True)
    (out / "config.json").write_text('{"parameters": {"experiment": "')
    assert main(["reproduce", experiment, "--preset", "quick", "--device", "cpu",
                 "--out", str(out)]) == 2
    line = _one_line_error(capsys.readouterr().err)
    assert str(out / "config.json") in line and "--data" not in line
    assert "--out --out" not in line


# ------------------------------------------------ a run whose config.json is gone: its cells speak


def test_validate_without_config_refuses_another_dtype_naming_the_flag(validated, tmp_path,
                                                                       capsys):
    import shutil

    out = tmp_path / "run"
    shutil.copytree(validated, out)
    (out / "config.json").unlink()
    capsys.readouterr()
    assert main([*VALIDATE, "--dtype", "float32", "--out", str(out)]) == 2
    line = _one_line_error(capsys.readouterr().err)
    assert line.startswith("error: --dtype ") and "'float64'" in line and "'float32'" in line
    assert not (out / "config.json").exists()                   # nothing written or moved
    assert not (out / "cells" / "corrupt").exists()


def test_validate_without_config_reuses_cells_of_the_same_parameters(validated, tmp_path,
                                                                     capsys):
    import shutil

    out = tmp_path / "run"
    shutil.copytree(validated, out)
    (out / "config.json").unlink()
    cell = out / "cells" / "lemma5-seed0.json"
    before = cell.stat().st_mtime_ns
    assert main([*VALIDATE, "--out", str(out)]) == 0
    assert cell.stat().st_mtime_ns == before and (out / "config.json").exists()


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory):
    out = tmp_path_factory.mktemp("f1") / "run"
    assert main([*REPRODUCE, "--out", str(out)]) == 0
    return out


REPRODUCE = ["reproduce", "figure1", "--preset", "quick", "--seeds", "1", "--device", "cpu"]


def test_reproduce_without_config_refuses_another_dtype_naming_the_flag(reproduced, tmp_path,
                                                                        capsys):
    import shutil

    out = tmp_path / "run"
    shutil.copytree(reproduced, out)
    (out / "config.json").unlink()
    cells = {p.name: p.read_bytes() for p in (out / "cells").iterdir()}
    capsys.readouterr()
    assert main([*REPRODUCE, "--dtype", "float32", "--out", str(out)]) == 2
    line = _one_line_error(capsys.readouterr().err)
    assert line.startswith("error: --dtype ") and "dtype = 'float64'" in line
    assert {p.name: p.read_bytes() for p in (out / "cells").iterdir()} == cells
    assert not (out / "config.json").exists()
