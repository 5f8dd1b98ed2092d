"""The --executor flags: checks naming the flag, and a missing extra, a missing Slurm or a Dask
scheduler that does not answer named in one line (exit 2) before any run directory is made."""

from __future__ import annotations

import importlib
import socket
import types

import pytest

from boundcalc.cli import executor_options
from boundcalc.cli.executor_options import executor_settings
from boundcalc.execution import executors
from boundcalc.inputs import environment
from boundcalc.inputs.params import InputError


def test_processes_is_the_default_and_dask_reads_its_address(monkeypatch):
    assert executor_settings("processes").as_dict() == {"kind": "processes", "jobs": 1}
    monkeypatch.setattr(executor_options, "require_engine", lambda kind: None)
    monkeypatch.setattr(executor_options, "require_dask_scheduler",
                        lambda flag, address: None)
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", "tcp://sched:8786")
    assert executor_settings("dask", jobs=2).dask_address == "tcp://sched:8786"
    assert executor_settings("dask", dask_address="h:1").dask_address == "h:1"
    slurm = executor_settings("slurm", cells_per_task=3, slurm_partition="gpu",
                              slurm_time="2:00:00", slurm_gpus_per_task=1,
                              slurm_cpus_per_task=4, slurm_array_parallelism=10,
                              slurm_setup=["module load cuda"])
    assert (slurm.slurm_time, slurm.cells_per_task, slurm.slurm_setup) == (
        120, 3, ("module load cuda",))


@pytest.mark.parametrize(("kwargs", "flag"), [
    ({"kind": "mpi"}, "--executor"),
    ({"kind": "processes", "slurm_partition": "gpu"}, "--slurm-partition"),
    ({"kind": "processes", "dask_address": "h:1"}, "--dask-address"),
    ({"kind": "processes", "cells_per_task": 2}, "--cells-per-task"),
    ({"kind": "slurm", "slurm_time": "soon"}, "--slurm-time"),
    ({"kind": "slurm", "slurm_array_parallelism": 0}, "--slurm-array-parallelism"),
    ({"kind": "slurm", "slurm_cpus_per_task": 0}, "--slurm-cpus-per-task"),
    ({"kind": "dask", "cells_per_task": 0}, "--cells-per-task"),
    ({"kind": "dask", "jobs": 0}, "--jobs"),
    ({"kind": "processes", "dask_dashboard": True}, "--dask-dashboard"),
])
def test_a_bad_flag_is_named(kwargs, flag, monkeypatch):
    monkeypatch.setattr(executor_options, "require_engine", lambda kind: None)
    with pytest.raises(InputError) as err:
        executor_settings(**kwargs)
    assert err.value.flag == flag


@pytest.mark.parametrize(("kind", "modules"), [("dask", "dask, distributed"),
                                               ("slurm", "submitit")])
def test_a_missing_extra_is_one_line_naming_it(kind, modules, cli, monkeypatch):
    real = importlib.import_module

    def absent(name, *args, **kwargs):
        if name in executors.EXTRAS[kind]:
            raise ModuleNotFoundError(f"No module named {name!r}")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(executors, "importlib", types.SimpleNamespace(import_module=absent))
    res = cli("validate", "lemma2", "--executor", kind)
    assert res.code == 2
    assert res.err == (f"error: --executor {kind} needs {modules}, which is not installed: "
                       f"pip install 'boundcalc[{kind}]'\n")


COMMANDS = [("reproduce", "figure1", "--preset", "quick"), ("validate", "lemma2")]


@pytest.mark.parametrize("command", COMMANDS)
def test_slurm_where_there_is_no_slurm_is_refused_before_the_run_directory(
        command, cli, tmp_path, monkeypatch):
    pytest.importorskip("submitit")
    monkeypatch.delenv("BOUNDCALC_SLURM_CLUSTER", raising=False)
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))      # no sbatch, no srun
    out = tmp_path / "runs" / "run"
    res = cli(*command, "--executor", "slurm", "--out", str(out))
    assert res.code == 2
    assert res.err == ("error: --executor slurm needs Slurm's sbatch and srun, which are not "
                       "found on PATH: run on a Slurm cluster's login node, or choose --executor "
                       "processes or dask\n")
    assert not (tmp_path / "runs").exists()


def _closed_port() -> int:
    """A port of 127.0.0.1 that nothing listens on (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize(("command", "address", "given", "says"), [
    (COMMANDS[0], "tcp://127.0.0.1:{port}", "flag", "no Dask scheduler answered within 1 s"),
    (COMMANDS[1], "127.0.0.1:{port}", "environment", "no Dask scheduler answered within 1 s"),
    (COMMANDS[1], "nonsense", "flag", "not a usable scheduler address"),
    (COMMANDS[0], "nonsense", "environment", "not a usable scheduler address"),
])
def test_a_dask_scheduler_that_does_not_answer_is_refused_naming_the_flag(
        command, address, given, says, cli, tmp_path, monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setattr(environment, "CONNECT_S", 1.0)
    address = address.format(port=_closed_port())
    flags = ["--dask-address", address] if given == "flag" else []
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", address)
    out = tmp_path / "run"
    res = cli(*command, "--executor", "dask", *flags, "--out", str(out))
    assert res.code == 2
    assert res.err.startswith(f"error: --dask-address {address}: {says}")
    assert res.err.count("\n") == 1
    assert not out.exists()


@pytest.mark.parametrize("command", ["reproduce", "validate"])
def test_help_lists_the_executors(command, cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "160")
    res = cli(command, "--help")
    assert res.code == 0
    assert "[processes|dask|slurm]" in res.out
    for flag in ("--dask-address", "--cells-per-task", "--slurm-partition", "--slurm-time",
                 "--slurm-gpus-per-task", "--slurm-cpus-per-task", "--slurm-array-parallelism",
                 "--slurm-setup"):
        assert flag in res.out


def test_the_dask_dashboard_is_recorded_when_asked_for_and_needs_bokeh(monkeypatch):
    monkeypatch.setattr(executor_options, "require_engine", lambda kind: None)
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: object())
    on = executor_settings("dask", jobs=2, dask_dashboard=True)
    assert on.as_dict() == {"kind": "dask", "jobs": 2, "cells_per_task": 1,
                            "dask_dashboard": True}
    assert "dask_dashboard" not in executor_settings("dask", jobs=2).as_dict()
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(InputError, match=r"^--dask-dashboard needs bokeh"):
        executor_settings("dask", jobs=2, dask_dashboard=True)
