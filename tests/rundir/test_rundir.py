"""Run directories: atomic writes, resumable cells, a config that refuses a different run."""

from __future__ import annotations

import csv
import io
import json
import math

import pytest

from boundcalc.rundir import RunDirectory, atomic_write_text, dumps, records_to_csv


def test_atomic_write_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "a" / "x.json"
    atomic_write_text(target, "hello")
    assert target.read_text() == "hello"
    assert sorted(p.name for p in target.parent.iterdir()) == ["x.json"]


def test_failed_write_keeps_the_previous_file(tmp_path):
    target = tmp_path / "x.txt"
    atomic_write_text(target, "old")

    class Boom:
        def __str__(self):
            raise RuntimeError("boom")

    with pytest.raises(TypeError):
        atomic_write_text(target, Boom())  # type: ignore[arg-type]
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["x.txt"]


def test_cells_survive_a_new_run_object_with_the_same_config(tmp_path):
    run = RunDirectory(tmp_path, {"m": 16, "seeds": [0, 1]})
    run.save_cell("lemma2-seed0", {"measured": 0.5})
    resumed = RunDirectory(tmp_path, {"m": 16, "seeds": [0, 1]})
    assert resumed.has_cell("lemma2-seed0") and not resumed.has_cell("lemma2-seed1")
    assert resumed.load_cell("lemma2-seed0") == {"measured": 0.5}


def test_a_different_config_is_refused_naming_the_key(tmp_path):
    RunDirectory(tmp_path, {"m": 16})
    with pytest.raises(ValueError, match="m"):
        RunDirectory(tmp_path, {"m": 32})


def test_config_records_parameters_and_environment(tmp_path):
    RunDirectory(tmp_path, {"rho": (2, 2, 2)}, device="cpu")
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["parameters"] == {"rho": [2, 2, 2]}
    assert config["environment"]["device"] == "cpu"
    assert "python" in config["environment"] and "boundcalc" in config["environment"]


def test_cell_keys_cannot_escape_the_folder(tmp_path):
    run = RunDirectory(tmp_path, {})
    with pytest.raises(ValueError, match="key"):
        run.save_cell("../evil", {})


def test_non_finite_numbers_stay_valid_json():
    assert json.loads(dumps({"x": math.inf}))["x"] == "inf"


def test_records_to_csv_takes_the_union_of_columns():
    text = records_to_csv([{"a": 1}, {"a": 2, "b": 3}])
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows == [{"a": "1", "b": ""}, {"a": "2", "b": "3"}]


def test_write_results_writes_json_and_csv(tmp_path):
    run = RunDirectory(tmp_path, {})
    run.write_results([{"name": "L", "holds": True}])
    assert json.loads((tmp_path / "results.json").read_text())[0]["name"] == "L"
    assert (tmp_path / "results.csv").read_text().splitlines()[0] == "name,holds"
