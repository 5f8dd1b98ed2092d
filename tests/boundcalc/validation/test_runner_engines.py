"""A validate grid on Dask (a real LocalCluster) and on Slurm (submitit's local executor) gives the
records and summary of the in-process run (wall times aside)."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

pytestmark = pytest.mark.needs_torch
pytest.importorskip("torch")

GRID = ["validate", "lemma3", "lemma6", "--m", "8", "--n", "16", "--d", "4", "--T", "4",
        "--seeds", "2", "--device", "cpu", "--format", "json"]


def _records(folder):
    rows = json.loads((folder / "results.json").read_text())
    return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]


def _summary(stdout):
    data = json.loads(stdout)
    data.pop("run_directory")
    return data


@pytest.fixture(scope="module")
def here(tmp_path_factory):
    from boundcalc.cli import main

    folder = tmp_path_factory.mktemp("validate") / "here"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*GRID, "--out", str(folder), "--quiet"]) == 0
    return folder, out.getvalue()


@pytest.mark.parametrize("executor", ["dask", "slurm"])
@pytest.mark.slow
def test_an_engine_gives_the_records_of_the_in_process_run(executor, here, cli, tmp_path,
                                                          monkeypatch):
    pytest.importorskip("distributed" if executor == "dask" else "submitit")
    monkeypatch.setenv("BOUNDCALC_SLURM_CLUSTER", "local")
    monkeypatch.chdir(tmp_path)  # submitit runs `python -m` here: not in the source tree
    folder, stdout = here
    # dask: two worker processes; slurm: two array tasks of two cells each
    flags = ["--jobs", "2"] if executor == "dask" else ["--cells-per-task", "2"]
    res = cli(*GRID, "--executor", executor, *flags, "--out", str(tmp_path / "run"))
    assert res.code == 0, res.err
    assert _records(tmp_path / "run") == _records(folder)
    assert _summary(res.out) == _summary(stdout)
    progress = [line for line in res.err.splitlines() if line.startswith("[validate ")]
    assert len(progress) == 4 and progress[-1].endswith("all cells done")
    execution = json.loads((tmp_path / "run" / "config.json").read_text())["execution"]
    assert execution["executor"]["kind"] == executor
    assert sorted(execution["cells"]) == ["lemma3-seed0", "lemma3-seed1", "lemma6-seed0",
                                          "lemma6-seed1"]
    assert not list((tmp_path / "run").rglob("%j"))  # submitit's job-id pattern, never a folder


@pytest.mark.slow
def test_a_killed_validate_driver_resumes_with_only_the_missing_cells(here, cli, tmp_path,
                                                                      kill_at_first_cell):
    """SIGKILL the driver of a Dask validate grid after its first cell; the re-run takes the stale
    lock over, computes only the missing cells and gives the in-process run's records."""
    import sys

    pytest.importorskip("distributed")

    def cells(folder):
        return {p.stem: p.stat().st_mtime_ns for p in (folder / "cells").glob("*.json")}

    run = tmp_path / "run"
    # the in-process run's settings (quick effort): each cell takes seconds, the poll 20 ms, so the
    # kill lands while the single worker computes the second cell
    flags = GRID[:-2]
    before = kill_at_first_cell(      # the driver and its dask processes
        [sys.executable, "-m", "boundcalc", *flags, "--executor", "dask", "--jobs", "1",
         "--out", str(run), "--quiet"], run, tmp_path)
    total = 4  # two statements x two seeds
    assert 1 <= len(before) < total, "the driver was not killed mid-run"
    res = cli(*flags, "--executor", "dask", "--jobs", "2", "--out", str(run), "--quiet")
    assert res.code == 0, res.err
    assert "taking over the stale lock" in res.err
    after = cells(run)
    assert len(after) == total
    assert {k: after[k] for k in before} == before  # not computed again
    assert _records(run) == _records(here[0])
