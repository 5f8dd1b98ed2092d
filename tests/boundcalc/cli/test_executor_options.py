"""The --executor flags: checks naming the flag, and a missing extra named in one line (exit 2)."""

from __future__ import annotations

import importlib
import types

import pytest

from boundcalc import executors
from boundcalc.cli import executor_options
from boundcalc.cli.executor_options import executor_settings
from boundcalc.params import InputError


def test_processes_is_the_default_and_dask_reads_its_address(monkeypatch):
    assert executor_settings("processes").as_dict() == {"kind": "processes", "jobs": 1}
    monkeypatch.setattr(executor_options, "require_extra", lambda kind: None)
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
])
def test_a_bad_flag_is_named(kwargs, flag, monkeypatch):
    monkeypatch.setattr(executor_options, "require_extra", lambda kind: None)
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
