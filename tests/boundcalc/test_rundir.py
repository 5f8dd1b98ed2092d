"""Run directories: atomic writes, resumable cells, a config that refuses a different run."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import stat

import pytest

from boundcalc.files import write_atomic
from boundcalc.params import InputError
from boundcalc.rundir import RunDirectory, dumps, records_to_csv


def test_atomic_write_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "a" / "x.json"
    write_atomic(target, "hello")
    assert target.read_text() == "hello"
    assert sorted(p.name for p in target.parent.iterdir()) == ["x.json"]


def test_failed_write_keeps_the_previous_file(tmp_path):
    target = tmp_path / "x.txt"
    write_atomic(target, "old")

    class Boom:
        def __str__(self):
            raise RuntimeError("boom")

    with pytest.raises(TypeError):
        write_atomic(target, Boom())  # type: ignore[arg-type]
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["x.txt"]


def test_an_existing_fifo_is_written_in_place_not_replaced_by_a_file(tmp_path):
    target = tmp_path / "pipe"
    os.mkfifo(target)
    reader = os.open(target, os.O_RDONLY | os.O_NONBLOCK)   # so that opening to write never waits
    try:
        write_atomic(target, ["a", "b"], final_newline=True)
        assert stat.S_ISFIFO(os.stat(target).st_mode)
        assert os.read(reader, 100) == b"ab\n"
    finally:
        os.close(reader)
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]


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


# --------------------------------------------------------------------------- permissions


@pytest.fixture
def umask():
    """Set the process umask for one test, restored afterwards."""
    previous = os.umask(0o022)
    os.umask(previous)
    yield lambda mask: os.umask(mask)
    os.umask(previous)


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)],
                         ids=["umask022", "umask027", "umask002"])
def test_every_run_file_honours_the_umask(tmp_path, umask, mask, mode):
    umask(mask)
    run = RunDirectory(tmp_path / "run", {"m": 16})
    run.save_cell("lemma2-seed0", {"measured": 0.5})
    run.write_results([{"name": "L"}])
    run.write_results([{"name": "L"}], stem="summary")
    write_atomic(tmp_path / "run" / "table.tex", "x")
    files = [p for p in (tmp_path / "run").rglob("*") if p.is_file()]
    assert len(files) == 7
    assert {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in files} == \
        {p.name: oct(mode) for p in files}


# --------------------------------------------------------------------------- damage


@pytest.mark.parametrize("text", ["", '{"measured": 0.', "{}", "[]", "null", "[{}]", "\n"])
def test_a_damaged_cell_is_named_moved_aside_and_counts_as_not_done(tmp_path, capsys, text):
    run = RunDirectory(tmp_path, {"m": 16})
    cell = tmp_path / "cells" / "lemma2-seed0.json"
    cell.write_text(text)
    assert not run.has_cell("lemma2-seed0")
    err = capsys.readouterr().err
    assert str(cell) in err and "damaged" in err and len(err.strip().splitlines()) == 1
    assert not cell.exists()
    assert (tmp_path / "cells" / "corrupt" / "lemma2-seed0.json").read_text() == text
    run.save_cell("lemma2-seed0", {"measured": 0.5})          # recomputed, then done
    assert run.has_cell("lemma2-seed0") and capsys.readouterr().err == ""


def test_a_cell_lacking_a_required_field_is_damaged(tmp_path, capsys):
    run = RunDirectory(tmp_path, {})
    run.save_cell("m8-seed1", {"seed": 1})
    assert run.has_cell("m8-seed1")
    assert not run.has_cell("m8-seed1", ("seed", "m"))
    assert "lacks m" in capsys.readouterr().err
    run.save_cell("m8-seed1", {"seed": 1})
    assert not run.has_cell("m8-seed1", ("m",))               # a second one: a new name aside
    assert sorted(p.name for p in (tmp_path / "cells" / "corrupt").iterdir()) == \
        ["m8-seed1.json", "m8-seed1.json.1"]


@pytest.mark.parametrize("text", ["", '{"parameters": {"m": 1', "{}", "[1]", '{"parameters": 3}'])
def test_a_damaged_config_is_a_clean_input_error_naming_it(tmp_path, text):
    RunDirectory(tmp_path, {"m": 16}).save_cell("a", {"x": 1})
    (tmp_path / "config.json").write_text(text)
    with pytest.raises(InputError) as info:
        RunDirectory(tmp_path, {"m": 16})
    message = str(info.value)
    assert info.value.flag == "--out" and str(tmp_path / "config.json") in message
    assert "move it aside" in message and "\n" not in message
    assert (tmp_path / "config.json").read_text() == text       # nothing overwritten
    assert (tmp_path / "cells" / "a.json").exists()
