"""The T sweep: the quick preset end to end through the CLI, resuming, the slope table, the bound.

The module's runs take ≈ 25 s on the project's 2-core CPU: one quick run (≈ 15 s), a resume of two
deleted cells, and a few tiny cells.
"""

from __future__ import annotations

import csv
import math
import re
import shutil
import subprocess
import sys

import pytest
from boundcalc.validators.experiments import figure1, tsweep

pytestmark = pytest.mark.needs_torch

OUTPUTS = ("config.json", "results.csv", "summary.csv", "slopes.csv", "tsweep.png",
           "tsweep.pdf", "tsweep.caption.txt", "tsweep_table.tex")
METRICS = ("lin_error", "app_error", "min_train_loss")
SLOPED = (*METRICS, "rel_min_train_loss")   # the last: min loss / label rms², no bound


def _rows(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture
def no_figure(monkeypatch):
    """The figure (matplotlib: seconds per run) is not drawn, for the tests that compare cells,
    summaries, slopes and tables only; each test that uses this still reaches the drawing (checked
    at its end). The figure itself is checked on the quick run (``quick_run``)."""
    calls = []
    monkeypatch.setattr(tsweep, "plot_figure", lambda *args, **kwargs: calls.append(args) or [])
    yield calls
    assert calls, "the run never reached its figure"


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """``boundcalc reproduce tsweep --preset quick`` once (in-process)."""
    from boundcalc.cli import main

    out = tmp_path_factory.mktemp("tsweep") / "quick"
    code = main(["reproduce", "tsweep", "--preset", "quick", "--device", "cpu",
                 "--out", str(out)])
    return out, code


@pytest.mark.slow
def test_quick_preset_runs_from_the_cli_and_writes_every_output(quick_run):
    out, code = quick_run
    assert code == 0
    for name in OUTPUTS:
        assert (out / name).stat().st_size > 0, name
    cfg = tsweep.PRESETS["quick"]
    cells = _rows(out / "results.csv")
    assert len(cells) == len(tsweep.all_cells(cfg))
    summary = _rows(out / "summary.csv")
    assert [(int(r["m"]), int(r["T"])) for r in summary] == [
        (m, T) for m in cfg.widths for T in cfg.Ts]
    for row in summary:
        for key in METRICS:
            assert 0 < float(row[f"{key}_mean"]) < float(row[f"{key}_theory"]), (row, key)
            assert float(row[f"{key}_gci_low"]) < float(row[f"{key}_gmean"]) \
                < float(row[f"{key}_gci_high"])


def test_the_bound_is_flat_in_T(quick_run):
    out, _ = quick_run
    summary = _rows(out / "summary.csv")
    for m in tsweep.PRESETS["quick"].widths:
        for key in METRICS:
            bounds = {r[f"{key}_theory"] for r in summary if int(r["m"]) == m}
            assert len(bounds) == 1, (m, key, bounds)
    fits = _rows(out / "slopes.csv")
    assert all(float(r["theory_slope"]) == 0.0 for r in fits if r["panel"] in METRICS)
    assert all(math.isnan(float(r["theory_slope"])) for r in fits if r["panel"] not in METRICS)


def test_the_min_loss_bound_is_vacuous_against_the_measured_initial_loss_at_every_T(quick_run):
    out, _ = quick_run
    for row in _rows(out / "summary.csv"):
        initial = float(row["initial_train_loss_mean"])
        assert 0 < float(row["min_train_loss_mean"]) <= initial
        assert row["min_train_loss_free_bound_key"] == "initial_loss"
        assert float(row["min_train_loss_theory"]) > float(row["initial_loss_bound"]) > initial
        assert row["min_train_loss_verdict"] == "vacuous"


def test_slope_table_has_a_ci_per_metric_and_width(quick_run, cli):
    out, _ = quick_run
    cfg = tsweep.PRESETS["quick"]
    fits = _rows(out / "slopes.csv")
    assert [(r["panel"], int(r["m"])) for r in fits] == [(k, m) for m in cfg.widths
                                                         for k in SLOPED]
    for fit in fits:
        assert math.isfinite(float(fit["slope"]))
        assert 0 < float(fit["slope_ci95"]) < math.inf
        assert int(fit["seeds"]) == len(cfg.seeds) and int(fit["Ts"]) == len(cfg.Ts)
    tex = (out / "tsweep_table.tex").read_text()
    assert r"slope in $\log T$" in tex and r"\pm" in tex
    run = cli("table", str(out))
    assert run.code == 0, run.err
    assert "slope in log T (± 95% CI)" in run.out and "T sweep" in run.out
    csv_run = cli("table", str(out), "--format", "csv")
    assert csv_run.code == 0 and "slope_ci95" in csv_run.out


@pytest.mark.slow
def test_table_figures_redraws_the_tsweep_figure(quick_run, cli, tmp_path):
    out, _ = quick_run
    run = cli("table", str(out), "--figures-dir", str(tmp_path / "figs"))
    assert run.code == 0, run.err
    for name in ("tsweep.png", "tsweep.pdf", "tsweep.caption.txt"):
        assert (tmp_path / "figs" / name).stat().st_size > 0


@pytest.mark.parametrize(("width", "inches"), [("single", 3.25), ("double", 6.75)])
def test_table_figures_redraws_the_tsweep_at_the_figure_width_asked(quick_run, cli, tmp_path,
                                                                    width, inches):
    out, _ = quick_run
    run = cli("table", str(out), "--figure-width", width, "--figures-dir", str(tmp_path))
    assert run.code == 0, run.err
    pdf = (tmp_path / "tsweep.pdf").read_bytes()
    box = re.search(rb"/MediaBox\s*\[\s*0\s+0\s+([\d.]+)", pdf)
    assert float(box[1]) == pytest.approx(inches * 72)


@pytest.mark.slow
def test_table_figures_redraws_the_tsweep_figure_without_torch(quick_run, tmp_path):
    out, _ = quick_run
    code = ("import sys; sys.modules['torch'] = None; from boundcalc.cli import main; "
            f"sys.exit(main(['table', {str(out)!r}, '--figures-dir', {str(tmp_path)!r}]))")
    # outside the source tree, as a regular install is imported (the CI's)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "tsweep.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_a_resumed_run_recomputes_only_the_missing_cells(quick_run, tmp_path, monkeypatch,
                                                        no_figure):
    out, _ = quick_run
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    removed = ["m16-T256-seed3", "m64-T256-seed3"]
    for key in removed:
        (copy / "cells" / f"{key}.json").unlink()
    kept = {p.name: p.stat().st_mtime_ns for p in (copy / "cells").glob("*.json")}
    computed = []
    original = tsweep.compute_cells

    def counting(seed, T, widths, data, cfg, *rest):
        computed.extend(tsweep.tsweep_cell_key(seed, T, m) for m in widths)
        return original(seed, T, widths, data, cfg, *rest)

    monkeypatch.setattr(tsweep, "compute_cells", counting)
    tsweep.run_tsweep("quick", out=copy, progress=False)
    assert sorted(computed) == sorted(removed)
    assert {p.name: p.stat().st_mtime_ns for p in (copy / "cells").glob("*.json")
            if p.name in kept} == kept
    assert (copy / "summary.csv").read_text() == (out / "summary.csv").read_text()
    computed.clear()
    tsweep.run_tsweep("quick", out=copy, progress=False)   # nothing left to do
    assert computed == []


def test_a_cell_is_figure1s_cell_at_that_T_whatever_the_chunk(monkeypatch):
    cfg = tsweep.make_config("quick", seeds=[5], widths=(4,), Ts=(3, 6), n=24, steps=4,
                             teacher_width=32, anchors=2, d=3)
    f1 = cfg.figure1(6)
    data = figure1.seed_data(5, f1)
    whole = figure1.compute_cell(5, 4, data, f1)
    monkeypatch.setattr(tsweep, "CHUNK_ENTRIES", 4 * 6 * 5)   # five samples per pass
    chunked = tsweep.compute_cell(5, 6, 4, data, cfg)
    assert chunked["T"] == 6 and chunked["m"] == 4 and chunked["seed"] == 5
    for key in ("lin_error", "lin_error_alt", "app_error", "min_train_loss"):
        assert chunked[key] == pytest.approx(whole[key], rel=1e-12), key


def test_config_checks_and_kind_detection():
    with pytest.raises(ValueError, match="Ts"):
        tsweep.make_config("quick", Ts=(4,))
    with pytest.raises(ValueError, match="Ts"):
        tsweep.make_config("quick", Ts=(4, 4))
    from boundcalc.runs.stored import detect_kind, expected_cells

    params = {"widths": [16], "Ts": [4, 16], "seeds": [1]}
    assert detect_kind(params) == "tsweep"
    assert expected_cells("tsweep", params) == ["m16-T4-seed1", "m16-T16-seed1"]
    assert tsweep.PRESETS["paper"].Ts == (4, 16, 64, 256, 1024)
    assert tsweep.PRESETS["paper"].widths == (64, 256)


@pytest.mark.slow
def test_dask_executor_writes_the_files_of_the_processes_run(quick_run, cli, tmp_path,
                                                             no_figure):
    pytest.importorskip("distributed")
    out, _ = quick_run
    res = cli("reproduce", "tsweep", "--preset", "quick", "--device", "cpu", "--executor", "dask",
              "--jobs", "2", "--out", str(tmp_path / "run"))
    assert res.code == 0, res.err
    for name in ("summary.csv", "slopes.csv", "tsweep_table.tex"):
        assert (tmp_path / "run" / name).read_bytes() == (out / name).read_bytes(), name
