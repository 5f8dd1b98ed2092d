"""reproduce on Dask (a real LocalCluster) and Slurm (submitit's local executor) writes the files of
``--jobs 1``; a killed driver's run resumes with only the missing cells; one driver per run."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.needs_torch
pytest.importorskip("distributed")
pytest.importorskip("submitit")

QUICK = ["reproduce", "figure1", "--preset", "quick", "--seeds", "1", "--device", "cpu"]
COMPARED = ("summary.csv", "slopes.csv", "figure1_table.tex")


def _cells(folder: Path) -> dict[str, float]:
    return {p.stem: p.stat().st_mtime_ns for p in (folder / "cells").glob("*.json")}


@pytest.fixture(scope="module", autouse=True)
def no_figure():
    """The runs of this module are compared by their cells, results, summaries, slopes and table,
    never by their figure (matplotlib: seconds per run, in the driver): it is not drawn, and
    each call that would have drawn it is recorded. test_figure1 checks the figure."""
    from boundcalc.validators.experiments import figure1

    calls = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(figure1, "plot_figure", lambda *args, **kwargs: calls.append(args) or [])
        yield calls


@pytest.fixture(scope="module")
def baseline(tmp_path_factory, no_figure) -> Path:
    from boundcalc.cli import main

    folder = tmp_path_factory.mktemp("jobs1") / "run"
    drawn = len(no_figure)
    assert main([*QUICK, "--out", str(folder)]) == 0
    assert len(no_figure) == drawn + 1  # the outputs were written up to the figure
    return folder


def _same_outputs(run: Path, baseline: Path) -> None:
    for name in COMPARED:
        assert (run / name).read_bytes() == (baseline / name).read_bytes(), name
    strip = lambda rows: [{k: v for k, v in r.items() if k != "wall_s"} for r in rows]  # noqa: E731
    assert strip(json.loads((run / "results.json").read_text())) == strip(
        json.loads((baseline / "results.json").read_text()))


@pytest.mark.slow
def test_dask_local_cluster_writes_the_files_of_jobs_1(cli, baseline, tmp_path):
    res = cli(*QUICK, "--executor", "dask", "--jobs", "2", "--out", str(tmp_path / "run"))
    assert res.code == 0, res.err
    _same_outputs(tmp_path / "run", baseline)
    lines = [line for line in res.err.splitlines() if line.startswith("[figure1 ")]
    assert len(lines) == 4 and "ETA" in lines[0] and lines[-1].endswith("all cells done")
    assert "4 cell(s) in 1 task(s)" in res.err          # the seed's widths train together
    assert "Dask dashboard: off (--dask-dashboard serves it)" in res.err
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["execution"]["executor"] == {"kind": "dask", "jobs": 2, "cells_per_task": 1}
    cells = config["execution"]["cells"]
    assert sorted(cells) == sorted(_cells(tmp_path / "run"))
    assert {c["device"] for c in cells.values()} == {"cpu"}
    assert {c["backend"] for c in cells.values()} <= {"kernel", "torch"}
    assert all(c["pid"] != os.getpid() for c in cells.values())      # computed by the workers
    assert "packages" in config["environment"] and "distributed" in config["environment"][
        "packages"]
    assert not (tmp_path / "run" / ".lock").exists()


@pytest.mark.slow
def test_slurm_through_submitits_local_executor_writes_the_files_of_jobs_1(
        cli, baseline, tmp_path, monkeypatch):
    monkeypatch.setenv("BOUNDCALC_SLURM_CLUSTER", "local")
    monkeypatch.chdir(tmp_path)  # submitit runs `python -m` here: not in the source tree
    run = tmp_path / "run"
    res = cli(*QUICK, "--executor", "slurm", "--cells-per-task", "2", "--slurm-time", "10",
              "--out", str(run))
    assert res.code == 0, res.err
    _same_outputs(run, baseline)
    assert any((run / "submitit").rglob("*_log.out"))            # submitit's logs in the run
    execution = json.loads((run / "config.json").read_text())["execution"]
    assert execution["executor"] == {"kind": "slurm", "cells_per_task": 2, "slurm_time": 10}
    # the seed's four widths train together: one group, never split by --cells-per-task
    assert len({c["pid"] for c in execution["cells"].values()}) == 1


@pytest.mark.slow
def test_a_killed_driver_resumes_with_only_the_missing_cells(cli, baseline, tmp_path,
                                                              kill_at_first_cell):
    run = tmp_path / "run"
    cmd = [sys.executable, "-m", "boundcalc", "reproduce", "figure1", "--preset", "quick",
           "--device", "cpu", "--executor", "dask", "--jobs", "1", "--out", str(run)]

    def second_driver_is_refused(pid: int) -> None:   # on the live run directory
        second = cli("reproduce", "figure1", "--preset", "quick", "--device", "cpu",
                     "--out", str(run))
        assert second.code == 2
        assert f"pid {pid}" in second.err and "one driver owns a run directory" in second.err

    # the driver and its dask processes killed
    before = kill_at_first_cell(cmd, run, tmp_path, timeout=120,
                                while_running=second_driver_is_refused)
    assert 1 <= len(before) < 8, "the driver was not killed mid-run"
    res = cli("reproduce", "figure1", "--preset", "quick", "--device", "cpu", "--executor",
              "dask", "--jobs", "2", "--out", str(run))
    assert res.code == 0, res.err
    assert "taking over the stale lock" in res.err
    seeds_left = {s for s in (1, 2) if any(f"m{m}-seed{s}" not in before for m in (8, 16, 32, 64))}
    assert f"{8 - len(before)} cell(s) in {len(seeds_left)} task(s)" in res.err  # one per seed
    after = _cells(run)
    assert len(after) == 8
    assert {k: after[k] for k in before} == before               # not computed again
    computed = json.loads((run / "config.json").read_text())["execution"]["cells"]
    assert set(computed) - set(before) == set(after) - set(before)


@pytest.mark.slow
def test_cuda_runs_on_the_workers_and_a_failed_task_is_one_line(cli, tmp_path, monkeypatch):
    """--device cuda with an engine needs no GPU on the driver (a login node); a task that fails
    (here: no GPU on the worker either) is one line naming the error, exit 1."""
    import torch

    if torch.cuda.is_available():
        pytest.skip("the workers have a GPU here: the task would not fail")
    monkeypatch.setenv("BOUNDCALC_SLURM_CLUSTER", "local")
    monkeypatch.chdir(tmp_path)  # submitit runs `python -m` here: not in the source tree
    run = tmp_path / "run"
    res = cli(*QUICK[:-2], "--device", "cuda", "--executor", "slurm", "--cells-per-task", "4",
              "--out", str(run))
    assert res.code == 1
    error = [line for line in res.err.splitlines() if line.startswith("error: ")]
    assert len(error) == 1 and error[0].startswith("error: 1 of 1 slurm task(s) failed (first: ")
    assert f"logs in {run / 'submitit'}" in error[0] and "re-run the same command" in error[0]
    assert json.loads((run / "config.json").read_text())["parameters"]["device"] == "cuda"


@pytest.mark.slow
def test_a_killed_slurm_driver_resumes_with_only_the_missing_cells(cli, tmp_path, monkeypatch,
                                                                    kill_at_first_cell):
    """The same through submitit's local executor: the tasks die with the driver's session, the
    re-run submits only the missing cells."""
    pytest.importorskip("submitit")
    monkeypatch.setenv("BOUNDCALC_SLURM_CLUSTER", "local")
    monkeypatch.chdir(tmp_path)  # submitit runs `python -m` here: not in the source tree
    run = tmp_path / "run"
    cmd = [sys.executable, "-m", "boundcalc", "reproduce", "figure1", "--preset", "quick",
           "--device", "cpu", "--executor", "slurm", "--cells-per-task", "4", "--out", str(run)]
    # the two seeds' tasks run side by side and can finish within one poll of each other: then
    # the kill came after the run and the scenario is set up again (at most three times)
    for _attempt in range(3):
        shutil.rmtree(run, ignore_errors=True)
        before = kill_at_first_cell(cmd, run, tmp_path,       # the driver and its local tasks
                                    env={**os.environ, "BOUNDCALC_SLURM_CLUSTER": "local"})
        if len(before) < 8:
            break
    assert 1 <= len(before) < 8, "the driver was not killed mid-run"
    res = cli("reproduce", "figure1", "--preset", "quick", "--device", "cpu", "--executor",
              "slurm", "--cells-per-task", "4", "--out", str(run))
    assert res.code == 0, res.err
    after = _cells(run)
    assert len(after) == 8
    assert {k: after[k] for k in before} == before               # not computed again
