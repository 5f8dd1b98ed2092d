"""The ``--executor`` options of ``reproduce`` and ``validate``: where the cells are computed.

``processes`` (this machine: ``--jobs`` worker processes, the default), ``dask`` (a Dask
distributed scheduler, ``--dask-address`` or ``DASK_SCHEDULER_ADDRESS``, else a local cluster of
at most ``--jobs`` workers) or ``slurm`` (an array job through submitit, ``--slurm-*``). The
options are typed once here and named in each command's signature; :func:`executor_settings`
checks them (exit 2 naming the flag, the extra to install, a missing Slurm, or a Dask scheduler
that does not answer) before any run directory is made, and returns
:class:`boundcalc.execution.executors.ExecutorSettings`.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Annotated

import typer

from boundcalc.cli.options import choice_option
from boundcalc.execution.executors import (
    ExecutorSettings,
    require_engine,
)
from boundcalc.inputs.combinations import check_combinations
from boundcalc.inputs.environment import require_dask_scheduler, require_modules
from boundcalc.inputs.executor_flags import EXECUTORS, SLURM_TIME

__all__ = ["CellsPerTask", "DaskAddress", "DaskDashboard", "Executor", "SlurmArrayParallelism",
           "SlurmCpusPerTask", "SlurmGpusPerTask", "SlurmPartition", "SlurmSetup", "SlurmTime",
           "executor_settings"]

_PANEL = "Executor (where the cells run)"

Executor = Annotated[str, choice_option(
    "--executor", choices=EXECUTORS, panel=_PANEL,
    help="processes (this machine, --jobs worker processes), dask (a Dask distributed "
    "scheduler; extra boundcalc[dask]) or slurm (a Slurm array job through submitit; extra "
    "boundcalc[slurm])")]
DaskAddress = Annotated[str | None, typer.Option(
    "--dask-address", metavar="HOST:PORT", rich_help_panel=_PANEL,
    help="dask: the scheduler (default: $DASK_SCHEDULER_ADDRESS, else a local cluster of at most "
    "--jobs worker processes, one per task)")]
DaskDashboard = Annotated[bool, typer.Option(
    "--dask-dashboard", rich_help_panel=_PANEL,
    help="dask: serve the local cluster's dashboard (needs bokeh) and print its address; a "
    "scheduler of --dask-address prints the address of its own")]
CellsPerTask = Annotated[int, typer.Option(
    "--cells-per-task", metavar="K", rich_help_panel=_PANEL,
    help="dask, slurm: cells computed by one task (one Slurm array task), whole groups: "
    "reproduce keeps the cells trained together in one task (figure1: a seed's widths)")]
SlurmPartition = Annotated[str | None, typer.Option(
    "--slurm-partition", metavar="NAME", rich_help_panel=_PANEL, help="slurm: the partition")]
SlurmTime = Annotated[str | None, typer.Option(
    "--slurm-time", metavar="MIN", rich_help_panel=_PANEL,
    help="slurm: time limit of a task, minutes or H:MM:SS")]
SlurmGpusPerTask = Annotated[int | None, typer.Option(
    "--slurm-gpus-per-task", metavar="N", rich_help_panel=_PANEL, help="slurm: GPUs per task")]
SlurmCpusPerTask = Annotated[int | None, typer.Option(
    "--slurm-cpus-per-task", metavar="N", rich_help_panel=_PANEL, help="slurm: CPUs per task")]
SlurmArrayParallelism = Annotated[int | None, typer.Option(
    "--slurm-array-parallelism", metavar="N", rich_help_panel=_PANEL,
    help="slurm: array tasks running at once")]
SlurmSetup = Annotated[list[str] | None, typer.Option(
    "--slurm-setup", metavar="LINE", rich_help_panel=_PANEL,
    help="slurm: a shell line run before each task (e.g. 'module load cuda'); repeatable")]


def executor_settings(kind: str, jobs: int = 1, dask_address: str | None = None,
                      cells_per_task: int = 1, slurm_partition: str | None = None,
                      slurm_time: str | None = None, slurm_gpus_per_task: int | None = None,
                      slurm_cpus_per_task: int | None = None,
                      slurm_array_parallelism: int | None = None,
                      slurm_setup: list[str] | None = None,
                      dask_dashboard: bool = False) -> ExecutorSettings:
    """The checked settings of the ``--executor`` flags (InputError naming the flag: exit 2).

    Example:
        >>> executor_settings("processes", jobs=2).as_dict()
        {'kind': 'processes', 'jobs': 2}
    """
    check_combinations("executor", {
        "kind": kind, "jobs": jobs, "cells_per_task": cells_per_task,
        "dask_address": dask_address, "dask_dashboard": dask_dashboard,
        "slurm_partition": slurm_partition, "slurm_time": slurm_time,
        "slurm_gpus_per_task": slurm_gpus_per_task, "slurm_cpus_per_task": slurm_cpus_per_task,
        "slurm_array_parallelism": slurm_array_parallelism, "slurm_setup": slurm_setup or None})
    if kind in ("dask", "slurm"):
        require_engine(kind)
    address = dask_address or (os.environ.get("DASK_SCHEDULER_ADDRESS") if kind == "dask"
                               else None)
    if dask_dashboard and not address:
        missing = [] if importlib.util.find_spec("bokeh") is not None else ["bokeh"]
        require_modules("--dask-dashboard", missing, "", "pip install bokeh")
    if address:   # refused now, in seconds, rather than by the run after the run directory
        require_dask_scheduler("--dask-address", address)
    return ExecutorSettings(
        kind=kind, jobs=jobs, dask_address=address or None, cells_per_task=cells_per_task,
        slurm_partition=slurm_partition,
        slurm_time=SLURM_TIME.check(slurm_time) if slurm_time is not None else None,
        slurm_gpus_per_task=slurm_gpus_per_task, slurm_cpus_per_task=slurm_cpus_per_task,
        slurm_array_parallelism=slurm_array_parallelism,
        slurm_setup=tuple(slurm_setup or ()), dask_dashboard=bool(dask_dashboard))
