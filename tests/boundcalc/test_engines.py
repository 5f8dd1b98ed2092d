"""The engine adapters: what reaches submitit, and failed tasks (a stand-in submitit records it)."""

from __future__ import annotations

import sys
import types

import pytest

from boundcalc import engines
from boundcalc.executors import ExecutorSettings


def _triple(cells, context):
    for key, value in cells:
        if value < 0:
            raise ValueError(f"bad cell {key}")
        yield key, {"value": 3 * value}


class _Job:
    def __init__(self, fn, args):
        self.fn, self.args = fn, args

    def done(self):
        return True

    def result(self):
        return self.fn(*self.args)


@pytest.fixture
def fake_submitit(monkeypatch):
    calls: dict = {}

    class AutoExecutor:
        def __init__(self, folder, cluster=None):
            calls["folder"], calls["cluster"] = folder, cluster

        def update_parameters(self, **kwargs):
            calls["parameters"] = kwargs

        def map_array(self, fn, *iterables):
            calls["tasks"] = len(iterables[1])
            return [_Job(fn, args) for args in zip(*iterables, strict=True)]

    module = types.SimpleNamespace(AutoExecutor=AutoExecutor)
    monkeypatch.setitem(sys.modules, "submitit", module)
    monkeypatch.setattr(engines, "require_extra", lambda kind: None)
    return calls


def test_slurm_submits_one_array_with_the_mapped_flags(tmp_path, fake_submitit, monkeypatch):
    monkeypatch.delenv("BOUNDCALC_SLURM_CLUSTER", raising=False)
    settings = ExecutorSettings(kind="slurm", slurm_partition="gpu", slurm_time=30,
                                slurm_gpus_per_task=1, slurm_cpus_per_task=2,
                                slurm_array_parallelism=4, slurm_setup=("module load cuda",))
    tasks = [(("a", 1),), (("b", 2), ("c", 3))]
    out = list(engines.slurm_results(_triple, tasks, {}, settings, tmp_path, "figure1"))
    assert fake_submitit["cluster"] == "slurm"
    assert fake_submitit["folder"] == tmp_path / "submitit" / "%j"   # logs in the run directory
    assert fake_submitit["parameters"] == {
        "name": "boundcalc-figure1", "slurm_partition": "gpu", "timeout_min": 30,
        "slurm_gpus_per_task": 1, "cpus_per_task": 2, "slurm_array_parallelism": 4,
        "slurm_setup": ["module load cuda"]}
    assert fake_submitit["tasks"] == 2
    assert [[(k, r) for k, r, _ in res] for res in out] == [
        [("a", {"value": 3})], [("b", {"value": 6}), ("c", {"value": 9})]]
    # the tasks wrote their cells into the run directory (a shared filesystem on Slurm)
    assert sorted(p.name for p in (tmp_path / "cells").iterdir()) == ["a.json", "b.json", "c.json"]


def test_the_local_cluster_gets_the_setup_lines_too(tmp_path, fake_submitit, monkeypatch):
    monkeypatch.setenv("BOUNDCALC_SLURM_CLUSTER", "local")
    settings = ExecutorSettings(kind="slurm", slurm_setup=("export X=1",))
    list(engines.slurm_results(_triple, [(("a", 1),)], {}, settings, tmp_path, "validate"))
    assert fake_submitit["cluster"] == "local"
    assert fake_submitit["parameters"]["local_setup"] == ["export X=1"]


def test_only_slurm_gets_a_folder_per_job_id(tmp_path, fake_submitit, monkeypatch):
    """Slurm fills %j in; submitit's local executor would make a folder literally named %j."""
    monkeypatch.setenv("BOUNDCALC_SLURM_CLUSTER", "local")
    settings = ExecutorSettings(kind="slurm")
    list(engines.slurm_results(_triple, [(("a", 1),)], {}, settings, tmp_path, "demo"))
    assert fake_submitit["folder"] == tmp_path / "submitit"


class _Run:
    def __init__(self, path):
        self.path, self.saved = path, {}

    def save_cell(self, key, record):
        self.saved[key] = record


def test_a_failed_task_leaves_the_others_stored_and_names_the_failure(tmp_path, fake_submitit):
    (tmp_path / "cells").mkdir()
    run, lines = _Run(tmp_path), []
    tasks = [(("a", 1),), (("b", -1),), (("c", 2),)]
    with pytest.raises(RuntimeError, match=r"1 of 3 slurm task\(s\) failed .*bad cell b"):
        engines.run_tasks(run, _triple, tasks, {}, ExecutorSettings(kind="slurm"), "demo",
                          total=3, write=lines.append)
    assert run.saved == {"a": {"value": 3}, "c": {"value": 6}}
    assert any("a task failed: ValueError: bad cell b" in line for line in lines)
    assert [line.split("]")[0] for line in lines if line.startswith("[demo ")] == [
        "[demo 1/3", "[demo 2/3"]


def test_a_slurm_task_is_requeued_unchanged_on_timeout(tmp_path):
    pytest.importorskip("submitit")
    task = engines.SlurmTask()
    args = (_triple, (("a", 1),), {}, str(tmp_path))
    delayed = task.checkpoint(*args)            # what submitit calls on timeout or preemption
    assert delayed.function is task and delayed.args == args
    assert [(k, r) for k, r, _ in delayed.function(*delayed.args)] == [("a", {"value": 3})]
