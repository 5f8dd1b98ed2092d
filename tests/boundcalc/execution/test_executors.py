"""The engine-independent executor layer: settings, Slurm parameters, tasks, progress, the lock."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pytest

from boundcalc.execution import executors
from boundcalc.execution.executors import (
    LOCK_FILE,
    Eta,
    ExecutorSettings,
    Progress,
    RunLock,
    RunLockedError,
    driver_gone,
    driver_identity,
    execute_task,
    owned,
    require_engine,
    slurm_parameters,
    tasks_of,
)
from boundcalc.inputs.executor_flags import parse_slurm_time
from boundcalc.inputs.params import InputError


def test_slurm_flags_map_onto_submitits_parameters():
    settings = ExecutorSettings(kind="slurm", slurm_partition="gpu", slurm_time=90,
                                slurm_gpus_per_task=1, slurm_cpus_per_task=4,
                                slurm_array_parallelism=8,
                                slurm_setup=("module load cuda", "source env/bin/activate"))
    assert slurm_parameters(settings, "figure1") == {
        "name": "boundcalc-figure1", "slurm_partition": "gpu", "timeout_min": 90,
        "slurm_gpus_per_task": 1, "cpus_per_task": 4, "slurm_array_parallelism": 8,
        "slurm_setup": ["module load cuda", "source env/bin/activate"]}
    assert slurm_parameters(ExecutorSettings(kind="slurm"), "validate") == {
        "name": "boundcalc-validate"}


def test_settings_record_only_what_applies_to_their_executor():
    assert ExecutorSettings(jobs=3).as_dict() == {"kind": "processes", "jobs": 3}
    assert ExecutorSettings(kind="dask", jobs=2, dask_address="h:8786").as_dict() == {
        "kind": "dask", "jobs": 2, "dask_address": "h:8786", "cells_per_task": 1}
    assert ExecutorSettings(kind="slurm", slurm_time=5, slurm_setup=("x",)).as_dict() == {
        "kind": "slurm", "cells_per_task": 1, "slurm_time": 5, "slurm_setup": ["x"]}


@pytest.mark.parametrize(("text", "minutes"), [("90", 90), ("1:30", 90), ("1:30:00", 90),
                                               ("0:00:30", 1), ("2-00:00:00", 2880)])
def test_slurm_time_in_minutes(text, minutes):
    assert parse_slurm_time(text) == minutes


@pytest.mark.parametrize("text", ["", "abc", "0", "1:2:3:4"])
def test_a_bad_slurm_time_names_the_flag(text):
    with pytest.raises(InputError, match="--slurm-time"):
        parse_slurm_time(text)


def test_tasks_cut_the_cells_in_order():
    cells = [(f"k{i}", i) for i in range(5)]
    assert tasks_of(cells, 1) == [((f"k{i}", i),) for i in range(5)]
    assert [len(t) for t in tasks_of(cells, 2)] == [2, 2, 1]
    assert tasks_of([], 3) == []


def _double(cells, context):
    for key, value in cells:
        yield key, {"value": value * context["factor"]}


def test_a_task_loads_stored_cells_and_writes_the_ones_it_computes(tmp_path):
    (tmp_path / "cells").mkdir()
    (tmp_path / "cells" / "a.json").write_text('{"value": -1}\n')
    (tmp_path / "cells" / "b.json").write_text('{"val')          # damaged: computed again
    out = execute_task(_double, [("a", 1), ("b", 2), ("c", 3)], {"factor": 10}, str(tmp_path))
    assert [(k, r) for k, r, _ in out] == [("a", {"value": -1}), ("b", {"value": 20}),
                                           ("c", {"value": 30})]
    assert out[0][2] == {"loaded": True}
    assert out[1][2]["host"] == socket.gethostname() and out[1][2]["pid"] == os.getpid()
    assert json.loads((tmp_path / "cells" / "c.json").read_text()) == {"value": 30}
    # without a store (dask): nothing is written, every cell is computed
    out = execute_task(_double, [("a", 1)], {"factor": 10}, None)
    assert out[0][:2] == ("a", {"value": 10})


def test_progress_counts_cells_and_gives_an_eta():
    lines: list[str] = []
    times = iter([100.0, 130.0, 130.0, 160.0])
    progress = Progress("figure1", total=4, done=1, write=lines.append,
                        clock=lambda: next(times))
    progress.cell("m8-seed1", "lin=0.1")
    progress.cell("m16-seed1")
    progress.cell("m32-seed1")
    assert lines == ["[figure1 2/4] m8-seed1: lin=0.1; ETA after the next cell; 2 cell(s) left",
                     "[figure1 3/4] m16-seed1; ETA 30 s for the 1 cell(s) left",
                     "[figure1 4/4] m32-seed1; all cells done"]


def test_the_eta_starts_at_the_first_finished_cell_not_at_the_start_up():
    # start-up of 600 s, then a cell every 10 s: the ETA is 10 s per cell left, not 600
    times = iter([600.0, 610.0, 610.0, 620.0, 620.0])
    eta = Eta(clock=lambda: next(times))
    eta.cell()
    eta.cell()
    assert eta.text(8) == "ETA 80 s for the 8 cell(s) left"
    eta.cell()
    assert eta.text(7) == "ETA 70 s for the 7 cell(s) left"


def test_cells_finished_with_the_first_start_the_eta_clock_with_it():
    # three widths of a seed trained together finish at once, the next seed 60 s later
    times = iter([50.0, 50.1, 50.2, 110.2, 110.2])
    eta = Eta(clock=lambda: next(times))
    for _ in range(3):
        eta.cell()
    assert eta.text(3) == "ETA after the next cell; 3 cell(s) left"
    eta.cell()
    assert eta.text(2) == "ETA 2 min for the 2 cell(s) left"


def _write_lock(folder, **holder):
    folder.mkdir(exist_ok=True)
    (folder / LOCK_FILE).write_text(json.dumps(holder))


def test_a_second_live_driver_is_refused(tmp_path):
    with RunLock(tmp_path), pytest.raises(RunLockedError) as err:
        RunLock(tmp_path).acquire()
    message = str(err.value)
    assert err.value.flag == "--out"
    assert f"in use by the driver on host {socket.gethostname()}, pid {os.getpid()}" in message
    assert "choose another --out" in message
    assert not (tmp_path / LOCK_FILE).exists()     # released by its owner


def test_a_live_driver_of_another_process_is_refused(tmp_path):
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        _write_lock(tmp_path, host=socket.gethostname(), pid=sleeper.pid, started_utc="t")
        with pytest.raises(RunLockedError, match=f"pid {sleeper.pid}"):
            RunLock(tmp_path).acquire()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_stale_lock_is_taken_over(tmp_path, capsys):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    _write_lock(tmp_path, host=socket.gethostname(), pid=gone.pid, started_utc="t")
    with RunLock(tmp_path) as lock:
        holder = json.loads((tmp_path / LOCK_FILE).read_text())
        assert holder["pid"] == os.getpid() == lock.owner["pid"]
    assert f"taking over the stale lock {tmp_path / LOCK_FILE}" in capsys.readouterr().err


def test_a_lock_of_another_host_is_stale_once_no_longer_refreshed(tmp_path):
    _write_lock(tmp_path, host="elsewhere", pid=1, started_utc="t")
    with pytest.raises(RunLockedError, match="host elsewhere"):
        RunLock(tmp_path, stale_s=60).acquire()
    past = time.time() - 120
    os.utime(tmp_path / LOCK_FILE, (past, past))
    with RunLock(tmp_path, stale_s=60):
        assert json.loads((tmp_path / LOCK_FILE).read_text())["host"] == socket.gethostname()


def test_the_owner_refreshes_its_lock(tmp_path):
    with RunLock(tmp_path, refresh_s=0.05):
        past = time.time() - 1000
        os.utime(tmp_path / LOCK_FILE, (past, past))
        # wait for the refresh (every 0.05 s) however busy the machine; 60 s only bounds it
        deadline = time.monotonic() + 60
        while time.time() - (tmp_path / LOCK_FILE).stat().st_mtime >= 100:
            assert time.monotonic() < deadline, "the lock was not refreshed in 60 s"
            time.sleep(0.02)


def test_owned_blocks_nest_in_one_process_and_the_outermost_releases(tmp_path):
    run = tmp_path / "run"
    with owned(run) as outer:
        with owned(tmp_path / "." / "run") as inner:      # the same folder, spelt otherwise
            assert inner is outer
        assert json.loads((run / LOCK_FILE).read_text())["pid"] == os.getpid()   # still held
        with pytest.raises(RunLockedError):              # a lock of its own is still refused
            RunLock(run).acquire()
        (run / "config.json").write_text("{}")
    assert not (run / LOCK_FILE).exists()


def test_the_folders_a_lock_created_go_with_it_while_empty(tmp_path):
    with RunLock(tmp_path / "a" / "b"):
        assert (tmp_path / "a" / "b").is_dir()
    assert not (tmp_path / "a").exists()           # a refused command leaves nothing behind
    with RunLock(tmp_path / "a" / "b"):
        (tmp_path / "a" / "b" / "config.json").write_text("{}")
    assert (tmp_path / "a" / "b" / "config.json").exists()     # a run's files stay
    (tmp_path / "kept").mkdir()
    with RunLock(tmp_path / "kept"):
        pass
    assert (tmp_path / "kept").is_dir()            # a folder that was there stays


def test_slurm_needs_its_commands_on_path_unless_the_cluster_is_local(tmp_path, monkeypatch):
    pytest.importorskip("submitit")
    monkeypatch.delenv("BOUNDCALC_SLURM_CLUSTER", raising=False)
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    with pytest.raises(InputError, match="needs Slurm's sbatch and srun, which are not found"):
        require_engine("slurm")
    for command in ("sbatch", "srun"):
        (tmp_path / "bin" / command).write_text("#!/bin/sh\n")
        (tmp_path / "bin" / command).chmod(0o755)
        if command == "sbatch":
            with pytest.raises(InputError, match="needs Slurm's srun, which is not found"):
                require_engine("slurm")
    require_engine("slurm")                    # both found: a Slurm login node
    (tmp_path / "bin" / "srun").unlink()
    monkeypatch.setenv("BOUNDCALC_SLURM_CLUSTER", "local")
    require_engine("slurm")                    # submitit's local executor needs no Slurm
    monkeypatch.setenv("BOUNDCALC_SLURM_CLUSTER", "lsf")
    with pytest.raises(InputError, match="BOUNDCALC_SLURM_CLUSTER must be slurm, local or debug"):
        require_engine("slurm")


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="Linux /proc")
def test_a_driver_is_gone_once_ended_even_as_a_zombie_or_with_its_pid_reused():
    me = driver_identity()
    assert me["pid"] == os.getpid() and me["host"] == socket.gethostname()
    assert isinstance(me["start"], int)
    assert not driver_gone(me)
    assert driver_gone({**me, "start": me["start"] + 1})        # another process, same pid
    assert not driver_gone({**me, "host": "elsewhere"})         # not visible from here
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        deadline = time.monotonic() + 60
        while not driver_gone({"host": me["host"], "pid": child.pid, "start": None}):
            assert time.monotonic() < deadline, "a zombie counts as alive"
            time.sleep(0.05)
    finally:
        child.wait()                                            # not reaped until here
    assert driver_gone({"host": me["host"], "pid": child.pid, "start": None})


def test_without_proc_a_driver_is_known_by_its_pid(tmp_path, monkeypatch):
    monkeypatch.setattr(executors, "PROC", tmp_path / "no-proc")
    me = driver_identity()
    assert me["start"] is None and not driver_gone(me)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert driver_gone({"host": me["host"], "pid": child.pid, "start": None})
