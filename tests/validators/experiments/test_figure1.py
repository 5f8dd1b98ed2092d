"""Figure 1 (Section 6.1): the quick preset end to end, resuming, slopes, the CLI."""

from __future__ import annotations

import contextlib
import csv
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from boundcalc.validators.experiments.figure1 import (
    PRESETS,
    all_cells,
    compute_cell,
    compute_cells,
    fit_slope,
    make_config,
    run_figure1,
    seed_data,
)

OUTPUTS = ("config.json", "results.csv", "results.json", "summary.csv", "summary.json",
           "slopes.csv", "slopes.json", "figure1.png", "figure1.pdf", "figure1.caption.txt",
           "figure1_table.tex")

# a tiny run with the full protocol (teacher, boundary point, transport, ProjGD)
TINY = dict(widths=(4, 8, 16), n=40, steps=6, teacher_width=64, anchors=4, T=4, d=3)


#: a number in e-notation (``1.1e+02``), which no table may contain
E_NOTATION = re.compile(r"\d[eE][+-]?\d")


def _pdf_width_pt(pdf: bytes) -> float:
    """Width in points of the first page's MediaBox."""
    box = re.search(rb"/MediaBox\s*\[\s*([\d.]+)\s+([\d.]+)\s+([\d.]+)", pdf)
    return float(box.group(3)) - float(box.group(1))


def _rows(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """One uninterrupted quick-preset run, shared by the tests below, and its wall time."""
    started = time.perf_counter()
    out = run_figure1("quick", out=tmp_path_factory.mktemp("f1") / "quick", progress=False)
    return out, time.perf_counter() - started


@pytest.fixture
def no_figure(monkeypatch):
    """The figure (matplotlib: most of a tiny run's time) is not drawn, for the tests that check
    the cells, results, summaries and slopes only; the calls it would have drawn are recorded.
    The figure itself is checked on the quick run (``quick_run``); each test that uses this still
    reaches the drawing (checked at its end)."""
    from boundcalc.validators.experiments import figure1

    calls = []
    monkeypatch.setattr(figure1, "plot_figure", lambda *args, **kwargs: calls.append(args) or [])
    yield calls
    assert calls, "the run never reached its figure"


def test_quick_preset_writes_every_output_with_negative_slopes(quick_run):
    out, _ = quick_run
    for name in OUTPUTS:
        assert (out / name).stat().st_size > 0, name
    cfg = PRESETS["quick"]
    assert len(_rows(out / "results.csv")) == len(all_cells(cfg))
    summary = _rows(out / "summary.csv")
    assert [int(r["m"]) for r in summary] == list(cfg.widths)
    for row in summary:
        for key in ("lin_error", "app_error", "min_train_loss"):
            assert 0 < float(row[f"{key}_mean"]) < float(row[f"{key}_theory"])
    fits = {r["panel"]: r for r in _rows(out / "slopes.csv")}
    for panel in ("lin_error", "app_error", "min_train_loss"):
        slope = float(fits[panel]["slope"])
        assert math.isfinite(slope) and slope < 0, (panel, slope)
        assert math.isfinite(float(fits[panel]["slope_ci95"]))
    # panel (a) at the other boundary alignment ("output") is recorded with its own slope; its
    # second-order terms cancel in mirrored pairs, so it is far below the default ("feature")
    assert math.isfinite(float(fits["lin_error_alt"]["slope"]))
    for row in summary:
        assert 0 < float(row["lin_error_alt_mean"]) < float(row["lin_error_mean"])
    table = (out / "figure1_table.tex").read_text()
    assert "\\toprule" in table and "\\bottomrule" in table and "\\midrule" in table
    assert table.count("\\begin{tabular}") == table.count("\\end{tabular}") == 1
    body = [line for line in table.splitlines() if line.endswith("\\\\")]
    assert len(body) == 2 + len(cfg.widths) + 1          # two header rows, widths, slopes
    # m, three (measured, bound) groups with R(theta_0) in (c)'s, and the other alignment: the
    # format changed on purpose
    assert all(line.count("&") == 8 for line in body[1:])
    assert "\\hat{R}(\\theta_0)" in body[1]
    assert body[-1].startswith("slope & ") and "\\varepsilon_{\\mathrm{lin}}" in body[1]
    assert not E_NOTATION.search(table) and "e+" not in table
    assert (out / "figure1.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pdf = (out / "figure1.pdf").read_bytes()
    assert pdf[:5] == b"%PDF-" and b"/Type3" not in pdf and b"/CIDFontType2" in pdf
    assert _pdf_width_pt(pdf) == pytest.approx(6.75 * 72)  # double, the default
    config = json.loads((out / "config.json").read_text())
    assert config["parameters"]["preset"] == "quick"
    assert config["parameters"]["steps"] == cfg.steps


def test_panel_c_bound_is_judged_against_the_measured_initial_loss_and_y2(quick_run):
    out, _ = quick_run
    cells = _rows(out / "results.csv")
    for row in _rows(out / "summary.csv"):
        initial = [float(c["initial_train_loss"]) for c in cells if c["m"] == row["m"]]
        assert float(row["initial_train_loss_mean"]) == pytest.approx(
            sum(initial) / len(initial), rel=1e-12)
        # k = 0 is an iterate: the measured R(theta_0) binds, far under Y^2 = 81 and B^2
        assert float(row["min_train_loss_free_bound"]) == min(initial)
        assert row["min_train_loss_free_bound_key"] == "initial_loss"
        assert float(row["initial_loss_bound"]) == 81.0 < float(row["trivial_bound_B2"])
        assert float(row["min_train_loss_theory"]) > float(row["initial_loss_bound"])
        assert row["min_train_loss_verdict"] == "vacuous"


@pytest.mark.slow
def test_interrupted_quick_run_resumes_to_the_same_summary(quick_run, tmp_path, no_figure):
    whole, _ = quick_run
    part = run_figure1("quick", out=tmp_path / "part", progress=False, max_cells=5)
    assert len(_rows(part / "results.csv")) == 5             # stopped inside the second seed
    assert {int(r["seeds"]) for r in _rows(part / "summary.csv")} == {1, 2}
    part = run_figure1("quick", out=tmp_path / "part", progress=False)
    for name in ("summary.csv", "results.csv", "slopes.csv"):
        a, b = _rows(whole / name), _rows(part / name)
        if name == "results.csv":
            for rows in (a, b):
                for r in rows:
                    r.pop("wall_s")
        assert a == b, name


@pytest.mark.slow
def test_seed_parts_run_apart_merge_into_the_same_summary(quick_run, tmp_path, monkeypatch,
                                                          no_figure):
    """The README's recipe for several machines: ``--seeds 1-1`` and ``--seeds 2-2`` in two run
    directories, their cells copied into a third run with ``--seeds 2``, which loads them (no
    cell is computed again) and writes the same summary as one uninterrupted run."""
    import shutil

    from boundcalc.validators.experiments import figure1

    whole, _ = quick_run
    parts = [run_figure1("quick", seeds=[s], out=tmp_path / f"part{s}", progress=False)
             for s in (1, 2)]
    merged = tmp_path / "merged" / "cells"
    merged.mkdir(parents=True)
    for part in parts:
        for cell in (part / "cells").iterdir():
            shutil.copy(cell, merged / cell.name)

    def no_compute(*args, **kwargs):
        raise AssertionError("a merged cell was computed again")

    monkeypatch.setattr(figure1, "compute_cells", no_compute)
    run_figure1("quick", seeds=2, out=tmp_path / "merged", progress=False)
    for name in ("summary.csv", "slopes.csv"):
        assert _rows(whole / name) == _rows(tmp_path / "merged" / name), name


@pytest.mark.slow
def test_teacher_is_built_once_per_seed(tmp_path, monkeypatch, no_figure):
    from boundcalc.validators.experiments import figure1

    calls = []
    original = figure1.build_teacher

    def counting(*args, **kwargs):
        calls.append(kwargs["seed"])
        return original(*args, **kwargs)

    monkeypatch.setattr(figure1, "build_teacher", counting)
    run_figure1("quick", seeds=(1, 2), out=tmp_path / "t", progress=False, **TINY)
    assert sorted(calls) == [1, 2]


@pytest.mark.slow
def test_parallel_jobs_report_every_cell_and_match_one_job(tmp_path, capsys, no_figure):
    cfg = dict(seeds=(1, 2), progress=True, **TINY)
    run_figure1("quick", out=tmp_path / "one", **cfg)
    capsys.readouterr()
    run_figure1("quick", out=tmp_path / "two", jobs=2, **cfg)
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("[figure1 ")]
    assert len(lines) == 2 * len(TINY["widths"])          # one line per cell, as each is written
    assert lines[-1].startswith(f"[figure1 {len(lines)}/{len(lines)}]")
    for name in ("results.csv", "summary.csv", "slopes.csv"):
        one, two = ([{k: v for k, v in r.items() if "wall" not in k}
                     for r in _rows(tmp_path / run / name)] for run in ("one", "two"))
        assert one == two, name
    for run, jobs in (("one", 1), ("two", 2)):  # config.json records the executor as run
        config = json.loads((tmp_path / run / "config.json").read_text())
        assert config["execution"]["executor"] == {"kind": "processes", "jobs": jobs}, run


def test_slope_fit_and_config():
    ms = [8, 16, 32, 64]
    slope, ci, _ = fit_slope(ms, [3.0 * m ** -0.5 for m in ms])
    assert abs(slope + 0.5) < 1e-12 and ci < 1e-9
    assert math.isnan(fit_slope([8, 16], [1.0, 0.5])[1])
    paper = make_config("paper")
    assert paper.widths == (8, 16, 32, 64, 128, 256) and paper.seeds == tuple(range(1, 11))
    assert (paper.n, paper.d, paper.T, paper.teacher_width, paper.anchors) == (
        5000, 8, 16, 8192, 16)
    assert paper.nu == paper.rho == (3.0, 3.0, 3.0) and paper.steps == 4000
    assert abs(paper.eta - 1.75 / math.sqrt(4000)) < 1e-15 and paper.n_train == 4000


def test_cli_reproduce_figure1(tmp_path, monkeypatch):
    from boundcalc.validators.experiments import figure1
    from typer.testing import CliRunner

    from boundcalc.cli import app

    seen = {}

    def fake(preset, **kwargs):
        seen.update(kwargs, preset=preset)
        return tmp_path

    monkeypatch.setattr(figure1, "run_figure1", fake)
    result = CliRunner().invoke(app, ["reproduce", "figure1", "--preset", "quick", "--seeds",
                                      "3", "--device", "cpu", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert seen["preset"] == "quick" and seen["seeds"] == 3 and seen["device"] == "cpu"
    ranged = CliRunner().invoke(app, ["reproduce", "figure1", "--seeds", "6-8", "--device", "cpu",
                                      "--out", str(tmp_path)])
    assert ranged.exit_code == 0 and seen["seeds"] == [6, 7, 8]
    bad = CliRunner().invoke(app, ["reproduce", "figure9"])
    assert bad.exit_code != 0
    narrow = CliRunner().invoke(app, ["reproduce", "figure1", "--figure-width", "single",
                                      "--device", "cpu", "--out", str(tmp_path)])
    assert narrow.exit_code == 0 and seen["figure_width"] == "single"


def test_cli_lin_align_and_dtype_reach_the_config_and_are_checked(tmp_path, monkeypatch, capsys):
    """``--lin-align output`` and ``--dtype float32`` are passed to the run; a bad value or an
    experiment without the option exits 2 with a one-line message naming the flag; the paper
    preset defaults to ``feature``."""
    from boundcalc.validators.experiments import figure1
    from typer.testing import CliRunner

    from boundcalc.cli import app

    assert make_config("paper").lin_align == "feature"
    seen = {}

    def fake(preset, **kwargs):
        seen.update(kwargs)
        return tmp_path

    monkeypatch.setattr(figure1, "run_figure1", fake)
    ok = CliRunner().invoke(app, ["reproduce", "figure1", "--lin-align", "output", "--device",
                                  "cpu", "--out", str(tmp_path)])
    assert ok.exit_code == 0, ok.output
    assert seen["lin_align"] == "output" and "dtype" not in seen
    ok = CliRunner().invoke(app, ["reproduce", "figure1", "--dtype", "float32", "--device",
                                  "cpu", "--out", str(tmp_path)])
    assert ok.exit_code == 0, ok.output
    assert seen["dtype"] == "float32"
    from boundcalc.cli import main

    for args in (["figure1", "--lin-align", "loss"], ["figure2", "--lin-align", "output"],
                 ["figure1", "--dtype", "float16"], ["table1", "--dtype", "float32"],
                 ["figure1", "--seeds", "3-1"], ["table1", "--seeds", "2"],
                 ["figure1", "--figure-width", "wide"], ["table1", "--figure-width", "single"]):
        capsys.readouterr()
        assert main(["reproduce", *args]) == 2
        err = capsys.readouterr().err
        assert args[1] in err and len(err.strip().splitlines()) == 1
    with pytest.raises(ValueError, match="lin_align"):
        make_config("quick", lin_align="loss")


def _children(pid: int) -> list[int]:
    """Every live descendant of ``pid`` (Linux /proc)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if fields[0] != "Z":
                parents[int(entry)] = int(fields[1])
    found, frontier = [], [pid]
    while frontier:
        nxt = [p for p, pp in parents.items() if pp in frontier]
        found += nxt
        frontier = nxt
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.slow
def test_sigkill_of_a_jobs_2_parent_leaves_no_worker_and_a_rerun_gives_the_same_numbers(
        quick_run, tmp_path, no_figure):
    """``reproduce figure1 --preset quick --seeds 4 --jobs 2`` killed (SIGKILL) once the first
    cell is written: no worker is alive 5 s later, and running it again (here in-process)
    finishes the run with the numbers of the uninterrupted run. (A worker writes a seed's
    cells together, as its widths train together: with four seeds on two workers the kill
    falls between seeds.)"""
    whole, _ = quick_run
    out = tmp_path / "killed"
    command = [sys.executable, "-m", "boundcalc", "reproduce", "figure1", "--preset", "quick",
               "--seeds", "4", "--jobs", "2", "--device", "cpu", "--out", str(out)]
    # cwd outside the source tree: from the repository root `-m boundcalc` would import the
    # uninstalled ./boundcalc (without its theory/validators mapping) instead of the installed one
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 120
        while not list((out / "cells").glob("*.json")):
            assert proc.poll() is None, "the run ended before its first cell"
            assert time.monotonic() < deadline, "no cell written in 120 s"
            time.sleep(0.05)
        workers = _children(proc.pid)
        assert workers, "no worker process found"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        killed_at = time.monotonic()
        while [w for w in workers if _alive(w)] and time.monotonic() - killed_at < 5:
            time.sleep(0.05)
        alive = [w for w in workers if _alive(w)]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        for w in _children(proc.pid) + [w for w in locals().get("workers", []) if _alive(w)]:
            with contextlib.suppress(OSError):
                os.kill(w, signal.SIGKILL)
    assert not alive, f"workers alive 5 s after the parent's SIGKILL: {alive}"
    done = len(list((out / "cells").glob("*.json")))
    assert done < 2 * len(all_cells(PRESETS["quick"])), "killed after the run had finished"
    run_figure1("quick", seeds=4, out=out, device="cpu", progress=False)   # resumed
    seeds_1_2 = [r for r in _rows(out / "results.csv") if r["seed"] in ("1", "2")]
    for rows in (seeds_1_2, want := _rows(whole / "results.csv")):
        for r in rows:
            r.pop("wall_s")
    assert seeds_1_2 == want
    assert len(_rows(out / "results.csv")) == 2 * len(want)


@pytest.mark.slow
def test_damaged_cells_are_named_moved_aside_and_recomputed(tmp_path, capsys, no_figure):
    import shutil

    cfg = dict(seeds=(1, 2), progress=False, **TINY)
    whole = run_figure1("quick", out=tmp_path / "whole", **cfg)
    out = shutil.copytree(whole, tmp_path / "damaged")
    cells = out / "cells"
    texts = {"m4-seed1": "", "m8-seed2": "{}", "m4-seed2": '{"seed": 2, "m": 4}',
             "m16-seed1": (cells / "m16-seed1.json").read_text()[:50]}
    for key, text in texts.items():
        (cells / f"{key}.json").write_text(text)
    capsys.readouterr()
    run_figure1("quick", out=out, **cfg)
    err = capsys.readouterr().err
    for key, text in texts.items():
        assert f"damaged cell {cells / key}.json" in err, key
        assert (cells / "corrupt" / f"{key}.json").read_text() == text
        assert json.loads((cells / f"{key}.json").read_text())["m"] > 0
    assert err.count("warning: damaged cell") == len(texts)
    for name in ("summary.csv", "slopes.csv"):
        assert _rows(whole / name) == _rows(out / name), name


@pytest.mark.slow
def test_a_cell_naming_another_width_or_holding_nan_is_moved_aside_and_recomputed(tmp_path,
                                                                                   capsys,
                                                                                   no_figure):
    """A cell file whose content is another width's (one seed would count twice) or holds NaN
    in a panel's metric (NaN intervals) is damaged: moved aside, computed again."""
    import shutil

    cfg = dict(seeds=(1,), progress=False, **TINY)
    whole = run_figure1("quick", out=tmp_path / "whole", **cfg)
    out = shutil.copytree(whole, tmp_path / "damaged")
    cells = out / "cells"
    other = json.loads((cells / "m8-seed1.json").read_text())
    nan = {**json.loads((cells / "m16-seed1.json").read_text()), "app_error": "nan"}
    texts = {"m4-seed1": json.dumps(other), "m16-seed1": json.dumps(nan)}
    for key, text in texts.items():
        (cells / f"{key}.json").write_text(text)
    capsys.readouterr()
    run_figure1("quick", out=out, **cfg)
    err = capsys.readouterr().err
    assert f"damaged cell {cells / 'm4-seed1'}.json (names m 8, its file name m 4)" in err
    assert f"damaged cell {cells / 'm16-seed1'}.json (holds app_error 'nan'" in err
    for key, text in texts.items():
        assert (cells / "corrupt" / f"{key}.json").read_text() == text
    assert [(r["seed"], r["m"]) for r in json.loads((out / "results.json").read_text())] == [
        (1, 4), (1, 8), (1, 16)]
    for name in ("summary.csv", "slopes.csv"):
        assert _rows(whole / name) == _rows(out / name), name


@pytest.mark.slow
def test_config_records_the_training_backend(tmp_path, monkeypatch, capfd, no_figure):
    """With no working C compiler the run says so once on stderr (the two workers of --jobs 2
    included) and config.json records the torch backend and why."""
    from boundcalc.validators.kernel import cpu_kernel

    for name in ("_CACHE", "_FAILED", "_BUILT", "_SKIPPED"):
        if hasattr(cpu_kernel, name):
            monkeypatch.setattr(cpu_kernel, name, {})
    monkeypatch.setenv("BOUNDCALC_KERNEL_FALLBACK_NOTED", "")
    monkeypatch.setenv("BOUNDCALC_KERNEL_CACHE", str(tmp_path / "kernels"))
    monkeypatch.setenv("CC", "false")
    out = run_figure1("quick", out=tmp_path / "run", seeds=(1, 2), jobs=2, progress=False,
                      **TINY)
    err = capfd.readouterr().err
    assert err.count("compiled CPU kernel is not available") == 1, err
    env = json.loads((out / "config.json").read_text())["environment"]
    report = env["cpu_kernel"][f"d{TINY['d']}-float64"]
    assert report["backend"] == "torch" and "false" in report["reason"]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_cells_trained_together_equal_cells_computed_one_width_at_a_time(dtype):
    cfg = make_config("quick", seeds=[3], dtype=dtype, **TINY)
    data = seed_data(3, cfg)
    together = compute_cells(3, cfg.widths, data, cfg)
    alone = [compute_cell(3, m, data, cfg) for m in cfg.widths]
    for a, b in zip(together, alone, strict=True):
        a.pop("wall_s"), b.pop("wall_s")
        assert a.keys() == b.keys()
        for key, value in a.items():
            if isinstance(value, float):   # kernel: bit for bit; torch path: to rounding
                assert value == pytest.approx(b[key], rel=1e-12 if dtype == "float64" else 2e-5,
                                              abs=1e-300), key
            else:
                assert value == b[key], key


def test_jobs_workers_train_with_the_threads_of_one_job_on_the_cpu(tmp_path, monkeypatch):
    # the CPU step splits its samples between torch's threads and the split orders the sums:
    # --jobs 2 workers get the threads of --jobs 1 and of the dask / slurm tasks on any machine
    from concurrent.futures import Future

    from boundcalc.validators.experiments import figure1
    from boundcalc.validators.experiments.experiment import threads_of

    from boundcalc.runs.directory import RunDirectory

    submitted = []

    class Pool:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def submit(self, fn, *args):
            submitted.append(args)
            done = Future()
            done.set_result([])
            return done

    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    monkeypatch.setattr(figure1, "worker_pool", lambda jobs: Pool())
    cfg = make_config("quick", (1, 2), **TINY)
    figure1.run_cells(RunDirectory(tmp_path / "r", {"seeds": [1, 2]}), cfg, jobs=2,
                      progress=False)
    assert [args[2] for args in submitted] == [1, 2]                      # one task per seed
    assert {args[4] for args in submitted} == {threads_of("cpu", None)} == {1}
