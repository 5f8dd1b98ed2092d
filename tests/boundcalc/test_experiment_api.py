"""``boundcalc.load_run`` and ``boundcalc.reproduce``: a run directory as tidy DataFrames (one row
per cell, per (quantity, group), per slope), with the run named in ``attrs``."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

import boundcalc
from boundcalc.errors import InputError
from boundcalc.experiment_api import tidy_summary


def _figure2_run(folder):
    """A stored figure2 run of two lags and two seeds (no training: cells written by hand)."""
    (folder / "cells").mkdir(parents=True)
    params = {"experiment": "figure2", "preset": "quick", "lags": [4, 16], "seeds": [0, 1]}
    (folder / "config.json").write_text(json.dumps({"parameters": params}))
    for model in ("transformer", "indrnn"):
        for L in (4, 16):
            for seed in (0, 1):
                cell = {"model": model, "L": L, "T": L + 1, "seed": seed, "diverged": False,
                        "max_jacobian": float(L + seed), "min_val_loss": 0.5,
                        "max_loss_gradient": 1.0, "memory_floats_per_sample": 8}
                (folder / "cells" / f"{model}-L{L}-seed{seed}.json").write_text(
                    json.dumps(cell))
    return folder


def test_load_run_gives_one_row_per_cell_and_per_quantity_and_group(tmp_path):
    run = boundcalc.load_run(_figure2_run(tmp_path / "run"))
    assert (run.experiment, run.preset, run.missing) == ("figure2", "quick", [])
    assert run.config["lags"] == [4, 16]
    assert len(run.cells) == 8 and {"model", "L", "seed"} <= set(run.cells.columns)
    summary = run.summary
    assert len(summary) == 2 * 2 * 3  # (model, L) × three quantities with a CI
    assert list(summary.columns[:5]) == ["quantity", "model", "L", "mean", "ci95"]
    assert set(summary["quantity"]) == {"max_jacobian", "min_val_loss", "max_loss_gradient"}
    row = summary.query("quantity == 'max_jacobian' and model == 'indrnn' and L == 16")
    assert row["mean"].tolist() == [16.5] and row["seeds"].tolist() == [2]
    assert run.slopes.empty
    for frame in (run.cells, run.summary, run.slopes):
        assert frame.attrs == {"experiment": "figure2", "preset": "quick",
                               "path": str(tmp_path / "run"), "version": boundcalc.__version__}
    assert repr(run).startswith("ExperimentRun(figure2, preset='quick', 8/8 cells, path=")


def test_a_quantity_owns_its_longest_prefix_and_shared_columns_repeat():
    rows = [{"m": 8, "seeds": 2, "a_mean": 1.0, "a_ci95": 0.1, "a_b_mean": 2.0, "a_b_ci95": 0.2,
             "a_b_verdict": "vacuous", "B2": 9.0}]
    tidy = tidy_summary(rows, ["m"])
    assert [r["quantity"] for r in tidy] == ["a", "a_b"]
    assert tidy[1] == {"quantity": "a_b", "m": 8, "mean": 2.0, "ci95": 0.2, "verdict": "vacuous",
                       "seeds": 2, "B2": 9.0}
    assert "verdict" not in tidy[0]


def test_to_xarray_indexes_the_summary_by_quantity_and_group(tmp_path):
    pytest.importorskip("xarray")
    data = boundcalc.load_run(_figure2_run(tmp_path / "run")).to_xarray()
    assert list(data.dims) == ["quantity", "model", "L"] and data.attrs["experiment"] == "figure2"


def test_to_xarray_without_xarray_says_what_to_install(tmp_path):
    if importlib.util.find_spec("xarray") is not None:
        pytest.skip("xarray is installed")
    with pytest.raises(ModuleNotFoundError, match="pip install xarray"):
        boundcalc.load_run(_figure2_run(tmp_path / "run")).to_xarray()


def test_load_run_of_a_folder_that_is_no_run_names_it(tmp_path):
    with pytest.raises(InputError, match="is not a directory"):
        boundcalc.load_run(tmp_path / "absent")


def test_load_run_imports_no_torch(tmp_path):
    folder = _figure2_run(tmp_path / "run")
    code = (f"import sys, boundcalc; run = boundcalc.load_run({str(folder)!r}); "
            "print(len(run.summary), 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == ["12", "False"]


def test_reproduce_runs_the_overridden_cells_and_returns_the_run(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    from boundcalc.validators.experiments import figure1

    monkeypatch.setattr(figure1, "plot_figure", lambda *a, **k: [])  # the figure: not tested here
    run = boundcalc.reproduce("figure1", out=tmp_path / "R", device="cpu", progress=False,
                              widths=[8, 16], seeds=[3], n=40, steps="6", teacher_width=64,
                              anchors=4, T=4, d=3)
    assert sorted(set(run.summary["m"])) == [8, 16] and len(run.cells) == 2
    assert run.config["seeds"] == [3] and run.config["steps"] == 6
    assert {"lin_error", "app_error", "min_train_loss"} <= set(run.slopes["quantity"])


@pytest.mark.parametrize(("kwargs", "says"), [
    ({"steps": 0}, "reproduce() steps must be >= 1, got 0"),
    ({"width": 8}, "reproduce() has no setting 'width'"),
    ({"figure_width": "single", "name": "table1"},
     "figure_width is for figure1, figure2 and tsweep, not table1"),
])
def test_reproduce_refuses_a_bad_setting_naming_it(tmp_path, kwargs, says):
    pytest.importorskip("torch")
    name = kwargs.pop("name", "figure1")
    with pytest.raises(InputError) as err:
        boundcalc.reproduce(name, out=tmp_path / "R", device="cpu", **kwargs)
    assert str(err.value).startswith(says)
    assert not (tmp_path / "R").exists()
