"""The engine adapters: what reaches submitit, and failed tasks (a stand-in submitit records it);
the tasks of submitit's local executor end with their driver."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

from boundcalc.execution import engines
from boundcalc.execution.executors import ExecutorSettings


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
    monkeypatch.setattr(engines, "require_engine", lambda kind: None)
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


_DRIVER = """
import os, sys, time
from pathlib import Path

from boundcalc.execution.engines import slurm_results
from boundcalc.execution.executors import ExecutorSettings


def sleeper(cells, context):
    for key, _ in cells:  # say who computes the cell (the task and its controller), then sleep
        marker = Path(context["markers"]) / key
        marker.with_suffix(".tmp").write_text(f"{os.getpid()} {os.getppid()}")
        os.replace(marker.with_suffix(".tmp"), marker.with_suffix(".pid"))
        time.sleep(600)
        yield key, {"slept": True}


run = Path(sys.argv[1])
(run / "cells").mkdir(parents=True)
for _ in slurm_results(sleeper, [(("a", 0),), (("b", 0),)], {"markers": sys.argv[2]},
                       ExecutorSettings(kind="slurm"), run, "demo"):
    pass
"""


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (Linux /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="Linux /proc")
def test_killing_the_driver_ends_the_tasks_of_submitits_local_executor(tmp_path):
    """kill -9 of the driver alone (not its process group): its array tasks and their
    controllers end too, rather than computing on under PID 1."""
    pytest.importorskip("submitit")
    script, markers = tmp_path / "driver.py", tmp_path / "markers"
    script.write_text(_DRIVER)
    markers.mkdir()
    driver = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path / "run"), str(markers)], cwd=tmp_path,
        env={**os.environ, "BOUNDCALC_SLURM_CLUSTER": "local"}, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 180
        while (len(list(markers.glob("*.pid"))) < 2 and time.monotonic() < deadline
               and driver.poll() is None):
            time.sleep(0.05)
        workers = [int(pid) for marker in markers.glob("*.pid")
                   for pid in marker.read_text().split()]
        assert len(workers) == 4, "the two tasks did not start"
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait()
        deadline = time.monotonic() + 60
        while any(_running(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [pid for pid in workers if _running(pid)] == []
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(driver.pid, signal.SIGKILL)      # whatever this test started
        driver.wait()


class _Client:
    def __init__(self, link):
        self.link = link

    @property
    def dashboard_link(self):
        if isinstance(self.link, Exception):
            raise self.link
        return self.link


def test_the_dashboard_line_gives_the_address_or_says_why_there_is_none():
    served = engines.dashboard_line(_Client("http://127.0.0.1:40123/status"), True)
    assert served == "Dask dashboard: http://127.0.0.1:40123/status"
    assert engines.dashboard_line(_Client("x"), False) == (
        "Dask dashboard: off (--dask-dashboard serves it)")
    assert engines.dashboard_line(_Client(KeyError("dashboard")), True) == (
        "Dask dashboard: none (the scheduler serves none)")


def test_the_local_cluster_workers_start_without_the_nannys_preset_environment():
    # distributed's nannies set MALLOC_TRIM_THRESHOLD_ and one OpenMP thread in each worker
    # unless told otherwise; the dask engine's local workers get the driver's environment, as
    # the --jobs worker processes do
    pytest.importorskip("distributed")
    import dask

    shipped = dask.config.get(engines.NANNY_ENVIRON)
    seen = {}

    def make(**kwargs):
        seen.update(kwargs, environ=dask.config.get(engines.NANNY_ENVIRON))
        return "cluster"

    assert engines.local_cluster(make, ExecutorSettings(kind="dask", jobs=3)) == "cluster"
    assert seen["environ"] == {}
    assert (seen["n_workers"], seen["threads_per_worker"], seen["processes"]) == (3, 1, True)
    assert dask.config.get(engines.NANNY_ENVIRON) == shipped     # set only while it is made


def test_the_local_cluster_starts_no_more_workers_than_there_are_tasks():
    pytest.importorskip("distributed")
    seen = []

    def make(**kwargs):
        seen.append(kwargs["n_workers"])

    for jobs, tasks in ((2, 1), (2, 5), (4, 3), (1, 0)):
        engines.local_cluster(make, ExecutorSettings(kind="dask", jobs=jobs), tasks)
    assert seen == [1, 2, 3, 1]


def test_a_scheduler_that_stops_answering_during_a_run_fails_the_run_not_the_input():
    """The address was checked before the run (the input layer); a scheduler gone since is a
    failed run (exit 1, finished cells kept), never an input error or a traceback."""
    import socket

    pytest.importorskip("distributed")
    from boundcalc.errors import InputError
    from boundcalc.execution.engines import TasksFailedError, dask_client

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(TasksFailedError, match="did not answer within 1 s") as err:
        dask_client(f"tcp://127.0.0.1:{port}", timeout=1.0)
    assert not isinstance(err.value, InputError)
