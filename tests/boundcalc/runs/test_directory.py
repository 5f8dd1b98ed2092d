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
from boundcalc.inputs.params import InputError
from boundcalc.runs.directory import ORGANISATION_SWITCHES, RunDirectory, dumps, records_to_csv


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


def test_config_records_the_organisation_switches_that_are_set(tmp_path, monkeypatch):
    for name in ORGANISATION_SWITCHES:
        monkeypatch.delenv(name, raising=False)
    RunDirectory(tmp_path / "plain", {}, device="cpu")
    assert "switches" not in json.loads((tmp_path / "plain" / "config.json").read_text())[
        "environment"]
    monkeypatch.setenv("BOUNDCALC_TRITON", "1")
    monkeypatch.setenv("BOUNDCALC_TOKEN_MOMENTS", "0")
    RunDirectory(tmp_path / "set", {}, device="cpu")
    config = json.loads((tmp_path / "set" / "config.json").read_text())
    assert config["environment"]["switches"] == {"BOUNDCALC_TOKEN_MOMENTS": "0",
                                                 "BOUNDCALC_TRITON": "1"}


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


# --------------------------------------------------------------------------- what a cell records

FIGURE1 = {"experiment": "figure1", "preset": "quick", "widths": [8, 16], "seeds": [1, 2],
           "steps": 100, "dtype": "float64"}


def _cell_file(folder, key="m8-seed1"):
    return folder / "cells" / f"{key}.json"


def test_every_cell_records_the_parameters_it_was_computed_with(tmp_path):
    run = RunDirectory(tmp_path, FIGURE1)
    run.save_cell("m8-seed1", {"seed": 1, "m": 8})
    run.save_cell("lemma2-seed0", [{"measured": 1.0}, {"measured": 2.0}])
    recorded = {"experiment": "figure1", "preset": "quick", "steps": 100, "dtype": "float64"}
    assert json.loads(_cell_file(tmp_path).read_text())["computed_with"] == recorded
    assert [r["computed_with"] for r in json.loads(
        _cell_file(tmp_path, "lemma2-seed0").read_text())] == [recorded, recorded]
    assert run.load_cell("m8-seed1") == {"seed": 1, "m": 8}           # read back as computed
    assert run.load_cell("lemma2-seed0") == [{"measured": 1.0}, {"measured": 2.0}]


@pytest.mark.parametrize(("changed", "flag"), [({"dtype": "float32"}, "--dtype"),
                                               ({"steps": 4000}, "--set steps")])
def test_without_config_a_cell_of_other_parameters_refuses_the_run_naming_the_flag(
        tmp_path, changed, flag):
    RunDirectory(tmp_path, FIGURE1).save_cell("m8-seed1", {"seed": 1, "m": 8})
    (tmp_path / "config.json").unlink()
    with pytest.raises(InputError) as info:
        RunDirectory(tmp_path, {**FIGURE1, **changed})
    message = str(info.value)
    assert info.value.flag == flag and message.startswith(f"{flag} ")
    name, value = next(iter(changed.items()))
    assert f"{name} = {FIGURE1[name]!r}" in message and repr(value) in message
    assert str(_cell_file(tmp_path)) in message and "\n" not in message
    assert not (tmp_path / "config.json").exists() and _cell_file(tmp_path).exists()


def test_a_validate_run_names_the_flag_of_the_parameter_that_differs(tmp_path):
    RunDirectory(tmp_path, {"statements": ["lemma2"], "m": 16, "rate_seeds": 200}).save_cell(
        "lemma2-seed0", [{"measured": 1.0}])
    (tmp_path / "config.json").unlink()
    with pytest.raises(InputError) as info:
        RunDirectory(tmp_path, {"statements": ["lemma2"], "m": 16, "rate_seeds": 100})
    assert info.value.flag == "--rate-seeds"


def test_without_config_cells_of_the_same_parameters_are_reused_whatever_the_seed_list(tmp_path):
    RunDirectory(tmp_path, {**FIGURE1, "seeds": [1]}).save_cell("m8-seed1", {"seed": 1, "m": 8})
    (tmp_path / "config.json").unlink()
    run = RunDirectory(tmp_path, FIGURE1)
    assert run.has_cell("m8-seed1", ("seed", "m"), {"seed": 1, "m": 8})
    assert json.loads((tmp_path / "config.json").read_text())["parameters"]["seeds"] == [1, 2]


def test_without_config_a_cell_recording_no_parameters_is_moved_aside(tmp_path, capsys):
    RunDirectory(tmp_path, FIGURE1)
    _cell_file(tmp_path).write_text('{"seed": 1, "m": 8}')     # as written before cells recorded
    (tmp_path / "config.json").unlink()
    run = RunDirectory(tmp_path, {**FIGURE1, "dtype": "float32"})
    err = capsys.readouterr().err
    assert str(_cell_file(tmp_path)) in err and "records no parameters" in err
    assert len(err.strip().splitlines()) == 1
    assert not run.has_cell("m8-seed1")
    assert (tmp_path / "cells" / "corrupt" / "m8-seed1.json").exists()


def test_with_its_config_a_cell_recording_no_parameters_is_trusted(tmp_path, capsys):
    RunDirectory(tmp_path, FIGURE1)
    _cell_file(tmp_path).write_text('{"seed": 1, "m": 8}')
    run = RunDirectory(tmp_path, FIGURE1)
    assert run.has_cell("m8-seed1", ("seed", "m"), {"seed": 1, "m": 8})
    assert run.load_cell("m8-seed1") == {"seed": 1, "m": 8} and capsys.readouterr().err == ""


def test_with_its_config_a_cell_recording_other_parameters_is_damaged(tmp_path, capsys):
    RunDirectory(tmp_path, {**FIGURE1, "dtype": "float32"}).save_cell("m8-seed1",
                                                                        {"seed": 1, "m": 8})
    foreign = _cell_file(tmp_path).read_text()
    (tmp_path / "config.json").unlink()
    RunDirectory(tmp_path / "other", FIGURE1)
    _cell_file(tmp_path / "other").write_text(foreign)         # copied in from a float32 run
    run = RunDirectory(tmp_path / "other", FIGURE1)
    assert not run.has_cell("m8-seed1")
    err = capsys.readouterr().err
    assert "computed with other parameters" in err and "'float32' in the cell" in err
    assert (tmp_path / "other" / "cells" / "corrupt" / "m8-seed1.json").read_text() == foreign


@pytest.mark.parametrize(("record", "why"), [
    ({"seed": 1, "m": 16, "lin_error": 0.1}, "names m 16, its file name m 8"),
    ({"seed": 2, "m": 8, "lin_error": 0.1}, "names seed 2, its file name seed 1"),
    ({"seed": 1, "m": 8, "lin_error": math.nan}, "holds lin_error 'nan'"),
    ({"seed": 1, "m": 8, "lin_error": math.inf}, "holds lin_error 'inf'"),
    ({"seed": 1, "m": 8, "lin_error": None}, "holds lin_error None"),
], ids=["other-width", "other-seed", "nan", "inf", "null"])
def test_a_cell_naming_another_cell_or_holding_nan_is_damaged(tmp_path, capsys, record, why):
    from boundcalc.runs.directory import dumps, with_parameters

    run = RunDirectory(tmp_path, FIGURE1)
    # written as save_cell did before it refused a NaN (a file edited or damaged since)
    _cell_file(tmp_path).write_text(dumps(with_parameters(record, run.cell_parameters)))
    assert not run.has_cell("m8-seed1", ("seed", "m"), {"seed": 1, "m": 8}, ("lin_error",))
    err = capsys.readouterr().err
    assert why in err and str(_cell_file(tmp_path)) in err
    assert (tmp_path / "cells" / "corrupt" / "m8-seed1.json").exists()


def test_a_literal_nan_in_a_cell_file_is_damaged_too(tmp_path, capsys):
    run = RunDirectory(tmp_path, FIGURE1)
    _cell_file(tmp_path).write_text('{"seed": 1, "m": 8, "lin_error": NaN}')
    assert not run.has_cell("m8-seed1", ("seed", "m"), {"seed": 1, "m": 8}, ("lin_error",))
    assert "not a finite number" in capsys.readouterr().err


def test_a_worker_records_the_parameters_of_config_json_and_skips_foreign_cells(tmp_path):
    from boundcalc.runs.directory import save_cell_file, stored_cell

    run = RunDirectory(tmp_path, FIGURE1)
    save_cell_file(tmp_path, "m8-seed1", {"seed": 1, "m": 8})
    assert _cell_file(tmp_path).read_text() == _saved_by(run, {"seed": 1, "m": 8})
    assert stored_cell(tmp_path, "m8-seed1") == {"seed": 1, "m": 8}
    RunDirectory(tmp_path / "f32", {**FIGURE1, "dtype": "float32"}).save_cell(
        "m16-seed1", {"seed": 1, "m": 16})
    (tmp_path / "f32" / "cells" / "m16-seed1.json").replace(_cell_file(tmp_path, "m16-seed1"))
    assert stored_cell(tmp_path, "m16-seed1") is None           # computed again, not loaded


def _saved_by(run: RunDirectory, record) -> str:
    """The text :meth:`RunDirectory.save_cell` writes for ``record``."""
    run.save_cell("probe", record)
    text = (run.cells / "probe.json").read_text()
    (run.cells / "probe.json").unlink()
    return text
