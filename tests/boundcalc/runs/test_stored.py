"""Stored runs read back for tables: a cell is tabled only when it is the cell its file name says,
holds finite numbers where they belong and records the run's parameters (or none)."""

from __future__ import annotations

import math

import pytest

from boundcalc.runs.directory import RunDirectory, dumps, with_parameters
from boundcalc.runs.stored import load_run

PARAMS = {"experiment": "figure1", "preset": "quick", "widths": [8, 16], "seeds": [1, 2],
          "dtype": "float64"}


def _cell(seed: int, m: int, **changed) -> dict:
    return {"seed": seed, "m": m, "lin_error": 0.1, "app_error": 0.2, "min_train_loss": 0.3,
            **changed}


@pytest.fixture
def run_dir(tmp_path):
    run = RunDirectory(tmp_path / "run", PARAMS)
    for seed in (1, 2):
        for m in (8, 16):
            run.save_cell(f"m{m}-seed{seed}", _cell(seed, m))
    return run


def test_a_sound_cell_is_tabled_as_computed(run_dir):
    stored = load_run(run_dir.path)
    assert stored.damaged == {} and stored.missing == []
    assert stored.records[0] == _cell(1, 8)                     # no parameter record in a table


def test_a_cell_naming_another_width_or_holding_nan_is_named_and_not_tabled(run_dir, tmp_path):
    run_dir.save_cell("m8-seed1", _cell(1, 16))                 # a copy of m16-seed1's content
    # written as save_cell did before it refused a NaN (a file edited or damaged since)
    (run_dir.cells / "m16-seed2.json").write_text(dumps(with_parameters(
        _cell(2, 16, lin_error=math.nan), run_dir.cell_parameters)))
    foreign = RunDirectory(tmp_path / "f32", {**PARAMS, "dtype": "float32"})
    foreign.save_cell("m8-seed2", _cell(2, 8))
    (foreign.cells / "m8-seed2.json").replace(run_dir.cells / "m8-seed2.json")
    stored = load_run(run_dir.path)
    assert stored.damaged == {
        "m8-seed1": "names m 16, its file name m 8",
        "m8-seed2": "computed with other parameters than the run's (dtype 'float32' in the "
                    "cell, 'float64' in the run)",
        "m16-seed2": "holds lin_error 'nan', not a finite number"}
    assert [(r["seed"], r["m"]) for r in stored.records] == [(1, 16)]


def test_a_cell_name_says_which_cell_it_holds():
    from boundcalc.runs.stored import cell_checks, cell_identity

    assert cell_identity("tsweep", "m64-T16-seed3") == {"m": 64, "T": 16, "seed": 3}
    assert cell_identity("table1", "dm16-N64") == {"d_m": 16, "N": 64}
    assert cell_checks("figure1", "m8-seed1")["finite"] == ("lin_error", "app_error",
                                                             "min_train_loss")
    with pytest.raises(ValueError, match="not the name of a figure1 cell"):
        cell_identity("figure1", "m8")
