"""Table 1 of paper 003: the quick preset end to end, resuming, the paper preset's data path and
the CLI."""

from __future__ import annotations

import csv
import json
import math
import time

import numpy as np
import pytest
from boundcalc.validators.data.mnist import synthetic_digits, write_idx
from boundcalc.validators.experiments.table1 import PRESETS, all_cells, run_table1

OUTPUTS = ("config.json", "results.csv", "results.json", "table1.csv", "table1_table.tex")


def _rows(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    started = time.perf_counter()
    out = run_table1("quick", out=tmp_path_factory.mktemp("t1") / "quick", progress=False)
    return out, time.perf_counter() - started


@pytest.mark.slow
def test_quick_preset_writes_the_table(quick_run):
    out, _ = quick_run
    for name in OUTPUTS:
        assert (out / name).stat().st_size > 0, name
    cfg = PRESETS["quick"]
    table = _rows(out / "table1.csv")
    assert [(int(r["d_m"]), int(r["N"])) for r in table] == all_cells(cfg)
    for row in table:
        loss, epoch = float(row["lowest_test_loss"]), int(row["lowest_test_epoch"])
        assert 0 < loss < math.log(2) + 1e-3 and 0 <= epoch <= cfg.steps
        assert float(row["theorem5_bound"]) > 0
        held, total = (int(v) for v in row["conditions_hold_count"].split("/"))
        assert 0 <= held <= total and total >= 1
        named = [c for c in (row["conditions_holding"], row["conditions_failing"])
                 if c != "none"]
        assert sum(len(c.split(";")) for c in named) == total
        assert row["all_conditions_hold"] in ("True", "False")
    cells = json.loads((out / "results.json").read_text())
    assert len(cells) == len(all_cells(cfg))
    for cell in cells:
        assert cell["d_s"] == 16 and cell["d"] == 64 and cell["R_X_used"] == 8.0
        assert 0 < cell["R_X_measured"] <= cell["R_X_used"]
        assert cell["lemma4_applies"] is False and "Lemma 4 does not apply" in cell["findings"]
        assert all(cell[f"travelled_R_{b}"] > 0 for b in "QKVO")
    tex = (out / "table1_table.tex").read_text()
    assert "\\toprule" in tex and "\\midrule" in tex and "\\bottomrule" in tex
    body = [line for line in tex.splitlines() if line.endswith("\\\\")]
    assert len(body) == 2 + len(all_cells(cfg))
    # nine columns: the verdict against the free yardstick ("under bound") is one of them
    assert all(line.count("&") == 8 for line in body[1:])
    config = json.loads((out / "config.json").read_text())["parameters"]
    assert config["experiment"] == "table1" and config["lr"] == 0.1 and config["data"] is None


def test_under_bound_carries_the_verdict_against_the_zero_predictor_and_the_initial_model(
        quick_run):
    out, _ = quick_run
    for row in _rows(out / "table1.csv"):
        zero, initial = float(row["zero_predictor_test_loss"]), float(row["initial_test_loss"])
        assert zero == pytest.approx(math.log(2), rel=1e-12)    # logit 0 on every sample
        assert float(row["theorem5_free_bound"]) == min(zero, initial)
        # the quick preset's bounds are hundreds: above log 2, so "yes" is never alone
        assert float(row["theorem5_bound"]) > min(zero, initial)
        assert row["theorem5_verdict"] == "vacuous" and row["under_bound"] == "yes, vacuous"
    for cell in json.loads((out / "results.json").read_text()):
        assert cell["under_bound"] == "yes, vacuous" and "vacuous" in cell["findings"]


@pytest.mark.slow
def test_resume_gives_the_same_table(quick_run, tmp_path):
    whole, _ = quick_run
    part = run_table1("quick", out=tmp_path / "part", progress=False, max_cells=1)
    assert len(_rows(part / "table1.csv")) == 1
    first = (part / "cells" / "dm16-N64.json").read_text()
    run_table1("quick", out=tmp_path / "part", progress=False)
    assert (part / "cells" / "dm16-N64.json").read_text() == first       # skipped, not redone
    assert (part / "table1.csv").read_text() == (whole / "table1.csv").read_text()
    assert (part / "table1_table.tex").read_text() == (whole / "table1_table.tex").read_text()


def test_paper_preset_reads_idx_files(tmp_path):
    """The paper preset's data path on a tiny IDX folder written here (gzip), tiny sizes."""
    folder = tmp_path / "mnist"
    folder.mkdir()
    x, y = synthetic_digits(60, seed=1)
    labels = np.where(y == 1, 1, 0)
    labels[::5] = 7                                    # other digits are dropped
    for split, sl in (("train", slice(0, 40)), ("t10k", slice(40, 60))):
        write_idx(folder / f"{split}-images-idx3-ubyte.gz", x[sl])
        write_idx(folder / f"{split}-labels-idx1-ubyte.gz", labels[sl])
    out = run_table1("paper", data=folder, out=tmp_path / "run", progress=False,
                     dms=(64,), Ns=(20,), steps=3, dtype="float64")
    (row,) = _rows(out / "table1.csv")
    assert int(row["d_m"]) == 64 and int(row["N"]) == 20 and int(row["lowest_test_epoch"]) <= 3
    assert math.isnan(float(row["paper_lowest_test_loss"]))          # (64, 20) not in the paper
    cell = json.loads((out / "results.json").read_text())[0]
    assert cell["n_test"] == int((labels[40:] != 7).sum())
    with pytest.raises(ValueError, match="--data"):
        run_table1("paper", out=tmp_path / "x", progress=False)


def test_cli_reproduce_table1(tmp_path):
    from boundcalc.cli import main

    assert main(["reproduce", "table1", "--preset", "paper", "--out", str(tmp_path / "p")]) == 2
    assert not (tmp_path / "p").exists()
    assert main(["reproduce", "table1", "--preset", "paper", "--data",
                 str(tmp_path / "missing")]) == 2
    assert main(["reproduce", "figure1", "--data", str(tmp_path)]) == 2


def test_cli_paper_without_data_names_data(tmp_path, capsys):
    from boundcalc.cli import main

    assert main(["reproduce", "table1", "--preset", "paper"]) == 2
    err = capsys.readouterr().err
    assert "--data" in err and len(err.strip().splitlines()) == 1


def test_cli_quick_runs(tmp_path, monkeypatch):
    from boundcalc.validators.experiments import table1
    from typer.testing import CliRunner

    from boundcalc.cli import app

    seen = {}

    def fake(preset, **kwargs):
        seen.update(kwargs, preset=preset)
        return tmp_path

    monkeypatch.setattr(table1, "run_table1", fake)
    result = CliRunner().invoke(app, ["reproduce", "table1", "--preset", "quick", "--device",
                                      "cpu", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert seen == {"preset": "quick", "data": None, "device": "cpu", "out": str(tmp_path)}


def _zero_pixel_mnist(folder, n_train=480, n_test=40, seed=3):
    """MNIST-format IDX files with exact zero pixels: a "0" (ring) or a "1" (bar) at the centre,
    of random brightness, on a background of exact zeros; some images of another digit (dropped
    by the loader). At d_m = 64 < N, ReLU units dead on every image make F_pre⁰ rank-deficient:
    the measured α is exactly 0 (checked below)."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:28, 0:28]
    ring = (np.abs(np.hypot(yy - 13.5, xx - 13.5) - 5) < 1.2).astype(float)
    bar = ((np.abs(xx - 13.5) < 1.5) & (np.abs(yy - 13.5) < 7)).astype(float)
    n = n_train + n_test
    labels = rng.integers(0, 2, n)
    images = np.where(labels[:, None, None] == 0, ring, bar) * rng.uniform(100, 255, (n, 1, 1))
    labels[::25] = 5
    folder.mkdir()
    for split, sl in (("train", slice(0, n_train)), ("t10k", slice(n_train, None))):
        write_idx(folder / f"{split}-images-idx3-ubyte", np.rint(images[sl]).astype(np.uint8))
        write_idx(folder / f"{split}-labels-idx1-ubyte", labels[sl])
    return folder


SMALL_PAPER = dict(dms=(64,), Ns=(100, 400), steps=4)   # N > d_m


def _check_alpha_zero_cells(out):
    cells = json.loads((out / "results.json").read_text())
    assert [(c["d_m"], c["N"]) for c in cells] == [(64, 100), (64, 400)]
    for cell in cells:
        assert cell["alpha"] == 0.0 and cell["alpha_used"] > 0        # a measurement of 0
        failing = cell["conditions_failing"].split(";")
        assert "alpha_square" in failing and "alpha_cube" in failing
        assert math.isfinite(cell["theorem5_bound"]) and cell["theorem5_bound"] > 0
        assert "alpha = sigma_min(F_pre^0) measured 0" in cell["findings"]
        assert 0 <= cell["lowest_test_epoch"] <= SMALL_PAPER["steps"]


def test_paper_preset_runs_on_when_the_measured_alpha_is_zero(tmp_path):
    data = _zero_pixel_mnist(tmp_path / "mnist")
    out = run_table1("paper", data=data, out=tmp_path / "run", progress=False,
                     dtype="float64", **SMALL_PAPER)
    _check_alpha_zero_cells(out)
    rows = _rows(out / "table1.csv")
    assert all(r["all_conditions_hold"] == "False" for r in rows)


def test_cli_paper_preset_with_alpha_zero_exits_0_naming_no_flag(tmp_path, monkeypatch, capsys):
    from dataclasses import replace

    from boundcalc.validators.experiments import table1

    from boundcalc.cli import main
    from boundcalc.inputs.experiment_fields import TABLE1

    monkeypatch.setitem(table1.PRESETS, "paper", replace(PRESETS["paper"], **SMALL_PAPER))
    # and the torch-free preset that reproduce checks --data against before the run
    monkeypatch.setitem(TABLE1.presets, "paper", {**TABLE1.presets["paper"], **SMALL_PAPER})
    data = _zero_pixel_mnist(tmp_path / "mnist")
    out = tmp_path / "run"
    code = main(["reproduce", "table1", "--preset", "paper", "--data", str(data), "--device",
                 "cpu", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "--alpha" not in err and "error" not in err
    _check_alpha_zero_cells(out)
