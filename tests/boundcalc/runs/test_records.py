"""The record schema: a cell is checked field by field when read (finite where every mean and
yardstick uses it, equal to the run's parameters where it names one, bounded in size and nesting);
a failure is damage (moved aside and recomputed by a run, left out of every table); the writers
refuse what a sound cell never holds, so no NaN is stored where a finite number belongs."""

from __future__ import annotations

import json
import math
import os

import pytest

from boundcalc.cli import main
from boundcalc.runs.directory import RunDirectory, dumps, with_parameters
from boundcalc.runs.records import (
    MAX_DEPTH,
    MAX_RECORD_BYTES,
    RecordError,
    parse_json,
    read_stored,
    record_problem,
)
from boundcalc.runs.stored import cell_checks, load_run
from boundcalc.runs.summaries import summarize_figure1

PARAMS = {"experiment": "figure1", "preset": "quick", "widths": [8], "seeds": [1, 2],
          "n": 64, "val_fraction": 0.25, "d": 4, "T": 4, "delta": "0.05", "steps": 10,
          "rho": [3.0, 3.0, 3.0], "nu": [3.0, 3.0, 3.0], "activation": "tanh",
          "lin_align": "feature", "dtype": "float64"}


def _cell(seed: int, **changed) -> dict:
    """A sound figure-1 cell of :data:`PARAMS` (width 8)."""
    return {"seed": seed, "m": 8, "n": 64, "n_train": 48, "lin_error": 0.01,
            "lin_error_max": 0.02, "lin_align": "feature", "lin_error_alt": 0.03,
            "lin_align_alt": "output", "app_error": 0.2, "app_error_mean": 0.1,
            "min_train_loss": 0.3, "final_train_loss": 0.31, "initial_train_loss": 0.5 * seed,
            "final_val_loss": 0.4, "label_rms": 0.7, "wall_s": 1.0, **changed}


def _write(run: RunDirectory, key: str, record) -> None:
    """A cell file as save_cell wrote it before it refused damage (or as edited since)."""
    (run.cells / f"{key}.json").write_text(dumps(with_parameters(record,
                                                                 run.cell_parameters)))


@pytest.fixture
def run(tmp_path):
    return RunDirectory(tmp_path / "run", PARAMS)


# ------------------------------------------------------------------ bounded JSON

def test_a_file_of_100000_open_brackets_is_refused_without_recursion_error():
    data, problem = parse_json("[" * 100_000)
    assert data is None and problem == f"nested deeper than {MAX_DEPTH} levels"
    closed = "[" * 500 + "]" * 500                    # parses, but deeper than any record
    assert parse_json(closed)[1] == f"nested deeper than {MAX_DEPTH} levels"


def test_a_cell_file_larger_than_the_bound_is_refused_without_reading_it_whole(tmp_path):
    big = tmp_path / "big.json"
    big.write_text('{"x": "' + "a" * (MAX_RECORD_BYTES + 10) + '"}')
    assert read_stored(big) == (None, f"larger than {MAX_RECORD_BYTES} bytes")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_in_place_of_a_cell_is_damage_and_is_never_read(run):
    os.mkfifo(run.cells / "m8-seed1.json")              # reading it would wait for a writer
    assert not run.has_cell("m8-seed1", **cell_checks("figure1", "m8-seed1"))
    assert (run.cells / "corrupt" / "m8-seed1.json").exists()


def test_a_deeply_nested_cell_is_moved_aside_and_computed_again(run, capsys):
    (run.cells / "m8-seed1.json").write_text("[" * 100_000)
    assert not run.has_cell("m8-seed1", **cell_checks("figure1", "m8-seed1"))
    err = capsys.readouterr().err
    assert "nested deeper than" in err and "computing it again" in err
    assert (run.cells / "corrupt" / "m8-seed1.json").read_text() == "[" * 100_000


def test_table_of_a_run_with_a_deeply_nested_cell_names_it_damaged_and_exits_cleanly(run, capsys):
    _write(run, "m8-seed2", _cell(2))
    (run.cells / "m8-seed1.json").write_text("[" * 100_000)
    code = main(["table", str(run.path), "--format", "csv"])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    assert "Traceback" not in err and "internal error" not in err
    assert "m8-seed1" in err and "nested deeper than" in err


def test_a_deeply_nested_config_json_is_a_one_line_refusal(tmp_path):
    from boundcalc.errors import InputError

    folder = tmp_path / "run"
    (folder / "cells").mkdir(parents=True)
    (folder / "config.json").write_text("[" * 100_000)
    with pytest.raises(InputError, match="nested deeper than"):
        load_run(folder)
    with pytest.raises(InputError, match="damaged .nested deeper than"):
        RunDirectory(folder, PARAMS)


# ------------------------------------------------------------------ fields checked on read

@pytest.mark.parametrize(("field", "bad"), [
    (field, bad) for field in ("initial_train_loss", "lin_error_alt", "label_rms",
                               "final_val_loss", "lin_error", "app_error", "min_train_loss")
    for bad in (math.nan, math.inf, "nan", None, "0.1", -1.0)
    if (field, bad) != ("final_val_loss", None)])      # null: nothing held out (sound)
def test_a_non_finite_or_mistyped_measurement_is_damage(run, field, bad):
    _write(run, "m8-seed1", _cell(1, **{field: bad}))
    _write(run, "m8-seed2", _cell(2))
    stored = load_run(run.path)
    assert list(stored.damaged) == ["m8-seed1"] and field in stored.damaged["m8-seed1"]
    assert [r["seed"] for r in stored.records] == [2]
    assert not run.has_cell("m8-seed1", **cell_checks("figure1", "m8-seed1"))
    assert (run.cells / "corrupt" / "m8-seed1.json").exists()


def test_a_literal_nan_in_initial_train_loss_is_damage_too(run):
    text = dumps(with_parameters(_cell(1), run.cell_parameters)).replace(
        '"initial_train_loss": 0.5', '"initial_train_loss": NaN')
    (run.cells / "m8-seed1.json").write_text(text)
    assert "initial_train_loss" in load_run(run.path).damaged["m8-seed1"]


@pytest.mark.parametrize(("changed", "why"), [
    ({"n": 128}, "names n 128, the run has n 64"),
    ({"n_train": 60}, "names n_train 60, the run has n_train 48"),
    ({"lin_align": "output", "lin_align_alt": "feature"},
     "names lin_align 'output', the run has lin_align 'feature'"),
    ({"lin_align": "sideways"}, "holds lin_align 'sideways', not one of feature, output"),
])
def test_a_cell_contradicting_the_run_it_is_stored_in_is_damage(run, changed, why):
    _write(run, "m8-seed1", _cell(1, **changed))
    assert load_run(run.path).damaged["m8-seed1"] == why


def test_a_figure2_cell_whose_length_is_not_its_lag_plus_one_is_damage():
    cell = {"model": "indrnn", "L": 4, "T": 9, "seed": 0, "diverged": False}
    assert record_problem("figure2", cell) == "names T 9, the run has T 5"
    assert record_problem("figure2", {**cell, "T": 5, "diverged": "no"}) == \
        "holds diverged 'no', not true or false"


def test_a_diverged_runs_undefined_losses_stay_sound():
    cell = {"model": "indrnn", "L": 4, "T": 5, "seed": 0, "diverged": True,
            "min_val_loss": "nan", "final_val_loss": "inf", "max_jacobian": 2.0}
    assert record_problem("figure2", cell) is None
    assert record_problem("figure2", {**cell, "max_jacobian": "nan"}) == \
        "holds max_jacobian 'nan', not a finite number"


# ------------------------------------------------------------------ NaN never reaches a summary

def test_nan_in_initial_train_loss_never_reaches_the_summary_or_switches_the_yardstick(run):
    _write(run, "m8-seed1", _cell(1, initial_train_loss=math.nan))
    _write(run, "m8-seed2", _cell(2))
    row, = summarize_figure1(load_run(run.path))
    assert row["seeds"] == 1 and row["initial_train_loss_mean"] == 1.0
    assert row["min_train_loss_free_bound_key"] == "initial_loss"
    for key in ("lin_error_mean", "lin_error_alt_mean", "initial_train_loss_mean",
                "min_train_loss_free_bound"):
        assert math.isfinite(row[key]), key


# ------------------------------------------------------------------ writers refuse damage

@pytest.mark.parametrize("field", ["initial_train_loss", "lin_error_alt", "label_rms",
                                   "final_val_loss"])
def test_save_cell_refuses_nan_where_a_finite_number_belongs(run, field):
    with pytest.raises(RecordError, match=f"not stored: it holds {field} 'nan'"):
        run.save_cell("m8-seed1", _cell(1, **{field: math.nan}))
    assert not (run.cells / "m8-seed1.json").exists()


def test_save_cell_refuses_a_record_contradicting_the_run(run):
    with pytest.raises(RecordError, match="names n 128"):
        run.save_cell("m8-seed1", _cell(1, n=128))


def test_a_worker_refuses_to_store_nan_too(run):
    from boundcalc.runs.directory import save_cell_file

    with pytest.raises(RecordError, match="label_rms"):
        save_cell_file(run.path, "m8-seed1", _cell(1, label_rms=math.nan))


def test_nothing_held_out_is_stored_as_null_and_is_sound(tmp_path):
    run = RunDirectory(tmp_path / "run", {**PARAMS, "val_fraction": 0})
    run.save_cell("m8-seed1", _cell(1, n_train=64, final_val_loss=None))
    assert run.has_cell("m8-seed1", **cell_checks("figure1", "m8-seed1"))
    text = (run.cells / "m8-seed1.json").read_text()
    assert '"final_val_loss": null' in text
    json.loads(text, parse_constant=_refuse)


def test_stored_files_are_standard_json():
    assert json.loads(dumps({"x": math.nan, "y": [math.inf]}), parse_constant=_refuse) == \
        {"x": "nan", "y": ["inf"]}


def _refuse(name: str):
    raise ValueError(f"{name} is not standard JSON")
